"""Every sentence of the source documents accounted for: a claim, or not a claim with a reason.

The data lives in ``sources/sentences/<document stem>.toml``, one file per document of ``sources/``::

    document = "003_a0ad15dda516ed1d.txt"

    [[sentence]]
    text = "## 11.3 注意力矩阵的低秩结构"        # verbatim excerpt of the document
    kind = "heading"

    [[sentence]]
    text = "这说明注意力矩阵通常是低秩的"
    kind = "restatement"
    claim = "theorem-11-23-softmax-rank-bound"  # the claim it restates
    reason = "the theorem's bound in words"

    [[sentence]]
    text = "..."
    kind = "claim"                              # a claim whose record quotes other words
    claim = "some-claim-id"

The documents are cut into sentences by :func:`attention_claims.framework.render.documents.annotate`
(after ``。！？；!?``, English full stops, display formulas that end a sentence, and block boundaries;
table rows are blocks). A sentence overlapping a record's quote (``source.quote`` or
``also_in[].quote``) is a claim without any entry here; every other sentence must be covered by an
entry's ``text``. One entry may cover several consecutive sentences of the same kind (a reader's
reply, a reference list). :func:`audit` lists what is missing: the test
``tests/framework/test_sentences.py`` fails on an unclassified sentence, on an excerpt not in its
document, on an entry that classifies nothing, and on a claim id with no record. The HTML report's
annotated documents show this data (docs/verdicts.md, "Every sentence accounted for").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .records import DOCUMENT_MAX_BYTES, SOURCES_DIR, ClaimRecordError

__all__ = ["SENTENCES_DIR", "NOT_CLAIM_KINDS", "KINDS", "SentenceEntry", "SentenceDataError",
           "load_classification", "load_all", "Audit", "audit", "classification_maps"]

SENTENCES_DIR = SOURCES_DIR / "sentences"
"""``sources/sentences/``: one classification file per source document."""

NOT_CLAIM_KINDS: dict[str, str] = {
    "heading": "a title or section heading",
    "metadata": "page furniture: author, date, reply header, image, link list, navigation",
    "citation": "a reference to a paper, post or book, or a quotation of one",
    "question": "a question (rhetorical, or a reader's) that asserts nothing",
    "anecdote": "a story, greeting, thanks or personal experience",
    "opinion": "a judgement of taste or value that computation cannot decide",
    "definition": "notation or a definition that asserts nothing",
    "setup": "motivation, transition or outline (\"下面我们来看…\") that asserts nothing",
    "restatement": "restates a recorded claim (``claim`` names it)",
    "uncheckable": "an assertion computation cannot judge here (history, training dynamics without "
                   "data, a fact about a product); ``reason`` says why",
}
"""The kinds of sentence that are not claims, with what each means (shown in the report's legend)."""

KINDS = ("claim", *NOT_CLAIM_KINDS)
"""Every value ``kind`` may take."""

_NEEDS_REASON = {"opinion", "uncheckable", "anecdote", "setup", "definition", "restatement"}
_NEEDS_CLAIM = {"claim", "restatement"}


class SentenceDataError(ClaimRecordError):
    """A classification file is malformed: ``<file>: sentence <n>: field '<field>': <problem>``."""

    def __init__(self, path: Path | str, index: int | None, field_name: str | None, problem: str):
        ValueError.__init__(self, ": ".join(
            [str(path)] + ([f"sentence {index}"] if index is not None else [])
            + ([f"field '{field_name}'"] if field_name else []) + [problem]))
        self.path, self.claim, self.field, self.problem = str(path), None, field_name, problem
        self.index = index


@dataclass(frozen=True)
class SentenceEntry:
    """One ``[[sentence]]`` entry. ``index`` counts from 1 in file order (as the errors say)."""

    text: str
    kind: str
    index: int
    claim: str | None = None
    reason: str = ""


def load_classification(path: Path | str) -> tuple[str, list[SentenceEntry]]:
    """Read one classification file.

    Returns:
        ``(document file name, entries in file order)``.

    Raises:
        SentenceDataError: the file is missing or not TOML, ``document`` is missing, or an entry has
            an unknown key, an empty ``text``, a ``kind`` outside :data:`KINDS`, no ``claim`` where its
            kind needs one (``claim``, ``restatement``), a ``claim`` where it does not, or no ``reason``
            where its kind needs one.
    """
    from .._files import UnsafeFileError, read_toml

    path = Path(path)
    try:  # the package's one reader: a regular file (never a FIFO waited on), capped, UTF-8, nested <= 64
        data = read_toml(path, DOCUMENT_MAX_BYTES)
    except UnsafeFileError as e:
        problem = e.problem.replace("malformed TOML", "not valid TOML", 1)
        raise SentenceDataError(path, None, None, problem) from None
    except OSError as e:
        raise SentenceDataError(path, None, None, f"cannot read: {e.strerror or e}") from None
    document = data.get("document")
    if not isinstance(document, str) or not document:
        raise SentenceDataError(path, None, "document", "missing: the source file name it classifies")
    unknown_top = set(data) - {"document", "sentence"}
    if unknown_top:
        raise SentenceDataError(path, None, sorted(unknown_top)[0], "unknown key")
    entries = []
    for i, raw in enumerate(data.get("sentence", []), start=1):
        if not isinstance(raw, dict):
            raise SentenceDataError(path, i, None, "not a table")
        unknown = set(raw) - {"text", "kind", "claim", "reason"}
        if unknown:
            raise SentenceDataError(path, i, sorted(unknown)[0], "unknown key")
        text, kind = raw.get("text"), raw.get("kind")
        if not isinstance(text, str) or not text.strip():
            raise SentenceDataError(path, i, "text", "missing or empty: a verbatim excerpt of the document")
        if kind not in KINDS:
            raise SentenceDataError(path, i, "kind", f"{kind!r} is not one of {', '.join(KINDS)}")
        claim = raw.get("claim")
        if kind in _NEEDS_CLAIM and not (isinstance(claim, str) and claim):
            raise SentenceDataError(path, i, "claim", f"missing: a {kind} names the claim id")
        if kind not in _NEEDS_CLAIM and claim is not None:
            raise SentenceDataError(path, i, "claim", f"only a claim or a restatement names a claim (kind {kind!r})")
        reason = raw.get("reason", "")
        if not isinstance(reason, str) or (kind in _NEEDS_REASON and not reason.strip()):
            raise SentenceDataError(path, i, "reason", f"missing: a {kind} says why")
        entries.append(SentenceEntry(text, kind, i, claim, reason.strip()))
    return document, entries


def load_all(directory: Path | str = SENTENCES_DIR) -> dict[str, list[SentenceEntry]]:
    """``{document file name: entries}`` of every ``*.toml`` in ``directory`` (none: ``{}``).

    Raises:
        SentenceDataError: a file is malformed, or two files classify the same document.
    """
    out: dict[str, list[SentenceEntry]] = {}
    for p in sorted(Path(directory).glob("*.toml")):
        doc, entries = load_classification(p)
        if doc in out:
            raise SentenceDataError(p, None, "document", f"{doc} is classified by another file too")
        out[doc] = entries
    return out


def classification_maps(entries: list[SentenceEntry]) -> tuple[dict[str, str], dict[str, str]]:
    """``({excerpt: not-a-claim label}, {excerpt: claim id})`` for
    :func:`~attention_claims.framework.render.documents.annotate`; the label is the kind and the reason
    (``"opinion: ..."``), a restatement's names its claim (``"restatement of <id>: ..."``)."""
    kinds = {e.text: (f"restatement of {e.claim}" if e.kind == "restatement" else e.kind)
             + (f": {e.reason}" if e.reason else "") for e in entries if e.kind != "claim"}
    claims = {e.text: e.claim for e in entries if e.kind == "claim"}
    return kinds, claims


@dataclass
class Audit:
    """What :func:`audit` found in one document. Empty lists: every sentence is accounted for."""

    document: str
    counts: dict[str, int]
    unclassified: list[str] = field(default_factory=list)
    not_found: list[SentenceEntry] = field(default_factory=list)
    idle: list[SentenceEntry] = field(default_factory=list)
    unknown_claims: list[SentenceEntry] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.unclassified or self.not_found or self.idle or self.unknown_claims)

    def problems(self, path: str = "") -> list[str]:
        """One line per problem, naming the file and the entry (or the sentence's text)."""
        where = path or self.document
        out = [f"{where}: unclassified sentence: {s!r}" for s in self.unclassified]
        out += [f"{where}: sentence {e.index}: field 'text': not found in {self.document}: {e.text!r}"
                for e in self.not_found]
        out += [f"{where}: sentence {e.index}: field 'text': classifies no sentence that is not already a "
                f"claim (stale entry?): {e.text!r}" for e in self.idle]
        out += [f"{where}: sentence {e.index}: field 'claim': no record has id {e.claim!r}"
                for e in self.unknown_claims]
        return out


