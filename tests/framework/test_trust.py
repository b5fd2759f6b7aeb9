"""Trust machinery: stability comparison, interrupted runs, xdist on the real checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attention_claims.framework.trust import planted_counts, trust_lines
from attention_claims.tools.stability import compare
from conftest import record_toml, small_project_checks, small_project_records

ROOT = Path(__file__).resolve().parents[2]


def test_compare_finds_flips():
    runs = {1: {"a": "true", "b": "false"}, 2: {"a": "true", "b": "caveat"}}
    assert compare(runs) == [{"claim": "b", "verdicts": {"1": "false", "2": "caveat"}}]
    assert compare({1: {"a": "true"}, 2: {"a": "true"}}) == []


def test_trust_lines_report_kill_rate():
    counts = planted_counts({"falsehood": [True] * 40 + [False], "truth": [True] * 15})
    assert counts["caught"] == 40 and counts["falsehoods"] == 41
    lines = trust_lines({"planted": dict(counts, from_this_run=True), "stability": None, "mutation": None})
    assert "40/41" in lines[0] and "97.6 %" in lines[0]
    assert "not run yet" in lines[1] and "not run yet" in lines[2]


def test_planted_counts_by_claim_and_the_claims_with_a_reason():
    """The power by claim (issue 35): every falsehood and truth counted under its claim, the claims with nothing
    to plant counted apart, an escaped falsehood named in the trust line."""
    counts = planted_counts({"falsehood": [("a", True), ("a", True), ("b", False), ("b", True)],
                             "truth": [("a", True), ("b", True)], "reason": [("c", True), ("d", False)]})
    assert (counts["falsehoods"], counts["caught"], counts["truths"], counts["held"]) == (4, 3, 2, 2)
    assert counts["by_claim"]["a"] == {"falsehoods": 2, "caught": 2, "truths": 1, "held": 1, "reason": False}
    assert counts["by_claim"]["b"]["caught"] == 1 and counts["by_claim"]["c"]["reason"] is True
    assert (counts["claims_planted"], counts["claims_caught"], counts["claims_with_reason"]) == (2, 1, 1)
    line = trust_lines({"planted": dict(counts, from_this_run=True), "stability": None, "mutation": None})[0]
    assert line == ("Planted falsehoods caught: 3/4 (kill rate 75.0 %); planted truths held: 2/2 (100.0 %); over 2 "
                    "claims, every planted falsehood caught in 1; 1 claims not planted, each with its stated reason "
                    "(a definition or identity with nothing to plant, or an opposite that no counterexample can "
                    "refute); a planted falsehood escaped in b (1/2) [this run].")
    by_claim = trust_lines({"planted": dict(counts, from_this_run=True), "stability": None, "mutation": None})[1]
    assert by_claim == ("Power by claim (planted falsehoods caught/planted): `a` 2/2, `b` 1/2; not planted, "
                        "for a stated reason: `c`.")
    assert planted_counts({"falsehood": [True, False]})["by_claim"] == {}  # unnamed entries: counted, not by claim
    # over the catalog: every true and caveat claim needs a planted falsehood or a reason
    counts = planted_counts({"falsehood": [("a", True)], "reason": [("c", True)]},
                            {"a": "true", "c": "caveat", "e": "true", "f": "false"})
    assert (counts["power_claims"], counts["power_planted"], counts["power_reason"]) == (3, 1, 1)
    assert counts["power_missing"] == ["e"]
    line = trust_lines({"planted": dict(counts, from_this_run=True), "stability": None, "mutation": None})[0]
    assert "; of the 3 true and caveat claims, 1 have a planted falsehood and 1 a stated reason, 1 neither (e)" in line


def test_a_project_that_measured_nothing_is_told_so_without_the_suites_paths():
    """Issue 34, item 4: a user's project has no planted variants, stability or mutation run; its trust lines say
    so and name none of the suite's own files or documents."""
    lines = trust_lines({"planted": None, "stability": None, "mutation": None})
    assert lines == ["Planted variants: not run yet in this project.",
                     "Stability: not run yet in this project (`python -m attention_claims.tools.stability` runs it).",
                     "Mutation testing: not run yet in this project."]


def test_a_users_report_speaks_of_the_user_only(planted):
    """Issue 34, item 4, end to end: a tiny user project's claims.md and claims.html show the trust lines of this
    project only, and no summary or caption names the suite's documents, its tests or their relations."""
    run = planted(small_project_records(), small_project_checks())
    assert run.result.ret == 0, run.result.stdout.str()[-2000:]
    md = (run.report_dir / "claims.md").read_text(encoding="utf-8")
    page = (run.report_dir / "claims.html").read_text(encoding="utf-8")
    assert "Planted variants: not run yet in this project." in md
    assert "Mutation testing: not run yet in this project." in md
    for text in (md, page):
        for suite_only in ("test_planted", "tests/", "README", "repost", "mutation.md", "restates"):
            assert suite_only not in text, suite_only


