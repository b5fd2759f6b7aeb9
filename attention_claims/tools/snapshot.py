"""Compare the reading outcomes of two reports, or of a report and a committed snapshot.

``python -m attention_claims.tools.snapshot reports/claims.json`` compares a run's report with
``tests/snapshots/reading-outcomes.json``: per claim the verdict, and per reading the outcome
and whether its counterexample is certified. It prints every difference and exits 1 when there
is one, 0 otherwise. ``--update`` rewrites the snapshot from the report instead (do that in a
commit of its own, when a verdict is meant to change, and say why).

A complete report (``run.complete``) is compared claim by claim over the whole catalog. A subset run
(``run.partial``: ``--claims-select``, ``-k``, explicit paths) is compared on the claims it decided
(``"selected": true``) only, and says how many; it cannot rewrite the snapshot. An interrupted run is
refused.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .. import _files
from ..framework import config as claims_config
from ..framework.report_schema import MAX_BYTES as REPORT_MAX_BYTES
from . import USAGE_ERROR, description


class SnapshotError(ValueError):
    """The report cannot be compared (missing, not JSON, or not a complete run), or the snapshot is
    missing or malformed."""


def outcomes(report: dict) -> dict[str, dict]:
    """``{claim id: {"verdict": str, "readings": {name: [outcome, certified]}}}`` of a report
    (the ``claims.json`` schema of DESIGN.md)."""
    out = {}
    for c in report["claims"]:
        readings = {}
        for r in c.get("readings", []):
            cx = r.get("counterexample") or {}
            readings[r["name"]] = [r["outcome"], bool(r.get("certified", cx.get("certified", False)))]
        out[c["id"]] = {"verdict": c["verdict"], "readings": readings}
    return out


def load_report(path: Path, *, allow_partial: bool = False) -> dict:
    """Read a ``claims.json`` of a complete run (or, with ``allow_partial``, of a finished subset run).

    Raises:
        SnapshotError: the file is missing or not JSON, the run was interrupted or still in progress,
            or it was a subset run and ``allow_partial`` is false.
    """
    try:
        report = _files.read_json(path, REPORT_MAX_BYTES)  # a regular file only: a FIFO is refused, not waited on
    except (OSError, ValueError) as exc:  # ValueError: not a regular file, not UTF-8, not JSON, nested too deeply
        raise SnapshotError(f"{path}: cannot read the report ({getattr(exc, 'problem', exc)})") from None
    try:  # the fields outcomes() reads, of the right types: a damaged report is named, never a traceback
        if not isinstance(report, dict):
            raise TypeError(f"a JSON {type(report).__name__}, not an object")
        outcomes(report)
        run = report.get("run", {})
        if not isinstance(run, dict):
            raise TypeError(f"'run' is a {type(run).__name__}, not an object")
    except (KeyError, TypeError, AttributeError) as exc:
        what = f"no field {exc}" if isinstance(exc, KeyError) else str(exc)
        raise SnapshotError(f"{path}: not a claims.json report ({what})") from None
    if run.get("partial") and not allow_partial and not run.get("interrupted") and not run.get("in_progress"):
        raise SnapshotError(f"{path}: not a complete run: its last run decided only some claims (--claims-select, "
                            "--claims-document, --claims-shard, -k or a test path); run the whole suite first")
    if run.get("interrupted") or run.get("in_progress"):
        raise SnapshotError(f"{path}: the run was interrupted or has not finished ({run})")
    if run.get("partial") and allow_partial:
        return report
    if run.get("unfinished") and not run.get("partial"):
        errored = ", ".join(c["id"] for c in report.get("claims", []) if c.get("verdict") == "error")
        raise SnapshotError(f"{path}: {run['unfinished']} check(s) did not finish (verdict error: {errored}); "
                            "the report names each check and what happened: fix them and run again")
    if not run.get("complete") or run.get("partial"):
        raise SnapshotError(f"{path}: not a complete run ({run}); run the whole suite first")
    return report


def load_snapshot(path: Path) -> dict[str, dict]:
    """The committed snapshot at ``path`` (:func:`outcomes` of a complete run, as ``--update`` writes it).

    Raises:
        SnapshotError: there is none yet (the message says that ``--update`` starts one), or it is not
            readable JSON of that form.
    """
    if not path.exists():
        raise SnapshotError(f"no snapshot at {path} yet: after a complete run, "
                            f"`attention-claims snapshot --update` writes one (commit it)")
    try:
        old = _files.read_json(path, REPORT_MAX_BYTES)
    except (OSError, ValueError) as exc:
        raise SnapshotError(f"{path}: cannot read the snapshot ({getattr(exc, 'problem', exc)})") from None
    if not isinstance(old, dict) or not all(isinstance(v, dict) and "verdict" in v and isinstance(v.get("readings"), dict)
                                            for v in old.values()):
        raise SnapshotError(f"{path}: not a snapshot (a JSON object of claim id -> verdict and readings)")
    return old


def decided_ids(report: dict) -> set[str] | None:
    """The ids of the claims a subset run decided (``"selected": true``); ``None`` for a complete run."""
    if not report.get("run", {}).get("partial"):
        return None
    return {c["id"] for c in report["claims"] if c.get("selected")}


def differences(old: dict[str, dict], new: dict[str, dict]) -> list[str]:
    """Every claim or reading whose verdict, outcome or certified flag differs, one line each."""
    lines = []
    for cid in sorted(set(old) | set(new)):
        if cid not in new:
            lines.append(f"{cid}: in the snapshot, not in the report")
            continue
        if cid not in old:
            lines.append(f"{cid}: in the report, not in the snapshot (verdict {new[cid]['verdict']})")
            continue
        a, b = old[cid], new[cid]
        if a["verdict"] != b["verdict"]:
            lines.append(f"{cid}: verdict {a['verdict']} -> {b['verdict']}")
        for name in sorted(set(a["readings"]) | set(b["readings"])):
            ra, rb = a["readings"].get(name), b["readings"].get(name)
            if ra != rb:
                fmt = lambda r: "absent" if r is None else f"{r[0]}{' (certified)' if r[1] else ''}"  # noqa: E731
                lines.append(f"{cid} [{name}]: {fmt(ra)} -> {fmt(rb)}")
    return lines


def summary_markdown(report: dict, diff: list[str]) -> str:
    """The verdict tally and every difference from the snapshot, as Markdown for a CI job summary
    (GitHub Actions' ``$GITHUB_STEP_SUMMARY``)."""
    tally: dict[str, int] = {}
    for c in report["claims"]:
        tally[c["verdict"]] = tally.get(c["verdict"], 0) + 1
    order = ["false", "error", "caveat", "true", "unchecked", "undecided"]
    order += sorted(set(tally) - set(order))  # a verdict this list does not know is shown, not dropped
    lines = ["## attention-claims verdicts", "", "| verdict | claims |", "|---|---|"]
    lines += [f"| {v} | {tally[v]} |" for v in order if v in tally]
    lines += ["", f"**{len(diff)} difference(s) from the committed snapshot**" + (":" if diff else ".")]
    lines += [f"- {d}" for d in diff]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=description(__doc__))
    ap.add_argument("report", type=Path, nargs="?", default=None,
                    help="default: claims.json in the project's report folder (claims_report_dir)")
    ap.add_argument("--snapshot", type=Path, default=None,
                    help="default: tests/snapshots/reading-outcomes.json beside the project's ini file")
    ap.add_argument("--update", action="store_true", help="rewrite the snapshot from the report")
    ap.add_argument("--summary", type=Path, default=None,
                    help="append the verdict tally and the differences, in Markdown, to this file (CI job summary)")
    args = ap.parse_args(argv)
    paths = claims_config.discover()
    args.report = args.report or paths.report_dir / "claims.json"
    args.snapshot = args.snapshot or paths.root / "tests" / "snapshots" / "reading-outcomes.json"
    try:
        report = load_report(args.report, allow_partial=not args.update)
        new = outcomes(report)
    except SnapshotError as exc:
        print(f"snapshot: {exc}", file=sys.stderr)
        return USAGE_ERROR
    subset = decided_ids(report)
    if args.update:
        args.snapshot.parent.mkdir(parents=True, exist_ok=True)
        _files.write_file(args.snapshot, json.dumps(new, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
        print(f"snapshot: wrote {len(new)} claims to {args.snapshot}")
        return 0
    try:
        old = load_snapshot(args.snapshot)
    except SnapshotError as exc:
        print(f"snapshot: {exc}", file=sys.stderr)
        return USAGE_ERROR
    if subset is not None:
        old = {cid: v for cid, v in old.items() if cid in subset}
        new = {cid: v for cid, v in new.items() if cid in subset}
    diff = differences(old, new)
    if args.summary is not None:
        try:  # appended: the summary file (GitHub's $GITHUB_STEP_SUMMARY) collects every step's part
            old = _files.read_regular(args.summary, 64 << 20) if args.summary.exists() else b""
            _files.write_file(args.summary, old + summary_markdown(report, diff).encode("utf-8"))
        except (OSError, ValueError) as exc:
            print(f"snapshot: --summary {args.summary}: cannot be written ({getattr(exc, 'problem', exc)})",
                  file=sys.stderr)
            return USAGE_ERROR
    for line in diff:
        print(line)
    n_read = sum(len(c["readings"]) for c in new.values())
    scope = "" if subset is None else " (a subset run: only the claims it decided)"
    print(f"snapshot: {len(diff)} difference(s) over {len(new)} claims and {n_read} readings{scope}")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
