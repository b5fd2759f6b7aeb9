"""Batched attention mathematics in torch, one code path for the CPU and CUDA.

Shapes: a batch of ``B`` instances with ``N`` queries and keys of head dimension ``d``:
``Q, K (B, N, d)``; attention matrices ``A (B, N, N)``; singular values ``s (B, N)`` (descending).

How it is used (issue 15). A check draws ``(seed, N, d, logit scale)`` from Hypothesis, builds ``B``
instances from the seed (:func:`seeded_gaussian_batch`: instance 0 is exactly the instance the
per-example check draws from the same values, so a batch is a superset of it), evaluates a
statistic on all of them in one call, and takes the :func:`first_suspect`. A suspect is *not* a
counterexample: the check hands ``Q[i], K[i]`` (float64 NumPy, exact copies of the generated
values) to the per-instance reference and certified recomputation of
:mod:`attention_claims.maths` on the CPU, and only that decides. Hypothesis still shrinks
``(seed, N, d, scale)``, and ``(seed, index)`` reproduces a failing instance.

The instances are always generated on the CPU in float64 with NumPy's ``default_rng(seed)``, then
moved to ``device`` and cast to ``dtype``, so the same seed gives the same instances on every
device.

Float agreement with the reference: the batched statistics are float64 (or ``dtype``) and may
differ from the per-instance NumPy ones by a few ulps (LAPACK batched vs unbatched, ``cumsum``
vs ``math.fsum``). A suspect the reference does not confirm is discarded (and counted by the
checks); an instance within ulps of a threshold that the batch misses is a measure-zero event for
the continuous draws used here.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..maths.arrays import AttentionInputError, cuda_available, resolve_dtype


class DeviceUnavailable(RuntimeError):
    """The requested device (``cuda``) is not available on this machine."""


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``device`` (``"cpu"``, ``"cuda"``, ``"cuda:1"``, a ``torch.device`` or ``None`` for the CPU)
    as a ``torch.device``.

    Raises:
        DeviceUnavailable: a CUDA device was asked for and no GPU is present (the checks skip
            first, with :func:`attention_claims.testkit.require_device`).
    """
    dev = torch.device("cpu" if device is None else device)
    if dev.type == "cuda" and not cuda_available():
        raise DeviceUnavailable(f"device {dev}: no CUDA GPU on this machine")
    return dev


def _check_draw(batch: int, N: int, d: int, scale: float) -> None:
    """The arguments of the seeded batch generators: positive integer sizes and a finite scale."""
    for name, v in (("batch", batch), ("N", N), ("d", d)):
        if not (isinstance(v, int | np.integer) and v >= 1):
            raise AttentionInputError(f"{name}: must be a positive integer, got {v!r}")
    if not math.isfinite(scale):
        raise AttentionInputError(f"scale: must be finite, got {scale!r}")


