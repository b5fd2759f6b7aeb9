"""Concentration: how softmax attention sharpens towards one key (temperature, dimension, entropy).

引理 11.35 and 定理 11.22 with its proof (``lemma-11-35-temperature-limits``,
``theorem-11-22-small-temperature-rank``, ``proof-11-22-one-hot-rows-rank``), 推论 11.9
(``corollary-11-9-sharpening-lowers-rank``), the geometry of §11.3.2
(``geometry-max-inner-product-is-nearest-neighbour``, ``lemma-11-37-high-dimensional-sparsity``),
定理 11.24 and its proof (``theorem-11-24-random-attention-limit``, ``proof-11-24-max-term-dominates``),
the study note's winner-takes-all (``study-note-softmax-winner-takes-all``) and entropy as a measure of
concentration (004 ``lower-entropy-more-concentrated``). The l1/l2 sparsity measure is
``checks/test_sparsity.py``. Tolerances are stated next to each comparison.
"""

from __future__ import annotations

import functools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, target
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attention_claims._cache import disk_memo_ints
from attention_claims.maths import (
    arb_softmax_attention,
    arb_softmax_stats,
    certified_rank_at_least,
    certified_sign,
    certified_softmax_max_below,
    certify_nonzero_det,
    effective_rank,
    entropy_arb,
    exact_rank,
    exact_softmax_rank,
    fraction_to_mpf,
    gaussian_logits,
    ks_distance_normal,
    mp_attention,
    mp_effective_rank,
    mp_singular_values,
    numerical_rank,
    participation_ratio,
    precision,
    singular_values,
    softmax_attention,
    sorted_standard_normals,
)
from attention_claims.testkit import (
    flat_probability_vector,
    log_uniform,
    one_torch_thread,
    probability_vector,
    profiles,
    refute,
    refute_deferred,
    seeded_gaussian_qk,
    shared_argmax_logits,
)
from attention_claims.testkit.failure_profiles import (
    RANK_REL_TOL,
    gaussian_qk_draws,
    gaussian_softmax_ranks,
    record_profile,
)

pytestmark = pytest.mark.usefixtures(one_torch_thread.__name__)


def _entropy_and_s(z, beta):
    """Entropy and l1/l2 sparsity of softmax(beta z), at 35 digits (returned as 35-digit mpf)."""
    with mpmath.workdps(35):
        zs = [mpmath.mpf(float(v)) * mpmath.mpf(beta) for v in z]
        m = max(zs)
        e = [mpmath.exp(v - m) for v in zs]
        tot = mpmath.fsum(e)
        p = [v / tot for v in e]
        H = -mpmath.fsum(v * mpmath.log(v) for v in p if v > 0)
        S = 1 / (mpmath.sqrt(len(p)) * mpmath.sqrt(mpmath.fsum(v * v for v in p)))
        return H, S


# -- geometric intuition -------------------------------------------------------------------------
def _argsets(q, keys):
    ips = [int(np.dot(q, k)) for k in keys]
    dists = [int(np.dot(q - k, q - k)) for k in keys]
    return ({j for j, v in enumerate(ips) if v == max(ips)}, {j for j, v in enumerate(dists) if v == min(dists)},
            ips, dists)


