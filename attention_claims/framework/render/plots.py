"""Plots for the report, drawn with matplotlib (Agg) and returned as inline SVG text.

Every function takes explicit data (documented shapes and units) and returns an ``<svg>``
string to embed; none reads files or the network. :func:`render_plot` dispatches a plot spec
``{"kind": ..., "title": ..., "data": {...}}`` carried by a claim or reading in the report
(``plots`` field) to the function of that kind, so the report model decides what is drawn and
the renderer only how.
"""

from __future__ import annotations

import base64
import io
import re
from collections.abc import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

__all__ = [
    "VERDICT_COLOURS", "verdict_counts_svg", "layer_head_heatmap_svg", "spectra_svg", "rank_breaks_svg",
    "sparsity_curve_svg", "decay_sparsity_svg", "curve_svg", "render_plot", "png_data_uri", "PLOT_KINDS",
]

VERDICT_COLOURS = {"false": "#c62828", "caveat": "#d48806", "true": "#2e7d32", "unchecked": "#78909c",
                   "undecided": "#7b1fa2"}
_RC = {"svg.fonttype": "none", "font.size": 9, "axes.spines.top": False, "axes.spines.right": False,
       "svg.hashsalt": "attention-claims", "font.family": "sans-serif"}


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    text = buf.getvalue()
    text = re.sub(r"<!--.*?-->", "", text[text.index("<svg"):], flags=re.S)  # matplotlib's comments: raw labels
    # scale with the page: drop the fixed size, keep the viewBox
    return re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r'<svg\1 class="plot"', text, count=1)


