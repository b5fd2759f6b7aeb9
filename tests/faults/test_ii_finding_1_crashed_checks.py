"""Issue 33 (faults II), finding 1: a crashed check becomes a verdict.

A check that did not finish (its xdist worker killed, as an out-of-memory kill or a segfault would; an
exception other than an assertion or a counterexample; an error in its setup or teardown; an internal
error of pytest while it ran) makes its reading ``error`` (never ``skipped`` nor ``held``), its claim's
verdict ``error`` (never ``true``, nor ``undecided``, which means "could not run on this machine"), the
run not ``complete``; the terminal and the report name the check and what happened, and ``pytest``
exits non-zero. Each case is a real run of the plugin on a tiny project.
"""

from __future__ import annotations

import pytest

from attention_claims.framework.report_schema import validate_report
from conftest import record_toml

READINGS = (("exact", True), ("float16", False))
"""The reproduction's record: an as-stated reading and a float16 one (kind numerical), expected caveat."""

HELD = '''
import pytest

@pytest.mark.claim("crash-claim", reading="exact")
def test_exact(claim_log):
    claim_log.example(x=1.0)
'''

KILLED = HELD + '''

@pytest.mark.claim("crash-claim", reading="float16")
def test_float16(claim_log):
    import os, signal
    os.kill(os.getpid(), signal.SIGKILL)  # as the kernel's out-of-memory killer or a segfault would end it
'''

KILLED_IN_SETUP = HELD + '''

@pytest.fixture
def big_model():
    import os, signal
    os.kill(os.getpid(), signal.SIGKILL)  # killed while a fixture loads: no report of the check reached the controller

@pytest.mark.claim("crash-claim", reading="float16")
def test_float16(claim_log, big_model):
    pass
'''

RAISES = HELD + '''

@pytest.mark.claim("crash-claim", reading="float16")
def test_float16(claim_log):
    return {}["no such key"]  # a bug of the check: a KeyError, not a counterexample
'''

SETUP_FAILS = HELD + '''

@pytest.fixture
def broken():
    raise RuntimeError("the fixture cannot load its model")

@pytest.mark.claim("crash-claim", reading="float16")
def test_float16(claim_log, broken):
    pass
'''

TEARDOWN_FAILS = HELD + '''

@pytest.fixture
def leaky():
    yield
    raise RuntimeError("the fixture cannot release its device")

@pytest.mark.claim("crash-claim", reading="float16")
def test_float16(claim_log, leaky):
    claim_log.example(x=2.0)
'''

INTERNAL_ERROR_CONFTEST = '''
def pytest_runtest_makereport(item, call):
    if call.when == "call" and item.name == "test_float16":
        raise RuntimeError("a plugin failed while reporting the check")
'''

PASSES = HELD + '''

@pytest.mark.claim("crash-claim", reading="float16")
def test_float16(claim_log):
    claim_log.example(x=2.0)
'''


def _records(expected: str = "caveat") -> dict[str, str]:
    return {"crash.toml": record_toml("crash-claim", expected=expected, readings=READINGS)}


def _assert_error(run, *, what: str, nodeid: str = "test_crash.py::test_float16") -> dict:
    """The report of ``run`` says the claim is ``error``, names the check and ``what`` happened, and the run is
    neither complete nor successful."""
    out = run.result.stdout.str()
    assert run.result.ret != 0, out
    report = run.report
    claim = run.claim("crash-claim")
    assert claim["verdict"] == "error", (claim["verdict"], claim["reason"])
    assert claim["agrees"] is False
    readings = {r["name"]: r for r in claim["readings"]}
    assert readings["float16"]["outcome"] == "error"
    assert readings["exact"]["outcome"] == "held"  # the check that ran keeps its finding
    assert any(nodeid in e and what in e for e in claim["errors"]), claim["errors"]
    assert any(nodeid in e and what in e for e in readings["float16"]["errors"]), readings["float16"]
    assert report["run"]["complete"] is False and report["run"]["unfinished"] >= 1
    assert report["counts"]["total"]["error"] == 1 and report["counts"]["total"]["true"] == 0
    validate_report(report, "claims.json")  # the schema knows the error verdict and outcome (merge reads it back)
    md = (run.report_dir / "claims.md").read_text(encoding="utf-8")
    assert "Run complete" not in md and "did not finish" in md and nodeid in md.replace("\\_", "_")
    assert "1 error" in md
    html = (run.report_dir / "claims.html").read_text(encoding="utf-8")
    assert 'data-filter-verdict="error"' in html and "did not finish" in html
    assert "checks that did not finish (1)" in out and nodeid in out
    assert "verdicts: 1 error" in out
    return claim


