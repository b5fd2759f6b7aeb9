"""Two words, one meaning each (issue 45): a certified counterexample is ``proved`` (exact rationals, arb balls, a
rigorous bound whose every constant is derived) or ``recomputed`` (an independent higher-precision floating-point
computation agrees, no error bound). The field ``certificate_strength`` is on every certified reading and
counterexample of ``claims.json``, and the terminal, ``claims.md`` and ``claims.html`` say which. Every check of
the catalog states the word (an AST scan below); a check that states none gets ``recomputed``, never a word read
off its certificate's text."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from attention_claims.framework.evidence import (
    CERTIFICATE_STRENGTHS,
    STRENGTH_DEFAULT,
    STRENGTH_NOT_STATED,
    Counterexample,
    refute,
)
from attention_claims.framework.render.model import certified_word
from attention_claims.framework.report_model import ReadingEntry
from conftest import record_toml

ROOT = Path(__file__).resolve().parents[2]

CHECKS = {"test_c.py": '''
import pytest
from attention_claims.testkit import refute

@pytest.mark.claim("f", reading="exact")
def test_false(claim_log):
    refute("planted falsehood", example={"N": 2}, certified=True, certificate="a planted proof",
           certificate_strength="proved")

@pytest.mark.claim("c", reading="exact")
def test_holds(claim_log):
    claim_log.example(x=1.0)

@pytest.mark.claim("c", reading="fp16")
def test_fp16(claim_log):
    refute("planted rounding", example={"N": 3}, certified=True, certificate="40-digit mpmath")
'''}


@pytest.mark.parametrize("certificate", [
    "exact rationals", "fmpq_mat rank", "arb determinant at 128 bits", "stored entries read back exactly",
    "40-digit mpmath", "float64 only", "",
])
def test_a_certificate_without_a_stated_strength_is_recomputed_whatever_its_words(certificate):
    """Words are not a proof: a certified counterexample whose check states no strength is ``recomputed``, even
    when its certificate names exact or ball arithmetic, and its certificate says the word was not the check's."""
    with pytest.raises(Counterexample) as info:
        refute("x", certified=True, certificate=certificate)
    cx = info.value
    assert STRENGTH_DEFAULT == "recomputed"
    assert cx.certificate_strength == "recomputed" == cx.to_dict()["certificate_strength"]
    assert not cx.strength_stated
    assert cx.certificate.startswith(certificate) and cx.certificate.endswith(STRENGTH_NOT_STATED)
    assert cx.to_dict()["certificate"] == cx.certificate
    with pytest.raises(Counterexample) as info:
        refute("x", certified=True, certificate=certificate, certificate_strength="proved")
    assert info.value.strength_stated and info.value.certificate == certificate  # a stated word adds nothing


def test_a_stated_strength_wins_and_is_checked():
    with pytest.raises(Counterexample) as info:
        refute("x", certified=True, certificate="40-digit certified quadrature (arb)", certificate_strength="proved")
    assert info.value.certificate_strength == "proved"
    with pytest.raises(Counterexample) as info:
        refute("x", certified=False, certificate="float64")
    assert info.value.certificate_strength is None
    with pytest.raises(ValueError, match="one of proved, recomputed"):
        refute("x", certified=True, certificate_strength="certain")
    with pytest.raises(ValueError, match="not certified"):
        refute("x", certified=False, certificate_strength="proved")
    assert CERTIFICATE_STRENGTHS == ("proved", "recomputed")


def test_an_earlier_report_without_the_field_reads_back_as_recomputed():
    reading = {"name": "r", "as_stated": True, "statement": "s", "outcome": "failed", "checks": [], "examples": 0,
               "evidence": "", "certified": True,
               "counterexample": {"message": "m", "certified": True, "certificate": "fmpz_mat rank"}}
    entry = ReadingEntry.from_json(reading)
    assert entry.certificate_strength == "recomputed" == entry.counterexample.certificate_strength
    assert certified_word({"certified": True, "certificate": "exact rationals"}) == "certified (recomputed)"
    stated = {**reading, "certificate_strength": "proved",
              "counterexample": {**reading["counterexample"], "certificate_strength": "proved"}}
    assert ReadingEntry.from_json(stated).certificate_strength == "proved"
    assert ReadingEntry.from_json({**reading, "certified": False, "outcome": "held",
                                   "counterexample": None}).certificate_strength is None
    assert certified_word({"certified": True, "certificate": "50-digit mpmath"}) == "certified (recomputed)"
    assert certified_word({"certified": False}) == "not certified"


