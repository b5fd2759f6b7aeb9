"""``attention-claims rehash DOC``: record the new SHA-256 of a source document changed on purpose.

``attention-claims rehash [--claims-sources DIR] DOC`` replaces the digest of ``DOC``'s line in
``<sources folder>/SHA256SUMS`` by the SHA-256 of the document as it is now, and changes nothing else:
every other line (even one with the same digest) and every byte of the file stay as they were, the file
is replaced atomically (:func:`attention_claims._files.write_sums`, no backup file left), and the
document must be a regular file inside the sources folder that ``SHA256SUMS`` already lists
(``attention-claims new`` adds a new document's line). Every quote of the document is verified again on
the next run. The error "source document was altered" prints this command. It holds the project's lock
(the one ``attention-claims new`` takes) while it reads and replaces ``SHA256SUMS``; a ``SHA256SUMS`` that
is a symbolic link is refused, never replaced by a plain file.

Exit status: 0 re-hashed (or already up to date), 4 a usage error (no such folder, ``DOC`` not listed or
not a regular file inside the folder, a malformed or symlinked ``SHA256SUMS``), with one line naming it;
128 + the signal when SIGTERM, SIGINT or SIGHUP stopped it (nothing replaced).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

from .. import _files
from ..framework import config as claims_config
from ..framework.records import DOCUMENT_MAX_BYTES
from . import USAGE_ERROR, _guard, description


def rehash(sources_dir: Path, name: str) -> tuple[str, str]:
    """Give ``name``'s line of ``sources_dir/SHA256SUMS`` the document's current SHA-256; returns
    ``(old digest, new digest)`` (equal: nothing written).

    Raises:
        SumsError: ``SHA256SUMS`` is malformed or does not list ``name``, or the document leads out of the
            folder.
        UnsafeFileError: the document or ``SHA256SUMS`` is not a regular file or is too large.
        OSError: a file cannot be read or written.
    """
    sums = sources_dir / _files.SUMS_NAME
    if not sums.exists():
        raise _files.SumsError(sums, "no such file (attention-claims new writes it)")
    existing = _files.read_regular(sums, DOCUMENT_MAX_BYTES)
    try:
        listed = _files.parse_sums(existing.decode("utf-8"), sums)
    except UnicodeDecodeError as exc:
        raise _files.SumsError(sums, f"not UTF-8 ({exc})") from None
    if name not in listed:
        raise _files.SumsError(sums, f"does not list {name!r} (attention-claims new adds a document's line)")
    _files.document_inside(sources_dir, name)
    digest = hashlib.sha256(_files.read_regular(sources_dir / name, DOCUMENT_MAX_BYTES)).hexdigest()
    if listed[name] != digest:
        _files.write_sums(sources_dir, _files.sums_replacing(existing, name, digest, sums))
    return listed[name], digest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("document", help="the document's path as SHA256SUMS lists it (relative to the sources folder)")
    parser.add_argument("--claims-sources", type=Path, default=None, help="default: the project's claims_sources")
    args = parser.parse_args(argv)
    sources_dir = args.claims_sources or claims_config.discover().sources_dir
    if not sources_dir.is_dir():
        print(f"attention-claims rehash: --claims-sources {sources_dir}: no such folder", file=sys.stderr)
        return USAGE_ERROR
    try:
        with _guard.signals_raise(), _guard.project_lock(claims_config.discover().root):
            old, new = rehash(sources_dir, args.document)
    except _guard.Interrupted as exc:
        print(f"attention-claims rehash: {exc}", file=sys.stderr)
        return 128 + exc.signum
    except (_files.SumsError, _files.UnsafeFileError, _guard.LockTimeout, OSError) as exc:
        print(f"attention-claims rehash: {' '.join(str(exc).split())}", file=sys.stderr)
        return USAGE_ERROR
    if old == new:
        print(f"{args.document}: SHA256SUMS already lists its SHA-256 {new}")
    else:
        print(f"{args.document}: SHA-256 {old} -> {new} in {sources_dir / _files.SUMS_NAME}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
