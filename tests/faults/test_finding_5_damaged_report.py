"""Issue 22, finding 5: a ``claims.json`` that cannot be read is never silently replaced: it is kept
aside as ``claims.json.corrupt-<date>``, and the run says so and that it starts from no earlier report."""

from __future__ import annotations

import json

import pytest

from attention_claims.framework.report import load_base
from conftest import small_project_checks as _checks
from conftest import small_project_records as _records


@pytest.mark.parametrize("damage", ["truncated", "not-json", "wrong-schema", "wrong-shape"])
def test_finding_5_a_damaged_report_is_kept_aside_with_a_warning(planted, damage):
    full = planted(_records(), _checks())
    path = full.report_dir / "claims.json"
    text = path.read_text(encoding="utf-8")
    damaged = {"truncated": text[: len(text) // 2], "not-json": "\x00\x01 not json",
               "wrong-schema": json.dumps(dict(json.loads(text), schema=99)),
               "wrong-shape": json.dumps({"schema": 1, "claims": "nope", "run": {}})}[damage]
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
