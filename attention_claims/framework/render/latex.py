"""A LaTeX source document shown as it reads (issue 44.4), parsed with pylatexenc.

A researcher's ``.tex`` note is shown in the report's document view with:

* the preamble (``\\documentclass`` up to ``\\begin{document}``), the text after ``\\end{document}`` and
  every line that is only a ``%`` comment folded under a line (:func:`layout`: the ranges, not deleted;
  a comment at the end of a line of prose is kept in the page, hidden);
* the document's own macros (``\\newcommand``, ``\\renewcommand``, ``\\providecommand``, ``\\def``,
  ``\\DeclareMathOperator``) handed to KaTeX's ``macros`` option, so ``$\\SM(x, y)$`` typesets;
* the prose as a reader of the PDF sees it (:func:`prose`, pylatexenc's
  :class:`~pylatexenc.latex2text.LatexNodes2Text`): ``~`` a no-break space, ``\\ `` a space, ``\\&`` an
  ampersand, ``--`` and ``---`` dashes, ``\\label`` gone, ``\\ref``/``\\eqref`` the number LaTeX would
  print (``??`` for an unknown label, as LaTeX prints), ``\\cite{a,b}`` as ``[a, b]``, ``\\emph`` in
  italics.

Offsets are never changed: sentences are cut in the stored text (so the record's quote, verbatim from
the file, is found as :mod:`attention_claims.framework.quotes` finds it), only their display is converted.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

__all__ = ["TEX_SUFFIXES", "is_tex", "TexLayout", "TexMacro", "layout", "layout_key", "all_macros", "expand_macros", "prose", "strip_labels", "blank"]

TEX_SUFFIXES = (".tex", ".latex", ".ltx")
"""The file name endings of a LaTeX source document."""

THEOREM_LIKE = ("theorem", "lemma", "proposition", "corollary", "definition", "remark", "example",
                "assumption", "conjecture", "claim", "fact", "note")
"""Environments a reader sees as a bold run-in heading (``Lemma 2.``); numbered each on its own counter."""

MATH_ENVIRONMENTS = ("equation", "align", "gather", "multline", "eqnarray", "flalign")
"""Numbered display environments (starred forms are unnumbered)."""

_SECTIONS = ("section", "subsection", "subsubsection")
_DEFINERS = ("newcommand", "renewcommand", "providecommand")


def is_tex(name: str) -> bool:
    """Whether the document ``name`` is a LaTeX source file (:data:`TEX_SUFFIXES`)."""
    return name.lower().endswith(TEX_SUFFIXES)


@dataclass(frozen=True)
class TexLayout:
    """What :func:`layout` reads off a LaTeX document.

    ``folds``: ``(start, end, label)`` character ranges shown folded (preamble, comment lines, the text
    after ``\\end{document}``), in order, not overlapping. ``macros``: ``{"\\SM": "\\mathrm{SM}"}`` for
    KaTeX's ``macros`` option. ``labels``: ``{label key: the number \\ref prints}``. ``headings``:
    ``{offset of a sectioning command: its number}``. ``equations``: ``{the source of a numbered
    equation environment, \\begin to \\end: its number}`` (shown with KaTeX's ``\\tag``).
    """

    folds: tuple[tuple[int, int, str], ...] = ()
    macros: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    headings: dict[int, str] = field(default_factory=dict)
    equations: dict[str, str] = field(default_factory=dict)
    optional: dict[str, TexMacro] = field(default_factory=dict)
    """The macros :func:`expand_macros` expands in the formulas before KaTeX (an optional argument)."""
    notes: tuple[str, ...] = ()
    """One line per definition that is not used (unreadable), shown with the document."""


_COMMENT = re.compile(r"(?<!\\)(?:\\\\)*%[^\n]*")
_COMMENT_LINES = re.compile(r"(?m)^(?:[ \t]*%[^\n]*(?:\n|$))+")


def blank(text: str, ranges) -> str:
    """``text`` with each ``(start, end, ...)`` range's characters made spaces, line breaks kept (so
    offsets and lines stay where they were)."""
    chars = list(text)
    for a, b, *_ in ranges:
        for i in range(a, b):
            if chars[i] != "\n":
                chars[i] = " "
    return "".join(chars)


def comments(text: str) -> list[tuple[int, int]]:
    """The ``%`` comments of ``text``: ``(start, end)`` from an unescaped ``%`` to the end of its line
    (``\\%`` is a percent sign; ``\\\\%`` a line break then a comment)."""
    out = []
    for m in _COMMENT.finditer(text):
        start = m.start() + m.group(0).index("%")
        out.append((start, m.end()))
    return out


def _arg(node, i: int) -> str | None:
    args = node.nodeargd.argnlist if node.nodeargd is not None else []
    a = args[i] if i < len(args) else None
    if a is None:
        return None
    v = a.latex_verbatim()
    return v[1:-1] if v[:1] in "{[" and v[-1:] in "}]" else v


def _walk(nodes):
    from pylatexenc.latexwalker import LatexEnvironmentNode, LatexGroupNode, LatexMacroNode

    for n in nodes or []:
        yield n
        if isinstance(n, (LatexEnvironmentNode, LatexGroupNode)):
            yield from _walk(n.nodelist)
        elif isinstance(n, LatexMacroNode) and n.nodeargd is not None:
            for a in n.nodeargd.argnlist:
                if a is not None and hasattr(a, "nodelist"):
                    yield from _walk(a.nodelist)


@dataclass(frozen=True)
class TexMacro:
    """A macro the document defines whose calls KaTeX's ``macros`` option cannot express, expanded in the
    formulas' source before KaTeX sees them (:func:`expand_macros`): ``\\newcommand{\\name}[nargs][default]{body}``,
    whose first argument is optional (``default`` when the call omits it). ``body`` uses ``#1``..``#9``."""

    name: str
    nargs: int
    default: str | None
    body: str


