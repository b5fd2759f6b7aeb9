"""The report: built once from the plugin's state (:func:`build_report`, a typed
:class:`~attention_claims.framework.report_model.Report`), written as ``reports/claims.json``
(schema 1, fixed by ``docs/verdicts.md``; JSON Schema in ``docs/claims.schema.json``),
``claims.md`` and ``claims.html`` (:func:`write_reports`).

The JSON is the source of truth; the Markdown and HTML are rendered from it, so the three
never disagree. The verdict rules are all in :mod:`attention_claims.framework.verdict`.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import os
import platform
import shlex
from dataclasses import replace
from pathlib import Path

from . import profiles
from .report_model import (
    VERDICT_ORDER,
    ClaimEntry,
    CounterexampleEntry,
    Decided,
    Environment,
    Figure,
    Place,
    ReadingEntry,
    Report,
    Run,
    Trust,
    document_key,
)
from .trust import build_trust, trust_lines
from .verdict import ReadingOutcome, decide, reading_outcome

DOCUMENT_TITLES = {
    "000_ab5bd5ab0e7f4d86.txt": "000 — study note: the low-rank problem of bidirectional attention",
    "001_7b7f411bbe8a3bef.txt": "001 — PaperWeekly repost of kexue.fm/archives/9889",
    "002_3cda90c9fbb885ae.txt": "002 — kexue.fm/archives/9529 notes and interview answer (Decoder-only)",
    "003_a0ad15dda516ed1d.txt": "003 — textbook §11.3, the low-rank structure of attention matrices",
    "004_5f57af8801c437dc.txt": "004 — kexue.fm/archives/9889, can attention really concentrate?",
}


def environment(config) -> Environment:
    """The versions, devices, Hypothesis profile and xdist workers of this process."""
    try:
        import torch

        torch_version = torch.__version__
        devices = ["cpu"]
        if torch.cuda.is_available():
            devices += [f"cuda:{i} ({torch.cuda.get_device_name(i)})" for i in range(torch.cuda.device_count())]
    except ImportError:  # pragma: no cover - torch is a hard dependency
        torch_version, devices = None, ["cpu"]
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


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _reproduce(nodeid: str, profile: str) -> str:
    return f"python -m pytest {shlex.quote(nodeid)} -p no:xdist --hypothesis-profile={profile}"


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


def _reading_entry(reading, results, profile, report_dir=None) -> tuple[ReadingEntry, ReadingOutcome, list[str]]:
    checks = sorted((r for r in results if r.reading == reading.name), key=lambda r: r.nodeid)
    errors = [f"{r.nodeid}: {r.error}" for r in checks if r.outcome == "error"]
    outcome = reading_outcome([r.outcome for r in checks if r.outcome != "error"])
    cxs = [r for r in checks if r.outcome == "counterexample"]
    cx = None
    if cxs:
        first = next((r for r in cxs if r.counterexample.get("certified")), cxs[0])
        cx = CounterexampleEntry.from_json(first.counterexample)
        cx.check, cx.reproduce = first.nodeid, _reproduce(first.nodeid, profile)
    certified = bool(cx and cx.certified)
    entry = ReadingEntry(
        name=reading.name, as_stated=reading.as_stated, statement=reading.statement,
        condition={k: v for k, v in (("dtype", reading.dtype), ("device", reading.device),
                                     ("condition", reading.condition)) if v},
        outcome=outcome, checks=[r.nodeid for r in checks], examples=sum(r.examples for r in checks),
        evidence=_evidence(checks), counterexample=cx, certified=certified, figures=_figures(checks, report_dir))
    return entry, ReadingOutcome(outcome, certified), errors


def _reason(verdict: str, reason: str, readings: list[ReadingEntry]) -> str:
    """The verdict's reason, with the failing reading's boundary or message for false and caveat."""
    if verdict not in ("caveat", "false"):
        return reason
    failing = [r for r in readings if r.outcome == "failed" and (verdict == "caveat" or r.as_stated)]
    bits = [f"{r.name}: {(r.counterexample.boundary or r.counterexample.message) if r.counterexample else ''}"
            for r in failing[:1]]
    return reason + ". " + "; ".join(bits)


def _place(s) -> Place:
    return Place(document=s.document, section=s.section, quote=s.quote)


def claim_entry(claim, results, *, profile: str, report_dir=None, selected: bool = True, pending: int = 0,
                interrupted: bool = False, in_progress: bool = False, decided: Decided | None = None) -> ClaimEntry:
    """One claim's entry from its checks' results (:class:`attention_claims.framework.plugin.CheckResult`);
    the verdict comes from :func:`attention_claims.framework.verdict.decide`."""
    readings, outcomes, errors = [], {}, []
    if selected and not in_progress:
        for reading in claim.readings:
            entry, ro, errs = _reading_entry(reading, results, profile, report_dir)
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
        readings=readings, errors=errors, selected=selected, decided=decided if decided_now else None)


def _pending(state, cid: str, results) -> int:
    """How many of the claim's collected checks never reported a result."""
    done = {r.nodeid for r in results if r.outcome != "skipped" or r.skip_reason}
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


