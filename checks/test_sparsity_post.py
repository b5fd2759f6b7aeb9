"""The sparsity analysis of kexue.fm/archives/9889 (004; repost 001), beyond the four closed forms
of ``checks/test_sparsity.py``: the measure S itself, the Gaussian reduction, the conclusions the
post draws for f = exp, relu^2 and identity (with its two figures reproduced), the non-negative
linear case (general formula, i.i.d. simplification, the factor ||q||_2/||q||_1 and d), standard
attention as infinite-dimensional linear attention, and the decay case's last sentence.

Exact checks use ``fractions.Fraction`` / python-flint; high-precision ones mpmath quadrature
(:func:`attention_claims.maths.s_reference`, independent of every closed form). Tolerances are stated
next to each comparison.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import assume, given, note, target
from hypothesis import strategies as st

from attention_claims.framework.expr import evaluate
from attention_claims.maths import (
    F_TORCH,
    arb_exp_kernel,
    bisect_predicate,
    certify_nonzero_det,
    exact_rank,
    lognormal_feature_moments,
    population_moments,
    product_design,
    s_and_standard_error,
    s_identity_moments,
    s_reference,
    s_relu2_moments,
    s_squared_exact,
    taylor_features,
)
from attention_claims.testkit import log_uniform, plot_sparsity_figure, profiles, reading_params, refute, require_device

REL_25 = mpmath.mpf("1e-25")  # closed form / constant vs 40-digit quadrature
REL_45 = mpmath.mpf("1e-45")  # claimed formula at 60 digits vs an exact rational


def _inv_sqrt6() -> mpmath.mpf:
    """S of relu^2 at beta = 0, (1/2) / sqrt(3/2), at the current precision."""
    return 1 / mpmath.sqrt(6)


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """Run this module's small torch ops on one intra-op thread (restored afterwards): on a loaded
    2-core machine, waking the thread pool costs milliseconds per tiny op, far more than the op."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _mpq(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def _rel(a, b):
    return abs(a - b) / abs(b)


def rationals(lo: int, hi: int, den: int = 4):
    """Rationals ``k/den`` in ``[lo, hi]``."""
    return st.integers(lo * den, hi * den).map(lambda k: Fraction(k, den))


# -- the measure S (004 "稀疏程度") -----------------------------------------------------------

def _s2_from_claim(claimed, x: list[Fraction]) -> mpmath.mpf:
    n = len(x)
    mean_abs = _mpq(sum(abs(v) for v in x) / n)
    mean_sq = _mpq(sum(v * v for v in x) / n)
    return claimed.eval("expression", mean_abs=mean_abs, mean_sq=mean_sq) ** 2


@pytest.mark.claim("sparsity-measure-l1-l2", reading="exact")
@given(x=st.lists(st.one_of(st.just(Fraction(0)), rationals(-5, 5)), min_size=1, max_size=12).filter(any),
       c=rationals(-3, 3).filter(lambda v: v != 0))
def test_measure_properties_exact(x, c, claim_log, claimed):
    n = len(x)
    s2 = s_squared_exact(x)
    with mpmath.workdps(60):
        s2_claim = _s2_from_claim(claimed, x)
        err = _rel(s2_claim, _mpq(s2))
    claim_log.example(n=n, S=math.sqrt(s2))
    nnz = sum(1 for v in x if v != 0)
    problems = []
    if err > REL_45:
        problems.append(f"the claimed {claimed.text('expression')} gives S^2 = {mpmath.nstr(s2_claim, 20)}, "
                        f"not ||x||_1^2/(n||x||_2^2) = {s2}")
    if not Fraction(1, n) <= s2 <= 1:
        problems.append(f"S^2 = {s2} outside [1/n, 1]")
    if (s2 == Fraction(1, n)) != (nnz == 1):
        problems.append(f"S^2 = 1/n is not equivalent to one-hot (nnz = {nnz})")
    if (s2 == 1) != (len({abs(v) for v in x}) == 1):
        problems.append("S = 1 is not equivalent to all |x_i| equal")
    if s_squared_exact([c * v for v in x]) != s2:
        problems.append(f"S(c x) != S(x) for c = {c}")
    flat = [s_squared_exact([1] * k + [0] * (n - k)) for k in range(1, n + 1)]
    if flat != [Fraction(k, n) for k in range(1, n + 1)]:
        problems.append("a k-sparse flat vector does not have S^2 = k/n")
    if problems:
        refute("; ".join(problems), example={"x": [str(v) for v in x], "c": str(c)}, certified=True,
               certificate="exact rational arithmetic (the claimed formula at 60 digits)")
    claim_log.note("S^2 = ||x||_1^2/(n ||x||_2^2) exactly; the claimed formula agrees to 45 digits on every example; "
                   "bounds 1/n <= S^2 <= 1 with equality exactly at one-hot / flat |x|; S(cx) = S(x); "
                   "k equal non-zeros give S = sqrt(k/n).")


@st.composite
def probability_vector(draw, n: int):
    w = draw(st.lists(st.integers(0, 12), min_size=n, max_size=n).filter(any))
    t = sum(w)
    return [Fraction(v, t) for v in w]


@st.composite
def flat_probability_vector(draw, n: int):
    """Uniform on k of the n entries: the vectors at which S and entropy are easiest to compare."""
    k = draw(st.integers(1, n))
    return [Fraction(1, k)] * k + [Fraction(0)] * (n - k)


@st.composite
def probability_family(draw):
    """4 to 6 probability vectors of one length n in 2..4 (the first may be flat): every pair is compared,
    so one example tests up to 15 pairs of orders."""
    n = draw(st.integers(2, 4), label="n")
    first = draw(st.one_of(flat_probability_vector(n), probability_vector(n)), label="p_0")
    return [first] + draw(st.lists(probability_vector(n), min_size=3, max_size=5), label="p_1..")


