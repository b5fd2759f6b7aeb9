"""Known values and clear errors for attention_claims.maths and the mask / exact-rank helpers added to
attention_claims.maths (masks, exact softmax ranks over Q(t), certified singular-value counts)."""

from __future__ import annotations

import math
import re

import mpmath
import numpy as np
import pytest
import torch

from attention_claims.maths import (
    AttentionInputError,
    arb_feature,
    arb_kernel_diagonal,
    attention_layer,
    attention_mask,
    certified_singular_value_count,
    chi2_two_sided_tail,
    cr_factorization,
    doc_exp_feature_map,
    doc_exp_overflow_norm_sq,
    exact_attention_rows,
    exact_exp_sum_rank,
    exact_frobenius_sq,
    exact_softmax_rank,
    feature_zero_threshold,
    gaussian_mgf_quadrature,
    linformer_mixing,
    masked_softmax_attention,
    monomial_feature_dots,
    mp_doc_exp_log_extremes,
    normalised_prf_attention,
    poly_matrix_rank,
    positive_random_features,
    prf_moments_quadrature,
    rational_rows_equal,
    softmax_log_ratio_rank,
    taylor_features,
    trig_random_features,
)
from attention_claims.maths.kernels import VECTORIZED_ELEMENTS

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
    with pytest.raises(AttentionInputError, match="attend to no key"):
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
    with mpmath.workdps(50):
        for a in (-3.25, -1e-3, 0.0, 0.7, 12.0):
            exact = mpmath.exp(mpmath.mpf(a) ** 2 / 2)
            assert abs(gaussian_mgf_quadrature(a, dps=40) - exact) / exact < mpmath.mpf("1e-40")
    with mpmath.workdps(30):
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


# -- 003 §11.3.4-11.3.7 helpers -----------------------------------------------------------------------------


def test_doc_exp_feature_map_known_values():
    X = np.array([[0.0, 0.0], [2.0, 0.0]])
    phi = doc_exp_feature_map(X).numpy()
    assert np.allclose(phi[0], [1.0, 1.0], rtol=0, atol=0)  # phi(0) = (1, ..., 1): phi(0).phi(0) = d, not e^0
    want = math.exp(4 / 4) * np.array([math.exp(2 / math.sqrt(2)), 1.0])
    assert np.allclose(phi[1], want, rtol=1e-15)
    assert doc_exp_feature_map(X, dtype="float32").dtype == torch.float32
    assert torch.isinf(doc_exp_feature_map([[14.0]], dtype="float32")).all()  # e^98 * e^14 > FLT_MAX
    with pytest.raises(AttentionInputError, match="NaN or Inf"):
        doc_exp_feature_map([[float("nan")]])
    with pytest.raises(AttentionInputError, match="dtype"):
        doc_exp_feature_map(X, dtype="float8")


def test_mp_doc_exp_log_extremes_and_overflow_boundary():
    lf, le = mp_doc_exp_log_extremes(np.array([[-14.0], [2.0]]))
    assert lf == 98 and le == 84  # factor e^98 overflows float32 though the feature e^84 would not
    s_e1, s_neg = doc_exp_overflow_norm_sq(1, "float32")
    ln_max = math.log(float(np.finfo(np.float32).max))
    assert abs(s_neg - 2 * ln_max) < 1e-5 * s_neg  # the factor e^(s/2) alone
    assert abs(s_e1 / 2 + math.sqrt(s_e1) - ln_max) < 1e-5 * ln_max  # x = sqrt(s): e^(s/2 + sqrt(s))
    with pytest.raises(AttentionInputError, match="positive integer"):
        doc_exp_overflow_norm_sq(0)


