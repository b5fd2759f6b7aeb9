"""The source documents cut into blocks and sentences, with each sentence's claims (coverage.py style).

A document is the text of one of the files the sources folder's ``SHA256SUMS`` lists (``.txt``, ``.md``,
``.tex`` read as Markdown with TeX formulas; ``.html`` with its markup masked). :func:`annotate` parses
it into blocks (headings, paragraphs, list items, block quotes, tables, code) and sentences
(cut after ``。！？；!?``, after the English full stops pysbd ends a sentence with, after a display
formula that ends a sentence, and at block boundaries; never inside a formula), then marks every
sentence that overlaps a claim's
quote (``source.quote`` and ``also_in[].quote``: verbatim substrings of the document) with the
claim, and every other sentence with its not-a-claim kind from an optional classification, or as
unclassified.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from .. import quotes
from . import latex
from .model import worst_verdict
from .texmd import MASK, find_math, mask_math

__all__ = ["Sentence", "Block", "AnnotatedDocument", "annotate", "locate", "is_html", "html_text", "FURNITURE"]

FURNITURE = "page furniture"
"""The line a web page's blocks outside its article are folded under."""

_TEX_HEADING = re.compile(r"[ \t]*\\(section|subsection|subsubsection|paragraph)\*?\{([^{}]*)\}[ \t]*"
                          r"(?:\\label\{[^{}]*\}[ \t]*)?")


@dataclass
class Sentence:
    """``text[start:end]`` of the document; ``claims`` the ids whose quote overlaps it;
    ``kind`` the not-a-claim kind from the classification (None: unclassified, or a claim)."""

    index: int
    start: int
    end: int
    claims: list[str] = field(default_factory=list)
    kind: str | None = None
    verdict: str | None = None

    @property
    def status(self) -> str:
        """``"claim"``, ``"not-claim"`` or ``"unclassified"``."""
        return "claim" if self.claims else ("not-claim" if self.kind else "unclassified")


@dataclass
class Block:
    """A block of the document. ``kind``: ``h1``..``h6``, ``p``, ``li``, ``quote``, ``table``, ``code``,
    ``hr``, or ``fold``: text shown folded under the line ``label`` (a LaTeX preamble or comment, its
    source in ``code``; page furniture, its blocks in ``children``). ``rows``: for a table, rows of cells; otherwise one row of one or more parts (a quote
    has one part per line). Each part is a list of sentences. ``depth``: list nesting level."""

    kind: str
    rows: list[list[list[Sentence]]]
    depth: int = 0
    code: str = ""
    label: str = ""
    children: list[Block] = field(default_factory=list)


@dataclass
class AnnotatedDocument:
    """A document's blocks and sentences, with coverage counts and the quotes not found in it."""

    name: str
    text: str
    blocks: list[Block]
    sentences: list[Sentence]
    unlocated: list[str]
    macros: dict[str, str] = field(default_factory=dict)
    """A LaTeX document's own macros for KaTeX's ``macros`` option (:func:`.latex.layout`)."""
    notes: list[str] = field(default_factory=list)
    """Lines shown with the document: a LaTeX document's definitions that are not used (:func:`.latex.layout`)."""

    @property
    def lang(self) -> str:
        """The document's language for the page (``lang``): ``"zh"`` when CJK ideographs are at least a
        tenth of its letters (the suite's documents), else ``"en"``."""
        letters = [ch for ch in self.text if ch.isalpha()]
        cjk = sum("\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf" for ch in letters)
        return "zh" if letters and cjk * 10 >= len(letters) else "en"

    def coverage(self) -> dict[str, int]:
        """Counts of sentences: ``{"claim": n, "not-claim": n, "unclassified": n, "total": n}``."""
        out = {"claim": 0, "not-claim": 0, "unclassified": 0}
        for s in self.sentences:
            out[s.status] += 1
        out["total"] = len(self.sentences)
        return out

    def claim_verdicts(self) -> dict[str, int]:
        """Sentences recorded as claims, by the verdict they are highlighted with (worst of their claims)."""
        out: dict[str, int] = {}
        for s in self.sentences:
            if s.claims:
                out[s.verdict] = out.get(s.verdict, 0) + 1
        return out


