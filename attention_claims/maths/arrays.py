"""Input validation, dtype and device resolution shared by every concept.

One family of validators, one message per fault, every message starting with the argument's name:

- :func:`as_array`: array-like or tensor -> float64 NumPy array (``ndim``, ``integer``, ``square``
  options); every NumPy-level input of :mod:`attention_claims.maths` goes through it;
- :func:`as_tensor`: the same checks for torch inputs, keeping the tensor's dtype and device
  unless told otherwise;
- :func:`as_int`: a Python integer in a range (:func:`positive_int` is its common case);
- :func:`resolve_dtype`, :func:`cuda_available`: dtype names and the CUDA device.

Every fault raises :class:`AttentionInputError` (a ``ValueError``).

``torch`` here is a stand-in (:class:`attention_claims._lazy.LazyModule`) that imports torch on first use;
the other maths modules reach torch through it, so importing them costs no second.
"""

from __future__ import annotations

import math

import numpy as np

from .._lazy import LazyModule, loaded

torch = LazyModule("torch")  # imported by the first function that needs it (about 1 s)

DTYPES = ("float64", "float32", "bfloat16", "float16")
"""The dtype names :func:`resolve_dtype` accepts, each the name of a torch dtype."""


def is_tensor(x) -> bool:
    """Whether ``x`` is a torch tensor (of any shape, dtype or device), without importing torch (no tensor
    exists before torch is). Never raises.
    """
    t = loaded("torch")
    return t is not None and isinstance(x, t.Tensor)


class AttentionInputError(ValueError):
    """Bad input to a builder: wrong shape, empty, NaN or Inf. The message names the argument."""


def _check(name: str, shape: tuple[int, ...], finite: bool, ndim: int | None) -> None:
    """The checks :func:`as_array` and :func:`as_tensor` share, in this order (messages are part
    of the interface: tests match them)."""
    if ndim is not None and len(shape) != ndim:
        raise AttentionInputError(f"{name}: expected {ndim} dimensions, got shape {shape}")
    if math.prod(shape) == 0:
        raise AttentionInputError(f"{name}: empty array of shape {shape}")
    if not finite:
        raise AttentionInputError(f"{name}: contains NaN or Inf")


def as_array(x, name: str, *, ndim: int | None = 2, integer: bool = False, square: bool = False) -> np.ndarray:
    """``x`` (array-like or torch tensor, any device) as a validated float64 NumPy array.

    Shape: that of ``x``, which must have ``ndim`` axes (``None``: any), e.g. ``(N, d)`` for the default
    ``ndim=2``; ``square`` asks for ``(n, n)``. Units: those of ``x`` (values unchanged).

    Checks, in order: numeric, ``ndim`` dimensions (``None``: any), non-empty, finite, then with
    ``integer`` every entry an integer (the array stays float64: exact for ``|x| <= 2^53``), with
    ``square`` a square matrix. float64 is exact for every float32/bfloat16/float16 value, so no
    information is lost on the way (IEEE 754-2019: each of these formats is a subset of binary64).

    Raises:
        AttentionInputError: a check fails (named by ``name``).
    """
    if is_tensor(x):
        x = x.detach().to("cpu", torch.float64).numpy()
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise AttentionInputError(f"{name}: not a numeric array ({exc})") from None
    _check(name, a.shape, bool(np.isfinite(a).all()), ndim)
    if integer and not np.all(a == np.round(a)):
        raise AttentionInputError(f"{name}: entries must be integers")
    if square and (a.ndim != 2 or a.shape[0] != a.shape[1]):
        raise AttentionInputError(f"{name}: expected a square matrix, got shape {a.shape}")
    return a


def as_tensor(x, name: str, *, dtype: torch.dtype | None = None, device: str | torch.device | None = None,
              ndim: int = 2) -> torch.Tensor:
    """Validate and convert ``x`` to a torch tensor: the checks of :func:`as_array` (numeric,
    ``ndim`` dimensions, non-empty, finite) on the tensor as given (a tensor keeps its dtype and
    device; other input becomes float64), then moved to ``device`` and cast to ``dtype``.

    Shape: that of ``x``, with ``ndim`` axes (``(N, d)`` for the default ``ndim=2``). Units: those of
    ``x`` (values unchanged, up to the rounding of the cast to ``dtype``).

    Raises:
        AttentionInputError: a check fails (named by ``name``).
    """
    if is_tensor(x):
        t = x
    else:
        try:
            t = torch.as_tensor(np.asarray(x, dtype=np.float64))
        except (TypeError, ValueError) as exc:
            raise AttentionInputError(f"{name}: not a numeric array ({exc})") from None
    _check(name, tuple(t.shape), bool(torch.isfinite(t).all()), ndim)
    if device is not None:
        t = t.to(device)
    if dtype is not None:
        t = t.to(dtype)
    return t


def as_int(v, name: str, *, lo: int = 1, hi: int | None = None) -> int:
    """``v`` (a Python or NumPy integer, not a bool) as an ``int`` in ``[lo, hi]`` (``hi=None``: no
    upper bound).

    Raises:
        AttentionInputError: ``v`` is not an integer or lies outside the range.
    """
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo or (hi is not None and v > hi):
        if hi is not None:
            want = f"an integer in [{lo}, {hi}]"
        else:
            want = {1: "a positive integer", 0: "a non-negative integer"}.get(lo, f"an integer >= {lo}")
        raise AttentionInputError(f"{name}: must be {want}, got {v!r}")
    return int(v)


def positive_int(v, name: str) -> int:
    """``as_int(v, name)``: an integer ``>= 1``.

    Raises:
        AttentionInputError: ``v`` is not a positive integer.
    """
    return as_int(v, name)


def resolve_dtype(dtype: str | torch.dtype) -> torch.dtype:
    """Map ``"float32"`` etc. to a torch dtype.

    Raises:
        AttentionInputError: for a name not in :data:`DTYPES`.
    """
    if dtype in DTYPES:
        return getattr(torch, dtype)
    if isinstance(dtype, torch.dtype):
        return dtype
    raise AttentionInputError(f"dtype: unknown {dtype!r} (one of {', '.join(DTYPES)})")


def cuda_available() -> bool:
    """Whether a CUDA device can run the CUDA readings here."""
    return torch.cuda.is_available()
