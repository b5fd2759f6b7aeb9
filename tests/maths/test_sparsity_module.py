"""attention_claims.maths and attention_claims.maths: known values and clear errors on bad input."""

from __future__ import annotations

import math
import re
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import torch
from flint import arb

from attention_claims.maths import (
    AttentionInputError,
    arb_exp_kernel,
    babies,
    bill_gates,
    cloning,
    entropy_arb,
    gini_index,
    ks_distance_normal,
    lognormal_feature_moments,
    population_moments,
    product_design,
    relu_moment,
    rising_tide,
    robin_hood,
    s_and_standard_error,
    s_identity,
    s_identity_moments,
    s_reference,
    s_relu2,
    s_relu2_moments,
    s_squared_exact,
    sorted_standard_normals,
    sparsity_curves,
    taylor_features,
)
from attention_claims.testkit import plot_sparsity_figure


@pytest.mark.parametrize("c", [-30.0, -6.0, -1.0, 0.0, 0.5, 4.0, 30.0])
def test_relu_moments_match_quadrature(c):
    # the recurrence (Stein's identity) against direct 40-digit quadrature of E relu(c + eps)^k / S
    with mpmath.workdps(40):
        ref = s_reference("relu2", c, 1.0)
        assert abs(s_relu2_moments(c) - ref) / ref < mpmath.mpf("1e-30")
        assert abs(s_relu2(c, 1.0) - ref) / ref < mpmath.mpf("1e-30")  # printed form, erfc rewrite


def _identity_closed_form(b, g):
    # E|X| / sqrt(E X^2) for X ~ N(b, g^2): the folded-normal mean (Leone, Nelson & Nottingham 1961)
    return (g * mpmath.sqrt(2 / mpmath.pi) * mpmath.exp(-b * b / (2 * g * g)) + b * mpmath.erf(b / (g * mpmath.sqrt(2)))) / mpmath.sqrt(b * b + g * g)


@pytest.mark.parametrize("f,beta,gamma", [
    ("identity", 0.7, 1.3), ("identity", -0.7, 1.3), ("identity", -3.0, 0.01), ("identity", 1e3, 1e-3),
    ("identity", -0.5, 1e3), ("identity", 0.0, 1.0),
    ("exp", 3.0, 2.5), ("exp", -3.0, 0.05), ("exp", -50.0, 10.0),
    ("relu2", 0.7, 1.3), ("relu2", -3.0, 2.0), ("relu2", -30.0, 1.0), ("relu2", 30.0, 1.0),
])
def test_s_reference_matches_the_closed_forms_to_40_digits(f, beta, gamma):
    # the certified quadrature against the closed forms it is independent of, negative beta included
    # (a sign lost in converting beta to arb made S(-beta) = S(beta) for relu2)
    with mpmath.workdps(50):
        b, g = mpmath.mpf(beta), mpmath.mpf(gamma)
        exact = {"identity": lambda: _identity_closed_form(b, g), "exp": lambda: mpmath.exp(-g * g / 2),
                 "relu2": lambda: s_relu2_moments(b / g)}[f]()
        ref = s_reference.uncached(f, beta, gamma)
        assert abs(ref - exact) / exact < mpmath.mpf("1e-40")


def test_s_reference_agrees_with_mpmath_quadrature():
    # a second, unrelated integrator (mpmath tanh-sinh) at a point where every moment is non-trivial
    with mpmath.workdps(50):
        b, g = mpmath.mpf(-0.4), mpmath.mpf(1.7)
        dens = lambda e: mpmath.npdf(e)  # noqa: E731
        e1 = mpmath.quad(lambda e: abs(b + g * e) * dens(e), [-mpmath.inf, -b / g, mpmath.inf])
        e2 = mpmath.quad(lambda e: (b + g * e) ** 2 * dens(e), [-mpmath.inf, 0, mpmath.inf])
        assert abs(s_reference.uncached("identity", -0.4, 1.7) - e1 / mpmath.sqrt(e2)) < mpmath.mpf("1e-40")


