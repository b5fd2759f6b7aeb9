"""attention_claims.maths.attention: linear attention, masks, the single-head layer and the exact rows over
Z[t], against values written out by hand or recomputed in NumPy, and the errors each names (issue 24,
mutation testing: each test here fails on a mutant of the module that the checks let through)."""

from __future__ import annotations

import math
import re
from functools import partial

import numpy as np
import pytest
import torch

from attention_claims.maths import (
    AttentionInputError,
    attention_layer,
    attention_mask,
    causal_logit_gap,
    causal_mask,
    exact_attention_rows,
    feature_map,
    gaussian_logits,
    linear_attention,
    logits,
    masked_softmax_attention,
    rational_rows_equal,
    resolve_mask,
    row_cosines,
    softmax_attention,
)

Q3 = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, -1.0]])
K4 = np.array([[1.0, 0.5], [-1.0, 2.0], [0.0, 0.0], [3.0, -2.0]])


def _elu1(x):
    return np.where(x > 0, x + 1.0, np.exp(x))


def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# -- linear attention (Katharopoulos et al. 2020 eq. (4)-(6)) ------------------------------------------------


def test_linear_attention_defaults_are_unmasked_and_row_normalised():
    s = _elu1(Q3) @ _elu1(K4).T
    out = linear_attention(Q3, K4)
    assert out.dtype == torch.float64 and tuple(out.shape) == (3, 4)
    np.testing.assert_allclose(out.numpy(), s / s.sum(axis=1, keepdims=True), rtol=1e-14)
    np.testing.assert_allclose(linear_attention(Q3, K4, normalize=False).numpy(), s, rtol=1e-14)


def test_linear_attention_causal_on_non_square_logits():
    """N = 3 queries, M = 4 keys: the mask is j <= i, (3, 4); rows renormalised over the kept keys."""
    s = np.tril(_elu1(Q3) @ _elu1(K4).T)
    np.testing.assert_allclose(linear_attention(Q3, K4, causal=True, normalize=False).numpy(), s, rtol=1e-14)
    np.testing.assert_allclose(linear_attention(Q3, K4, causal=True).numpy(), s / s.sum(axis=1, keepdims=True),
                               rtol=1e-14)


