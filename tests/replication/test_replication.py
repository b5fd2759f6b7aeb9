"""Issue 47: the small-scale evidence. Every committed evidence file against its schema and its record,
the statistics against textbook values, the decision rule, the record loader's [[evidence]] checks, and a
20-step smoke run of each analog (never written as evidence)."""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from scipy import stats

from attention_claims.framework.records import ClaimRecordError, load_catalog, parse_claim
from attention_claims.replication.analogs import ANALOGS, config_for, config_sha256
from attention_claims.replication.runner import decide
from attention_claims.replication.schema import check_claim_evidence, expected_entry, validate_file
from attention_claims.replication.stats import paired_interval, power, seeds_for_power

ROOT = Path(__file__).resolve().parents[2]
EVIDENCE = sorted((ROOT / "reports" / "evidence").glob("*/*.json"))


@pytest.fixture(scope="module")
def catalog():
    return {c.id: c for c in load_catalog()}


@pytest.mark.parametrize("path", EVIDENCE, ids=lambda p: p.parent.name)
def test_committed_evidence_file_is_valid(path):
    assert validate_file(path) == []


def test_every_record_agrees_with_its_evidence_files(catalog):
    problems = [p for c in catalog.values() for p in check_claim_evidence(c, ROOT)]
    assert problems == []


def test_analogs_are_for_unchecked_claims_only(catalog):
    """Evidence never decides: every analog's claim exists and stays `unchecked`, with no readings."""
    for cid in ANALOGS:
        assert cid in catalog, cid
        assert catalog[cid].expected == "unchecked" and catalog[cid].readings == ()


def test_a_tampered_file_or_entry_is_reported(tmp_path, catalog):
    with_evidence = [c for c in catalog.values() if c.evidence]
    if not with_evidence:
        pytest.skip("no committed evidence yet")
    claim = replace(with_evidence[0], evidence=with_evidence[0].evidence[:1])  # its first file only
    src = ROOT / claim.evidence[0].file
    dst = tmp_path / claim.evidence[0].file
    dst.parent.mkdir(parents=True)
    shutil.copy(src, dst)
    assert check_claim_evidence(claim, tmp_path) == []
    doc = json.loads(dst.read_text())
    doc["outcome"] = "consistent" if doc["outcome"] != "consistent" else "inconsistent"
    dst.write_text(json.dumps(doc))
    assert any("outcome" in p for p in check_claim_evidence(claim, tmp_path))
    doc["config"]["scale"]["steps"] += 1  # a configuration that is not the hashed one
    dst.write_text(json.dumps(doc))
    assert any("config_sha256" in p for p in validate_file(dst))
    other = replace(claim, evidence=())
    assert any("no [[evidence]] entry" in p for p in check_claim_evidence(other, tmp_path))


# --- statistics -------------------------------------------------------------------------------------

def test_paired_interval_matches_scipy_ttest():
    a, b = [5.1, 5.3, 4.9, 5.6, 5.0], [5.0, 5.1, 5.0, 5.2, 4.8]
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    iv = paired_interval(diffs)
    ci = stats.ttest_rel(a, b).confidence_interval(0.95)
    assert math.isclose(iv["lo"], ci.low, rel_tol=1e-12) and math.isclose(iv["hi"], ci.high, rel_tol=1e-12)
    with pytest.raises(ValueError):
        paired_interval([1.0])


def test_power_matches_the_textbook_sample_size():
    # Cohen (1988), table 2.4.1 and G*Power: a paired t-test for d = 0.5, alpha = .05 two-sided, power .8 needs 34 pairs
    assert seeds_for_power(0.5, 1.0) == 34
    assert 0.79 < power(34, 0.5, 1.0) < 0.82 and power(33, 0.5, 1.0) < 0.8
    assert power(1, 1.0, 1.0) == 0.0


def _seeds(diffs, stuck=False):
    return [{"seed": i, "contrast": d, "arms": {"a": {"left_plateau_at": None if stuck else 100},
                                               "b": {"left_plateau_at": 100}}} for i, d in enumerate(diffs)]


