"""``attention-claims``, the command line (issue 23): every tool is a subcommand, ``--help`` lists them,
and ``new`` starts a claim (record with a verified quote, hashed document, a check that fails until
written) or says in one line why not."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import pkgutil
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import attention_claims.tools as tools
from attention_claims.cli import COMMANDS, main
from attention_claims.framework.records import load_catalog
from conftest import NOTE_DOC

DOC = NOTE_DOC


def test_help_lists_every_subcommand(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert all(name in out for name in COMMANDS)


def test_every_tool_with_a_main_is_a_subcommand():
    modules = {m.name for m in pkgutil.iter_modules(tools.__path__)
               if hasattr(importlib.import_module(f"attention_claims.tools.{m.name}"), "main")}
    assert modules == {module for module, _help in COMMANDS.values()}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_subcommand_has_its_own_help(name, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([name, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert f"attention-claims {name}" in out
    # the help is for a terminal (and the site's Command line page): no reStructuredText from the docstring
    assert "``" not in out and not re.search(r":(?:func|class|mod|data|attr|meth|exc|obj|const):`", out), out


def test_an_unknown_subcommand_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["frobnicate"])
    assert exit_.value.code == 2 and "invalid choice" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("attention-claims") is None, reason="the console script is not installed")
def test_the_console_script_is_installed():
    out = subprocess.run(["attention-claims", "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "merge" in out.stdout and "new" in out.stdout


@pytest.fixture
def project(note_project):
    return note_project


def test_new_writes_a_record_and_a_check_that_fails_until_written(project, capsys):
    assert main(["new", "rows-sum-to-one", "--document", "note.md", "--quote", "Every row of A sums to one."]) == 0
    record = project / "claims" / "note" / "001-rows-sum-to-one.toml"
    check = project / "checks" / "test_rows_sum_to_one.py"
    assert record.is_file() and check.is_file()
    digest = hashlib.sha256(DOC.encode()).hexdigest()
    assert (project / "sources" / "SHA256SUMS").read_text(encoding="utf-8") == f"{digest}  note.md\n"
    (claim,) = load_catalog(project / "claims", project / "sources")
    assert claim.id == "rows-sum-to-one" and claim.source.document == "note.md"
    written = check.read_text(encoding="utf-8") + record.read_text(encoding="utf-8")
    assert str(project) not in written and "docs/" not in check.read_text(encoding="utf-8")  # nothing of this machine
    assert "claims/note/001-rows-sum-to-one.toml" in written and "attention_claims.testkit" in written
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "checks"], cwd=project,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 1
    assert "write the check for claim rows-sum-to-one" in result.stdout


@pytest.mark.parametrize("args, message", [
    (["Bad_Id", "--document", "note.md", "--quote", "The rank is at most d."], "must be kebab-case"),
    (["x", "--document", "missing.md", "--quote", "q"], "no such file"),
    (["x", "--document", "../outside.md", "--quote", "q"], "not a relative path inside the sources folder"),
    (["x", "--document", "note.md", "--quote", "not in the note"], "does not occur verbatim"),
    # docs/your-own-claims.md: "a bad field stops it with exit status 4 and one line naming it"
    (["x", "--document", "note.md", "--quote", "The rank is at most d.", "--expected", "maybe"],
     "--expected 'maybe': one of true, false, caveat"),
])
def test_new_refuses_with_one_line(project, capsys, args, message):
    assert main(["new", *args]) == 4
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_new_says_when_a_quote_of_an_html_document_misses_only_its_tags(project, capsys):
    """A quote copied from an HTML page as the browser shows it lacks the file's tags; the quote is compared
    with the file's text, so it is refused, with the reason instead of a bare "does not occur"."""
    (project / "sources" / "page.html").write_text("<p>Attention is <b>permutation equivariant</b>.</p>\n",
                                                  encoding="utf-8")
    assert main(["new", "x", "--document", "page.html", "--quote", "Attention is permutation equivariant."]) == 4
    err = capsys.readouterr().err
    assert "does not occur verbatim" in err and "once the document's markup tags are removed" in err
    assert err.count("\n") == 1
    assert main(["new", "x", "--document", "page.html", "--quote", "Attention is invariant."]) == 4
    assert "markup" not in capsys.readouterr().err
    assert main(["new", "x", "--document", "page.html", "--quote",
                 "Attention is <b>permutation equivariant</b>."]) == 0


def test_new_never_overwrites_nor_reuses_an_id_nor_accepts_an_altered_document(project, capsys):
    assert main(["new", "rank-at-most-d", "--document", "note.md", "--quote", "The rank is at most d."]) == 0
    assert main(["new", "rank-at-most-d", "--document", "note.md", "--quote", "The rank is at most d."]) == 4
    assert "already used by" in capsys.readouterr().err
    (project / "sources" / "note.md").write_text(DOC + "An edit.\n", encoding="utf-8")
    assert main(["new", "other", "--document", "note.md", "--quote", "An edit."]) == 4
    assert "the document changed" in capsys.readouterr().err