def test_linear_attention_zero_rows_stay_zero_and_unit_rows_stay_as_they_are():
    """relu features: query row 0 is all zero (normaliser 0: the row stays zero), row 1's sum is exactly 1
    (kept as it is), row 2's is 3 (divided)."""
    Q = np.array([[-1.0, -1.0], [1.0, 0.0], [3.0, 0.0]])
    K = np.array([[1.0, 0.0], [0.0, 1.0]])
    out = linear_attention(Q, K, phi="relu").numpy()
    np.testing.assert_array_equal(out, [[0.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    assert np.all(np.isfinite(out))


def test_linear_attention_dtype_device_and_errors():
    assert linear_attention(Q3, K4, dtype="float32").dtype == torch.float32
    # the meta device runs the shapes only: every tensor of the computation must be on it
    for causal in (False, True):
        out = linear_attention(Q3, K4, causal=causal, device="meta")
        assert out.device.type == "meta" and tuple(out.shape) == (3, 4)
    with pytest.raises(AttentionInputError, match=r"^Q: contains NaN"):
        linear_attention([[np.nan, 1.0]], K4)
    with pytest.raises(AttentionInputError, match=r"^K: contains NaN"):
        linear_attention(Q3, [[np.nan, 1.0]])
    with pytest.raises(AttentionInputError, match=r"^Q, K: head dimensions differ \(2 vs 3\)$"):
        linear_attention(Q3, np.ones((4, 3)))


# -- masks ----------------------------------------------------------------------------------------------------


def _mask(rows):
    return torch.tensor(rows, dtype=torch.bool)


def test_attention_mask_every_kind_written_out():
    t, f = True, False
    assert torch.equal(attention_mask("bidirectional", 3), torch.ones(3, 3, dtype=torch.bool))
    assert torch.equal(attention_mask("causal", 3), _mask([[t, f, f], [t, t, f], [t, t, t]]))
    assert torch.equal(attention_mask("anticausal", 3), _mask([[t, t, t], [f, t, t], [f, f, t]]))
    assert torch.equal(attention_mask("prefix", 4, prefix=2),
                       _mask([[t, t, f, f], [t, t, f, f], [t, t, t, f], [t, t, t, t]]))
    assert torch.equal(attention_mask("banded", 4, window=1),
                       _mask([[t, t, f, f], [t, t, t, f], [f, t, t, t], [f, f, t, t]]))
    assert torch.equal(attention_mask("banded-causal", 4, window=1),
                       _mask([[t, f, f, f], [t, t, f, f], [f, t, t, f], [f, f, t, t]]))
    # window 0 is allowed: the diagonal alone
    assert torch.equal(attention_mask("banded", 3, window=0), torch.eye(3, dtype=torch.bool))
    assert torch.equal(attention_mask("banded-causal", 3, window=0), torch.eye(3, dtype=torch.bool))


def test_attention_mask_defaults_prefix_0_window_1():
    assert torch.equal(attention_mask("prefix", 4), attention_mask("causal", 4))
    assert torch.equal(attention_mask("banded", 5), attention_mask("banded", 5, window=1))
    assert int(attention_mask("banded", 5).sum()) == 5 + 2 * 4


def test_attention_mask_device_and_errors():
    for kind in ("bidirectional", "causal", "prefix", "banded"):
        m = attention_mask(kind, 3, device="meta")
        assert m.device.type == "meta" and m.dtype == torch.bool and tuple(m.shape) == (3, 3)
    with pytest.raises(AttentionInputError, match=r"^N: must be"):
        attention_mask("causal", 0)
    with pytest.raises(AttentionInputError, match=r"one of bidirectional, causal, anticausal, prefix, banded, "
                                                  r"banded-causal\)$"):
        attention_mask("sideways", 3)
    with pytest.raises(AttentionInputError, match=r"^prefix: must be"):
        attention_mask("prefix", 3, prefix=4)
    with pytest.raises(AttentionInputError, match=r"^window: must be"):
        attention_mask("banded", 3, window=-1)


# -- one attention layer (Vaswani et al. 2017 eq. (1)) ---------------------------------------------------------


def test_attention_layer_matches_numpy_with_a_mask_and_rectangular_weights():
    """D = 3, d_k = 2, d_v = 1: softmax(mask(X Wq (X Wk)^T / sqrt 2)) X Wv."""
    X = np.array([[1.0, 0.0, 2.0], [0.5, -1.0, 0.0], [0.0, 1.0, 1.0]])
    Wq = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, -1.0]])
    Wk = np.array([[0.5, 1.0], [1.0, 0.0], [0.0, 2.0]])
    Wv = np.array([[1.0], [2.0], [-1.0]])
    z = (X @ Wq) @ (X @ Wk).T / np.sqrt(2.0)
    for mask, zz in ((None, z), ("causal", np.where(np.tril(np.ones((3, 3))) > 0, z, -np.inf))):
        out = attention_layer(X, Wq, Wk, Wv, mask=mask)
        assert out.dtype == torch.float64 and tuple(out.shape) == (3, 1)
        np.testing.assert_allclose(out.numpy(), _softmax(zz) @ (X @ Wv), rtol=1e-13)
    out32 = attention_layer(X, Wq, Wk, Wv, mask="causal", dtype="float32")
    assert out32.dtype == torch.float32
    np.testing.assert_allclose(out32.numpy(), attention_layer(X, Wq, Wk, Wv, mask="causal").numpy(), rtol=1e-5)


def test_attention_layer_names_the_bad_input():
    X, W = np.eye(3), np.eye(3)
    bad = W.copy()
    bad[0, 0] = np.nan
    with pytest.raises(AttentionInputError, match=r"^X: contains NaN"):
        attention_layer(bad, W, W, W)
    for i, name in enumerate(("Wq", "Wk", "Wv")):
        args = [W, W, W]
        args[i] = bad
        with pytest.raises(AttentionInputError, match=rf"^{name}: contains NaN"):
            attention_layer(X, *args)
    # the query and key widths agree (2) but Wq has 2 rows for X's 3 columns: refused before any product
    with pytest.raises(AttentionInputError, match="do not fit"):
        attention_layer(X, np.ones((2, 2)), np.ones((3, 2)), W)
    with pytest.raises(AttentionInputError, match="do not fit"):
        attention_layer(X, np.ones((3, 2)), np.ones((3, 1)), W)


