"""Issue 33, finding 2: names are data. A document's file name, a record's title and a name with ``$`` in
it reach the HTML report, its script and its charts as text: escaped in HTML, slugged in element ids,
routed by ``getElementById``, drawn with mathtext off; a title holding a bidirectional override is
refused at load (exit 4 naming the file and the field)."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from attention_claims.framework.records import ClaimRecordError, parse_claim
from attention_claims.framework.render import load_sources, render_html
from attention_claims.framework.render.browser import open_page, unavailable_reason
from attention_claims.framework.render.model import document_slug
from conftest import record_toml

EVIL = "x\"><img src=x onerror=document.title='PWNED'>.txt"
DOLLAR = "q$_$.md"
TEXT = "# A note\n\nAttention rows sum to one [Tsa19]. Note that $N>D^{2}$. The rank is low.\n"
QUOTE = "Attention rows sum to one"
CHECK = '''
import pytest

@pytest.mark.claim("{cid}", reading="exact")
def test_{name}():
    pass
'''


def _sources(folder, names, unlisted=()):
    folder.mkdir(exist_ok=True)
    lines = []
    for name in [*names, *unlisted]:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(TEXT, encoding="utf-8")
        if name in names:
            lines.append(f"{hashlib.sha256(TEXT.encode()).hexdigest()}  {name}\n")
    (folder / "SHA256SUMS").write_text("".join(lines), encoding="utf-8")
    return folder


def _report(docs):
    claims = [{"id": f"c{k}", "title": f"claim {k}", "verdict": "true", "expected": "true", "statement": "s",
               "source": {"document": d, "section": "1", "quote": QUOTE}, "readings": []}
              for k, d in enumerate(docs)]
    return {"schema": 1, "generated": "2026-11-27T00:00:00Z", "environment": {}, "claims": claims,
            "run": {"complete": True}}


def _project(pytester, docs, unlisted=()):
    recs = pytester.path / "claims"
    recs.mkdir()
    for k, d in enumerate(docs):
        rec = record_toml(f"c{k}", document=d, quote=QUOTE).replace(f'document = "{d}"', f"document = {json.dumps(d)}")
        (recs / f"c{k}.toml").write_text(rec, encoding="utf-8")
        (pytester.path / f"test_c{k}.py").write_text(CHECK.format(cid=f"c{k}", name=f"c{k}"), encoding="utf-8")
    sources = _sources(pytester.path / "sources", docs, unlisted)
    out = pytester.path / "out"
    result = pytester.runpytest("--claims-dir", str(recs), "--claims-sources", str(sources), "--claims-report-dir",
                                str(out), "-p", "no:cacheprovider", "--hypothesis-profile=ci")
    return result, out


def test_ii_finding_2_slugs_are_ids_and_distinct():
    names = [EVIL, DOLLAR, "Note.md", "note.md", "note-md", "papers/note.md", "c", "003", "003_a0ad15dda516ed1d.txt"]
    slugs = [document_slug(n) for n in names]
    assert len(set(slugs)) == len(slugs)
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", s) for s in slugs), slugs
    assert document_slug("003_a0ad15dda516ed1d.txt") == "003" and document_slug("note-md") == "note-md"
    assert document_slug(EVIL) == document_slug(EVIL)  # stable


def test_ii_finding_2_unlisted_evil_document_is_not_read(tmp_path):
    sources = _sources(tmp_path / "sources", ["note.md"], unlisted=[EVIL])
    assert list(load_sources(sources)) == ["note.md"]


def _start_tags(html: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    """Every start tag of ``html`` with its attributes, as the standard library's HTML parser reads them."""
    from html.parser import HTMLParser

    found = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, attrs))

    Tags().feed(html)
    return found


def test_ii_finding_2_listed_evil_document_name_is_escaped_everywhere(tmp_path):
    sources = _sources(tmp_path / "sources", [EVIL, DOLLAR])
    html = render_html(_report([EVIL, DOLLAR]), sources=load_sources(sources))
    assert "<img src=x" not in html
    # parsed as a browser would: no element and no event-handler attribute came out of the name (text content
    # such as the verdict chart's SVG labels may keep the name's quote characters: escaped '<' is enough there)
    tags = _start_tags(html)
    assert not [t for t, _ in tags if t == "img"], "an <img> element from the document name"
    assert not [(t, k) for t, attrs in tags for k, _ in attrs if k.startswith("on")], "an event-handler attribute"
    for name in (EVIL, DOLLAR):
        slug = document_slug(name)
        assert f'id="view-doc-{slug}"' in html and f'id="{slug}-s0"' in html
        assert f'href="#{slug}-s1"' in html  # the claim's link to its sentence


def test_ii_finding_2_dollar_in_a_document_name_draws_the_chart(tmp_path):
    sources = _sources(tmp_path / "sources", [DOLLAR])
    report = _report([DOLLAR])
    total = {"true": 1, "false": 0, "caveat": 0, "unchecked": 0, "undecided": 0, "error": 0}
    report["counts"] = {"by_document": {DOLLAR: total}, "total": total}
    html = render_html(report, sources=load_sources(sources))
    assert "q$_$.md" in html.split('class="chart')[1].split("</figure>")[0]


