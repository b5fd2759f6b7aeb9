"""Mutation testing is current (issue 24): ``[tool.mutmut]`` names only files that exist, over the
maths package; the report's trust line names the modules a score covers and says when they are gone."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from attention_claims.framework.trust import trust_lines
from attention_claims.tools.mutation_report import mutated_modules

ROOT = Path(__file__).resolve().parents[1]


def test_every_path_mutmut_names_exists():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mutmut"]
    named = [*config["only_mutate"], *config["pytest_add_cli_args_test_selection"], *config["also_copy"],
             *config["source_paths"]]
    missing = [p for p in named if not (ROOT / p).exists()]
    assert missing == [], f"[tool.mutmut] names paths that do not exist: {missing}"


def test_mutation_covers_the_numerical_core():
    modules = mutated_modules(ROOT)
    for concept in ("rank", "spectrum", "attention", "exact", "sparsity", "kernels", "projections"):
        assert f"attention_claims/maths/{concept}.py" in modules


def test_a_score_over_code_that_is_gone_says_so():
    trust = {"mutation": {"tool": "mutmut 3", "date": "2026-11-23", "score": 0.95, "killed": 19, "total": 20,
                          "modules": ["claims/measures.py"], "stale_modules": ["claims/measures.py"]}}
    (line,) = [x for x in trust_lines(trust) if x.startswith("Mutation testing")]
    assert "over claims/measures.py" in line and "Stale: claims/measures.py no longer exist" in line


def test_summary_leaves_unchecked_mutants_out_and_counts_explanations():
    from attention_claims.tools.mutation_report import status_of, summarise

    codes = {"a.py": {"a.x__mutmut_1": 1, "a.x__mutmut_2": 0, "a.x__mutmut_3": None, "a.x__mutmut_4": 36},
             "b.py": {"b.y__mutmut_1": 33, "b.y__mutmut_2": 34, "b.y__mutmut_3": 3}}
    s = summarise(codes, {"a.x__mutmut_2": "equivalent: ..."})
    assert s["tested"] == 5 and s["killed"] == 3 and s["not_checked"] == 1
    assert s["survivors"] == ["a.x__mutmut_2", "b.y__mutmut_1"] and s["explained"] == 1
    assert s["score"] == 3 / 5 and s["killed_or_explained"] == 4 / 5
    assert s["per_module"]["a.py"] == {"killed": 1, "survived": 1, "not checked": 1, "timeout": 1}
    assert status_of(None) == "not checked" and status_of(12345) == "suspicious"
    assert summarise({}, {})["score"] is None


def test_the_trust_line_states_date_commit_modules_and_a_partial_run():
    trust = {"mutation": {"tool": "mutmut 3.8.1", "date": "2026-11-24T21:00:00+00:00", "commit": "3c1302cbd0ca" + "0" * 28,
                          "score": 0.9, "killed_or_explained": 0.96, "killed": 90, "total": 100, "not_checked": 7,
                          "modules": ["attention_claims/maths/rank.py"], "stale_modules": []}}
    (line,) = [x for x in trust_lines(trust) if x.startswith("Mutation testing")]
    assert "2026-11-24T21:00:00+00:00" in line and "commit 3c1302cbd0ca" in line
    assert "over attention_claims/maths/rank.py" in line and "score 90.0 %" in line
    assert "killed or explained as surviving for a stated reason: 96.0 %" in line
    assert "Partial: 7 mutants not checked yet" in line and "Stale" not in line


def test_every_explanation_names_a_kind():
    """An explanation says why the mutant survives: equivalent, or not observable on a CPU-only run."""
    notes = json.loads((ROOT / "reports" / "mutation_explanations.json").read_text(encoding="utf-8"))
    bad = {k: v for k, v in notes.items() if not v.startswith(("equivalent:", "not observable here:"))}
    assert bad == {}


def test_the_report_says_which_commits_a_resumed_run_covers():
    from attention_claims.tools.mutation_report import _provenance

    one = {"tool": "mutmut 3.8.1", "commit": "abc", "tests_commit": "abc", "date": "2026-11-24"}
    assert _provenance(one) == "Run with mutmut 3.8.1 over the modules and tests as of commit `abc`; summarised 2026-11-24."
    resumed = _provenance(one | {"tests_commit": "def"})
    assert "over the modules as of commit `def`: begun at `abc`" in resumed
    assert "before the resumption ran against the tests as of `abc`" in resumed


def test_every_explanation_names_a_surviving_mutant_of_the_committed_run():
    """An explanation of a mutant that the committed run killed, or that no longer exists (a changed
    function renumbers its mutants), would explain the wrong diff: each key is a survivor in
    ``reports/mutation.json``."""
    notes = json.loads((ROOT / "reports" / "mutation_explanations.json").read_text(encoding="utf-8"))
    run = json.loads((ROOT / "reports" / "mutation.json").read_text(encoding="utf-8"))
    survivors = {s["name"] for s in run["survivors"]}
    assert sorted(set(notes) - survivors) == []