# -- exact rows over Z[t] ----------------------------------------------------------------------------------------


def test_exact_attention_rows_written_out():
    """M = [[0, 2], [1, 1]], V = [[1, 0], [3, -2]]: row 0 is (1, 0) + t^2 (3, -2) over 1 + t^2, row 1 is
    (4, -2) over 2 (the common t^1 cancels); causal: row 0 keeps key 0 only."""
    from flint import fmpz_poly

    M = [[0, 2], [1, 1]]
    V = [[1, 0], [3, -2]]
    (n0, d0), (n1, d1) = exact_attention_rows(M, V)
    assert d0 == fmpz_poly([1, 0, 1]) and n0 == [fmpz_poly([1, 0, 3]), fmpz_poly([0, 0, -2])]
    assert d1 == fmpz_poly([2]) and n1 == [fmpz_poly([4]), fmpz_poly([-2])]
    (c0, e0), (c1, e1) = exact_attention_rows(M, V, "causal")
    assert e0 == fmpz_poly([1]) and c0 == [fmpz_poly([1]), fmpz_poly([0])]
    assert (c1, e1) == (n1, d1)
    # keys with negative logits: shifted by the row's minimum
    ((nn, dd),) = exact_attention_rows([[-3, -1]], [[1], [1]])
    assert dd == fmpz_poly([1, 0, 1]) and nn == [fmpz_poly([1, 0, 1])]


def test_exact_attention_rows_errors_name_the_input():
    with pytest.raises(AttentionInputError, match=r"^V: entries must be integers"):
        exact_attention_rows([[0, 1]], [[0.5], [1]])
    with pytest.raises(AttentionInputError, match=r"^M: entries must be integers"):
        exact_attention_rows([[0.5, 1]], [[1], [1]])
    with pytest.raises(AttentionInputError, match=r"^M, V: M \(1, 2\) has 2 keys, V \(3, 1\) has 3 rows$"):
        exact_attention_rows([[0, 1]], [[1], [1], [1]])


def test_rational_rows_equal():
    from flint import fmpz_poly

    one, t = fmpz_poly([1]), fmpz_poly([0, 1])
    assert rational_rows_equal(([one, t], t), ([t, t * t], t * t))
    assert not rational_rows_equal(([one, t], t), ([one, one], t))
    assert not rational_rows_equal(([one], t), ([one, one], t))


# -- Gaussian logits (003 定理 11.24's setting) ---------------------------------------------------------------------


def test_gaussian_logits_are_the_seeded_draws():
    rng = np.random.default_rng(7)
    q = rng.standard_normal(4)
    K = rng.standard_normal((5, 4))
    x, s2 = gaussian_logits(4, 5, 7)
    np.testing.assert_array_equal(x, K @ q / 2.0)
    assert s2 == float(q @ q) / 4
    xu, s2u = gaussian_logits(4, 5, 7, scaled=False)
    np.testing.assert_array_equal(xu, K @ q)
    assert s2u == float(q @ q)
    with pytest.raises(AttentionInputError, match=r"^d: must be"):
        gaussian_logits(0, 5, 7)
    with pytest.raises(AttentionInputError, match=r"^N: must be"):
        gaussian_logits(4, 0, 7)


def test_feature_linear_attention_value_and_every_shape_check():
    """fQ = [[1, 2]], fK = I_2, V = [[1], [3]]: numerator 1 + 6 = 7, denominator 1 + 2 = 3."""
    from attention_claims.maths import feature_linear_attention

    t = partial(torch.tensor, dtype=torch.float64)
    fQ, fK, V = t([[1.0, 2.0]]), t([[1.0, 0.0], [0.0, 1.0]]), t([[1.0], [3.0]])
    out = feature_linear_attention(fQ, fK, V)
    assert out.shape == (1, 1) and out.item() == pytest.approx(7 / 3, rel=1e-15)
    bad = [(t([1.0, 2.0]), fK, V), (fQ, t([1.0, 0.0]), V), (fQ, fK, t([1.0, 3.0])),
           (t([[1.0, 2.0, 3.0]]), fK, V), (fQ, fK, t([[1.0], [3.0], [5.0]]))]
    for a, b, c in bad:
        want = rf"^feature_linear_attention: shapes {re.escape(str(tuple(a.shape)))}, " \
               rf"{re.escape(str(tuple(b.shape)))}, {re.escape(str(tuple(c.shape)))}$"
        with pytest.raises(AttentionInputError, match=want):
            feature_linear_attention(a, b, c)


