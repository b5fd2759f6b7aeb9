"""attention_claims.maths, the operation-count / Linformer / JL part: hand-checked values, agreement with
independent computations (torch FlopCounterMode, attention_claims.maths.softmax_attention, numpy) and
clear errors on bad input."""

from __future__ import annotations

import itertools
import re
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from attention_claims.maths import (
    COUNT_METHODS,
    AttentionInputError,
    chunked_attention,
    doc_linformer,
    eckart_young_factors,
    exact_frobenius_sq,
    hurwitz_zeta,
    identity_gap_lower_bound,
    knee_spectrum_energy,
    matmul_count,
    meta_matmul_flops,
    mp_row_line_distance,
    mp_singular_values,
    op_count,
    pairwise_distortion_holds,
    rademacher_gram_mean,
    schedule_peak,
    softmax_attention,
)


def _kw(method, k=3, m=5):
    return {"m": m} if method == "linear" else ({"k": k} if "linformer" in method else {})


# -- operation counts ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", COUNT_METHODS)
@pytest.mark.parametrize("N,d", [(1, 1), (2, 3), (7, 4), (10**6, 10**4)])
def test_matmul_count_equals_flop_counter(method, N, d):
    assert matmul_count(method, N, d, **_kw(method)) == meta_matmul_flops(method, N, d, **_kw(method))


def test_matmul_count_by_hand():
    # QK^T (2x1 @ 1x2) and AV (2x2 @ 2x1): 2*2*1*2 + 2*2*2*1
    assert matmul_count("standard", 2, 1) == 16
    # EK, FV (1x2 @ 2x1) twice, Q(EK)^T (2x1 @ 1x1), P(FV) (2x1 @ 1x1): 4 + 4 + 4 + 4
    assert matmul_count("linformer", 2, 1, k=1) == 16
    # K^T V (3x2 @ 2x3) and Q (.) (2x3 @ 3x3): 2*3*2*3 + 2*2*3*3
    assert matmul_count("doc-linformer", 2, 3, k=5) == 72
    assert matmul_count("linear", 2, 3, m=4) == 2 * 4 * 2 * 3 + 2 * 2 * 4 * 3


def test_op_count_small_cases_by_hand():
    # N = 2, d = 1: 16 matmul flops + softmax of a 2x2 matrix: scale 4, max 2, subtract 4, exp 4, sum 2, divide 4
    assert op_count("standard", 2, 1) == 16 + 20
    # k = 1: the softmax of a 2x1 matrix has no max or sum operations: scale, subtract, exp, divide (2 each)
    assert op_count("linformer", 2, 1, k=1) == 16 + 8
    assert op_count("doc-linformer", 2, 1, k=1) == 8 + 1  # 4 N d^2 + the d x d division
    assert op_count("linear", 2, 1, m=1) == 8 + 4  # 4 N m d + the feature map on N m entries of Q and K


@pytest.mark.parametrize("N,d,k", [(2, 1, 1), (5, 3, 2), (64, 8, 16), (10**6, 10**4, 10**3)])
def test_op_count_closed_forms(N, d, k):
    assert op_count("standard", N, d) == 4 * N * N * d + 6 * N * N - 2 * N
    assert op_count("linformer", N, d, k=k) == 8 * N * d * k + 6 * N * k - 2 * N
    assert op_count("doc-linformer", N, d, k=k) == 4 * N * d * d + d * d
    assert op_count("linear", N, d, m=d) == 4 * N * d * d + 2 * N * d


@pytest.mark.parametrize("fn", [matmul_count, op_count, meta_matmul_flops])
@pytest.mark.parametrize("args,kw,match", [
    (("bogus", 2, 2), {}, "method"),
    (("standard", 0, 2), {}, "N"),
    (("standard", 2, True), {}, "d"),
    (("standard", 2.0, 2), {}, "N"),
    (("linformer", 4, 2), {}, "k"),
    (("doc-linformer", 4, 2), {"k": 0}, "k"),
    (("linear", 4, 2), {}, "m"),
])
def test_count_input_errors(fn, args, kw, match):
    fn("standard", 2, 1), fn("standard", 2, 2)  # valid twins of the bad arguments first: no memo may answer
    with pytest.raises(AttentionInputError, match=match):
        fn(*args, **kw)


