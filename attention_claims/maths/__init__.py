"""The mathematics, one module per concept; every public name is re-exported here.

- :mod:`.arrays` — input validation, dtype and device resolution;
- :mod:`.exact` — exact and certified arithmetic primitives (python-flint arb, rationals);
- :mod:`.attention` — attention builders (logits, masks, softmax and linear attention), float and exact;
- :mod:`.rank` — rank: numerical, exact, certified;
- :mod:`.spectrum` — singular values, energy, effective rank, power-law fits, low-rank approximation;
- :mod:`.sparsity` — the sparsity measure of kexue.fm/archives/9889, its closed forms and references;
- :mod:`.kernels` — kernels and feature maps (random features, Taylor features);
- :mod:`.projections` — random projections (Johnson-Lindenstrauss, Linformer);
- :mod:`.cost` — operation counts, FLOPs and peak memory;
- :mod:`.expressivity` — which attention patterns a head of dimension d can realise;
- :mod:`.depth` — rank collapse with depth (Dong et al.);
- :mod:`.boundaries` — bisection for the parameter at which a property starts to fail.

Nothing here imports pytest or the framework: the mathematics stands on its own.
"""

from __future__ import annotations

import importlib

MODULES = ('arrays', 'exact', 'attention', 'rank', 'spectrum', 'sparsity', 'kernels', 'projections', 'cost', 'expressivity', 'depth', 'boundaries')
"""The concept modules of this layer, each importable on its own."""

