"""Issue 33, finding 3: the report writers (``pytest`` and ``attention-claims merge -o``) replace or delete
only files they wrote (the folder's manifest), and refuse, with exit status 4 naming the folder, a home,
sources or claims folder and a folder where a file they would write is someone else's."""

from __future__ import annotations

import hashlib
import json

import pytest

from attention_claims.framework.report_folder import MANIFEST, ReportFolder, ReportFolderError
from attention_claims.tools import merge as merge_tool
from conftest import REPORT_FILES as FILES
from conftest import small_project_checks as _checks
from conftest import small_project_records as _records


def _snapshot(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_finding_3_merge_into_a_users_site_folder_is_refused(planted, pytester, capsys):
    run = planted(_records(), _checks())
    site = pytester.path / "site"
    (site / "figures").mkdir(parents=True)
    (site / "figures" / "logo.svg").write_text("<svg>the user's logo</svg>", encoding="utf-8")
    (site / "claims.md").write_text("# the user's own claims page\n", encoding="utf-8")
    before = _snapshot(site)
    status = merge_tool.main([str(run.report_dir / "claims.json"), "-o", str(site),
                              "--claims-dir", str(pytester.path / "records"),
                              "--claims-sources", str(pytester.path / "sources")])
    err = capsys.readouterr().err
    assert status == 4
    assert f"the report folder {site} is not the suite's to write" in err and "claims.md" in err
    assert _snapshot(site) == before  # nothing deleted, nothing replaced, nothing added
    assert sorted(p.name for p in site.iterdir()) == ["claims.md", "figures"]


def test_finding_3_the_home_folder_is_refused(planted, pytester, monkeypatch):
    home = pytester.path / "home"
    (home / "figures").mkdir(parents=True)
    (home / "figures" / "holiday.svg").write_text("<svg>holiday</svg>", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    run = planted(_records(), _checks(), args=["--claims-report-dir", str(home)])
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR
    err = run.result.stderr.str()
    assert f"the report folder {home} is not the suite's to write: it is the home folder" in err
    assert "INTERNALERROR" not in err + run.result.stdout.str()
    assert (home / "figures" / "holiday.svg").read_text(encoding="utf-8") == "<svg>holiday</svg>"
    assert sorted(p.name for p in home.iterdir()) == ["figures"]


def test_finding_3_the_sources_folder_is_refused(planted, pytester):
    planted(_records(), _checks())
    sources = pytester.path / "sources"
    page = sources / "claims.md"
    page.write_text("A source document that happens to be named claims.md.\n", encoding="utf-8")
    before = _snapshot(sources)
    run = planted(_records(), _checks(), args=["--claims-report-dir", str(sources)])
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"the report folder {sources} is not the suite's to write: it is the sources folder" in \
        run.result.stderr.str()
    assert _snapshot(sources) == before


def test_finding_3_a_new_folder_then_its_own_folder_just_work(planted):
    first = planted(_records(), _checks())
    assert first.result.ret == 0, first.result.stdout.str()
    manifest = json.loads((first.report_dir / MANIFEST).read_text(encoding="utf-8"))["files"]
    assert set(FILES) <= set(manifest)
    for name in FILES:
        assert manifest[name]["sha256"] == hashlib.sha256((first.report_dir / name).read_bytes()).hexdigest()
    again = planted(_records(), _checks(), args=["--claims-select", "beta-claim"])
    assert again.result.ret == 0, again.result.stdout.str()


def test_finding_3_files_of_the_suite_the_writer_did_not_write_are_left_alone(planted, pytester):
    """The project's own reports/ layout: committed files of the suite (README.md, bench.json, deep/)
    and a check's figure are neither a reason to refuse the folder nor touched."""
    out = pytester.path / "out"
    (out / "deep").mkdir(parents=True)
    (out / "figures").mkdir()
    theirs = {"README.md": "# How to read the reports\n", "bench.json": "{}\n", "deep/cpu-deep.json": "{}\n",
              "figures/9889-relu2.png": "png", "stability.json": "{}\n"}
    for rel, text in theirs.items():
        (out / rel).write_text(text, encoding="utf-8")
    run = planted(_records(), _checks())
    assert run.result.ret == 0, run.result.stdout.str()
    assert {rel: (out / rel).read_text(encoding="utf-8") for rel in theirs} == theirs
    assert not set(theirs) & set(json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"])


def test_finding_3_a_report_written_before_the_manifest_is_adopted(planted):
    first = planted(_records(), _checks())
    (first.report_dir / MANIFEST).unlink()  # as a version of the suite before the manifest left it
    ReportFolder(first.report_dir).write({"planted.json": "{}\n"})  # a first write of one file keeps the rest
    assert set(FILES) <= set(json.loads((first.report_dir / MANIFEST).read_text(encoding="utf-8"))["files"])
    run = planted(_records(), _checks(), args=["--claims-select", "beta-claim"])
    assert run.result.ret == 0, run.result.stdout.str()
    assert set(FILES) <= set(json.loads((run.report_dir / MANIFEST).read_text(encoding="utf-8"))["files"])


def test_finding_3_a_report_file_a_person_changed_is_not_replaced(planted):
    first = planted(_records(), _checks())
    page = first.report_dir / "claims.md"
    page.write_text("# my notes on the report\n", encoding="utf-8")
    run = planted(_records(), _checks())
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"{page} was changed since the suite wrote it" in run.result.stderr.str()
    assert page.read_text(encoding="utf-8") == "# my notes on the report\n"


def test_finding_3_a_claims_folder_and_a_foreign_lock_are_refused(tmp_path):
    claims = tmp_path / "claims"
    claims.mkdir()
    (claims / "a.toml").write_text('id = "a"\n', encoding="utf-8")
    with pytest.raises(ReportFolderError, match=r"it holds a\.toml \(a claims folder\)"):
        ReportFolder(claims).check()
    with pytest.raises(ReportFolderError, match="it is the claims folder .* or inside it"):
        ReportFolder(claims / "reports", claims_dir=claims).check()
    other = tmp_path / "other"
    other.mkdir()
    (other / ".claims.lock").write_text("someone's notes", encoding="utf-8")
    with pytest.raises(ReportFolderError, match="is not the suite's \\(empty\\) lock file"):
        ReportFolder(other).check()
    assert (other / ".claims.lock").read_text(encoding="utf-8") == "someone's notes"


def test_finding_3_only_listed_plot_files_are_deleted(tmp_path):
    folder = ReportFolder(tmp_path)
    folder.write({"figures/a-1.svg": "<svg/>", "figures/a-2.svg": "<svg/>"})
    (tmp_path / "figures" / "logo.svg").write_text("<svg>logo</svg>", encoding="utf-8")
    folder.write({"figures/a-1.svg": "<svg>new</svg>"}, replace_prefix="figures/", replace_suffix=".svg")
    assert sorted(p.name for p in (tmp_path / "figures").iterdir()) == ["a-1.svg", "logo.svg"]
    with pytest.raises(ReportFolderError, match="logo.svg is there and the suite did not write it"):
        folder.write({"figures/logo.svg": "<svg/>"})
    assert (tmp_path / "figures" / "logo.svg").read_text(encoding="utf-8") == "<svg>logo</svg>"


def test_finding_3_nothing_is_written_or_deleted_outside_the_folder(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a-1.svg").write_text("<svg>theirs</svg>", encoding="utf-8")
    report = tmp_path / "report"
    report.mkdir()
    (report / "figures").symlink_to(outside)  # a link out of the folder
    with pytest.raises(ReportFolderError, match="figures is a link or not a folder"):
        ReportFolder(report).write({"figures/a-1.svg": "<svg/>"})
    with pytest.raises(ReportFolderError, match="'../x.svg' is not a plain relative path"):
        ReportFolder(report).write({"../x.svg": "<svg/>"})
    digest = hashlib.sha256(b"<svg>theirs</svg>").hexdigest()
    (report / MANIFEST).write_text(json.dumps({"manifest": 1, "files": {"figures/../../outside/a-1.svg":
                                                                        {"sha256": digest}}}), encoding="utf-8")
    with pytest.raises(ReportFolderError, match="not a manifest of the suite"):
        ReportFolder(report).write({"claims.md": "x"}, replace_prefix="figures/", replace_suffix=".svg")
    assert (outside / "a-1.svg").read_text(encoding="utf-8") == "<svg>theirs</svg>"
    assert sorted(p.name for p in outside.iterdir()) == ["a-1.svg"]
