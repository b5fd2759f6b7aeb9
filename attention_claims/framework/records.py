"""Claim records: the TOML schema, its loader and its validator.

A *claim* is one statement from a source document (``sources/`` in the repository, or a cited
paper); a *reading* is one precise proposition the claim can be taken to mean.
The record format is fixed by ``docs/verdicts.md`` ("Claims, readings, checks").

Every error raised here is a :class:`ClaimRecordError` whose message names the file,
the claim id (when known) and the offending field, so that a malformed record never
surfaces as a traceback from deep inside the plugin.
"""

from __future__ import annotations

import ast
import dataclasses
import math
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from .. import _files
from ..maths.arrays import DTYPES  # the dtype names a reading may give: those the maths layer resolves
from . import quotes

VERDICTS = ("true", "false", "caveat", "unchecked", "undecided")
EXPECTABLE = ("true", "false", "caveat", "unchecked")
DEVICES = ("cpu", "cuda")
# Anchored with \A and \Z (not ^ and $, which also match before a final newline) and used with fullmatch, so
# "note-rows-sum-to-one\n" is no id (issue 33.6), whichever of match and fullmatch a caller uses.
KEBAB = re.compile(r"\A[a-z0-9]+(?:-[a-z0-9]+)*\Z")
READING_NAME = re.compile(r"\A[a-z0-9]+(?:[-_.][a-z0-9]+)*\Z")
ARXIV = re.compile(r"\AarXiv:\d{4}\.\d{4,5}\Z")
SEED = re.compile(r"\A\d{3}_[0-9a-f]{16}\.txt\Z")
"""The names of this repository's five seed documents (``NNN_<16 hex>.txt``); any other name is as good."""

REPO_ROOT = Path(__file__).resolve().parents[2]
RECORDS_DIR = REPO_ROOT / "claims"
"""The claim records (``claims/<document>/NNN-<id>.toml``), the default of ``--claims-dir``."""
SOURCES_DIR = REPO_ROOT / "sources"
"""The five source documents and their ``SHA256SUMS``, the default of ``--claims-sources``."""

CLAIM_FIELDS = {
    "id": str,
    "title": str,
    "statement": str,
    "formal": str,
    "expected": str,
    "source": dict,
    "readings": list,
    "unchecked_reason": str,
    "notes": str,
    "topics": list,
    "claimed": dict,
    "claimed_nonfinite": dict,
    "also_in": list,
    "evidence": list,
}
CLAIM_REQUIRED = ("id", "title", "statement", "expected", "source")
SOURCE_FIELDS = {"document": str, "section": str, "quote": str}
READING_FIELDS = {
    "name": str,
    "statement": str,
    "as_stated": bool,
    "dtype": str,
    "device": str,
    "condition": str,
    "user_model": str,
    "kind": str,
}
READING_KINDS = ("numerical", "scope", "empirical")
"""``kind`` of a reading other than the as-stated one: what makes it differ from the document's words
when it fails: ``numerical`` (a dtype or a device), ``scope`` (a range, an endpoint, ties, finite n,
generic vs every input) or ``empirical`` (a trained model). docs/verdicts.md, "Materiality"."""
USER_MODEL_SCOPES = ("separate", "counts")
"""``user_model`` values of a reading decided on the models given with ``--claims-model``:
``separate`` (reported on its own, never changes the verdict) or ``counts`` (counts like any other
reading when it ran). See docs/verdicts.md, "Readings on user models"."""
READING_REQUIRED = ("name", "statement")
RECORD_MAX_BYTES = 1 << 20
"""The largest claim record read (1 MiB; the largest shipped record is a few KiB)."""
DOCUMENT_MAX_BYTES = 16 << 20
"""The largest source document (or ``SHA256SUMS``) read for quote verification (16 MiB)."""


