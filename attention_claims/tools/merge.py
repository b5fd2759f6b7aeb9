"""``attention-claims merge -o DIR REPORT.json...``: fold reports from several machines or shards into
one (:mod:`attention_claims.framework.merge`), written as ``claims.json``, ``claims.md`` and
``claims.html`` in ``DIR`` like a run's. The claim records (to recompute the verdicts) come from the
project's claims folder (the ``claims_dir`` ini option, or ``--claims-dir``).

Every input is validated before anything is folded (:func:`attention_claims.framework.report_schema.read_report`:
at most 32 MiB, nested at most 64 deep, valid against the report's JSON Schema; the message names the
file and the JSON path of the first error). ``DIR`` is a report folder of the suite
(:class:`attention_claims.framework.report_folder.ReportFolder`): new, empty, or holding only files the
suite wrote (its manifest) besides files whose names it does not write; never the home, sources or
claims folder. It is locked while written (the plugin's ``.claims.lock``), and a ``claims.json`` there
that is not a report is set aside as ``claims.json.corrupt-<date>``, never replaced.

Exit status: 0 merged, every verdict agreeing with ``expected``; 1 merged, some verdict disagreeing;
4 a usage error (a report that cannot be read or is invalid, another catalog or commit without
``--allow-mixed``, two runs of a reading that disagree on one device, a malformed record, an output
folder that is not the suite's or cannot be written).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..framework import config as claims_config
from ..framework.merge import MergeError, merge_reports
from ..framework.records import ClaimRecordError, load_catalog
from ..framework.report_folder import ReportFolder, ReportFolderError
from ..framework.report_schema import ReportInputError, read_report
from . import USAGE_ERROR, description


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
    folder = ReportFolder(args.output, sources_dir=sources_dir, claims_dir=claims_dir)
    try:
        folder.check(create=False)  # created when the merged report is written, not for a bad input
        catalog = load_catalog(claims_dir, sources_dir)
        reports = [(str(p), read_report(p)) for p in args.reports]
        report = merge_reports(reports, catalog, allow_mixed=args.allow_mixed)
    except (MergeError, ClaimRecordError, ReportInputError, ReportFolderError) as exc:
        print(f"attention-claims merge: {exc}", file=sys.stderr)
        return USAGE_ERROR
    from ..framework.report import write_report_data

    try:
        with folder.lock():
            kept = folder.set_aside_damaged_report()
            if kept is not None:
                print(f"attention-claims merge: warning: {args.output / 'claims.json'} was not a report; "
                      f"kept aside as {kept}", file=sys.stderr)
            unplaced = write_report_data(report.to_json(), args.output, sources_dir=sources_dir)
        for line in unplaced:  # a quote the views cannot highlight (issue 44.3): said, as claims.md says it
            print(f"attention-claims merge: warning: {line}", file=sys.stderr)
    except ReportFolderError as exc:
        print(f"attention-claims merge: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except OSError as exc:
        print(f"attention-claims merge: cannot write {args.output}: {exc}", file=sys.stderr)
        return USAGE_ERROR
    for claim in report.claims:  # not silently: the merged report names each image it cannot show
        for fig in (f for reading in claim.readings for f in reading.figures):
            print(f"attention-claims merge: warning: {claim.id}: its image {fig.path} is not copied into "
                  f"{args.output} (merge carries no image files yet; copy it from the figures/ folder of the "
                  f"report it came from)", file=sys.stderr)
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
    parser = argparse.ArgumentParser(prog="attention-claims merge", description=description(__doc__))
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
