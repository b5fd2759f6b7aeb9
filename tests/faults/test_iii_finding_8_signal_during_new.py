"""Issue 43, finding 8: SIGTERM while ``new`` places its files left half a claim and ``.new``
temporaries, and a retry said the id was taken.

``new`` now turns SIGTERM, SIGINT and SIGHUP into an exception while it works, so its rollback runs:
nothing is left, the earlier handlers are back, and a retry succeeds.
"""

from __future__ import annotations

import os
import signal

import pytest

from attention_claims.cli import main
from attention_claims.tools import _guard, new

QUOTE = "Every row of A sums to one."


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_iii_finding_8_signal_while_placing_rolls_back(note_project, capsys, monkeypatch, signum):
    before = sorted(p.relative_to(note_project) for p in note_project.rglob("*"))
    real_place = new._place_new
    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}

    placed = []

    def place_then_signal(tmp, path):
        real_place(tmp, path)
        placed.append(path)
        if len(placed) == 2:  # SHA256SUMS and the record placed, the check not yet
            os.kill(os.getpid(), signum)

    monkeypatch.setattr(new, "_place_new", place_then_signal)
    assert main(["new", "rows", "--document", "note.md", "--quote", QUOTE]) == 128 + signum
    assert "interrupted" in capsys.readouterr().err
    after = sorted(p.relative_to(note_project) for p in note_project.rglob("*")
                   if p.name != _guard.LOCK_NAME)
    assert after == before, after
    assert len(placed) == 2
    assert {s: signal.getsignal(s) for s in handlers} == handlers
    monkeypatch.setattr(new, "_place_new", real_place)
    assert main(["new", "rows", "--document", "note.md", "--quote", QUOTE]) == 0
