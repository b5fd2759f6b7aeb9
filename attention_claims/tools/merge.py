"""``attention-claims merge -o DIR REPORT.json...``: fold reports from several machines or shards into
one (:mod:`attention_claims.framework.merge`), written as ``claims.json``, ``claims.md`` and
``claims.html`` in ``DIR`` like a run's. The claim records (to recompute the verdicts) come from the
project's claims folder (the ``claims_dir`` ini option, or ``--claims-dir``).

Exit status: 0 merged, every verdict agreeing with ``expected``; 1 merged, some verdict disagreeing;
4 a usage error (a report that cannot be read, another catalog or commit without ``--allow-mixed``, two
runs of a reading that disagree on one device, a malformed record).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..framework import config as claims_config
from ..framework.merge import MergeError, load_report, merge_reports
from ..framework.records import ClaimRecordError, load_catalog

USAGE_ERROR = 4


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``merge`` (shared by ``python -m attention_claims.tools.merge`` and the console script)."""
    parser.add_argument("reports", nargs="+", type=Path, metavar="REPORT.json", help="the claims.json files to fold")
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="DIR",
                        help="folder to write the merged claims.json, claims.md and claims.html to")
    parser.add_argument("--allow-mixed", action="store_true",
                        help="merge reports of other catalogs or commits too (the verdicts still follow the claims folder)")
    parser.add_argument("--claims-dir", type=Path, default=None, help="the claim records (default: the project's claims_dir)")
    parser.add_argument("--claims-sources", type=Path, default=None,
                        help="the source documents (default: the project's claims_sources)")


def run(args: argparse.Namespace) -> int:
    """Merge as ``args`` says; returns the exit status (messages on standard error)."""
    paths = claims_config.discover()
    claims_dir = args.claims_dir or paths.claims_dir
    sources_dir = args.claims_sources or paths.sources_dir
    try:
        catalog = load_catalog(claims_dir, sources_dir)
        reports = [(str(p), load_report(p)) for p in args.reports]
        report = merge_reports(reports, catalog, allow_mixed=args.allow_mixed)
    except (MergeError, ClaimRecordError) as exc:
        print(f"attention-claims merge: {exc}", file=sys.stderr)
        return USAGE_ERROR
    from ..framework.report import write_report_data

    try:
        write_report_data(report.to_json(), args.output, sources_dir=sources_dir)
    except OSError as exc:
        print(f"attention-claims merge: cannot write {args.output}: {exc}", file=sys.stderr)
        return USAGE_ERROR
    counts = report.counts.total
    tally = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    hosts = ", ".join(sorted({r.host for r in report.runs})) or "no recorded run"
    print(f"merged {len(reports)} reports ({len(report.runs)} runs on {hosts}): {tally}; "
          f"report: {args.output / 'claims.md'}")
    bad = [c for c in report.claims if c.decided is not None and not c.agrees]
    for c in bad:
        print(f"attention-claims merge: {c.id}: {c.verdict}, expected {c.expected}", file=sys.stderr)
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="attention-claims merge", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
