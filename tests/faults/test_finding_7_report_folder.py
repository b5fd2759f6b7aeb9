"""Issue 22, finding 7 (the report folder): a report folder that cannot be written is one message and
exit status 4 before any check runs; a write that fails at the end (a full disk) leaves the earlier
report as it was, says so, exits 4 and does not name a report it did not write."""

from __future__ import annotations

import errno
import os

import pytest

from attention_claims.framework import report_folder as report_module
from conftest import REPORT_FILES as FILES
from conftest import small_project_checks as _checks
from conftest import small_project_records as _records


def test_finding_7_an_unwritable_report_folder_is_a_usage_error(planted, pytester):
    blocker = pytester.path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    run = planted(_records(), _checks(), args=["--claims-report-dir", str(blocker / "reports")])
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR
    err = run.result.stderr.str()
    assert f"the report folder {blocker / 'reports'} cannot be written" in err
    assert "INTERNALERROR" not in err + run.result.stdout.str()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes to a read-only folder")
def test_finding_7_a_read_only_report_folder_is_a_usage_error(planted, pytester):
    ro = pytester.path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        run = planted(_records(), _checks(), args=["--claims-report-dir", str(ro)])
    finally:
        ro.chmod(0o755)
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR
    assert "cannot be written" in run.result.stderr.str()


def test_finding_7_a_full_disk_at_the_end_keeps_the_earlier_report(planted, monkeypatch):
    full = planted(_records(), _checks())
    before = {name: (full.report_dir / name).read_bytes() for name in FILES}

    def full_disk(files):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(report_module, "_write_together", full_disk)
    run = planted(_records(), _checks(), args=["--claims-select", "beta-claim"])
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR
    out = run.result.stdout.str()
    assert "the report was not written to" in out and "No space left on device" in out
    assert "INTERNALERROR" not in out
    assert "report:" not in run.result.outlines[-1]  # the tally names no report it did not write
    assert {name: (full.report_dir / name).read_bytes() for name in FILES} == before
    assert not [p for p in full.report_dir.iterdir() if p.name.endswith(".tmp")]


def test_finding_7_write_together_leaves_nothing_half_written(tmp_path, monkeypatch):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("old a", encoding="utf-8")
    b.write_text("old b", encoding="utf-8")
    from attention_claims import _files

    real_fdopen = _files.os.fdopen
    calls = []

    def failing_fdopen(fd, *args, **kwargs):  # the second temporary cannot be written (a full disk)
        calls.append(fd)
        if len(calls) == 2:
            os.close(fd)
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_fdopen(fd, *args, **kwargs)

    monkeypatch.setattr(_files.os, "fdopen", failing_fdopen)
    with pytest.raises(OSError):
        report_module._write_together({a: "new a", b: "new b"})
    monkeypatch.undo()
    assert a.read_text(encoding="utf-8") == "old a" and b.read_text(encoding="utf-8") == "old b"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]