# -- resolve_mask, feature_map, row_cosines ----------------------------------------------------------------


def test_resolve_mask_none_is_a_boolean_all_true_mask_on_the_device():
    m = resolve_mask(None, 2, 3)
    assert m.dtype == torch.bool and m.shape == (2, 3) and bool(m.all())
    meta = resolve_mask(None, 2, 3, device="meta")
    assert meta.device.type == "meta" and meta.dtype == torch.bool


def test_resolve_mask_arrays_and_tensors_become_boolean():
    eye = np.eye(3, dtype=bool)
    for mask in (eye.astype(np.int64), eye.astype(np.float64), eye.tolist(), torch.eye(3),
                 torch.eye(3, dtype=torch.int64), torch.eye(3, requires_grad=True)):
        out = resolve_mask(mask, 3, 3)
        assert out.dtype == torch.bool and torch.equal(out, torch.eye(3, dtype=torch.bool)), type(mask)
    # views with negative strides (an anti-diagonal) and non-native byte order, as NumPy gives them
    anti = torch.tensor(np.eye(3, dtype=bool)[::-1].copy())
    for mask, want in ((np.eye(3, dtype=np.int64)[::-1], anti), (np.eye(3, dtype=">i8")[::-1], anti),
                       (np.eye(3, dtype=">f8"), torch.eye(3, dtype=torch.bool))):
        out = resolve_mask(mask, 3, 3)
        assert out.dtype == torch.bool and torch.equal(out, want), mask.dtype


def test_resolve_mask_boolean_view_with_negative_strides():
    # a regression: a boolean NumPy view such as causal[::-1] went to torch.as_tensor as it was, which refuses
    # negative strides (ValueError); the mask is now copied
    anti = np.eye(3, dtype=bool)[::-1]
    out = resolve_mask(anti, 3, 3)
    assert torch.equal(out, torch.tensor(anti.copy()))
    anti[0, 0] = True  # the result does not share memory with the caller's array
    assert not bool(out[0, 0])


def test_resolve_mask_refuses_a_query_row_with_no_key():
    with pytest.raises(AttentionInputError, match="^" + re.escape("mask: some query row may attend to no key (softmax undefined)") + "$"):
        resolve_mask(np.array([[True, True], [False, False]]), 2, 2)
    # a key that no query attends to is allowed (a column of False)
    out = resolve_mask(np.array([[True, False], [True, False]]), 2, 2)
    assert out.tolist() == [[True, False], [True, False]]


def test_feature_map_error_lists_the_names():
    with pytest.raises(AttentionInputError, match="^" + re.escape("feature map: unknown 'tanh' (one of identity, relu, elu+1, exp)") + "$"):
        feature_map("tanh")


def test_row_cosines_in_float64_whatever_the_input_dtype():
    A = np.array([[1.0, 2.0, 2.0], [3.0, 0.0, 4.0]])  # norms 3 and 5: cosine (3 + 8) / 15 = 11/15
    for a in (A, A.astype(np.float32), A.astype(np.float16), A.astype(np.int64)):
        C = row_cosines(a)
        assert C.dtype == np.float64
        assert C[0, 1] == C[1, 0] == pytest.approx(11 / 15, rel=1e-15, abs=0)


def test_masked_softmax_attention_uses_the_given_scale_and_device():
    for scale in (2.0, 1.0):
        out = masked_softmax_attention(Q3, K4, scale=scale).numpy()
        assert np.allclose(out, _softmax(scale * Q3 @ K4.T), rtol=1e-14, atol=0)
    meta = masked_softmax_attention(Q3, K4, device="meta")
    assert meta.device.type == "meta" and meta.shape == (3, 4)
    # a mask kind is built on the logits' device
    meta = masked_softmax_attention(Q3, Q3, mask="causal", device="meta")
    assert meta.device.type == "meta" and meta.shape == (3, 3)


