"""The batched engine (attention_claims.engine) against the per-instance reference of
attention_claims.maths, on the CPU and (when a GPU is present) on CUDA; a planted wrong formula the
batched search catches and certifies; a fake float counterexample the certified recomputation rejects."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_claims.engine import (
    DeviceUnavailable,
    attention_batch,
    causal_log_det,
    causal_log_diagonal,
    effective_ranks,
    mean_row_cosines,
    near_zero_fractions,
    numerical_ranks,
    resolve_device,
    seeded_gaussian_batch,
    seeded_uniform_batch,
    singular_values_batch,
    suspects,
)
from attention_claims.maths import (
    AttentionInputError,
    attention_matrix,
    certified_singular_value_count,
    cuda_available,
    effective_rank,
    numerical_rank,
    row_cosines,
    softmax_attention,
)
from attention_claims.testkit import seeded_gaussian_qk

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not cuda_available(), reason="no CUDA GPU on this machine: the CUDA leg of the engine is not run here"))]


def test_instance_zero_is_the_per_example_instance():
    Q, K = seeded_gaussian_batch(1234, 16, 12, 3, 7.5)
    Q0, K0 = seeded_gaussian_qk(12, 3, 7.5, 1234)
    assert Q.shape == K.shape == (16, 12, 3)
    assert np.array_equal(Q[0], Q0) and np.array_equal(K[0], K0)
    Q2, K2 = seeded_gaussian_batch(1234, 16, 12, 3, 7.5)  # reproducible from the seed
    assert np.array_equal(Q, Q2) and np.array_equal(K, K2)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("causal", [False, True])
def test_attention_batch_matches_reference(device, causal):
    Q, K = seeded_uniform_batch(7, 8, 6, 4, 30.0)
    A = attention_batch(Q, K, causal=causal, device=device).cpu().numpy()
    for i in range(8):
        ref = softmax_attention(Q[i], K[i], causal=causal).numpy()
        np.testing.assert_allclose(A[i], ref, rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("device", DEVICES)
def test_causal_log_det_is_the_log_of_the_triangular_product(device):
    Q, K = seeded_uniform_batch(3, 8, 6, 2, 1.0)
    logdet = causal_log_det(Q, K, device=device).cpu().numpy()
    for i in range(8):
        A = softmax_attention(Q[i], K[i], causal=True).numpy()
        sign, ref = np.linalg.slogdet(A)
        assert sign == 1 and math.isclose(logdet[i], ref, rel_tol=1e-12, abs_tol=1e-12)


def test_causal_log_diagonal_stays_finite_where_float64_underflows():
    # logits far apart: the stored float64 diagonal is 0 (det 0), the log-space one is finite and exact
    Q = np.array([[[0.0], [0.0], [1.0]]]) * 3000.0
    K = np.array([[[1.0], [-1.0], [-1.0]]])
    A = attention_batch(Q, K, causal=True).numpy()[0]
    assert A[2, 2] == 0.0 and np.linalg.det(A) == 0.0
    logd = causal_log_diagonal(Q, K).numpy()[0]
    # row 2: z = (3000, -3000, -3000); log A_22 = -3000 - logsumexp(3000, -3000, -3000) = -6000 - ln(1 + 2e-6000)
    assert math.isclose(logd[2], -6000.0, rel_tol=1e-15)
    assert np.isfinite(causal_log_det(Q, K).numpy()).all()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("method", ["svdvals", "gram"])
def test_singular_values_and_ranks_match_reference(device, method):
    Q, K = seeded_gaussian_batch(11, 12, 10, 2, 3.0)
    s = singular_values_batch(attention_batch(Q, K, device=device), method=method).cpu()
    r, _ = numerical_ranks(s, (10, 10))
    er = effective_ranks(s, 0.9)
    nz = near_zero_fractions(s, 0.01)
    for i in range(12):
        A = attention_matrix(Q[i], K[i])
        ref = np.linalg.svd(A, compute_uv=False)
        # gram loses half the digits of the small singular values (sqrt(eps) sigma_max)
        np.testing.assert_allclose(s[i].numpy(), ref, rtol=0, atol=(1e-13 if method == "svdvals" else 1e-7) * ref[0])
        assert int(er[i]) == effective_rank(ref, 0.9)
        assert float(nz[i]) == float(np.mean(ref < 0.01 * ref[0]))
        if method == "svdvals":
            assert int(r[i]) == numerical_rank(A)[0]


def test_mean_row_cosines_match_reference():
    Q, K = seeded_gaussian_batch(5, 6, 7, 2, 0.5)
    mc = mean_row_cosines(attention_batch(Q, K)).numpy()
    for i in range(6):
        C = row_cosines(attention_matrix(Q[i], K[i]))
        assert math.isclose(mc[i], (C.sum() - 7) / 42, rel_tol=1e-13)


def test_suspects_in_order_and_limited():
    m = torch.tensor([False, True, False, True, True])
    assert suspects(m) == [1, 3, 4] and suspects(m, limit=2) == [1, 3]
    assert suspects(torch.zeros(4, dtype=torch.bool)) == []


def test_errors_are_clear():
    with pytest.raises(AttentionInputError, match="batch"):
        seeded_gaussian_batch(0, 0, 3, 2, 1.0)
    with pytest.raises(AttentionInputError, match="scale"):
        seeded_uniform_batch(0, 2, 3, 2, float("inf"))
    with pytest.raises(AttentionInputError, match=r"\(B, N, d\)"):
        attention_batch(np.ones((3, 2)), np.ones((3, 2)))
    with pytest.raises(AttentionInputError, match="tau"):
        effective_ranks(torch.ones(2, 3), 1.0)
    with pytest.raises(AttentionInputError, match="method"):
        singular_values_batch(torch.ones(1, 2, 2, dtype=torch.float64), method="qr")
    with pytest.raises(AttentionInputError, match="mask"):
        suspects(torch.ones(2, 2, dtype=torch.bool))
    if not cuda_available():
        with pytest.raises(DeviceUnavailable, match="no CUDA"):
            resolve_device("cuda")


def test_planted_wrong_formula_is_caught_and_certified():
    """Planted: 'the numerical rank of an N x N bidirectional attention matrix is at most d' (the
    factorised-logit bound wrongly carried over to softmax). A Hypothesis-driven batched search
    finds a suspect in its first batches, and the exact inertia certificate confirms it."""
    found = []

    @settings(max_examples=20, derandomize=True, database=None, deadline=None)
    @given(seed=st.integers(0, 2**32 - 1), N=st.integers(8, 16), d=st.integers(1, 2))
    def search(seed, N, d):
        Q, K = seeded_gaussian_batch(seed, 32, N, d, 1.0)
        r, tol = numerical_ranks(singular_values_batch(attention_batch(Q, K)), (N, N))
        for i in suspects(r > d, limit=1):
            A = attention_matrix(Q[i], K[i])
            ri, t = numerical_rank(A)
            if ri > d and certified_singular_value_count(A, t) > d:
                found.append((seed, i, N, d, ri))
                raise AssertionError(f"planted bound rank <= d broken: rank {ri} > d = {d}")

    with pytest.raises(AssertionError, match="planted bound"):
        search()
    seed, i, N, d, ri = found[-1]  # the shrunk instance, reproduced from (seed, index)
    Q, K = seeded_gaussian_batch(seed, 32, N, d, 1.0)
    assert numerical_rank(attention_matrix(Q[i], K[i]))[0] == ri > d


def test_certified_recomputation_rejects_a_fake_float_counterexample():
    """The Gram route loses half the digits of the small singular values: on a matrix of exact rank
    N - 1 (two equal query rows give two equal attention rows) it reports numerical rank N, a fake
    'full rank' suspect. The exact inertia of A^T A - tol^2 I (fmpq) rejects it."""
    Q, K = seeded_gaussian_batch(2, 4, 8, 2, 3.0)
    Q[:, 1] = Q[:, 0]  # rows 0 and 1 of every attention matrix are equal: exact rank <= N - 1
    A = attention_batch(Q, K)
    s_gram = singular_values_batch(A, method="gram")
    r_gram, tol = numerical_ranks(s_gram, (8, 8))
    fake = suspects(r_gram >= 8)
    assert fake, "the Gram route should report a fake full-rank instance here"
    i = fake[0]
    Ai = A[i].numpy()
    assert np.array_equal(Ai[0], Ai[1])
    assert certified_singular_value_count(Ai, float(tol[i])) < 8  # rejected: not a counterexample
    r_ref, _ = numerical_rank(Ai)
    assert r_ref < 8  # and the float64 SVD reference agrees
