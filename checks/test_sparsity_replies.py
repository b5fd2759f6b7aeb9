"""kexue.fm/archives/9889 (004): the introduction's decoder full-rank remark, the entropy remarks of
"稀疏程度", and the mathematical statements in the reader replies (SVD of the logits, weighted sums,
inner products describing any pairing, Hurley & Rickard's sparsity properties, smaller-is-sparser).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import torch
from flint import arb, fmpq, fmpq_mat
from hypothesis import assume, given, note, target
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attention_claims.maths import (
    arb_kernel_diagonal,
    arb_softmax_attention,
    babies,
    bill_gates,
    certified_sign,
    certify_nonzero_det,
    cloning,
    entropy_arb,
    exact_rank,
    gini_index,
    mp_softmax_entry,
    rising_tide,
    robin_hood,
    s_squared_exact,
    softmax_attention,
    softmax_diagonal_underflow_gap,
    underflow_log_threshold,
)
from attention_claims.testkit import profiles, qk_pairs, reading_params, refute, require_device


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """Run this module's small torch ops on one intra-op thread (restored afterwards): on a loaded
    2-core machine, waking the thread pool costs milliseconds per tiny op, far more than the op."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _fr(x: Fraction) -> fmpq:
    return fmpq(x.numerator, x.denominator)


# -- introduction: a decoder's masked attention is full rank ------------------------------------

def _max_gap(z: np.ndarray) -> float:
    """Largest causal-row logit gap ``max_{j<=i} z_ij - z_ii`` (nats)."""
    return max(float(np.max(z[i, : i + 1]) - z[i, i]) for i in range(z.shape[0]))


@pytest.mark.claim("decoder-attention-lower-triangular-full-rank-9889", reading="exact")
@given(qk=qk_pairs(n=(1, 6), d=(1, 4)))
@profiles.scaled(0.25)
def test_decoder_full_rank_exact(qk, claim_log):
    Q, K, scale = qk
    N, d = Q.shape
    ok, det, bits = certify_nonzero_det(lambda: arb_softmax_attention(Q, K, causal=True))
    diag = arb_kernel_diagonal("elu+1", Q, K)  # phi(q_i).phi(k_i), phi = elu + 1
    claim_log.example(N=N, d=d, logit_scale=scale)
    note(f"N={N} d={d} scale={scale:.3e} det={det}")
    if not ok:
        refute(f"det of the causal softmax matrix could not be certified non-zero up to {bits} bits",
               example={"Q": Q, "K": K}, certified=False)
    if certified_sign(det) != 1 or any(certified_sign(v) != 1 for v in diag):
        refute(f"softmax det {det} or an elu+1 diagonal entry is not certified positive (N={N})",
               example={"Q": Q, "K": K}, certified=True, certificate="arb interval arithmetic")
    claim_log.note("Softmax: det A certified > 0 (arb); elu+1 linear attention: every diagonal phi(q_i).phi(k_i) "
                   "certified > 0, so the normalised lower-triangular matrix has det > 0.")


@pytest.mark.claim("decoder-attention-lower-triangular-full-rank-9889", reading="relu-features-exact")
@given(data=st.data(), N=st.integers(1, 5), d=st.integers(1, 3))
def test_decoder_relu_features_rank(data, N, d, claim_log):
    ints = hnp.arrays(np.int64, (N, d), elements=st.integers(-3, 3))
    Q, K = data.draw(ints, label="Q"), data.draw(ints, label="K")
    U = np.tril(np.maximum(Q, 0) @ np.maximum(K, 0).T)  # causal relu linear attention, before normalisation
    r = exact_rank(U) if U.any() else 0
    claim_log.example(N=N, d=d, rank=r)
    if r < N:
        i = int(np.flatnonzero(np.diag(U) == 0)[0])
        refute(f"causal linear attention with relu features: phi(q_{i}).phi(k_{i}) = 0 exactly, so the "
               f"{N}x{N} lower-triangular matrix has rank {r} < N (row normalisation keeps the rank)",
               example={"Q": Q, "K": K, "row": i}, certified=True, certificate="exact integer rank (fmpz)")


@st.composite
def small_integer_qk(draw):
    """``(Q * scale, K, scale)`` with small integer ``Q, K`` (N <= 3, d <= 2) and a logit scale 1e-3..1e4:
    few choices, so a counterexample shrinks quickly."""
    N, d = draw(st.integers(2, 3), label="N"), draw(st.integers(1, 2), label="d")
    ints = hnp.arrays(np.float64, (N, d), elements=st.integers(-3, 3).map(float))
    Q, K = draw(ints, label="Q / scale"), draw(ints, label="K")
    scale = draw(st.sampled_from([1e-3, 1.0, 10.0, 1e2, 1e3, 1e4]), label="logit scale")
    return Q * scale, K, scale


