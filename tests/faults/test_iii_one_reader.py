"""Issue 43, "one capped reader": the reads left outside it at the issue's close (``mutation-report``'s
``[tool.mutmut]`` and ``mutmut-stats.json``, ``stability``'s seed reports and result file, the ini file
:func:`attention_claims.framework.config.discover` reads) now go through
:func:`attention_claims._files.read_json` / ``read_toml`` / ``read_text``.

Each input, made a FIFO, a too-deeply nested file or a file that is not UTF-8, is exit status 4 with one line
naming the file (and the seed or table where there is one), nothing written, no traceback; never a hang
(every test fails after 20 s instead: a FIFO read without ``O_NONBLOCK`` waits for a writer for ever).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from refusal import point_tools_at
from refusal import refused as _refused

from attention_claims import cli
from attention_claims.framework import config as claims_config
from attention_claims.tools import mutation_report, stability

DEEP_JSON = "[" * 100_000 + "]" * 100_000
DEEP_TOML = "x = " + "[" * 100_000 + "]" * 100_000 + "\n"
SHALLOW_BUT_OVER_THE_CAP_JSON = "[" * 70 + "]" * 70
NOT_UTF8 = b"\xff\xfe not UTF-8 \x80\n"

KINDS = ["fifo", "deep", "not-utf8"]
WORDS = {"fifo": "not a regular file", "deep": "nested", "not-utf8": "not UTF-8"}


@pytest.fixture(autouse=True)
def _no_hang():
    """A read that waits on a FIFO fails the test after 20 s instead of hanging the suite; the alarm repeats
    every second after that, so code that catches the first ``TimeoutError`` (an ``OSError``) and opens the
    FIFO again is interrupted again (not a ``RuntimeError``, which code under test might take for its own)."""
    def _hung(*_):
        raise TimeoutError("a read waited on a FIFO")
    earlier = signal.signal(signal.SIGALRM, _hung)
    signal.setitimer(signal.ITIMER_REAL, 20, 1)
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, earlier)


def _plant(path: Path, kind: str, deep: str) -> Path:
    """``path`` made a FIFO, a file nested 100,000 levels deep (``deep``) or a file that is not UTF-8."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "deep":
        path.write_text(deep, encoding="utf-8")
    else:
        path.write_bytes(NOT_UTF8)
    return path




@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project (``[tool.mutmut] only_mutate = ["m.py"]``, one checked mutant, earlier results of both tools in
    its report folder), a stand-in for mutmut's API, and the tools' ``discover`` pointed at it."""
    root = tmp_path / "project"
    reports = root / "reports"
    reports.mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.mutmut]\nonly_mutate = ["m.py"]\n', encoding="utf-8")
    (root / "mutants").mkdir()
    (root / "mutants" / "m.py.meta").write_text(json.dumps({"exit_code_by_key": {"m.f__mutmut_1": 1}}),
                                                encoding="utf-8")
    (reports / "stability.json").write_text('{"profile": "dev", "seeds": [1, 2], "flips": []}', encoding="utf-8")
    (reports / "mutation.md").write_text(mutation_report.MD_TITLE + "\n\nan earlier run\n", encoding="utf-8")
    point_tools_at(monkeypatch, root, reports)
    return root


# -- mutation-report ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
def test_iii_one_reader_mutmut_config_refused(project, capsys, kind):
    """``[tool.mutmut]``'s ``pyproject.toml`` a FIFO, 100,000 levels deep or not UTF-8: exit 4 naming it."""
    _plant(project / "pyproject.toml", kind, DEEP_TOML)
    _refused(capsys, lambda: cli.main(["mutation-report"]), project / "reports", "pyproject.toml", WORDS[kind])


@pytest.mark.parametrize("kind", KINDS)
def test_iii_one_reader_mutmut_stats_refused(project, capsys, kind):
    """``mutants/mutmut-stats.json`` (optional, but never silently passed over when it is there and damaged)."""
    _plant(project / "mutants" / "mutmut-stats.json", kind, DEEP_JSON)
    _refused(capsys, lambda: cli.main(["mutation-report"]), project / "reports", "mutmut-stats.json", WORDS[kind])


def test_iii_one_reader_mutmut_stats_not_an_object_refused(project, capsys):
    (project / "mutants" / "mutmut-stats.json").write_text("[1, 2]", encoding="utf-8")
    _refused(capsys, lambda: cli.main(["mutation-report"]), project / "reports", "mutmut-stats.json", "not a JSON object")


