"""The bundled KaTeX (``vendor/katex``, MIT, see its LICENSE), inlined into the HTML report.

The CSS's font URLs are replaced by ``data:`` URIs of the woff2 files (the woff/ttf fallbacks
are dropped: every browser that runs the report reads woff2), so the page needs no network.
"""

from __future__ import annotations

import base64
import functools
import re
from pathlib import Path

__all__ = ["KATEX_DIR", "katex_css", "katex_js", "katex_version", "static_text"]

HERE = Path(__file__).parent
KATEX_DIR = HERE / "vendor" / "katex"
STATIC_DIR = HERE / "static"


@functools.cache
def katex_css() -> str:
    """KaTeX's CSS with every ``@font-face`` source a woff2 ``data:`` URI.

    Raises:
        FileNotFoundError: the vendored files are missing.
    """
    css = (KATEX_DIR / "katex.min.css").read_text(encoding="utf-8")

    def font(m: re.Match) -> str:
        data = (KATEX_DIR / "fonts" / m.group(1)).read_bytes()
        return "src:url(data:font/woff2;base64," + base64.b64encode(data).decode("ascii") + ') format("woff2")'

    return re.sub(r"src:url\(fonts/([\w-]+\.woff2)\) format\(\"woff2\"\)(?:,url\([^)]*\) format\(\"[^\"]*\"\))*",
                  font, css)


@functools.cache
def katex_js() -> str:
    """KaTeX's minified script, safe to place in a ``<script>`` element."""
    return (KATEX_DIR / "katex.min.js").read_text(encoding="utf-8").replace("</script", "<\\/script")


@functools.cache
def katex_version() -> str:
    """The vendored KaTeX version, read from its script (``"0.19.1"``), or ``"unknown"``."""
    m = re.search(r'version:"([\d.]+)"', katex_js())
    return m.group(1) if m else "unknown"


@functools.cache
def static_text(name: str) -> str:
    """A file of ``static/`` (the report's own CSS and script)."""
    return (STATIC_DIR / name).read_text(encoding="utf-8")