def test_the_report_and_the_terminal_say_which(planted):
    records = {"f.toml": record_toml("f", expected="false", readings=(("exact", True),)),
               "c.toml": record_toml("c", expected="caveat", readings=(("exact", True), ("fp16", False)))}
    run = planted(records, CHECKS)
    assert run.result.ret == 0, run.result.stdout.str()
    claims = {c["id"]: c for c in run.report["claims"]}
    for c in claims.values():
        for r in c["readings"]:
            assert (r["certificate_strength"] is not None) == r["certified"]
    f, fp16 = claims["f"]["readings"][0], claims["c"]["readings"][1]
    assert f["certificate_strength"] == f["counterexample"]["certificate_strength"] == "proved"
    assert fp16["certificate_strength"] == "recomputed"  # the check states none: the weaker word, and it says so
    assert fp16["counterexample"]["certificate"] == f"40-digit mpmath; {STRENGTH_NOT_STATED}"
    assert "(certified: proved)" in claims["f"]["reason"]  # a false verdict's headline says which
    out = run.result.stdout.str()
    assert "  f  proved: planted falsehood" in out
    md = (run.report_dir / "claims.md").read_text(encoding="utf-8")
    assert "certified (proved)" in md and "certified (recomputed)" in md and STRENGTH_NOT_STATED in md
    html = (run.report_dir / "claims.html").read_text(encoding="utf-8")
    assert "certified (proved)" in html and "certified (recomputed)" in html


def test_the_schema_names_the_two_words():
    schema = json.loads((ROOT / "docs" / "claims.schema.json").read_text(encoding="utf-8"))
    for part in ("reading", "counterexample"):
        assert schema["$defs"][part]["properties"]["certificate_strength"]["enum"] == ["proved", "recomputed", None]


def unstated_strengths(path: Path) -> list[str]:
    """``file:line`` of every ``refute(...)`` / ``Counterexample(...)`` call in the Python file ``path`` whose
    ``certified`` is not literally ``False`` and which passes no ``certificate_strength`` or a literal ``None``
    (or passes ``**kwargs``, which the scan cannot read). ``refute_deferred`` is not one: it is never certified itself; its ``certify``
    function's ``refute`` is scanned like any other."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name not in ("refute", "Counterexample"):
            continue
        kwargs = {k.arg: k.value for k in node.keywords}
        certified = kwargs.get("certified")
        if certified is None and None not in kwargs or (isinstance(certified, ast.Constant) and certified.value is False):
            continue  # not certified (refute requires certified=; a Counterexample without it is uncertified)
        strength = kwargs.get("certificate_strength")
        if strength is None or isinstance(strength, ast.Constant) and strength.value is None:
            out.append(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{node.lineno}")
    return out


def test_every_certified_refute_of_the_catalog_states_its_strength():
    """A new check cannot leave the word out: every certified ``refute`` of ``checks/`` and of the package states
    ``certificate_strength`` (docs/verdicts.md, "Certified"), decided by what it computes."""
    files = sorted((ROOT / "checks").glob("*.py")) + sorted((ROOT / "attention_claims").rglob("*.py"))
    assert len(files) > 20
    calls = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        calls += text.count("refute(")
    assert calls > 200  # the scan sees the catalog's checks
    missing = [where for path in files for where in unstated_strengths(path)]
    assert not missing, f"certified refute(...) without certificate_strength= at {missing}"


def test_the_scan_finds_a_certified_refute_without_a_strength(tmp_path):
    check = tmp_path / "test_x.py"
    check.write_text('''
def test_a(ok):
    refute("m", certified=True, certificate="exact rationals")
    refute("m", certified=ok, certificate="arb", certificate_strength="proved" if ok else None)
    refute("m", certified=False, certificate="float64")
    refute_deferred("m", certify=lambda: None)
    evidence.refute("m", certified=ok)
    raise Counterexample("m", certified=True)
    refute("m", **kwargs)
    refute("m", certified=True, certificate_strength=None)
''', encoding="utf-8")
    assert unstated_strengths(check) == [f"{check}:{n}" for n in (3, 7, 8, 9, 10)]