@pytest.mark.parametrize("device,dtype,reading", reading_params("decoder-attention-lower-triangular-full-rank-9889"))
@given(qk=small_integer_qk())
def test_decoder_full_rank_float(device, dtype, reading, qk, claim_log):
    require_device(device)
    Q, K, scale = qk
    N, d = Q.shape
    A = softmax_attention(Q, K, causal=True, dtype=dtype, device=device).to("cpu", torch.float64).numpy()
    z = (Q @ K.T) / math.sqrt(d)
    gap = _max_gap(z)
    target(gap, label="largest causal logit gap")
    claim_log.example(N=N, d=d, logit_gap=gap)
    if not np.isfinite(A).all():
        refute(f"{dtype} on {device}: non-finite attention entries", example={"Q": Q, "K": K}, certified=True,
               certificate="stored entries read back exactly")
    rank = exact_rank(A)
    if rank < N:
        i = int(np.flatnonzero(np.diag(A) == 0)[0])
        true_aii = mp_softmax_entry(z[i, : i + 1], i)
        refute(f"computed in {dtype} on {device}, the {N}x{N} causal softmax matrix has exact rank {rank} < N: "
               f"A[{i},{i}] = 0 (true value {mpmath.nstr(true_aii, 6)}, logit gap {gap:.6g} nats)",
               example={"N": N, "d": d, "Q": Q, "K": K, "row": i, "logit_gap": gap}, certified=True,
               certificate="exact rational rank of the stored entries (python-flint); the true A_ii by 50-digit mpmath",
               boundary=f"the diagonal underflows at logit gap > {softmax_diagonal_underflow_gap(dtype, device):.6g} "
                        f"nats ({dtype}, {device}; bisection; IEEE -ln(subnormal_min/2) = "
                        f"{-underflow_log_threshold(dtype):.6g})")


# -- entropy as a concentration measure ------------------------------------------------------

@st.composite
def probability_vector(draw, n=None):
    n = draw(st.integers(1, 8)) if n is None else n
    w = draw(st.lists(st.integers(0, 12), min_size=n, max_size=n).filter(any))
    t = sum(w)
    return [Fraction(v, t) for v in w]


@pytest.mark.claim("lower-entropy-more-concentrated", reading="min-entropy-bound")
@given(p=probability_vector())
def test_min_entropy_bound(p, claim_log):
    h = entropy_arb(p)
    gap = arb(_fr(max(p))) - (-h).exp()
    claim_log.example(n=len(p), H=float(h.mid()))
    if certified_sign(gap) < 0:
        refute(f"max p = {max(p)} < exp(-H) = {(-h).exp()}", example={"p": [str(v) for v in p]}, certified=True,
               certificate=f"arb: max p - exp(-H) = {gap}")
    claim_log.note("max_i p_i - exp(-H(p)) is never certified negative (arb); it is 0 at one-hot and uniform p.")


@st.composite
def flat_probability_vector(draw, n: int):
    """Uniform on k of the n entries."""
    k = draw(st.integers(1, n))
    return [Fraction(1, k)] * k + [Fraction(0)] * (n - k)


@pytest.mark.claim("lower-entropy-more-concentrated", reading="top-weight-order")
@given(n=st.integers(2, 4), data=st.data())
def test_entropy_orders_top_weight(n, data, claim_log):
    p = data.draw(st.one_of(flat_probability_vector(n), probability_vector(n)), label="p")
    pp = data.draw(probability_vector(n), label="p'")
    dh = certified_sign(entropy_arb(p) - entropy_arb(pp))
    claim_log.example(n=n)
    if dh == -1 and not max(p) > max(pp):
        refute(f"H(p) < H(p') but max p = {max(p)} <= max p' = {max(pp)} (p = {[str(v) for v in p]}, "
               f"p' = {[str(v) for v in pp]})", example={"p": [str(v) for v in p], "p_prime": [str(v) for v in pp]},
               certified=True, certificate="H(p) - H(p') an arb interval below 0; the maxima exact rationals")


# -- unnormalised attention --------------------------------------------------------------------

