"""Sparsity: the l1/l2 measure S(a) = E|a| / sqrt(E a²) of kexue.fm/archives/9889 (004; repost 001) for
quadratic (softmax-like) attention.

The measure itself (``sparsity-measure-l1-l2``, ``reply-smaller-s-sparser-like-entropy``,
``reader-sparsity-properties-reversed`` with Hurley & Rickard's criteria), the Gaussian reduction
(``sparsity-gaussian-isotropic-reduction``) and the conclusions for f = exp
(``sparsity-exp-closed-form``, ``sparsity-exp-arbitrarily-sparse``), f = relu²
(``sparsity-relu2-closed-form``, ``sparsity-relu2-sparse-only-for-negative-bias``, with its figure) and
f = identity (``sparsity-identity-closed-form``, ``sparsity-identity-even-in-beta``,
``sparsity-identity-lower-bound``, with its figure). Linear attention and decay are
``checks/test_sparsity_linear.py``.

References: :func:`attention_claims.maths.s_reference` (40-digit quadrature in arb ball arithmetic, certified, independent of
every closed form); exact checks use ``fractions.Fraction`` / python-flint. Tolerances are stated next
to each comparison.
"""

from __future__ import annotations

import functools
import math
import tempfile
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest
import torch
from flint import arb
from hypothesis import assume, example, given, note, target
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attention_claims._cache import disk_memo_ints
from attention_claims.framework.expr import evaluate
from attention_claims.framework.report_folder import is_matplotlib_png, write_suite_file
from attention_claims.maths import (
    F_TORCH,
    babies,
    bill_gates,
    bisect_predicate,
    certified_sign,
    cloning,
    entropy_arb,
    fraction_to_mpf,
    gini_index,
    relative_error,
    rising_tide,
    robin_hood,
    s_and_standard_error,
    s_identity_moments,
    s_reference,
    s_relu2_moments,
    s_squared_exact,
)
from attention_claims.testkit import (
    flat_probability_vector,
    log_uniform,
    one_torch_thread,
    plot_sparsity_figure,
    probability_vector,
    profiles,
    rationals,
    reading_params,
    refute,
    require_device,
)
from attention_claims.testkit.failure_profiles import gaussian_qk_draws, record_profile

pytestmark = pytest.mark.usefixtures(one_torch_thread.__name__)


# -- replies on Hurley & Rickard -------------------------------------------------------------------
nonneg_vec = st.lists(st.integers(0, 12), min_size=2, max_size=10).filter(lambda v: any(v) and len(set(v)) > 1)


REL_25 = mpmath.mpf("1e-25")  # closed form vs 40-digit quadrature: 25 digits must agree


def _delta_method_s(a: torch.Tensor) -> tuple[float, float]:
    """``S = mean|a| / sqrt(mean a^2)`` and its delta-method standard error from the sample."""
    x, y = a.abs().double(), (a * a).double()
    n = a.numel()
    mx, my = x.mean(), y.mean()
    cov = torch.cov(torch.stack([x, y]))
    g = torch.tensor([1 / my.sqrt(), -mx / (2 * my**1.5)], dtype=torch.float64)
    var = g @ cov @ g / n
    return float(mx / my.sqrt()), float(var.sqrt())


REL_30 = mpmath.mpf("1e-30")  # S(beta) vs S(-beta), both by 40-digit quadrature


REL_45 = mpmath.mpf("1e-45")  # claimed formula at 60 digits vs an exact rational


# -- the measure S (004 "稀疏程度") -----------------------------------------------------------
def _s2_from_claim(claimed, x: list[Fraction]) -> mpmath.mpf:
    n = len(x)
    mean_abs = fraction_to_mpf(sum(abs(v) for v in x) / n)
    mean_sq = fraction_to_mpf(sum(v * v for v in x) / n)
    return claimed.eval("expression", mean_abs=mean_abs, mean_sq=mean_sq) ** 2


@st.composite
def probability_family(draw):
    """4 to 6 probability vectors of one length n in 2..4 (the first may be flat): every pair is compared,
    so one example tests up to 15 pairs of orders."""
    n = draw(st.integers(2, 4), label="n")
    first = draw(st.one_of(flat_probability_vector(n), probability_vector(n)), label="p_0")
    return [first] + draw(st.lists(probability_vector(n), min_size=3, max_size=5), label="p_1..")


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


@functools.cache
def _finite_floor_crossing(n: int) -> float:
    """The gamma at which the n -> infinity S (15-digit quadrature, beta = 0) falls below the
    finite-n floor 1/sqrt(n): found by bisection (10-digit quadrature, 1e-2 relative)."""
    floor = 1 / math.sqrt(n)
    return bisect_predicate(lambda g: float(s_reference("exp", 0.0, g, dps=10)) < floor, 0.5, 6.0, rtol=1e-2)


# -- f = relu^2: the printed closed form ------------------------------------------------------
def _guard_digits(beta: float, gamma: float) -> int:
    """Digits lost in the printed relu^2 form: erf(x) + 1 ~ e^{-x^2} for x = beta/(sqrt2 gamma) << 0."""
    c = beta / gamma
    return int(c * c / (2 * math.log(10))) + 20 if c < 0 else 20


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


