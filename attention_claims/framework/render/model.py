"""What the renderers show, derived from the report dict (``claims.json``, DESIGN.md schema 1).

Pure functions: they read the report and never change it. Where the report does not carry a
field yet (a claim's ``topic``, a reading's ``kind`` of evidence), a derivation stands in, and a
field in the record, when present, wins.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "plot_files", "figure_path", "FIGURES_DIR", "profile_plot_spec", "profile_plot_file",
    "VERDICT_ORDER", "SECTION_ORDER", "DOCUMENTS", "use_documents", "TOPICS", "READING_KINDS",
    "document_key", "document_label", "document_slug", "document_short", "document_url", "claim_topics", "reading_kind", "claim_reading_kinds",
    "one_line_counterexample", "reason_text", "evidence_text", "documents_of", "primary_counterexample",
    "worst_verdict", "run_banner", "decided_text", "claim_failure_profile", "failure_profile_text",
    "NOT_SELECTED", "STATUS_ORDER", "STATUS_MEANING", "status", "status_counts", "decided_in_run", "run_tally",
    "headline", "plural",
]

VERDICT_ORDER = ("true", "false", "caveat", "unchecked", "undecided", "error")
NOT_SELECTED = "not selected"
"""The status shown for an ``undecided`` claim that no run has been asked to decide yet (``selected`` false,
no ``decided`` stamp): not a verdict of ``docs/verdicts.md``, a word of the reports, so that "not selected"
is never read as "could not run here" (:func:`status`)."""
# The order a reader wants: what is wrong first, decided claims before those no run could decide, and the
# claims no run was asked to decide last.
SECTION_ORDER = ("false", "error", "caveat", "true", "unchecked", "undecided", NOT_SELECTED)
STATUS_ORDER = SECTION_ORDER
"""Every status a report shows (the six verdicts and :data:`NOT_SELECTED`), in the order it lists them."""
SEVERITY = {"false": 0, "error": 0.5, "caveat": 1, "true": 2, "unchecked": 3, "undecided": 4, NOT_SELECTED: 5}
STATUS_MEANING = {
    "false": "the as-stated reading has a counterexample, confirmed in exact or high-precision arithmetic",
    "error": "a check did not finish (a crash, an exception, an internal error): a bug, never a verdict about the claim",
    "caveat": "holds as stated, but a practical reading (a dtype, a device, a range) fails",
    "true": "every reading that ran held",
    "unchecked": "computation cannot judge it; the claim says why",
    "undecided": "could not run here: its as-stated reading was skipped on the machine that ran it (no CUDA, "
                 "a model not installed), or the run stopped before deciding it",
    NOT_SELECTED: "never decided: no run so far was asked to decide it (--claims-select, -k, paths)",
}
"""What each status means, one line each, for the legends of ``claims.html`` and ``claims.md``."""


def status(claim: dict) -> str:
    """What a report shows for ``claim``: its verdict, except :data:`NOT_SELECTED` for an ``undecided``
    claim that was not selected in this run and never decided before (``selected`` false, no ``decided``);
    an ``undecided`` claim that was selected (its as-stated reading skipped here, or the run stopped) stays
    ``undecided``, "could not run here"."""
    if claim.get("verdict") == "undecided" and claim.get("selected") is False and not claim.get("decided"):
        return NOT_SELECTED
    return claim.get("verdict", "")


def status_counts(claims: list[dict], document: str | None = None) -> dict[str, int]:
    """``{status: count}`` over :data:`STATUS_ORDER` (zeros included) of ``claims``, or of those stated in
    ``document`` (its source or an ``also_in`` place) when given."""
    out = dict.fromkeys(STATUS_ORDER, 0)
    for c in claims:
        if document is None or document in documents_of(c):
            out[status(c)] = out.get(status(c), 0) + 1
    return out


def decided_in_run(claim: dict, report: dict) -> bool:
    """Whether the run that wrote ``report`` decided ``claim``: its ``decided`` stamp is the report's own
    time (a run stamps the claims it decides with its ``generated`` time), or it was folded by
    ``attention-claims merge``. A claim carried from an earlier report, or never decided, is not."""
    d = claim.get("decided") or {}
    return bool(d) and (d.get("at") == report.get("generated") or d.get("run") == "merged")


def plural(n: int, word: str, many: str | None = None) -> str:
    """``"1 claim"``, ``"2 claims"``: ``n`` and ``word`` in the number ``n`` asks for (``many``: the plural
    when it is not ``word + "s"``)."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def _minute(at: str) -> str:
    """An ISO 8601 time as ``"2026-11-28 08:56 UTC"``."""
    return str(at).replace("T", " ")[:16] + " UTC"


