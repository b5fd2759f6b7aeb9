"""The report: built once from the plugin's state (:func:`build_report`, a typed
:class:`~attention_claims.framework.report_model.Report`), written as ``reports/claims.json``
(schema 1, fixed by ``docs/verdicts.md``; JSON Schema in ``docs/claims.schema.json``),
``claims.md`` and ``claims.html`` (:func:`write_reports`).

The JSON is the source of truth; the Markdown and HTML are rendered from it, so the three
never disagree. Everything written, set aside or deleted in the report folder goes through
:class:`~attention_claims.framework.report_folder.ReportFolder` (its manifest, its lock). The
verdict rules are all in :mod:`attention_claims.framework.verdict`.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import json
import os
import platform
import re
import shlex
import sys
from dataclasses import replace
from pathlib import Path

from .. import _files
from .._lazy import installed_version, loaded
from . import profiles
from .neutral import neutral
from .records import SOURCES_DIR, load_manifest, read_sums
from .report_folder import LOCK_TIMEOUT, REPORT_LOCK, ReportFolder, ReportFolderError  # noqa: F401 (public here)
from .report_model import (
    REPORT_FORMATS,
    VERDICT_ORDER,
    ClaimEntry,
    CounterexampleEntry,
    Decided,
    Environment,
    Figure,
    Place,
    Plot,
    RanOn,
    ReadingEntry,
    Report,
    Run,
    Trust,
    failure_profile_from_json,
)
from .trust import build_trust
from .verdict import ERROR, FAILED, HELD, SKIPPED, ReadingOutcome, decide, reading_outcome


def gpu_driver_present() -> bool:
    """Whether this machine has a GPU driver torch could use, asked without importing torch: an NVIDIA
    GPU listed in ``/proc/driver/nvidia/gpus`` or AMD's ROCm device ``/dev/kfd`` (Linux)."""
    nvidia = Path("/proc/driver/nvidia/gpus")
    try:
        return (nvidia.is_dir() and any(nvidia.iterdir())) or Path("/dev/kfd").exists()
    except OSError:
        return False


def gpu_driver_visible() -> bool:
    """Whether :func:`gpu_driver_present` can see a GPU driver here: on Linux (``/proc``, ``/dev``); off
    Linux it answers False whatever the machine has."""
    return sys.platform.startswith("linux")


def environment(config) -> Environment:
    """The versions, devices, Hypothesis profile and xdist workers of this process.

    ``devices`` are those this run could use: ``cpu``, and each CUDA device torch sees. torch is asked
    whenever it is loaded, on a machine with a GPU driver (:func:`gpu_driver_present`; a subset run
    carries CUDA readings decided earlier), and in an xdist controller (it runs no check itself, its
    workers may have used a GPU) where the driver cannot be seen without torch, i.e. off Linux.
    Otherwise (a Linux machine without a GPU driver, where CUDA cannot be available, or a run in one
    process whose checks never imported torch: the maths modules import torch on first use) it
    reports ``cpu`` without importing torch (an import of about 1.5 s, which an xdist controller would
    spend beside its workers' collection), and torch's version from its build-time ``version.py``
    (:func:`attention_claims._lazy.installed_version`)."""
    torch = loaded("torch")
    controller = config is not None and bool(getattr(config.option, "numprocesses", None))
    if torch is None and (gpu_driver_present() or (controller and not gpu_driver_visible())):
        import torch
    if torch is not None:
        torch_version = torch.__version__
        devices = ["cpu"]
        if torch.cuda.is_available():
            devices += [f"cuda:{i} ({torch.cuda.get_device_name(i)})" for i in range(torch.cuda.device_count())]
    else:
        try:
            torch_version = installed_version("torch", "version.py")
        except importlib.metadata.PackageNotFoundError:  # pragma: no cover - torch is a hard dependency
            torch_version = None
        devices = ["cpu"]
    import hypothesis
    import mpmath

    try:
        import flint

        flint_version = flint.__version__
    except ImportError:  # pragma: no cover
        flint_version = None
    xdist = getattr(config.option, "numprocesses", None) if config is not None else None
    return Environment(python=platform.python_version(), platform=platform.platform(), torch=torch_version,
                       hypothesis=hypothesis.__version__, mpmath=mpmath.__version__, python_flint=flint_version,
                       devices=devices, hypothesis_profile=profiles.current_profile(), xdist_workers=xdist)