def test_new_numbers_records_in_document_order(project, capsys):
    (project / "claims" / "note").mkdir(parents=True)
    assert main(["new", "rows-sum-to-one", "--document", "note.md", "--quote", "Every row of A sums to one."]) == 0
    assert main(["new", "rank-at-most-d", "--document", "sources/note.md", "--quote", "The rank is at most d."]) == 0
    assert sorted(p.name for p in (project / "claims" / "note").iterdir()) == [
        "001-rows-sum-to-one.toml", "002-rank-at-most-d.toml"]
    out = capsys.readouterr().out
    assert "wrote claims/note/002-rank-at-most-d.toml and checks/test_rank_at_most_d.py" in out


def test_new_with_expected_statement_and_readings(project, capsys):
    assert main(["new", "rank-at-most-d", "--document", "note.md", "--quote", "The rank is at most d.",
                 "--expected", "caveat", "--statement", "rank A <= d for every Q, K.", "--title", "Rank at most d",
                 "--section", "A note", "--reading", "exact:as-stated", "--reading", "float32:numerical",
                 "--reading", "small-n:scope"]) == 0
    (claim,) = load_catalog(project / "claims", project / "sources")
    assert (claim.expected, claim.statement, claim.title) == ("caveat", "rank A <= d for every Q, K.", "Rank at most d")
    assert [(r.name, r.as_stated, r.kind) for r in claim.readings] == [
        ("exact", True, None), ("float32", False, "numerical"), ("small-n", False, "scope")]
    check = (project / "checks" / "test_rank_at_most_d.py").read_text(encoding="utf-8")
    for name in ("exact", "float32", "small-n"):
        assert f'@pytest.mark.claim("rank-at-most-d", reading="{name}")' in check
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "checks"], cwd=project,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 1 and result.stdout.count("write the check for claim rank-at-most-d") >= 3


def test_new_adds_the_as_stated_reading_unless_told_not_to(project, capsys):
    """Readings without an as-stated one get ``as-stated`` first (a record without one is only for a vague
    claim, DESIGN.md); ``--no-as-stated`` leaves it out, and says so in ``--help``."""
    assert main(["new", "rank-at-most-d", "--document", "note.md", "--quote", "The rank is at most d.",
                 "--reading", "float32:numerical", "--reading", "small-n:scope"]) == 0
    assert main(["new", "rows-sum-to-one", "--document", "note.md", "--quote", "Every row of A sums to one.",
                 "--no-as-stated", "--reading", "float32:numerical"]) == 0
    claims = {c.id: c for c in load_catalog(project / "claims", project / "sources")}
    assert [(r.name, r.as_stated, r.kind) for r in claims["rank-at-most-d"].readings] == [
        ("as-stated", True, None), ("float32", False, "numerical"), ("small-n", False, "scope")]
    assert '@pytest.mark.claim("rank-at-most-d", reading="as-stated")' in \
        (project / "checks" / "test_rank_at_most_d.py").read_text(encoding="utf-8")
    assert [(r.name, r.as_stated) for r in claims["rows-sum-to-one"].readings] == [("float32", False)]
    assert claims["rows-sum-to-one"].as_stated is None
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["new", "--help"])
    assert "--no-as-stated" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["--no-as-stated"], "--no-as-stated: name the claim's readings"),
    (["--no-as-stated", "--reading", "exact:as-stated"], "is the as-stated one"),
    (["--reading", "as-stated:numerical"], "is not the as-stated reading"),
])
def test_new_refuses_contradictory_as_stated_options(project, capsys, args, message):
    assert main(["new", "rank", "--document", "note.md", "--quote", "The rank is at most d.", *args]) == 4
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert sorted(p.name for p in project.iterdir()) == ["pyproject.toml", "sources"]


@pytest.mark.parametrize("readings, message", [
    (["float32"], "needs its kind"),
    (["a:as-stated", "b:as-stated"], "at most one reading is as stated"),
    (["Float32:numerical"], "not a reading name"),
    (["x:numerical", "x:scope"], "given twice"),
    (["x:wrong"], "the suffix is"),
])
def test_new_refuses_bad_readings_and_writes_nothing(project, capsys, readings, message):
    args = ["rank", "--document", "note.md", "--quote", "The rank is at most d."]
    for r in readings:
        args += ["--reading", r]
    assert main(["new", *args]) == 4
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert sorted(p.name for p in project.iterdir()) == ["pyproject.toml", "sources"]
    assert sorted(p.name for p in (project / "sources").iterdir()) == ["note.md"]


def test_new_refuses_a_document_that_is_not_utf8(project, capsys):
    (project / "sources" / "latin1.md").write_bytes("Caf\xe9 au lait.".encode("latin-1"))
    assert main(["new", "x", "--document", "latin1.md", "--quote", "au lait"]) == 4
    assert "not UTF-8" in capsys.readouterr().err


