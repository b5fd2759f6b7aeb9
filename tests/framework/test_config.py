"""The project's folders come from its own configuration (issue 23): ini options ``claims_dir``,
``claims_sources``, ``claims_report_dir`` relative to the ini file, overridden by the command line; a
project without claims keeps the plugin inert; a path-valued option naming a folder outside the project
does not move pytest's rootdir, ini file or ``addopts``."""

from __future__ import annotations

import json
import textwrap

import pytest

from attention_claims.framework import config as claims_config
from conftest import _planted_sources, record_toml

CHECK = '''
import pytest

@pytest.mark.claim("alpha-claim", reading="exact")
def test_alpha(claim_log):
    claim_log.example(x=1.0)
'''


def _project(root, *, claims="claims", sources="sources", ini_extra="", addopts=""):
    (root / claims).mkdir(parents=True, exist_ok=True)
    records = {"a.toml": record_toml("alpha-claim")}
    (root / claims / "a.toml").write_text(records["a.toml"], encoding="utf-8")
    _planted_sources(root / sources, records)
    (root / "checks").mkdir(exist_ok=True)
    (root / "checks" / "test_alpha.py").write_text(textwrap.dedent(CHECK), encoding="utf-8")
    (root / "pyproject.toml").write_text(textwrap.dedent(f'''
        [tool.pytest.ini_options]
        testpaths = ["checks"]
        addopts = "-p no:cacheprovider --hypothesis-profile=ci {addopts}"
        {ini_extra}
        '''), encoding="utf-8")


def test_ini_options_name_the_folders_relative_to_the_ini_file(pytester):
    _project(pytester.path, claims="notes/claims", sources="notes/docs",
             ini_extra='claims_dir = "notes/claims"\nclaims_sources = "notes/docs"\nclaims_report_dir = "out/verdicts"')
    sub = pytester.path / "checks"
    result = pytester.runpytest("--rootdir", str(pytester.path), str(sub))  # started from the project root
    assert result.ret == 0, result.stdout.str()
    report = json.loads((pytester.path / "out" / "verdicts" / "claims.json").read_text(encoding="utf-8"))
    assert [c["id"] for c in report["claims"]] == ["alpha-claim"] and report["claims"][0]["verdict"] == "true"
    assert not (pytester.path / "reports").exists()


def test_the_command_line_overrides_the_ini_options(pytester):
    _project(pytester.path, ini_extra='claims_report_dir = "out"')
    result = pytester.runpytest("--claims-report-dir", "elsewhere")
    assert result.ret == 0, result.stdout.str()
    assert (pytester.path / "elsewhere" / "claims.json").is_file() and not (pytester.path / "out").exists()


def test_a_project_without_claims_keeps_the_plugin_inert(pytester):
    pytester.makepyfile(test_plain="def test_plain():\n    assert 1 + 1 == 2\n")
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    result = pytester.runpytest()
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=1)
    assert "verdicts:" not in result.stdout.str() and "attention-claims" not in result.stderr.str()
    assert not (pytester.path / "reports").exists()


def test_a_named_claims_folder_that_is_missing_is_a_usage_error(pytester):
    pytester.makeini("[pytest]\nclaims_dir = my-claims\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "my-claims" in result.stderr.str() and "does not exist" in result.stderr.str()


@pytest.mark.parametrize("option", ["--claims-report-dir", "--claims-dir"])
def test_a_path_option_outside_the_project_keeps_rootdir_configfile_and_addopts(pytester, tmp_path_factory, option):
    project = pytester.path / "project"
    project.mkdir()
    _project(project, addopts="-v")
    outside = tmp_path_factory.mktemp("outside")
    if option == "--claims-dir":
        (outside / "claims").mkdir()
        (outside / "claims" / "a.toml").write_text(record_toml("alpha-claim"), encoding="utf-8")
        value = outside / "claims"
    else:
        value = outside / "reports"
    pytester.chdir()
    import os

    os.chdir(project)
    result = pytester.runpytest_subprocess(option, str(value))
    out = result.stdout.str()
    assert result.ret == 0, out + result.stderr.str()
    assert f"rootdir: {project}" in out and "configfile: pyproject.toml" in out
    assert "test_alpha.py::test_alpha PASSED" in out  # the project's addopts (-v) were applied
    report_dir = value if option == "--claims-report-dir" else project / "reports"
    assert (report_dir / "claims.json").is_file()


def test_discover_reads_the_ini_options_as_pytest_does(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\nclaims_dir = "c"\n', encoding="utf-8")
    (tmp_path / "sub").mkdir()
    paths = claims_config.discover(tmp_path / "sub")
    assert paths.root == tmp_path and paths.claims_dir == tmp_path / "c" and paths.explicit
    assert paths.sources_dir == tmp_path / "sources" and paths.report_dir == tmp_path / "reports"
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")  # no pytest section
    assert claims_config.discover(bare).root == tmp_path


def test_a_nested_session_gives_the_folders_back(pytester):
    before = claims_config.current()
    _project(pytester.path)
    assert pytester.runpytest().ret == 0
    assert claims_config.current() == before
