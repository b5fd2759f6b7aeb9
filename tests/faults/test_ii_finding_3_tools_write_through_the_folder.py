"""Issue 33, finding 3 (loose end): the suite's other writers into the report folder, ``python -m
attention_claims.tools.stability``, ``python -m attention_claims.tools.mutation_report`` and the checks'
figures and per-layer tables, go through the report folder
(:func:`attention_claims.framework.report_folder.write_suite_file`): a file of theirs that someone else put
there stops them (exit status 4 for the tools, nothing replaced), a sources or claims folder is refused, the
files they wrote before the manifest are adopted, and the manifest lists what they write."""

from __future__ import annotations

import importlib.metadata
import json
import sys
import types
from pathlib import Path

import pytest

from attention_claims.framework import config as claims_config
from attention_claims.framework.report_folder import MANIFEST, ReportFolderError, is_matplotlib_png, write_suite_file
from attention_claims.tools import mutation_report, stability


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _manifest(folder: Path) -> dict:
    return json.loads((folder / MANIFEST).read_text(encoding="utf-8"))["files"]


@pytest.fixture
def one_seed(monkeypatch):
    """``stability.main`` without running pytest: every seed gives the same verdicts."""
    monkeypatch.setattr(stability, "run_seed", lambda seed, profile, paths, workers=0: {"a-claim": "true"})
    return ["--seeds", "2", "--profile", "dev"]


def test_stability_refuses_a_stability_json_it_did_not_write(tmp_path, one_seed, capsys):
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "stability.json").write_text('{"my": "own notes"}\n', encoding="utf-8")
    before = _snapshot(folder)
    assert stability.main([*one_seed, "--out", str(folder / "stability.json")]) == 4
    err = capsys.readouterr().err
    assert f"the report folder {folder} is not the suite's to write" in err and "stability.json" in err
    assert _snapshot(folder) == before | {".claims.lock": b""}  # only the (empty) lock file was added


def test_stability_refuses_a_claims_folder(tmp_path, one_seed, capsys):
    claims = tmp_path / "claims"
    claims.mkdir()
    (claims / "a-claim.toml").write_text('id = "a-claim"\n', encoding="utf-8")
    assert stability.main([*one_seed, "--out", str(claims / "stability.json")]) == 4
    assert "it holds a-claim.toml (a claims folder)" in capsys.readouterr().err
    assert sorted(p.name for p in claims.iterdir()) == ["a-claim.toml"]


def test_stability_adopts_its_own_file_then_lists_it(tmp_path, one_seed):
    folder = tmp_path / "reports"
    folder.mkdir()
    old = {"date": "2026-11-01", "profile": "dev", "seeds": [1, 2], "flips": [], "verdicts": {}}
    (folder / "stability.json").write_text(json.dumps(old), encoding="utf-8")  # committed before the manifest
    (folder / "README.md").write_text("notes\n", encoding="utf-8")
    assert stability.main([*one_seed, "--out", str(folder / "stability.json")]) == 0
    data = json.loads((folder / "stability.json").read_text(encoding="utf-8"))
    assert data["verdicts"] == {"a-claim": "true"} and data["flips"] == []
    assert set(_manifest(folder)) == {"stability.json"}
    assert (folder / "README.md").read_text(encoding="utf-8") == "notes\n"
    # a person edits it after the suite wrote it: the next run refuses to replace it
    (folder / "stability.json").write_text(json.dumps(old | {"edited": True}), encoding="utf-8")
    assert stability.main([*one_seed, "--out", str(folder / "stability.json")]) == 4
    assert json.loads((folder / "stability.json").read_text(encoding="utf-8"))["edited"] is True


