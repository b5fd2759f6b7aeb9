"""Issue 33, finding 6: ids that look the same. Record ids and reading names are matched whole
(``fullmatch``, patterns anchored with ``\\A`` and ``\\Z``), so ``"note-rows-sum-to-one\\n"`` is refused beside
``note-rows-sum-to-one`` instead of giving the report two claims with the same visible id."""

from __future__ import annotations

import pytest

from attention_claims.framework import records
from attention_claims.framework.records import ClaimRecordError, parse_claim
from conftest import record_toml

OK = '''
import pytest

@pytest.mark.claim("note-rows-sum-to-one", reading="exact")
def test_exact():
    pass
'''


def _data(cid="note-rows-sum-to-one", reading="exact"):
    return {"id": cid, "title": "rows sum to one", "statement": "s", "expected": "true",
            "source": {"document": "note.md", "section": "1", "quote": "q"},
            "readings": [{"name": reading, "statement": "r", "as_stated": True}]}


@pytest.mark.parametrize("cid", ["note-rows-sum-to-one\n", "note-rows-sum-to-one\r\n", "\nnote"])
def test_ii_finding_6_an_id_with_a_newline_is_refused(cid):
    with pytest.raises(ClaimRecordError) as info:
        parse_claim(_data(cid=cid), "claims/x.toml")
    assert "field 'id'" in str(info.value) and "kebab-case" in str(info.value)


def test_ii_finding_6_a_reading_name_with_a_newline_is_refused():
    with pytest.raises(ClaimRecordError) as info:
        parse_claim(_data(reading="exact\n"), "claims/x.toml")
    assert "field 'readings[0].name'" in str(info.value)


@pytest.mark.parametrize("pattern, name", [(records.KEBAB, "a-b\n"), (records.READING_NAME, "a.b\n"),
                                           (records.ARXIV, "arXiv:2103.03404\n"),
                                           (records.SEED, "003_a0ad15dda516ed1d.txt\n")])
def test_ii_finding_6_every_id_pattern_refuses_a_trailing_newline_even_with_match(pattern, name):
    assert pattern.match(name) is None and pattern.fullmatch(name.rstrip("\n")) is not None


def test_ii_finding_6_arxiv_document_with_a_newline_is_a_local_name_and_refused():
    assert records.is_local_document("arXiv:2103.03404\n")
    data = _data()
    data["source"]["document"] = "arXiv:2103.03404\n"
    with pytest.raises(ClaimRecordError) as info:
        parse_claim(data, "claims/x.toml")
    assert "field 'source.document'" in str(info.value)


def test_ii_finding_6_end_to_end_twin_record_exits_4(planted):
    twin = record_toml("note-rows-sum-to-one").replace('id = "note-rows-sum-to-one"', 'id = "note-rows-sum-to-one\\n"')
    run = planted({"a.toml": record_toml("note-rows-sum-to-one"), "b.toml": twin}, {"test_x.py": OK})
    text = run.result.stdout.str() + run.result.stderr.str()
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR, text
    assert "b.toml" in text and "field 'id'" in text, text
