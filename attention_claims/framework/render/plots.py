"""Plots for the report, drawn with matplotlib (Agg) and returned as inline SVG text.

Every function takes explicit data (documented shapes and units) and returns an ``<svg>``
string to embed; none reads files or the network. :func:`render_plot` dispatches a plot spec
``{"kind": ..., "title": ..., "data": {...}}`` carried by a claim or reading in the report
(``plots`` field) to the function of that kind, so the report model decides what is drawn and
the renderer only how.

Drawn plots are kept across processes in ``<cache root>/plots`` (:func:`plot_cache_dir`), used only
when that folder may be trusted (:func:`attention_claims._cache.trusted_dir`; else one warning and a
private folder of this process). An entry is written by :func:`attention_claims._cache.write_checked`
(a truncated or altered file is a miss) and, as it ends up inline in ``claims.html`` and as a figure
file, is used only when it is an SVG this module could have drawn (:func:`safe_svg`: XML with an
``<svg>`` root that has a viewBox, no script, event attribute, foreign object or external link);
otherwise the plot is drawn again and the entry rewritten.

Text that comes from the data (a plot's title, its series and reference-line labels, a model's or a
dtype's name, panel names, axis labels a check passes) is data, not mathtext: it is drawn with
``parse_math=False`` (``$\\frac{`` is drawn as written, never a parse error); only this module's own
labels (:data:`_OWN_MATH`) are mathtext. A drawing that fails closes its figure (:func:`_closing`).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import io
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ..._cache import cache_dir, read_checked, write_checked
from ..._lazy import installed_version

__all__ = [
    "VERDICT_COLOURS", "verdict_counts_svg", "layer_head_heatmap_svg", "spectra_svg", "rank_breaks_svg",
    "sparsity_curve_svg", "decay_sparsity_svg", "curve_svg", "render_plot", "standalone_svg", "plot_key", "plot_cache_dir", "safe_svg", "code_digest", "warm", "png_data_uri", "PLOT_KINDS",
    "failure_profile_svg", "failure_profile_alt",
]

VERDICT_COLOURS = {"false": "#c62828", "caveat": "#d48806", "true": "#2e7d32", "unchecked": "#78909c",
                   "undecided": "#7b1fa2", "error": "#212121", "not selected": "#c3c9cf"}
_RC = {"svg.fonttype": "none", "font.size": 9, "axes.spines.top": False, "axes.spines.right": False,
       "svg.hashsalt": "attention-claims", "font.family": "sans-serif"}


@functools.cache
def _pyplot():
    """``matplotlib.pyplot`` on the Agg backend, imported on first use: a report whose plots are all in
    the cache (:func:`render_plot`) is written without importing matplotlib (~0.5 s)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


_OWN_MATH = frozenset({r"$\sigma_i$", r"$\gamma = \sigma\,\Vert q\Vert$"})
"""This module's own default labels, the only texts drawn as mathtext (the rest is data)."""


def _math(text: str) -> bool:
    """Whether ``text`` is one of this module's own mathtext labels (:data:`_OWN_MATH`)."""
    return text in _OWN_MATH


def _legend(ax, own: Sequence[str] = (), **kwargs):
    """``ax.legend(**kwargs)`` with every entry's text drawn as plain text (labels are data), except the
    module's own mathtext labels ``own`` and :data:`_OWN_MATH`."""
    legend = ax.legend(**kwargs)
    for text in legend.get_texts():
        if text.get_text() not in own and not _math(text.get_text()):
            text.set_parse_math(False)
    return legend


def _closing(draw):
    """Decorate a drawing function so that the figures it opened are closed when it fails (a figure
    left open would hold memory for the rest of the process and end up in a later ``plt.gcf()``)."""

    @functools.wraps(draw)
    def wrapper(*args, **kwargs):
        plt = _pyplot()
        before = set(plt.get_fignums())
        try:
            return draw(*args, **kwargs)
        finally:
            for num in set(plt.get_fignums()) - before:
                plt.close(num)

    return wrapper


def _svg(fig, tight: bool = True) -> str:
    """``fig`` as inline SVG text (its size left to the page), the figure closed. ``tight``: cropped to
    what is drawn (which may be wider than the figure when labels reach past its edge); else exactly the
    figure's size (a constrained layout keeps everything inside)."""
    plt = _pyplot()
    buf = io.StringIO()
    try:
        fig.savefig(buf, format="svg", bbox_inches="tight" if tight else None, metadata={"Date": None, "Creator": None})
    finally:
        plt.close(fig)
    text = buf.getvalue()
    text = re.sub(r"<!--.*?-->", "", text[text.index("<svg"):], flags=re.S)  # matplotlib's comments: raw labels
    # scale with the page: drop the fixed size, keep the viewBox
    return re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r'<svg\1 class="plot"', text, count=1)


