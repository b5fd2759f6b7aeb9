"""Rank collapse with depth: the residual ``res(X) = X - 1 x^T`` of pure-attention stacks.

Dong, Cordonnier & Loukas 2021, "Attention is Not All You Need: Pure Attention Loses Rank
Doubly Exponentially with Depth" (arXiv:2103.03404), §2: ``res(X) = X - 1 x^T`` with
``x = argmin_x ||X - 1 x^T||``. Here the norm is Frobenius, whose minimiser is the column mean,
and the *relative* residual ``r(X) = ||res(X)||_F / ||X||_F`` (dimensionless, scale free) is
reported. A layer is ``X -> softmax(X Wq (X Wk)^T / sqrt(dk)) X Wv`` (their eq. (1), one head),
optionally with a skip connection ``X -> X + Attn(X)`` (their §3).

Computed in mpmath at ``dps`` digits so that a doubly exponential decay stays visible far below
float64's 1e-16 floor.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

from .attention import AttentionInputError


def _mp_matrix(a: np.ndarray) -> mpmath.matrix:
    return mpmath.matrix([[mpmath.mpf(float(v)) for v in row] for row in a])


def relative_residual(X) -> mpmath.mpf:
    """``||X - 1 xbar^T||_F / ||X||_F`` with ``xbar`` the column mean (the Frobenius minimiser),
    for an mpmath or NumPy ``(N, D)`` matrix; 0 for a rank-1 matrix of identical rows.

    Raises:
        AttentionInputError: empty or all-zero input.
    """
    M = X if isinstance(X, mpmath.matrix) else _mp_matrix(np.asarray(X, dtype=np.float64))
    N, D = M.rows, M.cols
    if N == 0 or D == 0:
        raise AttentionInputError("relative_residual: empty matrix")
    mean = [mpmath.fsum(M[i, j] for i in range(N)) / N for j in range(D)]
    num = mpmath.fsum((M[i, j] - mean[j]) ** 2 for i in range(N) for j in range(D))
    den = mpmath.fsum(M[i, j] ** 2 for i in range(N) for j in range(D))
    if den == 0:
        raise AttentionInputError("relative_residual: X is zero (ratio undefined)")
    return mpmath.sqrt(num / den)


def attention_stack_residuals(X0, weights, *, skip: bool = False, dps: int = 200) -> list[mpmath.mpf]:
    """Relative residuals ``[r(X_0), r(X_1), ..., r(X_L)]`` of a single-head attention stack.

    ``X0`` is ``(N, D)``; ``weights`` is a list of ``(Wq, Wk, Wv)``, each ``(D, dk)``, ``(D, dk)``,
    ``(D, D)`` float arrays (converted exactly). ``skip`` adds the identity path. Computed at
    ``dps`` decimal digits (Dong et al. 2021 §2, eq. (1); skip connections §3).

    Raises:
        AttentionInputError: bad shapes, non-finite input, or an all-zero X along the way.
    """
    x0 = np.asarray(X0, dtype=np.float64)
    if x0.ndim != 2 or x0.size == 0 or not np.isfinite(x0).all():
        raise AttentionInputError("attention_stack_residuals: X0 must be a finite non-empty 2-D array")
    with mpmath.workdps(dps):
        X = _mp_matrix(x0)
        out = [relative_residual(X)]
        for Wq, Wk, Wv in weights:
            wq, wk, wv = (np.asarray(w, dtype=np.float64) for w in (Wq, Wk, Wv))
            if not (wq.shape[0] == wk.shape[0] == wv.shape[0] == x0.shape[1] == wv.shape[1]
                    and wq.shape[1] == wk.shape[1]) or not all(np.isfinite(w).all() for w in (wq, wk, wv)):
                raise AttentionInputError("attention_stack_residuals: weight shapes do not fit X or are not finite")
            Qm, Km = X * _mp_matrix(wq), X * _mp_matrix(wk)
            s = 1 / mpmath.sqrt(wq.shape[1])
            N = X.rows
            P = mpmath.matrix(N, N)
            for i in range(N):
                z = [mpmath.fsum(Qm[i, c] * Km[j, c] for c in range(Qm.cols)) * s for j in range(N)]
                mx = max(z)
                e = [mpmath.exp(v - mx) for v in z]
                tot = mpmath.fsum(e)
                for j in range(N):
                    P[i, j] = e[j] / tot
            Y = P * X * _mp_matrix(wv)
            X = X + Y if skip else Y
            out.append(relative_residual(X))
        return [+r for r in out]


def convergence_orders(residuals, *, below: float = 1e-3) -> list[float]:
    """Local convergence orders ``log r_{l+1} / log r_l`` for the layers where ``0 < r_l < below``
    (an order ``p`` means ``r_{l+1} ~ r_l^p``; doubly exponential decay with base 3 has ``p -> 3``,
    Dong et al. 2021 Theorem 2.2's exponent ``3^L``).

    Raises:
        AttentionInputError: ``below`` not in (0, 1).
    """
    if not (0 < below < 1):
        raise AttentionInputError(f"convergence_orders: below must be in (0, 1), got {below!r}")
    out = []
    for a, b in zip(residuals, residuals[1:], strict=False):
        if 0 < a < below and b > 0:
            out.append(float(mpmath.log(b) / mpmath.log(a)))
    return out


def random_stack(rng: np.random.Generator, L: int, D: int, dk: int, scale: float) -> list:
    """``L`` layers of Gaussian weights with entries ``N(0, scale^2 / D)`` (``Wv``: ``D x D``).

    Raises:
        AttentionInputError: non-positive sizes or scale.
    """
    if min(L, D, dk) < 1 or not (scale > 0 and math.isfinite(scale)):
        raise AttentionInputError("random_stack: L, D, dk must be >= 1 and scale > 0")
    g = lambda *s: rng.standard_normal(s) * scale / math.sqrt(D)  # noqa: E731
    return [(g(D, dk), g(D, dk), g(D, D)) for _ in range(L)]
