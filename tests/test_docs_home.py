"""The documentation's first page teaches (issue 46): the install command, the ten-line example and the
report's current screenshot on the home page; the verdict table first on the Verdicts page; tutorial,
how-to guides, reference and explanation as separate sections of the navigation; no list run into the
paragraph before it (Python-Markdown needs a blank line before a list)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from test_docs_site import site  # noqa: F401 - the built site (a fixture)

ROOT = Path(__file__).resolve().parents[1]


def test_the_home_page_shows_install_example_and_screenshot(site):  # noqa: F811
    html = (site / "index.html").read_text(encoding="utf-8")
    assert "pip install" in html and "attention-claims new" in html and "pytest" in html
    img = re.search(r'<img[^>]*src="(images/report\.png)"', html)
    assert img, "no report screenshot on the home page"
    shipped = site / img.group(1)
    assert shipped.read_bytes() == (ROOT / "reports" / "screenshot-report.png").read_bytes()  # the current one


def test_the_verdicts_page_opens_with_the_verdict_table():
    text = (ROOT / "docs" / "verdicts.md").read_text(encoding="utf-8")
    first = next(line for line in text.splitlines()[1:] if line.strip())
    assert first.startswith("| verdict |"), first


class _Loader(yaml.SafeLoader):
    """mkdocs.yml with its ``!!python/name`` tags read as plain strings."""


_Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def test_the_navigation_follows_diataxis():
    nav = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)["nav"]
    sections = [next(iter(entry)) for entry in nav]
    assert sections == ["Home", "Tutorial", "How-to guides", "Reference", "Explanation"]


def _lists_run_in(text: str) -> list[str]:
    """Lines that start a list right after a paragraph line (rendered inline by Python-Markdown)."""
    out, fence, lines = [], False, text.splitlines()
    item = re.compile(r"\s*([-*+]|\d+\.)\s")
    for prev, line in zip(lines, lines[1:], strict=False):
        if line.startswith("```"):
            fence = not fence
        if fence or not item.match(line) or not prev.strip():
            continue
        if not item.match(prev) and not prev.startswith(("#", " ", "|", ">")):
            out.append(line)
    return out


def test_no_list_runs_into_its_paragraph():
    found = {p.name: _lists_run_in(p.read_text(encoding="utf-8")) for p in sorted((ROOT / "docs").glob("*.md"))}
    assert {k: v for k, v in found.items() if v} == {}
    assert _lists_run_in("A paragraph:\n- an item\n") == ["- an item"]
