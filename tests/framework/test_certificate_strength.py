"""Two words, one meaning each (issue 45): a certified counterexample is ``proved`` (exact rationals, arb balls, a
rigorous bound whose every constant is derived) or ``recomputed`` (an independent higher-precision floating-point
computation agrees, no error bound). The field ``certificate_strength`` is on every certified reading and
counterexample of ``claims.json``, and the terminal, ``claims.md`` and ``claims.html`` say which."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attention_claims.framework.evidence import (
    CERTIFICATE_STRENGTHS,
    Counterexample,
    certificate_strength_of,
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


@pytest.mark.parametrize(("certificate", "strength"), [
    ("exact rationals", "proved"), ("fmpq_mat rank", "proved"), ("rank over Q(t) (exact)", "proved"),
    ("arb determinant at 128 bits", "proved"), ("stored entries read back exactly", "proved"),
    ("40-digit mpmath", "recomputed"), ("30-digit eigenvalues of A^T A (mpmath)", "recomputed"),
    ("exact rationals; the claimed formula at 60 digits", "recomputed"), ("float64 only", "recomputed"),
    ("40-digit quadrature", "recomputed"), ("", "recomputed"), ("a planted certificate", "recomputed"),
    ("float64 forward pass and SVD", "recomputed"),
])
def test_a_certificate_without_a_stated_strength_is_proved_only_when_its_words_name_a_proof(certificate, strength):
    assert certificate_strength_of(certificate) == strength
    with pytest.raises(Counterexample) as info:
        refute("x", certified=True, certificate=certificate)
    assert info.value.certificate_strength == strength == info.value.to_dict()["certificate_strength"]


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


def test_an_earlier_report_without_the_field_gets_the_strength_its_certificate_supports():
    reading = {"name": "r", "as_stated": True, "statement": "s", "outcome": "failed", "checks": [], "examples": 0,
               "evidence": "", "certified": True,
               "counterexample": {"message": "m", "certified": True, "certificate": "fmpz_mat rank"}}
    entry = ReadingEntry.from_json(reading)
    assert entry.certificate_strength == "proved" == entry.counterexample.certificate_strength
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
    assert fp16["certificate_strength"] == "recomputed"
    assert "(certified: proved)" in claims["f"]["reason"]  # a false verdict's headline says which
    out = run.result.stdout.str()
    assert "  f  proved: planted falsehood" in out
    md = (run.report_dir / "claims.md").read_text(encoding="utf-8")
    assert "certified (proved)" in md and "certified (recomputed)" in md
    html = (run.report_dir / "claims.html").read_text(encoding="utf-8")
    assert "certified (proved)" in html and "certified (recomputed)" in html


def test_the_schema_names_the_two_words():
    schema = json.loads((ROOT / "docs" / "claims.schema.json").read_text(encoding="utf-8"))
    for part in ("reading", "counterexample"):
        assert schema["$defs"][part]["properties"]["certificate_strength"]["enum"] == ["proved", "recomputed", None]
