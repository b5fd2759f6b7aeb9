"""attention_claims.maths.rounding: Higham's gamma_n bounds as a Tolerance with its derivation."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attention_claims.maths.rounding import (
    Tolerance,
    dot_tolerance,
    dtype_name,
    gamma,
    matmul_tolerance,
    representation_tolerance,
    sum_tolerance,
    unit_roundoff,
    within_rounding,
)


class _Log:
    def __init__(self):
        self.notes, self.tracked = [], {}

    def note(self, text):
        self.notes.append(text)

    def track(self, name, value):
        self.tracked[name] = value


def test_unit_roundoff_of_every_dtype_and_spelling():
    assert [unit_roundoff(d) for d in ("float64", "float32", "float16", "bfloat16")] == [2**-53, 2**-24, 2**-11, 2**-8]
    assert unit_roundoff(torch.bfloat16) == 2**-8 and unit_roundoff(np.dtype("float32")) == 2**-24
    # u is half of the spacing at 1 that torch reports
    for d in (torch.float64, torch.float32, torch.float16, torch.bfloat16):
        assert unit_roundoff(d) == torch.finfo(d).eps / 2
    assert dtype_name(torch.float16) == "float16"
    with pytest.raises(ValueError, match="unknown dtype 'int8'"):
        unit_roundoff("int8")


def test_gamma_is_lemma_3_1_and_refuses_where_it_does_not_exist():
    assert gamma(0, "float32") == 0
    assert gamma(3, "float16") == 3 * 2**-11 / (1 - 3 * 2**-11)
    assert gamma(255, "bfloat16") == pytest.approx(255 / 256 / (1 / 256))
    with pytest.raises(ValueError, match="gamma_256 does not exist in bfloat16"):
        gamma(256, "bfloat16")
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="non-negative integer"):
            gamma(bad, "float32")


def test_tolerance_validates_adds_and_is_stated():
    with pytest.raises(ValueError, match=">= 0"):
        Tolerance(-1.0, "x")
    with pytest.raises(ValueError, match=">= 0"):
        Tolerance(math.nan, "x")
    with pytest.raises(ValueError, match="derivation"):
        Tolerance(1.0, " ")
    t = Tolerance(1.0, "a") + Tolerance(0.5, "b")
    assert float(t) == 1.5 and t.derivation == "a + b"
    log = _Log()
    t.state(log)
    assert log.notes == ["tolerance: 1.5 (a + b)"]
    assert t.excess([0.75, -1.5]) == 1.0 and t.excess([]) == 0.0 and t.excess([math.nan]) == math.inf
    assert Tolerance(0.0, "exact").excess(1e-300) == math.inf and Tolerance(0.0, "exact").excess(0.0) == 0.0


def test_within_rounding_needs_a_derived_tolerance_and_states_it():
    with pytest.raises(TypeError, match="needs a Tolerance"):
        within_rounding(1.0, 1.0, 1e-6)
    with pytest.raises(ValueError, match="do not broadcast"):
        within_rounding(np.zeros(2), np.zeros(3), Tolerance(1.0, "x"))
    log = _Log()
    t = sum_tolerance(4, "float32", 2.0)
    assert within_rounding(1.0 + t.value, 1.0, t, log)
    assert not within_rounding(1.0 + 2.01 * t.value, 1.0, t)
    assert not within_rounding(math.nan, 1.0, t)
    assert log.notes[0].startswith("tolerance: ") and "gamma_3" in log.notes[0] and "Higham" in log.notes[0]
    assert log.tracked["error / rounding tolerance"] == pytest.approx(1.0)


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=300), st.sampled_from(["float32", "float16", "bfloat16"]))
def test_sum_bound_holds_for_any_order_torch_uses(xs, dtype):
    # terms already representable in the dtype; the exact sum by rationals; the computed by torch in dtype
    t = torch.tensor(xs, dtype=getattr(torch, dtype))
    if not torch.isfinite(t).all():
        return
    exact = sum(Fraction(v) for v in t.double().tolist())
    n = len(xs)
    if (n - 1) * unit_roundoff(dtype) >= 1:
        return
    got = t.sum(dtype=getattr(torch, dtype)).double().item()
    tol = sum_tolerance(n, dtype, float(t.double().abs().sum()))
    if math.isfinite(got):
        assert abs(Fraction(got) - exact) <= Fraction(tol.value) * (1 + Fraction(1, 10**9)), (got, float(exact), tol)


@given(st.integers(1, 64), st.integers(0, 2**32 - 1))
def test_matmul_and_dot_bounds_hold_in_float32(n, seed):
    rng = np.random.default_rng(seed)
    A, B = rng.standard_normal((5, n)).astype(np.float32), rng.standard_normal((n, 3)).astype(np.float32)
    got = (torch.from_numpy(A) @ torch.from_numpy(B)).double().numpy()
    exact = A.astype(np.float64) @ B.astype(np.float64)  # products of float32s exact in float64; sums to 2^-53
    mag = np.abs(A).astype(np.float64) @ np.abs(B).astype(np.float64)
    tol = matmul_tolerance(n, "float32", float(mag.max())) + Tolerance(n * 2**-53 * float(mag.max()), "float64 reference")
    assert within_rounding(got, exact, tol)
    d = dot_tolerance(n, "float32", float(mag[0, 0]))
    assert abs(got[0, 0] - exact[0, 0]) <= d.value + n * 2**-53 * float(mag[0, 0])


def test_representation_bound_covers_underflow():
    x = np.array([1 / 3, 1e-9], dtype=np.float64)  # 1e-9 is below float16's smallest subnormal/2: rounds to 0
    r = torch.tensor(x).to(torch.float16).double().numpy()
    assert r[1] == 0
    assert within_rounding(r.sum(), x.sum(), representation_tolerance("float16", float(x.sum()), count=2))
    # without the underflow term, the relative bound alone would not cover a value that rounded to 0
    assert abs(r[1] - x[1]) > unit_roundoff("float16") * x[1]
    with pytest.raises(ValueError, match="count"):
        representation_tolerance("float16", 1.0, count=-1)
    with pytest.raises(ValueError, match="magnitude"):
        representation_tolerance("float16", -1.0)


def test_derived_bound_catches_what_the_literal_tolerance_let_through():
    # lemma-11-33-row-stochastic in bfloat16 allowed (N + 2) eps = 514 * 2^-7 = 4.02 at N = 512: a row of
    # zeros (off by 1) and a row summing to 2 passed. The derived bound (each stored entry is the float32
    # softmax rounded once to bfloat16, and the float32 softmax is within gamma_(N+3)(float32) of 1) is
    # about half an ulp of bfloat16 and rejects both.
    N, eps = 512, float(torch.finfo(torch.bfloat16).eps)
    literal = (N + 2) * eps
    derived = representation_tolerance("bfloat16", 1.0, count=N) + sum_tolerance(N + 4, "float32", 1.0)
    for wrong in (0.0, 2.0):
        assert abs(wrong - 1) <= literal
        assert not within_rounding(wrong, 1.0, derived)
    assert derived.value < 0.51 * eps


def test_entrywise_tolerance_from_arrays_and_tensors():
    A = torch.tensor([[1.0, -2.0], [3.0, 4.0]], dtype=torch.float32)
    B = torch.tensor([[0.5, 1.0], [-1.0, 2.0]], dtype=torch.float32)
    mag = A.double().abs() @ B.double().abs()
    tol = matmul_tolerance(2, "float32", mag)  # an entrywise bound, accepted as a tensor
    assert isinstance(tol.value, np.ndarray) and tol.value.shape == (2, 2) and not tol.value.flags.writeable
    assert str(tol).startswith("entrywise, up to ") and "entrywise" in tol.derivation
    exact = A.double() @ B.double()
    assert within_rounding(A @ B, exact, tol)
    # an error on the small entry (0,0) that a bound by the largest entry would let through
    wrong = exact.clone()
    wrong[0, 0] += 2 * tol.value[0, 0]
    assert wrong[0, 0] - exact[0, 0] < tol.largest
    assert not within_rounding(wrong, exact, tol)
    with pytest.raises(TypeError, match="not one number"):
        float(tol)
    with pytest.raises(ValueError, match="against a bound of shape"):
        tol.excess(np.zeros(3))
    with pytest.raises(ValueError, match="magnitude"):
        matmul_tolerance(2, "float32", np.array([1.0, -1.0]))


def test_attention_output_bound_holds_for_cpu_flash_and_catches_a_wrong_mask():
    from attention_claims.maths.rounding import attention_output_tolerance

    rng = np.random.default_rng(0)
    for _ in range(40):
        N, d, s = int(rng.integers(2, 33)), 16, 10 ** rng.uniform(-2, 1.5)
        Q, K, V = rng.standard_normal((N, d)) * s, rng.standard_normal((N, d)), rng.standard_normal((N, d))
        q, k, v = (torch.as_tensor(x).to(torch.float16) for x in (Q, K, V))
        Qr, Kr, Vr = (x.double().numpy() for x in (q, k, v))
        z = Qr @ Kr.T / math.sqrt(d) + np.triu(np.full((N, N), -np.inf), 1)
        ref = np.exp(z - z.max(1, keepdims=True)) / np.exp(z - z.max(1, keepdims=True)).sum(1, keepdims=True) @ Vr
        out = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
            q[None, None], k[None, None], v[None, None], is_causal=True)[0][0, 0].double().numpy()
        L = (np.abs(Qr) @ np.abs(Kr).T).max(axis=1) / math.sqrt(d) * (1 + 2.0**-50)
        tol = attention_output_tolerance(L, 1.0, d, N, "float32", u=2.0**-23, exp_ulps=2, logit_roundings=5,
                                         stored="float16", rescalings=N, output="float16", flush=2.0**-126)
        vmax = np.abs(Vr).max()
        assert tol.excess((out - ref) / vmax) <= 1
        unmasked = torch.softmax(torch.as_tensor(Qr @ Kr.T / math.sqrt(d)), -1).numpy() @ Vr
        assert tol.excess((unmasked - ref) / vmax) > 10


def test_softmax_and_output_bounds_refuse_bad_input_and_state_their_derivation():
    from attention_claims.maths.rounding import attention_output_tolerance, softmax_tolerance

    tau = softmax_tolerance(10.0, 8, 8, "float64")
    assert 0 < float(tau) < 1e-12 and "gamma_8" in tau.derivation and "Higham" in tau.derivation
    assert softmax_tolerance(np.array([1.0, 2.0]), 8, 8, "float64").value.shape == (2, 1)
    for bad in ({"d": 0}, {"n": 0}, {"u": 2.0}):
        kw = {"d": 8, "n": 8, **bad}
        with pytest.raises(ValueError):
            softmax_tolerance(1.0, kw.pop("d"), kw.pop("n"), "float32", **kw)
    with pytest.raises(ValueError):
        attention_output_tolerance(1.0, 1.0, 8, 8, "float32", rescalings=-1)
    with pytest.raises(ValueError):
        attention_output_tolerance(-1.0, 1.0, 8, 8, "float32")


def _spread_softmax(dtype, n, lowest):
    """torch's CPU softmax of ``n`` logits spread evenly over ``[lowest, 0]`` (so the lowest exps underflow),
    the logits as stored in ``dtype``, and the exact weights of those logits in 40-digit mpmath."""
    import mpmath

    z = torch.linspace(0.0, lowest, n, dtype=torch.float64).to(dtype)
    p_hat = torch.softmax(z, -1).double().numpy()
    with mpmath.workdps(40):
        exps = [mpmath.exp(mpmath.mpf(float(x))) for x in z.double()]  # the max is 0: exp(z - max) = exp(z)
        total = mpmath.fsum(exps)
        exact = [x / total for x in exps]
    return z.double().numpy(), p_hat, exact


def _violations(p_hat, exact, tau, absolute):
    """Indices ``j`` with ``|p_hat_j - p_j| > tau p_j + absolute``, decided in 40-digit mpmath (a float64
    difference of subnormals would itself round by up to half the smallest subnormal)."""
    import mpmath

    with mpmath.workdps(40):
        t, a = mpmath.mpf(float(tau)), mpmath.mpf(absolute)
        return [j for j, (c, x) in enumerate(zip(p_hat, exact, strict=True))
                if abs(mpmath.mpf(float(c)) - x) > t * x + a]


@pytest.mark.parametrize("dtype,lowest,smallest_normal", [(torch.float64, -760.0, 2.0**-1022),
                                                          (torch.float32, -112.0, 2.0**-126)])
def test_softmax_bound_covers_exps_that_underflow(dtype, lowest, smallest_normal):
    """Logits spread down to below ln(smallest subnormal): the lowest exps are subnormal or 0 and keep no relative
    accuracy. The relative part tau alone (the bound before the absolute term) is violated there; tau p + a
    holds on every weight against 40-digit mpmath, and a weight moved by 2a is caught."""
    from attention_claims.maths.rounding import SMALLEST_SUBNORMAL, softmax_tolerance

    name = str(dtype).removeprefix("torch.")
    n = 64
    z, p_hat, exact = _spread_softmax(dtype, n, lowest)
    tol = softmax_tolerance(float(np.abs(z).max()), 1, n, name)
    tiny = [j for j, x in enumerate(exact) if x < smallest_normal]
    assert len(tiny) >= 4 and any(p_hat[j] == 0 for j in tiny) and any(0 < p_hat[j] < smallest_normal for j in tiny)
    assert _violations(p_hat, exact, tol.value, 0.0)  # relative only: fails on the underflowed weights
    assert _violations(p_hat, exact, tol.value, tol.absolute) == []
    assert tol.absolute <= (n + 3) * SMALLEST_SUBNORMAL[name]  # a few subnormals, not a loose allowance
    assert tol.around([float(x) for x in exact]).excess(p_hat - np.array([float(x) for x in exact])) <= 1
    wrong = p_hat.copy()
    wrong[tiny[-1]] += 2 * tol.absolute  # a wrong weight where the absolute term is all the allowance
    assert _violations(wrong, exact, tol.value, tol.absolute) == [tiny[-1]]


def test_softmax_bound_under_flush_to_zero():
    """Subnormal results flushed to 0 (as a GPU's -ftz would) are off by up to the smallest normal: the
    gradual-underflow bound does not cover them, the bound with flush = 2^-126 does."""
    from attention_claims.maths.rounding import softmax_tolerance

    z, p_hat, exact = _spread_softmax(torch.float32, 64, -100.0)
    flushed = np.where(np.abs(p_hat) < 2.0**-126, 0.0, p_hat)
    assert (flushed != p_hat).any()
    L = float(np.abs(z).max())
    gradual, ftz = softmax_tolerance(L, 1, 64, "float32"), softmax_tolerance(L, 1, 64, "float32", flush=2.0**-126)
    assert _violations(flushed, exact, gradual.value, gradual.absolute)
    assert _violations(flushed, exact, ftz.value, ftz.absolute) == []
    assert ftz.value == gradual.value and "flushed" in ftz.derivation and "gradual" in gradual.derivation


def test_softmax_tolerance_is_not_an_absolute_tolerance():
    from attention_claims.maths.rounding import (
        SMALLEST_SUBNORMAL,
        SoftmaxTolerance,
        row_stochastic_sigma1_bounds,
        softmax_tolerance,
    )

    tol = softmax_tolerance(np.array([1.0, 2.0]), 4, 3, "float64")
    assert isinstance(tol, SoftmaxTolerance) and not isinstance(tol, Tolerance)
    with pytest.raises(TypeError, match=r"\.around"):
        within_rounding(0.5, 0.5, tol)
    with pytest.raises(TypeError, match="not one number"):
        float(tol)
    assert tol.around(np.full((2, 3), 1 / 3)).value.shape == (2, 3)
    with pytest.raises(ValueError, match="broadcast|shape"):
        tol.around(np.ones((3, 4)))
    with pytest.raises(ValueError, match="finite"):
        tol.around([np.nan])
    with pytest.raises(ValueError, match="flush"):
        softmax_tolerance(1.0, 4, 3, "float64", flush=-1.0)
    with pytest.raises(ValueError, match="absolute"):
        SoftmaxTolerance(0.1, -1.0, "planted")
    log = _Log()
    tol.state(log)
    assert log.notes[0].startswith("tolerance: relative up to") and "absolute" in log.notes[0]
    one = softmax_tolerance(2.0, 4, 3, "float64")
    A = np.array([[1.0, 0.0, 0.0]] * 3)  # exps that underflowed to 0
    b = row_stochastic_sigma1_bounds(A, one)  # the absolute term is taken from the softmax bound by default
    assert b.row_sum_bound == Fraction(float(one)) + 3 * Fraction(one.absolute)
    assert one.absolute > SMALLEST_SUBNORMAL["float64"]
    assert row_stochastic_sigma1_bounds(A, one, absolute=0.0).row_sum_bound == Fraction(float(one))


def test_attention_output_bound_covers_a_subnormal_value_matrix():
    """A review's case: V = [[s], [0]] with weights 1/2, 1/2 in float64 (s the smallest subnormal): the exact
    output s/2 is computed as 0 (the product underflows), and the bound had no absolute term for products, so
    it was 0; and with max|V| = 2^-24 rounded to float16 the output's rounding alone costs 2^-25. Both are
    covered now, and the bound for an ordinary V is unchanged to within a few subnormals."""
    from attention_claims.maths.rounding import attention_output_tolerance

    s64 = 2.0 ** -1074
    p = torch.softmax(torch.zeros(2, dtype=torch.float64), -1)
    out = float(p @ torch.tensor([s64, 0.0], dtype=torch.float64))
    assert out == 0.0  # the product p_1 s rounds to 0 (round half to even)
    bound = float(attention_output_tolerance(0.0, s64, 1, 2, "float64").value)
    assert Fraction(bound) >= Fraction(1, 2**1075)  # s/2 exactly (in float64 s64 / 2 rounds to 0)
    tiny = 2.0 ** -24
    bound16 = float(attention_output_tolerance(0.0, tiny, 1, 2, "float32", output="float16").value)
    assert bound16 >= 2.0 ** -25
    ordinary = float(attention_output_tolerance(3.0, 1.0, 8, 64, "float64").value)
    assert ordinary < 1e-12 and ordinary > 0
