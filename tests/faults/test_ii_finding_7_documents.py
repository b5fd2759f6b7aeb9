"""Issue 33, finding 7 (first sentence): a listed source document that is not UTF-8 is a usage error
(exit 4) naming the document, not an INTERNALERROR UnicodeDecodeError."""

from __future__ import annotations

import hashlib

import pytest

from attention_claims.framework.records import ClaimRecordError, load_catalog, load_claim_file, verify_quote
from conftest import record_toml

OK = '''
import pytest

@pytest.mark.claim("c", reading="exact")
def test_exact():
    pass
'''
LATIN1 = "Attention is low rank: caf\u00e9 na\u00efve.\n".encode("latin-1")


def _project(tmp_path, data: bytes = LATIN1, name: str = "note.md"):
    recs, seeds = tmp_path / "claims", tmp_path / "sources"
    recs.mkdir()
    seeds.mkdir()
    (seeds / name).parent.mkdir(parents=True, exist_ok=True)
    (seeds / name).write_bytes(data)
    (seeds / "SHA256SUMS").write_text(f"{hashlib.sha256(data).hexdigest()}  {name}\n", encoding="utf-8")
    (recs / "c.toml").write_text(record_toml("c", document=name, quote="Attention is low rank"), encoding="utf-8")
    return recs, seeds


def test_ii_finding_7_listed_latin1_document_is_refused_naming_it(tmp_path):
    recs, seeds = _project(tmp_path)
    with pytest.raises(ClaimRecordError) as info:
        load_catalog(recs, seeds)
    msg = str(info.value)
    assert str(seeds / "note.md") in msg and "not UTF-8" in msg and "offset 26" in msg, msg


def test_ii_finding_7_verify_quote_names_the_claim_and_field(tmp_path):
    recs, seeds = _project(tmp_path)
    claim = load_claim_file(recs / "c.toml")
    with pytest.raises(ClaimRecordError) as info:
        verify_quote(claim, seeds)
    msg = str(info.value)
    assert "claim 'c'" in msg and "field 'source.document'" in msg and "not UTF-8" in msg, msg


def test_ii_finding_7_utf8_document_in_a_subfolder_is_read(tmp_path):
    recs, seeds = _project(tmp_path, "Attention is low rank, caf\u00e9.\n".encode(), name="papers/note.md")
    assert [c.id for c in load_catalog(recs, seeds)] == ["c"]


def test_ii_finding_7_end_to_end_latin1_document_exits_4(pytester):
    recs, seeds = _project(pytester.path)
    (pytester.path / "test_x.py").write_text(OK, encoding="utf-8")
    result = pytester.runpytest("--claims-dir", str(recs), "--claims-sources", str(seeds), "--claims-report-dir",
                                str(pytester.path / "out"), "-p", "no:cacheprovider", "--hypothesis-profile=ci")
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, text
    assert "note.md" in text and "not UTF-8" in text and "INTERNALERROR" not in text, text