def test_gaussian_moment_arb_encloses_the_exact_moment():
    from attention_claims.maths import gaussian_moment_arb

    # E X^2 = b^2 + g^2 exactly; E e^X = e^{b + g^2/2} (lognormal mean)
    assert (gaussian_moment_arb("identity", 2, 0.5, 2.0, 200) - arb("4.25")).contains(0)
    m = gaussian_moment_arb("exp", 1, 0.5, 2.0, 200)
    assert (m - arb("2.5").exp()).contains(0) and m.rad() < arb("1e-55")
    with pytest.raises(AttentionInputError, match="gamma"):
        gaussian_moment_arb("identity", 1, 0.0, -1.0, 100)
    with pytest.raises(AttentionInputError, match="unknown"):
        gaussian_moment_arb("tanh", 1, 0.0, 1.0, 100)
    with pytest.raises(AttentionInputError, match="beta"):
        gaussian_moment_arb("exp", 1, math.inf, 1.0, 100)


def test_relu_moment_known_values():
    with mpmath.workdps(30):
        assert abs(relu_moment(0, 0) - mpmath.mpf(1) / 2) < mpmath.mpf("1e-28")
        assert abs(relu_moment(2, 0) - mpmath.mpf(1) / 2) < mpmath.mpf("1e-28")
        assert abs(relu_moment(4, 0) - mpmath.mpf(3) / 2) < mpmath.mpf("1e-28")
        assert abs(s_relu2_moments(0) - 1 / mpmath.sqrt(6)) < mpmath.mpf("1e-28")


def test_identity_moments_known_values():
    with mpmath.workdps(30):
        assert abs(s_identity_moments(0) - mpmath.sqrt(2 / mpmath.pi)) < mpmath.mpf("1e-28")
        for c in (-3.0, 0.7, 12.0):
            assert abs(s_identity_moments(c) - s_identity(c, 1.0)) < mpmath.mpf("1e-28")
            assert s_identity_moments(c) > mpmath.sqrt(2 / mpmath.pi)


@pytest.mark.parametrize("k", [-1, 13, 2.0])
def test_relu_moment_rejects_bad_order(k):
    with pytest.raises(AttentionInputError, match=r"^k: must be an integer in \[0, 12\]"):
        relu_moment(k, 0.0)


def test_s_squared_exact_rationals_match_the_definition():
    rng = np.random.default_rng(5)
    for n in (1, 2, 7, 40):
        a = [Fraction(int(rng.integers(-50, 50)), int(rng.integers(1, 30))) for _ in range(n)]
        if not any(a):
            continue
        naive = sum(abs(v) for v in a) ** 2 / (n * sum(v * v for v in a))
        assert s_squared_exact(a) == naive
        assert s_squared_exact(a + [0] * 3) == naive * n / (n + 3)  # zeros: mixed ints and Fractions
    lam = Fraction(999, 1000)
    a = [lam**j for j in range(60)]
    assert s_squared_exact(a) == sum(a) ** 2 / (60 * sum(v * v for v in a))


def test_s_squared_exact():
    assert s_squared_exact([1, 0, 0, 0]) == Fraction(1, 4)
    assert s_squared_exact([Fraction(-2), Fraction(2)]) == 1
    floats = [0.1, -3.5e-20, 7.25e30]
    assert s_squared_exact(floats) == s_squared_exact([Fraction(v) for v in floats])  # dyadic fast path
    with pytest.raises(AttentionInputError, match="all-zero"):
        s_squared_exact([0.0, 0.0])
    with pytest.raises(AttentionInputError, match="empty"):
        s_squared_exact([])
    with pytest.raises(AttentionInputError, match="finite"):
        s_squared_exact([1.0, math.nan])


@pytest.mark.parametrize("a,message", [
    ([1.0, math.nan], r"^a: non-finite entry$"),  # float fast path
    ([0.0, -0.0], r"^a: all-zero vector, S undefined \(0/0\)$"),
    ([0, Fraction(0)], r"^a: all-zero vector, S undefined \(0/0\)$"),  # rational path
])
def test_s_squared_exact_messages_name_a(a, message):
    with pytest.raises(AttentionInputError, match=message):
        s_squared_exact(a)


def test_population_moments_and_product_design():
    mu, cov = population_moments([[0, 2], [2, 0]])
    assert mu == [1, 1] and cov == [[1, -1], [-1, 1]]
    keys = product_design([0, 1, 5], 2)
    assert len(keys) == 9
    mu, cov = population_moments(keys)
    m, var = Fraction(2), Fraction(14, 3)
    assert mu == [m, m] and cov == [[var, 0], [0, var]]
    with pytest.raises(AttentionInputError, match=r"^d: must be an integer in \[1, 6\], got 7$"):
        product_design([1, 2], 7)
    with pytest.raises(AttentionInputError, match="different lengths"):
        population_moments([[1, 2], [3]])