def test_iii_one_reader_mutmut_stats_gives_the_commit(project):
    """The reader still reads a good file: its ``git_commit`` is the report's ``commit``."""
    (project / "mutants" / "mutmut-stats.json").write_text('{"git_commit": "feedbeef"}', encoding="utf-8")
    assert cli.main(["mutation-report"]) == 0
    assert json.loads((project / "reports" / "mutation.json").read_text(encoding="utf-8"))["commit"] == "feedbeef"


@pytest.mark.parametrize("kind", KINDS)
def test_iii_one_reader_an_earlier_result_that_is_not_a_file_is_not_this_tools(tmp_path, kind):
    """The ownership checks of an earlier ``mutation.json``/``.md``/``stability.json`` (the report folder asks
    them before replacing one) read through the one reader: a FIFO is not waited on, and is not this tool's."""
    for name, check, deep in [("mutation.json", mutation_report.is_mutation_json, DEEP_JSON),
                              ("mutation.md", mutation_report.is_mutation_md, "x"),
                              ("stability.json", stability.is_stability_file, DEEP_JSON)]:
        if kind == "deep" and not name.endswith(".json"):
            continue
        planted = _plant(tmp_path / name, kind, deep)
        started = time.monotonic()
        assert check(planted) is False, name
        assert time.monotonic() - started < 10, f"{name}: waited (a FIFO read with blocking, then interrupted)"


def test_iii_one_reader_ownership_checks_still_recognise_their_files(tmp_path):
    (tmp_path / "mutation.json").write_text('{"tool": "mutmut 3.8.1", "survivors": []}', encoding="utf-8")
    (tmp_path / "mutation.md").write_text(mutation_report.MD_TITLE + "\r\n\nscore\n", encoding="utf-8")
    (tmp_path / "stability.json").write_text('{"profile": "dev", "seeds": [], "flips": []}', encoding="utf-8")
    assert mutation_report.is_mutation_json(tmp_path / "mutation.json")
    assert mutation_report.is_mutation_md(tmp_path / "mutation.md")
    assert stability.is_stability_file(tmp_path / "stability.json")


# -- stability ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", [*KINDS, "over-the-cap"])
def test_iii_one_reader_seed_report_refused(project, monkeypatch, capsys, kind):
    """A seed's run of pytest that leaves its ``claims.json`` as a FIFO, too deep or not UTF-8: exit 4 naming
    the seed and the file (before: a FIFO hung the tool, a deep file was a RecursionError caught by luck)."""
    def fake_run(cmd, **kwargs):
        out = Path(cmd[cmd.index("--claims-report-dir") + 1])
        if kind == "over-the-cap":
            (out / "claims.json").write_text(SHALLOW_BUT_OVER_THE_CAP_JSON, encoding="utf-8")
        else:
            _plant(out / "claims.json", kind, DEEP_JSON)
        return subprocess.CompletedProcess(cmd, 0, stdout="", stderr=None)

    monkeypatch.setattr(stability.subprocess, "run", fake_run)
    word = "nested" if kind == "over-the-cap" else WORDS[kind]
    _refused(capsys, lambda: cli.main(["stability", "--seeds", "2", "--base", "3"]), project / "reports",
             "seed 3", "claims.json", word)


# -- the ini file (config.discover) ---------------------------------------------------------------------------

INI_DEEP = {"pyproject.toml": DEEP_TOML, "pytest.ini": "[pytest]\n", "tox.ini": "[pytest]\n", "setup.cfg": "[x]\n"}


@pytest.mark.parametrize("kind, name", [(kind, name) for name in INI_DEEP for kind in KINDS
                                         if kind != "deep" or name == "pyproject.toml"])  # only TOML nests
def test_iii_one_reader_ini_file_refused_by_discover(tmp_path, kind, name):
    ini = _plant(tmp_path / name, kind, INI_DEEP[name])
    with pytest.raises(claims_config.ConfigFileError, match=WORDS[kind]) as caught:
        claims_config.discover(tmp_path)
    assert str(ini) in str(caught.value)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("command", [["catalog"], ["sentences"]])
def test_iii_one_reader_ini_file_is_exit_4_from_the_command_line(tmp_path, monkeypatch, capsys, kind, command):
    """Every tool finds its project through ``discover``: an unreadable ``pyproject.toml`` is exit 4 naming it."""
    _plant(tmp_path / "pyproject.toml", kind, DEEP_TOML)
    (tmp_path / "reports").mkdir()
    monkeypatch.chdir(tmp_path)
    _refused(capsys, lambda: cli.main(command), tmp_path / "reports", str(tmp_path / "pyproject.toml"), WORDS[kind])


