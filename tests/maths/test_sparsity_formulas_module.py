"""attention_claims.maths.sparsity: the closed forms of 004 "一般线性" and "线性衰减", the Monte Carlo
estimate, the participation ratio and its certified enclosures, against values worked out by hand or
recomputed from the same draws, and the errors each names (issue 24, mutation testing: each test here
fails on a mutant of the module that the checks let through)."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import torch
from flint import arb

from attention_claims.maths import (
    AttentionInputError,
    arb_partition_ratio,
    arb_softmax_stats,
    certified_softmax_max_below,
    participation_ratio,
    population_moments,
    product_design,
    s_decay,
    s_decay_bound,
    s_general_linear,
    s_iid_linear,
    s_monte_carlo,
    s_vector_mp,
)
from attention_claims.maths.exact import precision


def _contains(ball, num: int, den: int = 1, *, rad: float = 2.0**-100) -> bool:
    """Whether the arb ``ball`` holds the rational ``num / den`` (formed at 400 bits) and is narrower than ``rad``."""
    with precision(400):
        return ball.contains(arb(num) / den) and float(ball.rad()) <= rad


# -- 004 "一般线性": S = 1 / sqrt(1 + q^T Sigma q / (q^T mu)^2) ------------------------------------------------


def test_s_general_linear_worked_example():
    """q = (1, 2), mu = (1, 1), Sigma = diag(1, 2): q^T Sigma q = 9, q^T mu = 3, S = 1/sqrt(2)."""
    assert s_general_linear([1, 2], [1, 1], [[1, 0], [0, 2]]) == pytest.approx(1 / math.sqrt(2), rel=1e-15)
    # an off-diagonal covariance enters through q^T Sigma q = 1 + 2*2*0.5 + 4*2 = 11
    assert s_general_linear([1, 2], [1, 1], [[1, 0.5], [0.5, 2]]) == pytest.approx(1 / math.sqrt(1 + 11 / 9),
                                                                                  rel=1e-15)
    with pytest.raises(AttentionInputError, match=r"^shapes: q \(2,\), mu \(3,\), Sigma \(2, 2\) do not agree$"):
        s_general_linear([1, 2], [1, 1, 1], np.eye(2))
    with pytest.raises(AttentionInputError, match="do not agree"):
        s_general_linear([1, 2], [1, 1], np.eye(3))
    with pytest.raises(AttentionInputError, match="do not agree"):
        s_general_linear([[1, 2]], [[1, 1]], np.eye(2))
    with pytest.raises(AttentionInputError, match=r"^q_tilde \. mu_tilde = 0: S is undefined \(0/0\)$"):
        s_general_linear([1, -1], [1, 1], np.eye(2))


def test_s_iid_linear_worked_example_and_agrees_with_the_general_form():
    """q = (3, 4), mu = 2, sigma = 1: r = (1/2)(5/7), S = 1/sqrt(1 + r^2); the general form with
    mu 1 and sigma^2 I gives the same number."""
    r = 0.5 * 5 / 7
    assert s_iid_linear([3, 4], 2.0, 1.0) == pytest.approx(1 / math.sqrt(1 + r * r), rel=1e-15)
    assert s_iid_linear([3, 4], 2.0, 1.0) == pytest.approx(s_general_linear([3, 4], [2, 2], np.eye(2)), rel=1e-15)
    assert s_iid_linear([3, 4], 2.0, 0.0) == 1.0
    with pytest.raises(AttentionInputError, match=r"^mu must be non-zero and q_tilde not all zero$"):
        s_iid_linear([3, 4], 0.0, 1.0)
    with pytest.raises(AttentionInputError, match="not all zero"):
        s_iid_linear([0, 0], 1.0, 1.0)


# -- 004 "线性衰减": a = (lam^(n-1), ..., lam, 1) ------------------------------------------------------------------


def test_s_decay_equals_s_of_the_vector_and_stays_below_the_bound():
    for lam, n in ((0.5, 3), (0.9, 7), (0.01, 1)):
        with mpmath.workdps(60):
            a = [mpmath.mpf(lam) ** k for k in range(n)]
        assert mpmath.almosteq(s_decay(lam, n), s_vector_mp(a), rel_eps=mpmath.mpf(10) ** -30)
        assert s_decay(lam, n) <= s_decay_bound(lam, n)
    # lam = 1/2, n = 3: the bound is sqrt((3/2) / (3 (1/2) (9/8))) = sqrt(8/9)
    with mpmath.workdps(50):
        assert mpmath.almosteq(s_decay_bound(0.5, 3), mpmath.sqrt(mpmath.mpf(8) / 9), rel_eps=mpmath.mpf(10) ** -30)


@pytest.mark.parametrize("lam", [0, 1, 2, -0.5])
def test_s_decay_refuses_lam_outside_the_open_unit_interval(lam):
    for fn in (s_decay, s_decay_bound):
        with pytest.raises(AttentionInputError, match=r"^lam: must be in \(0, 1\)"):
            fn(lam, 3)


def test_s_decay_refuses_a_bad_n():
    for fn in (s_decay, s_decay_bound):
        with pytest.raises(AttentionInputError, match=r"^n: must be a positive integer"):
            fn(0.5, 0)


# -- Monte Carlo estimate (004 eq. (2)) ----------------------------------------------------------------------


@pytest.mark.parametrize("f,fn", [("exp", torch.exp), ("relu2", lambda x: torch.relu(x) ** 2),
                                  ("identity", lambda x: x)])
def test_s_monte_carlo_is_s_of_the_seeded_draws(f, fn):
    """The same generator seed gives k = mu + sigma eps with eps the same N(0, 1) draws (float64 on the CPU
    by default), a = f(k q), S(a) = mean|a| / sqrt(mean a^2)."""
    q, mu, sigma, n = np.array([0.5, -1.0, 2.0]), np.array([0.25, 0.0, -0.5]), 0.75, 64
    got = s_monte_carlo(f, q, mu, sigma, n, generator=torch.Generator().manual_seed(3))
    eps = torch.randn(n, 3, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    a = fn((torch.as_tensor(mu) + sigma * eps) @ torch.as_tensor(q))
    assert got == float(a.abs().mean() / torch.sqrt((a * a).mean()))
    assert 0 < got <= 1
    got32 = s_monte_carlo(f, q, mu, sigma, n, generator=torch.Generator().manual_seed(3), dtype="float32")
    eps32 = torch.randn(n, 3, generator=torch.Generator().manual_seed(3), dtype=torch.float32)
    a32 = fn((torch.as_tensor(mu, dtype=torch.float32) + sigma * eps32) @ torch.as_tensor(q, dtype=torch.float32))
    assert got32 == float(a32.abs().mean() / torch.sqrt((a32 * a32).mean()))


def test_s_monte_carlo_errors():
    g = torch.Generator().manual_seed(0)
    with pytest.raises(KeyError):
        s_monte_carlo("relu3", [1.0], [0.0], 1.0, 4, generator=g)
    with pytest.raises(AttentionInputError, match="dtype"):
        s_monte_carlo("exp", [1.0], [0.0], 1.0, 4, generator=g, dtype="float8")


# -- the participation ratio 1 / sum p_j^2 of p = softmax(x) and its enclosures -----------------------------------


def test_participation_ratio_known_values():
    """x = (0, log 3): p = (1/4, 3/4), 1 / (1/16 + 9/16) = 1.6; uniform rows give N, whatever their level."""
    assert participation_ratio([0.0, math.log(3.0)]) == pytest.approx(1.6, rel=1e-15)
    assert participation_ratio([0.0, 0.0, 0.0]) == 3.0
    assert participation_ratio([1000.0, 1000.0]) == 2.0  # the maximum is subtracted: no overflow
    assert participation_ratio([0.0, -1000.0]) == 1.0
    with pytest.raises(AttentionInputError, match=r"^x: contains NaN"):
        participation_ratio([0.0, math.nan])
    with pytest.raises(AttentionInputError, match=r"^x: expected 1 dimensions"):
        participation_ratio([[0.0, 1.0]])


def test_arb_softmax_stats_encloses_the_participation_ratio_and_the_largest_weight():
    x = [0.0, math.log(3.0)]
    p1 = 3.0 / (1.0 + 3.0)  # float log 3 is not exact: compare with the exact value of that float
    with mpmath.workdps(50):
        e = mpmath.exp(mpmath.mpf(math.log(3.0)))
        pr = float((1 + e) ** 2 / (1 + e * e))
        pmax = float(e / (1 + e))
    pr_ball, max_ball = arb_softmax_stats(x)
    assert float(pr_ball.mid()) == pytest.approx(pr, rel=1e-15) and float(pr_ball.rad()) < 2.0**-100
    assert float(max_ball.mid()) == pytest.approx(pmax, rel=1e-15) and float(max_ball.rad()) < 2.0**-100
    assert pmax == pytest.approx(p1, rel=1e-15)
    pr3, max3 = arb_softmax_stats([1000.0, 1000.0, 1000.0])
    assert _contains(pr3, 3) and _contains(max3, 1, 3)
    with pytest.raises(AttentionInputError, match=r"^x: contains NaN"):
        arb_softmax_stats([math.nan])
    with pytest.raises(AttentionInputError, match=r"^x: expected 1 dimensions"):
        arb_softmax_stats([[0.0]])


def test_arb_partition_ratio_encloses_z_over_n_e_to_the_half_variance():
    """x = (0, 1), s2 = 1/2: Z / (N e^(s2/2)) = (1 + e) / (2 e^(1/4))."""
    with mpmath.workdps(50):
        want = float((1 + mpmath.e) / (2 * mpmath.exp(mpmath.mpf(1) / 4)))
    r = arb_partition_ratio([0.0, 1.0], 0.5)
    assert float(r.mid()) == pytest.approx(want, rel=1e-15) and float(r.rad()) < 2.0**-100
    assert _contains(arb_partition_ratio([0.0, 0.0, 0.0], 0.0), 1)
    with pytest.raises(AttentionInputError, match=r"^s2: must be >= 0, got -0.5$"):
        arb_partition_ratio([0.0], -0.5)
    with pytest.raises(AttentionInputError, match=r"^x: contains NaN"):
        arb_partition_ratio([math.nan], 1.0)


def test_certified_softmax_max_below():
    # three equal logits: max p = 1/3, certified below 0.4 only with every term in (largest first)
    ok, upper = certified_softmax_max_below([0.0, 0.0, 0.0], 0.4)
    assert ok and _contains(upper, 1, 3)
    ok, upper = certified_softmax_max_below([0.0, 0.0, 0.0], 0.3)
    assert not ok and _contains(upper, 1, 3)
    # 200 equal logits, bound 0.019 (between 1/60 and 1/50): the first chunk of 64 terms certifies it and
    # 1/64 is returned; in chunks of 10, the sixth
    ok, upper = certified_softmax_max_below(np.zeros(200), 0.019)
    assert ok and _contains(upper, 1, 64)
    ok, upper = certified_softmax_max_below(np.zeros(200), 0.019, chunk=10)
    assert ok and _contains(upper, 1, 60)
    with pytest.raises(AttentionInputError, match=r"^x: contains NaN"):
        certified_softmax_max_below([math.nan], 0.5)
    with pytest.raises(AttentionInputError, match=r"^bound: must be positive, got 0.0$"):
        certified_softmax_max_below([0.0], 0.0)


# -- exact moments of a finite key set -----------------------------------------------------------------------------


def test_population_moments_and_product_design_name_their_input():
    with pytest.raises(AttentionInputError, match=r"^keys: entry nan is not finite$"):
        population_moments([[1.0, math.nan]])
    with pytest.raises(AttentionInputError, match=r"^keys: no rows$"):
        population_moments([])
    with pytest.raises(AttentionInputError, match=r"^keys: rows of different lengths$"):
        population_moments([[1, 2], [3]])
    with pytest.raises(AttentionInputError, match=r"^values: empty vector$"):
        product_design([], 2)
    assert product_design([1, 2], 1) == [[1], [2]]
    with pytest.raises(AttentionInputError, match=r"^d: must be an integer in \[1, 6\], got 0$"):
        product_design([1, 2], 0)


def test_closed_forms_compute_in_float64_whatever_the_input_dtype():
    """float32 inputs are converted (exactly) to float64 first: the result is the float64 one."""
    q, mu = np.array([0.1, 0.7], dtype=np.float32), np.array([0.3, 0.9], dtype=np.float32)
    cov = np.array([[0.2, 0.05], [0.05, 0.3]], dtype=np.float32)
    assert s_general_linear(q, mu, cov) == s_general_linear(q.astype(np.float64), mu.astype(np.float64),
                                                            cov.astype(np.float64))
    assert s_iid_linear(q, 0.3, 0.7) == s_iid_linear(q.astype(np.float64), 0.3, 0.7)


def test_arb_enclosures_default_precision_and_shape():
    x = np.array([0.0, -0.3, -1.7])
    assert arb_softmax_stats(x)[0].rad() == arb_softmax_stats(x, prec=128)[0].rad()
    assert arb_softmax_stats(x)[0].rad() != arb_softmax_stats(x, prec=129)[0].rad()
    assert arb_partition_ratio(x, 0.5).rad() == arb_partition_ratio(x, 0.5, prec=128).rad()
    assert arb_partition_ratio(x, 0.5).rad() != arb_partition_ratio(x, 0.5, prec=129).rad()
    with pytest.raises(AttentionInputError, match=r"^x: expected 1 dimensions"):
        arb_partition_ratio([[0.0]], 1.0)


# -- Hurley-Rickard transformations (004, D1-D4 and P1-P2) ----------------------------------------------------


def test_hurley_rickard_transformations_name_their_input_and_bounds():
    from attention_claims.maths import babies, bill_gates, cloning, rising_tide, robin_hood

    for fn, args in ((robin_hood, (0, 1, 1)), (rising_tide, (1,)), (cloning, ()), (babies, ()), (bill_gates, (0, 1))):
        with pytest.raises(AttentionInputError, match=r"^x: entry nan is not finite$"):
            fn([1.0, math.nan], *args)
    rh = r"^robin_hood: need i != j in range and 0 < alpha < \(x_i - x_j\)/2$"
    assert robin_hood([4, 1], 0, 1, 1) == [3, 2]
    for i, j, alpha in ((2, 1, 1), (0, 2, 1), (0, 0, 1), (0, 1, 0), (0, 1, Fraction(3, 2)), (0, 1, 2)):
        with pytest.raises(AttentionInputError, match=rh):
            robin_hood([4, 1], i, j, alpha)
    assert bill_gates([1, 2], 1, 0) == [1, 2] and bill_gates([1, 2], 0, Fraction(1, 2)) == [Fraction(3, 2), 2]
    for i, beta in ((2, 1), (-1, 1), (0, -1)):
        with pytest.raises(AttentionInputError, match=r"^bill_gates: need 0 <= i < n and beta >= 0$"):
            bill_gates([1, 2], i, beta)


# -- Gaussian quadratures of random-feature moments (kernels.py) -------------------------------------------------


def test_gaussian_mgf_and_prf_moments_quadrature_defaults_values_and_names():
    """E e^(a w) = e^(a^2/2); one positive random feature product has E f = e^(x.y) and
    E f^2 = e^(2|x+y|^2 - |x|^2 - |y|^2) (Choromanski et al. 2021, Lemma 1)."""
    from attention_claims.maths import gaussian_mgf_quadrature, prf_moments_quadrature

    assert gaussian_mgf_quadrature(0.75) == gaussian_mgf_quadrature(0.75, dps=40)
    assert gaussian_mgf_quadrature(0.75) != gaussian_mgf_quadrature(0.75, dps=41)
    assert gaussian_mgf_quadrature(-0.75) == gaussian_mgf_quadrature(0.75)
    with pytest.raises(AttentionInputError, match=r"^gaussian_mgf_quadrature: a: nan is not finite$"):
        gaussian_mgf_quadrature(math.nan)
    x, y = [0.5, -0.25], [0.125, 0.75]
    with mpmath.workdps(60):  # compared at more digits than either computes: the default is dps = 40
        assert prf_moments_quadrature(x, y) == prf_moments_quadrature(x, y, dps=40)
        assert prf_moments_quadrature(x, y) != prf_moments_quadrature(x, y, dps=41)
    with mpmath.workdps(90):  # dps = 80: every factor is computed to 80 digits, not to the default 40
        m1, m2 = prf_moments_quadrature(x, y, dps=80)
        xy = sum(mpmath.mpf(a) * mpmath.mpf(b) for a, b in zip(x, y, strict=True))
        s2 = sum((mpmath.mpf(a) + mpmath.mpf(b)) ** 2 for a, b in zip(x, y, strict=True))
        nxy = sum(mpmath.mpf(a) ** 2 for a in x) + sum(mpmath.mpf(b) ** 2 for b in y)
        assert mpmath.almosteq(m1, mpmath.exp(xy), rel_eps=mpmath.mpf(10) ** -77)
        assert mpmath.almosteq(m2, mpmath.exp(2 * s2 - nxy), rel_eps=mpmath.mpf(10) ** -77)
    with mpmath.workdps(40):
        m1, m2 = prf_moments_quadrature(x, y)
        s = [mpmath.mpf(a) + mpmath.mpf(b) for a, b in zip(x, y, strict=True)]
        nx, ny = sum(mpmath.mpf(a) ** 2 for a in x), sum(mpmath.mpf(b) ** 2 for b in y)
        xy = sum(mpmath.mpf(a) * mpmath.mpf(b) for a, b in zip(x, y, strict=True))
        assert mpmath.almosteq(m1, mpmath.exp(xy), rel_eps=mpmath.mpf(10) ** -37)
        assert mpmath.almosteq(m2, mpmath.exp(2 * sum(v * v for v in s) - nx - ny), rel_eps=mpmath.mpf(10) ** -37)
    with pytest.raises(AttentionInputError, match=r"^x: contains NaN"):
        prf_moments_quadrature([math.nan], [0.0])
    with pytest.raises(AttentionInputError, match=r"^y: contains NaN"):
        prf_moments_quadrature([0.0], [math.nan])
    with pytest.raises(AttentionInputError, match=r"^x: expected 1 dimensions"):
        prf_moments_quadrature([[0.0]], [0.0])
    with pytest.raises(AttentionInputError, match=r"^y: expected 1 dimensions"):
        prf_moments_quadrature([0.0], [[0.0]])
