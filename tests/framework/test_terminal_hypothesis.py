"""The run's last lines in the terminal (issue 46, item 5): Hypothesis's falsifying example shows only what
Hypothesis drew (the check's pytest fixtures, ``claim_log``'s ``CheckLog`` state or a fixture's table of values,
are left out, and named unless it is ``claim_log``), no line is cut in the middle without saying so (a long text wraps at spaces onto
at most three lines and what is left after them is counted, pointing at ``pytest -v`` and the report), and
counts are pluralised ("1 example", "1 verdict disagrees")."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from attention_claims.framework.plugin import LEFT_OUT, TERMINAL_ITEM_LINES, _drawn_example, fit_lines
from conftest import record_toml

CHECKS = '''
import pytest
from hypothesis import given, strategies as st

@pytest.fixture
def table():
    return tuple(range(100, 160))

@pytest.mark.claim("t", reading="exact")
@given(n=st.integers(0, 10))
def test_t(n, claim_log, table):
    claim_log.example(n=n)
    assert n < 3, "not true after all"

@pytest.mark.claim("g", reading="exact")
@given(n=st.integers(0, 10))
def test_g(n, claim_log):
    if n >= 3:
        raise ValueError("boom " + " ".join(f"word{i}" for i in range(200)) + " THE-END")

@pytest.mark.claim("u", reading="exact")
def test_u(claim_log):
    claim_log.example(n=1)
'''

RECORDS = {"t.toml": record_toml("t"), "g.toml": record_toml("g"), "u.toml": record_toml("u")}


def _summary(out: list[str]) -> list[str]:
    """The plugin's lines: from the first of them to the tally."""
    first = next(i for i, ln in enumerate(out) if ln.startswith(("false claims", "counterexamples found",
                                                                   "checks that did not finish")))
    return out[first:]


def test_the_terminal_shows_what_hypothesis_drew_and_cuts_no_line_silently(planted):
    run = planted(RECORDS, {"test_x.py": CHECKS}, args=["-n", "0", "-k", "test_t or test_g"])
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED
    lines = _summary(run.result.stdout.lines)
    text = "\n".join(lines)
    assert "    Failing test case: test_t(n=3) (pytest fixtures not shown: table)" in lines, text
    assert "CheckLog" not in text and "100, 101" not in text, text  # neither fixture's value
    fitted = [ln for ln in lines if not ln.startswith(("attention-claims: ", "verdicts: "))]  # those are whole
    assert all(len(ln) <= 160 for ln in fitted), [len(ln) for ln in fitted]
    # the error's message: three lines, the rest counted, and one line saying where it is whole
    at = next(i for i, ln in enumerate(lines) if ln.startswith("  g: "))
    item = lines[at:at + TERMINAL_ITEM_LINES]
    assert all(ln.startswith("    ") for ln in item[1:]) and LEFT_OUT.search(item[-1]), item
    assert "THE-END" not in text
    assert "attention-claims: text marked '… (+N characters left out)' is whole under pytest -v, and in the report" in lines
    assert "attention-claims: 2 verdicts disagree with 'expected' or errored: " in text
    # the report keeps what the terminal left out
    report = (run.report_dir / "claims.json").read_text(encoding="utf-8")
    assert "THE-END" in report and "table=(100," in report


def test_under_v_nothing_is_left_out(planted):
    run = planted(RECORDS, {"test_x.py": CHECKS}, args=["-n", "0", "-v", "-k", "test_t or test_g"])
    lines = _summary(run.result.stdout.lines)
    assert any(ln.startswith("  g: ") and ln.endswith("THE-END") for ln in lines), lines
    assert not any(LEFT_OUT.search(ln) or "whole under pytest -v" in ln for ln in lines)
    assert "    Failing test case: test_t(n=3) (pytest fixtures not shown: table)" in lines


NOTE = """Failing test case: test_winner(
    claim_log=CheckLog(examples=23,
     ranges={'N': [2.0, 3.0]},
     profile=None),
    doc_size_ranks=(512,
     511,
     512),
    M=array([[0, 1],
           [1, 1]]),
    b1=0,
)"""


def test_drawn_example_keeps_hypothesis_arguments_and_names_fixtures():
    assert _drawn_example(NOTE, frozenset({"claim_log", "doc_size_ranks"})) == (
        "Failing test case: test_winner(M=array([[0, 1], [1, 1]]), b1=0) "
        "(pytest fixtures not shown: doc_size_ranks)")
    # without the fixture names (a report from elsewhere), only the evidence log is left out
    assert _drawn_example(NOTE) == ("Failing test case: test_winner(doc_size_ranks=(512, 511, 512), "
                                    "M=array([[0, 1], [1, 1]]), b1=0)")
    assert _drawn_example("Falsifying example: test_x(\n    n=7,\n)") == "Falsifying example: test_x(n=7)"
    # another form: flattened whole, as before
    assert _drawn_example("Falsifying example: test_x(n=7)\nand more") == "Falsifying example: test_x(n=7) and more"


def _solid(text: str) -> str:
    return re.sub(r"\s", "", text)


WORDS = st.sampled_from(["a", "bb", "c" * 30, "d" * 90, "\n", "  ", "e\n  f"])  # short, long, longer than a line


@given(text=st.lists(WORDS, max_size=60).map(" ".join), width=st.integers(10, 200),
       lines=st.integers(1, 4), tail=st.sampled_from(["", " [generic: 3/3 at N=5]"]))
def test_fit_lines_never_loses_text_silently(text, width, lines, tail):
    out = fit_lines(text, width, indent="    ", lines=lines, tail=tail)
    width = max(width, 44)
    assert all(len(ln) <= width for ln in out), out
    assert len(out) <= lines + bool(tail)
    shown = "".join(out)
    assert shown.endswith(tail) or out[-1].strip() == tail.strip()
    body = shown[: len(shown) - len(tail)] if shown.endswith(tail) else "".join(out[:-1])
    mark = LEFT_OUT.search(body)
    flat = re.sub(r"[ \t]*\r?\n\s*", " ", text.strip("\r\n"))
    if mark is None:
        assert _solid(body) == _solid(flat)
    else:
        left = int(re.search(r"\+(\d+)", mark.group()).group(1))
        assert _solid(body[: mark.start()]) == _solid(flat[: len(flat) - left]) and not flat[-left].isspace()


def test_fit_lines_whole_without_a_width_and_refuses_no_lines():
    assert fit_lines("a\n  b", None) == ["a b"]
    with pytest.raises(ValueError, match="lines = 0"):
        fit_lines("x" * 300, 80, lines=0)


def test_one_example_is_one_example():
    from attention_claims.framework.evidence import CheckLog

    log = CheckLog()
    log.example(n=1)
    assert log.summary() == "1 example; n = 1", log.summary()
    log.example(n=2)
    assert "2 examples" in log.summary()
