"""One report from many machines (issue 26): ``--claims-shard K/N`` decides a deterministic part of
the claims, ``attention-claims merge`` folds reports reading by reading: the shards of a run give the
run's report; a GPU runner's CUDA readings land in the CPU report; two runs of one reading on one
device that disagree, or reports of other commits, are refused with a message."""

from __future__ import annotations

import copy
import json

import pytest

from attention_claims.framework.merge import MergeError, merge_reports
from attention_claims.framework.records import load_catalog
from attention_claims.tools import merge as merge_tool
from conftest import record_toml

CUDA_READING = '''
[[readings]]
name = "cuda-float32"
statement = "on a GPU in float32"
device = "cuda"
dtype = "float32"
kind = "numerical"
'''

CHECKS = {
    "test_a.py": '''
import pytest
from attention_claims.testkit import refute, require_device

@pytest.mark.claim("alpha-claim", reading="exact")
def test_alpha(claim_log):
    claim_log.example(x=1.0)

@pytest.mark.claim("beta-claim", reading="exact")
def test_beta(claim_log):
    claim_log.example(x=2.0)

@pytest.mark.claim("fals-claim", reading="exact")
def test_fals(claim_log):
    refute("planted failure", example={"N": 2}, certified=True, certificate="planted")

@pytest.mark.claim("gpu-claim", reading="exact")
def test_gpu_exact(claim_log):
    claim_log.example(x=3.0)

@pytest.mark.claim("gpu-claim", reading="cuda-float32")
def test_gpu_cuda(claim_log):
    require_device("cuda")
'''}


def _records():
    return {"a.toml": record_toml("alpha-claim"), "b.toml": record_toml("beta-claim"),
            "f.toml": record_toml("fals-claim", expected="false"),
            "g.toml": record_toml("gpu-claim", expected="caveat") + CUDA_READING}


def _key(report: dict) -> dict:
    """What a merge must preserve: each claim's verdict and each reading's outcome and certified flag."""
    return {c["id"]: (c["verdict"], c["agrees"], [(r["name"], r["outcome"], r["certified"]) for r in c["readings"]])
            for c in report["claims"]}


@pytest.fixture
def project(planted, pytester):
    """``run(args) -> report dict`` of the planted project, each run writing to its own report folder."""
    counter = iter(range(100))

    def run(*args):
        out = pytester.path / f"out-{next(counter)}"
        result = planted(_records(), CHECKS, args=["--claims-report-dir", str(out), *args])
        assert result.result.ret == 0, result.result.stdout.str()
        return json.loads((out / "claims.json").read_text(encoding="utf-8"))

    run.catalog = lambda: load_catalog(pytester.path / "records", pytester.path / "sources")
    return run


def test_merging_the_shards_of_a_run_gives_the_full_run(project):
    full = project()
    shards = [project("--claims-shard", f"{k}/2") for k in (1, 2)]
    decided = [{c["id"] for c in s["claims"] if c["decided"]} for s in shards]
    assert decided == [{"alpha-claim", "fals-claim"}, {"beta-claim", "gpu-claim"}]  # every 2nd id, in id order
    merged = merge_reports([("shard-1", shards[0]), ("shard-2", shards[1])], project.catalog()).to_json()
    assert _key(merged) == _key(full)
    assert merged["run"]["complete"] is True and 1 <= len(merged["runs"]) <= 2  # equal runs (same second) count once


def _gpu_report(cpu: dict) -> dict:
    """What a GPU runner that ran only the CUDA readings would write: gpu-claim's cuda reading failed."""
    gpu = copy.deepcopy(cpu)
    run = dict(cpu["runs"][0], host="gpu-runner", device="cpu, cuda:0 (NVIDIA H100 80GB HBM3)", cuda="12.8",
               driver="570.86.15", date="2026-11-24T12:00:00+00:00")
    gpu["runs"] = [run]
    gpu["environment"]["devices"] = ["cpu", "cuda:0 (NVIDIA H100 80GB HBM3)"]
    for c in gpu["claims"]:
        if c["id"] != "gpu-claim":
            c.update(decided=None, selected=False, readings=[], verdict="undecided")
            continue
        c["decided"] = dict(c["decided"], at=run["date"])
        for r in c["readings"]:
            if r["name"] == "cuda-float32":
                r.update(outcome="failed", certified=True, ran_on=dict(run, device="NVIDIA H100 80GB HBM3"),
                         counterexample={"message": "float32 on the GPU loses rank", "example": {"N": 2},
                                         "certified": True})
            else:
                r.update(outcome="skipped", ran_on=None)
    return gpu


