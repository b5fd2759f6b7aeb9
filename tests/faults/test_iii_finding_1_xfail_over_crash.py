"""Issue 43 (faults III), finding 1: an ``xfail`` mark over a crashing claim check.

Before: a check marked ``@pytest.mark.xfail`` that raised ``ZeroDivisionError`` (a bug, not an assertion) was
recorded ``skipped``; a caveat claim came out ``true``, exit 0. Now a mark that changes an outcome is either
refused at collection (``xfail``, at any level: exit 4 naming the check) or interpreted explicitly (``skip``,
``skipif``: the reading is ``skipped`` with the mark's reason), and an exception other than an assertion is
``error`` whatever happens around it (``pytest.xfail()`` called inside a check included).
"""

from __future__ import annotations

import pytest

from conftest import record_toml

READINGS = (("exact", True), ("float16", False))

HELD = '''
import pytest

@pytest.mark.claim("x-claim", reading="exact")
def test_exact(claim_log):
    claim_log.example(x=1.0)
'''

XFAIL_CRASH = HELD + '''

@pytest.mark.xfail(reason="known to be flaky")
@pytest.mark.claim("x-claim", reading="float16")
def test_float16(claim_log):
    1 / 0
'''

MODULE_XFAIL = '''
import pytest

pytestmark = pytest.mark.xfail

@pytest.mark.claim("x-claim", reading="exact")
def test_exact(claim_log):
    claim_log.example(x=1.0)

@pytest.mark.claim("x-claim", reading="float16")
def test_float16(claim_log):
    1 / 0
'''

IMPERATIVE_XFAIL = HELD + '''

@pytest.mark.claim("x-claim", reading="float16")
def test_float16(claim_log):
    pytest.xfail("not today")
'''

SKIP_MARK = HELD + '''

@pytest.mark.skip(reason="needs a GPU")
@pytest.mark.claim("x-claim", reading="float16")
def test_float16(claim_log):
    1 / 0
'''

SKIPIF_FALSE_CRASH = HELD + '''

@pytest.mark.skipif(False, reason="never")
@pytest.mark.claim("x-claim", reading="float16")
def test_float16(claim_log):
    1 / 0
'''


def _records():
    return {"x.toml": record_toml("x-claim", expected="caveat", readings=READINGS)}


@pytest.mark.parametrize("source", [XFAIL_CRASH, MODULE_XFAIL], ids=["function", "module"])
def test_iii_finding_1_an_xfail_mark_on_a_claim_check_is_refused(planted, source):
    run = planted(_records(), {"test_x.py": source}, args=["-n", "0"])
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR, run.result.stdout.str()
    err = run.result.stderr.str()
    assert "test_x.py::test_float16" in err and "xfail" in err, err
    assert not (run.report_dir / "claims.json").exists()


def test_iii_finding_1_an_xfail_mark_is_refused_under_runxfail_too(planted):
    run = planted(_records(), {"test_x.py": XFAIL_CRASH}, args=["-n", "0", "--runxfail"])
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR, run.result.stdout.str()


def test_iii_finding_1_pytest_xfail_called_in_a_check_is_error(planted):
    run = planted(_records(), {"test_x.py": IMPERATIVE_XFAIL}, args=["-n", "0"])
    assert run.result.ret != 0, run.result.stdout.str()
    claim = run.claim("x-claim")
    assert claim["verdict"] == "error", claim
    readings = {r["name"]: r for r in claim["readings"]}
    assert readings["float16"]["outcome"] == "error"
    assert any("test_float16" in e and "xfail" in e for e in claim["errors"]), claim["errors"]


def test_iii_finding_1_a_skip_mark_is_interpreted_as_skipped_with_its_reason(planted):
    run = planted(_records(), {"test_x.py": SKIP_MARK}, args=["-n", "0"])
    claim = run.claim("x-claim")
    readings = {r["name"]: r for r in claim["readings"]}
    assert readings["float16"]["outcome"] == "skipped"
    assert "needs a GPU" in readings["float16"]["evidence"]
    assert claim["verdict"] == "true" and claim["agrees"] is True  # a skipped reading could have failed


def test_iii_finding_1_a_crash_under_a_skipif_that_did_not_fire_is_error(planted):
    run = planted(_records(), {"test_x.py": SKIPIF_FALSE_CRASH}, args=["-n", "0"])
    assert run.result.ret != 0
    claim = run.claim("x-claim")
    assert claim["verdict"] == "error" and any("ZeroDivisionError" in e for e in claim["errors"]), claim
