"""The Markdown renderer: the answer first, false before caveat before true before unchecked, no repeats."""

from __future__ import annotations

from render_fixture import fixture_report

from attention_claims.framework.render import render_markdown
from attention_claims.framework.render.markdown import md_cell, md_text


def test_sections_in_order_and_summary_first():
    md = render_markdown(fixture_report())
    heads = [line for line in md.splitlines() if line.startswith("## ")]
    assert heads == ["## False (1)", "## True with a caveat (1)", "## True (2)",
                     "## Unchecked (computation cannot judge them) (1)"]
    assert md.index("| **all**") < md.index("## False")
    assert len(md[:md.index("## False")].splitlines()) < 40  # the summary fits one screen


def test_each_claim_folded_and_counterexample_once():
    md = render_markdown(fixture_report())
    assert md.count("<details") == md.count("</details>") == 5
    assert md.count("N = 2 breaks it") == 2  # summary line and the counterexample paragraph


def test_math_is_github_math():
    assert md_text("$l\\_1/l\\_2$ and \\\\begin{equation}x\\\\end{equation}") == "$l_1/l_2$ and \n\n$$\nx\n$$\n\n"
    assert md_cell("a | $b$") == "a \\| $b$"
