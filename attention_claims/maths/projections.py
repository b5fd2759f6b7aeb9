"""Random projections: Johnson-Lindenstrauss (Dasgupta-Gupta), Linformer's context mapping and
the textbook's version of it.

A projection ``P (k, d)`` maps ``R^d -> R^k``; Linformer projects the ``N`` keys and values to
``k`` rows with ``E, F (k, N)`` (Wang et al. 2020 eq. (7)); 003 定义 11.26 and 定理 11.26 state the
textbook's version. Probabilities and distortions are dimensionless.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np

from .arrays import AttentionInputError, as_array, positive_int
from .exact import fmpq_matrix, to_fraction


def chi2_two_sided_tail(k: int, eps, dps: int = 40) -> mpmath.mpf:
    """``Pr(| chi^2_k / k - 1 | > eps)``: the probability that a Gaussian random projection with
    ``N(0, 1/k)`` entries distorts one squared length by more than ``eps`` (exact, via the
    regularised incomplete gamma function at ``dps`` digits; Dasgupta & Gupta 2003 §2).

    Raises:
        AttentionInputError: ``k < 1`` or ``eps`` outside ``(0, 1)``.
    """
    k = positive_int(k, "k")
    if not (0 < float(eps) < 1):
        raise AttentionInputError(f"eps: must be in (0, 1), got {eps!r}")
    with mpmath.workdps(dps + 10):
        e = mpmath.mpf(eps)
        half = mpmath.mpf(k) / 2
        lower = mpmath.gammainc(half, 0, (1 - e) * k / 2, regularized=True)
        upper = mpmath.gammainc(half, (1 + e) * k / 2, mpmath.inf, regularized=True)
        return +(lower + upper)


def linformer_mixing(Q, K, E, F) -> tuple[np.ndarray, np.ndarray]:
    """Linformer's context mapping ``P_bar = softmax(Q (E K)^T / sqrt(d))`` ``(N, k)`` and the
    token-mixing matrix ``P_bar F`` ``(N, N)`` that multiplies ``V`` (Wang et al. 2020 eq. (7)),
    in float64. ``Q, K (N, d)``, ``E, F (k, N)``.

    Raises:
        AttentionInputError: bad shapes or non-finite input.
    """
    q, kk, e, f = as_array(Q, "Q"), as_array(K, "K"), as_array(E, "E"), as_array(F, "F")
    if q.shape != kk.shape or e.shape != f.shape or e.shape[1] != q.shape[0]:
        raise AttentionInputError(f"linformer_mixing: shapes Q {q.shape}, K {kk.shape}, E {e.shape}, F {f.shape}")
    z = q @ (e @ kk).T / math.sqrt(q.shape[1])
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    return p, p @ f


def doc_linformer(Q, K, V, k) -> np.ndarray:
    """``Q (K^T V / k)`` in float64, the approximation 003 定义 11.26 writes for Linformer
    (``(N, d) @ (d, d_v)``). ``k`` may be any positive number.

    Raises:
        AttentionInputError: bad shapes, non-finite input or ``k <= 0``.
    """
    q, kk, v = as_array(Q, "Q"), as_array(K, "K"), as_array(V, "V")
    if q.shape[1] != kk.shape[1] or kk.shape[0] != v.shape[0]:
        raise AttentionInputError(f"doc_linformer: shapes Q {q.shape}, K {kk.shape}, V {v.shape}")
    if not (isinstance(k, (int, float, Fraction)) and k > 0):
        raise AttentionInputError(f"k: must be a positive number, got {k!r}")
    return q @ (kk.T @ v / float(k))


def mp_row_line_distance(Y: mpmath.matrix, B: mpmath.matrix) -> mpmath.mpf:
    """``max_i min_{t real} |Y_i - t B_i|``: a lower bound, valid for every scalar ``t`` (so for
    every ``k`` in ``Q (K^T V / k)``, ``t = 1/k``), on both the spectral and the Frobenius norm
    of ``Y - t B`` (a matrix norm is at least the norm of any row). mpmath, current precision.

    Raises:
        AttentionInputError: shapes differ.
    """
    if (Y.rows, Y.cols) != (B.rows, B.cols):
        raise AttentionInputError(f"Y {Y.rows}x{Y.cols} and B {B.rows}x{B.cols} differ in shape")
    best = mpmath.mpf(0)
    for i in range(Y.rows):
        y = [Y[i, c] for c in range(Y.cols)]
        b = [B[i, c] for c in range(B.cols)]
        yy = mpmath.fsum(v * v for v in y)
        bb = mpmath.fsum(v * v for v in b)
        yb = mpmath.fsum(u * v for u, v in zip(y, b, strict=True))
        dist2 = yy - (yb * yb / bb if bb > 0 else 0)
        best = max(best, mpmath.sqrt(max(dist2, mpmath.mpf(0))))
    return best


def rademacher_gram_mean(k: int, d: int, variance: Fraction) -> list[list[Fraction]]:
    """Exact ``E[P^T P]`` ``(d, d)`` over all ``2^(k d)`` equally likely sign patterns of
    ``P (k, d)`` with entries ``+-sqrt(variance)``: ``(P^T P)_ab = variance * sum_r s_ra s_rb``
    (a random projection as in 003 定理 11.26's proof, where ``E[P^T P] = I_d`` needs
    ``variance = 1/k``). The sign sums are exact int64 counts; the mean is a ``Fraction``.
    Only for ``k d <= 12``.

    Raises:
        AttentionInputError: sizes not positive, ``k d > 12``, or ``variance < 0``.
    """
    k, d = positive_int(k, "k"), positive_int(d, "d")
    variance = Fraction(variance)
    if k * d > 12 or variance < 0:
        raise AttentionInputError(f"rademacher_gram_mean: need k d <= 12 and variance >= 0, got {k}, {d}, {variance}")
    signs = np.array(list(itertools.product((-1, 1), repeat=k * d)), dtype=np.int64).reshape(-1, k, d)
    total = np.einsum("pra,prb->ab", signs, signs)  # exact: |entries| <= k 2^(k d)
    count = signs.shape[0]
    return [[variance * int(v) / count for v in row] for row in total]


def identity_gap_lower_bound(P) -> tuple[Fraction, int]:
    """A certified lower bound on ``|P^T P - I_d|_2`` (spectral norm) for a float64 ``P (k, d)``,
    from the exact rational value of every entry (003 定理 11.26's proof claims
    ``P^T P ~ I_d`` for its JL map ``P: R^d -> R^k``).

    Returns ``(bound, rank)``: ``rank`` is the exact rank of ``G = P^T P`` (python-flint
    ``fmpq_mat``); ``bound`` is the largest of ``1`` when ``rank < d`` (a null vector ``v`` of
    ``G`` gives ``|(G - I) v| = |v|``) and ``|v^T G v / v^T v - 1|`` for the float64 top and
    bottom eigenvectors ``v`` of ``G`` rounded to rationals (Rayleigh quotients of the symmetric
    ``G - I`` lie in ``[-|G - I|_2, |G - I|_2]``: Horn & Johnson, Matrix Analysis, 2nd ed.,
    Thm 4.2.2), all in exact rational arithmetic.

    Raises:
        AttentionInputError: ``P`` not a non-empty finite 2-D array.
    """
    p = as_array(P, "P")
    d = p.shape[1]
    Pq = fmpq_matrix(p, "P")
    G = Pq.transpose() * Pq
    rank = G.rank()
    bound = Fraction(1) if rank < d else Fraction(0)
    _, vecs = np.linalg.eigh(p.T @ p)
    for v in (vecs[:, -1], vecs[:, 0]):
        vq = fmpq_matrix(v.reshape(-1, 1), "v")
        vv = (vq.transpose() * vq)[0, 0]
        if vv == 0:
            continue
        rq = (vq.transpose() * G * vq)[0, 0] / vv - 1
        bound = max(bound, abs(to_fraction(rq)))
    return bound, rank


#: unit roundoff of float64 (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §2.1)
_U = 2.0**-53


def pairwise_distortion_holds(X, Y, eps) -> tuple[bool, int]:
    """Whether every pair of rows ``i < j`` satisfies, exactly,

        (1 - eps) |x_i - x_j|^2 < |y_i - y_j|^2 < (1 + eps) |x_i - x_j|^2,

    the Johnson-Lindenstrauss distortion condition (003 定理 11.25; Dasgupta & Gupta 2003, Thm 2.1), for
    ``X (n, d)`` and ``Y (n, k)`` float64 (``Y`` the images ``P x_i`` as computed) and the exact value
    of the float ``eps``. The difference vectors are the float64 ones (``X[i] - X[j]`` as computed);
    their squared lengths are decided exactly.

    A floating-point filter decides most pairs: the computed sum of squares ``s`` of ``m`` terms satisfies
    ``|s - S| <= gamma_m S``, ``gamma_m = m u / (1 - m u)``, in any order of summation (Higham, 2nd ed.,
    eq. (3.5)), provided nothing underflows or overflows (every non-zero entry in ``[2^-500, 2^500]``).
    ``S`` is then enclosed by ``s (1 -+ g)``, ``g = 2 gamma_m + 2^-45`` (which also covers the rounding of
    the bounds), and a pair is decided when its two comparisons clear a further relative margin of
    ``2^-40`` (more than the ``<= 4u`` rounding of evaluating them). The remaining pairs are decided in
    exact rational arithmetic (``fractions.Fraction``).

    Returns ``(holds, exact_pairs)``: the decision and how many pairs needed exact arithmetic.

    Raises:
        AttentionInputError: not finite 2-D arrays, different numbers of rows, or ``eps`` not in (0, 1).
    """
    x, y = as_array(X, "X"), as_array(Y, "Y")
    if x.shape[0] != y.shape[0]:
        raise AttentionInputError(f"X, Y: different numbers of rows ({x.shape[0]} vs {y.shape[0]})")
    e = float(eps)
    if not 0 < e < 1:
        raise AttentionInputError(f"eps: must be in (0, 1), got {eps!r}")
    iu, ju = np.triu_indices(x.shape[0], 1)
    dx, dy = x[iu] - x[ju], y[iu] - y[ju]

    def bounds(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        m = a.shape[1]
        g = 2 * (m * _U / (1 - m * _U)) + 2.0**-45
        s = np.sum(a * a, axis=1)
        mag = np.abs(a)
        safe = np.all((mag == 0) | ((mag >= 2.0**-500) & (mag <= 2.0**500)), axis=1)
        return s * (1 - g), s * (1 + g), safe

    x_lo, x_hi, x_safe = bounds(dx)
    y_lo, y_hi, y_safe = bounds(dy)
    margin = 1 + 2.0**-40
    safe = x_safe & y_safe
    inside = safe & (y_lo > (1 - e) * x_hi * margin) & (y_hi * margin < (1 + e) * x_lo)
    outside = safe & ((y_hi * margin < (1 - e) * x_lo) | (y_lo > (1 + e) * x_hi * margin))
    if outside.any():
        return False, 0
    undecided = np.flatnonzero(~inside)
    ef = Fraction(e)
    for p in undecided:
        sx = sum(Fraction(v) ** 2 for v in dx[p].tolist())
        sy = sum(Fraction(v) ** 2 for v in dy[p].tolist())
        if not (1 - ef) * sx < sy < (1 + ef) * sx:
            return False, int(undecided.size)
    return True, int(undecided.size)
