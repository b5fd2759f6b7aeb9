"""Verdict stability across Hypothesis seeds (issue 5, "Stability").

``python -m attention_claims.tools.stability --seeds 5 --profile dev`` runs the claim checks once per seed
(``pytest checks --hypothesis-seed=S``), compares the verdicts claim by claim, and writes
``reports/stability.json`` (read by the report's trust section). A verdict that flips
between seeds means a check too weak or a tolerance wrong: fix the check.
Exit status 1 when some verdict flips, 4 when a seed's run of pytest stops without a finished report (a
malformed record, an altered document: the message gives pytest's exit status and its last lines), when
there is nothing to compare (``--seeds`` below 2, runs that decide no claim: nothing is written, so an
earlier ``stability.json`` is never replaced by an empty one) or the file cannot be written: it is written through the
report folder (:func:`attention_claims.framework.report_folder.write_suite_file`), which refuses a home,
sources or claims folder and a ``stability.json`` there that this tool did not write.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from .._files import UnsafeFileError, read_json
from ..framework import config as claims_config
from ..framework.report import git_commit
from ..framework.report_folder import ReportFolderError, write_suite_file
from . import USAGE_ERROR

REPORT_MAX_BYTES = 32 << 20
"""The largest seed's report (``claims.json``) or ``stability.json`` read: a report's own cap
(:data:`attention_claims.framework.report_schema.MAX_BYTES`)."""

MIN_SEEDS = 2
"""The fewest seeds compared: with one (or none) no verdict can flip, and the result would say nothing."""


class SeedRunError(RuntimeError):
    """A seed's run of pytest that cannot be compared: it wrote no report (a usage error such as a malformed
    record stops it first) or did not finish; ``str()`` gives the seed, pytest's exit status and the last
    lines of its output."""


def _tail(output: str, lines: int = 5) -> str:
    kept = [line for line in output.strip().splitlines() if line.strip()][-lines:]
    return ("; pytest said:\n  " + "\n  ".join(kept)) if kept else ""


def run_seed(seed: int, profile: str, paths: list[str], workers: int = 0) -> dict[str, str]:
    """Verdicts ``{claim id: verdict}`` of one run of the checks with this seed.

    Raises:
        SeedRunError: the run wrote no report, or did not finish (an in-progress or
            interrupted report says every claim is undecided and must not be compared).
    """
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "pytest", *paths, "-q", "-p", "no:cacheprovider", f"--hypothesis-seed={seed}",
               f"--hypothesis-profile={profile}", "--claims-report-dir", out]
        if workers:
            cmd += ["-n", str(workers)]  # pytest-xdist; the seed fixes every test's examples either way
        done = subprocess.run(cmd, cwd=claims_config.discover().root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, errors="replace", check=False)
        path = Path(out) / "claims.json"
        if not path.exists():
            raise SeedRunError(f"seed {seed}: the run of pytest wrote no report (exit status {done.returncode}: "
                               f"{' '.join(cmd)}){_tail(done.stdout)}")
        try:  # the package's one reader: a regular file of at most 32 MiB, UTF-8, nested at most 64 levels
            report = read_json(path, REPORT_MAX_BYTES)
        except UnsafeFileError as exc:
            raise SeedRunError(f"seed {seed}: its report {path.name} is not readable JSON ({exc.problem[:160]})"
                               f"{_tail(done.stdout)}") from None
        except OSError as exc:
            raise SeedRunError(f"seed {seed}: its report {path.name} cannot be read ({exc.strerror or exc})"
                               f"{_tail(done.stdout)}") from None
    if not isinstance(report, dict) or not isinstance(report.get("claims"), list) or not all(
            isinstance(c, dict) and isinstance(c.get("id"), str) for c in report["claims"]):
        raise SeedRunError(f"seed {seed}: its report is not a claims report (no list of claims with ids)")
    run = report.get("run", {})
    run = run if isinstance(run, dict) else {}
    if run.get("in_progress") or run.get("interrupted") or run.get("exitstatus") not in (0, 1):
        raise SeedRunError(f"seed {seed}: the run did not finish normally (run = {run}); verdicts not comparable"
                           f"{_tail(done.stdout)}")
    return {c["id"]: c["verdict"] for c in report["claims"]}


def is_stability_file(path: Path) -> bool:
    """Whether ``path`` holds a result of this tool (a JSON object with ``seeds``, ``flips`` and
    ``profile``): one written before the report folder's manifest, which it may replace. Read through the
    package's one reader (a FIFO, a deep or a non-UTF-8 file is not this tool's, and is never waited on)."""
    try:
        data = read_json(path, REPORT_MAX_BYTES)
    except (OSError, ValueError):
        return False
    return (isinstance(data, dict) and isinstance(data.get("seeds"), list) and isinstance(data.get("flips"), list)
            and "profile" in data)


def compare(runs: dict[int, dict[str, str]]) -> list[dict]:
    """Claims whose verdict is not the same under every seed."""
    flips = []
    ids = sorted({cid for verdicts in runs.values() for cid in verdicts})
    for cid in ids:
        seen = {seed: verdicts.get(cid) for seed, verdicts in runs.items()}
        if len(set(seen.values())) > 1:
            flips.append({"claim": cid, "verdicts": {str(k): v for k, v in seen.items()}})
    return flips


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Compare claim verdicts across Hypothesis seeds.")
    ap.add_argument("--seeds", type=int, default=5,
                    help="number of seeds, at least 2 (0, 1, ..., n-1 offset by --base; default 5)")
    ap.add_argument("--base", type=int, default=20261123, help="the first seed (default 20261123)")
    ap.add_argument("--profile", default="dev", choices=["dev", "deep", "ci"],
                    help="Hypothesis profile (default dev); ci is derandomized, so it is refused")
    ap.add_argument("--out", type=Path, default=None,
                    help="default: stability.json in the project's report folder (claims_report_dir)")
    ap.add_argument("--workers", type=int, default=0, help="pytest-xdist workers per run (0: serial)")
    ap.add_argument("paths", nargs="*", default=["checks"], help="what pytest runs under each seed (default: checks)")
    args = ap.parse_args(argv)
    from hypothesis import settings

    from ..framework import profiles  # noqa: F401 - registers the profiles

    if settings.get_profile(args.profile).derandomize:
        ap.error(f"--profile {args.profile} is derandomized: every seed runs the same examples, so the runs "
                 "cannot disagree; use dev or deep")
    if args.seeds < MIN_SEEDS:  # no comparison: an empty or one-seed result would replace a real one
        print(f"attention-claims stability: --seeds {args.seeds}: at least {MIN_SEEDS} seeds are needed to compare "
              "verdicts across seeds; nothing run, nothing written", file=sys.stderr)
        return USAGE_ERROR
    if args.workers < 0:
        print(f"attention-claims stability: --workers {args.workers}: a number of pytest-xdist workers is 0 "
              "(serial) or more; nothing run, nothing written", file=sys.stderr)
        return USAGE_ERROR
    try:  # the project's ini file, read before any seed runs (pytest would refuse it in every run)
        claims_config.discover()
    except claims_config.ConfigFileError as exc:
        print(f"attention-claims stability: {exc}; nothing run, nothing written", file=sys.stderr)
        return USAGE_ERROR
    seeds = [args.base + i for i in range(args.seeds)]
    runs = {}
    for seed in seeds:
        try:
            runs[seed] = run_seed(seed, args.profile, args.paths, args.workers)
        except SeedRunError as exc:
            print(f"attention-claims stability: {exc}", file=sys.stderr)
            return USAGE_ERROR
        print(f"seed {seed}: " + ", ".join(f"{k}={v}" for k, v in sorted(runs[seed].items())), flush=True)
    if not any(runs.values()):
        print(f"attention-claims stability: the runs decided no claim (paths: {' '.join(args.paths)}): nothing to "
              "compare; nothing written", file=sys.stderr)
        return USAGE_ERROR
    flips = compare(runs)
    result = {
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "commit": git_commit(claims_config.discover().root),
        "profile": args.profile,
        "seeds": seeds,
        "paths": args.paths,
        "claims": len(next(iter(runs.values()))) if runs else 0,
        "verdicts": next(iter(runs.values())) if runs and not flips else None,
        "flips": flips,
    }
    paths = claims_config.discover()
    args.out = args.out or paths.report_dir / "stability.json"
    try:
        write_suite_file(args.out.parent, args.out.name, json.dumps(result, indent=1, ensure_ascii=False) + "\n",
                         adopt=is_stability_file, sources_dir=paths.sources_dir, claims_dir=paths.claims_dir)
    except (ReportFolderError, OSError) as exc:
        print(f"stability: {args.out} not written: {exc}", file=sys.stderr)
        return USAGE_ERROR
    print(f"{len(seeds)} seeds, {len(flips)} verdict flips -> {args.out}")
    return 1 if flips else 0


if __name__ == "__main__":
    sys.exit(main())
