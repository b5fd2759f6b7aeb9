"""The batched checks' side of :mod:`attention_claims.engine`: which profile runs them, their batch
size, the Hypothesis strategy that draws one batch, and the replacement of a per-example check by
its batched twin under the ``deep`` profile.

Under ``ci`` and ``dev`` the per-example checks decide the rank and spectrum readings, one instance
per Hypothesis example, and the batched checks skip (saying so). Under ``deep`` it is the other way
round: each batched check evaluates :data:`BATCH` instances per example in one torch call, and the
per-example check it names in its module's ``DEEP_BATCHED_TWINS`` is skipped, with the reason
(:func:`skip_replaced_under_deep`, called from ``checks/conftest.py``). A batch's instance 0 is
the per-example check's own instance for the same drawn values, so the deep run is a superset.
"""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from ..framework import profiles
from .strategies import log_uniform

BATCH = 128
"""Instances per Hypothesis example in a batched check."""

#: the profile under which the batched checks replace their per-example twins
BATCHED_PROFILE = "deep"


def batched_profile_only() -> None:
    """Skip the running batched check unless the ``deep`` profile is loaded (it would only repeat,
    more slowly per reading, what the per-example check decides under ``ci``/``dev``)."""
    if profiles.current_profile() != BATCHED_PROFILE:
        pytest.skip(f"batched engine check: runs under --hypothesis-profile={BATCHED_PROFILE} only, where it "
                    f"replaces the per-example check of this reading ({BATCH} instances per example)")


@st.composite
def gaussian_batch_spec(draw, n=(8, 24), ratio=4, scale_exp=(-2.0, 2.0)):
    """``(N, d, scale, seed)`` drawn as :func:`attention_claims.testkit.gaussian_qk` draws them
    (same labels, order and domains: ``N >= ratio * d``, a log-uniform logit scale, a 32-bit
    seed), for :func:`attention_claims.engine.seeded_gaussian_batch`."""
    N = draw(st.integers(*n), label="N")
    d = draw(st.integers(1, max(1, N // ratio)), label="d")
    s = draw(log_uniform(*scale_exp), label="logit scale")
    seed = draw(st.integers(0, 2**32 - 1), label="seed")
    return N, d, s, seed


def skip_replaced_under_deep(items) -> None:
    """Add a skip to every collected per-example check that a batched twin replaces under the
    ``deep`` profile: a module declares ``DEEP_BATCHED_TWINS = {per-example function name:
    batched function name}``. Does nothing under any other profile.
    """
    if profiles.current_profile() != BATCHED_PROFILE:
        return
    for item in items:
        twins = getattr(getattr(item, "module", None), "DEEP_BATCHED_TWINS", None)
        name = getattr(getattr(item, "function", None), "__name__", None)
        if twins and name in twins:
            item.add_marker(pytest.mark.skip(
                reason=f"replaced under the {BATCHED_PROFILE} profile by its batched twin {twins[name]} "
                       f"({BATCH} instances per example, attention_claims.engine)"))