def nvidia_driver_version() -> str | None:
    """The NVIDIA kernel driver's version (``/proc/driver/nvidia/version``, Linux), or None."""
    try:
        text = Path("/proc/driver/nvidia/version").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    m = re.search(r"Kernel Module(?: for \S+)?\s+([0-9][0-9.]*)", text)
    return m.group(1) if m else None


def git_commit(folder: Path) -> str | None:
    """The commit checked out in the git work tree that holds ``folder`` (``git rev-parse HEAD``), with
    ``+dirty`` appended when tracked files differ from it; None outside a work tree or without git."""
    import subprocess

    try:
        head = subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(folder), "diff", "--quiet", "HEAD", "--"], capture_output=True,
                               timeout=30).returncode == 1
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("+dirty" if dirty else "")


def run_info(env: Environment, root: Path | None, date: str) -> RanOn:
    """This run as a :class:`RanOn`: the host, every device it could use (``env.devices``), torch's
    and CUDA's versions (CUDA's only when torch is loaded), the NVIDIA driver, the git commit of the
    project folder ``root``, the Hypothesis profile and ``date``."""
    torch = loaded("torch")
    cuda = getattr(getattr(torch, "version", None), "cuda", None) if torch is not None else None
    return RanOn(host=platform.node(), device=", ".join(env.devices), torch=env.torch, cuda=cuda,
                 driver=nvidia_driver_version(), commit=git_commit(root) if root is not None else None,
                 profile=env.hypothesis_profile, date=date)


def reading_ran_on(run: RanOn, reading) -> RanOn:
    """``run`` narrowed to one reading: ``device`` is the GPU's name for a CUDA reading (the first CUDA
    device of the run), ``cpu`` otherwise."""
    device = "cpu"
    if getattr(reading, "device", None) == "cuda":
        names = [d.split(" (", 1)[1].rstrip(")") for d in run.device.split(", ") if d.startswith("cuda:") and " (" in d]
        device = names[0] if names else "cuda"
    return replace(run, device=device)


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _reproduce(nodeid: str, profile: str) -> str:
    return f"python -m pytest {shlex.quote(nodeid)} -n 0 --hypothesis-profile={profile}"


def _figures(checks, report_dir: Path | None) -> list[Figure]:
    """The images the checks attached (:meth:`attention_claims.framework.evidence.CheckLog.figure`), with paths
    relative to the report folder when they lie inside it, so ``claims.md`` can embed them."""
    out: list[Figure] = []
    for r in checks:
        for f in r.figures:
            path = Path(f["path"])
            if report_dir is not None:
                try:
                    path = path.relative_to(Path(report_dir).resolve())
                except ValueError:
                    pass
            entry = Figure(path=path.as_posix(), caption=f["caption"], check=r.nodeid)
            if entry not in out:
                out.append(entry)
    return out


def _plots(checks) -> list[Plot]:
    """The plot data the checks attached (:meth:`attention_claims.framework.evidence.CheckLog.plot`),
    each once, in the order of the checks."""
    out: list[Plot] = []
    for r in checks:
        for p in r.plots:
            entry = Plot(kind=p["kind"], data=p["data"], check=r.nodeid)
            if all((q.kind, q.data) != (entry.kind, entry.data) for q in out):
                out.append(entry)
    return out


def _evidence(checks) -> str:
    parts = []
    for r in checks:
        name = r.nodeid.split("::", 1)[-1]
        if r.outcome == "skipped":
            text = f"skipped: {r.skip_reason}" if r.skip_reason else "skipped"
        elif r.outcome == "error":
            text = f"error: {r.error}"
        elif r.outcome == "counterexample":
            c = r.counterexample
            text = (r.evidence + ". " if r.evidence else "") + "Counterexample: " + c.get("message", "")
            if c.get("boundary"):
                text += f" Boundary: {c['boundary']}"
        else:
            text = r.evidence or "passed"
        parts.append(text if len(checks) == 1 else f"[{name}] {text}")
    return " | ".join(parts) if parts else "no check collected in this run"


