"""A partial run's reports say what the run decided (issue 46): the headline counts this run's own
decisions, "not selected" and "could not run here" are different words in the terminal, ``claims.md`` and
``claims.html``, every status the chart draws is in both legends, and decided claims sort first."""

from __future__ import annotations

import copy
import re

from render_fixture import DOC, DOC_TEXT, fixture_report

from attention_claims.framework.render import model, plots, render_html, render_markdown

NOW = "2026-02-01T10:00:00+00:00"
EARLIER = "2026-01-15T09:30:00+00:00"


def partial_report() -> dict:
    """The fixture's five claims as a subset run: ``toy-false`` decided now, ``toy-true`` carried from an
    earlier run, ``toy-caveat`` selected but its as-stated reading skipped here (undecided, decided now),
    ``toy-unchecked`` and ``toy-paper`` never decided (not selected)."""
    r = copy.deepcopy(fixture_report())
    r["generated"] = NOW
    r["run"] = {"complete": False, "partial": True, "interrupted": False, "exitstatus": 0, "errors": [],
                "updated": EARLIER}
    by = {c["id"]: c for c in r["claims"]}
    by["toy-false"]["decided"] = {"at": NOW, "profile": "ci", "run": "partial"}
    by["toy-true"].update(selected=False, decided={"at": EARLIER, "profile": "ci", "run": "full"})
    caveat = by["toy-caveat"]
    caveat.update(verdict="undecided", reason="the as-stated reading 'exact' could not run here",
                  decided={"at": NOW, "profile": "ci", "run": "partial"}, selected=True)
    caveat["readings"][0]["outcome"] = "skipped"
    for cid in ("toy-unchecked", "toy-paper"):
        by[cid].update(verdict="undecided", selected=False, decided=None, readings=[],
                       reason="not selected in this run (--claims-select / --claims-document / -k / paths) and never "
                              "decided before")
    r.pop("counts")
    return r


def test_status_tells_not_selected_from_could_not_run_here():
    by = {c["id"]: c for c in partial_report()["claims"]}
    assert model.status(by["toy-caveat"]) == "undecided"
    assert model.status(by["toy-paper"]) == model.NOT_SELECTED
    assert model.status(by["toy-true"]) == "true"  # carried: its last verdict
    assert model.STATUS_MEANING["undecided"].startswith("could not run here")
    assert "not selected" not in model.STATUS_MEANING["undecided"]


def test_headline_counts_this_runs_decisions():
    title, detail = model.headline(partial_report())
    assert title == "2 of 5 claims decided in this run"
    assert detail == "3 not decided by this run: 1 carried from 2026-01-15 09:30 UTC; 2 never decided (not selected)."
    one = partial_report()
    one["claims"] = [c for c in one["claims"] if c["id"] != "toy-true"]
    assert model.headline(one) == ("2 of 4 claims decided in this run", "2 never decided (not selected).")
    title, detail = model.headline(fixture_report())  # a complete run (a report without decided stamps too)
    assert title == "5 claims about attention matrices, decided by computation" and detail == ""


def _chart_legend(svg: str) -> list[str]:
    """The legend texts of the verdict chart (matplotlib writes each as a <text> element)."""
    return [t for t in re.findall(r"<text[^>]*>([^<]+)</text>", svg) if not t.strip().isdigit()]


def test_html_partial_run(tmp_path):
    html = render_html(partial_report(), sources={DOC: DOC_TEXT}, report_dir=tmp_path)
    h1 = re.search(r"<h1>(.*?)</h1>", html).group(1)
    assert h1 == "2 of 5 claims decided in this run"
    assert "1 carried from 2026-01-15 09:30 UTC; 2 never decided (not selected)" in html
    assert "160 claims" not in html and "decided by computation" not in h1
    legend = re.search(r'<dl class="legend">(.*?)</dl>', html, re.S).group(1)
    shown = re.findall(r"<dt[^>]*>([^<]+)</dt>", legend)
    chart = re.search(r'<figure class="chart.*?</figure>', html, re.S).group(0)
    drawn = {v for v in model.STATUS_ORDER if re.search(rf">\s*{v}\s*<", chart)}
    assert {"undecided", "not selected", "false", "true"} <= drawn
    assert drawn <= set(shown), (drawn, shown)  # every status the chart draws is in the page's legend
    assert "could not run here" in legend and "never decided" in legend
    # the pills and the filter name both statuses apart
    assert 'data-filter-verdict="not selected"' in html and 'data-filter-verdict="undecided"' in html
    order = re.findall(r'<details class="claim [^"]*" id="c-([^"]+)"', html)
    assert order == ["toy-false", "toy-true", "toy-caveat", "toy-unchecked", "toy-paper"]  # decided first
    assert re.search(r'id="c-toy-paper"[^>]*data-status="not selected"', html)
    assert re.search(r'id="c-toy-caveat"[^>]*data-status="undecided"', html)


def test_markdown_partial_run():
    md = render_markdown(partial_report())
    assert md.splitlines()[2].startswith("**2 of 5 claims decided in this run.** 3 not decided by this run: "
                                         "1 carried from 2026-01-15 09:30 UTC")
    assert re.findall(r"^## (.*)", md, re.M) == ["False (1)", "True (1)", "Undecided: could not run here (1)",
                                                 "Not selected: never decided (2)"]
    header = next(line for line in md.splitlines() if line.startswith("| document |"))
    assert "undecided" in header and "not selected" in header
    assert "`undecided`: could not run here" in md and "`not selected`: never decided" in md


def test_chart_draws_every_status_with_a_legend_entry():
    rows = {"003": {"false": 1, "undecided": 2, "not selected": 5}, "all": {"true": 1, "not selected": 5}}
    texts = _chart_legend(plots.verdict_counts_svg(rows))
    assert {"false", "undecided", "not selected", "true"} <= set(texts)


def test_terminal_names_could_not_run_here_apart_from_not_selected():
    from attention_claims.framework.plugin import terminal_lines
    from attention_claims.framework.report_model import ClaimEntry, Environment, Report, Run, Trust

    data = partial_report()
    claims = [ClaimEntry.from_json(c) for c in data["claims"]]
    env = Environment(python="3.11", platform="x", torch=None, hypothesis="6", mpmath="1", python_flint=None,
                      devices=["cpu"], hypothesis_profile="ci")
    report = Report(generated=NOW, environment=env, run=Run(complete=False, partial=True, interrupted=False,
                                                            exitstatus=0), trust=Trust(), claims=claims,
                    fresh=frozenset({"toy-false", "toy-caveat"}))
    tally = terminal_lines(report, [], None)[-1][0]
    assert tally == ("verdicts: 1 false, 1 undecided (could not run here); 1 other claim keeps its last decision; "
                     "2 claims not selected"), tally


def test_failure_profile_is_shown_once_and_counts_are_grammatical(tmp_path):
    report = fixture_report()
    false = report["claims"][0]
    profile = {"class": "generic", "setting": "N = 64, logits ~ N(0, 1)", "trials": 200, "failures": 197,
               "summary": "fails on almost every draw"}
    false["failure_profile"] = profile
    false["readings"][0]["failure_profile"] = profile
    false["readings"][1]["examples"] = 1
    text = model.failure_profile_text(profile)
    html = render_html(report, report_dir=tmp_path)
    # the summary line's badge (its title) and the failure-profile paragraph's text (issue 46: no second badge
    # there); not again in the as-stated reading's row
    assert html.count(text) == 2
    assert ">1 example<" in html and ">1 examples<" not in html
    md = render_markdown(report)
    assert md.count(text) == 1 and "(1 example)" in md and "(1 examples)" not in md