def run_tally(report: dict) -> dict:
    """What the run behind ``report`` decided: ``{"total", "fresh", "carried", "carried_from", "never",
    "complete"}``: claims in the report, claims this run decided (:func:`decided_in_run`), claims carried
    from earlier runs (with their decision dates, newest first, as ``"2026-11-28 08:56 UTC"``) and claims
    never decided; ``complete`` is the run's own flag."""
    claims = report.get("claims", [])
    fresh = [c for c in claims if decided_in_run(c, report)]
    carried = [c for c in claims if c.get("decided") and not decided_in_run(c, report)]
    dates = sorted({_minute(c["decided"].get("at", "")) for c in carried}, reverse=True)
    return {"total": len(claims), "fresh": len(fresh), "carried": len(carried), "carried_from": dates,
            "never": len(claims) - len(fresh) - len(carried), "complete": bool((report.get("run") or {}).get("complete"))}


def headline(report: dict) -> tuple[str, str]:
    """``(title, detail)`` of a report's first line. A complete run: ``"160 claims about attention matrices,
    decided by computation"``; any other run counts what it decided itself: ``"5 of 160 claims decided in
    this run"``, detail ``"155 not decided by this run: 3 carried from 2026-11-28 08:56 UTC; 152 never
    decided (not selected)."``. ``detail`` is ``""`` when there is nothing to add."""
    t = run_tally(report)
    if t["complete"]:  # a complete run decided every claim (a report of before ``decided`` stamps has none)
        return f"{plural(t['total'], 'claim')} about attention matrices, decided by computation", ""
    title = f"{t['fresh']} of {plural(t['total'], 'claim')} decided in this run"
    rest = t["total"] - t["fresh"]
    if not rest:
        return title, ""
    parts = []
    if t["carried"]:
        dates = t["carried_from"]
        when = ", ".join(dates[:3]) + (f" and {len(dates) - 3} earlier runs" if len(dates) > 3 else "")
        parts.append(f"{t['carried']} carried from {when}")
    if t["never"]:
        interrupted = (report.get("run") or {}).get("interrupted")
        parts.append(f"{t['never']} never decided" + ("" if interrupted else " (not selected)"))
    if len(parts) == 1:  # "159 never decided (not selected)." says it all
        return title, parts[0] + "."
    return title, f"{rest} not decided by this run: " + "; ".join(parts) + "."

DOCUMENTS: dict[str, dict[str, str]] = {}
"""The provenance of the documents of the report being rendered (its ``documents``: title, author,
url, date per document, from the sources folder's ``documents.toml``), set by :func:`use_documents`
at the start of each render; the render caches key on it."""


def use_documents(report: dict) -> dict[str, dict[str, str]]:
    """Make ``report["documents"]`` what :func:`document_label` and :func:`document_url` read, and
    return it (for the cache keys)."""
    global DOCUMENTS
    DOCUMENTS = dict(report.get("documents") or {})
    return DOCUMENTS


