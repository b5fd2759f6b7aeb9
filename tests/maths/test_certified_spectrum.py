"""Certified spectrum bounds for the exact matrix behind a float64 one (Weyl from an arb enclosure, exact
inertia counts) and the arb row cosines: the certificates of the study note's spectral checks (issue 35)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from attention_claims.maths import (
    AttentionInputError,
    arb_matrix,
    arb_row_cosines,
    arb_softmax_attention,
    attention_matrix,
    certified_count_above_relative,
    certified_sigma1_upper,
    certified_top_energy_upper,
    enclosure_frobenius_distance,
    precision,
    row_cosines,
)


def test_distance_of_an_exact_enclosure_is_zero_and_bounds_a_perturbation():
    A = np.array([[0.5, 0.25], [0.125, 1.0]])
    assert enclosure_frobenius_distance(arb_matrix(A), A) == 0
    B = A + np.array([[1e-3, 0.0], [0.0, -2e-3]])
    assert float(enclosure_frobenius_distance(arb_matrix(A), B)) >= np.linalg.norm(B - A) * (1 - 1e-12)


def test_distance_rejects_a_shape_mismatch():
    with pytest.raises(AttentionInputError, match="shape"):
        enclosure_frobenius_distance(arb_matrix(np.eye(2)), np.eye(3))


def test_sigma1_upper_is_certified_and_tight():
    A = np.diag([3.0, 1.0, 0.5])
    t = certified_sigma1_upper(A)
    assert 3 <= t <= 3 * (1 + 1e-11)


def test_count_above_relative_on_a_diagonal_matrix():
    # singular values 1, 0.5, 0.02, 0.001: three exceed 1 % of the largest (0.02 > 0.01)
    A = np.diag([1.0, 0.5, 0.02, 0.001])
    m, T = certified_count_above_relative(arb_matrix(A), A, Fraction(1, 100))
    assert m == 3 and Fraction(1, 100) <= T < Fraction(101, 10000)
    m, _ = certified_count_above_relative(arb_matrix(A), A, Fraction(1, 40))  # 0.02 < 0.025: not counted
    assert m == 2
    with pytest.raises(AttentionInputError, match="rel"):
        certified_count_above_relative(arb_matrix(A), A, 2)


def test_count_above_relative_matches_float64_on_attention():
    rng = np.random.default_rng(3)
    Q, K = rng.standard_normal((12, 2)) * 2, rng.standard_normal((12, 2))
    A = attention_matrix(Q, K)
    s = np.linalg.svd(A, compute_uv=False)
    with precision(200):
        m, _ = certified_count_above_relative(arb_softmax_attention(Q, K), A, Fraction(1, 100))
    assert m == int(np.sum(s > 0.01 * s[0]))


def test_top_energy_upper_bounds_the_float64_value_closely():
    rng = np.random.default_rng(4)
    Q, K = rng.standard_normal((10, 3)), rng.standard_normal((10, 3))
    A = attention_matrix(Q, K)
    s = np.linalg.svd(A, compute_uv=False)
    top = s[0] ** 2 / np.sum(s**2)
    with precision(200):
        up = certified_top_energy_upper(arb_softmax_attention(Q, K), A)
    assert top <= up <= top + 1e-10


def test_arb_row_cosines_enclose_the_float64_ones():
    rng = np.random.default_rng(5)
    Q, K = rng.standard_normal((6, 2)), rng.standard_normal((6, 2))
    C = row_cosines(attention_matrix(Q, K))
    with precision(200):
        Ca = arb_row_cosines(arb_softmax_attention(Q, K))
    assert all(abs(float(Ca[i][j].mid()) - C[i, j]) < 1e-14 for i in range(6) for j in range(6))
    assert all(Ca[i][i].contains(1) for i in range(6))


def test_arb_row_cosines_reject_a_zero_row():
    with pytest.raises(AttentionInputError, match="row 1"):
        arb_row_cosines(arb_matrix(np.array([[1.0, 0.0], [0.0, 0.0]])))
