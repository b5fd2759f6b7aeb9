"""The typed report model, the verdict rules it relies on, and the JSON Schema of ``claims.json``
(``docs/claims.schema.json``) checked against reports the real plugin writes."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from attention_claims.framework.records import Claim, Reading, Source
from attention_claims.framework.report_model import ClaimEntry, Report
from attention_claims.framework.verdict import NOT_SELECTED, ReadingOutcome, decide
from conftest import record_toml

jsonschema = pytest.importorskip("jsonschema")
ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "claims.schema.json").read_text(encoding="utf-8"))

CHECKS = {"test_c.py": '''
import pytest
from attention_claims.testkit import refute

@pytest.mark.claim("c", reading="exact")
def test_exact(claim_log):
    claim_log.example(x=1.0)
    claim_log.plot("curve", {"x": [1, 2], "series": {"y": [3.0, float("inf")]}})

@pytest.mark.claim("c", reading="fp16")
def test_fp16(claim_log):
    refute("planted failure", example={"N": 2}, certified=True, certificate="planted", boundary="gap 8")
'''}


def _validate(report: dict) -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.Draft202012Validator(SCHEMA).validate(report)


EXACT = (Reading("exact", "r", as_stated=True),)


def _claim(expected="true", readings=EXACT) -> Claim:
    return Claim(id="c", title="t", statement="s", expected=expected, source=Source("003_a0ad15dda516ed1d.txt", "x", "q"),
                 readings=tuple(readings), path="c.toml")


def test_a_real_report_satisfies_the_schema(planted):
    records = {"c.toml": record_toml("c", expected="caveat", readings=(("exact", True), ("fp16", False))),
               "u.toml": record_toml("u", expected="unchecked", readings=(),
                                     extra='unchecked_reason = "about training"')}
    run = planted(records, CHECKS)
    assert run.result.ret == 0, run.result.stdout.str()
    report = run.report
    _validate(report)
    assert report["claims"][0]["readings"][1]["counterexample"]["boundary"] == "gap 8"
    assert report["claims"][0]["readings"][0]["plots"] == [
        {"kind": "curve", "data": {"x": [1, 2], "series": {"y": [3.0, None]}}, "check": "test_c.py::test_exact"}]
    assert {c["id"]: c["verdict"] for c in report["claims"]} == {"c": "caveat", "u": "unchecked"}


def test_the_repository_report_satisfies_the_schema_when_there_is_a_current_one():
    path = ROOT / "reports" / "claims.json"
    if not path.is_file():
        pytest.skip("no reports/claims.json on this machine (run the checks first)")
    report = json.loads(path.read_text(encoding="utf-8"))
    if any("decided" not in c for c in report["claims"]):
        pytest.skip("reports/claims.json predates the 'decided' field (run the checks to rewrite it)")
    _validate(report)


def test_a_schema_violation_is_caught():
    with pytest.raises(jsonschema.ValidationError):
        _validate({"schema": 1, "generated": "now"})


def test_claim_entries_round_trip_through_json(planted):
    run = planted({"c.toml": record_toml("c", expected="caveat", readings=(("exact", True), ("fp16", False)))},
                  CHECKS)
    for c in run.report["claims"]:
        entry = ClaimEntry.from_json(c)
        again = Report(generated="x", environment=None, run=None, trust=None, claims=[entry])
        assert again.claims[0].readings[1].counterexample.message == "planted failure"
        from dataclasses import asdict

        assert asdict(entry) == c


def test_verdict_rules_for_errors_interruptions_and_selection():
    held = {"exact": ReadingOutcome("held")}
    assert decide(_claim(), held).verdict == "true"
    d = decide(_claim(), held, selected=False)
    assert (d.verdict, d.reason, d.agrees) == ("undecided", NOT_SELECTED, True)
    d = decide(_claim(), held, errors=1)
    assert d.verdict == "error" and "did not finish" in d.reason and d.agrees is False
    d = decide(_claim(), {"exact": ReadingOutcome("error")})  # the reading's own outcome says so too
    assert d.verdict == "error" and "'exact' did not finish" in d.reason and d.agrees is False
    d = decide(_claim(), held, errors=1, interrupted=True, pending=2)  # an error is shown, interrupted or not
    assert d.verdict == "error" and d.agrees is False
    d = decide(_claim(), held, interrupted=True, pending=2)
    assert d.verdict == "undecided" and "interrupted before 2" in d.reason and d.agrees is False
    assert decide(_claim(), held, interrupted=True, pending=0).verdict == "true"
    d = decide(_claim(), {}, in_progress=True)
    assert d.verdict == "undecided" and d.agrees is False
    unchecked = _claim(expected="unchecked", readings=())
    assert decide(unchecked, {}, interrupted=True, pending=1).verdict == "unchecked"


def test_writing_the_three_files_for_the_full_catalog_fits_the_budget(tmp_path):
    """Issue 11's budget: the three files of a full report in at most 3 s, the HTML at most 5 MB."""
    import shutil

    from budget import cpu_budget
    from render_fixture import real_report

    from attention_claims.framework.report import write_reports
    from attention_claims.framework.report_model import Environment, Run, Trust

    found = real_report()
    if found is None:
        pytest.skip("no complete full-run report (reports/claims.json or $ATTENTION_CLAIMS_REPORT) on this machine")
    data, folder = found
    if (folder / "figures").is_dir():  # with the manifest that lists them: the folder holds only the suite's files
        shutil.copytree(folder / "figures", tmp_path / "figures")
        if (folder / ".attention-claims-manifest.json").is_file():
            shutil.copy2(folder / ".attention-claims-manifest.json", tmp_path)
    report = Report(generated=data["generated"], environment=Environment(**data["environment"]),
                    run=Run(**{k: v for k, v in data["run"].items() if k in Run.__dataclass_fields__}),
                    trust=Trust(**data["trust"]), claims=[ClaimEntry.from_json(c) for c in data["claims"]])
    write_reports(report, tmp_path)  # the first pays for compiling the templates once per process
    # the budget in CPU seconds (tests/budget.py): wall-clock time failed it beside other runs
    with cpu_budget(3.0, what="writing claims.json, claims.md and claims.html"):
        write_reports(report, tmp_path)
    assert (tmp_path / "claims.html").stat().st_size <= 5 * 2**20
    _validate(json.loads((tmp_path / "claims.json").read_text(encoding="utf-8")))


