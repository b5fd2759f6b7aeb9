"""Issue 33 (loose end of finding 4): the texts of a plot that come from the data (its title, series and
reference-line labels, a dtype's name, axis labels a check passes) are drawn as text, never parsed as
mathtext, so ``$\\frac{`` in a report's plot title merges (exit 0) instead of stopping ``merge`` (exit 4);
and a drawing that fails closes its matplotlib figure."""

from __future__ import annotations

import copy
import json

import pytest

from attention_claims.framework.render import plots
from attention_claims.tools import merge as merge_tool
from conftest import small_project_checks as _checks
from conftest import small_project_records as _records

BAD = "$\\frac{$ costs $5"


@pytest.mark.parametrize("plot", [
    {"kind": "curve", "data": {"x": [1, 2], "series": {BAD: [1, 2], "b": [2, 1]}, "title": BAD, "xlabel": BAD,
                               "ylabel": BAD}},
    {"kind": "spectra", "data": {"spectra": {BAD: [1.0, 0.5, 0.25]}, "title": BAD, "ylabel": BAD,
                                 "vlines": {BAD: 2}, "claimed_alpha": 1.0, "claimed_label": BAD}},
    {"kind": "rank_breaks", "data": {"breaks": [{"dtype": BAD, "device": BAD, "gap": 10.0}],
                                     "thresholds": {BAD: 11.0}}},
    {"kind": "sparsity_curve", "data": {"x": [0.1, 1.0], "closed_form": {BAD: [0.5, 0.6]}, "title": BAD,
                                        "xlabel": BAD}},
    {"kind": "decay_sparsity", "data": {"n": [1, 10], "S": {BAD: [0.5, 0.4]}, "title": BAD}},
    {"kind": "layer_head_heatmap", "data": {"model": BAD, "N": 8, "measures": {"m": [[1.0, 2.0]]},
                                            "names": {"m": BAD}}},
], ids=lambda p: p["kind"])
def test_a_plot_whose_texts_hold_a_dollar_merges(plot, planted, pytester, capsys):
    run = planted(_records(), _checks())
    report = json.loads((run.report_dir / "claims.json").read_text(encoding="utf-8"))
    claim = next(c for c in report["claims"] if c["id"] == "alpha-claim")
    claim["readings"][0]["plots"] = [copy.deepcopy(plot)]
    path = pytester.path / "with-plot.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    out = pytester.path / "merged"
    capsys.readouterr()
    status = merge_tool.main([str(path), "-o", str(out), "--claims-dir", str(pytester.path / "records"),
                              "--claims-sources", str(pytester.path / "sources")])
    err = capsys.readouterr().err
    assert status == 0, err
    svgs = [p.read_text(encoding="utf-8") for p in (out / "figures").glob("*.svg")]
    assert any("\\frac{" in s for s in svgs)  # drawn as written (svg.fonttype none keeps the text)


def test_the_modules_own_labels_stay_mathtext():
    """The default y label ``$\\sigma_i$`` and power-law legend are this module's mathtext: typeset."""
    svg = plots.spectra_svg({"L0": [1.0, 0.5]}, claimed_alpha=1.0)
    assert "σ" in svg and "\\sigma" not in svg and "$C" not in svg


def test_a_drawing_that_fails_closes_its_figure():
    plt = plots._pyplot()
    before = plt.get_fignums()
    with pytest.raises(ValueError):
        plots.curve_svg([1, 2], {"a": [1, 2, 3]})  # x and y of different lengths
    with pytest.raises(AttributeError):
        plots.spectra_svg("not a mapping")
    assert plt.get_fignums() == before
