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
"""Instances per Hypothesis example in a batched check.

Examples:
    >>> from attention_claims.testkit import BATCH
    >>> BATCH
    128
"""

#: the profile under which the batched checks replace their per-example twins
BATCHED_PROFILE = "deep"


def batched_profile_only() -> None:
    """Skip the running batched check unless the ``deep`` profile is loaded (it would only repeat,
    more slowly per reading, what the per-example check decides under ``ci``/``dev``).

    Call it first in the body of a batched check. Takes no arguments.

    Returns:
        ``None``, under the ``deep`` profile (the check goes on).

    Raises:
        pytest.skip.Exception: any other profile is loaded (the skip's reason names the profile the check
            runs under and :data:`BATCH`).

    Examples:
        >>> import pytest
        >>> from hypothesis import settings
        >>> from attention_claims.testkit import batched_profile_only
        >>> before = settings.get_current_profile_name()
        >>> settings.load_profile("ci")
        >>> try:
        ...     batched_profile_only()
        ... except pytest.skip.Exception as skip:
        ...     print(skip.msg.split(":")[0])
        batched engine check
        >>> settings.load_profile("deep")
        >>> batched_profile_only()  # returns: the batched check runs
        >>> settings.load_profile(before)
    """
    if profiles.current_profile() != BATCHED_PROFILE:
        pytest.skip(f"batched engine check: runs under --hypothesis-profile={BATCHED_PROFILE} only, where it "
                    f"replaces the per-example check of this reading ({BATCH} instances per example)")


def gaussian_batch_spec(n: tuple[int, int] = (8, 24), ratio: int = 4,
                        scale_exp: tuple[float, float] = (-2.0, 2.0)) -> st.SearchStrategy[tuple[int, int, float, int]]:
    """A strategy for ``(N, d, scale, seed)`` drawn as :func:`attention_claims.testkit.gaussian_qk` draws
    them (same labels, order and domains: ``N >= ratio * d``, a log-uniform logit scale, a 32-bit
    seed), for :func:`attention_claims.engine.seeded_gaussian_batch`: the numbers, not the arrays, so a
    batched check builds its :data:`BATCH` instances in one torch call.

    Args:
        n: inclusive range of the sequence length N.
        ratio: the head dimension d is drawn in ``1 .. max(1, N // ratio)``.
        scale_exp: range of the logit scale's decimal exponent (:func:`attention_claims.testkit.log_uniform`).

    Returns:
        A strategy of ``(N int, d int, scale float, seed int in [0, 2**32))``.

    Raises:
        hypothesis.errors.InvalidArgument: an empty range in ``n`` or ``scale_exp`` (when the strategy is
            first drawn from).

    Examples:
        >>> from hypothesis import find
        >>> from attention_claims.testkit import gaussian_batch_spec
        >>> find(gaussian_batch_spec(n=(8, 24), ratio=4), lambda spec: spec[1] == 2)  # the smallest with d = 2
        (8, 2, 0.01, 0)
    """
    return _gaussian_batch_spec(n, ratio, scale_exp)


@st.composite
def _gaussian_batch_spec(draw, n, ratio, scale_exp):
    N = draw(st.integers(*n), label="N")
    d = draw(st.integers(1, max(1, N // ratio)), label="d")
    s = draw(log_uniform(*scale_exp), label="logit scale")
    seed = draw(st.integers(0, 2**32 - 1), label="seed")
    return N, d, s, seed


def skip_replaced_under_deep(items) -> None:
    """Add a skip to every collected per-example check that a batched twin replaces under the
    ``deep`` profile: a module declares ``DEEP_BATCHED_TWINS = {per-example function name:
    batched function name}``. Does nothing under any other profile.

    Called from ``checks/conftest.py``'s ``pytest_collection_modifyitems``; a check writer only declares
    ``DEEP_BATCHED_TWINS``.

    Args:
        items: the collected ``pytest.Item`` objects (pytest's list, changed in place: a skip marker is
            added to each replaced one).

    Returns:
        ``None``.

    Examples:
        >>> from types import SimpleNamespace
        >>> from hypothesis import settings
        >>> from attention_claims.testkit.batched import skip_replaced_under_deep
        >>> module = SimpleNamespace(DEEP_BATCHED_TWINS={"test_rank": "test_rank_batched"})
        >>> added = []
        >>> item = SimpleNamespace(module=module, function=SimpleNamespace(__name__="test_rank"),
        ...                        add_marker=added.append)
        >>> before = settings.get_current_profile_name()
        >>> settings.load_profile("deep")
        >>> skip_replaced_under_deep([item])
        >>> settings.load_profile(before)
        >>> added[0].kwargs["reason"].split(" (")[0]
        'replaced under the deep profile by its batched twin test_rank_batched'
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
