"""Issue 43, finding 11: ``stability`` and ``mutation-report`` refuse empty or vacuous inputs and never replace
a result with an empty one.

``stability --seeds 0`` replaced a real ``stability.json`` with an empty one; ``mutation-report`` with no
mutation run wrote an empty report over ``mutation.md``; ``only_mutate`` as a string was split into
characters; malformed inputs gave tracebacks with exit 1. Each is now exit status 4 (a usage error) with one
message naming the file or option, nothing run and nothing written; a string ``only_mutate`` is one module.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from refusal import point_tools_at
from refusal import refused as _refused

from attention_claims.tools import mutation_report, stability

OLD_STABILITY = {"date": "2026-11-01T00:00:00+00:00", "commit": "abc", "profile": "dev", "seeds": [1, 2],
                 "paths": ["checks"], "claims": 1, "verdicts": {"a-claim": "true"}, "flips": []}


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project root (``pyproject.toml`` with ``[tool.mutmut] only_mutate = ["m.py"]``, a report folder
    holding an earlier ``stability.json``, ``mutation.json`` and ``mutation.md`` of these tools) and a
    stand-in for mutmut's API; the tools' ``discover`` points at it."""
    root = tmp_path / "project"
    reports = root / "reports"
    reports.mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.mutmut]\nonly_mutate = ["m.py"]\n', encoding="utf-8")
    (reports / "stability.json").write_text(json.dumps(OLD_STABILITY), encoding="utf-8")
    (reports / "mutation.md").write_text(mutation_report.MD_TITLE + "\n\nan earlier run: score 91.0 %\n",
                                         encoding="utf-8")
    (reports / "mutation.json").write_text('{"tool": "mutmut 3.8.1", "survivors": [], "score": 0.91}',
                                           encoding="utf-8")
    point_tools_at(monkeypatch, root, reports)
    return root



def _meta(root: Path, module: str, codes: dict) -> None:
    (root / "mutants").mkdir(exist_ok=True)
    (root / "mutants" / f"{module}.meta").write_text(json.dumps({"exit_code_by_key": codes}), encoding="utf-8")



# -- stability ------------------------------------------------------------------------------------------------

@pytest.fixture
def no_pytest(monkeypatch):
    """``run_seed`` must not be called: a refused command line runs nothing."""
    calls = []
    monkeypatch.setattr(stability, "run_seed", lambda *a, **k: calls.append(a) or {"a-claim": "true"})
    return calls


@pytest.mark.parametrize("seeds", ["0", "1", "-3"])
def test_iii_finding_11_stability_too_few_seeds_refused(project, no_pytest, capsys, seeds):
    _refused(capsys, lambda: stability.main(["--seeds", seeds, "--profile", "dev"]), project / "reports",
             f"--seeds {seeds}", "at least 2 seeds")
    assert no_pytest == []


def test_iii_finding_11_stability_negative_workers_refused(project, no_pytest, capsys):
    _refused(capsys, lambda: stability.main(["--seeds", "2", "--workers", "-1"]), project / "reports", "--workers -1")
    assert no_pytest == []


def test_iii_finding_11_stability_runs_deciding_nothing_refused(project, monkeypatch, capsys):
    monkeypatch.setattr(stability, "run_seed", lambda *a, **k: {})
    _refused(capsys, lambda: stability.main(["--seeds", "2", "nothing/"]), project / "reports",
             "decided no claim", "nothing/")


def test_iii_finding_11_stability_still_writes_a_real_comparison(project, monkeypatch):
    monkeypatch.setattr(stability, "run_seed", lambda seed, *a, **k: {"a-claim": "true", "b-claim": "false"})
    assert stability.main(["--seeds", "2", "--base", "5"]) == 0
    data = json.loads((project / "reports" / "stability.json").read_text(encoding="utf-8"))
    assert data["seeds"] == [5, 6] and data["claims"] == 2 and data["flips"] == []


@pytest.mark.parametrize("written", ["{not json", "[1, 2]", '{"claims": [{"verdict": "true"}]}'])
def test_iii_finding_11_stability_malformed_seed_report_is_a_usage_error(project, monkeypatch, capsys, written):
    """A seed's run that leaves a report this tool cannot read: exit 4 naming the seed, no traceback."""
    def fake_run(cmd, **kwargs):
        out = Path(cmd[cmd.index("--claims-report-dir") + 1])
        (out / "claims.json").write_text(written, encoding="utf-8")
        return subprocess.CompletedProcess(cmd, 0, stdout="", stderr=None)

    monkeypatch.setattr(stability.subprocess, "run", fake_run)
    err = _refused(capsys, lambda: stability.main(["--seeds", "2", "--base", "3"]), project / "reports", "seed 3")
    assert "report" in err


