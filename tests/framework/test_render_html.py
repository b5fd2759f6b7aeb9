"""The HTML renderer (attention_claims.framework.render), without a browser: structure, self-containment,
the annotated documents, budgets on the real report when one is on this machine."""

from __future__ import annotations

import re
import time

import pytest
from render_fixture import DOC, DOC_TEXT, fixture_report, real_report, real_sources

from attention_claims.framework.render import annotate, claim_topics, reading_kind, render_html
from attention_claims.framework.render.texmd import clean_tex, find_math, render_inline

VISIBLE_DOLLAR = re.compile(r"\$[^$<>\n]{1,80}\$")


def _strip_tex(html: str) -> str:
    """The page with the KaTeX-typeset elements, scripts and styles removed (what is left is plain text)."""
    html = re.sub(r"<script>.*?</script>|<style>.*?</style>", "", html, flags=re.S)
    html = re.sub(r'\s(data-search|title)="[^"]*"', "", html)
    return re.sub(r'<span class="tex[^"]*">.*?</span>', "", html, flags=re.S)


def test_math_found_in_both_document_styles():
    spans = find_math("a $x_1$ b $$\n\\frac{1}{2}\n$$ c \\\\begin{equation}S = \\\\frac{a\\_1}{b}\\\\end{equation}")
    assert [(s.tex, s.display) for s in spans] == [("x_1", False), ("\\frac{1}{2}", True), ("S = \\frac{a_1}{b}", True)]
    assert clean_tex("l\\_1/l\\_2") == "l_1/l_2"
    assert clean_tex("a \\\\ b") == "a \\\\ b"  # a plain LaTeX row break is left alone


def test_inline_markdown_and_math():
    html = str(render_inline("**快速初期衰减**：$\\sigma_i$ and ![x](http://e/x.png) [link](https://e)"))
    assert "<strong>快速初期衰减</strong>" in html
    assert '<span class="tex">\\sigma_i</span>' in html
    assert "<img" not in html and "[image: x]" in html
    assert '<a href="https://e"' in html


def test_page_is_self_contained_and_ordered(tmp_path):
    png = tmp_path / "fig.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"0" * 32)
    html = render_html(fixture_report("fig.png"), sources={DOC: DOC_TEXT}, report_dir=tmp_path)
    page = re.sub(r"<script>.*?</script>", "", html, flags=re.S)
    assert not re.search(r'(src|href)="(?!data:|#|https?://(kexue\.fm|arxiv\.org)/|mailto:)', page)
    assert not re.search(r'<(img|script|link)[^>]+(src|href)="https?:', page)
    assert "data:image/png;base64," in html and "data:font/woff2;base64," in html
    order = [m.group(1) for m in re.finditer(r'<details class="claim v-(\w+)"', html)]
    assert order == ["false", "caveat", "true", "true", "unchecked"]
    assert "https://arxiv.org/abs/2006.04768" in html
    for kind in ("layer_head_heatmap", "spectra", "rank_breaks", "sparsity_curve", "decay_sparsity", "curve"):
        assert html.count("<svg") >= 7, kind
    assert not VISIBLE_DOLLAR.search(_strip_tex(html))


def test_counterexample_shown_once():
    html = render_html(fixture_report())
    body = html[html.index('id="c-toy-false"'):html.index('id="c-toy-caveat"')]
    assert body.count("N = 2 breaks it") == 2  # the summary line and the counterexample box, not the evidence


def test_annotated_document_marks_claim_sentences():
    report = fixture_report()
    doc = annotate(DOC, DOC_TEXT, report["claims"], {"作者认为这很有趣。": "opinion"})
    cov = doc.coverage()
    assert doc.unlocated == []
    assert cov["claim"] >= 4 and cov["not-claim"] == 1 and cov["unclassified"] >= 1
    by_claim = {c: s for s in doc.sentences for c in s.claims}
    assert by_claim["toy-false"].verdict == "false"
    assert DOC_TEXT[by_claim["toy-true"].start:by_claim["toy-true"].end].startswith("注意力矩阵的秩")
    html = render_html(report, sources={DOC: DOC_TEXT}, classification={DOC: {"作者认为这很有趣。": "opinion"}})
    assert re.search(r'<span class="s v-false" id="003-s\d+" data-claims="toy-false"', html)
    assert 'href="#c-toy-false"' in html and "not a claim: opinion" in html


def test_topics_and_reading_kinds_derived_or_given():
    report = fixture_report()
    assert claim_topics({**report["claims"][0], "topic": "kernels"}) == ["kernels"]
    kinds = {r["name"]: reading_kind(r) for c in report["claims"] for r in c["readings"]}
    assert kinds["cpu-float32"] == "dtype on CPU" and kinds["cuda-float16"] == "CUDA"
    assert kinds["on-minilm-l6-at-n-512"] == "trained model" and kinds["exact"] == "exact"


def test_renderer_does_not_modify_the_report():
    import copy

    report = fixture_report()
    before = copy.deepcopy(report)
    render_html(report, sources={DOC: DOC_TEXT})
    assert report == before


@pytest.fixture(scope="module")
def real():
    found = real_report()
    if found is None or not real_sources():
        pytest.skip("no complete full-run report yet (reports/claims.json): .ci/run runs this test again after the full run")
    return found


def test_real_report_budgets_and_quotes(real):
    from attention_claims.framework.render import render_markdown

    report, folder = real
    sources = real_sources()
    t0 = time.perf_counter()
    html = render_html(report, sources=sources, report_dir=folder)
    md = render_markdown(report)
    import json

    json.dumps(report, indent=2, ensure_ascii=False)
    seconds = time.perf_counter() - t0
    assert seconds <= 3.0, seconds
    assert len(html.encode()) <= 5_000_000
    assert html.count('<details class="claim') == len(report["claims"])
    assert md.count("<details") == len(report["claims"])
    for name, text in sources.items():
        assert annotate(name, text, report["claims"]).unlocated == [], name
    assert not VISIBLE_DOLLAR.search(_strip_tex(html))
