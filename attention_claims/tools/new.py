"""``attention-claims new ID --document FILE --quote "..."``: start a claim.

Writes ``<claims folder>/<document stem>/<ID>.toml``, a record with the verbatim quote (checked against
the document), ``expected = "true"`` and one as-stated reading whose statement says to write it, and
``<checks folder>/test_<ID>.py``, a check of that reading that fails with a message naming what to write,
so a new claim is never decided before it is thought through. The document must be under the sources
folder; when it is not yet listed in ``SHA256SUMS`` its SHA-256 is added, and when it is listed with
another hash the command stops (the document changed). Existing files are never overwritten.

Exit status: 0 written; 4 a usage error (bad id, an id already in use, a document outside the sources
folder or missing, a quote not in it, a hash that differs, a file that exists), with one line naming it.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

from ..framework import config as claims_config
from ..framework.records import (
    DOCUMENT_MAX_BYTES,
    KEBAB,
    ClaimRecordError,
    document_path_problem,
    load_claim_file,
    read_capped,
    read_sums,
)

USAGE_ERROR = 4

RECORD = '''id = "{id}"
title = {title}
statement = "TODO: the claim in one or two English sentences."
expected = "true"  # what you expect the verdict to be: true, false, caveat (or unchecked, with a reason)

[source]
document = {document}
section = {section}
quote = {quote}

[[readings]]
name = "as-stated"
as_stated = true
statement = "TODO: the precise proposition the quote means, as a competent reader of the document reads it."
'''

CHECK = '''"""The check of claim {id} ({record})."""

import pytest


@pytest.mark.claim("{id}", reading="as-stated")
def test_{name}(claim_log):
    pytest.fail("write the check for claim {id}: assert the reading 'as-stated' of {record} "
                "(attention_claims.testkit.refute for a certified counterexample; docs/testkit.md)")
'''


class NewClaimError(Exception):
    """A usage error of ``new``, naming the file or option."""


def _toml_string(text: str) -> str:
    """``text`` as a TOML basic string (escapes backslash, quote and control characters)."""
    out = text.replace("\\", "\\\\").replace('"', '\\"')
    out = "".join(ch if ord(ch) >= 32 or ch == "\t" else f"\\u{ord(ch):04x}" for ch in out)
    return f'"{out}"'


def write_claim(claim_id: str, document: str, quote: str, *, claims_dir: Path, sources_dir: Path,
                checks_dir: Path, title: str | None = None, section: str | None = None) -> tuple[Path, Path]:
    """Write the record and the check skeleton of a new claim; returns their paths.

    Raises:
        NewClaimError: see the module's exit status 4 (the message names the file or option).
    """
    if not KEBAB.match(claim_id):
        raise NewClaimError(f"id {claim_id!r}: must be kebab-case (lower-case letters, digits, single hyphens)")
    doc_path = Path(document)
    if doc_path.is_absolute() or doc_path.exists():
        try:
            document = doc_path.resolve().relative_to(sources_dir.resolve()).as_posix()
        except ValueError:
            raise NewClaimError(f"--document {document}: not under the sources folder {sources_dir}") from None
    problem = document_path_problem(document)
    if problem is not None:
        raise NewClaimError(f"--document {document!r}: {problem} ({sources_dir})")
    target = sources_dir / document
    if not target.is_file():
        raise NewClaimError(f"--document {document}: no such file {target}")
    try:
        raw = read_capped(target, DOCUMENT_MAX_BYTES)
    except ValueError as exc:  # not a regular file, or too large
        raise NewClaimError(f"--document {document}: {exc}") from None
    text = raw.decode("utf-8")
    if " ".join(quote.split()) not in " ".join(text.split()):
        raise NewClaimError(f"--quote: does not occur verbatim (up to whitespace) in {target}")
    existing = {}
    if claims_dir.is_dir():
        for path in sorted(claims_dir.rglob("*.toml")):
            try:
                existing[load_claim_file(path).id] = path
            except ClaimRecordError:
                continue  # a malformed record is reported by pytest, naming its file
    if claim_id in existing:
        raise NewClaimError(f"id {claim_id!r} is already used by {existing[claim_id]}")
    record = claims_dir / Path(document).stem / f"{claim_id}.toml"
    check = checks_dir / f"test_{claim_id.replace('-', '_')}.py"
    for path in (record, check):
        if path.exists():
            raise NewClaimError(f"{path} exists; not overwritten")
    sums = sources_dir / "SHA256SUMS"
    digest = hashlib.sha256(raw).hexdigest()
    try:
        listed = read_sums(sources_dir)
    except ClaimRecordError as exc:
        raise NewClaimError(str(exc)) from None
    if document in listed and listed[document] != digest:
        raise NewClaimError(f"{target}: SHA-256 {digest}, {sums} says {listed[document]} (the document changed; "
                            "update SHA256SUMS on purpose if it did)")
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(RECORD.format(id=claim_id, title=_toml_string(title or f"TODO: a short title of {claim_id}"),
                                    document=_toml_string(document),
                                    section=_toml_string(section or "TODO: where in the document"),
                                    quote=_toml_string(quote)), encoding="utf-8")
    checks_dir.mkdir(parents=True, exist_ok=True)
    check.write_text(CHECK.format(id=claim_id, record=record.as_posix(), name=claim_id.replace("-", "_")),
                     encoding="utf-8")
    load_claim_file(record)  # what it wrote is a valid record (a bug of this command otherwise)
    if document not in listed:
        with open(sums, "a", encoding="utf-8") as f:
            f.write(f"{digest}  {document}\n")
    return record, check


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("id", help="the claim's id, kebab-case (named literally by its checks' markers)")
    parser.add_argument("--document", required=True, help="the document under the sources folder that states it")
    parser.add_argument("--quote", required=True, help="the claim's own words, verbatim from the document")
    parser.add_argument("--title", default=None, help="a short English title")
    parser.add_argument("--section", default=None, help="where in the document")
    parser.add_argument("--claims-dir", type=Path, default=None, help="default: the project's claims_dir")
    parser.add_argument("--claims-sources", type=Path, default=None, help="default: the project's claims_sources")
    parser.add_argument("--checks-dir", type=Path, default=None, help="default: checks/ beside the ini file")
    args = parser.parse_args(argv)
    paths = claims_config.discover()
    try:
        record, check = write_claim(args.id, args.document, args.quote,
                                    claims_dir=args.claims_dir or paths.claims_dir,
                                    sources_dir=args.claims_sources or paths.sources_dir,
                                    checks_dir=args.checks_dir or paths.root / "checks",
                                    title=args.title, section=args.section)
    except (NewClaimError, OSError, UnicodeDecodeError) as exc:
        print(f"attention-claims new: {exc}", file=sys.stderr)
        return USAGE_ERROR
    print(f"wrote {record} and {check}: fill in the TODOs, then run `pytest --claims-select {args.id}`")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
