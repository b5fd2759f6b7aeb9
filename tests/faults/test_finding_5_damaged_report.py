"""Issue 22, finding 5: a ``claims.json`` that cannot be read is never silently replaced: it is kept
aside as ``claims.json.corrupt-<date>``, and the run says so and that it starts from no earlier report."""

from __future__ import annotations

import json

import pytest

from attention_claims.framework.report import load_base
from conftest import small_project_checks as _checks
from conftest import small_project_records as _records


def _edited(text: str, edit) -> str:
    data = json.loads(text)
    alpha = next(c for c in data["claims"] if c["id"] == "alpha-claim")
    edit(data, alpha)
    return json.dumps(data)


# a hand edit of a value the report has no word for: "maybe" once stopped every later run with an
# INTERNALERROR (KeyError while the report was written), an unknown outcome was carried into the new report
EDITS = {
    "unknown-verdict": lambda data, alpha: alpha.update(verdict="maybe"),
    "unknown-outcome": lambda data, alpha: alpha["readings"][0].update(outcome="exploded"),
    "claim-twice": lambda data, alpha: data["claims"].append(dict(alpha, verdict="false")),
}


@pytest.mark.parametrize("damage", ["truncated", "not-json", "wrong-schema", "wrong-shape", *EDITS])
def test_finding_5_a_damaged_report_is_kept_aside_with_a_warning(planted, damage):
    full = planted(_records(), _checks())
    path = full.report_dir / "claims.json"
    text = path.read_text(encoding="utf-8")
    damaged = {"truncated": text[: len(text) // 2], "not-json": "\x00\x01 not json",
               "wrong-schema": json.dumps(dict(json.loads(text), schema=99)),
               "wrong-shape": json.dumps({"schema": 1, "claims": "nope", "run": {}}),
               **{name: _edited(text, edit) for name, edit in EDITS.items()}}[damage]
    path.write_text(damaged, encoding="utf-8")
    one = planted(_records(), _checks(), args=["--claims-select", "beta-claim"])
    assert one.result.ret == 0, one.result.stdout.str()
    out = one.result.stdout.str()
    kept = sorted(full.report_dir.glob("claims.json.corrupt-*"))
    assert len(kept) == 1 and kept[0].read_text(encoding="utf-8") == damaged  # nothing lost
    assert f"kept aside as {kept[0]}" in out and "starts from no earlier report" in out
    assert out.count("attention-claims: warning:") == 2  # when it happens, and again in the last lines
    assert one.claim("beta-claim")["verdict"] == "true"


def test_finding_5_a_missing_report_is_no_warning(tmp_path):
    assert load_base(tmp_path, []) == ({}, None, None)
    assert list(tmp_path.iterdir()) == []
