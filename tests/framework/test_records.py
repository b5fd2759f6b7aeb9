"""Malformed input is refused with an error that names file, claim and field (issue 2, issue 5)."""

from __future__ import annotations

import pytest

from attention_claims.framework.records import RECORDS_DIR, ClaimRecordError, load_catalog, parse_claim
from conftest import REPO_SOURCES, record_toml, write_sums

OK = '''
import pytest

@pytest.mark.claim("c", reading="exact")
def test_exact():
    pass
'''


def _usage_error(run, *fragments):
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR, run.result.stdout.str() + run.result.stderr.str()
    text = run.result.stderr.str() + run.result.stdout.str()
    for f in fragments:
        assert f in text, (f, text)


def test_malformed_toml(planted):
    run = planted({"bad.toml": 'id = "c"\ntitle = \n'}, {"test_x.py": OK})
    _usage_error(run, "bad.toml", "malformed TOML")


@pytest.mark.parametrize("field", ["id", "title", "statement", "expected", "source"])
def test_missing_claim_field(planted, field):
    lines = record_toml("c").splitlines()
    if field == "source":
        cut = lines.index("[source]")
        lines = lines[:cut]
    else:
        lines = [ln for ln in lines if not ln.startswith(f"{field} =")]
    run = planted({"c.toml": "\n".join(lines) + "\n"}, {"test_x.py": OK})
    _usage_error(run, "c.toml", f"field '{field}'", "missing")


@pytest.mark.parametrize("field", ["document", "section", "quote"])
def test_missing_source_field(planted, field):
    text = "\n".join(ln for ln in record_toml("c").splitlines() if not ln.startswith(f"{field} =")) + "\n"
    run = planted({"c.toml": text}, {"test_x.py": OK})
    _usage_error(run, "c.toml", "claim 'c'", f"source.{field}")


@pytest.mark.parametrize("field", ["name", "statement"])
def test_missing_reading_field(planted, field):
    text = record_toml("c").replace('name = "exact"' if field == "name" else 'statement = "a reading"', "")
    run = planted({"c.toml": text}, {"test_x.py": OK})
    _usage_error(run, "c.toml", "claim 'c'", f"readings[0].{field}")


def test_unknown_field(planted):
    run = planted({"c.toml": record_toml("c", extra='colour = "red"')}, {"test_x.py": OK})
    _usage_error(run, "c.toml", "claim 'c'", "field 'colour'", "unknown field")


def test_wrong_type(planted):
    run = planted({"c.toml": record_toml("c").replace('title = "planted c"', "title = 3")}, {"test_x.py": OK})
    _usage_error(run, "c.toml", "field 'title'", "must be a str")


def test_unknown_verdict(planted):
    run = planted({"c.toml": record_toml("c", expected="maybe")}, {"test_x.py": OK})
    _usage_error(run, "c.toml", "field 'expected'", "unknown verdict 'maybe'")


def test_empty_quote(planted):
    run = planted({"c.toml": record_toml("c", quote="   ")}, {"test_x.py": OK})
    _usage_error(run, "c.toml", "field 'source.quote'", "must not be empty")


def test_duplicate_id(planted):
    run = planted({"a.toml": record_toml("c"), "b.toml": record_toml("c")}, {"test_x.py": OK})
    _usage_error(run, "b.toml", "claim 'c'", "duplicate id", "a.toml")


def test_two_as_stated_readings(planted):
    rec = record_toml("c", readings=(("exact", True), ("fp16", True)))
    run = planted({"c.toml": rec}, {"test_x.py": OK})
    _usage_error(run, "c.toml", "claim 'c'", "as_stated", "more than one")


def test_marker_naming_unknown_claim(planted):
    src = OK.replace('claim("c"', 'claim("nope"')
    run = planted({"c.toml": record_toml("c")}, {"test_x.py": src, "test_ok.py": OK})
    _usage_error(run, "test_x.py", "unknown claim 'nope'")


def test_marker_naming_unknown_reading(planted):
    src = OK.replace('reading="exact"', 'reading="fp99"')
    run = planted({"c.toml": record_toml("c")}, {"test_x.py": src, "test_ok.py": OK})
    _usage_error(run, "test_x.py", "claim 'c'", "no reading 'fp99'")


def test_reading_without_a_check(pytester, planted):
    rec = record_toml("c", readings=(("exact", True), ("fp16", False)))
    pytester.makeini("[pytest]\ntestpaths = .\n")  # run as a person would: bare `pytest`
    rec_dir = pytester.path / "records"
    rec_dir.mkdir()
    (rec_dir / "c.toml").write_text(rec, encoding="utf-8")
    pytester.makepyfile(test_x=OK)
    result = pytester.runpytest("--claims-dir", str(rec_dir), "--claims-sources", str(REPO_SOURCES),
                                "--claims-report-dir", "out")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*c.toml: claim 'c': reading 'fp16' has no check*"])