@pytest.mark.parametrize("p,message", [
    ([], r"^p: empty vector$"),
    ([0.5, math.inf], r"^p: entry inf is not finite$"),
    ([Fraction(1, 2), Fraction(1, 3)], r"^p: not a probability vector \(entries >= 0 summing to exactly 1\)$"),
])
def test_entropy_arb_messages_name_p(p, message):
    with pytest.raises(AttentionInputError, match=message):
        entropy_arb(p)


def test_hurley_rickard_transformations():
    assert robin_hood([4, 0], 0, 1, 1) == [3, 1]
    assert rising_tide([0, 1], 1) == [1, 2]
    assert cloning([1, 2]) == [1, 2, 1, 2]
    assert babies([1]) == [1, 0] and all(isinstance(v, Fraction) for v in babies([1]))  # list[Fraction]
    assert bill_gates([1, 2], 0, 3) == [4, 2]
    with pytest.raises(AttentionInputError, match="robin_hood"):
        robin_hood([4, 0], 0, 1, 2)  # alpha must be < half the gap
    with pytest.raises(AttentionInputError, match="alpha"):
        rising_tide([1], 0)
    with pytest.raises(AttentionInputError, match="bill_gates"):
        bill_gates([1], 3, 1)


def test_entropy_and_gini():
    h = entropy_arb([Fraction(1, 4)] * 4)
    assert abs(float(h.mid()) - math.log(4)) < 1e-14 and h.rad() < 1e-14
    assert entropy_arb([1, 0]).is_zero()
    with pytest.raises(AttentionInputError, match="probability"):
        entropy_arb([Fraction(1, 2), Fraction(1, 3)])
    assert gini_index([0, 0, 1]) == Fraction(2, 3) and gini_index([2, 2]) == 0
    with pytest.raises(AttentionInputError, match="gini"):
        gini_index([0, 0])


def test_standard_error_and_lognormal_moments():
    gen = torch.Generator().manual_seed(0)
    s, se = s_and_standard_error(torch.randn(200_000, generator=gen, dtype=torch.float64))
    assert abs(s - math.sqrt(2 / math.pi)) < 6 * se and se < 1e-2
    with pytest.raises(AttentionInputError, match="size >= 2"):
        s_and_standard_error(torch.ones(1))
    with pytest.raises(AttentionInputError, match="all-zero"):
        s_and_standard_error(torch.zeros(5))
    mean, cov = lognormal_feature_moments([0.0, 1.0], 0.5)
    assert np.allclose(mean, np.exp([0.125, 1.125]))
    assert np.allclose(np.diag(cov), np.exp([0.25, 2.25]) * np.expm1(0.25)) and cov[0, 1] == 0
    with pytest.raises(AttentionInputError, match="sigma"):
        lognormal_feature_moments([0.0], -1.0)


def test_taylor_features_and_exp_kernel():
    x = torch.tensor([[0.3, -0.2]], dtype=torch.float64)
    y = torch.tensor([[0.5, 0.4]], dtype=torch.float64)
    f = taylor_features(x, 12) @ taylor_features(y, 12).T
    assert abs(float(f) - math.exp(0.07)) < 1e-14  # truncation 0.07^13/13! is ~1e-25; rounding ~1e-15
    assert taylor_features(x, 3).shape == (1, 1 + 2 + 4 + 8)
    with pytest.raises(AttentionInputError, match="degree"):
        taylor_features(x, 20)
    with pytest.raises(AttentionInputError, match="expected"):
        taylor_features(x[0], 2)
    K = arb_exp_kernel(np.array([[0.0], [1.0]]))
    assert K[0, 0].contains(1) and K[1, 1].overlaps(arb(1).exp())


def test_figures(tmp_path):
    with pytest.raises(AttentionInputError, match="kind"):
        sparsity_curves("softmax", [0.0], [1.0])
    drawn = plot_sparsity_figure("identity", tmp_path / "f.png", betas=[0.0], gammas=[0.5, 1.0])
    assert (tmp_path / "f.png").stat().st_size > 0
    beta, x, y = drawn[0]
    assert beta == 0.0 and list(x) == [0.5, 1.0] and np.allclose(y, math.sqrt(2 / math.pi), rtol=1e-14)