class ClaimRecordError(ValueError):
    """A claim record is malformed.

    The message always has the form ``<file>: claim '<id>': field '<field>': <problem>``
    (the claim part is omitted when the id itself is unreadable).
    """

    def __init__(self, path: Path | str, claim: str | None, field_name: str | None, problem: str):
        self.path = str(path)
        self.claim = claim
        self.field = field_name
        self.problem = problem
        parts = [self.path]
        if claim:
            parts.append(f"claim '{claim}'")
        if field_name:
            parts.append(f"field '{field_name}'")
        parts.append(problem)
        super().__init__(": ".join(parts))

    @property
    def subject(self) -> str:
        """What the error is about, for the line that introduces it (issue 44.6): ``"source document"``
        for a document, its folder, ``SHA256SUMS`` or ``documents.toml``, or a record's
        ``source.document`` / ``also_in[i].document`` field; else ``"claim record"``."""
        if ((self.field or "").endswith(".document") or self.problem.startswith(("source document", "checksum list"))
                or Path(self.path).name in ("SHA256SUMS", MANIFEST)):
            return "source document"
        return "claim record"


@dataclass(frozen=True)
class Source:
    """Where a claim comes from: a seed document's file name or an arXiv identifier."""

    document: str
    section: str
    quote: str


@dataclass(frozen=True)
class Reading:
    """One precise proposition a claim can be taken to mean (DESIGN.md)."""

    name: str
    statement: str
    as_stated: bool = False
    dtype: str | None = None
    device: str | None = None
    condition: str | None = None
    user_model: str | None = None
    kind: str | None = None

    @property
    def counts(self) -> bool:
        """Whether this reading's outcome enters the verdict: every reading except one decided on
        user models with ``user_model = "separate"``."""
        return self.user_model != "separate"


@dataclass(frozen=True)
class Evidence:
    """One ``[[evidence]]`` entry: a small-scale replication's result file and its summary (issue 47,
    ``docs/evidence.md``). It never changes a verdict, ``expected`` or the snapshot."""

    file: str
    config_sha256: str
    quantity: str
    decision_rule: str
    scale: str
    result: str
    outcome: str


EVIDENCE_FIELDS = {"file": str, "config_sha256": str, "quantity": str, "decision_rule": str, "scale": str,
                   "result": str, "outcome": str}
EVIDENCE_OUTCOMES = ("consistent", "inconsistent", "inconclusive")


def _check_evidence(path, cid, entries: list) -> tuple[Evidence, ...]:
    """The record's ``[[evidence]]`` entries, each with every field of :data:`EVIDENCE_FIELDS`, an outcome
    of :data:`EVIDENCE_OUTCOMES`, a 64-hex ``config_sha256`` and a ``file`` under
    ``reports/evidence/<claim id>/`` ending in ``.json``. The file's own content and its agreement with
    the entry are checked by :func:`attention_claims.replication.schema.check_claim_evidence` (CI).

    Raises:
        ClaimRecordError: naming ``evidence[<i>].<field>``.
    """
    out = []
    for i, e in enumerate(entries):
        _check_table(path, cid, e, "evidence", i, EVIDENCE_FIELDS, tuple(EVIDENCE_FIELDS))
        if e["outcome"] not in EVIDENCE_OUTCOMES:
            raise ClaimRecordError(path, cid, f"evidence[{i}].outcome",
                                   f"unknown outcome {e['outcome']!r} (one of {', '.join(EVIDENCE_OUTCOMES)})")
        if not re.fullmatch(r"[0-9a-f]{64}", e["config_sha256"]):
            raise ClaimRecordError(path, cid, f"evidence[{i}].config_sha256", "must be 64 lowercase hex digits")
        if not re.fullmatch(rf"reports/evidence/{re.escape(str(cid))}/[A-Za-z0-9._-]+\.json", e["file"]):
            raise ClaimRecordError(path, cid, f"evidence[{i}].file",
                                   f"must be reports/evidence/{cid}/<date>-<device>.json, got {e['file']!r}")
        out.append(Evidence(**e))
    return tuple(out)


@dataclass(frozen=True)
class Claim:
    """A validated claim record."""

    id: str
    title: str
    statement: str
    expected: str
    source: Source
    readings: tuple[Reading, ...]
    path: str
    formal: str | None = None
    unchecked_reason: str | None = None
    notes: str | None = None
    order: int = 0
    claimed: dict = field(default_factory=dict)
    also_in: tuple[Source, ...] = ()
    topics: tuple[str, ...] = ()
    claimed_nonfinite: dict = field(default_factory=dict)
    """Why a ``[claimed]`` number is infinite or NaN, by its key (``[claimed_nonfinite]``)."""
    evidence: tuple[Evidence, ...] = ()
    """Small-scale replications (``[[evidence]]``): never part of the verdict (:func:`_check_evidence`)."""

    @property
    def documents(self) -> tuple[str, ...]:
        """Every document that states this claim: ``source.document`` first, then each
        ``also_in`` document (once each, in record order)."""
        out = [self.source.document]
        for s in self.also_in:
            if s.document not in out:
                out.append(s.document)
        return tuple(out)

    @property
    def as_stated(self) -> Reading | None:
        """The reading marked ``as_stated = true``, or ``None`` for a vague claim."""
        for r in self.readings:
            if r.as_stated:
                return r
        return None

    def reading(self, name: str) -> Reading | None:
        """The reading called ``name``, or ``None``."""
        for r in self.readings:
            if r.name == name:
                return r
        return None


