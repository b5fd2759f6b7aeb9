"""The attention matrix itself: its definition and what its rows are.

定义 11.24 and 引理 11.33 (``definition-11-24-attention-matrix``, ``lemma-11-33-row-stochastic``),
every position attending (``study-note-every-position-attends``), the output as a weighted combination
(``reader-output-weighted-combination``), inner products expressing any pairing
(``reply-inner-products-express-any-pairing``) and unnormalised attention rows
(``unnormalised-attention-not-distributions``). Tolerances are stated next to each comparison.
"""

from __future__ import annotations

import functools
import json
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import torch
from flint import arb, fmpq_mat
from hypothesis import given, target
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attention_claims._cache import disk_memo_ints
from attention_claims.maths import (
    SMALLEST_SUBNORMAL,
    arb_softmax_attention,
    certified_sign,
    masked_softmax_attention,
    mp_attention,
    mp_softmax_entry,
    precision,
    s_squared_exact,
    softmax_attention,
    softmax_diagonal_underflow_gap,
    underflow_log_threshold,
)
from attention_claims.maths.rounding import attention_output_tolerance
from attention_claims.testkit import (
    Tolerance,
    gamma,
    log_uniform,
    one_torch_thread,
    profiles,
    qk_pairs,
    reading_params,
    refute,
    refute_deferred,
    representation_tolerance,
    require_device,
    seeded_gaussian_qk,
    sum_tolerance,
    unit_roundoff,
    within_rounding,
)
from attention_claims.testkit.failure_profiles import gaussian_qk_draws, record_profile

pytestmark = pytest.mark.usefixtures(one_torch_thread.__name__)


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


# -- 定义 11.24 ----------------------------------------------------------------------------------
def _entry_tolerance(Q, K, d: int, dtype: str, scale: float, ref: np.ndarray) -> Tolerance:
    """The rounding bound on each entry of ``softmax(QK^T scale)`` computed in ``dtype``, ``(N, N)``, against
    the exact ``ref``: the logits ``q_i . k_j scale`` carry an error ``delta_i = 2 gamma_(d+4) (1 + z_i)``,
    ``z_i = max_j sum_l |q_il k_jl| scale`` (a length-d dot product, gamma_d (Higham eq. 3.5), the scale and
    the max shift; doubled for the rounding of Q, K to ``dtype``), which moves a weight by at most the factor
    ``e^(2 delta_i)``; softmax's exp, sum and division add ``4u`` absolutely (weights <= 1)."""
    z = (np.abs(Q) @ np.abs(K).T).max(axis=1) * float(scale)
    delta = 2 * gamma(d + 4, dtype) * (1 + z)
    return Tolerance(np.abs(ref) * np.expm1(2 * delta)[:, None] + 4 * unit_roundoff(dtype),
                     f"a_ij (e^(2 delta_i) - 1) + 4u, delta_i = 2 gamma_(d+4) (1 + max_j |q_i|.|k_j| / sqrt d), "
                     f"{dtype} (Higham eq. 3.5)")


def _check_definition(Q, K, dtype, device, claim_log, claimed):
    N, d = Q.shape
    with mpmath.workdps(40):
        scale = claimed.eval("scale", d_k=mpmath.mpf(d))
        ref = mp_attention(Q, K, scale=scale, dps=40)
    A = softmax_attention(Q, K, dtype=dtype, device=device).to("cpu", torch.float64).numpy()
    R = np.array([[float(ref[i, j]) for j in range(N)] for i in range(N)])
    tol = _entry_tolerance(Q, K, d, dtype, 1 / math.sqrt(d), R)
    worst = tol.excess(A - R)
    with np.errstate(divide="ignore", invalid="ignore"):
        i, j = np.unravel_index(int(np.nanargmax(np.where(A == R, 0.0, np.abs(A - R) / tol.value))), A.shape)
    where = (int(i), int(j), float(R[i, j]), float(tol.value[i, j]))
    target(worst, label="error / tolerance")
    claim_log.example(N=N, d=d, error_over_tolerance=worst)
    claim_log.note(f"Tolerance per entry: {tol.derivation} (attention_claims.maths.rounding).")
    if worst > 1:
        i, j, r, tol = where
        refute(f"{dtype}/{device}: softmax_attention gives A[{i},{j}] = {A[i, j]:.17g} but softmax(QK^T * "
               f"{claimed.text('scale')}) is {r:.17g} (tolerance {tol:.3g})",
               example={"Q": Q, "K": K, "i": i, "j": j}, certified=True,
               certificate="40-digit mpmath evaluation of the claimed formula from the exact float inputs",
               certificate_strength="recomputed")


