"""Issue 43, finding 15 (part): ``rehash`` replaced a symlinked ``SHA256SUMS`` with a plain file.

It is now refused (exit 4, naming the file), the link and its target unchanged; ``rehash`` also runs
under the project's lock (the lock file is the only thing it may add to the project).
"""

from __future__ import annotations

from attention_claims.cli import main


def test_iii_finding_15_rehash_refuses_a_symlinked_sums(note_project, capsys, tmp_path_factory):
    real = tmp_path_factory.mktemp("elsewhere") / "SHA256SUMS"
    real.write_text(f"{'0' * 64}  note.md\n")
    sums = note_project / "sources" / "SHA256SUMS"
    sums.symlink_to(real)
    assert main(["rehash", "note.md"]) == 4
    err = capsys.readouterr().err
    assert "SHA256SUMS" in err and "symbolic link" in err, err
    assert sums.is_symlink() and real.read_text() == f"{'0' * 64}  note.md\n"
