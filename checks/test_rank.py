"""Rank claims: causal softmax attention is full rank (002), rank(QK^T) <= d and
定理 11.23's rank(softmax(QK^T/sqrt d)) <= min(N, d) (003)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import given, note, target
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attention_claims.maths import (
    arb_softmax_attention,
    certified_rank_at_least,
    certified_sign,
    certify_nonzero_det,
    default_rank_tolerance,
    exact_product_rank,
    exact_rank,
    logits,
    mp_softmax_entry,
    numerical_rank_gap_2x2,
    softmax_attention,
    softmax_diagonal_underflow_gap,
    underflow_log_threshold,
)
from attention_claims.testkit import profiles, qk_pairs, reading_params, refute


def _max_gap(z: np.ndarray) -> float:
    """Largest causal-row logit gap ``max_{j<=i} z_ij - z_ii`` (nats)."""
    return max(float(np.max(z[i, : i + 1]) - z[i, i]) for i in range(z.shape[0]))


@pytest.mark.claim("causal-softmax-full-rank", reading="exact")
@given(qk=qk_pairs())
@profiles.scaled(0.5)
def test_causal_softmax_det_positive_exact(qk, claim_log):
    Q, K, scale = qk
    N, d = Q.shape
    z = logits(Q, K).numpy()
    target(_max_gap(z), label="largest causal logit gap")
    ok, det, bits = certify_nonzero_det(lambda: arb_softmax_attention(Q, K, causal=True))
    note(f"N={N} d={d} scale={scale:.3e} det={det} ({bits} bits)")
    claim_log.example(N=N, d=d, logit_scale=scale, logit_gap=_max_gap(z))
    if not ok:
        refute(f"det A could not be certified non-zero up to {bits} bits (N={N}, d={d})",
               example={"Q": Q, "K": K}, certified=False)
    if certified_sign(det) != 1:
        refute(f"certified det A = {det} is not positive (N={N}, d={d})", example={"Q": Q, "K": K},
               certified=True, certificate=f"arb enclosure at {bits} bits: {det}")
    claim_log.note("det A certified > 0 by arb interval arithmetic (python-flint) on every example.")


@pytest.mark.parametrize("device,dtype,reading",
                         reading_params("causal-softmax-full-rank", where=lambda r: not r.name.endswith("numerical-rank")))
@given(data=st.data())
def test_causal_softmax_stored_matrix_full_rank(device, dtype, reading, data, claim_log, claimed):
    # Declared domain: logit scales up to 1e5, capped so Q and QK^T stay finite in the dtype
    # (float16's largest finite value is 65504); overflow is a different failure than rank.
    hi = min(5.0, math.floor(math.log10(float(torch.finfo(getattr(torch, dtype)).max) / 6)))
    Q, K, scale = data.draw(qk_pairs(scale_exp=(-3.0, hi)), label="Q, K, logit scale")
    N, d = Q.shape
    safe = f"safe_logit_gap_{dtype}"
    if safe in claimed:  # a record may claim full rank only up to a logit gap: stay within it
        limit = float(claimed.eval(safe))
        gap0 = _max_gap(logits(Q, K).numpy())
        if gap0 > limit:
            Q = Q * (limit / gap0)
    A = softmax_attention(Q, K, causal=True, dtype=dtype, device=device).to("cpu", torch.float64).numpy()
    z = logits(Q, K).numpy()  # the real logits, float64
    gap = _max_gap(z)
    target(gap, label="largest causal logit gap")
    claim_log.example(N=N, d=d, logit_gap=gap)
    note(f"{device}/{dtype}: N={N} d={d} logit scale={scale:.3e} largest gap={gap:.6g}")
    if not np.isfinite(A).all():
        refute(f"the {dtype} attention matrix on {device} has non-finite entries (N={N})",
               example={"Q": Q, "K": K, "A": A}, certified=True,
               certificate="the stored entries are NaN/Inf (read back exactly)")
    if np.any(np.triu(A, 1) != 0):
        refute("the causal mask leaked: a stored entry above the diagonal is non-zero",
               example={"Q": Q, "K": K, "A": A}, certified=True, certificate="stored entries read back exactly")
    rank = exact_rank(A)
    if rank < N:
        i = int(np.flatnonzero(np.diag(A) == 0)[0])
        true_aii = mp_softmax_entry(z[i, : i + 1], i)
        forced = bool(mpmath.log(true_aii) < underflow_log_threshold(dtype))
        g_star = softmax_diagonal_underflow_gap(dtype, device)
        refute(
            f"computed in {dtype} on {device}, the stored {N}x{N} causal attention matrix has exact rank "
            f"{rank} < N: A[{i},{i}] = 0 (true value {mpmath.nstr(true_aii, 6)}; logit gap {gap:.6g} nats)",
            example={"N": N, "d": d, "Q": Q, "K": K, "row": i, "logit_gap": gap,
                     "true_A_ii": mpmath.nstr(true_aii, 12)},
            certified=True,
            certificate=(
                f"exact rational rank of the stored entries (python-flint fmpq_mat) = {rank} < {N}; the true "
                f"A[{i},{i}] (mpmath, 50 digits) is {'below' if forced else 'above'} half the smallest "
                f"{dtype} subnormal, so the underflow is {'forced by the dtype range' if forced else 'a rounding artifact'}"
            ),
            boundary=(
                f"diagonal underflows at logit gap > {g_star:.6g} nats ({dtype}, {device}; bisection; "
                f"IEEE -ln(subnormal_min/2) = {-underflow_log_threshold(dtype):.6g})"
            ),
        )


@pytest.mark.claim("causal-softmax-full-rank", reading="cpu-float64-numerical-rank")
@given(qk=qk_pairs())
def test_causal_softmax_numerical_rank_float64(qk, claim_log):
    Q, K, scale = qk
    N, d = Q.shape
    A = softmax_attention(Q, K, causal=True).numpy()
    s = np.linalg.svd(A, compute_uv=False)
    eps = float(np.finfo(np.float64).eps)
    tol = default_rank_tolerance(s, A.shape, eps)
    gap = _max_gap(logits(Q, K).numpy())
    target(gap, label="largest causal logit gap")
    target(-math.log10(max(s[-1] / s[0], 1e-320)), label="-log10 sigma_min/sigma_max")
    claim_log.example(N=N, d=d, logit_gap=gap)
    rank = int(np.sum(s > tol))
    if rank < N:
        with mpmath.workdps(40):
            s_mp = mpmath.svd_r(mpmath.matrix(A.tolist()), compute_uv=False)
            s_min = min(s_mp[i] for i in range(N))
        confirmed = bool(s_min <= tol)
        g2 = numerical_rank_gap_2x2(eps)
        refute(
            f"np.linalg.matrix_rank-style numerical rank {rank} < N = {N} (sigma_min {s[-1]:.3e} <= tol "
            f"{tol:.3e}; logit gap {gap:.6g} nats)",
            example={"N": N, "d": d, "Q": Q, "K": K, "sigma": s, "tol": tol},
            certified=confirmed,
            certificate=f"sigma_min of the stored matrix at 40 digits (mpmath svd_r) = {mpmath.nstr(s_min, 8)} "
                        f"{'<=' if confirmed else '>'} tol",
            boundary=f"N = 2: rank drops at logit gap > {g2:.6g} nats (bisection; ln(1/(2 eps)) = "
                     f"{math.log(1 / (2 * eps)):.6g})",
        )


# -- 003: rank(QK^T) <= d -------------------------------------------------------------------

@st.composite
def integer_qk(draw, n=(1, 10), d=(1, 6), bound=3):
    N = draw(st.integers(*n), label="N")
    dd = draw(st.integers(*d), label="d")
    ints = st.integers(-bound, bound)
    Q = draw(hnp.arrays(np.int64, (N, dd), elements=ints), label="Q")
    K = draw(hnp.arrays(np.int64, (N, dd), elements=ints), label="K")
    return Q, K


@pytest.mark.claim("rank-qk-at-most-d", reading="exact")
@given(qk=integer_qk())
def test_rank_qk_at_most_d_exact(qk, claim_log, claimed):
    Q, K = qk
    N, d = Q.shape
    bound = claimed.eval("bound", exact=True, N=N, d=d)
    r = exact_product_rank(Q, K)
    claim_log.example(N=N, d=d, rank=r)
    claim_log.track("rank - min(N, d)", r - min(N, d))
    note(f"N={N} d={d} exact rank(QK^T)={r}")
    if r > bound:
        refute(f"exact rank(QK^T) = {r} > {claimed.text('bound')} = {bound} (N={N}, d={d})",
               example={"N": N, "d": d, "Q": Q, "K": K}, certified=True,
               certificate="fmpq_mat rank (exact rational arithmetic)")
    claim_log.note("Exact ranks by python-flint fmpq_mat; 'rank - min(N, d)' = 0 shows the bound is attained.")


@pytest.mark.parametrize("device,dtype,reading", reading_params("rank-qk-at-most-d"))
@given(qk=qk_pairs(n=(2, 12), d=(1, 6)))
def test_rank_qk_numerical(device, dtype, reading, qk, claim_log, claimed):
    Q, K, scale = qk
    N, d = Q.shape
    bound = int(claimed.eval("bound", exact=True, N=N, d=d))
    M = logits(Q, K, scale=1.0, dtype=dtype, device=device).to("cpu", torch.float64).numpy()
    eps = float(torch.finfo(getattr(torch, dtype)).eps)
    s = np.linalg.svd(M, compute_uv=False)
    tol = default_rank_tolerance(s, M.shape, eps)
    r = int(np.sum(s > tol))
    if 0 <= bound < N:
        target(float(s[bound] / max(tol, 1e-300)), label="sigma_(bound+1) / tol")
    claim_log.example(N=N, d=d, numerical_rank=r)
    if r > bound:
        with mpmath.workdps(40):
            s_mp = mpmath.svd_r(mpmath.matrix(M.tolist()), compute_uv=False)
        confirmed = bool(s_mp[bound] > tol)
        refute(f"numerical rank of QK^T in {dtype} = {r} > {claimed.text('bound')} = {bound} "
               f"(sigma_(bound+1) = {s[bound]:.3e}, tol {tol:.3e}; N={N}, d={d})",
               example={"N": N, "d": d, "Q": Q, "K": K, "sigma": s}, certified=confirmed,
               certificate=f"sigma_(bound+1) of the stored matrix at 40 digits = {mpmath.nstr(s_mp[bound], 8)}")


# -- 003 定理 11.23 -------------------------------------------------------------------------

@st.composite
def wide_qk(draw):
    """``N > d``: the only case where min(N, d) < N bounds anything."""
    Q, K, scale = draw(qk_pairs(n=(2, 8), d=(1, 4), scale_exp=(-1.0, 1.0)))
    N, d = Q.shape
    if d >= N:
        Q, K = Q[:, : N - 1], K[:, : N - 1]
    return Q, K, scale


@pytest.mark.claim("theorem-11-23-softmax-rank-bound", reading="exact")
@given(qk=wide_qk())
def test_theorem_11_23_exact(qk, claim_log, claimed):
    Q, K, scale = qk
    N, d = Q.shape
    A = softmax_attention(Q, K).numpy()
    k = int(claimed.eval("bound", exact=True, N=N, d=d)) + 1
    claim_log.example(N=N, d=d)
    if k > N:
        return  # an N x N matrix cannot have rank > N: nothing to refute
    ok, info = certified_rank_at_least(lambda: arb_softmax_attention(Q, K), A, k)
    note(f"N={N} d={d}: minor {info['rows']}x{info['cols']} det {info['det']}")
    if ok:
        refute(
            f"rank softmax(QK^T/sqrt d) >= {k} > {claimed.text('bound')} = {k - 1} (N={N}, d={d})",
            example={"N": N, "d": d, "Q": Q, "K": K, "A": A},
            certified=True,
            certificate=f"arb ({info['bits']} bits): the {k}x{k} minor rows {info['rows']} cols {info['cols']} "
                        f"has det {info['det']}, an interval excluding 0",
        )