def _trained_model_dims() -> list[tuple[str, int, int]]:
    """``(model, hidden, heads)`` read from the installed models' own configuration files."""
    from attention_claims.models import converted_dir, model_files

    out = []
    p = model_files("minilm-l6")
    if p is not None and (p / "config.json").is_file():
        cfg = json.loads((p / "config.json").read_text(encoding="utf-8"))
        out.append(("all-MiniLM-L6-v2", int(cfg["hidden_size"]), int(cfg["num_attention_heads"])))
    c = converted_dir() / "config.json"
    if c.is_file():
        cfg = json.loads(c.read_text(encoding="utf-8"))
        out.append(("SmolLM2-135M-Instruct", int(cfg["hidden_size"]), int(cfg["num_attention_heads"])))
    return out


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
               example={"row": [str(v) for v in l2_row]}, certified=True, certificate="exact rationals",
               certificate_strength="proved")
    for row in gau + nl + [l2_row]:
        if any(row):
            s2 = s_squared_exact(row)
            if not Fraction(1, N) <= s2 <= 1:
                refute(f"S^2 = {s2} of a row outside [1/n, 1]", example={"row": [str(v) for v in row]},
                       certified=True, certificate="exact rationals", certificate_strength="proved")


@pytest.mark.claim("unnormalised-attention-not-distributions", reading="exact")
def test_unnormalised_rows_are_not_distributions(claim_log, claimed):
    """An exhaustive exact search (1-D integer queries, two integer keys, all in [-2, 2]) counts the non-zero GAU
    rows that do not sum to 1 and the Non-local rows with a negative entry; the record's ``claimed.gau`` and
    ``claimed.nonlocal`` are relations in that ``count`` ("need not sum to 1", "can be negative": ``count > 0``;
    "every row is normalised / non-negative": ``count == 0``, refuted by one witness), and ``claimed.l2`` a
    relation in the ``total`` of the unit-l2 row (4/5, 3/5)."""
    gau_rows, nl_rows = [], []
    for q in range(-2, 3):
        for k1 in range(-2, 3):
            for k2 in range(-2, 3):
                gau, nl = _rows([[q]], [[k1], [k2]])
                if any(gau[0]) and sum(gau[0]) != 1:
                    gau_rows.append((q, k1, k2, gau[0]))
                if any(v < 0 for v in nl[0]):
                    nl_rows.append((q, k1, k2, nl[0]))
    claim_log.example()
    l2_row = _unit_l2_row([Fraction(1, 2)])  # (4/5, 3/5): unit l2 norm, sum 7/5
    if sum(v * v for v in l2_row) != 1:
        raise RuntimeError("_unit_l2_row did not give a unit vector")  # a bug of the suite, not of the claim
    for key, found, what in (("gau", gau_rows, "non-zero GAU rows not summing to 1"),
                             ("nonlocal", nl_rows, "Non-local rows with a negative entry")):
        if not claimed.eval(key, exact=True, count=len(found)):
            witness = (f"; e.g. q = {found[0][0]}, k = ({found[0][1]}, {found[0][2]}): row "
                       f"{[str(v) for v in found[0][3]]}") if found else ""
            refute(f"{len(found)} {what} among the searched inputs{witness}; claimed {claimed.text(key)}",
                   example={"witness": [str(v) for v in found[0][:3]]} if found else {}, certified=True,
                   certificate="exhaustive exact search (rationals)", certificate_strength="proved")
    if not claimed.eval("l2", exact=True, total=sum(l2_row)):
        refute(f"the unit-l2 row {[str(v) for v in l2_row]} sums to {sum(l2_row)}; claimed {claimed.text('l2')}",
               example={"row": [str(v) for v in l2_row]}, certified=True, certificate="exact rationals",
               certificate_strength="proved")
    claim_log.note(f"Witnesses (exact): {len(gau_rows)} searched GAU rows do not sum to 1, e.g. q={gau_rows[0][0]}, "
                   f"k=({gau_rows[0][1]}, {gau_rows[0][2]}) sums to {sum(gau_rows[0][3])}; {len(nl_rows)} Non-local "
                   f"rows have a negative entry, e.g. q={nl_rows[0][0]}, k=({nl_rows[0][1]}, {nl_rows[0][2]}): "
                   f"{[str(v) for v in nl_rows[0][3]]}; the l2-normalised row {[str(v) for v in l2_row]} sums to "
                   f"{sum(l2_row)}. None is a probability vector; S is defined for all three.")