def _reading_entry(reading, results, profile, report_dir=None,
                   ran_on: RanOn | None = None) -> tuple[ReadingEntry, ReadingOutcome, list[str]]:
    # a check still pending (an interrupted run stopped it) is counted by _pending, not folded in
    checks = sorted((r for r in results if r.reading == reading.name and r.outcome != "pending"),
                    key=lambda r: r.nodeid)
    errors = [f"{r.nodeid}: {r.error}" for r in checks if r.outcome == "error"]
    outcome = reading_outcome([r.outcome for r in checks])  # a check that did not finish: "error"
    cxs = [r for r in checks if r.outcome == "counterexample"]
    cx = None
    if cxs:
        first = next((r for r in cxs if r.counterexample.get("certified")), cxs[0])
        cx = CounterexampleEntry.from_json(first.counterexample)
        cx.check, cx.reproduce = first.nodeid, _reproduce(first.nodeid, profile)
    certified = bool(cx and cx.certified)
    # the profile of a failed reading: its counterexample's check's first, else any check's
    profiled = sorted((r for r in checks if r.failure_profile), key=lambda r: r.outcome != "counterexample")
    profile = failure_profile_from_json(profiled[0].failure_profile) if profiled and outcome == "failed" else None
    entry = ReadingEntry(
        name=reading.name, as_stated=reading.as_stated, statement=reading.statement,
        condition={k: v for k, v in (("dtype", reading.dtype), ("device", reading.device),
                                     ("condition", reading.condition)) if v},
        outcome=outcome, checks=[r.nodeid for r in checks], examples=sum(r.examples for r in checks),
        evidence=_evidence(checks), counterexample=cx, certified=certified,
        certificate_strength=cx.certificate_strength if certified else None, figures=_figures(checks, report_dir),
        kind=reading.kind if outcome == "failed" and not reading.as_stated else None, plots=_plots(checks),
        ran_on=reading_ran_on(ran_on, reading) if ran_on is not None and outcome != "skipped" else None,
        failure_profile=profile, errors=errors)
    return entry, ReadingOutcome(outcome, certified), errors


def _reason(verdict: str, reason: str, readings: list[ReadingEntry]) -> str:
    """The verdict's reason, with the failing reading's boundary or message for false and caveat."""
    if verdict not in ("caveat", "false"):
        return reason
    failing = [r for r in readings if r.outcome == "failed" and (verdict == "caveat" or r.as_stated)]
    bits = [f"{r.name}: {(r.counterexample.boundary or r.counterexample.message) if r.counterexample else ''}"
            for r in failing[:1]]
    if verdict == "false" and failing and failing[0].certified:  # the headline says how it was certified
        reason += f" (certified: {failing[0].certificate_strength})"
    return reason + ". " + "; ".join(bits)


def _claim_profile(verdict: str, readings: list[ReadingEntry]) -> dict | None:
    """A false claim's failure profile: its failed as-stated reading's (None for another verdict, or
    when no failed as-stated reading has one)."""
    if verdict != "false":
        return None
    return next((r.failure_profile for r in readings if r.as_stated and r.outcome == "failed"
                 and r.failure_profile), None)


def decide_from_readings(claim, readings: list[ReadingEntry], errors: list[str]):
    """``(Decision, reason)`` of ``claim`` from readings as a report stores them (and the errors of the
    checks that did not finish): the one way a stored decision is recomputed, by ``attention-claims merge``
    and by a run that carries an earlier report's claims (:func:`load_base`). A reading counts as
    certified only when it says so and its counterexample does too (a hand edit of one flag certifies
    nothing)."""
    outcomes = {r.name: ReadingOutcome(r.outcome, bool(r.certified and r.counterexample is not None
                                                        and r.counterexample.certified))
                for r in readings}
    d = decide(claim, outcomes, errors=len(errors))
    return d, _reason(d.verdict, d.reason, readings)


