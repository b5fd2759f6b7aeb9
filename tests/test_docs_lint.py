"""The documentation's lints (issue 46): no raw TeX on a page, a 404 page whose links work off the
server's root, and no invented ``site_url``/``repo_url``.

*No raw TeX.* The site renders no mathematics (no ``pymdownx.arithmatex`` or other math extension in
``mkdocs.yml``, checked below): a formula on a page is Unicode text (``exp(−δ)``, ``σᵢ ≤ C i^(−α)``,
``Q Kᵀ``) or code. Outside fenced code blocks and code spans, a page of ``docs/`` (``**/*.md``) must
therefore contain none of: a TeX control word (``\\frac``, ``\\sqrt``, ``\\le``, ``\\alpha``), a
superscript or subscript group (``^{``, ``_{``), dollar math (``$x$``), or ``\\( ... \\)`` /
``\\[ ... \\]`` delimiters, all of which the site would show as typed (``e^{−δ}``). Markdown's
escapes of punctuation (``\\|``, ``\\*``, ``\\_``) are not TeX and pass. The same rule holds for the
built site's text outside ``<code>``/``<pre>`` (the reference generated from the docstrings, the
command-line help). The other docs lint, a blank line before every list, is
``tests/test_docs_home.py::test_no_list_runs_into_its_paragraph``.
"""

from __future__ import annotations

import html
import re
import tomllib
from pathlib import Path

import pytest
import yaml
from test_docs_site import site  # noqa: F401 - the built site (a fixture)

ROOT = Path(__file__).resolve().parents[1]

FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(?!`)(?:(?!\n[ \t]*\n).)+?(?<!`)\1(?!`)", re.S)  # may span lines, not paragraphs
RAW_TEX = re.compile(
    r"\\[A-Za-z]+"  # a control word: \frac, \sqrt, \le, \alpha
    r"|[\^_]\{"  # a superscript or subscript group: e^{, x_{
    r"|(?<![\w$])\$(?=\S)[^$\n]*?(?<=\S)\$(?![\w$])"  # dollar math: $x$, $\sigma_1$
    r"|\\\(.*?\\\)|\\\[.*?\\\]"  # \( ... \) and \[ ... \]
)
"""Raw TeX in Markdown text (the rule of the module docstring)."""


def raw_tex(text: str) -> list[tuple[int, str]]:
    """``(line number, match)`` for each raw TeX in ``text`` outside fenced code and code spans."""
    kept, fence = [], None
    for line in text.splitlines():
        m = FENCE.match(line)
        if m:
            marker = m.group(1)
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence) and not line.strip()[len(marker):]:
                fence = None
            kept.append("")
        else:
            kept.append("" if fence else line)
    prose = CODE_SPAN.sub(lambda span: "\n" * span.group(0).count("\n"), "\n".join(kept))
    return [(prose.count("\n", 0, hit.start()) + 1, hit.group(0)) for hit in RAW_TEX.finditer(prose)]


def _pages() -> list[Path]:
    return sorted((ROOT / "docs").rglob("*.md"))


def test_the_pages_hold_no_raw_tex():
    assert len(_pages()) >= 15  # the walk sees the pages
    found = {p.relative_to(ROOT).as_posix(): raw_tex(p.read_text(encoding="utf-8")) for p in _pages()}
    assert {k: v for k, v in found.items() if v} == {}, "raw TeX on a page (write Unicode, e.g. exp(−δ), or code)"


@pytest.mark.parametrize("text", [
    "F = e^{−δ}R", "σᵢ ≤ C i_{max}", r"a \frac{1}{2} b", r"x \le y", r"\sqrt{d}", "the $\\alpha$ here",
    "so $x$ is", r"inline \(a + b\) math", r"display \[a + b\]", "a `code` then e^{x}",
])
def test_the_lint_finds_raw_tex(text):
    assert raw_tex(text)


@pytest.mark.parametrize("text", [
    "F = exp(−δ) R", "σᵢ ≤ C i^(−α)", "Q Kᵀ / √d", "`e^{x}` in a code span", "``a_{ij}`` in a double span",
    r"a table cell \| with a pipe", r"an escaped \* star", "costs $5 and $6", "$OUT and $HOME",
    "```\n\\frac{1}{2} in a fence\n```", "~~~~python\nx_{1} = 0\n~~~~", "a span ``c_n = sum_{|a| = n}\nx^a`` over lines",
])
def test_the_lint_passes_text_and_code(text):
    assert raw_tex(text) == []


def test_a_fence_closes_only_on_its_own_marker_and_a_span_not_across_paragraphs():
    assert raw_tex("````\n```\n\\le\n````\n\\le") == [(5, "\\le")]
    assert raw_tex("a `b\n\nc^{2}` d") == [(3, "^{")]


def site_raw_tex(page_html: str) -> list[str]:
    """Raw TeX in a built page's text outside ``<code>``, ``<pre>``, ``<script>`` and ``<style>``."""
    text = re.sub(r"<(code|pre|script|style)\b.*?</\1>", " ", page_html, flags=re.S)
    return [hit.group(0) for hit in RAW_TEX.finditer(html.unescape(re.sub(r"<[^>]+>", " ", text)))]


def test_the_built_site_shows_no_raw_tex(site):  # noqa: F811
    pages = sorted(site.rglob("*.html"))
    assert len(pages) >= 15
    found = {p.relative_to(site).as_posix(): site_raw_tex(p.read_text(encoding="utf-8")) for p in pages}
    assert {k: v for k, v in found.items() if v} == {}
    assert site_raw_tex("<p>e^{x} and <code>e^{y}</code></p>") == ["^{"]


class _Loader(yaml.SafeLoader):
    """mkdocs.yml with its ``!!python/name`` tags read as plain strings."""


_Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def _mkdocs() -> dict:
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)


def test_the_site_renders_no_math():
    """With a math extension the lint must learn its delimiters; until then every formula is text."""
    names = [next(iter(e)) if isinstance(e, dict) else e for e in _mkdocs().get("markdown_extensions", [])]
    assert not [n for n in names if "arithmatex" in n or "math" in n.lower()], names


def test_no_invented_site_or_repo_url():
    """``site_url``/``repo_url`` only with a published address: pyproject.toml's ``[project.urls]``."""
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"].get("urls", {})
    config = _mkdocs()
    for key in ("site_url", "repo_url"):
        assert config.get(key) is None or config[key] in urls.values(), (key, config.get(key), urls)


ROOT_ABSOLUTE = re.compile(r'(?:href|src)="(/(?!/)[^"]*)"')


def test_the_404_page_links_are_not_root_absolute(site):  # noqa: F811
    html = (site / "404.html").read_text(encoding="utf-8")
    assert 'href="' in html and "assets/stylesheets/" in html  # the page and its styles are there
    if _mkdocs().get("site_url") is None:
        assert ROOT_ABSOLUTE.findall(html) == []
        assert '"base": "."' in html  # Material's search and scripts resolve against the site's root