@pytest.mark.claim("reader-output-weighted-combination", reading="cpu-float64")
@given(qk=qk_pairs(n=(1, 8), d=(1, 6), scale_exp=(-3.0, 3.0)), data=st.data())
def test_output_is_weighted_combination(qk, data, claim_log):
    Q, K, scale = qk
    N, d = Q.shape
    V = data.draw(hnp.arrays(np.float64, (N, 3), elements=st.floats(-5, 5)), label="V")
    q, k, v = (torch.as_tensor(x)[None] for x in (Q, K, V))
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v)[0].numpy()
    A = softmax_attention(Q, K).numpy()
    vmax = max(float(np.abs(V).max()), 1e-300)
    err = float(np.abs(out - A @ V).max()) / vmax
    row_err = float(np.abs(A.sum(axis=1) - 1).max())
    rows = row_sum_tolerance(N, "float64")
    # each side within attention_output_tolerance of the exact softmax(QK^T/sqrt d) V whatever its order of
    # operations (SDPA: fused, online softmax, at most N rescalings; A @ V: softmax, then a matrix product),
    # exps within 1 ulp (SLEEF u10), so the two within the sum of the bounds (triangle inequality)
    L = (np.abs(Q) @ np.abs(K).T).max(axis=1) / math.sqrt(d) * (1 + 2.0**-50)
    outs = (attention_output_tolerance(L, vmax, d, N, "float64", rescalings=N)
            + attention_output_tolerance(L, vmax, d, N, "float64"))
    claim_log.example(N=N, d=d, logit_scale=scale)
    claim_log.note(f"Row sums within {rows.derivation} (attention_claims.maths.rounding).")
    claim_log.note("Outputs within the sum of two attention_output_tolerance bounds, SDPA's and A V's, any order of "
                   "operations (attention_claims.maths.rounding; Higham eqs. 3.4, 3.5).")
    claim_log.track("|SDPA - A V| / derived rounding bound", outs.excess(out - A @ V))
    if not within_rounding(out, A @ V, outs) or not within_rounding(A.sum(axis=1), 1.0, rows) or (A < 0).any():
        refute(f"attention output differs from A V by {err:.3e} (relative), or weights are not a convex combination "
               f"(row-sum error {row_err:.3e})", example={"Q": Q, "K": K, "V": V}, certified=False,
               certificate="float64; not re-computed")


