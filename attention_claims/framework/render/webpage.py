"""A saved web page shown as it reads (issue 44.5): its article in the view, the rest folded as page furniture.

Two sources of where the article is:

* an HTML document (``.html``, ``.htm``): readability-lxml (a port of Arc90's Readability, the algorithm
  of Firefox's Reader View) extracts the article; :func:`extracted_parts` finds the article's first and
  last words in the page as stored;
* a page saved as text (the suite's 004, a blog page converted to Markdown, whose menus, category lists
  and sidebars are Markdown too): the sources folder's ``documents.toml`` records the parts a reader
  reads once, each by its first and last words (``article = [["first words", "last words"], ...]``,
  :func:`recorded_parts`).

Either way the view (:func:`attention_claims.framework.render.documents.annotate`) keeps every block and
sentence (their ids and classifications do not move) and puts the blocks outside the parts under a
"page furniture" fold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from .. import quotes

__all__ = ["ArticleError", "ranges", "recorded_parts", "usable_parts", "extracted_parts"]


class ArticleError(ValueError):
    """A recorded part of a page is not in it: ``<document>: article[<i>]: <problem>``."""


def ranges(document: str, text: str, parts: Sequence[Sequence[str]]) -> list[tuple[int, int]]:
    """The ``(start, end)`` offsets of ``parts`` (``[first words, last words]`` pairs, in page order) in
    ``text``: each part starts where its first words first occur after the previous part, and ends after
    the first occurrence of its last words from there (both found as the quote matcher finds a quote,
    :func:`attention_claims.framework.quotes.find`).

    Raises:
        ArticleError: a part is not a pair of strings, or its first or last words are not in ``text``
            after the previous part (naming the document, the part and the words).
    """
    out: list[tuple[int, int]] = []
    pos = 0
    for i, part in enumerate(parts):
        if (not isinstance(part, (list, tuple)) or len(part) != 2
                or not all(isinstance(w, str) and w.strip() for w in part)):
            raise ArticleError(f"{document}: article[{i}]: must be a pair [first words, last words] of non-empty strings")
        first, last = part
        found = [a for a, _b in quotes.find(text[pos:], first)]
        if not found:
            raise ArticleError(f"{document}: article[{i}]: the first words {first!r} are not in the document"
                               + (" after the previous part" if i else ""))
        start = pos + found[0]
        ends = quotes.find(text[start:], last)
        if not ends:
            raise ArticleError(f"{document}: article[{i}]: the last words {last!r} are not in the document after "
                               f"its first words")
        end = start + ends[0][1]
        out.append((start, end))
        pos = end
    return out


def recorded_parts(sources_dir: Path | str) -> dict[str, list[list[str]]]:
    """``{document: [[first words, last words], ...]}`` from the ``article`` entries of
    ``<sources_dir>/documents.toml`` (documents without one: not listed; no manifest: ``{}``). The manifest
    is validated when the run starts (:func:`attention_claims.framework.records.load_manifest`), and read here
    through the package's one reader (:func:`attention_claims._files.read_toml`; a FIFO is never waited on)."""
    from ..._files import read_toml
    from ..records import RECORD_MAX_BYTES

    path = Path(sources_dir) / "documents.toml"
    if not path.is_file():
        return {}
    try:
        data = read_toml(path, RECORD_MAX_BYTES)  # as load_manifest reads it
    except (OSError, ValueError):  # refused with its reason by load_manifest when the run starts
        return {}
    return {doc: entry["article"] for doc, entry in data.items() if isinstance(entry, dict) and "article" in entry}


def usable_parts(sources_dir: Path | str, sources: Mapping[str, str]) -> tuple[dict[str, list[list[str]]], list[str]]:
    """``(parts, warnings)``: the recorded parts (:func:`recorded_parts`) of the documents in ``sources``
    (``{name: text}``) that are found in their page (:func:`ranges`), and one warning line for each
    document whose parts are not (that page is shown unfolded: never silently)."""
    usable, warnings = {}, []
    for doc, parts in recorded_parts(sources_dir).items():
        if doc not in sources:
            continue
        try:
            ranges(doc, sources[doc], parts)
        except ArticleError as exc:
            warnings.append(f"{Path(sources_dir) / 'documents.toml'}: {exc}; the page is shown with its furniture")
            continue
        usable[doc] = parts
    return usable, warnings


def extracted_parts(text: str) -> list[tuple[int, int]] | None:
    """The article of the HTML page ``text`` as one ``(start, end)`` range of it: from its first words to
    its last, as readability-lxml's :class:`readability.Document` extracts it (its ``summary``). None when
    the page has no article readability finds, or its first or last words cannot be found in the page as
    stored (then nothing is folded)."""
    import html as html_module

    import lxml.html
    from readability import Document

    try:
        summary = Document(text).summary(html_partial=True)
        chunks = [t.strip() for t in lxml.html.fromstring(summary).itertext() if t.strip()]
    except Exception:  # noqa: BLE001 - readability or lxml on a malformed page: the page is shown whole
        return None
    if not chunks:
        return None

    def places(chunk: str) -> list[tuple[int, int]]:
        for form in (chunk, html_module.escape(chunk, quote=False)):
            found = quotes.find(text, form)
            if found:
                return found
        return []

    first, last = places(chunks[0][:80]), places(chunks[-1][-80:])
    if not first or not last or last[-1][1] <= first[0][0]:
        return None
    return [(first[0][0], last[-1][1])]
