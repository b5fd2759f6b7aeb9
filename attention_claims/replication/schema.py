"""The evidence file's JSON schema and the agreement between a record's ``[[evidence]]`` and its file.

This module imports neither torch nor the corpus: CI runs it over every committed file
(``tests/test_replication.py``). The schema is ``evidence.schema.json`` beside this module (JSON
Schema 2020-12, checked with :mod:`jsonschema`).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

__all__ = ["SCHEMA_PATH", "validate_file", "check_claim_evidence", "expected_entry", "toml_entry"]

SCHEMA_PATH = Path(__file__).with_name("evidence.schema.json")


@cache
def _validator():
    import jsonschema

    from attention_claims._files import read_json

    schema = read_json(SCHEMA_PATH, 1 << 20)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


MAX_BYTES = 16 << 20
"""The largest evidence file read (a CPU file is about 100 KB: per-seed values and curves)."""


def validate_file(path: Path) -> list[str]:
    """Problems of one evidence file (empty when valid): see :func:`evidence_document`."""
    return evidence_document(path)[1]


def evidence_document(path: Path) -> tuple[dict | None, list[str]]:
    """``(document, problems)`` of one evidence file, read once through the package's one reader
    (:func:`attention_claims._files.read_json`: a regular file only, opened without blocking, at most
    :data:`MAX_BYTES`, nested at most 64 levels); ``document`` is None when ``problems`` is not empty.
    Problems: an unreadable file or not JSON, schema violations (each with its JSON path), a configuration
    whose hash is not ``config_sha256``, an interval that is not the per-seed contrasts' mean, or seeds
    other than the pre-registered ones."""
    from attention_claims._files import read_json
    from attention_claims.replication.analogs import config_sha256

    try:
        doc = read_json(path, MAX_BYTES)
    except (OSError, ValueError) as exc:
        return None, [f"{path}: unreadable: {exc}"]
    problems = [f"{path}: {'/'.join(map(str, e.absolute_path)) or '<top>'}: {e.message}"
                for e in sorted(_validator().iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))]
    if problems:
        return None, problems
    if config_sha256(doc["config"]) != doc["config_sha256"]:
        problems.append(f"{path}: config_sha256: not the SHA-256 of the stored configuration")
    diffs = [s["contrast"] for s in doc["seeds"]]
    if abs(sum(diffs) / len(diffs) - doc["interval"]["mean"]) > 1e-9:
        problems.append(f"{path}: interval.mean: not the mean of the per-seed contrasts")
    if [s["seed"] for s in doc["seeds"]] != doc["config"]["seeds"]:
        problems.append(f"{path}: seeds: not the pre-registered seeds {doc['config']['seeds']}")
    return (None, problems) if problems else (doc, [])


def expected_entry(doc: dict, file: str) -> dict:
    """The ``[[evidence]]`` entry a record should carry for the evidence document ``doc`` at ``file``."""
    iv = doc["interval"]
    return {"file": file, "config_sha256": doc["config_sha256"], "quantity": doc["quantity"],
            "decision_rule": doc["decision_rule"], "scale": doc["scale"]["sentence"],
            "result": (f"{iv['mean']:+.4f} nats, paired 95 % t-interval [{iv['lo']:+.4f}, {iv['hi']:+.4f}] over "
                       f"{iv['n']} seeds; power {doc['power']['achieved_power_at_assumed_sd']:.2f} for the "
                       f"smallest effect of interest {doc['power']['smallest_effect_of_interest_nats']} nats"),
            "outcome": doc["outcome"]}


def check_claim_evidence(claim, root: Path) -> list[str]:
    """Problems of a claim's ``[[evidence]]`` entries against their files under ``root``: a missing file,
    a file that fails :func:`validate_file`, or an entry field that differs from the file
    (:func:`expected_entry`); also an evidence file under ``reports/evidence/<id>/`` no entry names."""
    problems: list[str] = []
    named = set()
    for i, e in enumerate(claim.evidence):
        path = Path(root) / e.file
        named.add(path.name)
        where = f"{claim.path}: claim '{claim.id}': field 'evidence[{i}]'"
        if not path.is_file():
            problems.append(f"{where}: file {e.file} does not exist")
            continue
        doc, bad = evidence_document(path)
        if bad:
            problems.extend(bad)
            continue
        if doc["claim"] != claim.id:
            problems.append(f"{where}: file {e.file} is evidence for {doc['claim']!r}")
        want = expected_entry(doc, e.file)
        for key, value in want.items():
            if getattr(e, key) != value:
                problems.append(f"{where}.{key}: {getattr(e, key)!r} but the file says {value!r}")
    folder = Path(root) / "reports" / "evidence" / claim.id
    if folder.is_dir():
        for f in sorted(folder.glob("*.json")):
            if f.name not in named:
                problems.append(f"{f}: no [[evidence]] entry of claim '{claim.id}' names it")
    return problems


def toml_entry(doc: dict, file: str) -> str:
    """The ``[[evidence]]`` table (TOML text) of :func:`expected_entry`, to append to the claim's record."""
    lines = ["[[evidence]]"]
    for key, value in expected_entry(doc, file).items():
        lines.append(f"{key} = {json.dumps(value, ensure_ascii=False)}")
    return "\n".join(lines) + "\n"
