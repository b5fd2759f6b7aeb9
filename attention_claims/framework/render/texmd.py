"""Text with LaTeX and light Markdown, as found in the records and the source documents, to HTML.

The records quote their documents verbatim, so a quote carries whatever the document used:
``$...$`` and ``$$...$$`` (000-003), or the Markdown-escaped LaTeX of a scraped web page
(004: ``$l\\_1/l\\_2$``, ``\\\\begin{equation}\\\\frac{...}\\\\end{equation}`` with doubled
backslashes and ``\\_``, ``\\[`` escapes). :func:`find_math` finds the formulas in either form,
:func:`clean_tex` undoes the escapes, and :func:`render_inline` turns a run of text into HTML:
formulas become ``<span class="tex">`` elements holding the (cleaned) TeX source, which the
bundled KaTeX renders in the browser; ``**bold**``, ``*em*``, `` `code` ``, ``==mark==`` become HTML,
and links and images as markdown-it-py's CommonMark parser reads them (:func:`find_links`: nested
brackets, an image inside a link; an image is shown as its alt text, no image is fetched).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from markupsafe import Markup, escape

__all__ = ["MathSpan", "LinkSpan", "clean_tex", "find_math", "find_links", "render_inline", "render_sentence", "mask_math",
           "plain_text"]


@dataclass(frozen=True)
class MathSpan:
    """One formula in a text: ``text[start:end]`` with its delimiters; ``tex`` is the cleaned body."""

    start: int
    end: int
    tex: str
    display: bool


_ENV = re.compile(r"\\{1,2}begin\{(equation\*?|align\*?|gather\*?)\}(.*?)\\{1,2}end\{\1\}", re.S)
_BEGIN = re.compile(r"\\{1,2}begin\{(equation|align|gather)\*?\}")
_END = re.compile(r"\\{1,2}end\{(equation|align|gather)\*?\}")
_LATEX_ENV = re.compile(r"\\begin\{(equation\*?|align\*?|gather\*?|multline\*?|eqnarray\*?|flalign\*?)\}(.*?)"
                        r"\\end\{\1\}", re.S)
_LATEX_BRACKETS = re.compile(r"\\\[(.*?)\\\]|\\\((.*?)\\\)", re.S)
"""A LaTeX source's own display forms (``latex=True``): its math environments and ``\\[...\\]``,
``\\(...\\)``; a scraped page's ``\\[`` is a Markdown escape, so these are not looked for there."""
_ESCAPED = re.compile(r"\\_|\\\\[A-Za-z{}]|\\\[|\\\]|\\\*")


def clean_tex(tex: str) -> str:
    """Undo the Markdown escapes of a scraped page inside one formula.

    A formula is treated as escaped when it holds ``\\_``, ``\\[``, ``\\*`` or a doubled backslash
    before a letter or brace (``\\\\frac``); then ``\\\\`` -> ``\\``, ``\\_`` -> ``_``, ``\\[``/``\\]``
    -> ``[``/``]``, ``\\|`` -> ``|``, ``\\*`` -> ``*``. Plain LaTeX (a ``\\\\`` row break before a
    space or digit) is left alone.
    """
    tex = tex.strip()
    if not _ESCAPED.search(tex):
        return tex
    out = []
    i = 0
    while i < len(tex):
        c = tex[i]
        if c == "\\" and i + 1 < len(tex) and tex[i + 1] in "\\_[]|*{}#":
            nxt = tex[i + 1]
            if nxt == "\\":
                out.append("\\")
            elif nxt in "{}":
                out.append("\\" + nxt)
            else:
                out.append(nxt)
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _latex_env(m: re.Match) -> str:
    env = m.group(1).rstrip("*")
    body = m.group(2).strip()
    if env == "equation":
        return body
    if env == "eqnarray":
        return f"\\begin{{array}}{{rcl}}{body}\\end{{array}}"
    inner = {"align": "aligned", "flalign": "aligned"}.get(env, "gathered")
    return f"\\begin{{{inner}}}{body}\\end{{{inner}}}"


