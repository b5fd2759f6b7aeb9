"""Issue 22, finding 2: two runs at once must not lose an update. Each run reads the report, merges
its own decisions and writes the three files under the report folder's lock (``filelock``), re-reading
the report under the lock, so a run that finished meanwhile is merged, never overwritten."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading

import pytest

from conftest import _planted_sources, record_toml

CHECK = '''
import json
import time
from pathlib import Path

import pytest
from attention_claims.testkit import refute


def _other_run_landed(report):
    try:
        claims = json.loads(Path(report).read_text(encoding="utf-8"))["claims"]
    except (OSError, ValueError, KeyError):
        return False
    return any(c["id"] == "beta-claim" and c["decided"]["run"] == "partial" for c in claims)


@pytest.mark.claim("{cid}", reading="exact")
def test_{name}(claim_log):
    if {wait}:  # stay in flight until the other run has written its report
        deadline = time.monotonic() + 120
        while not _other_run_landed({report!r}) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _other_run_landed({report!r}):
            Path({seen!r}).write_text("beta's report landed while alpha's run was in flight")
    claim_log.example(x=1.0)
    if not {holds}:
        refute("planted counterexample", example={{"N": 2}}, certified=True, certificate="planted")
'''


def _project(root, *, alpha_holds: bool, alpha_waits: bool = False):
    rec = root / "records"
    rec.mkdir(exist_ok=True)
    records = {"a.toml": record_toml("alpha-claim", expected="true" if alpha_holds else "false"),
               "b.toml": record_toml("beta-claim", document="004_5f57af8801c437dc.txt", quote="一句话")}
    for name, text in records.items():
        (rec / name).write_text(text, encoding="utf-8")
    # alpha starts first and finishes last: its check waits until beta's run has written its report
    fmt = dict(report=str(root / "out" / "claims.json"), seen=str(root / "beta-seen"))
    (root / "test_a.py").write_text(textwrap.dedent(CHECK.format(cid="alpha-claim", name="a", wait=alpha_waits,
                                                                 holds=alpha_holds, **fmt)), encoding="utf-8")
    (root / "test_b.py").write_text(textwrap.dedent(CHECK.format(cid="beta-claim", name="b", wait=False,
                                                                 holds=True, **fmt)), encoding="utf-8")
    return ["--claims-dir", str(rec), "--claims-sources", str(_planted_sources(root / "sources", records)),
            "--claims-report-dir", str(root / "out"), "-p", "no:cacheprovider", "--hypothesis-profile=ci", "-q"]


def _run(root, argv, results, key):
    results[key] = subprocess.run([sys.executable, "-m", "pytest", *argv], cwd=root, capture_output=True,
                                  text=True, timeout=300)


@pytest.mark.subprocess_run
def test_finding_2_two_subset_runs_at_once_both_land(tmp_path):
    argv = _project(tmp_path, alpha_holds=True)
    first = subprocess.run([sys.executable, "-m", "pytest", *argv], cwd=tmp_path, capture_output=True, text=True,
                           timeout=300)
    assert first.returncode == 0, first.stdout + first.stderr
    # The verdict of alpha moves (its check now fails, its record now expects false); beta is re-decided
    # by a second run at the same time.
    argv = _project(tmp_path, alpha_holds=False, alpha_waits=True)
    results: dict = {}
    threads = [threading.Thread(target=_run, args=(tmp_path, argv + ["--claims-select", cid], results, cid))
               for cid in ("alpha-claim", "beta-claim")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for cid, r in results.items():
        assert r.returncode == 0, (cid, r.stdout + r.stderr)
    assert (tmp_path / "beta-seen").is_file(), "alpha's run never saw beta's report land while it ran"
    assert "verdicts: 1 false" in results["alpha-claim"].stdout
    report = json.loads((tmp_path / "out" / "claims.json").read_text(encoding="utf-8"))
    verdicts = {c["id"]: (c["verdict"], c["decided"]["run"]) for c in report["claims"]}
    assert verdicts == {"alpha-claim": ("false", "partial"), "beta-claim": ("true", "partial")}
    md = (tmp_path / "out" / "claims.md").read_text(encoding="utf-8")
    assert "alpha-claim" in md and "false" in md
