"""Rounding-error bounds: how far a floating-point result may lie from the exact one by rounding alone.

A check that compares a computed value with an exact or reference one allows rounding and nothing more;
the allowance is derived here from the standard forward-error bounds, not chosen, and carries its
derivation so that the evidence states it (the verdict rules: "the threshold, in ulps or relative terms,
stated next to the comparison").

Model (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., SIAM 2002, §2.2, eq. (2.4)):
``fl(x op y) = (x op y)(1 + delta)``, ``|delta| <= u``, where ``u`` is the unit roundoff of the format
(half the spacing of the floats at 1): ``2^-53`` (float64), ``2^-24`` (float32), ``2^-11`` (float16),
``2^-8`` (bfloat16). With gradual underflow a rounded value may also be off by up to half the smallest
subnormal, absolutely (§2.1, Theorem 2.2 and the remarks after it).

From it (Higham Lemma 3.1 and §3.1, §3.5), with ``gamma_n = n u / (1 - n u)`` for ``n u < 1``:

- recursive summation of ``n`` terms: ``|s_hat - s| <= gamma_(n-1) sum |x_i|`` (eq. (3.4) and §4.2);
  any summation order (pairwise, blocked, vectorised) obeys this bound;
- a dot product of length ``n``: ``|fl(x^T y) - x^T y| <= gamma_n |x|^T |y|`` (eq. (3.5));
- a matrix product with inner dimension ``n``: ``|fl(AB) - AB| <= gamma_n |A| |B|`` entrywise (eq. (3.13)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # annotations only: importing this module does not import torch
    import torch

UNIT_ROUNDOFF = {"float64": 2.0**-53, "float32": 2.0**-24, "float16": 2.0**-11, "bfloat16": 2.0**-8}
"""The unit roundoff u (half the machine epsilon) of each dtype, a power of two (Higham Table 2.1; bfloat16:
8 significant bits, IEEE 754-2008 does not define it; Intel BF16 specification 2018)."""

SMALLEST_SUBNORMAL = {"float64": 2.0**-1074, "float32": 2.0**-149, "float16": 2.0**-24, "bfloat16": 2.0**-133}
"""The smallest positive subnormal of each dtype."""


def dtype_name(dtype) -> str:
    """The name (``"float64"``, ``"float32"``, ``"float16"``, ``"bfloat16"``) of a dtype given as that
    string, a ``torch.dtype`` or a NumPy dtype.

    Raises:
        ValueError: for any other dtype, naming it.
    """
    name = str(getattr(dtype, "name", None) or dtype).removeprefix("torch.")
    if name not in UNIT_ROUNDOFF:
        raise ValueError(f"rounding: unknown dtype {dtype!r} (one of {', '.join(UNIT_ROUNDOFF)})")
    return name


def unit_roundoff(dtype) -> float:
    """The unit roundoff ``u`` of ``dtype`` (a float: ``2^-53``, ``2^-24``, ``2^-11``, ``2^-8``).

    Source: Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §2.1 and Table 2.1.

    Args:
        dtype: ``"float64"``, ``"float32"``, ``"float16"`` or ``"bfloat16"``, or that ``torch.dtype`` or NumPy
            dtype.

    Returns:
        ``u``, half the spacing of the floats at 1 (dimensionless, a power of two).

    Raises:
        ValueError: for an unknown dtype (see :func:`dtype_name`).

    Examples:
        >>> import numpy as np
        >>> from attention_claims.testkit import unit_roundoff
        >>> unit_roundoff("float32") == 2.0**-24, unit_roundoff(np.dtype("float16"))
        (True, 0.00048828125)
        >>> unit_roundoff("int8")
        Traceback (most recent call last):
            ...
        ValueError: rounding: unknown dtype 'int8' (one of float64, float32, float16, bfloat16)
    """
    return UNIT_ROUNDOFF[dtype_name(dtype)]


def gamma(n: int, dtype) -> float:
    """``gamma_n = n u / (1 - n u)`` for the unit roundoff ``u`` of ``dtype``: the relative error bound of
    ``n`` successive roundings (Higham, 2nd ed., Lemma 3.1). ``gamma_0 = 0``.

    Args:
        n: the number of roundings (an ``int >= 0``).
        dtype: the format, as :func:`unit_roundoff` takes it.

    Returns:
        ``gamma_n`` (dimensionless): ``|prod (1 + delta_i)^(+-1) - 1| <= gamma_n`` for ``n`` roundings ``delta_i``.

    Raises:
        ValueError: ``n`` not a non-negative integer, or ``n u >= 1`` (the bound does not exist: the
            operation count is too large for the format, e.g. ``n >= 256`` in bfloat16).

    Examples:
        >>> from attention_claims.testkit import gamma, unit_roundoff
        >>> u = unit_roundoff("float32")
        >>> gamma(0, "float32"), gamma(10, "float32") == 10 * u / (1 - 10 * u)
        (0.0, True)
        >>> gamma(256, "bfloat16")
        Traceback (most recent call last):
            ...
        ValueError: rounding: gamma_256 does not exist in bfloat16 (n u = 1 >= 1)
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"rounding: gamma_n needs a non-negative integer n, got {n!r}")
    u = unit_roundoff(dtype)
    if n * u >= 1:
        raise ValueError(f"rounding: gamma_{n} does not exist in {dtype_name(dtype)} (n u = {n * u:g} >= 1)")
    return n * u / (1 - n * u)


