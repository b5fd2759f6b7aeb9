"""Known values and clear errors for attention_claims.maths (row redundancy, dimension of the rank <= r
matrices, causal softmax patterns reachable with head dimension d)."""

from __future__ import annotations

import numpy as np
import pytest

from attention_claims.maths import (
    AttentionInputError,
    causal_log_ratios,
    causal_realisation,
    certify_inexpressible,
    factorisation_dimension_bounds,
    factorisation_jacobian,
    gauge_directions,
    inexpressible_causal_pattern,
    masked_softmax_attention,
    realises,
    row_redundancy,
)


def test_row_redundancy_known_values():
    assert row_redundancy([[1, 2], [2, 4], [0, 1]]) == ([0, 2], [1])
    assert row_redundancy([[0, 0], [0, 0]]) == ([], [0, 1])
    assert row_redundancy(np.eye(3, dtype=int)) == ([0, 1, 2], [])
    with pytest.raises(AttentionInputError, match="integers"):
        row_redundancy([[0.5, 1.0]])
    with pytest.raises(AttentionInputError, match="expected 2 dimensions"):
        row_redundancy([1, 2])


@pytest.mark.parametrize("n,m,r", [(3, 3, 1), (3, 3, 2), (3, 3, 3), (2, 4, 1), (4, 2, 2), (5, 5, 2)])
def test_dimension_of_rank_r_matrices(n, m, r):
    rng = np.random.default_rng(n * 100 + m * 10 + r)
    A, B = rng.integers(-5, 6, (n, r)), rng.integers(-5, 6, (m, r))
    assert factorisation_dimension_bounds(A, B) == (r * (n + m - r),) * 2  # Harris 1992, Lecture 12


def test_jacobian_entries_and_gauge_kernel():
    A, B = np.array([[1], [2]]), np.array([[3], [4], [5]])
    J = factorisation_jacobian(A, B)
    assert J.shape == (6, 5)
    # d(AB^T)_{1,2} = B_2 dA_1 + A_1 dB_2  (row 1*3 + 2)
    assert J[5].tolist() == [0, 5, 0, 0, 2]
    G = gauge_directions(A, B)
    assert G.tolist() == [[1, 2, -3, -4, -5]] and not np.any(J @ G.T)


def test_dimension_bounds_at_a_special_point_are_loose_but_valid():
    A, B = np.zeros((3, 2), dtype=int), np.zeros((3, 2), dtype=int)
    lo, hi = factorisation_dimension_bounds(A, B)
    assert lo == 0 and hi == 12 and lo <= 2 * (6 - 2) <= hi


def test_dimension_bounds_errors():
    with pytest.raises(AttentionInputError, match="column counts"):
        factorisation_dimension_bounds(np.ones((2, 1), dtype=int), np.ones((2, 2), dtype=int))


@pytest.mark.parametrize("N", [1, 2, 3, 5])
def test_causal_realisation_reproduces_random_patterns(N):
    rng = np.random.default_rng(N)
    M = rng.integers(-3, 4, (N, N))
    for d in (max(1, N - 1), N + 1):
        Q, K = causal_realisation(M, d)
        assert Q.shape == K.shape == (N, d) and realises(Q, K, M)
        P = np.tril(np.exp(M.astype(float)))
        P /= P.sum(axis=1, keepdims=True)
        A = masked_softmax_attention(Q * np.sqrt(d), K, "causal").numpy()  # the 1/sqrt d scale
        assert np.abs(A - P).max() < 1e-12
    with pytest.raises(AttentionInputError, match=r"^d: must be an integer >= 3, got 2$"):
        causal_realisation(np.zeros((4, 4), dtype=int), 2)


@pytest.mark.parametrize("N,d,kind", [(3, 1, "diagonal"), (4, 1, "open"), (5, 2, "diagonal"), (6, 2, "open"),
                                      (9, 3, "open")])
def test_inexpressible_patterns_are_certified(N, d, kind):
    M, rows, cols, got = inexpressible_causal_pattern(N, d)
    assert got == kind and certify_inexpressible(M, d, rows, cols) == 1
    assert np.all(causal_log_ratios(M)[:, 0] == 0)


def test_reachable_patterns_get_no_certificate():
    rng = np.random.default_rng(0)
    for d in (1, 2):
        N = 2 * d + 2
        Q, K = rng.integers(-3, 4, (N, d)), rng.integers(-3, 4, (N, d))
        M = Q @ K.T  # a reachable pattern: exponents are exactly the logits (scale 1)
        _, rows, cols, _ = inexpressible_causal_pattern(N, d)
        assert certify_inexpressible(M, d, rows, cols) is None
        assert certify_inexpressible(M, d, list(range(1, d + 2)), list(range(1, d + 2))) is None


def test_inexpressible_errors():
    with pytest.raises(AttentionInputError, match=r"^N: must be an integer >= 4, got 3$"):
        inexpressible_causal_pattern(3, 2)
    with pytest.raises(AttentionInputError, match="column 0"):
        certify_inexpressible(np.zeros((3, 3), dtype=int), 1, [1, 2], [0, 1])
    with pytest.raises(AttentionInputError, match="square"):
        causal_log_ratios(np.zeros((2, 3), dtype=int))