_WHERE = {
    "AttentionInputError": "arrays",
    "as_array": "arrays",
    "as_tensor": "arrays",
    "as_int": "arrays",
    "positive_int": "arrays",
    "resolve_dtype": "arrays",
    "cuda_available": "arrays",
    "SMALLEST_SUBNORMAL_LOG2": "exact",
    "EPS_LOG2": "exact",
    "CertificationError": "exact",
    "precision": "exact",
    "arb_matrix": "exact",
    "certified_sign": "exact",
    "underflow_log_threshold": "exact",
    "to_fmpq": "exact",
    "to_fraction": "exact",
    "fmpq_matrix": "exact",
    "fmpz_matrix": "exact",
    "mp_matrix": "exact",
    "as_fractions": "exact",
    "logits": "attention",
    "causal_mask": "attention",
    "softmax_attention": "attention",
    "FEATURE_MAPS": "attention",
    "feature_map": "attention",
    "linear_attention": "attention",
    "MASK_KINDS": "attention",
    "attention_mask": "attention",
    "resolve_mask": "attention",
    "masked_softmax_attention": "attention",
    "attention_layer": "attention",
    "mp_softmax": "attention",
    "mp_softmax_matrix": "attention",
    "mp_attention": "attention",
    "gaussian_logits": "attention",
    "feature_linear_attention": "attention",
    "arb_logits": "attention",
    "arb_softmax_attention": "attention",
    "mp_softmax_entry": "attention",
    "exact_attention_rows": "attention",
    "rational_rows_equal": "attention",
    "default_rank_tolerance": "rank",
    "numerical_rank": "rank",
    "poly_matrix_rank": "rank",
    "exact_softmax_rank": "rank",
    "exact_exp_sum_rank": "rank",
    "softmax_log_ratio_rank": "rank",
    "certified_singular_value_count": "rank",
    "certify_nonzero_det": "rank",
    "pivot_indices": "rank",
    "certified_rank_at_least": "rank",
    "exact_rank": "rank",
    "exact_det": "rank",
    "exact_product_rank": "rank",
    "cr_factorization": "rank",
    "singular_values": "spectrum",
    "energy_fraction": "spectrum",
    "effective_rank": "spectrum",
    "top_fraction_energy": "spectrum",
    "power_law_fit": "spectrum",
    "mp_singular_values": "spectrum",
    "mp_effective_rank": "spectrum",
    "exact_effective_rank": "spectrum",
    "knee_spectrum_energy": "spectrum",
    "eckart_young_factors": "spectrum",
    "exact_frobenius_sq": "spectrum",
    "sparsity": "sparsity",
    "DPS": "sparsity",
    "s_exp": "sparsity",
    "s_relu2": "sparsity",
    "s_identity": "sparsity",
    "s_general_linear": "sparsity",
    "s_iid_linear": "sparsity",
    "s_decay": "sparsity",
    "s_decay_bound": "sparsity",
    "s_vector_mp": "sparsity",
    "F_MP": "sparsity",
    "F_TORCH": "sparsity",
    "gaussian_expectation": "sparsity",
    "s_reference": "sparsity",
    "s_monte_carlo": "sparsity",
    "relu_moment": "sparsity",
    "s_relu2_moments": "sparsity",
    "s_identity_moments": "sparsity",
    "s_squared_exact": "sparsity",
    "population_moments": "sparsity",
    "product_design": "sparsity",
    "robin_hood": "sparsity",
    "rising_tide": "sparsity",
    "cloning": "sparsity",
    "babies": "sparsity",
    "bill_gates": "sparsity",
    "entropy_arb": "sparsity",
    "gini_index": "sparsity",
    "s_and_standard_error": "sparsity",
    "participation_ratio": "sparsity",
    "arb_softmax_stats": "sparsity",
    "arb_partition_ratio": "sparsity",
    "certified_softmax_max_below": "sparsity",
    "RELU2_BETAS": "sparsity",
    "IDENTITY_BETAS": "sparsity",
    "GAMMAS": "sparsity",
    "SAMPLE_GAMMAS": "sparsity",
    "sampled_sparsity": "sparsity",
    "sparsity_curves": "sparsity",
    "arb_feature": "kernels",
    "arb_kernel_diagonal": "kernels",
    "positive_random_features": "kernels",
    "trig_random_features": "kernels",
    "gaussian_mgf_quadrature": "kernels",
    "prf_moments_quadrature": "kernels",
    "doc_exp_feature_map": "kernels",
    "mp_doc_exp_log_extremes": "kernels",
    "doc_exp_overflow_norm_sq": "kernels",
    "feature_zero_threshold": "kernels",
    "normalised_prf_attention": "kernels",
    "monomial_feature_dots": "kernels",
    "lognormal_feature_moments": "kernels",
    "taylor_features": "kernels",
    "arb_exp_kernel": "kernels",
    "chi2_two_sided_tail": "projections",
    "linformer_mixing": "projections",
    "doc_linformer": "projections",
    "mp_row_line_distance": "projections",
    "rademacher_gram_mean": "projections",
    "identity_gap_lower_bound": "projections",
    "COUNT_METHODS": "cost",
    "matmul_count": "cost",
    "op_count": "cost",
    "meta_matmul_flops": "cost",
    "schedule_peak": "cost",
    "chunked_attention": "cost",
    "row_redundancy": "expressivity",
    "factorisation_jacobian": "expressivity",
    "gauge_directions": "expressivity",
    "factorisation_dimension_bounds": "expressivity",
    "causal_log_ratios": "expressivity",
    "causal_realisation": "expressivity",
    "realises": "expressivity",
    "inexpressible_causal_pattern": "expressivity",
    "certify_inexpressible": "expressivity",
    "relative_residual": "depth",
    "attention_stack_residuals": "depth",
    "convergence_orders": "depth",
    "random_stack": "depth",
    "relu_mlp": "depth",
    "bisect_predicate": "boundaries",
    "softmax_diagonal_underflow_gap": "boundaries",
    "numerical_rank_gap_2x2": "boundaries",
    "fraction_to_mpf": "exact",
    "fraction_to_fmpq": "exact",
    "decimal_fraction": "exact",
    "relative_error": "exact",
    "attention_matrix": "attention",
    "causal_logit_gap": "attention",
    "row_cosines": "attention",
    "mp_matrix_effective_rank": "spectrum",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    # Lazy re-export (PEP 562): ``from attention_claims.maths import X`` imports only the
    # module that defines X, so a check that needs no torch or python-flint does not pay for them.
    if name in _WHERE:
        value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
