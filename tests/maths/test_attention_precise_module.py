"""attention_claims.maths.attention in high precision: mp_softmax, mp_softmax_entry, mp_attention (mpmath) and
arb_logits, arb_softmax_attention (python-flint arb), against values computed by hand and re-derived in mpmath,
and the errors each names (issue 24, mutation testing: each test here fails on a mutant of the module that the
rest of the suite let through)."""

from __future__ import annotations

import re

import mpmath
import numpy as np
import pytest
from flint import arb

from attention_claims.maths import (
    AttentionInputError,
    arb_logits,
    arb_softmax_attention,
    arb_softmax_rows,
    mp_attention,
    mp_softmax,
    mp_softmax_entry,
    precision,
)

NAN_ROW = [[np.nan, 1.0]]
Q3 = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, -1.0]])  # N = 3, d = 2
K4 = np.array([[1.0, 0.5], [-1.0, 2.0], [0.0, 0.0], [3.0, -2.0]])  # M = 4


# -- errors name the argument at fault (the project's rule: a clear error naming the field) --------------------


@pytest.mark.parametrize("fn", [mp_attention, arb_logits, arb_softmax_attention])
@pytest.mark.parametrize(("args", "message"), [
    ((NAN_ROW, K4), "Q: contains NaN or Inf"),
    ((Q3, NAN_ROW), "K: contains NaN or Inf"),
    ((Q3, np.ones((4, 3))), "Q, K: head dimensions differ (2 vs 3)"),
])
def test_q_and_k_errors_name_the_argument(fn, args, message):
    with pytest.raises(AttentionInputError, match="^" + re.escape(message) + "$"):
        fn(*args)


@pytest.mark.parametrize(("V", "message"), [
    ([[np.inf, 0.0]] * 4, "V: contains NaN or Inf"),
    # V (3, 5) against M = 4 keys of d = 2: the rows of V (3) against the rows of K (4), no column count
    (np.ones((3, 5)), "V: expected 4 rows, got 3"),
])
def test_mp_attention_value_errors_name_v(V, message):
    with pytest.raises(AttentionInputError, match="^" + re.escape(message) + "$"):
        mp_attention(Q3, K4, V)


# -- mpmath ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dps", [15, 40, 50])
def test_mp_softmax_of_equal_logits_is_exactly_one_nth(dps):
    """Equal logits x: every term is e^(x - max) = e^0 = 1 exactly, so each entry is 1/3 rounded once, at any x
    (the maximum subtracted; a shift by +max rounds e^(2x) and its sum first)."""
    with mpmath.workdps(dps):
        third = mpmath.mpf(1) / 3
        for x in (0.5, 1.0, 2.0, 3.0, 10.0):
            assert mp_softmax([x, x, x]) == [third] * 3
            assert mp_softmax_entry([x, x, x], 1, dps=dps) == third


def test_mp_softmax_entry_defaults_to_50_digits():
    """The default precision is the documented 50 digits: the same number as dps=50, which differs from 51
    digits' in the last places."""
    z = [0.0, 1.0, 2.5]
    default, fifty, more = mp_softmax_entry(z, 2), mp_softmax_entry(z, 2, dps=50), mp_softmax_entry(z, 2, dps=51)
    assert default == fifty
    with mpmath.workdps(70):
        assert default != more


# Q (2, 4), K (3, 4): with the default scale 1/sqrt(4) = 1/2 the logits are [[0, 1, 0], [0, 0, 2]].
QD = np.array([[2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 4.0]])
KD = np.array([[0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]])


def _mp_rows(Z):
    """softmax of each row of Z, written out: [e^z_j / sum_l e^z_l] (mpmath, current precision)."""
    out = []
    for z in Z:
        e = [mpmath.exp(mpmath.mpf(v)) for v in z]
        out.append([x / mpmath.fsum(e) for x in e])
    return out


def _assert_close(A, ref, digits):
    assert (A.rows, A.cols) == (len(ref), len(ref[0]))
    for i, row in enumerate(ref):
        for j, r in enumerate(row):
            assert abs(A[i, j] - r) <= mpmath.mpf(10) ** -digits, (i, j)