def test_to_json_is_what_asdict_gives():
    """``Report.to_json`` converts with :func:`plain`, a faster twin of :func:`dataclasses.asdict`: the same
    values for every field type the model holds (and tuples, named tuples, dict subclasses, other objects)."""
    from collections import OrderedDict, namedtuple
    from dataclasses import asdict, dataclass, field

    from render_fixture import fixture_report, real_report

    from attention_claims.framework.report_model import Environment, Run, Trust, plain

    Pair = namedtuple("Pair", "a b")

    @dataclass
    class Odd:
        t: tuple = (1, (2.5, "x"))
        n: Pair = Pair([1], {"k": None})
        o: dict = field(default_factory=lambda: OrderedDict(z=[True], a=Fraction(1, 3)))
        nested: list = field(default_factory=lambda: [{"e": [[1, 2], {"f": 1e-300}]}])

    odd = Odd()
    assert plain(odd) == asdict(odd) and type(plain(odd)["n"]) is Pair and plain(odd)["o"] is not odd.o
    env = {"python": "3.11", "platform": "p", "torch": None, "hypothesis": "h", "mpmath": "m", "python_flint": None,
           "devices": ["cpu"], "hypothesis_profile": "ci"}
    run = {"complete": True, "partial": False, "interrupted": False, "exitstatus": 0, "errors": ["e"]}
    found = real_report()
    for data in [dict(fixture_report(), environment=env, run=run, trust={"planted": {"killed": 1}})] + (
            [found[0]] if found else []):
        report = Report(generated=data.get("generated", "now"), environment=Environment(**data["environment"]),
                        run=Run(**{k: v for k, v in data["run"].items() if k in Run.__dataclass_fields__}),
                        trust=Trust(**data["trust"]), claims=[ClaimEntry.from_json(c) for c in data["claims"]])
        expected = {"schema": report.schema, "generated": report.generated, "environment": asdict(report.environment),
                    "runs": [asdict(r) for r in report.runs], "run": asdict(report.run), "counts": asdict(report.counts), "trust": asdict(report.trust), "documents": report.documents,
                    "claims": [asdict(c) for c in report.claims]}
        assert report.to_json() == expected
        assert json.dumps(report.to_json(), indent=2) == json.dumps(expected, indent=2)