TOPICS = ("rank", "spectrum", "sparsity", "kernels", "projections", "architecture", "trained models")
# First match wins for the primary topic; every match is listed (a claim can be in several).
_TOPIC_RULES: tuple[tuple[str, str], ...] = (
    ("trained models", r"trained|minilm|smollm|bert-base|by-depth|table-11-3-1|lemma-11-43|theorem-11-29"),
    ("sparsity", r"sparsit|sparse|concentrat|entropy|winner-takes|focus|decay-attention|decay-sparsity|l1-l2"),
    ("kernels", r"kernel|feature-map|linear-attention|performer|relu|elu|random-feature|linear-rnn|"
                r"infinite-dimensional-linear|nonnegative-linear|theorem-11-27|corollary-11-11"),
    ("projections", r"linformer|johnson|lindenstrauss|\bjl\b|jl-|lora|projection|dasgupta"),
    ("spectrum", r"singular|spectr|energy|effective-rank|power-law|svd|eff-rank|11-25|11-21"),
    ("rank", r"rank|row-stochastic|11-33|11-24|temperature|one-hot|bottleneck|redundan|correlat"),
    ("architecture", r"decoder|encoder|prefixlm|kv-cache|architecture|flash|perceiver|multi-head|causal|"
                     r"position|rope|zero-shot|icl|training|finetun|quadratic|gau|llama|scale-model"),
)

READING_KINDS = ("exact", "sampled", "dtype on CPU", "CUDA", "trained model", "other")


def document_key(doc: str) -> tuple[int, str]:
    """Sort key: the seed documents in file order, then the cited papers."""
    return (0 if not doc.startswith("arXiv:") else 1, doc)


def document_label(doc: str) -> str:
    """A reader's name for a document: ``"<short name> — <title>"`` when the manifest gives a title
    (``"003 — textbook §11.3, ..."``), else the document's name or arXiv id."""
    title = (DOCUMENTS.get(doc) or {}).get("title")
    return f"{document_short(doc)} — {title}" if title else doc


def document_slug(doc: str) -> str:
    """The name of ``doc`` as it appears in element ids and URL fragments (``#doc-<slug>``,
    ``<slug>-s<n>``): ``"003"`` for a seed document (``003_a0ad15dda516ed1d.txt``), else the name in
    lowercase ASCII letters, digits and ``-``, followed by ``-`` and the first 8 hex digits of the name's
    SHA-256 whenever that is not the name itself (``"Note.md"`` -> ``"note-md-<hash>"``), so two names
    never share a slug and nothing of a name reaches HTML, CSS or JavaScript unescaped. A slug that could
    be read as a claim's element id (``c``, ``c-...``) or a view's (``view-...``) also carries the hash."""
    seed = re.fullmatch(r"(\d{3})_[0-9a-f]{16}\.txt", doc)
    if seed:
        return seed.group(1)
    slug = re.sub(r"[^a-z0-9]+", "-", doc.lower()).strip("-") or "document"
    if slug != doc or slug == "c" or slug.startswith(("c-", "view-")) or re.fullmatch(r"\d{3}", slug):
        import hashlib

        slug += "-" + hashlib.sha256(doc.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return slug


def document_short(doc: str) -> str:
    """``"003"`` for a seed document, the arXiv id otherwise."""
    m = re.match(r"(\d{3})_", doc)
    return m.group(1) if m else doc


def document_url(doc: str) -> str | None:
    """The original page of a document, where it has one (the manifest's ``url``, an arXiv abstract);
    else None.

    Always an http(s) URL: a manifest ``url`` of another scheme, and an ``arXiv:`` name whose id is not
    made of letters, digits, ``.``, ``-`` and ``/`` (``arXiv:2006.04768``, ``arXiv:math/0601001v2``),
    give none."""
    url = (DOCUMENTS.get(doc) or {}).get("url")
    if url:
        return url if re.fullmatch(r"https?://[^\s<>\"']+", url) else None
    if doc.startswith("arXiv:"):
        ident = doc.split(":", 1)[1]
        return "https://arxiv.org/abs/" + ident if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9./-]*", ident) else None
    return None


