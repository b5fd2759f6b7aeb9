"""Rank of attention matrices: numerical (SVD with a tolerance), exact (rational and
Laurent-polynomial arithmetic) and certified (arb determinants of a pivoted minor).

Which to use:

- a float64 matrix as stored: :func:`exact_rank` (its exact rational value) or
  :func:`certified_singular_value_count` (how many singular values exceed a tolerance, exactly);
  :func:`numerical_rank` is the float64 SVD count NumPy's ``matrix_rank`` gives;
- a product ``Q K^T``: :func:`exact_product_rank`;
- softmax of integer logits at a transcendental scale: :func:`exact_softmax_rank`,
  :func:`exact_exp_sum_rank`, :func:`softmax_log_ratio_rank` (ranks over ``Q(t)``,
  :func:`poly_matrix_rank`);
- a real matrix known only through arb enclosures: :func:`certified_rank_at_least`.

Ranks and determinants are dimensionless counts and exact numbers; inputs are validated with
:func:`attention_claims.maths.as_array` and converted with :mod:`attention_claims.maths.exact`.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from flint import arb, arb_mat, fmpq, fmpq_mat

from .arrays import AttentionInputError, as_array, torch
from .attention import resolve_mask
from .exact import certified_sign, fmpq_matrix, fmpz_matrix, integer_entries, precision, to_fmpq, to_fraction


def default_rank_tolerance(sigma: np.ndarray, shape: tuple[int, int], eps: float) -> float:
    """``sigma_max * max(N, M) * eps``: NumPy's ``matrix_rank`` default (numpy.linalg docs,
    after Press et al., Numerical Recipes, 2nd ed., §2.6). ``eps`` is the machine epsilon
    of the dtype the matrix was computed in."""
    return float(sigma[0]) * max(shape) * eps if sigma.size else 0.0


def numerical_rank(A, *, eps: float | None = None, tol: float | None = None) -> tuple[int, float]:
    """Numerical rank: the number of singular values of ``A (N, M)`` (float64) above ``tol``.

    ``tol`` defaults to :func:`default_rank_tolerance` with ``eps`` (default: float64's), the
    ``max(N, M) * eps * sigma_1`` of NumPy's ``matrix_rank`` (after Press et al., *Numerical Recipes*,
    2nd ed., §2.6). Returns ``(rank, tol)``: a scalar count and the threshold in the units of ``A``. This is
    *not* the exact rank (see :func:`exact_rank`).

    Raises:
        AttentionInputError: ``A`` is not a non-empty finite 2-D array.
    """
    a = as_array(A, "A")
    s = np.linalg.svd(a, compute_uv=False)
    if tol is None:
        tol = default_rank_tolerance(s, a.shape, np.finfo(np.float64).eps if eps is None else eps)
    return int(np.sum(s > tol)), float(tol)


def _laurent_rows(exps, coeffs=None):
    """Rows of fmpz_poly: entry (i, j) = sum_l coeffs[i][j][l] * t^(exps[i][j][l] - min_i).

    ``exps[i][j]`` is a list of integer exponents (empty list: the entry is 0)."""
    from flint import fmpz_poly

    rows = []
    for i, row in enumerate(exps):
        allx = [e for entry in row for e in entry]
        lo = min(allx) if allx else 0
        out = []
        for j, entry in enumerate(row):
            c = [0] * ((max(entry) - lo + 1) if entry else 1)
            for pos, e in enumerate(entry):
                c[e - lo] += 1 if coeffs is None else int(coeffs[i][j][pos])
            out.append(fmpz_poly(c))
        rows.append(out)
    return rows


def poly_matrix_rank(rows) -> int:
    """Rank over the field Q(t) of an ``(n, m)`` matrix of integer polynomials (python-flint ``fmpz_poly``),
    given as ``rows``: ``n`` lists of ``m`` polynomials. Returns a scalar ``int``.

    Fraction-free Gaussian elimination (Bareiss 1968, "Sylvester's identity and multistep
    integer-preserving Gaussian elimination", Math. Comp. 22), with row pivoting and
    skipped columns; every division is exact (checked).

    Raises:
        ArithmeticError: a Bareiss division left a remainder (a bug; never expected).
    """
    from flint import fmpz_poly

    M = [list(r) for r in rows]
    n = len(M)
    m = len(M[0]) if n else 0
    r, prev = 0, fmpz_poly(1)
    for c in range(m):
        piv = next((i for i in range(r, n) if M[i][c] != 0), None)
        if piv is None:
            continue
        M[r], M[piv] = M[piv], M[r]
        for i in range(r + 1, n):
            for j in range(c + 1, m):
                q, rem = divmod(M[r][c] * M[i][j] - M[i][c] * M[r][j], prev)
                if rem != 0:
                    raise ArithmeticError("poly_matrix_rank: inexact Bareiss division")
                M[i][j] = q
            M[i][c] = fmpz_poly(0)
        prev = M[r][c]
        r += 1
        if r == n:
            break
    return r


def exact_softmax_rank(M_int, mask: torch.Tensor | str | None = None) -> int:
    """Exact real rank of ``softmax(mask(M * s))`` for an integer ``(N, L)`` logit matrix ``M`` and
    *any* scale ``s`` with ``e^s`` transcendental (e.g. ``s = 1/sqrt(d)``, d a positive integer).

    Row ``i`` is ``t^{M_ij} / sum_l t^{M_il}`` with ``t = e^s``; scaling a row by its positive sum
    does not change the rank, so the rank equals the rank over ``Q(t)`` of ``[t^{M_ij}]`` (masked
    entries 0): a minor vanishes at a transcendental ``t`` iff it is the zero polynomial
    (Lindemann–Weierstrass: ``e^a`` is transcendental for algebraic ``a != 0``). Computed with
    :func:`poly_matrix_rank`. Sources: softmax as in Vaswani et al. 2017 eq. (1).

    Raises:
        AttentionInputError: ``M`` not a non-empty finite 2-D integer array, or a bad mask (see
            :func:`attention_claims.maths.resolve_mask`).
    """
    a = as_array(M_int, "M", integer=True)
    N, L = a.shape
    keep = resolve_mask(mask, N, L).cpu().numpy()
    exps = [[[int(a[i, j])] if keep[i, j] else [] for j in range(L)] for i in range(N)]
    return poly_matrix_rank(_laurent_rows(exps))


def exact_exp_sum_rank(exps, coeffs) -> int:
    """Exact real rank of the ``(n, m)`` matrix with entries ``sum_l coeffs[i][j][l] * e^(exps[i][j][l])``
    for integer exponents and integer coefficients (e.g. ``phi(q_i) . phi(k_j)`` for the feature maps
    exp and elu+1 at integer inputs). Same argument as :func:`exact_softmax_rank` with ``t = e``
    (``e`` is transcendental, Hermite 1873, so a polynomial identity in ``t`` decides the rank).

    Shapes: ``exps`` and ``coeffs`` are nested lists ``(n, m)`` of equal-length lists of ints (one
    exponent per coefficient). Returns a scalar ``int``.

    Raises:
        AttentionInputError: ragged input.
    """
    if len(exps) != len(coeffs) or any(len(a) != len(b) for a, b in zip(exps, coeffs, strict=True)):
        raise AttentionInputError("exact_exp_sum_rank: exps and coeffs must have the same shape")
    for i, (a, b) in enumerate(zip(exps, coeffs, strict=True)):
        for j, (x, y) in enumerate(zip(a, b, strict=True)):
            if len(x) != len(y):
                raise AttentionInputError(f"exact_exp_sum_rank: entry ({i}, {j}) has {len(x)} exponents but "
                                          f"{len(y)} coefficients")
    return poly_matrix_rank(_laurent_rows(exps, coeffs))


def softmax_log_ratio_rank(M_int) -> int:
    """For a positive row-stochastic ``P (N, L)`` with ``P_ij ∝ 2^(M_ij)`` (integer ``M (N, L)``): the rank of
    the ``(N, L - 1)`` log-ratio matrix ``D_ij = log(P_ij / P_i0)`` divided by ``ln 2``, i.e. of
    ``M_ij - M_i0`` (columns ``j >= 1``), computed exactly; a scalar ``int``.

    ``P = softmax(S)`` with ``rank(S) <= r`` iff ``rank(D) <= r``: ``S`` must equal ``log P`` plus
    a per-row constant, the column differences of ``S`` are those of ``log P`` (so
    ``rank S >= rank D``), and the choice ``S = log P - log P_{:,0} 1^T`` attains ``rank D``
    (its first column is 0). Used for the low-rank bottleneck (Bhojanapalli et al. 2020, Thm 1).

    Raises:
        AttentionInputError: ``M`` not a non-empty finite 2-D integer array, or fewer than 2 columns.
    """
    a = as_array(M_int, "M", integer=True)
    if a.shape[1] < 2:
        raise AttentionInputError(f"M: need at least 2 columns (keys), got shape {a.shape}")
    return exact_rank(a[:, 1:] - a[:, :1])


def certified_singular_value_count(A, tol: float) -> int | None:
    """The exact number of singular values of the float64 matrix ``A (N, M)`` (as stored) that exceed
    ``tol`` (a scalar in the units of ``A``), or ``None`` if a zero pivot prevents the certificate.

    ``sigma_i > tol`` iff ``lambda_i(A^T A - tol^2 I) > 0``; the count of positive eigenvalues is
    the count of positive pivots of a symmetric Gaussian elimination (Sylvester's law of inertia),
    done in exact rational arithmetic (python-flint ``fmpq``) from the exact dyadic values.

    Raises:
        AttentionInputError: ``A`` not a non-empty finite 2-D array, or ``tol`` not finite and ``>= 0``.
    """
    a = as_array(A, "A")
    if not (0 <= tol < float("inf")):
        raise AttentionInputError(f"tol: must be finite and >= 0, got {tol!r}")
    n = a.shape[1]
    cols = [[to_fmpq(v) for v in a[:, j]] for j in range(n)]
    t2 = to_fmpq(tol) ** 2
    G = [[sum((x * y for x, y in zip(cols[i], cols[j], strict=True)), fmpq(0)) - (t2 if i == j else 0)
          for j in range(n)] for i in range(n)]
    positive = 0
    for k in range(n):
        p = G[k][k]
        if p == 0:
            return None
        if p > 0:
            positive += 1
        for i in range(k + 1, n):
            f = G[i][k] / p
            if f != 0:
                for j in range(k + 1, n):
                    G[i][j] -= f * G[k][j]
    return positive


def certify_nonzero_det(build, *, start_bits: int = 128, max_bits: int = 4096) -> tuple[bool, arb, int]:
    """Try to certify ``det(build()) != 0`` by raising precision.

    ``build`` is a callable returning a square arb matrix ``(k, k)`` at the current precision (it is
    called once per precision, ``start_bits`` doubling up to ``max_bits``). Returns
    ``(certified, det, bits)``: ``certified`` is ``True`` when the determinant's enclosure (a scalar
    ``arb``) excludes 0 at ``bits`` bits, some precision up to ``max_bits``; otherwise ``False`` with the
    last enclosure. The determinant's source: Arb's ``arb_mat_det`` (Johansson 2017, "Arb: efficient
    arbitrary-precision midpoint-radius interval arithmetic", IEEE Trans. Comput. 66(8)).

    Raises:
        ValueError: ``build()`` returns a non-square matrix (from python-flint).
    """
    bits = start_bits
    det = arb(0)
    while bits <= max_bits:
        with precision(bits):
            det = build().det()
            if certified_sign(det) != 0:
                return True, det, bits
        bits *= 2
    return False, det, bits // 2


def pivot_indices(A: np.ndarray, k: int) -> tuple[list[int], list[int]]:
    """Rows and columns of a well-conditioned ``k x k`` submatrix of ``A`` (float64 guess).

    Uses column-pivoted QR twice (Golub & Van Loan, Matrix Computations, 4th ed., §5.4.2):
    on ``A`` for the columns, then on the chosen columns' transpose for the rows. Only a
    guess: the minor is certified separately.
    """
    import scipy.linalg

    _, _, pc = scipy.linalg.qr(A, pivoting=True, mode="economic")
    cols = sorted(pc[:k].tolist())
    _, _, pr = scipy.linalg.qr(A[:, cols].T, pivoting=True, mode="economic")
    rows = sorted(pr[:k].tolist())
    return rows, cols


def certified_rank_at_least(A_builder, A_float: np.ndarray, k: int, **kw) -> tuple[bool, dict]:
    """Certify ``rank(A) >= k`` by a ``k x k`` minor whose determinant excludes 0.

    ``A_builder`` returns the full arb matrix at the current precision; ``A_float`` is a
    float64 approximation used only to choose the minor.
    Returns ``(certified, info)`` with the rows, columns, determinant enclosure and bits.
    """
    rows, cols = pivot_indices(np.asarray(A_float, dtype=np.float64), k)

    def minor():
        A = A_builder()
        return arb_mat(k, k, [A[i, j] for i in rows for j in cols])

    ok, det, bits = certify_nonzero_det(minor, **kw)
    return ok, {"rows": rows, "cols": cols, "det": str(det), "bits": bits}


def _flint_matrix(x, *, square: bool = False):
    """``x`` exactly as an ``fmpz_mat`` when it is an integer array (read as Python ints, exact at
    any size) or a float64 array of integers below ``2^62`` (fraction-free elimination is faster),
    else as an ``fmpq_mat``.

    Raises:
        AttentionInputError: ``x`` is not a non-empty finite 2-D array (square when asked).
    """
    if integer_entries(x, "matrix", square=square) is not None:
        return fmpz_matrix(x)
    a = as_array(x, "matrix", square=square)
    if np.all(a == np.round(a)) and np.all(np.abs(a) < 2**62):
        return fmpz_matrix(a)
    return fmpq_matrix(a)


def exact_rank(M) -> int:
    """Exact rank of an integer or rational ``(n, m)`` matrix (python-flint ``fmpz_mat``/``fmpq_mat``).

    Float64 input is converted exactly to rationals (every float64 is a dyadic rational).

    Raises:
        AttentionInputError: ``M`` is not a non-empty finite 2-D array.
    """
    return _flint_matrix(M).rank()


def exact_det(M) -> Fraction:
    """Exact determinant of a square integer or float64 ``(n, n)`` matrix (its exact rational
    value; an integer matrix gives an integral ``Fraction``).

    Raises:
        AttentionInputError: ``M`` is not a non-empty finite square 2-D array.
    """
    return to_fraction(fmpq(_flint_matrix(M, square=True).det()))


def exact_product_rank(Q, K) -> int:
    """Exact rank of ``Q K^T`` for float64 (or integer) ``Q (N, d)``, ``K (M, d)``, from their exact
    rational values.

    Raises:
        AttentionInputError: ``Q`` or ``K`` not a non-empty finite 2-D array, or head dimensions differ.
    """
    q, k = fmpq_matrix(Q, "Q"), fmpq_matrix(K, "K")
    if q.ncols() != k.ncols():
        raise AttentionInputError(f"Q, K: head dimensions differ ({q.ncols()} vs {k.ncols()})")
    return (q * k.transpose()).rank()


def cr_factorization(W):
    """Exact column-row factorisation ``W = C R`` of a rational (float64 or integer) ``W (m, n)`` of
    rank ``r``: ``C (m, r)`` the pivot columns of ``W``, ``R (r, n)`` the non-zero rows of its
    reduced row echelon form (Strang, "Linear Algebra for Everyone", §1.4). Both are
    ``flint.fmpq_mat``; ``r = 0`` gives empty factors. This is ``Delta W = B A`` with inner
    dimension exactly the rank (003 表 11.3.3).

    Raises:
        AttentionInputError: empty or non-finite input.
    """
    w = fmpq_matrix(W, "W")
    rref, r = w.rref()
    m, n = w.nrows(), w.ncols()
    pivots = [next(j for j in range(n) if rref[i, j] != 0) for i in range(r)]
    C = fmpq_mat(m, r, [w[i, j] for i in range(m) for j in pivots])
    R = fmpq_mat(r, n, [rref[i, j] for i in range(r) for j in range(n)])
    return C, R
