"""Issue 22, finding 6: a claimed expression cannot hang or crash the run, and a non-finite claimed
value is refused at load; every refusal names the file, the claim and the field."""

from __future__ import annotations

from fractions import Fraction

import pytest
from budget import cpu_budget

from attention_claims.framework.expr import ExpressionError, evaluate, parse
from attention_claims.framework.records import ClaimRecordError, parse_claim
from conftest import record_toml

OK = '''
import pytest

@pytest.mark.claim("c", reading="exact")
def test_exact():
    pass
'''


def _record(claimed: dict, nonfinite: dict | None = None) -> dict:
    data = {"id": "c", "title": "t", "statement": "s", "expected": "true",
            "source": {"document": "arXiv:2103.03404", "section": "s", "quote": "q"},
            "readings": [{"name": "exact", "statement": "r", "as_stated": True}], "claimed": claimed}
    if nonfinite is not None:
        data["claimed_nonfinite"] = nonfinite
    return data


def _refused(claimed: dict, *fragments: str, nonfinite: dict | None = None, field: str = "claimed.x") -> str:
    with cpu_budget(5, what="refusing the record"), pytest.raises(ClaimRecordError) as info:  # not evaluated in full
        parse_claim(_record(claimed, nonfinite), "r.toml")
    text = str(info.value)
    assert text.startswith(f"r.toml: claim 'c': field '{field}': "), text
    for f in fragments:
        assert f in text, (f, text)
    assert len(text) < 600  # a 100,000-character formula is not copied into the message
    return text


@pytest.mark.parametrize("formula, problem", [
    ("10**10**10", "exponent"),
    ("x * 10**10**10", "exponent"),
    ("x ** 1000000", "exponent"),
    ("(10**9000)**10", "bits"),
    ("1+" * 20000 + "1", "too long"),
    ("-" * 100000 + "1", "too long"),
    ("1+" * 400 + "1", "syntax-tree nodes"),
    ("(" * 300 + "1" + ")" * 300, "not a valid expression"),
    ("exp(" * 60 + "x" + ")" * 60, "nested too deeply"),
])
def test_finding_6_pathological_formula_refused_at_load(formula, problem):
    _refused({"x": formula}, problem)


def test_finding_6_parser_recursion_and_memory_errors_become_expression_errors(monkeypatch):
    import ast

    from attention_claims.framework import expr

    for exc in (RecursionError, MemoryError):
        def boom(*a, exc=exc, **k):
            raise exc()

        monkeypatch.setattr(ast, "parse", boom)
        expr.parse.cache_clear()
        with pytest.raises(ExpressionError, match=exc.__name__):
            parse("x + 1")
    monkeypatch.undo()
    expr.parse.cache_clear()


def test_finding_6_exact_powers_are_bounded_at_evaluation():
    with cpu_budget(5, what="refusing the powers"):
        for kw in ({"exact": True}, {}):
            with pytest.raises(ExpressionError, match="exponent"):
                evaluate("x ** n", x=Fraction(3, 7), n=10**10, **kw)
            with pytest.raises(ExpressionError, match="bits"):
                evaluate("x ** n", x=10**100, n=5000, **kw)
    # what the shipped checks do stays allowed: lambda = 1 to n = 10,000, lambda = k/1000 to n = 300
    assert evaluate("lam ** n", exact=True, lam=Fraction(1), n=Fraction(10_000)) == 1
    assert evaluate("lam ** (2*n)", exact=True, lam=Fraction(999, 1000), n=Fraction(300)) > 0
    assert evaluate("2 ** (-n)", n=5) == 2**-5


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf"), 1e308 * 10])
def test_finding_6_nonfinite_number_refused_without_reason(value):
    _refused({"x": value}, "not a finite number", "claimed_nonfinite")


@pytest.mark.parametrize("value", ["1e400", "nan", "inf", "-Infinity"])
def test_finding_6_nonfinite_string_refused(value):
    _refused({"x": value}, "not a finite number")
    # a reason does not make a string infinity evaluable: it is still refused
    _refused({"x": value}, "not a finite number", nonfinite={"x": "why"})


def test_finding_6_overflowing_literal_inside_a_formula_refused():
    _refused({"x": "2 * 1e400 + y"}, "overflows float64")


def test_finding_6_nonfinite_number_with_reason_accepted():
    claim = parse_claim(_record({"x": float("inf"), "y": 1.5},
                                {"x": "the document's bound is vacuous for d = 1"}), "r.toml")
    assert claim.claimed["x"] == float("inf")
    assert claim.claimed_nonfinite == {"x": "the document's bound is vacuous for d = 1"}