def test_schedule_peak():
    assert schedule_peak(4, 1) == 8
    assert schedule_peak(4, 4) == 32  # the standard schedule: logits and weights, 2 N^2
    for N, chunk, match in [(4, 5, "chunk"), (4, 0, "chunk"), (0, 1, "N")]:
        with pytest.raises(AttentionInputError, match=match):
            schedule_peak(N, chunk)


@pytest.mark.parametrize("chunk", [1, 2, 3, 7])
def test_chunked_attention_equals_softmax_attention(chunk):
    rng = np.random.default_rng(chunk)
    Q, K, V = rng.standard_normal((7, 3)) * 3, rng.standard_normal((7, 3)), rng.standard_normal((7, 2))
    out, peak = chunked_attention(Q, K, V, chunk=chunk)
    want = softmax_attention(Q, K).numpy() @ V
    np.testing.assert_allclose(out, want, rtol=1e-13, atol=1e-14)
    assert peak == schedule_peak(7, chunk)


def test_chunked_attention_input_errors():
    Q = np.ones((3, 2))
    with pytest.raises(AttentionInputError, match="shapes"):
        chunked_attention(Q, np.ones((3, 4)), np.ones((3, 1)))
    with pytest.raises(AttentionInputError, match="shapes"):
        chunked_attention(Q, Q, np.ones((2, 1)))
    with pytest.raises(AttentionInputError, match="chunk"):
        chunked_attention(Q, Q, Q, chunk=0)
    with pytest.raises(AttentionInputError, match="NaN"):
        chunked_attention(np.full((3, 2), np.nan), Q, Q)


# -- the document's Linformer formula ------------------------------------------------------------


def test_doc_linformer_values_and_shape():
    Q = np.array([[1.0, 2.0], [0.0, 1.0], [3.0, -1.0]])
    K = np.array([[1.0, 0.0], [2.0, 1.0], [0.0, 1.0]])
    V = np.array([[1.0], [1.0], [2.0]])
    KtV = np.array([[3.0], [3.0]])  # K^T V by hand
    np.testing.assert_array_equal(doc_linformer(Q, K, V, 3), Q @ KtV / 3)
    assert doc_linformer(np.ones((5, 4)), np.ones((6, 4)), np.ones((6, 2)), Fraction(1, 2)).shape == (5, 2)


@pytest.mark.parametrize("args,match", [
    ((np.ones((3, 2)), np.ones((3, 3)), np.ones((3, 2)), 1), "shapes"),
    ((np.ones((3, 2)), np.ones((3, 2)), np.ones((4, 2)), 1), "shapes"),
    ((np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)), 0), "k"),
    ((np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)), "2"), "k"),
    ((np.ones(3), np.ones((3, 2)), np.ones((3, 2)), 1), "Q"),
])
def test_doc_linformer_input_errors(args, match):
    with pytest.raises(AttentionInputError, match=match):
        doc_linformer(*args)


def test_mp_row_line_distance_known_values():
    with mpmath.workdps(30):
        assert mp_row_line_distance(mpmath.matrix([[1, 0]]), mpmath.matrix([[0, 1]])) == 1  # orthogonal
        assert mp_row_line_distance(mpmath.matrix([[2, 2]]), mpmath.matrix([[1, 1]])) == 0  # on the line
        assert mp_row_line_distance(mpmath.matrix([[3, 4]]), mpmath.matrix([[0, 0]])) == 5  # the line is {0}
        # rows (1, 1) vs line through (1, 0): 1; row (0, 2) vs line through (1, 1): sqrt(2); the maximum
        d = mp_row_line_distance(mpmath.matrix([[1, 1], [0, 2]]), mpmath.matrix([[1, 0], [1, 1]]))
        assert abs(d - mpmath.sqrt(2)) < mpmath.mpf(10) ** -28


