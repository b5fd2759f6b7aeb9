"""Open the HTML report in headless Chromium (Playwright, system Chromium), offline.

Used by the browser test and to take the README's screenshots::

    python -m attention_claims.framework.render.browser reports/claims.html reports/

Needs the ``playwright`` Python package and a Chromium binary (Debian: ``apt-get install chromium
fonts-noto-cjk``; found at ``/usr/bin/chromium`` or ``$CHROMIUM``). No browser download is done.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

__all__ = ["chromium_path", "unavailable_reason", "open_page", "screenshots", "main"]

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]


def chromium_path() -> str | None:
    """The Chromium binary: ``$CHROMIUM``, else ``chromium``/``chromium-browser`` on PATH; None if absent."""
    env = os.environ.get("CHROMIUM")
    if env and Path(env).exists():
        return env
    return shutil.which("chromium") or shutil.which("chromium-browser")


def unavailable_reason() -> str | None:
    """Why the browser cannot run here (a sentence naming the packages to install), or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the Python package 'playwright' is not installed (pip install playwright; no browser download needed)"
    if chromium_path() is None:
        return "no Chromium binary (apt-get install chromium fonts-noto-cjk, or set $CHROMIUM)"
    return None


@contextlib.contextmanager
def open_page(path: str | Path, *, width: int = 1280, height: int = 900) -> Iterator[tuple[object, dict]]:
    """Yield ``(page, log)`` for ``path`` opened from disk with every non-``file:``/``data:`` request blocked.

    ``log`` collects ``{"console_errors": [...], "page_errors": [...], "requests": [urls not file/data]}``.
    The page is loaded and its script has run (``html[data-ready]``) when the block starts.

    Raises:
        RuntimeError: the browser is unavailable (see :func:`unavailable_reason`).
    """
    reason = unavailable_reason()
    if reason:
        raise RuntimeError(reason)
    from playwright.sync_api import sync_playwright

    log: dict[str, list[str]] = {"console_errors": [], "page_errors": [], "requests": []}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=ARGS, headless=True)
        try:
            ctx = browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=1)

            def on_route(route):
                url = route.request.url
                if url.startswith(("file:", "data:", "about:")):
                    route.continue_()
                else:
                    log["requests"].append(url)
                    route.abort()

            ctx.route("**/*", on_route)
            page = ctx.new_page()
            page.on("console", lambda m: log["console_errors"].append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: log["page_errors"].append(str(e)))
            page.on("request", lambda r: None if r.url.startswith(("file:", "data:", "about:"))
                    else log["requests"].append(r.url))
            page.goto(Path(path).resolve().as_uri())
            page.wait_for_selector("html[data-ready]", state="attached", timeout=30000)
            yield page, log
        finally:
            browser.close()


def screenshots(html: str | Path, out_dir: str | Path, document: str = "003") -> list[Path]:
    """Save ``screenshot-report.png`` (top of the report) and ``screenshot-document.png`` (the top of
    annotated document ``document``) under ``out_dir``, each stamped with what it shows (the verdict
    counts, the catalog's fingerprint, the report's date and commit: :mod:`.stamp`, read from the
    ``claims.json`` beside ``html``); return their paths.

    Raises:
        FileNotFoundError: ``html`` or the ``claims.json`` beside it is missing.
        ValueError: that ``claims.json`` is not a report (:func:`.stamp.from_report`).
        RuntimeError: the browser is unavailable (:func:`unavailable_reason`).
    """
    from . import stamp

    html = Path(html)
    report_json = html.with_suffix(".json")
    for path in (html, report_json):
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file (run pytest first: it writes the report)")
    from ... import _files
    from ..report_schema import MAX_BYTES

    # before the browser starts: a bad report costs no screenshot; read through the package's one reader
    mark = stamp.from_report(_files.read_json(report_json, MAX_BYTES))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    report_png, doc_png = out / "screenshot-report.png", out / "screenshot-document.png"
    with open_page(html, width=1280, height=1000) as (page, _log):
        page.evaluate("document.fonts.ready")
        page.wait_for_timeout(300)
        page.screenshot(path=str(report_png))
        page.evaluate(f"location.hash = 'doc-{document}'")
        page.wait_for_timeout(600)
        page.screenshot(path=str(doc_png))
    for png in (report_png, doc_png):
        stamp.write(png, mark)
    return [report_png, doc_png]


def main(argv: list[str] | None = None) -> int:
    """``python -m attention_claims.framework.render.browser [HTML [OUT_DIR]]`` (defaults
    ``reports/claims.html``, ``reports``): take the stamped screenshots; print their paths. Exit 0, or
    :data:`attention_claims.tools.USAGE_ERROR` with one line naming the file when the report is missing
    or malformed or the browser is unavailable."""
    from ...tools import USAGE_ERROR

    args = sys.argv[1:] if argv is None else argv
    try:
        paths = screenshots(args[0] if args else "reports/claims.html", args[1] if len(args) > 1 else "reports")
    except (OSError, ValueError, RuntimeError) as exc:
        print(f"screenshot: {exc}", file=sys.stderr)
        return USAGE_ERROR
    for p in paths:
        print(p)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
