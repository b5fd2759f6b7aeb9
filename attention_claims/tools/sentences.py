"""Which sentences of the source documents are not yet accounted for.

``python -m attention_claims.tools.sentences [DOCUMENT ...]`` audits each source document (default:
all five) against its classification in ``sources/sentences/`` and the claim records in ``claims/``
(:func:`attention_claims.framework.sentences.audit`): it prints the coverage counts, then every
unclassified sentence, excerpt not found, stale entry and unknown claim id, one line each naming the
file, and exits 1 when there is any, 0 otherwise. ``--todo`` prints the unclassified sentences as
TOML ``[[sentence]]`` stubs to paste into the document's file and fill in.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..framework.records import RECORDS_DIR, SOURCES_DIR, ClaimRecordError, load_catalog
from ..framework.sentences import SENTENCES_DIR, audit, load_all


def claim_dicts(catalog) -> list[dict]:
    """The records as the claim dicts :func:`~attention_claims.framework.sentences.audit` reads
    (verdict ``unchecked``: a record alone decides nothing)."""
    return [{"id": c.id, "verdict": "unchecked",
             "source": {"document": c.source.document, "quote": c.source.quote},
             "also_in": [{"document": s.document, "quote": s.quote} for s in c.also_in]} for c in catalog]


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status (0 all accounted for, 1 problems, 2 usage)."""
    ap = argparse.ArgumentParser(prog="python -m attention_claims.tools.sentences", description=__doc__.split("\n\n")[0])
    ap.add_argument("documents", nargs="*", help="document file names or prefixes (000, 003_...); default all")
    ap.add_argument("--todo", action="store_true", help="print unclassified sentences as TOML stubs")
    args = ap.parse_args(argv)
    try:
        catalog = load_catalog(RECORDS_DIR, SOURCES_DIR)
        classification = load_all(SENTENCES_DIR)
    except ClaimRecordError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    claims = claim_dicts(catalog)
    known = {c.id for c in catalog}
    docs = sorted(p.name for p in SOURCES_DIR.glob("*.txt"))
    if args.documents:
        docs = [d for d in docs if any(d.startswith(a) for a in args.documents)]
        if not docs:
            print(f"error: no document matches {' '.join(args.documents)}", file=sys.stderr)
            return 2
    bad = 0
    for doc in docs:
        path = SENTENCES_DIR / (Path(doc).stem + ".toml")
        entries = classification.get(doc, [])
        result = audit(doc, (SOURCES_DIR / doc).read_text(encoding="utf-8"), claims, entries, known)
        c = result.counts
        print(f"{doc}: {c['total']} sentences, {c['claim']} claims, {c['not-claim']} not claims, "
              f"{c['unclassified']} unclassified" + ("" if doc in classification else f" (no {path.name})"))
        if args.todo:
            for s in result.unclassified:
                print(f"\n[[sentence]]\ntext = {json.dumps(s, ensure_ascii=False)}\nkind = \"\"\nreason = \"\"")
        else:
            for line in result.problems(str(path.relative_to(SOURCES_DIR.parent))):
                print("  " + line)
        bad += not result.ok or doc not in classification
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