def _place(s) -> Place:
    return Place(document=s.document, section=s.section, quote=s.quote)


def claim_entry(claim, results, *, profile: str, report_dir=None, selected: bool = True, pending: int = 0,
                interrupted: bool = False, in_progress: bool = False, decided: Decided | None = None,
                ran_on: RanOn | None = None) -> ClaimEntry:
    """One claim's entry from its checks' results (:class:`attention_claims.framework.plugin.CheckResult`);
    the verdict comes from :func:`attention_claims.framework.verdict.decide`; each reading that ran
    records ``ran_on`` (:func:`reading_ran_on`)."""
    readings, outcomes, errors = [], {}, []
    if selected and not in_progress:
        for reading in claim.readings:
            entry, ro, errs = _reading_entry(reading, results, profile, report_dir, ran_on)
            readings.append(entry)
            outcomes[reading.name] = ro
            errors.extend(errs)
    d = decide(claim, outcomes, errors=len(errors), pending=pending, interrupted=interrupted, selected=selected,
               in_progress=in_progress)
    decided_now = selected and not in_progress and not (interrupted and pending)
    return ClaimEntry(
        id=claim.id, title=claim.title, verdict=d.verdict, expected=claim.expected, agrees=d.agrees,
        reason=_reason(d.verdict, d.reason, readings), statement=claim.statement, formal=claim.formal,
        source=_place(claim.source), also_in=[_place(s) for s in claim.also_in],
        unchecked_reason=claim.unchecked_reason, notes=claim.notes,
        record=os.path.relpath(claim.path) if os.path.isabs(claim.path) else claim.path,
        readings=readings, errors=errors, selected=selected, decided=decided if decided_now else None,
        topics=list(claim.topics), failure_profile=_claim_profile(d.verdict, readings))


def _pending(state, cid: str, results) -> int:
    """How many of the claim's collected checks never reported a result."""
    done = {r.nodeid for r in results if r.outcome != "pending"}
    return len({n for c, _r, n in state.collected if c == cid and n not in done})


def _in_scope(state, claim) -> bool:
    """Whether this run was asked to decide ``claim``: a claim named by ``--claims-select`` /
    ``--claims-document``; in a run of every check, every claim; in another subset run (``-k``,
    explicit paths), a claim with at least one collected check."""
    if state.selected is not None:
        return claim.id in state.selected
    if not state.partial:
        return True
    return any(c == claim.id for c, _r, _n in state.collected)


def _covered(state, claim) -> bool:
    """Whether every reading of ``claim`` has a check in this run (a ``-k`` subset may miss some)."""
    have = {r for c, r, _n in state.collected if c == claim.id}
    return all(r.name in have for r in claim.readings)


def check_report_folder(report_dir: Path, *, sources_dir: Path | None = None, claims_dir: Path | None = None) -> None:
    """:meth:`ReportFolder.check <attention_claims.framework.report_folder.ReportFolder.check>` of
    ``report_dir`` in a session whose sources and claims folders are ``sources_dir`` and ``claims_dir``:
    run at configure time, so a refused or unwritable folder stops the run before any check runs.

    Raises:
        ReportFolderError: the folder is refused (a home, sources or claims folder; a file there the
            suite did not write) or cannot be created (names the folder and why).
    """
    ReportFolder(report_dir, sources_dir=sources_dir, claims_dir=claims_dir).check()


def report_lock(report_dir: Path, timeout: float = LOCK_TIMEOUT):
    """:meth:`ReportFolder.lock <attention_claims.framework.report_folder.ReportFolder.lock>` of
    ``report_dir``: held while a run reads the last report, merges its decisions and writes.

    Raises:
        ReportFolderError: the lock file cannot be created, or another run held it for ``timeout`` s.
    """
    return ReportFolder(report_dir).lock(timeout)


