"""attention_claims.maths rank, exact, projections, kernels and spectrum helpers: documented defaults, the
input each error names (the messages are part of the interface, attention_claims/maths/arrays.py) and
values worked out by hand (issue 24, mutation testing: each test here fails on a mutant of the module
that the checks let through)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from attention_claims.maths import (
    AttentionInputError,
    certified_softmax_max_below,
    cr_factorization,
    doc_linformer,
    exact_exp_sum_rank,
    identity_gap_lower_bound,
    ks_distance_normal,
    lognormal_feature_moments,
    mp_doc_exp_log_extremes,
    softmax_log_ratio_rank,
    sorted_standard_normals,
    top_fraction_energy,
)
from attention_claims.maths.exact import arb_matrix, decimal_fraction
from attention_claims.maths.rank import exact_det, exact_rank

NAN2 = [[1.0, math.nan], [0.0, 1.0]]


# -- rank.py -------------------------------------------------------------------------------------------------


def test_exact_exp_sum_rank_uses_the_coefficients():
    """Entries sum_l c_l t^(e_l): with coefficients (1, 1) and (1, 2) the 2 x 1 rows 1 + t and 1 + 2t are
    independent (rank 1 as a column, but the 2 x 2 [[1 + t, 1], [1 + 2t, 1]] has rank 2); with unit
    coefficients the same exponents give equal rows (rank 1)."""
    exps = [[[0, 1], [0]], [[0, 1], [0]]]
    assert exact_exp_sum_rank(exps, [[[1, 1], [1]], [[1, 2], [1]]]) == 2
    assert exact_exp_sum_rank(exps, [[[1, 1], [1]], [[1, 1], [1]]]) == 1
    with pytest.raises(AttentionInputError, match=r"^exact_exp_sum_rank: exps and coeffs must have the same shape$"):
        exact_exp_sum_rank(exps, [[[1, 1], [1]], [[1, 1]]])


def test_softmax_log_ratio_rank_two_columns_and_errors():
    """Two keys: D is the single column M_i1 - M_i0, rank 1 unless every row has M_i1 = M_i0."""
    assert softmax_log_ratio_rank([[0, 1], [2, 2]]) == 1
    assert softmax_log_ratio_rank([[0, 0], [3, 3]]) == 0
    with pytest.raises(AttentionInputError, match=r"^M: need at least 2 columns \(keys\), got shape \(2, 1\)$"):
        softmax_log_ratio_rank([[0], [1]])
    with pytest.raises(AttentionInputError, match=r"^M: entries must be integers"):
        softmax_log_ratio_rank([[0, 0.5]])


def test_exact_det_needs_a_square_matrix():
    assert exact_det([[1, 2], [3, 4]]) == -2
    with pytest.raises(AttentionInputError, match="square"):
        exact_det([[1, 2, 3], [4, 5, 6]])


@pytest.mark.parametrize("fn", [exact_rank, exact_det])
@pytest.mark.parametrize("x,message", [
    (np.zeros((0, 2), dtype=np.int64), r"^matrix: empty array of shape \(0, 2\)$"),  # integer path
    (np.array([1, 2]), r"^matrix: expected 2 dimensions, got shape \(2,\)$"),
    (np.array([[1.0, math.nan], [0.0, 1.0]]), r"^matrix: contains NaN or Inf$"),  # float path
])
def test_exact_rank_and_det_name_the_matrix(fn, x, message):
    """Bad input to the exact rank and determinant is refused with a message naming ``matrix``, on the
    integer path (read as Python ints) and on the float64 path alike."""
    with pytest.raises(AttentionInputError, match=message):
        fn(x)


def test_exact_det_refuses_a_non_square_float_matrix():
    """A non-square float64 matrix (not an integer array: it goes through the float path) is refused
    before any determinant is attempted."""
    with pytest.raises(AttentionInputError, match=r"^matrix: expected a square matrix, got shape \(2, 3\)$"):
        exact_det([[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]])


def test_cr_factorization_names_w():
    with pytest.raises(AttentionInputError, match=r"^W: contains NaN"):
        cr_factorization(NAN2)


# -- exact.py ------------------------------------------------------------------------------------------------


def test_arb_matrix_default_name():
    with pytest.raises(AttentionInputError, match=r"^matrix: contains NaN"):
        arb_matrix(NAN2)


def test_decimal_fraction_takes_an_int_as_itself_however_long():
    """An int is taken as it is, not through its decimal string (which Python refuses past 4300 digits)."""
    big = 10**5000 + 1
    assert decimal_fraction(big) == big
    assert decimal_fraction(0.1) == Fraction(1, 10) and decimal_fraction(Fraction(2, 3)) == Fraction(2, 3)


# -- projections.py ------------------------------------------------------------------------------------------


def test_doc_linformer_names_each_input():
    Q, K, V = np.eye(2), np.eye(2), np.ones((2, 1))
    np.testing.assert_array_equal(doc_linformer(Q, K, V, 2), np.full((2, 1), 0.5))
    for i, name in enumerate("QKV"):
        args = [Q, K, V]
        args[i] = NAN2 if name != "V" else [[math.nan], [1.0]]
        with pytest.raises(AttentionInputError, match=rf"^{name}: contains NaN"):
            doc_linformer(*args, 2)


def test_identity_gap_lower_bound_is_the_exact_rayleigh_quotient_of_the_extreme_eigenvectors():
    """P = [[1, 1], [0, 1]]: G = P^T P = [[1, 1], [1, 2]] has full rank; the bound is the larger
    |v^T G v / v^T v - 1| over NumPy's top and bottom eigenvectors, rounded to rationals, in exact
    arithmetic (the eigenvalues are (3 ± sqrt 5)/2, so about 1.618)."""
    P = np.array([[1.0, 1.0], [0.0, 1.0]])
    G = [[Fraction(1), Fraction(1)], [Fraction(1), Fraction(2)]]
    _, vecs = np.linalg.eigh(P.T @ P)
    want = Fraction(0)
    for v in (vecs[:, -1], vecs[:, 0]):
        vf = [Fraction(float(x)) for x in v]
        vv = sum(x * x for x in vf)
        vgv = sum(vf[i] * G[i][j] * vf[j] for i in range(2) for j in range(2))
        want = max(want, abs(vgv / vv - 1))
    bound, rank = identity_gap_lower_bound(P)
    assert rank == 2 and bound == want
    assert abs(float(bound) - (3 + math.sqrt(5)) / 2 + 1) < 1e-12
    with pytest.raises(AttentionInputError, match=r"^P: contains NaN"):
        identity_gap_lower_bound(NAN2)


# -- kernels.py ----------------------------------------------------------------------------------------------


def test_mp_doc_exp_log_extremes_default_precision_and_name():
    X = np.array([[0.1, 0.2], [0.3, -0.7]])
    assert mp_doc_exp_log_extremes(X) == mp_doc_exp_log_extremes(X, dps=40)
    assert mp_doc_exp_log_extremes(X) != mp_doc_exp_log_extremes(X, dps=41)
    with pytest.raises(AttentionInputError, match=r"^X: contains NaN"):
        mp_doc_exp_log_extremes(NAN2)


def test_lognormal_feature_moments_bounds_on_sigma_and_mu():
    mean, cov = lognormal_feature_moments([0.0, 1.0], 0.0)  # sigma = 0 is allowed: a point mass
    np.testing.assert_allclose(mean, [1.0, math.e], rtol=1e-15)
    np.testing.assert_array_equal(cov, np.zeros((2, 2)))
    with pytest.raises(AttentionInputError, match=r"^sigma: must be finite and >= 0, got inf$"):
        lognormal_feature_moments([0.0], math.inf)
    with pytest.raises(AttentionInputError, match=r"^mu: expected 1 dimensions"):
        lognormal_feature_moments([[0.0]], 1.0)
    with pytest.raises(AttentionInputError, match=r"^mu: contains NaN"):
        lognormal_feature_moments([math.nan], 1.0)


# -- spectrum.py and sparsity.py -----------------------------------------------------------------------------


def test_top_fraction_energy_wants_a_vector():
    with pytest.raises(AttentionInputError, match=r"^sigma: expected 1 dimensions"):
        top_fraction_energy([[3.0, 1.0]], 0.5)


def test_ks_distance_normal_errors_name_the_input():
    with pytest.raises(AttentionInputError, match=r"^x: expected 1 dimensions"):
        ks_distance_normal([[0.0, 1.0]], 0.0, 1.0)
    with pytest.raises(AttentionInputError, match=r"^x: contains NaN"):
        ks_distance_normal([math.nan], 0.0, 1.0)
    with pytest.raises(AttentionInputError, match=r"^need a finite mean and a positive finite std, got 0.0, 0.0$"):
        ks_distance_normal([0.0], 0.0, 0.0)


def test_sorted_standard_normals_keeps_both_tails_to_full_precision():
    """Both tails against the order statistics Phi^-1(S_i / S_(n+1)) recomputed from the same exponential
    draws at 50 digits: relative error below 1e-14 at the smallest and the largest draws (taking the upper
    tail from 1 - U would lose about four digits there at n = 10^4)."""
    import mpmath

    n = 10_000
    out = sorted_standard_normals(np.random.default_rng(5), n)
    e = np.random.default_rng(5).standard_exponential(n + 1)
    with mpmath.workdps(50):
        s = [mpmath.mpf(0)]
        for v in e:
            s.append(s[-1] + mpmath.mpf(float(v)))
        total = s[-1]
        for i in (1, 2, n - 1, n):
            u = s[i] / total
            want = mpmath.sqrt(2) * mpmath.erfinv(2 * u - 1)
            assert abs(out[i - 1] - float(want)) <= 1e-14 * abs(float(want)), i
    with pytest.raises(AttentionInputError, match=r"^n: must be a positive integer"):
        sorted_standard_normals(np.random.default_rng(0), 0)


def test_certified_softmax_max_below_default_precision():
    x = np.array([0.0, -0.3, -1.7])
    assert certified_softmax_max_below(x, 0.9)[1].rad() == certified_softmax_max_below(x, 0.9, prec=128)[1].rad()
    assert certified_softmax_max_below(x, 0.9)[1].rad() != certified_softmax_max_below(x, 0.9, prec=129)[1].rad()


# -- effective rank in mpmath and in exact rationals (003 定义 11.25) ----------------------------------------------


def test_mp_effective_rank_ties_margins_and_energies():
    import mpmath

    from attention_claims.maths import mp_effective_rank

    # energies (9, 4, 4) / 17: 9/17 >= 1/2 at k = 1, far from tau (decided with the default margin 1e-25)
    assert mp_effective_rank([3, 2, 2], 0.5) == (1, True)
    # a ratio equal to tau reaches it (>=), and is undecided (within any margin of tau)
    assert mp_effective_rank([1, 1], 0.5) == (1, False)
    # |ratio - tau| equal to the margin is decided (>= margin): 1/2 - 1/4 = 1/4
    assert mp_effective_rank([1, 1], 0.25, margin=0.25) == (1, True)
    assert mp_effective_rank([1, 1], 0.25, margin=0.2500001) == (1, False)
    with pytest.raises(AttentionInputError, match=r"^tau: must be in \(0, 1\) \(003 定义 11.25\), got 1.5$"):
        mp_effective_rank([1, 1], 1.5)
    with pytest.raises(AttentionInputError, match=r"^sigma: all singular values are zero \(effective rank undefined\)$"):
        mp_effective_rank([mpmath.mpf(0), mpmath.mpf(0)], 0.5)


def test_exact_effective_rank_validates_its_energies():
    from attention_claims.maths import exact_effective_rank

    def ge(h, t, tau):
        return h >= tau * t

    assert exact_effective_rank([4, 1, 1], Fraction(1, 2), ge) == 1
    assert exact_effective_rank([1, 1], Fraction(1, 2), ge) == 1
    msg = r"^energies: need a non-empty, non-negative, descending list$"
    for bad in ([], [1, -1], [1, 2]):
        with pytest.raises(AttentionInputError, match=msg):
            exact_effective_rank(bad, Fraction(1, 2), ge)
    with pytest.raises(AttentionInputError, match=r"^energies: all energies are zero \(effective rank undefined\)$"):
        exact_effective_rank([0, 0], Fraction(1, 2), ge)


def test_mp_matrix_effective_rank_works_at_its_stated_precision(monkeypatch):
    """The singular values are computed at dps digits (default 30) and summed at that precision."""
    import mpmath

    from attention_claims.maths import spectrum

    seen = []
    real = spectrum.mp_singular_values

    def spy(A, dps=40):
        seen.append((dps, mpmath.mp.dps))
        return real(A, dps)

    monkeypatch.setattr(spectrum, "mp_singular_values", spy)
    assert spectrum.mp_matrix_effective_rank(np.diag([3.0, 2.0, 2.0]), 0.5) == 1
    assert spectrum.mp_matrix_effective_rank(np.diag([3.0, 2.0, 2.0]), 0.5, dps=50) == 1
    assert seen == [(30, 30), (50, 50)]


def test_doc_exp_feature_map_device_and_name():
    from attention_claims.maths import doc_exp_feature_map

    out = doc_exp_feature_map(np.ones((2, 3)), device="meta")
    assert out.device.type == "meta" and tuple(out.shape) == (2, 3)
    with pytest.raises(AttentionInputError, match=r"^X: contains NaN"):
        doc_exp_feature_map(NAN2)


def test_exact_exp_sum_rank_exponents_are_not_coefficients():
    """exps [[0], [1]], [[1], [0]] with unit coefficients: [[1, t], [t, 1]], determinant 1 - t^2, rank 2
    (the coefficients read as exponents would give the rank-1 [[t, t], [t, t]])."""
    assert exact_exp_sum_rank([[[0], [1]], [[1], [0]]], [[[1], [1]], [[1], [1]]]) == 2


def test_mp_doc_exp_log_extremes_values():
    """X = [[1, 2]], d = 2: log factor |x|^2 / (2 d) = 5/4, log entry 5/4 + 2/sqrt 2."""
    import mpmath

    f, e = mp_doc_exp_log_extremes(np.array([[1.0, 2.0], [0.5, 0.5]]))
    with mpmath.workdps(40):
        assert mpmath.almosteq(f, mpmath.mpf(5) / 4, rel_eps=mpmath.mpf(10) ** -35)
        assert mpmath.almosteq(e, mpmath.mpf(5) / 4 + 2 / mpmath.sqrt(2), rel_eps=mpmath.mpf(10) ** -35)


def test_arb_exp_kernel_is_unscaled():
    """exp(X X^T) with no 1/sqrt(d): at d = 4 the diagonal of X = [[1, 0, 0, 0], [0, 1, 1, 0]] is (e, e^2)."""
    import mpmath
    from flint import arb

    from attention_claims.maths import arb_exp_kernel

    A = arb_exp_kernel(np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 1.0, 0.0]]))
    assert A[0, 0].overlaps(arb(1).exp()) and A[1, 1].overlaps(arb(2).exp()) and A[0, 1].overlaps(arb(1))
    assert abs(float(A[1, 1].mid()) - float(mpmath.e**2)) < 1e-12


def test_rademacher_gram_mean_limits_and_names():
    from attention_claims.maths import rademacher_gram_mean

    assert rademacher_gram_mean(1, 2, Fraction(0)) == [[0, 0], [0, 0]]
    assert rademacher_gram_mean(2, 2, Fraction(1, 2)) == [[1, 0], [0, 1]]
    assert len(rademacher_gram_mean(12, 1, Fraction(1))) == 1
    with pytest.raises(AttentionInputError, match=r"^rademacher_gram_mean: need k d <= 12 and variance >= 0, "
                                                  r"got 13, 1, 1$"):
        rademacher_gram_mean(13, 1, Fraction(1))
    with pytest.raises(AttentionInputError, match="variance >= 0"):
        rademacher_gram_mean(1, 1, Fraction(-1))
    with pytest.raises(AttentionInputError, match=r"^k: must be"):
        rademacher_gram_mean(0, 1, Fraction(1))
    with pytest.raises(AttentionInputError, match=r"^d: must be"):
        rademacher_gram_mean(1, 0, Fraction(1))


def test_normalised_prf_attention_names_each_input():
    from attention_claims.maths import normalised_prf_attention

    Q, K, V, W = np.eye(2), np.eye(2), np.ones((2, 1)), np.ones((3, 2))
    out, se = normalised_prf_attention(Q, K, V, W)
    np.testing.assert_allclose(out, np.ones((2, 1)), rtol=1e-14)  # every value row is 1: any weighting gives 1
    for i, name in enumerate(("Q", "K", "V", "omega")):
        args = [Q, K, V, W]
        bad = np.array(args[i], dtype=float)
        bad[0, 0] = math.nan
        args[i] = bad
        with pytest.raises(AttentionInputError, match=rf"^{name}: contains NaN"):
            normalised_prf_attention(*args)
    with pytest.raises(AttentionInputError, match=r"^normalised_prf_attention: shapes Q \(2, 2\), K \(2, 2\), "
                                                  r"V \(2, 1\), omega \(1, 2\) \(m >= 2 features\)$"):
        normalised_prf_attention(Q, K, V, np.ones((1, 2)))


def test_certified_singular_value_count_against_lapack_away_from_ties():
    """For random A (N x n, n up to 5, entries scaled so that pivots below and above 1 occur), the count of
    singular values above tol, at tol between two singular values (far from each), equals LAPACK's; the
    symmetric elimination runs over every pivot."""
    from attention_claims.maths import certified_singular_value_count

    rng = np.random.default_rng(11)
    for N, n, scale in ((6, 4, 1.0), (5, 5, 0.3), (7, 3, 4.0), (4, 5, 1.0)):
        A = rng.standard_normal((N, n)) * scale
        s = np.linalg.svd(A, compute_uv=False)
        cuts = [s[0] * 1.5, *((s[:-1] + s[1:]) / 2), s[-1] / 2 if s[-1] > 1e-8 else None]
        for tol in cuts:
            if tol is None:
                continue
            assert certified_singular_value_count(A, float(tol)) == int(np.sum(s > tol)), (N, n, tol)
    # tol = 0 is allowed; a zero pivot gives no certificate: [[1, 1], [0, 0]] has G = [[1, 1], [1, 1]]
    assert certified_singular_value_count(np.eye(3), 0.0) == 3
    assert certified_singular_value_count([[1.0, 1.0], [0.0, 0.0]], 0.0) is None
    with pytest.raises(AttentionInputError, match=r"^tol: must be finite and >= 0, got inf$"):
        certified_singular_value_count(np.eye(2), math.inf)
    with pytest.raises(AttentionInputError, match=r"^A: contains NaN"):
        certified_singular_value_count(NAN2, 0.5)


def test_exact_softmax_rank_names_m():
    from attention_claims.maths import exact_softmax_rank

    with pytest.raises(AttentionInputError, match=r"^M: entries must be integers"):
        exact_softmax_rank([[0, 0.5], [1, 2]])


def test_laurent_rows_and_poly_matrix_rank_edge_cases():
    """Zero rows and zero columns, repeated exponents (t^0 + t^0 = 2), and the empty matrix."""
    from flint import fmpz_poly

    from attention_claims.maths.rank import _laurent_rows, poly_matrix_rank

    def rank(exps):
        return poly_matrix_rank(_laurent_rows(exps))

    assert poly_matrix_rank([]) == 0
    # a zero first column: [[0, 1], [0, t]] has rank 1 (the elimination moves on to the next column)
    assert poly_matrix_rank([[fmpz_poly(0), fmpz_poly(1)], [fmpz_poly(0), fmpz_poly([0, 1])]]) == 1
    assert rank([[[], [0]], [[], [1]]]) == 1
    # a zero row (every entry empty) among non-zero ones
    assert rank([[[], []], [[0], [1]]]) == 1
    # a repeated exponent adds up: [[2, 1], [1, 1]] has rank 2, [[1, 1], [1, 1]] rank 1
    assert rank([[[0, 0], [0]], [[0], [0]]]) == 2
    assert rank([[[0], [0]], [[0], [0]]]) == 1


def test_to_fraction_of_a_float_is_exact():
    from attention_claims.maths.exact import to_fraction

    assert to_fraction(0.1) == Fraction(3602879701896397, 36028797018963968)
    assert to_fraction(Fraction(1, 3)) == Fraction(1, 3)


def test_exact_product_rank_names_q_and_k():
    from attention_claims.maths import exact_product_rank

    assert exact_product_rank([[1.0, 2.0]], [[2.0, -1.0], [1.0, 1.0]]) == 1
    with pytest.raises(AttentionInputError, match=r"^Q: contains NaN"):
        exact_product_rank(NAN2, np.eye(2))
    with pytest.raises(AttentionInputError, match=r"^K: contains NaN"):
        exact_product_rank(np.eye(2), NAN2)
    with pytest.raises(AttentionInputError, match=r"^Q, K: head dimensions differ \(2 vs 3\)$"):
        exact_product_rank(np.eye(2), np.ones((2, 3)))


def test_certify_nonzero_det_precision_ladder():
    """128, 256, ..., 4096 bits by default: a non-singular matrix is certified at the first, an exactly
    singular one is tried at every step up to 4096 and reported as not certified at 4096 bits."""
    from flint import arb, arb_mat

    from attention_claims.maths.rank import certified_rank_at_least, certify_nonzero_det

    tried = []

    def build(rows):
        def b():
            tried.append(1)
            return arb_mat(rows)
        return b

    ok, det, bits = certify_nonzero_det(build([[2, 1], [1, 1]]))
    assert ok and bits == 128 and det.overlaps(arb(1)) and len(tried) == 1
    tried.clear()
    ok, det, bits = certify_nonzero_det(build([[1, 1], [1, 1]]))
    assert not ok and bits == 4096 and type(bits) is int and len(tried) == 6 and det.overlaps(arb(0))
    ok, det, bits = certify_nonzero_det(build([[1, 1], [1, 1]]), start_bits=256, max_bits=128)
    assert (ok, bits) == (False, 128) and det.is_exact() and det == 0  # nothing tried: det is the ball 0
    # certified_rank_at_least passes its keywords on and reports the determinant it certified
    A = np.array([[2.0, 1.0], [1.0, 1.0]])
    ok, info = certified_rank_at_least(lambda: arb_mat(A.tolist()), A, 2)
    assert ok and info["bits"] == 128 and info["rows"] == [0, 1] and info["cols"] == [0, 1]
    assert info["det"] == str(arb(1))  # det [[2, 1], [1, 1]] = 1, exactly
    S = np.ones((2, 2))
    ok, info = certified_rank_at_least(lambda: arb_mat(S.tolist()), S, 2, max_bits=256)
    assert not ok and info["bits"] == 256


def test_to_arb_is_exact_and_names_the_input():
    import mpmath
    from flint import arb

    from attention_claims.maths.exact import to_arb

    assert to_arb(mpmath.mpf(-0.375)) == arb(-0.375) and to_arb(mpmath.mpf(-0.375)).is_exact()
    assert to_arb(mpmath.mpf(0)) == 0 and to_arb(mpmath.mpf(5)) == 5
    with pytest.raises(AttentionInputError, match=r"^x: nan is not finite$"):
        to_arb(math.nan)
    with pytest.raises(AttentionInputError, match=r"^beta: mpf\('nan'\) is not finite$"):
        to_arb(mpmath.mpf("nan"), "beta")


def test_arb_to_mpf_certifies_the_digits_it_returns():
    """A ball certifies `digits` digits when its radius is below 10^-digits of its midpoint (strictly); the
    midpoint comes back rounded to dps digits (default digits + 8)."""
    import mpmath
    from flint import arb

    from attention_claims.maths.exact import CertificationError, arb_to_mpf, precision

    with precision(400):
        third = arb(1) / 3
    with mpmath.workdps(60):
        want60 = mpmath.mpf(1) / 3
    with mpmath.workdps(18):
        want18 = mpmath.mpf(1) / 3
    assert arb_to_mpf(third, 10, 60) == want60
    assert arb_to_mpf(third, 10) == want18
    # radius 9.5e-6 of midpoint 1 certifies 5 digits (10^-5), not 6
    ball = arb(1, 9.5e-6)
    assert arb_to_mpf(ball, 5) == 1
    with pytest.raises(CertificationError, match=r"does not certify 6 digits$"):
        arb_to_mpf(ball, 6)
    with pytest.raises(CertificationError, match="does not certify 0 digits"):
        arb_to_mpf(arb(1, 1), 0)  # a radius of (at least) |mid|: nothing certified
    with pytest.raises(CertificationError):
        arb_to_mpf(arb(1) / 0, 5)
    with pytest.raises(CertificationError, match="does not certify 5 digits"):
        arb_to_mpf(arb(0), 5)  # the exact ball 0 contains 0: no significant digit to certify


def test_certified_rank_at_least_chooses_the_minor_in_float64():
    """A float32 approximation is read as float64 before the pivoted QR: for this 5 x 5 float32 matrix
    (two columns of nearly equal norm, one a permutation of the other) float32 and float64 pivoting choose
    different rows, and the minor is the float64 one."""
    from flint import arb_mat

    from attention_claims.maths.rank import certified_rank_at_least, pivot_indices

    A32 = np.array([
        [-1.68849515914917, 1.3253917694091797, 0.957423985004425, -1.238774299621582, 1.2929511070251465],
        [0.4747993052005768, 0.47479936480522156, -0.14232729375362396, 0.8299270868301392, -1.431394338607788],
        [2.040761947631836, 0.19843938946723938, -0.7652832269668579, 1.2207682132720947, 0.7900523543357849],
        [1.3253916501998901, -1.688495397567749, 0.37639594078063965, -1.2763841152191162, -0.47283992171287537],
        [0.198439359664917, 2.040762186050415, -2.0527827739715576, 1.0444053411483765, 1.731142520904541],
    ], dtype=np.float32)
    A64 = A32.astype(np.float64)
    ok, info = certified_rank_at_least(lambda: arb_mat(A64.tolist()), A32, 2)
    assert ok and (info["rows"], info["cols"]) == pivot_indices(A64, 2)


def test_exact_conversions_default_names_and_exactness():
    from attention_claims.maths.exact import as_fractions, fmpz_matrix, mp_matrix

    assert as_fractions([10**20 + 1, 0.5, Fraction(1, 3)]) == [10**20 + 1, Fraction(1, 2), Fraction(1, 3)]
    with pytest.raises(AttentionInputError, match=r"^a: entry nan is not finite$"):
        as_fractions([math.nan])
    with pytest.raises(AttentionInputError, match=r"^matrix: expected 2 dimensions"):
        fmpz_matrix(np.array([1, 2]))
    with pytest.raises(AttentionInputError, match=r"^matrix: contains NaN"):
        mp_matrix(NAN2)


def test_exact_exp_sum_rank_names_an_entry_whose_terms_do_not_match():
    import pytest

    from attention_claims.maths import AttentionInputError
    from attention_claims.maths.rank import exact_exp_sum_rank

    with pytest.raises(AttentionInputError, match=r"entry \(0, 1\) has 2 exponents but 1 coefficients"):
        exact_exp_sum_rank([[[0], [1, 2]]], [[[1], [1]]])
    assert exact_exp_sum_rank([[[0], [1, 2]]], [[[1], [1, 1]]]) == 1
