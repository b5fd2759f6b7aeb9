"""Issue 43, finding 13: a FIFO at ``reports/claims.json``, at the manifest, or as ``snapshot``'s report
hung; deeply nested TOML records, ``documents.toml`` or JSON reports (under 1 MiB) ended in a
RecursionError INTERNALERROR, or exit 1 from ``snapshot``.

Every such read goes through :func:`attention_claims._files.read_regular` (non-blocking open, ``fstat``:
a FIFO is refused at once) and :func:`read_json` / :func:`read_toml` (a nesting-depth cap; a parser's
RecursionError becomes a clear error naming the file).
"""

from __future__ import annotations

import os
import signal

import pytest

from attention_claims import _files
from attention_claims.cli import main
from attention_claims.framework.records import ClaimRecordError, load_claim_file, load_manifest
from attention_claims.framework.report_folder import MANIFEST, ReportFolder, ReportFolderError

DEEP_JSON = "[" * 100_000 + "]" * 100_000
DEEP_TOML = "x = " + "[" * 100_000 + "]" * 100_000 + "\n"


@pytest.fixture(autouse=True)
def _no_hang():
    """A read that waits on a FIFO fails the test after 20 s instead of hanging the suite."""
    def _hung(*_):
        raise TimeoutError("a read waited on a FIFO")
    earlier = signal.signal(signal.SIGALRM, _hung)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, earlier)


def _fifo(path):
    os.mkfifo(path)
    return path


def test_iii_finding_13_fifo_at_the_manifest_is_refused(tmp_path):
    _fifo(tmp_path / MANIFEST)
    with pytest.raises(ReportFolderError, match="not a regular file"):
        ReportFolder(tmp_path).owned()


def test_iii_finding_13_fifo_claims_json_is_not_taken_for_a_report(tmp_path):
    _fifo(tmp_path / "claims.json")
    assert ReportFolder(tmp_path).owned() == {}
    with pytest.raises(ReportFolderError):
        ReportFolder(tmp_path).set_aside_damaged_report()


def test_iii_finding_13_fifo_report_given_to_snapshot_is_exit_4(tmp_path, capsys):
    report = _fifo(tmp_path / "claims.json")
    assert main(["snapshot", str(report), "--snapshot", str(tmp_path / "snap.json")]) == 4
    assert "not a regular file" in capsys.readouterr().err


def test_iii_finding_13_deep_json_report_given_to_snapshot_is_exit_4(tmp_path, capsys):
    report = tmp_path / "claims.json"
    report.write_text(DEEP_JSON)
    assert main(["snapshot", str(report), "--snapshot", str(tmp_path / "snap.json")]) == 4
    assert "nested" in capsys.readouterr().err


@pytest.mark.parametrize("text", [DEEP_JSON, "[" * 70 + "]" * 70])
def test_iii_finding_13_read_json_caps_the_depth(tmp_path, text):
    path = tmp_path / "x.json"
    path.write_text(text)
    with pytest.raises(_files.UnsafeFileError, match=r"x\.json: nested"):
        _files.read_json(path, 1 << 20)


def test_iii_finding_13_deep_toml_record_names_the_file(tmp_path):
    record = tmp_path / "001-x.toml"
    record.write_text(DEEP_TOML)
    with pytest.raises(ClaimRecordError, match="nested"):
        load_claim_file(record)


def test_iii_finding_13_deep_documents_toml_names_the_file(tmp_path):
    (tmp_path / "documents.toml").write_text(DEEP_TOML)
    with pytest.raises(ClaimRecordError, match="documents.toml.*nested"):
        load_manifest(tmp_path)


def test_iii_finding_13_fifo_documents_toml_is_refused(tmp_path):
    _fifo(tmp_path / "documents.toml")
    with pytest.raises(ClaimRecordError, match="not a regular file"):
        load_manifest(tmp_path)
