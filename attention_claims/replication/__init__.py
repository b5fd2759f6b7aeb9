"""Small-scale replications of the documents' own experiments: evidence with paired seeds and intervals,
never a verdict (issue 47, ``docs/evidence.md``).

Not to be confused with :mod:`attention_claims.framework.evidence`, the counterexample evidence of a
check. Modules: :mod:`.corpus` (the offline corpus and its BPE), :mod:`.nets` (the small models),
:mod:`.train` (one arm, one seed), :mod:`.analogs` (the pre-registered configurations), :mod:`.stats`
(paired intervals, power), :mod:`.runner` (resumable runs, the evidence file), :mod:`.schema` (its
JSON schema and the record check).
"""
