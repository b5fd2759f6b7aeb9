"""Claims of 003 (textbook §11.3.3 and its echoes): the JL lemma's guarantee for attention (引言 of
11.3.3, 推论 11.10), Linformer as 003 writes it (定义 11.26, 引理 11.38, 定理 11.26 and its proof),
表 11.3.2, the Linformer row of 表 11.3.3 and the summary §11.3.7's restatement."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import torch
from flint import fmpq, fmpq_mat
from hypothesis import given, target
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attention_claims.maths import (
    identity_gap_lower_bound,
    matmul_count,
    meta_matmul_flops,
    mp_attention,
    mp_row_line_distance,
    op_count,
    rademacher_gram_mean,
)
from attention_claims.testkit import profiles, qk_pairs, refute

NS = (2, 10, 100, 10**3, 10**4, 10**5, 10**6)
EPS = st.integers(1, 999).map(lambda i: Fraction(i, 1000))


def _claim(cid: str, reading: str):
    return pytest.param(cid, reading, marks=pytest.mark.claim(cid, reading=reading), id=f"{cid}:{reading}")


def _exact(v) -> Fraction:
    return Fraction(str(v)) if isinstance(v, float) else Fraction(v)


def _ints(shape, lo=-3, hi=3):
    return hnp.arrays(np.int64, shape, elements=st.integers(lo, hi))


def _mp(a: np.ndarray) -> mpmath.matrix:
    return mpmath.matrix([[mpmath.mpf(int(v)) for v in row] for row in a])


def _fro(M: mpmath.matrix) -> mpmath.mpf:
    return mpmath.sqrt(mpmath.fsum(M[i, j] ** 2 for i in range(M.rows) for j in range(M.cols)))


def _beyond(dist, bound, Y) -> bool:
    """``dist > bound`` with room for the rounding of a 30-digit row-to-line distance (at most about
    ``1e-14 |Y|``: the square root of the cancellation in ``|y|^2 - (y.b)^2/|b|^2``)."""
    return dist - bound > mpmath.mpf(10) ** -12 * (1 + _fro(Y))


# -- 定理 11.26 (and the four places that repeat it) ---------------------------------------------


@st.composite
def linformer_inputs(draw, n=(1, 4), d=(1, 3)):
    """Integer ``Q = X W_Q``, ``K = X W_K``, ``V = X (2^j W_V)`` (exact in float64), ``X (N, d)``, and the inputs."""
    N, dd = draw(st.integers(*n), label="N"), draw(st.integers(*d), label="d")
    X = draw(_ints((N, dd)), label="X")
    W = [draw(_ints((dd, dd)), label=f"W_{c}") for c in "QKV"]
    j = draw(st.integers(0, 20), label="log2 V scale")
    return X @ W[0], X @ W[1], (X @ W[2]) << j, {"X": X, "W_Q": W[0], "W_K": W[1], "W_V": W[2] << j}


@pytest.mark.parametrize("cid,reading", [_claim("theorem-11-26-linformer-error-bound", "exact"), _claim("table-11-3-2-linformer-row", "error-bound"),
                                         _claim("table-11-3-3-linformer-row", "with-v"), _claim("jl-guarantees-low-rank-approximation", "document-theorem-11-26"),
                                         _claim("summary-jl-rigorous-guarantee", "document-theorem-11-26")])
@given(qkv=linformer_inputs(), eps=EPS)
@profiles.scaled(1.0, explain=False)
def test_linformer_error_bound(cid, reading, qkv, eps, claim_log, claimed):
    Q, K, V, inputs = qkv
    N, d = Q.shape
    with mpmath.workdps(30):
        Y = mp_attention(Q, K, V, dps=30)  # softmax(QK^T/sqrt d) V
        dist = mp_row_line_distance(Y, _mp(Q @ K.T @ V))  # <= |Y - t QK^T V| for every real t = 1/k
        bound = claimed.eval("error_bound", eps=mpmath.mpf(eps.numerator) / eps.denominator, N=N, d=d)
        beyond = _beyond(dist, bound, Y)
    target(float(dist - bound), label="error lower bound - eps")
    claim_log.example(N=N, d=d)
    if beyond:
        refute(f"N = {N}, d = {d}, eps = {eps}: some row of softmax(QK^T/sqrt d)V is {mpmath.nstr(dist, 10)} from "
               f"every multiple t (QK^T V)_i, so |softmax(QK^T/sqrt d)V - Q(K^T V/k)| >= {mpmath.nstr(dist, 10)} > "
               f"{claimed.text('error_bound')} = {mpmath.nstr(bound, 10)} for every k (spectral and Frobenius norm)",
               example={**inputs, "eps": str(eps)}, certified=True,
               certificate="30-digit mpmath: softmax(QK^T/sqrt d)V from the exact integer inputs, row-to-line "
                           "distances (attention_claims.maths.mp_row_line_distance)")


@pytest.mark.claim("table-11-3-3-linformer-row", reading="as-printed")
@given(N=st.integers(1, 8), d=st.integers(1, 8), data=st.data(), eps=EPS)
@profiles.scaled(1.0, explain=False)
def test_table_11_3_3_as_printed(N, d, data, eps, claim_log, claimed):
    claim_log.example(N=N, d=d)
    if N != d:
        refute(f"softmax(QK^T) is {N} x {N} but Q(K^T V/k) is {N} x {d} (Q, K, V of shape {N} x {d}): no norm of "
               f"their difference exists, so no k brings them within {claimed.text('error_bound')}",
               example={"N": N, "d": d}, certified=True, certificate="exact shapes of the two products")
    Q, K, V = (data.draw(_ints((N, d)), label=c) for c in "QKV")
    with mpmath.workdps(30):
        Y = mp_attention(Q, K, scale=1, dps=30)  # softmax(QK^T), as printed
        dist = mp_row_line_distance(Y, _mp(Q @ K.T @ V))
        bound = claimed.eval("error_bound", eps=mpmath.mpf(eps.numerator) / eps.denominator, N=N, d=d)
        beyond = _beyond(dist, bound, Y)
    if beyond:
        refute(f"N = d = {N}: a row of softmax(QK^T) is {mpmath.nstr(dist, 10)} > {mpmath.nstr(bound, 10)} from every "
               f"multiple of the matching row of QK^T V, so no k works", example={"Q": Q, "K": K, "V": V,
                                                                                   "eps": str(eps)},
               certified=True, certificate="30-digit mpmath row-to-line distances")


# -- 定义 11.26 ------------------------------------------------------------------------------------


@pytest.mark.claim("definition-11-26-linformer-formula", reading="approximates-attention")
@given(qkv=linformer_inputs(), k=st.integers(1, 64))
@profiles.scaled(1.0, explain=False)
def test_definition_11_26_approximates_attention(qkv, k, claim_log, claimed):
    Q, K, V, _ = qkv
    N, d = Q.shape
    rel = claimed.eval("rel_error", N=N, d=d)
    with mpmath.workdps(30):
        Y = mp_attention(Q, K, V, dps=30)
        B = _mp(Q @ K.T @ V)
        dist = mp_row_line_distance(Y, B)  # <= |Y - t B|_2 <= |Y - t B|_F for every real t
        allowed = rel * _fro(Y)  # |Y|_2 <= |Y|_F, so this also bounds the spectral-norm version
        at_k = _fro(Y - B / claimed.eval("divisor", k=mpmath.mpf(k), N=N, d=d))
        beyond = _beyond(dist, allowed, Y)
    claim_log.example(N=N, d=d)
    if beyond:
        refute(f"N = {N}, d = {d}: a row of AV is {mpmath.nstr(dist, 10)} from every multiple of the matching row of "
               f"QK^T V, more than {claimed.text('rel_error')} |AV|_F = {mpmath.nstr(allowed, 10)}: no k (no real "
               f"divisor) makes Q(K^T V)/({claimed.text('divisor')}) within it (at k = {k} the Frobenius error is "
               f"{mpmath.nstr(at_k, 10)})", example={"Q": Q, "K": K, "V": V, "k": k}, certified=True,
               certificate="30-digit mpmath from the exact integer inputs (attention_claims.maths.mp_row_line_distance)")


@pytest.mark.claim("definition-11-26-linformer-formula", reading="shape-d-by-d")
@given(N=st.one_of(st.sampled_from([1, 10**6]), st.integers(1, 10**6)), d=st.integers(1, 4096), k=st.integers(1, 4096))
def test_definition_11_26_shape(N, d, k, claim_log, claimed):
    K, V = torch.empty(N, d, device="meta"), torch.empty(N, d, device="meta")
    M = K.T @ V / float(claimed.eval("divisor", exact=True, k=k, N=N, d=d))
    want = tuple(int(claimed.eval(key, exact=True, N=N, d=d, k=k)) for key in ("shape_rows", "shape_cols"))
    claim_log.example(N=N, d=d)
    if tuple(M.shape) != want:
        refute(f"K, V of shape {N} x {d}: K^T V/k has shape {tuple(M.shape)}, not the claimed "
               f"{claimed.text('shape_rows')} x {claimed.text('shape_cols')} = {want}",
               example={"N": N, "d": d, "k": k}, certified=True, certificate="torch shape arithmetic on meta tensors")


@pytest.mark.claim("definition-11-26-linformer-formula", reading="k-bounds-rank")
@given(N=st.integers(1, 4), d=st.integers(1, 3), k=st.integers(1, 4), data=st.data())
@profiles.scaled(1.0, explain=False)
def test_definition_11_26_rank(N, d, k, data, claim_log, claimed):
    Q, K, V = (data.draw(_ints((N, d), -2, 2), label=c) for c in "QKV")
    div = claimed.eval("divisor", exact=True, k=k, N=N, d=d)
    M = Q @ K.T @ V  # exact integers
    r = fmpq_mat(N, d, [fmpq(int(v)) / fmpq(div.numerator, div.denominator) for v in M.ravel()]).rank()
    bound = claimed.eval("rank_bound", exact=True, k=k, N=N, d=d)
    claim_log.example(N=N, d=d, rank=r)
    if r > bound:
        refute(f"Q, K, V integer {N} x {d}, k = {k}: rank Q(K^T V/k) = {r} > {claimed.text('rank_bound')} = {bound} "
               f"(the rank is rank(Q K^T V) <= min(N, d) whatever k is)", example={"Q": Q, "K": K, "V": V, "k": k},
               certified=True, certificate="exact rank over the rationals (python-flint fmpq_mat)")


# -- 引理 11.38, 表 11.3.2: exact operation counts -------------------------------------------------


@st.composite
def count_sizes(draw):
    """``(N, d, k)``: N in [2, 10^6], d in [1, 10^4], k in [1, N], extremes drawn explicitly."""
    N = draw(st.one_of(st.sampled_from([2, 3, 4, 10**6]), st.integers(2, 10**6)), label="N")
    d = draw(st.one_of(st.sampled_from([1, 2, 10**4]), st.integers(1, 10**4)), label="d")
    k = draw(st.one_of(st.sampled_from([1, 2, max(1, N // 4), N]), st.integers(1, N)), label="k")
    return N, d, min(k, N)


def _ops(method: str, N: int, d: int, k: int) -> int:
    """Exact count; its matmul part must equal torch's FlopCounterMode count (else a suite bug)."""
    kw = {"m": d} if method == "linear" else {"k": k}
    if matmul_count(method, N, d, **kw) != meta_matmul_flops(method, N, d, **kw):
        raise RuntimeError(f"{method}: attention_claims.maths.matmul_count disagrees with FlopCounterMode at {N, d, k}")
    return op_count(method, N, d, **kw)


