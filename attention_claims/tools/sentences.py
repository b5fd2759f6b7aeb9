"""Which sentences of the source documents are not yet accounted for.

``attention-claims sentences [DOCUMENT ...]`` audits each source document (default: every document of
the sources folder's ``SHA256SUMS``) against its classification in ``<sources>/sentences/`` and the claim
records (the project's folders, :func:`attention_claims.framework.config.discover`)
(:func:`attention_claims.framework.sentences.audit`): it prints the coverage counts, then every
unclassified sentence, excerpt not found, stale entry and unknown claim id, one line each naming the
file, and exits 1 when there is any, 0 otherwise. ``--todo`` prints the unclassified sentences as
TOML ``[[sentence]]`` stubs to fill in; with ``--write`` it appends them to the document's file. For a
document of your own the classification is optional: the report's annotated view shows what is classified.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

from .. import _files
from ..framework import config as claims_config
from ..framework.records import DOCUMENT_MAX_BYTES, ClaimRecordError, load_catalog, verify_sources
from ..framework.render.model import document_slug
from ..framework.sentences import audit, load_all
from . import USAGE_ERROR, description


def claim_dicts(catalog) -> list[dict]:
    """The records as the claim dicts :func:`~attention_claims.framework.sentences.audit` reads
    (verdict ``unchecked``: a record alone decides nothing)."""
    return [{"id": c.id, "verdict": "unchecked",
             "source": {"document": c.source.document, "quote": c.source.quote},
             "also_in": [{"document": s.document, "quote": s.quote} for s in c.also_in]} for c in catalog]


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status (0 all accounted for, 1 problems, 4 a usage error)."""
    ap = argparse.ArgumentParser(description=description(__doc__))
    ap.add_argument("documents", nargs="*", help="document names or prefixes (000, 003_..., note.md); default all "
                                                 "the documents of SHA256SUMS")
    ap.add_argument("--todo", action="store_true", help="print unclassified sentences as TOML stubs")
    ap.add_argument("--write", action="store_true",
                    help="with --todo: append the stubs to <sources>/sentences/<document stem>.toml (created if missing)")
    ap.add_argument("--claims-dir", type=Path, default=None, help="default: the project's claims_dir")
    ap.add_argument("--claims-sources", type=Path, default=None, help="default: the project's claims_sources")
    args = ap.parse_args(argv)
    paths = claims_config.discover()
    records_dir = args.claims_dir or paths.claims_dir
    sources_dir = args.claims_sources or paths.sources_dir
    sentences_dir = sources_dir / "sentences"
    try:
        catalog = load_catalog(records_dir, sources_dir)
        classification = load_all(sentences_dir)
        docs = sorted(verify_sources(sources_dir))
    except ClaimRecordError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    claims = claim_dicts(catalog)
    known = {c.id for c in catalog}
    if args.documents:
        docs = [d for d in docs if any(d.startswith(a) for a in args.documents)]
        if not docs:
            print(f"error: no document matches {' '.join(args.documents)}", file=sys.stderr)
            return USAGE_ERROR
    bad = 0
    stems = Counter(Path(d).stem for d in verify_sources(sources_dir) if "/" not in d)
    for doc in docs:
        # a document in a subfolder, or one whose stem another document shares (note.md and note.txt),
        # gets its slug: two documents never share a file (issue 43, finding 15)
        path = sentences_dir / ((document_slug(doc) if "/" in doc or stems[Path(doc).stem] > 1
                                 else Path(doc).stem) + ".toml")
        entries = classification.get(doc, [])
        try:
            text = _files.read_regular(sources_dir / doc, DOCUMENT_MAX_BYTES).decode("utf-8")
        except (OSError, ValueError) as exc:
            print(f"error: {sources_dir / doc}: cannot be read as UTF-8 text ({exc})", file=sys.stderr)
            return USAGE_ERROR
        result = audit(doc, text, claims, entries, known)
        c = result.counts
        print(f"{doc}: {c['total']} sentences, {c['claim']} claims, {c['not-claim']} not claims, "
              f"{c['unclassified']} unclassified" + ("" if doc in classification else f" (no {path.name})"))
        if args.todo:
            stubs = "".join(f"\n[[sentence]]\ntext = {json.dumps(s, ensure_ascii=False)}\nkind = \"\"\nreason = \"\"\n"
                            for s in result.unclassified)
            if args.write and stubs:
                path.parent.mkdir(parents=True, exist_ok=True)
                try:
                    old = _files.read_regular(path, DOCUMENT_MAX_BYTES) if os.path.lexists(path) else b""
                    head = "" if old else f"document = {json.dumps(doc, ensure_ascii=False)}\n"
                    _files.write_file(path, old + (head + stubs).encode("utf-8"))
                except (OSError, ValueError) as exc:
                    print(f"error: {path}: cannot be written ({exc})", file=sys.stderr)
                    return USAGE_ERROR
                print(f"  {len(result.unclassified)} stubs appended to {path}: fill in kind and reason")
            else:
                print(stubs, end="")
        else:
            for line in result.problems(str(path.relative_to(sources_dir.parent))):
                print("  " + line)
        bad += not result.ok or doc not in classification
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