# -- mutation-report ------------------------------------------------------------------------------------------

def test_iii_finding_11_mutation_report_without_a_run_refused(project, capsys):
    _refused(capsys, lambda: mutation_report.main([]), project / "reports", "no mutmut run to summarise", "m.py")


def test_iii_finding_11_mutation_report_with_nothing_mutated_refused(project, capsys):
    (project / "pyproject.toml").write_text("[tool.mutmut]\nonly_mutate = []\n", encoding="utf-8")
    _refused(capsys, lambda: mutation_report.main([]), project / "reports", "only_mutate names no module")
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    _refused(capsys, lambda: mutation_report.main([]), project / "reports", "only_mutate names no module")


def test_iii_finding_11_mutation_report_with_no_mutant_checked_refused(project, capsys):
    _meta(project, "m.py", {"m.x__mutmut_1": None, "m.x__mutmut_2": None})
    _refused(capsys, lambda: mutation_report.main([]), project / "reports", "no mutant has been checked yet",
             "2 not checked")


def test_iii_finding_11_mutation_report_module_without_meta_refused(project, capsys):
    (project / "pyproject.toml").write_text('[tool.mutmut]\nonly_mutate = ["m.py", "n.py"]\n', encoding="utf-8")
    _meta(project, "m.py", {"m.x__mutmut_1": 1})
    _refused(capsys, lambda: mutation_report.main([]), project / "reports", "no .meta file of n.py")


def test_iii_finding_11_only_mutate_as_a_string_is_one_module(project):
    (project / "pyproject.toml").write_text('[tool.mutmut]\nonly_mutate = "m.py"\n', encoding="utf-8")
    assert mutation_report.mutated_modules(project) == ["m.py"]  # not ["m", ".", "p", "y"]
    _meta(project, "m.py", {"m.x__mutmut_1": 1, "m.x__mutmut_2": 0})
    assert mutation_report.main([]) == 0
    data = json.loads((project / "reports" / "mutation.json").read_text(encoding="utf-8"))
    assert data["modules"] == ["m.py"] and data["total"] == 2 and data["killed"] == 1
    assert [s["name"] for s in data["survivors"]] == ["m.x__mutmut_2"]


@pytest.mark.parametrize("setting, words", [
    ("only_mutate = 3", "only_mutate = 3 is not a list of strings"),
    ('only_mutate = ["m.py", 2]', "is not a list of strings"),
    ('only_mutate = ["m.py"]\npytest_add_cli_args = "-x"\npytest_add_cli_args_test_selection = 5',
     "pytest_add_cli_args_test_selection = 5"),
    ("only_mutate = [", "cannot read it as TOML"),
])
def test_iii_finding_11_malformed_mutmut_config_refused(project, capsys, setting, words):
    _meta(project, "m.py", {"m.x__mutmut_1": 1})
    (project / "pyproject.toml").write_text(f"[tool.mutmut]\n{setting}\n", encoding="utf-8")
    _refused(capsys, lambda: mutation_report.main([]), project / "reports", "pyproject.toml", words)


@pytest.mark.parametrize("meta", ["{broken", "[]", '{"exit_code_by_key": [1]}', '{"exit_code_by_key": {"a": "1"}}',
                                  '{"exit_code_by_key": {"a": true}}'])
def test_iii_finding_11_malformed_meta_refused(project, capsys, meta):
    (project / "mutants").mkdir()
    (project / "mutants" / "m.py.meta").write_text(meta, encoding="utf-8")
    _refused(capsys, lambda: mutation_report.main([]), project / "reports", "m.py.meta")


@pytest.mark.parametrize("notes", ["{broken", '["equivalent"]', '{"m.x__mutmut_2": 3}'])
def test_iii_finding_11_malformed_explanations_refused(project, capsys, notes):
    _meta(project, "m.py", {"m.x__mutmut_1": 1, "m.x__mutmut_2": 0})
    (project / "reports" / "mutation_explanations.json").write_text(notes, encoding="utf-8")
    _refused(capsys, lambda: mutation_report.main([]), project / "reports", "mutation_explanations.json")


def test_iii_finding_11_mutmut_that_cannot_give_a_diff_is_a_usage_error(project, capsys, monkeypatch):
    _meta(project, "m.py", {"m.x__mutmut_2": 0})

    def broken(name, path):
        raise FileNotFoundError(f"mutants/{path}")

    monkeypatch.setattr(sys.modules["mutmut.mutation.diff_apply"], "get_diff_for_mutant", broken)
    _refused(capsys, lambda: mutation_report.main([]), project / "reports", "m.x__mutmut_2", "cannot give its diff")