def _bound_check(method, key, N, d, k, claimed, claim_log):
    ops = _ops(method, N, d, k)
    c, f = _exact(claimed.eval("constant", exact=True)), _exact(claimed.eval(key, exact=True, N=N, d=d, k=k))
    if f > 0:
        target(float(Fraction(ops) / f), label=f"ops / {key}")
        claim_log.track(f"ops / ({claimed.text(key)})", float(Fraction(ops) / f))
    if ops > c * f:
        refute(f"{method}: exactly {ops} operations at N = {N}, d = {d}, k = {k}, more than {c} * "
               f"({claimed.text(key)}) = {c * f}", example={"method": method, "N": N, "d": d, "k": k, "ops": ops},
               certified=True, certificate="exact integer operation counts (attention_claims.maths.op_count; matmul part "
                                           "equal to torch FlopCounterMode on meta tensors)")


@pytest.mark.parametrize("cid,reading", [_claim("lemma-11-38-linformer-complexity", "linformer-paper"),
                                         _claim("jl-guarantees-low-rank-approximation", "linformer-complexity-reduction"),
                                         _claim("summary-jl-rigorous-guarantee", "linformer-complexity-reduction")])
@given(size=count_sizes())
def test_linformer_complexity_reduction(cid, reading, size, claim_log, claimed):
    N, d, k = size
    _bound_check("standard", "standard", N, d, k, claimed, claim_log)
    _bound_check("linformer", "linformer", N, d, k, claimed, claim_log)
    std = op_count("standard", N, d)
    lo, hi = 1, N + 1  # smallest k with ops(Linformer) >= ops(standard), N + 1 if none (ops increase in k)
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if op_count("linformer", N, d, k=mid) >= std else (mid + 1, hi)
    claim_log.example(N=N, d=d, k=k)
    for kk in (k, lo):
        if kk <= N and op_count("linformer", N, d, k=kk) >= std and claimed.eval("saving_domain", exact=True,
                                                                                N=N, d=d, k=kk):
            refute(f"N = {N}, d = {d}, k = {kk} satisfies {claimed.text('saving_domain')}, yet Linformer (eq. (7)) "
                   f"takes {op_count('linformer', N, d, k=kk)} operations >= {std} for standard attention",
                   example={"N": N, "d": d, "k": kk}, certified=True, certificate="exact integer operation counts")