def test_sampled_sparsity_is_calibrated_and_detects_a_wrong_curve():
    from attention_claims.maths import s_identity, sampled_sparsity

    rng = np.random.default_rng(0)
    zs = []
    for beta, gamma in ((0.0, 1.0), (1.0, 0.5), (2.0, 4.0)):
        s, se, nonzero = sampled_sparsity("identity", beta, gamma, n=50_000, rng=rng)
        assert nonzero == 50_000 and 0 < se < 0.01
        zs.append((s - float(s_identity(beta, gamma))) / se)
    assert max(abs(z) for z in zs) < 5
    # the same sample is many standard errors from a curve off by 2 %
    s, se, _ = sampled_sparsity("identity", 0.0, 1.0, n=50_000, rng=rng)
    assert abs(s - 1.02 * float(s_identity(0.0, 1.0))) / se > 10
    # relu^2 far below zero: no non-zero entry, reported as such rather than 0/0
    s, se, nonzero = sampled_sparsity("relu2", -50.0, 1.0, n=1000, rng=rng)
    assert nonzero == 0 and np.isnan(s) and se == np.inf


@pytest.mark.parametrize("kw", [dict(kind="relu3"), dict(gamma=0.0), dict(n=1), dict(d=0)])
def test_sampled_sparsity_rejects_bad_input(kw):
    from attention_claims.maths import AttentionInputError, sampled_sparsity

    args = dict(kind="identity", beta=0.0, gamma=1.0, n=10, d=2) | kw
    with pytest.raises(AttentionInputError):
        sampled_sparsity(args.pop("kind"), args.pop("beta"), args.pop("gamma"), rng=np.random.default_rng(0), **args)


def test_figure_samples_are_drawn_and_not_read_back_as_curves(tmp_path):
    drawn = plot_sparsity_figure("identity", tmp_path / "f.png", betas=(0.0, 1.0), gammas=(0.5, 1.0),
                                 samples=[(0.0, 0.7, 0.8, 0.001)])
    assert sorted(b for b, _, _ in drawn) == [0.0, 1.0]
    assert all(len(x) == 2 for _, x, _ in drawn)


def test_ks_distance_normal_matches_scipy_and_known_values():
    from scipy import stats

    rng = np.random.default_rng(3)
    for n, mean, std in [(1, 0.0, 1.0), (7, -0.3, 2.0), (1000, 0.5, 0.7), (20_000, -1.25, 1.5)]:
        x = mean + std * rng.standard_normal(n)
        assert ks_distance_normal(x, mean, std) == stats.kstest(x, "norm", args=(mean, std)).statistic
    # one point at the median: F_n jumps 0 -> 1 where Phi = 1/2
    assert ks_distance_normal([2.0], 2.0, 3.0) == 0.5
    # a sample far to the right of the law: D -> 1
    assert ks_distance_normal([50.0, 60.0], 0.0, 1.0) == 1.0
    # ties and order do not matter
    assert ks_distance_normal([1.0, -1.0, 1.0], 0.0, 1.0) == ks_distance_normal([-1.0, 1.0, 1.0], 0.0, 1.0)


@pytest.mark.parametrize("x,mean,std", [([], 0.0, 1.0), ([1.0, math.nan], 0.0, 1.0), ([1.0], 0.0, 0.0),
                                        ([1.0], 0.0, -1.0), ([1.0], math.inf, 1.0)])
def test_ks_distance_normal_rejects_bad_input(x, mean, std):
    with pytest.raises(AttentionInputError):
        ks_distance_normal(x, mean, std)