def png_data_uri(data: bytes) -> str:
    """``data:image/png;base64,...`` for the bytes of a PNG file."""
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def verdict_counts_svg(by_document: Mapping[str, Mapping[str, int]], labels: Mapping[str, str] | None = None,
                       order: Sequence[str] = ("false", "caveat", "true", "unchecked", "undecided")) -> str:
    """Horizontal stacked bars: one row per document (and an ``all`` row if given), one segment per verdict.

    Args:
        by_document: ``{row name: {verdict: count}}`` in display order (top first); counts >= 0.
        labels: optional display names per row.
        order: the verdicts, left to right.
    """
    rows = list(by_document)
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(7.2, 0.32 * len(rows) + 0.7))
        y = np.arange(len(rows))[::-1]
        left = np.zeros(len(rows))
        for v in order:
            vals = np.array([by_document[r].get(v, 0) for r in rows], dtype=float)
            if not vals.any():
                continue
            ax.barh(y, vals, left=left, color=VERDICT_COLOURS.get(v, "#999"), height=0.7, label=v,
                    edgecolor="white", linewidth=0.6)
            for yy, lo, val in zip(y, left, vals, strict=True):
                if val >= 2:
                    ax.text(lo + val / 2, yy, f"{int(val)}", ha="center", va="center", color="white", fontsize=8)
            left += vals
        ax.set_yticks(y, [(labels or {}).get(r, r) for r in rows])
        ax.set_xlabel("claims")
        ax.legend(ncol=len(order), loc="lower left", bbox_to_anchor=(0, 1.0), frameon=False, fontsize=8)
        ax.spines["left"].set_visible(False)
        ax.tick_params(axis="y", length=0)
        return _svg(fig)


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
    with plt.rc_context(_RC):
        arrays = [np.asarray(measures[k], dtype=float) for k in keys]
        L, H = arrays[0].shape
        fig, axes = plt.subplots(1, len(keys), figsize=(2.6 * len(keys) + 0.4, max(2.2, 0.16 * L + 1.2)),
                                 squeeze=False)
        for ax, k, a in zip(axes[0], keys, arrays, strict=True):
            im = ax.imshow(a, aspect="auto", cmap="viridis", interpolation="nearest")
            ax.set_title((names or {}).get(k, k), fontsize=9)
            ax.set_xlabel("head")
            ax.set_ylabel("layer")
            ax.set_xticks(range(0, H, max(1, H // 6)))
            ax.set_yticks(range(0, L, max(1, L // 8)))
            fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
        fig.suptitle(f"{model}, N = {N}: per layer and head", fontsize=10)
        return _svg(fig)


def spectra_svg(spectra: Mapping[str, Sequence[float]], *, claimed_alpha: float | None = None,
                claimed_c: float | None = None, title: str = "singular values") -> str:
    """Singular-value spectra on log-log axes, one line per layer (or head), against a claimed power law.

    Args:
        spectra: ``{label: sigma_1 >= ... >= sigma_N}`` (each length N, non-negative; zeros are
            dropped from the log plot).
        claimed_alpha, claimed_c: draw ``C i^-alpha`` (table 11.3.1's decay) when given; C defaults
            to the largest sigma_1.
    """
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(5.2, 3.4))
        cmap = plt.get_cmap("viridis")
        n = len(spectra)
        top = 0.0
        for k, (label, s) in enumerate(spectra.items()):
            s = np.asarray(s, dtype=float)
            i = np.arange(1, s.size + 1)
            keep = s > 0
            top = max(top, float(s[0]) if s.size else 0.0)
            ax.loglog(i[keep], s[keep], color=cmap(k / max(1, n - 1)), lw=1, label=label if n <= 8 else None)
        if claimed_alpha is not None:
            size = max(len(s) for s in spectra.values())
            i = np.arange(1, size + 1)
            c = claimed_c if claimed_c is not None else top
            ax.loglog(i, c * i ** (-claimed_alpha), "k--", lw=1.2, label=f"claimed $C\\,i^{{-{claimed_alpha:g}}}$")
        ax.set_xlabel("index i")
        ax.set_ylabel(r"$\sigma_i$")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=7, frameon=False)
        return _svg(fig)


def rank_breaks_svg(breaks: Sequence[Mapping], thresholds: Mapping[str, float] | None = None,
                    title: str = "logit gap at which the causal attention matrix loses rank") -> str:
    """Break points: per dtype and device, the logit gap at which the matrix stops being full rank.

    Args:
        breaks: ``[{"dtype": "float16", "device": "cpu", "gap": 11.1, "N": 64 (optional)}, ...]``;
            ``gap`` in logit units (natural log), the smallest gap at which the rank dropped.
        thresholds: ``{dtype: gap}`` reference lines, e.g. the IEEE underflow/rounding thresholds
            ``-ln(eps/2)`` or ``-ln(smallest subnormal)`` for each dtype.
    """
    with plt.rc_context(_RC):
        labels = [f"{b['dtype']} ({b.get('device', 'cpu')})" for b in breaks]
        gaps = [float(b["gap"]) for b in breaks]
        fig, ax = plt.subplots(figsize=(5.6, 0.36 * len(breaks) + 1.0))
        y = np.arange(len(breaks))[::-1]
        ax.scatter(gaps, y, color="#c62828", zorder=3)
        for yy, g in zip(y, gaps, strict=True):
            ax.text(g, yy + 0.18, f"{g:.3g}", ha="center", fontsize=7)
        for k, (dt, g) in enumerate((thresholds or {}).items()):
            ax.axvline(g, color="#555", ls=":", lw=1)
            ax.text(g, len(breaks) - 0.4 + 0.0 * k, f" IEEE {dt}: {g:.3g}", rotation=90, va="top", fontsize=7,
                    color="#555")
        ax.set_yticks(y, labels)
        ax.set_xlabel("logit gap (nats)")
        ax.set_xscale("log")
        ax.set_title(title, fontsize=10)
        ax.set_ylim(-0.6, len(breaks) - 0.2)
        return _svg(fig)


def sparsity_curve_svg(x: Sequence[float], closed_form: Sequence[float], *, quadrature: Sequence[float] | None = None,
                       mc_x: Sequence[float] | None = None, mc_y: Sequence[float] | None = None,
                       mc_err: Sequence[float] | None = None, xlabel: str = r"$\gamma = \sigma\,\Vert q\Vert$",
                       title: str = "sparsity S") -> str:
    """004's sparsity curves: the closed form, the quadrature and the Monte Carlo points with error bars.

    Args:
        x: abscissae (length n), e.g. gamma; closed_form: S at x (length n), in [0, 1].
        quadrature: S by numerical quadrature at x (length n), optional.
        mc_x, mc_y, mc_err: sampled points, their S and error half-widths (same length m), optional.
    """
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(5.2, 3.2))
        ax.plot(x, closed_form, color="#1565c0", lw=1.6, label="closed form")
        if quadrature is not None:
            ax.plot(x, quadrature, ls="none", marker=".", ms=3, color="#ef6c00", label="quadrature")
        if mc_x is not None and mc_y is not None:
            ax.errorbar(mc_x, mc_y, yerr=mc_err, fmt="o", ms=3, color="#2e7d32", capsize=2, label="Monte Carlo")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("S")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=7, frameon=False)
        return _svg(fig)


def decay_sparsity_svg(n: Sequence[float], S: Mapping[str, Sequence[float]], title: str = "S(a) against n") -> str:
    """S(a) of decay attention against the sequence length n, one line per decay rate.

    Args:
        n: sequence lengths (length m, > 0; log axis).
        S: ``{label (e.g. "lambda = 0.9"): S at each n (length m)}``.
    """
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(5.2, 3.2))
        for label, s in S.items():
            ax.semilogx(n, s, marker=".", ms=3, lw=1.2, label=label)
        ax.set_xlabel("n")
        ax.set_ylabel("S(a)")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=7, frameon=False)
        return _svg(fig)


