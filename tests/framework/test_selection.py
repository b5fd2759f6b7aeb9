"""Choosing which claims a run decides: ``--claims-select``, ``--claims-document`` and claim ids
as ``-k`` keywords (issue 12, "Selection")."""

from __future__ import annotations

import pytest

from conftest import record_toml

CHECK = '''
import pytest

@pytest.mark.claim("{cid}", reading="exact")
def test_{name}(claim_log):
    claim_log.example(x=1.0)
'''

OTHER_DOC = "004_5f57af8801c437dc.txt"


def _records():
    return {"a.toml": record_toml("alpha-claim"),
            "b.toml": record_toml("beta-claim", document=OTHER_DOC, quote="一句话")}


def _checks():
    return {"test_a.py": CHECK.format(cid="alpha-claim", name="a"),
            "test_b.py": CHECK.format(cid="beta-claim", name="b"),
            "test_plain.py": "def test_not_a_claim_check():\n    pass\n"}


@pytest.mark.parametrize("args", [["--claims-select", "alpha-claim"], ["-k", "alpha-claim"],
                                  ["--claims-document", "003"]])
def test_one_claim_runs_exactly_its_checks(planted, args):
    run = planted(_records(), _checks(), args=args)
    outcomes = run.result.parseoutcomes()
    assert outcomes.get("passed") == 1, run.result.stdout.str()
    assert run.claim("alpha-claim")["verdict"] == "true"
    assert run.claim("beta-claim")["verdict"] == "undecided"


def test_selected_run_reports_the_others_as_not_selected(planted):
    run = planted(_records(), _checks(), args=["--claims-select", "alpha-claim", "-v"])
    beta = run.claim("beta-claim")
    assert beta["selected"] is False and "not selected" in beta["reason"]
    run.result.stdout.fnmatch_lines(["*alpha-claim*true*"])
    assert run.result.outlines[-1].startswith("verdicts: 1 true; 1 claim not selected; report: ")
    assert "beta-claim" not in run.result.stdout.str().split("attention-claims verdicts")[1]
    assert run.result.ret == 0


def test_unknown_claim_id_is_a_usage_error_naming_it(planted):
    run = planted(_records(), _checks(), args=["--claims-select", "alpha"])
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR
    run.result.stderr.fnmatch_lines(["*--claims-select: no claim record with id alpha*alpha-claim*"])


def test_unknown_document_is_a_usage_error(planted):
    run = planted(_records(), _checks(), args=["--claims-document", "007"])
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR
    run.result.stderr.fnmatch_lines(["*--claims-document: no claim is stated in '007'*"])


def test_every_check_names_its_claims_literally(session_checks):
    """The selection skips a check file that does not name a selected claim id literally, so every
    claim marker of the real checks must name its claim in its own file. Read off this session's own
    collection when it collected every check (the plain ``pytest``), else off a collection of its own."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    if session_checks is not None:
        pairs = [(str(i.path), m.args[0]) for i in session_checks for m in i.iter_markers("claim")]
    else:
        root = Path(__file__).resolve().parents[2]
        script = (
            "import json, pytest\n"
            "class P:\n"
            "    def pytest_collection_modifyitems(self, items):\n"
            "        out = [(str(i.path), m.args[0]) for i in items for m in i.iter_markers('claim')]\n"
            "        print('CLAIMS=' + json.dumps(out))\n"
            "pytest.main(['checks', '--collect-only', '-q', '-p', 'no:cacheprovider', '-n', '0',"
            " '--claims-no-report'], plugins=[P()])\n")
        proc = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=300)
        line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("CLAIMS="))
        pairs = json.loads(line.removeprefix("CLAIMS="))
    assert len(pairs) > 300
    texts: dict[str, str] = {}
    missing = sorted({(Path(f).name, cid) for f, cid in pairs
                      if f'"{cid}"' not in texts.setdefault(f, Path(f).read_text(encoding="utf-8"))})
    assert not missing, f"checks whose file does not name their claim id literally: {missing}"


@pytest.mark.parametrize("args", [["--claims-select", "alpha-claim"], ["--claims-document", "003"],
                                  ["test_a.py::test_a"]])
def test_a_selected_run_under_n_auto_runs_in_process(planted, args):
    """``-n auto`` (the project's addopts) starts no xdist workers for a run that selects claims or names
    its tests: the plugin's ``pytest_xdist_auto_num_workers`` must win over xdist's own (tryfirst),
    whatever order the entry points load in."""
    run = planted(_records(), _checks(), args=["-n", "auto", *args])
    out = run.result.stdout.str()
    assert "workers" not in out and "[gw" not in out, out
    assert run.report["environment"]["xdist_workers"] == 0
    assert run.claim("alpha-claim")["verdict"] == "true"


def test_selecting_a_claim_without_a_check_names_it(planted):
    from conftest import record_toml

    records = {"c.toml": record_toml("c"), "d.toml": record_toml("d")}
    check = '''
import pytest

@pytest.mark.claim("d", reading="exact")
def test_d(claim_log):
    claim_log.example(x=1.0)
'''
    run = planted(records, {"test_d.py": check}, args=["--claims-select", "c"])
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR
    err = run.result.stderr.str()
    assert "no check decides the selected claim c (" in err and "readings exact" in err
