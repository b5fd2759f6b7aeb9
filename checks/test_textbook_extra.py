"""More claims of 003 (textbook §11.3): 推论 11.8, the proof step of 定理 11.23, 引理 11.35,
定理 11.22, 引理 11.36 and 定理 11.25 (Johnson–Lindenstrauss)."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, note
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attention_claims.maths import arb_softmax_attention, certified_rank_at_least, numerical_rank, softmax_attention
from attention_claims.testkit import profiles, refute, shared_argmax_logits

# -- 推论 11.8 --------------------------------------------------------------------------------

@pytest.mark.claim("corollary-11-8-energy-bound", reading="exact")
@given(C=st.fractions(Fraction(1, 10), 10), alpha=st.fractions(Fraction(11, 10), 4))
def test_corollary_11_8(C, alpha, claim_log, claimed):
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
                                            "(40-digit mpmath for C')")


# -- proof step of 定理 11.23 -------------------------------------------------------------------

@pytest.mark.claim("proof-11-23-softmax-keeps-row-dependence", reading="exact")
@given(u=st.tuples(st.integers(-3, 3), st.integers(-3, 3)).filter(lambda t: t[0] != t[1]),
       v=hnp.arrays(np.int64, st.integers(2, 4), elements=st.integers(-3, 3)).filter(lambda a: len(set(a)) > 1))
def test_softmax_keeps_row_dependence(u, v, claim_log):
    M = np.outer(np.array(u, dtype=np.float64), v.astype(np.float64))  # rank 1: rows are multiples of v
    claim_log.example(columns=v.size)
    A = softmax_attention(M, np.eye(M.shape[1]), scale=1.0).numpy()  # softmax of M itself, row by row
    ok, info = certified_rank_at_least(lambda: arb_softmax_attention(M, np.eye(M.shape[1]), scale=1.0), A, 2)
    note(f"M = {M.tolist()} minor det {info['det']}")
    if ok:
        refute(f"rows of M = u v^T (u = {list(u)}, v = {v.tolist()}) are dependent (rank M = 1), but softmax(M) "
               f"has rank 2", example={"M": M}, certified=True,
               certificate=f"arb 2x2 minor rows {info['rows']} cols {info['cols']}: det {info['det']} excludes 0")


# -- 引理 11.35 --------------------------------------------------------------------------------

def _mp_softmax(z, T):
    zs = [mpmath.mpf(x) / T for x in z]
    m = max(zs)
    e = [mpmath.exp(x - m) for x in zs]
    s = mpmath.fsum(e)
    return [x / s for x in e]


@pytest.mark.claim("lemma-11-35-temperature-limits", reading="unique-maximum")
@given(z=hnp.arrays(np.float64, st.integers(2, 8), elements=st.floats(-10, 10)).filter(
    lambda a: int(np.sum(a == a.max())) == 1))
def test_temperature_limits_unique_max(z, claim_log):
    with mpmath.workdps(50):
        srt = sorted(z)
        gap = mpmath.mpf(srt[-1]) - mpmath.mpf(srt[-2])
        j = int(np.argmax(z))
        N = z.size
        spread = max(abs(mpmath.mpf(x) - mpmath.fsum(z) / N) for x in z)
        for k in range(1, 9):
            T = mpmath.mpf(10) ** -k
            p = _mp_softmax(z, T)
            dist = max(abs(p[i] - (1 if i == j else 0)) for i in range(N))
            if dist > N * mpmath.exp(-gap / T):
                refute(f"softmax(z/T) at T = 1e-{k} is {mpmath.nstr(dist, 5)} from one-hot, above N exp(-gap/T)",
                       example={"z": z, "T": f"1e-{k}"}, certified=True, certificate="50-digit mpmath")
            T = mpmath.mpf(10) ** k
            p = _mp_softmax(z, T)
            dist = max(abs(x - mpmath.mpf(1) / N) for x in p)
            if dist > 4 * spread / T * mpmath.exp(2 * spread / T):
                refute(f"softmax(z/T) at T = 1e{k} is {mpmath.nstr(dist, 5)} from uniform",
                       example={"z": z, "T": f"1e{k}"}, certified=True, certificate="50-digit mpmath")
    claim_log.example(N=N, gap=float(gap))
    claim_log.note("Checked along T = 10^-1..10^-8 (one-hot, distance <= N e^{-gap/T}) and T = 10..10^8 "
                   "(uniform, distance <= 4 s/T e^{2s/T}, s = max|z - mean z|), 50-digit mpmath.")


@pytest.mark.claim("lemma-11-35-temperature-limits", reading="tied-maxima")
@given(z=hnp.arrays(np.float64, st.integers(2, 8), elements=st.floats(-10, 10)))
def test_temperature_limit_with_ties(z, claim_log):
    claim_log.example(N=z.size)
    ties = int(np.sum(z == z.max()))
    if ties > 1:
        with mpmath.workdps(50):
            p = _mp_softmax(z, mpmath.mpf(10) ** -30)
        j = int(np.argmax(z))
        refute(f"z = {z.tolist()} has {ties} tied maxima: softmax(z/T) -> 1/{ties} on each of them, not one-hot "
               f"(at T = 1e-30: p_j = {mpmath.nstr(p[j], 8)})", example={"z": z}, certified=True,
               certificate=f"exact: tied entries get equal weight for every T; 50-digit value {mpmath.nstr(p[j], 8)}")


# -- 定理 11.22 --------------------------------------------------------------------------------

@pytest.mark.claim("theorem-11-22-small-temperature-rank", reading="exact")
@given(Z=shared_argmax_logits(n=(2, 5)))
@profiles.scaled(0.5)
def test_small_temperature_rank_exact(Z, claim_log):
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
           certificate="arb minors (rows/cols chosen by pivoted QR): " + "; ".join(certs))


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


# -- 引理 11.36 ---------------------------------------------------------------------------------

@pytest.mark.parametrize("cid", [
    pytest.param("lemma-11-36", marks=pytest.mark.claim("lemma-11-36-dimension-bottleneck", reading="exact"),
                 id="lemma-11-36"),
    pytest.param("summary", marks=pytest.mark.claim("summary-theoretical-rank-bound-d", reading="exact"),
                 id="summary-11-3-7"),
])
@given(d=st.integers(1, 2), seed=st.integers(0, 2**31 - 1))
@profiles.scaled(0.25)
def test_dimension_bottleneck(cid, d, seed, claim_log, claimed):
    N = 8 * d
    rng = np.random.default_rng(seed)
    Q, K = rng.standard_normal((N, d)), rng.standard_normal((N, d))
    bound = int(claimed.eval("bound", exact=True, N=N, d=d))
    claim_log.example(N=N, d=d)
    if bound + 1 > N:
        return
    A = softmax_attention(Q, K).numpy()
    ok, info = certified_rank_at_least(lambda: arb_softmax_attention(Q, K), A, bound + 1)
    if ok:
        refute(f"N = {N} = 8 d, d = {d}: rank softmax(QK^T/sqrt d) >= {bound + 1} > {claimed.text('bound')} = {bound}",
               example={"N": N, "d": d, "seed": seed}, certified=True,
               certificate=f"arb minor rows {info['rows']} cols {info['cols']} det {info['det']}")


# -- 定理 11.25 (JL) ---------------------------------------------------------------------------

@pytest.mark.claim("theorem-11-25-johnson-lindenstrauss", reading="constructive")
@given(n=st.integers(2, 40), eps=st.floats(0.2, 0.9), seed=st.integers(0, 2**31 - 1))
@profiles.scaled(0.25)
def test_jl_constructive(n, eps, seed, claim_log, claimed):
    k = int(math.ceil(float(claimed.eval("k", n=mpmath.mpf(n), eps=mpmath.mpf(eps)))))
    d = max(2 * k, 64)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    diffs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    for attempt in range(20):  # noqa: B007 (reported below)
        P = rng.standard_normal((k, d)) / math.sqrt(k)
        Y = X @ P.T
        ok = all((1 - eps) * np.sum((X[i] - X[j]) ** 2) < np.sum((Y[i] - Y[j]) ** 2)
                 < (1 + eps) * np.sum((X[i] - X[j]) ** 2) for i, j in diffs)
        if ok:
            break
    claim_log.example(n=n, eps=eps, k=k, attempts=attempt + 1)
    if not ok:
        refute(f"no witness P with k = {k} found in 20 draws (n = {n}, eps = {eps:.3g})",
               example={"n": n, "eps": eps, "k": k, "seed": seed}, certified=False)
    # verify the witness exactly: rational arithmetic on the float64 entries of X and of P x (as computed)
    e = Fraction(eps)
    for i, j in diffs[:50]:
        dx = sum(Fraction(float(a)) ** 2 for a in (X[i] - X[j]).tolist())
        dy = sum(Fraction(float(a)) ** 2 for a in (Y[i] - Y[j]).tolist())
        assert (1 - e) * dx < dy < (1 + e) * dx, "float check and exact check disagree"
    claim_log.note("Witness maps found for every drawn instance with k = ceil(8 ln n / eps^2); the first 50 pairs "
                   "re-verified in exact rational arithmetic.")