@pytest.mark.parametrize("kind", KINDS)
def test_iii_one_reader_stability_refuses_the_ini_file_before_running_a_seed(tmp_path, monkeypatch, capsys, kind):
    _plant(tmp_path / "pyproject.toml", kind, DEEP_TOML)
    (tmp_path / "reports").mkdir()
    monkeypatch.chdir(tmp_path)
    ran = []
    monkeypatch.setattr(stability, "run_seed", lambda *a, **k: ran.append(a) or {"a": "true"})
    _refused(capsys, lambda: stability.main(["--seeds", "2"]), tmp_path / "reports", "pyproject.toml", WORDS[kind])
    assert ran == []


@pytest.mark.parametrize("text, where", [
    ("tool = 3\n", "tool is a int"),
    ("[tool]\npytest = 3\n", "[tool.pytest] is a int"),
    ("[tool.pytest]\nini_options = 3\n", "[tool.pytest.ini_options] is a int"),
])
def test_iii_one_reader_ini_tables_that_are_not_tables_are_named(tmp_path, text, where):
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    with pytest.raises(claims_config.ConfigFileError, match=r"pyproject\.toml: " + where.replace("[", r"\[")
                       .replace("]", r"\]").replace(".", r"\.")):
        claims_config.discover(tmp_path)


def test_iii_one_reader_malformed_ini_files_are_refused_not_skipped(tmp_path):
    """Before, a malformed ini file was passed over and a parent folder's options taken (pytest refuses it)."""
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\nclaims_dir = \n", encoding="utf-8")
    with pytest.raises(claims_config.ConfigFileError, match="malformed TOML"):
        claims_config.discover(tmp_path)
    (tmp_path / "pyproject.toml").unlink()
    (tmp_path / "tox.ini").write_text("no section header\n", encoding="utf-8")
    with pytest.raises(claims_config.ConfigFileError, match=r"tox\.ini: not an ini file"):
        claims_config.discover(tmp_path)


