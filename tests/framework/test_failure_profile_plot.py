"""A failure profile drawn where it has a parameter it depends on (issue 46, "Plots"): the profile's optional
``sweep`` (its draws split by the value of one parameter) is checked where a check attaches it and where a
report is read back; the report draws it as the failing fraction against that parameter with the boundary
marked (a figure file in the report's figures folder, inline in ``claims.html`` with alt text, linked from
``claims.md``); and a card shows the profile's sentence once, the plot beside it. A profile at one setting
stays text only."""

from __future__ import annotations

import copy
import html as htmllib
import json
import re
from pathlib import Path

import jsonschema
import pytest
from render_fixture import fixture_report

from attention_claims.framework.evidence import CheckLog, check_sweep
from attention_claims.framework.render import model, plots, render_html, render_markdown
from attention_claims.framework.report_model import ClaimEntry, failure_profile_from_json
from attention_claims.testkit.failure_profiles import record_profile, sweep_counts

SWEEP = {"parameter": "logit scale", "values": [1.0, 2.0, 4.0, 8.0], "trials": [30, 30, 30, 30],
         "failures": [0, 1, 2, 2], "boundary": 3.0, "boundary_label": "boundary: scale 3"}
PROFILE = {"class": "at-document-parameters", "setting": "N=64, d=16, h=4", "trials": 120, "failures": 5,
           "summary": "planted sweep", "sweep": SWEEP}
FLAT = {"class": "generic", "setting": "N=512, d=64", "trials": 30, "failures": 30, "summary": "planted flat"}


# -- the sweep: built from per-draw values, checked, carried through the report ---------------------------

def test_record_profile_by_parameter_groups_the_draws():
    log = CheckLog()
    failed = [False] * 30 + [True] + [False] * 29 + [True, True] + [False] * 28 + [True, True] + [False] * 28
    scales = [s for s in (8.0, 1.0, 2.0, 4.0) for _ in range(30)]  # any order: grouped by value, increasing
    cls = record_profile(log, failed, setting="N=64", summary="s", by=("logit scale", scales), boundary=3,
                         boundary_label="boundary: scale 3")
    assert cls == "at-document-parameters" and log.profile["failures"] == 5
    assert log.profile["sweep"] == {"parameter": "logit scale", "values": [1.0, 2.0, 4.0, 8.0],
                                    "trials": [30, 30, 30, 30], "failures": [1, 2, 2, 0], "boundary": 3.0,
                                    "boundary_label": "boundary: scale 3"}
    record_profile(log, [True, False], setting="N=64", summary="s")  # without by: no sweep, as before
    assert "sweep" not in log.profile
    assert sweep_counts([False, True, True, True], [1, 1, 2, 2], "logit scale") == {
        "parameter": "logit scale", "values": [1.0, 2.0], "trials": [2, 2], "failures": [1, 2]}
    with pytest.raises(ValueError, match="3 values for 2 draws"):
        sweep_counts([True, False], [1, 2, 3], "N")


@pytest.mark.parametrize("bad, message", [
    (dict(SWEEP, values=[1, 2, 2, 8]), "strictly increasing"),
    (dict(SWEEP, trials=[30, 30, 30]), "of one length"),
    (dict(SWEEP, failures=[0, 1, 2, 31]), "0 <= failures <= trials"),
    (dict(SWEEP, failures=[0, 1, 2, 1]), "add up to 4, not the profile's 5"),
    (dict(SWEEP, parameter=" "), "name the parameter"),
    (dict(SWEEP, boundary="soon"), "boundary: must be a finite number"),
    (dict(SWEEP, colour="red"), "unknown colour"),
    ({k: v for k, v in SWEEP.items() if k != "values"}, "missing values"),
])
def test_a_malformed_sweep_is_refused_naming_the_field(bad, message):
    with pytest.raises(ValueError, match=message):
        CheckLog().failure_profile("at-document-parameters", setting="N=64", trials=120, failures=5, summary="s",
                                   sweep=bad)
    with pytest.raises(ValueError, match=message):  # and where a report is read back
        failure_profile_from_json(dict(PROFILE, sweep=bad))