def _check_types(path, cid, table: dict, spec: dict, prefix: str) -> None:
    for key, value in table.items():
        fname = f"{prefix}{key}"
        if key not in spec:
            raise ClaimRecordError(path, cid, fname, f"unknown field (allowed: {', '.join(sorted(spec))})")
        want = spec[key]
        if not isinstance(value, want) or (want is not bool and isinstance(value, bool)):
            raise ClaimRecordError(
                path, cid, fname, f"must be a {want.__name__}, got {type(value).__name__} {value!r}"
            )
        if want is str and not value.strip():
            raise ClaimRecordError(path, cid, fname, "must not be empty")
        if want is str:
            _check_text(path, cid, fname, value)


# Bidirectional marks, embeddings, overrides and isolates (Unicode Standard Annex #9, "Explicit
# Directional Formatting Characters" and "Implicit Directional Formatting Characters"): they make a
# title read in another order than it is stored ("Rows sum to one" then "verdict: false" on a true claim).
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def control_character(text: str) -> tuple[int, str] | None:
    """The first character of ``text`` that no record text may hold, as ``(offset, "U+XXXX NAME")``, or
    None: a C0 or C1 control character (Unicode category Cc) other than tab, line feed and carriage
    return, or one of :data:`BIDI_CONTROLS`."""
    import unicodedata

    for k, ch in enumerate(text):
        if (unicodedata.category(ch) == "Cc" and ch not in "\t\n\r") or ch in BIDI_CONTROLS:
            return k, f"U+{ord(ch):04X} {unicodedata.name(ch, 'control character')}"
    return None


def _check_text(path, cid, fname: str, value: str) -> None:
    """Refuse a text field holding a :func:`control_character` (issue 33.2).

    Raises:
        ClaimRecordError: naming the file, the claim, the field and the character with its offset.
    """
    found = control_character(value)
    if found is not None:
        raise ClaimRecordError(path, cid, fname, f"holds the control character {found[1]} at offset {found[0]} "
                                                 "(bidirectional overrides and control characters are refused: "
                                                 "they make the text read otherwise than it is stored)")


def _check_table(path, cid, table, array: str, i: int, fields: dict, required: tuple) -> None:
    """Entry ``i`` of the array of tables ``array`` (``[[readings]]``, ``[[also_in]]``): a table
    whose fields have the right types and include every ``required`` one.

    Raises:
        ClaimRecordError: naming ``<array>[<i>]`` or ``<array>[<i>].<field>``.
    """
    if not isinstance(table, dict):
        raise ClaimRecordError(path, cid, f"{array}[{i}]", f"must be a table ([[{array}]])")
    _check_types(path, cid, table, fields, f"{array}[{i}].")
    for key in required:
        if key not in table:
            raise ClaimRecordError(path, cid, f"{array}[{i}].{key}", "missing required field")


def is_local_document(document: str) -> bool:
    """Whether ``source.document`` names a file of the sources folder (anything but an arXiv id)."""
    return not ARXIV.fullmatch(document)


def document_path_problem(document: str) -> str | None:
    """Why ``document`` cannot name a file under the sources folder, or None when it can: a relative
    POSIX path (``note.md``, ``papers/draft.tex``) without ``..``, a leading ``/`` or ``~``, a backslash
    or a control or bidirectional-override character (:func:`control_character`)."""
    parts = document.split("/")
    if (not document or document.startswith(("/", "~")) or "\\" in document
            or any(ord(ch) < 32 for ch in document) or control_character(document) is not None
            or any(p in ("", ".", "..") for p in parts)):
        return "not a relative path inside the sources folder"
    return None