@pytest.mark.parametrize(("direction", "diffs", "reading"), [
    ("negative", [-0.30, -0.31, -0.29, -0.30, -0.32, -0.28] * 10, "consistent"),
    ("negative", [0.30, 0.31, 0.29, 0.30, 0.32, 0.28] * 10, "inconsistent"),
    ("negative", [-0.01, 0.01, 0.0, 0.005, -0.005, 0.0] * 10, "inconsistent"),  # rules out the SESOI
    ("negative", [-0.5, 0.4, -0.3, 0.6, -0.2, 0.1] * 10, "inconclusive"),
    ("positive", [0.30, 0.31, 0.29, 0.30, 0.32, 0.28] * 10, "consistent"),
    ("no-gain", [0.01, 0.0, 0.02, -0.01, 0.01, 0.0] * 10, "consistent"),
    ("no-gain", [-0.30, -0.31, -0.29, -0.30, -0.32, -0.28] * 10, "inconsistent"),
])
def test_decision_rule(direction, diffs, reading):
    config = {"sesoi_nats": 0.05, "assumed_sd_nats": 0.25, "direction": direction}
    outcome, reason, iv, pw = decide(config, _seeds(diffs))
    assert iv["interval_reading"] == reading
    assert pw["seeds_needed"] == seeds_for_power(0.05, 0.25)
    assert outcome == "inconclusive" and "power calculation asks" in reason  # 60 seeds < the 199 asked
    config["assumed_sd_nats"] = 0.01  # a power calculation the seeds satisfy: the interval decides
    assert decide(config, _seeds(diffs))[0] == reading
    outcome, reason, _, _ = decide(config, _seeds(diffs, stuck=True))
    assert outcome == "inconclusive" and "plateau" in reason


# --- the record loader --------------------------------------------------------------------------------

def _record(**evidence):
    entry = {"file": "reports/evidence/x-claim/2026-01-01-cpu.json", "config_sha256": "a" * 64, "quantity": "q",
             "decision_rule": "r", "scale": "s", "result": "v", "outcome": "inconclusive"}
    entry.update(evidence)
    return {"id": "x-claim", "title": "t", "statement": "s", "expected": "unchecked", "unchecked_reason": "u",
            "source": {"document": "arXiv:2101.00001", "section": "s", "quote": "q"},
            "evidence": [{k: v for k, v in entry.items() if v is not None}]}


def test_record_loader_accepts_a_well_formed_entry():
    claim = parse_claim(_record(), "x.toml")
    assert claim.evidence[0].outcome == "inconclusive" and claim.expected == "unchecked"


@pytest.mark.parametrize(("change", "field"), [
    ({"outcome": "true"}, "evidence[0].outcome"),
    ({"config_sha256": "abc"}, "evidence[0].config_sha256"),
    ({"file": "reports/evidence/other/2026.json"}, "evidence[0].file"),
    ({"file": "../../etc/passwd"}, "evidence[0].file"),
    ({"scale": None}, "evidence[0].scale"),
    ({"colour": "red"}, "evidence[0].colour"),
])
def test_record_loader_names_the_bad_field(change, field):
    with pytest.raises(ClaimRecordError) as err:
        parse_claim(_record(**change), "x.toml")
    assert err.value.field == field and "x-claim" in str(err.value)


# --- models ---------------------------------------------------------------------------------------------

def test_masks():
    from attention_claims.replication.nets import mask_for

    fwd, bwd, pre = mask_for("fwd", 4), mask_for("bwd", 4), mask_for("prefix", 4)
    assert fwd[2, 1] and not fwd[1, 2] and bwd[1, 2] and not bwd[2, 1]
    assert pre[0, 1] and not pre[2, 3] and pre[3, 2] and not pre[1, 2]
    with pytest.raises(ValueError, match="unknown attention mask"):
        mask_for("sideways", 4)


def test_effective_rank():
    import torch

    from attention_claims.replication.finetune import effective_rank

    u = torch.randn(20, 1, dtype=torch.float64)
    assert effective_rank(u @ u.T) == 1
    assert effective_rank(torch.eye(10)) == 9  # 9 of 10 equal values hold 90 % of the energy
    assert effective_rank(torch.zeros(3, 3)) == 0


@pytest.mark.parametrize("claim", sorted(ANALOGS))
def test_smoke_run(claim, tmp_path):
    """20 steps, 2 seeds, tiny sizes: the whole path runs and writes nothing."""
    import torch

    from attention_claims.replication.runner import run_analog

    torch.set_num_threads(1)
    doc = run_analog(claim, scale="smoke", root=tmp_path, progress=False)
    assert not any(tmp_path.iterdir())
    assert len(doc["seeds"]) == 2 and all(math.isfinite(s["contrast"]) for s in doc["seeds"])
    assert doc["config_sha256"] == config_sha256(doc["config"])
    assert doc["outcome"] in ("consistent", "inconsistent", "inconclusive")
    for s in doc["seeds"]:
        assert {a["name"] for a in config_for(ANALOGS[claim], "smoke")["arms"]} == set(s["arms"])
    expected_entry(doc, "reports/evidence/x/y.json")


# --- the report's section ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def evidence_doc():
    """A schema-valid evidence document (a smoke run relabelled as the cpu scale, its hash recomputed)."""
    import torch

    from attention_claims.replication.runner import run_analog

    torch.set_num_threads(1)
    doc = run_analog("mixed-attention-mlm-experiment", scale="smoke", write=False, progress=False)
    doc["config"]["scale_name"] = "cpu"
    doc["config_sha256"] = config_sha256(doc["config"])
    return doc