@pytest.mark.claim("sparsity-measure-l1-l2", reading="entropy-order")
@given(family=probability_family())
def test_measure_orders_like_entropy(family, claim_log):
    from itertools import combinations

    from attention_claims.maths import certified_sign, entropy_arb

    s2 = [s_squared_exact(p) for p in family]
    h = [entropy_arb(p) for p in family]
    worst = -math.inf
    for i, j in combinations(range(len(family)), 2):
        ds, h_diff = s2[i] - s2[j], h[i] - h[j]
        worst = max(worst, -float(ds) * float(h_diff.mid()))
        dh = certified_sign(h_diff)
        s_sign = (ds > 0) - (ds < 0)
        if s_sign != 0 and dh != 0 and s_sign != dh:
            p, pp = family[i], family[j]
            refute(f"S and entropy order p = {[str(v) for v in p]} and p' = {[str(v) for v in pp]} oppositely: "
                   f"S(p)^2 - S(p')^2 = {ds}, sign of H(p) - H(p') = {dh}",
                   example={"p": [str(v) for v in p], "p_prime": [str(v) for v in pp]}, certified=True,
                   certificate="S^2 exactly in rationals; H(p) - H(p') as an arb interval excluding 0")
    target(worst, label="disagreement of the S and H orders")
    claim_log.example(n=len(family[0]), pairs=len(family) * (len(family) - 1) // 2)


# -- the Gaussian reduction (004 "简化形式") ---------------------------------------------------

def _double_factorial_moment(k: int) -> int:
    """``E eps^k`` for ``eps ~ N(0, 1)``: ``(k-1)!!`` for even ``k``, 0 for odd."""
    return 0 if k % 2 else math.prod(range(k - 1, 0, -2))


def _moments_of_sum(beta: Fraction, coeffs: list[Fraction], kmax: int) -> list[Fraction]:
    """``E[(beta + sum_i c_i eps_i)^k]``, ``k = 0..kmax``, exactly: add one independent term at a time."""
    m = [beta**k for k in range(kmax + 1)]
    for c in coeffs:
        m = [sum(math.comb(k, j) * m[j] * c ** (k - j) * _double_factorial_moment(k - j) for j in range(k + 1))
             for k in range(kmax + 1)]
    return m


@pytest.mark.claim("sparsity-gaussian-isotropic-reduction", reading="exact-moments")
@given(q=st.lists(rationals(-3, 3), min_size=1, max_size=5).filter(any),
       mu=st.lists(rationals(-3, 3), min_size=5, max_size=5), sigma=rationals(0, 4).filter(lambda v: v > 0))
def test_reduction_exact_moments(q, mu, sigma, claim_log, claimed):
    d = len(q)
    beta = sum(a * b for a, b in zip(q, mu[:d], strict=True))
    kmax = 8
    exact = _moments_of_sum(beta, [sigma * v for v in q], kmax)
    qn2 = sum(v * v for v in q)
    with mpmath.workdps(60):
        gamma_c = claimed.eval("gamma", sigma=_mpq(sigma), q_norm=mpmath.sqrt(_mpq(qn2)))
        beta_c = claimed.eval("beta", q_dot_mu=_mpq(beta))
        scalar = [mpmath.fsum(math.comb(k, j) * beta_c**j * gamma_c ** (k - j) * _double_factorial_moment(k - j)
                              for j in range(k + 1)) for k in range(kmax + 1)]
        errs = [abs(scalar[k] - _mpq(exact[k])) / max(abs(_mpq(exact[k])), mpmath.mpf(1)) for k in range(kmax + 1)]
        worst = max(errs)
    claim_log.example(d=d)
    if worst > mpmath.mpf("1e-40"):
        k = errs.index(worst)
        refute(f"E[(q.mu + sigma q.eps)^{k}] = {exact[k]} (exact, d = {d}) but the one-dimensional "
               f"beta + gamma eps with beta = {claimed.text('beta')}, gamma = {claimed.text('gamma')} gives "
               f"{mpmath.nstr(scalar[k], 20)}",
               example={"q": [str(v) for v in q], "mu": [str(v) for v in mu[:d]], "sigma": str(sigma)},
               certified=True, certificate="exact rational moments vs the claimed scalar at 60 digits")
    claim_log.note("Moments k <= 8 of q.mu + sigma q.eps computed exactly coordinate by coordinate; they match "
                   "beta + gamma eps to 40 digits, and the Gaussian is determined by its moments.")


@pytest.mark.parametrize("device,dtype,reading",
                         reading_params("sparsity-gaussian-isotropic-reduction", where=lambda r: r.name.startswith("monte-carlo")))
@given(f=st.sampled_from(["exp", "relu2", "identity"]), d=st.one_of(st.sampled_from([1, 2, 64]), st.integers(1, 64)),
       q_norm=log_uniform(-1, 1), gamma=st.floats(0.05, 1.0), c=st.floats(-2.0, 3.0), seed=st.integers(0, 2**31 - 1))
@profiles.scaled(0.25)
def test_reduction_monte_carlo(device, dtype, reading, f, d, q_norm, gamma, c, seed, claim_log, claimed):
    require_device(device)
    rng = np.random.default_rng(seed)
    u = rng.standard_normal(d)
    u /= np.linalg.norm(u)
    q = q_norm * u
    w = rng.standard_normal(d)
    w -= (w @ u) * u  # a component of mu orthogonal to q (none when d = 1)
    mu = (c * gamma / q_norm) * u + w
    sigma = gamma / q_norm
    n = 60_000
    dt = getattr(torch, dtype)
    gen = torch.Generator().manual_seed(seed)
    eps = torch.randn(n, d, generator=gen, dtype=torch.float64).to(device=device, dtype=dt)
    k = torch.as_tensor(mu, dtype=dt, device=device) + sigma * eps
    a = F_TORCH[f](k @ torch.as_tensor(q, dtype=dt, device=device))
    s_hat, se = s_and_standard_error(a)
    with mpmath.workdps(20):
        g_c = claimed.eval("gamma", sigma=mpmath.mpf(sigma), q_norm=mpmath.mpf(float(np.linalg.norm(q))))
        b_c = claimed.eval("beta", q_dot_mu=mpmath.mpf(float(q @ mu)))
    if not g_c > 0:
        refute(f"the claimed gamma = {claimed.text('gamma')} = {g_c} is not a positive scale",
               example={"sigma": sigma, "q_norm": q_norm}, certified=True, certificate="direct evaluation")
    ref = float(s_reference(f, b_c, g_c, dps=15))
    z = abs(s_hat - ref) / se
    target(z, label="|z| of the Monte Carlo estimate")
    claim_log.example(d=d, gamma=gamma, z=z)
    note(f"f={f} d={d} beta={float(b_c):.4g} gamma={float(g_c):.4g} S_hat={s_hat:.6f} se={se:.2e} S={ref:.6f}")
    # 6 standard errors: a false alarm has probability < 2e-9 per example under normality.
    if z > 6:
        refute(f"{device}/{dtype}: Monte Carlo S = {s_hat:.6f} +- {se:.1e} (n = {n}, d = {d}, f = {f}) vs the "
               f"one-dimensional reduction {ref:.6f} ({z:.1f} SE)",
               example={"f": f, "d": d, "q_norm": q_norm, "gamma": gamma, "c": c, "seed": seed}, certified=False,
               certificate="statistical: not a certificate")
    claim_log.note(f"n = {n} keys in R^d, q in a random direction and mu with a component orthogonal to q; "
                   "reference: 15-digit quadrature of the one-dimensional expectation; tolerance 6 standard errors.")


# -- f = exp: arbitrarily sparse (004 "两个例子") -----------------------------------------------

@pytest.mark.claim("sparsity-exp-arbitrarily-sparse", reading="quadrature")
@given(beta=st.floats(-50, 50), g1=log_uniform(-2, 0.6), ratio=st.floats(1.05, 3.0), eps=log_uniform(-8, -0.31))
@profiles.scaled(0.125)
def test_exp_sparsity_vanishes(beta, g1, ratio, eps, claim_log):
    g2 = min(g1 * ratio, 8.0)
    gamma = 8.0  # enough for every eps >= 1e-8 if S -> 0 (the check does not assume how fast)
    with mpmath.workdps(20):
        s1, s2 = s_reference("exp", beta, g1, dps=15), s_reference("exp", beta, g2, dps=15)
        s = s_reference("exp", beta, gamma, dps=15)
    claim_log.example(beta=beta, eps=eps)
    if not s2 < s1:
        refute(f"S(beta={beta}, gamma={g2:.6g}) = {mpmath.nstr(s2, 12)} is not below S(gamma={g1:.6g}) = "
               f"{mpmath.nstr(s1, 12)}", example={"beta": beta, "gamma_1": g1, "gamma_2": g2}, certified=True,
               certificate="15-digit quadrature")
    if not s < eps:
        refute(f"S(beta={beta}, gamma=8) = {mpmath.nstr(s, 6)} is not below eps = {eps:.3g}",
               example={"beta": beta, "eps": eps}, certified=True, certificate="15-digit quadrature")
    claim_log.note("S by 15-digit quadrature: strictly decreasing in gamma = sigma ||q|| for every beta (ratios "
                   "gamma_2/gamma_1 >= 1.05, S ratios far above 1e-12), and below every eps >= 1e-8 at gamma = 8.")


@functools.cache
def _finite_floor_crossing(n: int) -> float:
    """The gamma at which the n -> infinity S (15-digit quadrature, beta = 0) falls below the
    finite-n floor 1/sqrt(n): found by bisection (10-digit quadrature, 1e-2 relative)."""
    floor = 1 / math.sqrt(n)
    return bisect_predicate(lambda g: float(s_reference("exp", 0.0, g, dps=10)) < floor, 0.5, 6.0, rtol=1e-2)


@pytest.mark.claim("sparsity-exp-arbitrarily-sparse", reading="finite-n")
@given(n=st.sampled_from([2, 3, 16, 64, 256]), gamma=st.sampled_from([3.0, 4.0, 6.0, 8.0]), seed=st.integers(0, 100))
@profiles.scaled(0.25)
def test_exp_sparsity_finite_n(n, gamma, seed, claim_log):
    gen = torch.Generator().manual_seed(seed)
    a = torch.exp(gamma * torch.randn(n, generator=gen, dtype=torch.float64))  # beta only rescales a: S ignores it
    s2 = s_squared_exact(a.tolist())
    eps = Fraction(1, 4 * n)  # eps = 1/(2 sqrt(n)), squared
    claim_log.example(n=n, gamma=gamma, S=math.sqrt(s2))
    target(-float(s2 * n), label="-n S^2")
    if not s2 < eps:
        refute(f"with n = {n} keys S(a) = {math.sqrt(s2):.4g} at gamma = {gamma:.3g}, not below eps = 1/(2 sqrt n) "
               f"= {1 / (2 * math.sqrt(n)):.4g}: every vector of length n has S >= 1/sqrt(n), whereas the "
               f"n -> infinity value exp(-gamma^2/2) = {math.exp(-gamma * gamma / 2):.3g}",
               example={"n": n, "gamma": gamma, "seed": seed}, certified=True,
               certificate=f"exact rational S^2 of the stored float64 weights = {float(s2):.6g} >= 1/n = {1 / n:.6g} "
                           "(Cauchy-Schwarz: ||a||_1^2 >= ||a||_2^2)",
               boundary=f"the n -> infinity S falls below the finite floor 1/sqrt(n) at gamma > "
                        f"{_finite_floor_crossing(256):.4g} for n = 256 (bisection on 10-digit quadrature)")


# -- f = relu^2: the printed closed form ------------------------------------------------------

def _guard_digits(beta: float, gamma: float) -> int:
    """Digits lost in the printed relu^2 form: erf(x) + 1 ~ e^{-x^2} for x = beta/(sqrt2 gamma) << 0."""
    c = beta / gamma
    return int(c * c / (2 * math.log(10))) + 20 if c < 0 else 20


@pytest.mark.claim("sparsity-relu2-closed-form", reading="mpmath-reference")
@given(c=st.floats(-30, 30), gamma=log_uniform(-3, 3))
@profiles.scaled(0.2)
def test_relu2_printed_vs_quadrature(c, gamma, claim_log, claimed):
    beta = c * gamma
    with mpmath.workdps(45 + _guard_digits(beta, gamma)):
        printed = claimed.eval("expression", beta=mpmath.mpf(beta), gamma=mpmath.mpf(gamma))
    with mpmath.workdps(45):
        ref = s_reference("relu2", beta, gamma)
        err = _rel(+printed, ref)
        bad = bool(err > REL_25)
    claim_log.example(beta_over_gamma=c, gamma=gamma)
    note(f"beta={beta!r} gamma={gamma!r} printed={mpmath.nstr(printed, 30)} quad={mpmath.nstr(ref, 30)}")
    if bad:
        refute(f"printed relu^2 form = {mpmath.nstr(printed, 20)} but quadrature gives {mpmath.nstr(ref, 20)} "
               f"(beta={beta}, gamma={gamma})", example={"beta": beta, "gamma": gamma}, certified=True,
               certificate=f"40-digit quadrature; relative difference {mpmath.nstr(err, 5)} > 1e-25")
    claim_log.note("Printed form evaluated at 45 digits plus c^2/(2 ln 10) + 20 guard digits; tolerance 1e-25 "
                   "relative against 40-digit quadrature over the support X > 0.")


def _printed_float64(text: str, beta: float, gamma: float) -> float | None:
    """The printed form in IEEE float64 (``math``), or ``None`` when it cannot be evaluated."""
    try:
        v = float(evaluate(text, floating=True, beta=beta, gamma=gamma))
    except (ValueError, OverflowError, ZeroDivisionError):
        return None
    return v if math.isfinite(v) else None


def _float64_rel_err(text: str, beta: float, gamma: float) -> float:
    v = _printed_float64(text, beta, gamma)
    ref = s_relu2_moments(mpmath.mpf(beta) / mpmath.mpf(gamma))
    return math.inf if v is None else float(abs(v - ref) / ref)


@functools.cache
def _float64_boundary(text: str) -> float:
    """The beta/gamma (gamma = 1) below which the float64 printed form is off by more than 1e-6 (bisection)."""
    return -bisect_predicate(lambda x: _float64_rel_err(text, -x, 1.0) > 1e-6, 0.0, 30.0, rtol=1e-4)


@pytest.mark.claim("sparsity-relu2-closed-form", reading="cpu-float64-printed")
@given(c=st.floats(-30, 30), gamma=log_uniform(-3, 3))
def test_relu2_printed_float64(c, gamma, claim_log, claimed):
    beta = c * gamma
    text = claimed.text("expression")
    err = _float64_rel_err(text, beta, gamma)
    target(min(math.log10(err + 1e-300), 300.0), label="log10 relative error of the float64 form")
    claim_log.example(beta_over_gamma=c, gamma=gamma)
    if err > 1e-6:  # tolerance: 1e-6 relative, ~1e10 ulps of float64
        with mpmath.workdps(45):  # re-computed by the moment recurrence at 45 digits (independent of the print)
            ref = s_relu2_moments(mpmath.mpf(beta) / mpmath.mpf(gamma))
        value = _printed_float64(text, beta, gamma)
        shown = "no number (a math domain error or overflow)" if value is None else repr(value)
        confirmed = value is None or abs(value - ref) / ref > 1e-6
        refute(f"evaluated in float64 as printed, the relu^2 form gives {shown} at beta = {beta!r}, gamma = {gamma!r} "
               f"(beta/gamma = {c:.4g}); the true S is {mpmath.nstr(ref, 12)}",
               example={"beta": beta, "gamma": gamma, "float64_value": value}, certified=bool(confirmed),
               certificate="the float64 value is read back exactly; S by the truncated-normal moment recurrence at "
                           "45 digits (validated against quadrature in tests/test_sparsity_module.py)",
               boundary=f"relative error > 1e-6 once beta/gamma < {_float64_boundary(text):.4g} "
                        "(bisection at gamma = 1; erf(x) + 1 cancels)")


# -- f = relu^2: only beta < 0 (with its figure) ----------------------------------------------

@pytest.fixture
def figures_dir(request, tmp_path_factory) -> Path:
    """``<report dir>/figures`` (default ``reports/figures``); a temporary folder under --claims-no-report."""
    config = request.config
    if config.getoption("claims_no_report", False):
        return tmp_path_factory.mktemp("figures")
    opt = config.getoption("claims_report_dir", None)
    if opt:
        p = Path(opt)
        base = p if p.is_absolute() else Path(config.invocation_params.dir) / p
    else:
        base = Path(config.rootpath) / "reports"
    return base / "figures"


@pytest.mark.claim("sparsity-relu2-sparse-only-for-negative-bias", reading="quadrature")
@given(beta=st.one_of(st.just(0.0), st.floats(-2, 2), st.floats(-50, 50)), gamma=log_uniform(-3, 2),
       eps=log_uniform(-6, -0.53))
@profiles.scaled(0.25)
def test_relu2_sparse_only_for_negative_bias(beta, gamma, eps, claim_log, claimed):
    inside = bool(claimed.eval("sparse_domain", exact=True, beta=Fraction(beta)))
    claim_log.example(beta=beta, gamma=gamma)
    with mpmath.workdps(45):
        if beta < 0:  # a witness that S -> 0: Cauchy-Schwarz S <= sqrt(Phi(c)); Phi(c) = eps^2/4, gamma = beta/c
            c_star = mpmath.sqrt(2) * mpmath.erfinv(2 * (mpmath.mpf(eps) ** 2 / 4) - 1)
            g_star = mpmath.mpf(beta) / c_star
            s_star = s_reference("relu2", beta, g_star)
            claim_log.track("S at gamma*", float(s_star))
        if not inside:
            if beta < 0:
                refute(f"beta = {beta} lies outside the claimed domain {claimed.text('sparse_domain')} but S can "
                       f"approach 0 there: S(beta, gamma = {mpmath.nstr(g_star, 6)}) = {mpmath.nstr(s_star, 8)} < "
                       f"eps = {eps}", example={"beta": beta, "eps": eps}, certified=bool(s_star < eps),
                       certificate="40-digit quadrature")
            s = s_relu2_moments(mpmath.mpf(beta) / mpmath.mpf(gamma))
            target(-float(s - _inv_sqrt6()), label="-(S - 1/sqrt6) outside the claimed domain")
            if s < _inv_sqrt6() * (1 - mpmath.mpf("1e-30")):
                q = s_reference("relu2", beta, gamma)
                refute(f"beta = {beta} >= 0 but S = {mpmath.nstr(q, 12)} < 1/sqrt(6) = S(0) at gamma = {gamma}",
                       example={"beta": beta, "gamma": gamma}, certified=bool(q < _inv_sqrt6()),
                       certificate="40-digit quadrature")
            return
        if beta >= 0:
            q = s_reference("relu2", beta, gamma)
            refute(f"beta = {beta} is in the claimed domain {claimed.text('sparse_domain')}, but for beta >= 0 "
                   f"S >= S(0) = 1/sqrt(6) for every gamma (S = {mpmath.nstr(q, 12)} at gamma = {gamma}): it cannot "
                   "approach 0", example={"beta": beta, "gamma": gamma}, certified=bool(q >= _inv_sqrt6() * (1 - REL_25)),
                   certificate="40-digit quadrature; S is non-decreasing in beta/gamma (log-convex moments)")
    if not s_star < eps:
        refute(f"beta = {beta} < 0 but S(beta, gamma = {mpmath.nstr(g_star, 6)}) = {mpmath.nstr(s_star, 8)} is not "
               f"below eps = {eps}", example={"beta": beta, "eps": eps}, certified=True,
               certificate="40-digit quadrature")
    claim_log.note("Outside the claimed domain S >= 1/sqrt(6) = 0.40825 (S(0), the infimum: S is non-decreasing in "
                   "beta/gamma); inside it S < eps at gamma = beta/c, Phi(c) = eps^2/4 (40-digit quadrature).")


@pytest.mark.claim("sparsity-relu2-sparse-only-for-negative-bias", reading="zero-fraction")
@given(beta=st.one_of(st.just(0.0), st.floats(-2, 2), st.floats(-50, 50)), gamma=log_uniform(-3, 2))
def test_relu2_zero_fraction(beta, gamma, claim_log, claimed):
    inside = bool(claimed.eval("sparse_domain", exact=True, beta=Fraction(beta)))
    with mpmath.workdps(30):
        c = mpmath.mpf(beta) / mpmath.mpf(gamma)
        excess = mpmath.erf(-c / mpmath.sqrt(2)) / 2  # P(relu = 0) - 1/2, without cancelling near 1/2
        p0 = excess + mpmath.mpf(1) / 2
        p_lim = mpmath.ncdf(-mpmath.sign(c) * mpmath.inf)  # the gamma -> 0 limit: 1, 1/2 or 0
        wrong = bool(excess > 0) != inside or bool(p_lim == 1) != inside
    claim_log.example(beta=beta, zero_fraction=float(p0))
    if wrong:
        refute(f"beta = {beta}: P(relu = 0) = {mpmath.nstr(p0, 8)} (-> {mpmath.nstr(p_lim, 8)} as gamma -> 0) but "
               f"the claimed domain {claimed.text('sparse_domain')} says {'inside' if inside else 'outside'}",
               example={"beta": beta, "gamma": gamma}, certified=True, certificate="30-digit mpmath normal CDF")


SAMPLE_N, SAMPLE_Z = 200_000, 5.0


def _figure_samples(kind, betas):
    """Sampled attention vectors for the figure: one per (beta, gamma) with beta/gamma >= -2 (below
    that, a relu^2 vector of SAMPLE_N entries has too few non-zero entries for a normal s.e.)."""
    from attention_claims.maths import SAMPLE_GAMMAS, sampled_sparsity

    rng = np.random.default_rng(9889)  # fixed: the figure is the same on every run
    return [(b, g, *sampled_sparsity(kind, b, g, n=SAMPLE_N, rng=rng)[:2])
            for b in betas for g in SAMPLE_GAMMAS if b / g >= -2]


def _check_figure(kind, path, fast_ref, claim_log):
    """Draw a figure; compare every drawn point with ``fast_ref``, one per curve with quadrature, and
    every sampled attention vector's sparsity with its curve."""
    from attention_claims.maths import IDENTITY_BETAS, RELU2_BETAS, sparsity_curves

    samples = _figure_samples(kind, RELU2_BETAS if kind == "relu2" else IDENTITY_BETAS)
    drawn = plot_sparsity_figure(kind, path, samples=samples, z=SAMPLE_Z)
    worst = 0.0
    for beta, x, y in drawn:
        with mpmath.workdps(20):
            for g, s in zip(x, y, strict=True):
                ref = fast_ref(mpmath.mpf(beta) / mpmath.mpf(float(g)))
                worst = max(worst, float(abs(s - ref) / (ref + mpmath.mpf("1e-300"))))
            for i in (len(x) // 3,):
                ref = s_reference(kind, beta, float(x[i]), dps=20)
                worst = max(worst, float(abs(y[i] - ref) / ref))
        claim_log.example(beta=beta)
    # tolerance: 1e-12 relative (the curves are float64 roundings of 40-digit values)
    if worst > 1e-12:
        refute(f"the drawn {kind} curves differ from the reference by {worst:.3e} relative",
               example={"kind": kind}, certified=True, certificate="20-digit quadrature / moment formula")
    # sampled values: |S_hat - S| <= SAMPLE_Z standard errors (delta method); at 5 s.e. a true curve
    # fails one of ~50 points with probability ~3e-5, and the seed is fixed
    zs = []
    for b, g, s_hat, se in samples:
        curve = float(sparsity_curves(kind, [b], [g])[b][0])
        z = abs(s_hat - curve) / se
        zs.append(z)
        if z > SAMPLE_Z:
            refute(f"{kind}: a sampled attention vector (N = {SAMPLE_N} keys, beta = {b}, gamma = {g}) has S = "
                   f"{s_hat:.5f} +- {se:.2g}, {z:.1f} standard errors from the curve's {curve:.5f}",
                   example={"kind": kind, "beta": b, "gamma": g, "S_sampled": s_hat, "se": se}, certified=False)
    claim_log.track("sampled |S_hat - S| / s.e.", max(zs))
    claim_log.figure(path, f"004 figure reproduced ({kind}): S against gamma = sigma |q| from the closed form, "
                           f"with {len(samples)} sampled attention vectors of N = {SAMPLE_N} keys "
                           f"(error bars {SAMPLE_Z:g} s.e.)")
    return drawn


@pytest.mark.claim("sparsity-relu2-sparse-only-for-negative-bias", reading="figure-curves")
def test_relu2_figure(claim_log, claimed, figures_dir):
    path = figures_dir / "9889-relu2.png"
    drawn = _check_figure("relu2", path, s_relu2_moments, claim_log)
    for beta, _x, y in drawn:
        inside = bool(claimed.eval("sparse_domain", exact=True, beta=Fraction(beta)))
        if inside and not y[0] < 0.01:
            refute(f"the beta = {beta} curve (inside the claimed domain) is still {y[0]:.4f} at gamma = {_x[0]:.3g}",
                   example={"beta": beta}, certified=True, certificate="the drawn float64 values")
        if not inside and not float(y.min()) >= float(_inv_sqrt6()) - 1e-12:
            refute(f"the beta = {beta} curve (outside the claimed domain) falls to {y.min():.4f} < 1/sqrt(6)",
                   example={"beta": beta}, certified=True, certificate="the drawn float64 values")
    claim_log.note(f"Figure {path.name} (S vs gamma, beta in {[b for b, _, _ in drawn]}): every drawn point within "
                   "1e-12 relative of the moment reference, one per curve against 20-digit quadrature, every sampled "
                   f"attention vector within {SAMPLE_Z:g} standard errors of its curve.")


# -- f = identity: the floor (with its figure) --------------------------------------------------

@pytest.mark.claim("sparsity-identity-lower-bound", reading="quadrature")
@given(beta=st.one_of(st.just(0.0), st.floats(-1e3, 1e3)), gamma=log_uniform(-3, 3))
@profiles.scaled(0.25)
def test_identity_floor(beta, gamma, claim_log, claimed):
    with mpmath.workdps(45):
        floor = claimed.eval("floor")
        s = s_identity_moments(mpmath.mpf(beta) / mpmath.mpf(gamma))
        below = bool(s < floor * (1 - mpmath.mpf("1e-30")))
    target(-float(s - floor), label="-(S - floor)")
    claim_log.example(beta=beta, gamma=gamma, S=float(s))
    if below:
        with mpmath.workdps(45):
            q = s_reference("identity", beta, gamma)
        refute(f"S(beta={beta}, gamma={gamma}) = {mpmath.nstr(q, 15)} < the claimed floor {claimed.text('floor')} = "
               f"{mpmath.nstr(floor, 15)}", example={"beta": beta, "gamma": gamma},
               certified=bool(q < floor * (1 - REL_25)), certificate="40-digit quadrature")
    claim_log.note("S >= floor on every example (folded-normal mean at 45 digits; a violation is re-done by "
                   "40-digit quadrature).")


@pytest.mark.claim("sparsity-identity-lower-bound", reading="quadrature")
@pytest.mark.parametrize("gamma", [1e-3, 1.0, 1e3])
def test_identity_floor_attained(gamma, claim_log, claimed):
    with mpmath.workdps(45):
        floor = claimed.eval("floor")
        at_zero = s_reference("identity", 0.0, gamma)
        not_attained = bool(_rel(at_zero, floor) > REL_25)
    claim_log.example(gamma=gamma, floor=float(floor))
    if not_attained or not floor > 0.5:
        refute(f"S(0, gamma = {gamma}) = {mpmath.nstr(at_zero, 15)} (quadrature) but the claimed floor is "
               f"{claimed.text('floor')} = {mpmath.nstr(floor, 15)}: it is not the infimum (or not high)",
               example={"gamma": gamma}, certified=True, certificate="40-digit quadrature")
    claim_log.note("S(0, gamma) equals the floor to 25 digits by 40-digit quadrature: the floor is attained.")


@pytest.mark.claim("sparsity-identity-lower-bound", reading="figure-curves")
def test_identity_figure(claim_log, claimed, figures_dir):
    path = figures_dir / "9889-identity.png"
    drawn = _check_figure("identity", path, s_identity_moments, claim_log)
    floor = float(claimed.eval("floor"))
    low = min(float(y.min()) for _b, _x, y in drawn)
    claim_log.track("lowest drawn S", low)
    if low < floor - 1e-12:
        refute(f"a drawn curve falls to {low:.6f} < the claimed floor {floor:.6f}", example={"lowest": low},
               certified=True, certificate="the drawn float64 values, checked against quadrature")
    claim_log.note(f"Figure {path.name} (S vs gamma, beta in {[b for b, _, _ in drawn]}): every drawn point within "
                   "1e-12 relative of the folded-normal formula, one per curve against 20-digit quadrature, every "
                   f"sampled attention vector within {SAMPLE_Z:g} standard errors of its curve.")


# -- non-negative linear attention (004 "一般线性") ---------------------------------------------

@st.composite
def nonneg_keys(draw, n=(1, 8), d=(1, 4), den: int = 3):
    nn = draw(st.integers(*n), label="n")
    dd = draw(st.integers(*d), label="d")
    keys = draw(st.lists(st.lists(rationals(0, 6, den), min_size=dd, max_size=dd), min_size=nn, max_size=nn))
    q = draw(st.lists(rationals(0, 5, 2), min_size=dd, max_size=dd))
    a = [sum(x * y for x, y in zip(q, k, strict=True)) for k in keys]
    assume(any(a))
    return keys, q, a


def _quadratic_forms(keys, q, *, divisor_shift: int = 0):
    mu, cov = population_moments(keys)
    n = len(keys)
    if divisor_shift:
        cov = [[v * n / (n - divisor_shift) for v in row] for row in cov]
    qmu = sum(a * b for a, b in zip(q, mu, strict=True))
    qsq = sum(q[i] * cov[i][j] * q[j] for i in range(len(q)) for j in range(len(q)))
    return qmu, qsq


@pytest.mark.claim("sparsity-nonnegative-linear-general", reading="exact-population")
@given(data=nonneg_keys())
def test_general_linear_exact(data, claim_log, claimed):
    keys, q, a = data
    s2 = s_squared_exact(a)
    qmu, qsq = _quadratic_forms(keys, q)
    with mpmath.workdps(60):
        val = claimed.eval("expression", qSq=_mpq(qsq), qmu=_mpq(qmu))
        err = _rel(val, mpmath.sqrt(_mpq(s2)))
    claim_log.example(n=len(keys), d=len(q), S=math.sqrt(s2))
    if err > REL_45:
        refute(f"S(a) = {mpmath.nstr(mpmath.sqrt(_mpq(s2)), 20)} (exact) but {claimed.text('expression')} = "
               f"{mpmath.nstr(val, 20)} with the sequence's mean and population covariance",
               example={"keys": [[str(v) for v in k] for k in keys], "q": [str(v) for v in q]}, certified=True,
               certificate="exact rationals; the claimed formula at 60 digits")


@pytest.mark.claim("sparsity-nonnegative-linear-general", reading="sample-covariance")
@given(data=nonneg_keys(n=(2, 4), d=(1, 2), den=1))
def test_general_linear_sample_covariance(data, claim_log, claimed):
    keys, q, a = data
    n = len(keys)
    s2 = s_squared_exact(a)
    qmu, qsq = _quadratic_forms(keys, q, divisor_shift=1)
    with mpmath.workdps(60):
        val = claimed.eval("expression", qSq=_mpq(qsq), qmu=_mpq(qmu))
        err = _rel(val, mpmath.sqrt(_mpq(s2)))
    claim_log.example(n=n)
    target(float(err), label="relative error with the sample covariance")
    if err > REL_45:
        pmu, psq = _quadratic_forms(keys, q)
        r = psq / pmu**2  # inverse squared SNR, population moments

        def off(m: int) -> bool:  # the same key set repeated: population moments unchanged, divisor n m - 1
            s_pop, s_smp = 1 / (1 + r), 1 / (1 + r * Fraction(n * m, n * m - 1))
            return (s_pop - s_smp) / s_pop > Fraction(2, 1000)  # S^2 off by > 2e-3, i.e. S by > ~1e-3

        hi = 1
        while off(hi):
            hi *= 2
        lo = hi // 2  # off(lo) holds (or lo = 0), off(hi) does not: integer bisection
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if off(mid) else (lo, mid)
        refute(f"with np.cov/torch.cov's default sample covariance (divisor n - 1 = {n - 1}) the formula gives "
               f"{mpmath.nstr(val, 15)}, but S(a) = {mpmath.nstr(mpmath.sqrt(_mpq(s2)), 15)} exactly",
               example={"keys": [[str(v) for v in k] for k in keys], "q": [str(v) for v in q]}, certified=True,
               certificate="exact rationals; the claimed formula at 60 digits",
               boundary=f"for this key distribution S is off by more than ~1e-3 relative until n >= {n * hi} keys "
                        "(integer bisection over repetitions of the key set)")


@pytest.mark.parametrize("device,dtype,reading",
                         reading_params("sparsity-nonnegative-linear-general", where=lambda r: r.name.startswith("monte-carlo")))
@given(d=st.integers(1, 8), sigma=st.floats(0.05, 0.7), seed=st.integers(0, 2**31 - 1))
@profiles.scaled(0.25)
def test_general_linear_monte_carlo(device, dtype, reading, d, sigma, seed, claim_log, claimed):
    require_device(device)
    rng = np.random.default_rng(seed)
    mu, q = rng.uniform(-1, 1, d), rng.uniform(-1, 1, d)
    q_t = np.exp(q)  # g = exp
    mean, cov = lognormal_feature_moments(mu, sigma)  # of h(k) = exp(k)
    n = 100_000
    dt = getattr(torch, dtype)
    gen = torch.Generator().manual_seed(seed)
    k = torch.as_tensor(mu, dtype=dt, device=device) + sigma * torch.randn(n, d, generator=gen,
                                                                            dtype=torch.float64).to(device, dt)
    a = torch.exp(k) @ torch.as_tensor(q_t, dtype=dt, device=device)
    s_hat, se = s_and_standard_error(a)
    with mpmath.workdps(20):
        s = float(claimed.eval("expression", qSq=mpmath.mpf(float(q_t @ cov @ q_t)), qmu=mpmath.mpf(float(q_t @ mean))))
    z = abs(s_hat - s) / se
    target(z, label="|z|")
    claim_log.example(d=d, sigma=sigma, z=z)
    if z > 6:  # 6 standard errors
        refute(f"Monte Carlo S = {s_hat:.6f} +- {se:.1e} vs the formula {s:.6f} ({z:.1f} SE; d = {d}, sigma = {sigma})",
               example={"d": d, "sigma": sigma, "seed": seed}, certified=False,
               certificate="statistical: not a certificate")
    claim_log.note(f"k ~ N(mu, sigma^2 I), h = g = exp, exact log-normal mean/covariance; n = {n}; tolerance 6 SE.")


def _low_snr_family(eps: Fraction, mu0: Fraction):
    """Keys M e_1 (m of n) and 0 otherwise with m/n < eps^2: returns (p, S^2 of the fixed-mean member, the
    fixed-variance member's mean^2)."""
    n = int(1 / eps**2) + 1
    p = Fraction(1, n)
    fixed_mean = [mu0 / p] + [Fraction(0)] * (n - 1)  # mean mu0, variance mu0^2 (1-p)/p -> infinity
    mean_sq_fixed_var = p / (1 - p)  # with M^2 = 1/(p(1-p)): variance 1, mean^2 = p/(1-p) -> 0
    return p, s_squared_exact(fixed_mean), mean_sq_fixed_var


@pytest.mark.claim("nonnegative-linear-sparse-iff-low-snr", reading="exact")
@given(k=st.integers(2, 60), mu0=rationals(1, 5), data=nonneg_keys())
def test_low_snr_makes_sparse(k, mu0, data, claim_log):
    eps = Fraction(1, k)
    p, s2_mean, m2_var = _low_snr_family(eps, mu0)
    s2_var = m2_var / (m2_var + 1)  # S^2 = mean^2 / (mean^2 + variance), variance 1
    keys, q, a = data
    qmu, qsq = _quadratic_forms(keys, q)
    r = qsq / qmu**2
    s2 = s_squared_exact(a)
    claim_log.example(eps=float(eps), S_family=math.sqrt(s2_mean))
    if not (s2_mean < eps**2 and s2_var < eps**2 and s2_mean == p and s2_var == p):
        refute(f"the low-SNR family with p = {p} has S^2 = {s2_mean} (fixed mean) / {s2_var} (fixed variance), not "
               f"below eps^2 = {eps**2}", example={"eps": str(eps)}, certified=True, certificate="exact rationals")
    if s2 != 1 / (1 + r):
        refute(f"S^2 = {s2} but 1/(1 + R) = {1 / (1 + r)} with R = q'Sq/(q'mu)^2 = {r}",
               example={"keys": [[str(v) for v in kk] for kk in keys], "q": [str(v) for v in q]}, certified=True,
               certificate="exact rationals")
    claim_log.note("Exact: keys M e_1 w.p. p and 0 otherwise give S^2 = p for any M, so p -> 0 drives S -> 0 "
                   "with the variance fixed (mean -> 0) or the mean fixed (variance -> infinity); S^2 = 1/(1+R) on "
                   "every random non-negative sequence.")


@pytest.mark.claim("low-snr-nonnegative-sequence-clustered", reading="exact")
@given(zeros=st.integers(0, 60), big=st.lists(st.integers(0, 1000), min_size=1, max_size=12))
def test_low_snr_clustered(zeros, big, claim_log):
    x = [Fraction(0)] * zeros + [Fraction(v) for v in big]
    n = len(x)
    m = sum(x) / n
    var = sum((v - m) ** 2 for v in x) / n
    assume(var > 0 and m * m < var)  # r = m/s < 1: the small-SNR regime the claim is about
    inside = sum(1 for v in x if v**4 <= m * m * var)  # v <= sqrt(r) s  <=>  v^4 <= m^2 s^2
    frac = Fraction(inside, n)
    slack = m * m / var - (1 - frac) ** 4  # >= 0  <=>  1 - frac <= sqrt(r)
    target(-float(slack), label="-(r - (1-fraction)^4)")
    claim_log.example(n=n, r=math.sqrt(float(m * m / var)), fraction=float(frac))
    if slack < 0:
        refute(f"only {inside}/{n} elements lie in [0, sqrt(r) s] with r = m/s = {math.sqrt(m * m / var):.4g}: "
               f"fewer than 1 - sqrt(r)", example={"x": [str(v) for v in x]}, certified=True,
               certificate="exact rationals")


@pytest.mark.claim("linear-attention-absolute-not-relative", reading="exact-rank")
@given(N=st.integers(3, 12), data=st.data())
def test_absolute_vs_relative_patterns(N, data, claim_log, claimed):
    s = data.draw(st.integers(-(N - 2), N - 2), label="relative offset s")
    d = data.draw(st.integers(1, N - abs(s) - 1), label="feature dimension d")
    j = data.draw(st.integers(0, N - 1), label="attended column j")
    col = np.zeros((N, N), dtype=np.int64)
    col[:, j] = 1
    phi_q, phi_k = np.ones((N, 1), dtype=np.int64), np.zeros((N, 1), dtype=np.int64)
    phi_k[j, 0] = 1
    shift = np.zeros((N, N), dtype=np.int64)
    for i in range(N):
        if 0 <= i + s < N:
            shift[i, i + s] = 1
    r_col, r_shift = exact_rank(col), exact_rank(shift)
    want = int(claimed.eval("absolute_rank"))
    claim_log.example(N=N, d=d, shift_rank=r_shift)
    if r_col != want or not np.array_equal(phi_q @ phi_k.T, col) or r_shift != N - abs(s) or not r_shift > d:
        refute(f"N = {N}: rank(1 e_j^T) = {r_col} (claimed {want}), rank(S_{s}) = {r_shift}, d = {d}",
               example={"N": N, "s": s, "d": d, "j": j}, certified=True, certificate="exact integer rank (fmpz)")
    claim_log.note("Exact ranks: a column of ones is rank 1 = phi(Q) phi(K)^T with one non-negative feature; the "
                   "one-hot relative pattern S_s has rank N - |s| > d, beyond any unmasked d-feature linear attention.")


@pytest.mark.claim("sparsity-linear-iid-components", reading="exact-product-design")
@given(values=st.lists(rationals(0, 6, 2), min_size=2, max_size=4).filter(lambda v: len(set(v)) > 1),
       d=st.integers(1, 3), q=st.lists(rationals(0, 4, 2), min_size=3, max_size=3))
def test_iid_simplification(values, d, q, claim_log, claimed):
    q = q[:d]
    assume(any(q))
    keys = product_design(values, d)
    mu, cov = population_moments(keys)
    m = sum(values) / len(values)
    var = sum((v - m) ** 2 for v in values) / len(values)
    if mu != [m] * d or cov != [[var if i == jj else 0 for jj in range(d)] for i in range(d)]:
        raise RuntimeError("product_design does not give i.i.d. components")  # a bug of the suite, not a claim
    a = [sum(x * y for x, y in zip(q, k, strict=True)) for k in keys]
    s2 = s_squared_exact(a)
    with mpmath.workdps(60):
        val = claimed.eval("expression", sigma_t=mpmath.sqrt(_mpq(var)), mu_t=_mpq(m),
                           l2=mpmath.sqrt(_mpq(sum(v * v for v in q))), l1=_mpq(sum(q)))
        err = _rel(val, mpmath.sqrt(_mpq(s2)))
    claim_log.example(keys=len(keys), d=d)
    if err > REL_45:
        refute(f"S(a) = {mpmath.nstr(mpmath.sqrt(_mpq(s2)), 20)} exactly, but {claimed.text('expression')} = "
               f"{mpmath.nstr(val, 20)}", example={"values": [str(v) for v in values], "d": d,
                                                  "q": [str(v) for v in q]},
               certified=True, certificate="exact rationals; the claimed formula at 60 digits")


@pytest.mark.claim("sparsity-linear-factor-max-sqrt-d", reading="exact")
@given(q=st.lists(st.integers(-20, 20), min_size=1, max_size=16).filter(any))
def test_factor_maximum(q, claim_log, claimed):
    d = len(q)
    l1 = sum(abs(v) for v in q)
    ratio2 = Fraction(sum(v * v for v in q), l1 * l1)
    with mpmath.workdps(50):
        cmax = claimed.eval("factor_max", d=mpmath.mpf(d))
        exceeds = bool(_mpq(ratio2) > cmax**2 * (1 + mpmath.mpf("1e-40")))
        unattained = bool(abs(cmax - 1) > mpmath.mpf("1e-40"))  # the true maximum is 1 (one-hot q)
    target(float(d), label="d")
    claim_log.example(d=d, ratio=math.sqrt(ratio2))
    if ratio2 > 1:
        raise RuntimeError("||q||_2 > ||q||_1: impossible, a bug of the suite")
    if exceeds or unattained:
        refute(f"d = {d}: the maximum of ||q||_2/||q||_1 over R^d is 1 (one-hot q; the flat q gives the minimum "
               f"1/sqrt(d) = {1 / math.sqrt(d):.4g}), not {claimed.text('factor_max')} = {mpmath.nstr(cmax, 10)}",
               example={"d": d, "q": q, "ratio": math.sqrt(ratio2)}, certified=True,
               certificate="exact: ||q||_1^2 - ||q||_2^2 = 2 sum_{i<j} |q_i q_j| >= 0, equality iff at most one "
                           "q_i != 0, so the maximum is 1")


@pytest.mark.claim("sparsity-linear-factor-max-sqrt-d", reading="reciprocal")
@given(q=st.lists(st.integers(-20, 20), min_size=1, max_size=64).filter(any))
def test_reciprocal_factor_maximum(q, claim_log, claimed):
    d = len(q)
    l1 = sum(abs(v) for v in q)
    inv2 = Fraction(l1 * l1, sum(v * v for v in q))  # (||q||_1/||q||_2)^2
    with mpmath.workdps(50):
        cmax2 = claimed.eval("factor_max", d=mpmath.mpf(d)) ** 2
        ok = bool(_mpq(inv2) <= cmax2 * (1 + mpmath.mpf("1e-40")) and abs(cmax2 - d) <= mpmath.mpf("1e-40") * d)
    claim_log.example(d=d)
    if not ok:
        refute(f"d = {d}: (||q||_1/||q||_2)^2 = {inv2}, maximum d (all-ones q, Cauchy-Schwarz), claimed "
               f"{claimed.text('factor_max')}^2 = {mpmath.nstr(cmax2, 10)}", example={"d": d, "q": q},
               certified=True, certificate="exact rationals")


@pytest.mark.claim("linear-sparsity-needs-larger-d", reading="factor-needs-d")
@given(d1=st.integers(1, 16), extra=st.integers(1, 16))
def test_factor_does_not_need_d(d1, extra, claim_log):
    d2 = d1 + extra

    def ratio2(q):  # (||q||_2 / ||q||_1)^2, exactly
        return Fraction(sum(v * v for v in q), sum(abs(v) for v in q) ** 2)

    one_hot = {d: ratio2([1] + [0] * (d - 1)) for d in (d1, d2)}  # the maximum, 1, in every dimension
    flat = {d: ratio2([1] * d) for d in (d1, d2)}  # the minimum, 1/d
    claim_log.example(d1=d1, d2=d2)
    if not one_hot[d2] > one_hot[d1]:
        refute(f"raising d from {d1} to {d2} does not raise the attainable maximum of ||q||_2/||q||_1: it is "
               f"{math.sqrt(one_hot[d1]):g} in both (one-hot q), while a flat q gives 1/sqrt(d) = "
               f"{math.sqrt(flat[d1]):.4g} -> {math.sqrt(flat[d2]):.4g}, falling with d; the smallest S of the i.i.d. "
               "formula, 1/sqrt(1 + (sigma~/mu~)^2), is the same for every d",
               example={"d1": d1, "d2": d2}, certified=True,
               certificate="exact: ||q||_1^2 - ||q||_2^2 = 2 sum_{i<j} |q_i q_j| >= 0, so the maximum is 1 in every "
                           "dimension, attained by e_1")


@pytest.mark.claim("linear-sparsity-needs-larger-d", reading="rank-ceiling")
@given(N=st.integers(1, 10), d=st.integers(1, 10), data=st.data())
def test_rank_ceiling_is_d(N, d, data, claim_log):
    ints = st.lists(st.integers(0, 4), min_size=N * d, max_size=N * d)
    fq = np.array(data.draw(ints, label="phi(Q)"), dtype=np.int64).reshape(N, d)
    fk = np.array(data.draw(ints, label="phi(K)"), dtype=np.int64).reshape(N, d)
    nodes = np.arange(1, N + 1, dtype=np.int64)
    vander = nodes[:, None] ** np.arange(d)[None, :]  # distinct positive nodes: rank min(N, d)
    r = exact_rank(fq @ fk.T) if (fq @ fk.T).any() else 0
    r_top = exact_rank(vander @ vander.T)
    claim_log.example(N=N, d=d, rank=r)
    if r > d or r_top != min(N, d):
        refute(f"N = {N}, d = {d}: rank phi(Q)phi(K)^T = {r}, Vandermonde features reach {r_top}",
               example={"N": N, "d": d}, certified=True, certificate="exact integer rank (fmpz)")


# -- standard attention = infinite-dimensional linear attention -------------------------------

@st.composite
def distinct_points(draw):
    N = draw(st.integers(2, 6), label="N")
    m = draw(st.integers(1, 3), label="m")
    pts = draw(st.lists(st.tuples(*[st.integers(-4, 4)] * m), min_size=N, max_size=N, unique=True))
    return np.array(pts, dtype=np.float64) / 2


@pytest.mark.claim("standard-attention-infinite-dimensional-linear", reading="exact-rank")
@given(X=distinct_points())
@profiles.scaled(0.5)
def test_exp_kernel_full_rank(X, claim_log):
    N, m = X.shape
    ok, det, bits = certify_nonzero_det(lambda: arb_exp_kernel(X))
    claim_log.example(N=N, m=m)
    note(f"N={N} m={m} det={det} ({bits} bits)")
    if not ok:
        refute(f"det exp(XX^T) could not be certified non-zero up to {bits} bits (N = {N})",
               example={"X": X}, certified=False)
    claim_log.note("det exp(X X^T) certified non-zero (arb) for distinct points: rank N, so a linear attention "
                   "with d = N - 1 features (rank <= d, checked in linear-sparsity-needs-larger-d) cannot reproduce it.")


@pytest.mark.claim("standard-attention-infinite-dimensional-linear", reading="taylor-features")
@given(m=st.integers(1, 3), degree=st.integers(2, 10), seed=st.integers(0, 2**31 - 1), scale=log_uniform(-1, 0.3))
def test_taylor_features(m, degree, seed, scale, claim_log):
    gen = torch.Generator().manual_seed(seed)
    x = (torch.rand(4, m, generator=gen, dtype=torch.float64) * 2 - 1) * scale
    y = (torch.rand(4, m, generator=gen, dtype=torch.float64) * 2 - 1) * scale
    fx, fy = taylor_features(x, degree), taylor_features(y, degree)
    approx = fx @ fy.T
    z = x @ y.T
    exact = torch.exp(z)
    # Lagrange remainder of the degree-K Taylor polynomial of exp, plus float64 rounding: a dot product of
    # n = dim(phi) terms is off by at most gamma_n sum_i |phi_i(x) phi_i(y)| (Higham 2002, §3.1), the sum is at
    # most e^{|x|.|y|} (|.| entrywise), each feature carries <= (K + 2) u of its own, exp and q.k add (m + 2) u.
    u = 2.0**-53
    n_round = fx.shape[1] + 2 * (degree + 2) + m + 2
    rounding = n_round * u / (1 - n_round * u) * torch.exp(x.abs() @ y.abs().T)
    bound = z.abs() ** (degree + 1) * torch.exp(z.abs()) / math.factorial(degree + 1) + rounding
    err = (approx - exact).abs()
    claim_log.example(degree=degree, max_error=float(err.max()))
    if bool((err > bound).any()):
        refute(f"degree-{degree} Taylor features miss exp(q.k) by {float(err.max()):.3e} > the remainder bound",
               example={"x": x.numpy(), "y": y.numpy(), "degree": degree}, certified=False,
               certificate="float64; not re-computed")


# -- decay attention ----------------------------------------------------------------------------

@pytest.mark.claim("decay-attention-fixed-and-fading", reading="exact")
@given(num=st.integers(1, 99), den=st.integers(2, 100), n=st.integers(1, 120), k=st.integers(2, 1000))
def test_decay_fixed_and_fading(num, den, n, k, claim_log, claimed):
    lam = Fraction(num, den)
    assume(0 < lam < 1)
    eps = Fraction(1, k)
    w = [claimed.eval("weight", exact=True, lam=lam, t=Fraction(t)) for t in range(n)]
    total = sum(w)
    decreasing = all(b < a for a, b in zip(w, w[1:], strict=False))
    T = 0
    while lam**T * (1 - lam) / (1 - lam ** (T + 1)) >= eps:  # the n-free bound on the normalised weight
        T += 1
    late = [w[t] / total for t in range(T, n)]
    claim_log.example(lam=float(lam), T=T)
    if not decreasing or any(v >= eps for v in late) or any(v <= 0 for v in w):
        refute(f"lambda = {lam}, n = {n}: weights {claimed.text('weight')} are not positive and decreasing, or the "
               f"normalised weight at distance >= {T} is not below {eps}",
               example={"lambda": str(lam), "n": n, "eps": str(eps)}, certified=True, certificate="exact rationals")
    claim_log.note("Weights lambda^t depend on no input; strictly decreasing; beyond T(eps) (independent of n) the "
                   "normalised weight is below eps (exact).")


# -- summary --------------------------------------------------------------------------------------

@pytest.mark.claim("sparsity-summary-quadratic-vs-linear", reading="quadratic-arbitrary")
@given(beta=st.floats(-20, 20), eps=log_uniform(-6, -0.31))
@profiles.scaled(0.125)
def test_summary_quadratic(beta, eps, claim_log):
    s = s_reference("exp", beta, 8.0, dps=15)
    claim_log.example(eps=eps)
    if not s < eps:
        refute(f"f = exp: S(gamma = 8) = {mpmath.nstr(s, 6)} is not below {eps}", example={"beta": beta, "eps": eps}, certified=True,
               certificate="15-digit quadrature")


@pytest.mark.claim("sparsity-summary-quadratic-vs-linear", reading="plain-linear-floor")
@given(beta=st.floats(-100, 100), gamma=log_uniform(-2, 2))
@profiles.scaled(0.125)
def test_summary_plain_linear(beta, gamma, claim_log):
    with mpmath.workdps(20):
        s = s_reference("identity", beta, gamma, dps=20)
        below = bool(s < mpmath.sqrt(2 / mpmath.pi) * (1 - mpmath.mpf("1e-15")))
    claim_log.example(S=float(s))
    if below:
        refute(f"f = identity: S = {mpmath.nstr(s, 15)} < sqrt(2/pi)", example={"beta": beta, "gamma": gamma},
               certified=True, certificate="20-digit quadrature")


@pytest.mark.claim("sparsity-summary-quadratic-vs-linear", reading="nonnegative-linear-needs-low-snr")
@given(data=nonneg_keys(), k=st.integers(2, 50))
def test_summary_low_snr(data, k, claim_log):
    keys, q, a = data
    eps = Fraction(1, k)
    qmu, qsq = _quadratic_forms(keys, q)
    r = qsq / qmu**2
    claim_log.example(n=len(keys))
    if (s_squared_exact(a) < eps**2) != (r > 1 / eps**2 - 1):
        refute(f"S < {eps} is not equivalent to R > 1/eps^2 - 1 (R = {r})", example={"keys": str(keys)},
               certified=True, certificate="exact rationals")