def find_math(text: str, latex: bool = False) -> list[MathSpan]:
    """The formulas of ``text`` in order, without overlap.

    ``latex``: ``text`` is (part of) a LaTeX source file (:mod:`.latex`): its math environments
    (``equation``, ``align``, ``gather``, ``multline``, ``eqnarray``, ``flalign``, starred or not) and
    ``\\[...\\]`` are display formulas, ``\\(...\\)`` inline, each taken as written (no Markdown
    escapes to undo), besides the ``$...$`` and ``$$...$$`` found in every text.

    Recognised: ``$$...$$`` (display, may span lines), ``\\begin{equation}...\\end{equation}`` with
    one or two backslashes (display; also ``align``, ``gather``; a text that starts inside one, as a
    quote may, has its head up to ``\\end{...}`` as a formula), and ``$...$`` on one line (inline).
    ``\\$`` is not a delimiter. An unmatched ``$`` is left as text; an unclosed ``$$`` at the end (a
    quote cut before the closing delimiter) makes the rest a display formula.
    """
    spans: list[MathSpan] = []
    i, n = 0, len(text)
    if latex:
        while i < n:
            c = text[i]
            if c == "\\":
                m = _LATEX_ENV.match(text, i)
                if m:
                    spans.append(MathSpan(i, m.end(), _latex_env(m), True))
                    i = m.end()
                    continue
                m = _LATEX_BRACKETS.match(text, i)
                if m:
                    display = m.group(1) is not None
                    spans.append(MathSpan(i, m.end(), (m.group(1) if display else m.group(2)).strip(), display))
                    i = m.end()
                    continue
                i += 2
                continue
            if c == "$":
                double = text.startswith("$$", i)
                j = text.find("$$", i + 2) if double else i + 1
                if not double:
                    while j < n and text[j] != "$":
                        j += 2 if text[j] == "\\" else 1
                if j < n and j > i + (2 if double else 1):
                    body = text[i + (2 if double else 1):j]
                    if body.strip():
                        spans.append(MathSpan(i, j + (2 if double else 1), body.strip(), double))
                        i = j + (2 if double else 1)
                        continue
                i += 2 if double else 1
                continue
            i += 1
        return spans
    head = _END.search(text)
    if head and not _BEGIN.search(text, 0, head.start()):
        # a quote that starts inside a display formula: everything up to its \end{...} is the formula
        spans.append(MathSpan(0, head.end(), clean_tex(text[:head.start()]), True))
        i = head.end()
    while i < n:
        c = text[i]
        if c == "\\":
            m = _ENV.match(text, i)
            if m:
                body = m.group(2)
                env = m.group(1).rstrip("*")
                tex = clean_tex(body)
                if env != "equation":
                    inner = "aligned" if env == "align" else "gathered"
                    tex = f"\\begin{{{inner}}}{tex}\\end{{{inner}}}"
                spans.append(MathSpan(i, m.end(), tex, True))
                i = m.end()
                continue
            i += 2
            continue
        if c == "$":
            if text.startswith("$$", i):
                j = text.find("$$", i + 2)
                if j > i + 2:
                    spans.append(MathSpan(i, j + 2, clean_tex(text[i + 2:j]), True))
                    i = j + 2
                    continue
                if j < 0 and "$" not in text[i + 2:] and text[i + 2:].strip():
                    # a quote cut before the closing $$: the rest is the formula
                    spans.append(MathSpan(i, n, clean_tex(text[i + 2:]), True))
                    break
                i += 2
                continue
            j = i + 1
            while j < n and text[j] not in "$\n":
                j += 2 if text[j] == "\\" else 1
            if j < n and text[j] == "$" and j > i + 1 and text[i + 1:j].strip():
                spans.append(MathSpan(i, j + 1, clean_tex(text[i + 1:j]), False))
                i = j + 1
                continue
        i += 1
    return spans


MASK = "\ue000"


def mask_math(text: str, spans: list[MathSpan] | None = None) -> str:
    """``text`` with every formula's characters (delimiters included) replaced by U+E000.

    The result has the same length, so offsets carry over; punctuation and newlines inside
    formulas no longer split sentences or blocks.
    """
    spans = find_math(text) if spans is None else spans
    chars = list(text)
    for s in spans:
        chars[s.start:s.end] = MASK * (s.end - s.start)
    return "".join(chars)