def test_report_section_shows_the_evidence_with_its_scale(tmp_path, monkeypatch, evidence_doc):
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "framework"))
    from render_fixture import fixture_report

    from attention_claims.framework.render import render_html, render_markdown
    from attention_claims.replication import report as ev_report

    report = fixture_report()
    cid = report["claims"][0]["id"]
    doc = dict(evidence_doc, claim=cid)
    (tmp_path / cid).mkdir()
    (tmp_path / cid / "2026-01-01-cpu.json").write_text(json.dumps(doc))
    (tmp_path / "not-in-this-report").mkdir()
    (tmp_path / "not-in-this-report" / "2026-01-01-cpu.json").write_text(json.dumps(doc))
    monkeypatch.setattr(ev_report, "EVIDENCE_DIR", tmp_path)
    md = render_markdown(report)
    section = md.split("## Evidence at small scale — not a verdict (1)")[1]
    assert cid in section and doc["scale"]["sentence"] in section and "not-in-this-report" not in section
    assert f"{doc['interval']['mean']:+.3f}" in section  # the number, in the sentence that states the scale
    html = render_html(report)
    assert "Evidence at small scale — not a verdict (1)" in html
    # the answer first: the section comes after the claims, and its link opens the claim's card (#c-<id>)
    assert html.index('id="claims-list"') < html.index('id="evidence"')
    assert f'href="#c-{cid}"' in html and f'id="c-{cid}"' in html
    card = html[html.index(f'id="c-{cid}"'):]
    card = card[:card.index("</details>")]
    assert "Evidence at small scale" in card and f"{doc['interval']['mean']:+.3f}" in card  # on the claim's card too
    (tmp_path / cid / "2026-01-01-cpu.json").write_text("{")
    assert "**unreadable**" in render_markdown(report)
    monkeypatch.setattr(ev_report, "EVIDENCE_DIR", tmp_path / "none")
    assert "Evidence at small scale" not in render_markdown(report)


# --- the gpu scale in scripts/gpu-run -------------------------------------------------------------------

def _gpu_run():
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.SourceFileLoader("gpu_run_i47", str(ROOT / "scripts" / "gpu-run"))
    spec = importlib.util.spec_from_loader("gpu_run_i47", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_gpu_run_evidence_leg_runs_the_stated_larger_scale(tmp_path, monkeypatch):
    gpu_run = _gpu_run()
    install, ev = gpu_run.evidence_phases(tmp_path, tmp_path, "mixed-attention-mlm-experiment")
    assert install["name"] == "install" and ev["argv"][-6:] == [
        "mixed-attention-mlm-experiment", "--scale", "gpu", "--no-progress", "--root", str(tmp_path)]
    assert ev["limit"] + gpu_run.PHASE_LIMITS["install"] + 2 * gpu_run.GRACE <= gpu_run.RUN_TIMEOUT_S
    for a in ANALOGS.values():
        if a.kind == "lm":
            sc = config_for(a, "gpu")["scale"]
            assert (sc["layers"], sc["d"], sc["steps"]) == (6, 256, 5000)
    monkeypatch.setattr(gpu_run, "gpu_facts", lambda python: {"cuda_available": False})
    with pytest.raises(gpu_run.UsageError, match="no CUDA"):
        gpu_run.evidence_leg(tmp_path, tmp_path, "mixed-attention-mlm-experiment")
    assert gpu_run.main(["--evidence", "no-such-claim", "--dry-run"]) == gpu_run.USAGE


def test_a_second_preregistration_the_same_day_is_written_beside_the_first(tmp_path):
    from attention_claims.replication.runner import evidence_path, result_path

    first = evidence_path(tmp_path, "c", "2026-01-01", "cpu")
    assert result_path(tmp_path, "c", "2026-01-01", "cpu", "a" * 64) == first
    first.parent.mkdir(parents=True)
    first.write_text(json.dumps({"config_sha256": "a" * 64}))
    assert result_path(tmp_path, "c", "2026-01-01", "cpu", "a" * 64) == first  # the same run: resumed, rewritten
    assert result_path(tmp_path, "c", "2026-01-01", "cpu", "b" * 64).name == "2026-01-01-cpu-bbbbbbbb.json"


def test_a_fifo_or_deep_file_among_the_evidence_is_unreadable_not_a_hang(tmp_path):
    """Issue 43 finding 13 for the evidence files: every render reads reports/evidence/*/*.json, so they go through
    the package's one reader (a regular file only, opened without blocking, size and depth caps)."""
    import os

    from attention_claims.replication.report import evidence_rows

    (tmp_path / "some-claim").mkdir()
    os.mkfifo(tmp_path / "some-claim" / "2026-01-01-cpu.json")
    (tmp_path / "some-claim" / "2026-01-02-cpu.json").write_text("[" * 100_000 + "]" * 100_000)
    rows = evidence_rows(["some-claim"], tmp_path)
    assert [r["outcome"] for r in rows] == ["unreadable", "unreadable"]
    assert "not a regular file" in rows[0]["sentence"] and "nested" in rows[1]["sentence"], rows
