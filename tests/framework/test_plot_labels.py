"""Every plot kind renders with labels that can be read (issue 46): no two tick labels of an axis overlap,
no two texts placed on a plot (point labels, reference-line labels, titles, legend entries) overlap, and
many layers are drawn as a colour map with a colour bar instead of a legend of two. Measured on the figure
itself, with matplotlib's text bounding boxes, just before it is written as SVG."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from render_fixture import plot_specs

from attention_claims.framework.render import plots


def _texts(fig):
    """``(renderer, [texts])``: every text a reader must tell apart on ``fig``, in one group: each axes' tick
    labels (major and minor; colour bars included), axis labels, titles, texts placed on the axes, legend
    entries, the figure's title."""
    renderer = fig.canvas.get_renderer()
    out = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            drawn = axis._update_ticks()  # the ticks inside the view limits: those matplotlib draws
            out += [t for tick in drawn for t in (tick.label1, tick.label2)
                    if tick.get_visible() and t.get_visible() and t.get_text()]
            out += [axis.label] if axis.label.get_visible() and axis.label.get_text() else []
        out += [t for t in ax.texts if t.get_visible() and t.get_text()]
        out += [t for t in (ax.title, ax._left_title, ax._right_title) if t.get_text()]
        if ax.get_legend():
            out += [t for t in ax.get_legend().get_texts() if t.get_text()]
    for legend in fig.legends:
        out += [t for t in legend.get_texts() if t.get_text()]
    if fig._suptitle is not None:
        out.append(fig._suptitle)
    return renderer, [out]


def _overlaps(renderer, texts) -> list[tuple[str, str]]:
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
    return [(a, b) for (a, ba), (b, bb) in itertools.combinations(boxes, 2) if ba.overlaps(bb)]


@pytest.fixture
def drawn(monkeypatch):
    """The figures the plot functions save, kept (their overlaps measured) while the SVG is written."""
    figures = []
    original = plots._svg

    def keep(fig, *args, **kwargs):
        fig.canvas.draw()
        renderer, groups = _texts(fig)
        figures.append({"overlaps": [o for g in groups for o in _overlaps(renderer, g)],
                        "colorbars": sum(1 for ax in fig.axes if ax.get_label() == "<colorbar>"),
                        "legend": [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]})
        return original(fig, *args, **kwargs)

    monkeypatch.setattr(plots, "_svg", keep)
    return figures


def _draw(spec):
    plots._DRAWERS[spec["kind"]](spec["data"])


@pytest.mark.parametrize("spec", plot_specs(), ids=lambda s: s["kind"])
def test_no_labels_overlap(drawn, spec):
    _draw(spec)
    assert drawn and drawn[0]["overlaps"] == [], drawn[0]["overlaps"]


RANK_BREAKS = {"kind": "rank_breaks", "data": {  # the rank-breaks plot the checks attach: close thresholds and points
    "breaks": [{"dtype": "float16", "device": "cpu", "gap": 8.3}, {"dtype": "bfloat16", "device": "cpu", "gap": 5.6},
               {"dtype": "float32", "device": "cpu", "gap": 16.6}, {"dtype": "float64", "device": "cpu", "gap": 36.7},
               {"dtype": "float64", "device": "cpu", "gap": 745.1}],
    "thresholds": {"float16": 7.6, "bfloat16": 5.5, "float32": 15.9, "float64": 36.0, "float64 subnormal": 745.1}}}


NARROW_BREAKS = {"kind": "rank_breaks", "data": {  # less than a decade: matplotlib labels the minor ticks too
    "breaks": [{"dtype": "float16", "device": "cpu", "gap": 17.3}, {"dtype": "float32", "device": "cpu", "gap": 16.6},
               {"dtype": "float32", "device": "cuda", "gap": 41.0}],
    "thresholds": {"float16": 16.6, "float32": 16.9, "float64": 36.7}}}


@pytest.mark.parametrize("spec", [RANK_BREAKS, NARROW_BREAKS], ids=["decades", "narrow"])
def test_rank_breaks_labels_avoid_each_other(drawn, spec):
    _draw(spec)
    assert drawn[0]["overlaps"] == [], drawn[0]["overlaps"]


def test_verdict_chart_labels(drawn):
    rows = {f"{k:03d}": {"false": k, "caveat": 3, "true": 20, "unchecked": 1, "undecided": 2, "not selected": 40}
            for k in range(5)}
    rows["all (each claim once)"] = {"false": 10, "caveat": 15, "true": 100, "not selected": 200}
    plots.verdict_counts_svg(rows)
    assert drawn[0]["overlaps"] == [], drawn[0]["overlaps"]


def test_many_layers_are_a_colour_map_with_a_colour_bar(drawn):
    spectra = {f"L{i}": (np.arange(1, 65.0) ** -(0.5 + i / 30)).tolist() for i in range(30)}
    plots.spectra_svg(spectra, claimed_alpha=1.0, title="SmolLM2, N = 64")
    fig = drawn[0]
    assert fig["colorbars"] == 1
    assert not any(t.startswith("L") for t in fig["legend"]), fig["legend"]  # the layers are on the colour bar
    assert fig["overlaps"] == []
    drawn.clear()
    plots.spectra_svg({"layer 0": [1, 0.5, 0.25], "layer 1": [1, 0.3, 0.1]})  # a few: a legend
    assert drawn[0]["colorbars"] == 0 and drawn[0]["legend"][:2] == ["layer 0", "layer 1"]


def _profile(parameter, values, trials, failures, **boundary):
    sweep = {"parameter": parameter, "values": values, "trials": trials, "failures": failures, **boundary}
    return {"kind": "failure_profile", "data": {
        "class": "at-document-parameters", "setting": "s", "trials": sum(trials), "failures": sum(failures),
        "summary": "", "sweep": sweep}}


FAILURE_PROFILES = [  # the failure profile's plot (issue 46): the forms the checks attach, and hard cases
    _profile("logit scale", [1, 2, 4, 8], [30] * 4, [0, 1, 2, 2], boundary=3, boundary_label="boundary: scale 3"),
    _profile("layer", list(range(30)), [9] * 30, [i % 10 for i in range(30)]),
    _profile("N", [128, 256, 512, 1024, 2048], [270] * 5, [52, 53, 53, 55, 55], boundary=512,
             boundary_label="the document's N = 512"),
    # close values, labels at 100% and 0% side by side: the tick and count labels must give way
    _profile("beta", [1.0, 1.01, 1.02, 1.03, 1.04, 1.05, 1.06], [3] * 7, [0, 3, 0, 3, 0, 3, 0], boundary=1.025),
    _profile("temperature", [round(1 + k / 1000, 3) for k in range(12)], [300] * 12, [150] * 12, boundary=1.0055),
]


@pytest.mark.parametrize("spec", FAILURE_PROFILES, ids=["scales", "layers", "sizes", "close", "crowded"])
def test_failure_profile_labels_do_not_overlap(drawn, spec):
    _draw(spec)
    assert drawn[0]["overlaps"] == [], drawn[0]["overlaps"]