def _check_document(path, cid, document: str, fname: str) -> None:
    if ARXIV.fullmatch(document):
        return
    problem = document_path_problem(document)
    if problem is not None:
        raise ClaimRecordError(
            path, cid, fname,
            f"{document!r} is neither a file under the sources folder (a relative path such as "
            f"'note.md') nor an arXiv id (arXiv:NNNN.NNNNN): {problem}",
        )


def parse_claim(data: dict, path: Path | str, order: int = 0) -> Claim:
    """Validate one decoded TOML table and build a :class:`Claim`.

    Raises:
        ClaimRecordError: on a missing, unknown or ill-typed field, a bad id, an unknown
            verdict, two as-stated readings, duplicate reading names, a reading other than the
            as-stated one without a ``kind`` (or an as-stated one with one), or an ``unchecked``
            claim that has readings (or a checked one that has none), or a ``[claimed]`` value
            that is a formula :func:`.expr.parse` refuses (syntax, size, exponent) or a non-finite
            number without its reason in ``[claimed_nonfinite]``.
    """
    raw_id = data.get("id")
    cid = raw_id if isinstance(raw_id, str) and KEBAB.fullmatch(raw_id) else None  # else unreadable: not shown
    _check_types(path, cid, data, CLAIM_FIELDS, "")
    for key in CLAIM_REQUIRED:
        if key not in data:
            raise ClaimRecordError(path, cid, key, "missing required field")
    if not KEBAB.fullmatch(data["id"]):
        raise ClaimRecordError(path, cid, "id", "must be kebab-case (lowercase words joined by '-')")
    if data["expected"] not in EXPECTABLE:
        raise ClaimRecordError(
            path, cid, "expected", f"unknown verdict {data['expected']!r} (one of {', '.join(EXPECTABLE)})"
        )
    src = data["source"]
    _check_types(path, cid, src, SOURCE_FIELDS, "source.")
    for key in SOURCE_FIELDS:
        if key not in src:
            raise ClaimRecordError(path, cid, f"source.{key}", "missing required field")
    _check_document(path, cid, src["document"], "source.document")
    also_in: list[Source] = []
    for i, extra in enumerate(data.get("also_in", [])):
        prefix = f"also_in[{i}]."
        _check_table(path, cid, extra, "also_in", i, SOURCE_FIELDS, tuple(SOURCE_FIELDS))
        _check_document(path, cid, extra["document"], prefix + "document")
        place = Source(**extra)
        if place == Source(**src) or place in also_in:
            raise ClaimRecordError(path, cid, prefix + "quote", "repeats the source or another also_in entry")
        also_in.append(place)
    readings_raw = data.get("readings", [])
    readings: list[Reading] = []
    seen: set[str] = set()
    for i, r in enumerate(readings_raw):
        prefix = f"readings[{i}]."
        _check_table(path, cid, r, "readings", i, READING_FIELDS, READING_REQUIRED)
        if not READING_NAME.fullmatch(r["name"]):
            raise ClaimRecordError(path, cid, prefix + "name", f"{r['name']!r} is not a lowercase identifier")
        if r["name"] in seen:
            raise ClaimRecordError(path, cid, prefix + "name", f"duplicate reading name {r['name']!r}")
        seen.add(r["name"])
        if "dtype" in r and r["dtype"] not in DTYPES:
            raise ClaimRecordError(path, cid, prefix + "dtype", f"unknown dtype {r['dtype']!r} (one of {DTYPES})")
        if "device" in r and r["device"] not in DEVICES:
            raise ClaimRecordError(path, cid, prefix + "device", f"unknown device {r['device']!r} (one of {DEVICES})")
        if "user_model" in r:
            if r["user_model"] not in USER_MODEL_SCOPES:
                raise ClaimRecordError(path, cid, prefix + "user_model",
                                       f"unknown value {r['user_model']!r} (one of {USER_MODEL_SCOPES})")
            if r.get("as_stated"):
                raise ClaimRecordError(path, cid, prefix + "user_model",
                                       "a reading decided on user models cannot be the as-stated one")
        if r.get("as_stated"):
            if "kind" in r:
                raise ClaimRecordError(path, cid, prefix + "kind",
                                       "the as-stated reading has no kind (it is what the document says)")
        elif "kind" not in r:
            raise ClaimRecordError(path, cid, prefix + "kind",
                                   f"missing: a reading other than the as-stated one needs a kind (one of {READING_KINDS})")
        elif r["kind"] not in READING_KINDS:
            raise ClaimRecordError(path, cid, prefix + "kind", f"unknown kind {r['kind']!r} (one of {READING_KINDS})")
        readings.append(Reading(**r))
    stated = [r.name for r in readings if r.as_stated]
    if len(stated) > 1:
        raise ClaimRecordError(
            path, cid, "readings.as_stated", f"more than one as-stated reading: {', '.join(stated)}"
        )
    if data["expected"] == "unchecked":
        if readings:
            raise ClaimRecordError(path, cid, "readings", "an unchecked claim has no readings")
        if "unchecked_reason" not in data:
            raise ClaimRecordError(path, cid, "unchecked_reason", "an unchecked claim must give its reason")
    else:
        if not readings:
            raise ClaimRecordError(path, cid, "readings", "a checked claim needs at least one reading")
        if "unchecked_reason" in data:
            raise ClaimRecordError(path, cid, "unchecked_reason", "only an unchecked claim has an unchecked_reason")
    claimed = data.get("claimed", {})
    nonfinite = data.get("claimed_nonfinite", {})
    _check_claimed(path, cid, claimed, nonfinite)
    topics = data.get("topics", [])
    if not all(isinstance(t, str) and t.strip() for t in topics):
        raise ClaimRecordError(path, cid, "topics", "must be a list of non-empty strings (e.g. [\"rank\", \"kernels\"])")
    for i, t in enumerate(topics):
        _check_text(path, cid, f"topics[{i}]", t)
    return Claim(
        topics=tuple(t.strip() for t in topics),
        id=data["id"],
        title=data["title"],
        statement=data["statement"],
        expected=data["expected"],
        source=Source(**src),
        readings=tuple(readings),
        path=str(path),
        formal=data.get("formal"),
        unchecked_reason=data.get("unchecked_reason"),
        notes=data.get("notes"),
        order=order,
        claimed=dict(claimed),
        also_in=tuple(also_in),
        claimed_nonfinite=dict(nonfinite),
        evidence=_check_evidence(path, cid, data.get("evidence", [])),
    )