def _claim_haystack(claim: dict) -> str:
    checks = " ".join(ch for r in claim.get("readings", []) for ch in r.get("checks", []))
    conds = " ".join(str(v) for r in claim.get("readings", []) for v in (r.get("condition") or {}).values())
    return f"{claim.get('id', '')} {claim.get('title', '')} {checks} {conds}".lower()


def claim_topics(claim: dict) -> list[str]:
    """The topics of a claim, primary first: the record's own (``topics``), else of :data:`TOPICS`.

    A record's own ``topics`` (a list in the record, carried into the report) wins when present; otherwise the topics are
    derived from the claim's id, title, check names and reading conditions (keyword rules,
    first match primary). Never empty: falls back to ``["architecture"]``.
    """
    given = claim.get("topic") or claim.get("topics")
    if given:
        return [given] if isinstance(given, str) else list(given)
    hay = _claim_haystack(claim)
    found = [topic for topic, pattern in _TOPIC_RULES if re.search(pattern, hay)]
    if any("test_trained" in ch for r in claim.get("readings", []) for ch in r.get("checks", [])):
        found = ["trained models"] + [t for t in found if t != "trained models"]
    return list(dict.fromkeys(found)) or ["architecture"]


def reading_kind(reading: dict) -> str:
    """The kind of evidence a reading is, one of :data:`READING_KINDS`.

    A ``evidence_kind`` field wins when present. Otherwise: a CUDA device (condition or name) ->
    ``"CUDA"``; a trained model (MiniLM, SmolLM2 in the condition or a ``test_trained`` check) ->
    ``"trained model"``; a Monte Carlo estimate (random draws) -> ``"sampled"``, never ``"exact"``; a dtype
    on the CPU -> ``"dtype on CPU"``; ``exact``/``mpmath`` in the name,
    or a condition-free as-stated reading -> ``"exact"``; else ``"other"``.
    """
    if reading.get("evidence_kind"):
        return reading["evidence_kind"]
    cond = reading.get("condition") or {}
    name = reading.get("name", "")
    text = " ".join(str(v) for v in cond.values()).lower()
    if cond.get("device") == "cuda" or name.startswith("cuda"):
        return "CUDA"
    if re.search(r"minilm|smollm|trained", text + " " + name) or any(
            "test_trained" in ch for ch in reading.get("checks", [])):
        return "trained model"
    if re.search(r"monte[- ]?carlo|random draws|sampled", f"{name} {reading.get('statement', '')}".lower()):
        return "sampled"
    if cond.get("dtype") or re.match(r"cpu-", name):
        return "dtype on CPU"
    if "exact" in name or "mpmath" in name or (reading.get("as_stated") and not cond):
        return "exact"
    return "other"


def claim_reading_kinds(claim: dict) -> list[str]:
    """The distinct :func:`reading_kind` of a claim's readings, in :data:`READING_KINDS` order."""
    kinds = {reading_kind(r) for r in claim.get("readings", [])}
    return [k for k in READING_KINDS if k in kinds]


def documents_of(claim: dict) -> list[str]:
    """The documents that state a claim: its source, then its ``also_in`` documents."""
    docs = [claim["source"]["document"]]
    for place in claim.get("also_in", []) or []:
        if place["document"] not in docs:
            docs.append(place["document"])
    return docs


def primary_counterexample(claim: dict) -> tuple[dict | None, dict | None]:
    """``(reading, counterexample)`` that decides the verdict: for ``false`` the as-stated
    reading's, for ``caveat`` the first failed reading's (certified first); ``(None, None)`` if none."""
    failed = [r for r in claim.get("readings", []) if r.get("outcome") == "failed" and r.get("counterexample")]
    if claim.get("verdict") == "false":
        failed = [r for r in failed if r.get("as_stated")] or failed
    failed.sort(key=lambda r: not r["counterexample"].get("certified"))
    return (failed[0], failed[0]["counterexample"]) if failed else (None, None)


