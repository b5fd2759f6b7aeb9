"""``claims.md`` for GitHub: the answer on the first screen, then the claims grouped false, caveat,
(undecided,) true, unchecked, each folded in ``<details>``; every text appears once.

Formulas are written as GitHub math (``$...$``, ``$$...$$``), the Markdown-escaped LaTeX of the
scraped page 004 cleaned first; figures are linked relative to the report folder.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import jinja2

from ..trust import trust_lines
from . import diskcache, model
from .texmd import find_math

__all__ = ["render_markdown", "md_text", "md_cell", "md_plain"]

TEMPLATES = Path(__file__).parent / "templates"
SECTION_TITLES = {"false": "False", "caveat": "True with a caveat", "undecided": "Undecided on this machine",
                  "true": "True", "unchecked": "Unchecked (computation cannot judge them)"}


def md_text(text: str | None) -> str:
    """``text`` with every formula rewritten as clean GitHub math (``$tex$``; display formulas as
    ``$$tex$$`` on their own lines); the rest unchanged (its Markdown is GitHub's too)."""
    if not text:
        return ""
    out, pos = [], 0
    for s in find_math(text):
        out.append(text[pos:s.start])
        tex = " ".join(s.tex.split())
        out.append(f"\n\n$$\n{tex}\n$$\n\n" if s.display else f"${tex}$")
        pos = s.end
    out.append(text[pos:])
    return "".join(out)


def md_cell(text: str | None) -> str:
    """:func:`md_text` on one line, safe inside a table cell (``|`` escaped, display math inline)."""
    one = " ".join(md_text(text).replace("$$", "$").split())
    return one.replace("|", "\\|")


def md_plain(text: str | None) -> str:
    """Plain text written by a check (a counterexample's message, its boundary, the evidence) on one line,
    with every character Markdown would read as markup backslash-escaped: ``lam**n`` is Python's power,
    not emphasis. Safe inside a table cell."""
    one = " ".join(str(text or "").split())
    return re.sub(r"([\\`*_\[\]<>|#])", r"\\\1", one)


def md_quote(text: str | None) -> str:
    """:func:`md_text` as a Markdown block quote (every line prefixed by ``> ``)."""
    return "\n".join("> " + line if line.strip() else ">" for line in md_text(text).strip().splitlines())


@functools.cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=False, trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
                             bytecode_cache=diskcache.BYTECODE)
    env.filters.update(md=md_text, cell=md_cell, quote=md_quote, plain=md_plain, one=lambda t: " ".join(str(t or "").split()),
                       compact=model.example_json)
    return env


def render_markdown(report: dict) -> str:
    """The Markdown report of ``report`` (the ``claims.json`` dict, not modified).

    Layout: title and totals, the counts per document (one table), the trust lines, then one
    section per verdict in :data:`model.SECTION_ORDER` with each claim as a ``<details>`` block whose
    summary line is the title and the one-line counterexample or reason. Each claim's block is kept in
    memory and on disk (:func:`_section`), as the HTML report's claim cards are.
    """
    claims = report.get("claims", [])
    counts = report.get("counts") or {}
    total = counts.get("total") or {v: sum(c["verdict"] == v for c in claims) for v in model.VERDICT_ORDER}
    sections = []
    for v in model.SECTION_ORDER:
        members = [c for c in claims if c["verdict"] == v]
        members.sort(key=lambda c: model.document_key(c["source"]["document"]))
        if members:
            sections.append((v, SECTION_TITLES[v], members))
    return _environment().get_template("claims.md.j2").render(
        report=report, env=report.get("environment", {}), run=report.get("run", {}), total=total,
        n_claims=len(claims), by_doc=counts.get("by_document") or {}, sections=sections,
        order=model.SECTION_ORDER, label=model.document_label, short=model.document_short,
        url=model.document_url, trust=trust_lines(report.get("trust")), banner=model.run_banner(report.get("run", {})),
        section=_section)


_SECTIONS: dict[str, str] = {}


def _section(claim: dict, verdict: str, macro) -> str:
    """``macro(_view(claim), verdict)`` (one claim's ``<details>`` block of the template), kept in memory
    and on disk (:func:`.diskcache.memo`, kind ``md``) keyed by the claim's entry and the verdict: the
    view is a function of the entry alone (:func:`_view`), and the document labels and links come from
    :mod:`.model`, whose code the disk cache's folder digest covers. A hit skips building the view."""
    return diskcache.memo(_SECTIONS, 4096, [claim, verdict], lambda: str(macro(_view(claim), verdict)),
                          disk=lambda key, compute: diskcache.cached("md", key, compute))[1]


def _view(c: dict) -> dict:
    reading, cx = model.primary_counterexample(c)
    return {"c": c, "cx": cx, "cx_reading": reading, "one_line": model.one_line_counterexample(c),
            "reason": model.reason_text(c), "decided": model.decided_text(c), "docs": [model.document_short(d) for d in model.documents_of(c)],
            "topic": model.claim_topics(c)[0],
            "plot_links": [(name, _plot_caption(spec), path) for name, spec, path in model.plot_files(c)],
            "readings": [dict(r, kind_label=model.reading_kind(r), evidence_shown=model.evidence_text(r),
                              is_primary=reading is not None and r["name"] == reading["name"])
                         for r in c.get("readings", [])]}


_DEFAULT_CAPTIONS = {"rank_breaks": "logit gap at which the causal attention matrix loses rank, against the IEEE thresholds",
                     "spectra": "singular values", "sparsity_curve": "sparsity S", "decay_sparsity": "S(a) against n"}


def _plot_caption(spec: dict) -> str:
    """The alt text of a plot link: its title, else what the renderer titles it (brackets dropped, one line)."""
    data = spec.get("data") or {}
    kind = spec.get("kind", "plot")
    if data.get("title"):
        text = str(data["title"])
    elif kind == "layer_head_heatmap":
        text = f"{data.get('model', '?')}, N = {data.get('N', '?')}: per layer and head"
    else:
        text = _DEFAULT_CAPTIONS.get(kind, kind.replace("_", " "))
    return " ".join(text.replace("[", "(").replace("]", ")").split())
