"""Issue 44's leftovers: a ``\\newcommand`` with an optional argument typesets (expanded before KaTeX), a LaTeX
quote in ``claims.md`` reads as text, and a Markdown link with nested brackets (or cut by a sentence) is a link
in the document view, sentence ids unchanged."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from render_fixture import SEEDS, fixture_report

from attention_claims.framework.render import annotate, render_html, render_markdown
from attention_claims.framework.render.html import block_html
from attention_claims.framework.render.latex import expand_macros, layout
from attention_claims.framework.render.markdown import md_latex
from attention_claims.framework.render.texmd import find_links, render_inline

FIXTURES = Path(__file__).parent / "fixtures"
OPT_NAME = "optional_macros.tex"
OPT = (FIXTURES / OPT_NAME).read_text(encoding="utf-8")
FAVOR_NAME = "favor_notes.tex"
FAVOR = (FIXTURES / FAVOR_NAME).read_text(encoding="utf-8")


def _report(document: str, quotes: dict[str, str]) -> dict:
    report = fixture_report()
    like = next(c for c in report["claims"] if c["verdict"] == "true")
    report["claims"] = [dict(like, id=cid, title=cid, source={"document": document, "quote": q, "section": ""},
                             also_in=[]) for cid, q in quotes.items()]
    report["counts"] = {}
    return report


# --- \newcommand with an optional argument ---------------------------------------------------------------

def test_optional_argument_macros_are_read_with_their_default():
    tex = layout(OPT)
    kl = tex.optional["\\KL"]
    assert (kl.nargs, kl.default, kl.body) == (2, "q", "D_{\\mathrm{KL}}(#1 \\,\\|\\, #2)")
    assert tex.optional["\\norm"].default == "2"  # \providecommand too
    # KaTeX's macros option (a quote shown without its document): the default filled in, #2 read as #1
    assert tex.macros["\\KL"] == "D_{\\mathrm{KL}}(q \\,\\|\\, #1)"
    assert tex.macros["\\vec"] == "\\boldsymbol{#1}" and "\\vec" not in tex.optional  # \renewcommand, no option
    assert tex.macros["\\argmax"] == "\\operatorname*{arg\\,max}"
    # a definition that cannot be read is named, not dropped silently
    assert [n for n in tex.notes if "\\broken" in n and "not a number" in n]


def test_optional_argument_macros_are_expanded_as_tex_does():
    opt = layout(OPT).optional
    assert expand_macros("\\KL{p}", opt) == "D_{\\mathrm{KL}}(q \\,\\|\\, p)"
    assert expand_macros("\\KL[r]{p}", opt) == "D_{\\mathrm{KL}}(r \\,\\|\\, p)"
    assert expand_macros("\\KL[\\SM]{\\KL{p}}", opt) == "D_{\\mathrm{KL}}(\\SM \\,\\|\\, D_{\\mathrm{KL}}(q \\,\\|\\, p))"
    assert expand_macros("\\norm[\\infty] + \\norm x", opt) == "\\lVert\\cdot\\rVert_{\\infty} + \\lVert\\cdot\\rVert_{2} x"
    assert expand_macros("\\KL p^2", opt) == "D_{\\mathrm{KL}}(q \\,\\|\\, p)^2"  # a single-token argument
    assert expand_macros("x + \\KL", opt) == "x + D_{\\mathrm{KL}}(q \\,\\|\\, )"  # cut short: never raises
    wrong = layout("\\newcommand{\\two}[1]{#1 #2}").optional  # #2 past its one argument: left as written
    assert expand_macros("\\two{a}", wrong) == "a #2"
    # a macro that calls itself stops after the limit, the rest as written (never a hang)
    loop = layout("\\newcommand{\\loop}[1][a]{\\loop[#1]}").optional
    assert expand_macros("\\loop", loop, limit=5) == "\\loop[a]"


def test_the_document_view_typesets_optional_argument_macros():
    quote = "The divergence $\\KL{p}$ is taken from the prior~$q$, and $\\KL[r]{p}$ from any other $r$"
    report = _report(OPT_NAME, {"kl-default": quote})
    doc = annotate(OPT_NAME, OPT, report["claims"])
    assert doc.unlocated == [] and any(n.startswith("\\newcommand{\\broken}") for n in doc.notes)
    html = render_html(report, sources={OPT_NAME: OPT})
    formulas = re.findall(r'<span class="tex[^"]*">(.*?)</span>', html, flags=re.S)
    assert "D_{\\mathrm{KL}}(q \\,\\|\\, p)" in formulas and "D_{\\mathrm{KL}}(r \\,\\|\\, p)" in formulas
    assert "\\lVert\\cdot\\rVert_{\\infty}" in formulas
    assert not [f for f in formulas if "\\KL" in f or "\\norm" in f]  # none left for KaTeX to misread
    assert "the number of arguments [x] is not a number" in html  # the note is shown with the document
    macros = json.loads(re.search(r'<script type="application/json" id="katex-macros">(.*?)</script>', html).group(1))
    assert macros["\\KL"] == "D_{\\mathrm{KL}}(q \\,\\|\\, #1)"


# --- a LaTeX quote in claims.md ----------------------------------------------------------------------------

FAVOR_QUOTES = {
    "prf-positive": "Choromanski et al.~\\cite{performer} estimate it with positive random features, i.e.\\ features "
                    "that are never negative; cf.\\ Eq.~\\eqref{eq:sm} and Section~\\ref{sec:prf}.",
    "prf-unbiased": "The estimator is unbiased \\& its variance -- unlike the trigonometric one -- vanishes as $\\SM \\to 0$.",
}


def test_a_latex_quote_in_claims_md_reads_as_text():
    md = render_markdown(_report(FAVOR_NAME, FAVOR_QUOTES), sources={FAVOR_NAME: FAVOR})
    quoted = "\n".join(line for line in md.splitlines() if line.startswith(">"))
    for raw in ("\\cite", "\\eqref", "\\ref", "~", "\\&", "--", "i.e.\\", "\\SM"):
        assert raw not in quoted, raw
    assert "Choromanski et al.\u00a0[performer] estimate it" in quoted
    assert "cf. Eq.\u00a0(1) and Section\u00a01." in quoted  # numbered as LaTeX prints them
    assert "unbiased & its variance – unlike the trigonometric one – vanishes as $\\mathrm{SM} \\to 0$." in quoted
    # without the document: still prose, references by their keys, formulas as written
    alone = render_markdown(_report(FAVOR_NAME, FAVOR_QUOTES))
    assert "Eq.\u00a0(eq:sm) and Section\u00a0sec:prf." in alone and "vanishes as $\\SM \\to 0$." in alone


def test_md_latex_drops_comments_and_writes_display_math_as_a_block():
    text = FAVOR[FAVOR.index("cf.\\ Eq."):FAVOR.index("The estimator")]
    out = md_latex(text, layout(FAVOR))
    assert "TODO" not in out and "%" not in out and "\\label" not in out
    assert "\n\n$$\n\\mathrm{SM}(x, y) = \\mathbb{E}\\left[" in out and "\\tag{1}\n$$" in out
    assert md_latex("a $x$ % hidden\nb", None) == "a $x$\nb"


# --- Markdown links: nested brackets, cut by sentences -------------------------------------------------------

def test_a_link_with_nested_brackets_is_a_link():
    html = str(render_inline("see [text [with] brackets](https://example.org/a) here"))
    assert html == 'see <a href="https://example.org/a" rel="noreferrer">text [with] brackets</a> here'
    deep = str(render_inline("[a [b [c] d] e](https://example.org/)"))
    assert deep == '<a href="https://example.org/" rel="noreferrer">a [b [c] d] e</a>'
    image = str(render_inline("[![plot](https://example.org/p.png)](https://example.org/p)"))
    assert image.startswith('<a href="https://example.org/p" rel="noreferrer"><span class="img-ph"') and "[image: plot]" in image
    formula = str(render_inline("[reply: $l$ is the length](https://example.org/c)"))
    assert formula == ('<a href="https://example.org/c" rel="noreferrer">reply: <span class="tex">l</span> '
                       "is the length</a>")
    assert "<a" not in str(render_inline("[x](javascript:alert(1))"))  # CommonMark's validateLink refuses it
    assert re.sub(r"<[^>]+>", "", image) == "[image: plot]"  # no syntax shown, the placeholder only


def test_find_links_reads_commonmark_offsets():
    text = "a [t [u] v](https://e.org/x) b ![alt](https://e.org/i.png) c [no link] d"
    links = find_links(text)
    assert [(text[s.start:s.end], text[s.label_start:s.label_end], s.href, s.image) for s in links] == [
        ("[t [u] v](https://e.org/x)", "t [u] v", "https://e.org/x", False),
        ("![alt](https://e.org/i.png)", "alt", "https://e.org/i.png", True)]
    assert find_links("code `[a](b)` only") == []  # a code span holds no link (CommonMark)


def test_a_link_cut_by_sentences_is_a_link_in_each_and_ids_do_not_move():
    text = ("之前在 [《为什么现在的LLM都是Decoder-only的架构？》](https://kexue.fm/archives/9529) 等文章中，我们讨论了秩。\n\n"
            "- [![](https://e.org/rss.png)\\\n\\\n欢迎订阅](https://kexue.fm/feed)\n")
    doc = annotate("links.md", text, [])
    cuts = [text[s.start:s.end] for s in doc.sentences]
    assert cuts[0].endswith("架构？") and cuts[1].startswith("》](")  # the sentence cut inside the link's text
    html = "".join(str(block_html(doc, b, "d", {})) for b in doc.blocks)
    shown = re.sub(r"<[^>]+>", "", html)
    assert "](" not in shown and "[!" not in shown
    assert html.count('href="https://kexue.fm/archives/9529"') == 2  # each sentence's part of the link
    assert '<span class="s" id="d-s1"><a href="https://kexue.fm/archives/9529" rel="noreferrer">》</a>' in html
    assert 'href="https://kexue.fm/feed"' in html and "欢迎订阅</a>" in html


def test_the_suites_004_shows_no_link_source_and_keeps_its_sentences():
    name = "004_5f57af8801c437dc.txt"
    text = (SEEDS / name).read_text(encoding="utf-8")
    doc = annotate(name, text, [])
    html = "".join(str(block_html(doc, b, "d", {})) for b in doc.blocks)
    shown = re.sub(r"<[^>]+>", "", html)
    assert not re.search(r"\]\((https?:|#)", shown)  # no link shown as its source
    assert 'href="https://kexue.fm/archives/9529"' in html and 'href="https://kexue.fm/archives/9595"' in html
    ids = re.findall(r'id="d-s(\d+)"', html)
    assert [int(i) for i in ids] == [s.index for s in doc.sentences]  # every sentence, in order, once


# --- never raises -------------------------------------------------------------------------------------------

_ALPHABET = "ab []()!$\\#{}_*`~%\n？。" + "x"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=40))
def test_links_and_macros_never_raise(text):
    links = find_links(text)
    for span in links:
        assert 0 <= span.start < span.label_start <= span.label_end < span.end <= len(text)
    assert [s.end for s in links] == sorted(s.end for s in links)
    render_inline(text)
    render_inline(text, latex=layout(OPT))
    md_latex(text, layout(OPT))
    expand_macros(text, layout(OPT).optional)
    doc = annotate("fuzz.md", text, [])
    html = "".join(str(block_html(doc, b, "f", {})) for b in doc.blocks)
    assert [int(i) for i in re.findall(r'id="f-s(\d+)"', html)] == [s.index for s in doc.sentences]
