"""Collection hook of the checks: under the ``deep`` profile, a per-example rank or spectrum check
with a batched twin is skipped in its favour (:mod:`attention_claims.testkit.batched`); and the checks
on trained models run first."""

from pathlib import Path

from attention_claims.testkit.batched import skip_replaced_under_deep

TRAINED = Path(__file__).resolve().parent / "test_trained.py"
"""The checks on trained models (``checks/test_trained.py``). On a machine without the measurement
cache their first check converts the decoder's GGUF file and measures every head of both models at
every N (about a minute on 2 cores, in one worker); started last, that minute was the end of the run."""


def pytest_collection_modifyitems(config, items):
    skip_replaced_under_deep(items)
    # Longest first (the classic rule for scheduling jobs on a few machines): pytest-xdist's first
    # chunks follow this order, so the measurement starts at once (with the README's plain pytest on two
    # cores, every trained-model check goes to the first worker); the file locks of the measurement
    # cache keep it right however the checks are spread. A stable sort: every other item keeps its place.
    items.sort(key=lambda item: Path(item.path) != TRAINED)