def test_the_sweep_is_kept_in_the_report_and_its_schema():
    assert failure_profile_from_json(PROFILE) == PROFILE
    assert failure_profile_from_json(FLAT) == FLAT  # no sweep key added
    assert check_sweep(SWEEP) == SWEEP
    schema = json.loads((Path(__file__).resolve().parents[2] / "docs" / "claims.schema.json").read_text("utf-8"))
    validator = jsonschema.Draft202012Validator(schema["$defs"]["failure_profile"])
    validator.validate(PROFILE)
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(dict(PROFILE, sweep=dict(SWEEP, colour="red")))
    report = _report()
    entry = ClaimEntry.from_json(report["claims"][0])
    assert entry.failure_profile == PROFILE and entry.readings[0].failure_profile == PROFILE


# -- the plot ---------------------------------------------------------------------------------------------

def test_profile_plot_spec_only_with_a_sweep():
    assert model.profile_plot_spec(PROFILE) == {"kind": "failure_profile", "data": PROFILE}
    assert model.profile_plot_spec(FLAT) is None and model.profile_plot_spec(None) is None
    with pytest.raises(ValueError, match="no sweep"):
        plots.failure_profile_svg(FLAT)


def test_the_plot_draws_the_failing_fraction_and_the_boundary():
    svg = plots.failure_profile_svg(PROFILE)
    assert plots.safe_svg(svg)
    for text in ("logit scale", "draws that fail (%)", "boundary: scale 3", "5 of 120 draws fail", "1/30", "2/30"):
        assert text in svg, text
    assert "stroke-dasharray" in svg  # the dotted boundary line
    alt = plots.failure_profile_alt(PROFILE)
    assert alt.startswith("Failure profile against logit scale: 5 of 120 draws fail")
    assert "1 of 30 at 2" in alt and "boundary at logit scale = 3" in alt
    assert plots.failure_profile_alt(FLAT) == ""


# -- the card: the text once, the plot beside it ---------------------------------------------------------

def _report() -> dict:
    report = fixture_report()
    false, caveat = report["claims"][0], report["claims"][1]
    false["failure_profile"] = copy.deepcopy(PROFILE)
    false["readings"][0]["failure_profile"] = copy.deepcopy(PROFILE)
    layers = {"parameter": "layer", "values": [0, 1, 2], "trials": [9, 9, 9], "failures": [0, 3, 9]}
    caveat["readings"][1]["failure_profile"] = {"class": "at-document-parameters", "setting": "toy, 3 layers x 9 heads",
                                                "trials": 27, "failures": 12, "summary": "per head", "sweep": layers}
    return report


def _card(page: str, cid: str) -> str:
    start = page.index(f'id="c-{cid}"')
    return page[start:page.index("</details>\n", start)]


def _visible(fragment: str) -> str:
    """The text a reader sees: no tags, no attribute values (tooltips, alt text), no inline SVG."""
    fragment = re.sub(r"<svg.*?</svg>", "", fragment, flags=re.S)
    return htmllib.unescape(re.sub(r"<[^>]*>", " ", fragment))


def test_html_card_shows_the_text_once_with_the_plot_beside_it(tmp_path):
    page = render_html(_report(), report_dir=tmp_path)
    card = _card(page, "toy-false")
    text = model.failure_profile_text(PROFILE)  # "fails in 5 of 120 draws at N=64, d=16, h=4"
    assert _visible(card).count(text) == 1  # in the body; the summary line has the badge only
    assert _visible(card).count("5/120") == 1  # the badge, once (the summary line)
    assert _visible(card).count("planted sweep") == 1  # not again in the as-stated reading's row
    block = re.search(r'<div class="failure-profile with-plot">(.*?)</div>', card, re.S)
    assert block and text in block.group(1)  # the plot in the same block as the text
    figure = re.search(r'<figure class="plot profile-plot" data-kind="failure_profile" role="img" aria-label="([^"]+)">'
                       r'<svg[^>]*class="plot"', block.group(1))
    assert figure and htmllib.unescape(figure.group(1)) == plots.failure_profile_alt(PROFILE)
    assert card.count('data-kind="failure_profile"') == 1
    caveat = _card(page, "toy-caveat")  # a reading's profile with a sweep: drawn in its row, with its text
    assert caveat.count('data-kind="failure_profile"') == 1 and "fails in 12 of 27 draws" in _visible(caveat)


def test_a_profile_at_one_setting_stays_text_only(tmp_path):
    report = fixture_report()
    report["claims"][0]["failure_profile"] = FLAT
    report["claims"][0]["readings"][0]["failure_profile"] = FLAT
    page = render_html(report, report_dir=tmp_path)
    card = _card(page, "toy-false")
    assert 'data-kind="failure_profile"' not in card and '<div class="failure-profile">' in card
    assert _visible(card).count(model.failure_profile_text(FLAT)) == 1
    assert not [p for p in model.plot_files(report["claims"][0]) if p[1]["kind"] == "failure_profile"]


