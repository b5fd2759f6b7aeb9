"""The deep profile's batched twins (attention_claims.testkit.batched): under ``ci`` the batched
check skips and the per-example check decides; under ``deep`` it is the other way round, and the
batched check counts every instance it evaluated (``CheckLog.batch``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attention_claims.framework.evidence import CheckLog
from conftest import record_toml

CHECKS = '''
import pytest
from hypothesis import given, settings, strategies as st
from attention_claims.testkit import BATCH, batched_profile_only

DEEP_BATCHED_TWINS = {"test_exact": "test_exact_batched"}

@pytest.mark.claim("c", reading="exact")
@given(n=st.integers(0, 10))
@settings(max_examples=3)
def test_exact(n, claim_log):
    claim_log.example(n=n)

@pytest.mark.claim("c", reading="exact")
@given(n=st.integers(0, 10))
@settings(max_examples=3)
def test_exact_batched(n, claim_log):
    batched_profile_only()
    claim_log.batch(BATCH, n=[n, n + 1])
'''

CONFTEST = '''
from attention_claims.testkit.batched import skip_replaced_under_deep

def pytest_collection_modifyitems(config, items):
    skip_replaced_under_deep(items)
'''


@pytest.mark.parametrize("profile", ["ci", "deep"])
def test_one_of_the_twins_runs_per_profile(planted, profile):
    run = planted({"c.toml": record_toml("c")}, {"test_x.py": CHECKS, "conftest.py": CONFTEST},
                  args=[f"--hypothesis-profile={profile}", "-rs", "-n", "0"])
    run.result.assert_outcomes(passed=1, skipped=1)
    reading = run.claim("c")["readings"][0]
    assert reading["outcome"] == "held"
    if profile == "ci":
        run.result.stdout.fnmatch_lines(["*batched engine check: runs under --hypothesis-profile=deep only*"])
        assert reading["examples"] == 3
    else:
        run.result.stdout.fnmatch_lines(["*replaced under the deep profile by its batched twin test_exact_batched*"])
        assert reading["examples"] == 3 * 128


def test_batch_counts_every_instance_and_tracks_ranges():
    log = CheckLog()
    log.batch(4, rank=torch.tensor([3, 5, 4, 4]), gap=np.array([[0.5, np.nan], [2.0, 1.0]]), N=7)
    assert log.examples == 4
    assert log.ranges == {"rank": [3.0, 5.0], "gap": [0.5, 2.0], "N": [7.0, 7.0]}
    with pytest.raises(ValueError, match="count"):
        log.batch(-1)