def test_feature_zero_thresholds():
    # one element (the scalar path, std::expm1): elu(x) = e^x - 1 rounds to -1 once e^x < eps/4, ln(2^-25) = -17.33
    x1 = feature_zero_threshold("elu+1", "float32", elements=1)
    assert abs(x1 - (-25 * math.log(2))) < 1e-4
    # 64 elements (the vectorized path attention's tensors take): on an AVX-512 CPU from e^x < eps/2 already,
    # ln(2^-24) = -16.64 (issue 35, point 6); a CPU whose vector path rounds as the scalar one gives x1
    x0 = feature_zero_threshold("elu+1", "float32")
    assert abs(x0 - (-24 * math.log(2))) < 1e-4 or x0 == x1
    assert feature_zero_threshold("elu+1", "float32", elements=VECTORIZED_ELEMENTS) == x0
    with pytest.raises(ValueError, match="positive integer"):
        feature_zero_threshold("elu+1", "float32", elements=0)
    assert abs(feature_zero_threshold("exp", "float32") - (-150 * math.log(2))) < 1e-4  # half the smallest subnormal
    with pytest.raises(AttentionInputError, match="unknown"):
        feature_zero_threshold("tanh")
    with pytest.raises(ValueError, match="already fails"):
        feature_zero_threshold("identity")  # 0 at x = 0 itself: no threshold to bisect


def test_normalised_prf_attention_converges_and_errors():
    rng = np.random.default_rng(0)
    Q, K, V = rng.uniform(-0.5, 0.5, (3, 2)), rng.uniform(-0.5, 0.5, (3, 2)), rng.uniform(-1, 1, (3, 2))
    out, se = normalised_prf_attention(Q, K, V, rng.standard_normal((2**15, 2)))
    ref = masked_softmax_attention(Q, K).numpy() @ V
    assert out.shape == se.shape == (3, 2) and (se > 0).all()
    assert (np.abs(out - ref) < 6 * se).all()  # within 6 standard errors
    one, se1 = normalised_prf_attention(Q[:1], K[:1], V[:1], rng.standard_normal((8, 2)))
    assert np.allclose(one, V[:1], rtol=1e-14) and (se1 < 1e-14).all()  # one key: the output is v exactly
    with pytest.raises(AttentionInputError, match="m >= 2"):
        normalised_prf_attention(Q, K, V, np.ones((1, 2)))


def test_normalised_prf_attention_matches_its_definition():
    # out = sum_r num_r / sum_r den_r and se = sd_r(num_r - out den_r) / (sqrt(m) mean_r den_r), feature by feature
    rng = np.random.default_rng(1)
    N, M, d, dv, m = 4, 5, 3, 3, 7
    Q, K, V = rng.uniform(-1, 1, (N, d)), rng.uniform(-1, 1, (M, d)), rng.uniform(-1, 1, (M, dv))
    w = rng.standard_normal((m, d))
    s = d ** -0.25
    out, se = normalised_prf_attention(Q, K, V, w)
    for i in range(N):
        num = [np.exp(w[r] @ Q[i] * s - s * s * Q[i] @ Q[i] / 2)
               * sum(np.exp(w[r] @ K[j] * s - s * s * K[j] @ K[j] / 2) * V[j] for j in range(M)) for r in range(m)]
        den = [np.exp(w[r] @ Q[i] * s - s * s * Q[i] @ Q[i] / 2)
               * sum(np.exp(w[r] @ K[j] * s - s * s * K[j] @ K[j] / 2) for j in range(M)) for r in range(m)]
        o = sum(num) / sum(den)
        resid = np.array([num[r] - o * den[r] for r in range(m)])
        np.testing.assert_allclose(out[i], o, rtol=1e-13)
        np.testing.assert_allclose(se[i], resid.std(axis=0, ddof=1) / (math.sqrt(m) * np.mean(den)), rtol=1e-12)


def test_monomial_feature_dots_multinomial():
    from fractions import Fraction

    q, k = np.array([0.5, -1.25, 2.0]), np.array([1.5, 0.75, -0.25])
    x = sum(Fraction(a) * Fraction(b) for a, b in zip(q, k, strict=True))
    assert monomial_feature_dots(q, k, 12) == [x**n / math.factorial(n) for n in range(13)]
    # d = 2, degree 2 by hand: q1^2 k1^2 / 2 + q1 q2 k1 k2 + q2^2 k2^2 / 2
    c = monomial_feature_dots(np.array([1.0, 2.0]), np.array([3.0, 1.0]), 2)
    assert c == [1, 5, Fraction(9, 2) + 6 + 2]
    with pytest.raises(AttentionInputError, match="differ"):
        monomial_feature_dots(np.ones(2), np.ones(3), 2)
    with pytest.raises(AttentionInputError, match="non-negative"):
        monomial_feature_dots(np.ones(2), np.ones(2), -1)


