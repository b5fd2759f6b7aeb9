"""Helpers for the claims of 003 (textbook §11.3, "注意力矩阵的低秩结构") that are checked in
``checks/test_textbook.py`` and ``checks/test_textbook_linformer.py``: exact operation counts,
chunked attention, mpmath references for attention and singular values, energy ratios of
power-law spectra, Gaussian-attention statistics, the document's own Linformer formula, random
projections (``E[P^T P]``, a certified lower bound on ``|P^T P - I|_2``), kernel feature maps,
LoRA-style attention increments.

Shapes follow :mod:`claims.attention`: ``Q, K (N, d)``, ``V (N, d_v)``; the attention matrix
is ``(N, N)``. All quantities are dimensionless; operation counts are numbers of scalar
operations. Every function validates its input and raises
:class:`claims.attention.AttentionInputError` with a message naming the argument.

Sources (per function below): 003 = ``../shared/seeds/003_a0ad15dda516ed1d.txt`` with its
section and numbered statement; Vaswani et al. 2017 ("Attention Is All You Need", §3.2.1
eq. (1)); Wang et al. 2020 (Linformer, arXiv:2006.04768, §4 eq. (7)); Katharopoulos et al.
2020 (arXiv:2006.16236, §3.2 eq. (4)-(6)); Choromanski et al. 2021 (Performer,
arXiv:2009.14794, Lemma 1); Hu et al. 2021 (LoRA, arXiv:2106.09685, §4.1 eq. (3));
Eckart & Young 1936 ("The approximation of one matrix by another of lower rank",
Psychometrika 1(3)); Horn & Johnson, Matrix Analysis (2nd ed., Thm 4.2.2, Rayleigh quotients);
the matmul flop convention ``2 m n p`` of ``torch.utils.flop_counter``.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np
import torch

from .attention import AttentionInputError, as_float64_array

# -- input validation ------------------------------------------------------------------------


_arr = as_float64_array



def _pos_int(v, name: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise AttentionInputError(f"{name}: must be a positive integer, got {v!r}")
    return int(v)


# -- operation counts (003 引言, 引理 11.38, 表 11.3.2, 引理 11.39) ------------------------------

COUNT_METHODS = ("standard", "linformer", "doc-linformer", "linear")


def _mm(m: int, n: int, p: int) -> int:
    """Flops of an ``(m, n) @ (n, p)`` product: ``2 m n p`` (one multiply and one add per term),
    the convention of ``torch.utils.flop_counter.FlopCounterMode``."""
    return 2 * m * n * p


def matmul_count(method: str, N: int, d: int, k: int | None = None, m: int | None = None) -> int:
    """Matmul flops (``2 m n p`` per product) of one attention head computed by ``method``:

    - ``standard``: ``softmax(Q K^T / sqrt(d)) V`` (003 定义 11.24; Vaswani et al. eq. (1)):
      ``Q K^T`` and ``A V``.
    - ``linformer``: ``softmax(Q (E K)^T / sqrt(d)) (F V)`` with ``E, F (k, N)`` (Wang et al.
      2020 eq. (7)): ``E K``, ``F V``, ``Q (E K)^T``, ``P_bar (F V)``.
    - ``doc-linformer``: ``Q (K^T V / k)``, the formula 003 定义 11.26 attributes to Linformer:
      ``K^T V`` and ``Q (.)``.
    - ``linear``: ``phi(Q) (phi(K)^T V)`` with an ``m``-dimensional feature map (003 表 11.3.2,
      Katharopoulos et al. eq. (5) without the normaliser): ``phi(K)^T V`` and ``phi(Q) (.)``.

    Raises:
        AttentionInputError: unknown method, a non-positive size, ``k`` missing for the
            Linformer methods or ``m`` missing for ``linear``.
    """
    N, d = _pos_int(N, "N"), _pos_int(d, "d")
    if method == "standard":
        return _mm(N, d, N) + _mm(N, N, d)
    if method in ("linformer", "doc-linformer"):
        k = _pos_int(k, "k")
        if method == "linformer":
            return _mm(k, N, d) + _mm(k, N, d) + _mm(N, d, k) + _mm(N, k, d)
        return _mm(d, N, d) + _mm(N, d, d)
    if method == "linear":
        m = _pos_int(m, "m")
        return _mm(m, N, d) + _mm(N, m, d)
    raise AttentionInputError(f"method: unknown {method!r} (one of {', '.join(COUNT_METHODS)})")


def op_count(method: str, N: int, d: int, k: int | None = None, m: int | None = None) -> int:
    """Exact number of scalar operations of one attention head by ``method`` (see
    :func:`matmul_count`): the matmul flops plus one operation per element for every
    elementwise step (scaling, row maximum, subtraction, ``exp``, row sum, division,
    the feature map; a row maximum or sum over ``n`` entries counts ``n - 1``).

    Raises:
        AttentionInputError: as :func:`matmul_count`.
    """
    mm = matmul_count(method, N, d, k, m)
    if method == "standard":
        n_cols = N
    elif method == "linformer":
        n_cols = k
    elif method == "doc-linformer":
        return mm + d * d  # the division by k of the d x d matrix K^T V
    else:  # linear: the feature map on Q and on K, one operation per entry
        return mm + 2 * N * m
    # softmax of an (N, n_cols) logit matrix: scale, max, subtract, exp, sum, divide
    return mm + N * n_cols + N * (n_cols - 1) + N * n_cols + N * n_cols + N * (n_cols - 1) + N * n_cols


def meta_matmul_flops(method: str, N: int, d: int, k: int | None = None, m: int | None = None) -> int:
    """The matmul flops of ``method`` as counted by ``torch.utils.flop_counter.FlopCounterMode``
    on ``meta`` tensors (shapes only, no data, so ``N = 10^6`` costs nothing): an independent
    count to cross-check :func:`matmul_count`.

    Raises:
        AttentionInputError: as :func:`matmul_count`.
    """
    from torch.utils.flop_counter import FlopCounterMode

    matmul_count(method, N, d, k, m)  # validates the arguments
    meta = lambda *s: torch.empty(*s, device="meta")  # noqa: E731
    Q, K, V = meta(N, d), meta(N, d), meta(N, d)
    with FlopCounterMode(display=False) as fc:
        if method == "standard":
            torch.softmax(Q @ K.T / math.sqrt(d), dim=-1) @ V
        elif method == "linformer":
            E, F = meta(k, N), meta(k, N)
            torch.softmax(Q @ (E @ K).T / math.sqrt(d), dim=-1) @ (F @ V)
        elif method == "doc-linformer":
            Q @ ((K.T @ V) / k)
        else:
            fQ, fK = meta(N, m), meta(N, m)
            fQ @ (fK.T @ V)
    return int(fc.get_total_flops())


def schedule_peak(N: int, chunk: int) -> int:
    """Intermediate values alive at once when softmax attention is computed ``chunk`` query rows at
    a time: the ``(chunk, N)`` logits and the ``(chunk, N)`` weights, ``2 * chunk * N``.
    ``chunk = N`` is the standard schedule that materialises the attention matrix (003 引言).

    Raises:
        AttentionInputError: ``N`` or ``chunk`` not a positive integer, or ``chunk > N``.
    """
    N, chunk = _pos_int(N, "N"), _pos_int(chunk, "chunk")
    if chunk > N:
        raise AttentionInputError(f"chunk: must be <= N = {N}, got {chunk}")
    return 2 * chunk * N


def chunked_attention(Q, K, V, chunk: int = 1) -> tuple[np.ndarray, int]:
    """Exact softmax attention ``softmax(Q K^T / sqrt(d)) V`` computed ``chunk`` query rows at a
    time (the memory-saving schedule of Rabe & Staats 2021, "Self-attention does not need O(n^2)
    memory", arXiv:2112.05682, and of FlashAttention), in float64.

    Returns ``(out (N, d_v), peak)`` where ``peak`` is the largest number of intermediate values
    alive at once (logits and weights of one chunk: ``2 * chunk * N``), excluding the inputs and
    the output.

    Raises:
        AttentionInputError: bad shapes, non-finite input, or ``chunk`` not a positive integer.
    """
    q, kk, v = _arr(Q, "Q"), _arr(K, "K"), _arr(V, "V")
    chunk = _pos_int(chunk, "chunk")
    if q.shape[1] != kk.shape[1] or kk.shape[0] != v.shape[0]:
        raise AttentionInputError(f"chunked_attention: shapes Q {q.shape}, K {kk.shape}, V {v.shape}")
    out = np.empty((q.shape[0], v.shape[1]))
    peak = 0
    for s in range(0, q.shape[0], chunk):
        z = q[s:s + chunk] @ kk.T / math.sqrt(q.shape[1])
        w = np.exp(z - z.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        peak = max(peak, z.size + w.size)
        out[s:s + chunk] = w @ v
    return out, peak


# -- mpmath references (003 定义 11.24, 11.3.1 SVD) ---------------------------------------------


def mp_attention(Q, K, V=None, *, scale=None, dps: int = 40) -> mpmath.matrix:
    """``softmax(Q K^T * scale)`` (or times ``V``) in mpmath at ``dps`` digits, from the exact
    values of the float64 inputs; ``scale`` defaults to ``1/sqrt(d)`` (003 定义 11.24) and may be
    an mpmath number. Returns an ``(N, N)`` (or ``(N, d_v)``) ``mpmath.matrix``.

    Raises:
        AttentionInputError: bad shapes or non-finite input.
    """
    q, kk = _arr(Q, "Q"), _arr(K, "K")
    if q.shape[1] != kk.shape[1]:
        raise AttentionInputError(f"Q, K: head dimensions differ ({q.shape[1]} vs {kk.shape[1]})")
    v = None if V is None else _arr(V, "V")
    if v is not None and v.shape[0] != kk.shape[0]:
        raise AttentionInputError(f"V: expected {kk.shape[0]} rows, got {v.shape[0]}")
    with mpmath.workdps(dps):
        s = 1 / mpmath.sqrt(q.shape[1]) if scale is None else mpmath.mpf(scale)
        N, M = q.shape[0], kk.shape[0]
        A = mpmath.matrix(N, M)
        for i in range(N):
            z = [mpmath.fsum(mpmath.mpf(float(a)) * mpmath.mpf(float(b)) for a, b in zip(q[i], kk[j], strict=True))
                 * s for j in range(M)]
            mx = max(z)
            e = [mpmath.exp(x - mx) for x in z]
            tot = mpmath.fsum(e)
            for j in range(M):
                A[i, j] = e[j] / tot
        if v is None:
            return A
        return A * mpmath.matrix(v.tolist())


def mp_singular_values(A, dps: int = 40) -> list:
    """Singular values (descending) of the float64 matrix ``A`` as stored, or of an
    ``mpmath.matrix``, by ``mpmath.svd_r`` at ``dps`` digits.

    Raises:
        AttentionInputError: empty or non-finite input.
    """
    with mpmath.workdps(dps):
        M = A if isinstance(A, mpmath.matrix) else mpmath.matrix(_arr(A, "A").tolist())
        s = mpmath.svd_r(M, compute_uv=False)
        return sorted((s[i] for i in range(len(s))), reverse=True)


def mp_effective_rank(sigma, tau, *, margin: float = 1e-25) -> tuple[int, bool]:
    """003 定义 11.25's ``min{k : sum_{i<=k} s_i^2 >= tau sum_i s_i^2}`` for mpmath singular values.

    Returns ``(k, decided)``: ``decided`` is false when some cumulative ratio lies within
    ``margin`` of ``tau`` (the precision of ``sigma`` could then change ``k``).

    Raises:
        AttentionInputError: ``tau`` outside (0, 1) or all singular values zero.
    """
    t = mpmath.mpf(tau)
    if not (0 < t < 1):
        raise AttentionInputError(f"tau: must be in (0, 1), got {tau!r}")
    margin = mpmath.mpf(margin)
    e = [mpmath.mpf(x) ** 2 for x in sigma]
    tot = mpmath.fsum(e)
    if tot == 0:
        raise AttentionInputError("sigma: all singular values are zero")
    acc = mpmath.mpf(0)
    decided = True
    for k, x in enumerate(e, start=1):
        acc += x
        r = acc / tot
        if abs(r - t) < margin:
            decided = False
        if r >= t:
            return k, decided
    return len(e), decided


def exact_effective_rank(energies, tau: Fraction, criterion) -> int:
    """``min{k : criterion(head_k, total, tau)}`` over exact rational energies ``sigma_i^2``
    sorted descending (003 定义 11.25 with its inequality given by ``criterion``, a callable of
    ``head``, ``total`` and ``tau``); ``len(energies)`` if no ``k`` satisfies it.

    Raises:
        AttentionInputError: empty, negative or unsorted energies, or all zero.
    """
    e = [Fraction(x) for x in energies]
    if not e or any(x < 0 for x in e) or any(b > a for a, b in itertools.pairwise(e)):
        raise AttentionInputError("energies: need a non-empty, non-negative, descending list")
    total = sum(e, Fraction(0))
    if total == 0:
        raise AttentionInputError("energies: all zero (effective rank undefined)")
    head = Fraction(0)
    for k, x in enumerate(e, start=1):
        head += x
        if criterion(head, total, tau):
            return k
    return len(e)


# -- energy of power-law spectra (003 推论 11.8) --------------------------------------------------


def _power_sum(s, a: int, b) -> mpmath.mpf:
    """``sum_{i=a}^{b} i^(-s)`` by Hurwitz zeta (``b = None`` means infinity), ``s > 1``."""
    if b is not None and b < a:
        return mpmath.mpf(0)
    return mpmath.zeta(s, a) - (0 if b is None else mpmath.zeta(s, b + 1))


def knee_spectrum_energy(alpha, j: int, k: int, N: int | None, dps: int = 40) -> tuple[mpmath.mpf, mpmath.mpf]:
    """Energy of the top ``k`` and the total energy of the spectrum
    ``sigma_1 = 1``, ``sigma_i = (j+1)^-alpha`` for ``2 <= i <= j``, ``sigma_i = i^-alpha`` for
    ``j < i <= N`` (``N = None``: infinitely many). It is non-increasing and satisfies
    ``sigma_i <= sigma_1 i^-alpha`` (the decay condition of 003 定理 11.21 with ``C = sigma_1``),
    with the largest tail the condition allows beyond the knee ``j``: the adversarial family for
    lower bounds on the energy ratio (003 推论 11.8).

    Raises:
        AttentionInputError: ``alpha <= 1/2`` (the energy diverges), ``j, k < 1``, or
            ``N < max(j, k)``.
    """
    j, k = _pos_int(j, "j"), _pos_int(k, "k")
    if N is not None and _pos_int(N, "N") < max(j, k):
        raise AttentionInputError(f"N: must be >= max(j, k) = {max(j, k)}, got {N}")
    with mpmath.workdps(dps):
        a = mpmath.mpf(alpha.numerator) / alpha.denominator if isinstance(alpha, Fraction) else mpmath.mpf(alpha)
        if not a > mpmath.mpf(1) / 2:
            raise AttentionInputError(f"alpha: must exceed 1/2 for a finite energy, got {alpha!r}")
        s = 2 * a
        flat = (mpmath.mpf(j) + 1) ** (-s)
        total = 1 + (j - 1) * flat + _power_sum(s, j + 1, N)
        head = 1 + (min(k, j) - 1) * flat + (_power_sum(s, j + 1, k) if k > j else 0)
        return +head, +total


# -- Gaussian queries and keys (003 引理 11.37, 定理 11.24) ----------------------------------------


def gaussian_logits(d: int, N: int, seed: int, *, scaled: bool = True) -> tuple[np.ndarray, float]:
    """Logits ``x_j = q . k_j / sqrt(d)`` (``scaled``; else ``q . k_j``) for ``q, k_j`` i.i.d.
    ``N(0, I_d)`` (the setting of 003 定理 11.24), drawn with ``numpy.random.default_rng(seed)``.

    Returns ``(x (N,), s2)`` with ``s2 = |q|^2 / d`` (scaled) or ``|q|^2``: given ``q`` the
    logits are exactly i.i.d. ``N(0, s2)``.

    Raises:
        AttentionInputError: ``d`` or ``N`` not a positive integer.
    """
    d, N = _pos_int(d, "d"), _pos_int(N, "N")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(d)
    K = rng.standard_normal((N, d))
    x = K @ q
    s2 = float(q @ q)
    if scaled:
        x = x / math.sqrt(d)
        s2 /= d
    return x, s2


def participation_ratio(x) -> float:
    """``1 / sum_j p_j^2`` for ``p = softmax(x)`` (float64): the effective number of positions a
    weight vector spreads over (1 for one-hot, N for uniform).

    Raises:
        AttentionInputError: empty or non-finite ``x``.
    """
    a = _arr(x, "x", 1)
    w = np.exp(a - a.max())
    return float(w.sum() ** 2 / np.sum(w * w))


def arb_softmax_stats(x, prec: int = 128):
    """Certified enclosures (python-flint ``arb`` balls at ``prec`` bits) of
    ``(participation ratio 1/sum_j p_j^2, max_j p_j)`` for ``p = softmax(x)``, from the exact
    float64 logits.

    Raises:
        AttentionInputError: empty or non-finite ``x``.
    """
    from flint import arb

    from .reference import precision

    a = _arr(x, "x", 1)
    m = float(a.max())
    with precision(prec):
        w = [(arb(float(v)) - arb(m)).exp() for v in a]
        tot = sum(w, arb(0))
        sq = sum((v * v for v in w), arb(0))
        return tot * tot / sq, 1 / tot


def arb_partition_ratio(x, s2: float, prec: int = 128):
    """Certified enclosure of ``Z / (N e^(s2/2))`` with ``Z = sum_j e^(x_j)``: the
    law-of-large-numbers ratio for logits ``x_j ~ N(0, s2)`` (``E e^x = e^(s2/2)``).

    Raises:
        AttentionInputError: empty or non-finite ``x``, or ``s2 < 0``.
    """
    from flint import arb

    from .reference import precision

    a = _arr(x, "x", 1)
    if not s2 >= 0:
        raise AttentionInputError(f"s2: must be >= 0, got {s2!r}")
    with precision(prec):
        tot = sum((arb(float(v)).exp() for v in a), arb(0))
        return tot / (len(a) * (arb(float(s2)) / 2).exp())


# -- the document's Linformer formula (003 定义 11.26, 定理 11.26) ---------------------------------


def doc_linformer(Q, K, V, k) -> np.ndarray:
    """``Q (K^T V / k)`` in float64, the approximation 003 定义 11.26 writes for Linformer
    (``(N, d) @ (d, d_v)``). ``k`` may be any positive number.

    Raises:
        AttentionInputError: bad shapes, non-finite input or ``k <= 0``.
    """
    q, kk, v = _arr(Q, "Q"), _arr(K, "K"), _arr(V, "V")
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


# -- kernel feature maps of 003 §11.3.4 ----------------------------------------------------------


def feature_linear_attention(fQ: torch.Tensor, fK: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    """Normalised linear attention ``(fQ (fK^T V)) / (fQ (fK^T 1))`` from precomputed features,
    in their dtype (Katharopoulos et al. 2020 eq. (5)-(6)). A zero or non-finite denominator
    gives NaN/Inf, as an implementation without safeguards would.

    Raises:
        AttentionInputError: shapes that do not chain.
    """
    if fQ.ndim != 2 or fK.ndim != 2 or V.ndim != 2 or fQ.shape[1] != fK.shape[1] or fK.shape[0] != V.shape[0]:
        raise AttentionInputError(f"feature_linear_attention: shapes {tuple(fQ.shape)}, {tuple(fK.shape)}, "
                                  f"{tuple(V.shape)}")
    num = fQ @ (fK.T @ V)
    den = fQ @ fK.sum(dim=0, keepdim=True).T
    return num / den


# -- LoRA and the attention increment (003 定理 11.28, 表 11.3.3) ---------------------------------


def eckart_young_factors(W, r: int) -> tuple[np.ndarray, np.ndarray, float]:
    """``B = U_r Sigma_r (m, r)``, ``A = V_r^T (r, n)`` from the SVD of ``W (m, n)`` and the tail
    energy ``sum_{i>r} sigma_i^2``: the best rank-``r`` ``BA`` in Frobenius norm (Eckart & Young
    1936), the parametrisation ``Delta W = B A`` of LoRA (Hu et al. 2021, eq. (3)). float64.

    Raises:
        AttentionInputError: bad input, or ``r`` not in ``[1, min(m, n)]``.
    """
    w = _arr(W, "W")
    r = _pos_int(r, "r")
    if r > min(w.shape):
        raise AttentionInputError(f"r: must be <= min{w.shape} = {min(w.shape)}, got {r}")
    U, s, Vt = np.linalg.svd(w, full_matrices=False)
    return U[:, :r] * s[:r], Vt[:r], float(np.sum(s[r:] ** 2))


def rademacher_gram_mean(k: int, d: int, variance: Fraction) -> list[list[Fraction]]:
    """Exact ``E[P^T P]`` ``(d, d)`` over all ``2^(k d)`` equally likely sign patterns of
    ``P (k, d)`` with entries ``+-sqrt(variance)``: ``(P^T P)_ab = variance * sum_r s_ra s_rb``
    (a random projection as in 003 定理 11.26's proof, where ``E[P^T P] = I_d`` needs
    ``variance = 1/k``). The sign sums are exact int64 counts; the mean is a ``Fraction``.
    Only for ``k d <= 12``.

    Raises:
        AttentionInputError: sizes not positive, ``k d > 12``, or ``variance < 0``.
    """
    k, d = _pos_int(k, "k"), _pos_int(d, "d")
    variance = Fraction(variance)
    if k * d > 12 or variance < 0:
        raise AttentionInputError(f"rademacher_gram_mean: need k d <= 12 and variance >= 0, got {k}, {d}, {variance}")
    signs = np.array(list(itertools.product((-1, 1), repeat=k * d)), dtype=np.int64).reshape(-1, k, d)
    total = np.einsum("pra,prb->ab", signs, signs)  # exact: |entries| <= k 2^(k d)
    count = signs.shape[0]
    return [[variance * int(v) / count for v in row] for row in total]


def _fmpq_matrix(a: np.ndarray):
    from flint import fmpq, fmpq_mat

    return fmpq_mat(a.shape[0], a.shape[1], [fmpq(*float(v).as_integer_ratio()) for v in a.ravel()])


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
    p = _arr(P, "P")
    d = p.shape[1]
    Pq = _fmpq_matrix(p)
    G = Pq.transpose() * Pq
    rank = G.rank()
    bound = Fraction(1) if rank < d else Fraction(0)
    _, vecs = np.linalg.eigh(p.T @ p)
    for v in (vecs[:, -1], vecs[:, 0]):
        vq = _fmpq_matrix(v.reshape(-1, 1))
        vv = (vq.transpose() * vq)[0, 0]
        if vv == 0:
            continue
        rq = (vq.transpose() * G * vq)[0, 0] / vv - 1
        bound = max(bound, abs(Fraction(int(rq.p), int(rq.q))))
    return bound, rank
