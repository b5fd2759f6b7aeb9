"""Issue 43, finding 6: a symbolic link planted at a writer's temporary name is followed.

``reports/.claims.md.<pid>.tmp -> outside`` made the report writer overwrite ``outside``; the same for
``rehash`` (``.SHA256SUMS.<pid>.tmp``) and the cache writer. Every writer now goes through
:func:`attention_claims._files.write_file`, whose temporary is opened with ``O_CREAT|O_EXCL|O_NOFOLLOW``
under a fresh name: the planted link is neither followed nor removed, and the file outside is unchanged.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from attention_claims import _cache, _files
from attention_claims.framework.report_folder import ReportFolder
from attention_claims.tools import rehash


def _plant(folder: Path, name: str, outside: Path) -> Path:
    """Symbolic links to ``outside`` at every temporary name a writer of ``folder/name`` used."""
    links = []
    for suffix in ("tmp", "new"):
        link = folder / f".{name}.{os.getpid()}.{suffix}"
        link.symlink_to(outside)
        links.append(link)
    return links[0]


@pytest.fixture
def outside(tmp_path):
    path = tmp_path / "outside.txt"
    path.write_bytes(b"precious\n")
    return path


def test_iii_finding_6_report_writer_does_not_follow_a_planted_temporary(tmp_path, outside):
    reports = tmp_path / "project" / "reports"
    reports.mkdir(parents=True)
    _plant(reports, "claims.md", outside)
    _plant(reports, "manifest.json", outside)
    folder = ReportFolder(reports)
    with folder.lock():
        folder.write({"claims.md": "# claims\n"})
    assert outside.read_bytes() == b"precious\n"
    assert (reports / "claims.md").read_text() == "# claims\n"
    assert not (reports / "claims.md").is_symlink()


def test_iii_finding_6_rehash_does_not_follow_a_planted_temporary(tmp_path, outside):
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "note.md").write_text("new text\n")
    (sources / "SHA256SUMS").write_text(f"{'0' * 64}  note.md\n")
    _plant(sources, "SHA256SUMS", outside)
    old, new = rehash.rehash(sources, "note.md")
    assert new == hashlib.sha256(b"new text\n").hexdigest() != old
    assert outside.read_bytes() == b"precious\n"
    assert (sources / "SHA256SUMS").read_text() == f"{new}  note.md\n"


def test_iii_finding_6_cache_writer_does_not_follow_a_planted_temporary(tmp_path, outside):
    folder = tmp_path / "cache"
    folder.mkdir()
    _plant(folder, "entry.json", outside)
    _cache.write_atomic(folder / "entry.json", "{}")
    assert outside.read_bytes() == b"precious\n"
    assert (folder / "entry.json").read_text() == "{}"


def test_iii_finding_6_primitive_refuses_a_symbolic_link_at_the_target(tmp_path, outside):
    link = tmp_path / "target.txt"
    link.symlink_to(outside)
    with pytest.raises(_files.UnsafeFileError, match="symbolic link"):
        _files.write_file(link, b"x")
    assert outside.read_bytes() == b"precious\n" and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside.txt", "target.txt"]