def test_sorted_standard_normals_law_and_order():
    from scipy import stats

    for seed, n in [(0, 1), (1, 2), (2, 1000), (3, 200_000)]:
        z = sorted_standard_normals(np.random.default_rng(seed), n)
        assert z.shape == (n,) and np.isfinite(z).all() and np.all(z[1:] >= z[:-1])
    z = sorted_standard_normals(np.random.default_rng(4), 200_000)
    # against N(0, 1) and against sorted ziggurat draws: KS p-values far from tiny (fixed seeds)
    assert stats.kstest(z, "norm").pvalue > 1e-3
    assert stats.ks_2samp(z, np.random.default_rng(5).standard_normal(200_000)).pvalue > 1e-3
    assert abs(z.mean()) < 5 / math.sqrt(200_000) and abs(z.var() - 1) < 5 * math.sqrt(2 / 200_000)
    # both tails from their own side: the extremes of 2e5 normals lie near +-4.4, symmetric in law
    assert 3.5 < -z[0] < 6 and 3.5 < z[-1] < 6
    # the sorted fast path of ks_distance_normal gives scipy's statistic
    assert ks_distance_normal(z, 0.1, 1.2) == stats.kstest(z, "norm", args=(0.1, 1.2)).statistic
    with pytest.raises(AttentionInputError):
        sorted_standard_normals(np.random.default_rng(0), 0)


def test_gini_index_errors_name_x():
    with pytest.raises(AttentionInputError, match="^x: empty vector$"):
        gini_index([])
    with pytest.raises(AttentionInputError, match="^x: entry nan is not finite$"):
        gini_index([1.0, float("nan")])
    for bad in ([0, 0], [1, -1, 2]):
        with pytest.raises(AttentionInputError, match="^gini_index: need non-negative entries, not all zero$"):
            gini_index(bad)


def test_s_and_standard_error_small_samples_dtypes_and_messages():
    # n = 2 is enough: S = mean|a| / sqrt(mean a^2) = 3.5 / sqrt(12.5) for (3, -4)
    s, se = s_and_standard_error(torch.tensor([3.0, -4.0], dtype=torch.float64))
    assert s == 3.5 / math.sqrt(12.5) and se > 0
    assert s_and_standard_error(torch.tensor([1.0, -1.0], dtype=torch.float64)) == (1.0, 0.0)
    # computed in float64 whatever the sample's dtype: float32 squares (0.1f^2) would round
    a = torch.tensor([0.1, 0.7, -1.3, 2.9], dtype=torch.float32)
    assert s_and_standard_error(a) == s_and_standard_error(a.to(torch.float64))
    b = torch.tensor([0.1, 0.7, -1.3, 2.9], dtype=torch.bfloat16)
    assert s_and_standard_error(b) == s_and_standard_error(b.to(torch.float64))
    with pytest.raises(AttentionInputError, match="^" + re.escape("a: non-finite samples (overflow in the sampled dtype?)") + "$"):
        s_and_standard_error(torch.tensor([1.0, float("inf")]))
    with pytest.raises(AttentionInputError, match="^a: all-zero sample, S undefined$"):
        s_and_standard_error(torch.zeros(5))


def _relu_moment_pcfd(k, c):
    """m_k(c) = k! e^{-c^2/4} D_{-k-1}(-c) / sqrt(2 pi) (DLMF 12.5.1 with U(a, z) = D_{-a-1/2}(z)), at 120 digits."""
    with mpmath.workdps(120):
        c = mpmath.mpf(c)
        return mpmath.factorial(k) * mpmath.exp(-c * c / 4) * mpmath.pcfd(-k - 1, -c) / mpmath.sqrt(2 * mpmath.pi)


@pytest.mark.parametrize("k,c", [(2, -30.0), (12, -30.0), (12, -200.0), (4, -6.0), (12, 3.0)])
def test_relu_moment_keeps_40_digits_through_the_cancellation(k, c):
    # for c << 0 the recurrence cancels about 2 k log10|c| digits; the guard digits must make up for them
    ref = _relu_moment_pcfd(k, c)
    with mpmath.workdps(40):
        v = relu_moment(k, c)
    with mpmath.workdps(120):
        assert abs(v - ref) < mpmath.mpf(10) ** -39 * ref