@pytest.mark.subprocess_run
def test_ii_finding_1_a_killed_xdist_worker_makes_the_claim_error(planted):
    """The reproduction: ``pytest -n 2`` where the float16 check kills its worker. Before: ``verdict: "true"``,
    ``errors: []``, the reading ``skipped``, ``run.complete: true`` and "Run complete · 1 true"."""
    run = planted(_records(), {"test_crash.py": KILLED}, args=["-n", "2"], subprocess=True)
    claim = _assert_error(run, what="crashed while running")
    assert "killed, out of memory or a segfault" in claim["errors"][0]
    assert run.claim("crash-claim")["readings"][1]["ran_on"] is not None  # which run it errored in


def test_ii_finding_1_an_exception_other_than_an_assertion_is_error_not_undecided(planted):
    """A check that raises a ``KeyError``: before, the claim was ``undecided``, which the docs define as
    "could not run on this machine"."""
    run = planted(_records(), {"test_crash.py": RAISES}, args=["-n", "0"])
    claim = _assert_error(run, what="KeyError")
    assert "undecided" not in claim["reason"] and "did not finish" in claim["reason"]


def test_ii_finding_1_an_as_stated_reading_that_errors_is_error_whatever_was_expected(planted):
    """A claim expected ``false`` whose as-stated check raises is ``error``, neither ``undecided`` nor, as a
    merge once read it, ``caveat``."""
    checks = {"test_crash.py": RAISES.replace('reading="exact"', 'reading="tmp"')
              .replace('reading="float16"', 'reading="exact"').replace('reading="tmp"', 'reading="float16"')}
    run = planted(_records("false"), checks, args=["-n", "0"])
    out = run.result.stdout.str()
    assert run.result.ret != 0, out
    claim = run.claim("crash-claim")
    assert claim["verdict"] == "error" and claim["agrees"] is False
    assert {r["name"]: r["outcome"] for r in claim["readings"]} == {"exact": "error", "float16": "held"}


@pytest.mark.parametrize("source, what", [(SETUP_FAILS, "error in setup"), (TEARDOWN_FAILS, "error in teardown")])
def test_ii_finding_1_an_error_in_setup_or_teardown_is_error(planted, source, what):
    run = planted(_records(), {"test_crash.py": source}, args=["-n", "0"])
    _assert_error(run, what=what)


def test_ii_finding_1_an_internal_error_during_a_check_is_error(planted, pytester):
    """pytest's INTERNALERROR while the float16 check ran (a plugin hook raised): exit status 3, the
    claim ``error`` naming the check, the run not complete."""
    pytester.makeconftest(INTERNAL_ERROR_CONFTEST)
    run = planted(_records(), {"test_crash.py": PASSES}, args=["-n", "0"])
    assert run.result.ret == pytest.ExitCode.INTERNAL_ERROR, run.result.stdout.str()
    claim = run.claim("crash-claim")
    assert claim["verdict"] == "error", claim
    assert any("test_float16" in e and "internal error" in e for e in claim["errors"]), claim["errors"]
    assert {r["name"]: r["outcome"] for r in claim["readings"]}["float16"] == "error"
    assert run.report["run"]["complete"] is False


def test_ii_finding_1_a_check_that_finished_is_no_error(planted):
    """The control: the same project with a float16 check that passes is ``true`` (expected caveat: a CPU run
    may find true only when a reading was skipped, so here it disagrees) and no reading is ``error``."""
    run = planted(_records("true"), {"test_crash.py": PASSES}, args=["-n", "0"])
    assert run.result.ret == 0, run.result.stdout.str()
    claim = run.claim("crash-claim")
    assert claim["verdict"] == "true" and claim["errors"] == []
    assert all(r["outcome"] == "held" and r["errors"] == [] for r in claim["readings"])
    assert run.report["run"]["complete"] is True and run.report["run"]["unfinished"] == 0
    assert "Run complete" in (run.report_dir / "claims.md").read_text(encoding="utf-8")


