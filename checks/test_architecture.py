"""Architecture: what causal masks, heads and position schemes do to the attention matrix.

Decoder-only vs bidirectional attention (002: ``causal-vs-bidirectional-rank``, ``causal-implicit-position``,
``kv-cache-reuse-decoder-only``, ``forward-backward-mixed-heads``, ``decoder-only-full-rank-more-expressive``
with the causal patterns a head of dimension d expresses), the study note's remedies
(``study-note-multi-head-raises-rank``, ``study-note-sparse-attention-avoids-low-rank``,
``study-note-rope-position-modelling``, ``study-note-flashattention-perceiver``) and the head-size
bottleneck of Bhojanapalli et al. 2020 (``bhojanapalli-low-rank-bottleneck``). Masked padding (004, a sidebar reply:
``reply-padding-masked-no-effect``). Rank collapse with depth
is ``checks/test_depth.py``. Tolerances are stated next to each comparison.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import example, given, target
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attention_claims._cache import disk_memo_ints
from attention_claims.maths import (
    arb_matrix,
    arb_softmax_attention,
    attention_mask,
    attention_matrix,
    bisect_predicate,
    causal_realisation,
    certified_rank_at_least,
    certified_sign,
    certified_singular_value_count,
    certify_inexpressible,
    certify_nonzero_det,
    default_rank_tolerance,
    effective_rank,
    exact_attention_rows,
    exact_softmax_rank,
    inexpressible_causal_pattern,
    masked_softmax_attention,
    mp_matrix_effective_rank,
    numerical_rank,
    precision,
    rational_rows_equal,
    realises,
)
from attention_claims.maths.rounding import attention_output_tolerance
from attention_claims.testkit import (
    Tolerance,
    gamma,
    gaussian_qk,
    integer_qk,
    log_uniform,
    profiles,
    qk_pairs,
    reading_params,
    refute,
    refute_deferred,
    require_device,
    search_seeds,
)
from attention_claims.testkit.failure_profiles import (
    RANK_REL_TOL,
    gaussian_qk_draws,
    gaussian_softmax_ranks,
    record_profile,
)

# -- failure profiles at the documents' sizes (docs/verdicts.md, "Failure profile") -----------------------
# 003's 表 11.3.1 Base row: N = 512 tokens, hidden size 768 in 12 heads of d = 64. Each helper draws a fixed
# seed's Gaussian inputs and returns plain integers (cached in the process and on disk), so a warm run
# computes no draw; the checks turn them into failed flags with record_profile.
PROFILE_N, PROFILE_D, PROFILE_TRIALS = 512, 64, 30
PROFILE_WINDOW = 32  # Longformer's window is 1/8 of its 4096-token length (512 of 4096); the same share of N = 512
_EPS64 = float(np.finfo(np.float64).eps)


def _full_rank_margin(s: np.ndarray) -> bool:
    """Whether singular values ``s`` (descending) of an ``n x n`` float64 attention matrix certify rank n:
    the smallest exceeds ``16 n eps64 sigma_1``, more than the rounding of the stored matrix (entries within
    a few eps64 of exact, so by Weyl's inequality within ``n eps64 sigma_1`` in spectral norm)."""
    return bool(s[-1] > 16 * s.size * _EPS64 * s[0])


def _log10_milli(x: float) -> int:
    """``floor(1000 log10 x)`` (``x > 0``), an integer to store a positive measured ratio."""
    return math.floor(1000 * math.log10(x)) if x > 0 else -10**9


@functools.cache
@disk_memo_ints
def causal_bidirectional_profile_draws(N: int, d: int, window: int, trials: int, seed: int) -> tuple[int, ...]:
    """Eight integers per draw of ``Q, K (N, d)``, i.i.d. standard normal from ``numpy.random.default_rng(seed)``,
    attention ``softmax(mask(QK^T / sqrt d))`` in float64 (:func:`attention_matrix`): the numerical ranks
    (NumPy's default tolerance ``sigma_1 N eps64``) of the causal and of the bidirectional matrix, their
    effective ranks at tau = 0.9 (003 定义 11.25), whether ``(A_causal + A_anticausal) / 2`` is certified
    non-singular (:func:`_full_rank_margin`), whether its determinant is negative (``numpy.linalg.slogdet``), and
    whether the banded matrix ``|i - j| <= window`` is certified of rank N, and whether the bidirectional matrix
    is. Flattened, ``8 * trials`` long.

    Raises:
        AttentionInputError: bad sizes (:func:`attention_matrix`, :func:`attention_mask`).
    """
    out: list[int] = []
    for Q, K, _ in gaussian_qk_draws(N, d, trials, seed):
        Ac, Ab = attention_matrix(Q, K, "causal"), attention_matrix(Q, K)
        sc, sb = np.linalg.svd(Ac, compute_uv=False), np.linalg.svd(Ab, compute_uv=False)
        avg = (Ac + attention_matrix(Q, K, "anticausal")) / 2
        s_avg = np.linalg.svd(avg, compute_uv=False)
        s_band = np.linalg.svd(attention_matrix(Q, K, attention_mask("banded", N, window=window)), compute_uv=False)
        out += [int((sc > default_rank_tolerance(sc, Ac.shape, _EPS64)).sum()),
                int((sb > default_rank_tolerance(sb, Ab.shape, _EPS64)).sum()),
                effective_rank(sc, 0.9), effective_rank(sb, 0.9),
                int(_full_rank_margin(s_avg)), int(np.linalg.slogdet(avg)[0] < 0), int(_full_rank_margin(s_band)),
                int(_full_rank_margin(sb))]
    return tuple(out)


def _rope_rotate(X: np.ndarray, base: float = 10000.0) -> np.ndarray:
    """RoPE (Su et al. 2021, eq. (34)): rotate coordinate pair ``(2i, 2i+1)`` of row ``p`` by ``p base^(-2i/d)``;
    ``X (N, d)``, ``d`` even."""
    N, d = X.shape
    ang = np.arange(N)[:, None] * base ** (-np.arange(0, d, 2) / d)[None, :]
    c, s = np.cos(ang), np.sin(ang)
    out = np.empty_like(X)
    out[:, 0::2] = c * X[:, 0::2] - s * X[:, 1::2]
    out[:, 1::2] = s * X[:, 0::2] + c * X[:, 1::2]
    return out


@functools.cache
@disk_memo_ints
def rope_profile_draws(N: int, d: int, trials: int, seed: int) -> tuple[int, ...]:
    """Numerical ranks (NumPy's default tolerance) of the ``N x N`` RoPE logit matrix
    ``RoPE(Q) RoPE(K)^T / sqrt d`` (:func:`_rope_rotate`, positions 0..N-1) for ``trials`` draws of
    ``Q, K (N, d)`` i.i.d. standard normal from ``numpy.random.default_rng(seed)``, float64."""
    rng = np.random.default_rng(seed)
    return tuple(numerical_rank(_rope_rotate(rng.standard_normal((N, d))) @ _rope_rotate(rng.standard_normal((N, d))).T
                                / math.sqrt(d))[0] for _ in range(trials))


@functools.cache
@disk_memo_ints
def prefixlm_profile_draws(n: int, m: int, prefix: int, d: int, trials: int, seed: int) -> tuple[int, ...]:
    """Per draw of ``Q, K, V (n + m, d)`` i.i.d. standard normal (``numpy.random.default_rng(seed)``): the
    largest change of the first ``n`` PrefixLM outputs (prefix ``prefix``, :func:`attention_mask`) when ``m``
    tokens are appended after them, relative to their largest entry, float64, in units of 1e-18 (rounded up)."""
    rng = np.random.default_rng(seed)
    out: list[int] = []
    for _ in range(trials):
        Q, K, V = (rng.standard_normal((n + m, d)) for _ in range(3))
        before = attention_matrix(Q[:n], K[:n], attention_mask("prefix", n, prefix=prefix)) @ V[:n]
        after = (attention_matrix(Q, K, attention_mask("prefix", n + m, prefix=prefix)) @ V)[:n]
        out.append(math.ceil(float(np.abs(after - before).max() / np.abs(before).max()) * 1e18))
    return tuple(out)


@functools.cache
@disk_memo_ints
def causal_pattern_profile_draws(N: int, d: int, trials: int, seed: int) -> tuple[int, ...]:
    """Per draw of a positive causal pattern ``P_ab ∝ e^{M_ab}`` (``b <= a``, ``M (N, N)`` i.i.d. standard normal
    from ``numpy.random.default_rng(seed)``): whether the ``(d+1) x (d+1)`` block ``C_ab = M_ab - M_a0`` on rows
    ``N-d-1 .. N-1`` and columns ``1 .. d+1`` (every ``b <= a``: needs ``N >= 2d + 2``) has certified rank d + 1
    (smallest singular value above ``16 (d+1) eps64 sigma_1``), then ``floor(1000 log10 sigma_min/sigma_1)``.
    A causal softmax(mask(QK^T/sqrt d)) with Q, K in R^(N x d) has ``log(P_ab/P_a0) = q_a.(k_b - k_0)/sqrt d``
    there, a matrix of rank <= d, so rank d + 1 proves that no head of dimension d produces P. Flattened pairs.

    Raises:
        ValueError: ``N < 2d + 2``.
    """
    if N < 2 * d + 2:
        raise ValueError(f"need N >= 2d + 2, got N = {N}, d = {d}")
    rng = np.random.default_rng(seed)
    out: list[int] = []
    for _ in range(trials):
        M = rng.standard_normal((N, N))
        rows = np.arange(N - d - 1, N)
        C = M[rows][:, 1:d + 2] - M[rows, :1]
        s = np.linalg.svd(C, compute_uv=False)
        out += [int(s[-1] > 16 * (d + 1) * _EPS64 * s[0]), _log10_milli(float(s[-1] / s[0]))]
    return tuple(out)


@pytest.fixture(scope="module")
def causal_bidirectional_draws():
    """:func:`causal_bidirectional_profile_draws` at the documents' sizes, computed before Hypothesis starts the
    checks that profile with it (so that their first example does not carry the SVDs)."""
    return causal_bidirectional_profile_draws(PROFILE_N, PROFILE_D, PROFILE_WINDOW, PROFILE_TRIALS, 0)


@pytest.fixture(scope="module")
def rope_draws():
    """:func:`rope_profile_draws` at the documents' sizes, before Hypothesis starts."""
    return rope_profile_draws(PROFILE_N, PROFILE_D, PROFILE_TRIALS, 0)


def _rows_of(draws: tuple[int, ...], width: int) -> list[tuple[int, ...]]:
    return [draws[i:i + width] for i in range(0, len(draws), width)]


_SIZES = f"N={PROFILE_N}, d={PROFILE_D}"
_GAUSS = "Gaussian Q, K (numpy default_rng(0))"


def _profile_causal_vs_bidirectional(log, measure_name: str, draws: tuple[int, ...]) -> None:
    """causal-vs-bidirectional-rank's float readings: a draw fails when the causal measure is below the bidirectional one."""
    if log.profile is not None:  # computed on the first example; a check runs many
        return
    rows = _rows_of(draws, 8)
    i, what = (0, "numerical rank (NumPy's default tolerance sigma_1 N eps64)") if measure_name == "numerical" else (
        2, "effective rank at tau = 0.9 (003 定义 11.25)")
    c, b = [r[i] for r in rows], [r[i + 1] for r in rows]
    record_profile(log, [x < y for x, y in zip(c, b, strict=True)], setting=_SIZES,
                   summary=f"{what} of the causal and the bidirectional softmax(QK^T/sqrt d), float64, of the same "
                           f"{_GAUSS}: causal {min(c)}..{max(c)} against bidirectional {min(b)}..{max(b)}; a draw fails "
                           f"when causal < bidirectional")


def _profile_head_average(log, draws: tuple[int, ...]) -> None:
    """forward-backward-mixed-heads/head-average-full-rank: a draw fails unless (A_low + A_up)/2 is certified non-singular."""
    if log.profile is not None:  # computed on the first example; a check runs many
        return
    rows = _rows_of(draws, 8)
    ok0, sign0 = _head_average_at_zero(PROFILE_N)
    neg = sum(r[5] for r in rows)
    crossing = (f"; det < 0 (numpy slogdet) in {neg} of these draws and > 0 at Q = 0 (certified non-singular there), so "
                f"for each of those an exactly singular average lies at some t Q, 0 < t < 1 (intermediate value theorem)"
                if ok0 and sign0 > 0 else f"; det < 0 (numpy slogdet) in {neg} of these draws")
    record_profile(log, [not r[4] for r in rows], setting=_SIZES,
                   summary=f"(A_low + A_up)/2 of the causal and anticausal softmax(QK^T/sqrt d), float64, {_GAUSS}: "
                           f"certified non-singular in {sum(r[4] for r in rows)} of {len(rows)} draws (smallest singular "
                           f"value above 16 N eps64 sigma_1, beyond rounding); the failure needs the measure-zero set "
                           f"where det (A_low + A_up)/2 = 0, which a path t Q crosses when det changes sign between "
                           f"Q = 0 and Q (the certified counterexample, N = 5, d = 1){crossing}")


def _profile_bidirectional_full_rank(log, claimed, draws: tuple[int, ...]) -> None:
    """decoder-only-full-rank-more-expressive/bidirectional-loses-full-rank: a draw fails when the bidirectional
    matrix is certified of rank N, above the claimed bound."""
    if log.profile is not None:  # computed on the first example; a check runs many
        return
    rows = _rows_of(draws, 8)
    bound = claimed.eval("bidirectional_rank_at_most", exact=True, N=PROFILE_N, d=PROFILE_D)
    record_profile(log, [bool(r[7]) and PROFILE_N > bound for r in rows], setting=_SIZES,
                   summary=f"bidirectional softmax(QK^T/sqrt d), float64, {_GAUSS}: rank N = {PROFILE_N} certified "
                           f"(smallest singular value above 16 N eps64 sigma_1, beyond rounding) in {sum(r[7] for r in rows)} "
                           f"of {len(rows)} draws, against the claimed rank <= {claimed.text('bidirectional_rank_at_most')} "
                           f"= {bound}")


@functools.cache
def _head_average_at_zero(N: int) -> tuple[bool, int]:
    """Whether ``(A_low + A_up)/2`` at ``Q = 0`` (uniform causal and anticausal rows), ``N x N`` float64, is
    certified non-singular (:func:`_full_rank_margin`), and the sign of its determinant (``numpy.linalg.slogdet``)."""
    Q, K = np.zeros((N, 1)), np.zeros((N, 1))
    avg = (attention_matrix(Q, K, "causal") + attention_matrix(Q, K, "anticausal")) / 2
    return _full_rank_margin(np.linalg.svd(avg, compute_uv=False)), int(np.linalg.slogdet(avg)[0])


def _profile_banded(log, generic: bool, draws: tuple[int, ...]) -> None:
    """study-note-sparse-attention-avoids-low-rank/banded-bidirectional-every-input (only that reading: ``generic`` False)."""
    if log.profile is not None:  # computed on the first example; a check runs many
        return
    if generic:
        return
    rows = _rows_of(draws, 8)
    record_profile(log, [not r[6] for r in rows], setting=f"{_SIZES}, window |i - j| <= {PROFILE_WINDOW}",
                   summary=f"banded softmax(mask(QK^T/sqrt d)), float64, {_GAUSS}: rank N certified in "
                           f"{sum(r[6] for r in rows)} of {len(rows)} draws (smallest singular value above 16 N eps64 "
                           f"sigma_1); the failure needs special logits whose banded softmax rows are dependent, such "
                           f"as constant logits (equal tokens: the certified counterexample, N = 5, w = 1, all logits 0)")


def _profile_rope(log, draws: tuple[int, ...]) -> None:
    """study-note-rope-position-modelling/raises-logit-rank: a draw fails when the RoPE logit rank is <= d."""
    if log.profile is not None:  # computed on the first example; a check runs many
        return
    record_profile(log, [r <= PROFILE_D for r in draws], setting=f"{_SIZES}, RoPE base 10000",
                   summary=f"numerical rank (NumPy's default tolerance) of the N x N logits RoPE(Q) RoPE(K)^T/sqrt d "
                           f"(Su et al.'s rotation, positions 0..N-1), float64, {_GAUSS}: {min(draws)}..{max(draws)} "
                           f"against d = {PROFILE_D}; a draw fails when the rank is not above d")


def _profile_prefixlm(log) -> None:
    """kv-cache-reuse-decoder-only/prefixlm-generated-tokens: a draw fails when no earlier output changes."""
    if log.profile is not None:  # computed on the first example; a check runs many
        return
    n, m, prefix = PROFILE_N - 64, 64, PROFILE_N // 2
    rel = [r * 1e-18 for r in prefixlm_profile_draws(n, m, prefix, PROFILE_D, PROFILE_TRIALS, 0)]
    record_profile(log, [r <= 1e-12 for r in rel], setting=f"N={PROFILE_N} ({n} cached + {m} generated), prefix {prefix}, d={PROFILE_D}",
                   summary=f"PrefixLM outputs softmax(mask(QK^T/sqrt d)) V of the first {n} tokens, float64, Gaussian "
                           f"Q, K, V (numpy default_rng(0)), before and after {m} generated tokens are appended: largest "
                           f"change {min(rel):.2g}..{max(rel):.2g} relative to the largest output; a draw fails when it is "
                           f"within 1e-12 (unchanged up to float64 rounding: the cache is reusable)")


def _profile_causal_pattern(log, claimed) -> None:
    """decoder-only-full-rank-more-expressive/causal-expressibility: a draw fails when the random pattern is certified
    not to be a causal softmax attention matrix of head dimension d (d = 64, when the record's sufficient_head_dim
    at N = 512 covers it; otherwise no profile)."""
    if log.profile is not None:  # computed on the first example; a check runs many
        return
    if PROFILE_D < claimed.eval("sufficient_head_dim", exact=True, N=PROFILE_N):
        return
    rows = _rows_of(causal_pattern_profile_draws(PROFILE_N, PROFILE_D, PROFILE_TRIALS, 0), 2)
    lo, hi = min(r[1] for r in rows) / 1000, max(r[1] for r in rows) / 1000
    record_profile(log, [bool(r[0]) for r in rows], setting=_SIZES,
                   summary=f"random positive causal patterns P_ab ∝ e^(M_ab), b <= a, M i.i.d. standard normal (numpy "
                           f"default_rng(0)): the {PROFILE_D + 1} x {PROFILE_D + 1} block M_ab - M_a0 (rows "
                           f"{PROFILE_N - PROFILE_D - 1}..{PROFILE_N - 1}, columns 1..{PROFILE_D + 1}) has rank d + 1 "
                           f"(sigma_min/sigma_1 = 10^{lo:.2f}..10^{hi:.2f}, above 16 (d+1) eps64), while a head of "
                           f"dimension d gives it rank <= d; a draw fails when P is so proved unreachable")


def _rank_flip_boundary(Q1, K, s, measure) -> str:
    """Bisection on the logit scale c (Q = c Q1) for where causal < bidirectional starts, between 1e-3 and s."""
    def fails(c):
        return measure(attention_matrix(Q1 * c, K, "causal")) < measure(attention_matrix(Q1 * c, K))
    try:
        c = bisect_predicate(fails, 1e-3, s, rtol=1e-3)
    except ValueError:
        return f"no single flip of the comparison between logit scales 1e-3 and {s:.3g} for this draw"
    return f"for this draw the comparison reverses at logit scale {c:.4g} (bisection)"


# -- implicit position information (080) ----------------------------------------------------------
@st.composite
def token_layer(draw, n=(2, 6), distinct_first_two=False):
    N = draw(st.integers(*n), label="N")
    D = draw(st.integers(1, 3), label="D")
    ints = st.integers(-2, 2)
    X = draw(hnp.arrays(np.int64, (N, D), elements=ints), label="X")
    Wq = draw(hnp.arrays(np.int64, (D, D), elements=ints), label="Wq")
    Wk = draw(hnp.arrays(np.int64, (D, D), elements=ints), label="Wk")
    perm = draw(st.permutations(list(range(N))), label="permutation")
    return X, Wq, Wk, np.array(perm)


def _block_stack(X: torch.Tensor, params, mask) -> torch.Tensor:
    """Pre-LN Transformer blocks without position encoding: x + Attn(LN x); x + MLP(LN x)."""
    for Wq, Wk, Wv, W1, W2 in params:
        h = torch.nn.functional.layer_norm(X, X.shape[-1:])
        X = X + masked_softmax_attention(h @ Wq, h @ Wk, mask, dtype=X.dtype) @ (h @ Wv)
        h = torch.nn.functional.layer_norm(X, X.shape[-1:])
        X = X + torch.relu(h @ W1) @ W2
    return X


def _block_params(rng, D, L=2, dtype=torch.float64):
    g = lambda *s: torch.tensor(rng.standard_normal(s) / math.sqrt(s[0]), dtype=dtype)  # noqa: E731
    return [(g(D, D), g(D, D), g(D, D), g(D, 2 * D), g(2 * D, D)) for _ in range(L)]


# -- KV cache (090) ---------------------------------------------------------------------------------
@st.composite
def growing_sequence(draw):
    n = draw(st.integers(1, 5), label="n (cached)")
    m = draw(st.integers(1, 3), label="m (appended)")
    d = draw(st.integers(1, 3), label="d")
    ints = st.integers(-2, 2)
    Q = draw(hnp.arrays(np.int64, (n + m, d), elements=ints), label="Q")
    K = draw(hnp.arrays(np.int64, (n + m, d), elements=ints), label="K")
    V = draw(hnp.arrays(np.int64, (n, 2), elements=ints), label="V (cached)")
    p = draw(st.integers(0, n), label="PrefixLM prefix length")
    return n, m, Q, K, np.vstack([V, np.full((m, 2), 100)]), p  # appended values far from the cached ones


def _changed(before, after, n) -> list[int]:
    return [i for i in range(n) if not rational_rows_equal(before[i], after[i])]


@st.composite
def seeded_growing_sequence(draw):
    n, m, d = draw(st.integers(1, 5), label="n"), draw(st.integers(1, 3), label="m"), draw(st.integers(1, 3), label="d")
    p = draw(st.integers(1, n), label="PrefixLM prefix length (a real, non-empty prefix)")
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="seed"))
    Q, K = rng.integers(-2, 3, (n + m, d)), rng.integers(-2, 3, (n + m, d))
    return n, m, Q, K, np.vstack([rng.integers(-2, 3, (n, 2)), np.full((m, 2), 100)]), p


