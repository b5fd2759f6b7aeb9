"""One quote matcher (issue 44.3): the same table of cases against its three readers, ``attention-claims new``,
the record loader and the annotated document view; a quote not found names the closest text (44.6)."""

from __future__ import annotations

import pytest

from attention_claims.framework import quotes
from attention_claims.framework.records import ClaimRecordError, load_catalog
from attention_claims.framework.render import annotate, render_markdown
from attention_claims.tools.new import NewClaimError, write_claim
from conftest import record_toml, write_sums

DOC_NAME = "note.tex"
DOC = ("Choromanski et al.~\\cite{performer} estimate it with positive random features, i.e.\\ features\n"
       "that are never negative.\n\n"
       "The estimator is  unbiased\t\\& its variance -- unlike the trigonometric one -- vanishes as $\\SM \\to 0$.\n\n"
       "其中$N$是序列\n长度。注意力矩阵通常是低秩的。\n")

CASES = [
    # (why, quote, found)
    ("verbatim", "The estimator is  unbiased\t\\& its variance", True),
    ("a space where the source breaks a line", "i.e.\\ features that are never negative.", True),
    ("a line break where the source has spaces and a tab", "The estimator is\nunbiased \\& its", True),
    ("white space around the quote", "  estimate it with positive random features \n", True),
    ("Chinese broken across a line, quoted without it", "其中$N$是序列长度。", True),
    ("Chinese with a space the source lacks", "注意力矩阵 通常是低秩的。", True),
    ("a macro written out: not the document's words", "vanishes as $\\mathrm{SM} \\to 0$", False),
    ("white space where the source has none between Latin letters", "posi tive random features", False),
    ("no white space where the source has some", "positiverandom features", False),
    ("words not in the document", "The estimator is biased", False),
]
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("why, quote, found", CASES, ids=IDS)
def test_the_matcher(why, quote, found):
    spans = quotes.find(DOC, quote)
    assert quotes.contains(DOC, quote) is found and bool(spans) is found
    for a, b in spans:  # a span is the quote's words as stored in the document
        assert quotes.normalise(DOC[a:b]).replace(" ", "") == quotes.normalise(quote).replace(" ", "")


@pytest.mark.parametrize("why, quote, found", CASES, ids=IDS)
def test_new_accepts_what_the_matcher_finds(tmp_path, why, quote, found):
    (tmp_path / "sources").mkdir()
    (tmp_path / "sources" / DOC_NAME).write_text(DOC, encoding="utf-8")
    dirs = {"claims_dir": tmp_path / "claims", "sources_dir": tmp_path / "sources", "checks_dir": tmp_path / "checks"}
    if found:
        record, _check = write_claim("c", DOC_NAME, quote, **dirs)
        assert record.is_file()
    else:
        with pytest.raises(NewClaimError, match="does not occur verbatim"):
            write_claim("c", DOC_NAME, quote, **dirs)


@pytest.mark.parametrize("why, quote, found", CASES, ids=IDS)
def test_the_loader_accepts_what_the_matcher_finds(tmp_path, why, quote, found):
    seeds, recs = tmp_path / "seeds", tmp_path / "records"
    seeds.mkdir()
    recs.mkdir()
    (seeds / DOC_NAME).write_text(DOC, encoding="utf-8")
    write_sums(seeds)
    (recs / "c.toml").write_text(record_toml("c", quote=quote, document=DOC_NAME), encoding="utf-8")
    if found:
        assert load_catalog(recs, seeds)[0].id == "c"
    else:
        with pytest.raises(ClaimRecordError, match="field 'source.quote': quote does not occur verbatim"):
            load_catalog(recs, seeds)


def _claim(quote: str, cid: str = "c") -> dict:
    return {"id": cid, "verdict": "true", "source": {"document": DOC_NAME, "quote": quote, "section": ""},
            "also_in": []}


@pytest.mark.parametrize("why, quote, found", CASES, ids=IDS)
def test_the_view_places_what_the_matcher_finds(why, quote, found):
    doc = annotate(DOC_NAME, DOC, [_claim(quote)])
    marked = [s for s in doc.sentences if s.claims == ["c"]]
    assert bool(marked) is found and (doc.unlocated == []) is found
    warnings = quotes.unplaced([_claim(quote)], {DOC_NAME: DOC})
    assert (warnings == []) is found
    if not found:  # never silent: the terminal (the plugin's notices) and claims.md say so
        assert "claim 'c': source.quote: not highlighted in the view of note.tex" in warnings[0]
        md = render_markdown({"claims": [], "counts": {}}, unplaced=warnings)
        assert "warning: claim 'c': source.quote: not highlighted" in md