@pytest.mark.parametrize(("scale", "Z"), [
    (None, [[0, 1, 0], [0, 0, 2]]),  # 1/sqrt(d), d = 4
    (2, [[0, 4, 0], [0, 0, 8]]),
    (mpmath.mpf(1) / 3, [[0, mpmath.mpf(2) / 3, 0], [0, 0, mpmath.mpf(4) / 3]]),
])
def test_mp_attention_values_shape_and_scale(scale, Z):
    """N = 2 queries and M = 3 keys give a (2, 3) matrix (not (M, M)), at the given scale or 1/sqrt(d)."""
    A = mp_attention(QD, KD, scale=scale)
    with mpmath.workdps(40):
        _assert_close(A, _mp_rows(Z), 38)


def test_mp_attention_times_v():
    """With V (M, d_v) = (3, 2) the result is the (2, 2) product softmax(...) V."""
    V = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 3.0]])
    AV = mp_attention(QD, KD, V)
    with mpmath.workdps(40):
        P = _mp_rows([[0, 1, 0], [0, 0, 2]])
        ref = [[mpmath.fsum(p[m] * V[m, c] for m in range(3)) for c in range(2)] for p in P]
        _assert_close(AV, ref, 38)


# -- arb -------------------------------------------------------------------------------------------------------


def test_arb_logits_scale_is_exact_at_d_4():
    """d = 4: 1/sqrt(4) = 1/2 exactly, so the logits are exact points: Q K^T = [[10, 6]] halved."""
    Q = [[1.0, 2.0, 3.0, 4.0]]
    K = [[1.0, 1.0, 1.0, 1.0], [0.0, -1.0, 0.0, 2.0]]
    for scale, want in (("sqrt_d", [5, 3]), (0.25, [2.5, 1.5]), (3.0, [30, 18])):
        z = arb_logits(Q, K, scale)
        assert len(z) == 1 and len(z[0]) == 2
        for got, w in zip(z[0], want, strict=True):
            assert got.is_exact() and got == arb(w), (scale, got, w)


@pytest.mark.parametrize(("scale", "z1"), [("sqrt_d", 1 / mpmath.sqrt(2)), (2.0, 2)])
def test_arb_softmax_attention_uses_the_scale(scale, z1):
    """Q = [[1, 0]], K = [[0, 0], [1, 0]]: logits [0, scale]; certified enclosures of [1, e^z1] / (1 + e^z1)."""
    A = arb_softmax_attention([[1.0, 0.0]], [[0.0, 0.0], [1.0, 0.0]], scale=scale)
    with mpmath.workdps(40):
        ref = _mp_rows([[0, z1]])[0]
    for j in range(2):
        assert A[0, j].rad() < 1e-14
        assert A[0, j].overlaps(arb(mpmath.nstr(ref[j], 40))), (j, A[0, j], ref[j])


BIG = arb(2) ** 1100  # exact, beyond the float range (float(BIG) is inf)


@pytest.mark.parametrize("z", [[BIG, 2 * BIG], [-2 * BIG, -BIG], [-BIG, BIG]])
def test_arb_softmax_rows_shifts_by_the_largest_midpoint_beyond_the_float_range(z):
    """Two logits at least 2^1100 apart, both beyond the float range: the softmax is [e^-2^1100, 1] up to far
    less than any rounding. The shift must be the largest midpoint (the second); shifting by the first
    (the first of two infinite floats) takes exp(+2^1100), whose enclosure is [+/- inf], and leaves only
    NaN. Also row 1 of a causal (2, 2) matrix, which sees both keys."""
    for A, i in ((arb_softmax_rows([z]), 0), (arb_softmax_rows([[z[0], arb(0)], z], causal=True), 1)):
        assert A[i, 0].contains(0) and A[i, 0] < arb(2) ** -1000, A
        assert A[i, 1].contains(1) and A[i, 1].rad() < 1e-15, A


def test_arb_softmax_attention_beyond_the_float_range_at_200_bits():
    """Q = [[1e200]], K = [[1e200], [2e200]], scale 1: logits 1e400 and 2e400, exact products at 200 bits;
    the largest (second) is the shift, and the row is enclosed as [e^-1e400, 1] instead of NaN."""
    with precision(200):
        A = arb_softmax_attention([[1e200]], [[1e200], [2e200]], scale=1.0)
        assert A[0, 0].contains(0) and A[0, 0] < arb(10) ** -1000, A
        assert A[0, 1].contains(1) and A[0, 1].rad() < 1e-50, A
