"""test_svd_dtypes' certificate (issue 35): LAPACK's xDRVBD ratios of a float32 SVD recomputed from the factors'
exact values in arb (checks.test_spectrum._certify_svd_ratios), so that a failure of the reading is certified."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import checks.test_spectrum as spectrum
from attention_claims.maths import softmax_attention

EPS32 = float(torch.finfo(torch.float32).eps)


def _svd32(N, seed):
    rng = np.random.default_rng(seed)
    A = softmax_attention(rng.uniform(-1, 1, (N, 3)) * 2, rng.uniform(-1, 1, (N, 3)), dtype="float32")
    U, S, Vh = torch.linalg.svd(A)
    return tuple(x.double().numpy() for x in (U, S, Vh, A))


def _float64_ratios(U, S, Vh, A):
    N = A.shape[0]
    one = lambda X: np.abs(X).sum(axis=0).max()  # noqa: E731
    eye = np.eye(N)
    return (one(U.T @ U - eye) / (N * EPS32), one(Vh @ Vh.T - eye) / (N * EPS32),
            one((U * S) @ Vh - A) / one(A) / (N * EPS32))


@pytest.mark.parametrize("N,seed", [(1, 0), (5, 1), (17, 2), (64, 3)])
def test_a_float32_svd_passes_and_its_ratios_match_the_float64_ones(N, seed):
    U, S, Vh, A = _svd32(N, seed)
    ok, why = spectrum._certify_svd_ratios(U, S, Vh, A, EPS32)
    assert not ok and "none certainly above THRESH = 35" in why
    # the enclosures printed are those of the float64 ratios the check screens with (to float64 rounding)
    for r, text in zip(_float64_ratios(U, S, Vh, A), why.split("lie in ")[1].split("], ")[:3], strict=True):
        lo = float(text.strip("[").split(",")[0])
        assert lo == pytest.approx(r, rel=1e-5, abs=1e-12)


def test_a_planted_threshold_below_the_ratios_is_certified():
    U, S, Vh, A = _svd32(5, 1)
    worst = max(_float64_ratios(U, S, Vh, A))
    assert worst > 0.5
    assert spectrum._certify_svd_ratios(U, S, Vh, A, EPS32, thresh=0.5 * worst)[0]
    assert not spectrum._certify_svd_ratios(U, S, Vh, A, EPS32, thresh=2 * worst)[0]


def test_a_wrong_factor_or_wrong_singular_values_are_certified():
    U, S, Vh, A = _svd32(8, 4)
    bad = U.copy()
    bad[0, 0] += 1e-3  # ~4000 N eps32 off orthogonality: a wrong factorisation
    ok, why = spectrum._certify_svd_ratios(bad, S, Vh, A, EPS32)
    assert ok and "one certainly above" in why
    ok, why = spectrum._certify_svd_ratios(U, -S, Vh, A, EPS32)
    assert ok and "exact comparison" in why
    ok, _ = spectrum._certify_svd_ratios(U, S[::-1].copy(), Vh, A, EPS32)
    assert ok
