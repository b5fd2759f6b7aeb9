"""Issue 33, finding 5: ``attention-claims new`` leaves broken state.

Each reproduction of the finding in its own test: a blank or control-character ``--quote`` or
``--title``, an id ending in a newline, ``checks`` being a file, a ``SHA256SUMS`` without a final
newline, a dangling symbolic link at the target path, a document symlinked to ``/etc/hostname``. Each
ends in exit status 4 and one line naming the option or file (or, for ``SHA256SUMS``, in a correct
file); after each failure no file is left behind, and a later ``new`` with good arguments works.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from attention_claims.cli import main
from attention_claims.framework.records import load_catalog
from conftest import NOTE_DOC

DOC = NOTE_DOC
QUOTE = "Every row of A sums to one."
RECORD = b"""id = "x"
title = "x"
statement = "x"
expected = "true"

[source]
document = "arXiv:2103.03404"
section = "1"
quote = "x"

[[readings]]
name = "as-stated"
as_stated = true
statement = "x"
"""


@pytest.fixture
def project(note_project):
    return note_project


def _tree(root: Path) -> dict[str, bytes | str]:
    """Every path under ``root``: a file's bytes, a symbolic link's target, a folder as ``"dir"``."""
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = p.relative_to(root).as_posix()
            out[rel] = (("link:" + os.readlink(p)) if p.is_symlink() else "dir" if p.is_dir()
                        else p.read_bytes() if p.is_file() else "special")  # a FIFO is not opened
    return out


def _refused(project: Path, capsys, args: list[str], *words: str) -> None:
    """``new args`` exits 4 with one line holding ``words``, leaves the project as it was, and a later
    good ``new`` writes a record that loads."""
    before = _tree(project)
    assert main(["new", *args]) == 4
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("attention-claims new: "), err
    assert all(w in err for w in words), err
    assert _tree(project) == before
    _later_new_works(project, capsys)


def _later_new_works(project: Path, capsys) -> None:
    assert main(["new", "rows-sum-to-one", "--document", "note.md", "--quote", QUOTE]) == 0, capsys.readouterr().err
    (claim,) = load_catalog(project / "claims", project / "sources")
    assert claim.id == "rows-sum-to-one"
    assert (project / "checks" / "test_rows_sum_to_one.py").is_file()


@pytest.mark.parametrize("option, value, words", [
    ("--quote", "", ["--quote", "is blank"]),
    ("--quote", "   \t ", ["--quote", "is blank"]),
    ("--quote", "Every row\x07 of A", ["--quote", "U+0007"]),
    ("--title", "", ["--title", "is blank"]),
    ("--title", "Rows sum\x1b[31m", ["--title", "U+001B"]),
    ("--title", "Rows sum to one\u202e eslaf", ["--title", "U+202E"]),
    ("--title", "two\nlines", ["--title", "U+000A"]),
])
def test_ii_finding_5_blank_or_control_character_field_refused(project, capsys, option, value, words):
    args = ["rows", "--document", "note.md", "--quote", QUOTE]
    if option == "--quote":
        args[-1] = value
    else:
        args += [option, value]
    _refused(project, capsys, args, *words)


def test_ii_finding_5_id_ending_in_a_newline_refused(project, capsys):
    _refused(project, capsys, ["rows-sum\n", "--document", "note.md", "--quote", QUOTE], "must be kebab-case")


def test_ii_finding_5_checks_a_file_refused_before_the_record_is_written(project, capsys):
    (project / "checks").write_text("not a folder\n", encoding="utf-8")
    before = _tree(project)
    assert main(["new", "rows", "--document", "note.md", "--quote", QUOTE]) == 4
    err = capsys.readouterr().err
    assert "checks" in err and "not a folder" in err and err.count("\n") == 1
    assert _tree(project) == before  # no record, no SHA256SUMS
    (project / "checks").unlink()
    _later_new_works(project, capsys)


def test_ii_finding_5_sums_without_a_final_newline_gets_one(project, capsys):
    other = project / "sources" / "other.md"
    other.write_text("Another document.\n", encoding="utf-8")
    first = f"{hashlib.sha256(other.read_bytes()).hexdigest()}  other.md"
    (project / "sources" / "SHA256SUMS").write_text(first, encoding="utf-8")  # no final newline
    _later_new_works(project, capsys)
    digest = hashlib.sha256(DOC.encode()).hexdigest()
    assert (project / "sources" / "SHA256SUMS").read_text(encoding="utf-8") == f"{first}\n{digest}  note.md\n"
    load_catalog(project / "claims", project / "sources")  # both documents listed and verified


def test_ii_finding_5_sums_with_crlf_and_bom_keep_their_line_ends(project, capsys):
    other = project / "sources" / "other.md"
    other.write_text("Another document.\n", encoding="utf-8")
    first = f"{hashlib.sha256(other.read_bytes()).hexdigest()}  other.md"
    (project / "sources" / "SHA256SUMS").write_bytes(b"\xef\xbb\xbf" + first.encode() + b"\r\n")
    _later_new_works(project, capsys)
    digest = hashlib.sha256(DOC.encode()).hexdigest()
    assert (project / "sources" / "SHA256SUMS").read_bytes() == (
        b"\xef\xbb\xbf" + f"{first}\r\n{digest}  note.md\r\n".encode())


def test_ii_finding_5_dangling_symlink_at_the_check_path_is_not_written_through(project, capsys, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "created-outside.txt"
    (project / "checks").mkdir()
    link = project / "checks" / "test_rows.py"
    link.symlink_to(outside)
    _refused(project, capsys, ["rows", "--document", "note.md", "--quote", QUOTE], str(link), "not overwritten")
    assert not outside.exists() and link.is_symlink()


def test_ii_finding_5_dangling_symlink_among_the_records_is_not_written_through(project, capsys, tmp_path_factory):
    """The record's name takes the next free number, so a dangling link named like a record is passed by,
    never written through."""
    outside = tmp_path_factory.mktemp("outside") / "created-outside.toml"
    (project / "claims" / "note").mkdir(parents=True)
    link = project / "claims" / "note" / "001-rows.toml"
    link.symlink_to(outside)
    assert main(["new", "rows", "--document", "note.md", "--quote", QUOTE]) == 0
    assert "claims/note/002-rows.toml" in capsys.readouterr().out
    assert not outside.exists() and link.is_symlink()


def test_ii_finding_5_dangling_symlink_at_the_record_path_is_not_written_through(project, tmp_path_factory):
    """Should the record's name be taken between the check and the move (a race), nothing is written through."""
    from attention_claims.tools.new import NewClaimError, _write_together

    outside = tmp_path_factory.mktemp("outside") / "created-outside.toml"
    (project / "claims").mkdir()
    record = project / "claims" / "001-x.toml"
    record.symlink_to(outside)
    with pytest.raises(NewClaimError, match="not overwritten"):
        _write_together([(record, RECORD, False)], record)
    assert not outside.exists() and record.is_symlink() and os.listdir(project / "claims") == ["001-x.toml"]