@pytest.fixture
def mutmut_project(tmp_path, monkeypatch):
    """A project for ``mutation_report.main`` with one mutated module (one mutant, killed) and a stand-in for
    mutmut's API."""
    root = tmp_path / "project"
    (root / "reports").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.mutmut]\nonly_mutate = ["m.py"]\n', encoding="utf-8")
    (root / "mutants").mkdir()
    (root / "mutants" / "m.py.meta").write_text('{"exit_code_by_key": {"m.x__mutmut_1": 1}}', encoding="utf-8")
    paths = claims_config.ClaimsPaths(root=root, claims_dir=root / "claims", sources_dir=root / "sources",
                                      report_dir=root / "reports")
    monkeypatch.setattr(claims_config, "discover", lambda start=None: paths)
    fake = {"mutmut": types.ModuleType("mutmut"), "mutmut.mutation": types.ModuleType("mutmut.mutation"),
            "mutmut.mutation.diff_apply": types.ModuleType("mutmut.mutation.diff_apply")}
    fake["mutmut.mutation.diff_apply"].get_diff_for_mutant = lambda name, path: ""
    for name, module in fake.items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "3.8.1")
    return root / "reports"


def test_mutation_report_refuses_a_mutation_md_it_did_not_write(mutmut_project, capsys):
    (mutmut_project / "mutation.md").write_text("# My notes on mutation\n", encoding="utf-8")
    before = _snapshot(mutmut_project)
    assert mutation_report.main([]) == 4
    err = capsys.readouterr().err
    assert "not the suite's to write" in err and "mutation.md" in err
    assert {k: v for k, v in _snapshot(mutmut_project).items() if k != ".claims.lock"} == before
    assert not (mutmut_project / "mutation.json").exists()  # nothing written when one file is refused


def test_mutation_report_adopts_its_own_files_then_lists_them(mutmut_project):
    (mutmut_project / "mutation.md").write_text(mutation_report.MD_TITLE + "\n\nold\n", encoding="utf-8")
    (mutmut_project / "mutation.json").write_text('{"tool": "mutmut 3.8.1", "survivors": []}', encoding="utf-8")
    assert mutation_report.main([]) == 0
    assert (mutmut_project / "mutation.md").read_text(encoding="utf-8").startswith(mutation_report.MD_TITLE + "\n")
    assert json.loads((mutmut_project / "mutation.json").read_text(encoding="utf-8"))["tool"] == "mutmut 3.8.1"
    assert set(_manifest(mutmut_project)) == {"mutation.json", "mutation.md"}


def _matplotlib_png(path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(1, 1))
    try:
        fig.savefig(path, format="png")
    finally:
        plt.close(fig)


def test_a_checks_figure_never_replaces_a_users_file(tmp_path):
    """The sparsity checks' figures (``figures/9889-relu2.png``) and the trained-model tables go through
    :func:`write_suite_file`: a user's file of that name stops them; a Matplotlib PNG (a figure the suite
    drew before the manifest) is adopted."""
    folder = tmp_path / "reports"
    (folder / "figures").mkdir(parents=True)
    user = folder / "figures" / "9889-relu2.png"
    user.write_bytes(b"\x89PNG\r\n\x1a\n a picture the user drew")
    assert not is_matplotlib_png(user)
    with pytest.raises(ReportFolderError, match="9889-relu2.png is there and the suite did not write it"):
        write_suite_file(folder, "figures/9889-relu2.png", b"new figure", adopt=is_matplotlib_png)
    assert user.read_bytes() == b"\x89PNG\r\n\x1a\n a picture the user drew"
    old = folder / "figures" / "9889-identity.png"
    _matplotlib_png(old)
    assert is_matplotlib_png(old)
    write_suite_file(folder, "figures/9889-identity.png", b"new figure", adopt=is_matplotlib_png)
    assert old.read_bytes() == b"new figure" and "figures/9889-identity.png" in _manifest(folder)
    write_suite_file(folder, "figures/9889-identity.png", b"newer figure")  # listed now: no adoption needed
    assert old.read_bytes() == b"newer figure"


def test_mutation_report_without_mutmut_is_a_usage_error_not_a_traceback(mutmut_project, monkeypatch, capsys):
    """mutmut is an optional dependency (the extra ``mutation``); a stranger's ``attention-claims
    mutation-report`` without it once ended in ModuleNotFoundError."""
    for name in ("mutmut", "mutmut.mutation", "mutmut.mutation.diff_apply"):
        monkeypatch.setitem(sys.modules, name, None)  # import raises ImportError
    assert mutation_report.main([]) == 4
    err = capsys.readouterr().err
    assert "mutmut is not installed" in err and "attention-claims[mutation]" in err and err.count("\n") == 1
    assert not (mutmut_project / "mutation.md").exists()