# -- reply: inner products describe any pairing --------------------------------------------------
@pytest.mark.claim("reply-inner-products-express-any-pairing", reading="exact")
@given(N=st.integers(1, 7), M=st.integers(1, 7), r=st.integers(1, 7), data=st.data())
def test_any_pairing_is_an_inner_product(N, M, r, data, claim_log, claimed):
    ints = st.integers(-3, 3)
    # the claim is about every N x M score matrix: drawn entry by entry (not a product, so mostly of full rank
    # min(N, M), issue 45), or as a product A B with r inner columns (rank <= r: the low ranks)
    product = data.draw(st.booleans(), label="product")
    if product:
        A = data.draw(st.lists(ints, min_size=N * r, max_size=N * r), label="A")
        B = data.draw(st.lists(ints, min_size=r * M, max_size=r * M), label="B")
        target_m = fmpq_mat(N, r, A) * fmpq_mat(r, M, B)  # a pairing matrix of rank <= r (often lower)
    else:
        A, B = data.draw(st.lists(ints, min_size=N * M, max_size=N * M), label="target"), None
        target_m = fmpq_mat(N, M, A)
    R, rank = target_m.rref()
    pivots = []
    for i in range(rank):
        pivots.append(next(j for j in range(M) if R[i, j] != 0))
    Qm = fmpq_mat(N, max(rank, 1), [target_m[i, pivots[c]] if c < rank else 0 for i in range(N)
                                    for c in range(max(rank, 1))])
    Km = fmpq_mat(M, max(rank, 1), [R[c, j] if c < rank else 0 for j in range(M) for c in range(max(rank, 1))])
    rebuilt = Qm * Km.transpose()
    target(float(rank), label="rank of the pairing matrix")
    claim_log.example(N=N, M=M, rank=rank, full_rank=float(rank == min(N, M)))
    if rebuilt != target_m or rank > min(N, M):
        refute(f"no exact factorisation Q K^T with d = rank = {rank} found for an {N}x{M} pairing matrix",
               example={"A": A, "B": B}, certified=True, certificate="exact rationals (fmpq_mat)",
               certificate_strength="proved")
    d = claimed.eval("sufficient_dim", exact=True, rank=rank, N=N, M=M)
    if d < rank:
        refute(f"the {N}x{M} pairing matrix has exact rank {rank}, and rank(Q K^T) <= d for Q, K with d columns: no "
               f"d = {claimed.text('sufficient_dim')} = {d} < {rank} expresses it", example={"A": A, "B": B},
               certified=True, certificate="exact rank (fmpq reduced row echelon form); rank(QK^T) <= d",
               certificate_strength="proved")
    claim_log.note("Every pairing matrix M = Q K^T exactly with d = rank M <= min(N, M) (rank factorisation from the "
                   "reduced row echelon form, fmpq); fewer dimensions cannot work since rank(Q K^T) <= d.")


# -- 060: every token attends to every position ---------------------------------------------------
# The failure profile's setting (docs/verdicts.md, "Failure profile"): 003 表 11.3.1's Base row, N = 512 and
# d = 64 per head, Gaussian Q, K with the 1/sqrt d scale (unit-variance logits), 30 seeded draws.
DOC_N, DOC_D, PROFILE_TRIALS, PROFILE_SEED = 512, 64, 30, 0


@functools.cache
@disk_memo_ints
def stored_zero_weights(N: int, d: int, trials: int, seed: int, dtype: str) -> tuple[int, ...]:
    """Per draw of Gaussian ``Q, K (N, d)`` (i.i.d. standard normal, ``numpy.random.default_rng(seed)``, Q
    then K), two ints: the number of weights of ``softmax(QK^T / sqrt d)`` computed in ``dtype`` on the CPU
    (:func:`masked_softmax_attention`, as the check) that are stored as exactly 0, and the smallest true
    log weight ``z_ij - logsumexp_j z_ij`` (float64) in millinats (floor). Flattened. Source: 000 "2. 双向
    注意力中的低秩现象" (every position attended); IEEE 754 underflow (:func:`underflow_log_threshold`).

    Raises:
        ValueError: ``N``, ``d`` or ``trials`` below 1.
    """
    out = []
    for Q, K, _ in gaussian_qk_draws(N, d, trials, seed):
        z = Q @ K.T / math.sqrt(d)
        m = z.max(axis=1, keepdims=True)
        logw = z - (m + np.log(np.exp(z - m).sum(axis=1, keepdims=True)))
        A = masked_softmax_attention(Q, K, None, dtype=dtype, device="cpu")
        out += [int((A == 0).sum()), int(math.floor(1000 * float(logw.min())))]
    return tuple(out)