def _nonfinite_string(value: str) -> bool:
    """Whether ``value`` reads as an infinite or NaN number (``"inf"``, ``"nan"``, ``"1e400"``)."""
    try:
        return not math.isfinite(float(value))
    except ValueError:
        return False


def _check_claimed(path, cid, claimed: dict, nonfinite: dict) -> None:
    """The ``[claimed]`` table: numbers, or formulas :func:`.expr.parse` accepts (within its limits);
    a number is finite unless ``[claimed_nonfinite]`` gives the reason under the same key, and a
    formula has no infinite literal (``"1e400"``). Every ``[claimed_nonfinite]`` entry is a non-empty
    reason for a ``[claimed]`` number that is infinite or NaN.

    Raises:
        ClaimRecordError: naming ``claimed.<key>`` or ``claimed_nonfinite.<key>``.
    """
    from .expr import ExpressionError, parse

    for key, value in claimed.items():
        fname = f"claimed.{key}"
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise ClaimRecordError(path, cid, fname, f"must be a formula (string) or a number, got {value!r}")
        if isinstance(value, float) and not math.isfinite(value) and key not in nonfinite:
            raise ClaimRecordError(path, cid, fname,
                                   f"{value!r} is not a finite number (a claimed infinity or NaN needs its reason "
                                   f"in [claimed_nonfinite]: {key} = \"why\")")
        if isinstance(value, str):
            if _nonfinite_string(value):
                raise ClaimRecordError(path, cid, fname,
                                       f"{value[:60]!r} reads as {float(value)!r}, not a finite number (write an "
                                       "infinity or NaN as a TOML number, inf or nan, with its reason in "
                                       "[claimed_nonfinite])")
            try:
                tree = parse(value)
            except ExpressionError as exc:
                raise ClaimRecordError(path, cid, fname, str(exc)) from None
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, float) and not math.isfinite(node.value):
                    raise ClaimRecordError(path, cid, fname,
                                           f"the number {ast.unparse(node)} in {value[:60]!r} overflows float64 "
                                           "(it would read as inf)")
    for key, reason in nonfinite.items():
        fname = f"claimed_nonfinite.{key}"
        if not isinstance(reason, str) or not reason.strip():
            raise ClaimRecordError(path, cid, fname, f"must be a non-empty reason (string), got {reason!r}")
        value = claimed.get(key)
        if not (isinstance(value, float) and not math.isfinite(value)):
            raise ClaimRecordError(path, cid, fname,
                                   f"gives a reason for a non-finite value, but claimed.{key} is "
                                   f"{'missing' if key not in claimed else repr(value)}")


