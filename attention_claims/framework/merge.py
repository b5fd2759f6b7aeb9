"""Fold reports from several machines or shards into one (``attention-claims merge``).

A CPU job, a GPU runner and the shards of a run (``--claims-shard K/N``) each write their own
``claims.json``; :func:`merge_reports` folds them reading by reading, as ``coverage combine`` folds
data files:

- each reading takes its outcome from the reports that ran it (``ran_on`` set): a report that skipped
  a reading never overrides one that ran it;
- the same reading run on the same device by different runs with different outcomes is an error
  (:class:`MergeError`) naming the claim, the reading and both reports, never a silent pick; runs on
  different devices that disagree give ``failed`` (a CUDA failure is a caveat of the claim, whatever
  the CPU found), with the failing run's counterexample;
- a check that did not finish is never replaced by silence: a reading that errored in one run (outcome
  ``error``, or a claim error naming one of its checks) and ran in another takes the outcome of the run
  that ran, and its ``errors`` and evidence name each run where it errored; a reading whose only
  outcomes are errors stays ``error``, and so does its claim's verdict (never read as held);
- every verdict is recomputed by the rules of :mod:`attention_claims.framework.verdict` from the merged
  outcomes and compared with the record's ``expected`` (so the claim records must be at hand: the
  project's claims folder);
- a report that claims what it shows no run of is refused (:class:`MergeError`): a decided claim whose
  entry lists no readings, a reading ``held``, ``failed`` or ``error`` with no ``ran_on``;
- reports of another schema, another catalog (claim ids and readings) or another commit are refused
  unless ``allow_mixed``;
- the merged report's ``runs`` lists every run of every report (host, devices with their names, torch,
  CUDA and driver versions, commit, profile, date).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import replace
from pathlib import Path

from .records import Claim
from .report_model import ClaimEntry, Decided, Environment, RanOn, Report, Run, Trust

__all__ = ["MergeError", "merge_reports", "load_report"]


class MergeError(Exception):
    """Reports that cannot be folded into one (another schema, catalog or commit; two runs of one
    reading on one device that disagree); the message names the reports, claim and reading."""


def load_report(path: Path) -> dict:
    """The ``claims.json`` at ``path``, read and validated by
    :func:`attention_claims.framework.report_schema.read_report` (size and depth caps, the JSON Schema).

    Raises:
        MergeError: it cannot be read, breaks a cap or is not a valid schema-1 report (names the file
            and the JSON path of the first error).
    """
    from .report_schema import ReportInputError, read_report

    try:
        return read_report(path)
    except ReportInputError as exc:
        raise MergeError(str(exc)) from None


def _catalog_problem(data: dict, catalog: list[Claim]) -> str | None:
    want = {c.id: [r.name for r in c.readings] for c in catalog}
    have = {c["id"]: [r["name"] for r in c.get("readings", [])] for c in data["claims"]}
    missing = sorted(set(want) - set(have))
    extra = sorted(set(have) - set(want))
    changed = sorted(i for i in set(want) & set(have) if have[i] and have[i] != want[i])
    parts = [f"{label}: {', '.join(ids[:5])}{' ...' if len(ids) > 5 else ''}"
             for label, ids in (("claims missing", missing), ("claims not in the catalog", extra),
                                ("readings differ", changed)) if ids]
    return "; ".join(parts) or None


def _commits(data: dict) -> set[str | None]:
    return {r.get("commit") for r in data.get("runs") or [{}]}


def _decided_at(entry: dict) -> str:
    return (entry.get("decided") or {}).get("at") or ""


def _run_of(reading: dict) -> str:
    """`` (run of <date> on <host>, <device>)`` from a reading's ``ran_on``; ``""`` without one."""
    on = reading.get("ran_on")
    return f" (run of {on.get('date')} on {on.get('host')}, {on.get('device')})" if on else ""


def _reading_errors(claim_entry: dict, reading: dict) -> list[str]:
    """What did not finish of ``reading`` in one report: its own ``errors``, or, from a report that kept them
    on the claim only, the claim's errors that name one of its checks (``"<check>: <what happened>"``)."""
    own = [str(e) for e in reading.get("errors") or []]
    if own:
        return own
    checks = reading.get("checks") or []
    return [str(e) for e in claim_entry.get("errors") or [] if any(str(e).startswith(f"{ch}:") for ch in checks)]


