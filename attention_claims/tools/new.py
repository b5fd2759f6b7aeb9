"""``attention-claims new ID --document FILE --quote "..."``: start a claim.

``attention-claims new ID --document F --quote Q [--expected V] [--statement S] [--title T] [--section S]
[--reading NAME[:as-stated|:KIND]]... [--no-as-stated]`` writes ``<claims folder>/<document without suffix>/NNN-<ID>.toml``
(``NNN`` the next free number in that folder, as ``claims/README.md`` prescribes: the number orders the
claims as in the document), a record with the verbatim quote (checked against the document), the
expected verdict (default ``true``) and its readings (default: one, ``as-stated``; readings given without
one marked ``:as-stated`` get the ``as-stated`` reading first, unless ``--no-as-stated`` says the claim's
words are too vague to have one, docs/verdicts.md), and
``<checks folder>/test_<ID>.py``, one check per reading that fails with a message naming what to write,
so a new claim is never decided before it is thought through. The check names its record by a path
relative to the project (no path of this machine) and the API by its module, ``attention_claims.testkit``.

The document must be a regular UTF-8 file inside the sources folder (a symbolic link that leads out
of it is refused); when it is not yet listed in ``SHA256SUMS`` its SHA-256 is added (a last line
without its newline gets one first), and when it is listed with another hash the command stops (the
document changed).

All or nothing: every field is validated before anything is written (an id that is not kebab-case,
a blank title, quote, statement or section, or one holding a control or bidirectional-override character,
a reading name that is not one, two as-stated readings, a folder that is a file, a path that exists, even
as a dangling symbolic link); the files are written to temporaries in their folders and then moved into
place together, never through a symbolic link, and on any failure every file and folder written so far is
removed. Existing files are never overwritten (``SHA256SUMS`` is replaced by a copy with one more line).
The command holds the project's lock (:func:`._guard.project_lock`, ``filelock``) from reading
``SHA256SUMS`` and numbering the record until its files are placed, so two ``new`` at once lose no line and
never share a number; SIGTERM, SIGINT and SIGHUP roll back like an error (exit status 128 + the signal).

Exit status: 0 written; 4 a usage error (any of the above, an id already in use, a document outside the
sources folder, missing or not UTF-8, a quote not in it, a hash that differs), with one line naming it.
"""

from __future__ import annotations

import argparse
import errno
import hashlib
import os
import re
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from .. import _files
from ..framework import config as claims_config
from ..framework import quotes
from ..framework.records import (
    DOCUMENT_MAX_BYTES,
    DTYPES,
    KEBAB,
    READING_KINDS,
    READING_NAME,
    ClaimRecordError,
    document_path_problem,
    load_claim_file,
)
from . import USAGE_ERROR, _guard, description

EXPECTED = ("true", "false", "caveat")
"""The verdicts ``--expected`` takes (an ``unchecked`` claim has no checks: write its record by hand)."""
AS_STATED = "as-stated"

RECORD_HEAD = '''id = "{id}"
title = {title}
statement = {statement}
expected = {expected}  # the verdict you expect: true, false or caveat (docs/verdicts.md)

[source]
document = {document}
section = {section}
quote = {quote}
'''

READING = '''
[[readings]]
name = {name}
{as_stated}statement = "TODO: the precise proposition {what}."
'''

CHECK_HEAD = '''"""The checks of claim {id} ({record}), one per reading.

The API is the module attention_claims.testkit (python -m pydoc attention_claims.testkit): refute() reports
a counterexample, certified when recomputed exactly; claim_log.example() records what was drawn.
"""

import pytest
'''

CHECK = '''

@pytest.mark.claim("{id}", reading={reading})
def test_{name}(claim_log):
    pytest.fail("write the check for claim {id}: assert its reading {reading_text} of {record} "
                "(attention_claims.testkit.refute for a certified counterexample)")
'''

