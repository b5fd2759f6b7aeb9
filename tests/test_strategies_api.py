"""The strategies a check writer meets are documented as strategies (issue 46): each public function of
``attention_claims.testkit.strategies`` that draws is called with its own parameters (no Hypothesis
``draw`` first), is typed, returns a ``SearchStrategy``, and its docstring says it is a strategy."""

from __future__ import annotations

import inspect

import pytest
from hypothesis import strategies as st

from attention_claims.testkit import strategies

STRATEGIES = {"log_uniform": (-1.0, 1.0), "qk_pairs": (), "shared_argmax_logits": (), "integer_qk": (),
              "integer_arrays": ((2, 2),), "gaussian_qk": (), "probability_vector": (),
              "flat_probability_vector": (3,), "rationals": (0, 1)}


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_a_strategy_reads_as_one(name):
    fn = getattr(strategies, name)
    sig = inspect.signature(fn)
    assert "draw" not in sig.parameters
    assert "SearchStrategy" in str(sig.return_annotation)
    assert all(p.annotation is not inspect.Parameter.empty for p in sig.parameters.values()), sig
    assert fn.__doc__.startswith("A strategy for")
    assert isinstance(fn(*STRATEGIES[name]), st.SearchStrategy)


def test_every_public_strategy_is_listed():
    public = {n for n, f in vars(strategies).items() if inspect.isfunction(f) and not n.startswith("_")
              and f.__module__ == strategies.__name__ and "SearchStrategy" in str(inspect.signature(f).return_annotation)}
    assert public == set(STRATEGIES)