def read_capped(path: Path | str, cap: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``cap`` of them: :func:`attention_claims._files.read_regular`
    (opened without blocking, ``fstat``-checked, at most ``cap + 1`` bytes read).

    Raises:
        OSError: it cannot be opened (missing, a dangling symlink, no permission).
        ValueError: (:class:`attention_claims._files.UnsafeFileError`) it is not a regular file, or is larger
            than ``cap`` bytes (the message names the path and says which).
    """
    return _files.read_regular(path, cap)


def _read_file(path: Path | str, cap: int, what: str) -> bytes:
    """:func:`read_capped`, its errors as a :class:`ClaimRecordError` naming ``path`` and ``what`` it is."""
    try:
        return read_capped(path, cap)
    except ValueError as exc:
        raise ClaimRecordError(path, None, None, f"{what} is {getattr(exc, 'problem', exc)}") from None
    except OSError as exc:
        raise ClaimRecordError(path, None, None, f"{what} cannot be read: {exc.strerror or exc}") from None


def load_claim_file(path: Path) -> Claim:
    """Read and validate one ``.toml`` claim record.

    The file is read with :func:`read_capped` (a regular file of at most :data:`RECORD_MAX_BYTES`).

    Raises:
        ClaimRecordError: if the file is not a readable regular file within the size limit, is not
            valid TOML, or the record is malformed.
    """
    raw = _read_file(path, RECORD_MAX_BYTES, "claim record")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ClaimRecordError(path, None, None, f"not UTF-8: {exc}") from None
    parsed = _PARSED.get(text)
    if parsed is not None:  # the same record text parsed before (another copy of the folder): same claim
        return dataclasses.replace(parsed, path=str(path))
    try:
        data = _files.toml_text(path, text)
    except _files.UnsafeFileError as exc:
        raise ClaimRecordError(path, None, None, exc.problem) from None
    claim = parse_claim(data, path)
    _PARSED[text] = claim
    return claim


_PARSED: dict[str, Claim] = {}
"""Valid records already parsed in this process, by their text (a record's meaning depends on its text
only; its path is replaced on a hit, and a malformed record is never kept, so its error names its file)."""


def verify_sources(sources_dir: Path) -> dict[str, str]:
    """Check the source documents against ``sources_dir/SHA256SUMS`` (the format ``sha256sum``
    writes: ``<64 hex>  <path>``, paths relative to the folder) and return the documents it lists,
    ``{path: SHA-256}``. A missing ``SHA256SUMS`` lists nothing (a record that quotes a local
    document is then refused by :func:`verify_quote`).

    Raises:
        ClaimRecordError: the folder is missing, a line is malformed, a listed document is missing,
            not a regular file or larger than :data:`DOCUMENT_MAX_BYTES`, its SHA-256 differs from
            the one recorded (the document was altered), or it is not UTF-8 text.
    """
    import hashlib

    if not sources_dir.is_dir():
        raise ClaimRecordError(sources_dir, None, None,
                               "source documents folder does not exist (the quotes cannot be verified)")
    listed = read_sums(sources_dir)
    for name, digest in listed.items():
        target = sources_dir / name
        found = control_character(name)
        if found is not None:  # a name shown in the report must read as it is stored (issue 33.2)
            raise ClaimRecordError(sources_dir / "SHA256SUMS", None, None,
                                   f"the document name {name!r} holds the control character {found[1]}")
        if not target.exists():
            raise ClaimRecordError(target, None, None, "source document is missing (listed in SHA256SUMS)")
        raw = _read_file(target, DOCUMENT_MAX_BYTES, "source document")
        actual = hashlib.sha256(raw).hexdigest()
        try:
            _files.document_inside(sources_dir, name)
        except _files.SumsError as exc:
            raise ClaimRecordError(target, None, None, f"source document {exc.problem}") from None
        if actual != digest:
            raise ClaimRecordError(target, None, None,
                                   f"source document was altered: SHA-256 {actual}, SHA256SUMS says {digest} "
                                   f"(changed on purpose? re-hash it with: attention-claims rehash --claims-sources "
                                   f"{shlex.quote(str(sources_dir))} {shlex.quote(name)}; then every quote of "
                                   f"it is verified again on the next run)")
        _decode_document(raw, target)
    return listed


def _decode_document(raw: bytes, path: Path, claim: Claim | None = None, field_name: str | None = None) -> str:
    """The text of source document ``path`` (its bytes ``raw``), which must be UTF-8 (issue 33.7).

    Raises:
        ClaimRecordError: naming the document (and the claim and field that cite it, when given) and the
            first byte that is not UTF-8.
    """
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = f"source document {path}" if claim is not None else "source document"
        problem = (f"{where} is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
                   "convert it (iconv -t UTF-8) and record its new SHA-256 in SHA256SUMS")
        if claim is not None:
            raise ClaimRecordError(claim.path, claim.id, field_name, problem) from None
        raise ClaimRecordError(path, None, None, problem) from None


def read_sums(sources_dir: Path) -> dict[str, str]:
    """The documents ``sources_dir/SHA256SUMS`` lists, ``{relative path: SHA-256}``, as written (the
    documents themselves are not read; :func:`verify_sources` checks them). No file lists nothing.

    Raises:
        ClaimRecordError: the file is not a regular file of at most :data:`DOCUMENT_MAX_BYTES`, or a line is
            not ``<64 hex>  <relative path>`` (naming the file and the line).
    """
    sums = Path(sources_dir) / "SHA256SUMS"
    try:
        return _files.read_sums(sources_dir, DOCUMENT_MAX_BYTES)
    except _files.UnsafeFileError as exc:
        raise ClaimRecordError(sums, None, None, f"checksum list is {exc.problem}") from None
    except _files.SumsError as exc:
        raise ClaimRecordError(sums, None, None, exc.problem) from None
    except OSError as exc:
        raise ClaimRecordError(sums, None, None, f"checksum list cannot be read: {exc.strerror or exc}") from None


def verify_quote(claim: Claim, sources_dir: Path, listed: dict[str, str] | None = None) -> bool:
    """Check that ``claim.source.quote``, and the quote of every ``also_in`` entry, occurs
    verbatim (up to whitespace) in its document under ``sources_dir``, and, with ``listed`` (the
    documents of ``SHA256SUMS``, :func:`verify_sources`), that the document is listed there.

    Returns ``True`` when at least one source-document quote was verified, ``False`` when the
    claim cites only papers (arXiv ids), whose text the repository does not carry.

    Documents are read with :func:`read_capped` (regular files of at most :data:`DOCUMENT_MAX_BYTES`).

    Raises:
        ClaimRecordError: a source document is missing from ``sources_dir`` or from ``SHA256SUMS``, is
            not a regular file or is too large (the field is ``source.document`` or
            ``also_in[i].document``), or a quote does not occur in it (the field is ``source.quote`` or
            ``also_in[i].quote``).
    """
    places = [("source", claim.source)] + [(f"also_in[{i}]", s) for i, s in enumerate(claim.also_in)]
    checked = False
    for prefix, place in places:
        doc = place.document
        if not is_local_document(doc):
            continue
        if listed is not None and doc not in listed:
            raise ClaimRecordError(claim.path, claim.id, f"{prefix}.document",
                                   f"{doc} is not listed in {sources_dir / 'SHA256SUMS'} (every document is, with "
                                   f"its SHA-256: cd {sources_dir} && sha256sum {doc} >> SHA256SUMS)")
        target = sources_dir / doc
        if not target.exists():
            raise ClaimRecordError(claim.path, claim.id, f"{prefix}.document", f"no such source document {target}")
        try:
            raw = read_capped(target, DOCUMENT_MAX_BYTES)
        except (OSError, ValueError) as exc:
            problem = exc.strerror if isinstance(exc, OSError) and exc.strerror else getattr(exc, "problem", str(exc))
            raise ClaimRecordError(claim.path, claim.id, f"{prefix}.document",
                                   f"source document {target} cannot be read: {problem}") from None
        text = _decode_document(raw, target, claim, f"{prefix}.document")
        if not quotes.contains(text, place.quote):
            raise ClaimRecordError(claim.path, claim.id, f"{prefix}.quote", quotes.not_found(doc, text, place.quote))
        checked = True
    return checked


def load_catalog(records_dir: Path = RECORDS_DIR, sources_dir: Path = SOURCES_DIR) -> list[Claim]:
    """Load every ``*.toml`` record under ``records_dir`` (recursively, sorted by path), after
    checking the source documents (:func:`verify_sources`), and verify every quote against them.

    Claims are returned in document order (seed file name, then file path).

    Raises:
        ClaimRecordError: on the first malformed record, a duplicate id (naming both
            files), or a quote that is not verbatim.
    """
    if not records_dir.is_dir():
        raise ClaimRecordError(records_dir, None, None, "claim records folder does not exist")
    listed = verify_sources(sources_dir)
    claims: dict[str, Claim] = {}
    for i, path in enumerate(sorted(records_dir.rglob("*.toml"))):
        claim = load_claim_file(path)
        if claim.id in claims:
            raise ClaimRecordError(
                path, claim.id, "id", f"duplicate id (also defined in {claims[claim.id].path})"
            )
        verify_quote(claim, sources_dir, listed)
        claims[claim.id] = Claim(**{**claim.__dict__, "order": i})
    return sorted(claims.values(), key=lambda c: (c.source.document, c.order))


MANIFEST = "documents.toml"
"""The sources folder's optional manifest of document metadata (:func:`load_manifest`)."""
MANIFEST_FIELDS = ("title", "author", "url", "date")


def load_manifest(sources_dir: Path) -> dict[str, dict[str, str]]:
    """The provenance of the documents, from ``<sources_dir>/documents.toml`` (optional): one table per
    document (its name under the sources folder, or an arXiv id) with any of ``title``, ``author``,
    ``url`` (http or https) and ``date``, all strings, and ``article`` (a saved page's parts a reader
    reads, ``[["first words", "last words"], ...]``: the document view's, left out of the result). The
    report shows them (document titles and links); a document without an entry is shown by its name. A
    missing manifest gives ``{}``.

    Raises:
        ClaimRecordError: the manifest is not TOML, names an unknown field, a value is not a string, or
            a ``url`` is not http(s) (naming the file, the document and the field).
    """
    path = Path(sources_dir) / MANIFEST
    if not os.path.lexists(path):
        return {}
    try:
        data = _files.read_toml(path, RECORD_MAX_BYTES)
    except _files.UnsafeFileError as exc:
        raise ClaimRecordError(path, None, None, f"cannot be read as TOML: {exc.problem}") from None
    except OSError as exc:
        raise ClaimRecordError(path, None, None, f"cannot be read as TOML: {exc.strerror or exc}") from None
    out: dict[str, dict[str, str]] = {}
    for doc, entry in data.items():
        if not isinstance(entry, dict):
            raise ClaimRecordError(path, None, doc, "must be a table of title, author, url, date")
        for key, value in entry.items():
            if key == "article":  # the view's, not the report's: where a saved page's article is (render/webpage.py)
                _check_article(path, doc, value)
                continue
            if key not in MANIFEST_FIELDS:
                raise ClaimRecordError(path, None, f"{doc}.{key}", f"unknown field (known: {', '.join(MANIFEST_FIELDS)})")
            if not isinstance(value, str):
                raise ClaimRecordError(path, None, f"{doc}.{key}", "must be a string")
            _check_text(path, None, f"{doc}.{key}", value)
        if "url" in entry and not re.fullmatch(r"https?://[^\s<>\"']+", entry["url"]):
            raise ClaimRecordError(path, None, f"{doc}.url", "must be an http(s) URL")
        out[doc] = {k: v for k, v in entry.items() if k != "article"}
    return out


def _check_article(path: Path, doc: str, value) -> None:
    """A manifest entry's ``article``: a list of ``[first words, last words]`` pairs of non-empty strings (the
    parts of a saved page a reader reads; :mod:`attention_claims.framework.render.webpage`, which warns when
    a part is not in the page and shows it unfolded)."""
    if not isinstance(value, list) or not value or not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(w, str) and w.strip() for w in p) for p in value):
        raise ClaimRecordError(path, None, f"{doc}.article",
                               'must be a list of ["first words", "last words"] pairs of non-empty strings')
