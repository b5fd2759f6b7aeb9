"""Measures, builders and references: known values and clear errors on bad input
(issue 5, "Bad input"; also the test command of the mutation run)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import torch

from attention_claims.maths import (
    AttentionInputError,
    arb_softmax_attention,
    arb_softmax_rows,
    causal_mask,
    certified_rank_at_least,
    default_rank_tolerance,
    effective_rank,
    energy_fraction,
    exact_product_rank,
    exact_rank,
    linear_attention,
    logits,
    mp_softmax_entry,
    numerical_rank,
    power_law_fit,
    singular_values,
    softmax_attention,
    sparsity_measure,
    top_fraction_energy,
    underflow_log_threshold,
)

BAD = {
    "nan": np.array([[1.0, np.nan], [0.0, 1.0]]),
    "inf": np.array([[1.0, np.inf], [0.0, 1.0]]),
    "empty": np.zeros((0, 2)),
}


@pytest.mark.parametrize("kind", list(BAD))
@pytest.mark.parametrize("fn", [singular_values, numerical_rank, exact_rank,
                                lambda a: softmax_attention(a, a), lambda a: logits(a, a),
                                lambda a: linear_attention(a, a), lambda a: power_law_fit(a.ravel()),
                                lambda a: effective_rank(a.ravel(), 0.9), lambda a: sparsity_measure(a.ravel()),
                                lambda a: energy_fraction(a.ravel(), 1)],
                         ids=["singular_values", "numerical_rank", "exact_rank", "softmax_attention", "logits",
                              "linear_attention", "power_law_fit", "effective_rank", "sparsity", "energy_fraction"])
def test_bad_input_is_a_clear_error(fn, kind):
    with pytest.raises(AttentionInputError, match=r"(NaN|Inf|empty)"):
        fn(BAD[kind])


def test_shape_errors_name_the_argument():
    with pytest.raises(AttentionInputError, match="Q, K: head dimensions differ"):
        logits(np.ones((2, 3)), np.ones((2, 4)))
    with pytest.raises(AttentionInputError, match="expected 2 dimensions"):
        softmax_attention(np.ones(3), np.ones(3))
    with pytest.raises(AttentionInputError, match="dtype: unknown"):
        softmax_attention(np.ones((2, 2)), np.ones((2, 2)), dtype="float8")


def test_singular_values_known():
    np.testing.assert_allclose(singular_values(np.diag([3.0, 1.0, 2.0])), [3.0, 2.0, 1.0])


def test_numerical_rank_and_tolerance():
    A = np.diag([1.0, 1e-3, 1e-20])
    r, tol = numerical_rank(A)
    assert r == 2 and tol == pytest.approx(3 * np.finfo(float).eps)
    assert numerical_rank(A, tol=1e-2) == (1, 1e-2)
    assert numerical_rank(A, eps=1e-3)[0] == 1  # tol = 3e-3 drops 1e-3
    assert numerical_rank(A, eps=1e-4)[0] == 2  # tol = 3e-4 keeps it
    assert default_rank_tolerance(np.array([2.0, 1.0]), (2, 5), 0.5) == 5.0
    assert default_rank_tolerance(np.array([]), (0, 0), 0.5) == 0.0


def test_energy_and_effective_rank_definition_11_25():
    sigma = np.sqrt(np.array([0.5, 0.3, 0.15, 0.05]))  # energies sum to 1
    assert energy_fraction(sigma, 0) == 0.0
    assert energy_fraction(sigma, 2) == pytest.approx(0.8)
    assert energy_fraction(sigma[::-1], 2) == pytest.approx(0.8)  # order of input does not matter
    assert effective_rank(sigma, 0.5) == 1  # ratio exactly tau counts (>=)
    assert effective_rank(sigma, 0.8) == 2
    assert effective_rank(sigma, 0.81) == 3
    assert effective_rank(sigma, 0.95) == 3
    assert effective_rank(sigma, 0.96) == 4
    assert top_fraction_energy(sigma, 0.25) == pytest.approx(0.5)
    assert top_fraction_energy(sigma, 0.3) == pytest.approx(0.8)  # ceil(0.3 * 4) = 2
    for bad in (0.0, 1.0, -0.1):
        with pytest.raises(AttentionInputError, match=rf"^tau: must be in \(0, 1\) \(003 定义 11.25\), got {bad}$"):
            effective_rank(sigma, bad)
    with pytest.raises(AttentionInputError, match="k: must be in"):
        energy_fraction(sigma, 5)
    with pytest.raises(AttentionInputError, match="fraction"):
        top_fraction_energy(sigma, 0.0)
    with pytest.raises(AttentionInputError, match="all singular values are zero"):
        effective_rank(np.zeros(3), 0.9)
    with pytest.raises(AttentionInputError, match="all singular values are zero"):
        energy_fraction(np.zeros(3), 1)


def test_sparsity_known_values():
    assert sparsity_measure(np.ones(7)) == pytest.approx(1.0)
    assert sparsity_measure(np.array([0.0, 0.0, 5.0, 0.0])) == pytest.approx(0.5)  # one-hot: 1/sqrt(n)
    assert sparsity_measure(np.array([-1.0, 1.0])) == pytest.approx(1.0)
    assert sparsity_measure(np.array([3.0, 4.0])) == pytest.approx(3.5 / math.sqrt(12.5))
    with pytest.raises(AttentionInputError, match="all-zero"):
        sparsity_measure(np.zeros(3))


def test_power_law_fit_recovers_exponent():
    i = np.arange(1, 51)
    alpha, C, r2 = power_law_fit(2.5 * i**-1.7)
    assert alpha == pytest.approx(1.7) and C == pytest.approx(2.5) and r2 == pytest.approx(1.0)
    noisy = 2.5 * i**-1.7 * np.exp(0.3 * np.sin(i))
    a2, _, r2b = power_law_fit(noisy)
    assert 1.4 < a2 < 2.0 and 0.5 < r2b < 1.0
    _, _, r2c = power_law_fit(np.array([1.0, 1.0, 1.0, 0.0]))  # flat: slope 0, perfect fit
    assert r2c == 1.0
    with pytest.raises(AttentionInputError, match="at least 3 positive"):
        power_law_fit(np.array([1.0, 0.5, 0.0, 0.0]))
    for skip_zero in (True, False):  # a negative value is no spectrum: refused, never fitted or dropped
        with pytest.raises(AttentionInputError, match=r"sigma: singular values are >= 0, got -0\.25"):
            power_law_fit(np.array([1.0, 0.5, 0.3, -0.25]), skip_zero=skip_zero)


def test_softmax_attention_and_mask():
    Q = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    A = softmax_attention(Q, Q, causal=True)
    assert torch.allclose(A.sum(-1), torch.ones(3, dtype=torch.float64))
    assert torch.all(torch.triu(A, 1) == 0) and A[0, 0] == 1.0
    z = logits(Q, Q).numpy()
    assert z[2, 2] == pytest.approx(2 / math.sqrt(2))
    assert causal_mask(2, 3).tolist() == [[True, False, False], [True, True, False]]
    full = softmax_attention(Q, Q, scale=1.0)
    e = np.exp(Q @ Q.T)
    np.testing.assert_allclose(full.numpy(), e / e.sum(1, keepdims=True), rtol=1e-14)


def test_references():
    assert exact_rank(np.array([[1.0, 2.0], [2.0, 4.0]])) == 1
    assert exact_rank(np.array([[0.5, 0.25], [0.25, 0.125 + 2.0**-52]])) == 2  # rational, not float
    Q = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    assert exact_product_rank(Q, Q) == 2
    A = arb_softmax_attention(Q, Q, causal=True)
    assert A[0, 1] == 0 and A[0, 0].contains(1) and A[0, 0].rad() < 1e-12
    ok, info = certified_rank_at_least(lambda: arb_softmax_attention(Q, Q), softmax_attention(Q, Q).numpy(), 3)
    assert ok and len(info["rows"]) == 3
    with mpmath.workdps(30):
        assert mp_softmax_entry([0.0, 0.0], 0) == mpmath.mpf("0.5")
        assert abs(mp_softmax_entry([1000.0, 0.0], 1) - mpmath.exp(-1000) / (1 + mpmath.exp(-1000))) < mpmath.mpf("1e-460")
    assert underflow_log_threshold("float64") == pytest.approx(-1075 * math.log(2))
    assert underflow_log_threshold("float16") == pytest.approx(-25 * math.log(2))


def test_arb_softmax_rows_encloses_the_softmax_of_an_arb_matrix():
    # the row softmax the certified attention matrix and the Dong residual stack share: an arb_mat or nested
    # lists, huge logits without overflow, the causal mask exactly 0
    from flint import arb, arb_mat

    Z = arb_mat([[arb(1000), arb(0)], [arb(2), arb(-3)]])
    A = arb_softmax_rows(Z)
    for i, row in enumerate([[1000.0, 0.0], [2.0, -3.0]]):
        for j in range(2):
            ref = arb(mpmath.nstr(mp_softmax_entry(row, j, dps=45), 40))  # 40 significant digits
            assert abs(A[i, j] - ref) < ref * arb("1e-12")  # relative: the second entry of row 0 is e^-1000
    C = arb_softmax_rows([[arb(1), arb(5)], [arb(1), arb(5)]], causal=True)
    assert C[0, 1] == 0 and C[0, 0] == 1 and (C[1, 0] + C[1, 1]).contains(1)


def test_error_messages_name_the_argument_exactly():
    with pytest.raises(AttentionInputError, match=r"^A: contains NaN or Inf$"):
        numerical_rank(BAD["nan"])
    with pytest.raises(AttentionInputError, match=r"^A: contains NaN or Inf$"):
        singular_values(BAD["inf"])
    for fn in (lambda s: energy_fraction(s, 1), lambda s: effective_rank(s, 0.5), lambda s: power_law_fit(s),
               lambda s: top_fraction_energy(s, 0.5)):
        with pytest.raises(AttentionInputError, match=r"^sigma: contains NaN or Inf$"):
            fn(np.array([1.0, np.nan, 0.5]))
        with pytest.raises(AttentionInputError, match=r"^sigma: expected 1 dimensions, got shape \(2, 2\)$"):
            fn(np.ones((2, 2)))
    with pytest.raises(AttentionInputError, match=r"^A: expected 2 dimensions, got shape \(3,\)$"):
        numerical_rank(np.ones(3))
    with pytest.raises(AttentionInputError, match=r"^x: contains NaN or Inf$"):
        sparsity_measure(np.array([np.inf, 1.0]))
    with pytest.raises(AttentionInputError, match=r"^x: all-zero vector, sparsity S is undefined \(0/0\)$"):
        sparsity_measure(np.zeros(2))
    with pytest.raises(AttentionInputError, match=r"^sigma: all singular values are zero \(effective rank undefined\)$"):
        effective_rank(np.zeros(2), 0.5)
    with pytest.raises(AttentionInputError, match=r"^sigma: all singular values are zero \(energy ratio undefined\)$"):
        energy_fraction(np.zeros(2), 1)
    with pytest.raises(AttentionInputError, match=r"^sigma: need at least 3 positive singular values to fit a power law$"):
        power_law_fit(np.array([1.0, 0.0, 0.0]))
    with pytest.raises(AttentionInputError, match=r"^A: expected 2 dimensions, got shape \(3,\)$"):
        singular_values(np.ones(3))
    with pytest.raises(AttentionInputError,
                       match=r"^sigma: zero singular values have no logarithm; fit with skip_zero=True$"):
        power_law_fit(np.array([3.0, 2.0, 1.0, 0.0]), skip_zero=False)


def test_torch_inputs_are_converted_to_float64():
    A = torch.tensor([[2.0, 0.0], [0.0, 1.0 + 2**-20]], dtype=torch.float32)
    np.testing.assert_array_equal(singular_values(A), [2.0, 1.0 + 2**-20])
    assert numerical_rank(A)[0] == 2
    s64 = torch.tensor([1.0, 1e-300], dtype=torch.float64)  # 1e-300 would flush to 0 in float32
    assert energy_fraction(s64, 1) == 1.0 and effective_rank(s64, 0.5) == 1
    assert power_law_fit(torch.tensor([4.0, 2.0, 1.0], dtype=torch.float64))[0] == pytest.approx(
        math.log(4) / math.log(3) * 0 + np.polyfit(np.log([1, 2, 3]), np.log([4.0, 2.0, 1.0]), 1)[0] * -1)


def test_boundaries_of_measures():
    eps = np.finfo(float).eps
    assert numerical_rank(np.diag([1.0, 2 * eps]))[0] == 1  # sigma equal to the tolerance is not counted
    assert numerical_rank(np.diag([1.0, 2.0001 * eps]))[0] == 2
    sigma = np.sqrt(np.array([5.0, 3.0, 1.5, 0.5]))  # total energy 10, not 1
    assert energy_fraction(sigma, 4) == 1.0
    assert energy_fraction(sigma, 2) == pytest.approx(0.8)
    assert effective_rank(sigma, 0.8) == 2 and effective_rank(sigma, 0.81) == 3
    assert top_fraction_energy(sigma, 1.0) == 1.0
    with pytest.raises(AttentionInputError, match="fraction"):
        top_fraction_energy(sigma, 1.5)
    rows = sparsity_measure(np.array([[1.0, 1.0], [0.0, 1.0]]))
    np.testing.assert_allclose(rows, [1.0, 1 / math.sqrt(2)])


def test_power_law_fit_r2_matches_linregress():
    from scipy.stats import linregress

    i = np.arange(1, 21)
    s = 1e-3 * i**-0.2 * np.exp(0.01 * np.cos(3 * i))  # tiny log-variance: ss_tot << 1
    alpha, C, r2 = power_law_fit(s)
    lr = linregress(np.log(i), np.log(np.sort(s)[::-1]))  # the fit sorts sigma descending
    assert alpha == pytest.approx(-lr.slope) and C == pytest.approx(math.exp(lr.intercept))
    assert r2 == pytest.approx(lr.rvalue**2)
    assert power_law_fit(np.array([3.0, 2.0, 1.0]), skip_zero=False)[2] == pytest.approx(
        linregress(np.log([1, 2, 3]), np.log([3.0, 2.0, 1.0])).rvalue ** 2)


def test_certified_softmax_max_below_uses_a_partial_sum():
    from attention_claims.maths import certified_softmax_max_below

    # 1000 equal logits: max p = 1/1000 exactly; certified below 0.01 after ~100 terms
    ok, upper = certified_softmax_max_below(np.zeros(1000), 0.01, chunk=50)
    assert ok and upper < 0.01 and upper > 1 / 1000
    # a dominant logit: max p ~ 1, never certified below 0.5, and the bound is still valid
    x = np.array([50.0, 0.0, 0.0])
    ok, upper = certified_softmax_max_below(x, 0.5)
    assert not ok and abs(float(upper.mid()) - 1 / (1 + 2 * math.exp(-50.0))) < 1e-15
    # exactly at the bound is not below it
    ok, _ = certified_softmax_max_below(np.zeros(4), 0.25)
    assert not ok
    for bad, bound in ((np.array([]), 0.5), (np.array([np.nan]), 0.5), (np.zeros((2, 2)), 0.5), (np.zeros(3), 0.0)):
        with pytest.raises(AttentionInputError):
            certified_softmax_max_below(bad, bound)


def test_exact_rank_reads_integer_arrays_exactly():
    """An int64 matrix with entries beyond 2^53 keeps its exact rank: the Gram matrix of 10 x 9
    Vandermonde features (entries near 1e16) has rank 9; read through float64 it looked like rank 10."""
    nodes = np.arange(1, 11, dtype=np.int64)
    vander = nodes[:, None] ** np.arange(9)[None, :]
    gram = vander @ vander.T
    assert np.abs(gram).max() > 2**53
    assert exact_rank(gram) == 9 == exact_product_rank(vander, vander)
    assert exact_rank(gram.tolist()) == 9  # a list of ints is read as integers too
    assert exact_rank(gram.astype(np.float64)) == 10  # the float64 rounding this avoids
    with pytest.raises(AttentionInputError):
        exact_rank(np.zeros((0, 2), dtype=np.int64))