def _merge_reading(claim: Claim, name: str, found: list[tuple[str, dict, list[str]]]):
    """The merged entry of reading ``name`` from ``[(report label, reading dict, its errors in that report)]``.

    A run where the reading errored (outcome ``error``, or errors naming its checks) never decides it and
    never disagrees with a run that ran it: the merged reading takes the outcome of the runs that ran it, and
    its ``errors`` (and evidence) name every run where it errored; with no run that ran it, it is ``error``.
    """
    from .report_model import ReadingEntry

    errored = [(label, r, errs) for label, r, errs in found if r["outcome"] == "error" or errs]
    notes = [f"errored in {label}{_run_of(r)}: {e}" for label, r, errs in errored
             for e in (errs or [r.get("evidence") or "a check did not finish"])]
    ran = [(label, r) for label, r, errs in found
           if r.get("ran_on") and r["outcome"] in ("held", "failed") and not errs]
    if not ran:
        if errored:
            entry = ReadingEntry.from_json(errored[0][1])
            entry.outcome, entry.kind, entry.errors = "error", None, notes
            return entry
        return ReadingEntry.from_json(found[0][1]) if found else None
    by_device: dict[str, list[tuple[str, dict]]] = {}
    for label, r in ran:
        by_device.setdefault(r["ran_on"]["device"], []).append((label, r))
    for device, group in by_device.items():
        for (la, ra), (lb, rb) in zip(group, group[1:], strict=False):
            if ra["outcome"] != rb["outcome"] and ra["ran_on"] != rb["ran_on"]:
                raise MergeError(f"claim '{claim.id}', reading '{name}' on {device}: {ra['outcome']} in {la} "
                                 f"(run of {ra['ran_on']['date']} on {ra['ran_on']['host']}) but {rb['outcome']} in "
                                 f"{lb} (run of {rb['ran_on']['date']} on {rb['ran_on']['host']})")
    failed = [r for _label, r in ran if r["outcome"] == "failed"]
    pick = next((r for r in failed if r.get("certified")), failed[0]) if failed else ran[0][1]
    entry = ReadingEntry.from_json(pick)
    distinct = {repr(sorted(r["ran_on"].items())): int(r.get("examples", 0)) for _label, r in ran}
    entry.examples = sum(distinct.values())  # the examples of every run that ran it, each run once
    if notes:  # shown with both: the outcome of the runs that ran it, and each run where it did not finish
        entry.errors = notes
        entry.evidence = "; ".join([entry.evidence, *notes]) if entry.evidence else "; ".join(notes)
    return entry


RAN = ("held", "failed", "error")
"""The outcomes of a reading whose checks ran (or started): each must say which run it came from (``ran_on``)."""


def _check_decided(label: str, data: dict, catalog: list[Claim]) -> None:
    """Refuse a report that claims to have decided what it shows no run of: a decided claim (``decided`` set)
    whose record has readings but whose entry lists none, or a reading ``held``, ``failed`` or ``error`` with
    no ``ran_on`` (a run's report records ``ran_on`` on every reading that ran,
    :func:`attention_claims.framework.report.reading_ran_on`; only a ``skipped`` reading has none).
    Such a report would merge into ``undecided`` claims that "agree" and a run that is "complete".

    Raises:
        MergeError: naming the report, the claim and the reading.
    """
    records = {c.id: c for c in catalog}
    for c in data["claims"]:
        if not c.get("decided"):
            continue
        record = records.get(c["id"])
        readings = c.get("readings") or []
        if not readings and record is not None and record.readings:
            raise MergeError(f"{label}: claim '{c['id']}' is marked decided (decided.at "
                             f"{_decided_at(c) or 'unset'}) but lists none of its "
                             f"{len(record.readings)} readings; not a report a run wrote")
        for r in readings:
            if r.get("outcome") in RAN and not r.get("ran_on"):
                raise MergeError(f"{label}: claim '{c['id']}', reading '{r.get('name')}': outcome "
                                 f"{r.get('outcome')!r} with no ran_on (which run gave it?); a run records "
                                 f"ran_on on every reading that ran")


