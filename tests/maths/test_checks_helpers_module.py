"""Unit tests of the small maths helpers the checks share (moved out of ``checks/``):
conversions and relative error (:mod:`attention_claims.maths.exact`), the float64 attention
matrix, causal logit gap and row cosines (:mod:`attention_claims.maths.attention`), and the
30-digit effective rank of a stored matrix (:mod:`attention_claims.maths.spectrum`)."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest
from flint import fmpq

from attention_claims.maths import (
    attention_matrix,
    causal_logit_gap,
    decimal_fraction,
    effective_rank,
    fraction_to_fmpq,
    fraction_to_mpf,
    mp_matrix_effective_rank,
    relative_error,
    row_cosines,
)


def test_fraction_conversions():
    assert fraction_to_fmpq(Fraction(-7, 3)) == fmpq(-7, 3)
    with mpmath.workdps(40):
        assert abs(fraction_to_mpf(Fraction(1, 3)) - mpmath.mpf(1) / 3) < mpmath.mpf(10) ** -39


@pytest.mark.parametrize("x", [Fraction(0), Fraction(-12, 1), Fraction(3, 2**80), Fraction(-(5**40) << 300, 3 << 7),
                               Fraction(3**2000 << 4000, 7**900 << 3000), Fraction(2**-1074)])
def test_fraction_to_mpf_is_correctly_rounded(x):
    # against the quotient at 400 extra bits, rounded once: the same number, bit for bit
    with mpmath.workprec(133):
        got = fraction_to_mpf(x)
        with mpmath.workprec(133 + 400 + x.numerator.bit_length() + x.denominator.bit_length()):
            wide = mpmath.mpf(x.numerator) / x.denominator  # exact enough that one rounding below is correct
        assert got == +wide


def test_decimal_fraction_reads_floats_as_written():
    assert decimal_fraction(0.1) == Fraction(1, 10) != Fraction(0.1)
    assert decimal_fraction(3) == 3 and decimal_fraction(Fraction(2, 7)) == Fraction(2, 7)


def test_relative_error():
    assert relative_error(Fraction(11, 10), Fraction(1)) == Fraction(1, 10)
    with pytest.raises(ZeroDivisionError):
        relative_error(1.0, 0.0)


def test_attention_matrix_rows_sum_to_one_and_causal_is_lower_triangular():
    rng = np.random.default_rng(0)
    Q, K = rng.standard_normal((5, 2)), rng.standard_normal((5, 2))
    A = attention_matrix(Q, K, "causal")
    assert A.dtype == np.float64 and np.allclose(A.sum(axis=1), 1.0)
    assert np.all(np.triu(A, 1) == 0)


def test_causal_logit_gap():
    z = np.array([[0.0, 9.0], [3.0, 1.0]])  # row 0 sees only itself; row 1: max(3, 1) - 1 = 2
    assert causal_logit_gap(z) == 2.0


def test_row_cosines():
    C = row_cosines(np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 3.0]]))
    assert np.allclose(C, [[1, 1, 0], [1, 1, 0], [0, 0, 1]])


def test_mp_matrix_effective_rank_matches_float_on_a_clear_spectrum():
    A = np.diag([10.0, 1.0, 0.01])
    assert mp_matrix_effective_rank(A, 0.9) == 1 == effective_rank(np.linalg.svd(A, compute_uv=False), 0.9)
    assert mp_matrix_effective_rank(A, 0.999) == 2


def test_decay_vector_sparsity_is_the_vectors_own_s():
    """S(a) of a = (lambda^{n-1}, ..., 1) from the entries: 1 at n = 1; 1.5 / sqrt(2 * 1.25) for
    lambda = 1/2, n = 2; and the closed form (1-l^n)(1+l) / (n (1-l)(1+l^n)) squared at n = 64."""
    import mpmath

    from attention_claims.testkit.references import decay_vector_sparsity

    assert decay_vector_sparsity("0.5", 1) == 1
    with mpmath.workdps(50):
        assert abs(decay_vector_sparsity("0.5", 2) - mpmath.mpf("1.5") / mpmath.sqrt(mpmath.mpf("2.5"))) < mpmath.mpf(10)**-48
        lam, n = mpmath.mpf("0.9"), 64
        closed = mpmath.sqrt((1 - lam**n) * (1 + lam) / (n * (1 - lam) * (1 + lam**n)))
        assert abs(decay_vector_sparsity("0.9", 64) - closed) < mpmath.mpf(10)**-45
    with pytest.raises(ValueError, match="^n: "):
        decay_vector_sparsity("0.5", 0)
