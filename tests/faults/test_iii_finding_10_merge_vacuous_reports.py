"""Issue 43, finding 10: ``merge`` refuses a report that claims what it shows no run of.

A report whose decided claims have ``"readings": []``, or a reading ``held`` with ``ran_on: null``, merged
into every claim ``undecided`` and "agreeing", ``complete: true``, exit 0. Each is now a usage error (exit
4) naming the report, the claim and the reading, and no merged report is written; a ``skipped`` reading
with no ``ran_on`` (what a run writes) still merges.
"""

from __future__ import annotations

import copy
import json

import pytest

from attention_claims.framework.merge import MergeError, merge_reports
from attention_claims.framework.records import load_catalog
from attention_claims.tools import merge as merge_tool
from conftest import small_project_checks as _checks
from conftest import small_project_records as _records


@pytest.fixture
def merge(planted, pytester, capsys):
    """``merge(report dict, alone=True) -> (status, stderr, out folder)`` as in test_ii_finding_4_merge_inputs."""
    run = planted(_records(), _checks())
    good = json.loads((run.report_dir / "claims.json").read_text(encoding="utf-8"))

    def call(report, alone=True):
        path = pytester.path / "bad.json"
        path.write_text(json.dumps(report), encoding="utf-8")
        out = pytester.path / "merged"
        capsys.readouterr()
        inputs = [str(path)] if alone else [str(run.report_dir / "claims.json"), str(path)]
        status = merge_tool.main([*inputs, "-o", str(out), "--claims-dir", str(pytester.path / "records"),
                                  "--claims-sources", str(pytester.path / "sources")])
        err = capsys.readouterr().err
        assert "Traceback" not in err
        return status, err, out

    call.good = good
    call.bad = pytester.path / "bad.json"
    call.catalog = lambda: load_catalog(pytester.path / "records", pytester.path / "sources")
    return call


def _claim(report: dict, cid: str) -> dict:
    return next(c for c in report["claims"] if c["id"] == cid)


def test_iii_finding_10_decided_claims_without_readings_refused(merge):
    report = copy.deepcopy(merge.good)
    for c in report["claims"]:
        c["readings"] = []
    status, err, out = merge(report)
    assert status == 4, err
    assert str(merge.bad) in err and "alpha-claim" in err and "lists none of its 1 readings" in err, err
    assert not (out / "claims.json").exists()


@pytest.mark.parametrize("outcome", ["held", "failed", "error"])
def test_iii_finding_10_reading_that_ran_without_ran_on_refused(merge, outcome):
    report = copy.deepcopy(merge.good)
    reading = _claim(report, "beta-claim")["readings"][0]
    reading["outcome"], reading["ran_on"] = outcome, None
    status, err, out = merge(report, alone=False)
    assert status == 4, err
    assert f"claim 'beta-claim', reading 'exact': outcome '{outcome}' with no ran_on" in err, err
    assert not (out / "claims.json").exists()


def test_iii_finding_10_skipped_reading_without_ran_on_still_merges(merge):
    """What a run writes for a reading whose checks were all skipped: merged, the claim undecided."""
    report = copy.deepcopy(merge.good)
    reading = _claim(report, "beta-claim")["readings"][0]
    reading["outcome"], reading["ran_on"] = "skipped", None
    status, err, out = merge(report)
    assert status == 0, err  # undecided agrees with an expected true a run of the skipped reading could give
    merged = json.loads((out / "claims.json").read_text(encoding="utf-8"))
    assert _claim(merged, "beta-claim")["verdict"] == "undecided"
    assert _claim(merged, "alpha-claim")["verdict"] == "true"


def test_iii_finding_10_the_library_call_refuses_too(merge):
    report = copy.deepcopy(merge.good)
    _claim(report, "alpha-claim")["readings"] = []
    with pytest.raises(MergeError, match="alpha-claim"):
        merge_reports([("edited.json", report)], merge.catalog())
