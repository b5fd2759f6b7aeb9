"""The public test kit (the documentation site's generated reference shows every name with its contract): what the checks in
``checks/`` use, re-exported from one place (the way
``hypothesis.strategies`` re-exports its ``_internal`` modules):

- parametrisation over claims and readings (:mod:`.params`): ``record``, ``reading_params``,
  ``claim_params``, ``claim_reading``, ``require_device``;
- Hypothesis strategies and argument domains (:mod:`.strategies`): ``qk_pairs``, ``integer_qk``,
  ``gaussian_qk`` (and its ``seeded_gaussian_qk``, ``search_seeds``), ``integer_arrays``,
  ``log_uniform``, ``shared_argmax_logits``, ``probability_vector``, ``flat_probability_vector``,
  ``rationals``, ``SEQUENCE_LENGTHS``;
- fixtures (:mod:`.fixtures`): ``one_torch_thread``;
- the refutation API (:mod:`attention_claims.framework.evidence`): ``refute``, ``refute_deferred``,
  ``Counterexample``; the types of the plugin's fixtures ``claim_log`` (``CheckLog``) and ``claimed``
  (``Claimed``);
- Hypothesis settings profiles (:mod:`attention_claims.framework.profiles`): ``profiles.scaled``;
- figures (:mod:`.figures`): ``plot_sparsity_figure``;
- batched checks (:mod:`.batched`): ``BATCH``, ``batched_profile_only``, ``gaussian_batch_spec``;
- rounding bounds (:mod:`attention_claims.maths.rounding`): ``Tolerance``, ``within_rounding``, ``gamma``,
  ``unit_roundoff``, ``sum_tolerance``, ``dot_tolerance``, ``matmul_tolerance``, ``representation_tolerance``;
  for softmax and attention: ``softmax_tolerance`` (a ``SoftmaxTolerance``, relative plus absolute for exps
  that underflow), ``attention_output_tolerance`` and ``logit_magnitude_bound``.
"""

from ..framework import profiles
from ..framework.evidence import CheckLog, Counterexample, refute, refute_deferred
from ..framework.plugin import Claimed
from ..maths.rounding import (
    SoftmaxTolerance,
    Tolerance,
    attention_output_tolerance,
    dot_tolerance,
    gamma,
    logit_magnitude_bound,
    matmul_tolerance,
    representation_tolerance,
    softmax_tolerance,
    sum_tolerance,
    unit_roundoff,
    within_rounding,
)
from .batched import BATCH, batched_profile_only, gaussian_batch_spec
from .figures import plot_sparsity_figure
from .fixtures import one_torch_thread
from .params import NO_CUDA, claim_params, claim_reading, reading_params, record, require_device
from .strategies import (
    SEQUENCE_LENGTHS,
    flat_probability_vector,
    gaussian_qk,
    integer_arrays,
    integer_qk,
    log_uniform,
    probability_vector,
    qk_pairs,
    rationals,
    search_seeds,
    seeded_gaussian_qk,
    shared_argmax_logits,
)

__all__ = [
    "BATCH",
    "batched_profile_only",
    "gaussian_batch_spec",
    "NO_CUDA",
    "SEQUENCE_LENGTHS",
    "CheckLog",
    "Claimed",
    "Counterexample",
    "claim_params",
    "claim_reading",
    "flat_probability_vector",
    "gaussian_qk",
    "integer_arrays",
    "integer_qk",
    "log_uniform",
    "one_torch_thread",
    "plot_sparsity_figure",
    "probability_vector",
    "profiles",
    "qk_pairs",
    "rationals",
    "reading_params",
    "record",
    "refute",
    "refute_deferred",
    "require_device",
    "search_seeds",
    "seeded_gaussian_qk",
    "shared_argmax_logits",
    "Tolerance",
    "dot_tolerance",
    "gamma",
    "matmul_tolerance",
    "representation_tolerance",
    "sum_tolerance",
    "unit_roundoff",
    "within_rounding",
    "SoftmaxTolerance",
    "softmax_tolerance",
    "attention_output_tolerance",
    "logit_magnitude_bound",
]
