"""``claims.md`` for GitHub: the answer on the first screen, then the claims grouped false, caveat,
(undecided,) true, unchecked, each folded in ``<details>``; every text appears once.

Formulas are written as GitHub math (``$...$``, ``$$...$$``), the Markdown-escaped LaTeX of the
scraped page 004 cleaned first; figures are linked relative to the report folder, only those inside its
``figures/`` folder (:func:`.model.figure_path`; any other is named as not shown).

Nothing from a report is written unescaped: every value the template writes goes through
:func:`md_escape` unless a filter escaped it for its place (record Markdown: :func:`md_text`; a check's
text: :func:`md_plain`; the ``<summary>`` line, which renderers read as raw HTML: :func:`md_summary`,
:func:`md_html`; code: :func:`md_code`), so no raw HTML, no ``javascript:`` or ``data:`` link and no
image outside the report's figures reaches a renderer. Links the suite writes are http(s) URLs only.
"""

from __future__ import annotations

import functools
import html
import re
from pathlib import Path

import jinja2

from ..trust import trust_lines
from . import diskcache, model
from .texmd import find_math

__all__ = ["render_markdown", "md_text", "md_latex", "md_cell", "md_plain", "md_escape", "md_code", "safe_url", "Md"]

TEMPLATES = Path(__file__).parent / "templates"
SECTION_TITLES = {"false": "False", "error": "Error: a check did not finish", "caveat": "True with a caveat",
                  "undecided": "Undecided: could not run here",
                  model.NOT_SELECTED: "Not selected: never decided",
                  "true": "True", "unchecked": "Unchecked (computation cannot judge them)"}


class Md(str):
    """Markdown this module wrote and escaped already: the template's ``finalize`` passes it through."""


#: ``<`` that opens raw HTML or an autolink (a tag, ``</``, ``<!``, ``<?``, ``<scheme:``); a ``<`` before
#: a space, ``=`` or a digit (``rank <= d``) is text in every renderer and is left as written
_TAG_OPEN = re.compile(r"<(?=[A-Za-z/!?])")
#: ``&`` that would start a character reference (``&lt;``): escaped so the text shows as written
_ENTITY = re.compile(r"&(?=#?\w+;)")
#: an inline link or image whose destination is a plain http(s) URL: kept (its text escaped)
_SAFE_LINK = re.compile(r"(!?)\[([^\[\]`\\\n<]*)\]\((https?://[A-Za-z0-9\-._~:/?#@!$&'*+,;=%]+)\)")
#: the characters a code span may hold raw: with none of these it is inert even where a renderer
#: would not read it as a code span
_CODE_INERT = re.compile(r"[^<\[\]\\|&\n]*")
_PUNCT = set(r"""!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~""")


