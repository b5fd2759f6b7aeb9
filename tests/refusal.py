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