def remove_stale_temporaries(report_dir: Path) -> list[Path]:
    """:meth:`ReportFolder.remove_stale_temporaries
    <attention_claims.framework.report_folder.ReportFolder.remove_stale_temporaries>` of ``report_dir``:
    the temporaries of the writer's own files that a killed run left. Returns the files removed."""
    return ReportFolder(report_dir).remove_stale_temporaries()


def _check_carried_fields(claims) -> None:
    """Raise ValueError naming the JSON path when an earlier report's claims hold what a carried decision
    cannot be: a claim twice, a verdict or a reading outcome that is none of the report's (a hand edit:
    ``"verdict": "maybe"`` once stopped every later run with an INTERNALERROR while the report was written).
    Cheap, unlike the JSON Schema that ``attention-claims merge`` applies (about 0.15 s for the suite's
    report on every run)."""
    seen: set[str] = set()
    for i, c in enumerate(claims):
        if c["id"] in seen:
            raise ValueError(f"$.claims[{i}].id: claim {c['id']!r} appears twice")
        seen.add(c["id"])
        if c["verdict"] not in VERDICT_ORDER:
            raise ValueError(f"$.claims[{i}].verdict: {c['verdict']!r} is not one of {', '.join(VERDICT_ORDER)}")
        for j, r in enumerate(c["readings"]):
            if r["outcome"] not in (HELD, FAILED, SKIPPED, ERROR):
                raise ValueError(f"$.claims[{i}].readings[{j}].outcome: {r['outcome']!r} is not one of "
                                 f"{HELD}, {FAILED}, {SKIPPED}, {ERROR}")


class UntrustedReport(ValueError):
    """An earlier report whose verdicts or counts disagree with its own readings (edited by hand, or
    written by another version of the rules): never carried, set aside."""


def _recomputed(claim, entry: ClaimEntry) -> ClaimEntry:
    """``entry`` (a claim's decision read from an earlier report) with its verdict, reason and ``agrees``
    recomputed from its stored readings by :func:`decide_from_readings`, the function ``merge`` uses.

    Raises:
        UntrustedReport: the stored verdict is not the one its readings give.
    """
    d, reason = decide_from_readings(claim, entry.readings, entry.errors)
    if d.verdict != entry.verdict:
        raise UntrustedReport(f"claim '{entry.id}': its verdict is {entry.verdict!r} but its readings give "
                              f"{d.verdict!r}")
    return replace(entry, reason=reason, agrees=d.agrees)


def _check_counts(data: dict) -> None:
    """Raise :class:`UntrustedReport` when the report's ``counts`` are not those of its claims' verdicts."""
    if "counts" not in data:
        return
    from .report_model import Counts, plain

    want = plain(Counts.of([ClaimEntry.from_json(c) for c in data["claims"]]))
    have = data["counts"]
    for key in ("total", "by_document", "by_source_document"):
        if key in have and have[key] != want[key]:
            raise UntrustedReport(f"its counts ({key}) are not those of its claims' verdicts: {have[key]} "
                                  f"stated, {want[key]} counted")


