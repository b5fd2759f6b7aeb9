"""Issue 43, finding 5: ``merge -o site`` where ``site/`` holds a user's own ``claims.md`` and a copy of
some report's ``claims.json`` (no manifest) adopted the folder and replaced the page; with a
non-report ``claims.json`` there, it was renamed aside instead of refused.

A folder without a manifest is adopted only for the files rendered from its very report (the same
heading and generation stamp); anything else there stops the writer with exit 4, nothing moved.
"""

from __future__ import annotations

import json
import shutil

import pytest

from attention_claims.framework.report_folder import ReportFolder, ReportFolderError

REPORT = {"schema": 1, "generated": "2026-01-02T03:04:05+00:00", "run": {}, "claims": []}


def _site(tmp_path, claims_md: str, claims_json: str):
    site = tmp_path / "site"
    site.mkdir()
    (site / "claims.md").write_text(claims_md)
    (site / "claims.json").write_text(claims_json)
    return site


def test_iii_finding_5_users_page_beside_a_copied_report_is_refused(tmp_path):
    site = _site(tmp_path, "# My own notes\n\nkeep me\n", json.dumps(REPORT))
    before = {p.name: p.read_bytes() for p in site.iterdir()}
    folder = ReportFolder(site)
    with pytest.raises(ReportFolderError, match="claims.md is there and the suite did not write it"):
        folder.check()
    with pytest.raises(ReportFolderError, match="claims.md"):
        folder.write({"claims.md": "# attention-claims report\n", "claims.json": json.dumps(REPORT)})
    assert {p.name: p.read_bytes() for p in site.iterdir() if p.name != ".claims.lock"} == before


def test_iii_finding_5_a_pre_manifest_report_folder_is_still_adopted(tmp_path):
    site = _site(tmp_path, f"# attention-claims report\n\ngenerated {REPORT['generated']}\n", json.dumps(REPORT))
    ReportFolder(site).write({"claims.md": "# attention-claims report\nnew\n"})
    assert (site / "claims.md").read_text().endswith("new\n")


def test_iii_finding_5_a_non_report_claims_json_is_refused_not_set_aside(tmp_path):
    site = _site(tmp_path, "# My own notes\n", '{"mine": true}')
    with pytest.raises(ReportFolderError, match="manifest"):
        ReportFolder(site).set_aside_damaged_report()
    assert sorted(p.name for p in site.iterdir()) == ["claims.json", "claims.md"]


def test_iii_finding_5_merge_refuses_the_folder(tmp_path, capsys, monkeypatch):
    from attention_claims.cli import main

    site = _site(tmp_path, "# My own notes\n", '{"mine": true}')
    report = tmp_path / "run.json"
    shutil.copy(site / "claims.json", report)
    monkeypatch.chdir(tmp_path)
    code = main(["merge", str(report), "-o", str(site)])
    assert code == 4, capsys.readouterr()
    assert sorted(p.name for p in site.iterdir() if p.name != ".claims.lock") == ["claims.json", "claims.md"]
    assert (site / "claims.md").read_text() == "# My own notes\n"
