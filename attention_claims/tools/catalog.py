"""The catalog in numbers: claims per source document and per expected verdict.

``attention-claims catalog --update docs/catalog.md`` (or ``python -m attention_claims.tools.catalog``)
rewrites the block between the markers ``<!-- catalog:begin -->`` and ``<!-- catalog:end -->`` of the
documentation site's catalog page; ``tests/test_readme.py`` fails when that block differs from what the
records give, so the counts are generated, never typed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .. import _files
from ..framework import config as claims_config
from ..framework.records import EXPECTABLE, load_catalog
from . import USAGE_ERROR, description

BEGIN, END = "<!-- catalog:begin -->", "<!-- catalog:end -->"


def summary_table(records_dir: Path | None = None, sources_dir: Path | None = None) -> str:
    """A Markdown table: one row per source document, one column per expected verdict.

    A claim is counted in the row of every document that states it (its ``source`` and each
    ``also_in`` place: the repost 001 restates 004), as the report counts them; the **all** row
    counts each claim once.
    """
    paths = claims_config.current()
    catalog = load_catalog(records_dir or paths.claims_dir, sources_dir or paths.sources_dir)
    docs: dict[str, dict[str, int]] = {}
    own: dict[str, int] = {}
    for c in catalog:
        own[c.source.document] = own.get(c.source.document, 0) + 1
        for doc in c.documents:
            docs.setdefault(doc, dict.fromkeys(EXPECTABLE, 0))[c.expected] += 1
    lines = ["| document | claims | of which recorded under another document | " + " | ".join(EXPECTABLE) + " |",
             "|---|---|---|" + "---|" * len(EXPECTABLE)]
    total = dict.fromkeys(EXPECTABLE, 0)
    for c in catalog:
        total[c.expected] += 1
    order = sorted(docs, key=lambda d: (d.startswith("arXiv:"), d))
    for doc in order:
        row = docs[doc]
        n = sum(row.values())
        lines.append(f"| `{doc}` | {n} | {n - own.get(doc, 0)} | " + " | ".join(str(row[v]) for v in EXPECTABLE) + " |")
    lines.append(f"| **all** | **{len(catalog)}** | | " + " | ".join(f"**{total[v]}**" for v in EXPECTABLE) + " |")
    return "\n".join(lines)


def render_block(records_dir: Path | None = None, sources_dir: Path | None = None) -> str:
    """The catalog block of ``docs/catalog.md``, markers included."""
    return f"{BEGIN}\n{summary_table(records_dir, sources_dir)}\n{END}"


def update(readme: Path, records_dir: Path | None = None) -> bool:
    """Rewrite the catalog block in the Markdown file ``readme`` (the suite's is ``docs/catalog.md``);
    return whether it changed.

    Raises:
        ValueError: the file has no ``catalog:begin``/``catalog:end`` markers, or is not a regular file of at
            most 16 MiB in UTF-8 (:func:`attention_claims._files.read_text`; a FIFO is refused, not waited on).
    """
    text = _files.read_text(readme, 16 << 20)
    if BEGIN not in text or END not in text:
        raise ValueError(f"{readme}: no {BEGIN} ... {END} block to update")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = head + render_block(records_dir) + tail
    _files.write_file(readme, new)
    return new != text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=description(__doc__))
    ap.add_argument("--update", type=Path, metavar="MARKDOWN",
                    help="the Markdown file whose catalog block to rewrite in place (the suite's: docs/catalog.md)")
    args = ap.parse_args(argv)
    if args.update:
        try:
            changed = update(args.update)
        except (OSError, ValueError) as exc:  # a missing or unreadable file, or no catalog block: a usage error
            print(f"attention-claims catalog: {exc}", file=sys.stderr)
            return USAGE_ERROR
        print(f"{args.update}: {'updated' if changed else 'already up to date'}")
    else:
        paths = claims_config.discover()  # the working folder's project, as every tool (not a pytest session's)
        try:
            table = summary_table(paths.claims_dir, paths.sources_dir)
        except (OSError, ValueError) as exc:  # no claims folder, or a malformed record: a usage error
            print(f"attention-claims catalog: {exc}", file=sys.stderr)
            return USAGE_ERROR
        print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
