"""Attention builders: logits, softmax attention, causal masks, linear attention, feature maps.

Shapes follow the literature: ``Q`` is ``(N, d)`` (N queries of head dimension d),
``K`` is ``(M, d)`` (usually ``M = N``); the attention matrix is ``(N, M)``.
Inputs may be NumPy arrays or torch tensors; outputs are torch tensors on the input's
device (NumPy input goes to the CPU). All quantities are dimensionless.

Sources:
- scaled dot-product attention ``softmax(Q K^T / sqrt(d))``: Vaswani et al. 2017,
  "Attention Is All You Need", §3.2.1, eq. (1); 003 定义 11.24.
- the causal (lower-triangular) mask: Vaswani et al. 2017 §3.2.3; 002 "低秩问题".
- linear attention ``phi(Q) phi(K)^T`` normalised by row sums: Katharopoulos et al. 2020,
  "Transformers are RNNs", §3.2, eq. (4)-(6) (arXiv:2006.16236); elu+1 is their eq. (7).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch

DTYPES = {
    "float64": torch.float64,
    "float32": torch.float32,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
}


class AttentionInputError(ValueError):
    """Bad input to a builder: wrong shape, empty, NaN or Inf. The message names the argument."""


def as_tensor(x, name: str, *, dtype: torch.dtype | None = None, device: str | torch.device | None = None,
              ndim: int = 2) -> torch.Tensor:
    """Validate and convert ``x`` to a torch tensor.

    Raises:
        AttentionInputError: if ``x`` does not have ``ndim`` dimensions, is empty, or holds
            NaN or Inf (named by ``name``).
    """
    if isinstance(x, torch.Tensor):
        t = x
    else:
        try:
            t = torch.as_tensor(np.asarray(x, dtype=np.float64))
        except (TypeError, ValueError) as exc:
            raise AttentionInputError(f"{name}: not a numeric array ({exc})") from None
    if t.ndim != ndim:
        raise AttentionInputError(f"{name}: expected {ndim} dimensions, got shape {tuple(t.shape)}")
    if t.numel() == 0:
        raise AttentionInputError(f"{name}: empty array of shape {tuple(t.shape)}")
    if not torch.isfinite(t).all():
        raise AttentionInputError(f"{name}: contains NaN or Inf")
    if device is not None:
        t = t.to(device)
    if dtype is not None:
        t = t.to(dtype)
    return t


def as_float64_array(x, name: str, ndim: int = 2) -> np.ndarray:
    """``x`` (array-like or torch tensor, any device) as a float64 NumPy array of ``ndim`` dimensions.

    Raises:
        AttentionInputError: if ``x`` does not have ``ndim`` dimensions, is empty, or holds NaN or
            Inf (named by ``name``).
    """
    if isinstance(x, torch.Tensor):
        x = x.detach().to("cpu", torch.float64).numpy()
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != ndim or a.size == 0:
        raise AttentionInputError(f"{name}: expected a non-empty {ndim}-D array, got shape {a.shape}")
    if not np.isfinite(a).all():
        raise AttentionInputError(f"{name}: contains NaN or Inf")
    return a


def resolve_dtype(dtype: str | torch.dtype) -> torch.dtype:
    """Map ``"float32"`` etc. to a torch dtype.

    Raises:
        AttentionInputError: for a name not in :data:`DTYPES`.
    """
    if isinstance(dtype, torch.dtype):
        return dtype
    try:
        return DTYPES[dtype]
    except KeyError:
        raise AttentionInputError(f"dtype: unknown {dtype!r} (one of {', '.join(DTYPES)})") from None


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
    M = N if M is None else M
    if not (isinstance(N, int) and isinstance(M, int) and N > 0 and M > 0):
        raise AttentionInputError(f"causal_mask: N and M must be positive integers, got {N!r}, {M!r}")
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
    "relu": torch.relu,
    "elu+1": _elu_plus_one,  # Katharopoulos et al. 2020, eq. (7)
    "exp": torch.exp,
}


def feature_map(name: str) -> Callable[[torch.Tensor], torch.Tensor]:
    """The elementwise feature map called ``name`` (``identity``, ``relu``, ``elu+1``, ``exp``).

    Raises:
        AttentionInputError: for an unknown name.
    """
    try:
        return FEATURE_MAPS[name]
    except KeyError:
        raise AttentionInputError(f"feature map: unknown {name!r} (one of {', '.join(FEATURE_MAPS)})") from None


def linear_attention(Q, K, *, phi: str = "elu+1", causal: bool = False, normalize: bool = True,
                     dtype="float64", device=None) -> torch.Tensor:
    """Linear attention matrix ``phi(Q) phi(K)^T`` (masked, row-normalised), shape ``(N, M)``.

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


