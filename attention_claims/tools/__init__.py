"""Command-line tools, one module per subcommand of ``attention-claims`` (:mod:`attention_claims.cli`):
``new``, ``catalog``, ``sentences``, ``snapshot``, ``rehash``, ``merge``, ``stability`` and
``mutation_report``, each also runnable as ``python -m attention_claims.tools.<module>``.
"""

from __future__ import annotations

import re

#: The exit status of every tool's usage error (a file it cannot read, a malformed record or report, a name
#: that matches nothing): pytest's own ``ExitCode.USAGE_ERROR``, so that ``attention-claims`` and ``pytest``
#: mean the same by 4. A command line that argparse rejects exits 2, as argparse does everywhere.
USAGE_ERROR = 4

_ROLE = re.compile(r":(?:func|class|mod|data|attr|meth|exc|obj|const):`~?([^`]+)`")


def description(doc: str) -> str:
    """The ``--help`` description of a tool: the first paragraph of its module docstring, as a person
    reads it in a terminal (``:mod:`x``` and ````x```` as ``x``, no reStructuredText markup)."""
    first = doc.strip().split("\n\n", 1)[0]
    return " ".join(_ROLE.sub(r"\1", first).replace("``", "").split())
