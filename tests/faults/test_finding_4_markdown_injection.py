"""Issue 22, finding 4: ``claims.md`` must not carry raw HTML or script links from a report, and neither
report may embed or link a figure from outside the report's own ``figures/`` folder.

``claims.md`` is rendered the way a GitHub-like renderer does (markdown-it-py, CommonMark with raw HTML
allowed and tables on; its link validation turned off, so the test sees what the Markdown itself makes),
and the resulting HTML is parsed: no ``<script>`` element, no ``on...`` attribute, no ``javascript:``,
``vbscript:`` or ``data:`` URL in any attribute.
"""

from __future__ import annotations

import base64
import copy
import os
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "framework"))
from render_fixture import DOC, DOC_TEXT, fixture_report  # noqa: E402

from attention_claims.framework.render import model, render_html, render_markdown  # noqa: E402
from attention_claims.framework.render.markdown import md_cell, md_code, md_text  # noqa: E402

markdown_it = pytest.importorskip("markdown_it")

PAYLOADS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[x](javascript:alert(1))",
    '<a href="javascript:alert(1)">x</a>',
    "![x](javascript:alert(1))",
    "<javascript:alert(1)>",
    "[x]: javascript:alert(1)\n\n[x]",
    "\\<script>alert(1)</script> \\\\<svg onload=alert(1)>",
    "`a` <b onmouseover=alert(1)>b</b> `<script>alert(1)</script>` ``x`",
    "x\n\n<script>alert(1)</script>\n\n</details><img src=x onerror=alert(1)>",
    "a | <img src=x onerror=alert(1)> | ` | <script>alert(1)</script>",
    "$<script>alert(1)</script>$ and $[x](javascript:alert(1))$ and $$\n<img src=x onerror=alert(1)>\n$$",
    "[y](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
]
PAYLOAD = " ".join(PAYLOADS)


def _renderer():
    md = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table")
    md.validateLink = lambda url: True  # a permissive renderer: whatever the Markdown links to is linked
    return md


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))

    handle_startendtag = handle_starttag


def _dangers(html: str) -> list[str]:
    """What in ``html`` a browser would run: script elements, event handler attributes, script/data URLs."""
    parser = _Tags()
    parser.feed(html)
    parser.close()
    found = []
    for tag, attrs in parser.tags:
        if tag in ("script", "iframe", "object", "embed", "svg", "math", "style", "base", "meta", "link", "form"):
            found.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on"):
                found.append(f"<{tag} {name}=>")
            url = re.sub(r"[\x00-\x20]", "", value or "").lower()
            if url.startswith(("javascript:", "vbscript:", "data:")):
                found.append(f"<{tag} {name}={value}>")
    return found


def _poisoned_report() -> dict:
    """The fixture report with the payloads in every text that comes from a record, a check or a
    carried-over report."""
    rep = copy.deepcopy(fixture_report())
    for c in rep["claims"]:
        for key in ("title", "statement", "notes", "reason", "unchecked_reason", "formal", "expected"):
            c[key] = PAYLOAD
        c["agrees"] = False
        c["source"]["section"] = PAYLOAD
        c["source"]["quote"] = PAYLOAD
        c["also_in"] = [{"document": "arXiv:x) " + PAYLOAD, "section": PAYLOAD, "quote": PAYLOAD}]
        c["decided"] = {"at": PAYLOAD, "profile": PAYLOAD, "run": PAYLOAD}
        for r in c["readings"]:
            r["statement"] = r["evidence"] = PAYLOAD
            r["condition"] = {"dtype": PAYLOAD}
            r["kind"] = PAYLOAD
            r["figures"] = [{"path": "javascript:alert(1)", "caption": PAYLOAD, "check": PAYLOAD}]
            for p in r.get("plots") or []:
                p["data"]["title"] = PAYLOAD
            if r.get("counterexample"):
                r["counterexample"].update(message=PAYLOAD, boundary=PAYLOAD, certificate=PAYLOAD,
                                           reproduce=PAYLOAD, example={"x": PAYLOAD, "```": "```` ~~~"})
        rep["claims"][0]["readings"][0]["name"] = "``` " + PAYLOAD
    rep["claims"][-1]["source"]["document"] = "arXiv:2006.04768) " + PAYLOAD
    rep["generated"] = PAYLOAD
    rep["environment"] = {"python": PAYLOAD, "torch": PAYLOAD, "devices": [PAYLOAD], "hypothesis_profile": PAYLOAD}
    rep["run"]["errors"] = [PAYLOAD]
    rep["counts"] = None
    rep["trust"] = {"planted": {"caught": PAYLOAD, "falsehoods": PAYLOAD, "date": PAYLOAD},
                    "stability": {"seeds": [1], "profile": PAYLOAD, "paths": [PAYLOAD], "claims": PAYLOAD,
                                  "date": PAYLOAD, "flips": [{"claim": PAYLOAD}]},
                    "mutation": {"tool": PAYLOAD, "date": PAYLOAD, "score": PAYLOAD}}
    return rep