def cuda_available() -> bool:
    """Whether a CUDA device can run the CUDA readings here."""
    return torch.cuda.is_available()


# ---------------------------------------------------------------------------------------------
# Masks, masked attention, single-head layers and exact (symbolic) ranks.
# Added for the claims of 002 (kexue.fm/archives/9529 notes) and 000 (the study note).
# ---------------------------------------------------------------------------------------------

MASK_KINDS = ("bidirectional", "causal", "anticausal", "prefix", "banded", "banded-causal")


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
    if not (isinstance(N, int) and N > 0):
        raise AttentionInputError(f"attention_mask: N must be a positive integer, got {N!r}")
    if kind not in MASK_KINDS:
        raise AttentionInputError(f"attention_mask: unknown kind {kind!r} (one of {', '.join(MASK_KINDS)})")
    if not (isinstance(prefix, int) and 0 <= prefix <= N):
        raise AttentionInputError(f"attention_mask: prefix must be an integer in [0, {N}], got {prefix!r}")
    if not (isinstance(window, int) and window >= 0):
        raise AttentionInputError(f"attention_mask: window must be a non-negative integer, got {window!r}")
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


def masked_softmax_attention(Q, K, mask: torch.Tensor | str | None = None, *, scale: float | None = None,
                             dtype="float64", device=None) -> torch.Tensor:
    """``softmax(mask(Q K^T * scale))``, shape ``(N, M)``, computed in ``dtype`` (``torch.softmax``).

    ``mask`` is a boolean ``(N, M)`` tensor, a kind accepted by :func:`attention_mask` (square
    only), or ``None`` (bidirectional). Masked logits are ``-inf``. Sources: Vaswani et al. 2017
    eq. (1); the masks as in :func:`attention_mask`.

    Raises:
        AttentionInputError: bad input, or a mask whose shape differs from the logits' or that
            leaves a row with no allowed key.
    """
    z = logits(Q, K, scale=scale, dtype=dtype, device=device)
    if mask is None:
        return torch.softmax(z, dim=-1)
    if isinstance(mask, str):
        if z.shape[0] != z.shape[1]:
            raise AttentionInputError(f"mask {mask!r} needs square logits, got shape {tuple(z.shape)}")
        mask = attention_mask(mask, z.shape[0], device=z.device)
    if tuple(mask.shape) != tuple(z.shape):
        raise AttentionInputError(f"mask: shape {tuple(mask.shape)} differs from the logits' {tuple(z.shape)}")
    if not bool(mask.any(dim=-1).all()):
        raise AttentionInputError("mask: some query row may attend to no key (softmax undefined)")
    return torch.softmax(z.masked_fill(~mask.to(z.device), float("-inf")), dim=-1)


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


# -- exact ranks of exponential matrices (Lindemann–Weierstrass) -------------------------------

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
    """Rank over the field Q(t) of a matrix of integer polynomials (python-flint ``fmpz_poly``).

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
        AttentionInputError: non-integer or non-finite entries, or a row with no allowed key.
    """
    a = np.asarray(M_int.numpy() if isinstance(M_int, torch.Tensor) else M_int, dtype=np.float64)
    if a.ndim != 2 or a.size == 0 or not np.isfinite(a).all() or not np.all(a == np.round(a)):
        raise AttentionInputError("exact_softmax_rank: M must be a non-empty 2-D array of integers")
    N, L = a.shape
    if mask is None:
        keep = np.ones((N, L), dtype=bool)
    elif isinstance(mask, str):
        keep = attention_mask(mask, N).numpy()
    else:
        keep = np.asarray(mask.cpu().numpy() if isinstance(mask, torch.Tensor) else mask, dtype=bool)
    if keep.shape != (N, L) or not keep.any(axis=1).all():
        raise AttentionInputError("exact_softmax_rank: mask has the wrong shape or an empty row")
    exps = [[[int(a[i, j])] if keep[i, j] else [] for j in range(L)] for i in range(N)]
    return poly_matrix_rank(_laurent_rows(exps))


def exact_exp_sum_rank(exps, coeffs) -> int:
    """Exact real rank of the matrix with entries ``sum_l coeffs[i][j][l] * e^{exps[i][j][l]}`` for
    integer exponents and integer coefficients (e.g. ``phi(q_i) . phi(k_j)`` for the feature maps
    exp and elu+1 at integer inputs). Same argument as :func:`exact_softmax_rank` with ``t = e``.

    Raises:
        AttentionInputError: ragged input.
    """
    if len(exps) != len(coeffs) or any(len(a) != len(b) for a, b in zip(exps, coeffs, strict=True)):
        raise AttentionInputError("exact_exp_sum_rank: exps and coeffs must have the same shape")
    return poly_matrix_rank(_laurent_rows(exps, coeffs))


