"""Issue 33, finding 4: ``attention-claims merge`` validates each input against the report's JSON Schema
(with size and depth caps) before anything is folded, exit status 4 naming the file and the JSON path of
the first error, never a traceback; its output folder is locked and a damaged ``claims.json`` there is
set aside, not replaced."""

from __future__ import annotations

import copy
import json

import pytest

from attention_claims.framework import report_schema
from attention_claims.framework.report_folder import REPORT_LOCK
from attention_claims.tools import merge as merge_tool
from conftest import small_project_checks as _checks
from conftest import small_project_records as _records


@pytest.fixture
def merge(planted, pytester, capsys):
    """``merge(report dict or text, out=None) -> (status, stderr, out folder)``, merging the given report
    (written to ``bad.json``) beside a good one of the planted project."""
    run = planted(_records(), _checks())
    good = json.loads((run.report_dir / "claims.json").read_text(encoding="utf-8"))

    def call(report, out=None, alone=False):
        path = pytester.path / "bad.json"
        if isinstance(report, int):  # a sparse file of that many bytes
            with open(path, "wb") as f:
                f.truncate(report)
        else:
            path.write_text(report if isinstance(report, str) else json.dumps(report), encoding="utf-8")
        out = out or pytester.path / "merged"
        capsys.readouterr()
        inputs = [str(path)] if alone else [str(run.report_dir / "claims.json"), str(path)]
        status = merge_tool.main([*inputs, "-o", str(out),
                                  "--claims-dir", str(pytester.path / "records"),
                                  "--claims-sources", str(pytester.path / "sources")])
        err = capsys.readouterr().err
        assert "Traceback" not in err
        return status, err, out

    call.good = good
    call.bad = pytester.path / "bad.json"
    return call


def _alpha(report: dict) -> dict:
    return next(c for c in report["claims"] if c["id"] == "alpha-claim")


def test_finding_4_an_error_outcome_is_never_read_as_held(merge):
    """An as-stated reading whose check errored is a valid input (``error`` is an outcome); merged alone, the
    claim is ``error``, never "the as-stated reading holds"."""
    report = copy.deepcopy(merge.good)
    _alpha(report)["readings"][0]["outcome"] = "error"
    status, err, out = merge(report, alone=True)
    assert status == 1, err  # merged; alpha-claim (expected true) disagrees
    merged = _alpha(json.loads((out / "claims.json").read_text(encoding="utf-8")))
    assert merged["readings"][0]["outcome"] == "error" and merged["verdict"] == "error"


def test_finding_4_schema_true_is_not_schema_1(merge):
    status, err, _ = merge(dict(merge.good, schema=True))
    assert status == 4
    assert f"{merge.bad}: not a valid report at $.schema: 1 was expected" in err


def test_finding_4_json_nested_200000_deep_is_refused(merge):
    status, err, _ = merge("[" * 200_000 + "]" * 200_000)
    assert status == 4
    assert f"{merge.bad}: nested deeper than {report_schema.MAX_DEPTH} levels" in err


def test_finding_4_json_nested_past_the_cap_but_parsable_is_refused(merge):
    status, err, _ = merge(dict(merge.good, trust={"planted": json.loads("[" * 100 + "]" * 100)}))
    assert status == 4
    assert f"nested deeper than {report_schema.MAX_DEPTH} levels" in err


def test_finding_4_a_claim_without_title_is_refused(merge):
    report = copy.deepcopy(merge.good)
    del _alpha(report)["title"]
    status, err, _ = merge(report)
    i = report["claims"].index(_alpha(report))
    assert status == 4
    assert f"{merge.bad}: not a valid report at $.claims[{i}]: 'title' is a required property" in err


def test_finding_4_examples_as_a_string_is_refused(merge):
    report = copy.deepcopy(merge.good)
    _alpha(report)["readings"][0]["examples"] = "many"
    status, err, _ = merge(report)
    i = report["claims"].index(_alpha(report))
    assert status == 4
    assert f"at $.claims[{i}].readings[0].examples: 'many' is not of type 'integer'" in err


def test_finding_4_a_plot_of_unknown_kind_is_refused(merge):
    report = copy.deepcopy(merge.good)
    _alpha(report)["readings"][0]["plots"] = [{"kind": "pie", "data": {}}]
    status, err, _ = merge(report)
    i = report["claims"].index(_alpha(report))
    assert status == 4
    assert f"at $.claims[{i}].readings[0].plots[0].kind: 'pie' is not one of" in err


def test_finding_4_a_plot_caption_matplotlib_cannot_parse_is_no_traceback(merge):
    """``$\\frac{$`` as a plot's title: drawn as text (mathtext off for data)."""
    report = copy.deepcopy(merge.good)
    _alpha(report)["readings"][0]["plots"] = [
        {"kind": "curve", "data": {"x": [1, 2], "series": {"a": [1, 2]}, "title": "$\\frac{$"}}]
    status, err, out = merge(report)
    assert status == 0 and (out / "claims.md").is_file(), err