def _group(node) -> str | None:
    """The source of an argument node without its outer braces (``{x}`` -> ``x``), or None."""
    if node is None:
        return None
    v = node.latex_verbatim()
    return v[1:-1] if v[:1] == "{" and v[-1:] == "}" else v


def _nargs(text: str | None, where: str, notes: list[str]) -> int | None:
    if text is None:
        return 0
    try:
        n = int(text.strip())
    except ValueError:
        notes.append(f"{where}: the number of arguments [{text}] is not a number; its definition is not used")
        return None
    if not 0 <= n <= 9:
        notes.append(f"{where}: {n} arguments (LaTeX allows 0 to 9); its definition is not used")
        return None
    return n


def _macros(nodes) -> tuple[dict[str, str], dict[str, TexMacro], list[str]]:
    """The definitions of ``\\newcommand`` and kin, ``\\def\\name{...}`` and ``\\DeclareMathOperator``
    among ``nodes`` (all levels): ``(katex, optional, notes)``.

    ``katex``: ``{name: body}`` as KaTeX's ``macros`` option takes them (``#1`` for arguments).
    ``optional``: the macros KaTeX cannot express, expanded in the source by :func:`expand_macros`: those
    with an optional first argument (``\\newcommand{\\foo}[2][x]{..}``: KaTeX's ``\\newcommand`` has no
    default, KaTeX 0.19 ``macros.js``) and those whose body uses another number of arguments than they
    declare (KaTeX counts a macro's arguments by the highest ``#n`` of its body). Each is also in ``katex``,
    with the default filled in (``#1`` the default, ``#2`` read as ``#1``, ...), for a formula shown without
    its document. ``notes``: one line per definition that could not be read (named, never dropped
    silently).
    """
    from pylatexenc.latexwalker import LatexGroupNode, LatexMacroNode

    out: dict[str, str] = {}
    optional: dict[str, TexMacro] = {}
    notes: list[str] = []
    flat = list(_walk(nodes))
    for i, n in enumerate(flat):
        if not isinstance(n, LatexMacroNode):
            continue
        if n.macroname in _DEFINERS:
            args = n.nodeargd.argnlist if n.nodeargd is not None else []
            name = _group(args[1] if len(args) > 1 else None)
            body = _group(args[4] if len(args) > 4 else None)
            where = f"\\{n.macroname}{{{(name or '?').strip()}}} at character {n.pos}"
            if not name or not name.strip().startswith("\\") or body is None:
                notes.append(f"{where}: its name or body could not be read; its definition is not used")
                continue
            name = name.strip()
            nargs = _nargs(_arg(n, 2), where, notes)
            if nargs is None:
                continue
            default = _arg(n, 3)
            if n.macroname == "providecommand" and (name in out or name in optional):
                continue
            used = max((int(d) for d in re.findall(r"(?<!#)#([1-9])", body)), default=0)
            optional.pop(name, None)
            if default is not None and nargs == 0:
                notes.append(f"{where}: an optional argument's default [{default}] with no arguments; it is ignored")
                default = None
            if default is not None or used != nargs:
                optional[name] = TexMacro(name, nargs, default, body)
            if default is not None:
                filled = re.sub(r"(?<!#)#([1-9])", functools.partial(_shift, default), body)
                out[name] = filled
            else:
                out[name] = body
        elif n.macroname == "DeclareMathOperator":
            name, body = _arg(n, 1), _arg(n, 2)
            star = _arg(n, 0)
            if name and body is not None:
                out[name.strip()] = f"\\operatorname{'*' if star else ''}{{{body}}}"
            else:
                notes.append(f"\\DeclareMathOperator at character {n.pos}: its name or body could not be read; "
                             "its definition is not used")
        elif n.macroname in ("def", "gdef") and i + 1 < len(flat) and isinstance(flat[i + 1], LatexMacroNode):
            target = flat[i + 1]
            body = next((m for m in flat[i + 2:i + 6] if isinstance(m, LatexGroupNode)), None)
            if body is not None:
                out["\\" + target.macroname] = body.latex_verbatim()[1:-1]
            else:
                notes.append(f"\\{n.macroname}\\{target.macroname} at character {n.pos}: its body could not be read; "
                             "its definition is not used")
    return out, optional, notes