def softmax_log_ratio_rank(M_int) -> int:
    """For a positive row-stochastic ``P`` with ``P_ij ∝ 2^{M_ij}`` (integer ``M``): the rank of the
    log-ratio matrix ``D_ij = log(P_ij / P_i0)`` divided by ``ln 2``, i.e. of ``M_ij - M_i0``
    (columns ``j >= 1``), computed exactly.

    ``P = softmax(S)`` with ``rank(S) <= r`` iff ``rank(D) <= r``: ``S`` must equal ``log P`` plus
    a per-row constant, the column differences of ``S`` are those of ``log P`` (so
    ``rank S >= rank D``), and the choice ``S = log P - log P_{:,0} 1^T`` attains ``rank D``
    (its first column is 0). Used for the low-rank bottleneck (Bhojanapalli et al. 2020, Thm 1).

    Raises:
        AttentionInputError: non-integer input or fewer than 2 columns.
    """
    a = np.asarray(M_int, dtype=np.float64)
    if a.ndim != 2 or a.shape[1] < 2 or not np.all(a == np.round(a)):
        raise AttentionInputError("softmax_log_ratio_rank: need an integer (N, L >= 2) matrix")
    from flint import fmpz_mat

    D = a[:, 1:] - a[:, :1]
    return fmpz_mat(D.shape[0], D.shape[1], [int(v) for v in D.ravel()]).rank()


def certified_singular_value_count(A, tol: float) -> int | None:
    """The exact number of singular values of the float64 matrix ``A`` (as stored) that exceed
    ``tol``, or ``None`` if a zero pivot prevents the certificate.

    ``sigma_i > tol`` iff ``lambda_i(A^T A - tol^2 I) > 0``; the count of positive eigenvalues is
    the count of positive pivots of a symmetric Gaussian elimination (Sylvester's law of inertia),
    done in exact rational arithmetic (python-flint ``fmpq``) from the exact dyadic values.

    Raises:
        AttentionInputError: non-finite or empty input, or ``tol < 0``.
    """
    from flint import fmpq

    a = np.asarray(A, dtype=np.float64)
    if a.ndim != 2 or a.size == 0 or not np.isfinite(a).all() or not (tol >= 0):
        raise AttentionInputError("certified_singular_value_count: need a finite 2-D array and tol >= 0")
    n = a.shape[1]
    cols = [[fmpq(*float(v).as_integer_ratio()) for v in a[:, j]] for j in range(n)]
    t2 = fmpq(*float(tol).as_integer_ratio()) ** 2
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


def exact_attention_rows(M_int, V_int, mask: torch.Tensor | str | None = None) -> list:
    """Exact attention outputs for integer logits ``M (N, L)`` and integer values ``V (L, dv)``:
    row ``i`` of ``softmax(mask(M s)) V`` as ``(numerators, denominator)`` in ``Z[t]`` with
    ``t = e^s`` (``numerators[c] / denominator`` is output entry ``(i, c)`` after the common
    factor ``t^{-min_j M_ij}`` cancels). Two rows are equal as real numbers at a transcendental
    ``t`` iff they are equal as rational functions (see :func:`rational_rows_equal`).

    Raises:
        AttentionInputError: non-integer input, mismatched shapes, or an empty mask row.
    """
    from flint import fmpz_poly

    m = np.asarray(M_int, dtype=np.float64)
    v = np.asarray(V_int, dtype=np.float64)
    if (m.ndim != 2 or v.ndim != 2 or m.shape[1] != v.shape[0] or not np.all(m == np.round(m))
            or not np.all(v == np.round(v))):
        raise AttentionInputError("exact_attention_rows: need integer M (N, L) and V (L, dv)")
    N, L = m.shape
    keep = (np.ones((N, L), dtype=bool) if mask is None else
            attention_mask(mask, N).numpy() if isinstance(mask, str) else np.asarray(mask, dtype=bool))
    if keep.shape != (N, L) or not keep.any(axis=1).all():
        raise AttentionInputError("exact_attention_rows: mask has the wrong shape or an empty row")
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
    """Whether two rows from :func:`exact_attention_rows` are equal as vectors of rational functions."""
    (na, da), (nb, db) = a, b
    return len(na) == len(nb) and all(x * db == y * da for x, y in zip(na, nb, strict=True))
