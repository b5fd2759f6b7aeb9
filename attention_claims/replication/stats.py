"""Paired intervals and the power of a paired t-test (scipy.stats).

Formulas: the two-sided ``level`` t-interval of a mean, ``mean ± t_{(1+level)/2, n-1} · sd / sqrt(n)``
(Student 1908); the power of the two-sided paired t-test of level ``alpha`` against a true mean
difference ``delta`` with standard deviation ``sd`` is ``P(|T| > t_{1-alpha/2, n-1})`` for ``T``
noncentral t with ``n - 1`` degrees of freedom and noncentrality ``delta / sd · sqrt(n)`` (Cohen 1988,
ch. 2), computed with :data:`scipy.stats.nct`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from scipy import stats

__all__ = ["paired_interval", "power", "seeds_for_power"]


def paired_interval(diffs: Sequence[float], level: float = 0.95) -> dict:
    """Mean, sample sd and the ``level`` t-interval of paired differences; raises ValueError for n < 2."""
    n = len(diffs)
    if n < 2:
        raise ValueError(f"a paired interval needs at least 2 differences, got {n}")
    mean = math.fsum(diffs) / n
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in diffs) / (n - 1))
    half = float(stats.t.ppf((1 + level) / 2, n - 1)) * sd / math.sqrt(n)
    return {"n": n, "mean": mean, "sd": sd, "level": level, "lo": mean - half, "hi": mean + half}


def power(n: int, delta: float, sd: float, alpha: float = 0.05) -> float:
    """Power of the two-sided paired t-test with ``n`` pairs against a true difference ``delta`` (sd ``sd``)."""
    if n < 2:
        return 0.0
    df, nc = n - 1, abs(delta) / sd * math.sqrt(n)
    crit = float(stats.t.ppf(1 - alpha / 2, df))
    return float(stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc))


def seeds_for_power(delta: float, sd: float, target: float = 0.8, alpha: float = 0.05, cap: int = 10_000) -> int:
    """The smallest number of paired seeds whose paired t-test reaches ``target`` power (``cap`` if none)."""
    for n in range(2, cap + 1):
        if power(n, delta, sd, alpha) >= target:
            return n
    return cap
