"""The README stays true: its catalog counts are generated, and CI runs its commands."""

from __future__ import annotations

import re
from pathlib import Path

from claims.catalog import BEGIN, END, render_block

ROOT = Path(__file__).resolve().parents[1]


def _quick_start() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [ln.strip() for ln in block.strip().splitlines()]


def test_readme_catalog_block_is_generated():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = BEGIN + text.split(BEGIN, 1)[1].split(END, 1)[0] + END
    assert block == render_block(), "README catalog counts are stale: run python -m claims.catalog --update README.md"


def test_quick_start_is_two_commands_and_ci_runs_them():
    install, run = _quick_start()
    assert "torch==2.13.0" in install and run == "pytest"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert install in [ln.strip() for ln in ci]
    assert run in [ln.strip() for ln in ci]
