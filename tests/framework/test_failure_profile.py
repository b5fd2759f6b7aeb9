"""Failure profiles (issue 24): ``CheckLog.failure_profile`` validates, crosses from the check to the
reading and the false claim's entry through the real plugin, reads back from ``claims.json``, and is
shown in the HTML card, ``claims.md`` and the terminal's false-claims lines."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest

from attention_claims.framework.evidence import FAILURE_PROFILE_CLASSES, CheckLog, failure_class
from attention_claims.framework.render import model
from attention_claims.framework.report_model import ClaimEntry, failure_profile_from_json
from conftest import record_toml

PROFILE = {"class": "generic", "setting": "N=512, d=64", "trials": 30, "failures": 30, "summary": "planted"}


def test_failure_class_is_computed_from_the_counts():
    assert failure_class(30, 30) == "generic"
    assert failure_class(30, 7) == "at-document-parameters"
    assert failure_class(30, 0) == "special-inputs"
    assert set(FAILURE_PROFILE_CLASSES) == {"generic", "at-document-parameters", "special-inputs"}
    for trials, failures in ((0, 0), (3, 4), (3, -1), (2.5, 1), (True, 1)):
        with pytest.raises(ValueError):
            failure_class(trials, failures)


def test_check_log_failure_profile_validates_and_is_kept():
    log = CheckLog()
    assert log.profile is None
    log.failure_profile("generic", setting="N=512, d=64", trials=30, failures=30, summary="planted")
    assert log.profile == PROFILE
    log.failure_profile("special-inputs", setting="N=512, d=64", trials=5, failures=0, summary="again")
    assert log.profile["class"] == "special-inputs" and log.profile["trials"] == 5  # the last call wins
    bad = [dict(cls="corner"), dict(trials=0, failures=0), dict(failures=31), dict(failures=-1),
           dict(setting="  ")]
    for change in bad:
        args = {"cls": "generic", "setting": "N=512", "trials": 30, "failures": 30, "summary": "", **change}
        cls = args.pop("cls")
        with pytest.raises(ValueError):
            log.failure_profile(cls, **args)


def test_profile_reads_back_from_json():
    assert failure_profile_from_json(None) is None
    assert failure_profile_from_json(dict(PROFILE, extra=1)) == PROFILE
    assert list(failure_profile_from_json(PROFILE)) == ["class", "setting", "trials", "failures", "summary"]
    with pytest.raises(KeyError):
        failure_profile_from_json({"class": "generic"})


def test_render_model_texts():
    claim = {"verdict": "false", "readings": [{"name": "exact", "as_stated": True, "outcome": "failed",
                                                "failure_profile": PROFILE}]}
    assert model.claim_failure_profile(claim) == PROFILE  # an older report: from the reading
    assert model.claim_failure_profile(dict(claim, failure_profile=dict(PROFILE, trials=31)))["trials"] == 31
    assert model.claim_failure_profile(dict(claim, verdict="caveat")) is None
    assert model.failure_profile_text(PROFILE) == "fails in 30 of 30 draws at N=512, d=64"
    assert model.failure_profile_text(None) == ""


CHECKS = {"test_p.py": '''
import pytest
from attention_claims.testkit import refute

@pytest.mark.claim("f", reading="exact")
def test_false(claim_log):
    claim_log.example(N=2)
    claim_log.failure_profile("generic", setting="N=512, d=64", trials=30, failures=30, summary="planted")
    refute("planted failure", example={"N": 2}, certified=True, certificate="planted")

@pytest.mark.claim("t", reading="exact")
def test_true(claim_log):
    claim_log.example(N=2)
    claim_log.failure_profile("special-inputs", setting="N=512, d=64", trials=30, failures=0, summary="held")
'''}


def test_profile_through_the_plugin_to_every_report(planted):
    """A serial run (under xdist in tests/framework/test_plugin.py's test_xdist_gives_the_same_report)."""
    records = {"f.toml": record_toml("f", expected="false"), "t.toml": record_toml("t", expected="true")}
    run = planted(records, CHECKS)
    assert run.result.ret == 0, run.result.stdout.str()
    report = run.report
    f, t = run.claim("f"), run.claim("t")
    assert f["verdict"] == "false" and f["failure_profile"] == PROFILE
    assert f["readings"][0]["failure_profile"] == PROFILE
    # a reading that held shows no profile, and a claim that is not false none either
    assert t["verdict"] == "true" and t["failure_profile"] is None and t["readings"][0]["failure_profile"] is None
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).resolve().parents[2] / "docs" / "claims.schema.json").read_text("utf-8"))
    jsonschema.Draft202012Validator(schema).validate(report)
    bad = json.loads(json.dumps(report))
    bad["claims"][0]["failure_profile"]["class"] = "corner"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(bad)
    for c in report["claims"]:
        assert asdict(ClaimEntry.from_json(c)) == c  # carried by a later subset run unchanged
    html = (run.report_dir / "claims.html").read_text(encoding="utf-8")
    assert 'class="badge profile profile-generic"' in html and "generic: 30/30" in html
    assert "fails in 30 of 30 draws at N=512, d=64" in html
    md = (run.report_dir / "claims.md").read_text(encoding="utf-8")
    assert "**Failure profile** (generic): fails in 30 of 30 draws at N=512, d=64. planted" in md
    assert "[generic: 30/30 at N=512, d=64]" in md  # in the claim's summary line
    assert "  f  recomputed: planted failure [generic: 30/30 at N=512, d=64]" in run.result.stdout.lines


