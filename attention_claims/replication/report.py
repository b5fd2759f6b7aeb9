"""The rows of the report's section "Evidence at small scale — not a verdict".

Read from the committed files ``reports/evidence/<claim>/*.json`` of the checkout (:data:`EVIDENCE_DIR`),
for the claims the report holds only; a file that fails its schema is shown as such, never dropped. Each
row's sentence puts the number and its scale together (issue 47). Imports neither torch nor jinja2.
"""

from __future__ import annotations

from pathlib import Path

from attention_claims.framework.records import REPO_ROOT

__all__ = ["EVIDENCE_DIR", "evidence_rows"]

EVIDENCE_DIR = REPO_ROOT / "reports" / "evidence"


def _sentence(doc: dict) -> str:
    iv, pw, unit = doc["interval"], doc["power"], doc["config"].get("unit", "nats")
    sesoi = pw.get("smallest_effect_of_interest_nats", pw.get("smallest_effect_of_interest"))
    return (f"{doc['quantity']}: {iv['mean']:+.3f} {unit}, paired 95 % interval [{iv['lo']:+.3f}, {iv['hi']:+.3f}], "
            f"at {doc['scale']['sentence']}; power {pw['achieved_power_at_assumed_sd']:.2f} against the smallest "
            f"effect of interest {sesoi} {unit} (the calculation asks {pw['seeds_needed']} seeds). "
            f"{doc['outcome_reason'][:1].upper()}{doc['outcome_reason'][1:]}.")


def evidence_rows(claim_ids, folder: Path | None = None) -> list[dict]:
    """``[{"claim", "outcome", "sentence", "file"}]`` for every evidence file of a claim in ``claim_ids``,
    by claim id then file name; an invalid file gives outcome ``unreadable`` and its first problem."""
    from attention_claims.replication.schema import evidence_document

    folder = EVIDENCE_DIR if folder is None else Path(folder)
    wanted = set(claim_ids)
    rows = []
    for path in sorted(folder.glob("*/*.json")) if folder.is_dir() else []:
        if path.parent.name not in wanted:
            continue
        doc, problems = evidence_document(path)
        rel = f"reports/evidence/{path.parent.name}/{path.name}"
        if problems:
            rows.append({"claim": path.parent.name, "outcome": "unreadable", "sentence": problems[0], "file": rel})
            continue
        rows.append({"claim": doc["claim"], "outcome": doc["outcome"], "sentence": _sentence(doc), "file": rel})
    return rows
