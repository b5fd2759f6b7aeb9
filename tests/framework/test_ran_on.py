"""Where each reading ran (issue 26): every reading that ran records the run it came from
(``ran_on``: host, device, torch, CUDA, driver, commit, profile, date), the report lists its runs, and
the HTML shows a GPU reading's device next to its outcome."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from test_plugin import checks

from attention_claims.framework.render import render_html
from attention_claims.framework.report import reading_ran_on
from attention_claims.framework.report_model import RanOn
from conftest import record_toml

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "claims.schema.json").read_text(encoding="utf-8"))


def test_every_reading_that_ran_says_where(planted):
    records = {"c.toml": record_toml("c", expected="caveat", readings=(("exact", True), ("fp16", False)))}
    files = checks(exact="pass", fp16="refute")
    files["test_skip.py"] = '''
import pytest

@pytest.mark.claim("c", reading="fp32")
def test_fp32():
    pytest.skip("no such device here")
'''
    records["c.toml"] = record_toml("c", expected="caveat", readings=(("exact", True), ("fp16", False), ("fp32", False)))
    run = planted(records, files)
    report = run.report
    jsonschema.validate(report, SCHEMA)
    (this_run,) = report["runs"]
    assert this_run["device"] == "cpu" and this_run["profile"] == "ci" and this_run["host"]
    readings = {r["name"]: r for r in run.claim("c")["readings"]}
    for name in ("exact", "fp16"):
        ran = readings[name]["ran_on"]
        assert ran["device"] == "cpu" and ran["date"] == this_run["date"] and ran["host"] == this_run["host"]
    assert readings["fp32"]["outcome"] == "skipped" and readings["fp32"]["ran_on"] is None


def _gpu_run() -> RanOn:
    return RanOn(host="gpu-runner", device="cpu, cuda:0 (NVIDIA H100 80GB HBM3)", torch="2.13.0", cuda="12.8",
                 driver="570.86.15", commit="abc123", profile="deep", date="2026-11-24T00:00:00+00:00")


class _Reading:
    def __init__(self, device):
        self.device = device


def test_a_cuda_reading_ran_on_the_gpu_by_name():
    assert reading_ran_on(_gpu_run(), _Reading("cuda")).device == "NVIDIA H100 80GB HBM3"
    assert reading_ran_on(_gpu_run(), _Reading("cpu")).device == "cpu"
    assert reading_ran_on(_gpu_run(), _Reading(None)).device == "cpu"


def test_the_html_shows_a_gpu_reading_next_to_its_outcome():
    from dataclasses import asdict

    from render_fixture import fixture_report

    data = fixture_report()
    reading = data["claims"][0]["readings"][0]
    reading["ran_on"] = asdict(reading_ran_on(_gpu_run(), _Reading("cuda")))
    html = render_html(data)
    assert "on NVIDIA H100 80GB HBM3" in html and "ran-on-gpu" in html and "driver 570.86.15" in html