@pytest.fixture
def zero_weight_draws(device, dtype):
    """:func:`stored_zero_weights` at N = 512, d = 64 for the check's dtype (CPU readings only), computed
    before Hypothesis starts; ``None`` on other devices."""
    return stored_zero_weights(DOC_N, DOC_D, PROFILE_TRIALS, PROFILE_SEED, dtype) if device == "cpu" else None


@pytest.mark.claim("study-note-every-position-attends", reading="exact")
@given(qk=qk_pairs(n=(1, 6), d=(1, 4), scale_exp=(-2.0, 4.0)))
@profiles.scaled(0.25)
def test_every_position_exact(qk, claim_log, claimed):
    Q, K, s = qk
    N = Q.shape[0]
    lower = Fraction(claimed.eval("weight_lower", exact=True, N=N))  # every weight > lower (strict); document: 0
    with precision(128):
        A = arb_softmax_attention(Q, K)
        signs = [certified_sign(A[i, j] - arb(lower.numerator) / lower.denominator)
                 for i in range(A.nrows()) for j in range(A.ncols())]
    claim_log.example(N=N, logit_scale=s)
    if min(signs) == -1:
        i, j = divmod(signs.index(-1), A.ncols())
        refute(f"weight A[{i},{j}] = {A[i, j].str(10)} is below the claimed {claimed.text('weight_lower')} = {lower} "
               f"(N = {N})", example={"Q": Q, "K": K, "row": i, "col": j}, certified=True,
               certificate=f"arb interval at 128 bits: A[{i},{j}] - {lower} < 0", certificate_strength="proved")
    if min(signs) != 1:
        if lower >= Fraction(1, N):
            # the weights of a row sum to exactly 1, so the smallest is at most 1/N <= lower
            refute(f"a row of N = {N} weights summing to exactly 1 has one at most 1/N <= the claimed "
                   f"{claimed.text('weight_lower')} = {lower}", example={"Q": Q, "K": K}, certified=True,
                   certificate="exact: softmax rows sum to 1, so min_j A_ij <= 1/N (rational comparison with the bound)",
                   certificate_strength="proved")
        refute(f"a softmax weight is not certified above the claimed {claimed.text('weight_lower')} = {lower}",
               example={"Q": Q, "K": K}, certified=False)
    claim_log.note(f"Every weight certified > {claimed.text('weight_lower')} by arb (exp of a finite number is "
                   "positive).")


@pytest.mark.parametrize("device,dtype,reading", reading_params("study-note-every-position-attends"))
@given(N=st.integers(1, 5), d=st.integers(1, 3), s=log_uniform(-2.0, 4.0), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.5)
def test_every_position_dtype(device, dtype, reading, N, d, s, seed, claim_log, zero_weight_draws):
    require_device(device)
    if zero_weight_draws is not None:
        zeros, logs = zero_weight_draws[0::2], [v / 1000 for v in zero_weight_draws[1::2]]
        record_profile(claim_log, [z > 0 for z in zeros], setting=f"N={DOC_N}, d={DOC_D}, Gaussian Q, K, 1/sqrt d",
                       summary=f"softmax(QK^T/sqrt d) computed in {dtype} on the CPU, Gaussian Q, K (numpy "
                               f"default_rng({PROFILE_SEED})); a draw fails when a stored weight is exactly 0: "
                               f"{max(zeros)} such weights at most, smallest true log weight {min(logs):.4g}.."
                               f"{max(logs):.4g} nats; a weight is stored as 0 below {underflow_log_threshold(dtype):.4g} "
                               f"nats (ln(smallest {dtype} subnormal / 2)): the certified counterexample needs the special "
                               f"inputs where a logit lies that far below its row's log-sum-exp")
    Q, K = seeded_gaussian_qk(N, d, s, seed)
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
                            f"({dtype}, bisection)", certificate_strength="proved")

        refute_deferred("a stored weight is exactly 0", certify=certify)