def test_unchecked_claim_needs_reason_and_no_readings(tmp_path):
    with pytest.raises(ClaimRecordError, match="unchecked_reason"):
        parse_claim({"id": "c", "title": "t", "statement": "s", "expected": "unchecked",
                     "source": {"document": "arXiv:2103.03404", "section": "s", "quote": "q"}}, "x.toml")


def test_quote_must_be_verbatim(tmp_path):
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "003_a0ad15dda516ed1d.txt").write_text("原文 的 一句话", encoding="utf-8")
    write_sums(seeds)
    recs = tmp_path / "records"
    recs.mkdir()
    (recs / "c.toml").write_text(record_toml("c", quote="不在原文里"), encoding="utf-8")
    with pytest.raises(ClaimRecordError, match=r"c.toml: claim 'c': field 'source.quote': quote does not occur"):
        load_catalog(recs, seeds)
    (recs / "c.toml").write_text(record_toml("c", quote="原文   的\n一句话"), encoding="utf-8")
    assert load_catalog(recs, seeds)[0].id == "c"


def test_shipped_catalog_is_valid_and_quotes_are_verbatim():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    catalog = load_catalog(root / "claims", root / "sources")
    assert len(catalog) >= 7


ALSO = '''
[[also_in]]
document = "001_7b7f411bbe8a3bef.txt"
section = "repost"
quote = "转载 的 一句话"
'''


def _also_record(extra: str = ALSO) -> str:
    return record_toml("c", quote="原文 的 一句话") + extra


def test_also_in_quotes_must_be_verbatim(tmp_path):
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "003_a0ad15dda516ed1d.txt").write_text("原文 的 一句话", encoding="utf-8")
    (seeds / "001_7b7f411bbe8a3bef.txt").write_text("另一份 文字", encoding="utf-8")
    write_sums(seeds)
    recs = tmp_path / "recs"
    recs.mkdir()
    (recs / "c.toml").write_text(_also_record(), encoding="utf-8")
    with pytest.raises(ClaimRecordError, match=r"c\.toml: claim 'c': field 'also_in\[0\]\.quote': quote does not occur"):
        load_catalog(recs, seeds)
    (seeds / "001_7b7f411bbe8a3bef.txt").write_text("转载  的\n一句话。", encoding="utf-8")
    write_sums(seeds)
    (claim,) = load_catalog(recs, seeds)
    assert claim.documents == ("003_a0ad15dda516ed1d.txt", "001_7b7f411bbe8a3bef.txt")
    assert claim.also_in[0].section == "repost"


@pytest.mark.parametrize(("extra", "field", "problem"), [
    (ALSO.replace('section = "repost"\n', ""), "also_in[0].section", "missing required field"),
    (ALSO.replace('"001_7b7f411bbe8a3bef.txt"', '"../001.txt"'), "also_in[0].document",
     "neither a file under the sources folder"),
    (ALSO.replace('quote = "转载 的 一句话"', 'quote = ""'), "also_in[0].quote", "must not be empty"),
    (ALSO + 'colour = "red"\n', "also_in[0].colour", "unknown field"),
    (ALSO + ALSO, "also_in[1].quote", "repeats the source or another also_in entry"),
    ('also_in = "001"\n', "also_in", "must be a list"),
])
def test_malformed_also_in(tmp_path, extra, field, problem):
    import tomllib

    text = _also_record(extra) if not extra.startswith("also_in =") else extra + record_toml("c")
    with pytest.raises(ClaimRecordError) as err:
        parse_claim(tomllib.loads(text), tmp_path / "c.toml")
    assert f"claim 'c': field '{field}'" in str(err.value) and problem in str(err.value), str(err.value)


FAILS_FP16 = OK + '''

@pytest.mark.claim("c", reading="fp16")
def test_fp16():
    assert False, "fp16 loses it"
'''


def test_reading_other_than_as_stated_needs_a_kind(planted):
    """A failed reading other than the as-stated one must say what kind of failure it is
    (docs/verdicts.md, "Materiality"). Whether a reading fails depends on the machine (a CUDA
    reading fails only where CUDA runs), on the Hypothesis seed and on the models installed, so the
    rule is enforced on the record, before any check runs: every reading that is not the as-stated
    one carries a ``kind``, and a record without it is a usage error naming file, claim and field,
    even though this reading's check would fail."""
    rec = record_toml("c", expected="caveat", readings=(("exact", True), ("fp16", False)))
    rec = rec.replace('kind = "numerical"\n', "")
    run = planted({"c.toml": rec}, {"test_x.py": FAILS_FP16})
    _usage_error(run, "c.toml", "claim 'c'", "readings[1].kind", "needs a kind")


