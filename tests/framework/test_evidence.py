"""``CheckLog.plot``: the plot data a check attaches for the HTML report to draw."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from attention_claims.framework.evidence import PLOT_KINDS, CheckLog
from attention_claims.framework.render import plots

HEATMAP = {"model": "m", "N": 8, "measures": {"eff_rank_90": np.array([[1.0, math.nan], [3.0, 4.0]]),
                                              "energy_top10": [[0.5, 0.6], [0.7, np.float32(0.8)]],
                                              "numerical_rank": np.array([[8, 8], [7, 8]])}}


def test_the_plot_kinds_are_the_ones_the_renderer_draws():
    assert set(PLOT_KINDS) == set(plots.PLOT_KINDS)


def test_plot_data_becomes_plain_json_and_renders():
    log = CheckLog()
    log.plot("layer_head_heatmap", HEATMAP)
    (spec,) = log.plots
    assert spec["kind"] == "layer_head_heatmap"
    m = spec["data"]["measures"]
    assert m["eff_rank_90"] == [[1.0, None], [3.0, 4.0]]  # NaN -> null: a blank cell
    assert m["numerical_rank"] == [[8, 8], [7, 8]] and isinstance(m["energy_top10"][1][1], float)
    json.dumps(log.plots, allow_nan=False)  # what the plugin sends through user_properties
    assert plots.render_plot(json.loads(json.dumps(spec))).startswith("<svg")


def test_the_same_plot_is_kept_once_in_order():
    log = CheckLog()
    breaks = {"breaks": [{"dtype": "float16", "device": "cpu", "gap": 17.3}], "thresholds": {"float16": 17.3}}
    log.plot("rank_breaks", breaks)
    log.plot("curve", {"x": [1, 2], "series": {"y": [3, 4]}})
    log.plot("rank_breaks", dict(breaks))
    assert [p["kind"] for p in log.plots] == ["rank_breaks", "curve"]


def test_an_unknown_kind_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown plot kind 'histogram'.*layer_head_heatmap.*rank_breaks"):
        CheckLog().plot("histogram", {"x": [1]})


def test_missing_fields_and_non_json_values_are_refused():
    with pytest.raises(ValueError, match=r"layer_head_heatmap plot data lacks N, measures"):
        CheckLog().plot("layer_head_heatmap", {"model": "m"})
    with pytest.raises(TypeError, match=r"must be a dict"):
        CheckLog().plot("curve", [1, 2])
    with pytest.raises(TypeError, match=r"plot data\['series'\]\['y'\] is a object"):
        CheckLog().plot("curve", {"x": [1], "series": {"y": object()}})
    log = CheckLog()
    with pytest.raises(TypeError):
        log.plot("curve", {"x": [1], "series": {"y": {1, 2}}})
    assert log.plots == []
