"""The report's trust section (issue 5): how much the verdicts can be trusted, as measured in *this*
project (its report folder), never in another one.

- planted falsehoods caught / planted, planted truths held / planted, and the claims with nothing to
  plant: counted by the plugin from the tests marked ``@pytest.mark.trust_planted(kind, claim=ID)``
  (kind ``falsehood``, ``truth`` or ``reason``; the suite's own are in
  ``tests/framework/test_planted.py``), by claim; the last complete count is kept in
  ``<report dir>/planted.json`` so a run that does not include those tests still shows the latest
  figures, dated;
- seeds compared and verdict flips: ``<report dir>/stability.json``, written by
  ``python -m attention_claims.tools.stability``;
- the last mutation-testing run: ``<report dir>/mutation.json``, written with ``mutation.md``.

A project that has none of these (a user's own, say) is told so, without pointing to the suite's own
files or documents.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

PLANTED_FILE = "planted.json"
STABILITY_FILE = "stability.json"
MUTATION_FILE = "mutation.json"


def _read(path: Path) -> dict | None:
    """The JSON in ``path`` through the package's one reader (:func:`attention_claims._files.read_json`: a
    FIFO at ``stability.json`` is never waited on), or None when it is missing or unreadable."""
    from .._files import read_json

    try:
        return read_json(path, 32 << 20)
    except (OSError, ValueError):
        return None


def planted_counts(outcomes: dict[str, list], expected: dict[str, str] | None = None) -> dict:
    """The counts and rates of one run's planted tests.

    Args:
        outcomes: kind (``"falsehood"``, ``"truth"``, ``"reason"``) -> one entry per planted test that
            ran: ``(claim id or None, passed)``, or a bare ``passed`` bool (an unnamed claim). A falsehood
            passes when it was caught as ``false`` with a certified counterexample, a truth when it came
            out ``true``, a reason when the claim it names is not planted, for the stated reason (nothing a careless
            author could get wrong by a number, or an opposite that only an existence statement expresses).
        expected: the catalog's claims, id -> ``expected`` verdict; when given, the counts also say how
            many of its ``true`` and ``caveat`` claims have a planted falsehood, a stated reason, or
            neither (``power_missing``: their ids), as DESIGN.md's "Power" asks of every such claim.

    Returns:
        ``{"date", "falsehoods", "caught", "kill_rate", "truths", "held", "truth_pass_rate",
        "claims_planted", "claims_caught", "claims_with_reason", "by_claim"}``: the rates are ``None``
        when nothing of that kind ran; ``by_claim`` maps each named claim to ``{"falsehoods",
        "caught", "truths", "held", "reason"}`` (``reason``: whether a listed reason for it held).
    """
    def pairs(kind):
        return [e if isinstance(e, (tuple, list)) else (None, e) for e in outcomes.get(kind, [])]

    f, t, r = pairs("falsehood"), pairs("truth"), pairs("reason")
    by_claim: dict[str, dict] = {}
    for entries, total, good in ((f, "falsehoods", "caught"), (t, "truths", "held")):
        for cid, ok in entries:
            if cid:
                row = by_claim.setdefault(cid, {"falsehoods": 0, "caught": 0, "truths": 0, "held": 0, "reason": False})
                row[total] += 1
                row[good] += bool(ok)
    for cid, ok in r:
        if cid:
            row = by_claim.setdefault(cid, {"falsehoods": 0, "caught": 0, "truths": 0, "held": 0, "reason": False})
            row["reason"] = row["reason"] or bool(ok)
    caught = sum(bool(ok) for _, ok in f)
    held = sum(bool(ok) for _, ok in t)
    return {
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "falsehoods": len(f),
        "caught": caught,
        "kill_rate": (caught / len(f)) if f else None,
        "truths": len(t),
        "held": held,
        "truth_pass_rate": (held / len(t)) if t else None,
        "claims_planted": sum(1 for row in by_claim.values() if row["falsehoods"]),
        "claims_caught": sum(1 for row in by_claim.values() if row["falsehoods"] and row["caught"] == row["falsehoods"]),
        "claims_with_reason": sum(1 for row in by_claim.values() if row["reason"] and not row["falsehoods"]),
        "by_claim": dict(sorted(by_claim.items())),
        **(_power_over(by_claim, expected) if expected is not None else {}),
    }


def _power_over(by_claim: dict[str, dict], expected: dict[str, str]) -> dict:
    """How many of the catalog's ``true`` and ``caveat`` claims have a planted falsehood, a reason, neither."""
    wanted = sorted(c for c, e in expected.items() if e in ("true", "caveat"))
    planted = [c for c in wanted if by_claim.get(c, {}).get("falsehoods")]
    reason = [c for c in wanted if c not in planted and by_claim.get(c, {}).get("reason")]
    return {"power_claims": len(wanted), "power_planted": len(planted), "power_reason": len(reason),
            "power_missing": [c for c in wanted if c not in planted and c not in reason]}


def build_trust(report_dir: Path | None, planted_now: dict | None) -> dict:
    """The trust section of ``claims.json``.

    ``planted_now`` is this run's planted counts (``None`` when the planted tests did not
    run); otherwise the last recorded counts are shown with ``"from_this_run": false``.
    """
    planted = None
    if planted_now is not None:
        planted = dict(planted_now, from_this_run=True)
    elif report_dir is not None:
        last = _read(report_dir / PLANTED_FILE)
        planted = dict(last, from_this_run=False) if last else None
    stability = _read(report_dir / STABILITY_FILE) if report_dir is not None else None
    mutation = _read(report_dir / MUTATION_FILE) if report_dir is not None else None
    if isinstance(mutation, dict) and isinstance(mutation.get("modules"), list):
        root = Path(report_dir).resolve().parent
        mutation = dict(mutation, stale_modules=[m for m in mutation["modules"] if not (root / m).exists()])
    return {"planted": planted, "stability": stability, "mutation": mutation}


