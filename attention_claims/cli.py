"""``attention-claims``: the command line of the suite, one subcommand per tool.

Each subcommand is the ``main(argv)`` of a module of :mod:`attention_claims.tools` (also runnable as
``python -m attention_claims.tools.<module>``), given the rest of the command line, so
``attention-claims <command> --help`` shows that tool's own options. Every tool reads the project's
folders as the pytest plugin does (:func:`attention_claims.framework.config.discover`: the
``claims_dir``, ``claims_sources`` and ``claims_report_dir`` ini options, from the working folder up); an ini
file there that cannot be read (a FIFO, not UTF-8, malformed) is exit status 4 naming it, as in pytest.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from .framework import config as claims_config

__all__ = ["COMMANDS", "main"]

COMMANDS: dict[str, tuple[str, str]] = {
    "new": ("new", "start a claim: claims/<doc>/NNN-<id>.toml (quote verified, document hashed) and check "
                   "skeletons that fail until written, all or nothing"),
    "catalog": ("catalog", "claims per document and expected verdict; --update docs/catalog.md rewrites its table"),
    "sentences": ("sentences", "the sentences of the documents no record or classification accounts for (--todo: stubs)"),
    "snapshot": ("snapshot", "compare a report's verdicts, reading outcomes and certified flags with the snapshot"),
    "rehash": ("rehash", "record the new SHA-256 of a source document changed on purpose (its SHA256SUMS line)"),
    "merge": ("merge", "fold reports from several machines or shards into one (claims.json, .md, .html)"),
    "stability": ("stability", "verdicts across Hypothesis seeds (reports/stability.json)"),
    "mutation-report": ("mutation_report", "summarise mutmut's results in reports/mutation.md"),
    "reference": ("reference", "the API reference of attention_claims.testkit and .maths (every public name, its "
                               "signature and docstring) as Markdown, from the installed package"),
    "replicate": ("replicate", "run a claim's small-scale analog (seeds, interval, outcome): evidence in "
                               "reports/evidence/, never a verdict"),
}
"""Subcommand -> (module of :mod:`attention_claims.tools`, one line of help)."""


def _parser() -> argparse.ArgumentParser:
    from importlib.metadata import PackageNotFoundError, version

    try:
        ours = version("attention-claims")
    except PackageNotFoundError:  # pragma: no cover - run from a checkout without installing
        ours = "unknown"
    parser = argparse.ArgumentParser(
        prog="attention-claims",
        description="Decide claims about attention matrices by computation: the tools beside the pytest plugin "
                    "(the verdicts themselves come from `pytest`).",
        epilog="`attention-claims COMMAND --help` shows a command's options.")
    parser.add_argument("--version", action="version", version=f"attention-claims {ours}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for name, (_module, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``attention-claims`` with ``argv`` (default: the process's arguments); returns the exit status
    of the tool (2 for a usage error of the command line itself)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    if not argv or argv[0] not in COMMANDS:
        args = parser.parse_args(argv)  # --help, --version, or an unknown command: argparse says so
        if args.command is None:
            parser.print_help()
            return 2
    name, rest = argv[0], argv[1:]
    module = importlib.import_module(f"attention_claims.tools.{COMMANDS[name][0]}")
    saved = sys.argv[0]
    sys.argv[0] = f"attention-claims {name}"  # the tool's parser names itself after the command
    try:
        return int(module.main(rest) or 0)
    except claims_config.ConfigFileError as exc:  # an unreadable ini file on the way up: pytest's usage error
        print(f"attention-claims {name}: {exc}", file=sys.stderr)
        from .tools import USAGE_ERROR

        return USAGE_ERROR
    finally:
        sys.argv[0] = saved


if __name__ == "__main__":
    raise SystemExit(main())
