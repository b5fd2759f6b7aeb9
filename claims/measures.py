"""Measures of attention matrices: singular values, numerical rank, effective rank,
energy concentration, the l1/l2 sparsity measure, power-law fits.

All functions take NumPy arrays or torch tensors and compute in float64 unless said
otherwise; results are dimensionless (counts, fractions or ratios).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .attention import AttentionInputError


def _np(x, name: str, ndim: int | None = None) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        x = x.detach().to("cpu", torch.float64).numpy()
    a = np.asarray(x, dtype=np.float64)
    if ndim is not None and a.ndim != ndim:
        raise AttentionInputError(f"{name}: expected {ndim} dimensions, got shape {a.shape}")
    if a.size == 0:
        raise AttentionInputError(f"{name}: empty array")
    if not np.isfinite(a).all():
        raise AttentionInputError(f"{name}: contains NaN or Inf")
    return a


def singular_values(A) -> np.ndarray:
    """Singular values of ``A`` ``(N, M)`` in float64, descending (LAPACK gesdd via NumPy).

    Raises:
        AttentionInputError: empty, non-2-D or non-finite input.
    """
    return np.linalg.svd(_np(A, "A", 2), compute_uv=False)


def default_rank_tolerance(sigma: np.ndarray, shape: tuple[int, int], eps: float) -> float:
    """``sigma_max * max(N, M) * eps``: NumPy's ``matrix_rank`` default (numpy.linalg docs,
    after Press et al., Numerical Recipes, 2nd ed., §2.6). ``eps`` is the machine epsilon
    of the dtype the matrix was computed in."""
    return float(sigma[0]) * max(shape) * eps if sigma.size else 0.0


def numerical_rank(A, *, eps: float | None = None, tol: float | None = None) -> tuple[int, float]:
    """Numerical rank: the number of singular values above ``tol``.

    ``tol`` defaults to :func:`default_rank_tolerance` with ``eps`` (default: float64's).
    Returns ``(rank, tol)``. This is *not* the exact rank; see :mod:`claims.reference`.
    """
    a = _np(A, "A", 2)
    s = np.linalg.svd(a, compute_uv=False)
    if tol is None:
        tol = default_rank_tolerance(s, a.shape, np.finfo(np.float64).eps if eps is None else eps)
    return int(np.sum(s > tol)), float(tol)


def energy_fraction(sigma, k: int) -> float:
    """``sum_{i<=k} sigma_i^2 / sum_i sigma_i^2`` (003 定义 11.25, the cumulative energy ratio).

    Raises:
        AttentionInputError: if ``k`` is not in ``[0, len(sigma)]`` or all sigma are 0.
    """
    s = np.sort(_np(sigma, "sigma", 1))[::-1]
    if not 0 <= k <= s.size:
        raise AttentionInputError(f"k: must be in [0, {s.size}], got {k}")
    tot = float(np.sum(s**2))
    if tot == 0:
        raise AttentionInputError("sigma: all singular values are zero (energy ratio undefined)")
    return float(np.sum(s[:k] ** 2) / tot)


def effective_rank(sigma, tau: float) -> int:
    """``min{k : sum_{i<=k} sigma_i^2 / sum_i sigma_i^2 >= tau}`` (003 定义 11.25).

    ``tau`` must lie in (0, 1). The cumulative ratio is computed with ``math.fsum`` so a
    ratio that equals ``tau`` exactly is not lost to rounding.

    Raises:
        AttentionInputError: ``tau`` outside (0, 1), or all singular values zero.
    """
    if not (0 < tau < 1):
        raise AttentionInputError(f"tau: must be in (0, 1) (003 定义 11.25), got {tau}")
    s = np.sort(_np(sigma, "sigma", 1))[::-1]
    e = [float(v) ** 2 for v in s]
    tot = math.fsum(e)
    if tot == 0:
        raise AttentionInputError("sigma: all singular values are zero (effective rank undefined)")
    acc = []
    for k in range(1, len(e) + 1):
        acc.append(e[k - 1])
        if math.fsum(acc) >= tau * tot:
            return k
    return len(e)


def top_fraction_energy(sigma, fraction: float) -> float:
    """Energy captured by the top ``ceil(fraction * n)`` singular values (003 引理 11.34, 表 11.3.1)."""
    s = _np(sigma, "sigma", 1)
    if not (0 < fraction <= 1):
        raise AttentionInputError(f"fraction: must be in (0, 1], got {fraction}")
    return energy_fraction(s, math.ceil(fraction * s.size))


def sparsity(x) -> float:
    """The l1/l2 sparsity ``S(x) = E|x| / sqrt(E x^2) = ||x||_1 / (sqrt(n) ||x||_2)``.

    Source: kexue.fm/archives/9889 eq. (1) (004, "稀疏程度"), after kexue.fm/archives/9595.
    ``S`` lies in ``[1/sqrt(n), 1]``; smaller means sparser. ``x`` is a 1-D vector (or the
    last axis of a batch).

    Raises:
        AttentionInputError: empty, non-finite, or all-zero input (S undefined).
    """
    a = _np(x, "x")
    l2 = np.sqrt(np.mean(a**2, axis=-1))
    if np.any(l2 == 0):
        raise AttentionInputError("x: all-zero vector, sparsity S is undefined (0/0)")
    return np.mean(np.abs(a), axis=-1) / l2


def power_law_fit(sigma, *, skip_zero: bool = True) -> tuple[float, float, float]:
    """Least-squares fit of ``log sigma_i = log C - alpha log i`` (003 定理 11.21's form).

    Returns ``(alpha, C, r2)`` with ``r2`` the coefficient of determination of the fit in
    log-log space.

    Raises:
        AttentionInputError: fewer than 3 positive singular values, or a zero one with
            ``skip_zero=False``.
    """
    s = np.sort(_np(sigma, "sigma", 1))[::-1]
    i = np.arange(1, s.size + 1, dtype=np.float64)
    if not skip_zero and np.any(s == 0):
        raise AttentionInputError("sigma: zero singular values have no logarithm; fit with skip_zero=True")
    keep = s > 0 if skip_zero else np.ones_like(s, dtype=bool)
    if keep.sum() < 3:
        raise AttentionInputError("sigma: need at least 3 positive singular values to fit a power law")
    x, y = np.log(i[keep]), np.log(s[keep])
    slope, intercept = np.polyfit(x, y, 1)
    pred = slope * x + intercept
    ss_res = float(np.sum((y - pred) ** 2))
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    return float(-slope), float(math.exp(intercept)), r2