def _md_run(s: str, cell: bool = False) -> str:
    """A math-free run of a record's Markdown with everything that could become HTML or a link escaped.

    The record's own Markdown stays (``**bold**``, backslash escapes, inline code without markup
    characters, links to http(s) URLs); ``<`` before a letter, ``/``, ``!`` or ``?`` becomes ``&lt;``
    (no raw HTML, no autolink), ``]`` before ``(``, ``:`` or ``[`` is backslash-escaped (no link, image
    or link definition to anything else), an ``&`` that would start a character reference becomes
    ``&amp;``, backticks that do not open an inert code span are escaped, and in a table cell (``cell``)
    ``|`` is escaped. Backslash escapes are read as pairs, so a record's ``\\`` cannot undo an escape.
    """
    out: list[str] = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c == "\\" and i + 1 < n and (s[i + 1] in _PUNCT or s[i + 1] == "\n"):
            out.append(s[i:i + 2])
            i += 2
            continue
        if c == "`":
            j = i
            while j < n and s[j] == "`":
                j += 1
            fence = s[i:j]
            close = re.compile(rf"(?<!`){fence}(?!`)").search(s, j)
            if close and "\n" not in s[j:close.start()] and _CODE_INERT.fullmatch(s[j:close.start()]):
                out.append(s[i:close.end()])
                i = close.end()
            else:
                out.append("\\`" * len(fence))
                i = j
            continue
        if c in "![":
            m = _SAFE_LINK.match(s, i)
            if m and (c == "[" or m.group(1)):
                out.append(f"{m.group(1)}[{_md_run(m.group(2), cell)}]({m.group(3)})")
                i = m.end()
                continue
        if c == "]" and i + 1 < n and s[i + 1] in "(:[":
            out.append("\\]")
        elif c == "<" and _TAG_OPEN.match(s, i):
            out.append("&lt;")
        elif c == "&" and _ENTITY.match(s, i):
            out.append("&amp;")
        elif c == "|" and cell:
            out.append("\\|")
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _md_tex(tex: str) -> str:
    """A formula's TeX on one line, safe where the renderer does not know math: ``<`` before a letter is
    ``\\lt`` (no tag), ``](``, ``]:`` and ``][`` get an empty group between (no link), a backtick is
    escaped (no code span reaching out of the formula). KaTeX and MathJax typeset all of these alike."""
    tex = " ".join(tex.split())
    tex = _TAG_OPEN.sub(r"\\lt ", tex)
    tex = re.sub(r"\](?=[(:\[])", "]{}", tex)
    return tex.replace("`", "\\`")


def md_text(text: str | None) -> str:
    """``text`` with every formula rewritten as clean GitHub math (``$tex$``; display formulas as
    ``$$tex$$`` on their own lines); the rest keeps its Markdown (GitHub's too) with raw HTML and links
    to anything but http(s) URLs escaped (:func:`_md_run`, :func:`_md_tex`)."""
    if not text:
        return Md("")
    text = str(text)
    out, pos = [], 0
    for s in find_math(text):
        out.append(_md_run(text[pos:s.start]))
        tex = _md_tex(s.tex)
        out.append(f"\n\n$$\n{tex}\n$$\n\n" if s.display else f"${tex}$")
        pos = s.end
    out.append(_md_run(text[pos:]))
    return Md("".join(out))


def md_cell(text: str | None) -> str:
    """:func:`md_text` on one line, safe inside a table cell (``|`` escaped, display math inline)."""
    if not text:
        return Md("")
    text = str(text)
    out, pos = [], 0
    for s in find_math(text):
        out.append(_md_run(text[pos:s.start], cell=True))
        tex = _md_tex(s.tex).replace("|", "\\|")
        out.append(f"$ {tex} $" if s.display else f"${tex}$")
        pos = s.end
    out.append(_md_run(text[pos:], cell=True))
    return Md(" ".join("".join(out).split()))


def md_summary(text: str | None) -> str:
    """:func:`md_cell`'s text for the ``<summary>`` line, which Markdown renderers read as raw HTML:
    formulas as ``$tex$``, ``|`` as ``\\|`` (as in a cell), the rest HTML-escaped, on one line."""
    text = str(text or "")
    out, pos = [], 0
    for s in find_math(text):
        out.append(text[pos:s.start])
        tex = " ".join(s.tex.split())
        out.append(f"$ {tex} $" if s.display else f"${tex}$")
        pos = s.end
    out.append(text[pos:])
    return md_html(" ".join("".join(out).split()).replace("|", "\\|"))


def md_html(text, *, quote: bool = False) -> str:
    """``text`` on one line, HTML-escaped (``&``, ``<``, ``>``; quotes too with ``quote``), for the parts of
    ``claims.md`` that are raw HTML (the ``<summary>`` line, attributes)."""
    return Md(html.escape(" ".join(str(text if text is not None else "").split()), quote=quote))