@pytest.mark.parametrize("cid,reading,method,key", [
    pytest.param("lemma-11-38-linformer-complexity", "formula-of-definition-11-26", "doc-linformer", "linformer",
                 marks=pytest.mark.claim("lemma-11-38-linformer-complexity", reading="formula-of-definition-11-26"), id="lemma-11-38-doc"),
    pytest.param("table-11-3-2-linformer-row", "cost-of-written-formula", "doc-linformer", "cost",
                 marks=pytest.mark.claim("table-11-3-2-linformer-row", reading="cost-of-written-formula"), id="table-linformer-doc"),
    pytest.param("table-11-3-2-linformer-row", "cost-of-linformer-paper", "linformer", "cost",
                 marks=pytest.mark.claim("table-11-3-2-linformer-row", reading="cost-of-linformer-paper"), id="table-linformer-paper"),
    pytest.param("table-11-3-2-standard-attention-row", "notation-for-definition-11-24", "standard", "cost",
                 marks=pytest.mark.claim("table-11-3-2-standard-attention-row", reading="notation-for-definition-11-24"), id="table-standard"),
    pytest.param("table-11-3-2-linear-attention-row", "cost-feature-dim-d", "linear", "cost",
                 marks=pytest.mark.claim("table-11-3-2-linear-attention-row", reading="cost-feature-dim-d"), id="table-linear"),
])
@given(size=count_sizes())
@profiles.scaled(1.0, explain=False)
def test_cost_bound(cid, reading, method, key, size, claim_log, claimed):
    N, d, k = size
    claim_log.example(N=N, d=d, k=k)
    _bound_check(method, key, N, d, k, claimed, claim_log)


