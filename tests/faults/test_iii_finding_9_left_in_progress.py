"""Issue 43 (faults III), finding 9: a run whose previous report is still "in progress" says so.

Before: a check calling ``os._exit(0)`` in a serial run ended pytest with exit status 0 and no verdict line; the
report on disk stayed "in progress" with the old verdicts, and the next run did not say so. A process that ends
itself with ``os._exit`` runs no hook (no ``finally``, no ``atexit``), so the run itself cannot report it (under
xdist the controller sees the worker die and records the check as ``error``); what the plugin guarantees is
that the report it left says "in progress" (never a finished-looking report) and that the next run says, at its
start, in the terminal and in its report, that the previous run did not finish.

Since then ``os._exit`` called by a claim check raises instead (the plugin guards it while a claim check runs), so
the check is an ``error`` and the run exits non-zero; a process killed outright (SIGKILL, the OOM killer) still
runs no hook, and that is the case the "left in progress" notice is for.
"""

from __future__ import annotations

import pytest

from conftest import record_toml

CHECK = '''
import os
import pytest

@pytest.mark.claim("e-claim", reading="exact")
def test_exact(claim_log):
    claim_log.example(x=1.0)
    if os.environ.get("I43_EXIT_NOW"):
        os._exit(0)
    if os.environ.get("I43_KILL_NOW"):
        import signal
        os.kill(os.getpid(), signal.SIGKILL)
'''


@pytest.mark.subprocess_run
def test_iii_finding_9_os_exit_in_a_serial_run_is_an_error(planted, monkeypatch):
    records = {"e.toml": record_toml("e-claim")}
    monkeypatch.setenv("I43_EXIT_NOW", "1")
    run = planted(records, {"test_e.py": CHECK}, args=["-n", "0"], subprocess=True)
    assert run.result.ret == 1, run.result.stdout.str()
    claim = run.claim("e-claim")
    assert claim["verdict"] == "error", claim
    assert "os._exit(0)" in run.result.stdout.str()
    assert run.report["run"]["in_progress"] is False


@pytest.mark.subprocess_run
def test_iii_finding_9_the_next_run_says_the_previous_report_was_left_in_progress(planted, monkeypatch):
    records = {"e.toml": record_toml("e-claim")}
    monkeypatch.setenv("I43_KILL_NOW", "1")
    first = planted(records, {"test_e.py": CHECK}, args=["-n", "0"], subprocess=True)
    left = first.report
    assert left["run"]["in_progress"] is True and left["run"]["complete"] is False
    assert first.claim("e-claim")["verdict"] == "undecided"  # never a finished-looking verdict
    monkeypatch.delenv("I43_KILL_NOW")
    second = planted(records, {"test_e.py": CHECK}, args=["-n", "0"])
    out = second.result.stdout.str()
    assert second.result.ret == 0, out
    lines = out.splitlines()
    said = [i for i, line in enumerate(lines) if "attention-claims: warning:" in line and "left in progress" in line]
    assert len(said) == 2, out  # at its start, and again in the last lines
    assert said[0] < next(i for i, line in enumerate(lines) if "test_e.py" in line)  # before the checks run
    report = second.report
    assert any("left in progress" in n for n in report["run"]["notices"]), report["run"]
    assert report["run"]["in_progress"] is False and second.claim("e-claim")["verdict"] == "true"
    for name in ("claims.md", "claims.html"):
        assert "left in progress" in (second.report_dir / name).read_text(encoding="utf-8"), name
    third = planted(records, {"test_e.py": CHECK}, args=["-n", "0"])  # a finished report: nothing to say
    assert "left in progress" not in third.result.stdout.str()
    assert third.report["run"]["notices"] == []