def test_mp_row_line_distance_is_a_lower_bound_for_every_multiple():
    rng = np.random.default_rng(0)
    Y, B = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    with mpmath.workdps(30):
        dist = mp_row_line_distance(mpmath.matrix(Y.tolist()), mpmath.matrix(B.tolist()))
    for t in np.linspace(-3, 3, 61):
        assert float(dist) <= np.linalg.norm(Y - t * B, 2) + 1e-12 <= np.linalg.norm(Y - t * B) + 1e-12


def test_mp_row_line_distance_shape_error():
    with pytest.raises(AttentionInputError, match="shape"):
        mp_row_line_distance(mpmath.matrix(2, 2), mpmath.matrix(2, 3))


# -- random projections (proof of 定理 11.26) --------------------------------------------------------


@pytest.mark.parametrize("k,d", [(1, 1), (1, 3), (3, 4), (2, 6), (12, 1)])
def test_rademacher_gram_mean(k, d):
    assert rademacher_gram_mean(k, d, Fraction(1, k)) == [[Fraction(a == b) for b in range(d)] for a in range(d)]
    assert rademacher_gram_mean(k, d, Fraction(1)) == [[Fraction(k * (a == b)) for b in range(d)] for a in range(d)]


def test_rademacher_gram_mean_matches_direct_enumeration():
    k, d, var = 2, 2, Fraction(1, 3)
    total = np.zeros((d, d), dtype=np.int64)
    for s in itertools.product((-1, 1), repeat=k * d):
        P = np.array(s).reshape(k, d)
        total += P.T @ P
    assert rademacher_gram_mean(k, d, var) == [[var * int(v) / 2 ** (k * d) for v in row] for row in total]


@pytest.mark.parametrize("args", [(0, 2, Fraction(1)), (2, 0, Fraction(1)), (4, 4, Fraction(1)), (2, 2, Fraction(-1))])
def test_rademacher_gram_mean_input_errors(args):
    with pytest.raises(AttentionInputError):
        rademacher_gram_mean(*args)


def test_identity_gap_lower_bound_known_values():
    assert identity_gap_lower_bound(np.eye(3)) == (0, 3)
    assert identity_gap_lower_bound(2 * np.eye(3)) == (3, 3)  # P^T P - I = 3 I
    bound, rank = identity_gap_lower_bound(np.array([[1.0, 0.0, 0.0]]))  # P^T P = e1 e1^T
    assert (bound, rank) == (1, 1)
    bound, _ = identity_gap_lower_bound(np.array([[0.5, 0.0], [0.0, 1.0]]))  # eigenvalues 1/4, 1
    assert bound == Fraction(3, 4)


@pytest.mark.parametrize("k,d,seed", [(1, 2, 0), (2, 5, 1), (3, 8, 2), (6, 4, 3), (40, 4, 4)])
def test_identity_gap_lower_bound_is_certified_and_tight(k, d, seed):
    P = np.random.default_rng(seed).standard_normal((k, d)) / np.sqrt(k)
    bound, rank = identity_gap_lower_bound(P)
    norm = np.linalg.norm(P.T @ P - np.eye(d), 2)
    assert rank == min(k, d)
    assert bound <= Fraction(norm) * (1 + Fraction(1, 10**9))  # a lower bound ...
    assert float(bound) >= norm * (1 - 1e-9)  # ... attained by an eigenvector
    if k < d:
        assert bound >= 1


@pytest.mark.parametrize("P,match", [(np.ones(3), "P"), (np.array([[np.inf, 1.0]]), "NaN or Inf")])
def test_identity_gap_lower_bound_input_errors(P, match):
    with pytest.raises(AttentionInputError, match=match):
        identity_gap_lower_bound(P)


# -- the JL distortion condition, decided exactly -------------------------------------------------


def _distortion_exact(X, Y, eps):
    e = Fraction(eps)
    for i, j in itertools.combinations(range(X.shape[0]), 2):
        sx = sum(Fraction(v) ** 2 for v in (X[i] - X[j]).tolist())
        sy = sum(Fraction(v) ** 2 for v in (Y[i] - Y[j]).tolist())
        if not (1 - e) * sx < sy < (1 + e) * sx:
            return False
    return True


