"""Issue 22, finding 8 (leftovers): the temporary files a killed run leaves in the report folder are
removed by the next run, those of a live process are not, and git ignores them wherever they are."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from attention_claims.framework.report import remove_stale_temporaries
from conftest import small_project_checks as _checks
from conftest import small_project_records as _records

ROOT = Path(__file__).resolve().parents[2]


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_finding_8_a_killed_runs_temporaries_are_removed_by_the_next_run(planted, pytester):
    out = pytester.path / "out"
    (out / "figures").mkdir(parents=True)
    dead = _dead_pid()
    stale = [out / f".claims.json.{dead}.tmp", out / "figures" / f".x-1.svg.{dead}.tmp"]
    live = out / f".claims.html.{os.getppid()}.tmp"  # a process that runs
    other = out / "notes.tmp"  # not the writer's pattern: not ours to remove
    for p in [*stale, live, other]:
        p.write_text("half a file", encoding="utf-8")
    run = planted(_records(), _checks(), args=["--claims-select", "beta-claim"])
    assert run.result.ret == 0, run.result.stdout.str()
    assert not any(p.exists() for p in stale)
    assert live.exists() and other.exists()


def test_finding_8_a_symlink_is_never_followed(tmp_path):
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep", encoding="utf-8")
    (tmp_path / "out").mkdir()
    link = tmp_path / "out" / f".claims.json.{_dead_pid()}.tmp"
    link.symlink_to(target)
    assert remove_stale_temporaries(tmp_path / "out") == []
    assert target.read_text(encoding="utf-8") == "keep"


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs git and the checkout")
@pytest.mark.parametrize("path", ["reports/.claims.json.123.tmp", "reports/figures/.a-1.svg.77.tmp",
                                  ".README.md.4242.tmp", "tests/snapshots/.reading-outcomes.json.9.tmp",
                                  "reports/.claims.lock", "reports/claims.json.corrupt-20261124T120000Z"])
def test_finding_8_git_ignores_the_leftovers(path):
    r = subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=ROOT)
    assert r.returncode == 0, f"{path} is not ignored by .gitignore"