def test_finding_4_a_plot_the_renderer_cannot_draw_names_the_file_and_path(merge):
    report = copy.deepcopy(merge.good)
    _alpha(report)["readings"][0]["plots"] = [{"kind": "curve", "data": {"x": [1, 2], "series": {"a": [1, 2, 3]}}}]
    status, err, out = merge(report)
    i = report["claims"].index(_alpha(report))
    assert status == 4
    assert f"{merge.bad}: the plot at $.claims[{i}].readings[0].plots[0] cannot be drawn (ValueError" in err
    assert not out.exists()


def test_finding_4_a_100_mb_report_is_refused_before_it_is_read(merge):
    status, err, _ = merge(100 * 1024 * 1024)
    assert status == 4
    # the size comes from fstat, before a byte is read
    assert f"{merge.bad}: {100 * 1024 * 1024} bytes, more than the 32 MiB a report may have" in err


def test_finding_4_a_damaged_claims_json_in_the_output_is_set_aside(merge, pytester):
    out = pytester.path / "merged"
    status, err, _ = merge(merge.good, out=out)  # the suite's own claims.json, listed in the manifest
    assert status == 0, err
    (out / "claims.json").write_text('{"schema": 1, "claims": [', encoding="utf-8")
    status, err, _ = merge(merge.good, out=out)
    assert status == 0, err
    kept = sorted(out.glob("claims.json.corrupt-*"))
    assert len(kept) == 1 and kept[0].read_text(encoding="utf-8") == '{"schema": 1, "claims": ['
    assert f"kept aside as {kept[0]}" in err
    assert json.loads((out / "claims.json").read_text(encoding="utf-8"))["schema"] == 1


def test_finding_4_an_unlisted_damaged_claims_json_is_refused_not_set_aside(merge, pytester):
    """Issue 43, finding 5: a claims.json no manifest lists is not the suite's to move."""
    out = pytester.path / "merged"
    out.mkdir()
    (out / "claims.json").write_text('{"schema": 1, "claims": [', encoding="utf-8")
    status, err, _ = merge(merge.good, out=out)
    assert status == 4 and "does not list it" in err, err
    assert not list(out.glob("claims.json.corrupt-*"))
    assert (out / "claims.json").read_text(encoding="utf-8") == '{"schema": 1, "claims": ['


def test_finding_4_merge_takes_the_report_lock(merge, pytester, monkeypatch):
    from filelock import FileLock

    from attention_claims.framework import report_folder

    out = pytester.path / "merged"
    out.mkdir()
    held = FileLock(str(out / REPORT_LOCK))
    held.acquire()
    try:
        monkeypatch.setattr(report_folder, "LOCK_TIMEOUT", 0.2)
        status, err, _ = merge(merge.good, out=out)
    finally:
        held.release()
    assert status == 4
    assert f"another run has held {out / REPORT_LOCK} for 0 s" in err
    assert not (out / "claims.json").exists()
    status, err, _ = merge(merge.good, out=out)  # released: merged; and again into its own folder
    assert status == 0, err
    assert merge(merge.good, out=out)[0] == 0


def test_finding_4_the_installed_package_finds_the_schema():
    """merge reads the schema from the package (package data, so an installed ``attention-claims merge``
    finds it; tests/test_tutorial.py checks the wheel holds every tracked file of the package), and the
    package's file is docs/claims.schema.json itself."""
    from importlib import resources
    from pathlib import Path

    schema = report_schema.report_schema()
    assert schema["$schema"].endswith("2020-12/schema") and "claims" in schema["properties"]
    packaged = resources.files("attention_claims.framework").joinpath(report_schema.SCHEMA_FILE).read_bytes()
    assert packaged == (Path(__file__).resolve().parents[2] / "docs" / "claims.schema.json").read_bytes()


def test_finding_4_a_trust_entry_of_the_wrong_type_is_refused(merge):
    """The trust section's fields that the report shows are typed too (a string kill rate once reached
    the renderer's number format)."""
    report = copy.deepcopy(merge.good)
    report["trust"]["planted"] = {"falsehoods": 2, "caught": 1, "kill_rate": "high"}
    status, err, _ = merge(report)
    assert status == 4
    assert f"{merge.bad}: not a valid report at $.trust.planted.kill_rate: 'high' is not of type" in err


def test_finding_4_plot_data_of_another_shape_is_refused_not_a_traceback(merge):
    report = copy.deepcopy(merge.good)
    _alpha(report)["readings"][0]["plots"] = [{"kind": "spectra", "data": {"spectra": "not a mapping"}}]
    status, err, _ = merge(report)
    i = report["claims"].index(_alpha(report))
    assert status == 4
    assert f"{merge.bad}: the plot at $.claims[{i}].readings[0].plots[0] cannot be drawn (AttributeError" in err