@dataclass(frozen=True)
class Tolerance:
    """An absolute bound on a rounding error, with how it was derived.

    Attributes:
        value: the bound, in the units of the compared quantity: a non-negative float, or an array of them
            (an entrywise bound such as ``gamma_n (|A| |B|)_ij``, any shape that broadcasts against the
            errors; kept as a read-only float64 NumPy array).
        derivation: one line saying where it comes from (the error bound, the dtype, the operation count
            and the magnitude it multiplies), stated in the evidence by :meth:`state`.

    Two tolerances add (``a + b``): the bound of a result carrying both errors (triangle inequality).
    A check gets one from :func:`sum_tolerance`, :func:`dot_tolerance`, :func:`matmul_tolerance`,
    :func:`representation_tolerance` or :meth:`SoftmaxTolerance.around` and passes it to
    :func:`within_rounding`; building one by hand is for a bound derived elsewhere (say where, in ``derivation``).

    Raises:
        ValueError: on construction, when a value is negative or not finite, or ``derivation`` is empty.

    Examples:
        >>> from attention_claims.testkit import Tolerance
        >>> print(Tolerance(1e-6, "one rounding") + Tolerance(2e-6, "another"))
        3e-06 (one rounding + another)
        >>> entrywise = Tolerance([1e-6, 4e-6], "per entry")
        >>> entrywise.largest, entrywise[1].value
        (4e-06, 4e-06)
        >>> Tolerance(-1.0, "wrong")
        Traceback (most recent call last):
            ...
        ValueError: rounding: a tolerance must be finite and >= 0, got -1.0 (wrong)
    """

    value: object
    derivation: str

    def __post_init__(self):
        arr = _float64(self.value)
        if not np.isfinite(arr).all() or (arr < 0).any():
            raise ValueError(f"rounding: a tolerance must be finite and >= 0, got {self.value!r} ({self.derivation})")
        if not self.derivation.strip():
            raise ValueError("rounding: a tolerance needs its derivation")
        if arr.ndim == 0:
            object.__setattr__(self, "value", float(arr))
        else:
            arr = arr.copy()
            arr.flags.writeable = False
            object.__setattr__(self, "value", arr)

    def __add__(self, other: Tolerance) -> Tolerance:
        if not isinstance(other, Tolerance):
            return NotImplemented
        return Tolerance(self.value + other.value, f"{self.derivation} + {other.derivation}")

    def __getitem__(self, index) -> Tolerance:
        """The entrywise bound at ``index`` (NumPy indexing; a torch index tensor is read as NumPy), with the
        same derivation.

        Raises:
            TypeError: the bound is one number (nothing to index).
        """
        if np.ndim(self.value) == 0:
            raise TypeError("rounding: a tolerance of one number cannot be indexed")
        if hasattr(index, "detach"):
            index = index.detach().to("cpu").numpy()
        return Tolerance(self.value[index], self.derivation)

    @property
    def largest(self) -> float:
        """The largest entry of the bound (the bound itself when it is one number)."""
        return float(np.max(self.value)) if np.size(self.value) else 0.0

    def __float__(self) -> float:
        """The bound as one number; ``TypeError`` for an entrywise bound of more than one entry."""
        if np.size(self.value) != 1:
            raise TypeError(f"rounding: an entrywise tolerance of shape {np.shape(self.value)} is not one number")
        return float(np.asarray(self.value).reshape(()))

    def __str__(self) -> str:
        head = f"{self.value:.3g}" if np.ndim(self.value) == 0 else f"entrywise, up to {self.largest:.3g}"
        return f"{head} ({self.derivation})"

    def excess(self, error) -> float:
        """``max |error| / value`` (entrywise for an entrywise bound): how much of the allowance an error (a
        number or an array of them) uses; above 1 it is more than rounding. ``inf`` for a NaN error or a
        non-zero error against a zero bound, 0 for an empty array.

        Args:
            error: the computed minus the reference value(s), in the bound's units (a number, a sequence, a
                NumPy array or a torch tensor, of a shape that broadcasts against ``value``).

        Returns:
            The largest ``|error| / value`` (a ``float``, dimensionless; at most 1 within rounding).

        Raises:
            ValueError: the error and an entrywise bound do not broadcast.

        Examples:
            >>> from attention_claims.testkit import Tolerance
            >>> t = Tolerance(1e-6, "planted")
            >>> t.excess(5e-7), t.excess([1e-6, -2e-6]), t.excess(float("nan"))
            (0.5, 2.0, inf)
        """
        err = np.abs(_float64(error))
        try:
            err, bound = np.broadcast_arrays(err, np.asarray(self.value))
        except ValueError as e:
            raise ValueError(f"rounding: errors of shape {err.shape} against a bound of shape "
                             f"{np.shape(self.value)}") from e
        if err.size == 0:
            return 0.0
        if np.isnan(err).any():
            return math.inf
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(err == 0, 0.0, err / bound)
        return float(ratio.max())

    def state(self, log) -> None:
        """Add ``"tolerance: <value> (<derivation>)"`` to the evidence.

        Args:
            log: the check's ``CheckLog`` (the ``claim_log`` fixture), or anything with a ``note(text)`` method.

        Examples:
            >>> from attention_claims.testkit import CheckLog, Tolerance
            >>> log = CheckLog()
            >>> Tolerance(1e-6, "planted").state(log)
            >>> log.notes
            ['tolerance: 1e-06 (planted)']
        """
        log.note(f"tolerance: {self}")


def _float64(x):
    """``x`` (a number, a sequence, a NumPy array or a torch tensor on any device) as float64 NumPy."""
    if hasattr(x, "detach"):
        x = x.detach().to("cpu").double().numpy()
    return np.asarray(x, dtype=np.float64)


def _magnitude(magnitude):
    """A magnitude as a float (one number) or a float64 array (entrywise), checked finite and >= 0."""
    m = _float64(magnitude)
    if not np.isfinite(m).all() or (m < 0).any():
        raise ValueError(f"rounding: the magnitude a bound multiplies must be finite and >= 0, got {magnitude!r}")
    return float(m) if m.ndim == 0 else m


def _label(m) -> str:
    return f"{m:.3g}" if np.ndim(m) == 0 else f"|.| (entrywise, up to {float(np.max(m)) if np.size(m) else 0.0:.3g})"


def representation_tolerance(dtype, magnitude=1.0, count: int = 1) -> Tolerance:
    """The bound on the total error of rounding ``count`` exact values, of absolute sum ``magnitude``, to
    ``dtype`` (round to nearest, with gradual underflow): ``u * magnitude + count * s / 2``, ``s`` the
    smallest subnormal. Source: Higham, 2nd ed., §2.1, Theorem 2.2 (relative error ``<= u`` in the normal
    range; absolute error ``<= s / 2`` below it).

    Args:
        dtype: the format the values are rounded to, as :func:`unit_roundoff` takes it.
        magnitude: the sum of the exact values' absolute values, in their units (a number; an array gives an
            entrywise bound).
        count: how many values are rounded (each may lose half a subnormal below the normal range).

    Returns:
        A :class:`Tolerance`, absolute, in the units of the values.

    Raises:
        ValueError: an unknown dtype, a negative or non-finite magnitude, or ``count < 0``.

    Examples:
        >>> from attention_claims.testkit import representation_tolerance, unit_roundoff
        >>> t = representation_tolerance("float16", magnitude=3.0)
        >>> t.value == unit_roundoff("float16") * 3.0 + 2.0**-24 / 2
        True
        >>> representation_tolerance("float16", count=-1)
        Traceback (most recent call last):
            ...
        ValueError: rounding: count must be a non-negative integer, got -1
    """
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ValueError(f"rounding: count must be a non-negative integer, got {count!r}")
    name, m = dtype_name(dtype), _magnitude(magnitude)
    value = UNIT_ROUNDOFF[name] * m + count * SMALLEST_SUBNORMAL[name] / 2
    return Tolerance(value, f"rounding {count} value(s) of total size {_label(m)} to {name}: u*{_label(m)} "
                            f"+ {count}*subnormal/2, u = 2^{round(math.log2(UNIT_ROUNDOFF[name]))} "
                            "(Higham Thm 2.2)")