@pytest.mark.claim("table-11-3-2-linear-attention-row", reading="cost-linear-in-n")
@given(d=st.one_of(st.sampled_from([1, 10**4]), st.integers(1, 10**4)))
def test_linear_attention_cost_linear_in_n(d, claim_log, claimed):
    growth = _exact(claimed.eval("growth_max", exact=True))
    ratios = [Fraction(_ops("linear", N, d, 1)) / _exact(claimed.eval("cost", exact=True, N=N, d=d)) for N in NS]
    hi, lo = max(range(len(NS)), key=ratios.__getitem__), min(range(len(NS)), key=ratios.__getitem__)
    spread = ratios[hi] / ratios[lo]
    claim_log.example(d=d)
    claim_log.track("max / min of ops / cost over N = 2..1e6", float(spread))
    if spread >= growth:
        refute(f"linear attention (m = d = {d}): ops / ({claimed.text('cost')}) is {float(ratios[lo]):.6g} at N = "
               f"{NS[lo]} and {float(ratios[hi]):.6g} at N = {NS[hi]}, a factor {float(spread):.4g} >= {growth}: "
               f"the cost formula does not grow like the exact count in N", example={"d": d}, certified=True,
               certificate="exact integer operation counts")


# -- 表 11.3.2, the standard row read literally ---------------------------------------------------