def load_base(report_dir: Path | None, catalog, *,
              previous_run: bool = False) -> tuple[dict[str, ClaimEntry], str | None, str | None]:
    """The last decision of each claim in the report already in ``report_dir``, that report's
    ``generated`` time (for an in-progress report, that of the report whose decisions it carries), and a notice for the person running (None when all is well): what a run that
    decides a subset keeps for every other claim.

    A claim counts when its entry has a ``decided`` stamp (a report written before the stamp existed
    counts as decided at its ``generated`` time when it was a complete run); entries of claims no
    longer in the catalog, or whose readings differ from the record's, are dropped. A missing report
    gives ``({}, None, None)``. A report that cannot be read or is not a schema-1 report (truncated,
    not JSON, edited by hand), or whose verdicts or counts are not those its readings give (each carried
    claim is recomputed by :func:`decide_from_readings`, as ``attention-claims merge`` does), is never
    silently replaced nor carried: it is renamed to ``claims.json.corrupt-<date>`` and the notice names it,
    says why and that this run starts from no earlier report. A reading whose name or ``as_stated`` flag
    is no longer the record's drops that claim's earlier decision.

    With ``previous_run`` (the read at a run's start), a report still marked in progress gives a notice
    too: the run that wrote it never finished (killed, crashed, or a check ended the process with
    ``os._exit``, which no hook sees in a serial run), unless it is still running beside this one.
    """
    if report_dir is None:
        return {}, None, None
    path = Path(report_dir) / "claims.json"
    try:
        data = _files.read_json(path, 256 << 20)  # a FIFO or a too-deep nesting: refused, never waited on
        if not isinstance(data, dict) or data.get("schema") != 1:
            raise ValueError(f"not a schema-1 report (schema {data.get('schema') if isinstance(data, dict) else None!r})")
        _check_carried_fields(data["claims"])
        legacy = None
        if data["run"].get("complete") and all("decided" not in c for c in data["claims"]):
            legacy = {"at": data["generated"], "profile": data["environment"]["hypothesis_profile"], "run": "full"}
        readings = {c.id: [(r.name, r.as_stated) for r in c.readings] for c in catalog}
        by_id = {c.id: c for c in catalog}
        base = {}
        for c in data["claims"]:
            if legacy is not None:
                c = dict(c, decided=legacy)
            if c.get("decided") and c["id"] in readings and [(r["name"], bool(r["as_stated"]))
                                                              for r in c["readings"]] == readings[c["id"]]:
                base[c["id"]] = _recomputed(by_id[c["id"]], ClaimEntry.from_json(neutral(c)))
        _check_counts(data)
        generated = data.get("generated")
        notice = None
        if data["run"].get("in_progress"):  # a run's in-progress report carries the decisions of the one before
            if previous_run:
                notice = (f"the previous run's report {path} (started {generated}) was left in progress: that run "
                          "did not finish (killed, crashed, or a check ended the process, e.g. with os._exit), "
                          "unless it is still running beside this one; the claims it was deciding were not decided "
                          "by it")
            generated = data["run"].get("updated") or generated
        return base, generated, notice
    except FileNotFoundError:
        return {}, None, None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        why = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        if isinstance(exc, UntrustedReport):
            why = f"its verdicts are not those of its readings: {exc}"
        try:
            kept = ReportFolder(report_dir).set_aside("claims.json")
        except OSError as move:
            return {}, None, (f"the earlier report {path} cannot be read or trusted ({why}) nor set aside ({move.strerror}); "
                              "this run starts from no earlier report")
        verb = "is not trusted" if isinstance(exc, UntrustedReport) else "cannot be read"
        return {}, None, (f"the earlier report {path} {verb} ({why}); kept aside as {kept} (set aside, not carried); "
                          "this run starts from no earlier report")


def carried(claim, previous: ClaimEntry, *, selected: bool) -> ClaimEntry:
    """``previous`` (a claim's last decision, from an earlier report) kept in this run's report: its
    readings and ``decided`` stamp unchanged, its verdict, reason and ``agrees`` recomputed from those
    readings against the record now (:func:`decide_from_readings`; a verdict read from a report is never
    trusted), and the record's own fields refreshed."""
    d, reason = decide_from_readings(claim, previous.readings, previous.errors)
    return replace(previous, verdict=d.verdict, reason=reason, title=claim.title, expected=claim.expected,
                   agrees=d.agrees, statement=claim.statement,
                   formal=claim.formal, source=_place(claim.source), also_in=[_place(s) for s in claim.also_in],
                   unchecked_reason=claim.unchecked_reason, notes=claim.notes,
                   record=os.path.relpath(claim.path) if os.path.isabs(claim.path) else claim.path,
                   selected=selected, topics=list(claim.topics))