def _inv_sqrt6() -> mpmath.mpf:
    """S of relu^2 at beta = 0, (1/2) / sqrt(3/2), at the current precision."""
    return 1 / mpmath.sqrt(6)



# -- failure profiles (docs/verdicts.md, "Failure profile") ----------------------------------------
# 004 argues at n -> infinity and gives no sizes; 003's Base row (N = 512, d = 768 / 12 = 64) serves as the
# typical size. Each draw helper is seeded, pure and returns ints, cached in the process and on disk.
DOC_N, DOC_D, TRIALS = 512, 64, 30


@functools.cache
@disk_memo_ints
def _s_entropy_discordance(N: int, d: int, trials: int, seed: int) -> tuple[int, ...]:
    """For ``trials`` attention matrices ``A = softmax(QK^T/sqrt d)`` with Gaussian ``Q, K (N, d)``
    (``numpy.random.default_rng(seed)``), over the ordered pairs ``(i, j)`` of rows: the number with
    ``S(a_i) < S(a_j)`` yet ``H(a_i) > H(a_j)`` (S^2 = ||a||_1^2 / (n ||a||_2^2), float64; both differences
    above ``1e-9`` relative, far above rounding)."""
    out = []
    for Q, K, _ in gaussian_qk_draws(N, d, trials, seed):
        Z = Q @ K.T / math.sqrt(d)
        A = np.exp(Z - Z.max(axis=1, keepdims=True))
        A /= A.sum(axis=1, keepdims=True)
        s2 = 1.0 / (N * np.sum(A * A, axis=1))  # rows sum to 1: ||a||_1 = 1
        H = -np.sum(A * np.log(A), axis=1)
        lower_s = s2[:, None] < s2[None, :] * (1 - 1e-9)
        higher_h = H[:, None] > H[None, :] * (1 + 1e-9)
        out.append(int((lower_s & higher_h).sum()))
    return tuple(out)


@functools.cache
@disk_memo_ints
def _exp_weights_s_sqrt_n(n: int, gamma: float, trials: int, seed: int) -> tuple[int, ...]:
    """For ``trials`` draws of ``a = exp(gamma z)``, ``z ~ N(0, 1)^n`` (``default_rng(seed)``; beta only
    rescales ``a`` and ``S`` ignores it): ``floor(1000 sqrt(n) S(a))`` with ``S(a)^2`` exact in rationals
    from the float64 weights (:func:`s_squared_exact`), rounded down at 1e-12."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(trials):
        s2n = s_squared_exact(np.exp(gamma * rng.standard_normal(n)).tolist()) * n
        out.append(math.floor(1000 * math.sqrt(float(s2n)) * (1 - 1e-12)))
    return tuple(out)


@functools.cache
@disk_memo_ints
def _relu2_printed_grid_failures(text: str) -> tuple[int, ...]:
    """For each point of the 9889 relu^2 figure's grid (``RELU2_BETAS`` x ``GAMMAS``, beta-major): whether
    the printed form ``text`` evaluated in float64 is off the true S by more than 1e-6 relative (or is no
    number), as :func:`_float64_rel_err` decides in the check."""
    from attention_claims.maths import GAMMAS, RELU2_BETAS

    return tuple(int(_float64_rel_err(text, b, g) > 1e-6) for b in RELU2_BETAS for g in GAMMAS)


def _profile_s_entropy(log) -> None:
    """Failure profile of ``sparsity-measure-l1-l2``'s ``entropy-order`` reading at N = 512, d = 64."""
    pairs = _s_entropy_discordance(DOC_N, DOC_D, TRIALS, 0)
    total = DOC_N * (DOC_N - 1)
    record_profile(log, [n > 0 for n in pairs], setting=f"N={DOC_N}, d={DOC_D} (rows of one attention matrix)",
                   summary=f"ordered pairs of rows of A = softmax(QK^T/sqrt d), Gaussian Q, K (numpy default_rng(0)), "
                           f"float64, that S calls sparser and entropy calls less concentrated (both differences above "
                           f"1e-9 relative): {min(pairs)}..{max(pairs)} of the {total} pairs per matrix "
                           f"({min(pairs) / total:.1%}..{max(pairs) / total:.1%}); a matrix fails when it has one")


def _profile_exp_finite_n(log) -> None:
    """Failure profile of ``sparsity-exp-arbitrarily-sparse``'s ``finite-n`` reading at n = 512 keys."""
    n, gamma = DOC_N, 8.0
    vals = _exp_weights_s_sqrt_n(n, gamma, TRIALS, 0)
    record_profile(log, [v >= 500 for v in vals], setting=f"n={n} keys, gamma={gamma:g}",
                   summary=f"S of the weights a = exp(gamma z), z ~ N(0, 1)^n (numpy default_rng(0)), S^2 exact in "
                           f"rationals from the float64 weights: sqrt(n) S = {min(vals) / 1000:.3f}..{max(vals) / 1000:.3f} "
                           f"against eps = 1/(2 sqrt n) (sqrt(n) eps = 0.5), while the n -> infinity value is "
                           f"exp(-gamma^2/2) = {math.exp(-gamma * gamma / 2):.2g}: every vector of n entries has "
                           f"sqrt(n) S >= 1")