_PARAM = re.compile(r"##|#([1-9])")


def _shift(default: str, m: re.Match) -> str:
    """``#1`` -> the default, ``#n`` -> ``#n-1`` (a macro whose optional first argument is filled in)."""
    return default if m.group(1) == "1" else f"#{int(m.group(1)) - 1}"


def _substitute(args: list[str], m: re.Match) -> str:
    """``#n`` -> the call's n-th argument, ``##`` -> ``#``; a ``#n`` past the declared arguments (an error in
    LaTeX) is left as written, for KaTeX to show in its error colour."""
    if m.group(1) is None:
        return "#"
    n = int(m.group(1))
    return args[n - 1] if n <= len(args) else m.group(0)


def expand_macros(tex: str, macros: dict[str, TexMacro], limit: int = 200) -> str:
    """``tex`` (a formula's source) with every call of the macros ``macros`` (:class:`TexMacro`, from
    :func:`layout`) replaced by its body, arguments substituted as TeX does (an omitted optional first
    argument takes its default; ``##`` is ``#``), read with pylatexenc (a call's arguments are groups or
    single tokens). The bodies are expanded again (a macro defined with another), at most ``limit``
    calls in all: a macro that calls itself stops there and the rest is left as written. A formula
    pylatexenc cannot read is returned unchanged."""
    if not macros or not any(name in tex for name in macros):
        return tex
    from pylatexenc import macrospec
    from pylatexenc.latexwalker import LatexMacroNode, LatexWalker, get_default_latex_context_db

    db = get_default_latex_context_db()
    db.add_context_category("document-macros", prepend=True, macros=[
        macrospec.MacroSpec(m.name[1:], ("[" if m.default is not None else "")
                            + "{" * (m.nargs - (1 if m.default is not None else 0))) for m in macros.values()])
    for _ in range(limit):
        try:
            nodes = LatexWalker(tex, tolerant_parsing=True, latex_context=db).get_latex_nodes()[0]
        except Exception:  # noqa: BLE001 - pylatexenc gave up on this formula: the rest is left as written
            return tex
        call = next((n for n in _walk(nodes) if isinstance(n, LatexMacroNode) and "\\" + n.macroname in macros), None)
        if call is None:
            return tex
        m = macros["\\" + call.macroname]
        given = list(call.nodeargd.argnlist if call.nodeargd is not None else [])
        given += [None] * (m.nargs - len(given))  # a call cut short (at the formula's end): empty arguments
        args = [_group(a) or "" for a in given[:m.nargs]]
        if m.default is not None:
            args[0] = m.default if given[0] is None else given[0].latex_verbatim()[1:-1]
        body = _PARAM.sub(functools.partial(_substitute, args), m.body)
        verbatim = call.latex_verbatim()
        after = tex[call.pos + len(verbatim):call.pos + len(verbatim) + 1]
        space = verbatim[len(verbatim.rstrip()):]
        if not space and re.search(r"\\[A-Za-z]+$", body) and after.isalpha():
            space = " "  # \foo x with \foo -> \alpha: \alpha x, not \alphax
        tex = tex[:call.pos] + body + space + tex[call.pos + len(verbatim):]
    return tex


