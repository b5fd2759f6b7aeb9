"""Issue 22, finding 7 (part): claim records and the source documents they quote are read as
regular files of bounded size; anything else is refused quickly with an error naming the file."""

from __future__ import annotations

import os

import pytest
from budget import cpu_budget

from attention_claims.framework.records import (
    ClaimRecordError,
    load_catalog,
    load_claim_file,
    read_capped,
    verify_quote,
)
from conftest import record_toml

OK = '''
import pytest

@pytest.mark.claim("c", reading="exact")
def test_exact():
    pass
'''
DOC = "003_a0ad15dda516ed1d.txt"
QUOTE = "自注意力机制（Self-Attention）是Transformer架构的核心组件"


def _refused(call, *fragments):
    # CPU seconds (reading /dev/zero until memory runs out burns them); wall-clock only as a generous hang
    # guard (a FIFO opened for reading blocks without CPU): 5 s was a bound that a loaded machine could break
    with cpu_budget(5, wall_s=60, what="refusing the file"), pytest.raises(ClaimRecordError) as info:
        call()
    for f in fragments:
        assert f in str(info.value), (f, str(info.value))
    return str(info.value)


def test_finding_7_record_symlinked_to_dev_zero_refused(tmp_path):
    rec = tmp_path / "c.toml"
    rec.symlink_to("/dev/zero")
    _refused(lambda: load_claim_file(rec), str(rec), "not a regular file", "character device")


def test_finding_7_record_that_is_a_fifo_refused_without_blocking(tmp_path):
    rec = tmp_path / "c.toml"
    os.mkfifo(rec)
    _refused(lambda: load_claim_file(rec), str(rec), "not a regular file", "FIFO")


def test_finding_7_record_that_is_a_directory_or_dangling_symlink_refused(tmp_path):
    d = tmp_path / "d.toml"
    d.mkdir()
    _refused(lambda: load_claim_file(d), str(d), "not a regular file", "directory")
    link = tmp_path / "gone.toml"
    link.symlink_to(tmp_path / "nowhere")
    _refused(lambda: load_claim_file(link), str(link), "cannot be read")


def test_finding_7_oversized_record_refused(tmp_path):
    rec = tmp_path / "c.toml"
    rec.write_text(record_toml("c") + "#" * (1 << 20) + "\n", encoding="utf-8")
    _refused(lambda: load_claim_file(rec), str(rec), "larger than 1048576 bytes")


def test_finding_7_record_symlinked_to_a_regular_file_is_read(tmp_path):
    target = tmp_path / "real.txt"
    target.write_text(record_toml("c"), encoding="utf-8")
    rec = tmp_path / "c.toml"
    rec.symlink_to(target)
    assert load_claim_file(rec).id == "c"
    passwd = tmp_path / "p.toml"
    passwd.symlink_to("/etc/passwd")
    _refused(lambda: load_claim_file(passwd), str(passwd), "malformed TOML")


def test_finding_7_read_capped_reads_at_most_cap_plus_one(tmp_path):
    f = tmp_path / "f"
    f.write_bytes(b"x" * 10)
    assert read_capped(f, 10) == b"x" * 10
    with pytest.raises(ValueError, match="larger than 9 bytes"):
        read_capped(f, 9)


def _catalog(tmp_path):
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    recs = tmp_path / "records"
    recs.mkdir()
    (recs / "c.toml").write_text(record_toml("c", quote=QUOTE, document=DOC), encoding="utf-8")
    return recs, seeds


def test_finding_7_document_symlinked_to_dev_zero_refused(tmp_path):
    recs, seeds = _catalog(tmp_path)
    (seeds / DOC).symlink_to("/dev/zero")
    # unlisted in SHA256SUMS, load_catalog refuses it before reading; the quote check reads it capped
    _refused(lambda: load_catalog(recs, seeds), "c.toml", "claim 'c'", "field 'source.document'", "not listed in")
    claim = load_claim_file(recs / "c.toml")
    _refused(lambda: verify_quote(claim, seeds), "c.toml", "claim 'c'", "field 'source.document'", str(seeds / DOC),
             "not a regular file")


def test_finding_7_oversized_document_refused(tmp_path, monkeypatch):
    from attention_claims.framework import records

    recs, seeds = _catalog(tmp_path)
    (seeds / DOC).write_text(QUOTE + "\n" + "x" * 2000, encoding="utf-8")
    monkeypatch.setattr(records, "DOCUMENT_MAX_BYTES", 1000)  # 16 MiB in earnest: too slow to write here
    claim = load_claim_file(recs / "c.toml")
    _refused(lambda: verify_quote(claim, seeds), "field 'source.document'", "larger than 1000 bytes")


def test_finding_7_listed_document_symlinked_to_dev_zero_refused(tmp_path):
    recs, seeds = _catalog(tmp_path)
    (seeds / DOC).symlink_to("/dev/zero")
    (seeds / "SHA256SUMS").write_text(f"{'0' * 64}  {DOC}\n", encoding="utf-8")
    _refused(lambda: load_catalog(recs, seeds), str(seeds / DOC), "source document is not a regular file")


def test_finding_7_end_to_end_record_symlinked_to_dev_zero(planted, pytester):
    rec_dir = pytester.path / "records"
    rec_dir.mkdir()
    (rec_dir / "z.toml").symlink_to("/dev/zero")
    with cpu_budget(60, what="the run that stops at the record"):  # a second or two idle
        run = planted({"c.toml": record_toml("c")}, {"test_x.py": OK})
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR, run.result.stdout.str() + run.result.stderr.str()
    text = run.result.stderr.str() + run.result.stdout.str()
    assert "z.toml" in text and "not a regular file" in text, text
