"""Attention builders: logits, softmax attention, causal masks, linear attention, feature maps.

Shapes follow the literature: ``Q`` is ``(N, d)`` (N queries of head dimension d),
``K`` is ``(M, d)`` (usually ``M = N``); the attention matrix is ``(N, M)``.
Inputs may be NumPy arrays or torch tensors; outputs are torch tensors on the input's
device (NumPy input goes to the CPU). All quantities are dimensionless.

Sources:
- scaled dot-product attention ``softmax(Q K^T / sqrt(d))``: Vaswani et al. 2017,
  "Attention Is All You Need", §3.2.1, eq. (1); 003 定义 11.24.
- the causal (lower-triangular) mask: Vaswani et al. 2017 §3.2.3; 002 "低秩问题".
- linear attention ``phi(Q) phi(K)^T`` normalised by row sums: Katharopoulos et al. 2020,
  "Transformers are RNNs", §3.2, eq. (4)-(6) (arXiv:2006.16236); elu+1 is their eq. (7).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch

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


def logits(Q, K, *, scale: float | None = None, dtype="float64", device=None) -> torch.Tensor:
    """Attention logits ``Q K^T * scale``, shape ``(N, M)``, computed in ``dtype``.

    ``scale`` defaults to ``1/sqrt(d)`` (Vaswani et al. 2017, eq. (1); 003 定义 11.24).

    Raises:
        AttentionInputError: on bad shapes or non-finite input, or mismatched head dims.
    """
    dt = resolve_dtype(dtype)
    q = as_tensor(Q, "Q", dtype=dt, device=device)
    k = as_tensor(K, "K", dtype=dt, device=device if device is not None else q.device)
    if q.shape[1] != k.shape[1]:
        raise AttentionInputError(f"Q, K: head dimensions differ ({q.shape[1]} vs {k.shape[1]})")
    d = q.shape[1]
    s = 1.0 / math.sqrt(d) if scale is None else float(scale)
    return (q @ k.T) * s


def causal_mask(N: int, M: int | None = None, *, device=None) -> torch.Tensor:
    """Boolean ``(N, M)`` mask, ``True`` where query ``i`` may attend to key ``j <= i``.

    Raises:
        AttentionInputError: if ``N`` or ``M`` is not a positive integer.
    """
    M = N if M is None else M
    if not (isinstance(N, int) and isinstance(M, int) and N > 0 and M > 0):
        raise AttentionInputError(f"causal_mask: N and M must be positive integers, got {N!r}, {M!r}")
    return torch.ones(N, M, dtype=torch.bool, device=device).tril()


def softmax_attention(Q, K, *, causal: bool = False, scale: float | None = None, dtype="float64",
                      device=None) -> torch.Tensor:
    """Softmax attention matrix ``A = softmax(mask(Q K^T * scale))``, shape ``(N, M)``.

    Computed entirely in ``dtype`` with ``torch.softmax`` (which subtracts the row maximum),
    as a model running in that dtype would; masked logits are ``-inf``.
    Source: Vaswani et al. 2017 eq. (1); 003 定义 11.24; causal: 002 "低秩问题".

    Raises:
        AttentionInputError: on bad input (see :func:`logits`).
    """
    z = logits(Q, K, scale=scale, dtype=dtype, device=device)
    if causal:
        mask = causal_mask(z.shape[0], z.shape[1], device=z.device)
        z = z.masked_fill(~mask, float("-inf"))
    return torch.softmax(z, dim=-1)


def _elu_plus_one(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.elu(x) + 1.0


FEATURE_MAPS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "identity": lambda x: x,
    "relu": torch.relu,
    "elu+1": _elu_plus_one,  # Katharopoulos et al. 2020, eq. (7)
    "exp": torch.exp,
}


def feature_map(name: str) -> Callable[[torch.Tensor], torch.Tensor]:
    """The elementwise feature map called ``name`` (``identity``, ``relu``, ``elu+1``, ``exp``).

    Raises:
        AttentionInputError: for an unknown name.
    """
    try:
        return FEATURE_MAPS[name]
    except KeyError:
        raise AttentionInputError(f"feature map: unknown {name!r} (one of {', '.join(FEATURE_MAPS)})") from None


def linear_attention(Q, K, *, phi: str = "elu+1", causal: bool = False, normalize: bool = True,
                     dtype="float64", device=None) -> torch.Tensor:
    """Linear attention matrix ``phi(Q) phi(K)^T`` (masked, row-normalised), shape ``(N, M)``.

    Source: Katharopoulos et al. 2020, §3.2 eq. (4)-(6); 002 "低秩问题" (rank at most d
    without a mask). With ``normalize`` each row is divided by its sum, as in eq. (6); a
    row whose sum is zero is left as zeros (its normaliser is undefined).

    Raises:
        AttentionInputError: on bad input or an unknown feature map.
    """
    f = feature_map(phi)
    dt = resolve_dtype(dtype)
    q = f(as_tensor(Q, "Q", dtype=dt, device=device))
    k = f(as_tensor(K, "K", dtype=dt, device=device if device is not None else q.device))
    if q.shape[1] != k.shape[1]:
        raise AttentionInputError(f"Q, K: head dimensions differ ({q.shape[1]} vs {k.shape[1]})")
    s = q @ k.T
    if causal:
        s = s * causal_mask(s.shape[0], s.shape[1], device=s.device).to(s.dtype)
    if normalize:
        z = s.sum(dim=-1, keepdim=True)
        s = torch.where(z != 0, s / torch.where(z != 0, z, torch.ones_like(z)), torch.zeros_like(s))
    return s


def cuda_available() -> bool:
    """Whether a CUDA device can run the CUDA readings here."""
    return torch.cuda.is_available()
