"""Sparsity claims of kexue.fm/archives/9889 (004; repost 001): the l1/l2 measure
S(a) = E|a| / sqrt(E a^2) for f = exp, f = identity, and the decay vector; the i.i.d. linear case's
"lower the keys' SNR" direction and the linear RNN recursion read as an attention.

References: :func:`attention_claims.maths.s_reference` (40-digit mpmath quadrature, independent
of every closed form). Tolerances are stated next to each comparison.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import assume, example, given, note, target
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attention_claims.maths import product_design, s_and_standard_error, s_reference, s_squared_exact
from attention_claims.testkit import log_uniform, profiles, reading_params, refute, require_device

REL_25 = mpmath.mpf("1e-25")  # closed form vs 40-digit quadrature: 25 digits must agree
REL_30 = mpmath.mpf("1e-30")  # S(beta) vs S(-beta), both by 40-digit quadrature


def _rel(a, b):
    return abs(a - b) / abs(b)


# -- f = exp --------------------------------------------------------------------------------

@pytest.mark.claim("sparsity-exp-closed-form", reading="mpmath-reference")
@given(beta=st.floats(-50, 50), sigma=log_uniform(-2, 0.5), q_norm=log_uniform(-1, 0.5))
@profiles.scaled(0.25)
def test_exp_closed_form_vs_quadrature(beta, sigma, q_norm, claim_log, claimed):
    with mpmath.workdps(45):
        gamma = mpmath.mpf(sigma) * mpmath.mpf(q_norm)  # gamma = sigma ||q|| (004 "两个例子"), exactly
        ref = s_reference("exp", beta, gamma)
        closed = claimed.eval("expression", sigma=mpmath.mpf(sigma), q_norm=mpmath.mpf(q_norm), beta=mpmath.mpf(beta))
        err = _rel(closed, ref)
    target(float(mpmath.log10(err + mpmath.mpf("1e-60"))), label="log10 relative error")
    claim_log.example(beta=beta, gamma=float(gamma), log10_rel_err=float(mpmath.log10(err + mpmath.mpf("1e-60"))))
    note(f"beta={beta!r} sigma={sigma!r} |q|={q_norm!r} closed={mpmath.nstr(closed, 30)} quad={mpmath.nstr(ref, 30)}")
    if err > REL_25:
        refute(f"S = {claimed.text('expression')} = {mpmath.nstr(closed, 20)} but quadrature gives "
               f"{mpmath.nstr(ref, 20)} (beta={beta}, sigma={sigma}, |q|={q_norm})",
               example={"beta": beta, "sigma": sigma, "q_norm": q_norm}, certified=True,
               certificate=f"40-digit mpmath quadrature; relative difference {mpmath.nstr(err, 5)} > 1e-25")
    claim_log.note("Tolerance: relative 1e-25 against 40-digit tanh-sinh quadrature.")


def _delta_method_s(a: torch.Tensor) -> tuple[float, float]:
    """``S = mean|a| / sqrt(mean a^2)`` and its delta-method standard error from the sample."""
    x, y = a.abs().double(), (a * a).double()
    n = a.numel()
    mx, my = x.mean(), y.mean()
    cov = torch.cov(torch.stack([x, y]))
    g = torch.tensor([1 / my.sqrt(), -mx / (2 * my**1.5)], dtype=torch.float64)
    var = g @ cov @ g / n
    return float(mx / my.sqrt()), float(var.sqrt())


@pytest.mark.parametrize("device,dtype,reading", reading_params("sparsity-exp-closed-form"))
@given(q=hnp.arrays(np.float64, 4, elements=st.floats(-1, 1)), mu=hnp.arrays(np.float64, 4, elements=st.floats(-2, 2)),
       gamma=st.floats(0.05, 1.0), seed=st.integers(0, 2**31 - 1))
@profiles.scaled(0.25)
def test_exp_monte_carlo(device, dtype, reading, q, mu, gamma, seed, claim_log, claimed):
    require_device(device)
    qn = float(np.linalg.norm(q))
    if qn < 1e-3:
        q = np.array([1.0, 0, 0, 0])
        qn = 1.0
    sigma = gamma / qn
    n = 200_000
    gen = torch.Generator().manual_seed(seed)
    dt = getattr(torch, dtype)
    eps = torch.randn(n, 4, generator=gen, dtype=torch.float64).to(device=device, dtype=dt)
    k = torch.as_tensor(mu, dtype=dt, device=device) + sigma * eps
    a = torch.exp(k @ torch.as_tensor(q, dtype=dt, device=device)).cpu()
    s_hat, se = _delta_method_s(a)
    s_true = float(claimed.eval("expression", sigma=mpmath.mpf(sigma), q_norm=mpmath.mpf(qn),
                                beta=mpmath.mpf(float(q @ mu))))
    z = abs(s_hat - s_true) / se
    target(z, label="|z| of the Monte Carlo estimate")
    claim_log.example(gamma=gamma, z=z)
    note(f"S_hat={s_hat:.6f} se={se:.2e} S={s_true:.6f} z={z:.2f}")
    # 6 standard errors: a false alarm has probability < 2e-9 per example under normality.
    if z > 6:
        refute(f"Monte Carlo S = {s_hat:.6f} +- {se:.1e} vs {claimed.text('expression')} = {s_true:.6f} "
               f"({z:.1f} SE, n={n})",
               example={"q": q, "mu": mu, "gamma": gamma, "seed": seed}, certified=False,
               certificate="statistical: not a certificate")
    claim_log.note(f"n = {n} keys per example; tolerance 6 delta-method standard errors (stated in the check).")


# -- f = identity -----------------------------------------------------------------------------

@pytest.mark.claim("sparsity-identity-even-in-beta", reading="mpmath-reference")
@given(beta=log_uniform(-3, 1.5), gamma=log_uniform(-3, 3))
@profiles.scaled(0.25)
def test_identity_even_in_beta(beta, gamma, claim_log, claimed):
    f = claimed.text("f")
    with mpmath.workdps(45):
        plus = s_reference(f, beta, gamma)
        minus = s_reference(f, -beta, gamma)
        err = _rel(plus, minus)
    claim_log.example(beta=beta, gamma=gamma)
    target(float(mpmath.log10(err + mpmath.mpf("1e-60"))), label="log10 |S(b)-S(-b)|/S")
    if err > REL_30:
        refute(f"f = {f}: S(beta) = {mpmath.nstr(plus, 20)} != S(-beta) = {mpmath.nstr(minus, 20)} "
               f"(beta={beta}, gamma={gamma})",
               example={"f": f, "beta": beta, "gamma": gamma}, certified=True,
               certificate=f"40-digit quadrature; relative difference {mpmath.nstr(err, 5)} > 1e-30")
    claim_log.note("Both sides by 40-digit quadrature of E|beta+gamma eps| and E(beta+gamma eps)^2; tolerance 1e-30.")


# (claim, reading, test id) of every reading that test_identity_closed_form checks
# The drawn points mostly have |beta|/gamma far from 1, where erf is saturated or the beta term negligible;
# two explicit points with beta/gamma of order 1 (and gamma != 1, beta != gamma) exercise every term.
@pytest.mark.parametrize("cid", [
    pytest.param("even", marks=pytest.mark.claim("sparsity-identity-even-in-beta", reading="closed-form"),
                 id="even-in-beta"),
    pytest.param("closed-form", marks=pytest.mark.claim("sparsity-identity-closed-form", reading="mpmath-reference"), id="closed-form"),
])
@given(beta=st.floats(-1e3, 1e3), gamma=log_uniform(-3, 3))
@example(beta=1.0, gamma=1.0)
@example(beta=-0.7, gamma=2.0)
@profiles.scaled(0.25)
def test_identity_closed_form(cid, beta, gamma, claim_log, claimed):
    with mpmath.workdps(45):
        b, g = mpmath.mpf(beta), mpmath.mpf(gamma)
        ref = s_reference("identity", beta, gamma)
        closed = claimed.eval("expression", beta=b, gamma=g)
        mirrored = claimed.eval("expression", beta=-b, gamma=g)
        err = _rel(closed, ref)
    claim_log.example(beta=beta, gamma=gamma)
    if err > REL_25 or _rel(mirrored, closed) > REL_30:
        refute(f"printed closed form {mpmath.nstr(closed, 20)} vs quadrature {mpmath.nstr(ref, 20)}",
               example={"beta": beta, "gamma": gamma}, certified=True,
               certificate=f"40-digit quadrature; relative difference {mpmath.nstr(err, 5)}")


# -- decay ---------------------------------------------------------------------------------

def _s2_vector(lam: Fraction, n: int) -> Fraction:
    """``S(a)^2 = (sum a)^2 / (n sum a^2)`` of ``a = (lam^{n-1}, ..., 1)``, exactly."""
    powers = [lam**j for j in range(n)]
    return sum(powers) ** 2 / (n * sum(p * p for p in powers))


rational_lambda = st.builds(Fraction, st.integers(1, 999), st.just(1000))


@pytest.mark.claim("decay-sparsity-closed-form", reading="exact")
@given(lam=rational_lambda, n=st.integers(1, 300))
def test_decay_closed_form_exact(lam, n, claim_log, claimed):
    s2 = _s2_vector(lam, n)
    printed = claimed.eval("s_squared", exact=True, lam=lam, n=Fraction(n))
    bound = claimed.eval("bound_squared", exact=True, lam=lam, n=Fraction(n))
    claim_log.example(lam=float(lam), n=n)
    if printed != s2:
        refute(f"closed form^2 {float(printed)!r} != S(a)^2 {float(s2)!r} (lambda={lam}, n={n})",
               example={"lambda": str(lam), "n": n}, certified=True, certificate="exact rational arithmetic")
    if not bound > s2:
        refute(f"bound^2 {float(bound)!r} is not > S(a)^2 {float(s2)!r} (lambda={lam}, n={n})",
               example={"lambda": str(lam), "n": n}, certified=True, certificate="exact rational arithmetic")
    claim_log.note("Exact rational arithmetic (fractions.Fraction) for S(a)^2 of the vector, the printed closed "
                   "form squared and the bound squared, for rational lambda in (0, 1).")


@pytest.mark.claim("decay-sparsity-closed-form", reading="printed-at-lambda-1")
@given(n=st.integers(1, 10_000))
def test_decay_closed_form_printed_at_lambda_1(n, claim_log, claimed):
    claim_log.example(n=n)
    lam = Fraction(1)
    if not claimed.eval("domain", exact=True, lam=lam):
        return  # the record does not include lambda = 1
    try:
        value = claimed.eval("s_squared", exact=True, lam=lam, n=Fraction(n))
    except ZeroDivisionError:
        refute(f"at lambda = 1 (inside the record's domain {claimed.text('domain')}) the printed closed form "
               f"is 0/0: undefined (its limit, 1, is right)",
               example={"lambda": 1, "n": n}, certified=True,
               certificate="exact rational arithmetic: the expression divides by exactly 0")
    if value != _s2_vector(lam, n):
        refute(f"at lambda = 1 the printed closed form^2 is {value}, but S(1, ..., 1)^2 = 1",
               example={"lambda": 1, "n": n}, certified=True, certificate="exact rational arithmetic")


@pytest.mark.claim("decay-sparsity-closed-form", reading="cpu-float64-strict-bound")
@given(lam=st.floats(1e-3, 0.999), n=st.integers(1, 5000))
def test_decay_bound_strict_in_float64(lam, n, claim_log, claimed):
    s2 = claimed.eval("s_squared", floating=True, lam=lam, n=float(n))
    b2 = claimed.eval("bound_squared", floating=True, lam=lam, n=float(n))
    s, b = math.sqrt(s2), math.sqrt(b2)
    ln = lam**n
    target(-math.log2(max(ln, 1e-300)), label="-log2 lambda^n")
    claim_log.example(lam=lam, n=n)
    if not s < b:
        lq = Fraction(lam)
        gap = (claimed.eval("bound_squared", exact=True, lam=lq, n=Fraction(n))
               - claimed.eval("s_squared", exact=True, lam=lq, n=Fraction(n)))
        n_star = math.ceil(math.log(2.0**-53) / math.log(lam))
        refute(f"in float64 the closed form {s!r} is not < the bound {b!r} (lambda={lam!r}, n={n})",
               example={"lambda": lam, "n": n, "S": s, "bound": b}, certified=True,
               certificate=f"the float64 values read back exactly; exactly (fractions.Fraction of the same "
                           f"float lambda), bound^2 - S^2 = {float(gap):.3e}",
               boundary=f"ties once lambda^n < 2^-53, i.e. n >= {n_star} for lambda = {lam:.6g}")


@pytest.mark.claim("decay-sparsity-vanishes", reading="exact")
@given(lam=st.one_of(st.just(1.0), st.floats(0.01, 0.99)))
@profiles.scaled(0.25)
def test_decay_sparsity_vanishes(lam, claim_log, claimed):
    if not claimed.eval("domain", exact=True, lam=Fraction(lam)):
        return  # outside the domain the record claims
    with mpmath.workdps(50):
        lm = mpmath.mpf(lam)

        def s_vec(n):
            powers = [lm**j for j in range(n)]
            return mpmath.fsum(powers) / mpmath.sqrt(n * mpmath.fsum(p * p for p in powers))

        seq = [s_vec(2**k) for k in range(0, 15)]
        eps = mpmath.mpf("0.1")
        # the bound S^2 < (1+lam)/(n(1-lam)) gives an explicit n; at lam = 1 no n works, so try 2^15
        n_eps = int(mpmath.ceil((1 + lm) / ((1 - lm) * eps**2))) + 1 if lm < 1 else 2**15
        s_at = s_vec(n_eps)
    claim_log.example(lam=lam, n_eps=n_eps)
    decreasing = all(b < a for a, b in zip(seq[1:], seq[2:], strict=False))
    if not decreasing or not s_at < eps:
        refute(f"S(a) does not fall below 0.1 by n = {n_eps} or is not decreasing along n = 2^k (lambda={lam})",
               example={"lambda": lam, "S_2^k": [mpmath.nstr(x, 8) for x in seq]}, certified=True,
               certificate="50-digit mpmath sums over the vector itself")
    claim_log.note("S computed from the vector itself at 50 digits for n = 1, 2, 4, ..., 2^14 and at "
                   "n_eps = (1+lambda)/((1-lambda) 0.1^2) + 1.")


# -- f = identity at finite n (sparsity-identity-closed-form) -------------------------------------

@pytest.mark.parametrize("device,dtype,reading",
                         reading_params("sparsity-identity-closed-form", where=lambda r: r.name.startswith("monte-carlo")))
@given(q=hnp.arrays(np.float64, 4, elements=st.floats(-1, 1)), mu=hnp.arrays(np.float64, 4, elements=st.floats(-2, 2)),
       gamma=st.floats(0.05, 2.0), seed=st.integers(0, 2**31 - 1))
@profiles.scaled(0.125)
def test_identity_monte_carlo(device, dtype, reading, q, mu, gamma, seed, claim_log, claimed):
    require_device(device)
    qn = float(np.linalg.norm(q))
    if qn < 1e-3:
        q, qn = np.array([1.0, 0, 0, 0]), 1.0
    sigma = gamma / qn
    n = 100_000
    dt = getattr(torch, dtype)
    gen = torch.Generator().manual_seed(seed)
    eps = torch.randn(n, 4, generator=gen, dtype=torch.float64).to(device=device, dtype=dt)
    k = torch.as_tensor(mu, dtype=dt, device=device) + sigma * eps  # k_j ~ N(mu, sigma^2 I)
    a = (k @ torch.as_tensor(q, dtype=dt, device=device)).cpu()  # f = identity: a_j = q.k_j
    s_hat, se = s_and_standard_error(a)
    beta = float(q @ mu)
    with mpmath.workdps(20):
        s_true = float(claimed.eval("expression", beta=mpmath.mpf(beta), gamma=mpmath.mpf(sigma) * mpmath.mpf(qn)))
    z = abs(s_hat - s_true) / se
    target(z, label="|z| of the Monte Carlo estimate")
    claim_log.example(beta=beta, gamma=gamma, z=z)
    note(f"S_hat={s_hat:.6f} se={se:.2e} S={s_true:.6f} z={z:.2f}")
    # 6 standard errors: a false alarm has probability < 2e-9 per example under normality.
    if z > 6:
        refute(f"Monte Carlo S = {s_hat:.6f} +- {se:.1e} vs {claimed.text('expression')} = {s_true:.6f} "
               f"({z:.1f} SE, n={n}, {device} {dtype})",
               example={"q": q, "mu": mu, "gamma": gamma, "seed": seed}, certified=False,
               certificate="statistical: not a certificate")
    claim_log.note(f"n = {n} keys per example (d = 4), a_j = q.k_j in {dtype} on {device}; tolerance 6 delta-method "
                   "standard errors.")


# -- i.i.d. linear attention: lowering the keys' SNR (sparsity-linear-iid-lower-snr) ------------------

nonneg_rational = st.builds(Fraction, st.integers(0, 20), st.integers(1, 6))


def _rho2(q: list[Fraction]) -> Fraction:
    """``(||q||_2 / ||q||_1)^2`` of a non-negative rational ``q`` (``q != 0``), exactly."""
    return sum(v * v for v in q) / sum(q) ** 2


@pytest.mark.claim("sparsity-linear-iid-lower-snr", reading="exact-monotone")
@given(q=st.lists(nonneg_rational, min_size=1, max_size=6), r2=st.builds(Fraction, st.integers(0, 10**4),
                                                                         st.integers(1, 100)),
       dr2=st.builds(Fraction, st.integers(1, 10**4), st.integers(1, 10**4)), m=st.integers(2, 10**4))
def test_iid_lower_snr_monotone(q, r2, dr2, m, claim_log, claimed):
    assume(any(q))
    rho2 = _rho2(q)
    s_lo = claimed.eval("s_squared", exact=True, r2=r2, rho2=rho2)
    s_hi = claimed.eval("s_squared", exact=True, r2=r2 + dr2, rho2=rho2)
    claim_log.example(d=len(q), rho2=float(rho2), r2=float(r2))
    if not s_hi < s_lo:
        refute(f"raising (sigma~/mu~)^2 from {r2} to {r2 + dr2} does not lower S^2 = {claimed.text('s_squared')}: "
               f"{float(s_lo):.6g} -> {float(s_hi):.6g} (rho^2 = {rho2})",
               example={"q": [str(v) for v in q], "r2": str(r2), "r2_plus": str(r2 + dr2)}, certified=True,
               certificate="exact rational arithmetic (fractions.Fraction)")
    r2_eps = (m * m - 1) / rho2 + 1  # S^2 = 1/(1 + r^2 rho^2) < 1/m^2 iff r^2 rho^2 > m^2 - 1
    s_eps = claimed.eval("s_squared", exact=True, r2=r2_eps, rho2=rho2)
    if not s_eps < Fraction(1, m * m):
        refute(f"S^2 = {float(s_eps):.6g} is not below eps^2 = 1/{m * m} at (sigma~/mu~)^2 = {float(r2_eps):.6g}: "
               f"S does not tend to 0 (rho^2 = {rho2})", example={"q": [str(v) for v in q], "m": m},
               certified=True, certificate="exact rational arithmetic (fractions.Fraction)")
    claim_log.note("Exact rationals: S^2 strictly falls when (sigma~/mu~)^2 rises, for every drawn rho^2 in [1/d, 1], "
                   "and is below 1/m^2 once (sigma~/mu~)^2 >= (m^2 - 1)/rho^2 + 1.")


@pytest.mark.claim("sparsity-linear-iid-lower-snr", reading="bernoulli-keys")
@given(b=st.integers(2, 7), d=st.integers(1, 3), M=st.integers(1, 5),
       q=st.lists(nonneg_rational, min_size=3, max_size=3))
@profiles.scaled(0.25)
def test_iid_lower_snr_bernoulli_keys(b, d, M, q, claim_log, claimed):
    q = q[:d]
    assume(any(q))
    rho2 = _rho2(q)
    prev = None
    for a in range(b - 1, 0, -1):  # p = a/b falls: fewer keys components equal M
        p = Fraction(a, b)
        values = [Fraction(M)] * a + [Fraction(0)] * (b - a)  # one component: M Bernoulli(p), exactly
        keys = product_design(values, d)  # all b^d tuples: components exactly i.i.d.
        mean = sum(values) / b
        r2 = (sum(v * v for v in values) / b - mean**2) / mean**2  # (sigma~/mu~)^2
        s2 = s_squared_exact([sum(x * y for x, y in zip(q, k, strict=True)) for k in keys])
        want = claimed.eval("s_squared", exact=True, r2=r2, rho2=rho2)
        claim_log.example(p=float(p), d=d, S=math.sqrt(s2))
        example = {"M": M, "p": str(p), "d": d, "q": [str(v) for v in q]}
        if r2 != (1 - p) / p or s2 != want:
            refute(f"keys with i.i.d. components M Bernoulli({p}): (sigma~/mu~)^2 = {r2} (want (1-p)/p = {(1 - p) / p}), "
                   f"exact population S^2 = {s2} but {claimed.text('s_squared')} = {want}", example=example,
                   certified=True, certificate="exact rationals over the whole key set")
        if prev is not None and not s2 < prev:
            refute(f"lowering p to {p} (raising sigma~/mu~) did not lower S^2: {prev} -> {s2}", example=example,
                   certified=True, certificate="exact rationals over the whole key set")
        prev = s2
    claim_log.note("Key sets: all d-tuples over b values (a of them M, the rest 0), so each component is exactly "
                   "M Bernoulli(a/b) and the components are independent; S^2 from the whole set, exactly.")


# -- linear RNN recursion as an attention (linear-rnn-decay-as-attention) ----------------------------



@pytest.mark.claim("linear-rnn-decay-as-attention", reading="exact")
@given(den=st.integers(1, 100), data=st.data(), n=st.integers(1, 40), dim=st.integers(1, 3))
def test_linear_rnn_unrolls_to_decay_attention(den, data, n, dim, claim_log, claimed):
    lam = Fraction(data.draw(st.integers(1, den), label="numerator"), den)  # lambda in (0, 1], 1 included
    vs = data.draw(st.lists(st.lists(st.integers(-50, 50), min_size=dim, max_size=dim), min_size=n, max_size=n),
                   label="v_1..v_n")
    h = [Fraction(0)] * dim
    for v in vs:  # h_t = lambda h_{t-1} + v_t, h_0 = 0
        h = [lam * x + y for x, y in zip(h, v, strict=True)]
    w = [claimed.eval("weight", exact=True, lam=lam, n=Fraction(n), j=Fraction(j)) for j in range(1, n + 1)]
    attended = [sum(w[j] * vs[j][c] for j in range(n)) for c in range(dim)]
    claim_log.example(lam=float(lam), n=n)
    if attended != h:
        refute(f"lambda = {lam}, n = {n}: the recursion gives h_n = {[str(x) for x in h]}, but sum_j "
               f"{claimed.text('weight')} v_j = {[str(x) for x in attended]}",
               example={"lambda": str(lam), "n": n, "v": vs}, certified=True,
               certificate="exact rational arithmetic (fractions.Fraction)")
    claim_log.note("h_n from the recursion and from the claimed weights, both exactly; lambda in (0, 1] rational.")
