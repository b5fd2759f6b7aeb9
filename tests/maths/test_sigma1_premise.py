"""The premise sigma_1 >= 1 of 推论 11.8's attention-spectra reading, decided without an SVD (issue 35: the last
"chosen" tolerance, 16 N eps64, replaced by derived bounds): attention_claims.maths.rounding's
logit_magnitude_bound and row_stochastic_sigma1_bounds, and the check's power against a planted floor."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import checks.test_spectrum as spectrum
from attention_claims.framework.evidence import CheckLog, Counterexample, resolve_deferred
from attention_claims.maths import softmax_attention
from attention_claims.maths.rounding import (
    SMALLEST_SUBNORMAL,
    Tolerance,
    logit_magnitude_bound,
    row_stochastic_sigma1_bounds,
    softmax_tolerance,
)


def _draw(seed, N, d, scale):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, (N, d)) * scale, rng.uniform(-1, 1, (N, d))


@given(seed=st.integers(0, 2**32 - 1), N=st.integers(1, 12), d=st.integers(1, 8), e=st.floats(-3, 3))
@settings(max_examples=30, deadline=None)
def test_logit_magnitude_bound_is_an_upper_bound(seed, N, d, e):
    Q, K = _draw(seed, N, d, 10.0**e)
    with mpmath.workdps(40):
        exact = max(mpmath.fsum(abs(mpmath.mpf(q)) * abs(mpmath.mpf(k)) for q, k in zip(Q[i], K[j], strict=True))
                    for i in range(N) for j in range(N)) / mpmath.sqrt(d)
        L = logit_magnitude_bound(Q, K)
        assert mpmath.mpf(L) >= exact
        assert mpmath.mpf(L) <= exact * (1 + mpmath.mpf(10) ** -13) + mpmath.mpf(10) ** -300  # and not loose


def test_logit_magnitude_bound_with_a_scale_and_bad_input():
    Q, K = np.array([[2.0, -1.0]]), np.array([[1.0, 3.0]])
    assert 5.0 <= logit_magnitude_bound(Q, K, scale=1.0) < 5.0 * (1 + 1e-14)
    with pytest.raises(ValueError, match="2-D arrays"):
        logit_magnitude_bound(Q, np.ones((1, 3)))
    with pytest.raises(ValueError, match="finite"):
        logit_magnitude_bound(Q * np.nan, K)
    with pytest.raises(ValueError, match="scale"):
        logit_magnitude_bound(Q, K, scale=0.0)


@given(seed=st.integers(0, 2**32 - 1), N=st.integers(1, 16), d=st.integers(1, 8), e=st.floats(-3, 3.5))
@settings(max_examples=30, deadline=None)
def test_sigma1_bounds_bracket_the_singular_value(seed, N, d, e):
    Q, K = _draw(seed, N, d, 10.0**e)
    A = softmax_attention(Q, K).numpy()
    tau = softmax_tolerance(logit_magnitude_bound(Q, K), d, N, "float64")
    b = row_stochastic_sigma1_bounds(A, tau, absolute=SMALLEST_SUBNORMAL["float64"])
    assert b.row_sum_error <= b.row_sum_bound  # the stored matrix's rows sum to 1 within the derived bound
    assert b.lower_sq >= (1 - b.row_sum_bound) ** 2
    s1 = float(np.linalg.svd(A, compute_uv=False)[0])
    assert math.sqrt(b.lower_sq) <= s1 * (1 + 1e-12) and s1 <= math.sqrt(b.upper_sq) * (1 + 1e-12)
    assert b.upper_sq >= 1  # sigma_1(X) >= 1: the upper bound can never refute the true floor


def test_sigma1_bounds_exact_values():
    b = row_stochastic_sigma1_bounds(np.array([[1.0]]), 2.0**-40)
    assert (b.lower_sq, b.row_sum_error, b.tau) == (1, 0, Fraction(1, 2**40))
    assert b.upper_sq == 1 / (1 - Fraction(1, 2**40))
    A = np.array([[0.75, 0.25], [0.25, 0.75]])  # doubly stochastic: sigma_1 = 1 exactly
    b = row_stochastic_sigma1_bounds(A, Tolerance(0.0, "exact entries"))
    assert b.lower_sq == 1 and b.upper_sq == 1
    b = row_stochastic_sigma1_bounds(np.array([[1.0, 0.0], [1.0, 0.0]]), 0.0)  # sigma_1 = sqrt 2
    assert b.lower_sq == 1 and b.upper_sq == 2


def test_sigma1_bounds_catch_a_matrix_that_is_not_row_stochastic():
    A = np.array([[0.5, 0.4], [0.25, 0.75]])  # row 0 sums to 0.9
    b = row_stochastic_sigma1_bounds(A, 1e-15)
    assert float(b.row_sum_error) == pytest.approx(0.1, rel=1e-12) and b.row_sum_error > b.tau


@pytest.mark.parametrize("bad,tau,match", [
    (np.array([1.0, 0.0]), 0.0, "2-D"),
    (np.array([[1.0, -0.5]]), 0.0, ">= 0"),
    (np.array([[np.inf]]), 0.0, "finite"),
    (np.array([[1.0]]), 1.0, r"\[0, 1\)"),
    (np.array([[1.0]]), -1e-3, r"\[0, 1\)"),
])
def test_sigma1_bounds_reject_bad_input(bad, tau, match):
    with pytest.raises(ValueError, match=match):
        row_stochastic_sigma1_bounds(bad, tau)
    with pytest.raises(ValueError, match="absolute"):
        row_stochastic_sigma1_bounds(np.array([[1.0]]), 0.0, absolute=-1.0)


def test_an_underflowed_entry_is_covered_by_the_absolute_term():
    A = np.array([[1.0, 0.0], [1.0, 0.0]])  # column 1: exps that underflowed to 0, exactly e^-800 each
    b = row_stochastic_sigma1_bounds(A, 0.0, absolute=SMALLEST_SUBNORMAL["float64"])
    assert b.upper_sq == 2 + 2 * Fraction(2) ** -1074 and b.row_sum_bound == 2 * Fraction(2) ** -1074


def test_certificate_of_a_floor_above_sigma_1():
    Q, K = np.array([[0.3]]), np.array([[-0.7]])  # N = 1: X = [[1]], sigma_1 = 1
    ok, why = spectrum._certify_sigma1_below(Q, K, Fraction(101, 100))
    assert ok and "below" in why
    ok, why = spectrum._certify_sigma1_below(Q, K, Fraction(1))
    assert not ok and "not certainly below" in why


def _run_check(monkeypatch, floor):
    monkeypatch.setattr(spectrum, "SIGMA1_FLOOR", floor)
    log = CheckLog()
    spectrum.test_attention_top_singular_value_at_least_one(claim_log=log)  # the active Hypothesis profile
    return log


def test_the_check_holds_at_the_true_floor(monkeypatch):
    log = _run_check(monkeypatch, Fraction(1))
    assert log.examples > 0


def test_the_check_catches_a_planted_floor_and_certifies_it(monkeypatch):
    with pytest.raises(Counterexample) as caught:
        _run_check(monkeypatch, Fraction(101, 100))
    final = resolve_deferred(caught.value)
    assert final.certified and "arb" in final.certificate