@pytest.mark.parametrize("claimed, nonfinite, problem", [
    ({"x": 1.5}, {"x": "why"}, "claimed.x is 1.5"),
    ({}, {"x": "why"}, "claimed.x is missing"),
    ({"x": float("inf")}, {"x": "  "}, "non-empty reason"),
    ({"x": float("inf")}, {"x": 3}, "non-empty reason"),
])
def test_finding_6_stray_or_empty_nonfinite_reason_refused(claimed, nonfinite, problem):
    _refused(claimed, problem, nonfinite=nonfinite, field="claimed_nonfinite.x")


def test_finding_6_shipped_formulas_stay_within_the_limits():
    from attention_claims.framework.records import RECORDS_DIR, load_claim_file

    for path in RECORDS_DIR.rglob("*.toml"):
        load_claim_file(path)


@pytest.mark.parametrize("claimed, fragment", [
    ('x = "10**10**10"', "exponent"),
    ('x = "' + "1+" * 20000 + '1"', "too long"),
    ("x = nan", "not a finite number"),
])
def test_finding_6_end_to_end_usage_error_naming_file_claim_field(planted, claimed, fragment):
    with cpu_budget(60, what="the run that stops at the record"):  # a second or two idle
        run = planted({"c.toml": record_toml("c", extra="[claimed]\n" + claimed)}, {"test_x.py": OK})
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR, run.result.stdout.str() + run.result.stderr.str()
    text = run.result.stderr.str() + run.result.stdout.str()
    for f in ("c.toml", "claim 'c'", "field 'claimed.x'", fragment):
        assert f in text, (f, text)


def test_a_decimal_literal_is_the_decimal_written_at_high_precision():
    """A record's ``0.9`` is nine tenths: at 50 digits the mpmath reading must not carry float64's
    0.9000000000000000222 (1e-16 relative, far above the 1e-30 margins of the certified comparisons that
    evaluate record formulas; an independent review built a bound that holds exactly but was certified
    refuted through that error). Exact and float readings are unchanged."""
    import mpmath

    with mpmath.workdps(50):
        assert evaluate("0.9 * c", c=mpmath.mpf(1)) == mpmath.mpf(9) / 10
        assert evaluate("1_000.5") == mpmath.mpf("1000.5")
        assert evaluate("1e-3") == mpmath.mpf(1) / 1000
        assert evaluate("0.90000000000000000001") > mpmath.mpf(9) / 10  # digits beyond float64 kept
        assert evaluate("0.9") != mpmath.mpf(0.9)
    assert evaluate("0.9", exact=True) == Fraction(9, 10) and evaluate("0.9", floating=True) == 0.9


def test_interval_evaluation_encloses_the_formula_over_the_balls():
    """``interval=True`` (certificates): arb balls in, an enclosure out, over the whole ball of each variable
    (the top-1 energy certificate compares against it with arb's certain '<'); the literals are the decimals
    written; only one arithmetic at a time."""
    from flint import arb, ctx, fmpq

    old = ctx.prec
    ctx.prec = 200
    try:
        c = arb("0.5", "1e-20")  # [0.5 - 1e-20, 0.5 + 1e-20]
        sq = evaluate("c**2", interval=True, c=c)
        assert sq.lower() <= fmpq(1, 4) - fmpq(1, 10**20) and sq.upper() >= fmpq(1, 4) + fmpq(1, 10**20)
        assert (evaluate("0.9 * c", interval=True, c=arb(1)) - fmpq(9, 10)).contains(0)
        assert not evaluate("0.9 * c", interval=True, c=arb(1)).contains(arb(0.9))  # not float64's 0.9
        v = evaluate("sqrt(c) + exp(0) + log(1) + erf(0) + erfc(0) + abs(-c) + min(c, 1) + max(c, 0) + pi - e",
                     interval=True, c=c)
        point = arb("0.5").sqrt() + 1 + 1 + arb("0.5") + arb("0.5") + arb("0.5") + arb.pi() - arb(1).exp()
        assert v.overlaps(point) and point.rad() < 1e-50 and v.rad() < 1e-15  # c's ball, widened by its radius
    finally:
        ctx.prec = old
    with pytest.raises(ValueError, match="at most one"):
        evaluate("c", exact=True, interval=True, c=1)