def test_exact_frobenius_and_cr_factorization():
    from fractions import Fraction

    from flint import fmpq_mat

    W = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    assert exact_frobenius_sq(W, np.ones((3, 1)), np.ones((1, 3))) == 41
    assert exact_frobenius_sq(np.array([[0.1]]), np.zeros((1, 1)), np.zeros((1, 1))) == Fraction(0.1) ** 2
    C, R = cr_factorization(W)
    assert (C.ncols(), R.nrows()) == (2, 2)
    assert C * R == fmpq_mat(3, 3, [int(v) for v in W.ravel()])
    Z, Rz = cr_factorization(np.zeros((2, 3)))
    assert (Z.ncols(), Rz.nrows()) == (0, 0) and (Z * Rz).nrows() == 2
    with pytest.raises(AttentionInputError, match="shapes"):
        exact_frobenius_sq(W, np.ones((3, 2)), np.ones((1, 3)))
    with pytest.raises(AttentionInputError, match="NaN or Inf"):
        cr_factorization([[float("inf")]])


# -- trigonometric random features, monomial dots, Taylor features: values, shapes, errors ------------


def test_trig_random_features_by_the_formula_row_by_row():
    # exp(|x|^2 / 2) [cos, sin](omega . x) / sqrt(m), each row with its own norm; N = 2 rows, m = 3 features
    X = np.array([[0.5, -1.0], [2.0, 0.25]])
    omega = np.array([[1.0, 0.0], [0.5, -2.0], [-1.5, 0.75]])
    F = trig_random_features(X, omega)
    assert F.shape == (2, 6)
    for i, x in enumerate(X):
        s = math.exp(0.5 * float(x @ x)) / math.sqrt(3)
        p = omega @ x
        assert np.allclose(F[i], np.concatenate([s * np.cos(p), s * np.sin(p)]), rtol=1e-15, atol=0)
    # N = m = 3: a per-row scale must not broadcast along the features
    X3 = np.array([[0.5, -1.0], [2.0, 0.25], [0.0, 0.0]])
    F3 = trig_random_features(X3, omega)
    assert np.allclose(F3[2], np.concatenate([np.ones(3), np.zeros(3)]) / math.sqrt(3), rtol=1e-15, atol=0)


def test_trig_random_features_rejects_bad_input():
    with pytest.raises(AttentionInputError, match="^X: expected 2 dimensions"):
        trig_random_features(np.ones(2), np.ones((3, 2)))
    with pytest.raises(AttentionInputError, match="^omega: expected 2 dimensions"):
        trig_random_features(np.ones((2, 2)), np.ones(2))
    with pytest.raises(AttentionInputError, match=re.escape("X, omega: dimensions differ (3 vs 2)")):
        trig_random_features(np.ones((4, 3)), np.ones((5, 2)))


def test_monomial_feature_dots_rejects_bad_input():
    with pytest.raises(AttentionInputError, match="^q: expected 1 dimensions"):
        monomial_feature_dots(np.ones((1, 2)), np.ones(2), 2)
    with pytest.raises(AttentionInputError, match="^k: expected 1 dimensions"):
        monomial_feature_dots(np.ones(2), np.ones((1, 2)), 2)
    with pytest.raises(AttentionInputError, match="^degree: must be a non-negative integer, got -1$"):
        monomial_feature_dots(np.ones(2), np.ones(2), -1)
    assert monomial_feature_dots(np.array([2.0]), np.array([3.0]), 0) == [1]  # degree 0 allowed