def _pct(x) -> str:
    return "n/a" if x is None else f"{100 * x:.1f} %"


def trust_lines(trust: dict | None) -> list[str]:
    """Plain-text lines of the trust section (inline Markdown: code in backticks), the one text that
    the Markdown and the HTML writers both show; ``[]`` when the report has no trust section.

    Tolerates partial entries (a hand-edited or older ``planted.json``, ``stability.json`` or
    ``mutation.json``): a missing count shows as ``?``. Never raises on a dict of that shape.
    """
    if not trust:
        return []
    lines = []
    p = trust.get("planted")
    if p:
        src = "this run" if p.get("from_this_run") else f"last recorded run, {p.get('date', '?')}"
        caught, total = p.get("caught", p.get("killed", "?")), p.get("falsehoods", p.get("total", "?"))
        rate = p.get("kill_rate", caught / total if isinstance(caught, int) and isinstance(total, int) and total
                     else None)
        line = f"Planted falsehoods caught: {caught}/{total} (kill rate {_pct(rate)})"
        if p.get("truths"):
            line += f"; planted truths held: {p.get('held', '?')}/{p['truths']} ({_pct(p.get('truth_pass_rate'))})"
        by_claim = p.get("by_claim") if isinstance(p.get("by_claim"), dict) else None
        if by_claim is not None:
            line += (f"; over {p.get('claims_planted', '?')} claims, every planted falsehood caught in "
                     f"{p.get('claims_caught', '?')}")
            if p.get("claims_with_reason"):
                line += (f"; {p['claims_with_reason']} claims not planted, each with its stated reason (a definition or "
                         "identity with nothing to plant, or an opposite that no counterexample can refute)")
            if isinstance(p.get("power_claims"), int):
                missing = p.get("power_missing") or []
                line += (f"; of the {p['power_claims']} true and caveat claims, {p.get('power_planted', '?')} have a "
                         f"planted falsehood and {p.get('power_reason', '?')} a stated reason"
                         + (f", {len(missing)} neither ({', '.join(map(str, missing))})" if missing else ""))
            escaped = [f"{cid} ({row.get('caught', '?')}/{row.get('falsehoods', '?')})" for cid, row in by_claim.items()
                       if isinstance(row, dict) and row.get("falsehoods") and row.get("caught") != row.get("falsehoods")]
            if escaped:
                line += f"; a planted falsehood escaped in {', '.join(escaped)}"
        lines.append(line + f" [{src}].")
        if by_claim:
            planted = [f"`{cid}` {row.get('caught', '?')}/{row.get('falsehoods', '?')}" for cid, row in by_claim.items()
                       if isinstance(row, dict) and row.get("falsehoods")]
            reasons = [f"`{cid}`" for cid, row in by_claim.items()
                       if isinstance(row, dict) and row.get("reason") and not row.get("falsehoods")]
            lines.append("Power by claim (planted falsehoods caught/planted): " + (", ".join(planted) or "none")
                         + (f"; not planted, for a stated reason: {', '.join(reasons)}" if reasons else "") + ".")
    else:
        lines.append("Planted variants: not run yet in this project.")
    s = trust.get("stability")
    if s:
        paths = s.get("paths") or ["checks"]
        flips = s.get("flips") or []
        lines.append(f"Stability: {len(s.get('seeds', []))} seeds compared under the `{s.get('profile', '?')}` profile "
                     f"over {', '.join(paths)} ({s.get('claims', '?')} claims; {s.get('date', '?')}"
                     + (f", commit {str(s['commit'])[:7]}" if s.get("commit") else "") + "); verdict flips: "
                     f"{len(flips)}" + (f" ({', '.join(f['claim'] for f in flips)})" if flips else "") + ".")
    else:
        lines.append("Stability: not run yet in this project (`python -m attention_claims.tools.stability` runs it).")
    m = trust.get("mutation")
    if m:
        score = m.get("score")
        modules = m.get("modules") or []
        line = (f"Mutation testing ({m.get('tool', '?')}, {m.get('date', '?')}"
                + (f", commit {str(m['commit'])[:12]}" if m.get("commit") and m.get("tests_commit") in (None, m["commit"])
                   else f", modules as of commit {str(m['tests_commit'])[:12]} (run begun at {str(m['commit'])[:12]})"
                   if m.get("commit") else "")
                + f", over {', '.join(modules) or '?'}): score {_pct(score) if isinstance(score, float) else score} "
                f"({m.get('killed', '?')} killed of {m.get('total', '?')}")
        koe = m.get("killed_or_explained")
        if isinstance(koe, float):
            line += f"; killed or explained as surviving for a stated reason: {_pct(koe)}"
        unexplained = sum(1 for x in m.get("survivors") or [] if x.get("explanation") == "UNEXPLAINED")
        line += (f"; {unexplained} survivors not explained yet, listed in reports/mutation.md)." if unexplained
                 else "; survivors explained in reports/mutation.md).")
        if m.get("not_checked"):
            line += (f" Partial: {m['not_checked']} mutants not checked yet, left out of the score "
                     "(`mutmut run` resumes).")
        gone = [mod for mod in modules if m.get("stale_modules") is not None and mod in m["stale_modules"]]
        if gone:
            line += (f" Stale: {', '.join(gone)} no longer exist(s); the score is of code the suite no longer has "
                     "(rerun `mutmut run`).")
        lines.append(line)
    else:
        lines.append("Mutation testing: not run yet in this project.")
    return lines
