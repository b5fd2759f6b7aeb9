"""Exact and certified references: python-flint arb intervals, exact integer rank, mpmath.

A float64 number is a dyadic rational, so a NumPy float64 array converts to arb balls of
radius zero *exactly*; everything downstream (``1/sqrt(d)``, ``exp``, the row sums, the
determinant) is then an interval that provably contains the true real value
(Johansson 2017, "Arb: efficient arbitrary-precision midpoint-radius interval
arithmetic", IEEE Trans. Computers 66(8)). An interval that excludes 0 *certifies* that
the exact quantity is non-zero.

Floating-point dtype facts (smallest subnormals) are from IEEE 754-2019 §3.3 (binary16,
binary32, binary64) and the bfloat16 format (8 exponent bits, 7 fraction bits).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

import mpmath
import numpy as np
from flint import arb, arb_mat, ctx, fmpq, fmpq_mat, fmpz_mat

from .attention import AttentionInputError

#: smallest positive subnormal of each dtype, as a power of two exponent
SMALLEST_SUBNORMAL_LOG2 = {"float64": -1074, "float32": -149, "bfloat16": -133, "float16": -24}
#: machine epsilon (spacing of floats at 1) of each dtype, log2
EPS_LOG2 = {"float64": -52, "float32": -23, "bfloat16": -7, "float16": -10}


class CertificationError(RuntimeError):
    """Arbitrary precision up to the cap was not enough to decide a sign."""


@contextlib.contextmanager
def precision(bits: int) -> Iterator[None]:
    """Temporarily set python-flint's working precision (bits)."""
    old = ctx.prec
    ctx.prec = bits
    try:
        yield
    finally:
        ctx.prec = old