def _rows(Q, K):
    """GAU rows relu(q.k)^2 / n and Non-local rows q.k / n, exactly (Fractions), for integer Q, K."""
    n = len(K)
    logits = [[sum(int(a) * int(b) for a, b in zip(q, k, strict=True)) for k in K] for q in Q]
    gau = [[Fraction(max(z, 0) ** 2, n) for z in row] for row in logits]
    nonlocal_rows = [[Fraction(z, n) for z in row] for row in logits]
    return gau, nonlocal_rows


def _unit_l2_row(t: list[Fraction]) -> list[Fraction]:
    """A non-negative rational row of unit l2 norm (an l2-normalised attention row, kexue.fm/archives/9105):
    the entrywise absolute value of the inverse stereographic projection (2t, 1 - |t|^2) / (1 + |t|^2) of t."""
    s = sum(x * x for x in t)
    return [abs(2 * x / (1 + s)) for x in t] + [abs((1 - s) / (1 + s))]


@pytest.mark.claim("unnormalised-attention-not-distributions", reading="exact")
@given(data=st.data(), N=st.integers(1, 6), d=st.integers(1, 4))
def test_unnormalised_rows_have_s(data, N, d, claim_log):
    ints = hnp.arrays(np.int64, (N, d), elements=st.integers(-3, 3))
    gau, nl = _rows(data.draw(ints, label="Q"), data.draw(ints, label="K"))
    t = data.draw(st.lists(st.builds(Fraction, st.integers(-9, 9), st.integers(1, 9)), min_size=N - 1,
                           max_size=N - 1), label="t (l2-normalised row)")
    l2_row = _unit_l2_row(t)
    claim_log.example(N=N)
    if sum(v * v for v in l2_row) != 1:
        raise RuntimeError("_unit_l2_row did not give a unit vector")  # a bug of the suite, not of the claim
    if sum(1 for v in l2_row if v) >= 2 and not sum(l2_row) > 1:
        refute(f"the unit-l2 row {[str(v) for v in l2_row]} with two non-zero entries sums to {sum(l2_row)}, not > 1",
               example={"row": [str(v) for v in l2_row]}, certified=True, certificate="exact rationals")
    for row in gau + nl + [l2_row]:
        if any(row):
            s2 = s_squared_exact(row)
            if not Fraction(1, N) <= s2 <= 1:
                refute(f"S^2 = {s2} of a row outside [1/n, 1]", example={"row": [str(v) for v in row]},
                       certified=True, certificate="exact rationals")


@pytest.mark.claim("unnormalised-attention-not-distributions", reading="exact")
def test_unnormalised_rows_are_not_distributions(claim_log):
    found_sum = found_neg = None
    for q in range(-2, 3):  # a small exhaustive search over 1-D queries and two keys
        for k1 in range(-2, 3):
            for k2 in range(-2, 3):
                gau, nl = _rows([[q]], [[k1], [k2]])
                if found_sum is None and any(gau[0]) and sum(gau[0]) != 1:
                    found_sum = (q, k1, k2, gau[0])
                if found_neg is None and any(v < 0 for v in nl[0]):
                    found_neg = (q, k1, k2, nl[0])
    claim_log.example()
    if found_sum is None or found_neg is None:
        refute("every GAU row sums to 1 and no Non-local entry is negative on the searched inputs",
               example={}, certified=True, certificate="exhaustive exact search")
    l2_row = _unit_l2_row([Fraction(1, 2)])  # (4/5, 3/5): unit l2 norm, sum 7/5
    if sum(v * v for v in l2_row) != 1 or sum(l2_row) == 1:
        refute(f"the unit-l2 row {[str(v) for v in l2_row]} sums to 1", example={}, certified=True,
               certificate="exact rationals")
    claim_log.note(f"Witnesses (exact): GAU row for q={found_sum[0]}, k=({found_sum[1]}, {found_sum[2]}) sums to "
                   f"{sum(found_sum[3])}; Non-local row for q={found_neg[0]}, k=({found_neg[1]}, {found_neg[2]}) "
                   f"is {[str(v) for v in found_neg[3]]}; the l2-normalised row {[str(v) for v in l2_row]} sums to "
                   f"{sum(l2_row)}. None is a probability vector; S is defined for all three.")


# -- reader: SVD of the logits -----------------------------------------------------------------