def test_finding_4_the_renderer_test_sees_the_payloads_when_unescaped():
    """The check itself: each payload, written raw, runs in this renderer (so a pass below means something)."""
    md = _renderer()
    for payload in PAYLOADS[:5] + PAYLOADS[-1:]:
        assert _dangers(md.render(payload)), payload


def test_finding_4_no_payload_runs_in_claims_md():
    text = render_markdown(_poisoned_report())
    html = _renderer().render(text)
    assert _dangers(html) == []
    assert "<script" not in html
    # the payload's words are all still there, as text
    assert html.count("alert(1)") >= 10 * len(PAYLOADS)


def test_finding_4_each_payload_alone_in_each_field():
    """Each payload on its own (no neighbour can close what it opens) in the fields a renderer reads
    differently: the <summary> line (raw HTML), a block quote, a paragraph, a table cell, a code span."""
    md = _renderer()
    for payload in PAYLOADS:
        rep = copy.deepcopy(fixture_report())
        for c in rep["claims"]:
            c["title"] = c["statement"] = c["notes"] = c["source"]["quote"] = c["source"]["section"] = payload
            for r in c["readings"]:
                r["statement"] = r["evidence"] = payload
                if r.get("counterexample"):
                    r["counterexample"]["message"] = r["counterexample"]["boundary"] = payload
        assert _dangers(md.render(render_markdown(rep))) == [], payload


def test_finding_4_the_suites_own_markup_still_renders():
    """Escaping leaves the report's structure: the folded claims, the tables, bold, math, code spans and
    the http(s) links of the records and of the suite."""
    html = _renderer().render(render_markdown(fixture_report()))
    assert html.count("<details") == 5 and html.count("<table>") >= 3
    assert "A <strong>bold</strong> note." in html
    assert '<a href="https://arxiv.org/abs/2006.04768">' in html
    assert "<code>exact</code>" in html
    assert md_text("see [the post](https://kexue.fm/archives/9889) and `a_b`") == \
        "see [the post](https://kexue.fm/archives/9889) and `a_b`"
    assert md_text("rank <= d, $a < b$ and $j<n$") == "rank <= d, $a < b$ and $j\\lt n$"
    assert md_cell("a | $b$") == "a \\| $b$"


def test_finding_4_code_spans_and_fences_cannot_be_closed_from_inside():
    assert md_code("a`b") == "``a`b``"
    assert md_code("`x") == "`` `x ``"
    html = _renderer().render(f"Reproduce: {md_code('` <script>alert(1)</script>')}")
    assert _dangers(html) == [] and "<code>" in html
    rep = fixture_report()
    rep["claims"][0]["readings"][0]["counterexample"]["example"] = {"s": "```\n<script>alert(1)</script>"}
    assert _dangers(_renderer().render(render_markdown(rep))) == []


def test_finding_4_links_the_suite_writes_are_https_only():
    assert model.document_url("arXiv:2006.04768") == "https://arxiv.org/abs/2006.04768"
    assert model.document_url("arXiv:math/0601001v2") == "https://arxiv.org/abs/math/0601001v2"
    for doc in ("arXiv:javascript:alert(1)", "arXiv:x) <script>", "arXiv:", "arXiv:x y"):
        assert model.document_url(doc) is None, doc
    rep = fixture_report()
    rep["claims"][-1]["source"]["document"] = "arXiv:1)](javascript:alert(1)"
    html = _renderer().render(render_markdown(rep))
    assert _dangers(html) == [] and 'href="javascript' not in html