def _profile_relu2_float64(log, text: str) -> None:
    """Failure profile of ``sparsity-relu2-closed-form``'s ``cpu-float64-printed`` reading on the figure's grid."""
    from attention_claims.maths import GAMMAS, RELU2_BETAS

    failed = _relu2_printed_grid_failures(text)
    points = [(b, g) for b in RELU2_BETAS for g in GAMMAS]
    bad = [p for p, f in zip(points, failed, strict=True) if f]
    where = ", ".join(f"beta = {b:g}: {sum(1 for p in bad if p[0] == b)}" for b in RELU2_BETAS
                      if any(p[0] == b for p in bad)) or "none"
    record_profile(log, failed, setting=f"the 9889 relu^2 figure's grid ({len(RELU2_BETAS)} betas x {len(GAMMAS)} gammas)",
                   summary=f"the printed form in float64 (math.erf, math.exp) against S by the truncated-normal moment "
                           f"recurrence at 45 digits, tolerance 1e-6 relative, at every drawn point (beta in "
                           f"{list(RELU2_BETAS)}, gamma = {GAMMAS[0]:g}..{GAMMAS[-1]:g}): off or no number at {len(bad)} "
                           f"of {len(points)} points ({where})"
                           + (f", all at gamma <= {max(g for _, g in bad):.3g}, where |beta/gamma| is large (erf(beta/"
                              f"(sqrt2 gamma)) + 1 cancels for beta < 0; exp(beta^2/(2 gamma^2)) overflows)" if bad else ""))


# -- f = relu^2: only beta < 0 (with its figure) ----------------------------------------------
@pytest.fixture
def figures_dir(request, tmp_path_factory) -> Path:
    """``<report dir>/figures`` (default ``reports/figures``); ``figures`` in a temporary folder under
    --claims-no-report. The figures are written through the report folder (:func:`_check_figure`)."""
    config = request.config
    if config.getoption("claims_no_report", False):
        return tmp_path_factory.mktemp("report") / "figures"
    opt = config.getoption("claims_report_dir", None)
    if opt:
        p = Path(opt)
        base = p if p.is_absolute() else Path(config.invocation_params.dir) / p
    else:
        base = Path(config.rootpath) / "reports"
    return base / "figures"


SAMPLE_N, SAMPLE_Z = 200_000, 5.0


def _figure_samples(kind, betas):
    """Sampled attention vectors for the figure: one per (beta, gamma) with beta/gamma >= -2 (below
    that, a relu^2 vector of SAMPLE_N entries has too few non-zero entries for a normal s.e.)."""
    from attention_claims.maths import SAMPLE_GAMMAS, sampled_sparsity

    rng = np.random.default_rng(9889)  # fixed: the figure is the same on every run
    return [(b, g, *sampled_sparsity(kind, b, g, n=SAMPLE_N, rng=rng)[:2])
            for b in betas for g in SAMPLE_GAMMAS if b / g >= -2]


def _plot_curves(kind, drawn, quad_x, quad_y, samples, claim_log):
    """Attach the ``sparsity_curve`` plot of what :func:`_check_figure` checked: the drawn closed-form
    curves (one per beta, S against gamma), the 20-digit quadrature points it compared them with, and
    the sampled attention vectors with error bars of ``SAMPLE_Z`` standard errors."""
    label = {b: f"β = {b:g}" for b, _x, _y in drawn}
    mc = {}
    for b, g, s_hat, se in samples:
        xs, ys, es = mc.setdefault(label.get(float(b), f"β = {float(b):g}"), ([], [], []))
        xs.append(g)
        ys.append(s_hat)
        es.append(SAMPLE_Z * se)
    claim_log.plot("sparsity_curve", {
        "x": drawn[0][1], "closed_form": {label[b]: y for b, _x, y in drawn},
        "quadrature": quad_y, "quad_x": quad_x,
        "mc_x": {k: v[0] for k, v in mc.items()}, "mc_y": {k: v[1] for k, v in mc.items()},
        "mc_err": {k: v[2] for k, v in mc.items()},
        "title": f"004, f = {kind}: S against γ ({len(samples)} sampled vectors, ±{SAMPLE_Z:g} s.e.)",
        "xlabel": "γ = σ‖q‖"})