_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""Bidirectional formatting characters (Unicode UAX #9, "Explicit Directional Formatting"): text holding
one can render in another order than it reads (a title "… verdict: false" shown on a true claim)."""


class NewClaimError(Exception):
    """A usage error of ``new``, naming the file or option."""


@dataclass(frozen=True)
class ReadingSpec:
    """One ``--reading NAME[:as-stated|:KIND]`` (``NAME:numerical:DTYPE`` adds the reading's ``dtype``)."""

    name: str
    as_stated: bool
    kind: str | None = None
    dtype: str | None = None


def _toml_string(text: str) -> str:
    """``text`` as a TOML basic string (escapes backslash, quote and control characters)."""
    out = text.replace("\\", "\\\\").replace('"', '\\"')
    out = "".join(ch if ord(ch) >= 32 and ord(ch) != 127 or ch == "\t" else f"\\u{ord(ch):04x}" for ch in out)
    return f'"{out}"'


def text_problem(text: str, *, lines: bool) -> str | None:
    """Why ``text`` cannot be a record's text field, or ``None``: blank, or holding a control character
    (Unicode category Cc; a tab, and a line break when ``lines``, excepted) or a bidirectional formatting
    character (:data:`_BIDI`)."""
    if not text.strip():
        return "is blank"
    allowed = "\t\n" if lines else "\t"
    for ch in text:
        if (unicodedata.category(ch) == "Cc" and ch not in allowed) or ch in _BIDI:
            return f"holds the control character U+{ord(ch):04X} ({unicodedata.name(ch, 'unnamed')})"
    return None


def parse_readings(values: list[str], *, as_stated: bool = True) -> list[ReadingSpec]:
    """The readings of ``--reading NAME[:as-stated]`` / ``--reading NAME:KIND`` options (default: one,
    ``as-stated``, as stated). A reading other than the as-stated one needs its ``kind`` (one of
    :data:`attention_claims.framework.records.READING_KINDS`: what makes it differ when it fails,
    docs/verdicts.md, "Materiality"), e.g. ``--reading float32:numerical``; a numerical reading may name its
    dtype (one of :data:`attention_claims.framework.records.DTYPES`) after the kind, ``--reading
    half:numerical:float16``, which the record then gives as ``dtype``. When none of ``values`` is
    as stated, the reading ``as-stated`` comes first, unless ``as_stated`` is false (``--no-as-stated``:
    the claim's words are too vague to have an as-stated reading, which DESIGN.md allows only then).

    Raises:
        NewClaimError: a name is not a reading name (lower-case letters and digits joined by single
            ``-``, ``_`` or ``.``), a suffix other than ``:as-stated`` or a kind, a dtype after a kind other
            than ``numerical`` or not a known dtype, a reading other than the
            as-stated one without a kind, a name given twice, two as-stated readings; with ``as_stated``
            false, no reading or an as-stated one; with it true, a reading named ``as-stated`` that is not
            the as-stated one.
    """
    if not as_stated and not values:
        raise NewClaimError("--no-as-stated: name the claim's readings with --reading NAME:KIND (a claim without "
                            "an as-stated reading still needs at least one)")
    if not values:
        return [ReadingSpec(AS_STATED, True)]
    out: list[ReadingSpec] = []
    for value in values:
        name, sep, flag = value.partition(":")
        flag, has_dtype, dtype = flag.partition(":")
        if has_dtype and (flag != "numerical" or dtype not in DTYPES):
            raise NewClaimError(f"--reading {value!r}: a dtype follows the kind numerical only, and is one of "
                                f"{', '.join(DTYPES)} (e.g. {name}:numerical:float16)")
        if sep and flag != AS_STATED and flag not in READING_KINDS:
            raise NewClaimError(f"--reading {value!r}: the suffix is ':as-stated' or a kind "
                                f"(:{', :'.join(READING_KINDS)})")
        if not READING_NAME.fullmatch(name):
            raise NewClaimError(f"--reading {value!r}: {name!r} is not a reading name (lower-case letters and "
                                "digits joined by single '-', '_' or '.', e.g. float32)")
        if any(r.name == name for r in out):
            raise NewClaimError(f"--reading {value!r}: reading {name!r} given twice")
        stated = flag == AS_STATED or (not sep and name == AS_STATED)
        if not stated and not sep:
            raise NewClaimError(f"--reading {value!r}: a reading other than the as-stated one needs its kind, "
                                f"what makes it differ when it fails: {value}:numerical (a dtype or a device), "
                                f"{value}:scope (a range, ties, finite n) or {value}:empirical (a trained model)")
        out.append(ReadingSpec(name, stated, None if stated else flag, dtype or None))
    if sum(r.as_stated for r in out) > 1:
        raise NewClaimError("--reading: at most one reading is as stated (NAME:as-stated, or the one named "
                            f"{AS_STATED!r}): {', '.join(r.name for r in out if r.as_stated)}")
    if not as_stated and any(r.as_stated for r in out):
        raise NewClaimError(f"--no-as-stated: but --reading {next(r.name for r in out if r.as_stated)!r} is the "
                            "as-stated one; drop one of the two")
    if as_stated and not any(r.as_stated for r in out):
        if any(r.name == AS_STATED for r in out):
            raise NewClaimError(f"--reading {AS_STATED!r} with a kind is not the as-stated reading; name it "
                                "otherwise, or pass --no-as-stated if the claim's words are too vague to have one")
        out.insert(0, ReadingSpec(AS_STATED, True))
    return out


def _folder_problem(folder: Path, option: str) -> None:
    """Refuse a folder path that exists but is not a folder (a file, a dangling symbolic link)."""
    if os.path.lexists(folder) and not folder.is_dir():
        raise NewClaimError(f"{option} {folder}: not a folder (a file or a dangling symbolic link is there)")


def next_number(folder: Path) -> int:
    """The next free record number in ``folder``: one more than the largest ``NNN`` of its
    ``NNN-<id>.toml`` files, 1 in an empty or missing folder."""
    numbers = [int(m.group(1)) for p in (folder.iterdir() if folder.is_dir() else ())
               if (m := re.fullmatch(r"(\d{3,})-.+\.toml", p.name))]
    return max(numbers, default=0) + 1


def _relative(path: Path, root: Path) -> str:
    """``path`` relative to the project ``root`` (POSIX), for what the files say and the command prints."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return Path(os.path.relpath(path.resolve(), root.resolve())).as_posix()


def _resolve_document(document: str, sources_dir: Path) -> tuple[str, Path, bytes, str]:
    """``(name relative to the sources folder, its resolved path, its bytes, its text)``.

    Raises:
        NewClaimError: outside the sources folder (also through a symbolic link), missing, not a
            regular file, too large, or not UTF-8.
    """
    doc_path = Path(document)
    if doc_path.is_absolute() or (os.path.lexists(doc_path) and not os.path.lexists(sources_dir / document)):
        try:
            document = Path(os.path.abspath(doc_path)).relative_to(Path(os.path.abspath(sources_dir))).as_posix()
        except ValueError:
            raise NewClaimError(f"--document {document}: not under the sources folder {sources_dir}") from None
    problem = document_path_problem(document)
    if problem is not None:
        raise NewClaimError(f"--document {document!r}: {problem} ({sources_dir})")
    target = sources_dir / document
    if not os.path.lexists(target):
        raise NewClaimError(f"--document {document}: no such file {target}")
    try:
        resolved = _files.document_inside(sources_dir, document)
        raw = _files.read_regular(target, DOCUMENT_MAX_BYTES)
    except (_files.SumsError, _files.UnsafeFileError) as exc:
        raise NewClaimError(f"--document {document}: {exc}") from None
    except OSError as exc:
        raise NewClaimError(f"--document {document}: {target} cannot be read ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NewClaimError(f"--document {document}: {target} is not UTF-8 text ({exc})") from None
    return document, resolved, raw, text


def _existing_ids(claims_dir: Path) -> dict[str, Path]:
    existing: dict[str, Path] = {}
    if claims_dir.is_dir():
        for path in sorted(claims_dir.rglob("*.toml")):
            try:
                existing[load_claim_file(path).id] = path
            except ClaimRecordError:
                continue  # a malformed record is reported by pytest, naming its file
    return existing


def write_claim(claim_id: str, document: str, quote: str, *, claims_dir: Path, sources_dir: Path,
                checks_dir: Path, title: str | None = None, section: str | None = None,
                statement: str | None = None, expected: str = "true", readings: list[str] | None = None,
                root: Path | None = None, as_stated: bool = True) -> tuple[Path, Path]:
    """Write the record and the check skeleton of a new claim, all or nothing; returns their paths.

    Under the project's lock (:func:`._guard.project_lock` in ``root``): ``SHA256SUMS`` is read and the
    record numbered by one command at a time. SIGTERM, SIGINT and SIGHUP while it runs roll back like an
    error (:func:`._guard.signals_raise`) and raise :class:`._guard.Interrupted`.

    ``readings``: ``NAME`` or ``NAME:as-stated`` strings and ``as_stated`` (false: ``--no-as-stated``),
    :func:`parse_readings`. ``root``: the project
    folder the written files name paths relative to (default: the claims folder's parent).

    Raises:
        NewClaimError: see the module's exit status 4 (the message names the file or option); nothing
            is left written; also when another command holds the lock too long.
        OSError: a write failed (nothing is left written either).
        _guard.Interrupted: a signal arrived (nothing is left written).
    """
    root = root if root is not None else claims_dir.parent
    try:
        with _guard.signals_raise(), _guard.project_lock(root):
            return _write_claim(claim_id, document, quote, claims_dir=claims_dir, sources_dir=sources_dir,
                                checks_dir=checks_dir, title=title, section=section, statement=statement,
                                expected=expected, readings=readings, root=root, as_stated=as_stated)
    except _guard.LockTimeout as exc:
        raise NewClaimError(str(exc)) from None


def _write_claim(claim_id: str, document: str, quote: str, *, claims_dir: Path, sources_dir: Path,
                 checks_dir: Path, title: str | None, section: str | None, statement: str | None,
                 expected: str, readings: list[str] | None, root: Path, as_stated: bool) -> tuple[Path, Path]:
    """:func:`write_claim` under the lock (the same arguments and errors)."""
    if not KEBAB.fullmatch(claim_id):
        raise NewClaimError(f"id {claim_id!r}: must be kebab-case (lower-case letters, digits, single hyphens)")
    fields = {"--quote": (quote, True), "--title": (title, False), "--section": (section, False),
              "--statement": (statement, True)}
    for option, (value, lines) in fields.items():
        problem = None if value is None else text_problem(value, lines=lines)
        if problem is not None:
            raise NewClaimError(f"{option} {value!r}: {problem}")
    if expected not in EXPECTED:
        raise NewClaimError(f"--expected {expected!r}: one of {', '.join(EXPECTED)}")
    specs = parse_readings(list(readings or []), as_stated=as_stated)
    for folder, option in ((claims_dir, "--claims-dir"), (checks_dir, "--checks-dir"), (sources_dir, "--claims-sources")):
        _folder_problem(folder, option)
    if not sources_dir.is_dir():
        raise NewClaimError(f"--claims-sources {sources_dir}: no such folder (put the document there first)")
    document, _resolved, raw, text = _resolve_document(document, sources_dir)
    if not quotes.contains(text, quote):
        if quotes.contains(re.sub(r"<[^<>]*>", "", text), quote):
            raise NewClaimError(
                f"--quote: does not occur verbatim (up to whitespace) in {sources_dir / document}; it does once the "
                "document's markup tags are removed, but a quote is compared with the file's own text: copy it "
                "from the file, tags included (e.g. 'is <b>not</b> so')")
        raise NewClaimError(f"--quote: {quotes.not_found(str(sources_dir / document), text, quote)}")
    existing = _existing_ids(claims_dir)
    if claim_id in existing:
        raise NewClaimError(f"id {claim_id!r} is already used by {existing[claim_id]}")
    record_dir = claims_dir / Path(document).with_suffix("")
    for folder in [*reversed(record_dir.relative_to(claims_dir).parents), record_dir.relative_to(claims_dir)]:
        _folder_problem(claims_dir / folder, "--claims-dir")
        if str(folder) != "." and os.path.islink(claims_dir / folder):
            raise NewClaimError(f"{claims_dir / folder}: a symbolic link; a record is not written through it")
    record = record_dir / f"{next_number(record_dir):03d}-{claim_id}.toml"
    check = checks_dir / f"test_{claim_id.replace('-', '_')}.py"
    for path in (record, check):
        if os.path.lexists(path):
            raise NewClaimError(f"{path} exists (or a symbolic link is there); not overwritten")
    sums = sources_dir / _files.SUMS_NAME
    digest = hashlib.sha256(raw).hexdigest()
    try:
        listed = _files.read_sums(sources_dir, DOCUMENT_MAX_BYTES)
        old_sums = _files.read_regular(sums, DOCUMENT_MAX_BYTES) if os.path.lexists(sums) else b""
    except (_files.SumsError, _files.UnsafeFileError) as exc:
        raise NewClaimError(str(exc)) from None
    if document in listed and listed[document] != digest:
        raise NewClaimError(f"{sources_dir / document}: SHA-256 {digest}, {sums} says {listed[document]} (the "
                            "document changed; update SHA256SUMS on purpose if it did)")
    writes: list[tuple[Path, bytes, bool]] = []  # (path, bytes, replaces an existing file)
    if document not in listed:
        if os.path.islink(sums):
            raise NewClaimError(f"{sums}: a symbolic link; not written through (make it a file, or add the line "
                                f"'{digest}  {document}' yourself)")
        writes.append((sums, _files.sums_with(old_sums, document, digest), os.path.lexists(sums)))
    record_rel = _relative(record, root)
    body = RECORD_HEAD.format(
        id=claim_id, title=_toml_string(title or f"TODO: a short title of {claim_id}"),
        statement=_toml_string(statement or "TODO: the claim in one or two English sentences."),
        expected=_toml_string(expected), document=_toml_string(document),
        section=_toml_string(section or "TODO: where in the document"), quote=_toml_string(quote))
    for r in specs:
        what = ("the quote means, as a competent reader of the document reads it" if r.as_stated
                else "of this reading: the condition it adds (a dtype, a range, a model)")
        extra = "as_stated = true\n" if r.as_stated else f"kind = {_toml_string(r.kind or '')}\n"
        if r.dtype:
            extra = f"dtype = {_toml_string(r.dtype)}\n" + extra
        body += READING.format(name=_toml_string(r.name), as_stated=extra, what=what)
    code = CHECK_HEAD.format(id=claim_id, record=record_rel)
    for r in specs:
        code += CHECK.format(id=claim_id, reading=f'"{r.name}"', reading_text=f"'{r.name}'",
                             record=record_rel, name=f"{claim_id}_{r.name}".replace("-", "_").replace(".", "_"))
    writes += [(record, body.encode("utf-8"), False), (check, code.encode("utf-8"), False)]
    _write_together(writes, record)
    return record, check


def _made_dirs(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; returns those it created, deepest last."""
    missing = []
    p = folder
    while not os.path.lexists(p):
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        os.mkdir(d)
    return list(reversed(missing))


def _write_together(writes: list[tuple[Path, bytes, bool]], record: Path) -> None:
    """Write every ``(path, bytes, replace)`` through a temporary in its folder, then move them into place
    together: a new file is hard-linked to its name (which fails if anything, even a dangling symbolic link,
    is there), a replaced one is ``os.replace``-d (last, so that a failure before it changes nothing). On any
    failure every file placed and every folder created is removed, and the error is raised again.
    ``record`` is validated (:func:`load_claim_file`) from its temporary before anything is placed.

    Raises:
        NewClaimError: the record written does not load (a bug of this command).
        OSError: a write failed.
    """
    made: list[Path] = []
    temps: dict[Path, Path] = {}
    placed: list[Path] = []
    try:
        for path, _data, _replace in writes:
            made += _made_dirs(path.parent)
        for path, data, replace in writes:
            with _guard.deferred():  # a signal never falls between creating a temporary and noting it
                temps[path] = _files.stage_file(path, data, replacing=replace)
        try:
            load_claim_file(temps[record])
        except ClaimRecordError as exc:
            raise NewClaimError(f"the record it would write does not load (a bug of `new`): {exc}") from None
        for path, _data, replace in sorted(writes, key=lambda w: w[2]):  # new files first, the replacement last
            with _guard.deferred():  # nor between placing a file and noting it for the rollback
                if replace:
                    tmp = temps.pop(path)
                    _files.place_file(tmp, path)
                else:
                    _place_new(temps[path], path)
                placed.append(path)
    except BaseException:
        with _guard.deferred():  # a second signal does not cut the rollback short
            for path in placed:
                if not any(p == path and rep for p, _d, rep in writes):
                    path.unlink(missing_ok=True)
            for tmp in temps.values():
                tmp.unlink(missing_ok=True)
            for d in reversed(made):
                try:
                    os.rmdir(d)
                except OSError:
                    pass
        raise
    for tmp in temps.values():
        tmp.unlink(missing_ok=True)


def _place_new(tmp: Path, path: Path) -> None:
    """Give the temporary ``tmp`` the name ``path``, failing if anything is there (a dangling symbolic link
    included): ``os.link``, or where the file system has no hard links an exclusive create of ``path``."""
    try:
        os.link(tmp, path, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            if exc.errno == errno.EEXIST:
                raise NewClaimError(f"{path} appeared while writing; not overwritten") from None
            raise
        _files.create_file(path, _files.read_regular(tmp, DOCUMENT_MAX_BYTES))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("id", help="the claim's id, kebab-case (named literally by its checks' markers)")
    parser.add_argument("--document", required=True, help="the document under the sources folder that states it")
    parser.add_argument("--quote", required=True, help="the claim's own words, verbatim from the document")
    # checked with the other fields (exit status 4, one line), not by argparse's choices (2, the usage too)
    parser.add_argument("--expected", default="true", metavar="{" + ",".join(EXPECTED) + "}",
                        help="the verdict you expect (default: true); a run fails until the verdict agrees")
    parser.add_argument("--statement", default=None, help="the claim in one or two English sentences")
    parser.add_argument("--reading", action="append", default=[], metavar="NAME[:as-stated|:KIND[:DTYPE]]",
                        help="a reading of the claim, with a check skeleton of its own (repeatable; default: one "
                             "reading 'as-stated'); ':as-stated' marks the one that means what the words say, any "
                             "other needs its kind: numerical, scope or empirical (e.g. float32:numerical); "
                             "a numerical one may add its dtype, written to the record (half:numerical:float16); "
                             "without a ':as-stated' one, the reading 'as-stated' is added first")
    parser.add_argument("--no-as-stated", dest="as_stated", action="store_false",
                        help="give the claim no as-stated reading (only the --reading NAME:KIND ones): for a claim "
                             "whose words are too vague to be checked as they stand (docs/verdicts.md)")
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
                                    title=args.title, section=args.section, statement=args.statement,
                                    expected=args.expected, readings=args.reading, root=paths.root,
                                    as_stated=args.as_stated)
    except (NewClaimError, OSError, _files.UnsafeFileError, _guard.Interrupted) as exc:
        message = " ".join(str(exc).split()) if isinstance(exc, NewClaimError) else f"cannot write: {exc}"
        print(f"attention-claims new: {message}", file=sys.stderr)
        return 128 + exc.signum if isinstance(exc, _guard.Interrupted) else USAGE_ERROR
    print(f"wrote {_relative(record, paths.root)} and {_relative(check, paths.root)}: fill in the TODOs, then run "
          f"`pytest --claims-select {args.id}`")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
