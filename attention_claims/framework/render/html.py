"""``claims.html``: one self-contained page (scripts, styles, fonts, images inline; no network).

The answer first (counts per verdict and per document as a chart), then every claim as a
collapsible row, false first, with search, filters (verdict, document, topic, reading kind) and
sorting; then the five source documents rendered and annotated sentence by sentence.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path

import jinja2
from markupsafe import Markup, escape

from ..trust import trust_lines
from . import assets, diskcache, latex, model, plots
from .documents import AnnotatedDocument, annotate, html_text, is_html
from .texmd import find_links, plain_text, render_inline, render_sentence, render_tex

__all__ = ["render_html", "environment", "load_sources", "claim_view"]

TEMPLATES = Path(__file__).parent / "templates"


@functools.cache
def environment() -> jinja2.Environment:
    """The Jinja2 environment of the report templates (autoescaping on, filters for TeX and Markdown)."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=jinja2.select_autoescape(
        ["html", "j2"], default_for_string=True), trim_blocks=True, lstrip_blocks=True,
        undefined=jinja2.StrictUndefined, bytecode_cache=diskcache.BYTECODE)
    env.filters["inline"] = render_inline
    env.filters["tex"] = render_tex
    env.filters["tex_display"] = lambda t: render_tex(t, display=True)
    env.filters["plain"] = plain_text
    # what a check wrote (counterexample messages, certificates, boundaries, evidence) is plain text, where
    # "lam**n" is Python's power, not Markdown emphasis: escaped, never parsed
    env.filters["verbatim"] = lambda t: escape(t or "")
    env.filters["tojson_compact"] = model.example_json
    env.filters["certified_word"] = model.certified_word
    env.globals.update(VERDICT_COLOURS=plots.VERDICT_COLOURS)
    return env


def load_sources(directory: str | Path) -> dict[str, str]:
    """``{name: text}`` of every document that ``directory/SHA256SUMS`` lists (``directory`` is a sources
    folder such as ``sources/``; names are paths relative to it, ``note.md``, ``papers/draft.tex``), in
    any format (``.txt``, ``.md``, ``.tex``, ``.html``: each is shown as its text, with Markdown and
    TeX formulas rendered). A file the list does not name is not read; no list, no documents.

    Each document is read as :func:`attention_claims.framework.records.verify_sources` reads it (a
    regular file of at most :data:`~attention_claims.framework.records.DOCUMENT_MAX_BYTES`, inside the
    folder, UTF-8).

    Raises:
        ClaimRecordError: a listed document cannot be read, is too large or is not UTF-8 (naming it).
    """
    from ..records import DOCUMENT_MAX_BYTES, ClaimRecordError, read_capped, read_sums

    folder = Path(directory)
    out: dict[str, str] = {}
    for name in sorted(read_sums(folder)):
        path = folder / name
        try:
            raw = read_capped(path, DOCUMENT_MAX_BYTES)
            out[name] = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ClaimRecordError(path, None, None, f"source document is not UTF-8 text (offset {exc.start})") from None
        except (OSError, ValueError) as exc:
            problem = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise ClaimRecordError(path, None, None, f"source document cannot be read: {problem}") from None
    return out


def _figure_file(fig: Mapping, report_dir: Path | None) -> Path | None:
    """The file of a figure entry when it lies in the report's own figures folder
    (``<report_dir>/figures/``, :func:`.model.figure_path`), followed through symbolic links and still
    there; else None (an absolute path, ``..``, a link out, no ``report_dir``)."""
    rel = model.figure_path(fig.get("path"))
    if rel is None or report_dir is None:
        return None
    root = Path(report_dir).resolve()
    folder = (root / model.FIGURES_DIR).resolve()
    path = (root / rel).resolve()
    if not folder.is_relative_to(root) or not path.is_relative_to(folder) or path == folder:
        return None
    return path


def _figure_src(fig: Mapping, report_dir: Path | None) -> str | None:
    """A figure entry's image as a data URI, or None when its file is not in the report's figures folder
    (:func:`_figure_file`) or not readable."""
    from ..._files import read_regular

    path = _figure_file(fig, report_dir)
    if path is None:
        return None
    try:  # the package's one reader: a FIFO in reports/figures is not waited on (left out, as unreadable)
        data = read_regular(path, 64 << 20)
    except (OSError, ValueError):
        return None
    if path.suffix.lower() == ".svg":
        import base64

        return "data:image/svg+xml;base64," + base64.b64encode(data).decode("ascii")
    return plots.png_data_uri(data)


