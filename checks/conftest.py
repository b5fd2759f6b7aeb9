"""Collection hook of the checks: under the ``deep`` profile, a per-example rank or spectrum check
with a batched twin is skipped in its favour (:mod:`attention_claims.testkit.batched`)."""

from attention_claims.testkit.batched import skip_replaced_under_deep


def pytest_collection_modifyitems(config, items):
    skip_replaced_under_deep(items)