def seeded_gaussian_batch(seed: int, batch: int, N: int, d: int, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """``B = batch`` standard Gaussian instances ``Q (B, N, d)`` times ``scale`` and ``K (B, N, d)``,
    float64, from ``numpy.random.default_rng(seed)``.

    Instance 0 is drawn first, ``Q`` then ``K``, exactly as
    :func:`attention_claims.testkit.seeded_gaussian_qk` draws them (so it *is* the per-example
    check's instance); instances ``1..B-1`` follow, all ``Q`` then all ``K``. Instance ``i`` is a
    function of ``(seed, batch, N, d, scale, i)`` alone.

    Raises:
        AttentionInputError: ``batch``, ``N`` or ``d`` not a positive integer, or ``scale`` not finite.
    """
    _check_draw(batch, N, d, scale)
    rng = np.random.default_rng(seed)
    Q = np.empty((batch, N, d))
    K = np.empty((batch, N, d))
    Q[0] = rng.standard_normal((N, d)) * scale
    K[0] = rng.standard_normal((N, d))
    if batch > 1:
        Q[1:] = rng.standard_normal((batch - 1, N, d)) * scale
        K[1:] = rng.standard_normal((batch - 1, N, d))
    return Q, K


def seeded_uniform_batch(seed: int, batch: int, N: int, d: int, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """``B = batch`` instances with entries uniform in ``[-1, 1)``: ``Q (B, N, d)`` times ``scale`` and
    ``K (B, N, d)``, float64, from ``numpy.random.default_rng(seed)`` (the domain of
    :func:`attention_claims.testkit.qk_pairs`, logits at most ``scale * sqrt(d)`` in size).

    Raises:
        AttentionInputError: ``batch``, ``N`` or ``d`` not a positive integer, or ``scale`` not finite.
    """
    _check_draw(batch, N, d, scale)
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.0, 1.0, (batch, N, d)) * scale, rng.uniform(-1.0, 1.0, (batch, N, d))


def _tensor(x, device, dtype) -> torch.Tensor:
    t = x if isinstance(x, torch.Tensor) else torch.as_tensor(np.asarray(x, dtype=np.float64))
    if t.ndim != 3:
        raise AttentionInputError(f"expected a (B, N, d) batch, got shape {tuple(t.shape)}")
    return t.to(device=resolve_device(device), dtype=resolve_dtype(dtype))


def batch_logits(Q, K, *, scale: float | None = None, device="cpu", dtype="float64") -> torch.Tensor:
    """Logits ``Q K^T * scale``, shape ``(B, N, M)``, computed in ``dtype`` on ``device``, as
    :func:`attention_claims.maths.logits` computes one instance (``scale`` defaults to
    ``1/sqrt(d)``; Vaswani et al. 2017, eq. (1); 003 定义 11.24).

    Raises:
        AttentionInputError: not ``(B, N, d)`` batches, or head dimensions differ.
        DeviceUnavailable: ``device`` is CUDA without a GPU.
    """
    q, k = _tensor(Q, device, dtype), _tensor(K, device, dtype)
    if q.shape[0] != k.shape[0] or q.shape[2] != k.shape[2]:
        raise AttentionInputError(f"Q {tuple(q.shape)}, K {tuple(k.shape)}: batch or head dimensions differ")
    s = 1.0 / math.sqrt(q.shape[2]) if scale is None else float(scale)
    return torch.matmul(q, k.transpose(1, 2)) * s


def attention_batch(Q, K, *, causal: bool = False, scale: float | None = None, device="cpu",
                    dtype="float64") -> torch.Tensor:
    """Softmax attention ``softmax(mask(Q K^T * scale))`` of every instance, ``(B, N, M)``, in
    ``dtype`` on ``device`` (``torch.softmax`` subtracts the row maximum), as
    :func:`attention_claims.maths.softmax_attention` computes one instance. Source: Vaswani et al.
    2017 eq. (1); causal mask ``j <= i``: 002 "低秩问题".

    Raises:
        AttentionInputError, DeviceUnavailable: see :func:`batch_logits`.
    """
    z = batch_logits(Q, K, scale=scale, device=device, dtype=dtype)
    if causal:
        N, M = z.shape[1], z.shape[2]
        mask = torch.ones(N, M, dtype=torch.bool, device=z.device).tril()
        z = z.masked_fill(~mask, float("-inf"))
    return torch.softmax(z, dim=-1)


def causal_log_diagonal(Q, K, *, scale: float | None = None, device="cpu", dtype="float64") -> torch.Tensor:
    """``log A_ii`` (nats) of the causal softmax attention of every instance, ``(B, N)``, in log
    space: ``log A_ii = z_ii - logsumexp_{j <= i} z_ij``, which is finite however far the
    diagonal sits below the row maximum (the stored ``A_ii`` underflows to 0 once it is below
    ``exp(underflow_log_threshold(dtype))``, :func:`attention_claims.maths.underflow_log_threshold`).

    Raises:
        AttentionInputError, DeviceUnavailable: see :func:`batch_logits`.
    """
    z = batch_logits(Q, K, scale=scale, device=device, dtype=dtype)
    N = z.shape[1]
    if z.shape[2] != N:
        raise AttentionInputError(f"causal diagonal: logits must be square, got {tuple(z.shape[1:])}")
    mask = torch.ones(N, N, dtype=torch.bool, device=z.device).tril()
    lse = torch.logsumexp(z.masked_fill(~mask, float("-inf")), dim=-1)
    return torch.diagonal(z, dim1=1, dim2=2) - lse


def causal_log_det(Q, K, *, scale: float | None = None, device="cpu", dtype="float64") -> torch.Tensor:
    """``log det A`` (nats) of the causal softmax attention of every instance, ``(B,)``: ``A`` is
    lower triangular, so ``det A = prod_i A_ii`` (the determinant of a triangular matrix is the
    product of its diagonal; Horn & Johnson, Matrix Analysis, 2nd ed., §0.9.3) and
    ``log det A = sum_i log A_ii`` (:func:`causal_log_diagonal`). Finite for every finite input:
    the exact ``det A`` is positive (each ``A_ii = exp(z_ii) / sum_{j<=i} exp(z_ij) > 0``).

    Raises:
        AttentionInputError, DeviceUnavailable: see :func:`batch_logits`.
    """
    return causal_log_diagonal(Q, K, scale=scale, device=device, dtype=dtype).sum(dim=-1)


def singular_values_batch(A: torch.Tensor, *, method: str = "svdvals") -> torch.Tensor:
    """Singular values of every matrix ``A (B, N, M)``, descending, ``(B, min(N, M))``, on ``A``'s
    device and in its dtype (float32 or float64).

    ``method="svdvals"``: ``torch.linalg.svdvals`` (LAPACK ``gesdd`` on the CPU; backward stable,
    absolute error ~ ``eps * sigma_max``). ``method="gram"``: ``sqrt(eigvalsh(A^T A))`` clipped at 0
    (Golub & Van Loan, Matrix Computations, 4th ed., §8.6.1): cheaper, but the small singular
    values lose half their digits (absolute error ~ ``sqrt(eps) * sigma_max``), so use it only
    where ``sigma_i`` well above ``sqrt(eps) sigma_max`` decide (energies, not ranks).

    Raises:
        AttentionInputError: ``A`` is not 3-D, or ``method`` is unknown.
    """
    if A.ndim != 3:
        raise AttentionInputError(f"A: expected (B, N, M), got shape {tuple(A.shape)}")
    if method == "svdvals":
        return torch.linalg.svdvals(A)
    if method == "gram":
        G = A.transpose(1, 2) @ A if A.shape[1] >= A.shape[2] else A @ A.transpose(1, 2)
        ev = torch.linalg.eigvalsh(G).clamp_min(0)
        return ev.flip(-1).sqrt()
    raise AttentionInputError(f"method: 'svdvals' or 'gram', got {method!r}")


def numerical_ranks(s: torch.Tensor, shape: tuple[int, int], eps: float | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Numerical ranks ``(B,)`` (int64) and tolerances ``(B,)`` of matrices of ``shape`` with
    singular values ``s (B, n)`` (descending): the count of ``s_i > tol``, ``tol = s_1 max(N, M)
    eps`` (NumPy's ``matrix_rank`` default, after Press et al., Numerical Recipes, 2nd ed., §2.6;
    :func:`attention_claims.maths.default_rank_tolerance`). ``eps`` defaults to float64's.

    Raises:
        AttentionInputError: ``s`` is not 2-D.
    """
    if s.ndim != 2:
        raise AttentionInputError(f"s: expected (B, n), got shape {tuple(s.shape)}")
    e = float(np.finfo(np.float64).eps) if eps is None else float(eps)
    tol = s[:, 0] * max(shape) * e
    return (s > tol[:, None]).sum(dim=-1), tol


def effective_ranks(s: torch.Tensor, tau: float) -> torch.Tensor:
    """003 定义 11.25's effective rank ``r_tau = min{k : sum_{i<=k} s_i^2 >= tau sum_i s_i^2}`` of
    every row of ``s (B, n)`` (singular values, descending), ``(B,)`` int64, with ``0 < tau < 1``.
    Cumulative energies by ``cumsum`` in ``s``'s dtype (the reference,
    :func:`attention_claims.maths.effective_rank`, sums with ``math.fsum``).

    Raises:
        AttentionInputError: ``s`` not 2-D, ``tau`` outside (0, 1), or a row of zeros.
    """
    if s.ndim != 2:
        raise AttentionInputError(f"s: expected (B, n), got shape {tuple(s.shape)}")
    if not 0 < tau < 1:
        raise AttentionInputError(f"tau: must be in (0, 1), got {tau!r}")
    e = s * s
    cum = e.cumsum(dim=-1)
    total = cum[:, -1:]
    if bool((total <= 0).any()):
        raise AttentionInputError("s: a row of singular values is all zero")
    return (cum < tau * total).sum(dim=-1) + 1


def near_zero_fractions(s: torch.Tensor, rel: float) -> torch.Tensor:
    """The fraction of singular values below ``rel * s_1`` in each row of ``s (B, n)``
    (descending), ``(B,)`` float64 (the statistic of the study note's "most singular values are
    near zero"; ``rel`` is relative to the largest).

    Raises:
        AttentionInputError: ``s`` not 2-D.
    """
    if s.ndim != 2:
        raise AttentionInputError(f"s: expected (B, n), got shape {tuple(s.shape)}")
    return (s < rel * s[:, :1]).to(torch.float64).mean(dim=-1)


def mean_row_cosines(A: torch.Tensor) -> torch.Tensor:
    """Mean cosine between distinct rows of every ``A (B, N, M)``, ``(B,)``: the off-diagonal mean
    of ``U U^T`` with ``U`` the rows scaled to unit l2 norm (as
    :func:`attention_claims.maths.row_cosines`). ``N >= 2``.

    Raises:
        AttentionInputError: ``A`` not 3-D or ``N < 2``.
    """
    if A.ndim != 3 or A.shape[1] < 2:
        raise AttentionInputError(f"A: expected (B, N >= 2, M), got shape {tuple(A.shape)}")
    U = A / torch.linalg.vector_norm(A, dim=-1, keepdim=True)
    C = U @ U.transpose(1, 2)
    n = A.shape[1]
    return (C.sum(dim=(1, 2)) - torch.diagonal(C, dim1=1, dim2=2).sum(dim=-1)) / (n * n - n)


def suspects(mask: torch.Tensor, limit: int = 8) -> list[int]:
    """The indices of the first ``limit`` ``True`` entries of a boolean ``(B,)`` mask, in order: the
    instances a batched check hands to the reference and certified recomputation (one
    device-to-host copy). Later ones are tried only when earlier ones are not confirmed.

    Raises:
        AttentionInputError: ``mask`` is not 1-D, or ``limit < 1``.
    """
    if mask.ndim != 1:
        raise AttentionInputError(f"mask: expected (B,), got shape {tuple(mask.shape)}")
    if limit < 1:
        raise AttentionInputError(f"limit: must be >= 1, got {limit!r}")
    return [int(i) for i in torch.nonzero(mask, as_tuple=False)[:limit, 0].tolist()]
