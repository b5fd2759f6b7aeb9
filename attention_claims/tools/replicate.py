"""``attention-claims replicate``: run a claim's small-scale analog and write its evidence file.

Evidence is not a verdict: the file goes to ``reports/evidence/<claim>/<date>-<device>.json`` and the
claim's ``[[evidence]]`` entry names it; no verdict, ``expected`` or snapshot entry depends on it
(``docs/evidence.md``). Runs resume per seed: an interrupted run started again with the same
configuration skips the seeds it already finished.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from attention_claims.tools import USAGE_ERROR, description

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run the analogs named on the command line (or ``--all``); returns 0, or USAGE_ERROR (4) for an
    unknown claim or scale."""
    from attention_claims.replication.analogs import ANALOGS, SCALES

    p = argparse.ArgumentParser(prog="attention-claims replicate", description=description(__doc__))
    p.add_argument("claims", nargs="*", metavar="ID", help="claim ids with an analog")
    p.add_argument("--all", action="store_true", help="every analog, one after the other")
    p.add_argument("--scale", default="cpu", choices=SCALES, help="cpu (default), gpu, or smoke (20 steps, writes nothing)")
    p.add_argument("--seeds", type=int, default=None, help="override the pre-registered number of seeds (changes the hash)")
    p.add_argument("--root", type=Path, default=Path("."), help="project root (reports/evidence/ is under it)")
    p.add_argument("--list", action="store_true", help="list the analogs and exit")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    if args.list:
        for cid, a in sorted(ANALOGS.items()):
            print(f"{cid}: {a.summary}")
        return 0
    ids = sorted(ANALOGS) if args.all else args.claims
    unknown = [c for c in ids if c not in ANALOGS]
    if not ids or unknown:
        print(f"attention-claims replicate: {'unknown claim(s) ' + ', '.join(unknown) if unknown else 'name a claim or --all'}"
              f"; analogs exist for: {', '.join(sorted(ANALOGS))}", file=sys.stderr)
        return USAGE_ERROR
    from attention_claims.replication.runner import main_threads, run_analog

    main_threads()
    for cid in ids:
        doc = run_analog(cid, scale=args.scale, root=args.root, progress=not args.no_progress, seeds=args.seeds)
        iv = doc["interval"]
        unit = doc["config"].get("unit", "nats")
        print(f"{cid}: {doc['outcome']} — contrast {iv['mean']:+.4f} {unit}, 95 % interval [{iv['lo']:+.4f}, "
              f"{iv['hi']:+.4f}] at {doc['scale']['sentence']} ({doc['outcome_reason']})"
              + (f" -> {doc['path']}" if "path" in doc else ""), flush=True)
        if "path" in doc:
            from attention_claims.replication.schema import toml_entry

            rel = Path(doc["path"]).resolve().relative_to(args.root.resolve()).as_posix()
            print(f"append to {cid}'s record:\n{toml_entry(doc, rel)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