def claim_view(claim: dict, order: int, sentence_of: Mapping[tuple[str, str], str],
               report_dir: Path | None, layouts: Mapping[str, latex.TexLayout] | None = None) -> dict:
    """The template's view of one claim: the claim dict plus derived fields.

    ``sentence_of`` maps ``(document, claim id)`` to the anchor of the first annotated sentence
    that carries the claim in that document. ``layouts``: ``{LaTeX document: its
    :func:`.latex.layout`}``: a quote from one reads as its document view shows it (its ``\\ref`` numbered,
    its macros with an optional argument expanded).
    """
    reading, cx = model.primary_counterexample(claim)
    docs = model.documents_of(claim)
    places = [dict(claim["source"], primary=True)] + [dict(p, primary=False) for p in claim.get("also_in") or []]
    for p in places:
        p["label"] = model.document_label(p["document"])
        p["url"] = model.document_url(p["document"])
        p["anchor"] = sentence_of.get((p["document"], claim["id"]))
        # a LaTeX source's quote reads as its view shows it
        p["latex"] = (layouts or {}).get(p["document"]) or latex.is_tex(p["document"]) or None
    profile = model.claim_failure_profile(claim)
    readings = []
    for r in claim.get("readings", []):
        figs = [dict(f, src=_figure_src(f, report_dir)) if _figure_file(f, report_dir) is not None else
                dict(f, src=None, path=f"{f.get('path')}, outside the report's {model.FIGURES_DIR} folder, so")
                for f in r.get("figures", []) or []]
        readings.append(dict(r, kind_label=model.reading_kind(r), evidence_shown=model.evidence_text(r),
                             figures_shown=figs, plots_svg=[(p["kind"], Markup(plots.render_plot(p))) for p in r.get("plots", [])],
                             is_primary=reading is not None and r["name"] == reading["name"],
                             profile_text=model.failure_profile_text(r.get("failure_profile")),
                             # the claim's profile is this reading's: shown once, above the readings
                             profile_above=bool(profile) and bool(r.get("as_stated")) and r.get("failure_profile") == profile,
                             **_profile_plot(r.get("failure_profile"))))
    search = " ".join([claim["id"], claim.get("title") or "", claim.get("statement") or "", claim["source"]["quote"],
                       claim.get("reason") or "", claim["source"].get("section") or ""]).lower()
    return {
        "c": claim, "order": order, "docs": docs, "docs_short": [model.document_short(d) for d in docs],
        "docs_slug": [model.document_slug(d) for d in docs],
        "topics": model.claim_topics(claim), "kinds": model.claim_reading_kinds(claim),
        "places": places, "readings": readings, "cx": cx, "cx_reading": reading,
        "one_line": model.one_line_counterexample(claim), "reason": model.reason_text(claim),
        "decided": model.decided_text(claim), "profile": profile,
        "profile_text": model.failure_profile_text(profile), **_profile_plot(profile),
        "search": plain_text(search), "severity": model.SEVERITY.get(model.status(claim), 9),
        "status": model.status(claim),
        "plots_svg": [(p["kind"], Markup(plots.render_plot(p))) for p in claim.get("plots", [])],
    }


def _profile_plot(profile: dict | None) -> dict:
    """``{"profile_svg", "profile_alt"}`` of a failure profile for the card: its plot (inline SVG,
    :func:`.plots.failure_profile_svg`) and the plot's alt text when it has a sweep; ``None`` and ``""``
    otherwise (a profile at one setting is text only)."""
    spec = model.profile_plot_spec(profile)
    if spec is None:
        return {"profile_svg": None, "profile_alt": ""}
    return {"profile_svg": Markup(plots.render_plot(spec)), "profile_alt": plots.failure_profile_alt(profile)}


_CARDS: dict[str, str] = {}


def _card(claim: dict, order: int, sentence_of: Mapping[tuple[str, str], str], report_dir: Path | None,
          macro, layouts: Mapping[str, latex.TexLayout] | None = None) -> Markup:
    """``macro(claim_view(claim, order, sentence_of, report_dir))`` (the claim card of the report
    template), kept in memory and on disk (:func:`.diskcache.memo`, kind ``card``) keyed by what the view
    is made of: the claim's entry, its order, its anchors into the documents, its figures as data URIs,
    and the plot drawing code (:func:`.plots.code_digest`: with the specs in the entry, that fixes the
    drawn SVGs); the rest of the view is derived from these by this package's code, which the disk
    folder's digest covers. A hit skips building the view. A claim carried unchanged (the in-progress
    report; the claims a subset run does not decide) reuses the card of the last report; a claim
    decided now gets a new one (its entry says when)."""
    places = [claim["source"], *(claim.get("also_in") or [])]
    key_parts = [claim, order, [sentence_of.get((p["document"], claim["id"])) for p in places],
                 [model.DOCUMENTS.get(p["document"]) for p in places],
                 [_figure_src(f, report_dir) for r in claim.get("readings", []) for f in r.get("figures") or []],
                 plots.code_digest(), [latex.layout_key((layouts or {}).get(p["document"])) for p in places]]
    return Markup(diskcache.memo(_CARDS, 4096, key_parts,
                                 lambda: str(macro(claim_view(claim, order, sentence_of, report_dir, layouts))),
                                 disk=lambda key, compute: diskcache.cached("card", key, compute))[1])


