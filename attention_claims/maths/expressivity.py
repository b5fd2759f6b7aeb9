"""Exact constructions for claims that tie rank to "expressive power" (表达能力).

Two precise senses of "a lower rank expresses less", and one of "a full-rank causal matrix
expresses more", all decided in exact integer arithmetic (python-flint ``fmpz_mat``):

- row redundancy (000 "1. 什么是低秩问题"): a rank-r matrix with n rows has exactly n - r rows
  that are combinations of the others (:func:`row_redundancy`);
- the number of free parameters: the n x m matrices of rank <= r form a variety of dimension
  r(n + m - r) (Harris, "Algebraic Geometry: A First Course", 1992, Lecture 12, determinantal
  varieties: codimension (n - r)(m - r)), certified at a point by the rank of the Jacobian of
  (A, B) -> A B^T and by the r^2 directions (A X, -B X^T) its kernel always contains
  (:func:`factorisation_dimension_bounds`);
- which causal attention patterns a head of dimension d can produce (002 "低秩问题"): a
  positive lower-triangular row-stochastic P is ``softmax(mask(Q K^T / sqrt d))`` iff its
  log-ratios ``log(P_ij / P_i0)`` (j <= i) agree with ``q_i . (k_j - k_0) / sqrt d``, a matrix
  of rank <= d (:func:`causal_realisation`, :func:`inexpressible_causal_pattern`,
  :func:`certify_inexpressible`).

Patterns are given by integer exponents ``M (N, N)``: ``P_ij = e^{M_ij} / sum_{l<=i} e^{M_il}``
for ``j <= i`` and 0 above the diagonal (entries of ``M`` above the diagonal are ignored), so
log-ratios are the integers ``M_ij - M_i0``. All quantities are dimensionless.
"""

from __future__ import annotations

import numpy as np

from .arrays import AttentionInputError, as_array, as_int
from .rank import exact_det, exact_rank


def _int_matrix(x, name: str, *, square: bool = False) -> np.ndarray:
    """:func:`attention_claims.maths.as_array` with integer entries, bounded so that the int64
    products formed here (Jacobians, ``Q K^T``) stay exact, as an int64 array."""
    a = as_array(x, name, integer=True, square=square)
    if np.abs(a).max() >= 2**31:
        raise AttentionInputError(f"{name}: entries must be below 2^31 in size (int64 products stay exact)")
    return a.astype(np.int64)


# -- row redundancy -------------------------------------------------------------------------------

def row_redundancy(M) -> tuple[list[int], list[int]]:
    """Split the rows of an integer matrix ``M (n, m)`` into a maximal independent set (kept
    greedily, first to last) and the redundant rest, and confirm that every redundant row lies
    in the span of the kept ones (exact ranks over Q).

    Returns ``(kept, redundant)`` as lists of row indices; ``len(kept)`` is the rank.

    Raises:
        AttentionInputError: ``M`` is empty, not 2-D or not an integer matrix.
        ArithmeticError: a redundant row is outside the span of the kept rows (impossible for a
            greedy choice; a bug if it happens).
    """
    a = _int_matrix(M, "M")
    kept: list[int] = []
    for i in range(a.shape[0]):
        if exact_rank(a[kept + [i]]) == len(kept) + 1:
            kept.append(i)
    redundant = [i for i in range(a.shape[0]) if i not in kept]
    for i in redundant:
        if exact_rank(a[kept + [i]]) != len(kept):
            raise ArithmeticError(f"row_redundancy: row {i} is not in the span of rows {kept}")
    return kept, redundant


# -- dimension of the rank <= r matrices ----------------------------------------------------------

def factorisation_jacobian(A, B) -> np.ndarray:
    """Jacobian of ``(A, B) -> A B^T`` at integer ``A (n, r)``, ``B (m, r)``: an integer matrix of
    shape ``(n m, (n + m) r)``; row ``i m + j`` is ``d(A B^T)_ij``, columns are ``vec(A)`` then
    ``vec(B)`` (row-major). ``d(A B^T)_ij / dA_ab = [i = a] B_jb``, ``/ dB_ab = [j = a] A_ib``.

    Raises:
        AttentionInputError: non-integer input, or ``A`` and ``B`` with different column counts.
    """
    a, b = _int_matrix(A, "A"), _int_matrix(B, "B")
    if a.shape[1] != b.shape[1]:
        raise AttentionInputError(f"A, B: column counts differ ({a.shape[1]} vs {b.shape[1]})")
    n, r = a.shape
    m = b.shape[0]
    J = np.zeros((n * m, (n + m) * r), dtype=np.int64)
    for i in range(n):
        for j in range(m):
            J[i * m + j, i * r:(i + 1) * r] = b[j]
            J[i * m + j, n * r + j * r:n * r + (j + 1) * r] = a[i]
    return J