# -- 160: multi-head and rank -----------------------------------------------------------------------
@st.composite
def multi_head_case(draw):
    h = draw(st.sampled_from([2, 3]), label="heads")
    dh = draw(st.integers(1, 2), label="head size")
    d = h * dh
    N = d + 1
    seed = draw(st.integers(0, 2**32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    return h, dh, d, N, rng.standard_normal((N, d)), [rng.standard_normal((d, d)) for _ in range(3)]


def _heads_output(X, Wq, Wk, Wv, h, dh):
    """arb matrix of the concatenated head outputs (N x h*dh) and its float64 value."""
    from flint import arb_mat

    N = X.shape[0]
    blocks, floats = [], []
    for a in range(h):
        sl = slice(a * dh, (a + 1) * dh)
        Q, K, V = X @ Wq[:, sl], X @ Wk[:, sl], X @ Wv[:, sl]
        blocks.append(arb_softmax_attention(Q, K) * arb_matrix(V))
        floats.append(attention_matrix(Q, K) @ V)
    out = arb_mat(N, h * dh)
    for a, B in enumerate(blocks):
        for i in range(N):
            for j in range(dh):
                out[i, a * dh + j] = B[i, j]
    return out, np.hstack(floats)


# -- 200: RoPE ------------------------------------------------------------------------------------------
@functools.cache
def _rotation(p: int) -> tuple[Fraction, Fraction]:
    """cos and sin of p * theta with cos theta = 3/5, sin theta = 4/5, exactly."""
    if p == 0:
        return Fraction(1), Fraction(0)
    c, s = _rotation(p - 1)
    return c * Fraction(3, 5) - s * Fraction(4, 5), s * Fraction(3, 5) + c * Fraction(4, 5)


def _rope(X, positions):
    """Rotate consecutive coordinate pairs of each row by position * theta, cos theta = 3/5 (exact rationals)."""
    out = []
    for x, p in zip(X, positions, strict=True):
        c, s = _rotation(p)
        row = [Fraction(int(v)) for v in x]
        for a in range(0, len(row) - 1, 2):
            row[a], row[a + 1] = c * row[a] - s * row[a + 1], s * row[a] + c * row[a + 1]
        out.append(row)
    return out


# -- 230: FlashAttention and Perceiver -------------------------------------------------------------
def _flash_cpu(Q, K, V, causal):
    q, k, v = (torch.as_tensor(x)[None, None] for x in (Q, K, V))
    return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, is_causal=causal)[0][0, 0].numpy()


def _mp_reference(Q, K, V, causal):
    with mpmath.workdps(30):
        N, d = Q.shape
        out = np.zeros((N, V.shape[1]))
        for i in range(N):
            js = range(i + 1) if causal else range(K.shape[0])
            z = {j: mpmath.fsum(mpmath.mpf(float(a)) * mpmath.mpf(float(b)) for a, b in zip(Q[i], K[j], strict=True))
                 / mpmath.sqrt(d) for j in js}
            m = max(z.values())
            e = {j: mpmath.exp(v - m) for j, v in z.items()}
            tot = mpmath.fsum(e.values())
            for c in range(V.shape[1]):
                out[i, c] = float(mpmath.fsum(e[j] * mpmath.mpf(float(V[j, c])) for j in js) / tot)
        return out


@st.composite
def qkv(draw, n=(1, 12), d=(1, 8), dims=None):
    N = draw(st.integers(*n), label="N")
    dd = draw(st.sampled_from(dims) if dims else st.integers(*d), label="d")
    s = draw(log_uniform(-2, 1.5), label="logit scale")
    seed = draw(st.integers(0, 2**32 - 1), label="seed")
    causal = draw(st.booleans(), label="causal")
    rng = np.random.default_rng(seed)
    return rng.standard_normal((N, dd)) * s, rng.standard_normal((N, dd)), rng.standard_normal((N, dd)), causal


# -- Bhojanapalli et al. 2020 -----------------------------------------------------------------------
def _expressible(X: np.ndarray, m: np.ndarray) -> bool:
    """Whether the column-stochastic P with P_ji ∝ 2^{m_ji} equals Softmax(X^T B X / sqrt d) column-wise for some
    B (d x d): m in span{X^T E_ab X} + span{1 e_i^T} over Q (exact ranks; X, m integer)."""
    from flint import fmpz_mat

    d, n = X.shape
    basis = [(X.T[:, [a]] @ X[[b], :]).ravel() for a in range(d) for b in range(d)]
    basis += [np.outer(np.ones(n), np.eye(n)[i]).ravel() for i in range(n)]
    Bm = np.array(basis, dtype=np.int64)
    rank = lambda A: fmpz_mat(A.shape[0], A.shape[1], [int(v) for v in A.ravel()]).rank()  # noqa: E731
    return rank(np.vstack([Bm, m.ravel()[None]])) == rank(Bm)


# -- causal vs bidirectional (050) ------------------------------------------------------------------
@pytest.mark.claim("causal-vs-bidirectional-rank", reading="exact")
@given(qk=integer_qk(n=(2, 8), bound=2))
# distinct one-dimensional tokens, Q = K = (0, 1, 2)^T: the softmax rows are t^(i j), a Vandermonde matrix in t^i,
# so both ranks are N = 3: equal ranks, where a strict inequality shows whatever the draws (the planted falsehood
# causal-vs-bidirectional-strict held under --hypothesis-seed=5: small integer draws often repeat a token)
@example(qk=(np.array([[0], [1], [2]], dtype=np.int64), np.array([[0], [1], [2]], dtype=np.int64)))
@profiles.scaled(0.25)
def test_causal_vs_bidirectional_exact(qk, claim_log, claimed):
    Q, K = qk
    N = Q.shape[0]
    rc, rb = exact_softmax_rank(Q @ K.T, "causal"), exact_softmax_rank(Q @ K.T)
    want = claimed.eval("causal_rank", exact=True, N=N)
    holds = claimed.eval("relation", exact=True, causal=rc, bidirectional=rb)
    claim_log.example(N=N, causal_rank=rc, bidirectional_rank=rb)
    claim_log.track("rank gap causal - bidirectional", rc - rb)
    if rc != want or not holds:
        refute(f"exact ranks: causal {rc}, bidirectional {rb}, N = {N}; claimed causal rank "
               f"{claimed.text('causal_rank')} = {want} and {claimed.text('relation')}", example={"Q": Q, "K": K},
               certified=True, certificate="ranks over Q(t) (exact)", certificate_strength="proved")
    claim_log.note("Exact ranks over Q(t); a positive gap occurs with repeated tokens.")


@pytest.mark.parametrize("measure_name", [
    pytest.param("numerical", marks=pytest.mark.claim("causal-vs-bidirectional-rank", reading="cpu-float64-numerical-rank"),
                 id="cpu-float64-numerical-rank"),
    pytest.param("effective", marks=pytest.mark.claim("causal-vs-bidirectional-rank", reading="effective-rank"), id="effective-rank"),
])
@given(qk=gaussian_qk(n=(3, 12), ratio=2, scale_exp=(-2.0, 3.0)))
# A flip the drawn examples found (N = 3, d = 1, logit scale 100: numerical ranks causal 1 < bidirectional 2),
# pinned: the derandomized draws follow this function's source, and after an edit of it 10 draws found none.
@example(qk=(np.array([[18.905338179353308], [-52.27484414807474], [-41.30635433918934]]),
             np.array([[-2.4414673826398556], [1.799707382720902], [1.1441658720372287]]), 100.0))
@profiles.scaled(0.25)
def test_causal_vs_bidirectional_float(measure_name, qk, claim_log, causal_bidirectional_draws):
    _profile_causal_vs_bidirectional(claim_log, measure_name, causal_bidirectional_draws)
    Q, K, s = qk
    N, d = Q.shape
    measure = (lambda A: numerical_rank(A)[0]) if measure_name == "numerical" else (
        lambda A: effective_rank(np.linalg.svd(A, compute_uv=False), 0.9))
    Ac, Ab = attention_matrix(Q, K, "causal"), attention_matrix(Q, K)
    rc, rb = measure(Ac), measure(Ab)
    claim_log.example(N=N, d=d, logit_scale=s)
    claim_log.track("causal - bidirectional", rc - rb)
    target(float(rb - rc), label="bidirectional - causal")
    if rc < rb:
        def certify():
            if measure_name == "numerical":
                cc = certified_singular_value_count(Ac, numerical_rank(Ac)[1])
                cb = certified_singular_value_count(Ab, numerical_rank(Ab)[1])
                ok, cert = (cc is not None and cb is not None and cc < cb), f"exact inertia counts {cc} < {cb}"
                strength = "proved"  # exact rational inertia (fmpq)
            else:
                cc, cb = mp_matrix_effective_rank(Ac, 0.9), mp_matrix_effective_rank(Ab, 0.9)
                ok, cert = cc < cb, f"30-digit effective ranks {cc} < {cb}"
                strength = "recomputed"  # 30-digit mpmath eigenvalues, no error bound
            refute(f"{measure_name} rank: causal {rc} < bidirectional {rb} for the same Q, K (N = {N}, d = {d}, "
                   f"logit scale {s:.3g})", example={"N": N, "d": d, "scale": s, "Q": Q, "K": K},
                   certified=ok, certificate=cert, boundary=_rank_flip_boundary(Q / s, K, s, measure),
                   certificate_strength=strength if ok else None)

        refute_deferred(f"causal {rc} < bidirectional {rb}", certify=certify)


@pytest.mark.claim("causal-vs-bidirectional-rank", reading="effective-rank")
def test_causal_vs_bidirectional_effective_search(claim_log):
    """A deterministic search (N = 3..4, sharp logits) complementing the Hypothesis property above."""
    def er(A):
        return effective_rank(np.linalg.svd(A, compute_uv=False), 0.9)

    hit = search_seeds([(N, 1, s) for N in (3, 4) for s in (10.0, 100.0)],
                       lambda Q, K: er(attention_matrix(Q, K, "causal")) < er(attention_matrix(Q, K)))
    claim_log.note("Deterministic search: N in {3, 4}, d = 1, logit scale in {10, 100}, seeds 0..63.")
    if hit is not None:
        N, d, s, seed, Q, K = hit
        cc, cb = mp_matrix_effective_rank(attention_matrix(Q, K, "causal"), 0.9), mp_matrix_effective_rank(attention_matrix(Q, K), 0.9)
        claim_log.example(N=N, d=d, logit_scale=s)
        refute(f"effective rank: causal {cc} < bidirectional {cb} for the same Q, K (N = {N}, d = {d}, logit scale "
               f"{s:g}, seed {seed})", example={"N": N, "d": d, "scale": s, "seed": seed, "Q": Q, "K": K},
               certified=cc < cb, certificate="30-digit eigenvalues of A^T A (mpmath)",
               boundary=_rank_flip_boundary(Q / s, K, s, er), certificate_strength="recomputed" if cc < cb else None)


@pytest.mark.claim("causal-implicit-position", reading="exact")
@given(case=token_layer())
@profiles.scaled(0.25)
def test_implicit_position_exact(case, claim_log, claimed):
    """The record's ``claimed.bidirectional`` and ``claimed.causal`` are relations in ``changed``: the number of
    output rows that a permutation of the tokens changes beyond permuting them (exact rational functions of
    t = e^{1/sqrt D}). Equivariance is ``changed == 0``; breaking it is ``changed > 0``, read for a permutation
    that reorders distinct tokens (a swap of the first two when they differ; the drawn permutation when it moves
    a token to a place held by a different one)."""
    X, Wq, Wk, perm = case
    N, D = X.shape

    def layer(Y, mask=None):
        return exact_attention_rows((Y @ Wq) @ (Y @ Wk).T, Y * 1 + np.arange(1, D + 1), mask)  # V injective in Y

    def changed(P, mask):  # rows i with f(PX)_i != f(X)_{P(i)}
        before, after = layer(X, mask), layer(X[P], mask)
        return sum(1 for i in range(N) if not rational_rows_equal(after[i], before[P[i]]))

    perms = []
    if not np.array_equal(X[perm], X):
        perms.append(("the drawn permutation", perm, ("bidirectional",)))
    if N >= 2 and not np.array_equal(X[0], X[1]):
        swap = np.arange(N)
        swap[[0, 1]] = [1, 0]
        perms.append(("a swap of the first two (distinct) tokens", swap, ("bidirectional", "causal")))
    claim_log.example(N=N)
    for what, P, masks in perms:
        for mask in masks:
            c = changed(P, None if mask == "bidirectional" else mask)
            if not claimed.eval(mask, exact=True, changed=c):
                refute(f"{mask} attention, {what} {list(map(int, P))}: {c} of {N} output rows changed beyond the "
                       f"permutation; claimed {claimed.text(mask)}", example={"X": X, "Wq": Wq, "Wk": Wk, "perm": P},
                       certified=True, certificate="exact rational functions of t", certificate_strength="proved")
            if mask == "causal":
                claim_log.track("causal rows changed by a swap", c)
    # BOS followed by identical tokens: causal outputs distinct, bidirectional identical
    bos = np.vstack([X[:1] + 3, np.repeat(X[:1], N, axis=0)])
    Mb, Vb = (bos @ Wq) @ (bos @ Wk).T, bos * 1 + np.arange(1, D + 1)
    cb, bb = exact_attention_rows(Mb, Vb, "causal"), exact_attention_rows(Mb, Vb)
    distinct = all(not rational_rows_equal(cb[i], cb[j]) for i in range(1, N + 1) for j in range(i + 1, N + 1))
    same = all(rational_rows_equal(bb[1], bb[i]) for i in range(2, N + 1))
    if not (distinct and same):
        refute(f"BOS + {N} identical tokens: causal rows pairwise distinct = {distinct}, bidirectional rows "
               f"identical = {same}", example={"X": bos, "Wq": Wq, "Wk": Wk}, certified=True,
               certificate="exact rational functions of t", certificate_strength="proved")
    claim_log.note(f"One layer, integer inputs: outputs compared exactly as rational functions of "
                   f"t = e^{{1/sqrt D}}; with changed = the output rows a permutation of distinct tokens changes "
                   f"beyond permuting them, bidirectional {claimed.text('bidirectional')} and causal "
                   f"{claimed.text('causal')} held on every draw, and after a BOS token the "
                   "causal outputs of identical tokens were pairwise distinct (position recoverable).")


@pytest.mark.claim("causal-implicit-position", reading="cpu-float64-transformer-block")
@given(N=st.integers(2, 16), D=st.integers(2, 8), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.25)
def test_implicit_position_blocks(N, D, seed, claim_log):
    rng = np.random.default_rng(seed)
    X = torch.tensor(rng.standard_normal((N, D)))
    params = _block_params(rng, D)
    perm = torch.tensor(rng.permutation(N))
    if torch.equal(perm, torch.arange(N)):
        perm = torch.roll(torch.arange(N), 1)
    ref = _block_stack(X, params, None)
    scale = float(ref.abs().max())
    bi = float((_block_stack(X[perm], params, None) - ref[perm]).abs().max()) / scale
    ca = float((_block_stack(X[perm], params, "causal") - _block_stack(X, params, "causal")[perm]).abs().max()) / scale
    claim_log.example(N=N, D=D, bidirectional_rel_diff=bi, causal_rel_diff=ca)
    # One threshold, 1e-12 relative (~5000 float64 ulps, far above what two float64 evaluations of the same
    # stack in another row order differ by): the bidirectional defect must stay below it (equivariant up to
    # rounding) and the causal one must exceed it (a change rounding cannot make: position is recoverable).
    # How large the causal change is depends on the draw (2e-7 at some seeds): its size is not the claim.
    if bi > 1e-12 or ca <= 1e-12:
        refute(f"2 blocks, N = {N}: bidirectional permutation defect {bi:.2e} (want <= 1e-12), causal {ca:.2e} "
               f"(want > 1e-12)", example={"N": N, "D": D, "seed": seed}, certified=False,
               certificate="float64 only")


F32_EPS = float(torch.finfo(torch.float32).eps)  # 2^-23 = 2u, one ulp at 1


def _float32_attention(x, W, mask):
    """softmax(x Wq (x Wk)^T / sqrt D) (x Wv) in float32, with the float32 A and V it used."""
    Q, K, V = x @ W[0], x @ W[1], x @ W[2]
    A = masked_softmax_attention(Q, K, mask, dtype="float32")
    return A @ V, Q, K, A, V


def _rounding_bound(Q, K, A, V, N: int, D: int) -> Tolerance:
    """What float32 rounding alone can change in an attention output computed in another summation
    order (a permuted row, a longer masked row), entrywise, an ``(N, d_v)`` :class:`Tolerance`.

    A sum of n terms computed in any order is within gamma_n of the exact one, relative to the sum of
    the terms' absolute values (Higham, 2nd ed., eq. (3.4)); two orders differ by at most twice that.
    The output sums N terms a_ij v_jk (A V) and its weights carry the N-term softmax normaliser and
    the D-term logits q_i . k_j (whose absolute error e shifts a weight by the relative factor e^e - 1
    ~ e, e <= gamma_D max_j |q_i| . |k_j|) and the D-term projections x W. So the bound is
        |difference|_ik <= (4 gamma_N + 4 gamma_D + 2 gamma_D max_j |q_i| . |k_j|) (|A| |V|)_ik,
    (to first order eps (2 N + 2 D + D max_j |q_i| . |k_j|), eps = 2u), no tolerance factor on top;
    anything above it is not rounding.
    """
    Qa, Ka = Q.double().abs(), K.double().abs()
    logit = (Qa @ Ka.T).max(dim=1, keepdim=True).values
    gN, gD = gamma(N, "float32"), gamma(D, "float32")
    bound = (4 * gN + 4 * gD + 2 * gD * logit) * (A.double().abs() @ V.double().abs())
    return Tolerance(bound, "(4 gamma_N + 4 gamma_D + 2 gamma_D max|q_i|.|k_j|) (|A||V|)_ik in float32: two "
                            "summation orders of the N-term and D-term sums (Higham eq. 3.4)")


def _rounding_only(a, b, bound: Tolerance, what: str, example: dict) -> tuple[float, float]:
    """Refute unless ``a`` and ``b`` (float32) are finite and differ by at most ``bound`` entrywise;
    returns the largest difference in ulps of the largest output and as a share of the bound."""
    diff = (a.double() - b.double()).abs()
    if not (torch.isfinite(a).all() and torch.isfinite(b).all()):
        refute(f"float32: {what}: a NaN or Inf", example=example, certified=True,
               certificate="the stored float32 outputs, read back exactly", certificate_strength="proved")
    share = bound.excess(diff)
    ulps = float(diff.max() / b.double().abs().max()) / F32_EPS if bool(b.abs().max() > 0) else 0.0
    if share > 1:
        refute(f"float32: {what} by more than rounding: {share:.3g} times the rounding bound "
               f"({ulps:.3g} ulps of the largest output)", example=example, certified=True,
               certificate="the stored float32 outputs, read back exactly, against the float64 rounding bound",
               boundary=f"the rounding bound {bound.derivation} (see _rounding_bound)",
               certificate_strength="recomputed")
    return ulps, share


@pytest.mark.claim("causal-implicit-position", reading="cpu-float32")
@given(N=st.integers(2, 32), D=st.integers(1, 8), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.25)
def test_implicit_position_float32(N, D, seed, claim_log):
    rng = np.random.default_rng(seed)
    X = torch.tensor(rng.standard_normal((N, D)), dtype=torch.float32)
    W = [torch.tensor(rng.standard_normal((D, D)) / math.sqrt(D), dtype=torch.float32) for _ in range(3)]
    perm = torch.tensor(rng.permutation(N))
    a = _float32_attention(X[perm], W, None)[0]
    b, Q, K, A, V = _float32_attention(X, W, None)
    b, Q, K, A, V = b[perm], Q[perm], K[perm], A[perm][:, perm], V[perm]
    # Equivariance up to rounding: the permuted rows sum the same terms in another order.
    ulps, share = _rounding_only(a, b, _rounding_bound(Q, K, A, V, N, D),
                                 f"permuting {N} tokens does not permute the outputs",
                                 {"N": N, "D": D, "seed": seed, "perm": perm})
    claim_log.example(N=N, D=D, max_ulps_of_largest_output=ulps, max_share_of_rounding_bound=share)
    claim_log.note("Holds up to rounding: the permuted float32 outputs may differ from the permuted outputs in "
                   "the last bits (the summation order of a permuted row differs), never by more than the "
                   "rounding bound (4 gamma_N + 4 gamma_D + 2 gamma_D max|q_i|.|k_j|) (|A||V|)_ik (float32 u = 2^-24, Higham eq. 3.4; "
                   "attention_claims.maths.rounding).")


@pytest.mark.claim("kv-cache-reuse-decoder-only", reading="exact")
@given(case=growing_sequence())
@profiles.scaled(0.25)
def test_kv_cache_exact(case, claim_log, claimed):
    """The record's ``claimed.causal``, ``claimed.bidirectional`` and ``claimed.prefixlm`` are relations in
    ``changed``: how many of the n earlier output rows appending m tokens changes (exact rational functions of
    t = e^s). A reusable cache is ``changed == 0``."""
    n, m, Q, K, V, _ = case
    short, full = (Q[:n] @ K[:n].T, V[:n]), (Q @ K.T, V)
    changed = {
        "causal": _changed(exact_attention_rows(*short, "causal"), exact_attention_rows(*full, "causal"), n),
        "bidirectional": _changed(exact_attention_rows(*short), exact_attention_rows(*full), n),
        # multi-turn PrefixLM / encoder: the whole history is the prefix and the new turn joins it
        "prefixlm": _changed(exact_attention_rows(*short, attention_mask("prefix", n, prefix=n)),
                             exact_attention_rows(*full, attention_mask("prefix", n + m, prefix=n + m)), n),
    }
    claim_log.example(n=n, m=m)
    wrong = [k for k, rows in changed.items() if not claimed.eval(k, exact=True, changed=len(rows))]
    if wrong:
        refute(f"appending {m} tokens to {n}: changed causal rows {changed['causal']}, bidirectional "
               f"{changed['bidirectional']}, PrefixLM (turn joins the prefix) {changed['prefixlm']}; claimed "
               + ", ".join(f"{k}: {claimed.text(k)}" for k in wrong), example={"Q": Q, "K": K, "V": V},
               certified=True, certificate="exact rational functions of t", certificate_strength="proved")
    claim_log.note("Exact, with changed = the earlier rows that appending tokens changes: causal "
                   f"{claimed.text('causal')}, bidirectional {claimed.text('bidirectional')} and PrefixLM (the new "
                   f"turn joining the prefix) {claimed.text('prefixlm')} held on every example.")


@pytest.mark.claim("kv-cache-reuse-decoder-only", reading="prefixlm-generated-tokens")
@given(case=seeded_growing_sequence())
@profiles.scaled(0.25)
def test_kv_cache_prefixlm_generated(case, claim_log):
    _profile_prefixlm(claim_log)
    n, m, Q, K, V, p = case
    before = exact_attention_rows(Q[:n] @ K[:n].T, V[:n], attention_mask("prefix", n, prefix=p))
    after = exact_attention_rows(Q @ K.T, V, attention_mask("prefix", n + m, prefix=p))
    changed = _changed(before, after, n)
    claim_log.example(n=n, m=m, prefix=p)
    if not changed:
        refute(f"PrefixLM with prefix {p}: appending {m} generated tokens after {n} left every earlier output "
               f"unchanged, so its cache is reusable", example={"n": n, "m": m, "prefix": p, "Q": Q, "K": K},
               certified=True, certificate="exact rational functions of t: all earlier rows equal",
               certificate_strength="proved")


@pytest.mark.claim("kv-cache-reuse-decoder-only", reading="cpu-float64-stack")
@given(n=st.integers(1, 12), m=st.integers(1, 6), D=st.integers(2, 8), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.25)
def test_kv_cache_stack_float64(n, m, D, seed, claim_log):
    rng = np.random.default_rng(seed)
    X = torch.tensor(rng.standard_normal((n + m, D)))
    params = _block_params(rng, D)
    a = _block_stack(X, params, "causal")[:n]
    b = _block_stack(X[:n], params, "causal")
    rel = float((a - b).abs().max() / b.abs().max())
    claim_log.example(n=n, m=m, rel_diff=rel)
    if rel > 1e-12:  # ~5000 float64 ulps
        refute(f"cached outputs moved by {rel:.2e} (relative) when {m} tokens were appended",
               example={"n": n, "m": m, "D": D, "seed": seed}, certified=False, certificate="float64 only")


@pytest.mark.claim("kv-cache-reuse-decoder-only", reading="cpu-float32-recompute")
@given(n=st.integers(1, 24), m=st.integers(1, 24), D=st.integers(1, 8), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.25)
def test_kv_cache_float32_recompute(n, m, D, seed, claim_log):
    rng = np.random.default_rng(seed)
    X = torch.tensor(rng.standard_normal((n + m, D)), dtype=torch.float32)
    W = [torch.tensor(rng.standard_normal((D, D)) / math.sqrt(D), dtype=torch.float32) for _ in range(3)]
    a, Q, K, A, V = _float32_attention(X, W, "causal")
    b = _float32_attention(X[:n], W, "causal")[0]
    # The masked weights are exactly 0; only the reduction order of the longer rows differs.
    ulps, share = _rounding_only(a[:n], b, _rounding_bound(Q, K, A, V, n + m, D)[:n],
                                 f"the first {n} outputs recomputed with {m} more tokens differ from the cached ones",
                                 {"n": n, "m": m, "D": D, "seed": seed})
    claim_log.example(n=n, m=m, max_ulps_of_largest_output=ulps, max_share_of_rounding_bound=share)
    claim_log.note("Holds up to rounding: recomputed float32 outputs may differ from the cached ones in the last "
                   "bits (the reduction order of a longer row differs), never by more than the "
                   "rounding bound (4 gamma_N + 4 gamma_D + 2 gamma_D max|q_i|.|k_j|) (|A||V|)_ik (float32 u = 2^-24, Higham eq. 3.4; "
                   "attention_claims.maths.rounding).")


# -- forward/backward mixed heads (180) -----------------------------------------------------------
@pytest.mark.claim("forward-backward-mixed-heads", reading="exact")
@given(qk=integer_qk(n=(2, 7), bound=2))
@profiles.scaled(0.25)
def test_mixed_heads_exact(qk, claim_log, claimed):
    Q, K = qk
    N = Q.shape[0]
    M = Q @ K.T
    rl, ru = exact_softmax_rank(M, "causal"), exact_softmax_rank(M, "anticausal")
    want = claimed.eval("rank", exact=True, N=N)
    cover = bool((attention_mask("causal", N) | attention_mask("anticausal", N)).all())
    Al, Au = attention_matrix(Q, K, "causal"), attention_matrix(Q, K, "anticausal")
    prod_positive = bool((Au @ Al > 0).all())  # structural: the (i, j) entry has the positive term k = max(i, j)
    claim_log.example(N=N, lower_rank=rl, upper_rank=ru)
    if rl != want or ru != want or not cover or not prod_positive:
        refute(f"ranks lower {rl}, upper {ru} (N = {N}; claimed {claimed.text('rank')} = {want}); masks cover all "
               f"pairs: {cover}; A_up A_low > 0: {prod_positive}", example={"Q": Q, "K": K}, certified=True,
               certificate="exact ranks over Q(t)", certificate_strength="proved")
    claim_log.note("Both truncated heads have exact rank N; the union of their masks is every (i, j); "
                   "A_up A_low is entrywise positive and, as a product of non-singular matrices, of rank N.")


@pytest.mark.claim("forward-backward-mixed-heads", reading="head-average-full-rank")
@given(qk=qk_pairs(n=(2, 5), d=(1, 2), scale_exp=(-1.0, 1.5)))
@example(qk=(np.array([[0.595], [0.986], [-1.813], [-0.359], [2.174]]),
             np.array([[1.493], [-1.259], [1.514], [1.346], [0.781]]), 1.0))  # found by a random search
@profiles.scaled(0.25)
def test_mixed_heads_average(qk, claim_log, causal_bidirectional_draws):
    _profile_head_average(claim_log, causal_bidirectional_draws)
    Q, K, s = qk
    N = Q.shape[0]
    avg = (attention_matrix(Q, K, "causal") + attention_matrix(Q, K, "anticausal")) / 2
    det = float(np.linalg.det(avg))
    target(-det, label="-det")
    claim_log.example(N=N, logit_scale=s, det=det)
    if det < 0:
        def certify():
            with precision(256):
                def arb_avg(q):
                    lo = arb_softmax_attention(q, K, causal=True)
                    up = arb_softmax_attention(q[::-1], K[::-1], causal=True)  # reversed causal = anticausal
                    for i in range(N):
                        for j in range(N):
                            lo[i, j] = (lo[i, j] + up[N - 1 - i, N - 1 - j]) / 2
                    return lo
                d1, d0 = arb_avg(Q).det(), arb_avg(np.zeros_like(Q)).det()
            ok = certified_sign(d1) == -1 and certified_sign(d0) == 1
            refute(f"(A_low + A_up)/2 has det {det:.3e} < 0 here and > 0 at Q = 0, so by continuity it is exactly "
                   f"singular for some t Q, 0 < t < 1 (N = {N})", example={"Q": Q, "K": K}, certified=ok,
                   certificate=f"arb (256 bits): det at Q = {d1}, at Q = 0: {d0}; det is continuous in Q",
                   boundary="exists on the segment from 0 to Q (intermediate value theorem)",
                   certificate_strength="proved" if ok else None)

        refute_deferred(f"det {det:.3e} < 0", certify=certify)


# -- full rank and expressive power (142) ----------------------------------------------------------
@pytest.mark.claim("decoder-only-full-rank-more-expressive", reading="causal-full-rank")
@given(qk=qk_pairs(n=(1, 6), d=(1, 3), scale_exp=(-2.0, 1.0)))
@profiles.scaled(0.125)
def test_full_rank_causal(qk, claim_log, claimed):
    Q, K, s = qk
    N, d = Q.shape
    ok, det, bits = certify_nonzero_det(lambda: arb_softmax_attention(Q, K, causal=True))
    want = claimed.eval("causal_rank", exact=True, N=N, d=d)
    claim_log.example(N=N, d=d, logit_scale=s)
    if not ok:
        refute(f"det of the causal matrix not certified non-zero up to {bits} bits (N = {N})", example={"Q": Q, "K": K},
               certified=False)
    if certified_sign(det) != 1 or want != N:
        refute(f"the causal softmax matrix has det {det} (so exact rank {N}); the claimed "
               f"{claimed.text('causal_rank')} = {want}", example={"Q": Q, "K": K}, certified=True,
               certificate=f"arb determinant at {bits} bits: {det} (rank N, by shape at most N)",
               certificate_strength="proved")
    claim_log.note("det A certified > 0 (arb) on every example: exact rank N (the heavy checks are "
                   "causal-softmax-full-rank's, in test_rank.py).")


@pytest.mark.claim("decoder-only-full-rank-more-expressive", reading="causal-expressibility")
@given(N=st.integers(2, 7), extra=st.integers(0, 2), seed=st.integers(0, 2**32 - 1))
# the smallest head dimension the claimed bound covers, at the largest N drawn: where a bound one too small
# (N - 2) shows, whatever the draws (the planted falsehood causal-expressible-head-dim-n-minus-2)
@example(N=7, extra=0, seed=0)
@profiles.scaled(0.25, explain=False)
def test_causal_expressibility(N, extra, seed, claim_log, claimed):
    _profile_causal_pattern(claim_log, claimed)
    bound = claimed.eval("sufficient_head_dim", exact=True, N=N)
    d = max(1, math.ceil(bound)) + extra  # every head dimension the reading covers
    claim_log.example(N=N, d=d)
    if d >= N - 1:
        M = np.random.default_rng(seed).integers(-3, 4, (N, N))  # P_ij ∝ e^{M_ij}, j <= i
        Q, K = causal_realisation(M, d)
        if not realises(Q, K, M):
            raise ArithmeticError(f"causal_realisation failed for N = {N}, d = {d}")  # a bug, not a counterexample
        claim_log.note("Where d >= N - 1, a random pattern P ∝ e^M (|M_ij| <= 3) was realised exactly: k_0 = 0, "
                       "k_j = e_j, q_i = sqrt(d) (log P_ij/P_i0)_j, integer log-ratios reproduced exactly.")
        return
    M, rows, cols, kind = inexpressible_causal_pattern(N, d)
    det = certify_inexpressible(M, d, rows, cols)
    what = ("each token attends e times more to itself than to each earlier token (P_ij ∝ e^[i = j], j <= i)"
            if kind == "diagonal" else "an open set of patterns around P ∝ e^{M} (M a shifted identity)")
    refute(f"head dimension d = {d} >= {claimed.text('sufficient_head_dim')}, N = {N}: the full-rank causal "
           f"pattern P with exponents {M.tolist()} ({what}) is not softmax(mask(QK^T/sqrt d)) for any real "
           f"Q, K in R^(N x d)", example={"N": N, "d": d, "M": M, "rows": rows, "cols": cols},
           certified=det is not None,
           certificate=f"exact: C_ab = q_a.(k_b - k_0)/sqrt d on rows {rows}, columns {cols} has rank <= d, so "
                       f"det C = 0; yet C must equal log(P_ab/P_a0) wherever b <= a, which forces det C = {det} "
                       f"for every completion (fmpz)",
           boundary=f"every pattern is reachable iff d >= N - 1 (exact construction); for N >= 2d + 2 = {2 * d + 2} "
                    f"an open set of patterns is unreachable",
           certificate_strength="proved" if det is not None else None)


@pytest.mark.claim("decoder-only-full-rank-more-expressive", reading="bidirectional-loses-full-rank")
@given(N=st.integers(2, 6), d=st.integers(1, 5), s=log_uniform(-1.0, 0.5), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.25, explain=False)
def test_bidirectional_loses_full_rank(N, d, s, seed, claim_log, claimed, causal_bidirectional_draws):
    _profile_bidirectional_full_rank(claim_log, claimed, causal_bidirectional_draws)
    d = min(d, N - 1)
    rng = np.random.default_rng(seed)
    Q, K = rng.standard_normal((N, d)) * s, rng.standard_normal((N, d))
    bound = claimed.eval("bidirectional_rank_at_most", exact=True, N=N, d=d)
    ok, det, bits = certify_nonzero_det(lambda: arb_softmax_attention(Q, K))
    claim_log.example(N=N, d=d, logit_scale=s)
    if ok and N > bound:
        refute(f"bidirectional softmax(QK^T/sqrt d) with N = {N} > d = {d} (Gaussian Q, K, logit scale {s:.3g}) "
               f"has exact rank {N} > {claimed.text('bidirectional_rank_at_most')} = {bound}: switching to "
               f"bidirectional attention keeps full rank", example={"N": N, "d": d, "scale": s, "Q": Q, "K": K},
               certified=True, certificate=f"arb determinant at {bits} bits: {det}, an interval excluding 0",
               certificate_strength="proved")


@pytest.mark.claim("study-note-multi-head-raises-rank", reading="vs-single-small-head")
@given(case=multi_head_case())
@profiles.scaled(0.125)
def test_multi_head_output_rank(case, claim_log, claimed):
    h, dh, d, N, X, (Wq, Wk, Wv) = case
    Q0, K0, V0 = X @ Wq[:, :dh], X @ Wk[:, :dh], X @ Wv[:, :dh]  # the first small head
    with precision(128):
        ok_multi, info = certified_rank_at_least(lambda: _heads_output(X, Wq, Wk, Wv, h, dh)[0],
                                                 _heads_output(X, Wq, Wk, Wv, h, dh)[1], d)
        ok_single, _ = certified_rank_at_least(lambda: arb_softmax_attention(Q0, K0) * arb_matrix(V0),
                                               attention_matrix(Q0, K0) @ V0, dh)
    claim_log.example(N=N, d=d, heads=h)
    if not ok_multi:
        refute(f"could not certify rank {d} for the multi-head output", example={"N": N, "d": d}, certified=False)
    # exact ranks: the N x d concatenation has rank d (>= d by the arb minor, <= d by shape); one small head's
    # N x d/h output has rank d/h where its minor is certified, else some rank in 0..d/h (shape)
    singles = [dh] if ok_single else list(range(dh + 1))
    fails = [r for r in singles if not claimed.eval("relation", exact=True, multi=d, single=r)]
    if fails:
        refute(f"exact output ranks (N = {N}, d = {d}, h = {h}): the {h} heads together {d}, one head of size {dh} "
               f"{singles[0] if ok_single else f'at most {dh}'}; not {claimed.text('relation')}",
               example={"N": N, "d": d, "h": h}, certified=len(fails) == len(singles),
               certificate=f"arb minors of order {d} (the heads together) and {dh} (one head), 128 bits, each "
                           f"excluding 0; ranks at most {d} and {dh} by shape",
               certificate_strength="proved" if len(fails) == len(singles) else None)
    claim_log.note("The multi-head output rank min(N, d) was certified on every example (arb minor); a single "
                   "head of size d/h has output rank <= d/h by shape.")


def _multi_vs_single_effective_rank(X, Wq, Wk, Wv, h: int, s: float, tau: float = 0.9) -> tuple[int, int]:
    """Effective ranks ``r_tau`` (003 定义 11.25, :func:`attention_claims.maths.effective_rank`) of the concatenated
    outputs of ``h`` heads (Vaswani's column split of ``W (d, d)``, each head's logits over ``sqrt(d/h)``) and of one
    head of size ``d``, for ``X (N, d)`` and logit scale ``s`` (``Q = s X W_Q``); float64, ``(multi, single)``."""
    d = X.shape[1]
    dh = d // h

    def attend(Q, K, V):  # softmax(QK^T/sqrt d_head) V in float64, rows max-shifted (NumPy: ~50 us at N = 64)
        S = Q @ K.T / math.sqrt(Q.shape[1])
        E = np.exp(S - S.max(axis=1, keepdims=True))
        return (E / E.sum(axis=1, keepdims=True)) @ V

    Q, K, V = s * X @ Wq, X @ Wk, X @ Wv
    single = attend(Q, K, V)
    multi = np.hstack([attend(Q[:, a * dh:(a + 1) * dh], K[:, a * dh:(a + 1) * dh], V[:, a * dh:(a + 1) * dh])
                       for a in range(h)])
    er = lambda M: effective_rank(np.linalg.svd(M, compute_uv=False), tau)  # noqa: E731
    return er(multi), er(single)


@pytest.mark.claim("study-note-multi-head-raises-rank", reading="effective-rank-vs-full-head")
@given(s=log_uniform(0.0, math.log10(8.0)), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.125)
def test_multi_head_effective_rank(s, seed, claim_log, claimed):
    N, d, h, trials = 64, 16, 4, 30
    rng = np.random.default_rng(seed)
    wins, pairs = 0, []
    for _ in range(trials):
        X = rng.standard_normal((N, d))
        Wq, Wk, Wv = (rng.standard_normal((d, d)) / math.sqrt(d) for _ in range(3))
        multi, single = _multi_vs_single_effective_rank(X, Wq, Wk, Wv, h, s)
        wins += bool(claimed.eval("relation", exact=True, multi=multi, single=single))  # the document: multi > single
        pairs.append((multi, single))
    share = wins / trials
    claim_log.example(logit_scale=s, share_multi_head_higher=share)
    claim_log.track("share of draws where multi-head has the higher effective rank", share)
    target(-share, label="-share")
    if share <= 0.5:
        refute(f"at logit scale {s:.3g} (N = {N}, d = {d}, h = {h}) the {h}-head output has the higher effective rank "
               f"(tau = 0.9) in only {wins} of {trials} draws (multi, single: {pairs[:6]}...)",
               example={"s": s, "seed": seed}, certified=False,
               certificate="statistical (30 draws); effective ranks from float64 singular values")
    claim_log.note("Effective rank r_0.9 (定义 11.25 of 003) of the N x d outputs from float64 singular values; "
                   "X ~ N(0, 1), W ~ N(0, 1/d).")


#: the logit scales and draws of the every-draw reading: the as-stated reading's range, numpy default_rng(0)
EVERY_DRAW_SCALES, EVERY_DRAW_TRIALS = (1.0, 2.0, 4.0, 8.0), 30


@pytest.mark.claim("study-note-multi-head-raises-rank", reading="effective-rank-every-draw")
def test_multi_head_effective_rank_every_draw(claim_log, claimed):
    """The stricter reading "in every draw": the as-stated reading's setting (N = 64, d = 16, h = 4), 30 draws
    of numpy default_rng(0) at each logit scale 1, 2, 4, 8. A draw counts as a failure only when the
    multi-head effective rank is not higher and both effective ranks are the same at tau = 0.9 +- 1e-9, so
    that no rounding of the float64 singular values (~1e-15 relative) can move the comparison."""
    N, d, h = 64, 16, 4
    rng = np.random.default_rng(0)
    failed, first = [], None
    for s in EVERY_DRAW_SCALES:
        for t in range(EVERY_DRAW_TRIALS):
            X = rng.standard_normal((N, d))
            Wq, Wk, Wv = (rng.standard_normal((d, d)) / math.sqrt(d) for _ in range(3))
            ranks = [_multi_vs_single_effective_rank(X, Wq, Wk, Wv, h, s, tau) for tau in (0.9, 0.9 - 1e-9, 0.9 + 1e-9)]
            holds = claimed.eval("relation", exact=True, multi=ranks[0][0], single=ranks[0][1])  # multi > single
            bad = not holds and ranks[0] == ranks[1] == ranks[2]
            failed.append(bad)
            claim_log.example(logit_scale=s)
            if bad and first is None:
                first = (s, t, ranks[0])
    scales = [s for s in EVERY_DRAW_SCALES for _ in range(EVERY_DRAW_TRIALS)]  # the scale of each draw
    record_profile(claim_log, failed, setting=f"N={N}, d={d}, h={h}, logit scales {EVERY_DRAW_SCALES}",
                   by=("logit scale", scales),
                   summary=f"{len(failed)} draws of X ~ N(0, 1), W ~ N(0, 1/d) (numpy default_rng(0), "
                           f"{EVERY_DRAW_TRIALS} per scale): a draw fails when the {h}-head output's effective rank "
                           f"(tau = 0.9, stable at tau +- 1e-9) is not above one head of size {d}'s")
    if first is not None:
        s, t, (multi, single) = first
        failing = sorted({x for x, bad in zip(scales, failed, strict=True) if bad})
        refute(f"at logit scale {s:g}, draw {t} of default_rng(0) (N = {N}, d = {d}, h = {h}): the concatenated "
               f"heads' effective rank (tau = 0.9) is {multi}, one head of size {d} has {single}; {sum(failed)} of "
               f"{len(failed)} draws fail", example={"s": s, "draw": t, "seed": 0}, certified=False,
               # measured, not assumed (issue 46: the profile's plot showed failures at s = 4 too)
               boundary=f"the failing draws are at logit scales {', '.join(f'{x:g}' for x in failing)}"
                        + (f"; none at {', '.join(f'{x:g}' for x in EVERY_DRAW_SCALES if x not in failing)}"
                           if len(failing) < len(EVERY_DRAW_SCALES) else ""))
    claim_log.note("In every draw the multi-head output had the higher effective rank.")


# -- 180: sparse (banded) attention ------------------------------------------------------------------
@pytest.mark.claim("study-note-sparse-attention-avoids-low-rank", reading="banded-causal-exact")
@given(C=st.integers(2, 7).flatmap(lambda n: hnp.arrays(np.int64, (n, n), elements=st.integers(-2, 2))),
       w=st.integers(0, 3))
@profiles.scaled(0.25)
def test_banded_causal(C, w, claim_log, claimed):
    N = C.shape[0]
    r = exact_softmax_rank(C, attention_mask("banded-causal", N, window=w))
    want = claimed.eval("rank", exact=True, N=N, window=w)  # the document: full rank N ("avoids the low rank")
    claim_log.example(N=N, window=w, rank=r)
    if r != want:
        refute(f"banded causal attention (N = {N}, w = {w}) has exact rank {r}, not the claimed "
               f"{claimed.text('rank')} = {want}", example={"C": C, "w": w},
               certified=True, certificate="rank over Q(t) (exact)", certificate_strength="proved")


@pytest.mark.parametrize("generic", [
    pytest.param(True, marks=pytest.mark.claim("study-note-sparse-attention-avoids-low-rank", reading="banded-bidirectional-generic"), id="generic"),
    pytest.param(False, marks=pytest.mark.claim("study-note-sparse-attention-avoids-low-rank", reading="banded-bidirectional-every-input"), id="every-input"),
])
@given(N=st.integers(2, 7), w=st.integers(1, 3), seed=st.integers(0, 2**32 - 1),
       C=hnp.arrays(np.int64, (7, 7), elements=st.integers(-1, 1)))
@example(N=5, w=1, seed=0, C=np.zeros((7, 7), dtype=np.int64))
@profiles.scaled(0.25)
def test_banded_bidirectional(generic, N, w, seed, C, claim_log, claimed, causal_bidirectional_draws):
    _profile_banded(claim_log, generic, causal_bidirectional_draws)
    mask = attention_mask("banded", N, window=w)
    want = claimed.eval("rank", exact=True, N=N, window=w)  # the document: full rank N ("avoids the low rank")
    if not generic:
        r = exact_softmax_rank(C[:N, :N], mask)
        claim_log.example(N=N, window=w, rank=r)
        if r != want:
            refute(f"banded bidirectional attention (N = {N}, w = {w}) has exact rank {r}, not the claimed "
                   f"{claimed.text('rank')} = {want}", example={"logits": C[:N, :N], "w": w}, certified=True,
                   certificate="rank over Q(t) (exact)", certificate_strength="proved")
        return
    # generic: the masked softmax is analytic in the logits, so one full-rank witness proves rank N for almost
    # every logit matrix; a draw in the measure-zero exceptional set is redrawn, and only 4 misses in a row
    # refute (uncertified: a proof that the rank drops identically would be symbolic)
    rng = np.random.default_rng(seed)
    ranks = []
    for _ in range(4):
        logits = rng.integers(-50, 51, (N, N))
        ranks.append(exact_softmax_rank(logits, mask))
        if ranks[-1] == N:
            break
    else:
        refute(f"no full-rank witness for banded bidirectional attention (N = {N}, w = {w}) in 4 random integer "
               f"logit matrices (ranks {ranks})", example={"logits": logits, "w": w}, certified=False)
    claim_log.example(N=N, window=w, rank=N, redraws=len(ranks) - 1)
    if want != N:
        # the witness has rank N, the most an N x N matrix has, so N is the generic rank (analytic family)
        refute(f"banded bidirectional attention (N = {N}, w = {w}): a witness of exact rank {N}, so the generic rank "
               f"is {N}, not the claimed {claimed.text('rank')} = {want}", example={"logits": logits, "w": w},
               certified=True, certificate="rank over Q(t) (exact) at its maximum N, so the generic rank",
               certificate_strength="proved")


@pytest.mark.claim("study-note-rope-position-modelling", reading="raises-logit-rank")
@given(N=st.integers(3, 6), half=st.integers(1, 2), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.25)
def test_rope_logit_rank(N, half, seed, claim_log, claimed, rope_draws):
    _profile_rope(claim_log, rope_draws)
    from flint import fmpq, fmpq_mat

    d = 2 * half
    rng = np.random.default_rng(seed)
    Q, K = rng.integers(-3, 4, (N, d)), rng.integers(-3, 4, (N, d))
    pos = list(range(N))
    bound = claimed.eval("logit_rank_bound", exact=True, d=d, N=N)
    fq = np.array([[float(v) for v in row] for row in _rope(Q, pos)])
    fk = np.array([[float(v) for v in row] for row in _rope(K, pos)])

    def exact_check():
        Rq, Rk = _rope(Q, pos), _rope(K, pos)
        M = fmpq_mat(N, N, [fmpq(v.numerator, v.denominator) for qi in Rq for kj in Rk
                            for v in [sum((a * b for a, b in zip(qi, kj, strict=True)), Fraction(0))]])
        r = M.rank()
        claim_log.example(N=N, d=d, rope_logit_rank=r)
        if not r > bound:
            refute(f"RoPE logits have exact rank {r} <= d = {d} (N = {N}): the rotation does not raise the rank",
                   example={"Q": Q, "K": K}, certified=True,
                   certificate="fmpq_mat rank of the exactly rotated logits (cos = 3/5, sin = 4/5)",
                   certificate_strength="proved")

    if np.linalg.matrix_rank(fq @ fk.T) <= bound:
        refute_deferred("float64 rank of the RoPE logits <= d", certify=exact_check)
    exact_check()


@pytest.mark.claim("study-note-rope-position-modelling", reading="order-sensitivity")
@given(N=st.integers(2, 6), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.25)
def test_rope_order_sensitivity(N, seed, claim_log, claimed):
    """The record's ``claimed.order_sensitive`` is a relation in ``changed``: how many of the d = 2 output
    coordinates of the swapped token differ, with a certified sign (arb), from the other token's output before
    the swap. ``changed > 0`` is order sensitivity; ``changed == 0`` (RoPE attention permutation-equivariant)
    is refuted, certified, by one swap with a non-zero certified difference."""
    rng = np.random.default_rng(seed)
    d = 2
    X = rng.standard_normal((N, d))
    X[1] = X[0] + 1.0  # two distinct tokens to swap
    th = 0.7

    def rot(Y):
        ang = th * np.arange(N)[:, None]
        c, s = np.cos(ang), np.sin(ang)
        return np.hstack([c * Y[:, :1] - s * Y[:, 1:], s * Y[:, :1] + c * Y[:, 1:]])

    swap = np.arange(N)
    swap[[0, 1]] = [1, 0]
    with precision(128):
        A = arb_softmax_attention(rot(X), rot(X)) * arb_matrix(X)
        B = arb_softmax_attention(rot(X[swap]), rot(X[swap])) * arb_matrix(X[swap])
        diffs = [certified_sign(B[0, c] - A[1, c]) for c in range(d)]
    claim_log.example(N=N)
    changed = sum(1 for v in diffs if v)
    if not claimed.eval("order_sensitive", exact=True, changed=changed):
        refute(f"with RoPE, swapping two tokens changed {changed} of the swapped output's {d} coordinates beyond "
               f"the swap (certified signs {diffs}); claimed {claimed.text('order_sensitive')}",
               example={"X": X}, certified=changed > 0,
               certificate="arb intervals (128 bits) of the differences exclude 0" if changed else
               "none: no certified difference, which does not prove equality",
               certificate_strength="proved" if changed > 0 else None)
    claim_log.note("With RoPE a swap of two distinct tokens changed the swapped token's output (arb-certified "
                   "difference; the rotation angles are the float64 values, converted exactly).")


def _flash_matrix_cpu(Q: np.ndarray, K: np.ndarray, causal: bool) -> np.ndarray:
    """The ``(N, N)`` matrix that PyTorch's CPU flash kernel applies to V for float64 ``Q, K (N, d)``: its outputs
    for V = the columns of the identity, ``d`` at a time (the kernel needs V's head size to equal Q's)."""
    N, d = Q.shape
    blocks = []
    for start in range(0, N, d):
        width = min(d, N - start)
        V = np.zeros((N, d))
        V[start:start + width, :width] = np.eye(width)
        blocks.append(_flash_cpu(Q, K, V, causal)[:, :width])
    return np.hstack(blocks)


#: 1e-12, relative to max A <= 1: far above float64 rounding of a softmax row (a few eps64 per entry), far below
#: any change of the attention matrix that could move its rank.
FLASH_SAME_A_TOL = 1e-12


@functools.cache
@disk_memo_ints
def _flash_same_matrix_draws(N: int, d: int, trials: int, seed: int) -> tuple[int, ...]:
    """For ``trials`` draws of Gaussian ``Q, K (N, d)`` (``numpy.random.default_rng(seed)``; causal on every second
    draw): 1 when the matrix the CPU flash kernel applies (:func:`_flash_matrix_cpu`) equals the float64
    ``softmax(QK^T/sqrt d)`` (masked) within :data:`FLASH_SAME_A_TOL`, else 0."""
    out = []
    for t, (Q, K, _) in enumerate(gaussian_qk_draws(N, d, trials, seed)):
        causal = bool(t % 2)
        A = masked_softmax_attention(Q, K, "causal" if causal else None).numpy()
        out.append(int(float(np.abs(_flash_matrix_cpu(Q, K, causal) - A).max()) <= FLASH_SAME_A_TOL))
    return tuple(out)


@pytest.mark.claim("study-note-flashattention-perceiver", reading="flash-changes-attention")
@given(case=qkv(n=(2, 12)))  # N >= 2: at N = 1 every attention matrix is [1]
@profiles.scaled(0.25)
def test_flash_changes_attention(case, claim_log):
    Q, K, _, causal = case
    N = Q.shape[0]
    A_flash = _flash_matrix_cpu(Q, K, causal)
    err = float(np.abs(A_flash - masked_softmax_attention(Q, K, "causal" if causal else None).numpy()).max())
    claim_log.example(N=N, max_abs_diff_vs_float64_A=err)
    N_doc, d_doc, trials = 512, 64, 30
    same = _flash_same_matrix_draws(N_doc, d_doc, trials, 0)
    record_profile(claim_log, [bool(x) for x in same], setting=f"N={N_doc}, d={d_doc}, Gaussian Q, K, causal on half",
                   summary=f"the matrix the CPU flash kernel applies (outputs for identity columns of V) against float64 "
                           f"softmax(QK^T/sqrt d), max abs difference <= {FLASH_SAME_A_TOL:g}; {trials} draws, numpy "
                           f"default_rng(0)")
    if err <= FLASH_SAME_A_TOL:
        def certify():
            err = float(np.abs(A_flash - _mp_reference(Q, K, np.eye(N), causal)).max())
            if err > FLASH_SAME_A_TOL:
                return  # disagrees with the float64 comparison: reported as an error of the suite
            refute(f"the flash kernel applies the attention matrix softmax(QK^T/sqrt d) itself (max entry difference "
                   f"{err:.2e} against a 30-digit reference; N = {N}, causal = {causal}): it does not change A",
                   example={"Q": Q, "K": K, "causal": causal}, certified=True,
                   certificate=f"30-digit mpmath reference of A = softmax(QK^T/sqrt d); difference <= {FLASH_SAME_A_TOL:g}",
                   certificate_strength="recomputed")

        refute_deferred(f"flash applies A to {err:.2e}", certify=certify)


def _fused_kernel_tolerance(Q, K, V, dtype: str) -> Tolerance:
    """The bound on ``|fused output - float64 attention| / max|V|`` for CUDA's fused flash / memory-efficient
    kernels on float16 / bfloat16 inputs ``Q, K (N, d)``, ``V (N, d_v)`` (their values, as float64), whatever
    their order of operations (:func:`attention_claims.maths.rounding.attention_output_tolerance`): logits, exps
    and sums in float32 on tensor cores, which truncate (``u = 2^-23``; Fasi et al. 2021), ``exp2f`` / ``expf``
    within 2 ulps (CUDA C++ Programming Guide, single-precision table; three more logit roundings cover
    ``log2 e`` and ``__expf``'s argument error, ``2 + 1.173 |x|`` ulps), subnormals flushed (``2^-126``), ``P``
    rounded to ``dtype`` before ``P V`` (FlashAttention-2: Dao 2023, §3.1), at most one rescaling per key, the
    output rounded to ``dtype``. Measured with torch's CPU flash kernel in float16 / bfloat16 (300 draws of this
    check's distribution): at most 0.31 / 0.38 of the bound used; a dropped or added causal mask exceeds it by
    37 to 660 times. The bound nears a share 0.1 of max|V| only at logit magnitudes of a few thousand."""
    N, d = Q.shape
    L = (np.abs(Q) @ np.abs(K).T).max(axis=1) / math.sqrt(d) * (1 + 2.0**-50)
    return attention_output_tolerance(L, 1.0, d, N, "float32", u=2.0**-23, exp_ulps=2, logit_roundings=5,
                                      stored=dtype, rescalings=N, output=dtype, flush=2.0**-126)


@pytest.mark.parametrize("device,dtype,reading", reading_params("study-note-flashattention-perceiver"))
@given(case=qkv(n=(1, 64), dims=[8, 16, 32, 64]))  # head sizes every fused CUDA backend accepts
@profiles.scaled(0.25)
def test_flash_matches_reference(device, dtype, reading, case, claim_log):
    require_device(device)
    Q, K, V, causal = case
    dt = getattr(torch, dtype)
    # the reference is float64 attention of the *same* inputs the kernel sees (rounded to the dtype), so the
    # comparison measures the kernel, not the rounding of Q, K, V; tolerance: float64 at 1e-12 relative to
    # max |V|; float16 / bfloat16 the derived bound of attention_output_tolerance (any order of operations)
    q, k, v = (torch.as_tensor(x).to(dtype=dt) for x in (Q, K, V))
    Qr, Kr, Vr = (x.double().numpy() for x in (q, k, v))
    ref = masked_softmax_attention(Qr, Kr, "causal" if causal else None).numpy() @ Vr
    tol = 1e-12 if dtype == "float64" else _fused_kernel_tolerance(Qr, Kr, Vr, dtype)
    if device == "cpu":
        out = _flash_cpu(Qr, Kr, Vr, causal)
    else:
        from torch.nn.attention import SDPBackend, sdpa_kernel

        qc, kc, vc = (x[None, None].to(device) for x in (q, k, v))
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
            out = torch.nn.functional.scaled_dot_product_attention(qc, kc, vc, is_causal=causal)[0, 0].double().cpu().numpy()
    vmax = max(float(np.abs(Vr).max()), 2.0**-1074)
    err = float(np.abs(out - ref).max() / vmax)
    target(err, label="relative error")
    claim_log.example(N=Q.shape[0], d=Q.shape[1], rel_err=err)
    if isinstance(tol, Tolerance):  # per row (the row's logit magnitude), relative to max |V|
        tol.state(claim_log)
        used = tol.excess((out - ref) / vmax)
        claim_log.track("error / derived rounding bound", used)
        bad, stated = used > 1, f"the derived bound {tol.largest:.3g} ({used:.3g} of the row's bound used)"
    else:
        bad, stated = err > tol, f"{tol:.3g}"
    if bad:
        refute(f"{device}/{dtype}: fused attention differs from float64 attention of the same inputs by {err:.3e} > "
               f"{stated} (relative to max |V|)", example={"Q": Q, "K": K, "V": V, "causal": causal},
               certified=False, certificate="float64 reference")


@pytest.mark.claim("study-note-flashattention-perceiver", reading="perceiver-latent-rank")
@given(M=st.integers(1, 4), extra=st.integers(1, 4), d=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.25)
def test_perceiver_latent_rank(M, extra, d, seed, claim_log):
    N = M + extra
    rng = np.random.default_rng(seed)
    L, X = rng.standard_normal((M, max(d, M))), rng.standard_normal((N, max(d, M)))
    A = attention_matrix(L, X)
    with precision(128):
        ok, info = certified_rank_at_least(lambda: arb_softmax_attention(L, X), A, M)
    claim_log.example(M=M, N=N)
    Xq, Xk = rng.standard_normal((N, max(d, M))), rng.standard_normal((N, max(d, M)))
    with precision(128):
        ok_self, info_self = certified_rank_at_least(lambda: arb_softmax_attention(Xq, Xk), attention_matrix(Xq, Xk),
                                                     M + 1)
    _record_perceiver_profile(claim_log)
    if ok_self:
        refute(f"Perceiver's {M} x {N} latent cross-attention has rank {M} (<= {M} by shape) while self-attention over "
               f"the same {N} inputs has rank >= {M + 1}: the latents lower the rank, they do not raise it",
               example={"M": M, "N": N, "d": max(d, M), "seed": seed}, certified=True,
               certificate=f"self-attention: a {M + 1} x {M + 1} arb minor with determinant {info_self['det']} "
                           f"(excludes 0); latent attention: rank <= M by shape", certificate_strength="proved")
    if ok:
        claim_log.note("The M x N latent cross-attention has rank exactly M < N (<= M by shape, >= M by an arb minor).")


def _record_perceiver_profile(claim_log) -> None:
    """Failure profile of perceiver-latent-rank at M = 256 latents (Perceiver's ImageNet setting uses 512 latents
    over 50,176 inputs; here N = 512 inputs, d = 64): a draw fails when the self-attention over the N inputs has
    numerical rank above M, which the M x N latent attention cannot reach."""
    M, N, d, trials = 256, 512, 64, 30
    ranks = gaussian_softmax_ranks(N, d, trials, 0)
    record_profile(claim_log, [r > M for r in ranks], setting=f"M={M} latents, N={N}, d={d}, Gaussian inputs",
                   summary=f"numerical rank of softmax(QK^T/sqrt d) over the N inputs (float64, singular values above "
                           f"{RANK_REL_TOL:g} sigma_1, numpy default_rng(0), {trials} draws: {min(ranks)}..{max(ranks)}) "
                           f"against the latent attention's rank <= M = {M}")


@pytest.mark.claim("bhojanapalli-low-rank-bottleneck", reading="exact")
@given(n=st.integers(2, 5), data=st.data(), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.5)
def test_bhojanapalli_representation(n, data, seed, claim_log, claimed):
    from flint import fmpz_mat

    threshold = int(claimed.eval("threshold", exact=True, n=n))
    d = data.draw(st.integers(1, n + 1), label="d")
    rng = np.random.default_rng(seed)
    X = rng.integers(-3, 4, (d, n))
    m = rng.integers(-3, 4, (n, n))
    rank_x = fmpz_mat(d, n, [int(v) for v in X.ravel()]).rank()
    ok = _expressible(X, m)
    claim_log.example(n=n, d=d, expressible=int(ok))
    # sufficiency is tested at every d >= threshold with X of full rank min(d, n) (full column rank where d >= n, the
    # theorem's hypothesis; for a threshold below n, full row rank where d < n, since no d x n X has column rank n)
    if d >= threshold and rank_x == min(d, n) and not ok:
        refute(f"d = {d} >= {claimed.text('threshold')} = {threshold}, X of full rank {rank_x}, yet P ∝ 2^m is not "
               f"expressible", example={"X": X, "m": m}, certified=True, certificate="exact rational ranks",
               certificate_strength="proved")
    if d < threshold and rank_x == min(d, n) and ok:
        # the theorem only claims that *some* X, P fail; try a few more P for this X before refuting
        tries = [rng.integers(-3, 4, (n, n)) for _ in range(10)]
        if all(_expressible(X, t) for t in tries):
            refute(f"d = {d} < {claimed.text('threshold')} = {threshold}, but 11 random P were all expressible "
                   f"for this X", example={"X": X, "m": m}, certified=False,
                   certificate="exact ranks, but only 11 P tried")
    # the paper's own example: d = 1, n = 2, X = [1, 0]: the logits X^T W X vanish outside entry (1, 1), so
    # the second column of the column-stochastic P is (1/2, 1/2) for every W_q, W_k; a P whose second column
    # is (2/3, 1/3) (m = [[0, 1], [0, 0]]) is decided by the same exact test as the random cases, and must come
    # out not expressible
    X0 = np.array([[1, 0]])
    m0 = np.array([[0, 1], [0, 0]])
    if n == 2 and _expressible(X0, m0):
        refute("the paper's d = 1 example: P with second column (2/3, 1/3) is expressible from X = [1, 0]",
               example={"X": X0, "m": m0}, certified=True, certificate="exact rational ranks",
               certificate_strength="proved")
    claim_log.note("Expressibility decided exactly: m in span{X^T E_ab X} + span{column shifts} (fmpz ranks). The "
                   "paper's example X = [1, 0] (d = 1, n = 2) gives logits that vanish outside entry (1, 1), so the "
                   "second column of P is (1/2, 1/2) for every W_q, W_k; the exact test says P with second column "
                   "(2/3, 1/3) is not expressible.")




# -- 004 sidebar reply on kexue.fm/4118: padding is masked, so it does not matter --------------------
@st.composite
def padded_sequence(draw):
    """n real tokens and p pads (integer q, k in [-2, 2]; real values in [-2, 2], pad values 100), the
    side the pads go on and the real tokens' own mask."""
    n = draw(st.integers(1, 5), label="n (real tokens)")
    p = draw(st.integers(1, 3), label="p (pads)")
    d = draw(st.integers(1, 3), label="d")
    ints = st.integers(-2, 2)
    Q = draw(hnp.arrays(np.int64, (n + p, d), elements=ints), label="Q")
    K = draw(hnp.arrays(np.int64, (n + p, d), elements=ints), label="K")
    V = draw(hnp.arrays(np.int64, (n, 2), elements=ints), label="V (real)")
    side = draw(st.sampled_from(["right", "left"]), label="padding side")
    kind = draw(st.sampled_from(["bidirectional", "causal"]), label="mask of the real tokens")
    return n, p, Q, K, np.vstack([V, np.full((p, 2), 100)]), side, kind


def _padded(n: int, p: int, side: str, kind: str, *arrays):
    """The padded layout of ``arrays`` (real rows first, as drawn) and its ``(n + p, n + p)`` mask: the
    real tokens' ``kind`` mask among themselves (in their own order), pads' keys masked for every query;
    returns ``(real positions, mask, *padded arrays)``. A pad query sees the real keys (no empty row)."""
    N = n + p
    real = list(range(n)) if side == "right" else list(range(p, N))
    order = real + [j for j in range(N) if j not in real]  # padded position of drawn row r is order[r]
    out = []
    for a in arrays:
        b = np.empty_like(a)
        b[order] = a
        out.append(b)
    rank = {pos: r for r, pos in enumerate(real)}  # a real token's index in the unpadded sequence
    keep = torch.zeros(N, N, dtype=torch.bool)
    for i in range(N):
        for j in real:
            keep[i, j] = kind == "bidirectional" or i not in rank or rank[j] <= rank[i]
    return real, keep, *out


@pytest.mark.claim("reply-padding-masked-no-effect", reading="exact")
@given(case=padded_sequence())
@profiles.scaled(0.25)
def test_padding_masked_exact(case, claim_log, claimed):
    """The record's ``claimed.masked`` and ``claimed.unmasked`` are relations in ``changed``, the real output
    rows (of ``n``) that padding changes (exact rational functions of t = e^s): with the pads' keys masked (pads on
    either side, bidirectional or causal), and without the key mask (right padding, bidirectional: the control)."""
    n, p, Q, K, V, side, kind = case
    before = exact_attention_rows(Q[:n] @ K[:n].T, V[:n], kind)
    real, keep, Qp, Kp, Vp = _padded(n, p, side, kind, Q, K, V)
    after = exact_attention_rows(Qp @ Kp.T, Vp, keep)
    changed = [r for r, i in enumerate(real) if not rational_rows_equal(before[r], after[i])]
    wrong = [] if claimed.eval("masked", exact=True, changed=len(changed), n=n) else ["masked"]
    control = []
    if side == "right" and kind == "bidirectional":  # the same padding with no key mask
        unmasked = exact_attention_rows(Qp @ Kp.T, Vp)
        control = [r for r, i in enumerate(real) if not rational_rows_equal(before[r], unmasked[i])]
        wrong += [] if claimed.eval("unmasked", exact=True, changed=len(control), n=n) else ["unmasked"]
    claim_log.example(n=n, p=p, left_padded=int(side == "left"), causal=int(kind == "causal"),
                      unmasked_changed=len(control))
    if wrong:
        refute(f"{p} pads on the {side} of {n} tokens ({kind}): masked real outputs changed at {changed}; "
               f"unmasked, changed at {control}; claimed " + ", ".join(f"{k}: {claimed.text(k)}" for k in wrong),
               example={"Q": Q, "K": K, "V": V, "side": side, "mask": kind},
               certified=True, certificate="exact rational functions of t", certificate_strength="proved")
    claim_log.note("Exact: with the pads' keys masked no real output changed, pads on either side, bidirectional "
                   "or causal; without the key mask every bidirectional real output moved towards the pads' "
                   "values (right padding), so the mask is what keeps them out.")


@pytest.mark.claim("reply-padding-masked-no-effect", reading="cpu-float32")
@given(n=st.integers(1, 24), p=st.integers(1, 24), D=st.integers(1, 8), side=st.sampled_from(["right", "left"]),
       kind=st.sampled_from(["bidirectional", "causal"]), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.25)
def test_padding_masked_float32(n, p, D, side, kind, seed, claim_log):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n + p, D)).astype(np.float32)
    W = [torch.tensor(rng.standard_normal((D, D)) / math.sqrt(D), dtype=torch.float32) for _ in range(3)]
    b = _float32_attention(torch.from_numpy(X[:n]), W, kind)[0]
    real, keep, Xp = _padded(n, p, side, kind, X)
    a, Qa, Ka, A, Va = _float32_attention(torch.from_numpy(Xp), W, keep)
    # The pads' weights are exactly 0 (exp(-inf)); only the reduction order of the longer rows differs.
    ulps, share = _rounding_only(a[real], b, _rounding_bound(Qa, Ka, A, Va, n + p, D)[real],
                                 f"the real outputs with {p} masked pads on the {side} ({kind}) differ from the "
                                 f"unpadded ones", {"n": n, "p": p, "D": D, "side": side, "mask": kind, "seed": seed})
    claim_log.example(n=n, p=p, left_padded=int(side == "left"), causal=int(kind == "causal"),
                      max_ulps_of_largest_output=ulps,
                      max_share_of_rounding_bound=share)
    claim_log.note("Holds up to rounding: the masked padded float32 outputs may differ from the unpadded ones in "
                   "the last bits (the reduction order of a longer row differs), never by more than the "
                   "rounding bound (4 gamma_N + 4 gamma_D + 2 gamma_D max|q_i|.|k_j|) (|A||V|)_ik (float32 u = 2^-24, Higham eq. 3.4; "
                   "attention_claims.maths.rounding).")
