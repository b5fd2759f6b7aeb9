"""attention-claims: claims about transformer attention matrices, decided by computation.

The engine, in layers that import downwards only:

- :mod:`attention_claims.maths` — the mathematics, one module per concept (attention, rank,
  spectrum, sparsity, kernels, projections, cost, expressivity, depth, boundaries);
- :mod:`attention_claims.models` — trained models: registry, loading, measurement, cache;
- :mod:`attention_claims.framework` — records, claimed expressions, verdict rules, evidence,
  Hypothesis profiles, the pytest plugin, the report and its renderers;
- :mod:`attention_claims.testkit` — what the checks in ``checks/`` import;
- :mod:`attention_claims.tools` — command-line tools (catalog, stability, mutation report).

The claim records themselves are data, under ``claims/`` in the repository.
"""

__version__ = "0.1.0"