@pytest.mark.parametrize("seed", range(6))
def test_pairwise_distortion_agrees_with_rationals(seed):
    # random projections that pass and fail, against the all-rational decision of every pair
    rng = np.random.default_rng(seed)
    n, d, k = 8, 60, [4, 40, 400][seed % 3]
    X = rng.standard_normal((n, d))
    Y = X @ (rng.standard_normal((k, d)) / np.sqrt(k)).T
    for eps in (0.1, 0.3, 0.6):
        holds, _ = pairwise_distortion_holds(X, Y, eps)
        assert holds == _distortion_exact(X, Y, eps)


def test_pairwise_distortion_decides_ties_exactly():
    # |y|^2 = (1 + eps)|x|^2 exactly: the strict inequality fails, and only rationals can tell
    X = np.array([[0.0, 0.0], [3.0, 4.0]])  # |x|^2 = 25
    eps = 0.25
    Y = np.array([[0.0], [np.sqrt(31.25)]])  # float sqrt: |y|^2 within an ulp of 31.25 = (1 + eps) 25
    holds, exact_pairs = pairwise_distortion_holds(X, Y, eps)
    assert exact_pairs == 1 and holds == _distortion_exact(X, Y, eps)
    Y_tie = np.array([[0.0, 0.0], [5.0, 2.5]])  # 31.25 exactly
    assert pairwise_distortion_holds(X, Y_tie, eps) == (False, 1)
    Y_low_tie = np.array([[0.0] * 4, [4.0, 1.5, 0.5, 0.5]])  # 18.75 = (1 - eps) 25 exactly: the lower bound
    assert pairwise_distortion_holds(X, Y_low_tie, eps) == (False, 1)
    Y_in = np.array([[0.0], [5.0]])
    assert pairwise_distortion_holds(X, Y_in, eps) == (True, 0)
    # an entry below 2^-500 (squares underflow the filter's error bound): decided exactly
    tiny = np.array([[0.0, 0.0], [3.0, 2.0**-600]])
    assert pairwise_distortion_holds(tiny, tiny, 0.5) == (True, 1)


def test_pairwise_distortion_rejects_bad_input():
    with pytest.raises(AttentionInputError, match=re.escape("X, Y: different numbers of rows (3 vs 2)")):
        pairwise_distortion_holds(np.ones((3, 5)), np.ones((2, 4)), 0.5)
    for eps in (1.5, 1.0, 0.0, -0.25):  # the open interval (0, 1): both ends refused
        with pytest.raises(AttentionInputError, match=r"^eps: must be in \(0, 1\)"):
            pairwise_distortion_holds(np.ones((3, 2)), np.ones((3, 2)), eps)
    # each array is named in its own error
    with pytest.raises(AttentionInputError, match="^X: expected 2 dimensions"):
        pairwise_distortion_holds(np.ones(3), np.ones((3, 2)), 0.5)
    with pytest.raises(AttentionInputError, match="^Y: expected 2 dimensions"):
        pairwise_distortion_holds(np.ones((3, 2)), np.ones(3), 0.5)


def _one_pair(x, y):
    """Rows 0 and x (X) and 0 and y (Y): one pair, whose difference vectors are -x and -y."""
    x, y = np.atleast_1d(np.asarray(x, float)), np.atleast_1d(np.asarray(y, float))
    return np.vstack([np.zeros_like(x), x]), np.vstack([np.zeros_like(y), y])


def test_pairwise_distortion_outside_pairs_decided_by_the_filter():
    # |y|^2 / |x|^2 = 4 > 1 + eps and 1/100 < 1 - eps, far from the bounds: (False, 0), no exact pair
    assert pairwise_distortion_holds(*_one_pair([1.0], [2.0]), 0.5) == (False, 0)
    assert pairwise_distortion_holds(*_one_pair([10.0], [1.0]), 0.5) == (False, 0)
    # 2 lies between (1 + eps) = 1.5 and 2 + eps: still outside
    assert pairwise_distortion_holds(*_one_pair([1.0], [np.sqrt(2.0)]), 0.5) == (False, 0)


