"""Issue 43 (faults III), finding 2: a check decides exactly one reading.

Before: a module-level ``pytestmark = pytest.mark.claim(ID, reading="exact")`` beside a check marked with
another reading of the same claim made that check's counterexample count against the as-stated reading too, and
a caveat claim came out a certified ``false``. Now a second ``claim`` mark on a check, from any level (module,
class, function, parameter), is a usage error (exit 4) naming the check.
"""

from __future__ import annotations

import pytest

from conftest import record_toml

READINGS = (("exact", True), ("float16", False))

MODULE_MARK = '''
import pytest
from attention_claims.testkit import refute

pytestmark = pytest.mark.claim("m-claim", reading="exact")

def test_exact(claim_log):
    claim_log.example(x=1.0)

@pytest.mark.claim("m-claim", reading="float16")
def test_float16(claim_log):
    refute("float16 rounds", example={"x": 1}, certified=True)
'''

CLASS_MARK = '''
import pytest
from attention_claims.testkit import refute

@pytest.mark.claim("m-claim", reading="exact")
class TestBoth:
    def test_exact(self, claim_log):
        claim_log.example(x=1.0)

    @pytest.mark.claim("m-claim", reading="float16")
    def test_float16(self, claim_log):
        refute("float16 rounds", example={"x": 1}, certified=True)
'''

TWO_ON_FUNCTION = '''
import pytest

@pytest.mark.claim("m-claim", reading="exact")
@pytest.mark.claim("m-claim", reading="float16")
def test_float16(claim_log):
    claim_log.example(x=1.0)
'''

PARAM_AND_FUNCTION = '''
import pytest

@pytest.mark.parametrize("n", [pytest.param(1, marks=pytest.mark.claim("m-claim", reading="exact"))])
@pytest.mark.claim("m-claim", reading="float16")
def test_float16(claim_log, n):
    claim_log.example(x=1.0)
'''


def _records():
    return {"m.toml": record_toml("m-claim", expected="caveat", readings=READINGS)}


@pytest.mark.parametrize("source, nodeid", [(MODULE_MARK, "test_m.py::test_float16"),
                                            (CLASS_MARK, "test_m.py::TestBoth::test_float16"),
                                            (TWO_ON_FUNCTION, "test_m.py::test_float16"),
                                            (PARAM_AND_FUNCTION, "test_m.py::test_float16[1]")],
                         ids=["module", "class", "function", "parameter"])
def test_iii_finding_2_a_second_claim_mark_from_any_level_is_a_usage_error(planted, source, nodeid):
    run = planted(_records(), {"test_m.py": source}, args=["-n", "0"])
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR, run.result.stdout.str()
    err = run.result.stderr.str()
    assert nodeid in err and "exactly one" in err, err
    assert not (run.report_dir / "claims.json").exists()


def test_iii_finding_2_one_mark_per_check_decides_the_claim(planted):
    """The control: the module mark moved onto the one check it meant: the claim is the expected caveat."""
    source = MODULE_MARK.replace('pytestmark = pytest.mark.claim("m-claim", reading="exact")\n', "").replace(
        "def test_exact", '@pytest.mark.claim("m-claim", reading="exact")\ndef test_exact')
    run = planted(_records(), {"test_m.py": source}, args=["-n", "0"])
    assert run.result.ret == 0, run.result.stdout.str()
    assert run.claim("m-claim")["verdict"] == "caveat"


@pytest.mark.subprocess_run
def test_iii_finding_2_under_xdist_the_refusal_is_exit_4_not_an_internal_error(planted):
    """Under ``-n 2`` the marks are validated in the workers: a usage error raised there crashed xdist's
    scheduler (INTERNALERROR, exit 3, an "interrupted" report written; found by tests/faults/test_self_attack.py).
    Now the workers run nothing, the controller exits 4 with the message and writes no report."""
    run = planted(_records(), {"test_m.py": MODULE_MARK}, args=["-n", "2"], subprocess=True)
    out = run.result.stdout.str() + run.result.stderr.str()
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR, out
    assert "test_m.py::test_float16" in out and "exactly one" in out and "INTERNALERROR" not in out, out
    assert not (run.report_dir / "claims.json").exists()