_TERMINAL = set("。！？；!?")
_CLOSERS = set("”’）)」』\"'】]*=")
_LATIN_BEFORE = set("])}>`'\"0123456789" + MASK)
"""What may precede a full stop that pysbd is asked about, besides an ASCII letter: a bracket, a quote, a
digit or a formula (a full stop after a Chinese character never ends a sentence here)."""
_LATIN_STOP = re.compile(r"\.[ \n]+[A-Z\ue000]")
"""A full stop after one of :data:`_LATIN_BEFORE` that pysbd is asked about is followed by white space
and an English sentence's start (a capital letter or a formula), not a list number (``1. 低秩``) or a
Chinese sentence."""
_HEADING = re.compile(r"(#{1,6})\s+")
_LIST = re.compile(r"(\s*)([-*+]|\d+[.)])\s+")
_HR = re.compile(r"\s{0,3}([-*_])(\s*\1){2,}\s*$")
_TABLE_SEP = re.compile(r"\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")


MATHS_ABBREVIATIONS = ("eq", "eqs", "thm", "thms", "lem", "prop", "cor", "defn", "cf", "figs", "sect", "secs", "chap",
                      "alg", "assump", "approx", "resp")
"""Abbreviations of mathematical writing that pysbd's English list lacks (it has ``fig``, ``sec``, ``al``,
``ref``, ``e.g``, ``i.e``): ``Eq. (2)``, ``Thm. 3``, ``cf. [Tsa19]`` do not end a sentence (words that
are also English words, ``app``, ``tab``, ``ex``, are left out). Added to its lists of abbreviations and
of those that precede a number or name, once, in this process."""


_HTML_MARKUP = re.compile(r"<!--.*?-->|<(script|style)\b.*?</\1\s*>|</?[A-Za-z][^<>]*>", re.S | re.I)
"""The markup of an HTML document: comments, script and style elements with their content, and tags."""


def is_html(name: str) -> bool:
    """Whether the document ``name`` is an HTML page (``.html``, ``.htm``): its markup is not text."""
    return name.lower().endswith((".html", ".htm"))


def html_text(fragment: str) -> str:
    """``fragment`` of an HTML document as the text a browser shows: markup (:data:`_HTML_MARKUP`)
    removed, character references (``&amp;``) decoded."""
    import html

    return html.unescape(_HTML_MARKUP.sub("", fragment))


_HTML_BLOCK = re.compile(r"</?(p|div|h[1-6]|li|ul|ol|dl|dt|dd|br|hr|tr|td|th|table|thead|tbody|blockquote|pre|"
                         r"section|article|header|footer|nav|aside|main|figure|figcaption|body|head|html|title)\b",
                         re.I)


def _mask_markup(masked: str) -> str:
    """``masked`` with the markup of an HTML document blanked, its length kept so offsets still index the
    document: a block element's tag (``<p>``, ``</h1>``, ``<br>``, ``<li>``...) becomes line breaks (a
    paragraph break: its blocks are cut apart), other markup spaces (newlines kept); so a tag is
    neither a sentence nor part of one's ends."""
    def blank(m: re.Match) -> str:
        if _HTML_BLOCK.match(m.group(0)):
            return "\n" * len(m.group(0))
        return re.sub(r"[^\n]", " ", m.group(0))

    return _HTML_MARKUP.sub(blank, masked)


@functools.cache
def _segmenter():
    """pysbd's English segmenter (rule-based, offline; Sadvilkar and Neumann, "PySBD: Pragmatic Sentence
    Boundary Disambiguation", NLP-OSS 2020), imported on first use, with :data:`MATHS_ABBREVIATIONS`."""
    import pysbd
    from pysbd.lang.english import English

    for names in (English.Abbreviation.ABBREVIATIONS, English.Abbreviation.PREPOSITIVE_ABBREVIATIONS):
        names.extend(a for a in MATHS_ABBREVIATIONS if a not in names)
    return pysbd.Segmenter(language="en", clean=False, char_span=True)


def _latin_stops(masked: str, start: int, end: int) -> set[int]:
    """The positions in ``[start, end)`` of the full stops at which pysbd ends an English sentence, among
    the candidates: a full stop followed by white space after an ASCII letter (``rank. The``, but not
    ``e.g. the``, ``Fig. 3``, ``et al. show``), or after a citation ``[Tsa19].``, a formula ``$C$.``, a
    digit or a bracket when a capital letter or a formula follows (:data:`_LATIN_STOP`).

    pysbd reads the text with each formula (masked as U+E000) shown as the letter ``x``, so a formula
    is one word to it and never cut. Empty (pysbd is not asked) when there is no candidate, as in the
    Chinese text of the suite's documents.
    """
    candidates = [i for i in range(start + 1, end - 1) if masked[i] == "." and masked[i + 1] in " \n" and (
        (masked[i - 1].isalpha() and masked[i - 1].isascii())
        or (masked[i - 1] in _LATIN_BEFORE and _LATIN_STOP.match(masked, i)))]
    if not candidates:
        return set()
    part = masked[start:end].replace(MASK, "x")
    stops = set()
    for seg in _segmenter().segment(part):
        b = seg.end
        while b > seg.start and part[b - 1].isspace():
            b -= 1
        while b > seg.start and part[b - 1] in _CLOSERS:
            b -= 1
        if b > seg.start and part[b - 1] == ".":
            stops.add(start + b - 1)
    return stops & set(candidates)