def test_pairwise_distortion_filter_band():
    # |x|^2 = 2 (m = 2), eps = 1/2, so the bounds are (1 - eps)|x|^2 = 1 and (1 + eps)|x|^2 = 3. The filter's
    # relative band around each is the margin 2^-40 plus g_x + g_y, g = 2 gamma_m + 2^-45 (about 2^-45 for
    # m <= 2): a ratio within about 2^-40 + 2^-44 of a bound takes the exact route; one beyond it does not.
    x = [1.0, 1.0]
    for t in (1 + 2.0**-40 + 3 * 2.0**-46, 3 * (1 - 2.0**-40 - 3 * 2.0**-46)):
        assert pairwise_distortion_holds(*_one_pair(x, [np.sqrt(t)]), 0.5) == (True, 1)
    for t in (1 + 2.0**-40 + 2.0**-43, 3 * (1 - 2.0**-40 - 2.0**-43), 2.0):
        assert pairwise_distortion_holds(*_one_pair(x, [np.sqrt(t)]), 0.5) == (True, 0)
    for t in (1 - 2.0**-40 - 3 * 2.0**-46, 3 * (1 + 2.0**-40 + 3 * 2.0**-46)):
        assert pairwise_distortion_holds(*_one_pair(x, [np.sqrt(t)]), 0.5) == (False, 1)
    for t in (1 - 2.0**-40 - 2.0**-43, 3 * (1 + 2.0**-40 + 2.0**-43)):
        assert pairwise_distortion_holds(*_one_pair(x, [np.sqrt(t)]), 0.5) == (False, 0)
    # m = 4096 coordinates: gamma_m = 2^-41 (m u = 2^-41 exactly, over 1 - 2^-41), so g_x = 2^-40 + 2^-45 and
    # the band widens to 2^-39 + 2^-44 above the lower bound: 1 + 1.75 2^-40 is inside it, 1 + 2^-39 + 2^-43 not
    xm = np.zeros(4096)
    xm[:2048] = 2.0**-5  # |x|^2 = 2048 * 2^-10 = 2, exactly
    assert pairwise_distortion_holds(*_one_pair(xm, [np.sqrt(1 + 1.75 * 2.0**-40)]), 0.5) == (True, 1)
    assert pairwise_distortion_holds(*_one_pair(xm, [np.sqrt(1 + 2.0**-39 + 2.0**-43)]), 0.5) == (True, 0)


@pytest.mark.parametrize("x,y,expected", [
    # y chosen (by search) so that a filter comparison is an exact float tie: a tie does not clear the
    # strict comparison, so the pair takes the exact route
    (2.0, float.fromhex("0x1.6a09e667f47d3p+0"), (True, 1)),   # y_lo == (1 - eps) x_hi (1 + 2^-40)
    (3.0, float.fromhex("0x1.d64d51e0da226p+1"), (True, 1)),   # y_hi (1 + 2^-40) == (1 + eps) x_lo
    (5.0, float.fromhex("0x1.c48c6001efbb7p+1"), (False, 1)),  # y_hi (1 + 2^-40) == (1 - eps) x_lo
    (2.0, float.fromhex("0x1.3988e14092b99p+1"), (False, 1)),  # y_lo == (1 + eps) x_hi (1 + 2^-40)
])
def test_pairwise_distortion_filter_ties_take_the_exact_route(x, y, expected):
    assert pairwise_distortion_holds(*_one_pair([x], [y]), 0.5) == expected


