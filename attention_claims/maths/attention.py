"""Attention builders: logits, masks, softmax and linear attention, in float (torch) and in
exact/high-precision arithmetic (mpmath, python-flint arb, rationals) side by side.

Shapes: queries ``Q (N, d)``, keys ``K (M, d)``, values ``V (M, d_v)``; an attention matrix is
``(N, M)`` with rows that sum to 1 (softmax) and is dimensionless. Softmax attention is
``softmax(mask(Q K^T * scale))`` (Vaswani et al. 2017 eq. (1); 003 定义 11.24), linear attention
``phi(Q) phi(K)^T`` row-normalised (Katharopoulos et al. 2020 eq. (4)-(6)). The arithmetics:

- torch, in a chosen dtype and device (:func:`softmax_attention`, :func:`masked_softmax_attention`,
  :func:`linear_attention`, :func:`attention_layer`): what a model computes;
- mpmath at a number of digits (:func:`mp_softmax`, :func:`mp_attention`, :func:`mp_softmax_entry`);
- python-flint arb, certified (:func:`arb_logits`, :func:`arb_softmax_attention`);
- exact, for integer logits at a transcendental scale (:func:`exact_attention_rows`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import mpmath
import numpy as np
from flint import arb, arb_mat

from .arrays import AttentionInputError, as_array, as_int, as_tensor, is_tensor, positive_int, resolve_dtype, torch
from .exact import mp_matrix


def logits(Q, K, *, scale: float | None = None, dtype="float64", device=None) -> torch.Tensor:
    """Attention logits ``Q K^T * scale``, shape ``(N, M)``, computed in ``dtype``.

    ``scale`` defaults to ``1/sqrt(d)`` (Vaswani et al. 2017, eq. (1); 003 定义 11.24).

    Raises:
        AttentionInputError: on bad shapes or non-finite input, or mismatched head dims.
    """
    dt = resolve_dtype(dtype)
    q = as_tensor(Q, "Q", dtype=dt, device=device)
    k = as_tensor(K, "K", dtype=dt, device=device if device is not None else q.device)
    if q.shape[1] != k.shape[1]:
        raise AttentionInputError(f"Q, K: head dimensions differ ({q.shape[1]} vs {k.shape[1]})")
    d = q.shape[1]
    s = 1.0 / math.sqrt(d) if scale is None else float(scale)
    return (q @ k.T) * s


def causal_mask(N: int, M: int | None = None, *, device=None) -> torch.Tensor:
    """Boolean ``(N, M)`` mask, ``True`` where query ``i`` may attend to key ``j <= i``.

    Raises:
        AttentionInputError: if ``N`` or ``M`` is not a positive integer.
    """
    N = positive_int(N, "N")
    M = N if M is None else positive_int(M, "M")
    return torch.ones(N, M, dtype=torch.bool, device=device).tril()


def softmax_attention(Q, K, *, causal: bool = False, scale: float | None = None, dtype="float64",
                      device=None) -> torch.Tensor:
    """Softmax attention matrix ``A = softmax(mask(Q K^T * scale))``, shape ``(N, M)``.

    Computed entirely in ``dtype`` with ``torch.softmax`` (which subtracts the row maximum),
    as a model running in that dtype would; masked logits are ``-inf``.
    Source: Vaswani et al. 2017 eq. (1); 003 定义 11.24; causal: 002 "低秩问题".

    Raises:
        AttentionInputError: on bad input (see :func:`logits`).
    """
    z = logits(Q, K, scale=scale, dtype=dtype, device=device)
    if causal:
        mask = causal_mask(z.shape[0], z.shape[1], device=z.device)
        z = z.masked_fill(~mask, float("-inf"))
    return torch.softmax(z, dim=-1)


def _elu_plus_one(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.elu(x) + 1.0


FEATURE_MAPS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "identity": lambda x: x,
    "relu": lambda x: torch.relu(x),
    "elu+1": _elu_plus_one,  # Katharopoulos et al. 2020, eq. (7)
    "exp": lambda x: torch.exp(x),
}
"""The elementwise feature maps of linear attention by name, each a function of a tensor: ``identity``,
``relu``, ``elu+1`` (Katharopoulos et al. 2020, eq. (7)) and ``exp``; :func:`feature_map` looks one up."""


def feature_map(name: str) -> Callable[[torch.Tensor], torch.Tensor]:
    """The elementwise feature map called ``name`` (``identity``, ``relu``, ``elu+1``, ``exp``) as a
    function of a tensor of any shape, e.g. ``(N, d) -> (N, d)``, in that tensor's dtype and units
    (:data:`FEATURE_MAPS`; ``elu+1`` is Katharopoulos et al. 2020 eq. (7)).

    Raises:
        AttentionInputError: for an unknown name.
    """
    try:
        return FEATURE_MAPS[name]
    except KeyError:
        raise AttentionInputError(f"feature map: unknown {name!r} (one of {', '.join(FEATURE_MAPS)})") from None


def linear_attention(Q, K, *, phi: str = "elu+1", causal: bool = False, normalize: bool = True,
                     dtype="float64", device=None) -> torch.Tensor:
    """Linear attention matrix ``phi(Q) phi(K)^T`` (masked, row-normalised), shape ``(N, M)``, for
    ``Q (N, d)`` and ``K (M, d)``, computed in ``dtype`` on ``device`` (torch); dimensionless when
    normalised (rows sum to 1), else in the units of ``phi(Q) phi(K)^T``.

    Source: Katharopoulos et al. 2020, §3.2 eq. (4)-(6); 002 "低秩问题" (rank at most d
    without a mask). With ``normalize`` each row is divided by its sum, as in eq. (6); a
    row whose sum is zero is left as zeros (its normaliser is undefined).

    Raises:
        AttentionInputError: on bad input or an unknown feature map.
    """
    f = feature_map(phi)
    dt = resolve_dtype(dtype)
    q = f(as_tensor(Q, "Q", dtype=dt, device=device))
    k = f(as_tensor(K, "K", dtype=dt, device=device if device is not None else q.device))
    if q.shape[1] != k.shape[1]:
        raise AttentionInputError(f"Q, K: head dimensions differ ({q.shape[1]} vs {k.shape[1]})")
    s = q @ k.T
    if causal:
        s = s * causal_mask(s.shape[0], s.shape[1], device=s.device).to(s.dtype)
    if normalize:
        z = s.sum(dim=-1, keepdim=True)
        s = torch.where(z != 0, s / torch.where(z != 0, z, torch.ones_like(z)), torch.zeros_like(s))
    return s


MASK_KINDS = ("bidirectional", "causal", "anticausal", "prefix", "banded", "banded-causal")
"""The attention masks :func:`attention_mask` builds, by name."""


def attention_mask(kind: str, N: int, *, prefix: int = 0, window: int = 1, device=None) -> torch.Tensor:
    """Boolean ``(N, N)`` mask, ``True`` where query ``i`` may attend to key ``j``.

    ``kind`` is one of :data:`MASK_KINDS`:

    - ``bidirectional``: every pair (BERT-style encoder; 000 §2 "每个token可以关注序列中任意位置").
    - ``causal``: ``j <= i`` (GPT; Vaswani et al. 2017 §3.2.3).
    - ``anticausal``: ``j >= i`` (the "上三角阵 (反向注意力)" heads of 002 "低秩问题").
    - ``prefix``: PrefixLM / UNILM (002, first section): ``j < prefix`` for every query
      inside the prefix and ``j <= i`` elsewhere; ``prefix`` tokens see each other bidirectionally.
    - ``banded``: local attention ``|i - j| <= window`` (Longformer's sliding window,
      Beltagy et al. 2020 §3.1; 000 §5.2).
    - ``banded-causal``: ``0 <= i - j <= window``.

    Raises:
        AttentionInputError: unknown kind, ``N < 1``, ``prefix`` outside ``[0, N]`` or ``window < 0``.
    """
    N = positive_int(N, "N")
    if kind not in MASK_KINDS:
        raise AttentionInputError(f"mask: unknown kind {kind!r} (one of {', '.join(MASK_KINDS)})")
    prefix = as_int(prefix, "prefix", lo=0, hi=N)
    window = as_int(window, "window", lo=0)
    i = torch.arange(N, device=device).unsqueeze(1)
    j = torch.arange(N, device=device).unsqueeze(0)
    if kind == "bidirectional":
        return torch.ones(N, N, dtype=torch.bool, device=device)
    if kind == "causal":
        return j <= i
    if kind == "anticausal":
        return j >= i
    if kind == "prefix":
        return (j <= i) | ((i < prefix) & (j < prefix))
    if kind == "banded":
        return (i - j).abs() <= window
    return ((i - j) >= 0) & ((i - j) <= window)


def resolve_mask(mask: torch.Tensor | np.ndarray | str | None, N: int, M: int, *, device=None) -> torch.Tensor:
    """The boolean ``(N, M)`` mask (``True``: query ``i`` may attend to key ``j``) that ``mask``
    stands for: ``None`` is bidirectional, a string is a kind of :func:`attention_mask` (square
    only), an array or tensor is taken as it is. On ``device`` (default: the tensor's own, or CPU).

    Raises:
        AttentionInputError: a kind with ``N != M``, a mask whose shape is not ``(N, M)``, or a
            row with no allowed key (softmax undefined).
    """
    if mask is None:
        return torch.ones(N, M, dtype=torch.bool, device=device)
    if isinstance(mask, str):
        if N != M:
            raise AttentionInputError(f"mask {mask!r} needs square logits, got shape {(N, M)}")
        return attention_mask(mask, N, device=device)
    keep = torch.as_tensor(np.array(mask, dtype=bool) if not is_tensor(mask) else mask)  # a copy: any strides
    keep = keep.to(dtype=torch.bool, device=device if device is not None else keep.device)
    if tuple(keep.shape) != (N, M):
        raise AttentionInputError(f"mask: shape {tuple(keep.shape)} differs from the logits' {(N, M)}")
    if not bool(keep.any(dim=-1).all()):
        raise AttentionInputError("mask: some query row may attend to no key (softmax undefined)")
    return keep


def masked_softmax_attention(Q, K, mask: torch.Tensor | str | None = None, *, scale: float | None = None,
                             dtype="float64", device=None) -> torch.Tensor:
    """``softmax(mask(Q K^T * scale))``, shape ``(N, M)``, computed in ``dtype`` (``torch.softmax``).

    ``mask`` is a boolean ``(N, M)`` tensor, a kind accepted by :func:`attention_mask` (square
    only), or ``None`` (bidirectional). Masked logits are ``-inf``. Sources: Vaswani et al. 2017
    eq. (1); the masks as in :func:`attention_mask`.

    Raises:
        AttentionInputError: bad input, or a bad mask (see :func:`resolve_mask`).
    """
    z = logits(Q, K, scale=scale, dtype=dtype, device=device)
    if mask is None:
        return torch.softmax(z, dim=-1)
    keep = resolve_mask(mask, z.shape[0], z.shape[1], device=z.device)
    return torch.softmax(z.masked_fill(~keep, float("-inf")), dim=-1)


def attention_layer(X, Wq, Wk, Wv, *, mask: torch.Tensor | str | None = None, dtype="float64",
                    device=None) -> torch.Tensor:
    """One single-head attention layer, ``softmax(mask(X Wq (X Wk)^T / sqrt(dk))) X Wv``.

    Shapes: ``X (N, D)``, ``Wq, Wk (D, dk)``, ``Wv (D, dv)``; returns ``(N, dv)`` in ``dtype``.
    No position encoding, skip connection or normalisation (Vaswani et al. 2017 eq. (1)).

    Raises:
        AttentionInputError: bad shapes or non-finite input (see :func:`as_tensor`).
    """
    dt = resolve_dtype(dtype)
    x = as_tensor(X, "X", dtype=dt, device=device)
    wq, wk, wv = (as_tensor(w, n, dtype=dt, device=x.device) for w, n in ((Wq, "Wq"), (Wk, "Wk"), (Wv, "Wv")))
    if not (wq.shape[0] == wk.shape[0] == wv.shape[0] == x.shape[1] and wq.shape[1] == wk.shape[1]):
        raise AttentionInputError(f"attention_layer: shapes X {tuple(x.shape)}, Wq {tuple(wq.shape)}, "
                                  f"Wk {tuple(wk.shape)}, Wv {tuple(wv.shape)} do not fit")
    A = masked_softmax_attention(x @ wq, x @ wk, mask, dtype=dtype)
    return A @ (x @ wv)


def mp_softmax(z) -> list[mpmath.mpf]:
    """``softmax(z)`` of one row of logits ``z (M,)`` (mpmath numbers, or floats taken exactly) at
    the current mpmath precision: ``e^(z_j - max z) / sum_l e^(z_l - max z)`` (the maximum is
    subtracted so that no term overflows). Vaswani et al. 2017 eq. (1).
    """
    zs = [mpmath.mpf(v) for v in z]
    mx = max(zs)
    e = [mpmath.exp(x - mx) for x in zs]
    tot = mpmath.fsum(e)
    return [x / tot for x in e]


def mp_softmax_matrix(Qm: mpmath.matrix, Km: mpmath.matrix, scale) -> mpmath.matrix:
    """``softmax(Qm Km^T * scale)`` ``(N, M)`` for mpmath matrices ``Qm (N, d)``, ``Km (M, d)`` at the
    current mpmath precision; each logit is an ``fsum`` of the ``d`` products (Vaswani et al. 2017
    eq. (1), no mask).
    """
    N, M = Qm.rows, Km.rows
    A = mpmath.matrix(N, M)
    for i in range(N):
        z = [mpmath.fsum(Qm[i, c] * Km[j, c] for c in range(Qm.cols)) * scale for j in range(M)]
        for j, p in enumerate(mp_softmax(z)):
            A[i, j] = p
    return A


def mp_attention(Q, K, V=None, *, scale=None, dps: int = 40) -> mpmath.matrix:
    """``softmax(Q K^T * scale)`` (or times ``V``) in mpmath at ``dps`` digits, from the exact
    values of the float64 inputs; ``scale`` defaults to ``1/sqrt(d)`` (003 定义 11.24) and may be
    an mpmath number. Returns an ``(N, M)`` (or ``(N, d_v)``) ``mpmath.matrix``.

    Raises:
        AttentionInputError: bad shapes or non-finite input.
    """
    q, kk = as_array(Q, "Q"), as_array(K, "K")
    if q.shape[1] != kk.shape[1]:
        raise AttentionInputError(f"Q, K: head dimensions differ ({q.shape[1]} vs {kk.shape[1]})")
    v = None if V is None else as_array(V, "V")
    if v is not None and v.shape[0] != kk.shape[0]:
        raise AttentionInputError(f"V: expected {kk.shape[0]} rows, got {v.shape[0]}")
    with mpmath.workdps(dps):
        s = 1 / mpmath.sqrt(q.shape[1]) if scale is None else mpmath.mpf(scale)
        A = mp_softmax_matrix(mp_matrix(q, "Q"), mp_matrix(kk, "K"), s)
        if v is None:
            return A
        return A * mp_matrix(v, "V")


def gaussian_logits(d: int, N: int, seed: int, *, scaled: bool = True) -> tuple[np.ndarray, float]:
    """Logits ``x_j = q . k_j / sqrt(d)`` (``scaled``; else ``q . k_j``) for ``q, k_j`` i.i.d.
    ``N(0, I_d)`` (the setting of 003 定理 11.24), drawn with ``numpy.random.default_rng(seed)``.

    Returns ``(x (N,), s2)`` with ``s2 = |q|^2 / d`` (scaled) or ``|q|^2``: given ``q`` the
    logits are exactly i.i.d. ``N(0, s2)``.

    Raises:
        AttentionInputError: ``d`` or ``N`` not a positive integer.
    """
    d, N = positive_int(d, "d"), positive_int(N, "N")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(d)
    K = rng.standard_normal((N, d))
    x = K @ q
    s2 = float(q @ q)
    if scaled:
        x = x / math.sqrt(d)
        s2 /= d
    return x, s2


def feature_linear_attention(fQ: torch.Tensor, fK: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    """Normalised linear attention ``(fQ (fK^T V)) / (fQ (fK^T 1))`` from precomputed features,
    in their dtype (Katharopoulos et al. 2020 eq. (5)-(6)). A zero or non-finite denominator
    gives NaN/Inf, as an implementation without safeguards would.

    Shapes: ``fQ (N, m)``, ``fK (M, m)`` (``m`` features), ``V (M, d_v)``; returns ``(N, d_v)`` in the
    units of ``V``.

    Raises:
        AttentionInputError: shapes that do not chain.
    """
    if fQ.ndim != 2 or fK.ndim != 2 or V.ndim != 2 or fQ.shape[1] != fK.shape[1] or fK.shape[0] != V.shape[0]:
        raise AttentionInputError(f"feature_linear_attention: shapes {tuple(fQ.shape)}, {tuple(fK.shape)}, "
                                  f"{tuple(V.shape)}")
    num = fQ @ (fK.T @ V)
    den = fQ @ fK.sum(dim=0, keepdim=True).T
    return num / den


def arb_logits(Q, K, scale: str | float = "sqrt_d") -> list[list[arb]]:
    """Certified enclosures of ``Q K^T * scale`` (``scale="sqrt_d"`` means ``1/sqrt(d)``).

    Returns a nested list ``(N, M)`` of arb balls (current flint precision). Source: 003 定义 11.24.

    Raises:
        AttentionInputError: bad shapes or non-finite input.
    """
    q, k = as_array(Q, "Q"), as_array(K, "K")
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

    Raises:
        AttentionInputError: as :func:`arb_logits`.
    """
    return arb_softmax_rows(arb_logits(Q, K, scale), causal=causal)


def arb_softmax_rows(Z, *, causal: bool = False) -> arb_mat:
    """Row-wise softmax of the arb logits ``Z`` (an ``(N, M)`` ``arb_mat`` or nested list of arb balls):
    ``exp(z_ij - m_i) / sum_j exp(z_ij - m_i)`` over the allowed keys (``j <= i`` when ``causal``),
    masked entries exactly 0, at the current flint precision; ``m_i`` is the largest midpoint of the row,
    compared exactly (also beyond the float range), subtracted so that no term overflows (the quotient does
    not depend on it). Source: Vaswani et al. 2017 eq. (1); 002 "低秩问题" for the mask."""
    rows = [[Z[i, j] for j in range(Z.ncols())] for i in range(Z.nrows())] if isinstance(Z, arb_mat) else Z
    n, m = len(rows), len(rows[0])
    A = arb_mat(n, m)
    for i, row in enumerate(rows):
        allowed = range(min(i + 1, m)) if causal else range(m)
        mid = max(row[j].mid() for j in allowed)  # exact points compared exactly: as floats they can overflow
        e = {j: (row[j] - mid).exp() for j in allowed}
        tot = sum(e.values(), arb(0))
        for j in allowed:
            A[i, j] = e[j] / tot
    return A


def mp_softmax_entry(z_row, j: int, dps: int = 50) -> mpmath.mpf:
    """``softmax(z_row)_j`` (:func:`mp_softmax`) in mpmath at ``dps`` decimal digits, from the exact
    values of the float logits ``z_row (M,)``."""
    with mpmath.workdps(dps):
        return mp_softmax([float(v) for v in z_row])[j]


def exact_attention_rows(M_int, V_int, mask: torch.Tensor | str | None = None) -> list:
    """Exact attention outputs for integer logits ``M (N, L)`` and integer values ``V (L, dv)``:
    row ``i`` of ``softmax(mask(M s)) V`` as ``(numerators, denominator)`` in ``Z[t]`` with
    ``t = e^s`` (``numerators[c] / denominator`` is output entry ``(i, c)`` after the common
    factor ``t^{-min_j M_ij}`` cancels). Two rows are equal as real numbers at a transcendental
    ``t`` iff they are equal as rational functions (see :func:`rational_rows_equal`).

    Raises:
        AttentionInputError: ``M`` or ``V`` not a non-empty finite 2-D integer array, mismatched
            shapes, or a bad mask (see :func:`resolve_mask`).
    """
    from flint import fmpz_poly

    m, v = as_array(M_int, "M", integer=True), as_array(V_int, "V", integer=True)
    if m.shape[1] != v.shape[0]:
        raise AttentionInputError(f"M, V: M {m.shape} has {m.shape[1]} keys, V {v.shape} has {v.shape[0]} rows")
    N, L = m.shape
    keep = resolve_mask(mask, N, L).cpu().numpy()
    rows = []
    for i in range(N):
        js = [j for j in range(L) if keep[i, j]]
        lo = int(min(m[i, j] for j in js))
        den = fmpz_poly(0)
        nums = [fmpz_poly(0) for _ in range(v.shape[1])]
        for j in js:
            mono = fmpz_poly([0] * (int(m[i, j]) - lo) + [1])
            den += mono
            for c in range(v.shape[1]):
                nums[c] += int(v[j, c]) * mono
        rows.append((nums, den))
    return rows


def rational_rows_equal(a, b) -> bool:
    """Whether two rows from :func:`exact_attention_rows` are equal as vectors of rational functions.

    Each row is ``(numerators, denominator)``: ``d_v`` ``fmpz_poly`` numerators (one per output
    column, i.e. a row of the ``(N, d_v)`` output) over one ``fmpz_poly`` denominator; equality is tested
    exactly by cross-multiplication (``n_a d_b == n_b d_a``). Rows of different lengths are unequal.

    Raises:
        ValueError: a row is not a ``(numerators, denominator)`` pair.
    """
    (na, da), (nb, db) = a, b
    return len(na) == len(nb) and all(x * db == y * da for x, y in zip(na, nb, strict=True))


def attention_matrix(Q, K, mask=None) -> np.ndarray:
    """``softmax(mask(Q K^T / sqrt d))`` in float64 as a NumPy array ``(N, M)``: the stored
    attention matrix whose rank and spectrum the checks measure (:func:`masked_softmax_attention`,
    whose inputs, masks and errors it takes)."""
    return masked_softmax_attention(Q, K, mask).numpy()


def causal_logit_gap(z) -> float:
    """The largest causal-row logit gap ``max_i (max_{j<=i} z_ij - z_ii)`` (nats) of square logits
    ``z (N, N)``: how far the diagonal of causal softmax attention sits below its row's maximum,
    the parameter at which a finite dtype loses the causal matrix's full rank (see
    :mod:`attention_claims.maths.boundaries`).

    Raises:
        AttentionInputError: ``z`` is not a finite, non-empty square matrix (named ``z``).
    """
    z = as_array(z, "z", square=True)
    return max(float(np.max(z[i, : i + 1]) - z[i, i]) for i in range(z.shape[0]))


def row_cosines(A) -> np.ndarray:
    """The cosines between the rows of ``A (N, M)``: ``U U^T`` with ``U`` the rows scaled to unit
    l2 norm, shape ``(N, N)``, float64 NumPy, dimensionless in ``[-1, 1]`` (up to rounding). A zero
    row gives NaN; nothing is validated and nothing raised.
    """
    A = np.asarray(A, dtype=np.float64)
    U = A / np.linalg.norm(A, axis=1, keepdims=True)
    return U @ U.T


def arb_row_cosines(A_arb: arb_mat) -> list[list[arb]]:
    """Certified enclosures of the cosines between the rows of the arb matrix ``A_arb (N, M)`` (e.g.
    :func:`arb_softmax_attention`): ``a_i . a_j / (|a_i| |a_j|)`` in arb at the current flint precision,
    an ``(N, N)`` nested list; the arb counterpart of :func:`row_cosines`.

    Raises:
        AttentionInputError: a row whose norm's enclosure reaches 0 (no cosine).
    """
    n, m = A_arb.nrows(), A_arb.ncols()
    rows = [[A_arb[i, j] for j in range(m)] for i in range(n)]
    norms = []
    for i, row in enumerate(rows):
        sq = sum((x * x for x in row), arb(0))
        if not sq > 0:
            raise AttentionInputError(f"A: the enclosure of row {i}'s norm ({sq.sqrt()}) reaches 0; no cosine")
        norms.append(sq.sqrt())
    return [[sum((x * y for x, y in zip(rows[i], rows[j], strict=True)), arb(0)) / (norms[i] * norms[j])
             for j in range(n)] for i in range(n)]