def _sentence_cuts(masked: str, start: int, end: int, display_ends: set[int]) -> list[tuple[int, int]]:
    """Sentence ranges of ``[start, end)``, trimmed of whitespace, none empty.

    Cut after ``。！？；!?`` (and the closing quotes or brackets that follow), after a full stop that pysbd
    ends an English sentence with (:func:`_latin_stops`: ``rank. The``, ``[Tsa19]. Note``, ``$C$.
    Subsequently``; not ``e.g.``, ``Fig. 3``), and after a display formula that ends a sentence; never
    inside a formula (``masked``: formulas as U+E000).
    """
    latin = _latin_stops(masked, start, end)
    cuts: list[tuple[int, int]] = []
    s = start
    i = start
    while i < end:
        c = masked[i]
        cut_at = None
        if c in _TERMINAL:
            j = i + 1
            while j < end and masked[j] in _CLOSERS:
                j += 1
            cut_at = j
        elif c == "." and i in latin:
            cut_at = i + 1
        elif i + 1 in display_ends:
            j = i + 1
            while j < end and masked[j] in " \t\n":
                j += 1
            if j < end and masked[j] not in "，,；;。.：:、)）":
                cut_at = i + 1
        if cut_at is not None:
            cuts.append((s, cut_at))
            s = i = cut_at
            continue
        i += 1
    cuts.append((s, end))
    out = []
    for a, b in cuts:
        while a < b and masked[a].isspace():
            a += 1
        while b > a and masked[b - 1].isspace():
            b -= 1
        if b > a:
            out.append((a, b))
    return out


def _lines(masked: str) -> list[tuple[int, int]]:
    out, pos = [], 0
    for line in masked.split("\n"):
        out.append((pos, pos + len(line)))
        pos += len(line) + 1
    return out


def _parse_blocks(text: str, masked: str, display_ends: set[int]) -> list[tuple[str, list[list[tuple[int, int]]], int,
                                                                                   str, int]]:
    """``(kind, rows of part ranges, depth, extra, start offset)`` for every block (sentences not yet cut)."""
    blocks: list[tuple[str, list[list[tuple[int, int]]], int, str, int]] = []
    lines = _lines(masked)
    i = 0
    para: list[int] | None = None  # [start, end, kind-index]

    def flush():
        nonlocal para
        if para is not None:
            blocks.append((para[2], [[(para[0], para[1])]], para[3], "", para[0]))
            para = None

    while i < len(lines):
        a, b = lines[i]
        line = masked[a:b]
        stripped = line.strip()
        if not stripped:
            flush()
            i += 1
            continue
        if stripped.startswith("```"):
            flush()
            j = i + 1
            while j < len(lines) and not masked[lines[j][0]:lines[j][1]].strip().startswith("```"):
                j += 1
            body_end = lines[j - 1][1] if j > i + 1 else lines[i][1]
            blocks.append(("code", [], 0, text[lines[i][1] + 1:body_end] if j > i + 1 else "", a))
            i = j + 1
            continue
        m = _HEADING.match(line)
        if m:
            flush()
            blocks.append((f"h{len(m.group(1))}", [[(a + m.end(), b)]], 0, "", a))
            i += 1
            continue
        if _HR.match(line) and para is None:
            blocks.append(("hr", [], 0, "", a))
            i += 1
            continue
        if stripped.startswith(">"):
            flush()
            parts = []
            while i < len(lines) and masked[lines[i][0]:lines[i][1]].lstrip().startswith(">"):
                la, lb = lines[i]
                off = masked.index(">", la) + 1
                parts.append((off, lb))
                i += 1
            blocks.append(("quote", [parts], 0, "", a))
            continue
        if stripped.startswith("|"):
            flush()
            rows = []
            while i < len(lines) and masked[lines[i][0]:lines[i][1]].strip().startswith("|"):
                la, lb = lines[i]
                if not _TABLE_SEP.match(masked[la:lb]):
                    cells, pos = [], masked.index("|", la) + 1
                    for k in range(pos, lb + 1):
                        if k == lb or (masked[k] == "|" and masked[k - 1] != "\\"):
                            if k > pos or k < lb:
                                cells.append((pos, k))
                            pos = k + 1
                    if cells and not masked[cells[-1][0]:cells[-1][1]].strip():
                        cells.pop()
                    rows.append(cells)
                i += 1
            blocks.append(("table", rows, 0, "", a))
            continue
        m = _LIST.match(line)
        if m:
            flush()
            depth = len(m.group(1).expandtabs(4)) // 2
            para = [a + m.end(), b, "li", min(depth, 4)]
            i += 1
            continue
        if para is not None and masked[para[0]:para[1]].rstrip()[-1:] in _TERMINAL | _CLOSERS \
                and not stripped.startswith(MASK) and para[2] == "p":
            flush()  # plain text (the repost 001): a line that ends a sentence ends its paragraph
        if para is None:
            para = [a, b, "p", 0]
        else:
            para[1] = b
        i += 1
    flush()
    return blocks