@pytest.mark.claim("table-11-3-2-standard-attention-row", reading="literal-without-scale")
@given(qk=qk_pairs(n=(1, 3), d=(1, 3), scale_exp=(-1.0, 1.0)), data=st.data())
@profiles.scaled(0.5, explain=False)
def test_table_standard_row_literal(qk, data, claim_log, claimed):
    Q, K, _ = qk
    N, d = Q.shape
    V = data.draw(_ints((N, 2)), label="V").astype(np.float64)
    with mpmath.workdps(40):
        printed = mp_attention(Q, K, V, scale=claimed.eval("printed_scale", d=mpmath.mpf(d)), dps=40)
        ref = mp_attention(Q, K, V, dps=40)  # 定义 11.24: softmax(QK^T/sqrt d)V
        diff = max(abs(printed[i, c] - ref[i, c]) for i in range(N) for c in range(2))
    claim_log.example(N=N, d=d)
    if diff > mpmath.mpf(10) ** -25:
        refute(f"softmax(QK^T * {claimed.text('printed_scale')})V differs from softmax(QK^T/sqrt d)V by "
               f"{mpmath.nstr(diff, 8)} (N = {N}, d = {d}): the row's error is not 0 as printed",
               example={"Q": Q, "K": K, "V": V}, certified=True, certificate="40-digit mpmath from the float64 inputs")


# -- 推论 11.10 ------------------------------------------------------------------------------------


@st.composite
def planar_points(draw):
    """Integer points of R^d (d in [3, 5]) supported on two coordinates, and those coordinates."""
    d = draw(st.integers(3, 5), label="d")
    axes = sorted(draw(st.lists(st.integers(0, d - 1), min_size=2, max_size=2, unique=True), label="axes"))
    pts = draw(_ints((draw(st.integers(2, 5), label="n"), 2), -4, 4), label="coordinates")
    X = np.zeros((pts.shape[0], d), dtype=np.int64)
    X[:, axes] = pts
    return X, axes


@pytest.mark.claim("corollary-11-10-inner-products-preserved", reading="exact")
@given(pts=planar_points(), eps=EPS)
@profiles.scaled(1.0, explain=False)
def test_corollary_11_10_exact(pts, eps, claim_log, claimed):
    X, axes = pts
    PX = X[:, axes]  # the coordinate projection R^d -> R^2
    claim_log.example(n=len(X), d=X.shape[1])
    for i, j in itertools.product(range(len(X)), repeat=2):
        D, PD = int((X[i] - X[j]) @ (X[i] - X[j])), int((PX[i] - PX[j]) @ (PX[i] - PX[j]))
        if not (1 - eps) * D <= PD <= (1 + eps) * D:
            raise RuntimeError("the coordinate projection should be an isometry on these points")
        ip, pip = int(X[i] @ X[j]), int(PX[i] @ PX[j])
        lo, hi = claimed.eval("lower", exact=True, eps=eps, ip=ip), claimed.eval("upper", exact=True, eps=eps, ip=ip)
        if not lo <= pip <= hi:
            refute(f"x_{i} = {X[i].tolist()}, x_{j} = {X[j].tolist()}, eps = {eps}: P (onto coordinates {axes}) keeps "
                   f"every squared distance exactly, yet <Px_i, Px_j> = {pip} is outside [{claimed.text('lower')}, "
                   f"{claimed.text('upper')}] = [{lo}, {hi}]", example={"X": X, "axes": axes, "eps": str(eps)},
                   certified=True, certificate="exact rational arithmetic")


@pytest.mark.claim("corollary-11-10-inner-products-preserved", reading="additive-polarization")
@given(d=st.integers(1, 4), data=st.data(), eps=EPS,
       abc=st.tuples(*[st.integers(-100, 100).map(lambda i: Fraction(i, 100))] * 3))