def test_figure_file_written_and_linked_from_claims_md(tmp_path):
    from attention_claims.framework.report import write_plot_files

    report = _report()
    files = {p.relative_to(tmp_path).as_posix(): p for p in write_plot_files(report, tmp_path)}
    rel = model.profile_plot_file(report["claims"][0], PROFILE)
    assert rel is not None and model.figure_path(rel) == rel and rel in files
    assert plots.safe_svg(files[rel].read_text("utf-8").split("\n", 1)[1])
    assert "boundary: scale 3" in files[rel].read_text("utf-8")
    caveat_rel = model.profile_plot_file(report["claims"][1], report["claims"][1]["readings"][1]["failure_profile"])
    assert caveat_rel in files
    md = render_markdown(report)
    assert md.count(f"]({rel})") == 2  # one linked image ([![alt](file)](file)), beside the profile's line
    line = next(x for x in md.splitlines() if f"]({rel})" in x)
    assert line.startswith("[![Failure profile against logit scale: 5 of 120 draws fail")
    assert md.count(model.failure_profile_text(PROFILE)) == 1  # one text line; the summary line is compact
    assert md.count(f"]({caveat_rel})") == 2 and "(reading `cuda-float16`)" in md


def test_a_report_with_a_bad_sweep_is_refused_naming_where():
    """A merged input's sweep is checked with its plots (report_schema.check_plots), not at drawing time."""
    from attention_claims.framework.report_schema import ReportInputError, check_plots

    report = _report()
    report["claims"][1]["readings"][1]["failure_profile"]["sweep"]["failures"] = [0, 3, 8]  # adds up to 11, not 12
    with pytest.raises(ReportInputError, match=r"^in\.json: the failure profile at \$\.claims\[1\]\.readings\[1\]"
                                               r"\.failure_profile cannot be drawn \(sweep\.failures: add up to 11"):
        check_plots(report, "in.json")
    report["claims"][1]["readings"][1]["failure_profile"]["sweep"]["failures"] = [0, 3, 9]
    assert check_plots(report, "in.json") is report


SWEEP_CHECKS = {"test_sweep.py": '''
import pytest
from attention_claims.testkit import refute
from attention_claims.testkit.failure_profiles import record_profile

@pytest.mark.claim("f", reading="exact")
def test_false(claim_log):
    claim_log.example(N=2)
    failed = [False] * 9 + [True] * 1 + [True] * 10
    record_profile(claim_log, failed, setting="N=8..16", summary="planted", by=("N", [8] * 10 + [16] * 10),
                   boundary=12, boundary_label="N = 12")
    refute("planted failure", example={"N": 2}, certified=True, certificate="planted")
'''}


def test_profile_plot_through_the_plugin(planted, monkeypatch, tmp_path):
    """A check's sweep reaches the report; the plot is drawn in the check's own process while the check is
    reported (like its plots: writing the report only reads it), written as a figure file that claims.html
    inlines and claims.md links."""
    import os

    from conftest import record_toml

    monkeypatch.setenv("ATTENTION_CLAIMS_CACHE", str(tmp_path / "cache"))  # nothing drawn before
    monkeypatch.setattr(plots, "_RENDERED", {})
    drawn_during = []
    original = plots._DRAWERS["failure_profile"]

    def spy(data):
        drawn_during.append(os.environ.get("PYTEST_CURRENT_TEST", ""))
        return original(data)

    monkeypatch.setitem(plots._DRAWERS, "failure_profile", spy)
    run = planted({"f.toml": record_toml("f", expected="false")}, SWEEP_CHECKS)
    assert run.result.ret == 0, run.result.stdout.str()
    f = run.claim("f")
    assert f["failure_profile"]["sweep"] == {"parameter": "N", "values": [8.0, 16.0], "trials": [10, 10],
                                             "failures": [1, 10], "boundary": 12.0, "boundary_label": "N = 12"}
    assert len(drawn_during) == 1 and "test_sweep.py::test_false" in drawn_during[0], drawn_during
    rel = model.profile_plot_file(f, f["failure_profile"])
    assert (run.report_dir / rel).is_file() and "N = 12" in (run.report_dir / rel).read_text("utf-8")
    page = (run.report_dir / "claims.html").read_text("utf-8")
    assert page.count('data-kind="failure_profile"') == 1
    assert f"]({rel})" in (run.report_dir / "claims.md").read_text("utf-8")