def gauge_directions(A, B) -> np.ndarray:
    """The ``r^2`` tangent directions ``(dA, dB) = (A E_kl, -B E_lk)`` (``E_kl`` the matrix units) for
    integer ``A (n, r)`` and ``B (m, r)``, as an int64 NumPy array of shape ``(r^2, (n + m) r)`` in the
    column order of :func:`factorisation_jacobian`. Each is in the Jacobian's kernel at every point:
    ``A X B^T - A (B X^T)^T = 0`` (the action of GL(r) on factorisations, ``(A, B) -> (A G, B G^(-T))``).

    Raises:
        AttentionInputError: as :func:`factorisation_jacobian`.
    """
    a, b = _int_matrix(A, "A"), _int_matrix(B, "B")
    if a.shape[1] != b.shape[1]:
        raise AttentionInputError(f"A, B: column counts differ ({a.shape[1]} vs {b.shape[1]})")
    r = a.shape[1]
    out = []
    for k in range(r):
        for l_ in range(r):
            X = np.zeros((r, r), dtype=np.int64)
            X[k, l_] = 1
            out.append(np.concatenate([(a @ X).ravel(), (-b @ X.T).ravel()]))
    return np.array(out, dtype=np.int64).reshape(r * r, (a.shape[0] + b.shape[0]) * r)


def factorisation_dimension_bounds(A, B) -> tuple[int, int]:
    """Certified ``(lower, upper)`` bounds on the dimension of the variety of ``n x m`` matrices of
    rank ``<= r``, from one integer point ``A (n, r)``, ``B (m, r)`` of ``(A, B) -> A B^T``.

    The variety is the closure of the image of the map, and its dimension is the rank of the
    Jacobian at a general point (characteristic 0: generic smoothness, Hartshorne, "Algebraic
    Geometry", 1977, III Cor. 10.7; the map is defined over Q, so real and complex dimensions
    agree). ``lower`` is the exact Jacobian rank here (the
    rank at a general point is at least the rank at any point); ``upper`` is ``(n + m) r`` minus the
    exact rank of :func:`gauge_directions` here (those directions are kernel vectors at every
    point, and independent at a general point whenever they are here). At a general point both
    equal ``r (n + m - r)`` (Harris 1992, Lecture 12).

    Raises:
        AttentionInputError: as :func:`factorisation_jacobian`.
        ArithmeticError: a gauge direction is not in the Jacobian's kernel (a bug).
    """
    J = factorisation_jacobian(A, B)
    G = gauge_directions(A, B)
    if G.size and np.any(J @ G.T != 0):
        raise ArithmeticError("factorisation_dimension_bounds: a gauge direction is not in the kernel")
    lower = exact_rank(J) if J.shape[1] else 0
    kernel = exact_rank(G) if G.size else 0
    return lower, J.shape[1] - kernel


# -- causal softmax patterns reachable with head dimension d ---------------------------------------

def causal_log_ratios(M) -> np.ndarray:
    """Integer log-ratios ``L_ij = log(P_ij / P_i0) = M_ij - M_i0`` of the pattern with exponents
    ``M (N, N)`` for ``j <= i``; entries above the diagonal (unspecified) are set to 0.

    Raises:
        AttentionInputError: ``M`` not a square integer matrix.
    """
    a = _int_matrix(M, "M", square=True)
    L = a - a[:, :1]
    return np.tril(L)