@pytest.fixture
def report_folder(tmp_path):
    """A report folder with one figure in ``figures/`` and files outside it, one reached by a symbolic link."""
    (tmp_path / "figures").mkdir()
    png = b"\x89PNG\r\n\x1a\n" + b"inside" * 8
    (tmp_path / "figures" / "ok.png").write_bytes(png)
    outside = tmp_path.parent / f"{tmp_path.name}-outside.svg"
    outside.write_bytes(b"<svg xmlns='http://www.w3.org/2000/svg'><text>secret outside</text></svg>")
    (tmp_path / "x.svg").write_bytes(outside.read_bytes())
    try:
        os.symlink(outside, tmp_path / "figures" / "link.svg")
    except OSError:
        pass
    yield tmp_path, png, outside
    outside.unlink(missing_ok=True)


BAD_PATHS = ["/etc/passwd", "../../x.svg", "x.svg", "figures/../x.svg", "figures/../../x.svg", "figures/link.svg",
             "figures/./link.svg", "figures", "figures/", "javascript:alert(1)", "data:image/svg+xml;base64,PHN2Zz4=",
             "figures/ok.png) ![y](javascript:alert(1)", "https://example.org/x.png"]


def _with_figures(paths):
    rep = fixture_report()
    rep["claims"][1]["readings"][0]["figures"] = [{"path": p, "caption": f"fig {i}", "check": "c"}
                                                   for i, p in enumerate(paths)]
    return rep


def test_finding_4_figures_outside_the_figures_folder_are_not_embedded(report_folder):
    folder, png, outside = report_folder
    html = render_html(_with_figures(["figures/ok.png", *BAD_PATHS]), sources={DOC: DOC_TEXT}, report_dir=folder)
    assert base64.b64encode(png).decode() in html  # the figure of the report's folder is embedded
    assert base64.b64encode(outside.read_bytes()).decode() not in html
    assert "secret outside" not in html
    assert 'src="data:image/svg+xml' not in html  # none of the SVG files outside is embedded
    cards = html[html.index('id="c-toy-caveat"'):]
    for i, p in enumerate(BAD_PATHS, start=1):
        assert f"fig {i}" in cards, p  # listed, with a note
    assert html.count("outside the report&#39;s figures folder") == len(BAD_PATHS)


def test_finding_4_figures_embedded_only_with_a_report_folder(report_folder):
    folder, png, _outside = report_folder
    html = render_html(_with_figures([str(folder / "figures" / "ok.png")]), report_dir=folder)
    assert base64.b64encode(png).decode() not in html  # an absolute path, even inside, is not a report path
    html = render_html(_with_figures(["figures/ok.png"]))
    assert base64.b64encode(png).decode() not in html


def test_finding_4_figures_outside_the_figures_folder_are_not_linked_in_markdown():
    """The Markdown writer has no report folder to look into: it checks the path (a symbolic link inside
    ``figures/`` is linked; a Markdown viewer resolves it in the repository, not on the writer's disk)."""
    bad = [p for p in BAD_PATHS if "link.svg" not in p or "/./" in p]
    text = render_markdown(_with_figures(["figures/ok.png", *bad]))
    assert "![fig 0](figures/ok.png)" in text
    html = _renderer().render(text)
    srcs = re.findall(r'<img src="([^"]*)"', html)
    hrefs = re.findall(r'<a href="([^"]*)"', html)
    assert "figures/ok.png" in srcs
    assert all(model.figure_path(s) for s in srcs), srcs
    assert all(h.startswith("https://") or model.figure_path(h) for h in hrefs), hrefs
    assert text.count("*Figure not shown:") == len(bad)
    assert _dangers(html) == []


def test_finding_4_plot_links_follow_the_same_rule():
    rep = fixture_report()
    rep["claims"][0]["id"] = "../../evil"
    text = render_markdown(rep)
    assert "](figures/../../evil" not in text and "*Plot not linked:" in text
    assert "[![" in render_markdown(fixture_report())
