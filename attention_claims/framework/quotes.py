"""The one quote matcher: where a record's quote occurs in its source document.

A quote is the claim's own words, "verbatim from the document up to whitespace": every run of white space
(spaces, tabs, line breaks, in any number) in the quote matches any run of white space in the document,
white space between two CJK characters is optional on either side (Chinese has no spaces between words: a
line break there is not a word break), and the quote's leading and trailing white space is ignored.
Nothing else is normalised (no case folding, no Unicode normalisation, no markup removed):
``\\mathrm{SM}`` does not match ``\\SM``, ``randomfeatures`` does not match ``random features``.

The same matcher serves every reader of a quote, so a quote ``attention-claims new`` accepts is one the
record loader accepts and one every view places (issue 44.3):

* ``attention-claims new`` (:mod:`attention_claims.tools.new`): :func:`contains`, and :func:`not_found`
  for the message;
* the record loader (:func:`attention_claims.framework.records.verify_quote`): the same;
* the annotated documents of ``claims.html`` and the unplaced-quote warnings of the terminal and
  ``claims.md`` (:func:`attention_claims.framework.render.documents.locate`, :func:`unplaced`): :func:`find`.

A quote that is not found is reported with the document's closest text (:func:`closest`: difflib's ratio
over the document's sentences, white space normalised), so a quote pasted from a PDF or one that writes
``\\mathrm{SM}`` for the document's ``\\SM`` names what to paste instead.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable, Mapping

__all__ = ["normalise", "pattern", "find", "contains", "closest", "not_found", "unplaced"]

_WS = re.compile(r"\s+")


def normalise(text: str) -> str:
    """``text`` with every run of white space made one space, and none at either end (the form two texts
    are compared in)."""
    return _WS.sub(" ", text).strip()


def _cjk(ch: str) -> bool:
    """Whether ``ch`` is a CJK ideograph or CJK punctuation (text written without spaces between words)."""
    return ("\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf" or "\u3000" <= ch <= "\u303f"
            or "\uff00" <= ch <= "\uffef" or "\uf900" <= ch <= "\ufaff")


@functools.lru_cache(maxsize=1024)
def pattern(quote: str) -> re.Pattern | None:
    """The regular expression that finds ``quote`` in a document: its words (the text between runs of
    white space) escaped, joined by ``\\s+``; between two CJK characters (:func:`_cjk`: Chinese is written
    without spaces, so a line break there is no word break) ``\\s*``, whether or not the quote has white
    space there. None for a quote that is only white space."""
    words = quote.split()
    if not words:
        return None
    out: list[str] = []
    for k, w in enumerate(words):
        if k:
            out.append(r"\s*" if _cjk(words[k - 1][-1]) and _cjk(w[0]) else r"\s+")
        for i, ch in enumerate(w):
            if i and _cjk(w[i - 1]) and _cjk(ch):
                out.append(r"\s*")
            out.append(re.escape(ch))
    return re.compile("".join(out))


def find(text: str, quote: str) -> list[tuple[int, int]]:
    """Every ``(start, end)`` of ``text`` (character offsets into the document as it is stored) where
    ``quote`` occurs up to white space, left to right, without overlap. Empty when it does not occur, or
    when ``quote`` is only white space."""
    rx = pattern(quote)
    if rx is None:
        return []
    return [(m.start(), m.end()) for m in rx.finditer(text)]


def contains(text: str, quote: str) -> bool:
    """Whether ``quote`` occurs in ``text`` up to white space (:func:`find` finds it at least once); a
    quote of only white space is in no text."""
    rx = pattern(quote)
    return rx is not None and rx.search(text) is not None


_SENTENCE_END = re.compile(r"(?<=[。！？；!?])|(?<=[.;:])(?=\s)|\n\s*\n")


def _sentences(text: str) -> list[str]:
    """The document's sentences for :func:`closest`, white space normalised: cut after ``。！？；!?``, after
    ``. ; :`` before white space, and at blank lines (a light cut: it only has to offer candidates)."""
    return [s for s in (normalise(p) for p in _SENTENCE_END.split(text)) if s]


def closest(text: str, quote: str, *, limit: int = 160) -> str | None:
    """The text of ``text`` most like ``quote``: of the document's sentences, and of each run of as many
    consecutive sentences as the quote seems to span, the one with the highest
    :class:`difflib.SequenceMatcher` ratio to the white-space-normalised quote (at least 0.5), cut to
    ``limit`` characters. None when nothing is that close."""
    q = normalise(quote)
    if not q:
        return None
    sentences = _sentences(text)
    span = max(1, len(_sentences(quote)))
    candidates = list(dict.fromkeys(" ".join(sentences[i:i + k]) for k in {1, span, span + 1}
                                    for i in range(len(sentences))))
    best = difflib.get_close_matches(q, candidates, n=1, cutoff=0.5)
    if not best and len(q) < 400:  # a quote that is a part of a long sentence: the best window of its length
        matcher = difflib.SequenceMatcher(None, q, autojunk=False)
        scored = []
        for s in candidates:
            if len(s) <= len(q):
                continue
            for a in range(0, len(s) - len(q) + 1, max(1, len(q) // 4)):
                window = s[a:a + len(q)]
                matcher.set_seq2(window)
                if matcher.real_quick_ratio() >= 0.6 and matcher.quick_ratio() >= 0.6:
                    scored.append((matcher.ratio(), window))
        scored = [w for w in scored if w[0] >= 0.6]
        best = [max(scored)[1]] if scored else []
    if not best:
        return None
    found = best[0]
    return found if len(found) <= limit else found[:limit - 1] + "…"


def not_found(document: str, text: str, quote: str) -> str:
    """The message for a quote not in ``document`` (its text ``text``): ``quote does not occur verbatim (up
    to whitespace) in <document>``, and ``; closest text: '...'`` when :func:`closest` finds one."""
    near = closest(text, quote)
    hint = f"; closest text: '{near}'" if near else "; no sentence of the document is close to it"
    return f"quote does not occur verbatim (up to whitespace) in {document}{hint}"


def unplaced(claims: Iterable[Mapping], sources: Mapping[str, str]) -> list[str]:
    """One warning line for each quote (``source.quote``, ``also_in[].quote``) of the report's ``claims``
    (the ``claims.json`` dicts) whose document is in ``sources`` (``{name: text}``) but which :func:`find`
    does not place there: the views cannot highlight it. A document not in ``sources`` (a paper cited by
    its arXiv id) is not a place to look."""
    out = []
    for c in claims:
        places = [("source.quote", c["source"])] + [(f"also_in[{i}].quote", p)
                                                    for i, p in enumerate(c.get("also_in") or [])]
        for where, place in places:
            doc = place.get("document")
            if doc in sources and not contains(sources[doc], place.get("quote") or ""):
                out.append(f"claim '{c['id']}': {where}: not highlighted in the view of {doc}: "
                           + not_found(doc, sources[doc], place.get("quote") or ""))
    return out