def standalone_svg(svg: str) -> str:
    """``svg`` (as :func:`render_plot` returns it, for inlining) as the text of an ``.svg`` file: with the
    XML declaration and a width and height (in pt, from its ``viewBox``) so an ``<img>`` or GitHub shows
    it at its drawn size.

    Raises:
        ValueError: ``svg`` has no ``viewBox``.
    """
    m = re.search(r'viewBox="([-\d.]+) ([-\d.]+) ([\d.]+) ([\d.]+)"', svg)
    if m is None:
        raise ValueError("the SVG has no viewBox")
    sized = svg.replace(' class="plot"', f' width="{m.group(3)}pt" height="{m.group(4)}pt"', 1)
    return '<?xml version="1.0" encoding="utf-8" standalone="no"?>\n' + sized


def png_data_uri(data: bytes) -> str:
    """``data:image/png;base64,...`` for the bytes of a PNG file."""
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


CHART_FONT_PT = 10
"""The verdict chart's text size in points. The chart is drawn :data:`CHART_WIDTH_IN` wide, so that on a
phone (390 px wide, the chart about 355 px) a point is at least 1.1 px and every label at least 11 px;
``claims.html`` shows it at most 480 px wide on a wider screen."""
CHART_WIDTH_IN = 4.3


@_closing
def verdict_counts_svg(by_document: Mapping[str, Mapping[str, int]], labels: Mapping[str, str] | None = None,
                       order: Sequence[str] = ("false", "error", "caveat", "true", "unchecked", "undecided",
                                                "not selected")) -> str:
    """Horizontal stacked bars: one row per document (and an ``all`` row if given), one segment per status.

    Every status with a segment has a legend entry (above the bars, up to four to a row); a segment is
    labelled with its count where the count's text fits inside it. Text is :data:`CHART_FONT_PT` points
    on a chart :data:`CHART_WIDTH_IN` inches wide.

    Args:
        by_document: ``{row name: {status: count}}`` in display order (top first); counts >= 0.
        labels: optional display names per row.
        order: the statuses (the verdicts and "not selected"), left to right.
    """
    rows = list(by_document)
    plt = _pyplot()
    font = CHART_FONT_PT
    with plt.rc_context({**_RC, "font.size": font}):
        # constrained: the row names fit inside the width (not past its edge), so the drawn width is the width
        fig, ax = plt.subplots(figsize=(CHART_WIDTH_IN, 0.3 * len(rows) + 1.0), layout="constrained")
        y = np.arange(len(rows))[::-1]
        left = np.zeros(len(rows))
        drawn = []
        totals = np.array([sum(by_document[r].get(v, 0) for v in order) for r in rows], dtype=float)
        ax.set_xlim(0, max(1.0, float(totals.max(initial=0))) * 1.02)
        # row names are document names, data: mathtext off, so a "$" in a name is a dollar sign (issue 33.2)
        ax.set_yticks(y, [(labels or {}).get(r, r) for r in rows], parse_math=False)
        fig.canvas.draw()  # the axes' size in points, after the row names took their room
        per_unit = ax.get_window_extent().width * 72 / fig.dpi / (ax.get_xlim()[1] or 1)
        for v in order:
            vals = np.array([by_document[r].get(v, 0) for r in rows], dtype=float)
            if not vals.any():
                continue
            drawn.append(v)
            ax.barh(y, vals, left=left, color=VERDICT_COLOURS.get(v, "#999"), height=0.7, label=v,
                    edgecolor="white", linewidth=0.6)
            ink = "#1d232a" if v == "not selected" else "white"
            for yy, lo, val in zip(y, left, vals, strict=True):
                if val and val * per_unit >= 0.62 * font * len(str(int(val))) + 4:
                    ax.text(lo + val / 2, yy, f"{int(val)}", ha="center", va="center", color=ink, fontsize=font)
            left += vals
        ax.set_xlabel("claims")
        legend = fig.legend(ncols=min(4, max(1, len(drawn))), loc="outside upper left", frameon=False,
                            fontsize=font, handlelength=1.0, columnspacing=0.9, handletextpad=0.4)
        for text in legend.get_texts():  # statuses are plain words
            text.set_parse_math(False)
        ax.spines["left"].set_visible(False)
        ax.tick_params(axis="y", length=0)
        return _svg(fig, tight=False)