def build_report(state, config, exitstatus: int | None, *, in_progress: bool = False) -> Report:
    """The report of this run, from the plugin's state (:class:`attention_claims.framework.plugin.State`):
    the only place where one is built. ``exitstatus`` is pytest's (``None`` while in progress).

    Each claim this run was asked to decide, and ran every reading of, gets this run's decision;
    every other claim keeps its last decision from ``state.base`` (the report that was there when
    the run started; see :func:`load_base`), or, when it has none, this run's (``undecided``, "not
    selected", when the run did not touch it). ``Report.fresh`` names the claims decided now.
    """
    profile = profiles.current_profile()
    # INTERRUPTED, INTERNAL_ERROR, or stopped early (-x, --maxfail: the checks after the stop never ran)
    interrupted = in_progress or exitstatus in (2, 3) or bool(getattr(state, "stopped", False))
    by_claim: dict[str, list] = {}
    for r in state.results.values():
        by_claim.setdefault(r.claim, []).append(r)
    now = _now()
    partial = state.partial or state.selected is not None
    decided = Decided(at=now, profile=profile, run="partial" if partial else "full")
    env = environment(config)
    this_run = run_info(env, getattr(state, "project_root", None), now)
    claims, fresh, kept = [], set(), False
    for c in state.catalog:
        results = by_claim.get(c.id, [])
        selected = _in_scope(state, c)
        pending = _pending(state, c.id, results) if interrupted else 0
        previous = state.base.get(c.id)
        # a check of the claim that did not finish in this run is shown, never hidden behind a last decision
        errored = selected and not in_progress and any(r.outcome == "error" for r in results)
        if previous is not None and not errored and (in_progress or not selected or pending or not _covered(state, c)):
            claims.append(carried(c, previous, selected=selected))
            kept = True
            continue
        entry = claim_entry(c, results, profile=profile, report_dir=state.report_dir, selected=selected,
                            pending=pending, interrupted=interrupted, in_progress=in_progress, decided=decided,
                            ran_on=this_run)
        claims.append(entry)
        if selected and not in_progress:
            fresh.add(c.id)
    errors = list(state.errors)
    if in_progress:
        errors.append("the run has not finished (in progress, killed or crashed)")
    # checks that did not finish: those of the claims decided now, and those no claim could be found for
    unfinished = sum(len(c.errors) for c in claims if c.id in fresh) + len(getattr(state, "unfinished", ()))
    run = Run(complete=not interrupted and not partial and not unfinished and not errors, partial=partial,
              interrupted=interrupted,
              exitstatus=None if in_progress else exitstatus, errors=errors, in_progress=in_progress,
              updated=state.base_generated if kept else None, unfinished=unfinished,
              notices=list(getattr(state, "notices", ())))
    trust = Trust(**build_trust(state.report_dir, state.planted_counts))
    cited = {d for c in claims for d in [c.source.document, *(p.document for p in c.also_in)]}
    manifest = load_manifest(state.sources_dir) if getattr(state, "sources_dir", None) else {}
    if manifest:  # every document the report annotates (all SHA256SUMS lists) is shown with its title
        cited |= set(read_sums(state.sources_dir))
    return Report(generated=now, environment=env, run=run, trust=trust, claims=claims, fresh=frozenset(fresh),
                  runs=[this_run], documents={d: manifest[d] for d in sorted(manifest) if d in cited})


def write_reports(report: Report, report_dir: Path, *, sources_dir: Path = SOURCES_DIR,
                  formats: tuple[str, ...] = REPORT_FORMATS) -> list[str]:
    """Write ``claims.json``, ``claims.md`` and ``claims.html`` atomically, each from
    ``report.to_json()``: the HTML by :func:`~attention_claims.framework.render.render_html` (the source
    documents in ``sources_dir`` annotated with the sentence classification of ``sources_dir/sentences``,
    figures under ``report_dir`` inlined), the Markdown by
    :func:`~attention_claims.framework.render.render_markdown` with its SVG files. Only the ``formats``
    named (of :data:`~attention_claims.framework.report_model.REPORT_FORMATS`) are written; the files of
    the others are left as they are.

    Every file goes through :class:`~attention_claims.framework.report_folder.ReportFolder`, which
    replaces or deletes only files its manifest says it wrote.

    Returns:
        One warning line per quote the views cannot place in its document
        (:func:`~attention_claims.framework.quotes.unplaced`; ``claims.md`` lists them too), and per
        ``documents.toml`` article part not in its page (:func:`~.render.webpage.usable_parts`): the
        caller shows them in the terminal.

    Raises:
        ReportFolderError: the folder is not the suite's, or a file to write there is someone else's.
        OSError: a file cannot be written.
        SentenceDataError: a sentence classification file is malformed (names the file and entry).
    """
    return write_report_data(report.to_json(), report_dir, sources_dir=sources_dir, formats=formats)