def test_pairwise_distortion_filter_safe_range():
    # an entry of a difference vector is "safe" for the filter when 0 or in [2^-500, 2^500]; each array's
    # pair must be safe, decided per pair
    for v, exact in ((2.0**-500, 0), (2.0**-501, 1), (2.0**500, 0), (2.0**501, 1), (2000.0, 0)):
        X, _ = _one_pair([3.0, v], [0.0])
        assert pairwise_distortion_holds(X, X, 0.5) == (True, exact), v
    # a zero coordinate is safe (identity projection: every pair inside, none exact)
    assert pairwise_distortion_holds(*_one_pair([3.0, 0.0], [3.0, 0.0]), 0.5) == (True, 0)
    # only X's pair unsafe: still exact
    assert pairwise_distortion_holds(*_one_pair([3.0, 2.0**-600], [3.0]), 0.5) == (True, 1)
    # one unsafe pair out of three (rows 0 and 1; row 1 - row 2 = (0, -1) in float64): only that one is exact
    X = np.array([[0.0, 0.0], [3.0, 2.0**-600], [3.0, 1.0]])
    assert pairwise_distortion_holds(X, X, 0.5) == (True, 1)


# -- Hurwitz zeta (the tails of power-law spectra) -------------------------------------------------


@pytest.mark.parametrize("s,a", [(2, 1), (1.5, 7), (Fraction(11, 5), 12345), (8.0, 3), (1.000001, 2)])
def test_hurwitz_zeta_matches_mpmath(s, a):
    with mpmath.workdps(40):
        sm = mpmath.mpf(s.numerator) / s.denominator if isinstance(s, Fraction) else mpmath.mpf(s)
        assert abs(hurwitz_zeta(s, a) - mpmath.zeta(sm, a)) <= mpmath.mpf(10) ** -38 * abs(mpmath.zeta(sm, a))
        if (s, a) == (2, 1):
            assert abs(hurwitz_zeta(s, a) - mpmath.pi**2 / 6) < mpmath.mpf(10) ** -39  # Basel


def test_hurwitz_zeta_is_a_value_at_the_current_precision():
    # the certified midpoint is rounded to the current mpmath precision (not to guard digits beyond it)
    for dps in (15, 40):
        with mpmath.workdps(dps):
            for s, a in ((2, 1), (1.5, 7), (Fraction(11, 5), 3)):
                z = hurwitz_zeta(s, a)
                assert +z == z and abs(z - mpmath.zeta(mpmath.mpf(s.numerator) / s.denominator if isinstance(s, Fraction)
                                                     else mpmath.mpf(s), a)) <= mpmath.mpf(10) ** (2 - dps) * z


def test_hurwitz_zeta_names_its_arguments():
    with pytest.raises(AttentionInputError, match="^a: must be a positive integer, got 0$"):
        hurwitz_zeta(2, 0)
    with pytest.raises(AttentionInputError, match="^s: nan is not finite$"):
        hurwitz_zeta(float("nan"), 2)


def test_hurwitz_zeta_rejects_divergent_series():
    with pytest.raises(AttentionInputError, match="s > 1"):
        hurwitz_zeta(1, 3)
    with pytest.raises(AttentionInputError, match="a"):
        hurwitz_zeta(2.0, 0)


def test_knee_spectrum_energy_by_direct_summation():
    # finite N: the Hurwitz-zeta head and total against summing the spectrum term by term
    alpha, j, k, N = Fraction(3, 4), 5, 9, 40
    with mpmath.workdps(40):
        head, total = knee_spectrum_energy(alpha, j, k, N)
        s = [mpmath.mpf(1)] + [mpmath.mpf(j + 1) ** -0.75] * (j - 1) + [mpmath.mpf(i) ** -0.75 for i in range(j + 1, N + 1)]
        sq = [v * v for v in s]
        assert abs(head - mpmath.fsum(sq[:k])) < mpmath.mpf(10) ** -35
        assert abs(total - mpmath.fsum(sq)) < mpmath.mpf(10) ** -35


def _knee_direct(alpha, j, k, N):
    """Head and total of the knee spectrum summed term by term (mpf ``alpha``, finite ``N``)."""
    s = [mpmath.mpf(1)] + [mpmath.mpf(j + 1) ** -alpha] * (j - 1) + [mpmath.mpf(i) ** -alpha for i in range(j + 1, N + 1)]
    sq = [v * v for v in s]
    return mpmath.fsum(sq[:k]), mpmath.fsum(sq)


