"""The snapshot comparison of reading outcomes (attention_claims.tools.snapshot)."""

from __future__ import annotations

import json

import pytest

from attention_claims.tools.snapshot import SnapshotError, differences, load_report, main, outcomes


def _report(verdict="false", outcome="failed", certified=True, complete=True):
    return {"run": {"complete": complete, "partial": False, "interrupted": False},
            "claims": [{"id": "c", "verdict": verdict,
                        "readings": [{"name": "exact", "outcome": outcome, "certified": certified}]}]}


def test_identical_reports_have_no_differences():
    assert differences(outcomes(_report()), outcomes(_report())) == []


@pytest.mark.parametrize("change, line", [
    (dict(verdict="true", outcome="held", certified=False), "c: verdict false -> true"),
    (dict(certified=False), "c [exact]: failed (certified) -> failed"),
])
def test_a_moved_verdict_or_flag_is_reported(change, line):
    assert line in differences(outcomes(_report()), outcomes(_report(**change)))


def test_partial_report_is_refused(tmp_path):
    path = tmp_path / "claims.json"
    path.write_text(json.dumps(_report(complete=False)), encoding="utf-8")
    with pytest.raises(SnapshotError, match="not a complete run"):
        load_report(path)


def _subset_report(verdict_c="false", verdict_d="true"):
    # a subset run that decided c; d kept its last decision (here a different one from the snapshot's)
    rep = {"run": {"complete": False, "partial": True, "interrupted": False, "in_progress": False}, "claims": [
        {"id": "c", "verdict": verdict_c, "selected": True,
         "readings": [{"name": "exact", "outcome": "failed", "certified": True}]},
        {"id": "d", "verdict": verdict_d, "selected": False, "readings": []}]}
    return rep


def test_subset_run_is_compared_on_the_claims_it_decided(tmp_path, capsys):
    rep, snap = tmp_path / "claims.json", tmp_path / "snap.json"
    snap.write_text(json.dumps({"c": {"verdict": "false", "readings": {"exact": ["failed", True]}},
                                "d": {"verdict": "caveat", "readings": {}}}), encoding="utf-8")
    rep.write_text(json.dumps(_subset_report()), encoding="utf-8")
    assert main([str(rep), "--snapshot", str(snap)]) == 0  # d differs but was not decided by this run
    assert "over 1 claims and 1 readings (a subset run" in capsys.readouterr().out
    rep.write_text(json.dumps(_subset_report(verdict_c="caveat")), encoding="utf-8")
    assert main([str(rep), "--snapshot", str(snap)]) == 1
    assert "c: verdict false -> caveat" in capsys.readouterr().out
    assert main([str(rep), "--snapshot", str(snap), "--update"]) == 4  # a subset never rewrites the snapshot
    assert "not a complete run" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["interrupted", "in_progress"])
def test_interrupted_or_unfinished_run_is_refused(tmp_path, flag):
    path = tmp_path / "claims.json"
    rep = _subset_report()
    rep["run"][flag] = True
    path.write_text(json.dumps(rep), encoding="utf-8")
    with pytest.raises(SnapshotError, match="interrupted or has not finished"):
        load_report(path, allow_partial=True)


def test_main_exit_status(tmp_path, capsys):
    rep, snap = tmp_path / "claims.json", tmp_path / "snap.json"
    rep.write_text(json.dumps(_report()), encoding="utf-8")
    assert main([str(rep), "--snapshot", str(snap), "--update"]) == 0
    assert main([str(rep), "--snapshot", str(snap)]) == 0
    rep.write_text(json.dumps(_report(verdict="caveat")), encoding="utf-8")
    assert main([str(rep), "--snapshot", str(snap)]) == 1
    assert "verdict false -> caveat" in capsys.readouterr().out
    assert main([str(tmp_path / "missing.json"), "--snapshot", str(snap)]) == 4


def test_summary_has_the_tally_and_the_moves(tmp_path):
    rep, snap, summary = tmp_path / "claims.json", tmp_path / "snap.json", tmp_path / "summary.md"
    rep.write_text(json.dumps(_report()), encoding="utf-8")
    main([str(rep), "--snapshot", str(snap), "--update"])
    rep.write_text(json.dumps(_report(verdict="true", outcome="held", certified=False)), encoding="utf-8")
    assert main([str(rep), "--snapshot", str(snap), "--summary", str(summary)]) == 1
    text = summary.read_text(encoding="utf-8")
    assert "| true | 1 |" in text and "- c: verdict false -> true" in text


def test_a_run_whose_checks_did_not_finish_is_refused_naming_them(tmp_path, capsys):
    """A run with a claim in ``error`` (a check crashed) is no snapshot, and the message says why (not "run the
    whole suite first"); the job summary's tally shows the error."""
    rep, snap = tmp_path / "claims.json", tmp_path / "snap.json"
    report = _report(verdict="error", outcome="error", certified=False, complete=False)
    report["run"]["unfinished"] = 1
    rep.write_text(json.dumps(report), encoding="utf-8")
    with pytest.raises(SnapshotError, match=r"1 check\(s\) did not finish \(verdict error: c\)"):
        load_report(rep)
    assert main([str(rep), "--snapshot", str(snap), "--update"]) == 4
    assert "did not finish" in capsys.readouterr().err
    from attention_claims.tools.snapshot import summary_markdown

    assert "| error | 1 |" in summary_markdown(report, [])


@pytest.mark.parametrize("content, message", [
    (b"\xff\xfe", "cannot read the report (not UTF-8: 'utf-8' codec can't decode"),
    (b"[1, 2]", "not a claims.json report (a JSON list, not an object)"),
    (json.dumps({"run": {"complete": True}, "claims": [{"id": "a", "verdict": "true",
                                                         "readings": [{"name": "x"}]}]}).encode(),
     "not a claims.json report (no field 'outcome')"),
    (json.dumps({"run": [], "claims": []}).encode(), "not a claims.json report ('run' is a list, not an object)"),
])
def test_a_damaged_report_is_named_not_a_traceback(tmp_path, capsys, content, message):
    """A hand-damaged claims.json (not UTF-8, not an object, a reading without its outcome) once ended
    snapshot in UnicodeDecodeError, AttributeError or KeyError; it is exit status 2 naming the file."""
    path = tmp_path / "claims.json"
    path.write_bytes(content)
    assert main([str(path), "--snapshot", str(tmp_path / "snap.json")]) == 4
    err = capsys.readouterr().err
    assert err.startswith(f"snapshot: {path}: ") and message in err and err.count("\n") == 1


def test_a_partial_report_says_why_it_is_partial(tmp_path, capsys):
    path = tmp_path / "claims.json"
    path.write_text(json.dumps(_subset_report()), encoding="utf-8")
    assert main([str(path), "--snapshot", str(tmp_path / "snap.json"), "--update"]) == 4
    err = capsys.readouterr().err
    assert "not a complete run: its last run decided only some claims (--claims-select" in err
    assert "{" not in err  # no dict of the run's fields
