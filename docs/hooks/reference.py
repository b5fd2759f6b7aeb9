"""MkDocs hook: the generated parts of the documentation site, filled in at build time so they cannot drift.

- ``<!-- reference: PACKAGE -->`` (``attention_claims.testkit``, ``attention_claims.maths``) becomes one
  mkdocstrings block per name of ``PACKAGE.__all__``, grouped by the module that defines it, in the
  order of ``__all__``; mkdocstrings renders each from its signature and docstring.
- ``<!-- cli-help -->`` becomes ``attention-claims --help`` and each subcommand's ``--help``, as the
  installed command prints them.

``tests/test_docs_site.py`` builds the site and checks the result against ``__all__``.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import re

MARKER = re.compile(r"^<!-- reference: ([\w.]+) -->$", re.M)
CLI_MARKER = "<!-- cli-help -->"


def defining_modules(package: str) -> dict[str, list[str]]:
    """Module path -> the names of ``package.__all__`` it defines, in the order of ``__all__``: the grouping of
    ``attention-claims reference`` (:func:`attention_claims.tools.reference.defining_modules`), so the site and
    the command a wheel user runs list the same names under the same modules."""
    from attention_claims.tools.reference import defining_modules as grouped

    return grouped(package)


def directive(module: str, name: str) -> str:
    """The mkdocstrings block of ``module.name``."""
    return f"::: {module}.{name}\n"


def reference_markdown(package: str) -> str:
    """The generated reference of ``package``: a section per defining module, a block per public name."""
    out = []
    for module, names in defining_modules(package).items():
        doc = (importlib.import_module(module).__doc__ or "").strip().split("\n\n", 1)[0]
        out.append(f"## `{module}`\n\n{plain_roles(' '.join(doc.split()))}\n")
        out.extend(directive(module, name) for name in names)
    return "\n".join(out)


def cli_markdown() -> str:
    """``attention-claims --help`` and every subcommand's ``--help``, each in a fenced block."""
    from attention_claims import cli

    def captured(argv: list[str]) -> str:
        buf = io.StringIO()
        saved = os.environ.get("COLUMNS")
        os.environ["COLUMNS"] = "80"  # argparse wraps to the terminal's width: the same page on every
        # machine, and 78 characters fit the page's column without a horizontal scroll bar
        try:
            with contextlib.redirect_stdout(buf), contextlib.suppress(SystemExit):
                cli.main(argv)
        finally:
            if saved is None:
                del os.environ["COLUMNS"]
            else:
                os.environ["COLUMNS"] = saved
        return buf.getvalue().rstrip()

    parts = ["```text\n$ attention-claims --help\n" + captured(["--help"]) + "\n```\n"]
    for name in cli.COMMANDS:
        parts.append(f"### `attention-claims {name}`\n\n```text\n$ attention-claims {name} --help\n"
                     + captured([name, "--help"]) + "\n```\n")
    return "\n".join(parts)


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ARG001 - MkDocs hook signature
    """Fill the page's markers (MkDocs calls this for every page before it renders the Markdown)."""
    markdown = MARKER.sub(lambda m: reference_markdown(m.group(1)), markdown)
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, cli_markdown())
    return markdown


# -- griffe extension (mkdocs.yml: the python handler's ``extensions``) ------------------------------------

def plain_roles(text: str) -> str:
    """The docstrings' Sphinx cross-reference roles as Markdown code spans
    (:func:`attention_claims.tools.reference.plain_roles`, which ``attention-claims reference`` uses too)."""
    from attention_claims.tools.reference import plain_roles as plain

    return plain(text)


try:
    import griffe as _griffe
except ImportError:  # pragma: no cover - only MkDocs imports this module, and it brings griffe
    _griffe = None

if _griffe is not None:

    class PlainRoles(_griffe.Extension):
        """Rewrites every docstring's Sphinx roles as code spans as griffe loads it."""

        def on_instance(self, *, obj, **kwargs) -> None:  # noqa: ARG002 - griffe's hook signature
            """Called by griffe for each object it loads."""
            if obj.docstring is not None:
                obj.docstring.value = plain_roles(obj.docstring.value)