def test_corollary_11_10_additive(d, data, eps, abc, claim_log, claimed):
    x, y = data.draw(_ints(d, -4, 4), label="x"), data.draw(_ints(d, -4, 4), label="y")
    nx, ny, nxy, ip = int(x @ x), int(y @ y), int((x - y) @ (x - y)), int(x @ y)
    bound = claimed.eval("additive_bound", exact=True, eps=eps, nx=nx, ny=ny, nxy=nxy, ip=ip)

    def gram(a, b, c):  # |Px|^2, |Py|^2 = (1 + a) nx, (1 + b) ny; <Px, Py> by polarization from (1 + c) nxy
        A, B = (1 + a) * nx, (1 + b) * ny
        return A, B, (A + B - (1 + c) * nxy) / 2

    cases = [tuple(eps * t for t in abc)] + list(itertools.product((-eps, eps), repeat=3))
    grams = [gram(*c) for c in cases]
    psd = [A >= 0 and B >= 0 and A * B >= C * C for A, B, C in grams]  # realisable by a linear P
    devs = [abs(C - ip) for _, _, C in grams]
    over = [i for i in range(len(cases)) if devs[i] > bound]
    top = max(devs[1:])
    claim_log.example(d=d)
    if over or top != bound:
        i = next((i for i in over if psd[i]), over[0]) if over else devs.index(top, 1)
        a, b, c = cases[i]
        refute(f"x = {x.tolist()}, y = {y.tolist()}, eps = {eps}: the Gram matrix with |Px|^2, |Py|^2, |Px - Py|^2 = "
               f"(1 + {a}) {nx}, (1 + {b}) {ny}, (1 + {c}) {nxy} (positive semidefinite: {psd[i]}) moves <x, y> = "
               f"{ip} by {devs[i]}; {claimed.text('additive_bound')} = {bound} "
               + ("is exceeded" if over else f"is never reached (largest deviation over the 8 corners: {top})"),
               example={"x": x, "y": y, "eps": str(eps), "abc": [str(t) for t in cases[i]]}, certified=True,
               certificate="exact rational arithmetic")
    claim_log.track("bound attained at a positive semidefinite corner (0/1)",
                    int(any(psd[i] and devs[i] == bound for i in range(1, 9))))


# -- proof of 定理 11.26: P^T P ~ I_d -------------------------------------------------------------


@pytest.mark.claim("proof-11-26-projection-near-identity", reading="operator-norm")
@given(d=st.integers(2, 8), data=st.data(), eps=EPS, seed=st.integers(0, 2**32 - 1))
@profiles.scaled(1.0, explain=False)
def test_projection_operator_norm(d, data, eps, seed, claim_log, claimed):
    k = data.draw(st.integers(1, d - 1), label="k")
    var = claimed.eval("entry_variance", exact=True, k=k, d=d)
    P = np.random.default_rng(seed).standard_normal((k, d)) * math.sqrt(var)
    lower, rank = identity_gap_lower_bound(P)
    tol = _exact(claimed.eval("tolerance", exact=True, eps=eps, k=k, d=d))
    claim_log.example(k=k, d=d, norm_lower_bound=float(lower))
    if lower > tol:
        refute(f"P ({k} x {d}, N(0, {var}) entries, seed {seed}): |P^T P - I_d|_2 >= {float(lower):.6g} > "
               f"{claimed.text('tolerance')} = {tol} (eps = {eps}); rank P^T P = {rank} < d = {d} alone gives >= 1, "
               f"the Rayleigh quotients of P^T P - I_d give the rest",
               example={"P": P, "eps": str(eps)}, certified=True,
               certificate="exact rational rank of P^T P and Rayleigh quotients (attention_claims.maths."
                           "identity_gap_lower_bound)")


@pytest.mark.claim("proof-11-26-projection-near-identity", reading="expectation")
@given(d=st.integers(1, 6), data=st.data())
@profiles.scaled(0.5)
def test_projection_expectation(d, data, claim_log, claimed):
    k = data.draw(st.integers(1, 12 // d), label="k")
    var = claimed.eval("entry_variance", exact=True, k=k, d=d)
    claim_log.example(k=k, d=d)
    if var < 0:
        refute(f"entry variance {claimed.text('entry_variance')} = {var} < 0 at k = {k}", example={"k": k, "d": d},
               certified=True, certificate="exact rational arithmetic")
    G = rademacher_gram_mean(k, d, var)
    bad = [(a, b) for a in range(d) for b in range(d) if G[a][b] != (a == b)]
    if bad:
        a, b = bad[0]
        refute(f"P {k} x {d} with entries +-sqrt({claimed.text('entry_variance')}) = +-sqrt({var}): E[P^T P]_{a}{b} = "
               f"{G[a][b]}, not {int(a == b)} (all 2^{k * d} sign patterns)", example={"k": k, "d": d},
               certified=True, certificate="exact enumeration (attention_claims.maths.rademacher_gram_mean)")