@_closing
def layer_head_heatmap_svg(measures: Mapping[str, np.ndarray | Sequence[Sequence[float]]], model: str, N: int,
                           names: Mapping[str, str] | None = None) -> str:
    """One heatmap per measure, layers down, heads across.

    Args:
        measures: ``{measure: (L, H) array}`` for one model and one N, e.g. ``eff_rank_90``,
            ``energy_top10``, ``numerical_rank`` as in ``claims.trained.Measurement.heads["float32"]``
            (ranks are counts out of N; energy is a fraction in [0, 1]; NaN cells are left blank).
        model, N: for the title.
        names: optional panel titles per measure.
    """
    keys = list(measures)
    plt = _pyplot()
    with plt.rc_context(_RC):
        arrays = [np.asarray(measures[k], dtype=float) for k in keys]
        L, H = arrays[0].shape
        # constrained: each colour bar, panel title and the figure's title keep their own room
        fig, axes = plt.subplots(1, len(keys), figsize=(2.8 * len(keys) + 0.4, max(2.4, 0.16 * L + 1.4)),
                                 squeeze=False, layout="constrained")
        for ax, k, a in zip(axes[0], keys, arrays, strict=True):
            im = ax.imshow(a, aspect="auto", cmap="viridis", interpolation="nearest")
            ax.set_title((names or {}).get(k, k), fontsize=9, parse_math=False)  # panel names are data
            ax.set_xlabel("head")
            ax.set_ylabel("layer")
            ax.set_xticks(range(0, H, max(1, H // 6)))
            ax.set_yticks(range(0, L, max(1, L // 8)))
            fig.colorbar(im, ax=ax, fraction=0.08, pad=0.03)
        fig.suptitle(f"{model}, N = {N}: per layer and head", fontsize=10, parse_math=False)  # a model's name is data
        return _svg(fig)


def _arr(values) -> np.ndarray:
    """``values`` as a float64 array, ``None`` (a JSON null: NaN or infinity in the check) as NaN."""
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def _series(values) -> dict[str, np.ndarray]:
    """A plot field that is either one sequence or ``{label: sequence}``, as ``{label: array}`` (label "")."""
    if values is None:
        return {}
    if isinstance(values, Mapping):
        return {str(k): _arr(v) for k, v in values.items()}
    return {"": _arr(values)}


MAX_LEGEND_LINES = 8
"""More lines than this (layers of a model) are told apart by a colour map with a colour bar, not a legend."""


def _colour_bar(fig, ax, cmap, names: Sequence[str]) -> None:
    """A colour bar beside ``ax`` for lines coloured ``cmap(k / (n - 1))``, k = 0 .. n-1, ticked with the
    lines' ``names`` (data: drawn as plain text) at up to six evenly spaced k, the first and last included."""
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    n = len(names)
    bar = fig.colorbar(ScalarMappable(norm=Normalize(0, n - 1), cmap=cmap), ax=ax, fraction=0.05, pad=0.02)
    ticks = sorted({round(k) for k in np.linspace(0, n - 1, min(n, 6))})
    bar.set_ticks(ticks, labels=[str(names[k]) for k in ticks])
    for text in bar.ax.get_yticklabels():
        text.set_parse_math(False)
    bar.ax.tick_params(labelsize=7)


@_closing
def spectra_svg(spectra: Mapping[str, Sequence[float]], *, claimed_alpha: float | None = None,
                claimed_c: float | None = None, title: str = "singular values",
                index: Sequence[float] | None = None, vlines: Mapping[str, float] | None = None,
                ylabel: str = r"$\sigma_i$", claimed_label: str | None = None) -> str:
    """Singular-value spectra on log-log axes, one line per layer (or head), against a claimed power law.

    Args:
        spectra: ``{label: sigma at each index}`` (non-negative; zeros and nulls are dropped from the
            log plot), e.g. per layer the head average of ``sigma_i / sigma_1``.
        claimed_alpha, claimed_c: draw ``C i^-alpha`` (定理 11.21's decay, 003 section 11.3.1) when
            given; C defaults to the largest first value.
        title: the plot title.
        index: the indices ``i`` (1-based) the values are at, shared by all lines (e.g. a log-spaced
            subset of 1..N); default ``1..len``.
        vlines: ``{label: i}`` vertical reference lines (e.g. a claimed effective rank or maximum rank).
        ylabel: the y axis label.
        claimed_label: the legend text of the power law (default ``claimed C i^-alpha, C = ...``).
    """
    plt = _pyplot()
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(5.2 if len(spectra) <= MAX_LEGEND_LINES else 5.8, 3.4))
        cmap = plt.get_cmap("viridis")
        n = len(spectra)
        top, size = 0.0, 1.0
        for k, (label, s) in enumerate(spectra.items()):
            s = _arr(s)
            i = _arr(index) if index is not None else np.arange(1, s.size + 1, dtype=float)
            keep = np.isfinite(s) & (s > 0)
            if keep.any():
                top = max(top, float(s[keep][0]))
                size = max(size, float(i[keep][-1]))
            ax.loglog(i[keep], s[keep], color=cmap(k / max(1, n - 1)), lw=1, label=label if n <= MAX_LEGEND_LINES else None)
        if n > MAX_LEGEND_LINES:  # many layers: the colour map is the key, on a colour bar naming them
            _colour_bar(fig, ax, cmap, list(spectra))
        if claimed_alpha is not None:
            i = np.geomspace(1, size, 64)
            c = claimed_c if claimed_c is not None else top
            own_label = f"claimed $C\\,i^{{-{claimed_alpha:g}}}$, C = {c:.3g}"
            ax.loglog(i, c * i ** (-claimed_alpha), "k--", lw=1.2, label=claimed_label or own_label)
        for k, (label, x) in enumerate((vlines or {}).items()):
            ax.axvline(float(x), color=("#c62828", "#555", "#1565c0")[k % 3], ls=":", lw=1.2, label=label)
        ax.set_xlabel("index i")
        ax.set_ylabel(ylabel, parse_math=_math(ylabel))
        ax.set_title(title, fontsize=10, parse_math=False)
        _legend(ax, own=[own_label] if claimed_alpha is not None and not claimed_label else (),
                fontsize=7, frameon=False)
        return _svg(fig)


def _log_ticks(ax, lo: float, hi: float) -> None:
    """Label a log x axis from ``lo`` to ``hi`` (> 0) with plain numbers (``5``, ``10``, ``20``) at 1, 2 and
    5 times each power of ten (more steps over less than a decade), and no minor-tick labels: matplotlib's
    own labels of the minor ticks ("2×10¹3×10¹4×10¹") run into each other."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    subs = (1.0, 2.0, 5.0) if hi / lo > 8 else (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 7.0)
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=subs))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def _place_apart(ax, items: Sequence[tuple[float, str]], *, fontsize: float = 7, color: str = "#555",
                 step: float = 10.0) -> int:
    """Write each ``(x, text)`` just above the axes at data ``x``, centred, on the lowest row (``step``
    points apart) where it comes no closer than 8 points to a text placed before (measured with the
    renderer); return how many
    rows were used. Texts are data: drawn without mathtext."""
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    placed: list = []
    rows = 0
    for x, label in sorted(items):
        for row in range(len(items) + 1):
            t = ax.annotate(label, xy=(x, 1.0), xycoords=("data", "axes fraction"), xytext=(0, 2 + row * step),
                            textcoords="offset points", ha="center", va="bottom", fontsize=fontsize, color=color,
                            annotation_clip=False)
            t.set_parse_math(False)
            box = t.get_window_extent(renderer).padded(4 * fig.dpi / 72)  # a gap of 4 points on each side
            if not any(box.overlaps(b) for b in placed):
                placed.append(box)
                rows = max(rows, row + 1)
                break
            t.remove()
    return rows


@_closing
def rank_breaks_svg(breaks: Sequence[Mapping], thresholds: Mapping[str, float] | None = None,
                    title: str = "logit gap at which the causal attention matrix loses rank") -> str:
    """Break points: per dtype and device, the logit gap at which the matrix stops being full rank.

    Each point is labelled with its gap on its right; each threshold is a dotted line labelled above the
    axes, the labels set on rows so that none overlaps another (:func:`_place_apart`); the log axis is
    labelled with plain numbers (:func:`_log_ticks`).

    Args:
        breaks: ``[{"dtype": "float16", "device": "cpu", "gap": 11.1, "N": 64 (optional)}, ...]``;
            ``gap`` in logit units (natural log), the smallest gap at which the rank dropped.
        thresholds: ``{dtype: gap}`` reference lines, e.g. the IEEE underflow/rounding thresholds
            ``-ln(eps/2)`` or ``-ln(smallest subnormal)`` for each dtype.
    """
    plt = _pyplot()
    with plt.rc_context(_RC):
        labels = [f"{b['dtype']} ({b.get('device', 'cpu')})" for b in breaks]
        gaps = [float(b["gap"]) for b in breaks]
        marks = dict(thresholds or {})
        fig, ax = plt.subplots(figsize=(5.6, 0.36 * len(breaks) + 1.3))
        y = np.arange(len(breaks))[::-1]
        ax.scatter(gaps, y, color="#c62828", zorder=3)
        for yy, g in zip(y, gaps, strict=True):
            ax.annotate(f"{g:.3g}", xy=(g, yy), xytext=(5, 0), textcoords="offset points", ha="left", va="center",
                        fontsize=7)
        for g in marks.values():
            ax.axvline(float(g), color="#555", ls=":", lw=1)
        values = [v for v in [*gaps, *map(float, marks.values())] if v > 0]
        lo, hi = (min(values), max(values)) if values else (1.0, 10.0)
        ax.set_xscale("log")
        ax.set_xlim(lo / 1.15, hi * 1.35)  # room for the labels right of the points
        _log_ticks(ax, lo / 1.15, hi * 1.35)
        ax.set_yticks(y, labels, parse_math=False)  # dtype and device names are data
        ax.set_xlabel("logit gap (nats)")
        ax.set_ylim(-0.6, len(breaks) - 0.4)
        fig.canvas.draw()
        rows = _place_apart(ax, [(float(g), f"IEEE {dt}: {float(g):.3g}") for dt, g in marks.items()])
        ax.set_title(title, fontsize=10, parse_math=False, pad=6 + 10 * rows)
        return _svg(fig)


@_closing
def sparsity_curve_svg(x: Sequence[float], closed_form, *, quadrature=None, quad_x=None, mc_x=None, mc_y=None,
                       mc_err=None, xlabel: str = r"$\gamma = \sigma\,\Vert q\Vert$", title: str = "sparsity S",
                       logx: bool = False) -> str:
    """004's sparsity curves: the closed form, the quadrature and the Monte Carlo points with error bars.

    Every series field is either one sequence or ``{label: sequence}`` (one curve per label, e.g.
    ``"beta = -1"``; a label's quadrature and Monte Carlo points take its curve's colour).

    Args:
        x: abscissae (length n), e.g. gamma = sigma |q| (004, kexue.fm/archives/9889).
        closed_form: S at x (length n each), in [0, 1].
        quadrature: S by numerical quadrature, at ``quad_x`` (its own abscissae, same keys) or, without
            ``quad_x``, at x; optional.
        mc_x, mc_y, mc_err: sampled points, their S and error half-widths (same lengths), optional.
        logx: a log x axis.
    """
    curves = _series(closed_form)
    quad, qx = _series(quadrature), _series(quad_x)
    mx, my, me = _series(mc_x), _series(mc_y), _series(mc_err)
    plt = _pyplot()
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(5.2, 3.2))
        colours = {}
        xs = _arr(x)
        for label, y in curves.items():
            (line,) = ax.plot(xs, y, lw=1.6, label=label or "closed form")
            colours[label] = line.get_color()
        for label, y in quad.items():
            ax.plot(qx.get(label, xs), y, ls="none", marker="D", ms=4, mfc="none", color=colours.get(label, "#ef6c00"))
        for label, y in my.items():
            ax.errorbar(mx[label], y, yerr=me.get(label), fmt="o", ms=3, capsize=2, color=colours.get(label, "#2e7d32"))
        # the legend's markers in grey: a point's colour is its curve's
        if any(curves):
            ax.plot([], [], color="#555", lw=1.6, label="lines: closed form")
        if quad:
            ax.plot([], [], ls="none", marker="D", ms=4, mfc="none", color="#555", label="quadrature")
        if my:
            ax.errorbar([], [], yerr=[], fmt="o", ms=3, capsize=2, color="#555", label="Monte Carlo")
        if logx:
            ax.set_xscale("log")
        ax.set_xlabel(xlabel, parse_math=_math(xlabel))
        ax.set_ylabel("S")
        ax.set_title(title, fontsize=10, parse_math=False)
        _legend(ax, fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside: curves fill the axes
        return _svg(fig)


@_closing
def decay_sparsity_svg(n: Sequence[float], S: Mapping[str, Sequence[float]], title: str = "S(a) against n", *,
                       closed_form: Mapping[str, Sequence[float]] | None = None,
                       bound: Mapping[str, Sequence[float]] | None = None) -> str:
    """S(a) of decay attention ``a = (lambda^{n-1}, ..., lambda, 1)`` against the sequence length n
    (004, kexue.fm/archives/9889, "线性衰减"), one colour per decay rate.

    Args:
        n: sequence lengths (length m, > 0; log axes).
        S: ``{label (e.g. "lambda = 0.9"): S computed from the vector at each n (length m)}``, drawn as points.
        closed_form: ``{label: the printed closed form at each n}``, drawn as lines (optional).
        bound: ``{label: the printed upper bound at each n}``, drawn dashed (optional).
    """
    plt = _pyplot()
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(5.2, 3.2))
        ns = _arr(n)
        for label, s in S.items():
            (pts,) = ax.loglog(ns, _arr(s), marker="o", ms=3, ls="none" if closed_form else "-", lw=1.2, label=label)
            c = pts.get_color()
            if closed_form and label in closed_form:
                ax.loglog(ns, _arr(closed_form[label]), color=c, lw=1.1)
            if bound and label in bound:
                ax.loglog(ns, _arr(bound[label]), color=c, lw=1, ls="--")
        if closed_form:  # legend entries in grey: each line has its lambda's colour
            ax.plot([], [], color="#555", lw=1.1, label="closed form")
        if bound:
            ax.plot([], [], color="#555", lw=1, ls="--", label="bound")
        ax.set_xlabel("n")
        ax.set_ylabel("S(a)")
        ax.set_title(title, fontsize=10, parse_math=False)
        _legend(ax, fontsize=7, frameon=False)
        return _svg(fig)


@_closing
def curve_svg(x: Sequence[float], series: Mapping[str, Sequence[float]], *, xlabel: str = "x", ylabel: str = "y",
              title: str = "", logx: bool = False, logy: bool = False) -> str:
    """Any other evidence that is a curve: ``{label: y at x}`` lines over one x axis (same lengths)."""
    plt = _pyplot()
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(5.2, 3.2))
        for label, y in series.items():
            ax.plot(x, y, lw=1.3, label=label)
        ax.set_xscale("log" if logx else "linear")
        ax.set_yscale("log" if logy else "linear")
        ax.set_xlabel(xlabel, parse_math=False)
        ax.set_ylabel(ylabel, parse_math=False)
        ax.set_title(title, fontsize=10, parse_math=False)
        if len(series) > 1:
            _legend(ax, fontsize=7, frameon=False)
        return _svg(fig)


def _ticks_overlap(ax, axis: str = "x") -> bool:
    """Whether two drawn tick labels of ``ax``'s ``axis`` overlap (after a draw; measured with the renderer)."""
    renderer = ax.figure.canvas.get_renderer()
    labels = [t for t in (ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()) if t.get_text()]
    boxes = [t.get_window_extent(renderer) for t in labels]
    return any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])


def failure_profile_alt(profile: Mapping) -> str:
    """One sentence that says what :func:`failure_profile_svg` draws, for the plot's alt text (``aria-label``
    in ``claims.html``, the image text of the link in ``claims.md``): the failures at each value of the
    swept parameter and the boundary; ``""`` for a profile without a sweep."""
    sweep = profile.get("sweep")
    if not sweep:
        return ""
    counts = ", ".join(f"{f} of {t} at {v:g}" for v, t, f in zip(sweep["values"], sweep["trials"], sweep["failures"],
                                                                 strict=True))
    text = (f"Failure profile against {sweep['parameter']}: {profile.get('failures')} of {profile.get('trials')} "
            f"draws fail ({profile.get('class')}); failures by {sweep['parameter']}: {counts}")
    if sweep.get("boundary") is not None:
        text += f"; boundary at {sweep['parameter']} = {sweep['boundary']:g}"
        text += f" ({sweep['boundary_label']})" if sweep.get("boundary_label") else ""
    return text + "."


@_closing
def failure_profile_svg(profile: Mapping) -> str:
    """A failure profile's failing fraction against the parameter its draws were taken at several values of:
    one point a value, ``100 * failures_k / trials_k`` percent (the draws the reading broke), joined by a line,
    each labelled ``failures_k/trials_k`` where the labels fit apart (else none: the counts are in
    :func:`failure_profile_alt`); the boundary (a value of the parameter, when the profile names one) a dotted
    line labelled above the axes. A positive parameter spanning a factor of 8 or more is drawn on a log axis
    (powers of two, sizes and scales), ticked at the values when their labels fit.

    Args:
        profile: ``{"class", "setting", "trials", "failures", "summary", "sweep"}`` as
            :meth:`attention_claims.framework.evidence.CheckLog.failure_profile` keeps it; ``sweep`` is
            ``{"parameter", "values", "trials", "failures"}`` (equal lengths), optionally ``"boundary"`` and
            ``"boundary_label"``.

    Raises:
        ValueError: the profile has no sweep, or a malformed one
            (:func:`attention_claims.framework.evidence.check_sweep`).
    """
    from ..evidence import check_sweep

    if not profile.get("sweep"):
        raise ValueError("failure profile has no sweep to draw (the draws at one setting are text only)")
    sweep = check_sweep(profile["sweep"])
    x = np.array(sweep["values"], dtype=float)
    t = np.array(sweep["trials"], dtype=float)
    f = np.array(sweep["failures"], dtype=float)
    pct = 100.0 * f / t
    plt = _pyplot()
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(4.6, 2.9))
        ax.plot(x, pct, color=VERDICT_COLOURS["false"], marker="o", ms=4, lw=1.2, zorder=3)
        logx = x.size >= 2 and x.min() > 0 and x.max() / x.min() >= 8
        if logx:
            ax.set_xscale("log")
        pad = (np.log10(x.max() / x.min()) if logx else (x.max() - x.min())) * 0.06 or 0.5
        lo, hi = ((x.min() / 10 ** pad, x.max() * 10 ** pad) if logx else (x.min() - pad, x.max() + pad))
        b = sweep.get("boundary")
        if b is not None and (not logx or b > 0):
            lo, hi = min(lo, b / 10 ** pad if logx else b - pad), max(hi, b * 10 ** pad if logx else b + pad)
        ax.set_xlim(lo, hi)
        ax.set_ylim(-6, 118)
        ax.set_yticks([0, 25, 50, 75, 100])
        ax.set_ylabel("draws that fail (%)")
        ax.set_xlabel(sweep["parameter"], parse_math=False)  # a parameter's name is data
        if x.size <= 12:  # ticked at the values when their labels fit apart
            from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator

            ax.xaxis.set_major_locator(FixedLocator(x))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
            ax.xaxis.set_minor_locator(NullLocator())
            ax.xaxis.set_minor_formatter(NullFormatter())
            fig.canvas.draw()
            if _ticks_overlap(ax):
                if logx:
                    _log_ticks(ax, lo, hi)
                else:
                    from matplotlib.ticker import AutoLocator, ScalarFormatter

                    ax.xaxis.set_major_locator(AutoLocator())
                    ax.xaxis.set_major_formatter(ScalarFormatter())
        elif logx:
            _log_ticks(ax, lo, hi)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        if x.size <= 12:  # the counts beside their points, all or none
            marks = []
            for xi, yi, fi, ti in zip(x, pct, f, t, strict=True):
                above = yi < 80
                marks.append(ax.annotate(f"{int(fi)}/{int(ti)}", xy=(xi, yi), xytext=(0, 6 if above else -6),
                                         textcoords="offset points", ha="center", va="bottom" if above else "top",
                                         fontsize=7, color="#333"))
            boxes = [m.get_window_extent(renderer).padded(2) for m in marks]
            line_boxes = [lab.get_window_extent(renderer) for lab in ax.get_xticklabels() + ax.get_yticklabels()
                          if lab.get_text()]
            if any(a.overlaps(c) for i, a in enumerate(boxes) for c in boxes[i + 1:] + line_boxes):
                for m in marks:
                    m.remove()
        rows = 0
        if b is not None and (not logx or b > 0):
            ax.axvline(float(b), color="#555", ls=":", lw=1.2, zorder=2)
            label = sweep.get("boundary_label") or f"boundary {float(b):g}"
            rows = _place_apart(ax, [(float(b), label)])
        title = f"{profile.get('failures')} of {profile.get('trials')} draws fail ({profile.get('class')})"
        ax.set_title(title, fontsize=10, parse_math=False, pad=6 + 10 * rows)
        return _svg(fig)


def _heatmap(d):
    return layer_head_heatmap_svg(d["measures"], d["model"], d["N"], d.get("names"))


def _spectra(d):
    return spectra_svg(d["spectra"], claimed_alpha=d.get("claimed_alpha"), claimed_c=d.get("claimed_c"),
                       title=d.get("title", "singular values"), index=d.get("index"), vlines=d.get("vlines"),
                       ylabel=d.get("ylabel", r"$\sigma_i$"), claimed_label=d.get("claimed_label"))


def _breaks(d):
    return rank_breaks_svg(d["breaks"], d.get("thresholds"))


def _sparsity(d):
    return sparsity_curve_svg(d["x"], d["closed_form"], quadrature=d.get("quadrature"), quad_x=d.get("quad_x"),
                              mc_x=d.get("mc_x"), mc_y=d.get("mc_y"), mc_err=d.get("mc_err"),
                              title=d.get("title", "sparsity S"), logx=d.get("logx", False),
                              **({"xlabel": d["xlabel"]} if "xlabel" in d else {}))


def _decay(d):
    return decay_sparsity_svg(d["n"], d["S"], d.get("title", "S(a) against n"), closed_form=d.get("closed_form"),
                              bound=d.get("bound"))


def _curve(d):
    return curve_svg(d["x"], d["series"], xlabel=d.get("xlabel", "x"), ylabel=d.get("ylabel", "y"),
                     title=d.get("title", ""), logx=d.get("logx", False), logy=d.get("logy", False))


PLOT_KINDS = {"layer_head_heatmap": _heatmap, "spectra": _spectra, "rank_breaks": _breaks,
              "sparsity_curve": _sparsity, "decay_sparsity": _decay, "curve": _curve}
"""The plot kinds a check can attach (``CheckLog.plot``), each with its drawing function."""

_DRAWERS = {**PLOT_KINDS, "verdict_counts": lambda d: verdict_counts_svg(dict(d["rows"])),
            "failure_profile": failure_profile_svg}
"""What :func:`render_plot` draws: the checks' kinds, the report's own verdict chart, and a failure profile
with a sweep (data: the profile, :func:`failure_profile_svg`)."""


_RENDERED: dict[str, str] = {}


def plot_cache_dir() -> Path:
    """Where drawn plots are kept between processes: ``<cache root>/plots`` when it may be trusted,
    else a private folder of this process (:func:`attention_claims._cache.cache_dir`).

    Raises:
        OSError: the private folder cannot be created.
        attention_claims._cache.UntrustedCacheWarning: as an error only where warnings are made errors.
    """
    return cache_dir("plots")


_SVG_NS = "{http://www.w3.org/2000/svg}"
_LOCAL_HREF = re.compile(r"#[\w.:-]*|data:image/(?:png|jpeg);base64,[A-Za-z0-9+/=\s]*")
_URL = re.compile(r"url\(\s*(?!['\"]?#)", re.I)


def safe_svg(svg: str) -> bool:
    """Whether ``svg`` may be shown as a plot of this module: well-formed XML without a DOCTYPE or
    entities, whose root is an SVG ``<svg>`` with a ``viewBox``, with no ``<script>`` or
    ``<foreignObject>`` element, no ``on*`` event attribute, no link other than to a fragment of itself
    (``#id``) or an inline PNG/JPEG (``data:image/...;base64``), and no ``javascript:``, ``@import``
    or external ``url(...)`` anywhere. What matplotlib draws passes (:func:`render_plot`)."""
    if not svg.startswith("<svg") or "<!" in svg or re.search(r"javascript:|@import", svg, re.I):
        return False
    try:
        root = ET.fromstring(svg)
    except ET.ParseError:
        return False
    if root.tag != f"{_SVG_NS}svg" or not root.get("viewBox"):
        return False
    for el in root.iter():
        tag = el.tag.rsplit("}", 1)[-1].lower() if isinstance(el.tag, str) else ""
        if tag in ("script", "foreignobject", "iframe", "embed", "object") or _URL.search(el.text or ""):
            return False
        for name, value in el.attrib.items():
            local = name.rsplit("}", 1)[-1].lower()
            if local.startswith("on") or _URL.search(value):
                return False
            if local in ("href", "src") and not _LOCAL_HREF.fullmatch(value.strip()):
                return False
    return True


@functools.cache
def code_digest() -> str:
    """What a drawn plot depends on besides its data: SHA-256 (hex) of this module's source and
    matplotlib's version."""
    matplotlib_version = installed_version("matplotlib", "_version.py")
    return hashlib.sha256(Path(__file__).read_bytes() + matplotlib_version.encode()).hexdigest()


def plot_key(spec: Mapping) -> str:
    """The cache key of a plot spec: SHA-256 of the drawing code (:func:`code_digest`) and the spec's
    canonical JSON (kind and data; sorted keys), so an edit of either draws it again."""
    text = json.dumps({"kind": spec["kind"], "data": spec["data"]}, sort_keys=True, allow_nan=False)
    return hashlib.sha256((code_digest() + text).encode()).hexdigest()


def render_plot(spec: Mapping) -> str:
    """The SVG for a plot spec ``{"kind": one of PLOT_KINDS, "verdict_counts" or "failure_profile", "data": {...}}``
    (see each function; ``verdict_counts`` takes ``{"rows": [[row name, {verdict: count}], ...]}``, top row
    first, for :func:`verdict_counts_svg`: a list, because the cache key sorts dict keys; ``failure_profile``
    a failure profile with a sweep, :func:`failure_profile_svg`).

    Drawing a log-axis plot takes matplotlib about 0.3-0.9 s, so a drawn plot is kept: in memory for
    the process and as ``<plot_cache_dir()>/<plot_key(spec)>.svg`` across processes (a checked entry,
    :func:`attention_claims._cache.write_checked`; used only when :func:`safe_svg`, else drawn again).
    The plugin draws each plot in the process that ran its check (an xdist worker, in parallel with the
    other checks; :func:`warm`), so the report writer only reads them.

    Raises:
        KeyError: unknown kind or a missing data field.
    """
    key = plot_key(spec)
    if key in _RENDERED:
        return _RENDERED[key]
    path = plot_cache_dir() / f"{key}.svg"
    svg = read_checked(path)
    if not svg or not safe_svg(svg):
        svg = _DRAWERS[spec["kind"]](spec["data"])
        write_checked(path, svg)  # a read-only cache only costs time
    if len(_RENDERED) > 256:
        _RENDERED.clear()
    _RENDERED[key] = svg
    return svg


def warm(specs) -> None:
    """Draw each plot spec of ``specs`` into the cache (:func:`render_plot`), ignoring one that cannot be
    drawn here (the report writer draws it again and reports the error there)."""
    for spec in specs:
        try:
            render_plot(spec)
        except Exception:  # noqa: BLE001 - a plot that fails to draw must not change a check's outcome
            pass