_INLINE = re.compile(
    r"(?P<code>`(?P<ctext>[^`]+)`)"
    r"|(?P<strong>\*\*|__(?=\S))"
    r"|(?P<mark>==)"
    r"|(?P<em>(?<![\w*])\*(?=[^\s*])(?P<etext>[^*\n]+?)(?<=\S)\*(?![\w*]))"
    r"|(?P<esc>\\(?P<echar>[\\`*_{}\[\]()#+\-.!|<>$~=]))"
    r"|(?P<br>\\\n|  \n)"
)


@dataclass(frozen=True)
class LinkSpan:
    """A Markdown link or image of a text, as markdown-it-py's CommonMark parser reads it: the construct
    is ``text[start:end]`` (``[label](href)``, ``![alt](src)``); its label (a link's text, an image's alt
    text) ``text[label_start:label_end]``; ``href`` the destination as the parser normalises it (escapes
    undone, percent-encoded); ``children`` the images inside a link's label."""

    start: int
    end: int
    label_start: int
    label_end: int
    href: str
    image: bool
    children: tuple[LinkSpan, ...] = ()


@functools.cache
def _link_parser():
    """markdown-it-py's CommonMark parser with its ``link`` and ``image`` rules wrapped to record where
    each construct it parses starts, where its label ends and where it ends (``env["links"]``)."""
    from markdown_it import MarkdownIt
    from markdown_it.helpers import parseLinkLabel
    from markdown_it.rules_inline import image, link

    md = MarkdownIt("commonmark")

    def wrap(rule, is_image: bool):
        def recorded(state, silent: bool) -> bool:
            start, first_token = state.pos, len(state.tokens)
            if silent:
                return rule(state, silent)
            depth = state.env.get("depth", 0)
            label_end = parseLinkLabel(state, start + (1 if is_image else 0), not is_image)
            state.env["depth"] = depth + 1
            try:
                ok = rule(state, silent)
            finally:
                state.env["depth"] = depth
            token = next((t for t in state.tokens[first_token:] if t.type in ("image", "link_open")), None)
            if ok and label_end >= 0 and token is not None:  # (text before the link is pushed first)
                href = token.attrGet("src" if is_image else "href") or ""
                state.env.setdefault("links", []).append(
                    (depth, LinkSpan(start, state.pos, start + (2 if is_image else 1), label_end, str(href), is_image)))
            return ok
        return recorded

    md.inline.ruler.at("link", wrap(link, False))
    md.inline.ruler.at("image", wrap(image, True))
    return md


def find_links(text: str, start: int = 0, end: int | None = None) -> list[LinkSpan]:
    """The links and images of ``text[start:end]`` (offsets into ``text``), read by markdown-it-py's
    CommonMark inline parser (so ``[text [with] brackets](url)``, ``[![alt](img)](url)`` and a link
    whose text holds a formula are links) with the formulas (:func:`find_math`) masked: a ``]`` or
    ``$`` inside a formula is not Markdown. Outermost constructs, in order; a link's images are its
    ``children``. Reference links (``[text][ref]``) need definitions no run holds: they stay text."""
    end = len(text) if end is None else end
    run = text[start:end]
    if "[" not in run:
        return []
    masked = mask_math(run).replace("\r", " ")  # same length: markdown-it would fold \r\n into one character
    env: dict = {}
    _link_parser().parseInline(masked, env)
    found = sorted(env.get("links", []), key=lambda d: (d[1].start, d[0]))
    top: list[LinkSpan] = []
    for depth, span in found:
        shifted = LinkSpan(span.start + start, span.end + start, span.label_start + start, span.label_end + start,
                           span.href, span.image)
        if depth == 0 or not top:
            top.append(shifted)
        elif top[-1].start <= shifted.start and shifted.end <= top[-1].end:
            top[-1] = LinkSpan(*(getattr(top[-1], f) for f in ("start", "end", "label_start", "label_end", "href",
                                                                "image")), children=(*top[-1].children, shifted))
    return top