@pytest.mark.claim("reader-logits-svd-rotation", reading="cpu-float64")
@given(data=st.data(), N=st.integers(1, 8), D=st.integers(1, 8), d=st.integers(1, 8))
def test_logits_svd(data, N, D, d, claim_log):
    el = st.floats(-10, 10, allow_subnormal=False)
    X = data.draw(hnp.arrays(np.float64, (N, D), elements=el), label="X")
    Wq = data.draw(hnp.arrays(np.float64, (D, d), elements=el), label="W_q")
    Wk = data.draw(hnp.arrays(np.float64, (D, d), elements=el), label="W_k")
    M = Wq @ Wk.T
    U, s, Vt = np.linalg.svd(M, full_matrices=True)
    eye = np.eye(D)
    orth = max(np.abs(U.T @ U - eye).max(), np.abs(Vt @ Vt.T - eye).max())
    dets = (abs(abs(np.linalg.det(U)) - 1), abs(abs(np.linalg.det(Vt)) - 1))
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
               certificate=f"40-digit mpmath SVD: orthogonality error {mpmath.nstr(orth_mp, 5)}")
    claim_log.note("Full SVD (float64): U, V orthogonal (det +-1: rotation, or rotation with a reflection) and "
                   "X U Sigma V^T X^T = X W_q W_k^T X^T within 1e-10 relative.")


@pytest.mark.claim("reader-output-weighted-combination", reading="cpu-float64")
@given(qk=qk_pairs(n=(1, 8), d=(1, 6), scale_exp=(-3.0, 3.0)), data=st.data())
def test_output_is_weighted_combination(qk, data, claim_log):
    Q, K, scale = qk
    N, d = Q.shape
    V = data.draw(hnp.arrays(np.float64, (N, 3), elements=st.floats(-5, 5)), label="V")
    q, k, v = (torch.as_tensor(x)[None] for x in (Q, K, V))
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v)[0].numpy()
    A = softmax_attention(Q, K).numpy()
    err = float(np.abs(out - A @ V).max()) / max(float(np.abs(V).max()), 1e-300)
    row_err = float(np.abs(A.sum(axis=1) - 1).max())
    claim_log.example(N=N, d=d, logit_scale=scale)
    # tolerance 1e-12 relative to max|V| and on the row sums
    if err > 1e-12 or row_err > 1e-12 or (A < 0).any():
        refute(f"attention output differs from A V by {err:.3e} (relative), or weights are not a convex combination "
               f"(row-sum error {row_err:.3e})", example={"Q": Q, "K": K, "V": V}, certified=False,
               certificate="float64; not re-computed")


# -- reply: inner products describe any pairing --------------------------------------------------

@pytest.mark.claim("reply-inner-products-express-any-pairing", reading="exact")
@given(N=st.integers(1, 7), M=st.integers(1, 7), r=st.integers(1, 7), data=st.data())
def test_any_pairing_is_an_inner_product(N, M, r, data, claim_log):
    ints = st.integers(-3, 3)
    A = data.draw(st.lists(ints, min_size=N * r, max_size=N * r), label="A")
    B = data.draw(st.lists(ints, min_size=r * M, max_size=r * M), label="B")
    target_m = fmpq_mat(N, r, A) * fmpq_mat(r, M, B)  # a pairing matrix of rank <= r (often lower)
    R, rank = target_m.rref()
    pivots = []
    for i in range(rank):
        pivots.append(next(j for j in range(M) if R[i, j] != 0))
    Qm = fmpq_mat(N, max(rank, 1), [target_m[i, pivots[c]] if c < rank else 0 for i in range(N)
                                    for c in range(max(rank, 1))])
    Km = fmpq_mat(M, max(rank, 1), [R[c, j] if c < rank else 0 for j in range(M) for c in range(max(rank, 1))])
    rebuilt = Qm * Km.transpose()
    target(float(rank), label="rank of the pairing matrix")
    claim_log.example(N=N, M=M, rank=rank)
    if rebuilt != target_m or rank > min(N, M):
        refute(f"no exact factorisation Q K^T with d = rank = {rank} found for an {N}x{M} pairing matrix",
               example={"A": A, "B": B}, certified=True, certificate="exact rationals (fmpq_mat)")
    claim_log.note("Every pairing matrix M = Q K^T exactly with d = rank M <= min(N, M) (rank factorisation from the "
                   "reduced row echelon form, fmpq); fewer dimensions cannot work since rank(Q K^T) <= d.")


# -- replies on Hurley & Rickard -------------------------------------------------------------------

nonneg_vec = st.lists(st.integers(0, 12), min_size=2, max_size=10).filter(lambda v: any(v) and len(set(v)) > 1)


