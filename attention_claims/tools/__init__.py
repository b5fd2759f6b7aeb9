"""Command-line tools: ``python -m attention_claims.tools.catalog`` (the README's counts),
``.stability`` (verdicts across Hypothesis seeds), ``.mutation_report`` (mutmut's results).
"""