def test_sampled_sparsity_draws_and_validation():
    from attention_claims.maths import sampled_sparsity

    # the documented construction, drawn in this order from rng: q (d), u (d), then the (n, d) key noise
    n, d, beta, gamma = 64, 4, 0.5, 1.25
    rng = np.random.default_rng(3)
    q, u = rng.standard_normal(d), rng.standard_normal(d)
    u -= (u @ q) / (q @ q) * q
    mu, sigma = beta * q / (q @ q) + u, gamma / np.linalg.norm(q)
    a = np.maximum((mu + sigma * rng.standard_normal((n, d))) @ q, 0.0) ** 2
    s, se, nonzero = sampled_sparsity("relu2", beta, gamma, n=n, rng=np.random.default_rng(3))
    assert s == pytest.approx(np.abs(a).mean() / np.sqrt((a * a).mean()), rel=1e-12) and se > 0
    assert nonzero == int(np.count_nonzero(a))
    # d = 4 is the default
    assert sampled_sparsity("relu2", beta, gamma, n=n, rng=np.random.default_rng(3)) == (s, se, nonzero)
    # the least sizes allowed: n = 2, d = 1
    for kw in ({"n": 2}, {"n": 8, "d": 1}):
        s2, se2, _ = sampled_sparsity("identity", 0.5, 1.0, rng=np.random.default_rng(0), **kw)
        assert 0 < s2 <= 1 and np.isfinite(se2)
    with pytest.raises(AttentionInputError, match="^" + re.escape("kind: unknown 'relu' (one of relu2, identity)") + "$"):
        sampled_sparsity("relu", 0.5, 1.0, n=8, rng=np.random.default_rng(0))
    for kw in ({"gamma": 0.0, "n": 8, "d": 4}, {"gamma": 1.0, "n": 1, "d": 4}, {"gamma": 1.0, "n": 8, "d": 0}):
        msg = f"sampled_sparsity: need gamma > 0, n >= 2, d >= 1; got {kw['gamma']!r}, {kw['n']!r}, {kw['d']!r}"
        with pytest.raises(AttentionInputError, match="^" + re.escape(msg) + "$"):
            sampled_sparsity("identity", 0.5, rng=np.random.default_rng(0), **kw)


def test_s_and_standard_error_delta_method_by_hand():
    # Var(S_hat) ~ (1/n) [Var|a| / m2 - m1 Cov(|a|, a^2) / m2^2 + m1^2 Var(a^2) / (4 m2^3)] (the delta method
    # for m1 / sqrt(m2), sample covariances with n - 1), written out at 50 digits
    a = [1.0, 2.0, 3.0, 5.0, 8.0, -13.0]
    with mpmath.workdps(50):
        x1 = [mpmath.mpf(abs(v)) for v in a]
        x2 = [mpmath.mpf(v) ** 2 for v in a]
        n = len(a)
        m1, m2 = mpmath.fsum(x1) / n, mpmath.fsum(x2) / n
        v11 = mpmath.fsum((u - m1) ** 2 for u in x1) / (n - 1)
        v22 = mpmath.fsum((w - m2) ** 2 for w in x2) / (n - 1)
        v12 = mpmath.fsum((u - m1) * (w - m2) for u, w in zip(x1, x2, strict=True)) / (n - 1)
        se_ref = mpmath.sqrt((v11 / m2 - m1 * v12 / m2**2 + m1**2 * v22 / (4 * m2**3)) / n)
        s_ref = m1 / mpmath.sqrt(m2)
    s, se = s_and_standard_error(torch.tensor(a, dtype=torch.float64))
    assert s == pytest.approx(float(s_ref), rel=1e-14) and se == pytest.approx(float(se_ref), rel=1e-12)


def test_gamma_and_kind_messages():
    from attention_claims.maths import s_exp, sparsity_curves

    for g in (0.0, -1.0):
        with pytest.raises(AttentionInputError, match="^" + re.escape(f"gamma = sigma*||q|| must be > 0, got {g!r}") + "$"):
            s_exp(g)
    with pytest.raises(AttentionInputError, match="^" + re.escape("kind: unknown 'exp' (one of relu2, identity)") + "$"):
        sparsity_curves("exp", [0.0], [1.0])


@pytest.mark.parametrize("j", [0, 1, 2, 3])
@pytest.mark.parametrize("t", [0.5, 1.5, 6.0])
def test_gaussian_tail_closed_forms(j, t):
    # int_t^inf v^j e^{-v^2/2} dv: sqrt(pi/2) erfc(t/sqrt 2), e^{-t^2/2}, t e^{-t^2/2} + sqrt(pi/2) erfc(t/sqrt 2),
    # (t^2 + 2) e^{-t^2/2} (integration by parts)
    from flint import arb

    from attention_claims.maths.exact import precision
    from attention_claims.maths.sparsity import _gaussian_tail

    with mpmath.workdps(60):
        tt = mpmath.mpf(t)
        g0, e = mpmath.sqrt(mpmath.pi / 2) * mpmath.erfc(tt / mpmath.sqrt(2)), mpmath.exp(-tt * tt / 2)
        ref = [g0, e, tt * e + g0, (tt * tt + 2) * e][j]
        enc = _gaussian_tail(j, arb(t))
        with precision(200):  # the decimal reference read at 200 bits, not flint's default 53
            assert (enc - arb(mpmath.nstr(ref, 55))).contains(0) and enc.rad() < 1e-12 * float(ref)


