"""attention-claims: claims about attention matrices, decided by computation.

Subpackages and modules:

- :mod:`claims.schema` — the TOML claim records, loader and validator;
- :mod:`claims.attention` — attention builders (logits, softmax, masks, linear attention, feature maps);
- :mod:`claims.measures` — rank, numerical rank, effective rank, sparsity, energy;
- :mod:`claims.reference` — exact and certified references (python-flint arb, mpmath);
- :mod:`claims.sparsity` — the closed forms of kexue.fm/archives/9889;
- :mod:`claims.evidence`, :mod:`claims.verdict`, :mod:`claims.report`, :mod:`claims.plugin` —
  the pytest plugin that turns checks into verdicts and the report.
"""

__version__ = "0.1.0"
