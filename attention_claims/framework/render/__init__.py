"""Renderers of the report: pure functions of the report dict (the content of ``claims.json``).

- :func:`render_html` -- one self-contained page: the answer first, the claims filterable and
  collapsible, the math typeset by the bundled KaTeX, plots inline, the source documents annotated.
- :func:`render_markdown` -- ``claims.md`` for GitHub: the summary first, then false, caveat, true,
  unchecked, details folded.
- :mod:`.plots` -- matplotlib plots as inline SVG from explicit arrays.
- :func:`annotate` -- a source document cut into sentences, each marked with its claims.
"""

from .documents import AnnotatedDocument, annotate
from .html import load_sources, render_html
from .markdown import render_markdown
from .model import claim_reading_kinds, claim_topics, reading_kind
from .plots import render_plot

__all__ = ["render_html", "render_markdown", "render_plot", "annotate", "AnnotatedDocument", "load_sources",
           "claim_topics", "reading_kind", "claim_reading_kinds"]