@pytest.mark.parametrize("j,k,N", [
    (5, 6, 40),  # k = j + 1: the head has exactly one tail term, 6^-2 alpha
    (5, 2, 40),  # k < j: the head is 1 + (k - 1) (j + 1)^-2 alpha, no tail term
    (5, 5, 40),  # k = j
    (5, 2, 5),   # N = j: no tail at all
    (1, 1, 1),   # a spectrum of one value
])
def test_knee_spectrum_energy_edge_cases_by_direct_summation(j, k, N):
    with mpmath.workdps(40):
        head, total = knee_spectrum_energy(Fraction(3, 4), j, k, N)
        h, t = _knee_direct(mpmath.mpf(3) / 4, j, k, N)
        assert abs(head - h) < mpmath.mpf(10) ** -35 and abs(total - t) < mpmath.mpf(10) ** -35


def test_knee_spectrum_energy_infinite_tail_by_basel():
    # alpha = 1, N = None: the tail beyond j = 3 is zeta(2) - 1 - 1/4 - 1/9 = pi^2/6 - 49/36 (Basel)
    with mpmath.workdps(40):
        head, total = knee_spectrum_energy(1, 3, 5, None)
        flat = mpmath.mpf(1) / 16  # (j + 1)^-2
        assert abs(total - (1 + 2 * flat + mpmath.pi**2 / 6 - mpmath.mpf(49) / 36)) < mpmath.mpf(10) ** -38
        assert abs(head - (1 + 2 * flat + mpmath.mpf(1) / 16 + mpmath.mpf(1) / 25)) < mpmath.mpf(10) ** -38
        # alpha as a float, an int or a Fraction: the same exact value
        assert knee_spectrum_energy(1.0, 3, 5, None) == knee_spectrum_energy(Fraction(1), 3, 5, None) == (head, total)
        assert knee_spectrum_energy(0.75, 5, 9, 40) == knee_spectrum_energy(Fraction(3, 4), 5, 9, 40)


def test_knee_spectrum_energy_default_precision_is_40_digits():
    with mpmath.workdps(60):
        default = knee_spectrum_energy(Fraction(3, 4), 5, 9, None)
        assert default == knee_spectrum_energy(Fraction(3, 4), 5, 9, None, dps=40)
        assert default != knee_spectrum_energy(Fraction(3, 4), 5, 9, None, dps=41)


def test_knee_spectrum_energy_rejects_bad_input():
    for alpha in (Fraction(1, 2), Fraction(2, 5), 0.5, 0):  # the energy diverges for alpha <= 1/2
        with pytest.raises(AttentionInputError, match=r"^alpha: must exceed 1/2 for a finite energy"):
            knee_spectrum_energy(alpha, 3, 2, None)
    with pytest.raises(AttentionInputError, match="^j: must be a positive integer, got 0$"):
        knee_spectrum_energy(1, 0, 2, None)
    with pytest.raises(AttentionInputError, match="^k: must be a positive integer, got 0$"):
        knee_spectrum_energy(1, 3, 0, None)
    with pytest.raises(AttentionInputError, match="^N: must be a positive integer, got 0$"):
        knee_spectrum_energy(1, 3, 2, 0)
    with pytest.raises(AttentionInputError, match=re.escape("N: must be >= max(j, k) = 5, got 3")):
        knee_spectrum_energy(1, 5, 2, 3)
    with pytest.raises(AttentionInputError, match=re.escape("N: must be >= max(j, k) = 7, got 3")):
        knee_spectrum_energy(1, 2, 7, 3)


# -- Eckart-Young factors, the exact Frobenius error, mpmath singular values --------------------------


