"""The report: ``reports/claims.json`` (schema 1, fixed by ``docs/verdicts.md``),
``claims.md`` and ``claims.html`` for people.

The JSON is the source of truth; the Markdown and HTML are rendered from it, so the three
never disagree. Claims are grouped by document in the catalog's order, with a
per-document count of verdicts at the top.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import os
import platform
import shlex
import tempfile
from pathlib import Path

from . import profiles
from .trust import build_trust, trust_lines
from .verdict import ReadingOutcome, agrees_with_expected, compute_verdict, reading_outcome

SCHEMA = 1
VERDICT_ORDER = ("true", "false", "caveat", "unchecked", "undecided")
DOCUMENT_TITLES = {
    "000_ab5bd5ab0e7f4d86.txt": "000 — study note: the low-rank problem of bidirectional attention",
    "001_7b7f411bbe8a3bef.txt": "001 — PaperWeekly repost of kexue.fm/archives/9889",
    "002_3cda90c9fbb885ae.txt": "002 — kexue.fm/archives/9529 notes and interview answer (Decoder-only)",
    "003_a0ad15dda516ed1d.txt": "003 — textbook §11.3, the low-rank structure of attention matrices",
    "004_5f57af8801c437dc.txt": "004 — kexue.fm/archives/9889, can attention really concentrate?",
}


def _environment(config) -> dict:
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
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "torch": torch_version,
        "hypothesis": hypothesis.__version__,
        "mpmath": mpmath.__version__,
        "python_flint": flint_version,
        "devices": devices,
        "hypothesis_profile": profiles.current_profile(),
        "xdist_workers": xdist,
    }


def _reproduce(nodeid: str, profile: str) -> str:
    return f"python -m pytest {shlex.quote(nodeid)} -p no:xdist --hypothesis-profile={profile}"


def _figure_entries(checks, report_dir: Path | None) -> list[dict]:
    """The images the checks attached (:meth:`attention_claims.framework.evidence.CheckLog.figure`), with paths
    relative to the report folder when they lie inside it, so ``claims.md`` can embed them."""
    out: list[dict] = []
    for r in checks:
        for f in r.figures:
            path = Path(f["path"])
            if report_dir is not None:
                try:
                    path = path.relative_to(Path(report_dir).resolve())
                except ValueError:
                    pass
            entry = {"path": path.as_posix(), "caption": f["caption"], "check": r.nodeid}
            if entry not in out:
                out.append(entry)
    return out


def _reading_entry(claim, reading, results, profile, report_dir=None) -> tuple[dict, ReadingOutcome, list[str]]:
    checks = sorted((r for r in results if r.reading == reading.name), key=lambda r: r.nodeid)
    errors = [f"{r.nodeid}: {r.error}" for r in checks if r.outcome == "error"]
    ran = [r for r in checks if r.outcome != "error"]
    outcome = reading_outcome([r.outcome for r in ran])
    cxs = [r for r in checks if r.outcome == "counterexample"]
    cx = None
    certified = False
    if cxs:
        first = next((r for r in cxs if r.counterexample.get("certified")), cxs[0])
        cx = dict(first.counterexample)
        cx["check"] = first.nodeid
        cx["reproduce"] = _reproduce(first.nodeid, profile)
        certified = bool(cx.get("certified"))
    evidence_parts = []
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
        evidence_parts.append(text if len(checks) == 1 else f"[{name}] {text}")
    if not checks:
        evidence_parts.append("no check collected in this run")
    entry = {
        "name": reading.name,
        "as_stated": reading.as_stated,
        "statement": reading.statement,
        "condition": {k: v for k, v in (("dtype", reading.dtype), ("device", reading.device),
                                         ("condition", reading.condition)) if v},
        "outcome": outcome,
        "checks": [r.nodeid for r in checks],
        "examples": sum(r.examples for r in checks),
        "evidence": " | ".join(evidence_parts),
        "counterexample": cx,
        "certified": certified,
        "figures": _figure_entries(checks, report_dir),
    }
    return entry, ReadingOutcome(outcome, certified), errors


def _also_in(claim) -> list[dict]:
    return [{"document": s.document, "section": s.section, "quote": s.quote} for s in claim.also_in]


def _claim_entry(claim, results, profile, report_dir=None) -> dict:
    readings, outcomes, errors = [], {}, []
    for reading in claim.readings:
        entry, ro, errs = _reading_entry(claim, reading, results, profile, report_dir)
        readings.append(entry)
        outcomes[reading.name] = ro
        errors.extend(errs)
    verdict, reason = compute_verdict(claim, outcomes)
    if errors:
        verdict, reason = "undecided", f"a check errored ({len(errors)}); see errors"
    elif verdict in ("caveat", "false"):
        failing = [r for r in readings if r["outcome"] == "failed" and (verdict == "caveat" or r["as_stated"])]
        bits = []
        for r in failing[:1]:
            cx = r["counterexample"] or {}
            bits.append(f"{r['name']}: {cx.get('boundary') or cx.get('message', '')}")
        reason = reason + ". " + "; ".join(bits)
    agrees = agrees_with_expected(claim, outcomes) and not errors
    return {
        "id": claim.id,
        "title": claim.title,
        "verdict": verdict,
        "expected": claim.expected,
        "agrees": agrees,
        "reason": reason,
        "statement": claim.statement,
        "formal": claim.formal,
        "source": {
            "document": claim.source.document,
            "section": claim.source.section,
            "quote": claim.source.quote,
        },
        "also_in": _also_in(claim),
        "unchecked_reason": claim.unchecked_reason,
        "notes": claim.notes,
        "record": os.path.relpath(claim.path) if os.path.isabs(claim.path) else claim.path,
        "readings": readings,
        "errors": errors,
    }


def build_report(state, config, exitstatus: int) -> dict:
    """Assemble the schema-1 report from the plugin's state (see DESIGN.md "Report")."""
    profile = profiles.current_profile()
    results = list(state.results.values())
    by_claim: dict[str, list] = {}
    for r in results:
        by_claim.setdefault(r.claim, []).append(r)
    claims = [_claim_entry(c, by_claim.get(c.id, []), profile, state.report_dir) for c in state.catalog]
    if state.selected is not None:
        for entry in claims:
            entry["selected"] = entry["id"] in state.selected
            if not entry["selected"]:
                entry["verdict"] = "undecided"
                entry["reason"] = "not selected in this run (--claims-select / --claims-document)"
                entry["agrees"] = True
    interrupted = exitstatus in (2, 3)  # INTERRUPTED, INTERNAL_ERROR
    if interrupted:
        # A claim whose collected checks did not all report is not decided, whatever ran.
        done = {r.nodeid for r in results if r.outcome != "skipped" or r.skip_reason}
        for entry in claims:
            pending = [n for cid, _r, n in state.collected if cid == entry["id"] and n not in done]
            if pending and entry["verdict"] != "unchecked":
                entry["verdict"] = "undecided"
                entry["reason"] = f"the run was interrupted before {len(pending)} of its checks ran"
                entry["agrees"] = False
    return {
        "schema": SCHEMA,
        "generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "environment": _environment(config),
        "run": {
            "complete": not interrupted and not state.partial,
            "partial": state.partial,
            "interrupted": interrupted,
            "exitstatus": exitstatus,
            "errors": list(state.errors),
        },
        "counts": _counts(claims),
        "trust": build_trust(state.report_dir, getattr(state, "planted_counts", None)),
        "claims": claims,
    }


