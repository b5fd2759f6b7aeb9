"""Cost of attention: multiplication counts, FLOPs by torch's meta device, peak memory of chunked schedules.

Units: flops count one multiply and one add of an ``(m, n) @ (n, p)`` product as ``2 m n p``
(the convention of ``torch.utils.flop_counter``); operation counts are scalar operations; memory is
a number of intermediate values (not bytes). Sizes: ``N`` tokens, head dimension ``d``, Linformer's
``k`` projected rows, ``m`` features of a linear-attention feature map.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .arrays import AttentionInputError, as_array, positive_int, torch

COUNT_METHODS = ("standard", "linformer", "doc-linformer", "linear")
"""The attention variants whose multiplications :func:`matmul_count` counts, by name."""


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
    N, d = positive_int(N, "N"), positive_int(d, "d")
    if method == "standard":
        return _mm(N, d, N) + _mm(N, N, d)
    if method in ("linformer", "doc-linformer"):
        k = positive_int(k, "k")
        if method == "linformer":
            return _mm(k, N, d) + _mm(k, N, d) + _mm(N, d, k) + _mm(N, k, d)
        return _mm(d, N, d) + _mm(N, d, d)
    if method == "linear":
        m = positive_int(m, "m")
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


def normalised_linear_op_count(N: int, d: int, m: int | None = None) -> int:
    """Exact number of scalar operations of one head of normalised linear attention with the
    ``elu + 1`` feature map (Katharopoulos et al. 2020, arXiv:2006.16236, eqs. (6)-(7); 003 表 11.3.2's
    ``phi(Q)(phi(K)^T V)`` with its normaliser), ``phi: R^d -> R^m`` (``m = d`` for ``elu + 1``):

    - the feature map on ``Q`` and on ``K``: two operations per entry (the ``elu`` and the ``+ 1``), ``4 N m``;
    - ``S = phi(K)^T V``: ``2 m N d`` (the ``2 m n p`` matmul convention of :func:`matmul_count`);
    - ``z = phi(K)^T 1``: column sums, ``m (N - 1)``;
    - ``phi(Q) S``: ``2 N m d``; ``phi(Q) z``: ``2 N m``;
    - the division of each output row by its normaliser: ``N d``.

    The matmul part equals :func:`matmul_count` ``("linear", N, d, m=m)``. Compare with
    :func:`op_count` ``("standard", N, d)``, which counts softmax attention the same way.

    Raises:
        AttentionInputError: a size that is not a positive integer.
    """
    N, d = positive_int(N, "N"), positive_int(d, "d")
    m = d if m is None else positive_int(m, "m")
    return 4 * N * m + matmul_count("linear", N, d, m=m) + m * (N - 1) + _mm(N, m, 1) + N * d


PARAMETER_METHODS = ("standard", "linear", "linformer")
"""The attention variants whose parameters :func:`attention_parameter_count` counts, by name."""


def attention_parameter_count(method: str, d_model: int, *, N: int | None = None, k: int | None = None) -> int:
    """Trainable parameters of one multi-head attention layer of width ``d_model`` computed by ``method``:

    - ``standard``: ``W^Q, W^K, W^V, W^O`` (``d_model x d_model``) with their biases, ``4 d^2 + 4 d``
      (Vaswani et al. 2017 §3.2.2; the count of ``torch.nn.MultiheadAttention``); the number of heads
      does not change it.
    - ``linear``: the same projections (Katharopoulos et al. 2020 replace the softmax by a feature
      map, which has no parameters), ``4 d^2 + 4 d``.
    - ``linformer``: the standard projections plus ``E, F`` (``k x N``), shared across heads
      (Wang et al. 2020, arXiv:2006.04768, §4 "headwise sharing"), ``4 d^2 + 4 d + 2 k N``.

    Raises:
        AttentionInputError: unknown method, a non-positive size, or ``N``, ``k`` missing for
            ``linformer``.
    """
    d = positive_int(d_model, "d_model")
    base = 4 * d * d + 4 * d
    if method in ("standard", "linear"):
        return base
    if method == "linformer":
        return base + 2 * positive_int(k, "k") * positive_int(N, "N")
    raise AttentionInputError(f"method: unknown {method!r} (one of {', '.join(PARAMETER_METHODS)})")


def factorised_parameter_count(d_in: int, d_out: int, r: int) -> int:
    """Parameters of a ``d_in x d_out`` weight stored as a rank-``r`` factorisation ``B A``
    (``B: d_in x r``, ``A: r x d_out``; 003 表 11.3.3's ``Delta W = B A``, Hu et al. 2021 LoRA §4.1):
    ``r (d_in + d_out)``, against ``d_in d_out`` for the dense weight.

    Raises:
        AttentionInputError: a size that is not a positive integer.
    """
    d_in, d_out, r = positive_int(d_in, "d_in"), positive_int(d_out, "d_out"), positive_int(r, "r")
    return r * (d_in + d_out)


@functools.lru_cache(maxsize=8192, typed=True)  # typed: True is not the integer 1 here (validation)
def meta_matmul_flops(method: str, N: int, d: int, k: int | None = None, m: int | None = None) -> int:
    """The matmul flops of ``method`` as counted by ``torch.utils.flop_counter.FlopCounterMode``
    on ``meta`` tensors (shapes only, no data, so ``N = 10^6`` costs nothing): an independent
    count to cross-check :func:`matmul_count`. Memoised by its arguments (a pure function of the shapes;
    a check asks for the same shapes in many examples).

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
    N, chunk = positive_int(N, "N"), positive_int(chunk, "chunk")
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
    q, kk, v = as_array(Q, "Q"), as_array(K, "K"), as_array(V, "V")
    chunk = positive_int(chunk, "chunk")
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