def curve_svg(x: Sequence[float], series: Mapping[str, Sequence[float]], *, xlabel: str = "x", ylabel: str = "y",
              title: str = "", logx: bool = False, logy: bool = False) -> str:
    """Any other evidence that is a curve: ``{label: y at x}`` lines over one x axis (same lengths)."""
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(5.2, 3.2))
        for label, y in series.items():
            ax.plot(x, y, lw=1.3, label=label)
        ax.set_xscale("log" if logx else "linear")
        ax.set_yscale("log" if logy else "linear")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=10)
        if len(series) > 1:
            ax.legend(fontsize=7, frameon=False)
        return _svg(fig)


def _heatmap(d):
    return layer_head_heatmap_svg(d["measures"], d["model"], d["N"], d.get("names"))


def _spectra(d):
    return spectra_svg(d["spectra"], claimed_alpha=d.get("claimed_alpha"), claimed_c=d.get("claimed_c"),
                       title=d.get("title", "singular values"))


def _breaks(d):
    return rank_breaks_svg(d["breaks"], d.get("thresholds"))


def _sparsity(d):
    return sparsity_curve_svg(d["x"], d["closed_form"], quadrature=d.get("quadrature"), mc_x=d.get("mc_x"),
                              mc_y=d.get("mc_y"), mc_err=d.get("mc_err"), title=d.get("title", "sparsity S"))


def _decay(d):
    return decay_sparsity_svg(d["n"], d["S"])


def _curve(d):
    return curve_svg(d["x"], d["series"], xlabel=d.get("xlabel", "x"), ylabel=d.get("ylabel", "y"),
                     title=d.get("title", ""), logx=d.get("logx", False), logy=d.get("logy", False))


PLOT_KINDS = {"layer_head_heatmap": _heatmap, "spectra": _spectra, "rank_breaks": _breaks,
              "sparsity_curve": _sparsity, "decay_sparsity": _decay, "curve": _curve}


def render_plot(spec: Mapping) -> str:
    """The SVG for a plot spec ``{"kind": one of PLOT_KINDS, "data": {...}}`` (see each function).

    Raises:
        KeyError: unknown kind or a missing data field.
    """
    return PLOT_KINDS[spec["kind"]](spec["data"])
