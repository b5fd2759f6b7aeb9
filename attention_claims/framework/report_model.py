"""The report model: typed dataclasses for ``reports/claims.json`` (schema 1 of ``docs/verdicts.md``).

:func:`attention_claims.framework.report.build_report` builds a :class:`Report` from the plugin's
state, in one place; ``Report.to_json()`` is what ``claims.json`` holds and what the renderers
(:mod:`attention_claims.framework.render`) read. ``ClaimEntry.from_json`` reads a claim back from a
previous report, so that a run deciding a subset can keep every other claim's last decision.
The JSON Schema of ``to_json()`` is ``docs/claims.schema.json``.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import asdict, dataclass, field
from typing import Any

SCHEMA = 1
VERDICT_ORDER = ("true", "false", "caveat", "unchecked", "undecided", "error")
REPORT_FORMATS = ("json", "md", "html")
"""The report files, by format: ``claims.json`` (for tools), ``claims.md`` with its ``figures/`` (for
GitHub) and ``claims.html`` (for a browser)."""


@dataclass
class Environment:
    """Where the run happened: versions, devices, the Hypothesis profile, xdist workers."""

    python: str
    platform: str
    torch: str | None
    hypothesis: str
    mpmath: str
    python_flint: str | None
    devices: list[str]
    hypothesis_profile: str
    xdist_workers: int | str | None = None


@dataclass
class RanOn:
    """Where and when one run happened: a reading's ``ran_on`` (``device`` is the device its checks
    ran on: ``cpu``, or the GPU's name such as ``NVIDIA H100 80GB HBM3``), and each entry of the
    report's ``runs`` (``device`` is then every device the run could use, joined by ``, ``), so that
    reports from several machines (a CPU job, a GPU runner, shards) can be merged reading by reading
    (``attention-claims merge``).

    ``host``: the machine's name; ``torch``, ``cuda`` (torch's CUDA version, None without CUDA),
    ``driver`` (the NVIDIA driver's version, None without one); ``commit``: the project's git commit
    (None outside a git checkout); ``profile``: the Hypothesis profile; ``date``: ISO 8601, UTC."""

    host: str
    device: str
    torch: str | None
    cuda: str | None
    driver: str | None
    commit: str | None
    profile: str
    date: str

    @classmethod
    def from_json(cls, data: dict | None) -> RanOn | None:
        """Read one back (None stays None).

        Raises:
            KeyError, TypeError: the entry does not have the schema's fields.
        """
        if data is None:
            return None
        return cls(**{f.name: data[f.name] for f in dataclasses.fields(cls)})


@dataclass
class Run:
    """What this run was.

    ``complete``: it decided every claim and finished; ``partial``: it decided a subset
    (``--claims-select``, ``-k``, explicit paths) and the other claims keep their last decision;
    ``interrupted``: it stopped early (Ctrl-C, a collection error, an internal error); a run in which
    a check did not finish (a claim whose verdict is ``error``) is not ``complete`` either;
    ``in_progress``: the file was written when the run started and the run has not finished
    (or was killed); ``exitstatus`` is pytest's, ``None`` while in progress; ``updated``: the
    ``generated`` time of the earlier report whose decisions this partial run kept, if any;
    ``unfinished``: how many checks of the claims it decided did not finish (each named in its
    claim's ``errors``; the claim's verdict is ``error``); ``notices``: warnings about what the run found
    at its start (an earlier report set aside because it could not be read or its verdicts or counts
    disagree with its readings; the previous run's report left in progress), not errors of this run.
    """

    complete: bool
    partial: bool
    interrupted: bool
    exitstatus: int | None
    errors: list[str] = field(default_factory=list)
    in_progress: bool = False
    updated: str | None = None
    unfinished: int = 0
    notices: list[str] = field(default_factory=list)


@dataclass
class CounterexampleEntry:
    """The counterexample shown for a failed reading (the certified one first). ``certificate_strength``:
    ``proved`` or ``recomputed`` when ``certified`` (docs/verdicts.md, "Certified"), else ``None``."""

    message: str
    example: Any = field(default_factory=dict)
    certified: bool = False
    certificate: str = ""
    certificate_strength: str | None = None
    boundary: str | None = None
    hypothesis: str | None = None
    reproduce_failure: str | None = None
    check: str = ""
    reproduce: str = ""

    @classmethod
    def from_json(cls, data: dict) -> CounterexampleEntry:
        """Read one back from ``claims.json`` (unknown keys are dropped).

        Raises:
            KeyError: ``message`` is missing.
        """
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        entry = cls(**{"message": data["message"], **known})
        entry.certificate_strength = strength_of_entry(entry.certified, entry.certificate_strength)
        return entry


def strength_of_entry(certified: bool, strength: str | None) -> str | None:
    """A certified entry's strength: ``strength`` when stated, else ``recomputed``, the weaker word
    (:data:`attention_claims.framework.evidence.STRENGTH_DEFAULT`; a report written before readings carried the
    field: its certificate's words are not read as a proof); ``None`` when not certified."""
    if not certified:
        return None
    if strength is not None:
        return strength
    from .evidence import STRENGTH_DEFAULT

    return STRENGTH_DEFAULT


@dataclass
class Figure:
    """An image a check drew; ``path`` is relative to the report folder when it lies inside it."""

    path: str
    caption: str
    check: str


@dataclass
class Plot:
    """Data a check attached for the HTML report to draw (``CheckLog.plot``): ``kind`` is one of
    :data:`attention_claims.framework.evidence.PLOT_KINDS`, ``data`` its fields (plain JSON),
    ``check`` the node id of the check that attached it."""

    kind: str
    data: dict
    check: str = ""


PROFILE_KEYS = ("class", "setting", "trials", "failures", "summary")
"""The keys of a failure profile (``ReadingEntry.failure_profile``, ``ClaimEntry.failure_profile``), in order;
an optional ``sweep`` follows them (:meth:`attention_claims.framework.evidence.CheckLog.failure_profile`)."""


def failure_profile_from_json(data: dict | None) -> dict | None:
    """A failure profile read back from ``claims.json`` (None stays None): ``{"class", "setting", "trials",
    "failures", "summary"}`` (:meth:`attention_claims.framework.evidence.CheckLog.failure_profile`), keys in
    order, unknown keys dropped; its optional ``sweep`` (the draws by parameter value) kept after them, checked
    (:func:`attention_claims.framework.evidence.check_sweep`).

    Raises:
        KeyError: a key other than ``summary`` is missing.
        ValueError, TypeError: ``trials`` or ``failures`` is not an integer, or the sweep is malformed.
    """
    if data is None:
        return None
    out = {"class": str(data["class"]), "setting": str(data["setting"]), "trials": int(data["trials"]),
           "failures": int(data["failures"]), "summary": str(data.get("summary", ""))}
    if data.get("sweep") is not None:
        from .evidence import check_sweep

        out["sweep"] = check_sweep(data["sweep"], trials=out["trials"], failures=out["failures"])
    return out


@dataclass
class ReadingEntry:
    """One reading of a claim and what its checks found in the run that decided the claim.

    ``errors`` names each check of the reading that did not finish and what happened (it raised
    something other than a counterexample, its worker crashed, pytest reported an internal error);
    the outcome is then ``error``. In a merged report it also names the runs where the reading errored
    while another run ran it (``attention-claims merge``), so that a crash is never replaced by silence.
    """

    name: str
    as_stated: bool
    statement: str
    condition: dict[str, str]
    outcome: str  # held | failed | skipped | error (a check did not finish: see ``errors``)
    checks: list[str]
    examples: int
    evidence: str
    counterexample: CounterexampleEntry | None
    certified: bool
    certificate_strength: str | None = None  # proved | recomputed when certified (docs/verdicts.md "Certified")
    figures: list[Figure] = field(default_factory=list)
    kind: str | None = None  # numerical | scope | empirical: set on a failed reading other than the as-stated one
    plots: list[Plot] = field(default_factory=list)
    ran_on: RanOn | None = None  # the run this outcome came from; None for a reading that did not run
    failure_profile: dict | None = None  # PROFILE_KEYS, on a failed reading whose check measured one
    errors: list[str] = field(default_factory=list)  # each check that did not finish: "<check>: <what happened>"

    @classmethod
    def from_json(cls, data: dict) -> ReadingEntry:
        """Read one back from ``claims.json``.

        Raises:
            KeyError, TypeError: the entry does not have the schema's fields.
        """
        cx = data.get("counterexample")
        entry = CounterexampleEntry.from_json(cx) if cx else None
        certified = bool(data.get("certified"))
        strength = data.get("certificate_strength") or (entry.certificate_strength if entry else None)
        return cls(name=data["name"], as_stated=bool(data["as_stated"]), statement=data["statement"],
                   condition=dict(data.get("condition") or {}), outcome=data["outcome"],
                   checks=list(data.get("checks", [])), examples=int(data.get("examples", 0)),
                   evidence=data.get("evidence", ""),
                   counterexample=entry, certified=certified,
                   certificate_strength=strength_of_entry(certified, strength),
                   figures=[Figure(**f) for f in data.get("figures", [])], kind=data.get("kind"),
                   plots=[Plot(kind=p["kind"], data=p["data"], check=p.get("check", ""))
                          for p in data.get("plots", [])],
                   ran_on=RanOn.from_json(data.get("ran_on")),
                   failure_profile=failure_profile_from_json(data.get("failure_profile")),
                   errors=[str(e) for e in data.get("errors") or []])


@dataclass
class Place:
    """Where a claim is stated: a document, its section, the verbatim quote."""

    document: str
    section: str
    quote: str


@dataclass
class Decided:
    """When and how a claim's verdict was last computed: ``at`` (ISO 8601, UTC), the Hypothesis
    ``profile``, and ``run``: ``"full"`` (a run of every claim), ``"partial"`` (a subset run) or ``"merged"``
    (folded from several reports by ``attention-claims merge``)."""

    at: str
    profile: str
    run: str


@dataclass
class ClaimEntry:
    """One claim, its verdict and its readings.

    ``selected``: whether this run was asked to decide it; ``decided``: when it was last decided
    (this run or an earlier one), ``None`` when no run has decided it yet; ``failure_profile``: for a
    ``false`` claim, the failure profile of its failed as-stated reading (how often it fails at the
    document's own parameters), ``None`` when its check measured none.
    """

    id: str
    title: str
    verdict: str
    expected: str
    agrees: bool
    reason: str
    statement: str
    formal: str | None
    source: Place
    also_in: list[Place]
    unchecked_reason: str | None
    notes: str | None
    record: str
    readings: list[ReadingEntry]
    errors: list[str]
    selected: bool = True
    decided: Decided | None = None
    topics: list[str] = field(default_factory=list)  # the record's own topics; empty: derived by the renderer
    failure_profile: dict | None = None  # a false claim's: its failed as-stated reading's failure profile

    @classmethod
    def from_json(cls, data: dict) -> ClaimEntry:
        """Read a claim back from an earlier ``claims.json``.

        Raises:
            KeyError, TypeError, ValueError: the entry does not have the schema's fields.
        """
        decided = data.get("decided")
        return cls(id=data["id"], title=data["title"], verdict=data["verdict"], expected=data["expected"],
                   agrees=bool(data["agrees"]), reason=data["reason"], statement=data["statement"],
                   formal=data.get("formal"), source=Place(**data["source"]),
                   also_in=[Place(**p) for p in data.get("also_in", [])],
                   unchecked_reason=data.get("unchecked_reason"), notes=data.get("notes"),
                   record=data.get("record", ""),
                   readings=[ReadingEntry.from_json(r) for r in data.get("readings", [])],
                   errors=list(data.get("errors", [])), selected=bool(data.get("selected", True)),
                   decided=Decided(**decided) if decided else None, topics=list(data.get("topics", [])),
                   failure_profile=failure_profile_from_json(data.get("failure_profile")))

    @property
    def documents(self) -> list[str]:
        """The documents that state the claim: its source, then its ``also_in`` documents."""
        return list(dict.fromkeys([self.source.document] + [p.document for p in self.also_in]))


@dataclass
class Counts:
    """Verdict counts: ``total`` counts each claim once; ``by_document`` counts a claim under every
    document that states it (so the repost 001 shows the 004 claims it restates);
    ``by_source_document`` counts it under its source document only (its rows sum to ``total``)."""

    total: dict[str, int]
    by_document: dict[str, dict[str, int]]
    by_source_document: dict[str, dict[str, int]]

    @classmethod
    def of(cls, claims: list[ClaimEntry]) -> Counts:
        """The counts of ``claims``, documents in order (seed files, then cited papers)."""
        per_doc: dict[str, dict[str, int]] = {}
        per_source: dict[str, dict[str, int]] = {}
        total = dict.fromkeys(VERDICT_ORDER, 0)
        for c in claims:
            for doc in c.documents:
                per_doc.setdefault(doc, dict.fromkeys(VERDICT_ORDER, 0))[c.verdict] += 1
            per_source.setdefault(c.source.document, dict.fromkeys(VERDICT_ORDER, 0))[c.verdict] += 1
            total[c.verdict] += 1
        return cls(total=total, by_document={d: per_doc[d] for d in sorted(per_doc, key=document_key)},
                   by_source_document={d: per_source[d] for d in sorted(per_source, key=document_key)})


@dataclass
class Trust:
    """The trust section (see :mod:`attention_claims.framework.trust`): planted variants, stability
    across seeds, mutation testing; each ``None`` when never run."""

    planted: dict | None = None
    stability: dict | None = None
    mutation: dict | None = None


@dataclass
class Report:
    """The whole report: ``to_json()`` is the content of ``claims.json``; ``fresh`` (not written)
    names the claims this run decided, the others being kept from an earlier report."""

    generated: str
    environment: Environment
    run: Run
    trust: Trust
    claims: list[ClaimEntry]
    schema: int = SCHEMA
    fresh: frozenset[str] = frozenset()  # ids of the claims decided by this run (not written to JSON)
    runs: list[RanOn] = field(default_factory=list)  # this run; a merged report lists every run merged
    documents: dict[str, dict[str, str]] = field(default_factory=dict)  # provenance of the cited documents

    @property
    def counts(self) -> Counts:
        return Counts.of(self.claims)

    def to_json(self) -> dict:
        """The report as plain JSON values, keys in the documented order."""
        return {"schema": self.schema, "generated": self.generated, "environment": plain(self.environment),
                "runs": [plain(r) for r in self.runs], "run": plain(self.run), "counts": plain(self.counts),
                "trust": plain(self.trust), "documents": plain(self.documents), "claims": [plain(c) for c in self.claims]}


_FIELDS: dict[type, tuple[str, ...]] = {}


def plain(value: Any) -> Any:
    """``value`` as plain JSON values, the same as :func:`dataclasses.asdict` gives for a dataclass
    (dataclasses to dicts, lists, tuples and dicts rebuilt, anything else deep-copied), about 3× faster
    on a report's claims (asdict deep-copies every string and number; 25 ms for the 160 claims)."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    cls = type(value)
    if cls is list:
        return [plain(v) for v in value]
    if cls is dict:
        return {plain(k): plain(v) for k, v in value.items()}
    names = _FIELDS.get(cls)
    if names is None and dataclasses.is_dataclass(cls):
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    if names is not None:
        return {n: plain(getattr(value, n)) for n in names}
    if isinstance(value, (list, dict, tuple)):  # subclasses, named tuples: asdict's own rules
        return asdict(_Box(value))["value"]
    return copy.deepcopy(value)


@dataclass
class _Box:
    value: Any


def document_key(doc: str) -> tuple[int, str]:
    """Sort key of documents: the seed documents in file order, then the cited papers."""
    return (0 if not doc.startswith("arXiv:") else 1, doc)