def load_base(report_dir: Path | None, catalog) -> tuple[dict[str, ClaimEntry], str | None]:
    """The last decision of each claim in the report already in ``report_dir``, and that report's
    ``generated`` time: what a run that decides a subset keeps for every other claim.

    A claim counts when its entry has a ``decided`` stamp (a report written before the stamp existed
    counts as decided at its ``generated`` time when it was a complete run); entries of claims no
    longer in the catalog, or whose readings differ from the record's, are dropped. A missing,
    unreadable or malformed report gives ``({}, None)``: nothing to keep.
    """
    if report_dir is None:
        return {}, None
    try:
        data = json.loads((Path(report_dir) / "claims.json").read_text(encoding="utf-8"))
        legacy = None
        if data["run"].get("complete") and all("decided" not in c for c in data["claims"]):
            legacy = {"at": data["generated"], "profile": data["environment"]["hypothesis_profile"], "run": "full"}
        readings = {c.id: [r.name for r in c.readings] for c in catalog}
        base = {}
        for c in data["claims"]:
            if legacy is not None:
                c = dict(c, decided=legacy)
            if c.get("decided") and c["id"] in readings and [r["name"] for r in c["readings"]] == readings[c["id"]]:
                base[c["id"]] = ClaimEntry.from_json(c)
        return base, data.get("generated")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}, None


def carried(claim, previous: ClaimEntry, *, selected: bool) -> ClaimEntry:
    """``previous`` (a claim's last decision, from an earlier report) kept in this run's report: its
    verdict, readings and ``decided`` stamp unchanged, the record's own fields refreshed, and
    ``agrees`` recomputed against the record's ``expected`` now."""
    agrees = previous.agrees
    if not previous.errors and previous.verdict != "undecided":
        outcomes = {r.name: ReadingOutcome(r.outcome, r.certified) for r in previous.readings}
        agrees = decide(claim, outcomes).agrees
    return replace(previous, title=claim.title, expected=claim.expected, agrees=agrees, statement=claim.statement,
                   formal=claim.formal, source=_place(claim.source), also_in=[_place(s) for s in claim.also_in],
                   unchecked_reason=claim.unchecked_reason, notes=claim.notes,
                   record=os.path.relpath(claim.path) if os.path.isabs(claim.path) else claim.path,
                   selected=selected)


