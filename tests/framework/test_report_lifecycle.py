"""Reports are never lost (issue 12): ``--collect-only`` writes nothing, a subset run updates only
the claims it decides and keeps every other claim's last decision with its date and profile, an
interrupted run never leaves a report that looks complete, files are written atomically 0644."""

from __future__ import annotations

import json
import os
import stat

import pytest

from conftest import REPORT_FILES, small_project_checks, small_project_records

FILES = REPORT_FILES
_records, _checks = small_project_records, small_project_checks


def _decided(report: dict) -> dict:
    return {c["id"]: (c["verdict"], c["decided"] and c["decided"]["run"]) for c in report["claims"]}


def test_full_run_then_collect_only_then_one_claim_still_decides_every_claim(planted):
    full = planted(_records(), _checks())
    assert full.result.ret == 0, full.result.stdout.str()
    first = full.report
    assert first["run"]["complete"] is True
    assert _decided(first) == {"alpha-claim": ("true", "full"), "beta-claim": ("true", "full"),
                               "gamma-claim": ("unchecked", "full")}
    assert first["claims"][0]["decided"]["profile"] == "ci"
    before = {name: (full.report_dir / name).read_bytes() for name in FILES}

    co = planted(_records(), _checks(), args=["--co", "-q"])
    assert co.result.ret == 0
    assert {name: (full.report_dir / name).read_bytes() for name in FILES} == before  # --co writes nothing

    one = planted(_records(), _checks(), args=["--claims-select", "beta-claim", "-v"])
    assert one.result.ret == 0, one.result.stdout.str()
    report = one.report
    assert _decided(report) == {"alpha-claim": ("true", "full"), "beta-claim": ("true", "partial"),
                                "gamma-claim": ("unchecked", "full")}
    assert report["run"]["partial"] is True and report["run"]["complete"] is False
    assert report["run"]["updated"] == first["generated"]
    assert report["counts"]["total"]["true"] == 2 and report["counts"]["total"]["undecided"] == 0
    alpha = next(c for c in report["claims"] if c["id"] == "alpha-claim")
    assert alpha["decided"] == first["claims"][0]["decided"] and alpha["selected"] is False
    assert one.result.outlines[-1].startswith("verdicts: 1 true; 2 other claims keep their last decision; report")
    out = one.result.stdout.str().split("attention-claims verdicts")[1]
    assert "beta-claim" in out and "alpha-claim" not in out


def test_collect_only_on_a_fresh_folder_writes_nothing(planted):
    run = planted(_records(), _checks(), args=["--collect-only"])
    assert run.result.ret == 0
    assert not run.report_dir.exists() or not any(run.report_dir.iterdir())


def test_a_k_subset_keeps_the_other_claims(planted):
    planted(_records(), _checks())
    run = planted(_records(), _checks(), args=["-k", "alpha-claim"])
    assert run.result.ret == 0, run.result.stdout.str()
    assert _decided(run.report) == {"alpha-claim": ("true", "partial"), "beta-claim": ("true", "full"),
                                    "gamma-claim": ("unchecked", "full")}


def test_a_subset_run_without_an_earlier_report_lists_the_others_as_not_selected(planted):
    run = planted(_records(), _checks(), args=["-k", "alpha-claim"])
    beta = run.claim("beta-claim")
    assert beta["verdict"] == "undecided" and beta["selected"] is False and beta["decided"] is None
    assert "not selected" in beta["reason"]


@pytest.mark.subprocess_run
def test_an_interrupted_subset_run_keeps_the_last_decisions_and_does_not_look_complete(planted, monkeypatch):
    planted(_records(), _checks())
    monkeypatch.setenv("PLANTED_INTERRUPT", "alpha-claim")
    run = planted(_records(), _checks(), args=["--claims-select", "alpha-claim"], subprocess=True)
    assert run.result.ret == 2
    report = run.report
    assert report["run"]["interrupted"] is True and report["run"]["complete"] is False
    assert _decided(report)["alpha-claim"] == ("true", "full")  # the earlier decision, not lost
    md = (run.report_dir / "claims.md").read_text(encoding="utf-8")
    assert "nterrupted" in md


@pytest.mark.subprocess_run
def test_an_interrupted_full_run_without_an_earlier_report_decides_nothing_it_did_not_finish(planted, monkeypatch):
    monkeypatch.setenv("PLANTED_INTERRUPT", "alpha-claim")
    run = planted(_records(), _checks(), subprocess=True)
    report = run.report
    assert report["run"]["complete"] is False and report["run"]["interrupted"] is True
    assert run.claim("alpha-claim")["verdict"] == "undecided" and run.claim("alpha-claim")["decided"] is None


def test_a_report_written_before_decided_stamps_counts_as_decided_at_its_date(planted):
    full = planted(_records(), _checks())
    path = full.report_dir / "claims.json"
    old = json.loads(path.read_text(encoding="utf-8"))
    for c in old["claims"]:
        del c["decided"], c["selected"]
    path.write_text(json.dumps(old), encoding="utf-8")
    run = planted(_records(), _checks(), args=["--claims-select", "beta-claim"])
    alpha = run.claim("alpha-claim")
    assert alpha["decided"] == {"at": old["generated"], "profile": "ci", "run": "full"}


def test_report_files_are_written_0644_and_atomically(planted):
    previous = os.umask(0o022)
    try:
        run = planted(_records(), _checks())
    finally:
        os.umask(previous)
    for name in FILES:
        assert stat.S_IMODE((run.report_dir / name).stat().st_mode) == 0o644, name
    # no temporary left; the lock file that serialises concurrent runs stays (as filelock leaves it), and
    # the manifest of the files the writer wrote
    assert sorted(p.name for p in run.report_dir.iterdir() if p.name.startswith(".")) == [
        ".attention-claims-manifest.json", ".claims.lock"]