_MARKS = {"false": "✗", "caveat": "!", "true": "✓", "unchecked": "?", "undecided": "…", "error": "‼"}


def _sentence_html(doc: AnnotatedDocument, s, slug: str, state: dict, titles: Mapping[str, tuple[str, str]],
                   links=()) -> str:
    """One sentence as a ``<span>`` whose id is ``<slug>-s<index>`` (``slug``: :func:`.model.document_slug`);
    every name in it (claim ids, verdicts, titles, the not-a-claim kind) escaped for an attribute.
    ``links``: the links of its paragraph in a Markdown document (:func:`.texmd.find_links`)."""
    raw = doc.text[s.start:s.end]
    if latex.is_tex(doc.name):  # a LaTeX source: its prose as a reader sees it, its formulas typeset
        body = render_inline(raw, state, latex=latex.layout(doc.text))
    elif is_html(doc.name):
        body = render_inline(html_text(raw), state)  # an HTML page: its text
    else:  # Markdown: a link the sentence cuts is a link in each of its sentences
        body = render_sentence(doc.text, s.start, s.end, links, state)
    sid = f"{slug}-s{s.index}"
    if s.index < 0:
        return f'<span class="s">{body}</span>'
    if s.claims:
        tip = "; ".join(f"{titles[c][0]}: {titles[c][1]}" for c in s.claims if c in titles)
        marks = "".join(f'<a class="mk v-{escape(titles[c][0])}" href="#c-{escape(c)}" title="{escape(titles[c][0])}: '
                        f'{escape(titles[c][1])}">{_MARKS.get(titles[c][0], "•")}</a>' for c in s.claims if c in titles)
        return (f'<span class="s v-{escape(s.verdict)}" id="{escape(sid)}" data-claims="{escape(" ".join(s.claims))}" '
                f'title="{escape(tip)}">{body}</span><sup class="mks">{marks}</sup>')
    if s.kind:
        return f'<span class="s nc" id="{escape(sid)}" title="not a claim: {escape(s.kind)}">{body}</span>'
    return f'<span class="s" id="{escape(sid)}">{body}</span>'


def block_html(doc: AnnotatedDocument, block, slug: str, titles: Mapping[str, tuple[str, str]]) -> Markup:
    """HTML of one block of an annotated document, its sentences wrapped in ``<span class="s ...">`` with
    ids ``<slug>-s<n>`` (``slug``: the document's :func:`.model.document_slug`)."""
    markdown = not latex.is_tex(doc.name) and not is_html(doc.name)

    def part(sentences) -> str:
        state = {"strong": False, "mark": False}
        links = find_links(doc.text, sentences[0].start, sentences[-1].end) if markdown and sentences else []
        return " ".join(_sentence_html(doc, s, slug, state, titles, links) for s in sentences)

    k = block.kind
    if k == "hr":
        return Markup("<hr>")
    if k == "fold":  # a LaTeX preamble or comment (its source), or a web page's furniture (its blocks)
        inner = ("".join(block_html(doc, child, slug, titles) for child in block.children) if block.children
                 else str(Markup("<pre><code>{}</code></pre>").format(block.code)))
        return Markup('<details class="fold"><summary>{}</summary>{}</details>').format(block.label, Markup(inner))
    if k == "code":
        return Markup("<pre><code>{}</code></pre>").format(block.code)
    if k == "table":
        rows = "".join("<tr>" + "".join(f"<{'th' if i == 0 else 'td'}>{part(cell)}</{'th' if i == 0 else 'td'}>"
                                        for cell in row) + "</tr>" for i, row in enumerate(block.rows))
        return Markup(f'<table class="doc-table">{rows}</table>')
    if k == "quote":
        label = f'<div class="callout">{escape(block.label)}</div>' if block.label else ""
        lines = "<br>".join(part(p) for p in block.rows[0]) if block.rows else ""
        return Markup(f"<blockquote>{label}{lines}</blockquote>")
    inner = part(block.rows[0][0]) if block.rows and block.rows[0] else ""
    if k == "li":
        return Markup(f'<div class="li" style="margin-left:{1.2 + 1.4 * block.depth:.1f}em">{inner}</div>')
    if k.startswith("h"):
        number = f'<span class="secnum">{escape(block.label)}</span> ' if block.label else ""
        return Markup(f"<{k}>{number}{inner}</{k}>")
    return Markup(f"<p>{inner}</p>")


