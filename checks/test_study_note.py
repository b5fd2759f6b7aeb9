"""Claims of 000 (a study note on why bidirectional attention is 'low rank'): correlation and rank,
the rank definition, every position attending, row similarity, diagonal sparsity, singular values
near 0, repeated tokens, winner-takes-all, multi-head, sparse attention, Linformer, RoPE,
FlashAttention. (The encoder low-rank readings shared with 002 are in test_decoder_only.py.)

Tolerances are stated next to each comparison.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import assume, example, given, target
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attention_claims.maths import (
    arb_matrix,
    arb_softmax_attention,
    attention_mask,
    bisect_predicate,
    certified_rank_at_least,
    certified_sign,
    effective_rank,
    energy_fraction,
    exact_product_rank,
    exact_softmax_rank,
    factorisation_dimension_bounds,
    linformer_mixing,
    masked_softmax_attention,
    mp_softmax_entry,
    precision,
    row_redundancy,
    softmax_diagonal_underflow_gap,
    underflow_log_threshold,
)
from attention_claims.testkit import (
    log_uniform,
    profiles,
    qk_pairs,
    reading_params,
    refute,
    refute_deferred,
    require_device,
)


def _gauss(N, d, s, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((N, d)) * s, rng.standard_normal((N, d))


def _A(Q, K, mask=None) -> np.ndarray:
    return masked_softmax_attention(Q, K, mask).numpy()


# -- 030: strong row correlation and rank ---------------------------------------------------------



def _row_cosines(A: np.ndarray) -> np.ndarray:
    U = A / np.linalg.norm(A, axis=1, keepdims=True)
    return U @ U.T


@pytest.mark.claim("study-note-row-correlation-low-rank", reading="exact")
@given(N=st.integers(2, 5), d=st.integers(1, 3), s=log_uniform(-3, -1), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.25)
def test_correlated_rows_exact_rank(N, d, s, seed, claim_log):
    Q, K = _gauss(N, d, s, seed)
    A = _A(Q, K)
    cmin = float(_row_cosines(A).min())
    claim_log.example(N=N, min_row_cosine=cmin)
    if cmin > 0.99:
        def certify():
            ok, info = certified_rank_at_least(lambda: arb_softmax_attention(Q, K), A, N)
            if ok and N > N // 2:
                refute(f"every pairwise row cosine is >= {cmin:.12f} > 0.99, yet the exact rank is N = {N} (not <= N/2)",
                       example={"N": N, "d": d, "scale": s, "Q": Q, "K": K}, certified=True,
                       certificate=f"arb: the full {N}x{N} determinant is {info['det']}, an interval excluding 0")

        refute_deferred(f"rows with min cosine {cmin:.4f}", certify=certify)


@pytest.mark.claim("study-note-row-correlation-low-rank", reading="effective-rank")
@given(N=st.integers(2, 24), d=st.integers(1, 6), s=log_uniform(-3, 2), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.25)
def test_correlated_rows_energy_bound(N, d, s, seed, claim_log, claimed):
    Q, K = _gauss(N, d, s, seed)
    A = _A(Q, K)
    c = float(_row_cosines(A)[:, 0].min())  # every row's cosine with row 1
    top = energy_fraction(np.linalg.svd(A, compute_uv=False), 1)
    bound = float(claimed.eval("top1_energy_lower", floating=True, c=c))
    claim_log.example(N=N, min_cosine_with_row_1=c)
    claim_log.track("top-1 energy - bound", top - bound)
    target(bound - top, label="bound - top-1 energy")
    if top < bound - 1e-12:  # float64 SVD: 1e-12 absolute on a fraction in [0, 1]
        refute(f"top-1 energy {top:.15f} < {claimed.text('top1_energy_lower')} = {bound:.15f} (c = {c:.6f})",
               example={"N": N, "d": d, "scale": s, "seed": seed}, certified=False, certificate="float64 SVD")


# -- 040: rank is the number of independent rows = columns -----------------------------------------

@pytest.mark.claim("study-note-rank-definition", reading="exact")
@given(M=st.integers(1, 6).flatmap(lambda r: st.integers(1, 6).flatmap(
    lambda c: hnp.arrays(np.int64, (r, c), elements=st.integers(-2, 2)))))
def test_rank_definition(M, claim_log):
    from flint import fmpz_mat

    def independent(rows):
        kept = []
        for row in rows:
            trial = kept + [list(map(int, row))]
            if fmpz_mat(len(trial), len(trial[0]), [v for r in trial for v in r]).rank() == len(trial):
                kept = trial
        return len(kept)

    r_rows, r_cols = independent(M), independent(M.T)
    r = fmpz_mat(M.shape[0], M.shape[1], [int(v) for v in M.ravel()]).rank()
    claim_log.example(rank=r)
    if not r_rows == r_cols == r:
        refute(f"independent rows {r_rows}, columns {r_cols}, rank {r}", example={"M": M}, certified=True,
               certificate="exact integer arithmetic")


# -- 060: every token attends to every position ---------------------------------------------------



@pytest.mark.claim("study-note-every-position-attends", reading="exact")
@given(qk=qk_pairs(n=(1, 6), d=(1, 4), scale_exp=(-2.0, 4.0)))
@profiles.scaled(0.25)
def test_every_position_exact(qk, claim_log):
    Q, K, s = qk
    with precision(128):
        A = arb_softmax_attention(Q, K)
        signs = [certified_sign(A[i, j]) for i in range(A.nrows()) for j in range(A.ncols())]
    claim_log.example(N=Q.shape[0], logit_scale=s)
    if min(signs) != 1:
        refute("a softmax weight is not certified positive", example={"Q": Q, "K": K}, certified=False)
    claim_log.note("Every weight certified > 0 by arb (exp of a finite number is positive).")


@pytest.mark.parametrize("device,dtype,reading", reading_params("study-note-every-position-attends"))
@given(N=st.integers(1, 5), d=st.integers(1, 3), s=log_uniform(-2.0, 4.0), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.5)
def test_every_position_dtype(device, dtype, reading, N, d, s, seed, claim_log):
    require_device(device)
    Q, K = _gauss(N, d, s, seed)
    hi = float(torch.finfo(getattr(torch, dtype)).max) / 8
    if float(np.abs(Q).max() * np.abs(K).max()) * Q.shape[1] > hi:
        Q = Q * (hi / (float(np.abs(Q).max() * np.abs(K).max()) * Q.shape[1]))  # keep logits finite
    z = (Q @ K.T) / math.sqrt(Q.shape[1])
    gap = float((z.max(axis=1, keepdims=True) - z).max())
    A = masked_softmax_attention(Q, K, None, dtype=dtype, device=device).to("cpu", torch.float64).numpy()
    target(gap, label="largest logit gap")
    claim_log.example(N=Q.shape[0], logit_gap=gap)
    zeros = np.argwhere(A == 0)
    if len(zeros):
        def certify():
            i, j = map(int, zeros[0])
            true = mp_softmax_entry(z[i], j)
            forced = bool(mpmath.log(true) < underflow_log_threshold(dtype))
            refute(f"computed in {dtype} on {device}, weight A[{i},{j}] is stored as exactly 0 (true value "
                   f"{mpmath.nstr(true, 6)}; logit gap {gap:.6g} nats): token {i} no longer attends to position {j}",
                   example={"Q": Q, "K": K, "row": i, "col": j}, certified=True,
                   certificate=f"stored entry read back exactly; the true weight (mpmath, 50 digits) is "
                               f"{'below' if forced else 'above'} half the smallest {dtype} subnormal",
                   boundary=f"weights vanish at logit gaps > {softmax_diagonal_underflow_gap(dtype, device):.6g} nats "
                            f"({dtype}, bisection)")

        refute_deferred("a stored weight is exactly 0", certify=certify)


# -- 070 and 090: row similarity and near-zero singular values, by logit scale ---------------------

def _mean_cosine(A):
    C = _row_cosines(A)
    n = A.shape[0]
    return float((C.sum() - n) / (n * n - n))


def _near_zero_fraction(A, rel):
    s = np.linalg.svd(A, compute_uv=False)
    return float(np.mean(s < rel * s[0]))


def _scale_boundary(stat, Q1, K, lo, hi, holds) -> str:
    """Bisection on the logit scale c (Q = c Q1) for where ``holds(stat(c))`` stops being true."""
    try:
        c = bisect_predicate(lambda c: not holds(stat(_A(Q1 * c, K))), lo, hi, rtol=1e-4)
    except ValueError:
        return f"no single crossing between logit scales {lo:g} and {hi:g} for this draw"
    return f"for this draw the reading stops holding at logit scale {c:.4g} (bisection)"




@pytest.mark.parametrize("scale_exp,reading", [
    pytest.param((-3.0, -1.0), "small-logit-scale", marks=pytest.mark.claim("study-note-similar-patterns-correlated", reading="small-logit-scale"),
                 id="small-logit-scale"),
    pytest.param((0.0, 2.0), "standard-logit-scale", marks=pytest.mark.claim("study-note-similar-patterns-correlated", reading="standard-logit-scale"),
                 id="standard-logit-scale"),
])
@given(N=st.integers(4, 32), d=st.integers(1, 8), seed=st.integers(0, 2**32 - 1), data=st.data())
@profiles.scaled(0.25)
def test_rows_similar(scale_exp, reading, N, d, seed, data, claim_log, claimed):
    s = data.draw(log_uniform(*scale_exp), label="logit scale")
    Q1, K = _gauss(N, d, 1.0, seed)
    thr = float(claimed.eval("cosine_threshold"))
    mc = _mean_cosine(_A(Q1 * s, K))
    claim_log.example(N=N, d=d, logit_scale=s, mean_cosine=mc)
    target(-mc, label="-mean cosine")
    if mc < thr:
        def certify():
            refute(f"mean pairwise row cosine {mc:.4f} < {thr} at logit scale {s:.3g} (N = {N}, d = {d})",
                   example={"N": N, "d": d, "seed": seed, "scale": s}, certified=False,
                   certificate="float64 (a cosine, not a rank: no exact certificate)",
                   boundary=_scale_boundary(_mean_cosine, Q1, K, 1e-4, s, lambda v: v >= thr))

        refute_deferred(f"mean cosine {mc:.4f} < {thr}", certify=certify)


@pytest.mark.parametrize("scale_exp,reading", [
    pytest.param((-3.0, -1.0), "small-logit-scale", marks=pytest.mark.claim("study-note-most-singular-values-near-zero", reading="small-logit-scale"),
                 id="small-logit-scale"),
    pytest.param((0.0, 1.0), "standard-logit-scale", marks=pytest.mark.claim("study-note-most-singular-values-near-zero", reading="standard-logit-scale"),
                 id="standard-logit-scale"),
])
@given(N=st.integers(8, 32), seed=st.integers(0, 2**32 - 1), data=st.data())
@profiles.scaled(0.25)
def test_singular_values_near_zero(scale_exp, reading, N, seed, data, claim_log, claimed):
    d = data.draw(st.integers(1, N // 4), label="d")
    s = data.draw(log_uniform(*scale_exp), label="logit scale")
    Q1, K = _gauss(N, d, 1.0, seed)
    rel, frac = float(claimed.eval("relative_threshold")), float(claimed.eval("fraction"))
    stat = lambda A: _near_zero_fraction(A, rel)  # noqa: E731
    f = stat(_A(Q1 * s, K))
    claim_log.example(N=N, d=d, logit_scale=s, near_zero_fraction=f)
    target(-f, label="-fraction near 0")
    if f < frac:
        def certify():
            refute(f"only {f:.2f} of the singular values are below {rel} sigma_1 at logit scale {s:.3g} (N = {N}, "
                   f"d = {d})", example={"N": N, "d": d, "seed": seed, "scale": s}, certified=False,
                   certificate="float64 SVD (a threshold count, not an exact rank)",
                   boundary=_scale_boundary(stat, Q1, K, 1e-4, s, lambda v: v >= frac))

        refute_deferred(f"fraction {f:.2f} < {frac}", certify=certify)


# -- 080: diagonal concentration and rank ---------------------------------------------------------



def _locality_logits(C: np.ndarray, beta) -> np.ndarray:
    N = C.shape[0]
    i = np.arange(N)
    return C - beta * np.abs(i[:, None] - i[None, :])


@pytest.mark.claim("study-note-diagonal-sparsity-lowers-rank", reading="exact")
@given(C=st.integers(2, 6).flatmap(lambda n: hnp.arrays(np.int64, (n, n), elements=st.integers(-1, 1))),
       b1=st.integers(0, 2), db=st.integers(1, 2))
@profiles.scaled(0.25)
def test_diagonal_concentration_exact(C, b1, db, claim_log):
    r1 = exact_softmax_rank(_locality_logits(C, b1))  # integer logits; t = e (scale 1)
    r2 = exact_softmax_rank(_locality_logits(C, b1 + db))
    claim_log.example(N=C.shape[0], rank_change=r2 - r1)
    if r2 > r1:
        refute(f"concentrating attention near the diagonal (locality strength {b1} -> {b1 + db}) raised the exact "
               f"rank from {r1} to {r2} (N = {C.shape[0]})", example={"C": C, "beta_1": b1, "beta_2": b1 + db},
               certified=True, certificate="ranks over Q(e) (Bareiss on integer polynomials; e transcendental)")


@pytest.mark.claim("study-note-diagonal-sparsity-lowers-rank", reading="effective-rank")
@given(N=st.integers(4, 8), d=st.integers(1, 3), s=log_uniform(-2, 0), b1=st.floats(0, 2), db=st.floats(0.5, 4),
       seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.125)
def test_diagonal_concentration_effective_rank(N, d, s, b1, db, seed, claim_log):
    Q, K = _gauss(N, d, s, seed)
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


# -- 100: repeated tokens with position embeddings -------------------------------------------------

@pytest.mark.claim("study-note-repeated-tokens-redundancy", reading="with-position-embeddings")
@given(n_distinct=st.integers(1, 3), extra=st.integers(1, 4), D=st.integers(2, 4), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.25)
def test_repeated_tokens_with_positions(n_distinct, extra, D, seed, claim_log, claimed):
    rng = np.random.default_rng(seed)
    N = n_distinct + extra
    E = rng.integers(-3, 4, (n_distinct, D))
    X = E[rng.integers(0, n_distinct, N)] + rng.integers(-3, 4, (N, D))  # + learned position embeddings
    Wq, Wk = rng.integers(-3, 4, (D, D)), rng.integers(-3, 4, (D, D))
    bound = claimed.eval("repeated_bound", exact=True, n_distinct=n_distinct, N=N)
    r = exact_softmax_rank((X @ Wq) @ (X @ Wk).T)
    claim_log.example(N=N, distinct=n_distinct, exact_rank=r)
    if r > bound:
        refute(f"with position embeddings, {N} positions over {n_distinct} distinct tokens give exact rank {r} > "
               f"{bound}", example={"X": X, "Wq": Wq, "Wk": Wk}, certified=True, certificate="rank over Q(t) (exact)")


# -- 110: winner takes all --------------------------------------------------------------------------



@pytest.mark.claim("study-note-softmax-winner-takes-all", reading="scale-monotone-rank")
@given(M=st.integers(2, 6).flatmap(lambda n: hnp.arrays(np.int64, (n, n), elements=st.integers(-2, 2))),
       b1=st.integers(0, 2), db=st.integers(1, 2))
@profiles.scaled(0.5)
def test_winner_takes_all_rank(M, b1, db, claim_log):
    r1, r2 = exact_softmax_rank(M * b1), exact_softmax_rank(M * (b1 + db))
    claim_log.example(N=M.shape[0], rank_change=r2 - r1)
    target(float(r2 - r1), label="rank increase")
    if r2 > r1:
        refute(f"sharpening the logits (scale {b1} -> {b1 + db}) raised the exact rank from {r1} to {r2}",
               example={"M": M, "beta_1": b1, "beta_2": b1 + db}, certified=True,
               certificate="ranks over Q(e) (exact)")


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
               example={"z": z, "beta_1": b1, "beta_2": b1 + db}, certified=True, certificate="35-digit mpmath")


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
        floats.append(_A(Q, K) @ V)
    out = arb_mat(N, h * dh)
    for a, B in enumerate(blocks):
        for i in range(N):
            for j in range(dh):
                out[i, a * dh + j] = B[i, j]
    return out, np.hstack(floats)


@pytest.mark.parametrize("reading", [
    pytest.param("vs-single-small-head", marks=pytest.mark.claim("study-note-multi-head-raises-rank", reading="vs-single-small-head"), id="small"),
    pytest.param("vs-single-full-head", marks=pytest.mark.claim("study-note-multi-head-raises-rank", reading="vs-single-full-head"), id="full"),
])
@given(case=multi_head_case())
@profiles.scaled(0.125)
def test_multi_head_output_rank(reading, case, claim_log):
    h, dh, d, N, X, (Wq, Wk, Wv) = case
    with precision(128):
        ok_multi, info = certified_rank_at_least(lambda: _heads_output(X, Wq, Wk, Wv, h, dh)[0],
                                                 _heads_output(X, Wq, Wk, Wv, h, dh)[1], d)
        ok_single, _ = certified_rank_at_least(lambda: arb_softmax_attention(X @ Wq, X @ Wk) * arb_matrix(X @ Wv),
                                               _A(X @ Wq, X @ Wk) @ (X @ Wv), d)
    claim_log.example(N=N, d=d, heads=h)
    if not ok_multi:
        refute(f"could not certify rank {d} for the multi-head output", example={"N": N, "d": d}, certified=False)
    if reading == "vs-single-full-head" and ok_single:
        def certify():
            refute(f"the {h}-head output (N x {d}) and a single head of size {d} both have rank exactly {d} = min(N, d): "
                   f"multi-head does not raise it", example={"N": N, "d": d, "heads": h}, certified=True,
                   certificate=f"both rank >= {d} by arb minors (e.g. det {info['det']}); both <= {d} by shape")

        refute_deferred("both ranks are d", certify=certify)
    claim_log.note("The multi-head output rank min(N, d) was certified on every example (arb minor); a single "
                   "head of size d/h has output rank <= d/h by shape.")


@pytest.mark.claim("study-note-multi-head-raises-rank", reading="per-head-logit-rank")
@given(h=st.sampled_from([2, 4]), dh=st.integers(1, 2), extra=st.integers(1, 3), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.25)
def test_multi_head_logit_rank(h, dh, extra, seed, claim_log):
    d = h * dh
    N = d + extra
    rng = np.random.default_rng(seed)
    Q, K = rng.integers(-5, 6, (N, d)), rng.integers(-5, 6, (N, d))
    full = exact_product_rank(Q, K)
    heads = [exact_product_rank(Q[:, a * dh:(a + 1) * dh], K[:, a * dh:(a + 1) * dh]) for a in range(h)]
    claim_log.example(N=N, d=d, heads=h)
    if max(heads) > dh or full != d:
        refute(f"logit ranks: per head {heads} (head size {dh}), single full head {full} (d = {d})",
               example={"Q": Q, "K": K}, certified=True, certificate="fmpq_mat ranks")


# -- 180: sparse (banded) attention ------------------------------------------------------------------



@pytest.mark.claim("study-note-sparse-attention-avoids-low-rank", reading="banded-causal-exact")
@given(C=st.integers(2, 7).flatmap(lambda n: hnp.arrays(np.int64, (n, n), elements=st.integers(-2, 2))),
       w=st.integers(0, 3))
@profiles.scaled(0.25)
def test_banded_causal(C, w, claim_log):
    N = C.shape[0]
    r = exact_softmax_rank(C, attention_mask("banded-causal", N, window=w))
    claim_log.example(N=N, window=w, rank=r)
    if r < N:
        refute(f"banded causal attention (w = {w}) has exact rank {r} < {N}", example={"C": C, "w": w},
               certified=True, certificate="rank over Q(t) (exact)")


@pytest.mark.parametrize("generic", [
    pytest.param(True, marks=pytest.mark.claim("study-note-sparse-attention-avoids-low-rank", reading="banded-bidirectional-generic"), id="generic"),
    pytest.param(False, marks=pytest.mark.claim("study-note-sparse-attention-avoids-low-rank", reading="banded-bidirectional-every-input"), id="every-input"),
])
@given(N=st.integers(2, 7), w=st.integers(1, 3), seed=st.integers(0, 2**32 - 1),
       C=hnp.arrays(np.int64, (7, 7), elements=st.integers(-1, 1)))
@example(N=5, w=1, seed=0, C=np.zeros((7, 7), dtype=np.int64))
@profiles.scaled(0.25)
def test_banded_bidirectional(generic, N, w, seed, C, claim_log):
    mask = attention_mask("banded", N, window=w)
    if not generic:
        r = exact_softmax_rank(C[:N, :N], mask)
        claim_log.example(N=N, window=w, rank=r)
        if r < N:
            refute(f"banded bidirectional attention (N = {N}, w = {w}) has exact rank {r} < N", example={
                "logits": C[:N, :N], "w": w}, certified=True, certificate="rank over Q(t) (exact)")
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


# -- 190: Linformer has no high-rank residual -------------------------------------------------------

@st.composite
def linformer_case(draw):
    n = draw(st.integers(3, 12), label="n")
    k = draw(st.integers(1, n - 1), label="k")
    d = draw(st.integers(1, 4), label="d")
    s = draw(log_uniform(-2, 1), label="logit scale")
    seed = draw(st.integers(0, 2**32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    R = lambda: rng.standard_normal((k, n)) / math.sqrt(k)  # noqa: E731
    return n, k, rng.standard_normal((n, d)) * s, rng.standard_normal((n, d)), R(), R()


@pytest.mark.claim("study-note-linformer-low-rank-plus-residual", reading="exact")
@given(case=linformer_case())
@profiles.scaled(0.25)
def test_linformer_no_high_rank_residual(case, claim_log, claimed):
    n, k, Q, K, E, F = case
    P_bar, _ = linformer_mixing(Q, K, E, F)
    above = claimed.eval("residual_rank_above", exact=True, k=k, n=n)

    def exact_check():
        r = exact_product_rank(P_bar, F.T)
        claim_log.example(n=n, k=k, rank=r)
        if not r > above:
            refute(f"Linformer's token mixing P_bar F (n = {n}) has exact rank {r} <= k = {k}: no high-rank residual "
                   f"part", example={"n": n, "k": k, "Q": Q, "K": K, "E": E, "F": F}, certified=True,
                   certificate="exact rational rank of the product of the stored float64 factors (fmpq_mat)")

    if np.linalg.matrix_rank(P_bar @ F) <= above:
        refute_deferred("float64 rank of P_bar F <= k", certify=exact_check)
    exact_check()


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


@pytest.mark.claim("study-note-rope-position-modelling", reading="raises-logit-rank")
@given(N=st.integers(3, 6), half=st.integers(1, 2), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.25)
def test_rope_logit_rank(N, half, seed, claim_log, claimed):
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
                   certificate="fmpq_mat rank of the exactly rotated logits (cos = 3/5, sin = 4/5)")

    if np.linalg.matrix_rank(fq @ fk.T) <= bound:
        refute_deferred("float64 rank of the RoPE logits <= d", certify=exact_check)
    exact_check()


@pytest.mark.claim("study-note-rope-position-modelling", reading="order-sensitivity")
@given(N=st.integers(2, 6), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.25)
def test_rope_order_sensitivity(N, seed, claim_log):
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
    if not any(diffs):
        refute("with RoPE, swapping two tokens only swapped their outputs (no certified difference)",
               example={"X": X}, certified=False)
    claim_log.note("With RoPE a swap of two distinct tokens changed the swapped token's output (arb-certified "
                   "difference; the rotation angles are the float64 values, converted exactly).")


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


@pytest.mark.claim("study-note-flashattention-perceiver", reading="flash-changes-attention")
@given(case=qkv())
@profiles.scaled(0.25)
def test_flash_changes_attention(case, claim_log):
    Q, K, V, causal = case
    flash = _flash_cpu(Q, K, V, causal)
    explicit = masked_softmax_attention(Q, K, "causal" if causal else None).numpy() @ V
    err = float(np.abs(flash - explicit).max() / np.abs(V).max())
    claim_log.example(N=Q.shape[0], rel_err_vs_float64_explicit=err)
    if err <= 1e-12:
        def certify():
            err = float(np.abs(flash - _mp_reference(Q, K, V, causal)).max() / np.abs(V).max())  # 1e-12 relative to max|V|: float64 rounding, far below any change of the attention matrix
            refute(f"the flash kernel equals softmax(QK^T/sqrt d) V to {err:.2e} (relative to max |V|; causal = {causal}): "
                   f"it computes the same attention", example={"Q": Q, "K": K, "V": V, "causal": causal}, certified=True,
                   certificate="30-digit mpmath reference of softmax(QK^T/sqrt d) V; difference <= 1e-12")

        refute_deferred(f"flash = explicit to {err:.2e}", certify=certify)


@pytest.mark.parametrize("device,dtype,reading", reading_params("study-note-flashattention-perceiver"))
@given(case=qkv(n=(1, 64), dims=[8, 16, 32, 64]))  # head sizes every fused CUDA backend accepts
@profiles.scaled(0.25)
def test_flash_matches_reference(device, dtype, reading, case, claim_log):
    require_device(device)
    Q, K, V, causal = case
    dt = getattr(torch, dtype)
    # the reference is float64 attention of the *same* inputs the kernel sees (rounded to the dtype), so the
    # comparison measures the kernel, not the rounding of Q, K, V; tolerance: 4 units in the last place of
    # the dtype (2^-52, 2^-11, 2^-8) relative to max |V|, with float64 at 1e-12
    q, k, v = (torch.as_tensor(x).to(dtype=dt) for x in (Q, K, V))
    Qr, Kr, Vr = (x.double().numpy() for x in (q, k, v))
    ref = masked_softmax_attention(Qr, Kr, "causal" if causal else None).numpy() @ Vr
    tol = {"float64": 1e-12, "float16": 4 * 2.0**-11, "bfloat16": 4 * 2.0**-8}[dtype]
    if device == "cpu":
        out = _flash_cpu(Qr, Kr, Vr, causal)
    else:
        from torch.nn.attention import SDPBackend, sdpa_kernel

        qc, kc, vc = (x[None, None].to(device) for x in (q, k, v))
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
            out = torch.nn.functional.scaled_dot_product_attention(qc, kc, vc, is_causal=causal)[0, 0].double().cpu().numpy()
    err = float(np.abs(out - ref).max() / np.abs(Vr).max())
    target(err, label="relative error")
    claim_log.example(N=Q.shape[0], d=Q.shape[1], rel_err=err)
    if err > tol:
        refute(f"{device}/{dtype}: fused attention differs from float64 attention of the same inputs by {err:.3e} > "
               f"{tol:.3g} (relative to max |V|)", example={"Q": Q, "K": K, "V": V, "causal": causal},
               certified=False, certificate="float64 reference")


@pytest.mark.claim("study-note-flashattention-perceiver", reading="perceiver-latent-rank")
@given(M=st.integers(1, 4), extra=st.integers(1, 4), d=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.25)
def test_perceiver_latent_rank(M, extra, d, seed, claim_log):
    N = M + extra
    rng = np.random.default_rng(seed)
    L, X = rng.standard_normal((M, max(d, M))), rng.standard_normal((N, max(d, M)))
    A = _A(L, X)
    with precision(128):
        ok, info = certified_rank_at_least(lambda: arb_softmax_attention(L, X), A, M)
    claim_log.example(M=M, N=N)
    if not ok:
        refute(f"could not certify rank {M} of the {M} x {N} latent attention", example={"M": M, "N": N},
               certified=False)
    claim_log.note("The M x N latent cross-attention has rank exactly M < N (<= M by shape, >= M by an arb minor).")


# -- 045: lower rank, more redundancy, fewer free parameters ----------------------------------------



@st.composite
def rank_r_factors(draw, n=(1, 5)):
    """Integer factors ``A, B (n, r)`` with ``0 <= r <= n`` (seeded: generic, cheap to shrink)."""
    nn = draw(st.integers(*n), label="n")
    r = draw(st.integers(0, nn), label="r")
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="seed"))
    return rng.integers(-4, 5, (nn, r)), rng.integers(-4, 5, (nn, r))


@pytest.mark.claim("study-note-lower-rank-more-redundant", reading="row-redundancy")
@given(AB=rank_r_factors(n=(1, 6)))
@profiles.scaled(0.25)
def test_lower_rank_redundant_rows(AB, claim_log, claimed):
    A, B = AB
    n = A.shape[0]
    M = A @ B.T if A.shape[1] else np.zeros((n, n), dtype=np.int64)
    kept, redundant = row_redundancy(M)
    r = len(kept)
    want = claimed.eval("redundant_rows", exact=True, n=n, r=r)
    fewer = claimed.eval("redundant_rows", exact=True, n=n, r=r + 1) if r < n else None
    claim_log.example(n=n, rank=r, redundant_rows=len(redundant))
    if len(redundant) != want or (fewer is not None and not fewer < want):
        refute(f"an {n} x {n} matrix of exact rank {r} has {len(redundant)} redundant rows {redundant} (each in the "
               f"span of rows {kept}); the claimed {claimed.text('redundant_rows')} gives {want} (and {fewer} at "
               f"rank {r + 1})", example={"M": M}, certified=True,
               certificate="exact ranks over Q (fmpz_mat): greedy independent rows, each other row in their span")
    claim_log.note("Exact: a maximal independent set has r rows and each of the other n - r rows lies in its span.")


@pytest.mark.claim("study-note-lower-rank-more-redundant", reading="parameter-dimension")
@given(AB=rank_r_factors())
@profiles.scaled(0.5)
def test_rank_variety_dimension(AB, claim_log, claimed):
    A, B = AB
    n, r = A.shape
    assume(np.linalg.matrix_rank(A) == r and np.linalg.matrix_rank(B) == r)  # a general point (rare rejections)
    lo, hi = factorisation_dimension_bounds(A, B) if r else (0, 0)
    lo1, hi1 = factorisation_dimension_bounds(A[:, :-1], B[:, :-1]) if r > 1 else (0, 0)
    if lo != hi or lo1 != hi1:  # at full-rank A, B the map is a submersion onto the rank-r matrices
        raise ArithmeticError(f"dimension bounds did not meet at a general point: [{lo}, {hi}], [{lo1}, {hi1}]")
    want = claimed.eval("dimension", exact=True, n=n, r=r)
    below = claimed.eval("dimension", exact=True, n=n, r=r - 1) if r else None
    claim_log.example(n=n, r=r, dimension_lower=lo, dimension_upper=hi)
    bad = []
    if not lo <= want <= hi:
        bad.append(f"rank <= {r}: dimension in [{lo}, {hi}], claimed {claimed.text('dimension')} = {want}")
    if r and not lo1 <= below <= hi1:
        bad.append(f"rank <= {r - 1}: dimension in [{lo1}, {hi1}], claimed {below}")
    if r and not hi1 < lo:
        bad.append(f"the dimension does not increase from rank {r - 1} ([{lo1}, {hi1}]) to rank {r} ([{lo}, {hi}])")
    if bad:
        refute(f"n = {n}: " + "; ".join(bad), example={"A": A, "B": B}, certified=True,
               certificate="exact Jacobian rank of (A, B) -> A B^T at this integer point (a lower bound of the "
                           "dimension) and (n + n) r minus the exact rank of the r^2 kernel directions (A X, -B X^T) "
                           "(an upper bound); fmpz_mat")
    claim_log.note("At every drawn point the lower and upper bounds met, certifying the dimension exactly; it rose "
                   "strictly from rank r - 1 to rank r.")
