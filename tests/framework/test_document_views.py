"""Documents rendered as they read (issue 44.4, 44.5): a stranger's LaTeX note (preamble and comments folded,
its macros handed to KaTeX, ``\\label``/``\\ref``/``\\cite``/``~``/``\\&``/``--`` as a reader sees them), a saved
HTML page's furniture folded, the suite's own 004 with its furniture folded from ``documents.toml``; sentence
ids and classifications as before."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from render_fixture import SEEDS, fixture_report

from attention_claims.framework.records import ClaimRecordError, load_manifest
from attention_claims.framework.render import annotate, render_html
from attention_claims.framework.render.browser import open_page, unavailable_reason
from attention_claims.framework.render.latex import layout, prose
from attention_claims.framework.render.texmd import find_math
from attention_claims.framework.render.webpage import ArticleError, ranges, recorded_parts, usable_parts
from attention_claims.framework.sentences import classification_maps, load_all

TEX_NAME = "favor_notes.tex"
TEX = (Path(__file__).parent / "fixtures" / TEX_NAME).read_text(encoding="utf-8")
TEX_QUOTES = {
    "sm-definition": "The softmax kernel is $\\SM(x, y) = \\exp(x^\\top y)$",
    # broken across a line in the file: "i.e.\ features\nthat are never negative"
    "prf-positive": "estimate it with positive random features, i.e.\\ features that are never negative",
    "prf-unbiased": "The estimator is unbiased \\& its variance -- unlike the trigonometric one -- vanishes as $\\SM \\to 0$.",
    "orf-mse": "Orthogonal frequencies lower the mean squared error for every $d \\ge 2$ (Lemma~2).",
}


def _tex_report() -> dict:
    report = fixture_report()
    like = next(c for c in report["claims"] if c["verdict"] == "true")
    report["claims"] = [dict(like, id=cid, title=cid, source={"document": TEX_NAME, "quote": q, "section": ""},
                             also_in=[]) for cid, q in TEX_QUOTES.items()]
    report["counts"] = {}
    return report


def _view(html: str, name: str) -> str:
    """The document view of ``name`` in the page."""
    start = html.index("<article", html.index(f'data-document="{name}"'))
    return html[start:html.index("</article>", start)]


def _unfolded(view: str) -> str:
    """The view without its folds and formulas: the prose a reader reads."""
    view = re.sub(r'<details class="fold">.*?</details>', "", view, flags=re.S)
    view = re.sub(r'<span class="tex[^"]*">.*?</span>', "", view, flags=re.S)
    view = re.sub(r'<span class="tex-comment" hidden>.*?</span>', "", view, flags=re.S)
    return re.sub(r"<[^>]+>", "", view)


def test_a_latex_note_reads_as_its_pdf():
    report = _tex_report()
    doc = annotate(TEX_NAME, TEX, report["claims"])
    assert doc.unlocated == []
    marked = {c for s in doc.sentences for c in s.claims}
    assert marked == set(TEX_QUOTES)  # every quote highlighted, the one broken across lines too
    assert doc.macros["\\SM"] == "\\mathrm{SM}" and doc.macros["\\R"] == "\\mathbb{R}"
    assert doc.macros["\\E"] == "\\mathbb{E}\\left[#1\\right]" and doc.macros["\\diag"] == "\\operatorname{diag}"
    folds = [b for b in doc.blocks if b.kind == "fold"]
    assert folds[0].label.startswith("LaTeX preamble") and "\\documentclass{article}" in folds[0].code
    assert "\\newcommand{\\SM}" in folds[0].code and "% notes on FAVOR+" in folds[0].code  # folded, not deleted
    assert any(b.label == "LaTeX comment" and "% TODO" in b.code for b in folds)
    assert folds[-1].code.startswith("\\end{document}")
    assert not any("\\maketitle" in TEX[s.start:s.end] for s in doc.sentences)  # shown as nothing, not counted

    html = render_html(report, sources={TEX_NAME: TEX})
    view = _view(html, TEX_NAME)
    prose_text = _unfolded(view)
    for raw in ("\\documentclass", "\\usepackage", "\\newcommand", "\\label", "\\cite", "\\ref", "\\&", "--", "~",
                "\\ ", "%", "\\section", "\\begin"):
        assert raw not in prose_text, raw
    assert "et al.\u00a0[performer]" in prose_text and "cf. Eq.\u00a0(1) and Section\u00a01." in prose_text
    assert "unbiased &amp; its variance – unlike the trigonometric one – vanishes" in prose_text
    assert "i.e. features" in prose_text
    assert '<span class="secnum">1</span>' in view
    assert "\\tag{1}</span>" in view  # the equation \eqref calls (1) shows (1)
    assert not re.search(r'<span class="tex[^"]*">[^<]*\\label', html)  # KaTeX has no \label
    macros = json.loads(re.search(r'<script type="application/json" id="katex-macros">(.*?)</script>', html).group(1))
    assert macros["\\SM"] == "\\mathrm{SM}"
    assert html.count('<details class="fold">') >= 3 and "LaTeX preamble (\\documentclass" in view


def test_latex_prose_and_formulas():
    assert prose("a~b\\ c \\& d -- e --- f") == "a\u00a0b c & d – e — f"
    assert prose("see \\cite[p.~3]{a,b} and \\ref{nowhere}", layout("\\label{x}")) == "see [a, b, p.\u00a03] and ??"
    assert prose("\\emph{new} \\textbf{bold}\\label{x}") == "*new* **bold**"
    assert " ".join(prose("\\begin{lemma}[Lemma 2] The MSE").split()) == "**Lemma.** (Lemma 2) The MSE"
    spans = find_math("a \\[x^2\\] b \\(y\\) c \\begin{align*}p &= q\\\\ r &= s\\end{align*} $z$", latex=True)
    assert [(s.tex, s.display) for s in spans] == [("x^2", True), ("y", False),
                                                   ("\\begin{aligned}p &= q\\\\ r &= s\\end{aligned}", True), ("z", False)]
    numbers = layout("\\begin{document}\\section{A}\\label{s}\\begin{equation}x\\label{e1}\\end{equation}"
                     "\\begin{align}a\\\\b\\nonumber\\\\c\\label{e2}\\end{align}\\end{document}").labels
    assert numbers == {"s": "1", "e1": "1", "e2": "3"}


def _suite_004():
    name = "004_5f57af8801c437dc.txt"
    text = (SEEDS / name).read_text(encoding="utf-8")
    kinds, excerpts = classification_maps(load_all(SEEDS / "sentences")[name])
    return name, text, kinds, excerpts


def _sentences(doc):
    return [(s.index, s.start, s.end, s.claims, s.kind) for s in doc.sentences]


def _flat(blocks):
    for b in blocks:
        yield b
        yield from _flat(b.children)


def test_the_suites_web_page_folds_its_furniture_and_keeps_every_sentence():
    from attention_claims.framework.records import load_catalog

    name, text, kinds, excerpts = _suite_004()
    claims = [{"id": c.id, "verdict": "true", "source": {"document": c.source.document, "quote": c.source.quote},
               "also_in": [{"document": p.document, "quote": p.quote} for p in c.also_in]}
              for c in load_catalog(SEEDS.parent / "claims", SEEDS)]
    parts = recorded_parts(SEEDS)[name]
    article = ranges(name, text, parts)
    plain = annotate(name, text, claims, kinds, claim_excerpts=excerpts)
    folded = annotate(name, text, claims, kinds, claim_excerpts=excerpts, article=article)
    assert _sentences(folded) == _sentences(plain)  # ids and classifications do not move
    assert folded.coverage() == plain.coverage()
    assert folded.blocks[0].kind == "fold" and folded.blocks[0].label.startswith("page furniture")
    first = folded.blocks[1]
    assert first.kind == "h1" and "注意力机制真的可以" in text[first.rows[0][0][0].start:first.rows[0][0][0].end]
    in_furniture = {s.index for b in folded.blocks if b.kind == "fold" for c in _flat(b.children)
                    for row in c.rows for part in row for s in part}
    menu = next(s.index for s in folded.sentences if text[s.start:s.end] == "SEARCH")
    reply = next(s.index for s in folded.sentences if "reply-llama-palm-use-rope" in s.claims)
    assert menu in in_furniture and reply not in in_furniture
    held = [b.label for b in folded.blocks if b.kind == "fold" and "holds" in b.label]
    assert held and all(re.fullmatch(r"page furniture \(holds \d+ claims?\)", h) for h in held)

    html = render_html({"claims": [], "counts": {}}, sources={name: text}, classification={name: kinds},
                       claim_excerpts={name: excerpts}, articles={name: parts})
    prose_text = _unfolded(_view(html, name))
    for furniture in ("USERLOGIN", "CATEGORIES", "MobileSideBar", "微信打赏", "友情链接"):
        assert furniture not in prose_text, furniture
    assert "稀疏程度" in prose_text


def test_a_recorded_part_that_is_not_in_the_page_is_named(tmp_path):
    with pytest.raises(ArticleError, match=r"page.txt: article\[1\]: the first words 'nowhere'"):
        ranges("page.txt", "menu\nstart of it. end of it.\nfooter", [["start", "end of it."], ["nowhere", "x"]])
    with pytest.raises(ArticleError, match=r"page.txt: article\[0\]: the last words 'the end'"):
        ranges("page.txt", "menu\nstart of it. end of it.\nfooter", [["start", "the end"]])
    (tmp_path / "page.txt").write_text("menu\nstart of it. end of it.\nfooter", encoding="utf-8")
    (tmp_path / "documents.toml").write_text('["page.txt"]\ntitle = "t"\narticle = [["start", "end of it."]]\n',
                                             encoding="utf-8")
    assert load_manifest(tmp_path) == {"page.txt": {"title": "t"}}  # the view's entry, not the report's
    sources = {"page.txt": "menu\nstart of it. end of it.\nfooter"}
    assert usable_parts(tmp_path, sources) == ({"page.txt": [["start", "end of it."]]}, [])
    # a part not in the page (a planted copy of the folder, an edited page): a warning, the page unfolded
    (tmp_path / "documents.toml").write_text('["page.txt"]\narticle = [["start", "the end"]]\n', encoding="utf-8")
    parts, warnings = usable_parts(tmp_path, sources)
    assert parts == {} and len(warnings) == 1
    assert "documents.toml: page.txt: article[0]: the last words 'the end'" in warnings[0]
    (tmp_path / "documents.toml").write_text('["page.txt"]\narticle = "start"\n', encoding="utf-8")
    with pytest.raises(ClaimRecordError, match="first words"):
        load_manifest(tmp_path)


PAGE = """<!doctype html><html><head><title>Low rank</title><style>p{}</style></head><body>
<nav><ul><li><a href="/">Home</a></li><li><a href="/about">About this blog</a></li></ul></nav>
<div class="sidebar"><h3>Categories</h3><ul><li>Kernels</li><li>Login</li></ul></div>
<article><h1>The low rank of attention</h1>
<p>The softmax attention matrix of one head has rank at most n. This paragraph is long enough, with many
words about attention and kernels, that the extraction sees it as the article and not as furniture.</p>
<p>Positive random features estimate the softmax kernel without bias &amp; with a variance that vanishes
where the kernel does, which is the point of FAVOR+ and a sentence of its own.</p></article>
<footer><p>Copyright 2024. Subscribe to the newsletter.</p></footer></body></html>
"""


def test_a_saved_html_page_shows_its_article_and_folds_the_rest():
    claim = {"id": "prf", "verdict": "true", "also_in": [], "source": {
        "document": "page.html", "quote": "Positive random features estimate the softmax kernel without bias"}}
    doc = annotate("page.html", PAGE, [claim])
    assert doc.unlocated == [] and any(s.claims == ["prf"] for s in doc.sentences)
    kinds = [b.kind for b in doc.blocks]
    assert kinds[0] == "fold" and kinds[-1] == "fold" and kinds.count("fold") == 2
    folded_text = " ".join(PAGE[s.start:s.end] for b in doc.blocks if b.kind == "fold" for c in _flat(b.children)
                           for row in c.rows for part in row for s in part)
    assert "About this blog" in folded_text and "Copyright 2024" in folded_text
    assert "softmax attention matrix" not in folded_text and "The low rank of attention" not in folded_text


@pytest.mark.skipif(unavailable_reason() is not None, reason=f"browser test: {unavailable_reason()}")
def test_no_formula_of_the_latex_note_in_katex_error_colour(tmp_path):
    path = tmp_path / "claims.html"
    path.write_text(render_html(_tex_report(), sources={TEX_NAME: TEX}), encoding="utf-8")
    with open_page(path) as (page, log):
        slug = page.eval_on_selector(f'section[data-document="{TEX_NAME}"]', "e => e.id.slice(5)")
        page.evaluate("h => { location.hash = h; }", slug)
        page.evaluate("() => document.querySelectorAll('details.claim').forEach(d => d.open = true)")
        page.wait_for_function(
            "() => Array.from(document.querySelectorAll('.tex')).filter(e => e.checkVisibility())"
            ".every(e => e.dataset.done || e.classList.contains('tex-failed'))", timeout=60_000)
        page.evaluate("() => { location.hash = ''; }")
        page.wait_for_function(
            "() => Array.from(document.querySelectorAll('details.claim .tex'))"
            ".every(e => e.dataset.done || e.classList.contains('tex-failed'))", timeout=60_000)
        typeset = page.eval_on_selector_all(".tex[data-done]", "els => els.length")
        # a parse error is a .katex-error; an undefined macro (\\SM without the document's \\newcommand) is
        # typeset in KaTeX's error colour (errorColor, #cc0000) inside the formula
        errors = page.eval_on_selector_all(".katex-error, .katex [style*='#cc0000'], .katex [style*='rgb(204, 0, 0)']",
                                           "els => els.map(e => e.textContent)")
        assert log["console_errors"] == [] and log["page_errors"] == [], log
    assert typeset >= 8 and errors == []


def test_the_run_says_when_a_recorded_article_is_not_in_its_page(planted, pytester):
    """Never silent (issue 44.3, 44.5): the terminal's warning lines and claims.md name the documents.toml part
    the view could not find (here the repository's manifest beside a planted 004 made of a record's quote)."""
    import shutil

    from conftest import record_toml

    (pytester.path / "sources").mkdir()
    shutil.copy(SEEDS / "documents.toml", pytester.path / "sources")
    ok = 'import pytest\n\n@pytest.mark.claim("c", reading="exact")\ndef test_exact():\n    pass\n'
    run = planted({"c.toml": record_toml("c", document="004_5f57af8801c437dc.txt")}, {"test_x.py": ok})
    assert run.result.ret == 0, run.result.stdout.str()
    out = run.result.stdout.str() + run.result.stderr.str()
    assert "attention-claims: warning: " in out and "004_5f57af8801c437dc.txt: article[0]: the first words" in out
    md = (run.report_dir / "claims.md").read_text(encoding="utf-8")
    line = next(x for x in md.splitlines() if x.startswith("- warning: "))
    assert "the first words" in line and "documents.toml" in line.replace("\\", "")
