"""attention_claims.maths.exact: certified signs and the exact conversions of integer and float64 arrays,
against values written out by hand, and the input each error names (issue 24, mutation testing: each test
here fails on a mutant of the module that the checks let through)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from flint import arb, fmpq, fmpq_mat, fmpz_mat

from attention_claims.maths import AttentionInputError
from attention_claims.maths.exact import certified_sign, fmpq_matrix, fmpz_matrix, integer_entries

BIG = 2**53 + 1  # the smallest positive integer float64 cannot hold (it rounds to 2^53)


def test_certified_sign_of_each_kind_of_ball():
    assert certified_sign(arb(3)) == 1
    assert certified_sign(arb(-3)) == -1
    assert certified_sign(arb(-1, 0.5)) == -1  # [-1.5, -0.5]: negative, certified
    assert certified_sign(arb(0.25, 0.5)) == 0  # [-0.25, 0.75] contains 0
    assert certified_sign(arb(0)) == 0


@pytest.mark.parametrize("convert", [fmpq_matrix, fmpz_matrix])
def test_integer_arrays_convert_exactly_beyond_2_to_53(convert):
    """An int64 array, or a list of Python ints, is read entry by entry as Python ints, not through float64
    (which would store 2^53 + 1 as 2^53)."""
    for x in (np.array([[BIG, -BIG], [1, 0]], dtype=np.int64), [[BIG, -BIG], [1, 0]]):
        m = convert(x)
        assert m.nrows() == 2 and m.ncols() == 2
        assert [m[0, 0], m[0, 1], m[1, 0], m[1, 1]] == [BIG, -BIG, 1, 0]
    assert isinstance(fmpq_matrix([[BIG]]), fmpq_mat) and isinstance(fmpz_matrix([[BIG]]), fmpz_mat)


def test_fmpq_matrix_of_floats_is_their_exact_dyadic_value():
    m = fmpq_matrix([[0.1, -2.5]])
    assert m[0, 0] == fmpq(*(0.1).as_integer_ratio()) and m[0, 1] == fmpq(-5, 2)


@pytest.mark.parametrize("convert", [fmpq_matrix, fmpz_matrix])
def test_conversions_name_the_input_integer_or_float(convert):
    """The error starts with the name passed (default ``matrix``), for an integer array (checked by
    integer_entries) as for a float one (checked by as_array)."""
    one_d = np.array([1, 2], dtype=np.int64)
    with pytest.raises(AttentionInputError, match=r"^G: expected 2 dimensions, got shape \(2,\)$"):
        convert(one_d, "G")
    with pytest.raises(AttentionInputError, match=r"^matrix: expected 2 dimensions, got shape \(2,\)$"):
        convert(one_d)
    with pytest.raises(AttentionInputError, match=r"^G: empty array"):
        convert(np.zeros((0, 2), dtype=np.int64), "G")
    with pytest.raises(AttentionInputError, match=r"^G: contains NaN or Inf$"):
        convert([[1.0, math.nan]], "G")
    with pytest.raises(AttentionInputError, match=r"^matrix: contains NaN or Inf$"):
        convert([[1.0, math.inf]])


def test_fmpz_matrix_refuses_non_integer_floats_by_name():
    """Floats with integer values convert; 0.5 is refused (not truncated to 0)."""
    m = fmpz_matrix(np.array([[2.0, -3.0]]))
    assert (m[0, 0], m[0, 1]) == (2, -3)
    with pytest.raises(AttentionInputError, match=r"^G: entries must be integers$"):
        fmpz_matrix([[1.0, 0.5]], "G")
    with pytest.raises(AttentionInputError, match=r"^matrix: entries must be integers$"):
        fmpz_matrix(np.array([[0.5]]))


def test_integer_entries_reads_integer_arrays_only_and_names_them():
    x = np.array([[1, 2]], dtype=np.uint8)
    assert integer_entries(x) is x
    assert integer_entries([[1, 2]]).dtype.kind == "i"
    for not_integer in ([[1.0, 2.0]], np.array([[True]]), np.array([["1"]]), "12", 3):
        assert integer_entries(not_integer) is None
    with pytest.raises(AttentionInputError, match=r"^matrix: expected 2 dimensions"):
        integer_entries(np.array([1, 2]))
    with pytest.raises(AttentionInputError, match=r"^W: expected a square matrix, got shape \(1, 2\)$"):
        integer_entries([[1, 2]], "W", square=True)
