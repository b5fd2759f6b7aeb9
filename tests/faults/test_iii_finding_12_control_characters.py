"""Issue 43 (faults III), finding 12: text from a check is neutralised for every output.

Before: ANSI escapes and bidirectional overrides in a check's message reached the terminal, ``claims.md`` and
``claims.html`` raw (only record fields were filtered). Now every text a check produces (counterexample
messages, example keys and values, notes, exception texts, skip reasons) is escaped once, where it enters the
report model (:mod:`attention_claims.framework.neutral`): ``\\x1b`` and ``\\u202e`` appear as visible escapes.
"""

from __future__ import annotations

import pytest

from attention_claims.framework.neutral import neutral, neutral_text
from conftest import record_toml

ESC, RLO = "\x1b", "\u202e"

CHECKS = '''
import pytest
from attention_claims.testkit import refute

@pytest.mark.claim("n-claim", reading="exact")
def test_exact(claim_log):
    claim_log.example(x=1.0)
    claim_log.note("note \\x1b[2J\\u202eetoN")
    refute("msg \\x1b[31mred\\u202e evil\\r over", example={"k\\x1b[1m": "v\\u202e", "n": 1}, certified=True)

@pytest.mark.claim("n-claim", reading="float16")
def test_float16(claim_log):
    raise ValueError("boom \\x1b]0;title\\x07 \\u2066isolate")

@pytest.mark.claim("s-claim", reading="exact")
def test_skip(claim_log):
    pytest.skip("gone \\x1b[5mblink\\u202e")
'''


def _raw(text: str) -> list[str]:
    return [c for c in (ESC, RLO, "\u2066", "\x07", "\r") if c in text]


def test_iii_finding_12_control_and_bidi_characters_are_escaped_in_every_output(planted):
    records = {"n.toml": record_toml("n-claim", expected="false", readings=(("exact", True), ("float16", False))),
               "s.toml": record_toml("s-claim", document="004_5f57af8801c437dc.txt", quote="一句话")}
    run = planted(records, {"test_n.py": CHECKS}, args=["-n", "0"])
    out = run.result.stdout.str()
    assert run.result.ret != 0, out  # the float16 check errored
    assert _raw(out) == [], [line for line in out.splitlines() if _raw(line)]
    for name in ("claims.json", "claims.md", "claims.html"):
        text = (run.report_dir / name).read_text(encoding="utf-8")
        assert _raw(text) == [], (name, [line for line in text.splitlines() if _raw(line)][:5])
    claim = run.claim("n-claim")
    exact = next(r for r in claim["readings"] if r["name"] == "exact")
    cx = exact["counterexample"]
    assert cx["message"] == "msg \\x1b[31mred\\u202e evil\\x0d over"
    assert cx["example"] == {"k\\x1b[1m": "v\\u202e", "n": 1}
    assert "note \\x1b[2J\\u202eetoN" in exact["evidence"]
    assert any("\\x1b]0;title\\x07 \\u2066isolate" in e for e in claim["errors"]), claim["errors"]
    skipped = run.claim("s-claim")["readings"][0]
    assert skipped["outcome"] == "skipped" and "gone \\x1b[5mblink\\u202e" in skipped["evidence"]
    assert "\\x1b" in out  # the escaped form is what the terminal shows


def test_iii_finding_12_neutral_keeps_ordinary_text():
    text = "A ∈ ℝ^{N×N}, 自注意力, tab\there\nnext line, emoji 👍, ZWJ \u200d kept"
    assert neutral_text(text) == text
    assert neutral({"a\x00": ["\x9b", 1, None, True]}) == {"a\\x00": ["\\x9b", 1, None, True]}


@pytest.mark.parametrize("ch", [ESC, RLO, "\u202a", "\u2069", "\u061c", "\u200f", "\x7f", "\x85", "\u2028", "\x00"])
def test_iii_finding_12_each_unsafe_character_is_escaped(ch):
    assert ch not in neutral_text(f"a{ch}b") and neutral_text(f"a{ch}b").startswith("a\\")
