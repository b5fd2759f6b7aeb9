"""``pytest -v`` shows each counterexample line whole (issue 44, item 6): without it the terminal wraps a long
line at spaces onto at most three lines, counts what it leaves out after them (issue 46: never a line cut
in the middle without saying so) and says once that ``-v`` shows it whole; the report has the whole message
either way."""

from __future__ import annotations

import re

import pytest

from conftest import record_toml

LONG = "the planted counterexample " + " ".join(f"w{i}" for i in range(80)) + " END-OF-MESSAGE"

CHECK = f'''
import pytest
from attention_claims.testkit import refute

@pytest.mark.claim("f", reading="exact")
def test_f(claim_log):
    claim_log.example(x=1.0)
    refute("{LONG}", example={{"x": 1.0}}, certified=True)
'''


@pytest.mark.parametrize("verbose", [False, True], ids=["plain", "-v"])
def test_a_long_counterexample_is_whole_under_v(planted, verbose):
    run = planted({"f.toml": record_toml("f", expected="false")}, {"test_f.py": CHECK},
                  args=["-n", "0", *(["-v"] if verbose else [])])
    assert run.result.ret == pytest.ExitCode.OK, run.result.stdout.str()[-2000:]
    out = run.result.stdout.lines
    at = next(i for i, ln in enumerate(out) if ln.startswith("  f  "))
    if verbose:
        assert out[at].endswith("END-OF-MESSAGE"), out[at]
        assert not any("whole under pytest -v" in ln for ln in out)
    else:  # issue 46: wrapped at spaces onto the next lines, never cut in the middle of a line without saying so
        item = out[at:at + 3]
        assert all(len(ln) <= 160 for ln in item) and item[-1].endswith("END-OF-MESSAGE"), item
        assert " ".join(" ".join(item).split()).endswith(LONG), item
        assert not any("whole under pytest -v" in ln for ln in out)
    assert LONG in (run.report_dir / "claims.md").read_text(encoding="utf-8")


def test_terminal_lines_cut_nothing_without_a_width():
    from attention_claims.framework.plugin import terminal_lines
    from attention_claims.framework.report_model import ClaimEntry, Report, Run, Trust

    entry = ClaimEntry.from_json({
        "id": "f", "title": "t", "verdict": "false", "expected": "false", "agrees": True, "reason": "r",
        "statement": "s", "formal": None, "source": {"document": "d", "section": "", "quote": "q"},
        "also_in": [], "unchecked_reason": None, "notes": None, "record": "", "errors": [],
        "readings": [{"name": "exact", "as_stated": True, "statement": "s", "condition": {}, "outcome": "failed",
                      "checks": [], "examples": 1, "evidence": "", "certified": True,
                      "counterexample": {"message": "x" * 300, "certified": True}}]})
    report = Report(generated="now", environment=None, run=Run(True, False, False, 0), trust=Trust(),
                    claims=[entry], fresh=frozenset({"f"}))
    whole = [text for text, _red in terminal_lines(report, [], None, width=None)]
    assert next(t for t in whole if t.startswith("  f")).endswith("x" * 300)
    cut = [text for text, _red in terminal_lines(report, [], None, width=100)]
    at = next(i for i, t in enumerate(cut) if t.startswith("  f"))
    # one word of 300 characters: it wraps where the line ends, and what is left after three lines is counted
    assert [len(t) for t in cut[at:at + 3]][:2] == [100, 100] and cut[at + 2].endswith(" characters left out)")
    left = int(re.search(r"\(\+(\d+) characters left out\)", cut[at + 2]).group(1))
    assert sum(t.strip().count("x") for t in cut[at:at + 3]) + left == 300
    assert any("whole under pytest -v" in t for t in cut) and not any("whole under pytest -v" in t for t in whole)