def _labels(text: str, nodes) -> tuple[dict[str, str], dict[int, str], dict[str, str]]:
    """``({label: number}, {sectioning command offset: number}, {equation source: number})``: sections numbered 1, 1.1, 1.1.1;
    numbered display environments on one equation counter (one number per row of an ``align``,
    ``\\nonumber``/``\\notag`` rows skipped); each theorem-like environment on its own counter. A label
    takes the number of the innermost numbered thing around it (a section's when none)."""
    from pylatexenc.latexwalker import LatexEnvironmentNode, LatexMacroNode

    labels: dict[str, str] = {}
    headings: dict[int, str] = {}
    equations: dict[str, str] = {}
    sec = [0, 0, 0]
    counters: dict[str, int] = {}
    state = {"eq": 0, "current": ""}

    def visit(nodes, current: str):
        for n in nodes or []:
            if isinstance(n, LatexMacroNode) and n.macroname in _SECTIONS and not _arg(n, 0):
                level = _SECTIONS.index(n.macroname)
                sec[level] += 1
                for j in range(level + 1, 3):
                    sec[j] = 0
                current = ".".join(str(x) for x in sec[:level + 1])
                headings[n.pos] = current
            elif isinstance(n, LatexMacroNode) and n.macroname == "label":
                key = _arg(n, 0)
                if key:
                    labels.setdefault(key.strip(), current)
            elif isinstance(n, LatexEnvironmentNode):
                env = n.environmentname
                if env in MATH_ENVIRONMENTS:
                    body = n.latex_verbatim()
                    rows = re.split(r"\\\\", body) if env != "equation" else [body]
                    for row in rows:
                        if re.search(r"\\(nonumber|notag)\b", row):
                            continue
                        state["eq"] += 1
                        if env == "equation":
                            equations.setdefault(body, str(state["eq"]))
                        for key in re.findall(r"\\label\{([^{}]*)\}", row):
                            labels.setdefault(key.strip(), str(state["eq"]))
                elif env.rstrip("*") in THEOREM_LIKE and not env.endswith("*"):
                    counters[env] = counters.get(env, 0) + 1
                    visit(n.nodelist, str(counters[env]))
                else:
                    visit(n.nodelist, current)
        return current

    visit(nodes, "")
    return labels, headings, equations