def test_eckart_young_factors_tail_energy_and_full_rank():
    W = np.diag([3.0, 2.0, 1.0])
    B, A, tail = eckart_young_factors(W, 1)
    assert B.shape == (3, 1) and A.shape == (1, 3)
    assert tail == pytest.approx(2.0**2 + 1.0**2, rel=1e-14)  # sum of the squared singular values after the first
    assert np.allclose(B @ A, np.diag([3.0, 0.0, 0.0]), atol=1e-14)
    # r = min(m, n) is allowed: an exact factorisation, no tail
    B, A, tail = eckart_young_factors(np.ones((2, 4)) + np.eye(2, 4), 2)
    assert B.shape == (2, 2) and A.shape == (2, 4) and tail == pytest.approx(0.0, abs=1e-28)


def test_eckart_young_factors_thin_svd_memory():
    # the thin SVD: memory O(m n), not the m x m U of a full SVD (72 MB for m = 3000)
    import tracemalloc

    W = np.random.default_rng(0).standard_normal((3000, 2))
    tracemalloc.start()
    try:
        eckart_young_factors(W, 1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20


def test_eckart_young_factors_rejects_bad_input():
    with pytest.raises(AttentionInputError, match="^W: expected 2 dimensions"):
        eckart_young_factors(np.ones(3), 1)
    with pytest.raises(AttentionInputError, match="^r: must be a positive integer, got 0$"):
        eckart_young_factors(np.ones((2, 3)), 0)
    with pytest.raises(AttentionInputError, match=re.escape("r: must be <= min(2, 3) = 2, got 3")):
        eckart_young_factors(np.ones((2, 3)), 3)


def test_exact_frobenius_sq_names_each_argument():
    good, bad = np.ones((2, 2)), np.ones(2)
    for args, name in (((bad, good, good), "W"), ((good, bad, good), "B"), ((good, good, bad), "A")):
        with pytest.raises(AttentionInputError, match=f"^{name}: expected 2 dimensions"):
            exact_frobenius_sq(*args)
    # each of the three shape conditions alone is refused, with every shape in the message
    for W, B, A in ((np.ones((2, 2)), np.ones((3, 1)), np.ones((1, 2))),   # B's rows
                    (np.ones((2, 2)), np.ones((2, 1)), np.ones((1, 3))),   # A's columns
                    (np.ones((2, 2)), np.ones((2, 1)), np.ones((2, 2)))):  # B's columns against A's rows
        msg = (f"exact_frobenius_sq: shapes W 2x2, B {B.shape[0]}x{B.shape[1]}, A {A.shape[0]}x{A.shape[1]}")
        with pytest.raises(AttentionInputError, match=re.escape(msg)):
            exact_frobenius_sq(W, B, A)


def test_mp_singular_values_of_an_mpmath_matrix_keep_its_precision():
    with mpmath.workdps(40):
        tiny = mpmath.mpf(10) ** -30  # lost if the matrix went through float64
        s = mp_singular_values(mpmath.matrix([[1 + tiny, 0], [0, 1]]))
        assert s[0] - 1 == pytest.approx(tiny, rel=1e-6) and s[1] == 1


def test_mp_singular_values_default_precision_is_40_digits():
    A = np.array([[1.0, 2.0], [3.0, 5.0]])
    with mpmath.workdps(60):
        assert mp_singular_values(A) == mp_singular_values(A, dps=40) != mp_singular_values(A, dps=41)


def test_mp_singular_values_rejects_bad_input():
    with pytest.raises(AttentionInputError, match="^A: expected 2 dimensions"):
        mp_singular_values(np.ones(3))


def test_row_line_distance_projects_rows_shorter_than_one():
    """min_t |y - t b| is 0 when y is a multiple of b, whatever the length of b (here |b| = 1/2 and 1/4,
    below 1: the projection must not be skipped for them)."""
    from attention_claims.maths.projections import mp_row_line_distance

    with mpmath.workdps(30):
        Y = mpmath.matrix([[1, 0], [0, 3]])
        B = mpmath.matrix([[0.5, 0], [0, 0.25]])
        assert mp_row_line_distance(Y, B) == 0
        assert mp_row_line_distance(mpmath.matrix([[1, 1]]), mpmath.matrix([[0.5, 0]])) == 1  # the y-b gap
