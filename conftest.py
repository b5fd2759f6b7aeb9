"""Top-level conftest.

The attention-claims plugin itself is registered through the ``pytest11`` entry point
(``attention_claims.framework.plugin``); this file only enables pytest's ``pytester`` fixture, used by
``tests/`` to run the real plugin on planted records.
"""

pytest_plugins = ["pytester"]