def write_report_data(data: dict, report_dir: Path, *, sources_dir: Path = SOURCES_DIR,
                      formats: tuple[str, ...] = REPORT_FORMATS) -> list[str]:
    """:func:`write_reports` from the ``claims.json`` dict ``data`` (a report built elsewhere: merged
    from several machines). Returns and raises as :func:`write_reports` does."""
    from . import quotes
    from .render import load_sources, render_html, render_markdown
    from .sentences import classification_maps, load_all

    folder = ReportFolder(report_dir, sources_dir=sources_dir)
    files: dict[str, str] = {}
    sources = load_sources(sources_dir) if ("md" in formats or "html" in formats) and Path(sources_dir).is_dir() else {}
    unplaced = quotes.unplaced(data.get("claims", []), sources)
    articles: dict[str, list[list[str]]] = {}
    if "html" in formats:
        from .render.webpage import usable_parts

        articles, problems = usable_parts(sources_dir, sources)
        unplaced += problems
    if "json" in formats:
        files["claims.json"] = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if "md" in formats:
        files["claims.md"] = render_markdown(data, unplaced=unplaced, sources=sources)
    if "html" in formats:
        kinds, claim_excerpts = {}, {}
        for doc, entries in load_all(Path(sources_dir) / "sentences").items():
            kinds[doc], claim_excerpts[doc] = classification_maps(entries)
        files["claims.html"] = render_html(data, sources=sources, classification=kinds,
                                           claim_excerpts=claim_excerpts, report_dir=report_dir, articles=articles)
    if "md" in formats:
        from .render.model import FIGURES_DIR

        files.update(plot_svgs(data))
        folder.write(files, replace_prefix=f"{FIGURES_DIR}/", replace_suffix=".svg")
    else:
        folder.write(files)
    return unplaced


def plot_svgs(data: dict) -> dict[str, str]:
    """Every plot of the report (``data``, the ``claims.json`` dict) as SVG text, by the path
    :func:`~attention_claims.framework.render.model.plot_files` gives it (``figures/<claim id>-<k>.svg``,
    relative to the report folder), in claim order, for ``claims.md`` to link."""
    from .render.model import plot_files
    from .render.plots import render_plot, standalone_svg

    return {rel: standalone_svg(render_plot(spec))
            for claim in data.get("claims", []) for _name, spec, rel in plot_files(claim)}


def write_plot_files(data: dict, report_dir: Path) -> list[Path]:
    """Write every plot of the report (:func:`plot_svgs`) as an SVG file under ``report_dir``, through
    :class:`~attention_claims.framework.report_folder.ReportFolder` (atomically, recorded in its manifest),
    and delete the plot files of an earlier report that this one no longer draws (only those the
    manifest lists: a user's ``figures/logo.svg`` is never touched).

    Returns:
        The files written, in claim order.

    Raises:
        ReportFolderError: a file to write is there and the suite did not write it.
        OSError: a file cannot be written.
    """
    from .render.model import FIGURES_DIR

    return ReportFolder(report_dir).write(plot_svgs(data), replace_prefix=f"{FIGURES_DIR}/", replace_suffix=".svg")


def write_in_progress(state, config) -> None:
    """Replace any previous report by one that says the run has not finished.

    If the process dies before ``pytest_sessionfinish`` (a crash, a kill), what is left
    says which claims were not decided instead of a stale report that looks complete.

    Raises:
        OSError: a file cannot be written.
    """
    write_reports(build_report(state, config, None, in_progress=True), state.report_dir, sources_dir=state.sources_dir,
                  formats=state.report_formats)
