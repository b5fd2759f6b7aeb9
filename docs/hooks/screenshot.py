"""MkDocs hook: the report screenshot on the home page is the repository's current one.

``reports/screenshot-report.png`` (taken from ``reports/claims.html`` by
``python -m attention_claims.framework.render.browser``, stamped with the verdict counts and the catalog it
shows: :mod:`attention_claims.framework.render.stamp`) is published as ``images/report.png`` at build
time, never copied into ``docs/``, so the site shows the same picture as the README and a new screenshot
needs no second commit. A checkout without it builds without the picture: the home page's link to it is
then an unrecognised link, which ``mkdocs build --strict`` reports. ``.ci/run`` retakes the screenshot from
its own run's report before it builds the site, so the site CI builds shows the current report; the
committed one is checked against the catalog by ``tests/test_screenshot_current.py``.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File, Files

SCREENSHOT = Path("reports") / "screenshot-report.png"
SITE_PATH = "images/report.png"


def on_files(files: Files, config) -> Files:
    """Add the screenshot (when the checkout has it) to the site's files as :data:`SITE_PATH`."""
    src = Path(config["config_file_path"]).resolve().parent / SCREENSHOT
    if src.is_file():
        files.append(File.generated(config, SITE_PATH, abs_src_path=str(src)))
    return files