def test_poly_tail_integrates_the_binomial_expansion():
    # int_t^inf (a + b v)^k e^{-v^2/2} dv for a = 1/2, b = 2, k = 3, t = 1.5, against mpmath quadrature
    from flint import arb

    from attention_claims.maths.exact import precision
    from attention_claims.maths.sparsity import _poly_tail

    with mpmath.workdps(40):
        ref = mpmath.quad(lambda v: (mpmath.mpf(0.5) + 2 * v) ** 3 * mpmath.exp(-v * v / 2), [1.5, 10, mpmath.inf])
        enc = _poly_tail(arb(0.5), arb(2), 3, arb(1.5))
        with precision(200):
            assert (enc - arb(mpmath.nstr(ref, 38))).contains(0) and enc.rad() < 1e-12 * float(ref)


def test_gaussian_moment_arb_signs_the_pieces_at_their_midpoints():
    # E|X| for X = 30 + eps: the kink c = -30 is inside the window (-40, 40), and the piece (-40, -30) weighs
    # about 1e-199, so at 800 bits its sign shows: beta (1 - 2 Phi(-beta)) + 2 phi(beta)
    from flint import arb

    from attention_claims.maths import gaussian_moment_arb
    from attention_claims.maths.exact import precision

    with mpmath.workdps(300):
        b = mpmath.mpf(30)
        ref = b * (1 - 2 * mpmath.ncdf(-b)) + 2 * mpmath.npdf(b)
        m = gaussian_moment_arb("identity", 1, 30, 1, 800)
        with precision(1000):
            d = m - arb(mpmath.nstr(ref, 295))
            assert d.contains(0) and d.rad() < 1e-230


def test_gaussian_moment_arb_tail_term_at_the_precision_where_it_shows():
    """At 1300 bits (about 1e-391) the mass beyond the 40-sd window (about e^-800 = 4e-348 relative) is what
    the ball's radius is made of, so the tail term must be exactly right there: a ball around the window's
    integral with the tail bound B as radius (the true tail T lies in [0, B]).

    E X^2 = b^2 + g^2 = 101 for b = 10, g = 1: B = 2 int_40^inf (10 + v)^2 e^{-v^2/2} dv exceeds T by
    40 e^{-800}, so adding B to the midpoint instead of the radius would leave 101 about 6e-347 outside.
    E e^X = e^{g^2/2} = e^2 for b = 0, g = 2: the tails are the peak value e^{kb + k^2 g^2/2} = e^2 times the
    Gaussian tails beyond +-40 (about 5e-349 after the 1/sqrt(2 pi)); a smaller peak (e^-1, from k/g in
    place of k g) leaves e^2 outside. The radii are checked too: each ball must be about as tight as
    its tail term, not widened to contain the value."""
    from attention_claims.maths import gaussian_moment_arb
    from attention_claims.maths.exact import precision, to_arb

    m = gaussian_moment_arb("identity", 2, 10, 1, 1300)
    assert m.contains(arb(101)) and m.rad() < arb(10) ** -345  # (1e-345 as a float is 0)
    m = gaussian_moment_arb("exp", 1, 0, 2, 1300)
    with mpmath.workdps(420), precision(1500):
        ref = to_arb(mpmath.e**2) + arb(0, arb(10) ** -410)  # e^2 to 420 digits, its rounding error in the radius
        assert m.contains(ref) and m.rad() < arb(10) ** -348


