"""The test kit the checks in ``checks/`` use, re-exported from one place (the way
``hypothesis.strategies`` re-exports its ``_internal`` modules):

- parametrisation over claims and readings (:mod:`.params`): ``record``, ``reading_params``,
  ``require_device``;
- Hypothesis strategies (:mod:`.strategies`): ``qk_pairs``, ``log_uniform``, ``shared_argmax_logits``;
- the refutation API (:mod:`attention_claims.framework.evidence`): ``refute``, ``refute_deferred``,
  ``Counterexample``;
- Hypothesis settings profiles (:mod:`attention_claims.framework.profiles`): ``profiles.scaled``;
- figures (:mod:`.figures`): ``plot_sparsity_figure``.
"""

from ..framework import profiles
from ..framework.evidence import Counterexample, refute, refute_deferred
from .figures import plot_sparsity_figure
from .params import NO_CUDA, reading_params, record, require_device
from .strategies import log_uniform, qk_pairs, shared_argmax_logits

__all__ = [
    "NO_CUDA",
    "Counterexample",
    "log_uniform",
    "plot_sparsity_figure",
    "profiles",
    "qk_pairs",
    "reading_params",
    "record",
    "refute",
    "refute_deferred",
    "require_device",
    "shared_argmax_logits",
]