def causal_realisation(M, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer ``Q, K (N, d)`` with ``softmax(mask(Q K^T))`` (scale 1; for the scale ``1/sqrt d``
    use ``sqrt(d) Q``) equal to the pattern ``P`` with exponents ``M``, for ``d >= N - 1``:
    ``k_0 = 0``, ``k_j = e_j`` (``j = 1..N-1``) and ``q_i = (L_i1, ..., L_i,N-1, 0, ...)``, so that
    ``(Q K^T)_ij - (Q K^T)_i0 = L_ij`` for ``j <= i``; a masked softmax row depends only on these
    differences (Vaswani et al. 2017 eq. (1) with the causal mask of §3.2.3).

    Raises:
        AttentionInputError: ``M`` not a square integer matrix, or ``d < N - 1`` (then some
            patterns have no realisation: :func:`inexpressible_causal_pattern`).
    """
    L = causal_log_ratios(M)
    N = L.shape[0]
    d = as_int(d, "d", lo=max(1, N - 1))
    Q = np.zeros((N, d), dtype=np.int64)
    K = np.zeros((N, d), dtype=np.int64)
    Q[:, :N - 1] = L[:, 1:]
    for j in range(1, N):
        K[j, j - 1] = 1
    return Q, K


def realises(Q, K, M) -> bool:
    """Whether integer ``Q (N, d)``, ``K (N, d)`` reproduce every log-ratio of the causal pattern
    ``M (N, N)`` (integer exponents, nats): ``(Q K^T)_ij - (Q K^T)_i0 = M_ij - M_i0`` for all ``j <= i``
    (exact integers), i.e. whether ``softmax(mask(Q K^T))`` is exactly ``P`` (softmax of ``M`` under the
    causal mask). Returns a scalar ``bool``.

    Raises:
        AttentionInputError: non-integer input or mismatched shapes.
    """
    L = causal_log_ratios(M)
    q, k = _int_matrix(Q, "Q"), _int_matrix(K, "K")
    if q.shape != k.shape or q.shape[0] != L.shape[0]:
        raise AttentionInputError(f"Q, K, M: shapes {q.shape}, {k.shape}, {L.shape} do not fit")
    Z = q @ k.T
    return bool(np.array_equal(np.tril(Z - Z[:, :1]), L))


def inexpressible_causal_pattern(N: int, d: int) -> tuple[np.ndarray, list[int], list[int], str]:
    """A pattern (integer exponents ``M (N, N)``) that no causal softmax head of dimension ``d``
    produces, with the rows and columns of its certificate block (see :func:`certify_inexpressible`).

    - ``N >= 2d + 2`` ("open"): ``M_{d+1+t, 1+t} = 1`` (t = 0..d), else 0. The block of
      log-ratios on rows ``d+1..2d+1``, columns ``1..d+1`` is fully specified (every column index
      is at most every row index) and equals the identity: an open set of patterns around this
      one is unreachable as well (the determinant is continuous).
    - ``d + 2 <= N < 2d + 2`` ("diagonal"): ``M_ii = 1`` for ``i >= 1``, else 0 (each token attends
      e times more to itself than to each earlier token). On rows = columns ``1..d+1`` the specified
      (lower) part of the block is the identity's, so every completion is upper unitriangular.

    Raises:
        AttentionInputError: ``d < 1`` or ``N < d + 2`` (for ``N <= d + 1`` every pattern is
            reachable: :func:`causal_realisation`).
    """
    d = as_int(d, "d")
    N = as_int(N, "N", lo=d + 2)
    M = np.zeros((N, N), dtype=np.int64)
    if N >= 2 * d + 2:
        rows, cols = list(range(d + 1, 2 * d + 2)), list(range(1, d + 2))
        for r_, c_ in zip(rows, cols, strict=True):
            M[r_, c_] = 1
        return M, rows, cols, "open"
    for i in range(1, N):
        M[i, i] = 1
    idx = list(range(1, d + 2))
    return M, idx, idx, "diagonal"


def certify_inexpressible(M, d: int, rows: list[int], cols: list[int]) -> int | None:
    """Exact certificate that the pattern ``M`` is not ``softmax(mask(Q K^T / sqrt d))`` for any
    real ``Q, K (N, d)``, or ``None`` when this block gives none.

    If it were, the ``(d+1) x (d+1)`` matrix ``C_ab = q_{rows[a]} . (k_{cols[b]} - k_0) / sqrt d``
    would have rank ``<= d`` (a product through dimension d), so ``det C = 0``; and ``C`` would
    agree with the log-ratios ``L`` wherever ``cols[b] <= rows[a]``. Returns the non-zero integer
    that ``det`` takes for *every* such completion, which is a contradiction:

    - every cell specified (``max(cols) <= min(rows)``): the exact determinant of the block of ``L``;
    - ``rows == cols`` with zero strictly-lower part: every completion is upper triangular, with
      determinant the product of the diagonal of ``L``.

    Raises:
        AttentionInputError: bad pattern, ``len(rows) != len(cols) != d + 1``, column 0 used, or an
            index out of range.
    """
    L = causal_log_ratios(M)
    N = L.shape[0]
    if not (len(rows) == len(cols) == d + 1):
        raise AttentionInputError(f"certify_inexpressible: need d + 1 = {d + 1} rows and columns")
    if min(cols) < 1 or max(rows + cols) >= N or min(rows) < 0:
        raise AttentionInputError("certify_inexpressible: indices outside 0..N-1, or column 0 (the reference key)")
    block = L[np.ix_(rows, cols)]
    if max(cols) <= min(rows):
        det = int(exact_det(block))
        return det if det != 0 else None
    if list(rows) == list(cols) and not np.any(np.tril(block, -1)):
        det = int(np.prod([int(v) for v in np.diag(block)]))
        return det if det != 0 else None
    return None