def test_gaussian_moment_arb_validates_k_beta_gamma():
    from attention_claims.maths import gaussian_moment_arb

    for k in (0, 13):
        with pytest.raises(AttentionInputError, match=re.escape(f"k: must be an integer in [1, 12], got {k}")):
            gaussian_moment_arb("identity", k, 0.0, 1.0, 100)
    with pytest.raises(AttentionInputError, match="^beta: nan is not finite$"):
        gaussian_moment_arb("identity", 1, float("nan"), 1.0, 100)
    with pytest.raises(AttentionInputError, match="^gamma: nan is not finite$"):
        gaussian_moment_arb("identity", 1, 0.0, float("nan"), 100)
    with pytest.raises(AttentionInputError, match="^" + re.escape("gamma = sigma*||q|| must be > 0, got 0.0") + "$"):
        gaussian_moment_arb("identity", 1, 0.5, 0.0, 100)
    with pytest.raises(AttentionInputError, match="^argument nan is not finite$"):
        relu_moment(2, float("nan"))


def _relu2_tail_part(a, c, g):
    """g^2 e^{c^2/2} int_a^inf (v - c)^2 e^{-v^2/2} dv, with int_a^inf v^j e^{-v^2/2} dv = J0 = sqrt(pi/2)
    erfc(a/sqrt 2), J1 = e^{-a^2/2}, J2 = a e^{-a^2/2} + J0 (at the caller's precision)."""
    a, c = mpmath.mpf(a), mpmath.mpf(c)
    j0, e = mpmath.sqrt(mpmath.pi / 2) * mpmath.erfc(a / mpmath.sqrt(2)), mpmath.exp(-a * a / 2)
    return g**2 * mpmath.exp(c * c / 2) * ((a * e + j0) - 2 * c * e + c * c * j0)


def test_gaussian_moment_arb_adds_the_tails_to_the_radius():
    # E|eps| = sqrt(2/pi); the window (-40, 40) leaves out 2 e^{-800} / sqrt(2 pi) ~ 2.9e-348 of it, which at
    # 1400 bits is far above the quadrature's 2^-1400: the ball must be widened by the two tails (for beta = 0
    # the tail bound g^k int_t^inf v^k e^{-v^2/2} dv is the tail itself, so the radius is that mass)
    from flint import arb

    from attention_claims.maths import gaussian_moment_arb
    from attention_claims.maths.exact import precision

    with mpmath.workdps(450):
        g0 = mpmath.sqrt(mpmath.pi / 2) * mpmath.erfc(40 / mpmath.sqrt(2))  # int_40^inf e^{-v^2/2} dv
        cases = [
            # E|eps|: two tails int_40^inf v e^{-v^2/2} dv = e^{-800}, over sqrt(2 pi)
            ("identity", mpmath.sqrt(2 / mpmath.pi), 2 * mpmath.exp(-800) / mpmath.sqrt(2 * mpmath.pi)),
            # E e^{2 eps} = e^2: the window (2 - 40, 2 + 40) around the peak k g = 2 leaves out e^2 2 g0 / sqrt(2 pi)
            ("exp", mpmath.exp(2), mpmath.exp(2) * 2 * g0 / mpmath.sqrt(2 * mpmath.pi)),
            # relu2, k = 2, beta = 4.5, gamma = 3 (c = -3/2): g^2 int_0^inf u^2 e^{-c u - u^2/2} du
            # = g^2 e^{c^2/2} int_c^inf (v - c)^2 e^{-v^2/2} dv; the window ends at u = 41.5 (v = 40)
            ("relu2", _relu2_tail_part(-1.5, -1.5, 3), _relu2_tail_part(40, -1.5, 3)),
        ]
        for f, ref, tail in cases:
            k, beta, gamma = {"identity": (1, 0, 1), "exp": (2, 0, 1), "relu2": (2, 4.5, 3)}[f]
            m = gaussian_moment_arb(f, k, beta, gamma, 1400)
            with precision(1600):
                assert (m - arb(mpmath.nstr(ref, 440))).contains(0), f
                assert m.rad() < arb(mpmath.nstr(1.001 * tail, 20)), f
        # relu2 at c = 3 > 0 (beta = -3, gamma = 1): the bound (|c| + v)^k over-estimates the tail (v - c)^k
        # beyond v = 43 by about 30 %, which must widen the ball, not move its midpoint
        m = gaussian_moment_arb("relu2", 2, -3, 1, 1400)
        with precision(1600):
            assert (m - arb(mpmath.nstr(_relu2_tail_part(3, 3, 1), 440))).contains(0)