def test_planted_tests_of_a_project_are_counted_by_claim(planted):
    """A project's own tests marked ``trust_planted(kind, claim=ID)`` give its planted.json, by claim."""
    src = '''
import pytest

@pytest.mark.trust_planted("falsehood", claim="alpha-claim")
def test_caught():
    pass

@pytest.mark.trust_planted("falsehood", claim="alpha-claim")
def test_escaped():
    assert False

@pytest.mark.trust_planted("reason", claim="beta-claim")
def test_reason():
    pass
'''
    run = planted(small_project_records(), {**small_project_checks(), "test_power.py": src})
    counts = json.loads((run.report_dir / "planted.json").read_text(encoding="utf-8"))
    assert counts["by_claim"]["alpha-claim"]["falsehoods"] == 2 and counts["by_claim"]["alpha-claim"]["caught"] == 1
    assert counts["claims_with_reason"] == 1
    # the project's catalog: alpha-claim and beta-claim expected true (gamma-claim unchecked)
    assert (counts["power_claims"], counts["power_planted"], counts["power_reason"]) == (2, 1, 1)
    # the report that carries them is a valid report (merge reads it through the schema)
    from attention_claims.framework.report_schema import validate_report

    assert run.report["trust"]["planted"]["by_claim"]["beta-claim"]["reason"] is True
    validate_report(run.report, "claims.json")
    assert "a planted falsehood escaped in alpha-claim (1/2)" in (run.report_dir / "claims.md").read_text(encoding="utf-8")


def test_a_node_id_subset_of_planted_tests_keeps_the_last_complete_count(planted):
    """``pytest FILE::TEST`` runs some planted tests only: their counts are shown for this run but not kept in
    planted.json (nor would a ``-k`` subset's), so the last complete count is not overwritten by a partial one."""
    src = '''
import pytest

@pytest.mark.trust_planted("falsehood", claim="alpha-claim")
def test_caught():
    pass

@pytest.mark.trust_planted("falsehood", claim="beta-claim")
def test_other():
    pass
'''
    run = planted(small_project_records(), {**small_project_checks(), "test_power.py": src},
                  args=["test_power.py::test_caught", "test_a.py", "test_b.py"])
    assert not (run.report_dir / "planted.json").exists(), "a subset's counts overwrote the last complete count"


def test_the_stability_line_names_the_commit_it_ran_at():
    s = {"seeds": [1, 2, 3, 4, 5], "profile": "dev", "paths": ["checks"], "claims": 160, "date": "2026-11-24",
         "flips": []}
    line = trust_lines({"planted": None, "stability": dict(s, commit="00d1f5f0123"), "mutation": None})[1]
    assert line == ("Stability: 5 seeds compared under the `dev` profile over checks (160 claims; 2026-11-24, "
                    "commit 00d1f5f); verdict flips: 0.")
    assert "commit" not in trust_lines({"planted": None, "stability": s, "mutation": None})[1]  # an older file


@pytest.mark.subprocess_run
def test_interrupted_run_leaves_an_honest_report(planted):
    src = '''
import pytest

@pytest.mark.claim("a", reading="exact")
def test_a():
    raise KeyboardInterrupt

@pytest.mark.claim("b", reading="exact")
def test_b():
    pass
'''
    recs = {"a.toml": record_toml("a"), "b.toml": record_toml("b")}
    run = planted(recs, {"test_x.py": src}, subprocess=True)
    rep = run.report
    assert rep["run"]["interrupted"] is True and rep["run"]["complete"] is False
    assert all(c["verdict"] == "undecided" for c in rep["claims"])
    md = (run.report_dir / "claims.md").read_text(encoding="utf-8")
    assert "nterrupted" in md


def test_crash_in_one_check_is_an_error_and_others_still_decide(planted):
    src = '''
import pytest

@pytest.mark.claim("a", reading="exact")
def test_a():
    raise ZeroDivisionError("a crash in the suite")

@pytest.mark.claim("b", reading="exact")
def test_b():
    pass
'''
    run = planted({"a.toml": record_toml("a"), "b.toml": record_toml("b")}, {"test_x.py": src})
    assert run.result.ret != 0
    assert run.claim("a")["verdict"] == "error" and run.claim("a")["errors"]  # not "could not run here"
    assert run.claim("b")["verdict"] == "true"


