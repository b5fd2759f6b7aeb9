"""Shared assertions of the faults tests for a command that must refuse its input: exit status 4, one line on
stderr naming what is wrong, no traceback, and nothing written or replaced in the project's folder."""

from __future__ import annotations

from pathlib import Path


def folder_files(folder: Path) -> dict[str, bytes]:
    """The bytes of every file directly in ``folder`` (the project lock aside): what a refusal must leave as is."""
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and p.name != ".claims.lock"}


def refused(capsys, call, folder: Path, *words: str) -> str:
    """Run ``call()`` (a command's ``main``) and assert it refused: exit 4, one line on stderr containing every
    one of ``words`` and no traceback, and ``folder``'s files unchanged. Returns the line."""
    before = folder_files(folder)
    assert call() == 4
    err = capsys.readouterr().err
    assert "Traceback" not in err and all(w in err for w in words), err
    assert err.count("\n") == 1, err
    assert folder_files(folder) == before, "a result was replaced or a file written"
    return err


def point_tools_at(monkeypatch, root: Path, reports: Path) -> None:
    """Make ``stability`` and ``mutation-report`` see the project at ``root`` (its report folder ``reports``) and a
    stand-in for mutmut 3.8.1 (its one function the report calls, ``get_diff_for_mutant``), without installing it."""
    import importlib.metadata
    import sys
    import types

    from attention_claims.framework import config as claims_config

    paths = claims_config.ClaimsPaths(root=root, claims_dir=root / "claims", sources_dir=root / "sources",
                                      report_dir=reports)
    monkeypatch.setattr(claims_config, "discover", lambda start=None: paths)
    fake = {"mutmut": types.ModuleType("mutmut"), "mutmut.mutation": types.ModuleType("mutmut.mutation"),
            "mutmut.mutation.diff_apply": types.ModuleType("mutmut.mutation.diff_apply")}
    fake["mutmut.mutation.diff_apply"].get_diff_for_mutant = lambda name, path: f"--- {path}\n+++ {name}\n"
    for name, module in fake.items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "3.8.1")