@pytest.mark.claim("reader-sparsity-properties-reversed", reading="exact")
@given(x=nonneg_vec, data=st.data())
def test_hurley_rickard_reversed(x, data, claim_log):
    x = [Fraction(v) for v in x]
    s2 = s_squared_exact(x)
    n = len(x)
    i = max(range(n), key=lambda t: x[t])
    j = min(range(n), key=lambda t: x[t])
    t = data.draw(st.integers(1, 99), label="Robin Hood share (percent of half the gap)")
    alpha = (x[i] - x[j]) / 2 * Fraction(t, 100)
    c = data.draw(st.integers(1, 50), label="scale") / Fraction(7)
    tide = data.draw(st.integers(1, 50), label="rising tide") / Fraction(3)
    g = data.draw(st.integers(0, n - 1), label="Bill Gates index")
    others = [v for k, v in enumerate(x) if k != g]
    c_o, s_o = sum(others), sum(v * v for v in others)
    assume(c_o > 0)  # with every other entry 0 the vector is one-hot whatever x_g is
    t0 = max(x[g], s_o / c_o) + 1  # S^2(t) = (c+t)^2/(n(s+t^2)) decreases for t > s/c
    more = data.draw(st.integers(1, 100), label="extra wealth") / Fraction(4)
    checks = {
        "D1 Robin Hood raises S": s_squared_exact(robin_hood(x, i, j, alpha)) > s2,
        "D2 scaling keeps S": s_squared_exact([c * v for v in x]) == s2,
        "D3 rising tide raises S": s_squared_exact(rising_tide(x, tide)) > s2,
        "D4 cloning keeps S": s_squared_exact(cloning(x)) == s2,
        "P1 Bill Gates lowers S": s_squared_exact(bill_gates(x, g, t0 - x[g] + more))
        < s_squared_exact(bill_gates(x, g, t0 - x[g])),
        "P2 babies lower S": s_squared_exact(babies(x)) < s2,
    }
    claim_log.example(n=n)
    bad = [k for k, ok in checks.items() if not ok]
    if bad:
        refute(f"S violates the reversed Hurley-Rickard properties {bad} at x = {[str(v) for v in x]}",
               example={"x": [str(v) for v in x]}, certified=True, certificate="exact rationals")
    claim_log.note("All six Hurley & Rickard properties hold for S with the direction reversed, strictly for the "
                   "four directional ones (exact).")


@pytest.mark.claim("reply-smaller-s-sparser-like-entropy", reading="exact")
@given(p=probability_vector(), data=st.data())
def test_smaller_is_sparser(p, data, claim_log):
    n = len(p)
    s2 = s_squared_exact(p)
    h = entropy_arb(p)
    one_hot = max(p) == 1
    uniform = len(set(p)) == 1
    log_n = arb(n).log()
    gini = gini_index(p)
    problems = []
    if (s2 == Fraction(1, n)) != one_hot or (s2 == 1) != uniform:
        problems.append("S extremes are not exactly one-hot / uniform")
    if one_hot != (certified_sign(h) == 0) or (not one_hot and certified_sign(h) != 1):
        problems.append("entropy is not minimal (0) exactly at one-hot")
    if uniform != (certified_sign(log_n - h) == 0) or (not uniform and certified_sign(log_n - h) != 1):
        problems.append("entropy is not maximal (ln n) exactly at uniform")
    if n > 1 and ((gini == 1 - Fraction(1, n)) != one_hot or (gini == 0) != uniform):
        problems.append("Gini extremes are not exactly one-hot / uniform")
    pp = data.draw(probability_vector(n), label="p'")
    with mpmath.workdps(50):
        def hoyer(v):
            l1 = mpmath.fsum(mpmath.mpf(x.numerator) / x.denominator for x in v)
            l2 = mpmath.sqrt(mpmath.fsum((mpmath.mpf(x.numerator) / x.denominator) ** 2 for x in v))
            return (mpmath.sqrt(n) - l1 / l2) / (mpmath.sqrt(n) - 1) if n > 1 else mpmath.mpf(0)

        dh = hoyer(p) - hoyer(pp)
        ds = s2 - s_squared_exact(pp)
        reversed_ok = n == 1 or ds == 0 or (ds > 0) == bool(dh < -mpmath.mpf("1e-40"))
    if not reversed_ok:
        problems.append("Hoyer's measure is not a decreasing function of S")
    claim_log.example(n=n)
    if problems:
        refute("; ".join(problems), example={"p": [str(v) for v in p], "p_prime": [str(v) for v in pp]},
               certified=True, certificate="exact rationals; arb for logarithms; Hoyer at 50 digits")
    claim_log.note("S and entropy are smallest exactly at one-hot and largest exactly at uniform; Hurley & Rickard's "
                   "Gini index and Hoyer measure go the other way (Hoyer = sqrt(n)(1 - S)/(sqrt(n) - 1)).")