def merge_reports(reports: list[tuple[str, dict]], catalog: list[Claim], *, allow_mixed: bool = False,
                  now: str | None = None) -> Report:
    """Fold ``reports`` (``[(label, claims.json dict)]``, the label naming each in messages) into one
    :class:`~attention_claims.framework.report_model.Report` over ``catalog`` (the claim records).

    Raises:
        MergeError: no report; a report of another catalog or commit (unless ``allow_mixed``); two runs
            of the same reading on the same device with different outcomes; a decided claim with no
            readings, or a reading that ran with no ``ran_on`` (:func:`_check_decided`).
    """
    if not reports:
        raise MergeError("no report to merge")
    if not allow_mixed:
        for label, data in reports:
            problem = _catalog_problem(data, catalog)
            if problem:
                raise MergeError(f"{label}: another catalog than the claims folder ({problem}); "
                                 "pass --allow-mixed to merge anyway")
        commits = {label: _commits(data) for label, data in reports}
        distinct = set().union(*commits.values())
        if len(distinct) > 1:
            listing = "; ".join(f"{label}: {', '.join(sorted(c or 'no commit recorded' for c in cs))}"
                                for label, cs in commits.items())
            raise MergeError(f"the reports come from different commits ({listing}); pass --allow-mixed to merge anyway")
    for label, data in reports:
        _check_decided(label, data, catalog)
    now = now or _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    from .report import decide_from_readings

    claims: list[ClaimEntry] = []
    complete = True
    for claim in catalog:
        entries = [(label, c) for label, data in reports for c in data["claims"] if c["id"] == claim.id]
        decided = [(label, c) for label, c in entries if c.get("decided")]
        if not decided:
            complete = False
            if entries:
                claims.append(ClaimEntry.from_json(entries[0][1]))
            continue
        latest = max(decided, key=lambda lc: _decided_at(lc[1]))[1]
        readings = []
        for reading in claim.readings:
            found = [(label, r, _reading_errors(c, r)) for label, c in decided for r in c.get("readings", [])
                     if r["name"] == reading.name]
            entry = _merge_reading(claim, reading.name, found)
            if entry is None:
                continue
            readings.append(entry)
        # what did not finish and no run made up for: the errors of readings still in error, and those of a
        # claim's errors that name none of its readings' checks (each with the report it came from)
        errors = [e for r in readings if r.outcome == "error" for e in r.errors]
        errors += sorted({f"in {label}: {e}" for label, c in decided for e in c.get("errors", [])
                          if not any(str(e).startswith(f"{ch}:") for r in c.get("readings", [])
                                     for ch in r.get("checks") or [])})
        d, reason = decide_from_readings(claim, readings, errors)  # the function a run's carried claims go through
        for r in readings:
            spec = claim.reading(r.name)
            r.kind = spec.kind if r.outcome == "failed" and spec is not None and not spec.as_stated else None
        base = ClaimEntry.from_json(latest)
        runs = sorted({_decided_at(c) for _label, c in decided})
        stated = next((r for r in readings if r.as_stated), None)
        profile = stated.failure_profile if d.verdict == "false" and stated is not None else None
        claims.append(replace(base, verdict=d.verdict, agrees=d.agrees, reason=reason,
                              readings=readings, errors=errors, selected=True, failure_profile=profile,
                              decided=Decided(at=runs[-1], profile=base.decided.profile if base.decided else "",
                                              run="merged")))
    runs: list[RanOn] = []
    for _label, data in reports:
        for r in data.get("runs") or []:
            ran = RanOn.from_json(r)
            if ran not in runs:
                runs.append(ran)
    first = reports[0][1]
    devices = []
    for _label, data in reports:
        for dev in data.get("environment", {}).get("devices", []):
            if dev not in devices:
                devices.append(dev)
    env_data = dict(first["environment"], devices=devices)
    env = Environment(**{k: env_data.get(k) for k in Environment.__dataclass_fields__})
    run_errors = sorted({e for _label, data in reports for e in (data.get("run") or {}).get("errors", [])})
    interrupted = any((data.get("run") or {}).get("interrupted") for _label, data in reports)
    unfinished = sum(len(c.errors) for c in claims if c.decided is not None and c.decided.run == "merged")
    run = Run(complete=complete and not interrupted and not unfinished, partial=not complete, interrupted=interrupted,
              exitstatus=None, errors=run_errors, unfinished=unfinished)
    trust_data = max((data for _label, data in reports), key=lambda d: d.get("generated", "")).get("trust") or {}
    trust = Trust(**{k: trust_data.get(k) for k in Trust.__dataclass_fields__})
    documents: dict[str, dict[str, str]] = {}
    for _label, data in reports:
        documents.update(data.get("documents") or {})
    return Report(generated=now, environment=env, run=run, trust=trust, claims=claims,
                  fresh=frozenset(c.id for c in claims if c.decided is not None), runs=runs, documents=documents)