def test_ii_finding_5_symlinked_claims_subfolder_is_not_written_through(project, capsys, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    (project / "claims").mkdir()
    (project / "claims" / "note").symlink_to(outside, target_is_directory=True)
    before = _tree(project)
    assert main(["new", "rows", "--document", "note.md", "--quote", QUOTE]) == 4
    assert "symbolic link" in capsys.readouterr().err
    assert _tree(project) == before and list(outside.iterdir()) == []


@pytest.mark.skipif(not Path("/etc/hostname").is_file(), reason="no /etc/hostname on this machine")
def test_ii_finding_5_document_symlinked_out_of_sources_refused(project, capsys):
    (project / "sources" / "host.md").symlink_to("/etc/hostname")
    quote = Path("/etc/hostname").read_text(encoding="utf-8").strip() or "x"
    _refused(project, capsys, ["host", "--document", "host.md", "--quote", quote], "host.md",
             "leads out of the sources folder")


@pytest.mark.skipif(not Path("/etc/hostname").is_file(), reason="no /etc/hostname on this machine")
def test_ii_finding_5_listed_document_symlinked_out_of_sources_refused_by_the_run(project):
    """The other path to such a document: listed by hand in SHA256SUMS, :func:`verify_sources` refuses it."""
    from attention_claims.framework.records import ClaimRecordError, verify_sources

    (project / "sources" / "host.md").symlink_to("/etc/hostname")
    digest = hashlib.sha256(Path("/etc/hostname").read_bytes()).hexdigest()
    (project / "sources" / "SHA256SUMS").write_text(f"{digest}  host.md\n", encoding="utf-8")
    with pytest.raises(ClaimRecordError, match="leads out of the sources folder"):
        verify_sources(project / "sources")


def test_ii_finding_5_failure_while_placing_leaves_nothing(project, capsys, monkeypatch):
    """A write that fails after the first file was placed (here: the replacement of SHA256SUMS) removes
    what was placed and the folders it made."""
    from attention_claims.tools import new

    def fail(*_a, **_k):
        raise OSError(28, "No space left on device")

    (project / "sources" / "SHA256SUMS").write_text("", encoding="utf-8")
    before = _tree(project)
    monkeypatch.setattr(new.os, "replace", fail)
    assert main(["new", "rows", "--document", "note.md", "--quote", QUOTE]) == 4
    assert "No space left on device" in capsys.readouterr().err
    assert _tree(project) == before
    monkeypatch.undo()
    monkeypatch.chdir(project)
    _later_new_works(project, capsys)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_ii_finding_5_fifo_as_document_refused_without_hanging(project, capsys):
    import time

    os.mkfifo(project / "sources" / "pipe.md")
    start = time.monotonic()
    _refused(project, capsys, ["p", "--document", "pipe.md", "--quote", "x"], "pipe.md", "not a regular file (a FIFO)")
    assert time.monotonic() - start < 30


def test_ii_finding_5_sums_symlink_is_not_written_through(project, capsys, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "SHA256SUMS"
    outside.write_text("", encoding="utf-8")
    (project / "sources" / "SHA256SUMS").symlink_to(outside)
    before = _tree(project)
    assert main(["new", "rows", "--document", "note.md", "--quote", QUOTE]) == 4
    assert "symbolic link" in capsys.readouterr().err
    assert _tree(project) == before and outside.read_text(encoding="utf-8") == ""
