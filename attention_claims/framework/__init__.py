"""The framework: claim records and their schema (:mod:`.records`), the claimed-expression
language (:mod:`.expr`), the verdict rules (:mod:`.verdict`), the evidence and refutation API
(:mod:`.evidence`), Hypothesis profiles (:mod:`.profiles`), the pytest plugin (:mod:`.plugin`),
the report (:mod:`.report`), the trust section (:mod:`.trust`) and the renderers (:mod:`.render`).

It does not import the mathematics: verdicts depend on outcomes only.
"""
