"""More claims of kexue.fm/archives/9889 (004): the relu² closed form and its behaviour in beta,
the identity case's lower bound, and the factor ||q||_2/||q||_1 of the linear case."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, note, target
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from claims import profiles
from claims.evidence import refute
from claims.sparsity import s_reference, s_relu2
from claims.testing import log_uniform

REL_25 = mpmath.mpf("1e-25")  # closed form vs 40-digit quadrature


@pytest.mark.claim("sparsity-relu2-closed-form", reading="mpmath-reference")
@given(ratio=st.floats(-30, 30), gamma=log_uniform(-3, 3))
@profiles.scaled(0.25)
def test_relu2_closed_form(ratio, gamma, claim_log):
    beta = ratio * gamma
    with mpmath.workdps(45):
        ref = s_reference("relu2", beta, gamma)
        closed = s_relu2(beta, gamma)
        err = abs(closed - ref) / ref
        violated = bool(err > REL_25)
    claim_log.example(beta_over_gamma=ratio, gamma=gamma)
    note(f"beta={beta!r} gamma={gamma!r} closed={mpmath.nstr(closed, 30)} quad={mpmath.nstr(ref, 30)}")
    if violated:
        refute(f"printed relu^2 closed form {mpmath.nstr(closed, 20)} vs quadrature {mpmath.nstr(ref, 20)} "
               f"(beta={beta}, gamma={gamma})", example={"beta": beta, "gamma": gamma}, certified=True,
               certificate=f"40-digit quadrature; relative difference {mpmath.nstr(err, 5)} > 1e-25")
    claim_log.note("Tolerance: relative 1e-25 against 40-digit quadrature over the support X > 0.")


@pytest.mark.claim("sparsity-relu2-sparse-only-for-negative-bias", reading="mpmath-reference")
@given(ratio=st.floats(0, 30), gamma=log_uniform(-2, 2))
@profiles.scaled(0.25)
def test_relu2_bounded_below_for_nonnegative_beta(ratio, gamma, claim_log, claimed):
    with mpmath.workdps(45):
        bound = claimed.eval("lower_bound_nonnegative_beta")
        s = s_reference("relu2", ratio * gamma, gamma)
        at_zero = s_reference("relu2", 0, gamma)
        tail = [s_reference("relu2", -r * gamma, gamma) for r in range(0, 31, 3)]
        # compare at 45 digits (outside this block mpmath works at 15)
        violated = bool(s < bound * (1 - REL_25) or abs(at_zero - bound) > REL_25 * bound)
        not_vanishing = not all(b < a for a, b in zip(tail, tail[1:], strict=False)) or not tail[2] < mpmath.mpf("1e-3")
    target(-float(s - bound), label="-(S - bound)")
    claim_log.example(beta_over_gamma=ratio, S=float(s))
    if violated:
        refute(f"beta/gamma = {ratio}: S = {mpmath.nstr(s, 15)} vs claimed bound {claimed.text('lower_bound_nonnegative_beta')} "
               f"= {mpmath.nstr(bound, 15)} (S at beta = 0: {mpmath.nstr(at_zero, 15)})",
               example={"beta_over_gamma": ratio, "gamma": gamma}, certified=True, certificate="40-digit quadrature")
    if not_vanishing:
        refute("S does not decrease to 0 along beta/gamma = 0, -3, ..., -30",
               example={"S": [mpmath.nstr(x, 6) for x in tail]}, certified=True, certificate="40-digit quadrature")
    claim_log.note("S(beta=0) = 1/sqrt(6) exactly; for beta < 0, S falls to "
                   f"{mpmath.nstr(tail[-1], 3)} at beta/gamma = -30 (40-digit quadrature).")


@pytest.mark.claim("sparsity-identity-lower-bound", reading="mpmath-reference")
@given(beta=st.floats(-1e3, 1e3), gamma=log_uniform(-3, 3))
@profiles.scaled(0.25)
def test_identity_lower_bound(beta, gamma, claim_log, claimed):
    with mpmath.workdps(45):
        bound = claimed.eval("lower_bound")
        s = s_reference("identity", beta, gamma)
        at_zero = s_reference("identity", 0, gamma)
        # compare at 45 digits (outside this block mpmath works at 15)
        violated = bool(s < bound * (1 - REL_25) or abs(at_zero - bound) > REL_25 * bound)
    target(-float(s - bound), label="-(S - bound)")
    claim_log.example(beta=beta, gamma=gamma, S=float(s))
    if violated:
        refute(f"S(beta={beta}, gamma={gamma}) = {mpmath.nstr(s, 15)}, S(0, gamma) = {mpmath.nstr(at_zero, 15)}; "
               f"claimed infimum {claimed.text('lower_bound')} = {mpmath.nstr(bound, 15)}",
               example={"beta": beta, "gamma": gamma}, certified=True, certificate="40-digit quadrature")


@pytest.mark.claim("sparsity-linear-factor-max-sqrt-d", reading="exact")
@given(q=hnp.arrays(np.float64, st.integers(1, 64), elements=st.floats(0, 10)).filter(lambda a: a.any()))
def test_linear_factor_maximum(q, claim_log, claimed):
    d = q.size
    ratio = float(np.linalg.norm(q, 2) / np.linalg.norm(q, 1))
    claimed_max = float(claimed.eval("maximum", d=mpmath.mpf(d)))
    claim_log.example(d=d, ratio=ratio)
    assert ratio <= 1 + 1e-15, "||q||_2 <= ||q||_1 (triangle inequality) must hold for every q"
    # the true maximum over q in R^d, q >= 0, q != 0 is 1, attained at a one-hot q
    if abs(claimed_max - 1) > 1e-12:
        refute(f"d = {d}: the maximum of ||q||_2/||q||_1 is 1 (one-hot q; the minimum 1/sqrt(d) at constant q), "
               f"not {claimed.text('maximum')} = {claimed_max:.6g}",
               example={"d": d, "q_drawn": q, "ratio_drawn": ratio, "one_hot_ratio": 1.0,
                        "constant_ratio": 1 / math.sqrt(d)},
               certified=True, certificate="exact: ||q||_2^2 = sum q_i^2 <= (sum |q_i|)^2 = ||q||_1^2, equality iff "
                                            "at most one q_i != 0; sqrt(d) = 1 only for d = 1")