def test_ii_finding_2_title_with_a_right_to_left_override_is_refused():
    data = {"id": "rows-sum-to-one", "title": "Rows sum to one \u202e:tcidrev eslaf", "statement": "s",
            "expected": "true", "source": {"document": "note.md", "section": "1", "quote": "q"},
            "readings": [{"name": "exact", "statement": "r", "as_stated": True}]}
    with pytest.raises(ClaimRecordError) as info:
        parse_claim(data, "claims/rows.toml")
    msg = str(info.value)
    assert "claims/rows.toml" in msg and "field 'title'" in msg and "U+202E" in msg, msg
    for field, value in [("statement", "a\u2066b"), ("title", "bell\x07"), ("title", "nul\x00")]:
        bad = json.loads(json.dumps(data)) | {"title": "ok", field: value}
        with pytest.raises(ClaimRecordError, match=f"field '{field}'"):
            parse_claim(bad, "claims/rows.toml")
    bad = json.loads(json.dumps(data)) | {"title": "ok"}
    bad["source"]["quote"] = "q\u202d"
    with pytest.raises(ClaimRecordError, match="field 'source.quote'"):
        parse_claim(bad, "claims/rows.toml")
    ok = json.loads(json.dumps(data)) | {"title": "ok", "statement": "two\nlines\twith a tab"}
    assert parse_claim(ok, "claims/rows.toml").title == "ok"


def test_ii_finding_2_end_to_end_title_override_exits_4(pytester):
    recs = pytester.path / "claims"
    recs.mkdir()
    (recs / "c.toml").write_text(record_toml("c", document="note.md", quote=QUOTE).replace(
        'title = "planted c"', 'title = "Rows sum to one \u202e:tcidrev eslaf"'), encoding="utf-8")
    sources = _sources(pytester.path / "sources", ["note.md"])
    result = pytester.runpytest("--claims-dir", str(recs), "--claims-sources", str(sources), "--claims-report-dir",
                                str(pytester.path / "out"), "-p", "no:cacheprovider")
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, text
    assert "c.toml" in text and "field 'title'" in text and "U+202E" in text, text


def test_ii_finding_2_end_to_end_names_in_a_run_and_in_chromium(pytester):
    """The reproductions end to end: a project whose documents are named ``EVIL`` (listed, quoted by a
    record), ``q$_$.md`` and ``papers/note.md``, and an unlisted ``EVIL`` twin; the run writes its report
    (no INTERNALERROR from the chart), and in Chromium no script runs from a name and every document's
    tab and sentence link routes."""
    docs = [EVIL, DOLLAR, "papers/note.md"]
    result, out = _project(pytester, docs, unlisted=["y\"><script>document.title='PWNED'</script>.txt"])
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == 0 and "INTERNALERROR" not in text, text
    html = (out / "claims.html").read_text(encoding="utf-8")
    assert "<img src=x" not in html and "<script>document.title" not in html
    md = (out / "claims.md").read_text(encoding="utf-8")
    assert not re.search(r"(?<!\\)<img", md) and "q\\$_\\$.md" in md  # Markdown: the name's $ escaped, no GitHub math
    if unavailable_reason() is not None:
        pytest.skip(f"browser part: {unavailable_reason()}")
    with open_page(out / "claims.html") as (page, log):
        assert page.title() != "PWNED" and "PWNED" not in page.title()
        for name in docs:
            slug = document_slug(name)
            page.evaluate("h => { location.hash = h; }", f"#doc-{slug}")
            page.wait_for_function("id => !document.getElementById(id).hidden", arg=f"view-doc-{slug}")
            page.evaluate("h => { location.hash = h; }", "#c-c0")
            page.wait_for_function("() => !document.getElementById('view-claims').hidden")
            page.evaluate("h => { location.hash = h; }", f"#{slug}-s1")
            page.wait_for_function("id => !document.getElementById(id).hidden", arg=f"view-doc-{slug}")
            assert page.evaluate("id => document.getElementById(id).textContent", f"{slug}-s1").startswith(
                "Attention rows sum to one")
        assert page.title() != "PWNED"
        assert not log["page_errors"] and not log["requests"], log


def test_ii_finding_2_a_listed_document_name_with_an_override_is_refused(tmp_path):
    from attention_claims.framework.records import verify_sources

    name = "note\u202etxt.md"
    (tmp_path / name).write_text(TEXT, encoding="utf-8")
    (tmp_path / "SHA256SUMS").write_text(f"{hashlib.sha256(TEXT.encode()).hexdigest()}  {name}\n", encoding="utf-8")
    with pytest.raises(ClaimRecordError, match="SHA256SUMS: the document name .* U\\+202E"):
        verify_sources(tmp_path)