def sum_tolerance(n: int, dtype, magnitude=1.0) -> Tolerance:
    """The bound ``gamma_(n-1) * magnitude`` on the error of summing ``n`` terms in ``dtype``, where
    ``magnitude`` is the sum of their absolute values (an array: one bound per sum; Higham, 2nd ed., eq. (3.4), §4.2; any order).

    Args:
        n: the number of terms (an ``int >= 1``).
        dtype: the format the sum is computed in, as :func:`unit_roundoff` takes it.
        magnitude: ``sum |x_i|``, in the terms' units (a number, or an array of them: one per sum).

    Returns:
        A :class:`Tolerance`, absolute, in the terms' units.

    Raises:
        ValueError: ``n < 1``, ``(n-1) u >= 1``, an unknown dtype, or a bad magnitude.

    Examples:
        >>> import numpy as np
        >>> from attention_claims.testkit import gamma, sum_tolerance, within_rounding
        >>> x = np.array([0.1, -0.2, 0.3, 0.4], dtype=np.float32)
        >>> magnitude = float(np.abs(x).astype(np.float64).sum())  # about 1
        >>> t = sum_tolerance(4, "float32", magnitude=magnitude)
        >>> t.value == gamma(3, "float32") * magnitude, t.derivation
        (True, 'gamma_3*1 for a sum of 4 terms in float32 (Higham eq. 3.4)')
        >>> within_rounding(x.sum(), x.astype(np.float64).sum(), t)
        True
        >>> sum_tolerance(0, "float32")
        Traceback (most recent call last):
            ...
        ValueError: rounding: a sum needs n >= 1 terms, got 0
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"rounding: a sum needs n >= 1 terms, got {n!r}")
    m = _magnitude(magnitude)
    return Tolerance(gamma(n - 1, dtype) * m,
                     f"gamma_{n - 1}*{_label(m)} for a sum of {n} terms in {dtype_name(dtype)} (Higham eq. 3.4)")


def dot_tolerance(n: int, dtype, magnitude=1.0) -> Tolerance:
    """The bound ``gamma_n * magnitude`` on the error of a length-``n`` dot product in ``dtype``, where
    ``magnitude = |x|^T |y|`` (Higham, 2nd ed., eq. (3.5)).

    Args:
        n: the vectors' length (an ``int >= 1``).
        dtype: the format the products and sums are computed in, as :func:`unit_roundoff` takes it.
        magnitude: ``|x|^T |y|``, in the units of ``x^T y`` (a number, or an array: one per dot product).

    Returns:
        A :class:`Tolerance`, absolute, in the units of ``x^T y``.

    Raises:
        ValueError: ``n < 1``, ``n u >= 1``, an unknown dtype, or a bad magnitude.

    Examples:
        >>> import numpy as np
        >>> from attention_claims.testkit import dot_tolerance, within_rounding
        >>> x = np.array([0.1, 0.2, 0.3], dtype=np.float32)
        >>> y = np.array([1.0, -2.0, 3.0], dtype=np.float32)
        >>> x64, y64 = x.astype(np.float64), y.astype(np.float64)  # exactly the float32 values
        >>> t = dot_tolerance(3, "float32", magnitude=np.abs(x64) @ np.abs(y64))
        >>> within_rounding(x @ y, x64 @ y64, t)
        True
        >>> within_rounding(x @ y + 1e-5, x64 @ y64, t)  # more than rounding
        False
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"rounding: a dot product needs length n >= 1, got {n!r}")
    m = _magnitude(magnitude)
    return Tolerance(gamma(n, dtype) * m,
                     f"gamma_{n}*{_label(m)} for a length-{n} dot product in {dtype_name(dtype)} (Higham eq. 3.5)")