def test_mp_attention_defaults_to_40_digits():
    """The reference's default precision is the documented 40 digits: the same numbers as dps=40, which
    differ from 41 digits' in the last places."""
    import mpmath

    from attention_claims.maths.attention import mp_attention

    default, forty, more = mp_attention(Q3, K4), mp_attention(Q3, K4, dps=40), mp_attention(Q3, K4, dps=41)
    assert all(default[i, j] == forty[i, j] for i in range(3) for j in range(4))
    with mpmath.workdps(60):
        assert any(default[i, j] != more[i, j] for i in range(3) for j in range(4))


# -- logits, causal_mask, softmax_attention, causal_logit_gap ------------------------------------------------


def test_logits_names_q_and_k_in_its_errors():
    """The message starts with the argument's name, in its case (``Q`` and ``K``, not ``q``/``k``)."""
    with pytest.raises(AttentionInputError, match=r"^Q: contains NaN or Inf$"):
        logits([[np.nan, 1.0]], K4)
    with pytest.raises(AttentionInputError, match=r"^K: contains NaN or Inf$"):
        logits(Q3, [[1.0, np.inf]])
    with pytest.raises(AttentionInputError, match=r"^K: expected 2 dimensions, got shape \(2,\)$"):
        logits(Q3, [1.0, 2.0])


def test_causal_mask_square_default_and_errors_name_n_and_m():
    """``M`` defaults to ``N``: the (N, N) lower triangle; a bad ``N`` or ``M`` is named, in its case."""
    assert causal_mask(3).tolist() == [[True, False, False], [True, True, False], [True, True, True]]
    assert causal_mask(3, None).shape == (3, 3)
    with pytest.raises(AttentionInputError, match=r"^N: must be a positive integer, got 0$"):
        causal_mask(0)
    with pytest.raises(AttentionInputError, match=r"^M: must be a positive integer, got 0$"):
        causal_mask(2, 0)


def test_softmax_attention_causal_on_rectangular_logits():
    """N = 3 queries, M = 4 keys: the causal mask is j <= i on the (3, 4) logits (not a square mask of
    side N or M), each row renormalised over its kept keys; rows sum to 1 along the keys."""
    z = Q3 @ K4.T / math.sqrt(2)
    want = np.where(np.tril(np.ones((3, 4), dtype=bool)), np.exp(z - z.max(axis=1, keepdims=True)), 0.0)
    want = want / want.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(softmax_attention(Q3, K4, causal=True).numpy(), want, rtol=1e-14, atol=0)
    np.testing.assert_allclose(softmax_attention(K4, Q3, causal=True).numpy().sum(axis=1), np.ones(4), rtol=1e-15)


def test_softmax_attention_builds_logits_and_mask_on_the_device():
    """On the meta device (shapes only) every tensor of the computation must be there: the logits and the
    causal mask alike (a CPU mask meeting meta logits is an error)."""
    for causal in (False, True):
        out = softmax_attention(Q3, K4, causal=causal, device="meta")
        assert out.device.type == "meta" and tuple(out.shape) == (3, 4)


def test_causal_logit_gap_is_the_exact_difference_whatever_the_input_dtype():
    """The gap is computed in float64: a float32 row [1, 2^-30] has gap 1 - 2^-30 exactly (float32 would
    round it to 1), a float16 row [60000, -60000] has gap 120000 (float16 overflows to inf)."""
    z32 = np.array([[0.0, 5.0], [1.0, 2.0**-30]], dtype=np.float32)
    assert causal_logit_gap(z32) == 1.0 - 2.0**-30
    assert causal_logit_gap(torch.tensor(z32)) == 1.0 - 2.0**-30
    z16 = np.array([[0.0, 0.0], [60000.0, -60000.0]], dtype=np.float16)
    assert causal_logit_gap(z16) == 120000.0


@pytest.mark.parametrize("z, words", [
    (np.zeros((3, 2)), r"^z: expected a square matrix, got shape \(3, 2\)$"),
    (np.zeros((2, 3)), r"^z: expected a square matrix, got shape \(2, 3\)$"),
    (np.zeros(3), r"^z: "),
    (np.array([[0.0, 1.0], [np.nan, 0.0]]), r"^z: contains NaN"),
])
def test_causal_logit_gap_refuses_logits_that_are_not_square_and_finite(z, words):
    """Non-square logits used to raise a bare IndexError (N > M) or be read silently (N < M), and a
    NaN gave a meaningless gap: now each is an error naming ``z``."""
    with pytest.raises(AttentionInputError, match=words):
        causal_logit_gap(z)