def _documents(report: dict, sources: Mapping[str, str] | None,
               classification: Mapping[str, Mapping[str, str]] | None,
               claim_excerpts: Mapping[str, Mapping[str, str]] | None,
               articles: Mapping[str, list] | None = None) -> list[AnnotatedDocument]:
    if not sources:
        return []
    return [_annotated(name, text, report["claims"], (classification or {}).get(name), (claim_excerpts or {}).get(name),
                       (articles or {}).get(name))
            for name, text in sorted(sources.items(), key=lambda kv: model.document_key(kv[0]))]


_ANNOTATED: dict[str, AnnotatedDocument] = {}


def _annotated(name: str, text: str, claims: list[dict], kinds: Mapping[str, str] | None,
               excerpts: Mapping[str, str] | None, parts: list | None = None) -> AnnotatedDocument:
    """:func:`annotate`, kept in memory keyed by everything it reads: the document, the id, verdict and
    quotes of each claim that quotes it or is named by ``excerpts``, and the classification, and on
    disk (:func:`.diskcache.cached_object`). The result is only read by the renderer, so equal keys can
    share it."""
    named = set((excerpts or {}).values())
    relevant = [[c["id"], c["verdict"], c["source"]["document"], c["source"]["quote"],
                 [[p["document"], p["quote"]] for p in c.get("also_in") or []]]
                for c in claims if c["source"]["document"] == name or c["id"] in named
                or any(p["document"] == name for p in c.get("also_in") or [])]
    from .webpage import ranges

    article = ranges(name, text, parts) if parts else None  # ArticleError: a recorded part not in the page
    key, doc = diskcache.memo(
        _ANNOTATED, 256, [name, text, relevant, kinds, excerpts, article],
        lambda: annotate(name, text, claims, kinds, claim_excerpts=excerpts, article=article),
        disk=lambda key, compute: diskcache.cached_object("annotated", key, compute, AnnotatedDocument))
    doc.cache_key = key
    return doc


_DOC_HTML: dict[str, str] = {}


def _document_html(doc: AnnotatedDocument, macro, titles: Mapping[str, tuple[str, str]]) -> Markup:
    """``macro(doc, ...)`` (a document's annotated view), kept in memory keyed by the annotation's key
    (:func:`_annotated`) and the verdict and title of each claim it marks, and on disk (:mod:`.diskcache`);
    uncached for a document annotated elsewhere."""
    args = (doc, model.document_short, model.document_label, model.document_url, model.document_slug)
    if getattr(doc, "cache_key", None) is None:
        return macro(*args)
    ids = sorted({c for s in doc.sentences for c in s.claims})
    return Markup(diskcache.memo(_DOC_HTML, 256, [doc.cache_key, [[i, titles.get(i)] for i in ids],
                                                  model.DOCUMENTS.get(doc.name)],
                                 lambda: str(macro(*args)),
                                 disk=lambda key, compute: diskcache.cached("document", key, compute))[1])


def _evidence_rows(claims: list) -> list[dict]:
    """The rows of the section "Evidence at small scale — not a verdict" (issue 47, templates/evidence.html.j2)."""
    from attention_claims.replication.report import evidence_rows

    return evidence_rows(c["id"] for c in claims)


