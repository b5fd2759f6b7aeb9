"""Every literal tolerance left in ``checks/`` is listed here with its justification (issue 35, "Tolerances
are derived, not chosen").

A comparison that allows rounding uses a derived bound of the public kit (``attention_claims.maths.rounding``:
``Tolerance``, ``within_rounding``, Higham's ``gamma_n``) and states it in the evidence. What is left as a literal
is one of: a slack far below the working precision of an mpmath or exact computation (``MP``); a float64
comparison whose literal is far above any rounding and far below the effect the check detects (stated per
entry); a value that is no tolerance at all (a parameter, a search range, a bisection accuracy, a guard that
keeps a logarithm away from 0, the fixed-point unit of a cached integer). The scanner below finds candidates (a
float literal in (0, 1e-3], a string "1e-k", a power with a negative literal exponent, a literal factor times
an ``eps``); the test fails on a candidate that the table does not list, and on a listed one that is gone.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

CHECKS = Path(__file__).resolve().parents[1] / "checks"

def _finfo_names(node) -> set[str]:
    """Names assigned from an expression that reads a machine epsilon (``finfo(...).eps``) directly in ``node``'s body
    (not in nested functions: those get their own)."""
    names: set[str] = set()
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for n in ast.walk(child):
            if isinstance(n, ast.Assign) and any(isinstance(a, ast.Attribute) and a.attr == "eps"
                                                 for a in ast.walk(n.value)):
                names |= {t.id for t in n.targets if isinstance(t, ast.Name)}
    return names


def _mentions_machine_eps(node, machine: set[str]) -> bool:
    return any((isinstance(n, ast.Name) and n.id in machine) or (isinstance(n, ast.Attribute) and n.attr == "eps")
               for n in ast.walk(node))


def _mult_operands(node) -> list:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _mult_operands(node.left) + _mult_operands(node.right)
    return [node]


def _literal(node, parent, machine: set[str]) -> str | None:
    """The source of ``node`` when it is a literal tolerance candidate, else ``None``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, float) and 0 < abs(node.value) <= 1e-3:
        return repr(node.value)
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"1e-\d+", node.value):
        return repr(node.value)
    if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and isinstance(node.right, ast.UnaryOp)
            and isinstance(node.right.op, ast.USub) and isinstance(node.right.operand, ast.Constant)):
        return ast.unparse(node)
    if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)
            and not (isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Mult))
            and any(_mentions_machine_eps(o, machine) for o in _mult_operands(node))):
        return ast.unparse(node)
    return None