def test_normalised_prf_attention_rejects_each_shape_fault_alone():
    Q, K, V, w = np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 4)), np.ones((5, 2))
    for args in ((Q, np.ones((3, 3)), V, w),   # Q, K dimensions
                 (Q, K, np.ones((4, 4)), w),   # K, V rows
                 (Q, K, V, np.ones((5, 3)))):  # omega's dimension
        with pytest.raises(AttentionInputError, match="^normalised_prf_attention: shapes Q"):
            normalised_prf_attention(*args)
    # m = 2 features is the least allowed
    out, se = normalised_prf_attention(Q, K, V, np.array([[0.5, -0.5], [1.0, 0.25]]))
    assert out.shape == se.shape == (3, 4) and np.allclose(out, 1.0, rtol=1e-14)  # equal values: output v


def test_taylor_features_degree_range():
    x = torch.tensor([[2.0, -1.0]], dtype=torch.float64)
    assert torch.equal(taylor_features(x, 0), torch.ones(1, 1, dtype=torch.float64))  # degree 0: the constant
    with pytest.raises(AttentionInputError, match=re.escape("degree: must be an integer in [0, 12], got 13")):
        taylor_features(torch.ones(1, 1, dtype=torch.float64), 13)
    with pytest.raises(AttentionInputError, match=re.escape("degree: must be an integer in [0, 12], got -1")):
        taylor_features(x, -1)


def test_taylor_features_size_limit():
    # sum_{k <= degree} m^k features at most 2,000,000: 1 + 1,999,999 is allowed, 1 + 2,000,000 not
    F = taylor_features(torch.zeros(1, 1_999_999, dtype=torch.float32), 1)
    assert F.shape == (1, 2_000_000)
    del F
    with pytest.raises(AttentionInputError, match="^taylor_features: too many features$"):
        taylor_features(torch.zeros(1, 2_000_000, dtype=torch.float32), 1)
    with pytest.raises(AttentionInputError, match="^taylor_features: too many features$"):
        taylor_features(torch.zeros(1, 2000, dtype=torch.float32), 2)  # 1 + 2000 + 4,000,000


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_taylor_features_keep_dtype_and_device(dtype):
    x = torch.tensor([[0.5, -1.0]], dtype=dtype)
    assert taylor_features(x, 2).dtype == dtype
    meta = taylor_features(torch.empty(3, 2, dtype=dtype, device="meta"), 2)
    assert meta.device.type == "meta" and meta.shape == (3, 1 + 2 + 4) and meta.dtype == dtype


def test_chi2_tail_to_40_digits_and_its_errors():
    # the closed form for k = 2 (exponential): every one of the default 40 digits, and the default is 40
    with mpmath.workdps(60):
        e = mpmath.mpf("0.5")
        exact = 1 - mpmath.exp(-(1 - e)) + mpmath.exp(-(1 + e))
        t = chi2_two_sided_tail(2, e)
        assert abs(t - exact) < mpmath.mpf(10) ** -39 * exact
        assert t == chi2_two_sided_tail(2, e, dps=40) != chi2_two_sided_tail(2, e, dps=41)
    for eps in (0.0, 1.0, -0.5, 1.5):  # the open interval (0, 1)
        with pytest.raises(AttentionInputError, match=r"^eps: must be in \(0, 1\)"):
            chi2_two_sided_tail(3, eps)
    with pytest.raises(AttentionInputError, match="^k: must be a positive integer, got 0$"):
        chi2_two_sided_tail(0, 0.5)


def test_arb_kernel_diagonal_sums_every_coordinate_and_names_its_inputs():
    from flint import arb

    d = arb_kernel_diagonal("relu", [[1.0, 2.0], [-1.0, 0.5]], [[3.0, 4.0], [2.0, 6.0]])
    assert d[0] == 11 and d[1] == 3 and d[0].is_exact() and d[1].is_exact()  # 1*3 + 2*4, 0*2 + 0.5*6
    e = arb_kernel_diagonal("exp", [[0.0, 1.0]], [[1.0, 0.0]])[0]  # e^0 e^1 + e^1 e^0 = 2e
    assert (e - 2 * arb(1).exp()).contains(0) and e.rad() < 1e-15
    with pytest.raises(AttentionInputError, match="^Q: expected 2 dimensions"):
        arb_kernel_diagonal("relu", [1.0], [[1.0]])
    with pytest.raises(AttentionInputError, match="^K: expected 2 dimensions"):
        arb_kernel_diagonal("relu", [[1.0]], [1.0])
    with pytest.raises(AttentionInputError, match=re.escape("Q, K: shapes differ (1, 2) vs (1, 3)")):
        arb_kernel_diagonal("relu", [[1.0, 2.0]], [[1.0, 2.0, 3.0]])