@pytest.mark.parametrize(("change", "problem"), [
    (('kind = "numerical"', 'kind = "rounding"'), "unknown kind 'rounding'"),
    (("as_stated = true", 'as_stated = true\nkind = "scope"'), "the as-stated reading has no kind"),
])
def test_bad_kind(tmp_path, change, problem):
    import tomllib

    text = record_toml("c", expected="caveat", readings=(("exact", True), ("fp16", False))).replace(*change)
    with pytest.raises(ClaimRecordError, match=problem) as info:
        parse_claim(tomllib.loads(text), tmp_path / "c.toml")
    assert info.value.claim == "c" and info.value.field.endswith(".kind")


def test_report_carries_the_kind_of_a_failed_reading(planted):
    rec = record_toml("c", expected="caveat", readings=(("exact", True), ("fp16", False)))
    run = planted({"c.toml": rec}, {"test_x.py": FAILS_FP16})
    assert run.result.ret == pytest.ExitCode.OK, run.result.stdout.str()
    readings = {r["name"]: r for r in run.claim("c")["readings"]}
    assert readings["fp16"]["outcome"] == "failed" and readings["fp16"]["kind"] == "numerical"
    assert readings["exact"]["kind"] is None
    md = (run.report_dir / "claims.md").read_text(encoding="utf-8")
    assert "`fp16` (numerical)" in md


def test_a_record_parsed_before_is_reused_with_its_own_path(tmp_path):
    """``load_claim_file`` keeps valid records by their text: a copy elsewhere (the planted runs copy
    the folder) is the same claim with its own path; a malformed copy still names its own file."""
    from attention_claims.framework.records import load_claim_file

    src = next(RECORDS_DIR.rglob("*.toml"))
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text(src.read_text(encoding="utf-8"), encoding="utf-8")
    b.write_text(src.read_text(encoding="utf-8"), encoding="utf-8")
    ca, cb = load_claim_file(a), load_claim_file(b)
    assert ca.path == str(a) and cb.path == str(b) and ca.id == cb.id and ca.readings == cb.readings
    bad = tmp_path / "bad.toml"
    bad.write_text(src.read_text(encoding="utf-8").replace("id = ", "id == ", 1), encoding="utf-8")
    with pytest.raises(ClaimRecordError, match="bad.toml"):
        load_claim_file(bad)


@pytest.mark.parametrize("name", ["softmax-note.md", "notes/draft.tex", "page.html", "Notes 2026.txt"])
def test_a_document_of_any_name_under_the_sources_folder(tmp_path, name):
    docs = tmp_path / "sources"
    (docs / name).parent.mkdir(parents=True, exist_ok=True)
    (docs / name).write_text("A sentence that makes a claim.", encoding="utf-8")
    write_sums(docs)
    recs = tmp_path / "records"
    recs.mkdir()
    (recs / "c.toml").write_text(record_toml("c", document=name, quote="makes a claim"), encoding="utf-8")
    (claim,) = load_catalog(recs, docs)
    assert claim.source.document == name


@pytest.mark.parametrize("name", ["/etc/passwd", "../outside.md", "a/../../b.md", "~/x.md", "a\\b.md", ""])
def test_a_document_outside_the_sources_folder_is_refused(tmp_path, name):
    import tomllib

    with pytest.raises(ClaimRecordError) as err:
        parse_claim(tomllib.loads(record_toml("c", document=name)), tmp_path / "c.toml")
    assert "field 'source.document'" in str(err.value)


def test_a_document_missing_from_sha256sums_is_refused(tmp_path):
    docs = tmp_path / "sources"
    docs.mkdir()
    (docs / "listed.md").write_text("listed text", encoding="utf-8")
    write_sums(docs)
    (docs / "note.md").write_text("A sentence that makes a claim.", encoding="utf-8")  # not listed
    recs = tmp_path / "records"
    recs.mkdir()
    (recs / "c.toml").write_text(record_toml("c", document="note.md", quote="makes a claim"), encoding="utf-8")
    with pytest.raises(ClaimRecordError, match=r"claim 'c': field 'source.document': note.md is not listed in .*SHA256SUMS"):
        load_catalog(recs, docs)


def test_a_records_topics_are_its_own(tmp_path, planted):
    import tomllib

    claim = parse_claim(tomllib.loads(record_toml("c", extra='topics = ["softmax", "rank"]')), tmp_path / "c.toml")
    assert claim.topics == ("softmax", "rank")
    with pytest.raises(ClaimRecordError, match="field 'topics'"):
        parse_claim(tomllib.loads(record_toml("c", extra="topics = [1]")), tmp_path / "c.toml")
    from attention_claims.framework.render import model

    run = planted({"c.toml": record_toml("c", extra='topics = ["softmax", "rank"]')},
                  {"test_c.py": "import pytest\n\n@pytest.mark.claim('c', reading='exact')\ndef test_c():\n    pass\n"})
    entry = run.claim("c")
    assert entry["topics"] == ["softmax", "rank"] and model.claim_topics(entry) == ["softmax", "rank"]