def literal_tolerances(path: Path) -> set[tuple[str, str, str]]:
    """``(file name, enclosing function, literal)`` for every candidate literal tolerance in ``path``: a float
    literal in (0, 1e-3], a string "1e-k" (an mpmath precision), a power with a negative literal exponent,
    and a product with a machine epsilon (``.eps``, or a name assigned from one in the module or in an
    enclosing function), whatever multiplies it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()

    def visit(node, scope, machine):
        for child in ast.iter_child_nodes(node):
            inner, names = scope, machine
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = child.name if scope == "<module>" else f"{scope}.{child.name}"
                names = machine | _finfo_names(child)
            lit = _literal(child, node, machine)
            if lit is not None:
                found.add((path.name, scope if inner == scope else inner, lit))
            visit(child, inner, names)

    visit(tree, "<module>", _finfo_names(tree))
    return found


def MP(digits: int, slack: str) -> str:
    """An mpmath / exact comparison: the slack is far above the error of ``digits``-digit arithmetic."""
    return f"mpmath at {digits} digits: {slack} is far above its rounding and far below any effect a check detects"


RANGE = "not a tolerance: a parameter value, a search range or a bisection accuracy"
GUARD = "not a tolerance: keeps a logarithm or a quotient away from 0 (never decides a comparison)"
UNITS = "not a tolerance: the fixed-point unit of a cached integer (the cache stores ints)"
NUMPY_RANK = ("NumPy's default rank tolerance sigma_1 N eps (np.linalg.matrix_rank): the convention the reading "
              "names, not a rounding allowance")
SVD_MARGIN = ("certifies full rank from a float64 SVD: LAPACK's singular values are within p(n) u |A|_2 with p a "
              "modest polynomial it does not state (Demmel & Kahan); 16 n eps64 sigma_1 covers it, and the rank is "
              "then certified, not decided by it")

#: (file, enclosing function, literal) -> why it is there
TABLE: dict[tuple[str, str, str], str] = {
    # test_architecture.py
    ("test_architecture.py", "<module>", "1e-12"): (
        "FLASH_SAME_A_TOL: two float64 evaluations of the same softmax row (max A <= 1) agree to a few eps64 "
        "(~1e-15); a different attention matrix moves entries by far more"),
    ("test_architecture.py", "_full_rank_margin", "16 * s.size * _EPS64 * s[0]"): SVD_MARGIN,
    ("test_architecture.py", "causal_pattern_profile_draws", "16 * (d + 1) * _EPS64 * s[0]"): SVD_MARGIN,
    ("test_architecture.py", "_profile_prefixlm", "1e-18"): UNITS,
    ("test_architecture.py", "_profile_prefixlm", "1e-12"): (
        "profile only (never decides): float64 cached vs recomputed outputs, ~5000 ulps, far above rounding"),
    ("test_architecture.py", "_rank_flip_boundary", "0.001"): RANGE,
    ("test_architecture.py", "test_flash_matches_reference", "1e-12"): (
        "float64 kernel vs float64 reference, relative to max|V|: 1e-12 is ~5000 ulps, far above two float64 "
        "evaluations' rounding (gamma_N |A||V| ~ N eps64), far below a wrong kernel"),
    ("test_architecture.py", "_fused_kernel_tolerance", "2.0 ** (-50)"): (
        "not a tolerance: lifts the float64 logit magnitude |Q||K|^T / sqrt d above its own rounding (gamma_(d+1) "
        "relative, d <= 64) so that the derived bound is computed from an upper bound"),
    ("test_architecture.py", "_fused_kernel_tolerance", "2.0 ** (-23)"): (
        "the unit roundoff of tensor-core float32 accumulation, which truncates (2u_32; Fasi, Higham, Mikaitis & "
        "Pranesh 2021), in attention_output_tolerance's gamma_n: the float16/bfloat16 bound is derived for any order "
        "of operations (Higham eqs. 3.4, 3.5); CPU flash in float16/bfloat16 uses at most 0.38 of it, a dropped "
        "causal mask exceeds it 37-660 times"),
    ("test_architecture.py", "_fused_kernel_tolerance", "2.0 ** (-126)"): (
        "the absolute error of an exp flushed to 0 below float32's smallest normal (CUDA flush-to-zero), "
        "in the derived bound"),
    ("test_architecture.py", "test_flash_matches_reference", "2.0 ** (-1074)"): GUARD,
    ("test_architecture.py", "test_implicit_position_blocks", "1e-12"): (
        "float64 permutation defect: ~5000 ulps, far above rounding; the causal defect it must exceed is ~1e-7 "
        "or more (measured)"),
    ("test_architecture.py", "test_kv_cache_stack_float64", "1e-12"): (
        "float64 relative difference of two evaluations of the same stack: ~5000 ulps, far above rounding"),
    ("test_architecture.py", "test_multi_head_effective_rank_every_draw", "1e-09"): (
        "tau +- 1e-9: a draw counts only when the effective ranks do not move with tau, far above the ~1e-15 "
        "relative error of float64 singular values"),
    # test_attention.py
    ("test_attention.py", "test_output_is_weighted_combination", "2.0 ** (-50)"): (
        "not a tolerance: lifts the float64 logit magnitude above its own rounding, so that the two derived "
        "attention_output_tolerance bounds (SDPA's and A V's, any order, Higham eqs. 3.4, 3.5) use an upper bound"),
    ("test_attention.py", "test_output_is_weighted_combination", "1e-300"): GUARD,
    # test_concentration.py
    ("test_concentration.py", "_entropy_top_weight_discordance", "1e-09"): (
        "profile only: float64 entropies and maxima are good to 1e-12 here; 1e-9 separates real differences"),
    ("test_concentration.py", "_mips_vs_nearest", "1e-09"): (
        "profile only: a lead counts when above 1e-9 relative, far above float64 rounding"),
    ("test_concentration.py", "test_small_temperature_rank_limit", "mpmath.mpf(10) ** (-40)"): MP(50, "1e-40 relative"),
    ("test_concentration.py", "test_min_entropy_bound", "mpmath.mpf(10) ** (-40)"): (
        MP(50, "1e-40 absolute") + "; H enters through the midpoint of a 200-bit arb enclosure (radius about "
        "1e-58, checked against 1e-42 in the test), and the claimed bound is at most 1 with a derivative below 1 "
        "in H, so the gap's error is below 1e-45: a gap below -1e-40 is certainly negative"),
    ("test_concentration.py", "test_small_temperature_rank_with_ties", "mpmath.mpf(10) ** (-30)"): RANGE + " (T = 1e-30)",
    ("test_concentration.py", "test_small_temperature_rank_with_ties", "mpmath.mpf(10) ** (-40)"): MP(50, "1e-40"),
    ("test_concentration.py", "test_temperature_limit_with_ties", "mpmath.mpf(10) ** (-30)"): RANGE + " (T = 1e-30)",
    ("test_concentration.py", "test_winner_takes_all_sparsity", "'1e-25'"): MP(35, "1e-25 absolute"),
    # test_cost.py
    ("test_cost.py", "row_by_row_profile", "1e-12"): (
        "profile only: float64 row-by-row vs full attention relative to max|V|, ~5000 ulps"),
    ("test_cost.py", "test_intro_memory_lower_bound", "1e-12"): (
        "float64 output against an arb reference: ~5000 ulps of outputs of size <= 1, far above rounding"),
    # test_depth.py
    ("test_depth.py", "_collapse_boundary.fails", "'1e-3'"): "the reading's own threshold (r_6 / r_0 < 1e-3), not a tolerance",
    ("test_depth.py", "_profile_dong", "0.001"): "the reading's own threshold (r_6 / r_0 < 1e-3), not a tolerance",
    ("test_depth.py", "dong_profile_draws", "1e-300"): GUARD,
    ("test_depth.py", "test_dong_any_scale", "0.001"): "the reading's own threshold (r_6 / r_0 < 1e-3), not a tolerance",
    ("test_depth.py", "test_dong_any_scale", "1e-300"): GUARD,
    ("test_depth.py", "test_dong_any_scale_search", "'1e-3'"): "the reading's own threshold (r_6 / r_0 < 1e-3), not a tolerance",
    ("test_depth.py", "test_dong_any_scale_search", "0.001"): "the reading's own threshold (r_6 / r_0 < 1e-3), not a tolerance",
    ("test_depth.py", "test_dong_cubic_order", "1e-20"): "where local orders are measured (r < 1e-20), not a tolerance",
    # test_kernels.py
    ("test_kernels.py", "<module>", "2.0 ** (-53)"): "the unit roundoff of float64, from which gamma_n bounds are built",
    ("test_kernels.py", "test_taylor_features", "2.0 ** (-53)"): "the unit roundoff of float64 in a gamma_n bound",
    ("test_kernels.py", "_doc_exp_kernel_draws", "mpmath.mpf(10) ** (-20)"): MP(30, "1e-20 relative"),
    ("test_kernels.py", "_exp_kernel_gram_ranks", "1e-300"): GUARD,
    ("test_kernels.py", "test_exponential_kernel_feature_map", "mpmath.mpf(10) ** (-30)"): MP(40, "1e-30"),
    ("test_kernels.py", "test_normalised_prf_attention_consistent", "1e-12"): (
        "a standard error below 1e-12 is float64 rounding of an exact estimate (N = 1), excluded from z-scores"),
    ("test_kernels.py", "test_performer_moments", "'1e-15'"): MP(30, "1e-15 relative on the variance"),
    ("test_kernels.py", "test_performer_moments", "'1e-20'"): MP(30, "1e-20 relative on the mean"),
    ("test_kernels.py", "test_performer_moments", "'1e-30'"): GUARD,
    ("test_kernels.py", "test_taylor_feature_space", "mpmath.mpf(10) ** (-30)"): MP(40, "1e-30 relative"),
    ("test_kernels.py", "test_taylor_feature_space", "mpmath.mpf(10) ** (-35)"): MP(40, "1e-35 absolute"),
    # test_projections.py
    ("test_projections.py", "_beyond", "mpmath.mpf(10) ** (-12)"): (
        "a distance beyond the bound by 1e-12 (1 + |Y|_F): far above float64 rounding of the projected rows"),
    ("test_projections.py", "_profile_linformer_error", "1e-06"): UNITS,
    ("test_projections.py", "_linformer_pw_zero_draws", "n * np.finfo(float).eps * np.linalg.norm(w)"): (
        "profile only (never decides): P w counted as 0 to rounding when |P w| <= n eps64 |w|, the first-order "
        "gamma_n bound of a length-n product with |P| row-stochastic"),
    ("test_projections.py", "linformer_mixing_rank_draws", "s[0] * n * _EPS64"): NUMPY_RANK,
    ("test_projections.py", "_profile_projection_gap", "1e-06"): UNITS,
    ("test_projections.py", "test_linformer_k_below_n", "1e-09"): RANGE,
    ("test_projections.py", "test_linformer_theorem_2", "0.001"): RANGE + " (inputs bounded away from 0)",
    ("test_projections.py", "test_linformer_theorem_2.certify", "0.0001"): GUARD + " (a Monte Carlo standard error)",
    # test_rank.py
    ("test_rank.py", "<module>", "DOC_N * float(np.finfo(np.float64).eps)"): NUMPY_RANK,
    ("test_rank.py", "causal_profile_draws", "N * float(np.finfo(np.float64).eps)"): NUMPY_RANK,
    ("test_rank.py", "<module>", "1e-09"): (
        "CERTIFIED_REL_TOL: a singular value counted above 1e-9 sigma_1 is certified non-zero: float64 SVD errs "
        "by about N eps64 sigma_1 (Weyl), ~1e-13 here"),
    ("test_rank.py", "lora_query_update_delta_ranks", "1e-10"): (
        "profile only: an absolute floor on singular values of a difference of float64 matrices (~1e-16 error)"),
    ("test_rank.py", "small_integer_qk", "0.001"): RANGE,
    ("test_rank.py", "test_causal_rank_break_points", "2 * float(torch.finfo(getattr(torch, b['dtype'])).eps) * ieee"): (
        "a consistency check of the bisection against the IEEE threshold (2 ulps of it, at least 0.01 nats): "
        "raises an error of the suite, decides no reading"),
    ("test_rank.py", "test_causal_softmax_numerical_rank_float64", "1e-320"): GUARD,
    ("test_rank.py", "test_causal_softmax_numerical_rank_float64", "2 * eps"): "text only: the IEEE gap ln(1/(2 eps)) it prints",
    ("test_rank.py", "test_causal_softmax_numerical_rank_float64_batched", "1e-320"): GUARD,
    ("test_rank.py", "test_causal_softmax_numerical_rank_float64_batched", "2 * eps"): "text only: the IEEE gap ln(1/(2 eps)) it prints",
    ("test_rank.py", "test_correlated_rows_energy_bound", "1e-12"): (
        "float64 SVD energy fraction in [0, 1]: errs by ~N eps64 (Weyl); 1e-12 absolute is far above that"),
    ("test_rank.py", "test_lora_query_update_delta_rank", "1e-12"): (
        "skips certifying a singular value too small for cheap arb (not a decision: the rank is certified or skipped)"),
    ("test_rank.py", "test_rank_qk_numerical", "1e-300"): GUARD,
    # test_sparsity.py
    ("test_sparsity.py", "<module>", "'1e-25'"): MP(40, "REL_25, closed form vs quadrature, 1e-25 relative"),
    ("test_sparsity.py", "<module>", "'1e-30'"): MP(40, "REL_30, 1e-30 relative"),
    ("test_sparsity.py", "<module>", "'1e-45'"): MP(60, "REL_45 against an exact rational, 1e-45 relative"),
    ("test_sparsity.py", "_check_figure", "'1e-300'"): GUARD,
    ("test_sparsity.py", "_check_figure", "1e-12"): (
        "float64 curve points against 20-digit quadrature: 1e-12 relative, ~5000 ulps, far above rounding"),
    ("test_sparsity.py", "_exp_weights_s_sqrt_n", "1e-12"): "profile only: rounds a float down before flooring",
    ("test_sparsity.py", "_float64_boundary", "0.0001"): RANGE,
    ("test_sparsity.py", "_float64_boundary", "1e-06"): (
        "the reading's materiality threshold for the printed float64 form (1e-6 relative, ~1e10 ulps)"),
    ("test_sparsity.py", "_relu2_printed_grid_failures", "1e-06"): (
        "profile only: the reading's materiality threshold (1e-6 relative)"),
    ("test_sparsity.py", "_s_entropy_discordance", "1e-09"): "profile only: a difference counts above 1e-9 relative",
    ("test_sparsity.py", "test_exp_closed_form_vs_quadrature", "'1e-60'"): GUARD,
    ("test_sparsity.py", "test_exp_monte_carlo", "0.001"): RANGE,
    ("test_sparsity.py", "test_identity_even_in_beta", "'1e-60'"): GUARD,
    ("test_sparsity.py", "test_identity_figure", "1e-12"): (
        "float64 curve vs its floor 1/sqrt 6: 1e-12, far above rounding of points good to 1e-12 relative"),
    ("test_sparsity.py", "test_identity_floor", "'1e-30'"): MP(40, "1e-30 relative"),
    ("test_sparsity.py", "test_identity_floor_attained", "0.001"): RANGE,
    ("test_sparsity.py", "test_identity_monte_carlo", "0.001"): RANGE,
    ("test_sparsity.py", "test_reduction_exact_moments", "'1e-40'"): MP(50, "1e-40"),
    ("test_sparsity.py", "test_relu2_figure", "1e-12"): "float64 curve vs its floor: as test_identity_figure",
    ("test_sparsity.py", "test_relu2_printed_float64", "1e-06"): (
        "the reading's materiality threshold for the printed float64 form (1e-6 relative, ~1e10 ulps): the "
        "failure it detects is cancellation in erf(x) + 1, orders of magnitude larger"),
    ("test_sparsity.py", "test_relu2_printed_float64", "1e-300"): GUARD,
    ("test_sparsity.py", "test_relu2_sparse_only_for_negative_bias", "'1e-30'"): MP(40, "1e-30 relative"),
    ("test_sparsity.py", "test_relu2_sparse_only_for_negative_bias", "2.0 ** (-10)"): (
        RANGE + ": the @example's beta = -2^-10, the edge of the sparse domain (the planted seed sweep)"),
    ("test_sparsity.py", "test_smaller_is_sparser", "'1e-40'"): MP(50, "1e-40"),
    # test_sparsity_linear.py
    ("test_sparsity_linear.py", "<module>", "'1e-45'"): MP(60, "REL_45 against an exact rational"),
    ("test_sparsity_linear.py", "_factor_max_mismatches", "'1e-40'"): MP(50, "1e-40 relative"),
    ("test_sparsity_linear.py", "test_decay_bound_in_float64", "0.001"): RANGE,
    ("test_sparsity_linear.py", "test_decay_sparsity_against_n", "'1e-40'"): MP(50, "1e-40 relative"),
    ("test_sparsity_linear.py", "test_factor_maximum", "'1e-40'"): MP(50, "1e-40 relative"),
    ("test_sparsity_linear.py", "test_reciprocal_factor_maximum", "'1e-40'"): MP(50, "1e-40 relative"),
    ("test_sparsity_linear.py", "test_summary_plain_linear", "'1e-15'"): MP(30, "1e-15 relative"),
    # test_spectrum.py
    ("test_spectrum.py", "<module>", "1e-09"): "CERTIFIED_REL_TOL: as test_rank.py's",
    ("test_spectrum.py", "_every_spectrum_profile", "1e-12"): (
        "profile only: float64 margins of a ratio in [0, 1], far above rounding"),
    ("test_spectrum.py", "_scale_boundary", "0.0001"): RANGE,
    ("test_spectrum.py", "test_anchored_energy_bound", "mpmath.mpf(10) ** (-30)"): MP(40, "1e-30"),
    ("test_spectrum.py", "test_anchored_energy_bound_random_spectra", "mpmath.mpf(10) ** (-30)"): MP(40, "1e-30"),
    ("test_spectrum.py", "test_bidirectional_effective_rank.certify", "0.001"): RANGE,
    ("test_spectrum.py", "test_bidirectional_effective_rank_batched.certify", "0.001"): RANGE,
    ("test_spectrum.py", "test_corollary_11_8_attention_spectra", "mpmath.mpf(10) ** (-30)"): MP(40, "1e-30"),
    ("test_spectrum.py", "test_small_k_on_attention_spectra", "mpmath.mpf(10) ** (-30)"): MP(40, "1e-30"),
    ("test_spectrum.py", "test_effective_rank_consistent_with_energy", "1e-09"): (
        "a unit consistency assertion between two float64 computations of one energy (errors ~1e-15)"),
    ("test_spectrum.py", "test_logits_svd", "'1e-10'"): MP(30, "1e-10 (the same threshold, recomputed)"),
    ("test_spectrum.py", "test_logits_svd", "1e-10"): (
        "float64 SVD orthogonality, |det| and reconstruction: backward stable, errors ~D eps64 ~1e-15; 1e-10 "
        "is far above them and far below a wrong factorisation"),
    ("test_spectrum.py", "test_logits_svd", "1e-300"): GUARD,
    ("test_spectrum.py", "test_lora_eckart_young", "mpmath.mpf(10) ** (-9)"): (
        "truncated-SVD error vs the claimed value, 1e-9 relative: float64 factors err by ~1e-15 relative"),
    ("test_spectrum.py", "test_lora_eckart_young", "mpmath.mpf(10) ** (-20)"): GUARD + " (a zero tail, 1e-20 |W|^2)",
    ("test_spectrum.py", "test_rows_similar.certify", "0.0001"): RANGE,
    ("test_spectrum.py", "test_rows_similar_batched.certify", "0.0001"): RANGE,
    ("test_spectrum.py", "test_singular_values_near_zero.certify", "0.0001"): RANGE,
    ("test_spectrum.py", "test_singular_values_near_zero_batched.certify", "0.0001"): RANGE,
    ("test_spectrum.py", "test_svd_dtypes", "N * eps"): (
        "LAPACK's own acceptance test of its SVD drivers (TESTING/EIG/xDRVBD: |A - U S VT|_1 / (|A|_1 max(M,N) ulp), "
        "|I - U^T U|_1 / (M ulp), |I - VT VT^T|_1 / (N ulp), ulp = xLAMCH('P') = eps) below THRESH = 35 "
        "(TESTING/svd.in): the stated bound for the routine, not ours; a wrong factorisation gives ratios ~1/(N eps)"),
    ("test_spectrum.py", "test_svd_dtypes", "2.0 ** (-1074)"): GUARD,
    ("test_spectrum.py", "test_svd_exact", "mpmath.mpf(10) ** (-30)"): MP(40, "1e-30"),
    # test_trained.py
    ("test_trained.py", "test_power_law_bound_holds_for_every_finite_spectrum", "1e-08"): RANGE,
    ("test_trained.py", "test_power_law_bound_holds_for_every_finite_spectrum", "1e-12"): (
        "C = max sigma_i i^2 is an upper envelope up to one float64 rounding of C i^-2 (a few eps64); 1e-12 "
        "relative is far above it"),
    ("test_trained.py", "test_power_law_bound_holds_for_every_finite_spectrum", "i ** (-2.0)"): (
        "not a tolerance: the power law's exponent"),
}


def _found() -> set[tuple[str, str, str]]:
    out: set[tuple[str, str, str]] = set()
    for path in sorted(CHECKS.glob("*.py")):
        out |= literal_tolerances(path)
    return out


def test_every_literal_tolerance_in_checks_is_listed_with_its_justification():
    unlisted = sorted(_found() - set(TABLE))
    assert unlisted == [], (
        "literal tolerances in checks/ without a justification in tests/test_tolerances.py::TABLE (derive them with "
        f"attention_claims.maths.rounding, or list them with why): {unlisted}")


def test_the_table_lists_nothing_that_is_gone():
    stale = sorted(set(TABLE) - _found())
    assert stale == [], f"tests/test_tolerances.py::TABLE lists literals no longer in checks/: {stale}"


def test_every_justification_says_something():
    assert all(len(why) > 20 for why in TABLE.values())


def test_no_tolerance_is_chosen():
    """Issue 35: a tolerance is derived (or is no tolerance at all); "chosen" is not a justification."""
    chosen = sorted(key for key, why in TABLE.items() if re.search(r"\bchosen\b", why, re.IGNORECASE))
    assert chosen == [], f"tolerances justified as chosen, not derived: {chosen}"


def test_the_scanner_finds_what_it_should(tmp_path):
    f = tmp_path / "test_x.py"
    f.write_text("import mpmath\nimport numpy as np\n"
                 "E = float(np.finfo(np.float64).eps)\n"
                 "def test_a(eps, n):\n"
                 "    x = 1e-9\n"
                 "    y = mpmath.mpf('1e-30')\n"
                 "    z = mpmath.mpf(10) ** -20\n"
                 "    w = 16 * 4 * eps\n"
                 "    m = float(np.finfo(np.float32).eps)\n"
                 "    t = (n + 2) * m\n"
                 "    u = n * E\n"
                 "    v = 0.5\n", encoding="utf-8")
    got = {lit for _, _, lit in literal_tolerances(f)}
    # eps the argument is a distortion here, not a machine epsilon; m and E are read from finfo
    assert got == {"1e-09", "'1e-30'", "mpmath.mpf(10) ** (-20)", "(n + 2) * m", "n * E"}
