"""Summarise a mutmut run into ``reports/mutation.md`` and ``reports/mutation.json``.

Usage (from the repository root; see README, "Mutation testing")::

    mutmut run && python -m attention_claims.tools.mutation_report

The score is ``(killed + timeout) / (total - skipped)``, as ``mutmut badge`` computes it.
Each surviving mutant is listed with its diff and the one-line explanation kept in
``reports/mutation_explanations.json`` (``{mutant name: why it is equivalent}``); a
survivor without an explanation is marked "UNEXPLAINED" (a test to write).
"""

from __future__ import annotations

import datetime as _dt
import json
import subprocess
import sys
from pathlib import Path

from ..framework import config as claims_config
from ..framework.report import git_commit


def mutated_modules(root: Path) -> list[str]:
    """The files ``[tool.mutmut] only_mutate`` of ``root/pyproject.toml`` names (empty without one)."""
    import tomllib

    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return []
    return list(data.get("tool", {}).get("mutmut", {}).get("only_mutate", []))


def _mutmut(root: Path, *args: str) -> str:
    exe = Path(sys.executable).with_name("mutmut")
    return subprocess.run([str(exe), *args], cwd=root, capture_output=True, text=True, check=True).stdout


def main(argv: list[str] | None = None) -> int:
    """Summarise the last ``mutmut run`` of the project (the ini file's folder) in
    ``<report folder>/mutation.md`` and ``mutation.json``; takes no options."""
    import argparse

    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args(argv)
    paths = claims_config.discover()
    ROOT, REPORTS = paths.root, paths.report_dir
    _mutmut(ROOT, "export-cicd-stats")
    stats = json.loads((ROOT / "mutants" / "mutmut-cicd-stats.json").read_text(encoding="utf-8"))
    tested = int(stats.get("total", 0)) - int(stats.get("skipped", 0))
    killed = int(stats.get("killed", 0)) + int(stats.get("timeout", 0))
    score = killed / tested if tested > 0 else 0.0
    survivors = []
    for line in _mutmut(ROOT, "results").splitlines():
        name, _, status = line.strip().rpartition(": ")
        if name and status in ("survived", "no tests"):
            survivors.append({"name": name, "status": status, "diff": _mutmut(ROOT, "show", name)})
    notes_path = REPORTS / "mutation_explanations.json"
    notes = json.loads(notes_path.read_text(encoding="utf-8")) if notes_path.exists() else {}
    for s in survivors:
        s["explanation"] = notes.get(s["name"], "UNEXPLAINED")
    result = {
        "tool": "mutmut 3",
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "modules": mutated_modules(ROOT),
        "commit": git_commit(ROOT),
        "score": score,
        "killed": killed,
        "total": tested,
        "stats": stats,
        "survivors": [{k: v for k, v in s.items() if k != "diff"} for s in survivors],
    }
    REPORTS.mkdir(exist_ok=True)
    (REPORTS / "mutation.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    md = ["# Mutation testing of the numerical core", "",
          f"Run {result['date']} with {result['tool']} over {', '.join(result['modules'])}; test command: the "
          "`pytest_add_cli_args_test_selection` of `[tool.mutmut]` in pyproject.toml.", "",
          f"**Score: {100 * score:.1f} %** ({killed} killed or timed out of {tested} tested; "
          f"raw stats: `{json.dumps(stats)}`).", "", f"## Surviving mutants ({len(survivors)})", ""]
    for s in survivors:
        md += [f"### `{s['name']}` ({s['status']})", "", f"Why: {s['explanation']}", "", "```diff",
               s["diff"].strip(), "```", ""]
    (REPORTS / "mutation.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    print(f"score {100 * score:.1f} %, {len(survivors)} survivors -> reports/mutation.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