@pytest.mark.subprocess_run
def test_ii_finding_1_an_internal_error_in_an_xdist_worker_is_error(planted, pytester):
    """The same internal error inside an xdist worker (``-n 2``): the worker reports it to the controller,
    which marks the check that was running."""
    pytester.makeconftest(INTERNAL_ERROR_CONFTEST)
    run = planted(_records(), {"test_crash.py": PASSES}, args=["-n", "2"], subprocess=True)
    out = run.result.stdout.str()
    assert run.result.ret != 0, out
    claim = run.claim("crash-claim")
    assert claim["verdict"] == "error", (claim, out)
    assert any("test_float16" in e for e in claim["errors"]), claim["errors"]
    assert run.report["run"]["complete"] is False


@pytest.mark.subprocess_run
def test_ii_finding_1_a_worker_killed_in_a_checks_setup_makes_the_claim_error(planted):
    """Killed in a fixture, before any report of the check reached the controller: the crashed check is mapped to
    its claim through what the other workers collected, at the end of the run."""
    run = planted(_records(), {"test_crash.py": KILLED_IN_SETUP}, args=["-n", "2"], subprocess=True)
    _assert_error(run, what="crashed while running")


STOPS_EARLY = """
import pytest

@pytest.mark.claim("a-claim", reading="exact")
def test_a():
    raise KeyError("a bug of the check")

@pytest.mark.claim("b-claim", reading="exact")
def test_b(claim_log):
    claim_log.example(x=1)
"""


def test_ii_finding_1_a_run_stopped_by_x_leaves_the_checks_after_the_stop_undecided(planted):
    """``pytest -x`` stops at the check that errored: that claim is ``error``; a claim whose checks never ran is
    ``undecided`` because the run was interrupted (not "could not run here"), and the run is not complete."""
    records = {"a.toml": record_toml("a-claim"), "b.toml": record_toml("b-claim")}
    run = planted(records, {"test_p.py": STOPS_EARLY}, args=["-n", "0", "-x"])
    assert run.result.ret == 1, run.result.stdout.str()
    assert run.claim("a-claim")["verdict"] == "error"
    b = run.claim("b-claim")
    assert b["verdict"] == "undecided" and "interrupted before 1 of its checks ran" in b["reason"]
    assert b["agrees"] is False
    assert run.report["run"]["complete"] is False and run.report["run"]["interrupted"] is True


NO_RESTART = KILLED.replace('@pytest.mark.claim("crash-claim", reading="exact")\ndef test_exact',
                            '@pytest.mark.claim("crash-claim", reading="exact")\ndef test_z_exact') + '''

@pytest.mark.claim("other-claim", reading="exact")
def test_z_other(claim_log):
    claim_log.example(x=3.0)
'''


@pytest.mark.subprocess_run
def test_ii_finding_1_checks_never_run_after_the_last_worker_crashed_are_not_decided(planted):
    """``-n 1 --max-worker-restart 0``: the worker dies at the first check and xdist starts no other, so the checks
    after it never run. Their claims are undecided because the run was interrupted, never decided from the
    readings that happened to run (before: other-claim 'undecided, could not run here' in a run that looked whole)."""
    records = dict(_records(), **{"o.toml": record_toml("other-claim")})
    source = NO_RESTART.replace("def test_float16", "def test_a_float16")
    run = planted(records, {"test_crash.py": source}, args=["-n", "1", "--max-worker-restart", "0", "-p", "no:randomly"],
                  subprocess=True)
    out = run.result.stdout.str()
    assert run.result.ret != 0, out
    assert run.claim("crash-claim")["verdict"] == "error", out
    other = run.claim("other-claim")
    assert other["verdict"] == "undecided" and "interrupted before 1 of its checks ran" in other["reason"], other
    assert run.report["run"]["complete"] is False and run.report["run"]["interrupted"] is True
