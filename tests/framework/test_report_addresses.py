"""docs/report.md lists every address of ``claims.html`` (issue 44, item 7): the page's routes (report.js) and
the links it writes (the templates and the renderer) each have a row, and the addresses of a rendered page
exist in it, so a user scripting a screenshot need not read the page's JavaScript."""

from __future__ import annotations

import re
from pathlib import Path

from render_fixture import DOC, DOC_TEXT, fixture_report

from attention_claims.framework.render import render_html

ROOT = Path(__file__).resolve().parents[2]
RENDER = ROOT / "attention_claims" / "framework" / "render"


def _documented() -> str:
    text = (ROOT / "docs" / "report.md").read_text(encoding="utf-8")
    return text.split("<!-- addresses:begin -->", 1)[1].split("<!-- addresses:end -->", 1)[0]


def test_every_route_and_link_of_the_page_is_documented():
    block = _documented()
    js = (RENDER / "static" / "report.js").read_text(encoding="utf-8")
    routes = set(re.findall(r"/\^([\w-]+)/\.test\(h\)", js))  # the prefixes route() dispatches on
    assert routes >= {"c-", "doc-"}, routes
    templates = "".join(p.read_text(encoding="utf-8") for p in (RENDER / "templates").glob("*.html.j2"))
    code = "".join(p.read_text(encoding="utf-8") for p in RENDER.glob("*.py"))
    links = set(re.findall(r'href="#([a-z]+-?)', templates + code))  # fixed prefixes of the page's own links
    assert links >= {"c-", "doc-", "claims"}, links
    for prefix in routes | links:
        assert f"#{prefix}" in block, f"the address #{prefix}… is not listed in docs/report.md"
    # the sentences' ids (the renderer's `<slug>-s<index>`) and the route that shows them
    assert 'f"{slug}-s{s.index}"' in code and 'classList.contains("s")' in js
    assert "`claims.html#<slug>-s<n>`" in block and "`claims.html#doc-<slug>`" in block
    assert "html[data-ready]" in (ROOT / "docs" / "report.md").read_text(encoding="utf-8")
    assert "dataset.ready" in js


def test_the_documented_addresses_exist_in_a_rendered_page():
    report = fixture_report()
    html = render_html(report, sources={DOC: DOC_TEXT})
    assert 'id="view-claims"' in html and 'href="#claims"' in html
    for claim in report["claims"]:
        assert f'id="c-{claim["id"]}"' in html
    assert 'id="view-doc-003"' in html and 'href="#doc-003"' in html  # a seed document's slug is its number
    sentences = re.findall(r'<span class="s v-\w+" id="(003-s\d+)"', html)
    assert sentences and all(f'href="#{sid}"' in html for sid in sentences[:1])