def _finite_2d(x, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 2 or a.size == 0:
        raise AttentionInputError(f"{name}: expected a non-empty 2-D array, got shape {a.shape}")
    if not np.isfinite(a).all():
        raise AttentionInputError(f"{name}: contains NaN or Inf")
    return a


def arb_matrix(x) -> arb_mat:
    """Exact conversion of a float64 ``(n, m)`` array to an arb matrix (radius 0)."""
    a = _finite_2d(x, "matrix")
    return arb_mat(a.shape[0], a.shape[1], [arb(float(v)) for v in a.ravel()])


def arb_logits(Q, K, scale: str | float = "sqrt_d") -> list[list[arb]]:
    """Certified enclosures of ``Q K^T * scale`` (``scale="sqrt_d"`` means ``1/sqrt(d)``).

    Returns a nested list ``(N, M)`` of arb balls. Source: 003 定义 11.24.
    """
    q, k = _finite_2d(Q, "Q"), _finite_2d(K, "K")
    if q.shape[1] != k.shape[1]:
        raise AttentionInputError(f"Q, K: head dimensions differ ({q.shape[1]} vs {k.shape[1]})")
    d = q.shape[1]
    s = 1 / arb(d).sqrt() if scale == "sqrt_d" else arb(float(scale))
    qa = [[arb(float(v)) for v in row] for row in q]
    ka = [[arb(float(v)) for v in row] for row in k]
    out = []
    for qi in qa:
        row = []
        for kj in ka:
            acc = arb(0)
            for a, b in zip(qi, kj, strict=True):
                acc += a * b
            row.append(acc * s)
        out.append(row)
    return out


def arb_softmax_attention(Q, K, *, causal: bool = False, scale: str | float = "sqrt_d") -> arb_mat:
    """Certified enclosure of the softmax attention matrix, ``(N, M)`` arb matrix.

    Each row is ``exp(z_ij - m_i) / sum_j exp(z_ij - m_i)`` over the allowed keys (``j <= i``
    when ``causal``), masked entries exactly 0. Uses the current flint precision.
    Source: Vaswani et al. 2017 eq. (1); 003 定义 11.24; 002 "低秩问题" for the mask.
    """
    z = arb_logits(Q, K, scale)
    n, m = len(z), len(z[0])
    A = arb_mat(n, m)
    for i in range(n):
        allowed = range(min(i + 1, m)) if causal else range(m)
        mid = max(float(z[i][j].mid()) for j in allowed)
        e = {j: (z[i][j] - mid).exp() for j in allowed}
        tot = sum(e.values(), arb(0))
        for j in allowed:
            A[i, j] = e[j] / tot
    return A


def certified_sign(x: arb) -> int:
    """``+1``/``-1`` if the ball excludes 0 on that side, ``0`` if it contains 0."""
    if x > 0:
        return 1
    if x < 0:
        return -1
    return 0


def certify_nonzero_det(build, *, start_bits: int = 128, max_bits: int = 4096) -> tuple[bool, arb, int]:
    """Try to certify ``det(build()) != 0`` by raising precision.

    ``build`` is a callable returning an arb matrix at the current precision.
    Returns ``(certified, det, bits)``: ``certified`` is ``True`` when the determinant's
    enclosure excludes 0 at some precision up to ``max_bits``.
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


def exact_rank(M) -> int:
    """Exact rank of an integer or rational matrix (python-flint ``fmpz_mat``/``fmpq_mat``).

    Float64 input is converted exactly to rationals (every float64 is a dyadic rational).

    Raises:
        AttentionInputError: for an empty or non-finite array.
    """
    a = _finite_2d(M, "matrix")
    if np.all(a == np.round(a)) and np.all(np.abs(a) < 2**62):
        return fmpz_mat(a.shape[0], a.shape[1], [int(v) for v in a.ravel()]).rank()
    vals = [fmpq(*float(v).as_integer_ratio()) for v in a.ravel()]
    return fmpq_mat(a.shape[0], a.shape[1], vals).rank()


def exact_product_rank(Q, K) -> int:
    """Exact rank of ``Q K^T`` for float64 (or integer) ``Q (N,d)``, ``K (M,d)``."""
    q, k = _finite_2d(Q, "Q"), _finite_2d(K, "K")
    to_q = lambda a: fmpq_mat(a.shape[0], a.shape[1], [fmpq(*float(v).as_integer_ratio()) for v in a.ravel()])  # noqa: E731
    return (to_q(q) * to_q(k).transpose()).rank()


def underflow_log_threshold(dtype: str) -> float:
    """``ln`` of the largest positive real that rounds to 0 in ``dtype`` (round-to-nearest).

    That is half the smallest subnormal, ``2^(e_min_sub - 1)``: a softmax weight below
    ``exp(threshold)`` is stored as exactly 0. IEEE 754-2019 §3.3, §4.3.
    """
    return (SMALLEST_SUBNORMAL_LOG2[dtype] - 1) * math.log(2)


def mp_softmax_entry(z_row, j: int, dps: int = 50) -> mpmath.mpf:
    """``softmax(z_row)_j`` in mpmath at ``dps`` decimal digits (exact float inputs)."""
    with mpmath.workdps(dps):
        zs = [mpmath.mpf(float(v)) for v in z_row]
        m = max(zs)
        tot = mpmath.fsum(mpmath.exp(v - m) for v in zs)
        return mpmath.exp(zs[j] - m) / tot


def certified_softmax_max_below(x, bound: float, *, prec: int = 128, chunk: int = 64) -> tuple[bool, arb]:
    """Try to certify ``max_j softmax(x)_j < bound`` for a logit vector ``x (N,)`` (float64, exact).

    ``max_j p_j = 1 / sum_j e^(x_j - max x)``, and every term is positive, so the sum over any
    subset of the terms is a lower bound of the full sum. Terms are added in arb (``prec`` bits),
    largest logits first, ``chunk`` at a time, until ``1 / partial`` is certified below ``bound``
    or every term is in: the cost is the number of terms needed, not ``N``.

    Returns ``(certified, upper)`` with ``upper`` an arb enclosure of ``1 / partial``, an upper bound
    of ``max_j p_j``.

    Raises:
        AttentionInputError: ``x`` empty, not 1-D or not finite, or ``bound`` not positive.
    """
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 1 or a.size == 0 or not np.isfinite(a).all():
        raise AttentionInputError(f"x: need a non-empty finite 1-D array, got shape {a.shape}")
    if not bound > 0:
        raise AttentionInputError(f"bound: must be positive, got {bound!r}")
    order = np.argsort(a)[::-1]
    m = arb(float(a[order[0]]))
    with precision(prec):
        partial = arb(0)
        for start in range(0, a.size, chunk):
            for j in order[start:start + chunk]:
                partial += (arb(float(a[j])) - m).exp()
            upper = 1 / partial
            if upper < bound:
                return True, upper
    return False, upper
