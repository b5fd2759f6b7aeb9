"""Issue 43 (faults III), finding 3: ``refute`` validates its arguments.

Before: ``refute(..., certified="False")`` (a string) was certified, since the value went through ``bool()``, and
the claim came out a certified ``false``. Now ``certified`` must be a real ``bool``, ``example`` JSON-serialisable
(after the usual conversions of arrays and scalars) and the message a ``str``; anything else is ``error`` naming
the check and the argument, never a verdict.
"""

from __future__ import annotations

import pytest

from attention_claims.framework.evidence import Counterexample, RefuteArgumentError, refute
from conftest import record_toml

CHECK = '''
from attention_claims.testkit import refute
import pytest

@pytest.mark.claim("r-claim", reading="exact")
def test_exact(claim_log):
    claim_log.example(x=1.0)
    refute({args})
'''


@pytest.mark.parametrize("args, what", [
    ('"looks wrong", example={"x": 1}, certified="False"', "certified"),
    ('"looks wrong", example={"x": 1}, certified=1', "certified"),
    ('"looks wrong", example={"x": object()}, certified=True', "example"),
    ('"looks wrong", example=[1, 2], certified=True', "example"),
    ('b"looks wrong", example={"x": 1}, certified=True', "message"),
    ('"looks wrong", example={"x": 1}, certified=True, certificate=3', "certificate"),
], ids=["certified-string", "certified-int", "example-object", "example-list", "message-bytes", "certificate-int"])
def test_iii_finding_3_invalid_refute_arguments_are_an_error_naming_the_check(planted, args, what):
    run = planted({"r.toml": record_toml("r-claim", expected="false")}, {"test_r.py": CHECK.format(args=args)},
                  args=["-n", "0"])
    assert run.result.ret != 0, run.result.stdout.str()
    claim = run.claim("r-claim")
    assert claim["verdict"] == "error", claim
    (reading,) = claim["readings"]
    assert reading["outcome"] == "error" and reading["certified"] is False and reading["counterexample"] is None
    assert any("test_r.py::test_exact" in e and what in e for e in claim["errors"]), claim["errors"]


def test_iii_finding_3_a_valid_refute_is_a_certified_counterexample(planted):
    run = planted({"r.toml": record_toml("r-claim", expected="false")},
                  {"test_r.py": CHECK.format(args='"looks wrong", example={"x": 1}, certified=True')}, args=["-n", "0"])
    assert run.result.ret == 0, run.result.stdout.str()
    assert run.claim("r-claim")["verdict"] == "false"


def test_iii_finding_3_refute_itself_raises_a_typed_error():
    with pytest.raises(RefuteArgumentError, match="certified"):
        refute("m", certified="False")
    with pytest.raises(RefuteArgumentError, match="example"):
        refute("m", example={"a": {1, 2}}, certified=False)
    with pytest.raises(Counterexample) as exc:
        refute("m", example={"a": 1.5}, certified=False)
    assert exc.value.certified is False and exc.value.example == {"a": 1.5}


def test_iii_finding_3_numpy_bools_are_bools_and_the_docstring_example_runs():
    import doctest

    import numpy as np

    from attention_claims.framework import evidence

    with pytest.raises(Counterexample) as exc:
        refute("m", example={"a": np.float32(1.5), "Q": np.eye(2)}, certified=np.bool_(True))
    assert exc.value.certified is True and exc.value.example == {"a": 1.5, "Q": [[1.0, 0.0], [0.0, 1.0]]}
    failures, tried = doctest.testmod(evidence, verbose=False)  # refute's Example section
    assert tried >= 2 and failures == 0