def test_finding_4_a_document_of_any_name_is_merged_and_a_path_out_of_sources_refused(planted, pytester, capsys):
    """A project's own document is named as its author likes (``note.md``: docs/your-own-claims.md); the
    schema once admitted only the seed documents' ``NNN_<16 hex>.txt`` names, so merge refused every
    report of a stranger's project. A name that leaves the sources folder is still refused."""
    run = planted({"n.toml": _records()["a.toml"].replace("003_a0ad15dda516ed1d.txt", "note.md")},
                  {"test_a.py": _checks()["test_a.py"]})
    assert run.result.ret == 0, run.result.stdout.str()
    report = run.report
    assert report["claims"][0]["source"]["document"] == "note.md"

    def call(*inputs):
        capsys.readouterr()
        status = merge_tool.main([*map(str, inputs), "-o", str(pytester.path / "merged"),
                                  "--claims-dir", str(pytester.path / "records"),
                                  "--claims-sources", str(pytester.path / "sources")])
        return status, capsys.readouterr().err

    status, err = call(run.report_dir / "claims.json", run.report_dir / "claims.json")
    assert status == 0, err
    merged = json.loads((pytester.path / "merged" / "claims.json").read_text(encoding="utf-8"))
    assert merged["claims"][0]["source"]["document"] == "note.md"
    for name in ("../note.md", "/etc/passwd", "notes/../../x.md", "~/note.md", "a\\b.md"):
        bad = copy.deepcopy(report)
        bad["claims"][0]["source"]["document"] = name
        path = pytester.path / "bad.json"
        path.write_text(json.dumps(bad), encoding="utf-8")
        status, err = call(path)
        assert status == 4 and f"{path}: not a valid report at $.claims[0].source.document" in err, (name, err)


def test_finding_4_a_folder_given_as_a_report_is_refused_not_a_traceback(merge, pytester):
    """``attention-claims merge -o out runs`` (the folder, not its claims.json): os.open opens a folder
    read-only, and os.fdopen then raised IsADirectoryError through to a traceback."""
    status = merge_tool.main([str(pytester.path), "-o", str(pytester.path / "merged"),
                              "--claims-dir", str(pytester.path / "records"),
                              "--claims-sources", str(pytester.path / "sources")])
    assert status == 4
    with pytest.raises(report_schema.ReportInputError, match="not a regular file"):
        report_schema.read_report(pytester.path)


def test_finding_4_a_claim_or_reading_twice_in_one_report_is_refused(merge):
    """A hand-edited report with one claim twice (or one reading twice in a claim) is refused: which of
    the two would be merged is no rule."""
    report = copy.deepcopy(merge.good)
    report["claims"].append(copy.deepcopy(_alpha(report)))
    i = report["claims"].index(_alpha(report))
    status, err, out = merge(report)
    assert status == 4 and not out.exists()
    assert (f"{merge.bad}: not a valid report at $.claims[{len(report['claims']) - 1}].id: 'alpha-claim' appears "
            f"twice (also at $.claims[{i}])") in err
    report = copy.deepcopy(merge.good)
    _alpha(report)["readings"].append(copy.deepcopy(_alpha(report)["readings"][0]))
    status, err, _ = merge(report)
    assert status == 4
    assert (f"{merge.bad}: not a valid report at $.claims[{i}].readings[1].name: 'exact' appears twice in claim "
            f"'alpha-claim' (also at $.claims[{i}].readings[0])") in err


def test_an_image_merge_cannot_carry_is_named_not_dropped_silently(merge):
    """A check's image lives in its own run's figures/ folder, which merge does not copy (yet): each one it leaves
    behind is a warning naming the claim and the file, never silence (found by a stranger's end-to-end review)."""
    report = copy.deepcopy(merge.good)
    _alpha(report)["readings"][0]["figures"] = [{"path": "figures/alpha-spectrum.png", "caption": "the spectrum",
                                  "check": "checks/test_alpha.py::test_alpha"}]
    status, err, out = merge(report, alone=True)
    assert status in (0, 1)
    assert ("warning: alpha-claim: its image figures/alpha-spectrum.png is not copied into" in err
            and "copy it from the figures/ folder" in err)
    assert (out / "claims.json").is_file()


def test_iii_finding_12_a_merged_report_s_control_characters_are_escaped(merge):
    """Issue 43, finding 12, for merge's inputs: a report from another machine whose reading evidence carries an
    ANSI escape and a bidi override reaches claims.json, claims.md and claims.html escaped, never raw."""
    report = copy.deepcopy(merge.good)
    _alpha(report)["readings"][0]["evidence"] = "held \x1b[2J cleared \u202eevil"
    status, err, out = merge(report, alone=True)
    assert status in (0, 1), err
    for name in ("claims.json", "claims.md", "claims.html"):
        text = (out / name).read_text(encoding="utf-8")
        assert "\x1b" not in text and "\u202e" not in text, name
    merged = _alpha(json.loads((out / "claims.json").read_text(encoding="utf-8")))
    assert merged["readings"][0]["evidence"] == "held \\x1b[2J cleared \\u202eevil"
