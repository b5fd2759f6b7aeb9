"""Spectrum: singular values, energy ratios and effective rank (003 定义 11.25) of attention matrices.

The SVD (``svd-of-attention-matrix``), the effective rank's definition (``definition-11-25-effective-rank``),
推论 11.8 and its reading (``corollary-11-8-energy-bound``, ``corollary-11-8-small-k-captures-most-energy``,
``summary-spectral-decay-proved``), the recomputable columns of 表 11.3.1 (``table-11-3-1-spectral-features``),
the effective-rank readings of bidirectional low rank (``bidirectional-attention-low-rank``,
``study-note-encoder-low-rank``, ``study-note-dominant-singular-values``), the study note's spectral
claims (``study-note-most-singular-values-near-zero``, ``study-note-similar-patterns-correlated``,
``study-note-diagonal-sparsity-lowers-rank``), the SVD of the logits (``reader-logits-svd-rotation``)
and Eckart–Young for LoRA (``table-11-3-3-lora-row``). Effective ranks of stored float64 matrices are
recomputed at 30 digits (:func:`attention_claims.maths.mp_matrix_effective_rank`). Tolerances are
stated next to each comparison.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import example, given, note, target
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attention_claims._cache import disk_memo_ints
from attention_claims.engine import (
    attention_batch,
    effective_ranks,
    mean_row_cosines,
    near_zero_fractions,
    seeded_gaussian_batch,
    singular_values_batch,
)
from attention_claims.engine import suspects as batched_suspects
from attention_claims.maths import (
    arb_matrix,
    arb_row_cosines,
    arb_softmax_attention,
    attention_matrix,
    bisect_predicate,
    certified_count_above_relative,
    decimal_fraction,
    eckart_young_factors,
    effective_rank,
    exact_effective_rank,
    exact_frobenius_sq,
    exact_rank,
    exact_softmax_rank,
    fmpq_matrix,
    fraction_to_mpf,
    hurwitz_zeta,
    knee_spectrum_energy,
    mp_matrix_effective_rank,
    mp_singular_values,
    precision,
    row_cosines,
    singular_values,
    softmax_attention,
    to_arb,
    top_fraction_energy,
)
from attention_claims.maths.rounding import (
    logit_magnitude_bound,
    row_stochastic_sigma1_bounds,
    softmax_tolerance,
)
from attention_claims.testkit import (
    BATCH,
    batched_profile_only,
    claim_params,
    gaussian_batch_spec,
    gaussian_qk,
    log_uniform,
    one_torch_thread,
    profiles,
    qk_pairs,
    reading_params,
    refute,
    refute_deferred,
    search_seeds,
    seeded_gaussian_qk,
)
from attention_claims.testkit.failure_profiles import (
    RANK_REL_TOL,
    gaussian_qk_draws,
    gaussian_softmax_ranks,
    record_profile,
)

pytestmark = pytest.mark.usefixtures(one_torch_thread.__name__)


def _claims_scales(ids):
    out = []
    for cid in ids:
        for reading, rng in (("effective-rank", (-2.0, 0.0)), ("effective-rank-sharp", (0.0, 2.0))):
            out.append(pytest.param(cid, rng, reading, marks=pytest.mark.claim(cid, reading=reading),
                                    id=f"{cid}-{reading}"))
    return out


# -- failure profiles at the documents' sizes (docs/verdicts.md, "Failure profile") -----------------
# 表 11.3.1's Base row: N = 512, hidden 768 in 12 heads, so d = 64 per head; 30 seeded Gaussian draws.
DOC_N, DOC_D = 512, 64
PROFILE_TRIALS, PROFILE_SEED = 30, 0
DOC_SETTING = f"N={DOC_N}, d={DOC_D}, logit scale 1 (1/sqrt d)"
#: The decay exponents at which 推论 11.8's every-spectrum reading is profiled (its check's range is 1.1..4).
PROFILE_ALPHAS = (Fraction(11, 10), Fraction(3, 2), Fraction(2), Fraction(3), Fraction(4))
#: Relative tolerance at which a counted singular value certifies exact rank (as in checks/test_rank.py):
#: the float64 matrix and its singular values are within about N * 1e-16 of the exact ones (Weyl).
CERTIFIED_REL_TOL = 1e-9


@functools.cache
@disk_memo_ints
def gaussian_attention_spectra(N: int, d: int, trials: int, seed: int) -> tuple[int, ...]:
    """Per draw of Gaussian ``Q, K (N, d)`` (i.i.d. standard normal, ``numpy.random.default_rng(seed)``, Q
    then K, the draws of :func:`gaussian_softmax_ranks`), ``N + 1`` ints: the float64 singular values of
    ``A = softmax(QK^T / sqrt d)`` (``np.linalg.svd``, descending) and the mean pairwise row cosine of ``A``,
    each float64 bit-cast to an int64 (exact; :func:`_spectrum_draws` casts back). Flattened. Source: 003
    定义 11.24 (A), 000 "数学验证" (its SVD).

    Raises:
        ValueError: ``N``, ``d`` or ``trials`` below 1.
    """
    out: list[int] = []
    for Q, K, _ in gaussian_qk_draws(N, d, trials, seed):
        A = attention_matrix(Q, K)
        vals = np.append(np.linalg.svd(A, compute_uv=False), _mean_cosine(A)) if N > 1 else np.ones(2)
        out += [int(v) for v in np.asarray(vals, dtype=np.float64).view(np.int64)]
    return tuple(out)


def _spectrum_draws(bits: tuple[int, ...], N: int) -> list[tuple[np.ndarray, float]]:
    """``(singular values (N,), mean row cosine)`` per draw of :func:`gaussian_attention_spectra`."""
    a = np.array(bits, dtype=np.int64).view(np.float64).reshape(-1, N + 1)
    return [(row[:N].copy(), float(row[N])) for row in a]


@pytest.fixture(scope="module")
def doc_size_spectra():
    """:func:`gaussian_attention_spectra` at N = 512, d = 64, cast back; computed before Hypothesis starts."""
    return _spectrum_draws(gaussian_attention_spectra(DOC_N, DOC_D, PROFILE_TRIALS, PROFILE_SEED), DOC_N)


@functools.cache
@disk_memo_ints
def sharp_effective_ranks(N: int, d: int, trials: int, seed: int, lo: float, hi: float, tau: float) -> tuple[int, ...]:
    """Per draw of Gaussian ``Q, K (N, d)`` (``numpy.random.default_rng(seed)``) and a logit scale ``c``
    log-uniform in ``[lo, hi]`` (``numpy.random.default_rng([seed, 1])``), two ints: ``floor(1000 c)`` and
    the effective rank at ``tau`` (003 定义 11.25, :func:`effective_rank`) of ``softmax(c QK^T / sqrt d)``
    (float64). Flattened.

    Raises:
        ValueError: ``N``, ``d`` or ``trials`` below 1, ``0 < lo <= hi`` violated, or ``tau`` outside (0, 1).
    """
    if min(N, d, trials) < 1 or not 0 < lo <= hi or not 0 < tau < 1:
        raise ValueError(f"bad profile parameters N={N}, d={d}, trials={trials}, lo={lo}, hi={hi}, tau={tau}")
    rng, scales = np.random.default_rng(seed), np.random.default_rng([seed, 1])
    out = []
    for _ in range(trials):
        Q, K = rng.standard_normal((N, d)), rng.standard_normal((N, d))
        c = float(math.exp(scales.uniform(math.log(lo), math.log(hi))))
        out += [int(math.floor(1000 * c)), effective_rank(np.linalg.svd(attention_matrix(Q * c, K), compute_uv=False), tau)]
    return tuple(out)


@pytest.fixture
def sharp_profile(claimed):
    """The effective-rank-sharp profile's draws (:func:`sharp_effective_ranks`), computed before Hypothesis
    starts (the record's tau is the only input that is not fixed here)."""
    return sharp_effective_ranks(DOC_N, DOC_D, PROFILE_TRIALS, PROFILE_SEED, 1.0, 100.0, float(claimed.eval("tau")))


def _sharp_effective_rank_profile(claim_log, claimed) -> None:
    """Profile of the effective-rank-sharp reading (effective rank at tau <= effective_bound for logit
    scales 1..100) at N = 512, d = 64, the logit scale drawn log-uniformly from the reading's range."""
    tau = float(claimed.eval("tau"))
    draws = sharp_effective_ranks(DOC_N, DOC_D, PROFILE_TRIALS, PROFILE_SEED, 1.0, 100.0, tau)
    scales, ers = [c / 1000 for c in draws[0::2]], draws[1::2]
    bound = claimed.eval("effective_bound", exact=True, N=DOC_N, d=DOC_D)
    record_profile(claim_log, [er > bound for er in ers], setting=f"N={DOC_N}, d={DOC_D}, logit scale 1..100",
                   summary=f"effective rank (tau = {tau}) of float64 softmax(c QK^T/sqrt d), Gaussian Q, K (numpy "
                           f"default_rng({PROFILE_SEED})), c log-uniform in 1..100 ({min(scales):.3g}..{max(scales):.3g}): "
                           f"{min(ers)}..{max(ers)} against {claimed.text('effective_bound')} = {bound}; the checks' "
                           f"counterexamples come from their own domain, small N (8..24) with N >= 4d and sharp logits")


@functools.cache
@disk_memo_ints
def locality_ranks(N: int, d: int, trials: int, seed: int, beta: int, rel_tol: float) -> tuple[int, ...]:
    """Per draw of Gaussian ``Q, K (N, d)`` (``numpy.random.default_rng(seed)``, the draws of
    :func:`gaussian_softmax_ranks`), the rank of ``softmax(QK^T / sqrt d - beta |i - j|)`` (float64, row
    by row) counted above ``rel_tol * sigma_1``: the content logits with a locality bias (000 "长距离依赖
    的稀疏性"; ALiBi-style, Press et al. 2022).

    Raises:
        ValueError: ``N``, ``d`` or ``trials`` below 1, ``beta < 0``, or ``rel_tol`` not in (0, 1).
    """
    if min(N, d, trials) < 1 or beta < 0 or not 0 < rel_tol < 1:
        raise ValueError(f"bad parameters N={N}, d={d}, trials={trials}, beta={beta}, rel_tol={rel_tol}")
    out = []
    for Q, K, _ in gaussian_qk_draws(N, d, trials, seed):
        z = torch.tensor(_locality_logits(Q @ K.T / math.sqrt(d), beta))
        s = np.linalg.svd(torch.softmax(z, -1).numpy(), compute_uv=False)
        out.append(int((s > rel_tol * s[0]).sum()))
    return tuple(out)


@pytest.fixture(scope="module")
def doc_size_locality_ranks():
    """Certified ranks (above ``CERTIFIED_REL_TOL``) at N = 512, d = 64 without (beta = 0) and with
    (beta = 1) the locality bias."""
    return (gaussian_softmax_ranks(DOC_N, DOC_D, PROFILE_TRIALS, PROFILE_SEED, CERTIFIED_REL_TOL),
            locality_ranks(DOC_N, DOC_D, PROFILE_TRIALS, PROFILE_SEED, 1, CERTIFIED_REL_TOL))


def _energy_ratios(s: np.ndarray) -> np.ndarray:
    """Top-k energy ratios ``sum_{i<=k} s_i^2 / sum_i s_i^2`` for k = 1..N (float64)."""
    e = np.asarray(s, dtype=np.float64) ** 2
    return np.cumsum(e) / e.sum()


# -- 070 and 090: row similarity and near-zero singular values, by logit scale ---------------------
def _mean_cosine(A):
    C = row_cosines(A)
    n = A.shape[0]
    return float((C.sum() - n) / (n * n - n))


def _scale_boundary(stat, Q1, K, lo, hi, holds) -> str:
    """Bisection on the logit scale c (Q = c Q1) for where ``holds(stat(c))`` stops being true."""
    try:
        c = bisect_predicate(lambda c: not holds(stat(attention_matrix(Q1 * c, K))), lo, hi, rtol=1e-4)
    except ValueError:
        return f"no single crossing between logit scales {lo:g} and {hi:g} for this draw"
    return f"for this draw the reading stops holding at logit scale {c:.4g} (bisection)"


def _near_zero_fraction(A, rel):
    s = np.linalg.svd(A, compute_uv=False)
    return float(np.mean(s < rel * s[0]))


#: Bits of the arb enclosures that certify the row-cosine and near-zero refutations (the logits of float64
#: inputs are enclosed to about 2^-190 relative; the certificates need far less).
CERT_BITS = 200


def _certify_mean_cosine(Q, K, thr) -> tuple[bool, str]:
    """Whether the exact ``softmax(Q K^T / sqrt d)`` of the float64 ``Q (N, d)``, ``K (N, d)`` has mean pairwise
    row cosine below ``thr`` (its words as written, :func:`decimal_fraction`), decided by the arb enclosure of
    the mean (:func:`arb_row_cosines` of :func:`arb_softmax_attention`, ``CERT_BITS`` bits), and the
    certificate's words."""
    with precision(CERT_BITS):
        C = arb_row_cosines(arb_softmax_attention(Q, K))
        n = len(C)
        mean = sum((C[i][j] for i in range(n) for j in range(n) if i != j), to_arb(0)) / (n * n - n)
        ok = bool(mean < to_arb(decimal_fraction(thr)))
        return ok, (f"arb ({CERT_BITS} bits) from the exact float64 Q, K: the mean pairwise row cosine of the exact "
                    f"softmax(QK^T/sqrt d) lies in {mean.str(12, radius=False)} +/- {float(mean.rad()):.1e}, "
                    f"{'below' if ok else 'not certainly below'} {thr}")


def _certify_near_zero(Q, K, A, rel, frac) -> tuple[bool, str]:
    """Whether fewer than ``frac`` of the singular values of the exact ``softmax(Q K^T / sqrt d)`` (float64
    ``Q (N, d)``, ``K (N, d)``; stored as ``A (N, N)``) lie below ``rel`` times the largest (both as written,
    :func:`decimal_fraction`), decided by :func:`certified_count_above_relative` (Weyl's inequality from the
    arb enclosure's distance to ``A``, an exact rational count on ``A``), and the certificate's words."""
    r, f = decimal_fraction(rel), decimal_fraction(frac)
    with precision(CERT_BITS):
        m, T = certified_count_above_relative(arb_softmax_attention(Q, K), A, r)
    n = min(A.shape)
    ok = Fraction(n - m, n) < f
    return ok, (f"exact rational inertia count (python-flint) on the stored float64 matrix: {m} of {n} singular "
                f"values exceed {float(T):.6g} = {rel} (sigma_1 + delta) + delta, delta >= |A_exact - A|_F from the "
                f"{CERT_BITS}-bit arb enclosure of softmax(QK^T/sqrt d) (Weyl), so at most {n - m}/{n} of the exact "
                f"matrix's singular values lie below {rel} sigma_1, {'below' if ok else 'not certainly below'} {frac}")


# -- 080: diagonal concentration and rank ---------------------------------------------------------
def _locality_logits(C: np.ndarray, beta) -> np.ndarray:
    N = C.shape[0]
    i = np.arange(N)
    return C - beta * np.abs(i[:, None] - i[None, :])


def _anchored_bound(reading, claimed, alpha, k):
    a = fraction_to_mpf(alpha)
    if reading == "anchored-sharp-bound":
        return claimed.eval("anchored_bound", alpha=a, k=mpmath.mpf(k)), claimed.text("anchored_bound")
    cp = claimed.eval("c_prime_anchored", alpha=a)
    return 1 - cp / mpmath.mpf(k) ** (a - 1), f"1 - ({claimed.text('c_prime_anchored')}) / k^(alpha-1)"


@st.composite
def anchored_cases(draw):
    alpha = 1 + Fraction(draw(st.one_of(st.integers(1, 100), st.integers(1, 3000)), label="1000 (alpha - 1)"), 1000)
    k = draw(st.one_of(st.sampled_from([1, 10, 100, 1000, 10**4]), st.integers(1, 10**4)), label="k")
    j = draw(st.one_of(st.just(k), st.integers(1, 10**4)), label="knee j")
    N = draw(st.one_of(st.none(), st.integers(max(j, k), 10**6)), label="N (None: infinite)")
    return alpha, k, j, N


# (model, N, d, theoretical max rank, effective rank, top fraction, energy), transcribed from 表 11.3.1.
TABLE_11_3_1 = [
    ("Base (12层)", 512, 768, 768, 150, Fraction(10, 100), Fraction(85, 100)),
    ("Large (24层)", 1024, 1024, 1024, 200, Fraction(10, 100), Fraction(90, 100)),
    ("XL (48层)", 2048, 2048, 2048, 300, Fraction(8, 100), Fraction(88, 100)),
]


def _rows(claimed):
    """The table rows with the values the record claims (``[claimed]``) substituted; a row's
    ``N`` and ``d`` may be overridden too (``n_<row>``, ``d_<row>``: the planted variants use it)."""
    keys = ("base", "large", "xl")
    return [(m, int(claimed.get(f"n_{k}", N)), int(claimed.get(f"d_{k}", d)), int(claimed.eval(f"max_rank_{k}")),
             int(claimed.eval(f"eff_rank_{k}")), frac, e)
            for k, (m, N, d, _mr, _er, frac, e) in zip(keys, TABLE_11_3_1, strict=True)]


def witness_spectrum(N: int, k: int, energy: Fraction, r: int, tau: Fraction) -> np.ndarray | None:
    """A non-increasing spectrum (singular values, descending) of length ``N`` whose top ``k``
    squared values carry ``energy`` of the total and whose effective rank at ``tau`` is ``r``
    (定义 11.25), or ``None`` when no spectrum can: ``energy >= tau`` forces eff-rank <= k,
    ``energy < tau`` forces eff-rank > k.
    """
    if not (1 <= k < N and 1 <= r <= N):
        return None
    if energy >= tau or r <= k:
        return None  # energy >= tau forces eff-rank <= k; energy < tau forces eff-rank > k
    head = [energy / k] * k
    step = (tau - energy) / (r - k) * (1 + Fraction(1, 2 * (r - k)))  # reaches tau at r, not before
    mid = [step] * (r - k)
    rest = 1 - energy - step * (r - k)
    tail = [rest / (N - r)] * (N - r) if N > r else []
    energies = head + mid + tail
    if rest < 0 or any(b > a for a, b in zip(energies, energies[1:], strict=False)):
        return None
    return np.sqrt(np.array([float(e) for e in energies]))


@pytest.mark.parametrize("cid,scale_exp,reading", _claims_scales(["bidirectional-attention-low-rank", "study-note-encoder-low-rank", "study-note-dominant-singular-values"]))
@given(data=st.data())
# data=None (no draws): N = 16, d = N/4 = 4 (seed 0) at the top of the reading's scale range, where the effective
# rank is largest (3 to 5 at logit scale 1): a bound a few times too small (N/8) shows whatever the draws (the
# planted falsehood dominant-effective-bound-n-over-8 held under --hypothesis-seed=14, which drew no scale near 1)
@example(data=None)
@profiles.scaled(0.25)
def test_bidirectional_effective_rank(cid, scale_exp, reading, data, claim_log, claimed, sharp_profile):
    if reading == "effective-rank-sharp":
        _sharp_effective_rank_profile(claim_log, claimed)
    if data is None:  # the @example above
        s = float(10.0 ** scale_exp[1])
        Q, K = seeded_gaussian_qk(16, 4, s, 0)
    else:
        Q, K, s = data.draw(gaussian_qk(scale_exp=scale_exp), label="Q, K, logit scale")
    N, d = Q.shape
    A = attention_matrix(Q, K)
    tau = float(claimed.eval("tau"))
    er = effective_rank(np.linalg.svd(A, compute_uv=False), tau)
    bound = claimed.eval("effective_bound", exact=True, N=N, d=d)
    claim_log.example(N=N, d=d, logit_scale=s, effective_rank=er)
    target(er - float(bound), label="effective rank - bound")
    if er > bound:
        def certify():
            er_mp = mp_matrix_effective_rank(A, tau)

            def fails(c):
                return effective_rank(np.linalg.svd(attention_matrix(Q / s * c, K), compute_uv=False), tau) > bound

            try:
                where = f"for this draw the bound fails from logit scale {bisect_predicate(fails, 1e-2, s, rtol=1e-3):.4g} (bisection)"
            except ValueError:
                where = "the effective rank is not monotone in the logit scale for this draw"
            refute(f"effective rank (tau = {tau}) {er} > {claimed.text('effective_bound')} = {bound} (N = {N}, "
                   f"d = {d}, scale {s:.3g})", example={"N": N, "d": d, "scale": s, "Q": Q, "K": K},
                   certified=er_mp > bound, certificate=f"30-digit eigenvalues of A^T A give effective rank {er_mp}",
                   boundary=where, certificate_strength="recomputed" if er_mp > bound else None)

        refute_deferred(f"effective rank {er} > {bound}", certify=certify)


@pytest.mark.parametrize("cid", claim_params(["bidirectional-attention-low-rank", "study-note-encoder-low-rank", "study-note-dominant-singular-values"], "effective-rank-sharp"))
def test_bidirectional_effective_rank_sharp_search(cid, claim_log, claimed):
    """A deterministic search (small N, sharp logits) complementing the Hypothesis property above."""
    _sharp_effective_rank_profile(claim_log, claimed)
    tau = float(claimed.eval("tau"))

    def too_high(Q, K):
        N, d = Q.shape
        er = effective_rank(np.linalg.svd(attention_matrix(Q, K), compute_uv=False), tau)
        return er > claimed.eval("effective_bound", exact=True, N=N, d=d)

    hit = search_seeds([(N, d, s) for N in (8, 12) for d in (1, 2) for s in (10.0, 100.0)], too_high)
    claim_log.note("Deterministic search: N in {8, 12}, d in {1, 2}, logit scale in {10, 100}, seeds 0..63.")
    if hit is not None:
        N, d, s, seed, Q, K = hit
        er_mp = mp_matrix_effective_rank(attention_matrix(Q, K), tau)
        bound = claimed.eval("effective_bound", exact=True, N=N, d=d)
        claim_log.example(N=N, d=d, logit_scale=s, effective_rank=er_mp)
        refute(f"effective rank (tau = {tau}) {er_mp} > {claimed.text('effective_bound')} = {bound} (N = {N}, d = {d}, "
               f"logit scale {s:g}, seed {seed})", example={"N": N, "d": d, "scale": s, "seed": seed, "Q": Q, "K": K},
               certified=er_mp > bound, certificate="30-digit eigenvalues of A^T A (mpmath)",
               boundary="found at the sharp end of the range (logit scale >= 10, small N)",
               certificate_strength="recomputed" if er_mp > bound else None)


# -- reader: SVD of the logits -----------------------------------------------------------------
@pytest.mark.claim("reader-logits-svd-rotation", reading="cpu-float64")
@given(data=st.data(), N=st.integers(1, 8), D=st.integers(1, 8), d=st.integers(1, 8))
# data=None (no draws): X = I, W_q = I, W_k = diag(-1, 1): W_q W_k^T is a reflection (det -1), where every SVD has
# det U det V = -1 and a relation that admits rotations only shows whatever the draws (the planted falsehood
# svd-rotation-only held under --hypothesis-seed=5: a non-singular product needs d >= D and a negative determinant)
@example(data=None, N=2, D=2, d=2)
def test_logits_svd(data, N, D, d, claim_log, claimed):
    """The full float64 SVD ``U Sigma V^T`` of ``W_q W_k^T`` (``D x D``) is orthogonal and rebuilds the logits
    ``X W_q W_k^T X^T`` (``N x N``), and the record's ``claimed.orientation``, a relation in ``det_u`` and ``det_v``
    (each +-1), holds for some SVD of the exact product.

    An SVD is unique only up to flipping a left and right singular pair together (both determinants change sign)
    and, when ``W_q W_k^T`` is singular, a null-space column alone. So for a non-singular product every SVD has
    ``det U det V = sign det(W_q W_k^T)`` (``det M = det U prod sigma_i det V``), and the sign pairs an SVD can have
    are ``(1, s), (-1, -s)``; for a singular one all four. The relation is read on the computed SVD's signs first;
    if it fails there, on those pairs, with ``det(W_q W_k^T)`` exact (python-flint ``fmpq_mat`` of the float64
    entries' exact values): a relation no pair satisfies is refuted with that exact determinant as certificate.
    """
    el = st.floats(-10, 10, allow_subnormal=False)
    if data is None:  # the @example above: a reflection
        X, Wq, Wk = np.eye(N, D), np.eye(D, d), np.eye(D, d)
        Wk[0, 0] = -1.0
    else:
        X = data.draw(hnp.arrays(np.float64, (N, D), elements=el), label="X")
        Wq = data.draw(hnp.arrays(np.float64, (D, d), elements=el), label="W_q")
        Wk = data.draw(hnp.arrays(np.float64, (D, d), elements=el), label="W_k")
    M = Wq @ Wk.T
    U, s, Vt = np.linalg.svd(M, full_matrices=True)
    eye = np.eye(D)
    orth = max(np.abs(U.T @ U - eye).max(), np.abs(Vt @ Vt.T - eye).max())
    det_u, det_v = float(np.linalg.det(U)), float(np.linalg.det(Vt))
    dets = (abs(abs(det_u) - 1), abs(abs(det_v) - 1))
    logits = X @ Wq @ Wk.T @ X.T
    rebuilt = X @ U @ np.diag(s) @ Vt @ X.T
    scale = max(np.abs(X).max() ** 2 * max(np.abs(M).max(), 1e-300) * D * D, 1e-300)
    rel = float(np.abs(rebuilt - logits).max() / scale)
    claim_log.example(N=N, D=D, d=d, orthogonality_error=orth)
    # tolerances: 1e-10 for orthogonality and |det| (float64 SVD is backward stable, errors ~ D eps)
    if orth > 1e-10 or max(dets) > 1e-10 or rel > 1e-10:
        with mpmath.workdps(40):
            Um, sm, Vm = mpmath.svd_r(mpmath.matrix(M.tolist()))
            orth_mp = mpmath.mnorm(Um.T * Um - mpmath.eye(D), 1)
        refute(f"SVD of W_q W_k^T: orthogonality error {orth:.3e}, |det| error {max(dets):.3e}, rebuild error {rel:.3e}",
               example={"X": X, "W_q": Wq, "W_k": Wk}, certified=bool(orth_mp > mpmath.mpf("1e-10")),
               certificate=f"40-digit mpmath SVD: orthogonality error {mpmath.nstr(orth_mp, 5)}",
               certificate_strength="recomputed" if bool(orth_mp > mpmath.mpf('1e-10')) else None)
    computed = (1 if det_u > 0 else -1, 1 if det_v > 0 else -1)  # |det| within 1e-10 of 1 (checked above)
    claim_log.track("det U det V of the computed SVD", computed[0] * computed[1])
    # the sign pairs any SVD of the exact W_q W_k^T can have (the computed SVD is of the rounded product, whose
    # determinant's sign can differ from the exact one's when the product is nearly singular: a review found
    # 6,668 of 20,000 such constructed draws), so the relation is read on the exact pairs only
    # Besides the drawn product, the 1 x 1 products +1 and -1 (D = d = 1, both signs of a non-singular product),
    # so that a relation excluding one sign is refuted whatever the derandomized draws are (the planted
    # svd-rotation-only falsehood was missed by 30 draws once this function's source, hence its seed, changed).
    one = np.ones((1, 1))
    for wq, wk in ((Wq, Wk), (one, one), (one, -one)):
        det_m = (fmpq_matrix(wq, "W_q") * fmpq_matrix(wk, "W_k").transpose()).det()  # exact rational
        sign = (det_m > 0) - (det_m < 0)
        pairs = [(1, sign), (-1, -sign)] if sign else [(1, 1), (1, -1), (-1, 1), (-1, -1)]
        if not any(claimed.eval("orientation", exact=True, det_u=a, det_v=b) for a, b in pairs):
            refute(f"no SVD of W_q W_k^T (D = {wq.shape[0]}, d = {wq.shape[1]}) has {claimed.text('orientation')}: "
                   f"its sign pairs (det U, det V) are {pairs}", example={"W_q": wq, "W_k": wk}, certified=True,
                   certificate=f"exact rational det(W_q W_k^T) = {int(det_m.p) / int(det_m.q):.6g} "
                   f"(python-flint fmpq_mat of the float64 entries): every SVD has det U det V = {sign}"
                   if sign else "exact rational det(W_q W_k^T) = 0 (python-flint fmpq_mat): every sign pair occurs",
                   certificate_strength="proved")
    claim_log.note("Full SVD (float64): U, V orthogonal (|det| within 1e-10 of 1) and X U Sigma V^T X^T = "
                   f"X W_q W_k^T X^T within 1e-10 relative; {claimed.text('orientation')} held for some SVD of the "
                   "exact W_q W_k^T on every draw (its sign pairs: det U det V = sign det(W_q W_k^T), exact "
                   "rational, when that is non-zero; every pair when it is 0).")


@pytest.mark.parametrize("scale_exp,reading", [
    pytest.param((-3.0, -1.0), "small-logit-scale", marks=pytest.mark.claim("study-note-similar-patterns-correlated", reading="small-logit-scale"),
                 id="small-logit-scale"),
    pytest.param((0.0, 2.0), "standard-logit-scale", marks=pytest.mark.claim("study-note-similar-patterns-correlated", reading="standard-logit-scale"),
                 id="standard-logit-scale"),
])
@given(N=st.integers(4, 32), d=st.integers(1, 8), seed=st.integers(0, 2**32 - 1), data=st.data())
# the top of the reading's scale range (data=None: no draw), at the largest N and d drawn: the least similar rows
# the reading admits, where a threshold too high (0.999) shows whatever the draws (the planted falsehood
# rows-similar-cosine-0-999 held under --hypothesis-seed=1 and 3, which drew no scale near 0.1)
@example(N=32, d=8, seed=0, data=None)
@profiles.scaled(0.25)
def test_rows_similar(scale_exp, reading, N, d, seed, data, claim_log, claimed, standard_scale_profile):
    s = float(10.0 ** scale_exp[1]) if data is None else data.draw(log_uniform(*scale_exp), label="logit scale")
    Q1, K = seeded_gaussian_qk(N, d, 1.0, seed)
    thr = float(claimed.eval("cosine_threshold"))
    mc = _mean_cosine(attention_matrix(Q1 * s, K))
    claim_log.example(N=N, d=d, logit_scale=s, mean_cosine=mc)
    target(-mc, label="-mean cosine")
    if mc < thr:
        def certify():
            ok, why = _certify_mean_cosine(Q1 * s, K, claimed.eval("cosine_threshold", exact=True))
            refute(f"mean pairwise row cosine {mc:.4f} < {thr} at logit scale {s:.3g} (N = {N}, d = {d})",
                   example={"N": N, "d": d, "seed": seed, "scale": s}, certified=ok, certificate=why,
                   boundary=_scale_boundary(_mean_cosine, Q1, K, 1e-4, s, lambda v: v >= thr),
                   certificate_strength="proved" if ok else None)

        refute_deferred(f"mean cosine {mc:.4f} < {thr}", certify=certify)


@pytest.mark.parametrize("scale_exp,reading", [
    pytest.param((-3.0, -1.0), "small-logit-scale", marks=pytest.mark.claim("study-note-most-singular-values-near-zero", reading="small-logit-scale"),
                 id="small-logit-scale"),
    pytest.param((0.0, 1.0), "standard-logit-scale", marks=pytest.mark.claim("study-note-most-singular-values-near-zero", reading="standard-logit-scale"),
                 id="standard-logit-scale"),
])
@given(N=st.integers(8, 32), seed=st.integers(0, 2**32 - 1), data=st.data())
@profiles.scaled(0.25)
def test_singular_values_near_zero(scale_exp, reading, N, seed, data, claim_log, claimed, standard_scale_profile):
    d = data.draw(st.integers(1, N // 4), label="d")
    s = data.draw(log_uniform(*scale_exp), label="logit scale")
    Q1, K = seeded_gaussian_qk(N, d, 1.0, seed)
    rel, frac = float(claimed.eval("relative_threshold")), float(claimed.eval("fraction"))
    stat = lambda A: _near_zero_fraction(A, rel)  # noqa: E731
    f = stat(attention_matrix(Q1 * s, K))
    claim_log.example(N=N, d=d, logit_scale=s, near_zero_fraction=f)
    target(-f, label="-fraction near 0")
    if f < frac:
        def certify():
            ok, why = _certify_near_zero(Q1 * s, K, attention_matrix(Q1 * s, K), claimed.eval("relative_threshold", exact=True),
                                         claimed.eval("fraction", exact=True))
            refute(f"only {f:.2f} of the singular values are below {rel} sigma_1 at logit scale {s:.3g} (N = {N}, "
                   f"d = {d})", example={"N": N, "d": d, "seed": seed, "scale": s}, certified=ok, certificate=why,
                   boundary=_scale_boundary(stat, Q1, K, 1e-4, s, lambda v: v >= frac),
                   certificate_strength="proved" if ok else None)

        refute_deferred(f"fraction {f:.2f} < {frac}", certify=certify)


@pytest.mark.claim("study-note-diagonal-sparsity-lowers-rank", reading="exact")
@given(C=st.integers(2, 6).flatmap(lambda n: hnp.arrays(np.int64, (n, n), elements=st.integers(-1, 1))),
       b1=st.integers(0, 2), db=st.integers(1, 2))
@profiles.scaled(0.25)
def test_diagonal_concentration_exact(C, b1, db, claim_log, doc_size_locality_ranks):
    r0, r1 = doc_size_locality_ranks
    # a rank counted above CERTIFIED_REL_TOL sigma_1 is a lower bound of the exact rank: a draw counted N at
    # beta = 0 is certified full rank, so no beta can raise it; any other draw fails when its count rises
    record_profile(claim_log, [a < DOC_N and b > a for a, b in zip(r0, r1, strict=True)],
                   setting=f"N={DOC_N}, d={DOC_D}, Gaussian content logits, beta 0 -> 1",
                   summary=f"rank of softmax(QK^T/sqrt d - beta |i - j|) counted above {CERTIFIED_REL_TOL:g} sigma_1 "
                           f"(float64; a certified lower bound of the exact rank), Gaussian Q, K (numpy "
                           f"default_rng({PROFILE_SEED})): {min(r0)}..{max(r0)} at beta = 0, {min(r1)}..{max(r1)} at "
                           f"beta = 1; exact rank N before and after, so the rank neither rises nor falls; the "
                           f"certified counterexample needs content logits whose softmax is rank-deficient (equal "
                           f"or constant-shifted rows of C, e.g. C = 0: uniform attention of rank 1)")
    r1 = exact_softmax_rank(_locality_logits(C, b1))  # integer logits; t = e (scale 1)
    r2 = exact_softmax_rank(_locality_logits(C, b1 + db))
    claim_log.example(N=C.shape[0], rank_change=r2 - r1)
    if r2 > r1:
        refute(f"concentrating attention near the diagonal (locality strength {b1} -> {b1 + db}) raised the exact "
               f"rank from {r1} to {r2} (N = {C.shape[0]})", example={"C": C, "beta_1": b1, "beta_2": b1 + db},
               certified=True, certificate="ranks over Q(e) (Bareiss on integer polynomials; e transcendental)",
               certificate_strength="proved")


@pytest.mark.claim("study-note-diagonal-sparsity-lowers-rank", reading="effective-rank")
@given(N=st.integers(4, 8), d=st.integers(1, 3), s=log_uniform(-2, 0), b1=st.floats(0, 2), db=st.floats(0.5, 4),
       seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.125)
def test_diagonal_concentration_effective_rank(N, d, s, b1, db, seed, claim_log):
    Q, K = seeded_gaussian_qk(N, d, s, seed)
    C = Q @ K.T / math.sqrt(d)

    def er(beta):
        z = torch.tensor(_locality_logits(C, beta))
        return effective_rank(np.linalg.svd(torch.softmax(z, -1).numpy(), compute_uv=False), 0.9)

    e1, e2 = er(b1), er(b1 + db)
    claim_log.example(N=N, effective_rank_change=e2 - e1)
    target(float(e2 - e1), label="effective rank increase")
    if e2 > e1:
        refute(f"stronger locality (beta {b1:.3g} -> {b1 + db:.3g}) raised the effective rank from {e1} to {e2} "
               f"(N = {N})", example={"N": N, "d": d, "scale": s, "seed": seed, "beta_1": b1, "beta_2": b1 + db},
               certified=False, certificate="float64 SVD")


# -- SVD -----------------------------------------------------------------------------------------
@pytest.mark.claim("svd-of-attention-matrix", reading="exact")
@given(qk=qk_pairs(n=(1, 6), d=(1, 4), scale_exp=(-2.0, 2.0)))
@profiles.scaled(0.5)
def test_svd_exact(qk, claim_log):
    Q, K, _ = qk
    A = softmax_attention(Q, K).numpy()
    N = A.shape[0]
    with mpmath.workdps(40):
        M = mpmath.matrix(A.tolist())
        U, S, Vt = mpmath.svd_r(M)
        I_N = mpmath.eye(N)
        errs = {"U^T U - I": mpmath.mnorm(U.T * U - I_N, 1), "V^T V - I": mpmath.mnorm(Vt * Vt.T - I_N, 1),
                "U S V^T - A": mpmath.mnorm(U * mpmath.diag(S) * Vt - M, 1)}
        s = [S[i] for i in range(N)]
    bad = {k: v for k, v in errs.items() if v > mpmath.mpf(10) ** -30}
    claim_log.example(N=N)
    if bad or any(x < 0 for x in s) or any(b > a for a, b in zip(s, s[1:], strict=False)):
        refute(f"40-digit SVD fails: {bad or 'singular values not sorted / negative'}", example={"A": A},
               certified=True, certificate="mpmath svd_r at 40 digits", certificate_strength="recomputed")


@pytest.mark.parametrize("device,dtype,reading", reading_params("svd-of-attention-matrix"))
@given(N=st.integers(1, 64), d=st.integers(1, 6), scale=log_uniform(-2, 2), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.5)
def test_svd_dtypes(device, dtype, reading, N, d, scale, seed, claim_log):
    rng = np.random.default_rng(seed)
    A = softmax_attention(rng.uniform(-1, 1, (N, d)) * scale, rng.uniform(-1, 1, (N, d)), dtype=dtype, device=device)
    U, S, Vh = torch.linalg.svd(A)
    eps = float(torch.finfo(A.dtype).eps)
    eye = torch.eye(N, dtype=A.dtype, device=A.device)
    # LAPACK's own acceptance test of its SVD drivers (TESTING/EIG/xDRVBD, ratios 1-3, 1-norms, ulp = eps of the
    # dtype) with its threshold THRESH = 35 (TESTING/svd.in): the routine's stated accuracy, not a chosen factor;
    # the ratios are evaluated in float64 from the dtype's factors (their own rounding ~N eps64, negligible); a
    # failure is certified by the same ratios in 200-bit arb from the factors' exact values (_certify_svd_ratios)
    U64, S64, Vh64, A64 = (x.to("cpu", torch.float64) for x in (U, S, Vh, A))
    eye = torch.eye(N, dtype=torch.float64)
    def one(X):  # the 1-norm: the largest column sum of |X|
        return float(X.abs().sum(dim=0).max())

    e_u = one(U64.T @ U64 - eye) / (N * eps)
    e_v = one(Vh64 @ Vh64.T - eye) / (N * eps)
    e_r = one((U64 * S64) @ Vh64 - A64) / max(one(A64), 2.0**-1074) / (N * eps)
    worst = max(e_u, e_v, e_r) / 35
    claim_log.example(N=N, error_over_tolerance=worst)
    if worst > 1 or bool((S < 0).any()) or bool((S[1:] > S[:-1]).any()):
        def certify():
            ok, why = _certify_svd_ratios(U64.numpy(), S64.numpy(), Vh64.numpy(), A64.numpy(), eps)
            refute(f"{dtype}/{device} SVD: LAPACK's test ratios (orthogonality of U, V; reconstruction) {e_u:.3g}, "
                   f"{e_v:.3g}, {e_r:.3g} exceed its threshold 35 (TESTING/svd.in), or the singular values are "
                   f"negative or unsorted", example={"N": N, "d": d, "scale": scale, "seed": seed},
                   certified=ok, certificate=why, certificate_strength="proved" if ok else None)

        refute_deferred(f"{dtype}/{device} SVD ratios {e_u:.3g}, {e_v:.3g}, {e_r:.3g} over 35", certify=certify)


def _certify_svd_ratios(U, S, Vh, A, eps: float, thresh: int = 35) -> tuple[bool, str]:
    """Whether LAPACK's xDRVBD test ratios of the computed SVD ``U (N, N)``, ``S (N,)``, ``Vh (N, N)`` of the
    stored ``A (N, N)`` (all the dtype's values, held exactly in float64) exceed ``thresh``, or ``S`` is negative
    or unsorted, recomputed from those exact values in ``CERT_BITS``-bit arb (python-flint): ``|I - U^T U|_1 /
    (N eps)``, ``|I - Vh Vh^T|_1 / (N eps)``, ``|A - U S Vh|_1 / (|A|_1 N eps)`` (TESTING/EIG/xDRVBD, 1-norms,
    ``eps`` the dtype's, as the check). A ratio counts as above ``thresh`` only when its enclosure's lower end is;
    returns that and the certificate's words (each ratio's enclosure)."""
    from flint import arb_mat

    n = A.shape[0]
    if (S < 0).any() or (S[1:] > S[:-1]).any():
        return True, f"exact comparison of the stored singular values (float values are exact): {S.tolist()}"
    with precision(CERT_BITS):
        Ua, Va, Aa = arb_matrix(U, "U"), arb_matrix(Vh, "Vh"), arb_matrix(A, "A")
        Sa = arb_mat(n, n, [to_arb(float(S[i])) if i == j else to_arb(0) for i in range(n) for j in range(n)])
        eye = arb_mat(n, n, [to_arb(1) if i == j else to_arb(0) for i in range(n) for j in range(n)])

        def one(X):  # the 1-norm, as an enclosure: [max_j lower col sum, max_j upper col sum]
            sums = [sum((abs(X[i, j]) for i in range(X.nrows())), to_arb(0)) for j in range(X.ncols())]
            return max(c.lower() for c in sums), max(c.upper() for c in sums)

        unit = to_arb(n) * to_arb(eps)
        (ul, uu), (vl, vu) = one(Ua.transpose() * Ua - eye), one(Va * Va.transpose() - eye)
        (rl, ru), (al, au) = one(Ua * Sa * Va - Aa), one(Aa)
        lows = [ul / unit, vl / unit, rl / au / unit]
        highs = [uu / unit, vu / unit, ru / al / unit if al > 0 else None]
        ok = any(bool(x > thresh) for x in lows)
        words = ", ".join(f"[{lo.lower().str(6, radius=False)}, {'inf' if hi is None else hi.upper().str(6, radius=False)}]"
                          for lo, hi in zip(lows, highs, strict=True))
        return ok, (f"arb ({CERT_BITS} bits) from the factors' exact values: LAPACK's ratios (U, V, reconstruction) lie "
                    f"in {words}, {'one certainly above' if ok else 'none certainly above'} THRESH = {thresh}")


# -- 定义 11.25 ----------------------------------------------------------------------------------
@pytest.mark.claim("definition-11-25-effective-rank", reading="exact")
@given(sig=st.lists(st.integers(0, 6), min_size=1, max_size=10).filter(any),
       m=st.integers(1, 4), data=st.data())
def test_effective_rank_implements_definition(sig, m, data, claim_log, claimed):
    sig = sorted(sig, reverse=True)
    tau = Fraction(data.draw(st.integers(1, 2**m - 1), label="tau numerator"), 2**m)
    got = effective_rank(np.array(sig, dtype=np.float64), float(tau))

    def criterion(head, total, t):
        return bool(claimed.eval("criterion", exact=True, head=head, total=total, tau=t))

    want = exact_effective_rank([s * s for s in sig], tau, criterion)
    energies = [s * s for s in sig]
    tie = any(sum(energies[:k]) == tau * sum(energies) for k in range(1, len(sig) + 1))
    claim_log.example(N=len(sig), eff_rank=got)
    claim_log.track("exact ties (0/1)", int(tie))
    if got != want:
        refute(f"spectrum {sig}, tau = {tau}: attention_claims.maths.effective_rank gives {got}, the claimed criterion "
               f"'{claimed.text('criterion')}' gives {want}", example={"sigma": sig, "tau": str(tau)},
               certified=True, certificate="exact rational evaluation of the criterion; integer spectra and dyadic "
                                           "tau are exact in float64", certificate_strength="proved")


@pytest.mark.claim("definition-11-25-effective-rank", reading="implied-bounds")
@given(qk=qk_pairs(n=(1, 12), d=(1, 4), scale_exp=(-2.0, 2.0)),
       taus=st.lists(st.floats(0.01, 0.99), min_size=2, max_size=4))
def test_effective_rank_implied_bounds(qk, taus, claim_log):
    Q, K, _ = qk
    A = softmax_attention(Q, K).numpy()
    N = A.shape[0]
    s = singular_values(A)
    r = exact_rank(A)
    effs = [effective_rank(s, t) for t in sorted(taus)]
    claim_log.example(N=N, eff_rank=effs[-1], exact_rank=r)
    for t, e in zip(sorted(taus), effs, strict=True):
        if not (1 <= e <= min(r, math.ceil(t * N))):
            refute(f"eff-rank {e} at tau = {t} is outside [1, min(rank {r}, ceil(tau N) = {math.ceil(t * N)})]",
                   example={"Q": Q, "K": K, "tau": t}, certified=False)
    if any(b < a for a, b in zip(effs, effs[1:], strict=False)):
        refute(f"eff-rank decreases with tau: {effs} at {sorted(taus)}", example={"Q": Q, "K": K}, certified=False)


# -- 推论 11.8's reading (and the summary that says it was proved) --------------------------------
@pytest.mark.parametrize("cid", [pytest.param("corollary-11-8-small-k-captures-most-energy", marks=pytest.mark.claim("corollary-11-8-small-k-captures-most-energy", reading="decay-condition"),
                                              id="corollary-11-8"),
                                 pytest.param("summary-spectral-decay-proved",
                                              marks=pytest.mark.claim("summary-spectral-decay-proved",
                                                                      reading="decay-condition"), id="summary")])
@given(a=st.integers(1, 3000), c=st.integers(1, 10**4), k=st.integers(1, 64), mult=st.integers(1, 100))
def test_small_k_under_decay_condition(cid, a, c, k, mult, claim_log, claimed, decay_condition_profile):
    alpha, C = 1 + Fraction(a, 1000), Fraction(c, 100)  # alpha in (1, 4], C in [0.01, 100]
    most = claimed.eval("most", exact=True)
    N = int(claimed.eval("ll_factor", exact=True) * k) * mult
    ratio = Fraction(k, N)  # flat spectrum sigma_i = C N^-alpha: every sigma_i^2 is equal
    claim_log.example(k=k, N=N)
    if ratio <= most:
        refute(f"sigma_1 = ... = sigma_{N} = C N^-alpha (C = {C}, alpha = {alpha}) is non-increasing and satisfies "
               f"sigma_i <= C i^-alpha for i <= N, yet its top k = {k} carry {ratio} <= {most} of the energy "
               f"(N = {N} >> k)", example={"alpha": str(alpha), "C": str(C), "k": k, "N": N}, certified=True,
               certificate="exact: all N energies are equal, so the top-k ratio is k/N; C N^-alpha <= C i^-alpha "
                           "because i <= N", certificate_strength="proved")


@pytest.mark.parametrize("reading", [
    pytest.param("anchored-sharp-bound", marks=pytest.mark.claim("corollary-11-8-small-k-captures-most-energy", reading="anchored-sharp-bound"), id="sharp"),
    pytest.param("anchored-document-form", marks=pytest.mark.claim("corollary-11-8-small-k-captures-most-energy", reading="anchored-document-form"),
                 id="document-form"),
])
@given(case=anchored_cases())
def test_anchored_energy_bound(reading, case, claim_log, claimed):
    alpha, k, j, N = case
    if not alpha > 1:
        return
    with mpmath.workdps(40):
        head, total = knee_spectrum_energy(alpha, j, k, N)
        ratio = head / total
        bound, text = _anchored_bound(reading, claimed, alpha, k)
        margin = ratio - bound
        tight = (1 - ratio) / (1 - bound) if bound < 1 else mpmath.mpf(0)
    target(float(-margin), label="bound - ratio")
    claim_log.example(alpha=float(alpha), k=k)
    claim_log.track("(1 - ratio) / (1 - bound)", float(tight))
    note(f"alpha={alpha} k={k} j={j} N={N}: ratio {mpmath.nstr(ratio, 12)} bound {mpmath.nstr(bound, 12)}")
    if margin < -mpmath.mpf(10) ** -30:
        refute(f"the spectrum sigma_1 = 1, sigma_i = (j+1)^-alpha (2 <= i <= {j}), sigma_i = i^-alpha ({j} < i <= "
               f"{N or 'infinity'}) satisfies sigma_i <= sigma_1 i^-alpha, but its top-{k} ratio "
               f"{mpmath.nstr(ratio, 10)} < {text} = {mpmath.nstr(bound, 10)} (alpha = {alpha})",
               example={"alpha": str(alpha), "k": k, "j": j, "N": N}, certified=True,
               certificate="40-digit mpmath, tails by Hurwitz zeta", certificate_strength="recomputed")


@pytest.mark.parametrize("reading", [
    pytest.param("anchored-sharp-bound", marks=pytest.mark.claim("corollary-11-8-small-k-captures-most-energy", reading="anchored-sharp-bound"), id="sharp"),
    pytest.param("anchored-document-form", marks=pytest.mark.claim("corollary-11-8-small-k-captures-most-energy", reading="anchored-document-form"),
                 id="document-form"),
])
@given(a=st.integers(1, 3000), u=st.lists(st.floats(0, 1), min_size=1, max_size=40))
@profiles.scaled(0.5)
def test_anchored_energy_bound_random_spectra(reading, a, u, claim_log, claimed):
    alpha = 1 + Fraction(a, 1000)
    with mpmath.workdps(40):
        a = fraction_to_mpf(alpha)
        sig = [mpmath.mpf(1)]
        for i, x in enumerate(u, start=2):  # anchored and non-increasing
            sig.append(min(sig[-1], mpmath.mpf(i) ** (-a) * mpmath.mpf(x)))
        e = [s * s for s in sig]
        total = mpmath.fsum(e)
        for k in range(1, len(sig) + 1):
            ratio = mpmath.fsum(e[:k]) / total
            bound, text = _anchored_bound(reading, claimed, alpha, k)
            if ratio < bound - mpmath.mpf(10) ** -30:
                refute(f"anchored spectrum {[mpmath.nstr(s, 6) for s in sig]}: top-{k} ratio {mpmath.nstr(ratio, 10)}"
                       f" < {text} = {mpmath.nstr(bound, 10)}", example={"alpha": str(alpha), "u": u, "k": k},
                       certified=True, certificate="40-digit mpmath", certificate_strength="recomputed")
    claim_log.example(N=len(sig))


# -- 推论 11.8 --------------------------------------------------------------------------------
@pytest.mark.claim("corollary-11-8-energy-bound", reading="every-spectrum")
@given(C=st.fractions(Fraction(1, 10), 10), alpha=st.fractions(Fraction(11, 10), 4))
def test_corollary_11_8(C, alpha, claim_log, claimed, every_spectrum_profile):
    c_prime = claimed.eval("c_prime", C=mpmath.mpf(C.numerator) / C.denominator,
                           alpha=mpmath.mpf(alpha.numerator) / alpha.denominator)
    # the smallest k with 1 - C'/k^(alpha-1) >= 1/2, then a flat spectrum of length N = 4k
    k = max(1, int(mpmath.ceil((2 * c_prime) ** (1 / (mpmath.mpf(alpha.numerator) / alpha.denominator - 1)))))
    N = 4 * k
    claim_log.example(C=float(C), alpha=float(alpha), k=k)
    # sigma_i = C N^-alpha <= C i^-alpha for every i <= N; energy ratio of the top k is exactly k/N = 1/4
    ratio = Fraction(k, N)
    bound = 1 - c_prime / mpmath.mpf(k) ** (mpmath.mpf(alpha.numerator) / alpha.denominator - 1)
    if mpmath.mpf(ratio.numerator) / ratio.denominator < bound:
        refute(f"flat spectrum sigma_1 = ... = sigma_N = C N^-alpha (N = {N}) satisfies sigma_i <= C i^-alpha "
               f"but its top-{k} energy ratio is {ratio} < 1 - C'/k^(alpha-1) = {mpmath.nstr(bound, 8)}",
               example={"C": str(C), "alpha": str(alpha), "C_prime": mpmath.nstr(c_prime, 12), "k": k, "N": N},
               certified=True, certificate="exact: the ratio is k/N = 1/4; the bound is >= 1/2 by the choice of k "
                                            "(40-digit mpmath for C')", certificate_strength="recomputed")


def _every_spectrum_profile(claim_log, claimed, spectra) -> None:
    """Profile of 推论 11.8 read over every spectrum: each drawn attention spectrum satisfies the decay
    condition sigma_i <= C i^-alpha with its tightest C = max_i sigma_i i^alpha at every alpha of
    PROFILE_ALPHAS (a larger C only weakens the bound); it fails when some k has top-k energy ratio below
    1 - C'(C, alpha)/k^(alpha-1) with the record's C' (float64, 1e-12 absolute slack on the ratio)."""
    failed, worst, top = [], [], -math.inf
    for sv, _mc in spectra:
        ratio, k = _energy_ratios(sv), np.arange(1, len(sv) + 1, dtype=np.float64)
        margins = []
        for a in PROFILE_ALPHAS:
            af = float(a)
            C = float(np.max(sv * k ** af))
            cp = float(claimed.eval("c_prime", C=mpmath.mpf(C), alpha=fraction_to_mpf(a)))
            bound = 1 - cp / k ** (af - 1)
            margins.append(float(np.min(ratio - bound)))
            top = max(top, float(bound.max()))
        failed.append(min(margins) < -1e-12)
        worst.append(min(margins))
    record_profile(claim_log, failed, setting=DOC_SETTING + ", alpha 1.1..4",
                   summary=f"spectra of float64 softmax(QK^T/sqrt d), Gaussian Q, K (numpy default_rng({PROFILE_SEED})), "
                           f"each with its tightest C at alpha in {{{', '.join(str(float(a)) for a in PROFILE_ALPHAS)}}}: "
                           f"smallest margin of the top-k ratio over 1 - C'/k^(alpha-1) (every k) "
                           f"{min(worst):.3g}..{max(worst):.3g} (the bound is at most {top:.3g} over every k and alpha); an "
                           f"attention spectrum has sigma_1 >= 1, and the "
                           f"certified counterexample needs the special spectra with sigma_1 far below C (flat, "
                           f"sigma_i = C N^-alpha), which no attention matrix has")


def _decay_condition_profile(claim_log, claimed, spectra) -> None:
    """Profile of the decay-condition reading (every alpha, C, k with N >= ll_factor k: top-k ratio above
    most): every finite spectrum satisfies the decay condition with C = max_i sigma_i i^alpha, so a drawn
    attention spectrum fails when some k <= N / ll_factor has top-k energy ratio <= most."""
    most = float(claimed.eval("most", exact=True))
    kmax = int(DOC_N // claimed.eval("ll_factor", exact=True))
    ratios = [_energy_ratios(sv) for sv, _mc in spectra]
    first = [int(np.argmax(r > most)) + 1 if (r > most).any() else DOC_N + 1 for r in ratios]
    record_profile(claim_log, [bool((r[:kmax] <= most).any()) for r in ratios], setting=DOC_SETTING,
                   summary=f"top-k energy ratios of float64 softmax(QK^T/sqrt d), Gaussian Q, K (numpy "
                           f"default_rng({PROFILE_SEED})), each under the decay condition with C = max_i sigma_i i^alpha "
                           f"at any alpha > 1, every k <= N/{claimed.text('ll_factor')} = {kmax}: top-1 "
                           f"{min(r[0] for r in ratios):.3f}..{max(r[0] for r in ratios):.3f}, top-{kmax} "
                           f"{min(r[kmax - 1] for r in ratios):.3f}..{max(r[kmax - 1] for r in ratios):.3f}; the "
                           f"smallest k whose top-k ratio exceeds {most} is {min(first)}..{max(first)} (every smaller "
                           f"k fails the reading's 'every k')")


@pytest.fixture
def standard_scale_profile(reading, claim_log, claimed, doc_size_spectra):
    """Attaches, once per check and before Hypothesis starts, the profile of a standard-logit-scale reading of
    the study note's row similarity (mean pairwise row cosine >= cosine_threshold) or near-zero singular
    values (a fraction >= fraction of them below relative_threshold sigma_1) at N = 512, d = 64, scale 1.
    Returns ``None``: the draws stay out of Hypothesis's report of the check's arguments."""
    if reading != "standard-logit-scale":
        return
    if "cosine_threshold" in claimed:
        mcs = [mc for _s, mc in doc_size_spectra]
        thr = float(claimed.eval("cosine_threshold"))
        record_profile(claim_log, [mc < thr for mc in mcs], setting=DOC_SETTING,
                       summary=f"mean pairwise row cosine of float64 softmax(QK^T/sqrt d), Gaussian Q, K (numpy "
                               f"default_rng({PROFILE_SEED})): {min(mcs):.3f}..{max(mcs):.3f} against the claimed >= {thr}")
    else:
        rel, frac = float(claimed.eval("relative_threshold")), float(claimed.eval("fraction"))
        fr = [float(np.mean(sv < rel * sv[0])) for sv, _mc in doc_size_spectra]
        record_profile(claim_log, [f < frac for f in fr], setting=DOC_SETTING,
                       summary=f"fraction of the singular values of float64 softmax(QK^T/sqrt d) below {rel} sigma_1, "
                               f"Gaussian Q, K (numpy default_rng({PROFILE_SEED})): {min(fr):.3f}..{max(fr):.3f} "
                               f"against the claimed >= {frac}")


@pytest.fixture
def every_spectrum_profile(claim_log, claimed, doc_size_spectra):
    """Attaches :func:`_every_spectrum_profile` once per check, before Hypothesis starts (it evaluates the
    record's C' 150 times, too many for every example)."""
    _every_spectrum_profile(claim_log, claimed, doc_size_spectra)


@pytest.fixture
def decay_condition_profile(claim_log, claimed, doc_size_spectra):
    """Attaches :func:`_decay_condition_profile` once per check, before Hypothesis starts."""
    _decay_condition_profile(claim_log, claimed, doc_size_spectra)


def _capped_power_sq(C, s, a, lo, hi):
    """sum_{i=lo}^{hi} min(s, C i^-a)^2 (hi None: infinity), by counting the capped terms and Hurwitz
    zeta for the rest (arb, certified at the caller's mpmath precision)."""
    if hi is not None and hi < lo:
        return mpmath.mpf(0)
    i0 = int(mpmath.floor((C / s) ** (1 / a)))  # last i with C i^-a >= s, corrected below for rounding
    while C * mpmath.mpf(i0 + 1) ** (-a) >= s:
        i0 += 1
    while i0 >= 1 and C * mpmath.mpf(i0) ** (-a) < s:
        i0 -= 1
    flat_hi = i0 if hi is None else min(i0, hi)
    flat = max(0, flat_hi - lo + 1) * s * s
    p_lo = max(lo, i0 + 1)
    if hi is not None and p_lo > hi:
        return flat
    tail = hurwitz_zeta(2 * a, p_lo) - (0 if hi is None else hurwitz_zeta(2 * a, hi + 1))
    return flat + C * C * tail


# 推论 11.8 on attention spectra: the corners where the bound is tightest (large C, alpha near 1, sigma_1 = 1,
# knee at 1) first, then anywhere.
_C_118 = st.one_of(st.sampled_from([Fraction(20), Fraction(2), Fraction(1)]), st.fractions(1, 20))
_ALPHA_118 = st.one_of(st.sampled_from([Fraction(11, 10), Fraction(2), Fraction(4)]), st.fractions(Fraction(11, 10), 4))
_S_118 = st.one_of(st.just(Fraction(0)), st.fractions(0, 1))
_J_118 = st.one_of(st.just(1), st.integers(1, 10**4))


def _worst_attention_ratio(C, a, s, j, k, N):
    """Top-k energy ratio of the worst spectra for 推论 11.8 on attention matrices (sigma_1 >= 1): the smallest
    head and the largest tail the decay condition sigma_i <= C i^-a allows, i.e. sigma_1 = s in [1, C],
    sigma_2..sigma_j equal to the first tail value t = min(s, C (j+1)^-a), sigma_i = min(s, C i^-a) for
    j < i <= N (N None: infinity). Returns ``(ratio, t)`` at the caller's mpmath precision."""
    t = min(s, C * mpmath.mpf(j + 1) ** (-a))
    if k <= j:
        head = s * s + (k - 1) * t * t
        tail = (j - k) * t * t + _capped_power_sq(C, s, a, j + 1, N)
    else:
        head = s * s + (j - 1) * t * t + _capped_power_sq(C, s, a, j + 1, k)
        tail = _capped_power_sq(C, s, a, k + 1, N)
    return head / (head + tail), t


def _refute_worst(s, t, j, k, C, alpha, N, ratio, bound, text):
    refute(f"sigma_1 = {mpmath.nstr(s, 8)} >= 1, sigma_2..sigma_{j} = {mpmath.nstr(t, 8)}, sigma_i = min(s, C i^-alpha)"
           f" (C = {C}, alpha = {alpha}, N = {N or 'infinity'}) satisfies the decay condition, but its top-{k} "
           f"ratio {mpmath.nstr(ratio, 10)} < {text} = {mpmath.nstr(bound, 10)}",
           example={"C": str(C), "alpha": str(alpha), "k": k, "j": j, "N": N, "s": mpmath.nstr(s, 20)},
           certified=True, certificate="40-digit mpmath, tails by Hurwitz zeta", certificate_strength="recomputed")


@pytest.mark.claim("corollary-11-8-energy-bound", reading="attention-spectra")
@given(C=_C_118, alpha=_ALPHA_118, k=st.integers(1, 10**4), j=_J_118,
       N=st.one_of(st.none(), st.integers(1, 10**6)), s_frac=_S_118)
def test_corollary_11_8_attention_spectra(C, alpha, k, j, N, s_frac, claim_log, claimed):
    # Attention matrices are row-stochastic, so sigma_1 >= 1 (the premise, checked below); over the worst
    # spectra the top-k ratio must stay above 1 - C'/k^(alpha-1).
    if N is not None:
        k, j = min(k, N), min(j, N)
    with mpmath.workdps(40):
        a, Cm = fraction_to_mpf(alpha), fraction_to_mpf(C)
        s = 1 + fraction_to_mpf(s_frac) * (Cm - 1)
        ratio, t = _worst_attention_ratio(Cm, a, s, j, k, N)
        bound = 1 - claimed.eval("c_prime", C=Cm, alpha=a) / mpmath.mpf(k) ** (a - 1)
        margin = ratio - bound
    target(float(-margin), label="bound - ratio")
    claim_log.example(C=float(C), alpha=float(alpha), k=k, N=N or 0)
    if margin < -mpmath.mpf(10) ** -30:  # 40-digit sums of at most 10^6 terms: error far below 1e-30
        _refute_worst(s, t, j, k, C, alpha, N, ratio, bound, "1 - C'/k^(alpha-1)")


@pytest.mark.claim("corollary-11-8-small-k-captures-most-energy", reading="attention-spectra")
@given(C=_C_118, alpha=_ALPHA_118, j=_J_118, n_extra=st.one_of(st.none(), st.integers(0, 10**6)), s_frac=_S_118)
def test_small_k_on_attention_spectra(C, alpha, j, n_extra, s_frac, claim_log, claimed):
    # k depends on C and alpha only (not on N): for attention spectra (sigma_1 >= 1) it must capture more
    # than `most` of the energy at every length N >= k, so that k << N once N is large.
    with mpmath.workdps(40):
        a, Cm = fraction_to_mpf(alpha), fraction_to_mpf(C)
        k = int(mpmath.floor(claimed.eval("k_small", C=Cm, alpha=a))) + 1
        N = None if n_extra is None else k + n_extra
        j = j if N is None else min(j, N)
        s = 1 + fraction_to_mpf(s_frac) * (Cm - 1)
        ratio, t = _worst_attention_ratio(Cm, a, s, j, k, N)
        most = claimed.eval("most")
        margin = ratio - most
    target(float(-margin), label="most - ratio")
    claim_log.example(C=float(C), alpha=float(alpha), k=k, N=N or 0)
    claim_log.track("k", k)
    if margin <= mpmath.mpf(10) ** -30:  # 40-digit sums: error far below 1e-30
        _refute_worst(s, t, j, k, C, alpha, N, ratio, most, "most")


#: The premise of 推论 11.8's attention-spectra reading: every attention matrix has sigma_1 >= this floor.
SIGMA1_FLOOR = Fraction(1)


@pytest.mark.claim("corollary-11-8-energy-bound", reading="attention-spectra")
@given(qk=qk_pairs(n=(1, 24), d=(1, 8), scale_exp=(-3.0, 3.0)))
def test_attention_top_singular_value_at_least_one(qk, claim_log):
    """The premise of reading attention-spectra: the exact ``X = softmax(QK^T/sqrt d)`` of float64 ``Q, K (N, d)``
    has ``sigma_1(X) >= SIGMA1_FLOOR`` (= 1: ``X 1 = 1``, so ``sigma_1 >= |X 1| / |1| = 1``).

    Decided without an SVD (LAPACK states no constant for its singular values' error): every entry of the stored
    float64 ``A`` is within the derived ``tau`` (:func:`softmax_tolerance`, Higham eqs. 3.4, 3.5) of ``X``'s, so
    :func:`row_stochastic_sigma1_bounds` gives, exactly, ``sigma_1(A)^2 >= |A 1|^2 / N`` (the stored matrix's
    rows sum to 1 within ``tau``: checked, a larger error is a bug of the suite) and
    ``sigma_1(X)^2 <= |X|_1 |X|_inf <= (max_j sum_i a_ij + N a) / (1 - tau)`` (``a`` the bound's absolute term, a
    few smallest subnormals: an exp that underflows keeps no relative accuracy). A floor above that upper bound is
    refuted and certified by a 200-bit arb enclosure of ``X`` (``|X|_1 |X|_inf`` from its column and row sums):
    a planted floor 1.01 is caught on any draw whose column sums stay below 1.0201 (N = 1, or near-uniform rows).
    """
    Q, K, _scale = qk
    A = softmax_attention(Q, K).numpy()
    N, d = Q.shape
    tau = softmax_tolerance(logit_magnitude_bound(Q, K), d, N, "float64")
    b = row_stochastic_sigma1_bounds(A, tau, absolute=tau.absolute)  # exps that underflow: tau's absolute term
    if b.row_sum_error > b.row_sum_bound:
        raise RuntimeError(f"softmax_attention's row sums are off by {float(b.row_sum_error):.3g} > the derived "
                           f"bound {tau} (N = {N}, d = {d}): a bug of the suite, not a counterexample")
    upper = math.sqrt(float(b.upper_sq))
    claim_log.example(N=N)
    claim_log.track("|row sum - 1| of the stored A / its bound", float(b.row_sum_error / b.row_sum_bound))
    claim_log.track("1 - |A 1| / sqrt N (stored A, exact)", 1 - math.sqrt(float(b.lower_sq)))
    claim_log.track("certified upper bound on sigma_1(X)", upper)
    claim_log.note(f"tau (N = 24, d = 8, L = 10^3 sqrt 8): {softmax_tolerance(1e3 * math.sqrt(8), 8, 24, 'float64')}; "
                   "per draw with its own N, d and L = logit_magnitude_bound(Q, K) (attention_claims.maths.rounding). "
                   "A floor above the smallest certified upper bound on sigma_1 (tracked) is refuted: e.g. 1.01.")
    target(-upper, label="-upper bound on sigma_1")
    if b.upper_sq < SIGMA1_FLOOR ** 2:
        def certify():
            ok, why = _certify_sigma1_below(Q, K, SIGMA1_FLOOR)
            refute(f"sigma_1 <= {upper:.10g} < {SIGMA1_FLOOR} for the softmax attention matrix of Q, K (N = {N}, "
                   f"d = {d})", example={"Q": Q, "K": K}, certified=ok, certificate=why,
                   certificate_strength="proved" if ok else None)

        refute_deferred(f"sigma_1 upper bound {upper:.10g} < {SIGMA1_FLOOR}", certify=certify)


def _certify_sigma1_below(Q, K, floor) -> tuple[bool, str]:
    """Whether ``sigma_1(X) < floor`` (a Fraction) for the exact ``X = softmax(Q K^T / sqrt d)`` of the float64
    ``Q (N, d)``, ``K (N, d)``, from ``sigma_1(X)^2 <= |X|_1 |X|_inf`` (Golub & Van Loan, Cor. 2.3.2) with both
    norms from a ``CERT_BITS``-bit arb enclosure of ``X`` (:func:`arb_softmax_attention`), and the certificate."""
    with precision(CERT_BITS):
        X = arb_softmax_attention(Q, K)
        n, m = X.nrows(), X.ncols()
        rows = [sum((X[i, j] for j in range(m)), to_arb(0)) for i in range(n)]
        cols = [sum((X[i, j] for i in range(n)), to_arb(0)) for j in range(m)]
        prod = max(c.upper() for c in cols) * max(r.upper() for r in rows)
        ok = bool(prod < to_arb(floor) ** 2)
        return ok, (f"arb ({CERT_BITS} bits) from the exact float64 Q, K: sigma_1(X)^2 <= |X|_1 |X|_inf <= "
                    f"{prod.str(15, radius=False)} (Golub & Van Loan, Cor. 2.3.2), "
                    f"{'below' if ok else 'not certainly below'} {floor}^2")


@pytest.mark.claim("table-11-3-1-spectral-features", reading="max-rank-column")
def test_max_rank_column(claim_log, claimed):
    # The ceiling for an N x N attention matrix is N, whatever d: softmax attention reaches it (a causal
    # one always has rank N, a bidirectional one generically; 定理 11.23's min(N, d) is refuted by
    # theorem-11-23-softmax-rank-bound). So a row may list N even when d < N; listing more than N is wrong.
    wrong = []
    for model, N, d, max_rank, *_ in _rows(claimed):
        claim_log.example(N=N, d=d)
        if max_rank != N:
            wrong.append((model, N, d, max_rank))
    if wrong:
        model, N, d, max_rank = wrong[0]
        # at that row's own N and d, how many Gaussian draws have a rank other than the table's maximum
        ranks = gaussian_softmax_ranks(N, d, 30, 0)
        record_profile(claim_log, [r != max_rank for r in ranks], setting=f"N={N}, d={d} ({model})",
                       summary=f"numerical rank of softmax(QK^T/sqrt d), float64, Gaussian Q, K (numpy default_rng(0)), "
                               f"singular values above {RANK_REL_TOL:g} sigma_1 counted: {min(ranks)}..{max(ranks)}, "
                               f"never the table's {max_rank} (N = {N} bounds it)")
        refute(f"{model}: the table's theoretical maximum rank {max_rank} is not N = {N}: an {N}x{N} attention "
               f"matrix has rank <= {N}, and softmax attention reaches {N} whatever d (here d = {d})",
               example={"row": model, "N": N, "d": d, "table": max_rank, "max_possible": N},
               certified=True, certificate=f"integer comparison: {max_rank} != N = {N}", certificate_strength="proved")


@pytest.mark.parametrize("tau", [
    pytest.param(Fraction(9, 10), marks=pytest.mark.claim("table-11-3-1-spectral-features", reading="effective-rank-vs-energy-tau-0.9"),
                 id="tau-0.9"),
    pytest.param(Fraction(95, 100), marks=pytest.mark.claim("table-11-3-1-spectral-features", reading="effective-rank-vs-energy-tau-0.95"),
                 id="tau-0.95"),
])
def test_effective_rank_consistent_with_energy(tau, claim_log, claimed):
    inconsistent = []
    for model, N, _d, _max_rank, r, frac, energy in _rows(claimed):
        k = math.ceil(frac * N)  # the convention of attention_claims.maths.top_fraction_energy
        claim_log.example(N=N, k=k)
        sigma = witness_spectrum(N, k, energy, r, tau)
        if sigma is None:
            inconsistent.append((model, N, k, r, frac, energy))
            continue
        got_r = effective_rank(sigma, float(tau))
        got_e = top_fraction_energy(sigma, float(frac))
        assert got_r == r and abs(got_e - float(energy)) < 1e-9, (
            f"witness construction broken for {model}: eff-rank {got_r}, energy {got_e}")
        claim_log.note(f"{model}: witness spectrum has eff-rank {got_r} at tau = {float(tau)} and "
                       f"{got_e:.2%} of the energy in the top {k}.")
    if inconsistent:
        model, N, k, r, frac, energy = inconsistent[0]
        refute(f"{model}: 'top {float(frac):.0%} capture {float(energy):.0%}' means the top k = {k} singular "
               f"values already reach tau = {float(tau)}, so eff-rank <= {k}, but the table says ~{r}",
               example={"rows": [row[0] for row in inconsistent], "N": N, "k": k, "energy": float(energy),
                        "eff_rank": r, "tau": float(tau)},
               certified=True,
               certificate="exact rational comparison: cumulative energy at k >= energy >= tau implies "
                           "eff-rank <= k (定义 11.25)", certificate_strength="proved")


# -- 表 11.3.3, LoRA row ----------------------------------------------------------------------------
@pytest.mark.claim("table-11-3-3-lora-row", reading="eckart-young")
@given(m=st.integers(2, 8), n=st.integers(2, 8), data=st.data(), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.5, explain=False)
def test_lora_eckart_young(m, n, data, seed, claim_log, claimed):
    W = data.draw(hnp.arrays(np.float64, (m, n), elements=st.floats(-2, 2, allow_subnormal=False)), label="Delta W")
    r = data.draw(st.integers(1, min(m, n) - 1), label="r")
    B, A, _ = eckart_young_factors(W, r)
    err = exact_frobenius_sq(W, B, A)
    with mpmath.workdps(40):
        s = mp_singular_values(W, dps=40)
        tail, head = mpmath.fsum(x * x for x in s[r:]), mpmath.fsum(x * x for x in s[:r])
        total = fraction_to_mpf(sum((Fraction(float(v)) ** 2 for v in W.ravel()), Fraction(0)))
        want = claimed.eval("best_error_sq", tail=tail, head=head, total=total, r=mpmath.mpf(r))
        # 1e-9 relative (the float64 factors' own error is ~1e-15 relative), plus 1e-20 |W|^2 for a zero tail
        tol = mpmath.mpf(10) ** -9 * abs(want) + mpmath.mpf(10) ** -20 * total
        e_svd = fraction_to_mpf(err)
    claim_log.example(m=m, n=n, r=r)
    claim_log.track("tail energy / |W|^2", float(tail / total) if total else 0.0)
    if abs(e_svd - want) > tol:
        below = e_svd < want
        refute(f"truncated SVD (r = {r}) gives |W - BA|_F^2 = {mpmath.nstr(e_svd, 15)}, but best_error_sq = "
               f"{claimed.text('best_error_sq')} = {mpmath.nstr(want, 15)} (tail energy {mpmath.nstr(tail, 15)})",
               example={"W": W, "r": r}, certified=bool(below or want < tail - tol),
               certificate="exact rational |W - BA|_F^2 of the float64 factors" if below else
               "40-digit mpmath singular values: the claimed value is below the Eckart-Young minimum",
               # the claimed value is evaluated from 40-digit mpmath singular values either way, with no error bound
               certificate_strength="recomputed" if below or want < tail - tol else None)
    rng = np.random.default_rng(seed)
    for t in range(24):  # random pairs and random perturbations of the optimum, eps = 1e-8 .. 1
        eps = 10.0 ** rng.uniform(-8, 0)
        B2, A2 = ((B + eps * rng.standard_normal(B.shape), A + eps * rng.standard_normal(A.shape)) if t % 3
                  else (rng.standard_normal(B.shape), rng.standard_normal(A.shape)))
        if float(np.sum((W - B2 @ A2) ** 2)) < float(want - tol):
            e2 = exact_frobenius_sq(W, B2, A2)
            if fraction_to_mpf(e2) < want - tol:
                refute(f"a factor pair with inner dimension r = {r} reaches |W - BA|_F^2 = {float(e2):.15g} < "
                       f"best_error_sq = {claimed.text('best_error_sq')} = {mpmath.nstr(want, 15)}",
                       example={"W": W, "B": B2, "A": A2}, certified=True,
                       certificate="exact rational |W - BA|_F^2", certificate_strength="proved")
    claim_log.note("The truncated-SVD error is the claimed value to 1e-9 relative; 24 random / perturbed factor "
                   "pairs per example never did better.")




# -- the deep profile's batched twins (attention_claims.engine; issue 15) -----------------------------
# Under --hypothesis-profile=deep each batched check below evaluates BATCH instances per Hypothesis
# example in one torch call and replaces the per-example check named here (checks/conftest.py); under
# ci and dev it skips. Each batch starts with the per-example check's own instance for the same drawn
# values (seeded_gaussian_batch); its suspects are recomputed one by one by the per-example reference
# (NumPy float64), then as the per-example check does (30-digit mpmath, bisection on the logit scale).
DEEP_BATCHED_TWINS = {
    "test_bidirectional_effective_rank": "test_bidirectional_effective_rank_batched",
    "test_rows_similar": "test_rows_similar_batched",
    "test_singular_values_near_zero": "test_singular_values_near_zero_batched",
}


@pytest.mark.parametrize("cid,scale_exp,reading", _claims_scales(["bidirectional-attention-low-rank", "study-note-encoder-low-rank", "study-note-dominant-singular-values"]))
@given(data=st.data())
@profiles.scaled(0.25)
def test_bidirectional_effective_rank_batched(cid, scale_exp, reading, data, claim_log, claimed, sharp_profile):
    batched_profile_only()
    if reading == "effective-rank-sharp":
        _sharp_effective_rank_profile(claim_log, claimed)
    N, d, s, seed = data.draw(gaussian_batch_spec(scale_exp=scale_exp), label="N, d, logit scale, seed")
    Q, K = seeded_gaussian_batch(seed, BATCH, N, d, s)
    tau = float(claimed.eval("tau"))
    er = effective_ranks(singular_values_batch(attention_batch(Q, K, device="cpu")), tau)
    bound = claimed.eval("effective_bound", exact=True, N=N, d=d)
    claim_log.batch(BATCH, N=N, d=d, logit_scale=s, effective_rank=er)
    target(float(er.max()) - float(bound), label="effective rank - bound")
    for i in batched_suspects(er > float(bound)):
        A = attention_matrix(Q[i], K[i])
        er_i = effective_rank(np.linalg.svd(A, compute_uv=False), tau)  # the per-example reference
        if not er_i > bound:
            continue

        def certify(A=A, i=i, er_i=er_i):
            er_mp = mp_matrix_effective_rank(A, tau)

            def fails(c):
                return effective_rank(np.linalg.svd(attention_matrix(Q[i] / s * c, K[i]), compute_uv=False), tau) > bound

            try:
                where = f"for this draw the bound fails from logit scale {bisect_predicate(fails, 1e-2, s, rtol=1e-3):.4g} (bisection)"
            except ValueError:
                where = "the effective rank is not monotone in the logit scale for this draw"
            refute(f"effective rank (tau = {tau}) {er_i} > {claimed.text('effective_bound')} = {bound} (N = {N}, "
                   f"d = {d}, scale {s:.3g})",
                   example={"N": N, "d": d, "scale": s, "seed": seed, "batch": BATCH, "index": i, "Q": Q[i], "K": K[i]},
                   certified=er_mp > bound, certificate=f"30-digit eigenvalues of A^T A give effective rank {er_mp}",
                   boundary=where, certificate_strength="recomputed" if er_mp > bound else None)

        refute_deferred(f"effective rank {er_i} > {bound}", certify=certify)


@pytest.mark.parametrize("scale_exp,reading", [
    pytest.param((-3.0, -1.0), "small-logit-scale", marks=pytest.mark.claim("study-note-similar-patterns-correlated", reading="small-logit-scale"),
                 id="small-logit-scale"),
    pytest.param((0.0, 2.0), "standard-logit-scale", marks=pytest.mark.claim("study-note-similar-patterns-correlated", reading="standard-logit-scale"),
                 id="standard-logit-scale"),
])
@given(N=st.integers(4, 32), d=st.integers(1, 8), seed=st.integers(0, 2**32 - 1), data=st.data())
@profiles.scaled(0.25)
def test_rows_similar_batched(scale_exp, reading, N, d, seed, data, claim_log, claimed, standard_scale_profile):
    batched_profile_only()
    s = data.draw(log_uniform(*scale_exp), label="logit scale")
    Q1, K = seeded_gaussian_batch(seed, BATCH, N, d, 1.0)
    thr = float(claimed.eval("cosine_threshold"))
    mc = mean_row_cosines(attention_batch(Q1 * s, K, device="cpu"))
    claim_log.batch(BATCH, N=N, d=d, logit_scale=s, mean_cosine=mc)
    target(-float(mc.min()), label="-mean cosine")
    for i in batched_suspects(mc < thr):
        mc_i = _mean_cosine(attention_matrix(Q1[i] * s, K[i]))  # the per-example reference
        if not mc_i < thr:
            continue

        def certify(i=i, mc_i=mc_i):
            ok, why = _certify_mean_cosine(Q1[i] * s, K[i], claimed.eval("cosine_threshold", exact=True))
            refute(f"mean pairwise row cosine {mc_i:.4f} < {thr} at logit scale {s:.3g} (N = {N}, d = {d})",
                   example={"N": N, "d": d, "seed": seed, "batch": BATCH, "index": i, "scale": s}, certified=ok,
                   certificate=why,
                   boundary=_scale_boundary(_mean_cosine, Q1[i], K[i], 1e-4, s, lambda v: v >= thr),
                   certificate_strength="proved" if ok else None)

        refute_deferred(f"mean cosine {mc_i:.4f} < {thr}", certify=certify)


@pytest.mark.parametrize("scale_exp,reading", [
    pytest.param((-3.0, -1.0), "small-logit-scale", marks=pytest.mark.claim("study-note-most-singular-values-near-zero", reading="small-logit-scale"),
                 id="small-logit-scale"),
    pytest.param((0.0, 1.0), "standard-logit-scale", marks=pytest.mark.claim("study-note-most-singular-values-near-zero", reading="standard-logit-scale"),
                 id="standard-logit-scale"),
])
@given(N=st.integers(8, 32), seed=st.integers(0, 2**32 - 1), data=st.data())
@profiles.scaled(0.25)
def test_singular_values_near_zero_batched(scale_exp, reading, N, seed, data, claim_log, claimed, standard_scale_profile):
    batched_profile_only()
    d = data.draw(st.integers(1, N // 4), label="d")
    s = data.draw(log_uniform(*scale_exp), label="logit scale")
    Q1, K = seeded_gaussian_batch(seed, BATCH, N, d, 1.0)
    rel, frac = float(claimed.eval("relative_threshold")), float(claimed.eval("fraction"))
    f = near_zero_fractions(singular_values_batch(attention_batch(Q1 * s, K, device="cpu")), rel)
    claim_log.batch(BATCH, N=N, d=d, logit_scale=s, near_zero_fraction=f)
    target(-float(f.min()), label="-fraction near 0")
    stat = lambda A: _near_zero_fraction(A, rel)  # noqa: E731
    for i in batched_suspects(f < frac):
        f_i = stat(attention_matrix(Q1[i] * s, K[i]))  # the per-example reference
        if not f_i < frac:
            continue

        def certify(i=i, f_i=f_i):
            ok, why = _certify_near_zero(Q1[i] * s, K[i], attention_matrix(Q1[i] * s, K[i]),
                                         claimed.eval("relative_threshold", exact=True), claimed.eval("fraction", exact=True))
            refute(f"only {f_i:.2f} of the singular values are below {rel} sigma_1 at logit scale {s:.3g} (N = {N}, "
                   f"d = {d})", example={"N": N, "d": d, "seed": seed, "batch": BATCH, "index": i, "scale": s},
                   certified=ok, certificate=why,
                   boundary=_scale_boundary(stat, Q1[i], K[i], 1e-4, s, lambda v: v >= frac),
                   certificate_strength="proved" if ok else None)

        refute_deferred(f"fraction {f_i:.2f} < {frac}", certify=certify)
