"""Exact and certified arithmetic primitives: python-flint arb precision, certified signs, IEEE thresholds.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

from flint import arb, arb_mat, ctx

from .arrays import as_float64_array, finite_matrix

#: smallest positive subnormal of each dtype, as a power of two exponent
SMALLEST_SUBNORMAL_LOG2 = {"float64": -1074, "float32": -149, "bfloat16": -133, "float16": -24}


#: machine epsilon (spacing of floats at 1) of each dtype, log2
EPS_LOG2 = {"float64": -52, "float32": -23, "bfloat16": -7, "float16": -10}


class CertificationError(RuntimeError):
    """Arbitrary precision up to the cap was not enough to decide a sign."""


@contextlib.contextmanager
def precision(bits: int) -> Iterator[None]:
    """Temporarily set python-flint's working precision (bits)."""
    old = ctx.prec
    ctx.prec = bits
    try:
        yield
    finally:
        ctx.prec = old


def arb_matrix(x) -> arb_mat:
    """Exact conversion of a float64 ``(n, m)`` array to an arb matrix (radius 0)."""
    a = finite_matrix(x, "matrix")
    return arb_mat(a.shape[0], a.shape[1], [arb(float(v)) for v in a.ravel()])


def certified_sign(x: arb) -> int:
    """``+1``/``-1`` if the ball excludes 0 on that side, ``0`` if it contains 0."""
    if x > 0:
        return 1
    if x < 0:
        return -1
    return 0


def underflow_log_threshold(dtype: str) -> float:
    """``ln`` of the largest positive real that rounds to 0 in ``dtype`` (round-to-nearest).

    That is half the smallest subnormal, ``2^(e_min_sub - 1)``: a softmax weight below
    ``exp(threshold)`` is stored as exactly 0. IEEE 754-2019 §3.3, §4.3.
    """
    return (SMALLEST_SUBNORMAL_LOG2[dtype] - 1) * math.log(2)


def fmpq_matrix(x):
    from flint import fmpq, fmpq_mat

    a = as_float64_array(x, "matrix")
    return fmpq_mat(a.shape[0], a.shape[1], [fmpq(*float(v).as_integer_ratio()) for v in a.ravel()])