def _check_figure(kind, path, fast_ref, claim_log):
    """Draw a figure; compare every drawn point with ``fast_ref``, one per curve with quadrature, and
    every sampled attention vector's sparsity with its curve."""
    from attention_claims.maths import IDENTITY_BETAS, RELU2_BETAS, sparsity_curves

    samples = _figure_samples(kind, RELU2_BETAS if kind == "relu2" else IDENTITY_BETAS)
    with tempfile.TemporaryDirectory() as tmp:  # drawn aside, then written through the report folder:
        drawn = plot_sparsity_figure(kind, Path(tmp) / path.name, samples=samples, z=SAMPLE_Z)
        # refused (ReportFolderError) when a file there is not a figure the suite wrote
        write_suite_file(path.parent.parent, f"{path.parent.name}/{path.name}", (Path(tmp) / path.name).read_bytes(),
                         adopt=is_matplotlib_png)
    worst = 0.0
    quad_x, quad_y = {}, {}
    for beta, x, y in drawn:
        with mpmath.workdps(20):
            for g, s in zip(x, y, strict=True):
                ref = fast_ref(mpmath.mpf(beta) / mpmath.mpf(float(g)))
                worst = max(worst, float(abs(s - ref) / (ref + mpmath.mpf("1e-300"))))
            for i in (len(x) // 3,):
                ref = s_reference(kind, beta, float(x[i]), dps=20)
                worst = max(worst, float(abs(y[i] - ref) / ref))
                quad_x.setdefault(f"β = {beta:g}", []).append(float(x[i]))
                quad_y.setdefault(f"β = {beta:g}", []).append(float(ref))
        claim_log.example(beta=beta)
    # tolerance: 1e-12 relative (the curves are float64 roundings of 40-digit values)
    if worst > 1e-12:
        refute(f"the drawn {kind} curves differ from the reference by {worst:.3e} relative",
               example={"kind": kind}, certified=True, certificate="20-digit quadrature / moment formula",
               certificate_strength="recomputed")
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
    _plot_curves(kind, drawn, quad_x, quad_y, samples, claim_log)
    claim_log.figure(path, f"004 figure reproduced ({kind}): S against gamma = sigma |q| from the closed form, "
                           f"with {len(samples)} sampled attention vectors of N = {SAMPLE_N} keys "
                           f"(error bars {SAMPLE_Z:g} s.e.)")
    return drawn


@pytest.mark.claim("reader-sparsity-properties-reversed", reading="exact")
@given(x=nonneg_vec, data=st.data())
def test_hurley_rickard_reversed(x, data, claim_log, claimed):
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

    def direction(s_after, s_before, hr_change):
        # the claimed direction of S's change (S^2 after - S^2 before, the sign of S's change as S > 0) against
        # Hurley & Rickard's sparsity change (+1 where their measures rise, -1 where they fall); the document: reversed
        return claimed.eval("direction", exact=True, s_change=s_after - s_before, hr_change=Fraction(hr_change))

    checks = {
        "D1 Robin Hood (H&R sparsity falls)": direction(s_squared_exact(robin_hood(x, i, j, alpha)), s2, -1),
        "D2 scaling keeps S": s_squared_exact([c * v for v in x]) == s2,
        "D3 rising tide (H&R sparsity falls)": direction(s_squared_exact(rising_tide(x, tide)), s2, -1),
        "D4 cloning keeps S": s_squared_exact(cloning(x)) == s2,
        "P1 Bill Gates (H&R sparsity rises)": direction(s_squared_exact(bill_gates(x, g, t0 - x[g] + more)),
                                                        s_squared_exact(bill_gates(x, g, t0 - x[g])), 1),
        "P2 babies (H&R sparsity rises)": direction(s_squared_exact(babies(x)), s2, 1),
    }
    claim_log.example(n=n)
    bad = [k for k, ok in checks.items() if not ok]
    if bad:
        refute(f"S violates {bad} (the directional ones read as {claimed.text('direction')}) at x = "
               f"{[str(v) for v in x]}",
               example={"x": [str(v) for v in x]}, certified=True, certificate="exact rationals",
               certificate_strength="proved")
    claim_log.note("All six Hurley & Rickard properties hold for S with the direction reversed, strictly for the "
                   "four directional ones (exact).")


@pytest.mark.claim("reply-smaller-s-sparser-like-entropy", reading="exact")
@given(p=probability_vector(), data=st.data())
def test_smaller_is_sparser(p, data, claim_log, claimed):
    """The record's ``claimed.s`` and ``claimed.gini`` are relations between a measure's values at the sparsest
    (``one_hot``) and the densest (``uniform``) probability vector of length n > 1, exact rationals (S compared
    through S^2, S >= 0): smaller-is-sparser is ``one_hot < uniform``, larger-is-sparser ``one_hot > uniform``."""
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
    if n > 1:
        hot, flat = [Fraction(1)] + [Fraction(0)] * (n - 1), [Fraction(1, n)] * n
        for key, f in (("s", s_squared_exact), ("gini", gini_index)):
            if not claimed.eval(key, exact=True, one_hot=f(hot), uniform=f(flat)):
                problems.append(f"{'S^2' if key == 's' else 'Gini'} is {f(hot)} at one-hot and {f(flat)} at uniform "
                                f"(n = {n}): not {claimed.text(key)}")
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
               certified=True, certificate="exact rationals; arb for logarithms; Hoyer at 50 digits",
               certificate_strength="recomputed")
    claim_log.note("S and entropy are smallest exactly at one-hot and largest exactly at uniform; Hurley & Rickard's "
                   "Gini index and Hoyer measure go the other way (Hoyer = sqrt(n)(1 - S)/(sqrt(n) - 1)).")