def test_a_gpu_runners_cuda_reading_lands_in_the_cpu_report(project):
    cpu = project()
    gpu_claim = next(c for c in cpu["claims"] if c["id"] == "gpu-claim")
    assert gpu_claim["verdict"] == "true"  # the CUDA reading was skipped on the CPU (agrees: it could be caveat)
    merged = merge_reports([("cpu.json", cpu), ("gpu.json", _gpu_report(cpu))], project.catalog()).to_json()
    got = next(c for c in merged["claims"] if c["id"] == "gpu-claim")
    readings = {r["name"]: r for r in got["readings"]}
    assert got["verdict"] == "caveat" and got["agrees"] is True
    assert readings["cuda-float32"]["outcome"] == "failed" and readings["cuda-float32"]["kind"] == "numerical"
    assert readings["cuda-float32"]["ran_on"]["device"] == "NVIDIA H100 80GB HBM3"
    assert readings["exact"]["outcome"] == "held" and readings["exact"]["ran_on"]["device"] == "cpu"
    others = {k: v for k, v in _key(merged).items() if k != "gpu-claim"}
    assert others == {k: v for k, v in _key(cpu).items() if k != "gpu-claim"}  # the other verdicts unchanged
    assert {r["host"] for r in merged["runs"]} == {cpu["runs"][0]["host"], "gpu-runner"}
    assert "cuda:0 (NVIDIA H100 80GB HBM3)" in merged["environment"]["devices"]


def test_two_runs_of_a_reading_that_disagree_on_one_device_are_an_error(project):
    cpu = project()
    other = copy.deepcopy(cpu)
    alpha = next(c for c in other["claims"] if c["id"] == "alpha-claim")
    alpha["readings"][0].update(outcome="failed", certified=True,
                                ran_on=dict(alpha["readings"][0]["ran_on"], date="2026-11-25T00:00:00+00:00"))
    with pytest.raises(MergeError, match=r"claim 'alpha-claim', reading 'exact' on cpu: held in one\.json .* "
                                         r"but failed in two\.json"):
        merge_reports([("one.json", cpu), ("two.json", other)], project.catalog())


def test_reports_of_other_commits_are_refused_unless_allowed(project):
    cpu = project()
    other = _gpu_report(cpu)
    other["runs"][0]["commit"] = "0123456789abcdef"
    with pytest.raises(MergeError, match="different commits"):
        merge_reports([("cpu.json", cpu), ("gpu.json", other)], project.catalog())
    assert merge_reports([("cpu.json", cpu), ("gpu.json", other)], project.catalog(), allow_mixed=True)
    for run in cpu["runs"]:  # a run outside a git checkout, or before its first commit, records none
        run["commit"] = None
    with pytest.raises(MergeError, match=r"cpu\.json: no commit recorded; gpu\.json: 0123456789abcdef"):
        merge_reports([("cpu.json", cpu), ("gpu.json", other)], project.catalog())


def test_the_command_writes_the_merged_report_or_says_why_not(project, pytester, capsys):
    cpu = project()
    a, b = pytester.path / "cpu.json", pytester.path / "gpu.json"
    a.write_text(json.dumps(cpu), encoding="utf-8")
    b.write_text(json.dumps(_gpu_report(cpu)), encoding="utf-8")
    common = ["--claims-dir", str(pytester.path / "records"), "--claims-sources", str(pytester.path / "sources")]
    out = pytester.path / "merged"
    assert merge_tool.main([str(a), str(b), "-o", str(out), *common]) == 0
    assert {p.name for p in out.iterdir()} >= {"claims.json", "claims.md", "claims.html"}
    assert "merged 2 reports" in capsys.readouterr().out
    b.write_text("{not json", encoding="utf-8")
    assert merge_tool.main([str(a), str(b), "-o", str(out), *common]) == 4
    assert f"{b}: cannot be read as a report" in capsys.readouterr().err


def test_a_merged_claim_carries_the_failure_profile_of_its_verdict(project):
    cpu = project()
    fals = next(c for c in cpu["claims"] if c["id"] == "fals-claim")
    profile = {"class": "generic", "setting": "N=4", "trials": 3, "failures": 3, "summary": "fails on every draw"}
    fals["readings"][0]["failure_profile"] = profile
    fals["failure_profile"] = profile
    alpha = next(c for c in cpu["claims"] if c["id"] == "alpha-claim")
    alpha["failure_profile"] = profile  # stale: alpha is true; the merge recomputes it away
    merged = merge_reports([("cpu.json", cpu)], project.catalog()).to_json()
    by_id = {c["id"]: c for c in merged["claims"]}
    assert by_id["fals-claim"]["failure_profile"] == profile and by_id["alpha-claim"].get("failure_profile") is None


def _errored(report: dict, cid: str, *, what: str, date: str = "2026-11-25T00:00:00+00:00") -> dict:
    """``report`` where claim ``cid``'s ``exact`` check did not finish (a crashed worker) in a run of ``date``."""
    out = copy.deepcopy(report)
    claim = next(c for c in out["claims"] if c["id"] == cid)
    reading = claim["readings"][0]
    err = f"{reading['checks'][0]}: {what}"
    reading.update(outcome="error", certified=False, counterexample=None, errors=[err], evidence=f"error: {what}",
                   ran_on=dict(reading["ran_on"], date=date, host="oom-box"))
    claim.update(verdict="error", agrees=False, errors=[err])
    return out


