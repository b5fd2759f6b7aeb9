"""Known values and clear errors for claims.kernels and the mask / exact-rank helpers added to
claims.attention (masks, exact softmax ranks over Q(t), certified singular-value counts)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import torch

from claims.attention import (
    AttentionInputError,
    attention_layer,
    attention_mask,
    certified_singular_value_count,
    exact_attention_rows,
    exact_exp_sum_rank,
    exact_softmax_rank,
    masked_softmax_attention,
    poly_matrix_rank,
    rational_rows_equal,
    softmax_log_ratio_rank,
)
from claims.kernels import (
    arb_feature,
    arb_kernel_diagonal,
    chi2_two_sided_tail,
    gaussian_mgf_quadrature,
    linformer_mixing,
    positive_random_features,
    prf_moments_quadrature,
    trig_random_features,
)

# -- masks and masked attention ---------------------------------------------------------------------


def test_masks_known_patterns():
    assert attention_mask("causal", 3).int().tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    assert attention_mask("anticausal", 3).int().tolist() == [[1, 1, 1], [0, 1, 1], [0, 0, 1]]
    assert attention_mask("prefix", 4, prefix=2).int().tolist() == [[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0],
                                                                       [1, 1, 1, 1]]
    assert attention_mask("banded", 4, window=1).int().tolist() == [[1, 1, 0, 0], [1, 1, 1, 0], [0, 1, 1, 1],
                                                                       [0, 0, 1, 1]]
    assert attention_mask("banded-causal", 3, window=1).int().tolist() == [[1, 0, 0], [1, 1, 0], [0, 1, 1]]
    assert attention_mask("prefix", 3, prefix=0).equal(attention_mask("causal", 3))


@pytest.mark.parametrize("kwargs,match", [
    (dict(kind="diagonal", N=3), "unknown kind"),
    (dict(kind="causal", N=0), "positive integer"),
    (dict(kind="prefix", N=3, prefix=4), "prefix"),
    (dict(kind="banded", N=3, window=-1), "window"),
])
def test_mask_bad_input(kwargs, match):
    with pytest.raises(AttentionInputError, match=match):
        attention_mask(**kwargs)


def test_masked_softmax_uniform_and_errors():
    Q = np.zeros((3, 2))
    A = masked_softmax_attention(Q, np.ones((3, 2)), "causal").numpy()
    assert np.allclose(A, [[1, 0, 0], [0.5, 0.5, 0], [1 / 3, 1 / 3, 1 / 3]], atol=1e-15)
    with pytest.raises(AttentionInputError, match="shape"):
        masked_softmax_attention(Q, np.ones((3, 2)), torch.ones(2, 2, dtype=torch.bool))
    with pytest.raises(AttentionInputError, match="no key"):
        masked_softmax_attention(Q, np.ones((3, 2)), torch.zeros(3, 3, dtype=torch.bool))
    with pytest.raises(AttentionInputError, match="square"):
        masked_softmax_attention(Q, np.ones((4, 2)), "causal")


def test_attention_layer_shapes():
    X = np.eye(3)
    out = attention_layer(X, np.eye(3), np.eye(3), np.ones((3, 2)))
    assert tuple(out.shape) == (3, 2) and torch.allclose(out, torch.ones(3, 2, dtype=torch.float64))
    with pytest.raises(AttentionInputError, match="do not fit"):
        attention_layer(X, np.eye(2), np.eye(3), np.eye(3))


# -- exact ranks over Q(t) ----------------------------------------------------------------------------


def test_exact_softmax_rank_known_values():
    assert exact_softmax_rank(np.zeros((4, 4))) == 1  # uniform rows
    assert exact_softmax_rank([[0, 1], [5, 6]]) == 1  # rows differ by a constant: equal attention rows
    assert exact_softmax_rank([[0, 1], [5, 7]]) == 2
    assert exact_softmax_rank(np.zeros((5, 5)), "causal") == 5
    # the tridiagonal all-ones determinants D_n = D_{n-1} - D_{n-2} vanish at n = 2 and n = 5
    assert exact_softmax_rank(np.zeros((5, 5)), attention_mask("banded", 5, window=1)) == 4
    assert exact_softmax_rank(np.zeros((4, 4)), attention_mask("banded", 4, window=1)) == 4
    # Kac-Murdock-Szego: t^{-|i-j|} is non-singular
    i = np.arange(6)
    assert exact_softmax_rank(-np.abs(i[:, None] - i[None, :])) == 6


def test_exact_softmax_rank_matches_float_rank_on_random_input():
    rng = np.random.default_rng(1)
    for _ in range(5):
        M = rng.integers(-3, 4, (5, 5))
        A = masked_softmax_attention(torch.tensor(M, dtype=torch.float64), torch.eye(5), scale=1.0).numpy()
        assert exact_softmax_rank(M) == np.linalg.matrix_rank(A)


def test_exact_softmax_rank_bad_input():
    with pytest.raises(AttentionInputError, match="integers"):
        exact_softmax_rank([[0.5, 1.0]])
    with pytest.raises(AttentionInputError, match="empty row"):
        exact_softmax_rank(np.zeros((2, 2)), np.zeros((2, 2), dtype=bool))


def test_poly_matrix_rank_and_exp_sums():
    from flint import fmpz_poly

    x = fmpz_poly([0, 1])
    assert poly_matrix_rank([[x, x * x], [1, x]]) == 1  # second column = t * first
    assert poly_matrix_rank([[x, 1], [1, x]]) == 2
    # e^1 + e^2 and 2 e^1 + 2 e^2 are proportional rows
    assert exact_exp_sum_rank([[[1, 2], [0]], [[1, 2], [0]]], [[[1, 1], [1]], [[2, 2], [2]]]) == 1
    with pytest.raises(AttentionInputError, match="same shape"):
        exact_exp_sum_rank([[[1]]], [])


def test_softmax_log_ratio_rank():
    assert softmax_log_ratio_rank(np.eye(4, dtype=np.int64)) == 3
    assert softmax_log_ratio_rank(np.array([[0, 1, 2], [5, 6, 7]])) == 1
    with pytest.raises(AttentionInputError, match="integer"):
        softmax_log_ratio_rank([[0.5, 1.0]])


def test_exact_attention_rows_equivariance_and_difference():
    M = np.array([[1, 0], [0, 2]])
    V = np.array([[1], [3]])
    a = exact_attention_rows(M, V)
    assert rational_rows_equal(a[0], a[0]) and not rational_rows_equal(a[0], a[1])
    c = exact_attention_rows(M, V, "causal")
    assert rational_rows_equal(c[0], ([c[0][0][0]], c[0][1]))
    with pytest.raises(AttentionInputError, match="integer"):
        exact_attention_rows([[0.5]], [[1]])


def test_certified_singular_value_count():
    A = np.diag([3.0, 2.0, 1e-9])
    assert certified_singular_value_count(A, 1e-6) == 2
    assert certified_singular_value_count(A, 0.5) == 2
    assert certified_singular_value_count(A, 2.5) == 1
    assert certified_singular_value_count(A, 2.0) is None  # a zero pivot: sigma = tol exactly
    with pytest.raises(AttentionInputError, match="tol"):
        certified_singular_value_count(A, -1.0)


# -- kernels -----------------------------------------------------------------------------------------------


def test_arb_features_known_values():
    assert float(arb_feature("elu+1", 0.0).mid()) == 1.0
    assert abs(float(arb_feature("elu+1", -1.0).mid()) - math.exp(-1)) < 1e-15
    assert float(arb_feature("relu", -2.0).mid()) == 0.0
    assert float(arb_feature("identity", -2.0).mid()) == -2.0
    with pytest.raises(AttentionInputError, match="unknown"):
        arb_feature("tanh", 0.0)
    with pytest.raises(AttentionInputError, match="not finite"):
        arb_feature("exp", float("nan"))
    d = arb_kernel_diagonal("relu", [[-1.0, 2.0]], [[3.0, -1.0]])
    assert d[0] == 0 and d[0].is_exact()


def test_random_features_estimate_exp_kernel():
    rng = np.random.default_rng(0)
    x, y = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    omega = rng.standard_normal((200_000, 2))
    est = (positive_random_features(x[None], omega) @ positive_random_features(y[None], omega).T).item()
    trig = (trig_random_features(x[None], omega) @ trig_random_features(y[None], omega).T).item()
    assert abs(est - math.exp(x @ y)) < 0.01 and abs(trig - math.exp(x @ y)) < 0.02
    with pytest.raises(AttentionInputError, match="dimensions differ"):
        positive_random_features(np.ones((2, 3)), np.ones((4, 2)))


def test_quadrature_moments_known_values():
    with mpmath.workdps(30):
        assert abs(gaussian_mgf_quadrature(1.5) - mpmath.exp(mpmath.mpf(1.5) ** 2 / 2)) < mpmath.mpf("1e-25")
        m1, m2 = prf_moments_quadrature(np.array([0.5]), np.array([0.25]))
        assert abs(m1 - mpmath.exp(mpmath.mpf(0.125))) < mpmath.mpf("1e-25")
    with pytest.raises(AttentionInputError, match="shapes differ"):
        prf_moments_quadrature(np.ones(2), np.ones(3))


def test_chi2_tail_known_values():
    # chi^2_2 / 2 is exponential(1): Pr(|X - 1| > e) = 1 - e^{-(1-e)} + e^{-(1+e)}
    e = mpmath.mpf("0.5")
    with mpmath.workdps(40):
        assert abs(chi2_two_sided_tail(2, e) - (1 - mpmath.exp(-(1 - e)) + mpmath.exp(-(1 + e)))) < mpmath.mpf("1e-30")
    with pytest.raises(AttentionInputError, match="eps"):
        chi2_two_sided_tail(3, 1.5)
    with pytest.raises(AttentionInputError, match="positive integer"):
        chi2_two_sided_tail(0, 0.5)


def test_linformer_mixing_rank_and_identity_projection():
    rng = np.random.default_rng(0)
    Q, K = rng.standard_normal((6, 2)), rng.standard_normal((6, 2))
    P_bar, mix = linformer_mixing(Q, K, np.eye(6), np.eye(6))  # E = F = I: plain softmax attention
    assert np.allclose(mix, masked_softmax_attention(Q, K).numpy(), atol=1e-15)
    E = rng.standard_normal((2, 6))
    assert np.linalg.matrix_rank(linformer_mixing(Q, K, E, E)[1]) <= 2
    with pytest.raises(AttentionInputError, match="shapes"):
        linformer_mixing(Q, K, np.ones((2, 5)), np.ones((2, 5)))
