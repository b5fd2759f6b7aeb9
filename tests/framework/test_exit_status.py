"""pytest's exit status under the plugin, as docs/running.md "Exit status" documents it: 0 every verdict agrees
with ``expected`` (false claims included), 1 a verdict disagrees or a check errored, 2 interrupted,
4 usage error (bad record, bad marker, unknown claim id, missing or altered source document),
5 nothing collected."""

from __future__ import annotations

import hashlib

import pytest

from conftest import record_toml

PASS = '''
import pytest
from attention_claims.testkit import refute

@pytest.mark.claim("c", reading="exact")
def test_exact():
    {body}
'''


def _check(body: str) -> dict:
    return {"test_c.py": PASS.format(body=body)}


REFUTE = 'refute("planted", certified=True)'


@pytest.mark.parametrize(("expected", "body", "status", "verdict"), [
    ("true", "pass", 0, "true"),
    ("false", REFUTE, 0, "false"),  # a false claim expected false is no failure
    ("true", REFUTE, 1, "false"),  # the verdict disagrees with expected
    ("false", 'raise TypeError("a bug in the suite")', 1, "error"),  # a check errored: the verdict is error
])
def test_verdicts_and_errors(planted, expected, body, status, verdict):
    run = planted({"c.toml": record_toml("c", expected=expected)}, _check(body))
    assert run.result.ret == status, run.result.stdout.str()
    assert run.claim("c")["verdict"] == verdict


@pytest.mark.subprocess_run
def test_interrupted_is_2(planted):
    run = planted({"c.toml": record_toml("c")}, _check("raise KeyboardInterrupt"), subprocess=True)
    assert run.result.ret == pytest.ExitCode.INTERRUPTED == 2


def test_a_check_that_cannot_be_imported_is_2(planted):
    run = planted({"c.toml": record_toml("c")}, {"test_c.py": "import no_such_module_anywhere\n"})
    assert run.result.ret == 2


@pytest.mark.parametrize("case", ["bad record", "bad marker", "unknown reading", "unknown claim id"])
def test_usage_errors_are_4(planted, case):
    records = {"c.toml": record_toml("c")}
    checks = _check("pass")
    args = []
    if case == "bad record":
        records["d.toml"] = record_toml("d", expected="maybe")
    elif case == "bad marker":
        checks = {"test_c.py": "import pytest\n\n@pytest.mark.claim('c', 'exact')\ndef test_x():\n    pass\n"}
    elif case == "unknown reading":
        checks = {"test_c.py": "import pytest\n\n@pytest.mark.claim('c', reading='fp8')\ndef test_x():\n    pass\n"}
    else:
        args = ["--claims-select", "no-such-claim"]
    run = planted(records, checks, args=args)
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR == 4, run.result.stdout.str()


def test_a_missing_source_document_is_4(planted, pytester):
    empty = pytester.mkdir("no-documents")
    run = planted({"c.toml": record_toml("c")}, _check("pass"), args=["--claims-sources", str(empty)])
    assert run.result.ret == 4
    run.result.stderr.fnmatch_lines(["*003_a0ad15dda516ed1d.txt is not listed in*SHA256SUMS*"])


def test_a_listed_document_that_is_missing_is_4(planted, pytester):
    docs = pytester.mkdir("listed-only")
    (docs / "SHA256SUMS").write_text(f"{'0' * 64}  003_a0ad15dda516ed1d.txt\n", encoding="utf-8")
    run = planted({"c.toml": record_toml("c")}, _check("pass"), args=["--claims-sources", str(docs)])
    assert run.result.ret == 4
    run.result.stderr.fnmatch_lines(["*003_a0ad15dda516ed1d.txt*source document is missing (listed in SHA256SUMS)*"])


def test_an_altered_source_document_is_4(planted, pytester):
    docs = pytester.mkdir("altered")
    doc = docs / "003_a0ad15dda516ed1d.txt"
    doc.write_text("自注意力机制（Self-Attention）是Transformer架构的核心组件，改过的。\n", encoding="utf-8")
    wrong = hashlib.sha256(b"the original text").hexdigest()
    (docs / "SHA256SUMS").write_text(f"{wrong}  {doc.name}\n", encoding="utf-8")
    run = planted({"c.toml": record_toml("c")}, _check("pass"), args=["--claims-sources", str(docs)])
    assert run.result.ret == 4
    run.result.stderr.fnmatch_lines(["*source document was altered*"])


def test_nothing_collected_is_5(planted):
    run = planted({"c.toml": record_toml("c")}, _check("pass"), args=["-k", "matches-nothing"])
    assert run.result.ret == pytest.ExitCode.NO_TESTS_COLLECTED == 5