@functools.lru_cache(maxsize=16)
def layout(text: str) -> TexLayout:
    """Parse the LaTeX document ``text`` with pylatexenc (tolerant: a fragment, an unbalanced brace or
    an unknown macro never raises) and return its :class:`TexLayout`.

    The preamble is the text before the ``document`` environment's ``\\begin{document}`` line ends; the
    back matter what follows ``\\end{document}``; a document without a ``document`` environment (a
    chapter written to be ``\\input``) has neither.
    """
    from pylatexenc.latexwalker import LatexEnvironmentNode, LatexWalker

    try:
        nodes, _pos, _len = LatexWalker(text, tolerant_parsing=True).get_latex_nodes()
    except Exception:  # noqa: BLE001 - pylatexenc gave up on this source: it is shown as written, nothing folded
        return TexLayout()
    folds: list[tuple[int, int, str]] = []
    doc = next((n for n in nodes if isinstance(n, LatexEnvironmentNode) and n.environmentname == "document"), None)
    body_start, body_end = 0, len(text)
    if doc is not None:
        begin = text.index("}", doc.pos) + 1
        while begin < len(text) and text[begin] in " \t":
            begin += 1
        if text.startswith("\n", begin):
            begin += 1
        body_start = begin
        body_end = doc.pos + doc.len
        folds.append((0, body_start, "LaTeX preamble (\\documentclass … \\begin{document})"))
        end_cmd = text.rfind("\\end", doc.pos, body_end)
        tail_start = end_cmd if end_cmd >= 0 else body_end
        if text[tail_start:].strip():
            folds.append((tail_start, len(text), "\\end{document} and what follows it"))
    for m in _COMMENT_LINES.finditer(text, body_start, body_end):
        end = m.end()
        folds.append((m.start(), end, "LaTeX comment" + ("s" if m.group(0).count("\n") > 1 else "")))
    folds.sort()
    merged: list[tuple[int, int, str]] = []
    for a, b, label in folds:
        if merged and a < merged[-1][1]:
            pa, pb, plabel = merged[-1]
            merged[-1] = (pa, max(pb, b), plabel)
        else:
            merged.append((a, b, label))
    labels, headings, equations = _labels(text, nodes)
    katex, optional, notes = _macros(nodes)
    return TexLayout(tuple(merged), katex, labels, headings, equations, optional, tuple(notes))


def layout_key(tex_layout: TexLayout | None) -> list | None:
    """What of a :class:`TexLayout` a rendered quote shows (its macros and label numbers), for the render
    caches' keys; None for no layout."""
    if tex_layout is None:
        return None
    return [sorted(tex_layout.macros.items()), sorted(tex_layout.labels.items()),
            sorted((k, repr(v)) for k, v in tex_layout.optional.items())]


def all_macros(tex_layout: TexLayout) -> dict[str, TexMacro]:
    """Every macro the document defines as a :class:`TexMacro`, for :func:`expand_macros` where no
    ``macros`` option reaches the renderer (``claims.md``: GitHub's math knows none of the document's
    macros): the ``optional`` ones as they are, the others with as many arguments as their body uses."""
    out = {name: TexMacro(name, max((int(d) for d in re.findall(r"(?<!#)#([1-9])", body)), default=0), None, body)
           for name, body in tex_layout.macros.items()}
    out.update(tex_layout.optional)
    return out


def strip_labels(tex: str) -> str:
    """A formula's TeX without ``\\label{...}`` (KaTeX has no labels: it would show it in its error
    colour); the equation's number is what ``\\ref`` prints (:func:`layout`)."""
    return re.sub(r"\\label\s*\{[^{}]*\}", "", tex)


_THEOREM = re.compile(r"\\begin\{(" + "|".join(THEOREM_LIKE) + r"|proof)\*?\}(?:\[([^\]]*)\])?")
_ENV_EDGE = re.compile(r"\\(?:begin|end)\{[A-Za-z*]+\}")