# -- 定理 11.24 and its proof ---------------------------------------------------------------------
def _conditional_logits(d: int, N: int, seed: int) -> tuple[np.ndarray, float]:
    """Given q ~ N(0, I_d), the logits q.k_j/sqrt(d) are exactly i.i.d. N(0, s2), s2 = |q|^2/d:
    drawn directly as s z_j (same law as gaussian_logits, without the N x d keys)."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(d)
    s2 = float(q @ q) / d
    return math.sqrt(s2) * rng.standard_normal(N), s2


# -- failure profiles (docs/verdicts.md, "Failure profile") ----------------------------------------
# 003's Base row (表 11.3.1): N = 512, d = 768 / 12 heads = 64; the study note (000) and 004 give no sizes,
# so the same typical sizes serve them. Each draw helper is seeded, pure and returns ints, cached in the
# process and on disk (attention_claims._cache.disk_memo_ints).
DOC_N, DOC_D, TRIALS = 512, 64, 30


def _gaussian_logit_matrices(N: int, d: int, trials: int, seed: int):
    """``trials`` logit matrices ``Z = QK^T/sqrt d (N, N)`` for Gaussian ``Q, K (N, d)``, from
    ``numpy.random.default_rng(seed)`` (a generator: one at a time)."""
    for Q, K, _ in gaussian_qk_draws(N, d, trials, seed):
        yield Q @ K.T / math.sqrt(d)


def _to_bfloat16(Z: np.ndarray) -> np.ndarray:
    """``Z`` (finite float64, any shape) rounded to bfloat16 and back, as ``torch.tensor(Z).to(torch.bfloat16)``
    rounds (to float32, then round-to-nearest-even on the top 16 bits of the float32; Kalamkar et al. 2019,
    "A Study of BFLOAT16 for Deep Learning Training", §2), in NumPy: the lemma-11-35 checks stay torch-free
    (tests/maths/test_lazy_torch.py)."""
    bits = np.asarray(Z, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return rounded.view(np.float32).astype(np.float64)


@functools.cache
@disk_memo_ints
def _row_max_ties(N: int, d: int, trials: int, seed: int) -> tuple[int, ...]:
    """Per draw of :func:`_gaussian_logit_matrices`: the number of rows whose largest logit is attained
    more than once in float64, then the same count after rounding the logits to bfloat16 (the dtype of
    many trained models). Returns ``2 * trials`` ints."""
    f64, bf16 = [], []
    for Z in _gaussian_logit_matrices(N, d, trials, seed):
        Zb = _to_bfloat16(Z)
        f64.append(int(((Z == Z.max(axis=1, keepdims=True)).sum(axis=1) > 1).sum()))
        bf16.append(int(((Zb == Zb.max(axis=1, keepdims=True)).sum(axis=1) > 1).sum()))
    return tuple(f64) + tuple(bf16)


@functools.cache
@disk_memo_ints
def _finite_t_rank_draws(N: int, d: int, trials: int, seed: int) -> tuple[int, ...]:
    """Per draw of :func:`_gaussian_logit_matrices`: whether ``rank softmax(Z/T) >= m + 1`` (``m`` the
    number of distinct row-argmax positions) is certified by an arb minor at every ``T = 10^-1, ...,
    10^-6`` (the check's computation), then ``m``. Returns ``2 * trials`` ints."""
    failed, distinct = [], []
    for Z in _gaussian_logit_matrices(N, d, trials, seed):
        m = len(set(np.argmax(Z, axis=1).tolist()))
        A64 = softmax_attention(Z, np.eye(N), scale=1.0).numpy()
        failed.append(int(all(
            certified_rank_at_least(lambda T=10.0**-k, Z=Z: arb_softmax_attention(Z / T, np.eye(N), scale=1.0), A64, m + 1,
                                    max_bits=1 << 15)[0]
            for k in range(1, 7))))
        distinct.append(m)
    return tuple(failed) + tuple(distinct)


@functools.cache
@disk_memo_ints
def _sharpening_effective_ranks(N: int, d: int, tau: float, trials: int, seed: int) -> tuple[int, ...]:
    """Per draw of :func:`_gaussian_logit_matrices` (two SVDs at N = 512: about 0.1 s a draw, so fewer
    draws than usual): the effective rank (定义 11.25, ``tau``; float64
    singular values) of ``softmax(Z/T)`` at ``T = 1``, then at the sharper ``T = 1/2``.
    Returns ``2 * trials`` ints."""
    e1, e2 = [], []
    for Z in _gaussian_logit_matrices(N, d, trials, seed):
        e1.append(effective_rank(singular_values(softmax_attention(Z, np.eye(N), scale=1.0).numpy()), tau))
        e2.append(effective_rank(singular_values(softmax_attention(Z, np.eye(N), scale=2.0).numpy()), tau))
    return tuple(e1) + tuple(e2)


@functools.cache
@disk_memo_ints
def _mips_vs_nearest(N: int, d: int, trials: int, seed: int) -> tuple[int, ...]:
    """For ``trials`` draws of a Gaussian query ``q (d,)`` and keys ``K (N, d)`` (``default_rng(seed)``):
    whether the key with the largest ``q.k_j`` is not the nearest key (float64; a draw counts only when
    both the top inner product and the smallest distance lead by more than ``1e-9`` relative, far above
    rounding), then the place of the nearest key in the inner-product order (1 = largest).
    Returns ``2 * trials`` ints."""
    rng = np.random.default_rng(seed)
    failed, place = [], []
    for _ in range(trials):
        q, K = rng.standard_normal(d), rng.standard_normal((N, d))
        ips, dists = K @ q, np.sum((K - q) ** 2, axis=1)
        top, near = np.sort(ips)[-2:], np.sort(dists)[:2]
        clear = top[1] - top[0] > 1e-9 * abs(top[1]) and near[1] - near[0] > 1e-9 * near[0]
        failed.append(int(clear and int(np.argmax(ips)) != int(np.argmin(dists))))
        place.append(int((ips > ips[int(np.argmin(dists))]).sum()) + 1)
    return tuple(failed) + tuple(place)


@functools.cache
@disk_memo_ints
def _participation_permille(N: int, d: int, trials: int, seed: int) -> tuple[int, ...]:
    """For ``trials`` draws of a Gaussian query ``q (d,)`` and keys ``K (N, d)`` (``default_rng(seed)``):
    ``floor(1000 PR / N)`` with ``PR = 1 / sum_j p_j^2`` the participation ratio of
    ``p = softmax(Kq/sqrt d)`` (float64)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(trials):
        q, K = rng.standard_normal(d), rng.standard_normal((N, d))
        out.append(math.floor(1000 * participation_ratio(K @ q / math.sqrt(d)) / N))
    return tuple(out)


@functools.cache
@disk_memo_ints
def _largest_weight_ppm(d: int, N: int, trials: int, seed: int) -> tuple[int, ...]:
    """``floor(1e6 max_j p_j)`` for the logits of :func:`_conditional_logits` at seeds ``seed, ...,
    seed + trials - 1`` (float64)."""
    out = []
    for t in range(trials):
        x, _ = _conditional_logits(d, N, seed + t)
        out.append(math.floor(1e6 / float(np.exp(x - x.max()).sum())))
    return tuple(out)


@functools.cache
@disk_memo_ints
def _entropy_top_weight_discordance(N: int, d: int, trials: int, seed: int) -> tuple[int, ...]:
    """Per draw of :func:`_gaussian_logit_matrices`, over the ordered pairs ``(i, j)`` of rows of
    ``A = softmax(Z)``: the number with ``H(a_i) < H(a_j)`` yet ``max a_i < max a_j``, each difference
    beyond ``1e-9`` (float64 entropies and maxima are good to ``1e-12`` here)."""
    out = []
    for Z in _gaussian_logit_matrices(N, d, trials, seed):
        A = softmax_attention(Z, np.eye(N), scale=1.0).numpy()
        H = -np.sum(A * np.log(A), axis=1)
        top = A.max(axis=1)
        lower_h = H[:, None] < H[None, :] - 1e-9
        lower_top = top[:, None] < top[None, :] - 1e-9
        out.append(int((lower_h & lower_top).sum()))
    return tuple(out)


SHARPEN_TRIALS = 10  # two 512 x 512 SVDs a draw; the ranks at the two temperatures do not overlap (see summary)


def _profile_ties(log) -> None:
    """Failure profile of the tied-maxima readings (引理 11.35, 定理 11.22) at N = 512, d = 64."""
    draws = _row_max_ties(DOC_N, DOC_D, TRIALS, 0)
    f64, bf16 = draws[:TRIALS], draws[TRIALS:]
    record_profile(log, [n > 0 for n in f64], setting=f"N={DOC_N}, d={DOC_D} (rows of QK^T/sqrt d)",
                   summary=f"rows of float64 logits QK^T/sqrt d, Gaussian Q, K (numpy default_rng(0)), whose largest "
                           f"logit is attained more than once (exact float comparison): {min(f64)}..{max(f64)} per draw; "
                           f"the failure needs a row with a tied maximum (duplicate keys, or logits rounded to a short "
                           f"format: the same logits rounded to bfloat16 have {min(bf16)}..{max(bf16)} such rows per draw)")


def _profile_finite_t(log, draws, N: int, d: int) -> None:
    """Failure profile of ``theorem-11-22-small-temperature-rank``'s ``finite-t-exact`` reading."""
    failed, distinct = draws[:TRIALS], draws[TRIALS:]
    record_profile(log, failed, setting=f"N={N}, d={d}, T=1e-1..1e-6",
                   summary=f"rank softmax(Z/T) >= m + 1 (m = number of distinct row-argmax positions, {min(distinct)}.."
                           f"{max(distinct)} here) certified by an arb minor at every T = 1e-1, ..., 1e-6, Z = QK^T/sqrt d "
                           f"with Gaussian Q, K (numpy default_rng(0)); N = {N} because an arb minor of size m + 1 takes "
                           f"seconds a draw at N = 64 (the matrix is strictly positive and generically of full rank N "
                           f"at every T > 0, whatever N)")


def _profile_sharpening(log, tau: float) -> None:
    """Failure profile of ``corollary-11-9-sharpening-lowers-rank``'s ``effective-rank-monotone`` reading."""
    draws = _sharpening_effective_ranks(DOC_N, DOC_D, tau, SHARPEN_TRIALS, 0)
    e1, e2 = draws[:SHARPEN_TRIALS], draws[SHARPEN_TRIALS:]
    record_profile(log, [b > a for a, b in zip(e1, e2, strict=True)], setting=f"N={DOC_N}, d={DOC_D}, T 1 -> 1/2",
                   summary=f"effective rank (tau = {tau}, float64 singular values) of softmax(Z/T), Z = QK^T/sqrt d with "
                           f"Gaussian Q, K (numpy default_rng(0)), {SHARPEN_TRIALS} draws (two 512 x 512 SVDs each): "
                           f"{min(e1)}..{max(e1)} at T = 1, {min(e2)}..{max(e2)} at the sharper T = 1/2; a draw fails "
                           f"when sharpening raised it")


def _profile_mips(log) -> None:
    """Failure profile of ``geometry-max-inner-product-is-nearest-neighbour``'s ``exact`` reading."""
    draws = _mips_vs_nearest(DOC_N, DOC_D, TRIALS, 0)
    failed, place = draws[:TRIALS], draws[TRIALS:]
    record_profile(log, failed, setting=f"N={DOC_N} keys, d={DOC_D}",
                   summary=f"Gaussian q and keys (numpy default_rng(0)), float64 (leads of both the top inner product "
                           f"and the smallest distance above 1e-9 relative): the key with the largest q.k_j is not the "
                           f"nearest key in {sum(failed)} of {TRIALS} draws; the nearest key ranks {min(place)}.."
                           f"{max(place)} by inner product (key norms differ: |q - k|^2 = |q|^2 - 2 q.k + |k|^2)")


def _profile_participation(log, few: float) -> None:
    """Failure profile of ``lemma-11-37-high-dimensional-sparsity``'s ``scaled-gaussian`` reading."""
    permille = _participation_permille(DOC_N, DOC_D, TRIALS, 0)
    record_profile(log, [p / 1000 > few for p in permille], setting=f"N={DOC_N}, d={DOC_D}",
                   summary=f"participation ratio 1/sum_j p_j^2 of p = softmax(q.k_j/sqrt d), Gaussian q, k_j (numpy "
                           f"default_rng(0)), float64: {min(permille) / 1000:.3f}..{max(permille) / 1000:.3f} N against "
                           f"the claimed concentration on at most {few} N positions")


def _profile_largest_weight(log, dominant: float) -> None:
    """Failure profile of the 'largest weight dominates' readings (定理 11.24 and its proof)."""
    N, d = 10**5, DOC_D
    ppm = _largest_weight_ppm(d, N, TRIALS, 0)
    record_profile(log, [p / 1e6 < dominant for p in ppm], setting=f"N=1e5, d={d}",
                   summary=f"largest attention weight max_j p_j for q, k_j ~ N(0, I_d) (logits drawn given q, numpy "
                           f"default_rng(seed) for seeds 0..{TRIALS - 1}), float64: {min(ppm) / 1e6:.2g}..{max(ppm) / 1e6:.2g} "
                           f"against the claimed dominant fraction {dominant}")


def _profile_entropy_top_weight(log) -> None:
    """Failure profile of ``lower-entropy-more-concentrated``'s ``top-weight-order`` reading."""
    pairs = _entropy_top_weight_discordance(DOC_N, DOC_D, TRIALS, 0)
    total = DOC_N * (DOC_N - 1)
    record_profile(log, [n > 0 for n in pairs], setting=f"N={DOC_N}, d={DOC_D} (rows of one attention matrix)",
                   summary=f"ordered pairs of rows of A = softmax(QK^T/sqrt d), Gaussian Q, K (numpy default_rng(0)), "
                           f"float64, with lower entropy yet a smaller top weight (both differences above 1e-9): "
                           f"{min(pairs)}..{max(pairs)} of the {total} pairs per matrix "
                           f"({min(pairs) / total:.1%}..{max(pairs) / total:.1%}); a matrix fails when it has one")


@pytest.fixture(scope="module")
def doc_size_ranks():
    """:func:`gaussian_softmax_ranks` at N = 512, d = 64 (shared with checks/test_rank.py), computed before
    Hypothesis starts a check that profiles, so its first example does not carry the SVDs."""
    return gaussian_softmax_ranks(DOC_N, DOC_D, TRIALS, 0)


@pytest.fixture(scope="module")
def finite_t_draws():
    """:func:`_finite_t_rank_draws` at N = 16, d = 8 (arb minors), computed before Hypothesis starts."""
    return _finite_t_rank_draws(16, 8, TRIALS, 0)


@pytest.fixture(scope="module")
def sharpening_draws():
    """:func:`_sharpening_effective_ranks` at N = 512, d = 64 (SVDs), computed before Hypothesis starts at
    corollary-11-9-sharpening-lowers-rank's claimed tau = 0.9 (the check asks again with the record's tau:
    the same call, cached, unless the record changes)."""
    return _sharpening_effective_ranks(DOC_N, DOC_D, 0.9, SHARPEN_TRIALS, 0)


# -- 引理 11.35 --------------------------------------------------------------------------------
def _mp_softmax(z, T):
    zs = [mpmath.mpf(x) / T for x in z]
    m = max(zs)
    e = [mpmath.exp(x - m) for x in zs]
    s = mpmath.fsum(e)
    return [x / s for x in e]


@pytest.mark.claim("lower-entropy-more-concentrated", reading="min-entropy-bound")
@given(p=probability_vector())
def test_min_entropy_bound(p, claim_log, claimed):
    with precision(200):
        h = entropy_arb(p)  # radius about 1e-58
    # the claimed lower bound on max_i p_i as a function of H (nats; the document's formal: exp(-H)), evaluated in
    # 50-digit mpmath from H's arb enclosure (radius far below 1e-40); max p - bound is decided where it is more
    # than MARGIN from 0: the arb radius of H, the rounding of H to 50 digits and a formula of a few operations at
    # 50 digits are each below 1e-45 times the bound's scale (at most 1 here), so a sign beyond the margin is certain
    margin = mpmath.mpf(10) ** -40
    with mpmath.workdps(50):
        bound = claimed.eval("top_weight_lower", H=mpmath.mpf(h.mid().str(60, radius=False)))
        gap = fraction_to_mpf(max(p)) - bound
    claim_log.example(n=len(p), H=float(h.mid()))
    if h.rad() > margin / 100 or not mpmath.isfinite(gap):
        raise ArithmeticError(f"entropy enclosure too wide ({h}) or bound not finite ({bound}) at p = {p}")  # a bug
    if gap < -margin:
        refute(f"max p = {max(p)} < the claimed {claimed.text('top_weight_lower')} = {mpmath.nstr(bound, 20)} "
               f"(H = {h.mid().str(20, radius=False)})", example={"p": [str(v) for v in p]}, certified=True,
               certificate=f"50-digit mpmath from an arb enclosure of H: max p - bound = {mpmath.nstr(gap, 12)}, "
                           f"beyond the 1e-40 rounding margin", certificate_strength="recomputed")
    claim_log.note("max_i p_i minus the claimed bound (exp(-H(p))) is never below -1e-40 at 50 digits (H certified "
                   "by arb); it is 0 at one-hot and uniform p.")


@pytest.mark.claim("lower-entropy-more-concentrated", reading="top-weight-order")
@given(n=st.integers(2, 4), data=st.data())
def test_entropy_orders_top_weight(n, data, claim_log):
    _profile_entropy_top_weight(claim_log)
    p = data.draw(st.one_of(flat_probability_vector(n), probability_vector(n)), label="p")
    pp = data.draw(probability_vector(n), label="p'")
    dh = certified_sign(entropy_arb(p) - entropy_arb(pp))
    claim_log.example(n=n)
    if dh == -1 and not max(p) > max(pp):
        refute(f"H(p) < H(p') but max p = {max(p)} <= max p' = {max(pp)} (p = {[str(v) for v in p]}, "
               f"p' = {[str(v) for v in pp]})", example={"p": [str(v) for v in p], "p_prime": [str(v) for v in pp]},
               certified=True, certificate="H(p) - H(p') an arb interval below 0; the maxima exact rationals",
               certificate_strength="proved")


# -- 110: winner takes all --------------------------------------------------------------------------
@pytest.mark.claim("study-note-softmax-winner-takes-all", reading="scale-monotone-rank")
@given(M=st.integers(2, 6).flatmap(lambda n: hnp.arrays(np.int64, (n, n), elements=st.integers(-2, 2))),
       b1=st.integers(0, 2), db=st.integers(1, 2))
@profiles.scaled(0.5)
def test_winner_takes_all_rank(M, b1, db, claim_log, doc_size_ranks):
    # beta_1 = 0 gives the uniform matrix (every entry 1/N: rank exactly 1); beta_2 = 1 the document's logits
    record_profile(claim_log, [r > 1 for r in doc_size_ranks], setting=f"N={DOC_N}, d={DOC_D}, beta 0 -> 1",
                   summary=f"rank of softmax(beta QK^T/sqrt d), Gaussian Q, K (numpy default_rng(0)): 1 at beta_1 = 0 "
                           f"(uniform rows), numerical rank (float64, singular values above {RANK_REL_TOL:g} sigma_1) "
                           f"{min(doc_size_ranks)}..{max(doc_size_ranks)} at beta_2 = 1; a draw fails when sharpening "
                           f"raised it (the reading's scales start at beta_1 = 0, as its counterexample does)")
    r1, r2 = exact_softmax_rank(M * b1), exact_softmax_rank(M * (b1 + db))
    claim_log.example(N=M.shape[0], rank_change=r2 - r1)
    target(float(r2 - r1), label="rank increase")
    if r2 > r1:
        refute(f"sharpening the logits (scale {b1} -> {b1 + db}) raised the exact rank from {r1} to {r2}",
               example={"M": M, "beta_1": b1, "beta_2": b1 + db}, certified=True,
               certificate="ranks over Q(e) (exact)", certificate_strength="proved")


@pytest.mark.claim("study-note-softmax-winner-takes-all", reading="effective-rank-from-unit-scale")
@given(N=st.integers(8, 16), d=st.integers(1, 4), b1=log_uniform(0, 0.6), ratio=log_uniform(0.2, 0.9),
       seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.25)
def test_winner_takes_all_effective_rank(N, d, b1, ratio, seed, claim_log):
    """Charity check of the exact-rank reading (whose counterexample starts at beta = 0): from logit
    scale 1 upwards (beta_2 = beta_1 * ratio <= 32), does sharpening ever lower the effective rank,
    and does it raise it? A rise is confirmed by 40-digit singular values of both matrices."""
    Q, K = seeded_gaussian_qk(N, d, 1.0, seed)
    b2 = b1 * ratio
    e1, e2 = (effective_rank(singular_values(softmax_attention(Q * b, K).numpy()), 0.9) for b in (b1, b2))
    claim_log.example(N=N, d=d, beta_1=b1, beta_2=b2, effective_rank_change=e2 - e1)
    target(float(e2 - e1), label="effective rank increase on sharpening")
    if e2 > e1:
        def certify():  # once, on the shrunk example (40-digit SVDs of 16 x 16 matrices take seconds)
            with mpmath.workdps(40):
                m1, ok1 = mp_effective_rank(mp_singular_values(mp_attention(Q * b1, K)), 0.9)
                m2, ok2 = mp_effective_rank(mp_singular_values(mp_attention(Q * b2, K)), 0.9)
            refute(f"sharpening Gaussian logits from scale {b1:.3g} to {b2:.3g} raised the effective rank (tau = 0.9) "
                   f"from {m1} to {m2} (N = {N}, d = {d}): more dominant singular values, not fewer",
                   example={"N": N, "d": d, "seed": seed, "beta_1": b1, "beta_2": b2},
                   certified=bool(ok1 and ok2 and m2 > m1),
                   certificate="40-digit mpmath singular values of both matrices (from the stored float64 beta Q, K); "
                               "no cumulative energy ratio within 1e-25 of tau",
                   certificate_strength="recomputed" if bool(ok1 and ok2 and (m2 > m1)) else None)

        refute_deferred(f"float64 effective rank rose from {e1} to {e2} on sharpening", certify=certify,
                        example={"N": N, "d": d, "seed": seed, "beta_1": b1, "beta_2": b2})


@pytest.mark.parametrize("which", [
    pytest.param("entropy", marks=pytest.mark.claim("study-note-softmax-winner-takes-all", reading="row-entropy-decreases"), id="entropy"),
    pytest.param("sparsity", marks=pytest.mark.claim("study-note-softmax-winner-takes-all", reading="l1-l2-sparsity-increases"), id="sparsity"),
])
@given(z=hnp.arrays(np.float64, st.integers(2, 12), elements=st.floats(-10, 10)), b1=st.floats(0, 10),
       db=log_uniform(-3, 1))
@profiles.scaled(0.25)
def test_winner_takes_all_sparsity(which, z, b1, db, claim_log):
    H1, S1 = _entropy_and_s(z, b1)
    H2, S2 = _entropy_and_s(z, b1 + db)
    a, b = (H1, H2) if which == "entropy" else (S1, S2)
    with mpmath.workdps(35):
        rise = b - a
        bad = rise > mpmath.mpf("1e-25")  # 35-digit arithmetic: 1e-25 absolute
    claim_log.example(n=len(z))
    target(float(rise), label="increase")
    if bad:
        refute(f"{which} rose from {mpmath.nstr(a, 12)} to {mpmath.nstr(b, 12)} when beta grew {b1} -> {b1 + db}",
               example={"z": z, "beta_1": b1, "beta_2": b1 + db}, certified=True, certificate="35-digit mpmath",
               certificate_strength="recomputed")


# -- proof of 定理 11.22 ---------------------------------------------------------------------------
@pytest.mark.claim("proof-11-22-one-hot-rows-rank", reading="exact")
@given(js=st.lists(st.integers(0, 11), min_size=1, max_size=12))
def test_one_hot_rows_rank(js, claim_log, claimed):
    N = len(js)
    E = np.zeros((N, 12))
    E[np.arange(N), js] = 1.0
    r = exact_rank(E)
    distinct = len(set(js))
    want = claimed.eval("rank", exact=True, distinct=distinct, N=N)
    claim_log.example(N=N, rank=r)
    if r != want or (distinct < N) != (r < N):
        refute(f"rows e_j for j in {js}: exact rank {r}, claimed {claimed.text('rank')} = {want}",
               example={"js": js}, certified=True, certificate="fmpz_mat rank (exact)", certificate_strength="proved")


# -- 推论 11.9 -----------------------------------------------------------------------------------
@pytest.mark.claim("corollary-11-9-sharpening-lowers-rank", reading="effective-rank-monotone")
@given(Z=st.integers(2, 6).flatmap(lambda n: hnp.arrays(np.float64, (n, n), elements=st.integers(-4, 4).map(float))),
       T1=log_uniform(0, 2), r=log_uniform(-2, -0.3))
@profiles.scaled(0.5)
def test_sharpening_effective_rank(Z, T1, r, claim_log, claimed, sharpening_draws):
    _profile_sharpening(claim_log, float(claimed.eval("tau", exact=True)))
    N = Z.shape[0]
    tau = float(claimed.eval("tau", exact=True))
    T2 = T1 * r
    I_N = np.eye(N)
    e1 = effective_rank(singular_values(softmax_attention(Z, I_N, scale=1 / T1)), tau)
    e2 = effective_rank(singular_values(softmax_attention(Z, I_N, scale=1 / T2)), tau)
    target(float(e2 - e1), label="eff-rank increase on sharpening")
    claim_log.example(N=N, eff_rank_increase=e2 - e1)
    if e2 > e1:
        with mpmath.workdps(40):
            m1, ok1 = mp_effective_rank(mp_singular_values(mp_attention(Z, I_N, scale=1 / mpmath.mpf(T1))), tau)
            m2, ok2 = mp_effective_rank(mp_singular_values(mp_attention(Z, I_N, scale=1 / mpmath.mpf(T2))), tau)
        if ok1 and ok2 and m2 > m1:
            refute(f"sharpening softmax(Z/T) from T = {T1:.4g} to {T2:.4g} raises the effective rank (tau = {tau}) "
                   f"from {m1} to {m2} (N = {N})", example={"Z": Z, "T1": T1, "T2": T2}, certified=True,
                   certificate="40-digit mpmath singular values of both matrices; no cumulative ratio within 1e-25 "
                               "of tau", certificate_strength="recomputed")


@pytest.mark.claim("corollary-11-9-sharpening-lowers-rank", reading="shared-argmax")
@given(Z=shared_argmax_logits(n=(2, 8)))
def test_sharpening_shared_argmax(Z, claim_log, claimed):
    N = Z.shape[0]
    tau = float(claimed.eval("tau", exact=True))
    srt = np.sort(Z, axis=1)
    T = float((srt[:, -1] - srt[:, -2]).min()) / 40
    e = effective_rank(singular_values(softmax_attention(Z, np.eye(N), scale=1 / T)), tau)
    claim_log.example(N=N, eff_rank=e)
    if e != 1:
        refute(f"all rows peak in column 0, yet at T = {T:.3g} the effective rank is {e}", example={"Z": Z, "T": T},
               certified=False)


@pytest.mark.claim("corollary-11-9-sharpening-lowers-rank", reading="literal-exact-rank")
@given(Z=st.integers(2, 6).flatmap(lambda n: hnp.arrays(np.float64, (n, n), elements=st.integers(-4, 4).map(float))),
       T1=log_uniform(0, 1), r=log_uniform(-2, -0.3))
@profiles.scaled(0.25, explain=False)
def test_sharpening_exact_rank(Z, T1, r, claim_log):
    N = Z.shape[0]
    T2 = T1 * r
    _sharpening_exact_rank_profile(claim_log)
    ok, det, bits = certify_nonzero_det(lambda: arb_softmax_attention(Z, np.eye(N), scale=1 / T2))
    claim_log.example(N=N, full_rank_after_sharpening=ok)
    if ok:
        refute(f"sharpening softmax(Z/T) from T = {T1:.4g} to {T2:.4g} leaves the exact rank at N = {N} (det softmax(Z/T2) "
               f"!= 0), so it cannot have lowered it", example={"Z": Z, "T1": T1, "T2": T2}, certified=True,
               certificate=f"arb determinant of softmax(Z/T2) at {bits} bits: {det}, an interval excluding 0",
               certificate_strength="proved")


@functools.cache
@disk_memo_ints
def _sharpened_full_rank_draws(N: int, T: float, trials: int, seed: int) -> tuple[int, ...]:
    """For ``trials`` draws of Gaussian logits ``Z (N, N)`` (``numpy.random.default_rng(seed)``): 1 when
    ``det softmax(Z/T) != 0`` is certified with arb (:func:`attention_claims.maths.certify_nonzero_det`), so the exact
    rank is N after sharpening to ``T``, else 0."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(trials):
        Z = rng.standard_normal((N, N))
        out.append(int(certify_nonzero_det(lambda Z=Z: arb_softmax_attention(Z, np.eye(N), scale=1 / T))[0]))
    return tuple(out)


def _sharpening_exact_rank_profile(claim_log) -> None:
    """Failure profile of the literal exact-rank reading: Gaussian logits, N = 16, sharpened from T = 1 to 0.1."""
    N, T, trials = 16, 0.1, 30
    record_profile(claim_log, [bool(x) for x in _sharpened_full_rank_draws(N, T, trials, 0)],
                   setting=f"N={N}, Gaussian logits Z, T from 1 to {T}",
                   summary=f"a draw fails when det softmax(Z/{T}) is certified non-zero (arb, 128 to 4096 bits), i.e. the "
                           f"exact rank stays N; {trials} draws, numpy default_rng(0)")


@pytest.mark.claim("geometry-max-inner-product-is-nearest-neighbour", reading="exact")
@given(d=st.integers(2, 4), data=st.data())
def test_max_inner_product_is_nearest(d, data, claim_log):
    _profile_mips(claim_log)
    ints = st.integers(-4, 4)
    q = data.draw(hnp.arrays(np.int64, d, elements=ints), label="q")
    keys = data.draw(hnp.arrays(np.int64, (data.draw(st.integers(2, 6), label="N"), d), elements=ints), label="keys")
    best_ip, nearest, ips, dists = _argsets(q, keys)
    claim_log.example(N=len(keys), d=d)
    if best_ip != nearest:
        refute(f"q = {q.tolist()}: the largest q.k_j is at {sorted(best_ip)} (q.k = {ips}) but the nearest key is "
               f"{sorted(nearest)} (|q - k|^2 = {dists})", example={"q": q, "keys": keys}, certified=True,
               certificate="exact integer arithmetic", certificate_strength="proved")


@pytest.mark.claim("geometry-max-inner-product-is-nearest-neighbour", reading="equal-norm-keys")
@given(d=st.integers(2, 4), data=st.data())
def test_max_inner_product_equal_norm_keys(d, data, claim_log):
    base = data.draw(hnp.arrays(np.int64, d, elements=st.integers(-4, 4)), label="base")
    q = data.draw(hnp.arrays(np.int64, d, elements=st.integers(-4, 4)), label="q")
    n = data.draw(st.integers(2, 6), label="N")
    keys = np.array([data.draw(st.permutations(base.tolist())) for _ in range(n)])
    keys = keys * data.draw(hnp.arrays(np.int64, (n, d), elements=st.sampled_from([-1, 1])), label="signs")
    best_ip, nearest, ips, dists = _argsets(q, keys)
    claim_log.example(N=n, d=d)
    if best_ip != nearest:
        refute(f"equal-norm keys {keys.tolist()}: argmax q.k = {sorted(best_ip)}, nearest = {sorted(nearest)}",
               example={"q": q, "keys": keys}, certified=True, certificate="exact integer arithmetic",
               certificate_strength="proved")


# -- 引理 11.37 ----------------------------------------------------------------------------------
@pytest.mark.parametrize("scaled,reading", [
    pytest.param(True, "scaled-gaussian", marks=pytest.mark.claim("lemma-11-37-high-dimensional-sparsity", reading="scaled-gaussian"), id="scaled"),
    pytest.param(False, "unscaled-logits", marks=pytest.mark.claim("lemma-11-37-high-dimensional-sparsity", reading="unscaled-logits"), id="unscaled"),
])
@given(d=st.integers(32, 256), N=st.integers(256, 4096), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.5)
def test_high_dimension_concentration(scaled, reading, d, N, seed, claim_log, claimed):
    if scaled:  # the as-stated reading (unscaled logits do concentrate)
        _profile_participation(claim_log, float(claimed.eval("few_fraction", exact=True)))
    x, s2 = gaussian_logits(d, N, seed, scaled=scaled)
    pr = participation_ratio(x)
    few = float(claimed.eval("few_fraction", exact=True))
    target(pr / N, label="participation ratio / N")
    claim_log.example(d=d, N=N, participation_over_N=pr / N)
    if pr > few * N:
        arb_pr, _ = arb_softmax_stats(x)
        if arb_pr > few * N:
            refute(f"q, k_j ~ N(0, I_{d}), N = {N}: softmax({'q.k/sqrt d' if scaled else 'q.k'}) spreads over "
                   f"1/sum p^2 = {arb_pr.mid()} = {float(arb_pr.mid()) / N:.3f} N positions, more than "
                   f"{few} N (limit e^(-s^2) = {math.exp(-s2):.3f} with s^2 = {s2:.3f})",
                   example={"d": d, "N": N, "seed": seed}, certified=True,
                   certificate=f"arb enclosure of the participation ratio from the float64 logits: {arb_pr}",
                   certificate_strength="proved")


@pytest.mark.claim("lemma-11-37-high-dimensional-sparsity", reading="cosine-low")
@given(d=st.integers(32, 256), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.5)
def test_high_dimension_cosines_low(d, seed, claim_log, claimed):
    rng = np.random.default_rng(seed)
    q, K = rng.standard_normal(d), rng.standard_normal((1024, d))
    cos = K @ q / (np.linalg.norm(K, axis=1) * np.linalg.norm(q))
    low = float(claimed.eval("low_cos", exact=True))
    frac = float(np.mean(np.abs(cos) < low))
    claim_log.example(d=d, fraction_low=frac)
    if frac < float(claimed.eval("most", exact=True)):
        refute(f"only {frac:.3f} of 1024 keys have |cos| < {low} (d = {d})", example={"d": d, "seed": seed},
               certified=False)


@pytest.mark.claim("theorem-11-24-random-attention-limit", reading="lognormal-limit")
@given(d=st.integers(8, 64), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.5)
def test_random_attention_lognormal_limit(d, seed, claim_log, claimed):
    N = 200_000
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(d)
    s2 = float(q @ q) / d
    # given q the logits are i.i.d. N(0, s2) (_conditional_logits); drawn here already in increasing order
    # (sorted_standard_normals: exactly the law of the sorted draws, in O(N)), which the KS distance needs
    x = math.sqrt(s2) * sorted_standard_normals(rng, N)
    m = x[-1]
    y = x - (m + math.log(np.mean(np.exp(x - m))))  # log(N p_j), still increasing
    ks = ks_distance_normal(y, -s2 / 2, math.sqrt(s2))
    claim_log.example(d=d, ks=ks, s2=s2)
    if ks > float(claimed.eval("ks_max", exact=True)):
        refute(f"KS distance of log(N p_j) to N(-s^2/2, s^2) is {ks:.4f} (d = {d}, s^2 = {s2:.3f}, N = {N})",
               example={"d": d, "seed": seed}, certified=False)


@pytest.mark.parametrize("cid,reading", [
    pytest.param("theorem-11-24-random-attention-limit", "largest-weight-persists", marks=pytest.mark.claim("theorem-11-24-random-attention-limit", reading="largest-weight-persists"),
                 id="theorem-11-24"),
    pytest.param("proof-11-24-max-term-dominates", "max-term-dominates", marks=pytest.mark.claim("proof-11-24-max-term-dominates", reading="max-term-dominates"),
                 id="proof-11-24"),
])
@given(d=st.integers(1, 64), N=st.sampled_from([10**4, 3 * 10**4, 10**5]), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.25)
def test_random_attention_max_weight(cid, reading, d, N, seed, claim_log, claimed):
    _profile_largest_weight(claim_log, float(claimed.eval("dominant", exact=True)))
    x, s2 = _conditional_logits(d, N, seed)
    w = np.exp(x - x.max())
    pmax = float(1 / w.sum())
    dom = float(claimed.eval("dominant", exact=True))
    target(pmax, label="largest weight")
    claim_log.example(d=d, N=N, max_weight=pmax)
    if pmax < dom:
        ok, upper = certified_softmax_max_below(x, dom)
        if ok:
            refute(f"q, k_j ~ N(0, I_{d}), N = {N}: the largest term is {pmax:.4g} of Z (certified below "
                   f"{float(upper.upper()):.4g}), below {dom} (s^2 = {s2:.3f}); Z/N -> e^(s^2/2) while the largest "
                   f"term is N^o(1)", example={"d": d, "N": N, "seed": seed}, certified=True,
                   certificate=f"arb: max_j p_j <= 1 / (sum of the largest terms e^(x_j - max x)) in {upper}",
                   certificate_strength="proved")


@pytest.mark.claim("proof-11-24-max-term-dominates", reading="law-of-large-numbers")
@given(d=st.integers(8, 64), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.5)
def test_random_attention_law_of_large_numbers(d, seed, claim_log, claimed):
    N = 100_000
    x, s2 = _conditional_logits(d, N, seed)
    ratio = float(np.sum(np.exp(x)) / (N * math.exp(s2 / 2)))
    tol = float(claimed.eval("lln_tol", exact=True))
    claim_log.example(d=d, ratio=ratio)
    if abs(ratio - 1) > tol:
        refute(f"Z / (N e^(s^2/2)) = {ratio:.4f}, not within {tol} of 1 (d = {d}, s^2 = {s2:.3f})",
               example={"d": d, "seed": seed}, certified=False)


@pytest.mark.claim("lemma-11-35-temperature-limits", reading="unique-maximum")
@given(z=hnp.arrays(np.float64, st.integers(2, 8), elements=st.floats(-10, 10)).filter(
    lambda a: int(np.sum(a == a.max())) == 1))
def test_temperature_limits_unique_max(z, claim_log, claimed):
    with mpmath.workdps(50):
        srt = sorted(z)
        gap = mpmath.mpf(srt[-1]) - mpmath.mpf(srt[-2])
        j = int(np.argmax(z))
        N = z.size
        spread = max(abs(mpmath.mpf(x) - mpmath.fsum(z) / N) for x in z)
        u = claimed.eval("uniform_limit", exact=True, N=N)  # exact rational, then to 50 digits
        uniform = mpmath.mpf(u.numerator) / u.denominator
        for k in range(1, 9):
            T = mpmath.mpf(10) ** -k
            p = _mp_softmax(z, T)
            dist = max(abs(p[i] - (1 if i == j else 0)) for i in range(N))
            if dist > N * mpmath.exp(-gap / T):
                refute(f"softmax(z/T) at T = 1e-{k} is {mpmath.nstr(dist, 5)} from one-hot, above N exp(-gap/T)",
                       example={"z": z, "T": f"1e-{k}"}, certified=True, certificate="50-digit mpmath",
                       certificate_strength="recomputed")
            T = mpmath.mpf(10) ** k
            p = _mp_softmax(z, T)
            dist = max(abs(x - uniform) for x in p)
            if dist > 4 * spread / T * mpmath.exp(2 * spread / T):
                refute(f"softmax(z/T) at T = 1e{k} is {mpmath.nstr(dist, 5)} from the claimed uniform limit "
                       f"{claimed.text('uniform_limit')} = {mpmath.nstr(uniform, 6)} per entry",
                       example={"z": z, "T": f"1e{k}"}, certified=True, certificate="50-digit mpmath",
                       certificate_strength="recomputed")
    claim_log.example(N=N, gap=float(gap))
    claim_log.note("Checked along T = 10^-1..10^-8 (one-hot, distance <= N e^{-gap/T}) and T = 10..10^8 "
                   "(uniform, distance <= 4 s/T e^{2s/T}, s = max|z - mean z|), 50-digit mpmath.")


@pytest.mark.claim("lemma-11-35-temperature-limits", reading="tied-maxima")
@given(z=hnp.arrays(np.float64, st.integers(2, 8), elements=st.floats(-10, 10)))
def test_temperature_limit_with_ties(z, claim_log):
    _profile_ties(claim_log)
    claim_log.example(N=z.size)
    ties = int(np.sum(z == z.max()))
    if ties > 1:
        with mpmath.workdps(50):
            p = _mp_softmax(z, mpmath.mpf(10) ** -30)
        j = int(np.argmax(z))
        refute(f"z = {z.tolist()} has {ties} tied maxima: softmax(z/T) -> 1/{ties} on each of them, not one-hot "
               f"(at T = 1e-30: p_j = {mpmath.nstr(p[j], 8)})", example={"z": z}, certified=True,
               certificate=f"exact: tied entries get equal weight for every T; 50-digit value {mpmath.nstr(p[j], 8)}",
               certificate_strength="proved")


# -- 定理 11.22 --------------------------------------------------------------------------------
@st.composite
def _unique_argmax_logits(draw, n=(2, 6)):
    """Integer logits ``Z (N, N)`` in [-5, 5] whose row i has its unique maximum, by a margin of 1 to 3, in
    a drawn column c_i (columns may repeat: fewer distinct argmax positions than rows is the point)."""
    N = draw(st.integers(*n), label="N")
    Z = draw(hnp.arrays(np.float64, (N, N), elements=st.integers(-5, 5).map(float)), label="Z")
    cols = draw(st.lists(st.integers(0, N - 1), min_size=N, max_size=N), label="argmax columns")
    for i, c in enumerate(cols):
        Z[i, c] = np.delete(Z[i], c).max() + draw(st.integers(1, 3), label="margin")
    return Z


@pytest.mark.claim("theorem-11-22-small-temperature-rank", reading="limit")
@given(Z=_unique_argmax_logits())
@profiles.scaled(0.5)
def test_small_temperature_rank_limit(Z, claim_log, claimed):
    N = Z.shape[0]
    cols = np.argmax(Z, axis=1)
    E = np.zeros((N, N))
    E[np.arange(N), cols] = 1.0
    distinct = len(set(cols.tolist()))
    limit_rank = exact_rank(E)  # a 0/1 matrix with one 1 per row
    want = claimed.eval("rank", exact=True, distinct=distinct, N=N)
    if limit_rank != want:
        refute(f"the one-hot limit has rank {limit_rank} ({distinct} distinct argmax positions), not the claimed "
               f"{claimed.text('rank')} = {want}", example={"Z": Z}, certified=True,
               certificate="0/1 matrix, exact integer rank (fmpz)", certificate_strength="proved")
    with mpmath.workdps(50):
        for i in range(N):
            srt = sorted(Z[i])
            gap = mpmath.mpf(srt[-1]) - mpmath.mpf(srt[-2])
            for k in range(1, 9):
                T = mpmath.mpf(10) ** -k
                p = _mp_softmax(Z[i], T)
                # the max-norm distance to one-hot is 1 - p_max = sum_{j != max} p_j (summed directly: no
                # cancellation) < (N - 1) e^{-gap/T}; the slack 1e-40 is 50-digit rounding (relative error
                # <= ~1e-48 here), nothing more: near the bound the true margin is ~e^{-gap/T} relative
                dist = mpmath.fsum(p[j] for j in range(N) if j != cols[i])
                if dist > (N - 1) * mpmath.exp(-gap / T) * (1 + mpmath.mpf(10) ** -40):
                    refute(f"row {i} of softmax(Z/T) at T = 1e-{k} is {mpmath.nstr(dist, 5)} from one-hot, above "
                           f"(N - 1) e^(-gap/T)", example={"Z": Z, "T": f"1e-{k}"}, certified=True,
                           certificate="50-digit mpmath", certificate_strength="recomputed")
    claim_log.example(N=N, distinct_argmax=distinct)
    claim_log.note("As T -> 0 every row tends to its one-hot vector (distance <= (N - 1) e^{-gap/T}, checked at "
                   "T = 10^-1..10^-8 in 50-digit mpmath), and the limit matrix has rank exactly the number of "
                   "distinct argmax positions.")


@pytest.mark.claim("theorem-11-22-small-temperature-rank", reading="finite-t-exact")
@given(Z=shared_argmax_logits(n=(2, 5)))
@profiles.scaled(0.5)
def test_small_temperature_rank_exact(Z, claim_log, finite_t_draws):
    _profile_finite_t(claim_log, finite_t_draws, 16, 8)
    N = Z.shape[0]
    distinct = len(set(np.argmax(Z, axis=1).tolist()))
    claim_log.example(N=N)
    A64 = softmax_attention(Z, np.eye(N), scale=1.0).numpy()
    certs = []
    for k in range(1, 7):  # "small enough" is refuted only if the rank stays high at every T tried
        T = 10.0**-k
        ok, info = certified_rank_at_least(lambda T=T: arb_softmax_attention(Z / T, np.eye(N), scale=1.0), A64,
                                           distinct + 1, max_bits=1 << 15)
        if not ok:
            return
        certs.append(f"T=1e-{k}: det {info['det']}")
    refute(f"all {N} rows peak in {distinct} column(s), yet softmax(Z/T) has rank >= {distinct + 1} at every "
           f"T = 1e-1, ..., 1e-6 (the matrix is strictly positive for every T > 0)",
           example={"Z": Z}, certified=True,
           certificate="arb minors (rows/cols chosen by pivoted QR): " + "; ".join(certs),
           certificate_strength="proved")


@st.composite
def _tied_row_logits(draw, n=(2, 6)):
    """Integer logits ``Z (N, N)`` in [-5, 5] whose drawn row r has its maximum tied in at least two columns."""
    N = draw(st.integers(*n), label="N")
    Z = draw(hnp.arrays(np.float64, (N, N), elements=st.integers(-5, 5).map(float)), label="Z")
    r = draw(st.integers(0, N - 1), label="tied row")
    cols = draw(st.lists(st.integers(0, N - 1), min_size=2, max_size=N, unique=True), label="tied columns")
    Z[r, cols] = Z[r].max() + draw(st.integers(0, 2), label="lift")
    return Z


@pytest.mark.claim("theorem-11-22-small-temperature-rank", reading="tied-maxima")
@given(Z=_tied_row_logits())
@profiles.scaled(0.5)
def test_small_temperature_rank_with_ties(Z, claim_log):
    """A row whose maximum is tied tends to the uniform vector on the tied columns (1/t each, exactly
    for every T), not to a one-hot vector; the limit's rank is then that of a matrix with such rows."""
    _profile_ties(claim_log)
    N = Z.shape[0]
    ties = [int(np.sum(Z[i] == Z[i].max())) for i in range(N)]
    claim_log.example(N=N, max_ties=max(ties))
    r = int(np.argmax(ties))
    with mpmath.workdps(50):
        p = _mp_softmax(Z[r], mpmath.mpf(10) ** -30)
    j = int(np.argmax(Z[r]))
    # row i of the limit is (1/t_i) times the 0/1 indicator of its maxima: same rank as the indicators
    limit_rank = exact_rank((Z == Z.max(axis=1, keepdims=True)).astype(np.float64))
    distinct = len(set(np.argmax(Z, axis=1).tolist()))
    if 1 - p[j] < mpmath.mpf(10) ** -40:
        return  # one-hot to 50 digits: the reading holds for this Z
    refute(f"row {r} of Z = {Z.tolist()} has {ties[r]} tied maxima: softmax(Z/T) row -> 1/{ties[r]} on each "
           f"of them, not a one-hot vector (at T = 1e-30: p = {mpmath.nstr(p[j], 8)}); the limit matrix has "
           f"rank {limit_rank} against {distinct} distinct argmax positions",
           example={"Z": Z}, certified=True,
           certificate=f"exact: tied logits get equal weight for every T; 50-digit value {mpmath.nstr(p[j], 8)}; "
                       f"limit rank exact (integer rank of the 0/1 indicators of the row maxima)",
           certificate_strength="proved")


@pytest.mark.claim("theorem-11-22-small-temperature-rank", reading="float64-numerical-rank")
@given(Z=shared_argmax_logits(n=(2, 5)))
def test_small_temperature_numerical_rank(Z, claim_log):
    N = Z.shape[0]
    gaps = np.sort(Z, axis=1)[:, -1] - np.sort(Z, axis=1)[:, -2]
    T = float(gaps.min()) / 40
    A = softmax_attention(Z / T, np.eye(N), scale=1.0).numpy()
    r, tol = numerical_rank(A)
    distinct = len(set(np.argmax(Z, axis=1).tolist()))
    claim_log.example(N=N, numerical_rank=r)
    if r != distinct:
        refute(f"at T = {T:.3g} the float64 numerical rank is {r}, not {distinct}", example={"Z": Z, "T": T},
               certified=False)