def md_plain(text: str | None) -> str:
    """Plain text written by a check (a counterexample's message, its boundary, the evidence) on one line,
    with every character Markdown would read as markup backslash-escaped: ``lam**n`` is Python's power,
    not emphasis. Safe inside a table cell."""
    one = " ".join(str(text if text is not None else "").split())
    return Md(re.sub(r"([\\`*_\[\]<>|#])", r"\\\1", one))


def md_escape(value) -> str:
    """What the template writes for a value no filter escaped (ids, labels, dates, counts, paths): the
    characters that could start HTML, a link, a code span, a cell break, emphasis (``*``) or GitHub math
    (``$``: a document named ``q$_$.md`` is a name, not a formula) backslash-escaped, a
    character reference's ``&`` as ``&amp;``, line breaks as spaces. :class:`Md` passes unchanged: this is
    the environment's ``finalize``, so nothing from a report reaches ``claims.md`` unescaped."""
    if isinstance(value, Md):
        return value
    text = re.sub(r"\s*\n\s*", " ", str(value))
    return Md(_ENTITY.sub("&amp;", re.sub(r"([\\`\[\]<>|$*])", r"\\\1", text)))


def md_code(value) -> str:
    """``value`` as an inline code span on one line, fenced by one backtick more than its longest run
    of backticks (so it cannot close early); with a ``|`` (which splits a table row before code spans
    are read) it is written as :func:`md_plain` text instead. ``""`` for an empty value."""
    text = " ".join(str(value if value is not None else "").split())
    if not text:
        return Md("")
    if "|" in text:
        return md_plain(text)
    fence = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return Md(f"{fence}{pad}{text}{pad}{fence}")


def md_tex(tex) -> str:
    """A bare formula (a record's ``formal``) for a ``$$`` block: :func:`_md_tex`."""
    return Md(_md_tex(str(tex)) if tex else "")


_SAFE_URL = re.compile(r"https?://[A-Za-z0-9\-._~:/?#@!$&'*+,;=%]+")


def safe_url(url: str | None) -> str | None:
    """``url`` when it is a plain http(s) URL a Markdown link can hold as written; else None (the
    template then writes the link's text alone)."""
    return Md(url) if url and _SAFE_URL.fullmatch(url) else None


def md_latex(text: str | None, tex_layout=None) -> str:
    """A quote from a LaTeX source document as its reader reads it, in Markdown: the prose converted by
    pylatexenc as the HTML view converts it (:func:`.latex.prose`: ``~`` a no-break space, ``--`` a dash,
    ``\\emph`` as ``*em*``, ``\\cite{a}`` as ``[a]``, ``\\ref`` the number LaTeX prints when the
    document's ``tex_layout`` is known, else the label's key), ``%`` comments dropped, and each formula
    (:func:`.texmd.find_math` with ``latex=True``) written as GitHub math (``$tex$``, a display formula as a
    ``$$`` block) with its ``\\label`` removed and, when ``tex_layout`` is known, the document's own
    macros expanded (:func:`.latex.expand_macros`: GitHub's math does not know them). The rest is escaped
    as :func:`md_text` escapes a record's Markdown."""
    from . import latex

    if not text:
        return Md("")
    text = re.sub(r"(?m)^[ \t]*%[^\n]*(?:\n|$)", "", str(text))  # a comment line, as TeX reads it: gone
    text = latex.blank(text, latex.comments(text))
    layout = tex_layout if isinstance(tex_layout, latex.TexLayout) else None
    macros = latex.all_macros(layout) if layout is not None else {}
    out, pos = [], 0
    for s in find_math(text, latex=True):
        out.append(_md_run(latex.prose(text[pos:s.start], layout)))
        tex = latex.strip_labels(latex.expand_macros(s.tex, macros))
        number = layout.equations.get(text[s.start:s.end]) if layout is not None else None
        tex = _md_tex(f"{tex} \\tag{{{number}}}" if number else tex)
        out.append(f"\n\n$$\n{tex}\n$$\n\n" if s.display else f"${tex}$")
        pos = s.end
    out.append(_md_run(latex.prose(text[pos:], layout)))
    lines = [re.sub(r"[ \t]+", " ", line).strip() for line in "".join(out).splitlines()]  # a no-break space stays
    return Md(re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip())