# -- f = exp --------------------------------------------------------------------------------
@pytest.mark.claim("sparsity-exp-closed-form", reading="certified-quadrature")
@given(beta=st.floats(-50, 50), sigma=log_uniform(-2, 0.5), q_norm=log_uniform(-1, 0.5))
@profiles.scaled(0.25)
def test_exp_closed_form_vs_quadrature(beta, sigma, q_norm, claim_log, claimed):
    with mpmath.workdps(45):
        gamma = mpmath.mpf(sigma) * mpmath.mpf(q_norm)  # gamma = sigma ||q|| (004 "两个例子"), exactly
        ref = s_reference("exp", beta, gamma)
        closed = claimed.eval("expression", sigma=mpmath.mpf(sigma), q_norm=mpmath.mpf(q_norm), beta=mpmath.mpf(beta))
        err = relative_error(closed, ref)
    target(float(mpmath.log10(err + mpmath.mpf("1e-60"))), label="log10 relative error")
    claim_log.example(beta=beta, gamma=float(gamma), log10_rel_err=float(mpmath.log10(err + mpmath.mpf("1e-60"))))
    note(f"beta={beta!r} sigma={sigma!r} |q|={q_norm!r} closed={mpmath.nstr(closed, 30)} quad={mpmath.nstr(ref, 30)}")
    if err > REL_25:
        refute(f"S = {claimed.text('expression')} = {mpmath.nstr(closed, 20)} but quadrature gives "
               f"{mpmath.nstr(ref, 20)} (beta={beta}, sigma={sigma}, |q|={q_norm})",
               example={"beta": beta, "sigma": sigma, "q_norm": q_norm}, certified=True,
               certificate=f"40-digit certified quadrature (arb); relative difference {mpmath.nstr(err, 5)} > 1e-25",
               certificate_strength="recomputed")
    claim_log.note("Tolerance: relative 1e-25 against 40-digit certified quadrature (arb balls).")


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
    dt = getattr(torch, dtype)
    # i.i.d. N(0, 1) float64 draws: NumPy's ziggurat (Marsaglia & Tsang 2000) samples exactly the law that
    # torch.randn's Box-Muller does, in half the time
    eps = torch.from_numpy(np.random.default_rng(seed).standard_normal((n, 4))).to(device=device, dtype=dt)
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
@pytest.mark.claim("sparsity-identity-even-in-beta", reading="certified-quadrature")
@given(beta=log_uniform(-3, 1.5), gamma=log_uniform(-3, 3))
@profiles.scaled(0.25)
def test_identity_even_in_beta(beta, gamma, claim_log, claimed):
    f = claimed.text("f")
    with mpmath.workdps(45):
        plus = s_reference(f, beta, gamma)
        minus = s_reference(f, -beta, gamma)
        err = relative_error(plus, minus)
    claim_log.example(beta=beta, gamma=gamma)
    target(float(mpmath.log10(err + mpmath.mpf("1e-60"))), label="log10 |S(b)-S(-b)|/S")
    if err > REL_30:
        refute(f"f = {f}: S(beta) = {mpmath.nstr(plus, 20)} != S(-beta) = {mpmath.nstr(minus, 20)} "
               f"(beta={beta}, gamma={gamma})",
               example={"f": f, "beta": beta, "gamma": gamma}, certified=True,
               certificate=f"40-digit quadrature; relative difference {mpmath.nstr(err, 5)} > 1e-30",
               certificate_strength="recomputed")
    claim_log.note("Both sides by 40-digit quadrature of E|beta+gamma eps| and E(beta+gamma eps)^2; tolerance 1e-30.")