def build_report(state, config, exitstatus: int | None, *, in_progress: bool = False) -> Report:
    """The report of this run, from the plugin's state (:class:`attention_claims.framework.plugin.State`):
    the only place where one is built. ``exitstatus`` is pytest's (``None`` while in progress).

    Each claim this run was asked to decide, and ran every reading of, gets this run's decision;
    every other claim keeps its last decision from ``state.base`` (the report that was there when
    the run started; see :func:`load_base`), or, when it has none, this run's (``undecided``, "not
    selected", when the run did not touch it). ``Report.fresh`` names the claims decided now.
    """
    profile = profiles.current_profile()
    interrupted = in_progress or exitstatus in (2, 3)  # INTERRUPTED, INTERNAL_ERROR
    by_claim: dict[str, list] = {}
    for r in state.results.values():
        by_claim.setdefault(r.claim, []).append(r)
    now = _now()
    partial = state.partial or state.selected is not None
    decided = Decided(at=now, profile=profile, run="partial" if partial else "full")
    claims, fresh, kept = [], set(), False
    for c in state.catalog:
        results = by_claim.get(c.id, [])
        selected = _in_scope(state, c)
        pending = _pending(state, c.id, results) if interrupted else 0
        previous = state.base.get(c.id)
        if previous is not None and (in_progress or not selected or pending or not _covered(state, c)):
            claims.append(carried(c, previous, selected=selected))
            kept = True
            continue
        entry = claim_entry(c, results, profile=profile, report_dir=state.report_dir, selected=selected,
                            pending=pending, interrupted=interrupted, in_progress=in_progress, decided=decided)
        claims.append(entry)
        if selected and not in_progress:
            fresh.add(c.id)
    errors = list(state.errors)
    if in_progress:
        errors.append("the run has not finished (in progress, killed or crashed)")
    run = Run(complete=not interrupted and not partial, partial=partial, interrupted=interrupted,
              exitstatus=None if in_progress else exitstatus, errors=errors, in_progress=in_progress,
              updated=state.base_generated if kept else None)
    trust = Trust(**build_trust(state.report_dir, state.planted_counts))
    return Report(generated=now, environment=environment(config), run=run, trust=trust, claims=claims,
                  fresh=frozenset(fresh))