def certified_word(cx: dict | None) -> str:
    """How a counterexample was confirmed, in the report's words (docs/verdicts.md, "Certified"):
    ``"certified (proved)"``, ``"certified (recomputed)"`` or ``"not certified"``; a report written before
    counterexamples carried ``certificate_strength`` gets ``recomputed``, the weaker word (its certificate's words
    are not read as a proof)."""
    if not cx or not cx.get("certified"):
        return "not certified"
    strength = cx.get("certificate_strength")
    if strength is None:
        from ..evidence import STRENGTH_DEFAULT

        strength = STRENGTH_DEFAULT
    return f"certified ({strength})"


def one_line_counterexample(claim: dict) -> str:
    """The counterexample (or the breaking condition) in one line, for the summary; ``""`` if none."""
    reading, cx = primary_counterexample(claim)
    if cx is None:
        return ""
    text = cx.get("message") or ""
    if claim.get("verdict") == "caveat" and cx.get("boundary"):
        text = cx["boundary"]
    return " ".join(text.split())


def claim_failure_profile(claim: dict) -> dict | None:
    """A false claim's failure profile (its ``failure_profile``, else its as-stated failed reading's, for a
    report written before claims carried one); ``None`` for another verdict or when none was measured."""
    if claim.get("verdict") != "false":
        return None
    if claim.get("failure_profile"):
        return claim["failure_profile"]
    return next((r["failure_profile"] for r in claim.get("readings", [])
                 if r.get("as_stated") and r.get("outcome") == "failed" and r.get("failure_profile")), None)


def failure_profile_text(profile: dict | None) -> str:
    """``"fails in F of T draws at <setting>"`` for a failure profile (``{"class", "setting", "trials",
    "failures", "summary"}``); ``""`` for ``None``."""
    if not profile:
        return ""
    return f"fails in {profile.get('failures')} of {profile.get('trials')} draws at {profile.get('setting')}"


def reason_text(claim: dict) -> str:
    """The verdict's reason without the counterexample text the report shows next to it.

    The report's ``reason`` ends with ``"<reading>: <boundary or message>"`` for false and caveat
    claims; that tail is dropped when it repeats :func:`one_line_counterexample` or the message.
    """
    reason = claim.get("reason") or ""
    reading, cx = primary_counterexample(claim)
    if cx is None:
        return reason
    for tail in (cx.get("boundary"), cx.get("message")):
        if tail and reading and reason.endswith(f"{reading['name']}: {tail}"):
            return reason[: -len(f"{reading['name']}: {tail}")].rstrip(" .;") + "."
    return reason


def evidence_text(reading: dict) -> str:
    """A reading's evidence without the counterexample message and boundary (shown once, apart)."""
    text = reading.get("evidence") or ""
    cx = reading.get("counterexample") or {}
    for part in (cx.get("boundary") and f" Boundary: {cx['boundary']}", cx.get("message") and
                 f"Counterexample: {cx['message']}"):
        if part:
            text = text.replace(part, "")
    return " ".join(text.split()).rstrip(" .") + ("." if text.strip() else "")


def worst_verdict(verdicts: list[str]) -> str | None:
    """The verdict a reader must see first among ``verdicts`` (false > error > caveat > undecided > true > unchecked)."""
    return min(verdicts, key=lambda v: SEVERITY.get(v, 9)) if verdicts else None


def example_json(example: Any) -> str:
    """A counterexample's ``example`` as compact JSON (arrays on one line each)."""
    import json

    return json.dumps(example, ensure_ascii=False, separators=(", ", ": "))