def render_html(report: dict, *, sources: Mapping[str, str] | None = None,
                classification: Mapping[str, Mapping[str, str]] | None = None,
                claim_excerpts: Mapping[str, Mapping[str, str]] | None = None,
                report_dir: str | Path | None = None, articles: Mapping[str, list] | None = None) -> str:
    """The HTML report of ``report`` (the ``claims.json`` dict), self-contained.

    Args:
        report: the report dict (DESIGN.md schema 1 plus ``run``, ``counts``, ``also_in``, ``figures``,
            ``trust``...). Not modified.
        sources: ``{document file name: full text}`` of the source documents to annotate (see
            :func:`load_sources`); None or empty: no document view.
        classification: ``{document: {verbatim excerpt: not-a-claim kind}}`` for the coverage view;
            sentences not covered by a claim or an excerpt are "unclassified" (data:
            ``sources/sentences/``, :mod:`attention_claims.framework.sentences`).
        claim_excerpts: ``{document: {verbatim excerpt: claim id}}``: further sentences that state a
            recorded claim in other words than its quote.
        report_dir: the folder that figure paths in the report are relative to; only figures in its
            ``figures/`` folder are embedded (no absolute path, no ``..``, no symbolic link out); any
            other, or one whose file cannot be read, is listed by caption with a note. None: no figure
            is embedded.
        articles: ``{document: [[first words, last words], ...]}``: the parts of a saved web page a
            reader reads (the ``article`` entries of ``documents.toml``, :func:`.webpage.recorded_parts`);
            the rest of its blocks are folded as page furniture.

    Returns:
        The page as one string (UTF-8 text, about 1 MB for the full catalog).
    """
    report_dir = Path(report_dir) if report_dir is not None else None
    model.use_documents(report)
    docs = _documents(report, sources, classification, claim_excerpts, articles)
    layouts = {name: latex.layout(text) for name, text in (sources or {}).items() if latex.is_tex(name)}
    katex_macros: dict[str, str] = {}
    for d in docs:  # every LaTeX document's own macros, for KaTeX's macros option (the first definition wins)
        for name, body in d.macros.items():
            katex_macros.setdefault(name, body)
    sentence_of: dict[tuple[str, str], str] = {}
    for d in docs:
        for s in d.sentences:
            for cid in s.claims:
                sentence_of.setdefault((d.name, cid), f"{model.document_slug(d.name)}-s{s.index}")
    claims = report.get("claims", [])
    titles = {c["id"]: (c["verdict"], c.get("title") or c["id"]) for c in claims}
    ordered = sorted(enumerate(claims), key=lambda e: (model.SEVERITY.get(model.status(e[1]), 9),
                                                       model.document_key(e[1]["source"]["document"]), e[0]))
    counts = report.get("counts") or {}
    by_doc = counts.get("by_document") or {}
    # by status (the verdicts and "not selected"), from the claims themselves: counts has verdicts only
    total = model.status_counts(claims)
    chart_rows = {model.document_short(d): model.status_counts(claims, d)
                  for d in sorted({d for c in claims for d in model.documents_of(c)}, key=model.document_key)}
    chart_rows["all (each claim once)"] = total
    chart = Markup(plots.render_plot({"kind": "verdict_counts", "data": {"rows": [[k, v] for k, v in chart_rows.items()]}})) if claims else Markup("")
    all_docs = sorted({d for c in claims for d in model.documents_of(c)}, key=model.document_key)
    evidence = _evidence_rows(claims)
    by_claim: dict[str, list[dict]] = {}
    for row in evidence:
        by_claim.setdefault(row["claim"], []).append(row)
    ctx = {
        "report": report, "env": report.get("environment", {}), "run": report.get("run", {}),
        "banner": model.run_banner(report.get("run", {})), "headline": model.headline(report),
        "meaning": model.STATUS_MEANING, "drawn": [v for v in model.STATUS_ORDER if total.get(v)],
        "claims": ordered, "total": total, "n_claims": len(claims), "chart": chart,
        "section_order": model.SECTION_ORDER, "all_docs": [(d, model.document_slug(d), model.document_label(d))
                                                          for d in all_docs],
        "topics": list(dict.fromkeys([*model.TOPICS, *(t for c in claims for t in model.claim_topics(c))])),
        "kinds": model.READING_KINDS, "documents": docs,
        "doc_label": model.document_label, "doc_short": model.document_short, "doc_url": model.document_url,
        "doc_slug": model.document_slug,
        "trust": trust_lines(report.get("trust")), "katex_css": Markup(assets.katex_css()),
        "katex_js": Markup(assets.katex_js()), "katex_version": assets.katex_version(),
        "katex_macros": Markup(json.dumps(katex_macros, ensure_ascii=True).replace("<", "\\u003c")),
        "css": Markup(assets.static_text("report.css")), "js": Markup(assets.static_text("report.js")),
        "by_doc": by_doc, "json": json,
        "block_html": lambda d, b, short: block_html(d, b, short, titles),
        # e: (order, claim); a claim with small-scale evidence carries its rows onto its card (issue 47)
        "card": lambda e, macro: _card(dict(e[1], small_scale=by_claim[e[1]["id"]]) if e[1]["id"] in by_claim
                                       else e[1], e[0], sentence_of, report_dir, macro, layouts),
        "document_html": lambda d, macro: _document_html(d, macro, titles),
        "evidence": evidence,
    }
    return environment().get_template("report.html.j2").render(**ctx)