def _image_html(text: str, span: LinkSpan) -> str:
    """An image as the placeholder the views show (no image is fetched): ``[image: alt]``, its source
    in the title; the alt text up to a ``|`` (a wiki-style size)."""
    alt = text[span.label_start:span.label_end].split("|")[0].strip() or "image"
    return f'<span class="img-ph" title="{escape(span.href)}">[image: {escape(" ".join(alt.split()))}]</span>'


def _run_html(text: str, a: int, b: int, links, state: dict) -> str:
    """``text[a:b]`` as HTML: formulas as ``.tex`` elements, inline Markdown rendered, and the parts of
    ``links`` (:func:`find_links` of the whole paragraph, which may reach beyond ``[a, b)``: a sentence
    cut inside a link's text) that fall in it: a link's text in it as a link to its destination (a link
    cut by sentences is a link in each), its syntax (``[``, ``](url)``) never shown, an image as its
    placeholder where it starts."""
    out: list[str] = []
    pos = a
    for span in links:
        if span.end <= a or span.start >= b:
            continue
        out.append(_plain_html(text[pos:max(span.start, a)], state))
        if span.image:
            if span.start >= a:
                out.append(_image_html(text, span))
        else:
            la, lb = max(span.label_start, a), min(span.label_end, b)
            if lb > la and text[la:lb].strip():
                inner = _run_html(text, la, lb, span.children, state)
                if inner.strip():
                    out.append(f'<a href="{escape(_safe_href(span.href))}" rel="noreferrer">{inner}</a>')
        pos = max(pos, min(span.end, b))
    out.append(_plain_html(text[pos:b], state))
    return "".join(out)


def _plain_html(run: str, state: dict) -> str:
    """A link-free run: formulas (:func:`find_math`) typeset, the rest :func:`_text_html`."""
    out, pos = [], 0
    for span in find_math(run):
        out.append(_text_html(run[pos:span.start], state))
        out.append(str(_math_html(span)))
        pos = span.end
    out.append(_text_html(run[pos:], state))
    return "".join(out)


def _math_html(span: MathSpan) -> Markup:
    """A formula as the ``.tex`` element KaTeX typesets, without ``\\label{...}`` (KaTeX has none: it would
    show it in its error colour)."""
    from .latex import strip_labels

    cls = "tex tex-d" if span.display else "tex"
    return Markup('<span class="{0}">{1}</span>').format(cls, strip_labels(span.tex))


def _safe_href(url: str) -> str:
    return url if re.match(r"(https?:|#|mailto:)", url) else "#"


def _text_html(text: str, state: dict) -> str:
    """Inline Markdown of a math-free run without links (:func:`find_links` takes them out first);
    ``state`` carries open ``**``/``==`` across calls."""
    out: list[str] = []
    pos = 0
    for m in _INLINE.finditer(text):
        out.append(str(escape(text[pos:m.start()])))
        pos = m.end()
        if m.group("code") is not None:
            out.append(f"<code>{escape(m.group('ctext'))}</code>")
        elif m.group("strong") is not None:
            state["strong"] = not state["strong"]
            out.append("<strong>" if state["strong"] else "</strong>")
        elif m.group("mark") is not None:
            state["mark"] = not state["mark"]
            out.append("<mark>" if state["mark"] else "</mark>")
        elif m.group("em") is not None:
            out.append(f"<em>{escape(m.group('etext'))}</em>")
        elif m.group("esc") is not None:
            out.append(str(escape(m.group("echar"))))
        else:
            out.append("<br>")
    out.append(str(escape(text[pos:])))
    return "".join(out)


def _latex_html(run: str, state: dict, tex_layout) -> str:
    """A formula-free run of a LaTeX source as HTML: its prose as a reader sees it (:func:`.latex.prose`),
    each ``%`` comment kept in the page but hidden (``<span class="tex-comment" hidden>``)."""
    from .latex import comments, prose

    out, pos = [], 0
    for a, b in comments(run):
        out.append(_text_html(prose(run[pos:a], tex_layout), state))
        out.append(f'<span class="tex-comment" hidden>{escape(run[a:b])}</span>')
        pos = b
    out.append(_text_html(prose(run[pos:], tex_layout), state))
    return "".join(out)