def test_terminal_line_keeps_the_profile_when_cut():
    from attention_claims.framework.plugin import terminal_lines
    from attention_claims.framework.report_model import Report, Run, Trust

    entry = ClaimEntry.from_json({
        "id": "f", "title": "t", "verdict": "false", "expected": "false", "agrees": True, "reason": "r",
        "statement": "s", "formal": None, "source": {"document": "d", "section": "", "quote": "q"},
        "also_in": [], "unchecked_reason": None, "notes": None, "record": "", "errors": [],
        "readings": [{"name": "exact", "as_stated": True, "statement": "s", "condition": {}, "outcome": "failed",
                      "checks": [], "examples": 1, "evidence": "", "certified": True, "failure_profile": PROFILE,
                      "counterexample": {"message": "x" * 300, "certified": True}}],
        "failure_profile": PROFILE})
    report = Report(generated="now", environment=None, run=Run(True, False, False, 0), trust=Trust(),
                    claims=[entry], fresh=frozenset({"f"}))
    lines = [text for text, _red in terminal_lines(report, [], None, width=100)]
    at = next(i for i, text in enumerate(lines) if text.startswith("  f"))
    item = lines[at:at + 4]  # three lines of the counterexample, what was left out counted, then the profile
    assert all(len(t) <= 100 for t in item) and "characters left out)" in item[2], item
    assert item[3].strip() == "[generic: 30/30 at N=512, d=64]", item


def test_testkit_profiles_compute_the_class():
    from attention_claims.testkit.failure_profiles import (
        gaussian_softmax_ranks,
        record_profile,
        softmax_rank_above_profile,
    )

    ranks = gaussian_softmax_ranks(16, 2, 5, 1)
    assert len(ranks) == 5 and all(3 <= r <= 16 for r in ranks)  # softmax raises rank above d = 2
    assert gaussian_softmax_ranks(16, 2, 5, 1) == ranks  # fixed seed
    log = CheckLog()
    assert softmax_rank_above_profile(log, N=16, d=2, bound=2, trials=5, seed=1) == "generic"
    assert log.profile["failures"] == 5 and log.profile["setting"] == "N=16, d=2"
    assert softmax_rank_above_profile(log, N=16, d=2, bound=16, trials=5, seed=1) == "special-inputs"
    assert record_profile(log, [True, False], setting="s", summary="") == "at-document-parameters"
    assert log.profile["failures"] == 1 and log.profile["trials"] == 2
    with pytest.raises(ValueError):
        record_profile(log, [], setting="s", summary="")
    with pytest.raises(ValueError):
        gaussian_softmax_ranks(0, 2, 5, 1)


def test_gaussian_qk_draws_are_the_seeded_draws_q_before_k_and_validate():
    import numpy as np
    import pytest

    from attention_claims.testkit.failure_profiles import gaussian_qk_draws

    rng = np.random.default_rng(7)
    for Q, K, r in gaussian_qk_draws(5, 3, 2, 7):
        assert np.array_equal(Q, rng.standard_normal((5, 3))) and np.array_equal(K, rng.standard_normal((5, 3)))
        assert r.standard_normal() == rng.standard_normal()  # the same generator, for a draw's other parts
    with pytest.raises(ValueError, match="N, d and trials must be >= 1"):
        next(gaussian_qk_draws(0, 3, 2, 7))