def test_snapshot_without_a_snapshot_says_how_to_start_one(project, capsys):
    report = project / "claims.json"
    report.write_text(json.dumps({"run": {"complete": True}, "claims": [
        {"id": "a", "verdict": "true", "readings": []}]}), encoding="utf-8")
    assert main(["snapshot", str(report), "--snapshot", str(project / "none.json")]) == 4
    err = capsys.readouterr().err
    assert "no snapshot" in err and "--update" in err and "Traceback" not in err and err.count("\n") == 1
    assert main(["snapshot", str(report), "--snapshot", str(project / "none.json"), "--update"]) == 0
    assert main(["snapshot", str(report), "--snapshot", str(project / "none.json")]) == 0


def test_the_altered_document_error_gives_the_command_that_rehashes_it(project, capsys):
    """The printed command (``attention-claims rehash``) rewrites that document's line only: another
    document with the same digest keeps its line, the other lines keep their bytes (CRLF, ``*``), no backup
    file is left."""
    from attention_claims.framework.records import ClaimRecordError, verify_sources

    sources = project / "sources"
    (sources / "copy.md").write_text(DOC, encoding="utf-8")  # the same bytes, so the same digest as note.md
    assert main(["new", "rank-at-most-d", "--document", "note.md", "--quote", "The rank is at most d."]) == 0
    old = hashlib.sha256(DOC.encode()).hexdigest()
    sums = (sources / "SHA256SUMS").read_bytes() + f"{old} *copy.md\r\n".encode()
    (sources / "SHA256SUMS").write_bytes(sums)
    (sources / "note.md").write_text(DOC + "An edit.\n", encoding="utf-8")
    with pytest.raises(ClaimRecordError, match="altered") as err:
        verify_sources(sources)
    command = str(err.value).split("re-hash it with: ", 1)[1].split("; then", 1)[0]
    assert command.startswith("attention-claims rehash ")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    subprocess.run(command, shell=True, check=True, timeout=60, env=env, cwd="/")
    digest = hashlib.sha256((DOC + "An edit.\n").encode()).hexdigest()
    assert verify_sources(sources) == {"note.md": digest, "copy.md": old}
    assert (sources / "SHA256SUMS").read_bytes() == sums.replace(f"{old}  note.md".encode(),
                                                                  f"{digest}  note.md".encode())
    assert sorted(p.name for p in sources.iterdir()) == ["SHA256SUMS", "copy.md", "note.md"]
    assert main(["rehash", "--claims-sources", str(sources), "note.md"]) == 0  # again: nothing to do
    assert "already lists" in capsys.readouterr().out


@pytest.mark.parametrize("name, message", [("other.md", "does not list 'other.md'"),
                                           ("../note.md", "does not list '../note.md'")])
def test_rehash_refuses_a_document_not_listed(project, capsys, name, message):
    assert main(["new", "rank-at-most-d", "--document", "note.md", "--quote", "The rank is at most d."]) == 0
    before = (project / "sources" / "SHA256SUMS").read_bytes()
    capsys.readouterr()
    assert main(["rehash", name]) == 4
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert (project / "sources" / "SHA256SUMS").read_bytes() == before


def test_catalog_without_claims_or_with_a_bad_record_is_one_line_not_a_traceback(project, capsys):
    """``attention-claims catalog`` in a project with no claims folder yet (or a record the loader
    refuses) once printed a ClaimRecordError traceback; it is exit status 4 and the loader's message."""
    assert main(["catalog"]) == 4
    err = capsys.readouterr().err
    assert err.startswith("attention-claims catalog: ") and "claim records folder does not exist" in err
    assert err.count("\n") == 1
    assert main(["new", "rank-at-most-d", "--document", "note.md", "--quote", "The rank is at most d."]) == 0
    capsys.readouterr()
    assert main(["catalog"]) == 0 and "note.md" in capsys.readouterr().out
    (project / "sources" / "SHA256SUMS").unlink()
    assert main(["catalog"]) == 4
    err = capsys.readouterr().err
    assert "field 'source.document'" in err and "not listed" in err and "Traceback" not in err


def test_every_tool_reports_a_usage_error_as_pytest_does(project, capsys):
    """One exit status for a usage error across the tools, pytest's own (4): ``sentences`` and ``snapshot``
    used to exit 2 where the others exited 4, so a CI script could not tell a usage error by its status."""
    assert tools.USAGE_ERROR == int(pytest.ExitCode.USAGE_ERROR) == 4
    assert main(["sentences", "no-such-document"]) == tools.USAGE_ERROR
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert main(["snapshot", str(project / "missing.json")]) == tools.USAGE_ERROR
    for name, (module, _help) in COMMANDS.items():  # no tool keeps a usage status of its own
        source = Path(importlib.import_module(f"attention_claims.tools.{module}").__file__).read_text(encoding="utf-8")
        assert not re.search(r"return [24]\b", source), name
        assert not re.search(r"^USAGE_ERROR\s*=", source, re.M), name