def matmul_tolerance(n: int, dtype, magnitude=1.0) -> Tolerance:
    """The bound ``gamma_n * magnitude`` on the error of one entry of a matrix product with inner
    dimension ``n`` in ``dtype``, where ``magnitude`` is ``|A| |B|`` (an array:
    an entrywise bound) or a number bounding its entries (``(|A| @ |B|).max()``). Source: Higham, 2nd ed., §3.5, eq. (3.13).

    Args:
        n: the inner dimension (``A`` of shape ``(N, n)``, ``B`` of shape ``(n, M)``; an ``int >= 1``).
        dtype: the format the product is computed in, as :func:`unit_roundoff` takes it.
        magnitude: ``|A| |B|`` of shape ``(N, M)`` (an entrywise bound), or one number bounding its entries,
            in the units of ``AB``.

    Returns:
        A :class:`Tolerance`, absolute, in the units of ``AB``: one number, or an ``(N, M)`` array.

    Raises:
        ValueError: ``n < 1``, ``n u >= 1``, an unknown dtype, or a bad magnitude.

    Examples:
        >>> import numpy as np
        >>> from attention_claims.testkit import matmul_tolerance, within_rounding
        >>> rng = np.random.default_rng(0)
        >>> A = rng.standard_normal((4, 8)).astype(np.float32)
        >>> B = rng.standard_normal((8, 3)).astype(np.float32)
        >>> A64, B64 = A.astype(np.float64), B.astype(np.float64)
        >>> t = matmul_tolerance(8, "float32", magnitude=np.abs(A64) @ np.abs(B64))
        >>> t.value.shape, within_rounding(A @ B, A64 @ B64, t)
        ((4, 3), True)
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"rounding: a matrix product needs inner dimension n >= 1, got {n!r}")
    m = _magnitude(magnitude)
    return Tolerance(gamma(n, dtype) * m, f"gamma_{n}*{_label(m)} for a matrix product with inner dimension {n} "
                                          f"in {dtype_name(dtype)} (Higham eq. 3.13)")


def within_rounding(computed, reference, tolerance: Tolerance, log=None) -> bool:
    """Whether every ``|computed - reference|`` is at most ``tolerance.value``; with ``log`` (a
    ``CheckLog``) the tolerance and the share of it used are stated in the evidence.

    ``computed`` and ``reference`` are scalars or arrays of one shape (e.g. both ``(N, M)``; broadcast
    as NumPy does), in the same units as the tolerance. A NaN anywhere is never within rounding.

    Args:
        computed: the floating-point result (a number, a sequence, a NumPy array or a torch tensor).
        reference: the exact or reference value(s), of a shape that broadcasts against ``computed``.
        tolerance: the allowance, a :class:`Tolerance` (for a softmax bound: its :meth:`SoftmaxTolerance.around`).
        log: the check's ``CheckLog`` (the ``claim_log`` fixture), or ``None``; given, it notes the tolerance
            (:meth:`Tolerance.state`) and tracks ``"error / rounding tolerance"``, the share of it used.

    Returns:
        ``True`` when every error is within the tolerance (a scalar ``bool``).

    Raises:
        TypeError: ``tolerance`` is not a :class:`Tolerance` (a bare literal has no derivation).
        ValueError: the shapes do not broadcast.

    Examples:
        >>> from attention_claims.testkit import CheckLog, Tolerance, within_rounding
        >>> log = CheckLog()
        >>> within_rounding([1.0, 2.0], [1.0, 2.0 + 2**-21], Tolerance(2**-20, "planted"), log)
        True
        >>> log.notes, log.ranges["error / rounding tolerance"]
        (['tolerance: 9.54e-07 (planted)'], [0.5, 0.5])
        >>> within_rounding(1.0, float("nan"), Tolerance(1.0, "planted"))
        False
        >>> within_rounding(1.0, 1.0, 1e-6)
        Traceback (most recent call last):
            ...
        TypeError: rounding: within_rounding needs a Tolerance with its derivation, got 1e-06
    """
    if not isinstance(tolerance, Tolerance):
        hint = " (a softmax bound is partly relative: pass its .around(reference))" if isinstance(
            tolerance, SoftmaxTolerance) else ""
        raise TypeError(f"rounding: within_rounding needs a Tolerance with its derivation, got {tolerance!r}{hint}")
    a, b = _float64(computed), _float64(reference)
    try:
        err = a - b
    except ValueError as e:
        raise ValueError(f"rounding: computed {a.shape} and reference {b.shape} do not broadcast") from e
    used = tolerance.excess(err)
    if log is not None:
        tolerance.state(log)
        log.track("error / rounding tolerance", used)
    return used <= 1.0


@dataclass(frozen=True)
class SoftmaxTolerance:
    """The rounding bound of a computed softmax weight: ``|p_hat_j - p_j| <= value * p_j + absolute`` (a relative
    part and an absolute one), returned by :func:`softmax_tolerance` with its derivation.

    It is not a :class:`Tolerance` (a bound on an absolute error): :func:`within_rounding` refuses it; compare
    with :meth:`around`, which turns it into the absolute, entrywise :class:`Tolerance` about the exact weights.

    Attributes:
        value: ``tau``, the relative part (dimensionless): a float, or a read-only float64 array of shape
            ``(N, 1)`` (one per row) that broadcasts over a row of weights.
        absolute: the absolute part, in units of probability (a float ``>= 0``): what an exp, a sum or a
            quotient whose result underflows may lose besides ``tau`` (a small multiple of the dtype's smallest
            subnormal, or of its smallest normal under flush-to-zero).
        derivation: one line saying where both parts come from, stated in the evidence by :meth:`state`.

    Raises:
        ValueError: on construction, when a part is negative or not finite, or ``derivation`` is empty.

    Examples:
        >>> from attention_claims.testkit import SoftmaxTolerance
        >>> tau = SoftmaxTolerance(1e-6, 1e-40, "planted")
        >>> print(tau)
        relative 1e-06 + absolute 1e-40 (planted)
        >>> float(tau), tau.largest
        (1e-06, 1e-06)
    """

    value: object
    absolute: float
    derivation: str

    def __post_init__(self):
        rel = Tolerance(self.value, self.derivation)  # the same checks and read-only storage as a Tolerance
        if not (math.isfinite(self.absolute) and self.absolute >= 0):
            raise ValueError(f"rounding: an absolute bound must be finite and >= 0, got {self.absolute!r}")
        object.__setattr__(self, "value", rel.value)
        object.__setattr__(self, "absolute", float(self.absolute))

    @property
    def largest(self) -> float:
        """The largest relative bound ``tau`` (over the rows, when there is one per row)."""
        return float(np.max(self.value))

    def __float__(self) -> float:
        """The relative bound ``tau`` as one number; ``TypeError`` when there is one per row (more than one)."""
        return float(Tolerance(self.value, self.derivation))

    def around(self, p) -> Tolerance:
        """The absolute, entrywise bound ``tau |p_j| + absolute`` on ``|p_hat_j - p_j|`` about the exact weights
        ``p`` (a number, an array or a tensor whose shape broadcasts against ``value``'s: ``(N, M)`` with ``value``
        of shape ``(N, 1)``), rounded up so that its own float64 evaluation cannot make it smaller (two steps to
        the next float: the product and the sum round once each).

        Args:
            p: the exact (or reference) softmax weights, in units of probability.

        Returns:
            An entrywise :class:`Tolerance` of ``p``'s shape (broadcast with ``value``'s), for
            :func:`within_rounding`.

        Raises:
            ValueError: ``p`` not finite, or shapes that do not broadcast.

        Examples:
            >>> import numpy as np
            >>> from attention_claims.testkit import SoftmaxTolerance, within_rounding
            >>> tau = SoftmaxTolerance(1e-6, 0.0, "planted")
            >>> p = np.array([0.25, 0.75])
            >>> bound = tau.around(p)
            >>> bool((bound.value >= 1e-6 * p).all()), within_rounding(p * (1 + 5e-7), p, bound)
            (True, True)
        """
        w = np.abs(_float64(p))
        if not np.isfinite(w).all():
            raise ValueError("rounding: the exact softmax weights must be finite")
        try:
            bound = np.asarray(self.value) * w + self.absolute
        except ValueError as e:
            raise ValueError(f"rounding: weights of shape {w.shape} against a bound of shape "
                             f"{np.shape(self.value)}") from e
        bound = np.nextafter(np.nextafter(bound, np.inf), np.inf)
        return Tolerance(bound, f"tau*p + absolute about the exact weights p: {self.derivation}")

    def __str__(self) -> str:
        head = (f"{self.value:.3g}" if np.ndim(self.value) == 0
                else f"up to {self.largest:.3g} (one per row)")
        return f"relative {head} + absolute {self.absolute:.3g} ({self.derivation})"

    def state(self, log) -> None:
        """Add ``"tolerance: <relative> + <absolute> (<derivation>)"`` to the evidence.

        Args:
            log: the check's ``CheckLog`` (the ``claim_log`` fixture), or anything with a ``note(text)`` method.

        Examples:
            >>> from attention_claims.testkit import CheckLog, SoftmaxTolerance
            >>> log = CheckLog()
            >>> SoftmaxTolerance(1e-6, 1e-40, "planted").state(log)
            >>> log.notes
            ['tolerance: relative 1e-06 + absolute 1e-40 (planted)']
        """
        log.note(f"tolerance: {self}")


def softmax_tolerance(logit_magnitude: float | np.ndarray, d: int, n: int, dtype: str | torch.dtype | np.dtype, *, exp_ulps: float = 1.0, u: float | None = None,
                      logit_roundings: int = 2, flush: float = 0.0) -> SoftmaxTolerance:
    """The bound on each weight of a softmax row computed in floating point, in any summation order:
    ``|p_hat_j - p_j| <= tau * p_j + a`` for ``p = softmax(z)``, ``z_j = s q . k_j`` with inner dimension ``d``
    and ``n`` logits in the row, the row maximum subtracted before the exps (as every stable softmax does).
    ``tau`` (dimensionless) holds where nothing underflows; ``a`` (units of probability, a few smallest
    subnormals) covers the exps, sums and quotients whose results underflow, which keep no relative accuracy.

    Args:
        logit_magnitude: ``L >= max_j s |q| . |k_j|`` (one number, or one per row: an array of shape ``(N,)``
            gives an ``(N, 1)`` relative bound that broadcasts over the row).
        d: the dot products' length (>= 1).
        n: the row's length (>= 1).
        dtype: the working precision (where the logits, exps and sums are computed; its smallest subnormal
            ``s`` sets ``a``).
        exp_ulps: the exp's error in ulps of its result (one ulp is at most ``2u`` relative in the normal
            range, Higham §2.1, and ``s`` in the subnormal range): 1 for SLEEF's ``u10`` functions that torch's
            CPU kernels call, 2 for CUDA's ``expf`` / ``exp2f`` (CUDA C++ Programming Guide, "Mathematical
            Functions", single precision table).
        u: the unit roundoff of each operation when it is not ``dtype``'s (e.g. ``2^-23`` for tensor-core
            accumulation, which truncates instead of rounding: Fasi, Higham, Mikaitis & Pranesh, "Numerical
            behavior of NVIDIA tensor cores", PeerJ Comput. Sci. 7:e330, 2021).
        logit_roundings: roundings of a logit after its dot product (the scale's own rounding and the product
            with it: 2; one more per extra factor, such as ``log2 e`` before an ``exp2``).
        flush: ``0`` with gradual underflow; the dtype's smallest normal (``2^-126`` in float32, ``2^-1022`` in
            float64) where subnormal results are flushed to zero (a GPU's ``-ftz``, x86's FTZ/DAZ): the
            absolute error of each operation whose result underflows.

    Returns:
        A :class:`SoftmaxTolerance`: ``value`` = ``tau``, ``absolute`` = ``a``, and the derivation of both;
        compare with its :meth:`SoftmaxTolerance.around` the exact weights.

    Derivation of ``tau`` (Higham, 2nd ed.: Lemma 3.1 and 3.3 for ``theta_k``, eq. (3.5) for dot products,
    eq. (3.4) for sums in any order): the computed logit is ``z_j + delta_j``, ``|delta_j| <= gamma_(d+r) L``
    (``r`` = ``logit_roundings``); the shift by the row maximum is an error common to every ``j`` that the
    normalisation cancels, and its subtraction adds ``u |z_j - z_max| <= 2uL(1 + gamma_(d+r))``, so each
    weight's logit moves by at most ``Delta = 2 gamma_(d+r+1) L`` relative to the others (and by
    ``2 (d + r + 1)(s/2 + flush)`` more for products and differences that underflow, Higham §2.1, Thm 2.2 and
    the remarks after it); an exp with relative error ``e = 2 u exp_ulps`` moves it by at most
    ``e / (1 - e) >= |ln(1 + e)|`` more. Softmax of logits each moved by at most ``Delta'`` changes each weight
    by a factor in ``[e^(-2 Delta'), e^(2 Delta')]`` (the numerator moves by ``e^(+-Delta')``, the normaliser, a
    weighted mean of those, too); the sum of ``n`` positive terms and the division add ``(1 + theta_n)``. So
    ``tau = e^(2 Delta') (1 + gamma_n) - 1``.

    Derivation of ``a`` (Higham, 2nd ed., §2.1, Thm 2.2 and the remarks after it: a result in the subnormal
    range is off by at most half its spacing ``s``, absolutely): an exp whose result underflows is
    ``E_j = E'_j + eta_j`` with ``E'_j`` the relative-error value above and ``|eta_j| <= alpha = exp_ulps s +
    flush``. An addition of two floats whose exact result is subnormal is exact (both are multiples of ``s``,
    so is their sum), so the normaliser is ``T = (S' + H)(1 + theta_n)`` with ``S' = sum_j E'_j >= 1 - e`` (it
    holds the row maximum's ``exp(0)``) and ``|H| <= h = (n alpha + (n - 1) flush)(1 + gamma_n)``. The quotient
    ``p_hat_j = E_j (1 + delta) / T + zeta_j``, ``|delta| <= u``, ``|zeta_j| <= s/2 + flush``, differs from the
    relative-error weight ``r_j`` (``|r_j - p_j| <= tau p_j``, ``r_j <= (1 + u) / (1 - gamma_n)``) by at most
    ``r_j h / (S' - h) + alpha (1 + u) / ((S' - h)(1 - gamma_n)) + s/2 + flush``, so
    ``a = (1 + u)(h + alpha) / ((1 - gamma_n)(1 - e - h)) + s/2 + flush``, evaluated in exact rational arithmetic
    and rounded up to a float64.

    Raises:
        ValueError: ``d`` or ``n`` below 1, an unknown dtype, a negative or non-finite magnitude, ``u`` not in
            ``(0, 1)``, a negative or non-finite ``flush``, or a ``gamma_k`` that does not exist in the format.

    Examples:
        A softmax computed in float32 against the same float32 inputs in float64 (exact to ``1e-16``, far
        below the bound):

        >>> import numpy as np
        >>> from attention_claims.testkit import logit_magnitude_bound, softmax_tolerance, within_rounding
        >>> rng = np.random.default_rng(0)
        >>> Q = rng.standard_normal((4, 16)).astype(np.float32)
        >>> K = rng.standard_normal((6, 16)).astype(np.float32)
        >>> def softmax(z):
        ...     e = np.exp(z - z.max(axis=1, keepdims=True))
        ...     return e / e.sum(axis=1, keepdims=True)
        >>> p32 = softmax(Q @ K.T * np.float32(0.25))  # s = 1/sqrt(16), exact
        >>> p = softmax(Q.astype(np.float64) @ K.astype(np.float64).T * 0.25)
        >>> tau = softmax_tolerance(logit_magnitude_bound(Q, K), d=16, n=6, dtype="float32")
        >>> bool(tau.largest < 1e-4), within_rounding(p32, p, tau.around(p))
        (True, True)
        >>> softmax_tolerance(1.0, d=0, n=6, dtype="float32")
        Traceback (most recent call last):
            ...
        ValueError: rounding: d must be an integer >= 1, got 0
    """
    _counts(d=d, n=n)
    if not (isinstance(flush, (int, float)) and math.isfinite(flush) and flush >= 0):
        raise ValueError(f"rounding: flush must be a finite number >= 0, got {flush!r}")
    w = _unit(dtype, u)
    L = _magnitude(logit_magnitude)
    s = SMALLEST_SUBNORMAL[dtype_name(dtype)]
    e = 2 * w * exp_ulps
    r = logit_roundings
    delta = 2 * _gamma_u(d + r + 1, w) * L + e / (1 - e) + 2 * (d + r + 1) * (s / 2 + flush)
    tau = np.expm1(2 * delta) * (1 + _gamma_u(n, w)) + _gamma_u(n, w)
    if np.ndim(tau):
        tau = np.asarray(tau)[:, None]
    absolute = _underflow_absolute(n, w, e, s, exp_ulps, flush)
    where = "flushed to zero below the smallest normal" if flush else "gradual underflow"
    return SoftmaxTolerance(tau, absolute,
                            f"tau = e^(2 Delta)(1 + gamma_{n}) - 1, Delta = 2 gamma_{d + r + 1} L + exp error "
                            f"({exp_ulps:g} ulp), L = {_label(L)}, u = {w:.3g} ({dtype_name(dtype)}; Higham eqs. "
                            f"3.4, 3.5, Lemma 3.3); absolute {absolute:.3g} for exps, sums and quotients that "
                            f"underflow ({where}; Higham Thm 2.2)")


def _underflow_absolute(n: int, w: float, e: float, s: float, exp_ulps: float, flush: float) -> float:
    """``a = (1 + u)(h + alpha) / ((1 - gamma_n)(1 - e - h)) + s/2 + flush`` of :func:`softmax_tolerance`, with
    ``alpha = exp_ulps s + flush`` and ``h = (n alpha + (n - 1) flush)(1 + gamma_n)``, in exact rationals rounded
    up to the next float64 (a float64 evaluation rounds to nearest, which can lie below the bound: in float64
    ``a`` is a few subnormals, where one rounding is a large share of it)."""
    U, E, S, F = Fraction(w), Fraction(e), Fraction(s), Fraction(flush)
    g = n * U / (1 - n * U)
    alpha = Fraction(exp_ulps) * S + F
    h = (n * alpha + (n - 1) * F) * (1 + g)
    if not E + h < 1:
        raise ValueError(f"rounding: the exp error {e:g} leaves no lower bound on the normaliser")
    a = (1 + U) * (h + alpha) / ((1 - g) * (1 - E - h)) + S / 2 + F
    f = float(a)
    return f if Fraction(f) >= a else math.nextafter(f, math.inf)


def _half_up(x: float) -> float:
    """``x / 2`` in float64, or ``x`` where that rounds below ``x / 2`` (half of float64's smallest subnormal
    rounds to 0): never less than the exact half, so a bound that adds it stays a bound."""
    h = x / 2
    return h if Fraction(h) * 2 >= Fraction(x) else x


def attention_output_tolerance(logit_magnitude: float | np.ndarray, value_max: float, d: int, n: int,
                               dtype: str | torch.dtype | np.dtype, *, exp_ulps: float = 1.0,
                               u: float | None = None, logit_roundings: int = 2,
                               stored: str | torch.dtype | np.dtype | None = None, rescalings: int = 0,
                               output: str | torch.dtype | np.dtype | None = None, flush: float = 0.0) -> Tolerance:
    """The absolute bound on ``|o_hat - o|`` for one entry of an attention output ``o = softmax(z) V`` computed
    in floating point by any kernel that evaluates the logits, exps and sums in the working precision in any
    order (a fused kernel's order of operations need not be known).

    Args:
        logit_magnitude: as :func:`softmax_tolerance` (one number, or one per row of shape ``(N,)``).
        d: as :func:`softmax_tolerance`.
        n: as :func:`softmax_tolerance`.
        dtype: as :func:`softmax_tolerance`.
        exp_ulps: as :func:`softmax_tolerance`.
        u: as :func:`softmax_tolerance`.
        logit_roundings: as :func:`softmax_tolerance`.
        value_max: ``max |V|`` (a number; the bound is absolute, in the units of ``V``).
        stored: the dtype the unnormalised weights are rounded to before the product with ``V`` (FlashAttention
            rounds ``P`` to the input dtype for the second matrix product), or ``None``.
        rescalings: how many times a partial sum is rescaled (an online softmax rescales once per key block: at
            most ``n``); the same rounded factor scales the numerator and the normaliser, so only the
            multiplications' roundings remain.
        output: the dtype the result is rounded to, or ``None``.
        flush: an absolute error allowed on each exp (e.g. ``2^-126`` where subnormals are flushed to 0).

    Returns:
        A :class:`Tolerance` in the units of ``V``: one number, or an ``(N, 1)`` array (one bound per row, which
        broadcasts over the row's ``d_v`` outputs) when ``logit_magnitude`` is an array of shape ``(N,)``.

    Derivation: the weights are those of :func:`softmax_tolerance` before normalisation, each ``(1 + sigma_j)``
    with ``|sigma_j| <= u_stored`` (plus ``s/2`` absolutely, ``s`` the stored dtype's smallest subnormal,
    Higham Thm 2.2); numerator and normaliser are sums of ``n`` terms in any order with ``rescalings`` more
    roundings (eq. (3.4)), and the quotient one more, so ``o_hat = sum_j w_j v_j (1 + phi_j)``, ``w`` the softmax
    of the moved logits, ``|phi_j| <= (1 + u_stored)(1 + gamma_(2n + 2 rescalings + 1)) - 1`` (Lemma 3.3). With
    ``|w_j - p_j| <= (e^(2 Delta') - 1) p_j`` and ``sum_j p_j |v_j| <= max |V|``:
    ``|o_hat - o| <= [e^(2 Delta')(1 + phi) - 1] max|V| + 2 n alpha max|V| / (1 - e - n alpha) + u_out |o_hat|``,
    ``alpha = exp_ulps s_work + s/2 + flush`` the absolute error of an exp whose result underflows (``s_work`` the
    working dtype's smallest subnormal: its spacing there), plus ``(n + rescalings)(s_work/2)(1 + phi) / (1 - e -
    n alpha) + s_work/2`` for products, rescalings and the quotient whose results underflow, and ``s_out/2`` for
    the output's rounding in that range (so that a subnormal ``max|V|`` is bounded too).
    A wrong kernel (a dropped mask, a wrong scale, a wrong row) moves outputs by a share of ``max |V|``; the
    bound is that share only where ``Delta'`` reaches ~0.1 (logits of order ``0.1 / (2 gamma_d)``).

    Raises:
        ValueError: as :func:`softmax_tolerance`, a negative ``rescalings`` or ``flush``, or a bad ``value_max``.

    Examples:
        Attention computed in float32 against the same float32 inputs in float64:

        >>> import numpy as np
        >>> from attention_claims.testkit import attention_output_tolerance, logit_magnitude_bound, within_rounding
        >>> rng = np.random.default_rng(0)
        >>> Q, K, V = (rng.standard_normal(shape).astype(np.float32) for shape in [(4, 16), (6, 16), (6, 8)])
        >>> def attention(Q, K, V):
        ...     z = Q @ K.T * Q.dtype.type(0.25)  # s = 1/sqrt(16), exact
        ...     e = np.exp(z - z.max(axis=1, keepdims=True))
        ...     return (e / e.sum(axis=1, keepdims=True)) @ V
        >>> o32 = attention(Q, K, V)
        >>> o = attention(*(x.astype(np.float64) for x in (Q, K, V)))
        >>> tol = attention_output_tolerance(logit_magnitude_bound(Q, K), float(np.abs(V).max()), d=16, n=6,
        ...                                  dtype="float32")
        >>> within_rounding(o32, o, tol), within_rounding(o32 + 1e-3, o, tol)
        (True, False)
    """
    _counts(d=d, n=n)
    if isinstance(rescalings, bool) or not isinstance(rescalings, int) or rescalings < 0 or flush < 0:
        raise ValueError(f"rounding: rescalings must be an integer >= 0 and flush >= 0, got {rescalings!r}, {flush!r}")
    w = _unit(dtype, u)
    vmax, L = float(_magnitude(value_max)), _magnitude(logit_magnitude)
    e = 2 * w * exp_ulps
    delta = 2 * _gamma_u(d + logit_roundings + 1, w) * L + e / (1 - e)
    us = UNIT_ROUNDOFF[dtype_name(stored)] if stored is not None else 0.0
    ss = SMALLEST_SUBNORMAL[dtype_name(stored if stored is not None else dtype)]
    phi = (1 + us) * (1 + _gamma_u(2 * n + 2 * rescalings + 1, w)) - 1
    # an exp whose result underflows keeps no relative accuracy: off by exp_ulps spacings of the working
    # dtype, then half a spacing of the stored one, plus flush (Higham Thm 2.2); moving n exps by at most
    # alpha each moves a convex combination of values in [-max|V|, max|V|] by at most n alpha 2 max|V| over
    # the normaliser, which is at least 1 - e - n alpha (it holds the row maximum's exp(0))
    alpha = exp_ulps * SMALLEST_SUBNORMAL[dtype_name(dtype)] + _half_up(ss) + flush
    if not e + n * alpha < 1:
        raise ValueError(f"rounding: the exp error {e:g} leaves no lower bound on the normaliser")
    bound = (np.expm1(2 * delta) * (1 + phi) + phi) * vmax + 2 * n * alpha * vmax / (1 - e - n * alpha)
    # a product p_j v_j, a rescaling or the quotient whose result underflows is off by half a spacing of the
    # working dtype, absolutely, not relatively (Higham Thm 2.2; an addition whose exact result is subnormal is
    # exact): n + rescalings such terms in the numerator, over the normaliser's lower bound, and the quotient's
    # own; a tiny max|V| (subnormal) is bounded by these terms, not by the relative ones above
    s_work = SMALLEST_SUBNORMAL[dtype_name(dtype)]
    bound = bound + _half_up(((n + rescalings) * (1 + phi) / (1 - e - n * alpha) + 1) * s_work)
    if output is not None:
        s_out = SMALLEST_SUBNORMAL[dtype_name(output)]
        bound = bound * (1 + UNIT_ROUNDOFF[dtype_name(output)]) + UNIT_ROUNDOFF[dtype_name(output)] * vmax + _half_up(s_out)
    if np.ndim(bound):
        bound = np.asarray(bound)[:, None]
    parts = [f"[e^(2 Delta)(1 + phi) - 1] max|V|, Delta = 2 gamma_{d + logit_roundings + 1} L + exp error "
             f"({exp_ulps:g} ulp), phi = (1 + u_stored)(1 + gamma_{2 * n + 2 * rescalings + 1}) - 1, L = {_label(L)}, "
             f"max|V| = {vmax:.3g}, u = {w:.3g} ({dtype_name(dtype)})"]
    if stored is not None:
        parts.append(f"weights stored in {dtype_name(stored)}")
    if output is not None:
        parts.append(f"output rounded to {dtype_name(output)}")
    return Tolerance(bound, "; ".join(parts) + " (any summation order: Higham eqs. 3.4, 3.5, Lemma 3.3, Thm 2.2)")


def _counts(**counts) -> None:
    for name, k in counts.items():
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"rounding: {name} must be an integer >= 1, got {k!r}")


def _unit(dtype, u) -> float:
    """The working unit roundoff: ``u`` when given (checked in (0, 1)), else ``dtype``'s."""
    name = dtype_name(dtype)
    if u is None:
        return UNIT_ROUNDOFF[name]
    if not (isinstance(u, (int, float)) and 0 < u < 1):
        raise ValueError(f"rounding: a unit roundoff must lie in (0, 1), got {u!r}")
    return float(u)


def _gamma_u(k: int, u: float) -> float:
    """Higham's ``gamma_k = k u / (1 - k u)`` for an explicit unit roundoff (Lemma 3.1)."""
    if k * u >= 1:
        raise ValueError(f"rounding: gamma_{k} does not exist for u = {u:g} (k u >= 1)")
    return k * u / (1 - k * u)


def logit_magnitude_bound(Q, K, scale: float | None = None) -> float:
    """An upper bound ``L >= max_ij s |q_i| . |k_j|`` on the logits' magnitude, the ``logit_magnitude`` of
    :func:`softmax_tolerance`, from float64 ``Q (N, d)`` and ``K (M, d)``; ``s = 1/sqrt(d)`` (the default of
    :func:`attention_claims.maths.softmax_attention`) or ``scale``. Dimensionless (logits are in nats).

    Derivation: the float64 value ``c = fl(max(|Q| |K|^T) * fl(s))`` is ``v (1 + theta)`` with ``v`` the exact
    value and ``|theta| <= gamma_(d+3)`` (a length-``d`` dot product of non-negative terms, eq. (3.5); ``1/sqrt d``
    rounded twice; the product once: Higham, 2nd ed., Lemma 3.1), so ``v <= c / (1 - gamma_(d+3))``; that
    quotient's own rounding (at most ``u`` relative, and the rounding of ``gamma`` itself, ~``u gamma``) is
    covered by two steps up to the next float64 (each at least ``u`` relative).

    Args:
        Q: the queries, shape ``(N, d)`` (any float dtype, a NumPy array or a torch tensor; read as float64).
        K: the keys, shape ``(M, d)``.
        scale: the logit scale ``s``, or ``None`` for ``1/sqrt(d)``.

    Returns:
        ``L`` (a ``float``, in nats), for :func:`softmax_tolerance` and :func:`attention_output_tolerance`.

    Raises:
        ValueError: ``Q`` or ``K`` not finite 2-D arrays with the same number of columns ``d >= 1``, a scale
            that is not finite and positive, or ``gamma_(d+3)`` that does not exist.

    Examples:
        >>> import math
        >>> import numpy as np
        >>> from attention_claims.testkit import logit_magnitude_bound
        >>> Q, K = np.array([[1.0, -2.0]]), np.array([[3.0, 1.0], [0.5, 0.5]])  # max |q| . |k| = 5
        >>> L = logit_magnitude_bound(Q, K)
        >>> 5 / math.sqrt(2) <= L < 5 / math.sqrt(2) * (1 + 1e-12), logit_magnitude_bound(Q, K, scale=1.0) >= 5
        (True, True)
        >>> logit_magnitude_bound(Q, K[:, :1])
        Traceback (most recent call last):
            ...
        ValueError: rounding: Q and K must be non-empty 2-D arrays (N, d), (M, d), got (1, 2), (2, 1)
    """
    q, k = _float64(Q), _float64(K)
    if q.ndim != 2 or k.ndim != 2 or q.shape[1] != k.shape[1] or q.shape[1] < 1 or not q.size or not k.size:
        raise ValueError(f"rounding: Q and K must be non-empty 2-D arrays (N, d), (M, d), got {q.shape}, {k.shape}")
    if not (np.isfinite(q).all() and np.isfinite(k).all()):
        raise ValueError("rounding: Q and K must be finite")
    d = q.shape[1]
    s = 1.0 / math.sqrt(d) if scale is None else float(scale)
    if not (math.isfinite(s) and s > 0):
        raise ValueError(f"rounding: the logit scale must be finite and > 0, got {scale!r}")
    c = float((np.abs(q) @ np.abs(k).T).max()) * s
    bound = c / (1 - gamma(d + 3, "float64"))
    return math.nextafter(math.nextafter(bound, math.inf), math.inf)


@dataclass(frozen=True)
class Sigma1Bounds:
    """Exact rational bounds (see :func:`row_stochastic_sigma1_bounds`), all dimensionless.

    Attributes:
        lower_sq: ``|A 1|^2 / M <= sigma_1(A)^2`` for the stored matrix ``A (N, M)``.
        upper_sq: ``>= sigma_1(X)^2`` for every row-stochastic ``X`` with ``|a_ij - x_ij| <= tau x_ij``.
        row_sum_error: ``max_i |sum_j a_ij - 1|`` of the stored matrix, exactly.
        row_sum_bound: ``tau + M * absolute``: what ``row_sum_error`` is at most when ``A`` is such an ``X``
            computed within the bounds (a larger error means the bounds do not describe ``A``).
        tau: the relative bound used, exactly (the float64 value as a fraction).
    """

    lower_sq: Fraction
    upper_sq: Fraction
    row_sum_error: Fraction
    row_sum_bound: Fraction
    tau: Fraction


def row_stochastic_sigma1_bounds(A: np.ndarray | torch.Tensor, tau: SoftmaxTolerance | Tolerance | float,
                                 absolute: float | None = None) -> Sigma1Bounds:
    """Bounds on the largest singular value of a row-stochastic matrix known through a computed one, without an
    SVD (LAPACK states no constant for its singular values' error), in exact rational arithmetic on the float64
    entries.

    Args:
        A: the stored float64 matrix ``A (N, M)``, entries ``>= 0`` (e.g. a computed softmax attention matrix).
        tau: the relative error bound of each entry (a :class:`SoftmaxTolerance` from :func:`softmax_tolerance`,
            whose largest ``tau`` is used, a :class:`Tolerance`, or a number in ``[0, 1)``): the exact matrix ``X``
            has rows summing to 1 and ``|a_ij - x_ij| <= tau x_ij + absolute``.
        absolute: an absolute error allowed on each entry besides ``tau`` (``>= 0``): an exp that underflows
            loses its relative accuracy. ``None`` (the default) takes ``tau.absolute`` from a
            :class:`SoftmaxTolerance` (derived there: a few smallest subnormals) and 0 otherwise.

    Derivation: ``sigma_1 = max_x |A x| / |x|`` (the induced 2-norm is the largest singular value; Golub & Van
    Loan, *Matrix Computations*, §2.3 and §2.4), so with ``x = 1``: ``sigma_1(A)^2 >= |A 1|^2 / M`` (the squared row sums' mean over
    ``M``; for ``X`` itself this gives ``sigma_1(X) >= 1``). Above: ``sigma_1(X)^2 <= |X|_1 |X|_inf``
    (Golub & Van Loan, Cor. 2.3.2), ``|X|_inf = 1`` (rows sum to 1) and ``x_ij <= (a_ij + absolute) / (1 - tau)``,
    so ``sigma_1(X)^2 <= (max_j sum_i a_ij + N absolute) / (1 - tau)``. Every sum is exact (``fractions.Fraction``).

    Raises:
        ValueError: ``A`` not a non-empty finite 2-D array of entries ``>= 0``, ``tau`` not in ``[0, 1)``, or
            ``absolute`` negative or not finite.
    """
    a = _float64(A)
    if a.ndim != 2 or not a.size or not np.isfinite(a).all() or (a < 0).any():
        raise ValueError(f"rounding: A must be a non-empty finite 2-D array of entries >= 0, got shape {a.shape}")
    t = Fraction(float(tau.largest if isinstance(tau, (Tolerance, SoftmaxTolerance)) else tau))
    if absolute is None:
        absolute = tau.absolute if isinstance(tau, SoftmaxTolerance) else 0.0
    if not 0 <= t < 1:
        raise ValueError(f"rounding: tau must lie in [0, 1), got {float(t)!r}")
    if not (math.isfinite(absolute) and absolute >= 0):
        raise ValueError(f"rounding: the absolute error must be finite and >= 0, got {absolute!r}")
    ab = Fraction(float(absolute))
    exact = [[Fraction(float(x)) for x in row] for row in a]
    rows = [sum(row, Fraction(0)) for row in exact]
    cols = [sum(col, Fraction(0)) for col in zip(*exact, strict=True)]
    return Sigma1Bounds(lower_sq=sum(r * r for r in rows) / a.shape[1],
                        upper_sq=(max(cols) + a.shape[0] * ab) / (1 - t),
                        row_sum_error=max(abs(r - 1) for r in rows), row_sum_bound=t + a.shape[1] * ab, tau=t)