# (claim, reading, test id) of every reading that test_identity_closed_form checks
# The drawn points mostly have |beta|/gamma far from 1, where erf is saturated or the beta term negligible;
# two explicit points with beta/gamma of order 1 (and gamma != 1, beta != gamma) exercise every term.
@pytest.mark.parametrize("cid", [
    pytest.param("even", marks=pytest.mark.claim("sparsity-identity-even-in-beta", reading="closed-form"),
                 id="even-in-beta"),
    pytest.param("closed-form", marks=pytest.mark.claim("sparsity-identity-closed-form", reading="certified-quadrature"), id="closed-form"),
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
        err = relative_error(closed, ref)
    claim_log.example(beta=beta, gamma=gamma)
    if err > REL_25 or relative_error(mirrored, closed) > REL_30:
        refute(f"printed closed form {mpmath.nstr(closed, 20)} vs quadrature {mpmath.nstr(ref, 20)}",
               example={"beta": beta, "gamma": gamma}, certified=True,
               certificate=f"40-digit quadrature; relative difference {mpmath.nstr(err, 5)}",
               certificate_strength="recomputed")


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


@pytest.mark.claim("sparsity-measure-l1-l2", reading="exact")
@given(x=st.lists(st.one_of(st.just(Fraction(0)), rationals(-5, 5)), min_size=1, max_size=12).filter(any),
       c=rationals(-3, 3).filter(lambda v: v != 0))
def test_measure_properties_exact(x, c, claim_log, claimed):
    n = len(x)
    s2 = s_squared_exact(x)
    with mpmath.workdps(60):
        s2_claim = _s2_from_claim(claimed, x)
        err = relative_error(s2_claim, fraction_to_mpf(s2))
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
               certificate="exact rational arithmetic (the claimed formula at 60 digits)",
               certificate_strength="recomputed")
    claim_log.note("S^2 = ||x||_1^2/(n ||x||_2^2) exactly; the claimed formula agrees to 45 digits on every example; "
                   "bounds 1/n <= S^2 <= 1 with equality exactly at one-hot / flat |x|; S(cx) = S(x); "
                   "k equal non-zeros give S = sqrt(k/n).")


@pytest.mark.claim("sparsity-measure-l1-l2", reading="entropy-order")
@given(family=probability_family())
# A discordant pair, worked out by hand: S^2 = 0.41 < 0.42 while H = 1.018 < 1.089 nats, so S calls the second
# sparser and entropy calls it less concentrated. Discordant pairs are the rule (the failure profile: 3.8-4.7%
# of the row pairs of every Gaussian attention matrix at N = 512), but among 4 to 6 short vectors a search may
# miss them (a fresh clone under the derandomized ci profile did): pinned, the verdict does not hang on the search.
@example(family=[(Fraction(45, 100), Fraction(45, 100), Fraction(5, 100), Fraction(5, 100)),
                 (Fraction(6, 10), Fraction(2, 10), Fraction(1, 10), Fraction(1, 10))])
def test_measure_orders_like_entropy(family, claim_log):
    _profile_s_entropy(claim_log)
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
                   certificate="S^2 exactly in rationals; H(p) - H(p') as an arb interval excluding 0",
                   certificate_strength="proved")
    target(worst, label="disagreement of the S and H orders")
    claim_log.example(n=len(family[0]), pairs=len(family) * (len(family) - 1) // 2)


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
        gamma_c = claimed.eval("gamma", sigma=fraction_to_mpf(sigma), q_norm=mpmath.sqrt(fraction_to_mpf(qn2)))
        beta_c = claimed.eval("beta", q_dot_mu=fraction_to_mpf(beta))
        scalar = [mpmath.fsum(math.comb(k, j) * beta_c**j * gamma_c ** (k - j) * _double_factorial_moment(k - j)
                              for j in range(k + 1)) for k in range(kmax + 1)]
        errs = [abs(scalar[k] - fraction_to_mpf(exact[k])) / max(abs(fraction_to_mpf(exact[k])), mpmath.mpf(1)) for k in range(kmax + 1)]
        worst = max(errs)
    claim_log.example(d=d)
    if worst > mpmath.mpf("1e-40"):
        k = errs.index(worst)
        refute(f"E[(q.mu + sigma q.eps)^{k}] = {exact[k]} (exact, d = {d}) but the one-dimensional "
               f"beta + gamma eps with beta = {claimed.text('beta')}, gamma = {claimed.text('gamma')} gives "
               f"{mpmath.nstr(scalar[k], 20)}",
               example={"q": [str(v) for v in q], "mu": [str(v) for v in mu[:d]], "sigma": str(sigma)},
               certified=True, certificate="exact rational moments vs the claimed scalar at 60 digits",
               certificate_strength="recomputed")
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
    # i.i.d. N(0, 1) float64 draws, independent of u and w (later draws of the same stream): NumPy's ziggurat
    # (Marsaglia & Tsang 2000) samples exactly the law that torch.randn's Box-Muller does, in half the time
    eps = torch.from_numpy(rng.standard_normal((n, d))).to(device=device, dtype=dt)
    k = torch.as_tensor(mu, dtype=dt, device=device) + sigma * eps
    a = F_TORCH[f](k @ torch.as_tensor(q, dtype=dt, device=device))
    s_hat, se = s_and_standard_error(a)
    with mpmath.workdps(20):
        g_c = claimed.eval("gamma", sigma=mpmath.mpf(sigma), q_norm=mpmath.mpf(float(np.linalg.norm(q))))
        b_c = claimed.eval("beta", q_dot_mu=mpmath.mpf(float(q @ mu)))
    if not g_c > 0:
        refute(f"the claimed gamma = {claimed.text('gamma')} = {g_c} is not a positive scale",
               example={"sigma": sigma, "q_norm": q_norm}, certified=True, certificate="direct evaluation",
               certificate_strength="recomputed")
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
def test_exp_sparsity_vanishes(beta, g1, ratio, eps, claim_log, claimed):
    g2 = min(g1 * ratio, 8.0)
    gamma = 8.0  # enough for every eps >= 1e-8 if S -> 0 (the check does not assume how fast)
    with mpmath.workdps(20):
        s1, s2 = s_reference("exp", beta, g1, dps=15), s_reference("exp", beta, g2, dps=15)
        s = s_reference("exp", beta, gamma, dps=15)
        limit = claimed.eval("limit")  # lim S as gamma -> infinity; the document: 0
        falls = claimed.eval("monotone", s1=s1, s2=s2)  # S at gamma_2 > gamma_1 against S at gamma_1
    claim_log.example(beta=beta, eps=eps)
    if not falls:
        refute(f"S(beta={beta}, gamma={g2:.6g}) = {mpmath.nstr(s2, 12)} and S(gamma={g1:.6g}) = "
               f"{mpmath.nstr(s1, 12)}: not {claimed.text('monotone')}",
               example={"beta": beta, "gamma_1": g1, "gamma_2": g2}, certified=True,
               certificate="15-digit quadrature (arb ball arithmetic, every digit certified)",
               certificate_strength="recomputed")
    if not abs(s - limit) < eps:
        # S > 0 and S is decreasing in gamma (checked above on every draw; the closed form e^(-gamma^2/2) of
        # sparsity-exp-closed-form), so lim S lies in [0, S(8)]: a claimed limit eps or more from S(8) is outside
        refute(f"S(beta={beta}, gamma=8) = {mpmath.nstr(s, 6)} is not within eps = {eps:.3g} of the claimed limit "
               f"{claimed.text('limit')} = {mpmath.nstr(limit, 6)}", example={"beta": beta, "eps": eps},
               certified=True, certificate="15-digit quadrature (arb ball arithmetic); S > 0 decreasing in gamma, "
                                           "so the limit lies in [0, S(8)]", certificate_strength="recomputed")
    claim_log.note("S by 15-digit quadrature: strictly decreasing in gamma = sigma ||q|| for every beta (ratios "
                   "gamma_2/gamma_1 >= 1.05, S ratios far above 1e-12), and below every eps >= 1e-8 at gamma = 8.")


@pytest.mark.claim("sparsity-exp-arbitrarily-sparse", reading="finite-n")
@given(n=st.sampled_from([2, 3, 16, 64, 256]), gamma=st.sampled_from([3.0, 4.0, 6.0, 8.0]), seed=st.integers(0, 100))
@profiles.scaled(0.25)
def test_exp_sparsity_finite_n(n, gamma, seed, claim_log):
    _profile_exp_finite_n(claim_log)
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
                        f"{_finite_floor_crossing(256):.4g} for n = 256 (bisection on 10-digit quadrature)",
               certificate_strength="proved")


