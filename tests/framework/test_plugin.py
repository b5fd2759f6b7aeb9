"""The plugin end to end on planted records (issue 2, "Done when"): verdicts, exit status,
errors versus counterexamples, malformed input, xdist."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import REPO_SOURCES, record_toml

PASS = '''
import pytest
from attention_claims.testkit import refute

@pytest.mark.claim("c", reading="{reading}")
def test_{reading}(claim_log):
    claim_log.example(x=1.0)
'''

REFUTE = '''
import pytest
from attention_claims.testkit import refute

@pytest.mark.claim("c", reading="{reading}")
def test_{reading}(claim_log):
    claim_log.example(x=2.0)
    refute("planted failure", example={{"N": 2}}, certified={certified}, certificate="planted")
'''


def checks(**kinds):
    """``checks(exact="pass", fp32="refute")`` -> one check file per reading."""
    out = {}
    for reading, kind in kinds.items():
        src = {"pass": PASS, "refute": REFUTE.replace("{certified}", "True"),
               "refute-uncertified": REFUTE.replace("{certified}", "False")}[kind]
        out[f"test_{reading}.py"] = src.format(reading=reading)
    return out


def test_certified_counterexample_to_as_stated_is_false(planted):
    run = planted({"c.toml": record_toml("c", expected="false")}, checks(exact="refute"))
    assert run.result.ret == 0, run.result.stdout.str()
    c = run.claim("c")
    assert c["verdict"] == "false"
    (r,) = c["readings"]
    assert r["outcome"] == "failed" and r["certified"] is True
    assert r["counterexample"]["message"] == "planted failure"
    assert r["counterexample"]["example"] == {"N": 2}
    assert "pytest" in r["counterexample"]["reproduce"]


def test_uncertified_counterexample_is_not_false(planted):
    run = planted({"c.toml": record_toml("c", expected="false")}, checks(exact="refute-uncertified"))
    assert run.claim("c")["verdict"] == "undecided"
    assert run.result.ret != 0  # disagrees with expected


def test_as_stated_holds_other_fails_is_caveat(planted):
    rec = record_toml("c", expected="caveat", readings=(("exact", True), ("fp16", False)))
    run = planted({"c.toml": rec}, checks(exact="pass", fp16="refute"))
    assert run.result.ret == 0, run.result.stdout.str()
    c = run.claim("c")
    assert c["verdict"] == "caveat"
    assert "fp16" in c["reason"]


def test_all_hold_is_true_and_evidence_is_recorded(planted):
    rec = record_toml("c", expected="true", readings=(("exact", True), ("fp16", False)))
    run = planted({"c.toml": rec}, checks(exact="pass", fp16="pass"))
    assert run.result.ret == 0
    c = run.claim("c")
    assert c["verdict"] == "true"
    assert all(r["examples"] == 1 and "x = 1" in r["evidence"] for r in c["readings"])
    assert run.result.outlines[-1].startswith("verdicts: 1 true; report: ")
    assert "attention-claims verdicts" not in run.result.stdout.str()  # one line per claim only with -v


def test_verdict_that_differs_from_expected_fails_the_run(planted):
    run = planted({"c.toml": record_toml("c", expected="true")}, checks(exact="refute"))
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED
    assert run.claim("c")["verdict"] == "false"
    assert run.claim("c")["agrees"] is False
    run.result.stdout.fnmatch_lines(["*1 verdict disagrees with 'expected' or errored: c (false, expected true)",
                                     "verdicts: 1 false*"])


def test_counterexample_to_expected_true_is_a_test_failure(planted):
    run = planted({"c.toml": record_toml("c", expected="true")}, checks(exact="refute"))
    run.result.assert_outcomes(failed=1)


def test_counterexample_to_expected_false_is_xfail(planted):
    run = planted({"c.toml": record_toml("c", expected="false")}, checks(exact="refute"))
    run.result.assert_outcomes(xfailed=1)


def test_type_error_is_an_error_not_a_counterexample(planted):
    src = '''
import pytest

@pytest.mark.claim("c", reading="exact")
def test_exact():
    raise TypeError("a bug in the suite")
'''
    run = planted({"c.toml": record_toml("c", expected="false")}, {"test_x.py": src})
    assert run.result.ret != 0
    c = run.claim("c")
    assert c["verdict"] != "false"
    assert c["errors"] and "TypeError" in c["errors"][0]


def test_hypothesis_counterexample_is_shrunk_and_reported(planted):
    src = '''
import pytest
from hypothesis import given, strategies as st
from attention_claims.testkit import refute

@pytest.mark.claim("c", reading="exact")
@given(n=st.integers(0, 10**6))
def test_exact(n, claim_log):
    claim_log.example(n=n)
    if n >= 17:
        refute(f"n = {n} >= 17", example={"n": n}, certified=True, certificate="integer comparison")
'''
    run = planted({"c.toml": record_toml("c", expected="false")}, {"test_x.py": src})
    cx = run.claim("c")["readings"][0]["counterexample"]
    assert cx["example"] == {"n": 17}, cx  # shrunk to the smallest failing n
    assert "n=17" in (cx["hypothesis"] or "")


def test_a_claim_checks_failing_examples_make_no_hypothesis_patch(planted):
    """Hypothesis turns a failing test's examples into an ``@example`` patch (parsing the module with
    libcst, where installed): not for a claim check, whose counterexample is the report's; a plain
    test keeps it. A conftest hook that runs after the plugin's sees what Hypothesis's hook would."""
    src = '''
import pytest
from hypothesis import given, strategies as st
from attention_claims.testkit import refute

@pytest.mark.claim("c", reading="exact")
@given(n=st.integers(0, 100))
def test_exact(n, claim_log):
    if n >= 3:
        refute(f"n = {n} >= 3", example={"n": n}, certified=True, certificate="integer comparison")

@given(n=st.integers(0, 100))
def test_plain(n):
    assert n < 3
'''
    conftest = '''
import json
import pytest

@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_makereport(item, call):
    yield
    if call.when == "call":
        seen = getattr(item, "_hypothesis_failing_examples", None)
        with open("failing-examples.json", "a", encoding="utf-8") as f:
            f.write(json.dumps([item.name, seen]) + "\\n")
'''
    run = planted({"c.toml": record_toml("c", expected="false")}, {"test_x.py": src, "conftest.py": conftest})
    assert run.claim("c")["verdict"] == "false"
    lines = (run.report_dir.parent / "failing-examples.json").read_text(encoding="utf-8").splitlines()
    seen = dict(json.loads(line) for line in lines)
    assert seen["test_exact"] is None, seen
    assert seen["test_plain"], seen  # Hypothesis's own behaviour, kept for tests that are not claim checks


def test_skipped_cuda_reading_is_listed_and_does_not_count(planted):
    src = '''
import pytest

@pytest.mark.claim("c", reading="exact")
def test_exact():
    pass

@pytest.mark.claim("c", reading="cuda-fp16")
def test_cuda():
    pytest.skip("CUDA not available on this machine")
'''
    rec = record_toml("c", expected="caveat", readings=(("exact", True), ("cuda-fp16", False)))
    run = planted({"c.toml": rec}, {"test_x.py": src})
    c = run.claim("c")
    assert c["verdict"] == "true" and c["agrees"] is True  # a CUDA failure would have made it caveat
    assert c["readings"][1]["outcome"] == "skipped"
    assert "CUDA not available" in c["readings"][1]["evidence"]
    assert run.result.ret == 0


def test_markdown_and_html_reports_are_written(planted):
    run = planted({"c.toml": record_toml("c", expected="false", quote="原文")}, checks(exact="refute"))
    md = (run.report_dir / "claims.md").read_text(encoding="utf-8")
    html = (run.report_dir / "claims.html").read_text(encoding="utf-8")
    assert md.startswith("# attention-claims report") and "**1 claims: 1 false.**" in md
    assert "> 原文" in md and "planted failure" in md and '<details id="c">' in md
    assert '<details class="claim v-false"' in html and "planted failure" in html and "原文" in html
    # the source document is annotated: the quoted sentence carries the claim in its verdict's colour
    assert 'class="s v-false"' in html and 'data-claims="c"' in html


def test_markers_and_options_are_declared(pytester):
    markers = pytester.runpytest("--markers")
    markers.stdout.fnmatch_lines(["@pytest.mark.claim(id, reading=NAME)*claims_dir*"])
    assert "claims/records/" not in markers.stdout.str()  # the marker named a folder no project has
    pytester.runpytest("--help").stdout.fnmatch_lines(["*--claims-dir*", "*--claims-report-dir*"])


THREADS = '''
import os
import pytest

@pytest.mark.claim("p", reading="exact")
def test_threads():
    if os.environ.get("PLANTED_THREADS_LOG"):
        with open(os.environ["PLANTED_THREADS_LOG"], "a", encoding="utf-8") as f:
            f.write(" ".join(os.environ.get(v, "unset") for v in THREAD_VARIABLES) + "\\n")
'''


@pytest.mark.subprocess_run
def test_xdist_gives_the_same_report(planted, pytester, monkeypatch):
    """``-n 2`` and a serial run give the same report, on a project that exercises what crosses from a
    worker to the controller: a caveat from three readings, plots attached by a check, and one check
    deciding two claims with a failure profile (their serial-only twins are the tests of each feature
    below and tests/framework/test_failure_profile.py). Each of the two workers gets its share of the cores for its BLAS and OpenMP threads."""

    from attention_claims.framework.plugin import THREAD_VARIABLES, available_cores

    for name in THREAD_VARIABLES:  # as a user's shell would have them: unset (a full run's controller sets them)
        monkeypatch.delenv(name, raising=False)
    records = {"c.toml": record_toml("c", expected="caveat", readings=(("exact", True), ("fp16", False), ("fp32", False))),
               "p.toml": record_toml("p"),
               "s.toml": record_toml("s", expected="false"),
               "t.toml": record_toml("t", expected="false", readings=(("other", True),))}
    files = checks(exact="pass", fp16="refute", fp32="pass")
    files["test_plot.py"] = PLOT.replace('claim("c"', 'claim("p"')
    files["test_both.py"] = TWO_MARKERS.replace('claim("c"', 'claim("s"').replace('claim("d"', 'claim("t"').format(
        body='claim_log.failure_profile("generic", setting="N=512, d=64", trials=4, failures=4, summary="x")\n    '
             'refute("shared failure", example={"N": 3}, certified=True)')
    files["test_threads.py"] = THREADS.replace("THREAD_VARIABLES", repr(THREAD_VARIABLES))
    serial = planted(records, files).report
    (pytester.path / "out" / "claims.json").unlink()
    log = pytester.path / "threads.log"
    monkeypatch.setenv("PLANTED_THREADS_LOG", str(log))
    run = planted(records, files, args=["-n", "2"], subprocess=True)
    parallel = run.report
    share = str(max(1, available_cores() // 2))
    assert log.read_text(encoding="utf-8").split() == [share] * len(THREAD_VARIABLES)

    def strip(rep):  # everything but the time each claim was decided, and when each reading ran
        return [{k: ([{f: x for f, x in r.items() if f != "ran_on"} for r in v] if k == "readings" else v)
                 for k, v in c.items() if k != "decided"} for c in rep["claims"]]

    assert parallel["environment"]["xdist_workers"] == 2
    assert json.dumps(strip(serial), sort_keys=True) == json.dumps(strip(parallel), sort_keys=True)
    assert [c["decided"]["run"] for c in parallel["claims"]] == ["full"] * 4
    assert run.claim("c")["verdict"] == "caveat"
    (r,) = run.claim("p")["readings"]
    assert [x["kind"] for x in r["plots"]] == ["layer_head_heatmap", "rank_breaks"]
    assert r["plots"][0]["data"]["measures"]["eff_rank_90"] == [[1.0, 2.0], [3.0, None]]
    html = (run.report_dir / "claims.html").read_text(encoding="utf-8")
    assert html.count('<figure class="plot" data-kind="layer_head_heatmap"><svg') == 1
    for cid, reading, param in (("s", "exact", "c"), ("t", "other", "d")):
        (r,) = run.claim(cid)["readings"]
        assert run.claim(cid)["verdict"] == "false" and r["name"] == reading
        assert r["checks"] == [f"test_both.py::test_both[{param}]"] and r["counterexample"]["message"] == "shared failure"
        assert r["failure_profile"] == run.claim(cid)["failure_profile"] == {  # crossed from a worker
            "class": "generic", "setting": "N=512, d=64", "trials": 4, "failures": 4, "summary": "x"}


FIGURE = '''
import pytest

@pytest.mark.claim("c", reading="exact")
def test_exact(claim_log):
    import os
    out = os.environ["PLANTED_FIGURE_DIR"]
    path = os.path.join(out, "figures", "f.png")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "wb").write(b"png")
    claim_log.example(x=1.0)
    claim_log.figure(path, "a planted figure")
'''


def test_figures_attached_by_a_check_are_embedded_in_the_report(planted, pytester, monkeypatch):
    monkeypatch.setenv("PLANTED_FIGURE_DIR", str(pytester.path / "out"))
    run = planted({"c.toml": record_toml("c")}, {"test_fig.py": FIGURE})
    assert run.result.ret == 0, run.result.stdout.str()
    (r,) = run.claim("c")["readings"]
    assert [f["path"] for f in r["figures"]] == ["figures/f.png"]
    assert r["figures"][0]["caption"] == "a planted figure"
    md = (run.report_dir / "claims.md").read_text(encoding="utf-8")
    assert "![a planted figure](figures/f.png)" in md
    html = (run.report_dir / "claims.html").read_text(encoding="utf-8")
    assert '<img src="data:image/png;base64,' in html and "a planted figure" in html  # inlined: self-contained


FIGURE_AS_DOCUMENTED = '''
import pytest

from attention_claims.framework import config

@pytest.mark.claim("c", reading="exact")
def test_exact(claim_log, tmp_path):
    path = config.current().report_dir / "figures" / "kept.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"png")
    (tmp_path / "elsewhere.png").write_bytes(b"png")
    claim_log.example(x=1.0)
    claim_log.figure(path, "in the figures folder")
    claim_log.figure(tmp_path / "elsewhere.png", "in tmp_path")
'''


def test_a_figure_is_embedded_where_the_docstring_says_and_listed_elsewhere(planted):
    """CheckLog.figure's docstring and docs/testkit.md: an image in the report folder's figures/ (found in a
    check through config.current(), which follows --claims-report-dir) is embedded; one in tmp_path is
    listed as not shown (the docstring once promised it embedded wherever it was)."""
    run = planted({"c.toml": record_toml("c")}, {"test_fig.py": FIGURE_AS_DOCUMENTED})
    assert run.result.ret == 0, run.result.stdout.str()
    (r,) = run.claim("c")["readings"]
    assert r["figures"][0]["path"] == "figures/kept.png" and (run.report_dir / "figures" / "kept.png").is_file()
    md = (run.report_dir / "claims.md").read_text(encoding="utf-8")
    assert "![in the figures folder](figures/kept.png)" in md
    assert "*Figure not shown: " in md and "elsewhere.png is not a file of the report's figures folder" in md


PLOT = '''
import numpy as np
import pytest

@pytest.mark.claim("c", reading="exact")
def test_exact(claim_log):
    claim_log.example(x=1.0)
    claim_log.plot("layer_head_heatmap", {"model": "m", "N": 4, "measures": {
        "eff_rank_90": np.array([[1.0, 2.0], [3.0, float("nan")]]), "energy_top10": [[0.5, 0.6], [0.7, 0.8]],
        "numerical_rank": np.array([[4, 4], [3, 4]])}})
    claim_log.plot("rank_breaks", {"breaks": [{"dtype": "float16", "device": "cpu", "gap": 17.34}],
                                   "thresholds": {"float16": 17.33}})
'''


def test_plots_attached_by_a_check_reach_the_report(planted):
    """Serial here; under xdist in test_xdist_gives_the_same_report."""
    run = planted({"c.toml": record_toml("c")}, {"test_plot.py": PLOT})
    assert run.result.ret == 0, run.result.stdout.str()
    (r,) = run.claim("c")["readings"]
    assert [p["kind"] for p in r["plots"]] == ["layer_head_heatmap", "rank_breaks"]
    heat = r["plots"][0]
    assert heat["check"] == "test_plot.py::test_exact"
    assert heat["data"]["measures"]["eff_rank_90"] == [[1.0, 2.0], [3.0, None]]
    assert r["plots"][1]["data"]["breaks"][0]["gap"] == 17.34
    html = (run.report_dir / "claims.html").read_text(encoding="utf-8")
    assert html.count('<figure class="plot" data-kind="layer_head_heatmap"><svg') == 1
    assert html.count('<figure class="plot" data-kind="rank_breaks"><svg') == 1 and "m, N = 4: per layer and head" in html
    md = (run.report_dir / "claims.md").read_text(encoding="utf-8")
    for k in (1, 2):  # each plot also an SVG file next to the report, linked from claims.md
        assert (run.report_dir / "figures" / f"c-{k}.svg").read_text(encoding="utf-8").startswith("<?xml")
        assert f"](figures/c-{k}.svg)" in md


def test_a_claim_stated_in_two_documents_is_listed_and_counted_in_both(planted, pytester):
    (pytester.path / "sources").mkdir()
    shutil.copy(REPO_SOURCES / "documents.toml", pytester.path / "sources")  # the seed documents' titles
    also = '\n[[also_in]]\ndocument = "001_7b7f411bbe8a3bef.txt"\nsection = "repost"\nquote = "the repost\'s words"\n'
    also += '\n[[also_in]]\ndocument = "001_7b7f411bbe8a3bef.txt"\nsection = "caption"\nquote = "a figure caption"\n'
    records = {"c.toml": record_toml("c", document="004_5f57af8801c437dc.txt") + also,
               "d.toml": record_toml("d", document="004_5f57af8801c437dc.txt").replace('"exact"', '"other"')}
    check_files = checks(exact="pass")
    check_files["test_other.py"] = checks(other="pass")["test_other.py"].replace('"c"', '"d"')
    run = planted(records, check_files)
    assert run.result.ret == 0, run.result.stdout.str()
    report = run.report
    assert run.claim("c")["also_in"] == [
        {"document": "001_7b7f411bbe8a3bef.txt", "section": "repost", "quote": "the repost's words"},
        {"document": "001_7b7f411bbe8a3bef.txt", "section": "caption", "quote": "a figure caption"}]
    counts = report["counts"]
    assert counts["by_document"]["001_7b7f411bbe8a3bef.txt"]["true"] == 1
    assert counts["by_document"]["004_5f57af8801c437dc.txt"]["true"] == 2
    assert counts["by_source_document"] == {"004_5f57af8801c437dc.txt": {
        "true": 2, "false": 0, "caveat": 0, "unchecked": 0, "undecided": 0, "error": 0}}
    assert counts["total"]["true"] == 2
    md = (run.report_dir / "claims.md").read_text(encoding="utf-8")
    assert "Also stated in 001 — PaperWeekly repost of kexue.fm/archives/9889, repost:" in md
    assert "> the repost's words" in md and "> a figure caption" in md
    assert "<code>c</code> · 004, 001" in md  # the claim's summary line names both documents
    html = (run.report_dir / "claims.html").read_text(encoding="utf-8")
    assert html.count("also stated here") == 2 and "the repost&#39;s words" in html


DEFERRED = '''
import pytest
from hypothesis import given, settings, strategies as st
from attention_claims.testkit import refute, refute_deferred

CALLS = []

@pytest.mark.claim("c", reading="exact")
@settings(max_examples=50, database=None, derandomize=True)
@given(x=st.integers(0, 1000))
def test_exact(x, claim_log):
    claim_log.example(x=x)
    if x >= 10:
        def certify():
            CALLS.append(x)
            if {confirm}:
                refute(f"x = {{x}} >= 10, confirmed (certify ran {{len(CALLS)}} time(s))", example={{"x": x}},
                       certified=True, certificate="exact integer comparison", certificate_strength="proved")
        refute_deferred(f"x = {{x}} >= 10 (cheap)", certify=certify)
'''


def test_deferred_certificate_runs_once_on_the_shrunk_example(planted):
    run = planted({"c.toml": record_toml("c", expected="false")}, {"test_d.py": DEFERRED.format(confirm="True")})
    assert run.result.ret == 0, run.result.stdout.str()
    (r,) = run.claim("c")["readings"]
    cx = r["counterexample"]
    assert r["certified"] is True and cx["certificate"] == "exact integer comparison"
    assert cx["message"] == "x = 10 >= 10, confirmed (certify ran 1 time(s))"  # shrunk, certified once
    assert cx["example"] == {"x": 10}


def test_deferred_certificate_that_does_not_confirm_is_an_error(planted):
    run = planted({"c.toml": record_toml("c", expected="false")}, {"test_d.py": DEFERRED.format(confirm="False")})
    assert run.result.ret != 0
    c = run.claim("c")
    assert c["verdict"] == "error" and "did not confirm" in c["errors"][0]


TWO_MARKERS = '''
import pytest
from attention_claims.testkit import refute

@pytest.mark.parametrize("cid", [pytest.param("c", marks=pytest.mark.claim("c", reading="exact")),
                                 pytest.param("d", marks=pytest.mark.claim("d", reading="other"))])
def test_both(claim_log, cid):
    claim_log.example(x=3.0)
    {body}
'''


def test_one_check_decides_several_claims(planted):
    """One check function shared by two claims, one parameter (one claim mark) each, as ``claim_params``
    does (a second claim mark on one check is a usage error: tests/faults/test_iii_finding_2_second_claim_mark.py).
    Serial here; under xdist in test_xdist_gives_the_same_report."""
    records = {"c.toml": record_toml("c", expected="false"),
               "d.toml": record_toml("d", expected="false", readings=(("other", True),))}
    src = TWO_MARKERS.format(body='refute("shared failure", example={"N": 3}, certified=True)')
    run = planted(records, {"test_both.py": src})
    assert run.result.ret == 0, run.result.stdout.str()
    for cid, reading in (("c", "exact"), ("d", "other")):
        c = run.claim(cid)
        assert c["verdict"] == "false", c
        (r,) = c["readings"]
        assert r["name"] == reading and r["checks"] == [f"test_both.py::test_both[{cid}]"]
        assert r["counterexample"]["message"] == "shared failure" and r["examples"] == 1
    run.result.assert_outcomes(xfailed=2)


def test_a_shared_check_fails_the_run_when_one_of_its_claims_expects_true(planted):
    records = {"c.toml": record_toml("c", expected="false"),
               "d.toml": record_toml("d", expected="true", readings=(("other", True),))}
    src = TWO_MARKERS.format(body='refute("shared failure", certified=True)')
    run = planted(records, {"test_both.py": src})
    run.result.assert_outcomes(failed=1, xfailed=1)
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED
    assert run.claim("c")["agrees"] is True and run.claim("d")["agrees"] is False


def test_claim_marker_without_reading_is_a_usage_error(planted):
    src = "import pytest\n\n@pytest.mark.claim('c')\ndef test_x():\n    pass\n"
    run = planted({"c.toml": record_toml("c")}, {"test_x.py": src})
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR
    run.result.stderr.fnmatch_lines(["*@pytest.mark.claim('c', reading=NAME) needs reading=*"])


def test_controller_and_worker_are_different_classes(pytester):
    from attention_claims.framework.plugin import ClaimsController, ClaimsWorker

    assert not issubclass(ClaimsWorker, ClaimsController) and not issubclass(ClaimsController, ClaimsWorker)
    assert not hasattr(ClaimsWorker, "pytest_sessionfinish") and not hasattr(ClaimsWorker, "pytest_terminal_summary")


def test_the_last_lines_are_the_false_claims_and_the_tally(planted):
    rec = {"c.toml": record_toml("c", expected="false"),
           "d.toml": record_toml("d", expected="true", readings=(("other", True),))}
    files = checks(exact="refute")
    files["test_other.py"] = checks(other="pass")["test_other.py"].replace('"c"', '"d"')
    run = planted(rec, files)
    assert run.result.ret == 0, run.result.stdout.str()
    lines = run.result.outlines
    assert lines[-3:-1] == ["false claims (1):", "  c  recomputed: planted failure"]
    assert lines[-1].startswith("verdicts: 1 false, 1 true; report: ")
    assert not any(line.startswith("XFAIL") for line in lines)  # no -ra forced
    verbose = planted(rec, files, args=["-v"])
    verbose.result.stdout.fnmatch_lines(["*attention-claims verdicts*", "c  false *", "d  true *"])


LONGREPR_LOG = '''
import json, os


def pytest_runtest_logreport(report):
    if report.when == "call" and report.longrepr is not None:
        with open(os.environ["PLANTED_LONGREPR_LOG"], "a", encoding="utf-8") as f:
            f.write(json.dumps([report.nodeid, report.longreprtext]) + "\\n")
'''

CRASH = '''
import pytest

@pytest.mark.claim("k", reading="exact")
def test_crash():
    raise ZeroDivisionError("a crash in the suite")
'''

UNEXPECTED = '''
import pytest
from attention_claims.testkit import refute

@pytest.mark.claim("u", reading="exact")
def test_unexpected():
    refute("a counterexample to a claim expected true", example={"N": 2}, certified=True)
'''

GIVEN = '''
import pytest
from hypothesis import given, strategies as st
from attention_claims.testkit import refute

@pytest.mark.claim("g", reading="exact")
@given(st.integers(0, 10))
def test_given(n):
    if n > 3:
        refute("found by Hypothesis", example={"n": n}, certified=True)
'''


@pytest.mark.parametrize("tb", [None, "long"])
def test_expected_counterexample_traceback_is_native_unless_tb_given(planted, pytester, monkeypatch, tb):
    """An expected counterexample becomes an xfail that nobody reads: it is formatted in Python's
    native style (cheap: no re-parse of every frame's source file). A crash keeps pytest's long style,
    and so does every failure when ``--tb`` is given."""
    log = pytester.path / "longrepr.jsonl"
    monkeypatch.setenv("PLANTED_LONGREPR_LOG", str(log))
    pytester.makeconftest(LONGREPR_LOG)
    files = checks(exact="refute") | {"test_crash.py": CRASH, "test_unexpected.py": UNEXPECTED, "test_given.py": GIVEN}
    records = {"c.toml": record_toml("c", expected="false"), "k.toml": record_toml("k", expected="false"),
               "u.toml": record_toml("u", expected="true"), "g.toml": record_toml("g", expected="false")}
    run = planted(records, files, args=[] if tb is None else [f"--tb={tb}"])
    assert run.claim("c")["verdict"] == "false" and run.claim("g")["verdict"] == "false"
    text = dict(json.loads(line) for line in log.read_text(encoding="utf-8").splitlines())
    refuted, found = text["test_exact.py::test_exact"], text["test_given.py::test_given"]
    assert "planted failure" in refuted and "planted failure" in run.claim("c")["readings"][0]["counterexample"]["message"]
    # pytest's long style quotes the failing function's source with '>' and 'E   ' markers
    for expected_failure in (refuted, found):
        assert ("Traceback (most recent call last)" in expected_failure) is (tb is None)
        assert ("E   " in expected_failure) is (tb is not None)
    # a crash, and a counterexample to a claim expected true, keep pytest's long style
    assert '>       raise ZeroDivisionError("a crash in the suite")' in text["test_crash.py::test_crash"]
    assert "E   " in text["test_unexpected.py::test_unexpected"]
    for nodeid in ("test_crash.py::test_crash", "test_unexpected.py::test_unexpected"):
        assert "Traceback (most recent call last)" not in text[nodeid]


def test_report_formats_json_only_writes_claims_json_and_leaves_the_rest(planted, pytester):
    out = pytester.path / "out"
    first = planted({"c.toml": record_toml("c")}, checks(exact="pass"), args=["--claims-report-formats", "html"])
    assert first.result.ret == 0, first.result.stdout.str()  # an earlier report, the suite's (its manifest lists it)
    earlier = (out / "claims.html").read_text(encoding="utf-8")
    (out / "claims.json").unlink()
    run = planted({"c.toml": record_toml("c")}, checks(exact="pass"), args=["--claims-report-formats", "json"])
    assert run.result.ret == 0, run.result.stdout.str()
    assert run.claim("c")["verdict"] == "true"
    assert not (out / "claims.md").exists()
    assert (out / "claims.html").read_text(encoding="utf-8") == earlier
    assert run.result.stdout.lines[-1].endswith(f"report: {out / 'claims.json'}")
    (out / "claims.json").unlink()
    md = planted({"c.toml": record_toml("c")}, checks(exact="pass"), args=["--claims-report-formats", "md"])
    assert md.result.ret == 0 and (out / "claims.md").exists()
    assert md.claim("c")["verdict"] == "true"  # claims.json is always written: later subset runs read it
    assert (out / "claims.html").read_text(encoding="utf-8") == earlier
    assert md.result.stdout.lines[-1].endswith(f"report: {out / 'claims.md'}")
    import os

    os.utime(out / "claims.html", ns=(0, 0))  # rewritten or not, whatever the clock: the same second gives the same text
    html = planted({"c.toml": record_toml("c")}, checks(exact="pass"), args=["--claims-report-formats", " html, json"])
    assert html.result.ret == 0 and (out / "claims.html").stat().st_mtime_ns != 0
    assert html.result.stdout.lines[-1].endswith(f"report: {out / 'claims.html'}")


@pytest.mark.parametrize("value", ["pdf", "json,xml", ","])
def test_unknown_report_format_is_a_usage_error(planted, value):
    run = planted({"c.toml": record_toml("c")}, checks(exact="pass"), args=[f"--claims-report-formats={value}"])
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR
    run.result.stderr.fnmatch_lines(["*--claims-report-formats*choose from json, md, html*"])


def test_an_xdist_worker_freezes_its_heap_as_its_last_act():
    """``ClaimsWorker.pytest_unconfigure`` (trylast) calls ``gc.freeze()``: the final collection at
    interpreter exit then skips the worker's heap (the controller's wait for its workers to exit)."""
    import gc

    from attention_claims.framework.plugin import ClaimsController, ClaimsWorker

    hook = ClaimsWorker.pytest_unconfigure
    assert hook.pytest_impl["trylast"] is True
    assert ClaimsController.pytest_unconfigure is not hook  # the controller still writes its last lines
    gc.unfreeze()
    try:
        hook(object.__new__(ClaimsWorker), None)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


REPRODUCE = '''
import pytest
from hypothesis import given, strategies as st

@pytest.mark.claim("c", reading="exact")
def test_exact(claim_log):
    claim_log.example(x=1.0)

@pytest.mark.claim("c", reading="float16")
@given(st.integers(0, 100))
def test_float16(claim_log, n):
    claim_log.example(n=n)
    assert n < 7, f"float16 loses it at n = {n}"
'''


def test_a_counterexamples_reproduce_command_prints_the_counterexample_and_the_verdict(planted):
    """Issue 34, item 6: the report's "Reproduce" command (one check of a claim with other readings) printed
    only ``x`` and "verdicts: no claim decided". It now prints the counterexample, its example and the
    claim's verdict."""
    records = {"c.toml": record_toml("c", expected="caveat", readings=(("exact", True), ("float16", False)))}
    full = planted(records, {"test_r.py": REPRODUCE})
    assert full.result.ret == 0, full.result.stdout.str()
    reading = next(r for r in full.claim("c")["readings"] if r["name"] == "float16")
    command = reading["counterexample"]["reproduce"]
    assert command.startswith("python -m pytest test_r.py::test_float16 ")
    nodeid = command.split()[3]
    again = planted(records, {"test_r.py": REPRODUCE}, args=[nodeid, "-n", "0"])
    out = again.result.stdout.str()
    assert again.result.ret == 0, out
    again.result.stdout.fnmatch_lines([
        "counterexamples found by this run (1):",
        "  c [[]float16] (test_r.py::test_float16): float16 loses it at n = 7*",
        "    *: test_float16(n=7)",  # Hypothesis's falsifying example, without the evidence log's state
        "    not certified",
        "  verdict of c: caveat (its last decision, of *: this run ran only some of its checks)",
        "verdicts: no claim decided; 1 other claim keeps its last decision*",
    ])


def test_a_full_run_lists_no_counterexample_twice(planted):
    """A full run that decides every claim lists its false claims once each (as before) and no caveat's
    counterexamples: they are in the report."""
    records = {"c.toml": record_toml("c", expected="caveat", readings=(("exact", True), ("float16", False)))}
    run = planted(records, {"test_r.py": REPRODUCE})
    assert run.result.ret == 0
    assert "counterexamples found by this run" not in run.result.stdout.str()