def locate(text: str, quote: str) -> list[tuple[int, int]]:
    """Every ``(start, end)`` where ``quote`` occurs in ``text`` verbatim up to white space
    (non-overlapping): :func:`attention_claims.framework.quotes.find`, the matcher ``attention-claims new``
    and the record loader use."""
    return quotes.find(text, quote)


def _claim_spans(name: str, text: str, claims: list[dict]) -> tuple[list[tuple[int, int, str, str]], list[str]]:
    spans, unlocated = [], []
    for c in claims:
        places = []
        if c["source"]["document"] == name:
            places.append(c["source"]["quote"])
        places += [p["quote"] for p in c.get("also_in", []) or [] if p["document"] == name]
        for q in places:
            found = locate(text, q)
            if not found:
                unlocated.append(c["id"])
            spans += [(a, b, c["id"], c["verdict"]) for a, b in found]
    return spans, unlocated


def _overlaps(masked: str, a: int, b: int, qa: int, qb: int) -> bool:
    lo, hi = max(a, qa), min(b, qb)
    return hi > lo and bool(masked[lo:hi].strip())


def annotate(name: str, text: str, claims: list[dict],
             classification: Mapping[str, str] | None = None,
             claim_excerpts: Mapping[str, str] | None = None,
             article: list[tuple[int, int]] | None = None) -> AnnotatedDocument:
    """Parse document ``name`` (raw Markdown ``text``) and mark its sentences.

    Args:
        name: the document's file name as in the report (``"003_a0ad15dda516ed1d.txt"``); an HTML
            document (:func:`is_html`) has its markup masked: tags are neither sentences nor cut.
        text: its full text.
        claims: the report's claim dicts (all of them; those quoting this document are used).
        classification: optional ``{verbatim excerpt of the document: not-a-claim kind}``
            (``"heading"``, ``"citation"``, ``"opinion"``, ``"anecdote"``, ``"question"``,
            ``"navigation"``, ...); every sentence overlapping an excerpt gets that kind unless it
            carries a claim. Excerpts not found are ignored.
        claim_excerpts: optional ``{verbatim excerpt: claim id}``: sentences that state a claim whose
            record quotes other words (``kind = "claim"`` in ``sources/sentences/``); marked like a quote.
        article: optional ``(start, end)`` ranges of ``text`` a reader reads (a saved page's article and
            replies, :mod:`.webpage`); the blocks outside them are folded under a :data:`FURNITURE` block.
            An HTML document without one gets readability-lxml's article
            (:func:`.webpage.extracted_parts`). Sentences are cut and numbered as without it.

    A LaTeX document (:func:`.latex.is_tex`) is cut with its preamble, its comment lines and what follows
    ``\\end{document}`` blanked (shown as ``fold`` blocks, :func:`.latex.layout`), its formulas found
    with ``latex=True`` (:func:`.texmd.find_math`), its sectioning commands as headings, and a sentence
    a reader does not see (``\\maketitle``) shown but not counted; its macros are the result's
    ``macros``.

    Returns:
        The :class:`AnnotatedDocument`; ``unlocated`` lists ids whose quote is not in ``text``.
    """
    tex = latex.layout(text) if latex.is_tex(name) else None
    base = text
    if tex is not None:
        base = latex.blank(text, [*tex.folds, *latex.comments(text)])
    spans = find_math(base, latex=tex is not None)
    masked = mask_math(base, spans)
    if is_html(name):
        masked = _mask_markup(masked)
    display_ends = {s.end for s in spans if s.display}
    claim_spans, unlocated = _claim_spans(name, text, claims)
    verdict_of = {c["id"]: c["verdict"] for c in claims}
    claim_spans += [(a, b, cid, verdict_of.get(cid, "unchecked")) for excerpt, cid in (claim_excerpts or {}).items()
                    for a, b in locate(text, excerpt)]
    kind_spans = [(a, b, kind) for excerpt, kind in (classification or {}).items() for a, b in locate(text, excerpt)]
    sentences: list[Sentence] = []
    blocks: list[Block] = []

    def cut(a: int, b: int) -> list[Sentence]:
        part = []
        for sa, sb in _sentence_cuts(masked, a, b, display_ends):
            s = Sentence(len(sentences), sa, sb)
            s.claims = list(dict.fromkeys(cid for qa, qb, cid, _v in claim_spans if _overlaps(masked, sa, sb, qa, qb)))
            s.verdict = worst_verdict([verdict_of.get(c, "unchecked") for c in s.claims])
            if not s.claims:
                s.kind = next((k for qa, qb, k in kind_spans if _overlaps(masked, sa, sb, qa, qb)), None)
            if (s.claims or masked[sa:sb].strip(" *#|-=>" + MASK)) and (
                    tex is None or s.claims or any(ch == MASK for ch in masked[sa:sb])
                    or latex.prose(text[sa:sb], tex).strip()):
                sentences.append(s)
                part.append(s)
            elif tex is not None and not s.claims:  # a command a reader does not see (\maketitle): shown, not counted
                s.index = -1
                part.append(s)
            elif any(ch == MASK for ch in masked[sa:sb]):  # a lone formula: shown, not counted
                s.index = -1
                part.append(s)
        return part

    placed: list[tuple[int, int, Block]] = []  # (start, end, block)
    for kind, rows, depth, extra, start in _parse_blocks(text, masked, display_ends):
        label = ""
        if kind == "quote" and rows and rows[0]:
            first = masked[rows[0][0][0]:rows[0][0][1]].strip()
            m = re.match(r"\[!(\w+)\]", first)
            if m:
                label = m.group(1).upper()
                rows = [rows[0][1:]]
        end = max((b for row in rows for _a, b in row), default=start)
        if tex is not None and kind == "p" and rows and rows[0]:
            a, b = rows[0][0]
            m = _TEX_HEADING.match(text, a)
            if m and m.end() <= b:
                level = {"section": 2, "subsection": 3, "subsubsection": 4, "paragraph": 5}[m.group(1)]
                number = tex.headings.get(a + len(m.group(0)) - len(m.group(0).lstrip()), "")
                placed.append((start, m.end(), Block(f"h{level}", [[cut(m.start(2), m.end(2))]], 0, "", number)))
                if not masked[m.end():b].strip():
                    continue
                rows, start = [[(m.end(), b)]], m.end()
        placed.append((start, end, Block(kind, [[cut(a, b) for a, b in row] for row in rows], depth, extra, label)))
    if tex is not None:
        placed += [(a, b, Block("fold", [], 0, text[a:b], label)) for a, b, label in tex.folds]
        placed.sort(key=lambda p: p[0])
    if article is None and is_html(name):
        from .webpage import extracted_parts

        article = extracted_parts(text)
    if article:
        for block_start, block_end, block in placed:
            inside = any(a <= block_start < b or (block_start < b and a < max(block_end, block_start + 1))
                         for a, b in article)
            if inside:
                blocks.append(block)
            elif blocks and blocks[-1].kind == "fold" and blocks[-1].label.startswith(FURNITURE):
                blocks[-1].children.append(block)
            else:
                blocks.append(Block("fold", [], label=FURNITURE, children=[block]))
        for b in blocks:
            if b.kind == "fold" and b.children:
                held = {c for child in b.children for row in child.rows for part in row for s in part for c in s.claims}
                if held:  # never silent: a claim quoted from the furniture (a sidebar's reply) is announced
                    b.label = f"{FURNITURE} (holds {len(held)} claim{'s' if len(held) > 1 else ''})"
    else:
        blocks = [block for _a, _b, block in placed]
    return AnnotatedDocument(name, text, blocks, sentences, sorted(set(unlocated)), dict(tex.macros) if tex else {},
                             list(tex.notes) if tex else [])