@pytest.mark.claim("definition-11-24-attention-matrix", reading="exact")
@given(qk=qk_pairs(n=(1, 6), d=(1, 5), scale_exp=(-3.0, 3.0)))
def test_definition_11_24_exact(qk, claim_log, claimed):
    Q, K, _ = qk
    _check_definition(Q, K, "float64", "cpu", claim_log, claimed)


@pytest.mark.parametrize("device,dtype,reading", reading_params("definition-11-24-attention-matrix"))
@given(qk=qk_pairs(n=(1, 6), d=(1, 5), scale_exp=(-3.0, 1.0)))
@profiles.scaled(0.5)
def test_definition_11_24_dtypes(device, dtype, reading, qk, claim_log, claimed):
    Q, K, _ = qk
    _check_definition(Q, K, dtype, device, claim_log, claimed)


@pytest.mark.claim("definition-11-24-attention-matrix", reading="dk-equals-hidden-in-trained-models")
def test_definition_11_24_dk_equals_hidden(claim_log):
    dims = _trained_model_dims()
    if not dims:
        from attention_claims.models import MODELS_EXTRA

        pytest.skip(f"no trained model configuration installed ({MODELS_EXTRA})")
    # a deterministic reading: the "draws" are the installed models' own configurations
    record_profile(claim_log, [hidden // heads != hidden for _m, hidden, heads in dims],
                   setting=f"the {len(dims)} installed trained models' configs",
                   summary="d_k = hidden / heads read from each model's config.json against the hidden dimension: "
                           + "; ".join(f"{m} {hidden}/{heads} = {hidden // heads} vs {hidden}" for m, hidden, heads in dims))
    for model, hidden, heads in dims:
        claim_log.example(hidden=hidden, d_k=hidden // heads)
        claim_log.note(f"{model}: hidden {hidden}, {heads} heads, d_k = {hidden // heads}.")
    model, hidden, heads = dims[0]
    if hidden // heads != hidden:
        refute(f"{model}: d_k = hidden / heads = {hidden}/{heads} = {hidden // heads}, not the hidden dimension "
               f"{hidden} (multi-head attention splits d across heads)",
               example={"model": model, "hidden": hidden, "heads": heads}, certified=True,
               certificate="integer values read from the model's config.json", certificate_strength="proved")


# -- 引理 11.33 ----------------------------------------------------------------------------------
@pytest.mark.claim("lemma-11-33-row-stochastic", reading="exact")
@given(qk=qk_pairs(n=(1, 8), d=(1, 6), scale_exp=(-3.0, 4.0)))
@profiles.scaled(0.5)
def test_row_stochastic_exact(qk, claim_log, claimed):
    Q, K, scale = qk
    N = Q.shape[0]
    want = claimed.eval("row_sum", exact=True)
    A = arb_softmax_attention(Q, K)
    claim_log.example(N=N, logit_scale=scale)
    for i in range(N):
        s = sum((A[i, j] for j in range(N)), arb(0))
        diff = s - arb(want.numerator) / want.denominator
        if certified_sign(diff) != 0 or not all(A[i, j] > 0 for j in range(N)):
            refute(f"row {i}: sum_j a_ij is in {s}, which excludes the claimed {claimed.text('row_sum')} "
                   f"(or an entry is not certified positive)",
                   example={"Q": Q, "K": K, "row": i}, certified=True, certificate=f"arb enclosure {s}",
                   certificate_strength="proved")
    claim_log.note("Every row sum's arb enclosure contains the claimed value; every entry is certified > 0.")


def row_sum_tolerance(N: int, dtype: str) -> Tolerance:
    """The rounding bound on ``|sum_j a_ij - 1|`` for a row of ``torch.softmax`` of ``N`` logits stored in
    ``dtype``, the stored entries summed in float64.

    ``torch.softmax`` computes in ``c`` = float32 for float16 and bfloat16 (its accumulate type on CPU and
    CUDA) and in ``dtype`` otherwise: ``e_j = fl(exp(z_j - m))``, ``s = fl(sum e_j)``, ``a_j = fl(e_j / s)``
    or ``fl(e_j fl(1/s))``. The error of ``exp`` only perturbs the inputs (the row of computed ``e_j`` is
    normalised by its own computed sum), so ``|sum a_j - 1| <= gamma_(N+1)(c)`` (``gamma_(N-1)`` for the
    sum, ``gamma_2`` for the reciprocal and product; Higham, 2nd ed., Lemma 3.1, eq. (3.4)), plus ``N``
    times the smallest subnormal of ``c`` for entries that underflow (``s >= 1``, as the largest term is
    ``exp(0)``). A half type then rounds each entry once: ``u * (1 + that) + N * subnormal / 2``
    (Higham Thm 2.2). The float64 sum of the stored entries adds ``gamma_(N-1)(float64)``.

    Raises:
        ValueError: an unknown dtype or ``N < 1``.
    """
    c = "float32" if dtype in ("float16", "bfloat16") else dtype
    tol = sum_tolerance(N + 2, c) + Tolerance(N * SMALLEST_SUBNORMAL[c], f"N*subnormal({c}) for underflow")
    if c != dtype:
        tol = tol + representation_tolerance(dtype, 1 + tol.value, count=N)
    return tol + sum_tolerance(N, "float64", 1 + tol.value + unit_roundoff(dtype))


@pytest.mark.parametrize("device,dtype,reading", reading_params("lemma-11-33-row-stochastic"))
@given(N=st.integers(1, 512), d=st.integers(1, 6), scale=log_uniform(-3, 3), seed=st.integers(0, 2**32 - 1))
def test_row_stochastic_dtypes(device, dtype, reading, N, d, scale, seed, claim_log, claimed):
    rng = np.random.default_rng(seed)
    Q, K = rng.uniform(-1, 1, (N, d)) * scale, rng.uniform(-1, 1, (N, d))
    A = softmax_attention(Q, K, dtype=dtype, device=device).to("cpu", torch.float64).numpy()
    eps = float(torch.finfo(getattr(torch, dtype)).eps)
    want = float(claimed.eval("row_sum", exact=True))
    dev = np.abs(A.sum(axis=1) - want)
    worst = float(dev.max())
    tol = row_sum_tolerance(N, dtype)
    target(tol.excess(dev), label="row-sum error / rounding bound")
    claim_log.example(N=N, row_sum_error_in_eps=worst / eps, row_sum_error_over_rounding_bound=tol.excess(dev))
    claim_log.note(f"Tolerance at N = 512: {row_sum_tolerance(512, dtype)}; at N = n the same with n "
                   f"(within_rounding, attention_claims.maths.rounding).")
    if not within_rounding(A.sum(axis=1), want, tol) or (A < 0).any() or not np.isfinite(A).all():
        i = int(dev.argmax())
        refute(f"{dtype}/{device}: row {i} of the stored matrix sums to {A[i].sum():.10g}, off by {worst / eps:.3g} "
               f"eps > the rounding bound {tol} (N = {N})", example={"N": N, "d": d, "scale": scale, "seed": seed},
               certified=True, certificate="sum of the stored entries in float64 (within gamma_(N-1)(float64), "
                                           "counted in the bound)",
               # the bound models torch.softmax's algorithm (accumulate type, exp's error): not every constant derived
               certificate_strength="recomputed")


