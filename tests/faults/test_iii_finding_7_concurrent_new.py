"""Issue 43, finding 7: two ``attention-claims new`` at once lost ``SHA256SUMS`` lines and gave two
records of one document the same number.

``new`` now takes the project's lock (``filelock``) before it reads ``SHA256SUMS`` and numbers the
record, and holds it until its files are placed. Several processes at once: every document listed,
every record numbered once, the catalog loads.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from attention_claims.framework.records import load_catalog

WORKERS = 6


def _start(project: Path, k: int, document: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                                       os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, "-m", "attention_claims.cli", "new", f"claim-{k}",
                             "--document", document, "--quote", "Every row of A sums to one."],
                            cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _run_all(project: Path, documents: list[str]) -> None:
    procs = [_start(project, k, d) for k, d in enumerate(documents)]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()


def test_iii_finding_7_concurrent_new_keeps_every_sums_line(note_project):
    docs = [f"note{k}.md" for k in range(WORKERS)]
    for d in docs:
        (note_project / "sources" / d).write_text((note_project / "sources" / "note.md").read_text())
    _run_all(note_project, docs)
    listed = (note_project / "sources" / "SHA256SUMS").read_text().splitlines()
    assert sorted(line.split()[1] for line in listed) == sorted(docs)
    assert len(load_catalog(note_project / "claims", note_project / "sources")) == WORKERS


def test_iii_finding_7_concurrent_new_numbers_each_record_once(note_project):
    _run_all(note_project, ["note.md"] * WORKERS)
    names = sorted(p.name for p in (note_project / "claims" / "note").iterdir())
    numbers = [n.split("-", 1)[0] for n in names]
    assert numbers == [f"{k:03d}" for k in range(1, WORKERS + 1)], names
    assert len(load_catalog(note_project / "claims", note_project / "sources")) == WORKERS