def audit(document: str, text: str, claims: list[dict], entries: list[SentenceEntry],
          known_ids: set[str] | None = None) -> Audit:
    """Check that every sentence of ``document`` is a claim or classified.

    Args:
        document: the file name (``"003_a0ad15dda516ed1d.txt"``).
        text: its full text.
        claims: claim dicts with ``id``, ``verdict``, ``source`` (``document``, ``quote``) and optional
            ``also_in`` — the report's, or built from the records.
        entries: the document's classification (:func:`load_classification`).
        known_ids: the catalog's claim ids (default: the ids in ``claims``).

    Returns:
        The :class:`Audit`, with the document's sentence counts (claim / not-claim / unclassified).
    """
    from .render.documents import annotate, locate

    kinds, claim_of = classification_maps(entries)
    doc = annotate(document, text, claims, kinds, claim_excerpts=claim_of)
    known = known_ids if known_ids is not None else {c["id"] for c in claims}
    result = Audit(document, doc.coverage())
    result.unclassified = [text[s.start:s.end] for s in doc.sentences if s.status == "unclassified"]
    for e in entries:
        spans = list(locate(text, e.text))
        if not spans:
            result.not_found.append(e)
            continue
        if e.claim is not None and e.claim not in known:
            result.unknown_claims.append(e)
        if e.kind == "claim":
            continue
        label = kinds[e.text]
        if not any(s.kind == label and any(a < s.end and s.start < b for a, b in spans) for s in doc.sentences):
            result.idle.append(e)
    return result
