"""Issue 43 (faults III), finding 4: a verdict read from an earlier report is never trusted.

Before: a ``claims.json`` edited by hand (a false claim's verdict set to ``true``, its failed certified reading
left) was carried by a ``--claims-select`` run of another claim into all three reports and counted, exit 0.
Now the claims a subset run carries are recomputed from their stored readings by the function ``merge`` uses,
and a report whose verdicts or counts disagree with its readings is set aside with a warning (in the terminal and
in the report), the run starting from no earlier report.
"""

from __future__ import annotations

import json

import pytest

from conftest import record_toml

CHECKS = {
    "test_f.py": '''
import pytest
from attention_claims.testkit import refute

@pytest.mark.claim("f-claim", reading="exact")
def test_f(claim_log):
    claim_log.example(x=1.0)
    refute("it fails", example={"x": 1}, certified=True)
''',
    "test_t.py": '''
import pytest

@pytest.mark.claim("t-claim", reading="exact")
def test_t(claim_log):
    claim_log.example(x=1.0)
''',
}


def _records():
    return {"f.toml": record_toml("f-claim", expected="false"),
            "t.toml": record_toml("t-claim", document="004_5f57af8801c437dc.txt", quote="一句话")}


def _edit(path, change):
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def _claim(data, cid):
    return next(c for c in data["claims"] if c["id"] == cid)


def _forge_verdict(data):
    _claim(data, "f-claim")["verdict"] = "true"
    _claim(data, "f-claim")["reason"] = "every reading that ran held"


def _forge_counts(data):
    data["counts"]["total"]["false"] = 0
    data["counts"]["total"]["true"] = 2


@pytest.mark.parametrize("forge, what", [(_forge_verdict, "f-claim"), (_forge_counts, "counts")],
                         ids=["verdict", "counts"])
def test_iii_finding_4_a_report_whose_verdicts_disagree_with_its_readings_is_set_aside(planted, forge, what):
    first = planted(_records(), CHECKS, args=["-n", "0"])
    assert first.claim("f-claim")["verdict"] == "false", first.result.stdout.str()
    _edit(first.report_dir / "claims.json", forge)
    run = planted(_records(), CHECKS, args=["-n", "0", "--claims-select", "t-claim"])
    out = run.result.stdout.str()
    assert "attention-claims: warning:" in out and "set aside" in out and what in out, out
    report = run.report
    f = _claim(report, "f-claim")
    assert f["verdict"] != "true", f  # never the forged verdict
    assert report["counts"]["total"]["true"] == 1  # t-claim only
    assert any("set aside" in e for e in report["run"]["errors"] + report["run"].get("notices", [])), report["run"]
    md = (run.report_dir / "claims.md").read_text(encoding="utf-8")
    assert "set aside" in md
    assert list(run.report_dir.glob("claims.json.corrupt-*")), list(run.report_dir.iterdir())


def test_iii_finding_4_an_honest_report_is_carried_and_recomputed(planted):
    """The control: the same subset run on an untouched report keeps f-claim's ``false``, recomputed."""
    first = planted(_records(), CHECKS, args=["-n", "0"])
    assert first.result.ret == 0, first.result.stdout.str()
    run = planted(_records(), CHECKS, args=["-n", "0", "--claims-select", "t-claim"])
    assert run.result.ret == 0, run.result.stdout.str()
    assert "set aside" not in run.result.stdout.str()
    assert _claim(run.report, "f-claim")["verdict"] == "false"
    assert run.report["counts"]["total"]["false"] == 1
