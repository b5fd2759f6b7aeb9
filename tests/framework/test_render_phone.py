"""The HTML report on a phone (issue 46), in headless Chromium at 390 px: the page never scrolls sideways,
closed or with every claim open (formulas and tables scroll in their own box or stack); the sticky header is
one short row; the verdict chart's text is at least 11 px. Skips as the other browser tests do."""

from __future__ import annotations

import os

import pytest
from render_fixture import DOC, DOC_TEXT, fixture_report
from test_render_partial import partial_report

from attention_claims.framework.render import render_html
from attention_claims.framework.render.browser import open_page, unavailable_reason

if unavailable_reason() is not None and os.environ.get("ATTENTION_CLAIMS_REQUIRE_TOOLS") == "1":
    raise RuntimeError(f"browser test required (ATTENTION_CLAIMS_REQUIRE_TOOLS=1): {unavailable_reason()}")
pytestmark = pytest.mark.skipif(unavailable_reason() is not None, reason=f"browser test: {unavailable_reason()}")

PHONE = 390

#: the visible elements that reach past the window's right edge and are not inside a box that scrolls or
#: clips within the window (KaTeX's hidden MathML and an SVG's own drawing excepted)
OVERFLOWING_JS = """() => {
  const vw = document.documentElement.clientWidth, out = [];
  const boxed = el => { for (let a = el.parentElement; a; a = a.parentElement) {
      const o = getComputedStyle(a).overflowX;
      if (['auto', 'hidden', 'scroll', 'clip'].includes(o) && a.getBoundingClientRect().right <= vw + 1) return true; }
    return false; };
  for (const el of document.querySelectorAll('body *')) {
    if (el.closest('.katex-mathml, svg') || !el.checkVisibility()) continue;
    if (el.getBoundingClientRect().right > vw + 1 && !boxed(el)) out.push(el.tagName + '.' + el.className);
  }
  return out;
}"""

#: the smallest drawn size, in CSS pixels, of the verdict chart's texts (font size times the SVG's scale)
CHART_TEXT_PX_JS = """() => Math.min(...Array.from(document.querySelectorAll('.chart svg text')).map(
  t => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a))"""


def _wide(report: dict) -> dict:
    """``report`` with what is wider than a phone: a long reading name, a long display formula, a long id."""
    claim = report["claims"][2]
    claim["readings"][1]["name"] = "cpu-float64-numerical-rank-at-the-documents-own-parameters"
    claim["formal"] = " + ".join(f"\\sum_{{i={k}}}^{{N}} \\frac{{\\sigma_i^{{{k}}}}}{{\\sqrt{{d_k}}}}" for k in range(8))
    claim["id"] = "a-claim-whose-id-is-long-enough-to-reach-past-the-edge-of-a-phone"
    reading = claim["readings"][0]
    reading["evidence"] = "max |A - A_ref| over " + "x" * 90 + " = 1e-3; sizes N in [2, 5]."
    reading["statement"] = ("an inline formula wider than a phone: $" + " + ".join(
        f"\\frac{{\\sigma_{{{k}}}}}{{\\sqrt{{d_k}}}}" for k in range(14)) + "$")
    return report


@pytest.mark.parametrize("report", [fixture_report, partial_report], ids=["complete", "partial"])
def test_a_phone_never_scrolls_sideways(tmp_path, report):
    html = tmp_path / "claims.html"
    html.write_text(render_html(_wide(report()), sources={DOC: DOC_TEXT}, report_dir=tmp_path), encoding="utf-8")
    with open_page(html, width=PHONE, height=800) as (page, log):
        assert page.evaluate("document.scrollingElement.scrollWidth") == PHONE
        page.click("#expand")
        page.wait_for_function("() => Array.from(document.querySelectorAll('details.claim[open] .tex'))"
                               ".every(e => e.dataset.done || e.classList.contains('tex-failed'))", timeout=60_000)
        assert page.locator("details.claim[open]").count() == 5
        assert page.evaluate(OVERFLOWING_JS) == []
        assert page.evaluate("document.scrollingElement.scrollWidth") == PHONE
        # the header is one row; the filters scroll away with the page
        assert page.evaluate("document.querySelector('header.top').offsetHeight") <= 48
        assert page.evaluate("getComputedStyle(document.querySelector('.controls')).position") == "static"
        assert page.evaluate(CHART_TEXT_PX_JS) >= 11
        # a display formula wider than the screen scrolls inside its own box
        boxes = page.eval_on_selector_all(".formal, .katex-display", "els => els.map(e => getComputedStyle(e).overflowX)")
        assert boxes and all(o in ("auto", "scroll") for o in boxes), boxes
        assert log["console_errors"] == [] and log["page_errors"] == [] and log["requests"] == []


def test_a_wide_screen_keeps_its_layout(tmp_path):
    html = tmp_path / "claims.html"
    html.write_text(render_html(fixture_report(), sources={DOC: DOC_TEXT}, report_dir=tmp_path), encoding="utf-8")
    with open_page(html, width=1280, height=900) as (page, log):
        assert page.evaluate("getComputedStyle(document.querySelector('.controls')).position") == "sticky"
        assert page.evaluate("document.scrollingElement.scrollWidth") == 1280
        assert 11 <= page.evaluate(CHART_TEXT_PX_JS) <= 20