def run_banner(run: dict) -> str:
    """What the run behind the report was, in one sentence; ``""`` for a complete run."""
    if run.get("complete"):
        return ""
    if run.get("unfinished"):
        return (f"This run is not complete: {run['unfinished']} check(s) did not finish (a crash, an exception other "
                "than a counterexample, an internal error); their claims are 'error', not decided.")
    if run.get("in_progress") or (run.get("exitstatus") is None and run.get("interrupted")):
        return ("This run has not finished (in progress, killed or crashed): each claim shows its last decision, "
                "dated, and a claim never decided before is undecided.")
    if run.get("interrupted"):
        return ("This run was interrupted: claims whose checks did not all run keep their last decision (dated) "
                "or are undecided.")
    if run.get("updated"):
        return (f"Partial run: it decided the selected claims; every other claim keeps its last decision "
                f"(from the report of {run['updated']}), dated.")
    return "Partial run: only the selected claims were decided; the others are listed as not selected."


def decided_text(claim: dict) -> str:
    """When a claim was last decided: ``"2026-11-24 10:02 UTC, ci profile, full run"``; ``"never"``."""
    d = claim.get("decided")
    if not d:
        return "never (not selected in any run yet)"
    at = str(d.get("at", "")).replace("T", " ")[:16]
    return f"{at} UTC, {d.get('profile')} profile, {d.get('run')} run"


#: the folder, relative to the report folder, where the report writer puts each plot as an SVG file
FIGURES_DIR = "figures"


def plot_files(claim: dict) -> list[tuple[str | None, dict, str]]:
    """The SVG file of each plot of ``claim``: ``[(reading name or None for a claim-level plot, plot spec,
    path relative to the report folder)]``, the claim's own plots first, then its readings' in order.

    Paths are ``figures/<claim id>-<k>.svg``, k = 1, 2, ... over the claim's plots, so the Markdown links
    and the files the report writer writes agree.
    """
    specs = [(None, p) for p in claim.get("plots") or []]
    specs += [(r["name"], p) for r in claim.get("readings", []) for p in r.get("plots") or []]
    # then the failure profiles that have a sweep (profile_plot_spec): each reading's, and a false claim's
    # own only when no reading carries the same profile (a report written before readings carried one)
    profiles = [(r["name"], profile_plot_spec(r.get("failure_profile"))) for r in claim.get("readings", [])]
    own = profile_plot_spec(claim_failure_profile(claim))
    if own is not None and all(spec != own for _n, spec in profiles):
        profiles.insert(0, (None, own))
    specs += [(name, spec) for name, spec in profiles if spec is not None]
    return [(name, p, f"{FIGURES_DIR}/{claim['id']}-{k}.svg") for k, (name, p) in enumerate(specs, start=1)]


def profile_plot_spec(profile: dict | None) -> dict | None:
    """The plot spec of a failure profile (``{"kind": "failure_profile", "data": profile}``, drawn by
    :func:`.plots.failure_profile_svg`) when it has a ``sweep`` (its draws taken at several values of one
    parameter); ``None`` otherwise: a profile at one setting is text only."""
    if not profile or not profile.get("sweep"):
        return None
    return {"kind": "failure_profile", "data": profile}


def profile_plot_file(claim: dict, profile: dict | None) -> str | None:
    """The path (relative to the report folder, :func:`plot_files`) of the figure file that draws ``profile``
    for ``claim``; ``None`` when the profile has no sweep."""
    spec = profile_plot_spec(profile)
    return next((rel for _n, s, rel in plot_files(claim) if spec is not None and s == spec), None)


def figure_path(path: Any) -> str | None:
    """``path`` (a figure entry's or a plot file's, relative to the report folder) when it names a file in
    the report's own :data:`FIGURES_DIR` folder by a plain relative path (``figures/9889-relu2.png``:
    ASCII letters, digits, ``_``, ``.``, ``-``, ``/``; no ``..`` or ``.`` part, no absolute path, no URL);
    None for anything else, which the renderers neither embed nor link. Only the path is checked; the
    HTML renderer also checks where the file resolves (no symbolic link out of the folder)."""
    if not isinstance(path, str) or not re.fullmatch(r"[\w./-]+", path, re.ASCII):
        return None
    parts = path.split("/")
    if len(parts) < 2 or parts[0] != FIGURES_DIR or any(p in ("", ".", "..") for p in parts):
        return None
    return path
