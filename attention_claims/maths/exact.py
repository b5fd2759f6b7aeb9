"""Exact and certified arithmetic primitives: python-flint arb precision, certified signs, exact
conversions of float64 data, IEEE thresholds.

Every float64 is a dyadic rational ``m 2^e``, so a stored float64 array has an exact value. The
conversions of that value into each exact or high-precision arithmetic live here, once each:

- :func:`to_fmpq` (one number) and :func:`fmpq_matrix` (an array) -> python-flint ``fmpq``/``fmpq_mat``;
- :func:`fmpz_matrix` -> ``fmpz_mat`` for integer-valued arrays;
- :func:`to_fraction` -> :class:`fractions.Fraction` (from an ``fmpq`` or a float), and
  :func:`as_fractions` for a vector of mixed ints, floats and fractions;
- :func:`mp_matrix` -> ``mpmath.matrix`` (exact at any working precision of 53 bits or more);
- :func:`arb_matrix` -> ``arb_mat`` (balls of radius 0);
- :func:`to_arb` -> ``arb`` (one number, radius 0, from a float, int, ``Fraction`` or ``mpmath.mpf``),
  and back: :func:`arb_to_mpf`, the midpoint of a ball narrow enough to certify the digits asked for
  (:func:`arb_mid_to_mpf`, the midpoint alone).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from fractions import Fraction

import mpmath
import numpy as np
from flint import arb, arb_mat, ctx, fmpq, fmpq_mat, fmpz_mat

from .arrays import AttentionInputError, as_array

SMALLEST_SUBNORMAL_LOG2 = {"float64": -1074, "float32": -149, "bfloat16": -133, "float16": -24}
"""The smallest positive subnormal of each dtype, as the exponent of a power of two (IEEE 754-2008; bfloat16:
8 significant bits and float32's exponent range)."""


EPS_LOG2 = {"float64": -52, "float32": -23, "bfloat16": -7, "float16": -10}
"""The machine epsilon of each dtype (the spacing of floats at 1), as the exponent of a power of two."""


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


# -- exact conversions of float64 values ---------------------------------------------------------

def to_fmpq(v) -> fmpq:
    """The exact rational value of the float ``v`` (``float(v).as_integer_ratio()``) as an ``fmpq``.

    Raises:
        OverflowError, ValueError: ``v`` is infinite or NaN (validate arrays with
            :func:`attention_claims.maths.as_array` first).
    """
    return fmpq(*float(v).as_integer_ratio())


def to_fraction(v) -> Fraction:
    """An ``fmpq`` (or a float, exactly) as a :class:`fractions.Fraction`."""
    if isinstance(v, fmpq):
        return Fraction(int(v.p), int(v.q))
    return Fraction(v)


def fmpq_matrix(x, name: str = "matrix") -> fmpq_mat:
    """The exact rational value of a float64 ``(n, m)`` array as a python-flint ``fmpq_mat`` (a
    vector must be shaped ``(n, 1)`` or ``(1, n)``).

    Raises:
        AttentionInputError: ``x`` is not a non-empty finite 2-D array.
    """
    ints = integer_entries(x, name)
    if ints is not None:
        return fmpq_mat(ints.shape[0], ints.shape[1], [fmpq(int(v)) for v in ints.ravel()])
    a = as_array(x, name)
    return fmpq_mat(a.shape[0], a.shape[1], [to_fmpq(v) for v in a.ravel()])


def integer_entries(x, name: str = "matrix", *, square: bool = False) -> np.ndarray | None:
    """``x`` itself when it is a NumPy integer array (or array-like that NumPy reads as one), after
    the checks of :func:`as_array` (2-D, non-empty, ``square`` when asked); else ``None``.

    Shape: ``(n, m)`` in and out (``(n, n)`` with ``square``); the integer dtype is kept, values
    (dimensionless counts or integer logits) unchanged.

    The exact conversions read such an array's entries as Python ints instead of through float64:
    float64 holds integers exactly only up to ``2^53``, and an integer product such as a Vandermonde
    Gram matrix (entries near ``1e16``) would otherwise be rounded before an "exact" rank.

    Raises:
        AttentionInputError: ``x`` is an integer array that fails the checks of :func:`as_array`.
    """
    if not isinstance(x, np.ndarray):
        if not isinstance(x, (list, tuple)):
            return None
        x = np.asarray(x)
    if x.dtype.kind not in "iu":
        return None
    as_array(x, name, square=square)
    return x


def fmpz_matrix(x, name: str = "matrix") -> fmpz_mat:
    """An integer-valued ``(n, m)`` array as a python-flint ``fmpz_mat`` (exact).

    Raises:
        AttentionInputError: ``x`` is not a non-empty finite 2-D array of integers.
    """
    ints = integer_entries(x, name)
    if ints is not None:  # exact beyond 2^53, where float64 would round
        return fmpz_mat(ints.shape[0], ints.shape[1], [int(v) for v in ints.ravel()])
    a = as_array(x, name, integer=True)
    return fmpz_mat(a.shape[0], a.shape[1], [int(v) for v in a.ravel()])


def arb_matrix(x, name: str = "matrix") -> arb_mat:
    """Exact conversion of a float64 ``(n, m)`` array to an arb matrix (radius 0).

    Raises:
        AttentionInputError: ``x`` is not a non-empty finite 2-D array.
    """
    a = as_array(x, name)
    return arb_mat(a.shape[0], a.shape[1], [arb(float(v)) for v in a.ravel()])


def mp_matrix(x, name: str = "matrix") -> mpmath.matrix:
    """The exact value of a float64 ``(n, m)`` array as an ``mpmath.matrix`` (exact while the
    working precision is at least 53 bits, i.e. ``mp.dps >= 16``).

    Raises:
        AttentionInputError: ``x`` is not a non-empty finite 2-D array.
    """
    a = as_array(x, name)
    return mpmath.matrix([[mpmath.mpf(float(v)) for v in row] for row in a])


def as_fractions(a, name: str = "a") -> list[Fraction]:
    """A 1-D sequence ``a`` of length ``n`` (shape ``(n,)``) of ``Fraction``s, ints and floats (NumPy
    scalars included) as a list of ``n`` exact ``Fraction``s (a float is a dyadic rational, converted
    exactly). Units: those of ``a``.

    Raises:
        AttentionInputError: an entry is not finite, or ``a`` is empty (the message names ``name``).
    """
    out = []
    for v in a:
        if isinstance(v, Fraction):
            out.append(v)
        elif isinstance(v, int) and not isinstance(v, bool):
            out.append(Fraction(v))
        else:
            f = float(v)
            if not np.isfinite(f):
                raise AttentionInputError(f"{name}: entry {v!r} is not finite")
            out.append(Fraction(f))
    if not out:
        raise AttentionInputError(f"{name}: empty vector")
    return out


def to_arb(x, name: str = "x") -> arb:
    """``x``, a scalar (a float, int, :class:`fractions.Fraction` or ``mpmath.mpf``), as an arb ball of
    radius 0, exactly (a double and an mpf are dyadic rationals). Units: those of ``x``.

    Raises:
        AttentionInputError: ``x`` is infinite or NaN (the message names ``name``).
    """
    if isinstance(x, mpmath.mpf):
        if not mpmath.isfinite(x):
            raise AttentionInputError(f"{name}: {x!r} is not finite")
        sign, man, exp, _ = x._mpf_  # ``mpf.man_exp`` drops the sign
        return arb(((-1) ** sign * int(man), int(exp))) if man else arb(0)
    if isinstance(x, Fraction):
        return arb(fmpq(x.numerator, x.denominator))
    if isinstance(x, (int, np.integer)):
        return arb(int(x))
    v = float(x)
    if not math.isfinite(v):
        raise AttentionInputError(f"{name}: {x!r} is not finite")
    return arb(v)


def arb_to_mpf(x: arb, digits: int, dps: int | None = None) -> mpmath.mpf:
    """The midpoint of the ball ``x`` as an ``mpmath.mpf`` rounded to ``dps`` digits (default
    ``digits + 8``), once the ball's radius is below ``10^-digits`` of its midpoint: every one of the
    first ``digits`` significant digits is then certified.

    Raises:
        CertificationError: the ball is not finite, contains 0, or is wider than that.
    """
    if not x.is_finite() or x.rad() >= abs(x.mid()) * arb(10) ** (-digits):
        raise CertificationError(f"the enclosure {x} does not certify {digits} digits")
    with mpmath.workdps(dps or digits + 8):
        return arb_mid_to_mpf(x)


def arb_mid_to_mpf(x: arb) -> mpmath.mpf:
    """The midpoint of the ball ``x`` as an ``mpmath.mpf`` rounded to the current mpmath precision
    (nothing certified: :func:`arb_to_mpf` checks the radius first)."""
    man, exp = x.mid().man_exp()  # the midpoint's exact (signed) mantissa and exponent
    return +mpmath.mpf((int(man), int(exp)))


def fraction_to_mpf(x):
    """The rational scalar ``x`` (a :class:`fractions.Fraction`) as an ``mpmath.mpf`` at the current working
    precision, correctly rounded (round to nearest; one rounding of the exact quotient).

    Numerator and denominator enter mpmath exactly as ``odd * 2^k``: mpmath's pure-Python normalisation
    strips trailing zero bits a byte at a time, which is quadratic for the dyadic rationals that float64
    data produce (a degree-30 Taylor coefficient of float inputs has some 10^5 bits), so they are split off
    here first.

    Raises:
        AttributeError: ``x`` has no ``numerator``/``denominator`` (not a rational).
    """
    import mpmath
    from mpmath.libmp import from_man_exp, mpf_div, round_nearest

    p, q = x.numerator, x.denominator
    if p == 0:
        return mpmath.mpf(0)
    tp, tq = (p & -p).bit_length() - 1, (q & -q).bit_length() - 1
    return mpmath.mp.make_mpf(mpf_div(from_man_exp(p >> tp, tp), from_man_exp(q >> tq, tq), mpmath.mp.prec,
                                      round_nearest))


def fraction_to_fmpq(x):
    """The rational scalar ``x`` (a :class:`fractions.Fraction`) as a python-flint ``fmpq``, exactly.

    Raises:
        AttributeError: ``x`` has no ``numerator``/``denominator`` (not a rational).
    """
    from flint import fmpq

    return fmpq(x.numerator, x.denominator)


def decimal_fraction(v):
    """The exact rational a number denotes as written, as a :class:`fractions.Fraction`: a float by
    its shortest decimal ``repr`` (``0.1`` is ``1/10``, not the dyadic float64 nearest it), an int
    or a ``Fraction`` as itself."""
    from fractions import Fraction

    return Fraction(str(v)) if isinstance(v, float) else Fraction(v)


def relative_error(a, b):
    """``|a - b| / |b|`` of two scalars in the arithmetic of ``a`` and ``b`` (mpmath, ``Fraction``, float);
    dimensionless (``a`` and ``b`` in the same units).

    Raises:
        ZeroDivisionError: ``b`` is zero (for ``Fraction`` and float; mpmath returns ``inf``).
    """
    return abs(a - b) / abs(b)