def test_a_reading_that_errored_in_one_run_and_ran_in_another_shows_both(project):
    """Issue 33 finding 1: merge never replaces a crashed reading by silence. The run that ran it gives the
    outcome; the reading's errors and evidence name the run where it errored; no disagreement is claimed."""
    cpu = project()
    crashed = _errored(cpu, "alpha-claim", what="worker 'gw1' crashed while running it")
    merged = merge_reports([("cpu.json", cpu), ("oom.json", crashed)], project.catalog()).to_json()
    alpha = next(c for c in merged["claims"] if c["id"] == "alpha-claim")
    (reading,) = alpha["readings"]
    assert reading["outcome"] == "held" and alpha["verdict"] == "true" and alpha["errors"] == []
    assert len(reading["errors"]) == 1 and reading["errors"][0].startswith("errored in oom.json (run of 2026-11-25")
    assert "oom-box" in reading["errors"][0] and "crashed while running it" in reading["errors"][0]
    assert "errored in oom.json" in reading["evidence"]


def test_a_reading_whose_only_outcomes_are_errors_stays_error(project):
    cpu = project()
    one = _errored(cpu, "alpha-claim", what="KeyError: 'x'")
    two = _errored(cpu, "alpha-claim", what="worker 'gw0' crashed", date="2026-11-26T00:00:00+00:00")
    merged = merge_reports([("one.json", one), ("two.json", two)], project.catalog()).to_json()
    alpha = next(c for c in merged["claims"] if c["id"] == "alpha-claim")
    assert alpha["verdict"] == "error" and alpha["agrees"] is False
    assert alpha["readings"][0]["outcome"] == "error" and len(alpha["readings"][0]["errors"]) == 2
    assert {e.split(" (run of")[0] for e in alpha["errors"]} == {"errored in one.json", "errored in two.json"}
    assert merged["run"]["complete"] is False and merged["run"]["unfinished"] == 2
    assert merged["counts"]["total"]["error"] == 1


def test_an_as_stated_reading_in_error_is_never_read_as_held(project):
    """Issue 33 finding 4's first example: a false claim whose as-stated reading has ``"outcome": "error"``
    was merged to caveat ("the as-stated reading holds")."""
    cpu = project()
    merged = merge_reports([("bad.json", _errored(cpu, "fals-claim", what="RuntimeError: boom"))],
                           project.catalog()).to_json()
    fals = next(c for c in merged["claims"] if c["id"] == "fals-claim")
    assert fals["verdict"] == "error" and "holds" not in fals["reason"] and fals["agrees"] is False


def test_an_older_report_that_kept_the_error_on_the_claim_only_is_still_an_error(project):
    """A report of the plugin before the ``error`` outcome: the reading ``skipped``, the check's error in the
    claim's ``errors`` only. The merge finds the reading by its check and does not read it as skipped."""
    cpu = project()
    old = copy.deepcopy(cpu)
    alpha = next(c for c in old["claims"] if c["id"] == "alpha-claim")
    reading = alpha["readings"][0]
    reading.update(outcome="skipped", ran_on=None)
    reading.pop("errors", None)
    alpha.update(verdict="undecided", agrees=False, errors=[f"{reading['checks'][0]}: TypeError: a bug"])
    merged = merge_reports([("old.json", old)], project.catalog()).to_json()
    got = next(c for c in merged["claims"] if c["id"] == "alpha-claim")
    assert got["verdict"] == "error" and got["readings"][0]["outcome"] == "error"
    assert "TypeError: a bug" in got["readings"][0]["errors"][0]


def test_the_command_reads_back_an_error_and_exits_non_zero(project, pytester, capsys):
    """A report whose check did not finish passes the input schema (the error verdict and outcome are in it) and
    its claim stays error in the merged report: exit status 1, naming the claim; the merged report validates."""
    from attention_claims.framework.report_schema import validate_report

    cpu = project()
    path = pytester.path / "crashed.json"
    path.write_text(json.dumps(_errored(cpu, "alpha-claim", what="worker 'gw0' crashed")), encoding="utf-8")
    out = pytester.path / "merged-error"
    common = ["--claims-dir", str(pytester.path / "records"), "--claims-sources", str(pytester.path / "sources")]
    assert merge_tool.main([str(path), "-o", str(out), *common]) == 1
    assert "alpha-claim: error, expected true" in capsys.readouterr().err
    merged = json.loads((out / "claims.json").read_text(encoding="utf-8"))
    validate_report(merged, "merged claims.json")
    assert merged["run"]["complete"] is False and merged["counts"]["total"]["error"] == 1