@pytest.mark.claim("sparsity-relu2-closed-form", reading="certified-quadrature")
@given(c=st.floats(-30, 30), gamma=log_uniform(-3, 3))
# beta = gamma (c = 1): every term of the printed form is of order 1 there (at c = 0 the beta terms vanish, at
# |c| >> 1 the exp(-c^2/2) ones), so a changed constant shows whatever the draws (the planted falsehood
# relu2-sqrt-3 held under --hypothesis-seed=21, whose 6 draws had c = 0 or |c| large)
@example(c=1.0, gamma=1.0)
@profiles.scaled(0.2)
def test_relu2_printed_vs_quadrature(c, gamma, claim_log, claimed):
    beta = c * gamma
    with mpmath.workdps(45 + _guard_digits(beta, gamma)):
        printed = claimed.eval("expression", beta=mpmath.mpf(beta), gamma=mpmath.mpf(gamma))
    with mpmath.workdps(45):
        ref = s_reference("relu2", beta, gamma)
        err = relative_error(+printed, ref)
        bad = bool(err > REL_25)
    claim_log.example(beta_over_gamma=c, gamma=gamma)
    note(f"beta={beta!r} gamma={gamma!r} printed={mpmath.nstr(printed, 30)} quad={mpmath.nstr(ref, 30)}")
    if bad:
        refute(f"printed relu^2 form = {mpmath.nstr(printed, 20)} but quadrature gives {mpmath.nstr(ref, 20)} "
               f"(beta={beta}, gamma={gamma})", example={"beta": beta, "gamma": gamma}, certified=True,
               certificate=f"40-digit quadrature; relative difference {mpmath.nstr(err, 5)} > 1e-25",
               certificate_strength="recomputed")
    claim_log.note("Printed form evaluated at 45 digits plus c^2/(2 ln 10) + 20 guard digits; tolerance 1e-25 "
                   "relative against 40-digit quadrature over the support X > 0.")


@pytest.mark.claim("sparsity-relu2-closed-form", reading="cpu-float64-printed")
@given(c=st.floats(-30, 30), gamma=log_uniform(-3, 3))
def test_relu2_printed_float64(c, gamma, claim_log, claimed):
    beta = c * gamma
    text = claimed.text("expression")
    _profile_relu2_float64(claim_log, text)
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
                        "(bisection at gamma = 1; erf(x) + 1 cancels)",
               certificate_strength="recomputed" if bool(confirmed) else None)


@pytest.mark.claim("sparsity-relu2-sparse-only-for-negative-bias", reading="quadrature")
@given(beta=st.one_of(st.just(0.0), st.floats(-2, 2), st.floats(-50, 50)), gamma=log_uniform(-3, 2),
       eps=log_uniform(-6, -0.53))