def test_in_progress_report_says_so(pytester, planted):
    src = '''
import json, pathlib, pytest

@pytest.mark.claim("a", reading="exact")
def test_a(request):
    out = pathlib.Path(request.config.getoption("claims_report_dir"))
    rep = json.loads((out / "claims.json").read_text())
    assert rep["run"]["complete"] is False and rep["run"].get("in_progress") is True
    assert rep["claims"][0]["verdict"] == "undecided"
'''
    run = planted({"a.toml": record_toml("a")}, {"test_x.py": src})
    assert run.claim("a")["verdict"] == "true", run.result.stdout.str()


@pytest.mark.subprocess_run
def test_real_checks_same_report_under_xdist(tmp_path, run_at_root, monkeypatch):
    """``pytest -n 2`` on real checks gives the same verdicts and evidence as a serial run (``-n 0``).

    Both runs happen here and are always compared: the serial one in this process (the check modules,
    and the caches of their failure profiles, already loaded), the xdist one in new interpreters (each
    worker collects and computes afresh). The selection covers a false claim with a certified
    counterexample, caveats, true claims, one check shared by several claims (parametrised by claim) and
    several checks of one claim."""
    import subprocess
    import sys

    select = ("theorem_11_23_exact or bidirectional_exact_rank_generic or repeated_tokens_bound_rank "
              "or rank_definition or decoder_full_rank_exact")
    args = ["checks/test_rank.py", "-k", select, "--hypothesis-profile=ci", "--claims-report-dir"]
    # A person's run imports the check modules afresh; this process may already hold them (a full run
    # collects checks/ too), and pytest would reuse those module objects, with their Hypothesis state
    # and caches: the serial half then counted 80 examples where a fresh process counts 40. Drop them for
    # the run (monkeypatch puts them back).
    checks_dir = ROOT / "checks"
    for name, mod in list(sys.modules.items()):
        file = getattr(mod, "__file__", None)
        if file and Path(file).resolve().parent == checks_dir:
            monkeypatch.delitem(sys.modules, name)
    serial = run_at_root(*args, str(tmp_path / "serial"), "-n", "0")
    assert serial.ret == 0, serial.stdout[-2000:] + serial.stderr[-2000:]
    res = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args, str(tmp_path / "xdist"),
                          "-n", "2"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    reports = {kind: json.loads((tmp_path / kind / "claims.json").read_text(encoding="utf-8"))
               for kind in ("serial", "xdist")}

    def key(r):
        return [(c["id"], c["verdict"], [(x["name"], x["outcome"], x["examples"], x["evidence"], x["certified"])
                                         for x in c["readings"]]) for c in r["claims"]]

    workers = {k: r["environment"]["xdist_workers"] for k, r in reports.items()}
    assert workers == {"serial": 0, "xdist": 2}, workers
    assert sum(c["verdict"] == "false" for c in reports["serial"]["claims"]) >= 1
    assert key(reports["serial"]) == key(reports["xdist"])


def test_collection_error_still_writes_an_honest_report(planted):
    run = planted({"a.toml": record_toml("a")}, {"test_x.py": "import no_such_module_anywhere\n"})
    rep = run.report
    assert rep["run"]["interrupted"] is True and rep["run"]["complete"] is False
    assert rep["claims"][0]["verdict"] == "undecided"


def test_the_mutation_line_counts_survivors_not_explained_yet():
    m = {"tool": "mutmut 3.8.1", "date": "2026-11-25", "commit": "abc", "modules": ["rank.py"], "score": 0.9,
         "killed": 9, "total": 10, "killed_or_explained": 0.9,
         "survivors": [{"name": "a", "explanation": "UNEXPLAINED"}, {"name": "b", "explanation": "equivalent: x"}]}
    line = trust_lines({"planted": None, "stability": None, "mutation": m})[2]
    assert "; 1 survivors not explained yet, listed in reports/mutation.md)." in line
    m["survivors"] = m["survivors"][1:]
    assert "; survivors explained in reports/mutation.md)." in trust_lines(
        {"planted": None, "stability": None, "mutation": m})[2]


def test_the_mutation_line_of_a_resumed_run_names_the_modules_commit():
    m = {"tool": "mutmut 3.8.1", "date": "2026-11-25", "commit": "3c1302cbd0caa34b", "tests_commit": "a21a50b88d100af9",
         "modules": ["rank.py"], "score": 0.9, "killed": 9, "total": 10}
    line = trust_lines({"planted": None, "stability": None, "mutation": m})[2]
    assert ", modules as of commit a21a50b88d10 (run begun at 3c1302cbd0ca), over rank.py" in line
    m["tests_commit"] = m["commit"]
    assert ", commit 3c1302cbd0ca, over rank.py" in trust_lines({"planted": None, "stability": None, "mutation": m})[2]
