"""Mutation testing is current (issue 24): ``[tool.mutmut]`` names only files that exist, over the
maths package; the report's trust line names the modules a score covers and says when they are gone."""

from __future__ import annotations

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
