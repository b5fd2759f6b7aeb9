"""The catalog in numbers: claims per source document and per expected verdict.

``python -m claims.catalog --update README.md`` rewrites the block between the markers
``<!-- catalog:begin -->`` and ``<!-- catalog:end -->``; ``tests/test_readme.py`` fails
when the README's block differs from what the records give, so the counts are generated,
never typed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .schema import EXPECTABLE, load_catalog

BEGIN, END = "<!-- catalog:begin -->", "<!-- catalog:end -->"
RECORDS = Path(__file__).parent / "records"


def summary_table(records_dir: Path = RECORDS) -> str:
    """A Markdown table: one row per source document, one column per expected verdict."""
    catalog = load_catalog(records_dir)
    docs: dict[str, dict[str, int]] = {}
    for c in catalog:
        row = docs.setdefault(c.source.document, dict.fromkeys(EXPECTABLE, 0))
        row[c.expected] += 1
    lines = ["| document | claims | " + " | ".join(EXPECTABLE) + " |", "|---|---|" + "---|" * len(EXPECTABLE)]
    total = dict.fromkeys(EXPECTABLE, 0)
    for doc in sorted(docs):
        row = docs[doc]
        for k, v in row.items():
            total[k] += v
        lines.append(f"| `{doc}` | {sum(row.values())} | " + " | ".join(str(row[v]) for v in EXPECTABLE) + " |")
    lines.append(f"| **all** | **{len(catalog)}** | " + " | ".join(f"**{total[v]}**" for v in EXPECTABLE) + " |")
    return "\n".join(lines)


def render_block(records_dir: Path = RECORDS) -> str:
    """The README block, markers included."""
    return f"{BEGIN}\n{summary_table(records_dir)}\n{END}"


def update(readme: Path, records_dir: Path = RECORDS) -> bool:
    """Rewrite the block in ``readme``; return whether it changed.

    Raises:
        ValueError: the README has no ``catalog:begin``/``catalog:end`` markers.
    """
    text = readme.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise ValueError(f"{readme}: no {BEGIN} ... {END} block to update")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = head + render_block(records_dir) + tail
    readme.write_text(new, encoding="utf-8")
    return new != text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--update", type=Path, help="README to rewrite in place")
    args = ap.parse_args(argv)
    if args.update:
        changed = update(args.update)
        print(f"{args.update}: {'updated' if changed else 'already up to date'}")
    else:
        print(summary_table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