def test_a_quote_not_found_names_the_closest_text():
    message = quotes.not_found(DOC_NAME, DOC, "The estimator is unbiased & its variance - unlike the trig one")
    assert "closest text: 'The estimator is unbiased \\& its variance -- unlike the trigonometric one" in message
    pdf = quotes.not_found(DOC_NAME, DOC, "vanishes as $\\mathrm{SM} \\to 0$.")
    assert "closest text:" in pdf and "\\SM \\to 0$" in pdf
    assert quotes.closest(DOC, "an unrelated sentence about the weather in Paris") is None
    assert "no sentence of the document is close" in quotes.not_found(DOC_NAME, DOC, "zzzz qqqq")


def test_the_loader_and_new_name_the_closest_text(tmp_path):
    seeds, recs = tmp_path / "seeds", tmp_path / "records"
    seeds.mkdir()
    recs.mkdir()
    (seeds / DOC_NAME).write_text(DOC, encoding="utf-8")
    write_sums(seeds)
    (recs / "c.toml").write_text(record_toml("c", quote="vanishes as $\\mathrm{SM} \\to 0$", document=DOC_NAME),
                                 encoding="utf-8")
    with pytest.raises(ClaimRecordError, match=r"closest text: .*\\SM \\to 0"):
        load_catalog(recs, seeds)
    with pytest.raises(NewClaimError, match=r"closest text: .*\\SM \\to 0"):
        write_claim("c", DOC_NAME, "vanishes as $\\mathrm{SM} \\to 0$", claims_dir=tmp_path / "claims",
                    sources_dir=seeds, checks_dir=tmp_path / "checks")


def test_a_document_error_is_introduced_as_a_source_document(planted, pytester):
    """Issue 44.6: an altered document is not a "malformed claim record"; a record's own error still is."""
    import hashlib

    docs = pytester.mkdir("altered")
    doc = docs / "003_a0ad15dda516ed1d.txt"
    doc.write_text("自注意力机制（Self-Attention）是Transformer架构的核心组件，改过的。\n", encoding="utf-8")
    (docs / "SHA256SUMS").write_text(f"{hashlib.sha256(b'x').hexdigest()}  {doc.name}\n", encoding="utf-8")
    ok = 'import pytest\n\n@pytest.mark.claim("c", reading="exact")\ndef test_exact():\n    pass\n'
    run = planted({"c.toml": record_toml("c")}, {"test_x.py": ok}, args=["--claims-sources", str(docs)])
    assert run.result.ret == 4
    err = run.result.stderr.str()
    assert "attention-claims: source document: " in err and "malformed claim record" not in err, err
    for path, cid, field, problem, subject in [
            ("claims/c.toml", "c", "source.document", "no such source document sources/x.txt", "source document"),
            ("sources/SHA256SUMS", None, None, "line 2: not '<64 hex>  <path>'", "source document"),
            ("sources/documents.toml", None, "x.txt.url", "must be an http(s) URL", "source document"),
            ("claims/c.toml", "c", "source.quote", "quote does not occur verbatim in x.txt", "claim record"),
            ("claims/c.toml", "c", "title", "missing", "claim record")]:
        assert ClaimRecordError(path, cid, field, problem).subject == subject, (path, field)


def test_writing_the_report_returns_and_lists_the_quotes_it_cannot_place(tmp_path):
    """The terminal's warning lines (the plugin shows what write_reports returns) and claims.md's."""
    from attention_claims.framework.report import write_report_data

    seeds = tmp_path / "sources"
    seeds.mkdir()
    (seeds / DOC_NAME).write_text(DOC, encoding="utf-8")
    write_sums(seeds)
    from render_fixture import fixture_report

    report = fixture_report()
    like = next(c for c in report["claims"] if c["verdict"] == "true")
    report["claims"] = [dict(like, **_claim("i.e.\\ features that are never negative.", "placed")),
                        dict(like, **_claim("a sentence the note does not have", "lost"))]
    report["counts"] = {}
    warnings = write_report_data(report, tmp_path / "reports", sources_dir=seeds, formats=("md",))
    assert len(warnings) == 1 and warnings[0].startswith("claim 'lost': source.quote: not highlighted")
    md = (tmp_path / "reports" / "claims.md").read_text(encoding="utf-8")
    assert "warning: claim 'lost': source.quote: not highlighted in the view of note.tex" in md
    assert "claim 'placed'" not in md.split("## ")[0]