def _stated_in(c: dict) -> list[str]:
    """The documents that state claim entry ``c``: its source, then its ``also_in`` documents."""
    docs = [c["source"]["document"]]
    for s in c.get("also_in", []):
        if s["document"] not in docs:
            docs.append(s["document"])
    return docs


def _counts(claims: list[dict]) -> dict:
    """Verdict counts: ``total`` counts each claim once; ``by_document`` counts a claim under
    every document that states it (its source and each ``also_in`` document), so a reader of
    the repost 001 sees the claims it shares with 004 in 001's row; ``by_source_document``
    counts each claim under its source document only (its rows sum to ``total``)."""
    per_doc: dict[str, dict[str, int]] = {}
    per_source: dict[str, dict[str, int]] = {}
    total = {v: 0 for v in VERDICT_ORDER}
    for c in claims:
        for doc in _stated_in(c):
            per_doc.setdefault(doc, {v: 0 for v in VERDICT_ORDER})[c["verdict"]] += 1
        per_source.setdefault(c["source"]["document"], {v: 0 for v in VERDICT_ORDER})[c["verdict"]] += 1
        total[c["verdict"]] += 1
    order = sorted(per_doc, key=_document_key)
    return {"total": total, "by_document": {d: per_doc[d] for d in order},
            "by_source_document": {d: per_source[d] for d in sorted(per_source, key=_document_key)}}


def _document_key(doc: str) -> tuple[int, str]:
    """Seed documents in file order, then the cited papers."""
    return (0 if not doc.startswith("arXiv:") else 1, doc)


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def write_reports(report: dict, report_dir: Path) -> None:
    """Write ``claims.json``, ``claims.md`` and ``claims.html`` atomically."""
    _atomic_write(report_dir / "claims.json", json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    _atomic_write(report_dir / "claims.md", render_markdown(report))
    _atomic_write(report_dir / "claims.html", render_html(report))


def write_in_progress(state, config) -> None:
    """Replace any previous report by one that says the run has not finished.

    If the process dies before ``pytest_sessionfinish`` (a crash, a kill), what is left
    says which claims were not decided instead of a stale report that looks complete.
    """
    report = {
        "schema": SCHEMA,
        "generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "environment": _environment(config),
        "run": {"complete": False, "partial": state.partial, "interrupted": True, "in_progress": True,
                "exitstatus": None,
                "errors": ["the run has not finished (in progress, killed or crashed)"]},
        "counts": {},
        "claims": [
            {"id": c.id, "title": c.title, "verdict": "undecided", "expected": c.expected, "agrees": False,
             "reason": "not decided: the run did not finish", "statement": c.statement, "formal": c.formal,
             "source": {"document": c.source.document, "section": c.source.section, "quote": c.source.quote},
             "also_in": _also_in(c),
             "unchecked_reason": c.unchecked_reason, "notes": c.notes, "record": c.path,
             "readings": [], "errors": []}
            for c in state.catalog
        ],
    }
    report["counts"] = _counts(report["claims"])
    write_reports(report, state.report_dir)


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
    docs = sorted(set(own) | set(also), key=_document_key)
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