def _reopened(state: dict) -> list[str]:
    """The tags a run reopens at its start: the ``**`` and highlight its paragraph left open (``state``)."""
    return (["<strong>"] if state.get("strong") else []) + (["<mark>"] if state.get("mark") else [])


def _closed(state: dict) -> list[str]:
    """The tags a run closes at its end, innermost first (the reverse of :func:`_reopened`)."""
    return (["</mark>"] if state.get("mark") else []) + (["</strong>"] if state.get("strong") else [])


def render_inline(text: str | None, state: dict | None = None, *, close: bool = True, latex=None) -> Markup:
    """HTML for one run of text: formulas as ``.tex`` elements, inline Markdown rendered.

    ``state`` (``{"strong": bool, "mark": bool}``) lets a caller render a paragraph sentence by
    sentence: a ``**`` opened in one sentence is closed at its end (``close=True``) and reopened at
    the start of the next. ``latex``: the text is part of a LaTeX source, and this is its document's
    :class:`.latex.TexLayout` (or True when there is none): formulas are found as :func:`find_math`
    finds them with ``latex=True`` (outside ``%`` comments), the prose between them is shown as a reader
    sees it (:func:`.latex.prose`), comments hidden, and the document's macros with an optional argument
    expanded in its formulas (:func:`.latex.expand_macros`). Never raises; ``None`` gives an empty string.
    """
    if not text:
        return Markup("")
    state = {"strong": False, "mark": False} if state is None else state
    out: list[str] = _reopened(state)
    pos = 0
    if latex is not None and latex is not False:
        from .latex import blank, comments, expand_macros

        tex_layout = None if latex is True else latex
        for span in find_math(blank(text, comments(text)), latex=True):
            out.append(_latex_html(text[pos:span.start], state, tex_layout))
            number = tex_layout.equations.get(text[span.start:span.end]) if tex_layout is not None else None
            if tex_layout is not None and tex_layout.optional:  # macros KaTeX cannot take: expanded here
                span = MathSpan(span.start, span.end, expand_macros(span.tex, tex_layout.optional), span.display)
            if number:  # a numbered equation shows the number \eqref prints
                span = MathSpan(span.start, span.end, f"{span.tex}\\tag{{{number}}}", span.display)
            out.append(str(_math_html(span)))
            pos = span.end
        out.append(_latex_html(text[pos:], state, tex_layout))
    else:
        out.append(_run_html(text, 0, len(text), find_links(text), state))
    return Markup("".join(out + (_closed(state) if close else [])))


def render_sentence(text: str, start: int, end: int, links: list[LinkSpan], state: dict | None = None, *,
                    close: bool = True) -> Markup:
    """HTML for ``text[start:end]``, one sentence of a Markdown document's paragraph, as
    :func:`render_inline` renders a run, with ``links`` the links and images of the whole paragraph
    (:func:`find_links` of ``text`` over the paragraph's range): a sentence that ends or starts inside a
    link's text (``[《…吗？》](url)`` is cut after ``？``) shows its part of that text as the link, and no
    part of the link's syntax. ``state`` and ``close`` as in :func:`render_inline`."""
    state = {"strong": False, "mark": False} if state is None else state
    out: list[str] = _reopened(state)
    out.append(_run_html(text, start, end, links, state))
    return Markup("".join(out + (_closed(state) if close else [])))


def render_tex(tex: str | None, display: bool = False) -> Markup:
    """HTML for a bare formula (a record's ``formal`` field, no delimiters)."""
    if not tex:
        return Markup("")
    return _math_html(MathSpan(0, 0, clean_tex(tex), display))


def plain_text(text: str | None) -> str:
    """``text`` with Markdown emphasis markers dropped and formulas kept as their TeX (for search
    indexes and the ``title`` attributes)."""
    if not text:
        return ""
    return re.sub(r"\*\*|==|\\(?=[\[\]_*|#])", "", text)