@functools.cache
def _converter():
    """pylatexenc's LaTeX-to-text converter with the document view's macros: ``\\label`` discarded,
    ``\\ref``/``\\eqref``/``\\cite`` as placeholders :func:`prose` fills, ``\\emph``/``\\textit`` and
    ``\\textbf`` as Markdown emphasis, math kept verbatim (KaTeX typesets it)."""
    from pylatexenc import latexwalker, macrospec
    from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db

    def keyed(kind):
        def repl(n, l2tobj=None):
            args = n.nodeargd.argnlist if n.nodeargd is not None else []
            keys = _arg(n, len(args) - 1) if args else ""
            note = (_arg(n, 0) or "") if kind == "cite" and len(args) > 1 else ""
            return f"\ue001{kind}\ue003{keys or ''}\ue003{note}\ue002"
        return repl

    db = get_default_latex_context_db()  # a new database each call (pylatexenc 2)
    db.add_context_category(
        "attention-claims", prepend=True,
        macros=[MacroTextSpec("label", discard=True), MacroTextSpec("ref", simplify_repl=keyed("ref")),
                MacroTextSpec("eqref", simplify_repl=keyed("eqref")),
                MacroTextSpec("cref", simplify_repl=keyed("ref")), MacroTextSpec("autoref", simplify_repl=keyed("ref")),
                MacroTextSpec("cite", simplify_repl=keyed("cite")), MacroTextSpec("citep", simplify_repl=keyed("cite")),
                MacroTextSpec("citet", simplify_repl=keyed("cite")),
                MacroTextSpec("emph", simplify_repl="*%s*"), MacroTextSpec("textit", simplify_repl="*%s*"),
                MacroTextSpec("textbf", simplify_repl="**%s**"), MacroTextSpec("maketitle", discard=True)])
    walker_db = latexwalker.get_default_latex_context_db()
    walker_db.add_context_category(
        "attention-claims", prepend=True,
        macros=[macrospec.MacroSpec("cite", "[{"), macrospec.MacroSpec("citep", "[{"),
                macrospec.MacroSpec("citet", "[{"), macrospec.MacroSpec("eqref", "{"),
                macrospec.MacroSpec("cref", "{"), macrospec.MacroSpec("autoref", "{")])
    return LatexNodes2Text(latex_context=db, math_mode="verbatim", keep_comments=False), walker_db


_PLACEHOLDER = re.compile("\ue001(ref|eqref|cite)\ue003([^\ue003]*)\ue003([^\ue002]*)\ue002")


def prose(run: str, tex_layout: TexLayout | None = None) -> str:
    """A run of LaTeX prose (no formula, no comment) as the text a reader of the PDF sees, in the
    Markdown subset :func:`.texmd.render_inline` renders (``*em*``, ``**bold**``): converted by pylatexenc's
    :class:`~pylatexenc.latex2text.LatexNodes2Text` (``~``, ``\\ ``, ``\\&``, ``--``, ``---``, quotes,
    accents), with ``\\ref{k}`` the number of label ``k`` in ``tex_layout`` (``??`` when it has none, as
    LaTeX prints; its key when there is no ``tex_layout``), ``\\eqref{k}`` in parentheses, ``\\cite[p]{a,b}`` as ``[a, b, p]``, ``\\label`` gone, a
    theorem-like environment's start as ``**Lemma.**``, a proof's end as ``∎``."""
    from pylatexenc.latexwalker import LatexWalker

    if not run:
        return run
    run = _THEOREM.sub(lambda m: (("*Proof.*" if m.group(1) == "proof" else f"**{m.group(1).capitalize()}.**")
                                  + (f" ({m.group(2)})" if m.group(2) else "") + " "), run)
    run = re.sub(r"\\end\{proof\}", " ∎", run)
    run = _ENV_EDGE.sub(" ", run)
    l2t, walker_db = _converter()
    try:
        nodes = LatexWalker(run, tolerant_parsing=True, latex_context=walker_db).get_latex_nodes()[0]
        text = l2t.nodelist_to_text(nodes)
    except Exception:  # noqa: BLE001 - pylatexenc gave up on this run: shown as written
        return run
    labels = tex_layout.labels if tex_layout is not None else {}

    def fill(m: re.Match) -> str:
        kind, keys, note = m.group(1), m.group(2), m.group(3)
        if kind == "cite":
            return "[" + ", ".join([k.strip() for k in keys.split(",") if k.strip()] + ([note.replace("~", "\u00a0")] if note else [])) + "]"
        # without the document (a quote on a claim card) a label is shown by its key; with it, an unknown
        # label is "??", as LaTeX prints it
        number = ", ".join(labels.get(k.strip(), "??" if tex_layout is not None else k.strip()) for k in keys.split(","))
        return f"({number})" if kind == "eqref" else number

    return _PLACEHOLDER.sub(fill, text)