def test_positive_random_features_names_its_inputs():
    with pytest.raises(AttentionInputError, match="^X: expected 2 dimensions"):
        positive_random_features(np.ones(2), np.ones((3, 2)))
    with pytest.raises(AttentionInputError, match="^omega: expected 2 dimensions"):
        positive_random_features(np.ones((2, 2)), np.ones(2))


def test_arb_feature_values_either_side_of_the_kinks():
    from flint import arb

    assert arb_feature("relu", 2.5) == 2.5 and arb_feature("relu", 0.5) == 0.5 and arb_feature("relu", 0.0) == 0
    assert arb_feature("elu+1", 2.0) == 3 and arb_feature("elu+1", 0.5) == 1.5  # x + 1 for x >= 0, exactly
    assert arb_feature("elu+1", 0.5).is_exact()
    assert (arb_feature("elu+1", -0.5) - arb(-0.5).exp()).contains(0)  # e^x below 0


def test_linformer_mixing_stable_for_large_and_unequal_logits():
    # row 0's logits near 1000, row 1's near 0: each row is shifted by its own maximum, so neither overflows
    # nor underflows to 0/0 (E = F = I: plain softmax attention, against masked_softmax_attention)
    Q = np.array([[40.0, 0.0], [0.01, 0.0]])
    K = np.array([[50.0, 1.0], [49.0, -1.0]])
    P_bar, mix = linformer_mixing(Q, K, np.eye(2), np.eye(2))
    ref = masked_softmax_attention(Q, K).numpy()
    assert np.isfinite(P_bar).all() and np.allclose(P_bar, ref, rtol=1e-13, atol=0) and np.allclose(mix, ref, rtol=1e-13, atol=0)


def test_linformer_mixing_names_each_input_and_each_shape_fault():
    good = {"Q": np.ones((3, 2)), "K": np.ones((3, 2)), "E": np.ones((2, 3)), "F": np.ones((2, 3))}
    for name in good:
        with pytest.raises(AttentionInputError, match=f"^{name}: expected 2 dimensions"):
            linformer_mixing(**{**good, name: np.ones(3)})
    for name, bad in (("K", np.ones((3, 4))), ("F", np.ones((4, 3)))):  # Q vs K alone, E vs F alone
        with pytest.raises(AttentionInputError, match=r"^linformer_mixing: shapes Q \(3, 2\)"):
            linformer_mixing(**{**good, name: bad})


def test_softmax_underflow_gap_on_both_paths():
    # the gap at which a weight underflows: the same on a row of 64 (vectorized) and of 2 logits, at the IEEE
    # threshold -ln(smallest subnormal / 2) (issue 35: boundaries measured on the path real tensors take)
    from attention_claims.maths import softmax_diagonal_underflow_gap

    for dtype, log2_min in (("float32", -149), ("float16", -24)):
        g64, g2 = softmax_diagonal_underflow_gap(dtype), softmax_diagonal_underflow_gap(dtype, "cpu", 2)
        assert abs(g64 - g2) < 1e-3 * g64 and abs(g64 + (log2_min - 1) * math.log(2)) < 0.02 * g64
    with pytest.raises(ValueError, match=">= 2"):
        softmax_diagonal_underflow_gap("float32", "cpu", 1)


def test_doc_exp_overflow_boundary_on_both_paths():
    from attention_claims.maths import doc_exp_overflow_norm_sq

    for d in (1, 4):
        assert doc_exp_overflow_norm_sq(d) == doc_exp_overflow_norm_sq(d, rows=1)
    with pytest.raises(AttentionInputError, match="rows"):
        doc_exp_overflow_norm_sq(2, rows=0)
