"""Input validation, dtype and device resolution shared by every concept.
"""

from __future__ import annotations

import numpy as np
import torch

pass


DTYPES = {
    "float64": torch.float64,
    "float32": torch.float32,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
}


class AttentionInputError(ValueError):
    """Bad input to a builder: wrong shape, empty, NaN or Inf. The message names the argument."""


def as_tensor(x, name: str, *, dtype: torch.dtype | None = None, device: str | torch.device | None = None,
              ndim: int = 2) -> torch.Tensor:
    """Validate and convert ``x`` to a torch tensor.

    Raises:
        AttentionInputError: if ``x`` does not have ``ndim`` dimensions, is empty, or holds
            NaN or Inf (named by ``name``).
    """
    if isinstance(x, torch.Tensor):
        t = x
    else:
        try:
            t = torch.as_tensor(np.asarray(x, dtype=np.float64))
        except (TypeError, ValueError) as exc:
            raise AttentionInputError(f"{name}: not a numeric array ({exc})") from None
    if t.ndim != ndim:
        raise AttentionInputError(f"{name}: expected {ndim} dimensions, got shape {tuple(t.shape)}")
    if t.numel() == 0:
        raise AttentionInputError(f"{name}: empty array of shape {tuple(t.shape)}")
    if not torch.isfinite(t).all():
        raise AttentionInputError(f"{name}: contains NaN or Inf")
    if device is not None:
        t = t.to(device)
    if dtype is not None:
        t = t.to(dtype)
    return t


def as_float64_array(x, name: str, ndim: int = 2) -> np.ndarray:
    """``x`` (array-like or torch tensor, any device) as a float64 NumPy array of ``ndim`` dimensions.

    Raises:
        AttentionInputError: if ``x`` does not have ``ndim`` dimensions, is empty, or holds NaN or
            Inf (named by ``name``).
    """
    if isinstance(x, torch.Tensor):
        x = x.detach().to("cpu", torch.float64).numpy()
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != ndim or a.size == 0:
        raise AttentionInputError(f"{name}: expected a non-empty {ndim}-D array, got shape {a.shape}")
    if not np.isfinite(a).all():
        raise AttentionInputError(f"{name}: contains NaN or Inf")
    return a


def resolve_dtype(dtype: str | torch.dtype) -> torch.dtype:
    """Map ``"float32"`` etc. to a torch dtype.

    Raises:
        AttentionInputError: for a name not in :data:`DTYPES`.
    """
    if isinstance(dtype, torch.dtype):
        return dtype
    try:
        return DTYPES[dtype]
    except KeyError:
        raise AttentionInputError(f"dtype: unknown {dtype!r} (one of {', '.join(DTYPES)})") from None


def cuda_available() -> bool:
    """Whether a CUDA device can run the CUDA readings here."""
    return torch.cuda.is_available()


def finite_array(x, name: str, ndim: int | None = None) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        x = x.detach().to("cpu", torch.float64).numpy()
    a = np.asarray(x, dtype=np.float64)
    if ndim is not None and a.ndim != ndim:
        raise AttentionInputError(f"{name}: expected {ndim} dimensions, got shape {a.shape}")
    if a.size == 0:
        raise AttentionInputError(f"{name}: empty array")
    if not np.isfinite(a).all():
        raise AttentionInputError(f"{name}: contains NaN or Inf")
    return a


def finite_matrix(x, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 2 or a.size == 0:
        raise AttentionInputError(f"{name}: expected a non-empty 2-D array, got shape {a.shape}")
    if not np.isfinite(a).all():
        raise AttentionInputError(f"{name}: contains NaN or Inf")
    return a


def positive_int(v, name: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise AttentionInputError(f"{name}: must be a positive integer, got {v!r}")
    return int(v)
