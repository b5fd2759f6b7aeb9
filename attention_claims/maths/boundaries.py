"""Where a reading starts to fail: bisection on a scalar parameter (a logit gap, a scale).

A dtype reading's counterexample is reported with its boundary, found here by search,
never typed in by hand (issue 2, "where it starts to break").
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

from .arrays import resolve_dtype, torch


def bisect_predicate(fails: Callable[[float], bool], lo: float, hi: float, *, rtol: float = 1e-9,
                     max_iter: int = 200) -> float:
    """Smallest ``x`` in ``(lo, hi]`` with ``fails(x)`` true, to relative accuracy ``rtol``,
    assuming ``fails`` is monotone (false at ``lo``, true at ``hi``).

    Raises:
        ValueError: ``fails(lo)`` is true or ``fails(hi)`` false (no sign change to bisect).
    """
    if fails(lo):
        raise ValueError(f"bisect_predicate: the predicate already fails at lo={lo!r}")
    if not fails(hi):
        raise ValueError(f"bisect_predicate: the predicate holds at hi={hi!r}: no boundary in [lo, hi]")
    for _ in range(max_iter):
        mid = 0.5 * (lo + hi)
        if fails(mid):
            hi = mid
        else:
            lo = mid
        if hi - lo <= rtol * max(abs(hi), 1e-300):
            break
    return hi


@functools.cache
def softmax_diagonal_underflow_gap(dtype: str, device: str = "cpu", elements: int = 64) -> float:
    """The smallest logit gap ``g`` for which the weight of a logit ``g`` below the row's maximum, in
    ``torch.softmax`` of a row of ``elements`` logits ``[g, 0, ..., 0]`` computed in ``dtype`` on
    ``device``, is exactly 0: the gap at which a causal attention row's diagonal weight underflows (the
    logits are rounded to ``dtype`` first, as a model in that dtype would).

    The default row of 64 takes the vectorized path real attention rows take (its own ``exp``);
    ``elements=2`` the short-row path. On the CPUs measured (2026-11, AVX-512) both give the same gap in
    every dtype (745.13, 103.97, 17.34, 92.75 nats for float64, float32, float16, bfloat16;
    ``tests/maths``). On CUDA (H100 2026-11-23, H200 2026-11-27, torch 2.11+cu130) float32, float16 and
    bfloat16 give the CPU's gaps, float64 745.0: CUDA's float64 ``exp`` returns 0 for ``x <= -745`` where
    the correctly rounded value is ``2^-1074`` down to ``-745.133`` (``reports/device/2026-11-27-1016-nvidia-h200``).
    Theory (IEEE 754): ``g* ≈ -ln(smallest subnormal / 2)``; see
    :func:`attention_claims.maths.underflow_log_threshold`. Units: nats (natural-log logit units).

    Raises:
        ValueError: ``elements < 2``; no gap in ``(0, min(10^5, max/2)]`` (see :func:`bisect_predicate`).
    """
    if isinstance(elements, bool) or not isinstance(elements, int) or elements < 2:
        raise ValueError(f"softmax_diagonal_underflow_gap: elements must be an integer >= 2, got {elements!r}")
    dt = resolve_dtype(dtype)

    def fails(g: float) -> bool:
        z = torch.zeros(elements, dtype=torch.float64)
        z[0] = g
        return bool((torch.softmax(z.to(device=device, dtype=dt), dim=-1)[1:] == 0.0).any().item())

    return bisect_predicate(fails, 0.0, min(1.0e5, torch.finfo(dt).max / 2))


@functools.cache
def numerical_rank_gap_2x2(eps: float) -> float:
    """The logit gap at which the 2x2 causal attention ``[[1, 0], [1-p, p]]``, ``p = 1/(1+e^g)``,
    loses numerical rank under the default tolerance ``sigma_max * 2 * eps`` (float64 SVD).
    """
    import numpy as np

    def fails(g: float) -> bool:
        p = 1.0 / (1.0 + math.exp(g))
        A = np.array([[1.0, 0.0], [1.0 - p, p]])
        s = np.linalg.svd(A, compute_uv=False)
        return bool(s[-1] <= s[0] * 2 * eps)

    return bisect_predicate(fails, 0.0, 700.0)