def test_iii_one_reader_good_ini_files_still_give_the_folders(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\nclaims_dir = "c"\n', encoding="utf-8")
    assert claims_config.discover(tmp_path).claims_dir == tmp_path / "c"
    (tmp_path / "pyproject.toml").unlink()
    (tmp_path / "setup.cfg").write_text("[tool:pytest]\nclaims_report_dir = r\n", encoding="utf-8")
    assert claims_config.discover(tmp_path).report_dir == tmp_path / "r"


# -- the other reads the AST scan found (tests/faults/test_iii_one_write_primitive.py) --------------------------

def _quick(call):
    """``call()``, failing when it took 10 s or more (a FIFO read with blocking, then interrupted)."""
    started = time.monotonic()
    result = call()
    assert time.monotonic() - started < 10, "waited on the file"
    return result


@pytest.mark.parametrize("kind", KINDS)
def test_iii_one_reader_a_classification_file_is_refused_naming_it(tmp_path, kind):
    """``sources/sentences/<doc>.toml`` (``attention-claims sentences``, the sentence coverage check)."""
    from attention_claims.framework.sentences import SentenceDataError, load_classification

    path = _plant(tmp_path / "doc.toml", kind, DEEP_TOML)
    with pytest.raises(SentenceDataError, match=WORDS[kind]) as caught:
        _quick(lambda: load_classification(path))
    assert str(caught.value).startswith(f"{path}: ")


@pytest.mark.parametrize("kind", KINDS)
def test_iii_one_reader_trust_results_that_are_not_files_are_left_out(tmp_path, kind):
    """The report's trust section reads ``stability.json``/``mutation.json``/``planted.json`` at every render: a
    FIFO there hung it; now each is left out as unreadable (and ``stability``'s ownership check refuses it)."""
    from attention_claims.framework import trust

    assert _quick(lambda: trust._read(_plant(tmp_path / "stability.json", kind, DEEP_JSON))) is None


@pytest.mark.parametrize("kind", KINDS)
def test_iii_one_reader_page_parts_of_an_unreadable_manifest_are_none(tmp_path, kind):
    """The document view's parts (``documents.toml``, refused with its reason by ``load_manifest`` when the run
    starts): never waited on at render time."""
    from attention_claims.framework.render.webpage import recorded_parts

    _plant(tmp_path / "documents.toml", kind, DEEP_TOML)
    assert _quick(lambda: recorded_parts(tmp_path)) == {}


@pytest.mark.parametrize("kind", KINDS)
def test_iii_one_reader_cache_entries_that_are_not_files_are_recomputed(tmp_path, kind):
    """A measurement cache entry or a converted model's ``source.json`` stamp that is a FIFO, too deep or not
    UTF-8 is a miss (measured or converted again), never a hang."""
    from attention_claims.models import measurement, registry

    assert _quick(lambda: measurement._read_cache(_plant(tmp_path / "m.json", kind, DEEP_JSON))) is None
    (tmp_path / "dest").mkdir()
    _plant(tmp_path / "dest" / "source.json", kind, DEEP_JSON)
    (tmp_path / "model.gguf").write_bytes(b"x")
    assert _quick(lambda: registry.converted_ok(tmp_path / "dest", tmp_path / "model.gguf")) is False


# -- text and byte reads of files a user or another process can place ------------------------------------------

@pytest.mark.parametrize("kind", ["fifo", "not-utf8"])
def test_iii_one_reader_catalog_update_target_refused(tmp_path, capsys, kind):
    """``attention-claims catalog --update FILE`` with FILE a FIFO or not UTF-8: exit 4 naming it (a FIFO hung)."""
    target = _plant(tmp_path / "catalog.md", kind, "")
    (tmp_path / "out").mkdir()
    _refused(capsys, lambda: cli.main(["catalog", "--update", str(target)]), tmp_path / "out", str(target),
             WORDS[kind])


def test_iii_one_reader_a_figure_that_is_a_fifo_is_left_out(tmp_path):
    """A FIFO at ``reports/figures/x.png`` hung every HTML render; now the figure is left out as unreadable."""
    from attention_claims.framework.render import html

    _plant(tmp_path / "figures" / "x.png", "fifo", "")
    assert _quick(lambda: html._figure_src({"path": "figures/x.png"}, tmp_path)) is None
    (tmp_path / "figures" / "y.png").write_bytes(b"\x89PNG")
    assert html._figure_src({"path": "figures/y.png"}, tmp_path).startswith("data:image/png")


def test_iii_one_reader_a_cache_entry_that_is_a_fifo_is_a_miss(tmp_path):
    from attention_claims import _cache

    assert _quick(lambda: _cache.read_checked(_plant(tmp_path / "entry", "fifo", ""))) is None
    _cache.write_checked(tmp_path / "good", "value")
    assert _cache.read_checked(tmp_path / "good") == "value"


def test_iii_one_reader_an_oversized_file_is_refused_before_it_is_read(tmp_path):
    """``read_regular`` checks the ``fstat`` size first (merge's report reader relied on that and now uses the
    one reader): a sparse 1 GiB file is refused with its size, without reading 1 MiB of it."""
    from attention_claims import _files

    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(1 << 30)
    with pytest.raises(_files.UnsafeFileError, match=r"big\.json: larger than 1048576 bytes \(the limit\)") as err:
        _quick(lambda: _files.read_json(big, 1 << 20))
    assert (err.value.reason, err.value.size) == ("size", 1 << 30)


@pytest.mark.parametrize("kind, reason", [("fifo", "kind"), ("deep", "depth"), ("not-utf8", "encoding")])
def test_iii_one_reader_each_refusal_says_which_check(tmp_path, kind, reason):
    from attention_claims import _files

    with pytest.raises(_files.UnsafeFileError) as err:
        _files.read_json(_plant(tmp_path / "x.json", kind, DEEP_JSON), 1 << 20)
    assert err.value.reason == reason


def test_iii_one_reader_a_registered_text_swapped_for_a_fifo_is_refused(tmp_path, monkeypatch):
    """``--claims-text``: checked when registered, and read again (each measurement) through the one reader,
    so a FIFO put in its place later is refused at once."""
    from attention_claims import _files
    from attention_claims.models import registry

    monkeypatch.setattr(registry, "USER_TEXTS", {})
    text = tmp_path / "passage.txt"
    text.write_text("a short passage of words\n", encoding="utf-8")
    name = registry.register_text(text)
    assert registry.read_text_prefix(name, 100) == ("a short passage of words\n", True)
    _plant(text, "fifo", "")
    with pytest.raises(_files.UnsafeFileError, match=r"passage\.txt: not a regular file"):
        _quick(lambda: registry.read_text_prefix(name, 100))


def test_iii_one_reader_a_compiled_template_that_is_a_fifo_is_a_miss(tmp_path, monkeypatch):
    import jinja2

    from attention_claims.framework.render import diskcache

    monkeypatch.setattr(diskcache, "render_cache_dir", lambda: tmp_path)
    bucket = jinja2.bccache.Bucket(jinja2.Environment(), "k", "checksum")
    _plant(tmp_path / "tpl-k.jinja", "fifo", "")
    _quick(lambda: diskcache._Bytecode().load_bytecode(bucket))
    assert bucket.code is None
