"""Known values and clear errors for attention_claims.maths (rank collapse of pure-attention stacks)."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from attention_claims.maths import (
    AttentionInputError,
    attention_stack_residuals,
    convergence_orders,
    random_stack,
    relative_residual,
)


def test_relative_residual_known_values():
    assert relative_residual(np.ones((3, 2))) == 0  # identical rows: rank 1, no residual
    X = np.array([[1.0, 0.0], [-1.0, 0.0]])  # mean row 0: the whole matrix is residual
    assert abs(relative_residual(X) - 1) < mpmath.mpf("1e-14")
    with pytest.raises(AttentionInputError, match="zero"):
        relative_residual(np.zeros((2, 2)))


def test_zero_weights_collapse_in_one_layer():
    X = np.arange(6, dtype=float).reshape(3, 2)
    W0, Wv = np.zeros((2, 2)), np.eye(2)
    r = attention_stack_residuals(X, [(W0, W0, Wv)], dps=30)  # uniform attention: every row the mean
    assert r[0] > 0 and r[1] == 0


def test_skip_connection_keeps_residual_with_zero_values():
    X = np.arange(6, dtype=float).reshape(3, 2)
    W0 = np.zeros((2, 2))
    r = attention_stack_residuals(X, [(W0, W0, W0)], skip=True, dps=30)  # Attn(X) = 0: X unchanged
    assert r[0] == r[1]


def test_convergence_orders_of_a_cubic_sequence():
    with mpmath.workdps(60):
        seq = [mpmath.mpf("1e-4") ** (3**k) for k in range(4)]
    orders = convergence_orders(seq, below=1e-3)
    assert all(abs(p - 3) < 1e-9 for p in orders) and len(orders) == 3
    with pytest.raises(AttentionInputError, match="below"):
        convergence_orders(seq, below=2.0)


def test_bad_input():
    with pytest.raises(AttentionInputError, match=r"^X0: contains NaN or Inf$"):
        attention_stack_residuals(np.array([[np.nan]]), [])
    with pytest.raises(AttentionInputError, match="do not fit"):
        attention_stack_residuals(np.ones((2, 2)), [(np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 3)))])
    with pytest.raises(AttentionInputError, match="scale"):
        random_stack(np.random.default_rng(0), 2, 2, 2, 0.0)


def test_relu_mlp_lipschitz_bound_and_shapes():
    from attention_claims.maths import relu_mlp

    W1, W2 = relu_mlp(np.random.default_rng(0), 3, lipschitz=4.0)
    assert W1.shape == (3, 12) and W2.shape == (12, 3)
    assert np.linalg.norm(W1, 2) * np.linalg.norm(W2, 2) <= 4.0  # Lip(relu(x W1) W2) <= ||W1|| ||W2||
    assert np.linalg.norm(W1, 2) * np.linalg.norm(W2, 2) > 4.0 * (1 - 1e-9)
    assert relu_mlp(np.random.default_rng(0), 2, lipschitz=1.0, hidden=5)[0].shape == (2, 5)
    with pytest.raises(AttentionInputError, match="lipschitz"):
        relu_mlp(np.random.default_rng(0), 2, lipschitz=0.0)


def test_identity_mlp_leaves_the_residuals_unchanged():
    # relu(x [I, -I]) [I; -I] = relu(x) - relu(-x) = x: the MLP is the identity
    eye = np.eye(2)
    ident = (np.hstack([eye, -eye]), np.vstack([eye, -eye]))
    rng = np.random.default_rng(1)
    X = rng.standard_normal((4, 2))
    weights = random_stack(rng, 3, 2, 2, 0.5)
    plain = attention_stack_residuals(X, weights, dps=40)
    with_mlp = attention_stack_residuals(X, weights, mlps=[ident] * 3, dps=40)
    assert all(abs(a - b) <= mpmath.mpf("1e-35") * max(a, mpmath.mpf("1e-300")) for a, b in zip(plain, with_mlp, strict=True))


def test_mlp_that_switches_every_unit_off_is_refused():
    X = np.abs(np.arange(1.0, 7.0).reshape(3, 2))  # positive tokens; uniform attention keeps them positive
    W0, Wv = np.zeros((2, 2)), np.eye(2)
    off = (-np.eye(2), np.eye(2))  # relu(-x) = 0 for x > 0: X becomes exactly 0
    with pytest.raises(AttentionInputError, match="zero"):
        attention_stack_residuals(X, [(W0, W0, Wv)] * 2, mlps=[off] * 2, dps=30)
    with pytest.raises(AttentionInputError, match="MLPs for"):
        attention_stack_residuals(X, [(W0, W0, Wv)] * 2, mlps=[off], dps=30)
    with pytest.raises(AttentionInputError, match="MLP weight shapes"):
        attention_stack_residuals(X, [(W0, W0, Wv)], mlps=[(np.eye(3), np.eye(3))], dps=30)


def test_stack_residuals_match_an_mpmath_stack():
    # the same stack layer by layer in mpmath (mp_softmax_matrix, matrix products, relative_residual)
    from attention_claims.maths import mp_matrix
    from attention_claims.maths.attention import mp_softmax_matrix

    rng = np.random.default_rng(7)
    X = rng.standard_normal((5, 3))
    weights = random_stack(rng, 4, 3, 3, 0.8)
    r = attention_stack_residuals(X, weights, dps=60)
    with mpmath.workdps(60):
        M = mp_matrix(X)
        ref = [relative_residual(M)]
        for Wq, Wk, Wv in weights:
            M = mp_softmax_matrix(M * mp_matrix(Wq), M * mp_matrix(Wk), 1 / mpmath.sqrt(3)) * M * mp_matrix(Wv)
            ref.append(relative_residual(M))
        for a, b in zip(r, ref, strict=True):
            assert abs(a - b) <= mpmath.mpf("1e-55")  # rounding noise at 60 digits: about 1e-60 absolute
