"""Issue 43, finding 15 (part): ``sentences --todo --write`` mapped ``note.md`` and ``note.txt`` to one
file, ``sentences/note.toml``, whose stubs then belonged to one document only.

Documents sharing a stem now get their slugs (``note-md-<hash>.toml``, ``note-txt-<hash>.toml``), each
file naming its own document; a document alone with its stem keeps ``<stem>.toml``.
"""

from __future__ import annotations

import hashlib
import tomllib

from attention_claims.cli import main


def _list(sources, names):
    (sources / "SHA256SUMS").write_text("".join(
        f"{hashlib.sha256((sources / n).read_bytes()).hexdigest()}  {n}\n" for n in names))


def test_iii_finding_15_twin_stems_get_a_file_each(note_project, capsys):
    sources = note_project / "sources"
    (sources / "note.txt").write_text("Another text. It has two sentences.\n")
    (sources / "other.md").write_text("One more sentence here.\n")
    _list(sources, ["note.md", "note.txt", "other.md"])
    (note_project / "claims").mkdir()
    main(["sentences", "--todo", "--write"])
    capsys.readouterr()
    files = sorted(p.name for p in (sources / "sentences").iterdir())
    assert len(files) == 3 and "other.toml" in files and "note.toml" not in files, files
    named = sorted(tomllib.loads(p.read_text())["document"] for p in (sources / "sentences").iterdir())
    assert named == ["note.md", "note.txt", "other.md"]  # stubs (kind still blank): each file its own document