# a bias just below 0, the edge of the sparse domain: a domain narrowed to beta < -c (c >= 2^-10) shows here
# whatever the draws (the planted falsehood relu2-sparse-only-for-beta-below-minus-1 held under
# --hypothesis-seed=4, which drew no beta in [-1, 0))
@example(beta=-(2.0**-10), gamma=1.0, eps=0.01)
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
                       certificate="40-digit quadrature",
                       certificate_strength="recomputed" if bool(s_star < eps) else None)
            s = s_relu2_moments(mpmath.mpf(beta) / mpmath.mpf(gamma))
            target(-float(s - _inv_sqrt6()), label="-(S - 1/sqrt6) outside the claimed domain")
            if s < _inv_sqrt6() * (1 - mpmath.mpf("1e-30")):
                q = s_reference("relu2", beta, gamma)
                refute(f"beta = {beta} >= 0 but S = {mpmath.nstr(q, 12)} < 1/sqrt(6) = S(0) at gamma = {gamma}",
                       example={"beta": beta, "gamma": gamma}, certified=bool(q < _inv_sqrt6()),
                       certificate="40-digit quadrature",
                       certificate_strength="recomputed" if bool(q < _inv_sqrt6()) else None)
            return
        if beta >= 0:
            q = s_reference("relu2", beta, gamma)
            refute(f"beta = {beta} is in the claimed domain {claimed.text('sparse_domain')}, but for beta >= 0 "
                   f"S >= S(0) = 1/sqrt(6) for every gamma (S = {mpmath.nstr(q, 12)} at gamma = {gamma}): it cannot "
                   "approach 0", example={"beta": beta, "gamma": gamma}, certified=bool(q >= _inv_sqrt6() * (1 - REL_25)),
                   certificate="40-digit quadrature; S is non-decreasing in beta/gamma (log-convex moments)",
                   certificate_strength="recomputed" if bool(q >= _inv_sqrt6() * (1 - REL_25)) else None)
    if not s_star < eps:
        refute(f"beta = {beta} < 0 but S(beta, gamma = {mpmath.nstr(g_star, 6)}) = {mpmath.nstr(s_star, 8)} is not "
               f"below eps = {eps}", example={"beta": beta, "eps": eps}, certified=True,
               certificate="40-digit quadrature", certificate_strength="recomputed")
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
               example={"beta": beta, "gamma": gamma}, certified=True, certificate="30-digit mpmath normal CDF",
               certificate_strength="recomputed")


@pytest.mark.claim("sparsity-relu2-sparse-only-for-negative-bias", reading="figure-curves")
def test_relu2_figure(claim_log, claimed, figures_dir):
    path = figures_dir / "9889-relu2.png"
    drawn = _check_figure("relu2", path, s_relu2_moments, claim_log)
    for beta, _x, y in drawn:
        inside = bool(claimed.eval("sparse_domain", exact=True, beta=Fraction(beta)))
        if inside and not y[0] < 0.01:
            refute(f"the beta = {beta} curve (inside the claimed domain) is still {y[0]:.4f} at gamma = {_x[0]:.3g}",
                   example={"beta": beta}, certified=True, certificate="the drawn float64 values",
                   certificate_strength="recomputed")
        if not inside and not float(y.min()) >= float(_inv_sqrt6()) - 1e-12:
            refute(f"the beta = {beta} curve (outside the claimed domain) falls to {y.min():.4f} < 1/sqrt(6)",
                   example={"beta": beta}, certified=True, certificate="the drawn float64 values",
                   certificate_strength="recomputed")
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
               certified=bool(q < floor * (1 - REL_25)), certificate="40-digit quadrature",
               certificate_strength="recomputed" if bool(q < floor * (1 - REL_25)) else None)
    claim_log.note("S >= floor on every example (folded-normal mean at 45 digits; a violation is re-done by "
                   "40-digit quadrature).")


@pytest.mark.claim("sparsity-identity-lower-bound", reading="quadrature")
@pytest.mark.parametrize("gamma", [1e-3, 1.0, 1e3])
def test_identity_floor_attained(gamma, claim_log, claimed):
    with mpmath.workdps(45):
        floor = claimed.eval("floor")
        at_zero = s_reference("identity", 0.0, gamma)
        not_attained = bool(relative_error(at_zero, floor) > REL_25)
    claim_log.example(gamma=gamma, floor=float(floor))
    if not_attained or not floor > 0.5:
        refute(f"S(0, gamma = {gamma}) = {mpmath.nstr(at_zero, 15)} (quadrature) but the claimed floor is "
               f"{claimed.text('floor')} = {mpmath.nstr(floor, 15)}: it is not the infimum (or not high)",
               example={"gamma": gamma}, certified=True, certificate="40-digit quadrature",
               certificate_strength="recomputed")
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
               certified=True, certificate="the drawn float64 values, checked against quadrature",
               certificate_strength="recomputed")
    claim_log.note(f"Figure {path.name} (S vs gamma, beta in {[b for b, _, _ in drawn]}): every drawn point within "
                   "1e-12 relative of the folded-normal formula, one per curve against 20-digit quadrature, every "
                   f"sampled attention vector within {SAMPLE_Z:g} standard errors of its curve.")


