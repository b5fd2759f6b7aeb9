"""Issue 43, finding 15 (the failure profile): ``failure_profile("generic", trials=30, failures=1)`` showed a
"generic" badge. The class is computed from the counts (docs/verdicts.md, "Failure profile": ``generic``
when every draw fails, ``at-document-parameters`` when some do, ``special-inputs`` when none do;
:func:`attention_claims.framework.evidence.failure_class`); a class that does not fit them is a
``ValueError`` naming both, so the check errors (a bug of the check, never a badge)."""

from __future__ import annotations

import pytest

from attention_claims.framework.evidence import CheckLog, failure_class
from attention_claims.testkit.failure_profiles import record_profile


@pytest.mark.parametrize("cls, trials, failures", [
    ("generic", 30, 1), ("generic", 30, 29), ("generic", 30, 0),
    ("at-document-parameters", 30, 30), ("at-document-parameters", 30, 0),
    ("special-inputs", 30, 1), ("special-inputs", 1, 1),
])
def test_iii_finding_15_a_class_that_does_not_fit_the_counts_is_refused(cls, trials, failures):
    log = CheckLog()
    with pytest.raises(ValueError, match=f"class '{cls}' does not fit {failures} failures in {trials} draws") as err:
        log.failure_profile(cls, setting="N=512, d=64", trials=trials, failures=failures, summary="planted")
    assert repr(failure_class(trials, failures)) in str(err.value)
    assert log.profile is None


@pytest.mark.parametrize("trials, failures", [(30, 30), (30, 29), (30, 1), (30, 0), (1, 1), (1, 0)])
def test_iii_finding_15_the_computed_class_is_accepted(trials, failures):
    log = CheckLog()
    log.failure_profile(failure_class(trials, failures), setting="N=512", trials=trials, failures=failures,
                        summary="")
    assert log.profile["class"] == failure_class(trials, failures)
    assert record_profile(CheckLog(), [True] * failures + [False] * (trials - failures), setting="N=512",
                          summary="") == failure_class(trials, failures)


CHECK = '''
import pytest
from attention_claims.testkit import refute

@pytest.mark.claim("{cid}", reading="exact")
def test_a(claim_log):
    claim_log.example(N=2)
    claim_log.failure_profile("generic", setting="N=512, d=64", trials=30, failures=1, summary="planted")
    refute("planted failure", example={{"N": 2}}, certified=True, certificate="planted")
'''


def test_iii_finding_15_no_generic_badge_from_one_failure_in_30(planted):
    """End to end: the check that claims ``generic`` for 1 failure in 30 errors, naming the counts; the
    claim is ``error``, never ``false`` with a ``generic: 1/30`` badge, and the run exits non-zero."""
    from conftest import record_toml

    run = planted({"a.toml": record_toml("alpha-claim", expected="false")}, {"test_a.py": CHECK.format(cid="alpha-claim")})
    assert run.result.ret != 0
    claim = run.claim("alpha-claim")
    assert claim["verdict"] == "error", claim
    assert claim["readings"][0]["failure_profile"] is None
    md = (run.report_dir / "claims.md").read_text(encoding="utf-8")
    html = (run.report_dir / "claims.html").read_text(encoding="utf-8")
    assert "generic: 1/30" not in md and "generic: 1/30" not in html
    assert "does not fit 1 failures in 30 draws" in md