def md_quote(text: str | None, latex=None) -> str:
    """:func:`md_text` as a Markdown block quote (every line prefixed by ``> ``). ``latex``: the quote is
    from a LaTeX source document (True, or its :class:`.latex.TexLayout`): :func:`md_latex` instead."""
    body = md_latex(text, latex) if latex else md_text(text)
    return Md("\n".join("> " + line if line.strip() else ">" for line in body.strip().splitlines()))


@functools.cache
def _environment() -> jinja2.Environment:
    """The template environment: every ``{{ ... }}`` goes through :func:`md_escape` (``finalize``) unless a
    filter of this module escaped it already for its place (:class:`Md`)."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=False, trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
                             bytecode_cache=diskcache.BYTECODE, finalize=md_escape)
    env.filters.update(md=md_text, cell=md_cell, quote=md_quote, plain=md_plain, summary=md_summary, html=md_html,
                       attr=lambda t: md_html(t, quote=True), code=md_code, tex=md_tex,
                       fence=lambda t: _fence(model.example_json(t)), certified_word=model.certified_word)
    return env


def _fence(text: str) -> str:
    """``text`` as a fenced ``json`` code block whose fence is longer than any backtick run inside."""
    fence = "`" * max(3, max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    return Md(f"{fence}json\n{text}\n{fence}")


def render_markdown(report: dict, *, unplaced: list[str] | None = None,
                    sources: dict[str, str] | None = None) -> str:
    """The Markdown report of ``report`` (the ``claims.json`` dict, not modified).

    ``unplaced``: warning lines for the quotes the views cannot place in their documents
    (:func:`attention_claims.framework.quotes.unplaced`), listed under the totals. ``sources``: ``{document
    file name: full text}`` (:func:`.html.load_sources`); a quote from a LaTeX document among them reads as
    its document view shows it (:func:`md_latex`: references numbered, the document's macros expanded);
    a quote from a LaTeX document not among them is converted without them.

    Layout: title and totals, the counts per document (one table), the trust lines, then one
    section per verdict in :data:`model.SECTION_ORDER` with each claim as a ``<details>`` block whose
    summary line is the title and the one-line counterexample or reason. Each claim's block is kept in
    memory and on disk (:func:`_section`), as the HTML report's claim cards are.
    """
    from . import latex

    claims = report.get("claims", [])
    model.use_documents(report)
    layouts = {name: latex.layout(text) for name, text in (sources or {}).items() if latex.is_tex(name)}
    total = model.status_counts(claims)  # by status: "not selected" apart from "undecided" (could not run here)
    by_doc = {d: model.status_counts(claims, d)
              for d in sorted({d for c in claims for d in model.documents_of(c)}, key=model.document_key)}
    sections = []
    for v in model.SECTION_ORDER:
        members = [c for c in claims if model.status(c) == v]
        members.sort(key=lambda c: model.document_key(c["source"]["document"]))
        if members:
            sections.append((v, SECTION_TITLES[v], members))
    return _environment().get_template("claims.md.j2").render(
        report=report, env=report.get("environment", {}), run=report.get("run", {}), total=total,
        n_claims=len(claims), by_doc=by_doc, sections=sections, headline=model.headline(report),
        columns=["false", "caveat", "true", "unchecked"] + [v for v in ("error", "undecided", model.NOT_SELECTED)
                                                            if total.get(v)],
        meaning=model.STATUS_MEANING,
        order=model.SECTION_ORDER, label=model.document_label, short=model.document_short,
        url=lambda d: safe_url(model.document_url(d)), trust=trust_lines(report.get("trust")), banner=model.run_banner(report.get("run", {})),
        section=lambda claim, verdict, macro: _section(claim, verdict, macro, layouts),
        tex=lambda d: layouts.get(d) or latex.is_tex(d) or None,
        unplaced=unplaced or [], evidence=_evidence_rows(claims))


def _evidence_rows(claims: list) -> list[dict]:
    """The rows of the section "Evidence at small scale — not a verdict" (issue 47, templates/evidence.md.j2)."""
    from attention_claims.replication.report import evidence_rows

    return evidence_rows(c["id"] for c in claims)


_SECTIONS: dict[str, str] = {}


def _section(claim: dict, verdict: str, macro, layouts: dict | None = None) -> str:
    """``macro(_view(claim), verdict)`` (one claim's ``<details>`` block of the template), kept in memory
    and on disk (:func:`.diskcache.memo`, kind ``md``) keyed by the claim's entry, the verdict and the
    manifest entries of its documents: the view is a function of the entry (:func:`_view`), and the
    document labels and links come from those entries through :mod:`.model`, whose code the disk
    cache's folder digest covers; and the macros and labels of its LaTeX documents (``layouts``,
    :func:`.latex.layout_key`), which its quotes show. A hit skips building the view."""
    from . import latex

    places = [claim["source"], *(claim.get("also_in") or [])]
    key = [claim, verdict, [model.DOCUMENTS.get(p["document"]) for p in places],
           [latex.layout_key((layouts or {}).get(p["document"])) for p in places]]
    return Md(diskcache.memo(_SECTIONS, 4096, key, lambda: str(macro(_view(claim), verdict)),
                             disk=lambda key, compute: diskcache.cached("md", key, compute))[1])


def _view(c: dict) -> dict:
    reading, cx = model.primary_counterexample(c)
    profile = model.claim_failure_profile(c)
    profile_file = model.profile_plot_file(c, profile)  # linked on the profile's line, not again in the list
    return {"c": c, "cx": cx, "cx_reading": reading, "one_line": model.one_line_counterexample(c),
            "profile": profile, "profile_text": model.failure_profile_text(profile),
            "profile_link": (_plot_caption(model.profile_plot_spec(profile)), profile_file) if profile_file else None,
            "reason": model.reason_text(c), "decided": model.decided_text(c), "docs": [model.document_short(d) for d in model.documents_of(c)],
            "topic": model.claim_topics(c)[0],
            "plot_links": [(name, _plot_caption(spec), path, model.figure_path(path))
                           for name, spec, path in model.plot_files(c) if path != profile_file],
            "readings": [dict(r, kind_label=model.reading_kind(r), evidence_shown=model.evidence_text(r),
                              is_primary=reading is not None and r["name"] == reading["name"],
                              profile_text=model.failure_profile_text(r.get("failure_profile")),
                              profile_above=bool(profile) and bool(r.get("as_stated"))
                              and r.get("failure_profile") == profile,
                              figures_linked=[dict(f, rel=model.figure_path(f.get("path")))
                                              for f in r.get("figures") or []])
                         for r in c.get("readings", [])]}


_DEFAULT_CAPTIONS = {"rank_breaks": "logit gap at which the causal attention matrix loses rank, against the IEEE thresholds",
                     "spectra": "singular values", "sparsity_curve": "sparsity S", "decay_sparsity": "S(a) against n"}


def _plot_caption(spec: dict) -> str:
    """The alt text of a plot link: its title, else what the renderer titles it (brackets dropped, one line)."""
    data = spec.get("data") or {}
    kind = spec.get("kind", "plot")
    if kind == "failure_profile":
        from .plots import failure_profile_alt

        text = failure_profile_alt(data)
    elif data.get("title"):
        text = str(data["title"])
    elif kind == "layer_head_heatmap":
        text = f"{data.get('model', '?')}, N = {data.get('N', '?')}: per layer and head"
    else:
        text = _DEFAULT_CAPTIONS.get(kind, kind.replace("_", " "))
    return " ".join(text.replace("[", "(").replace("]", ")").split())