def _atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and ``os.replace``, so a
    reader never sees half a file; the file gets the mode a plain ``open`` would give (0666 less the
    umask: 0644 under the usual 022), not ``mkstemp``'s 0600.

    Raises:
        OSError: the folder cannot be created or written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_reports(report: Report, report_dir: Path) -> None:
    """Write ``claims.json``, ``claims.md`` and ``claims.html`` atomically, each from ``report.to_json()``.

    Raises:
        OSError: a file cannot be written.
    """
    data = report.to_json()
    _atomic_write(report_dir / "claims.json", json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    _atomic_write(report_dir / "claims.md", render_markdown(data))
    _atomic_write(report_dir / "claims.html", render_html(data))


def write_in_progress(state, config) -> None:
    """Replace any previous report by one that says the run has not finished.

    If the process dies before ``pytest_sessionfinish`` (a crash, a kill), what is left
    says which claims were not decided instead of a stale report that looks complete.

    Raises:
        OSError: a file cannot be written.
    """
    write_reports(build_report(state, config, None, in_progress=True), state.report_dir)


# ---------------------------------------------------------------------------- markdown
def _md_escape_cell(text: str) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def _one_line(text: str, limit: int = 160) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _grouped(report: dict) -> list[tuple[str, list[dict], list[tuple[dict, list[dict]]]]]:
    """``(document, claims whose source it is, [(claim, its also_in places in it)] stated there
    too)`` in document order."""
    own: dict[str, list[dict]] = {}
    also: dict[str, list[tuple[dict, list[dict]]]] = {}
    for c in report["claims"]:
        own.setdefault(c["source"]["document"], []).append(c)
        places: dict[str, list[dict]] = {}
        for place in c.get("also_in", []):
            places.setdefault(place["document"], []).append(place)
        for doc, ps in places.items():
            also.setdefault(doc, []).append((c, ps))
    docs = sorted(set(own) | set(also), key=document_key)
    return [(d, own.get(d, []), also.get(d, [])) for d in docs]


def _run_banner(report: dict) -> str:
    run = report["run"]
    if run.get("complete"):
        return "Run complete."
    if run.get("exitstatus") is None:
        return "**This run has not finished (in progress, killed or crashed): no claim below is decided.**"
    if run.get("interrupted"):
        return "**This run was interrupted: claims whose checks did not all run are not decided.**"
    return "**Partial run: only some checks were selected; readings without a check in this run are skipped.**"


def render_markdown(report: dict) -> str:
    """The human report: counts per document, a summary table, then each claim in full."""
    env = report["environment"]
    out = ["# attention-claims report", ""]
    out.append(
        f"Generated {report['generated']} · Python {env.get('python')} · torch {env.get('torch')} · "
        f"devices: {', '.join(env.get('devices', []))} · Hypothesis profile `{env.get('hypothesis_profile')}`"
    )
    out += ["", _run_banner(report), ""]
    for err in report["run"].get("errors", []):
        out.append(f"- run error: {err}")
    out += ["## Verdicts per document", "", "| document | " + " | ".join(VERDICT_ORDER) + " |",
            "|---|" + "---|" * len(VERDICT_ORDER)]
    for doc, counts in report["counts"].get("by_document", {}).items():
        name = DOCUMENT_TITLES.get(doc, doc)
        out.append(f"| {_md_escape_cell(name)} | " + " | ".join(str(counts[v]) for v in VERDICT_ORDER) + " |")
    total = report["counts"].get("total", {})
    if total:
        out.append("| **all** | " + " | ".join(f"**{total[v]}**" for v in VERDICT_ORDER) + " |")
        out += ["", "A claim stated in two documents (the repost 001 restates 004) is counted in the row of each; "
                "the **all** row counts every claim once."]
    if report.get("trust"):
        out += ["", "## Trust", ""] + [f"- {line}" for line in trust_lines(report["trust"])]
    out += ["", "## Summary", "", "| claim | verdict | reason |", "|---|---|---|"]
    for c in report["claims"]:
        flag = "" if c.get("agrees", True) else f" (expected {c['expected']})"
        out.append(
            f"| [{c['id']}](#{c['id']}) | **{c['verdict']}**{flag} | {_md_escape_cell(_one_line(c['reason']))} |"
        )
    for doc, claims, also in _grouped(report):
        out += ["", f"## {DOCUMENT_TITLES.get(doc, doc)}", ""]
        for c in claims:
            out += _md_claim(c)
        if also:
            out += [f"### Also stated in this document ({len(also)}), decided in the section of another", "",
                    "| claim | verdict | where, and its words here |", "|---|---|---|"]
            for c, places in also:
                where = " / ".join(f"{place['section']}: {_one_line(place['quote'], 240)}" for place in places)
                out.append(f"| [{c['id']}](#{c['id']}) | **{c['verdict']}** | {_md_escape_cell(where)} |")
            out.append("")
    return "\n".join(out) + "\n"


def _md_claim(c: dict) -> list[str]:
    out = [f'<a id="{c["id"]}"></a>', f"### {c['id']}: {c['title']}", ""]
    out.append(f"**Verdict: {c['verdict']}** (expected: {c['expected']}). {c['reason']}")
    src = c["source"]
    out += ["", f"Source: `{src['document']}`, {src['section']}", ""]
    out += ["> " + line for line in src["quote"].splitlines()]
    for place in c.get("also_in", []):
        out += ["", f"Also stated in `{place['document']}`, {place['section']}:", ""]
        out += ["> " + line for line in place["quote"].splitlines()]
    out += ["", f"Statement: {c['statement']}"]
    if c.get("formal"):
        out += ["", f"Formal: ${c['formal']}$"]
    if c.get("unchecked_reason"):
        out += ["", f"Not checkable by computation: {c['unchecked_reason']}"]
    if c.get("notes"):
        out += ["", f"Notes: {c['notes']}"]
    for r in c["readings"]:
        tag = " (as stated)" if r["as_stated"] else ""
        out += ["", f"- **{r['name']}**{tag}: **{r['outcome']}** — {r['statement']}"]
        if r["evidence"]:
            out.append(f"  - evidence ({r['examples']} examples): {r['evidence']}")
        for fig in r.get("figures", []):
            out.append(f"  - figure: {fig['caption']}")
            out += ["", f"    ![{fig['caption']}]({fig['path']})", ""]
        cx = r.get("counterexample")
        if cx:
            cert = "certified" if cx.get("certified") else "NOT certified"
            out.append(f"  - counterexample ({cert}): {cx.get('message', '')}")
            if cx.get("example"):
                out.append(f"    - example: `{json.dumps(cx['example'], ensure_ascii=False)[:600]}`")
            if cx.get("certificate"):
                out.append(f"    - certificate: {cx['certificate']}")
            if cx.get("boundary"):
                out.append(f"    - boundary: {cx['boundary']}")
            out.append(f"    - reproduce: `{cx.get('reproduce', '')}`")
        if r["checks"]:
            out.append("  - checks: " + ", ".join(f"`{n}`" for n in r["checks"]))
    for e in c.get("errors", []):
        out.append(f"- error: {e}")
    out.append("")
    return out


# -------------------------------------------------------------------------------- html
_CSS = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;line-height:1.45}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;vertical-align:top}
.v-true{color:#17692b;font-weight:bold}.v-false{color:#b3121b;font-weight:bold}
.v-caveat{color:#a35b00;font-weight:bold}.v-unchecked,.v-undecided{color:#555;font-weight:bold}
blockquote{border-left:4px solid #ddd;margin:.5em 0;padding:.2em .8em;color:#333}
code{background:#f4f4f4;padding:0 .2em}.mismatch{background:#fdd}
"""


def render_html(report: dict) -> str:
    """The same content as the Markdown, as a self-contained HTML page."""
    e = html.escape
    env = report["environment"]
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>attention-claims report</title>",
        f"<style>{_CSS}</style></head><body><h1>attention-claims report</h1>",
        f"<p>Generated {e(report['generated'])} · Python {e(str(env.get('python')))} · torch "
        f"{e(str(env.get('torch')))} · devices: {e(', '.join(env.get('devices', [])))} · Hypothesis profile "
        f"<code>{e(str(env.get('hypothesis_profile')))}</code></p>",
        f"<p>{e(_run_banner(report).replace('**', ''))}</p>",
        "<h2>Verdicts per document</h2><table><tr><th>document</th>"
        + "".join(f"<th>{v}</th>" for v in VERDICT_ORDER) + "</tr>",
    ]
    for doc, counts in report["counts"].get("by_document", {}).items():
        parts.append(f"<tr><td>{e(DOCUMENT_TITLES.get(doc, doc))}</td>"
                     + "".join(f"<td>{counts[v]}</td>" for v in VERDICT_ORDER) + "</tr>")
    total = report["counts"].get("total", {})
    if total:
        parts.append("<tr><td><b>all</b></td>" + "".join(f"<td><b>{total[v]}</b></td>" for v in VERDICT_ORDER)
                     + "</tr>")
    parts.append("</table>")
    if total:
        parts.append("<p>A claim stated in two documents (the repost 001 restates 004) is counted in the row of "
                     "each; the <b>all</b> row counts every claim once.</p>")
    if report.get("trust"):
        parts.append("<h2>Trust</h2><ul>" + "".join(f"<li>{e(x)}</li>" for x in trust_lines(report["trust"]))
                     + "</ul>")
    parts.append("<h2>Summary</h2><table><tr><th>claim</th><th>verdict</th><th>reason</th></tr>")
    for c in report["claims"]:
        cls = "" if c.get("agrees", True) else " class='mismatch'"
        parts.append(
            f"<tr{cls}><td><a href='#{e(c['id'])}'>{e(c['id'])}</a></td>"
            f"<td class='v-{e(c['verdict'])}'>{e(c['verdict'])}</td><td>{e(_one_line(c['reason'], 240))}</td></tr>"
        )
    parts.append("</table>")
    for doc, claims, also in _grouped(report):
        parts.append(f"<h2>{e(DOCUMENT_TITLES.get(doc, doc))}</h2>")
        if also:
            parts.append(f"<h3>Also stated in this document ({len(also)}), decided in the section of another</h3>"
                         "<table><tr><th>claim</th><th>verdict</th><th>where, and its words here</th></tr>")
            for c, places in also:
                where = "<br>".join(f"{e(place['section'])}: {e(_one_line(place['quote'], 240))}" for place in places)
                parts.append(f"<tr><td><a href='#{e(c['id'])}'>{e(c['id'])}</a></td>"
                             f"<td class='v-{e(c['verdict'])}'>{e(c['verdict'])}</td><td>{where}</td></tr>")
            parts.append("</table>")
        for c in claims:
            parts.append(f"<h3 id='{e(c['id'])}'>{e(c['id'])}: {e(c['title'])}</h3>")
            parts.append(f"<p><span class='v-{e(c['verdict'])}'>Verdict: {e(c['verdict'])}</span> "
                         f"(expected {e(c['expected'])}). {e(c['reason'])}</p>")
            src = c["source"]
            parts.append(f"<p>Source: <code>{e(src['document'])}</code>, {e(src['section'])}</p>"
                         f"<blockquote>{e(src['quote'])}</blockquote>")
            for place in c.get("also_in", []):
                parts.append(f"<p>Also stated in <code>{e(place['document'])}</code>, {e(place['section'])}:</p>"
                             f"<blockquote>{e(place['quote'])}</blockquote>")
            parts.append(f"<p>Statement: {e(c['statement'])}</p>")
            if c.get("formal"):
                parts.append(f"<p>Formal: <code>{e(c['formal'])}</code></p>")
            if c.get("unchecked_reason"):
                parts.append(f"<p>Not checkable by computation: {e(c['unchecked_reason'])}</p>")
            if c.get("notes"):
                parts.append(f"<p>Notes: {e(c['notes'])}</p>")
            if c["readings"]:
                parts.append("<ul>")
                for r in c["readings"]:
                    tag = " (as stated)" if r["as_stated"] else ""
                    parts.append(f"<li><b>{e(r['name'])}</b>{tag}: <b>{e(r['outcome'])}</b> — {e(r['statement'])}")
                    parts.append(f"<br>evidence ({r['examples']} examples): {e(r['evidence'])}")
                    for fig in r.get("figures", []):
                        parts.append(f"<figure><img src='{e(fig['path'])}' alt='{e(fig['caption'])}' "
                                     f"style='max-width:100%'><figcaption>{e(fig['caption'])}</figcaption></figure>")
                    cx = r.get("counterexample")
                    if cx:
                        cert = "certified" if cx.get("certified") else "NOT certified"
                        parts.append(f"<br>counterexample ({cert}): {e(cx.get('message', ''))}")
                        if cx.get("example"):
                            parts.append(f"<br>example: <code>{e(json.dumps(cx['example'])[:600])}</code>")
                        if cx.get("certificate"):
                            parts.append(f"<br>certificate: {e(cx['certificate'])}")
                        if cx.get("boundary"):
                            parts.append(f"<br>boundary: {e(cx['boundary'])}")
                        parts.append(f"<br>reproduce: <code>{e(cx.get('reproduce', ''))}</code>")
                    parts.append("</li>")
                parts.append("</ul>")
            for err in c.get("errors", []):
                parts.append(f"<p class='mismatch'>error: {e(err)}</p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
