"""The batched engine: many random attention instances per Hypothesis example, evaluated in one
torch call on the CPU or on CUDA (issue 15).

A layer of its own, between :mod:`attention_claims.maths` (the per-instance reference mathematics,
float and certified) and the checks: it takes ``device`` and ``dtype`` as parameters and runs the
same code on either device. It decides nothing by itself. A batched reading finds *suspects*
(instances whose float64 statistic breaks the claim) and hands each one, as a plain float64 NumPy
instance, to the certified recomputation in :mod:`attention_claims.maths` on the CPU
(:mod:`.batched` module docstring). Like :mod:`attention_claims.maths`, it imports neither pytest
nor the framework.

- :mod:`.batched` — seeded instance batches (reproducible from ``(seed, index)``), batched softmax
  attention, log-space causal diagonals and determinants, batched singular values (``svdvals`` or
  the Gram matrix and ``eigvalsh``), numerical and effective ranks, row cosines, and the suspects of a batch.
"""

from __future__ import annotations

from .._lazy import lazy_exports

MODULES = ("batched",)
"""The modules of this layer."""

_WHERE = {name: "batched" for name in (
    "DeviceUnavailable",
    "resolve_device",
    "seeded_gaussian_batch",
    "seeded_uniform_batch",
    "batch_logits",
    "attention_batch",
    "causal_log_diagonal",
    "causal_log_det",
    "singular_values_batch",
    "numerical_ranks",
    "effective_ranks",
    "near_zero_fractions",
    "mean_row_cosines",
    "suspects",
)}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _WHERE)
