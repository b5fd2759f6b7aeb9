"""The pytest plugin: claim markers in, true/false/caveat report out.

Registered through the ``pytest11`` entry point ``attention_claims`` (see
``pyproject.toml``), the way pytest-benchmark and pytest-html register. It

- declares the ``claim`` marker and the ``--claims-*`` options (``pytest --markers``,
  ``pytest --help``);
- loads and validates the claim records at configure time (a malformed record is a
  usage error naming file, claim and field);
- validates every ``@pytest.mark.claim(ID, reading=NAME)`` at collection time;
- turns each check's result into an outcome: an ``AssertionError`` is a counterexample,
  any other exception an error of the suite, under any mark;
- marks a counterexample to a claim expected ``false`` or ``caveat`` as an expected
  failure (``x``), since it is the expected outcome, not a failure of the run;
- computes verdicts (``attention_claims.framework.verdict``) on the controller, writes ``reports/claims.json``,
  ``claims.md`` and ``claims.html``, prints a summary, and sets a non-zero exit status when
  a verdict disagrees with ``expected``.

Two classes, one of which ``pytest_configure`` registers, as pytest's ``junitxml`` and
pytest-json-report do: :class:`ClaimsController` in the process that reports (a plain run, or
xdist's controller: no ``config.workerinput``) and :class:`ClaimsWorker` in an xdist worker. Both
share the collection and run hooks (:class:`_ClaimsHooks`), which attach everything the
controller needs to each test report's ``user_properties`` (which xdist serialises); a worker
sends its collected claim/reading coverage through ``workeroutput``; only the controller
writes the report.

A check decides exactly one reading of one claim: a second ``claim`` mark on it, from any level (module
``pytestmark``, class, function, parameter), and an ``xfail`` mark on it are usage errors naming the check
(:func:`_mark_problems`). One check function may still decide several claims through parameters, one
``claim`` mark each (``claim_params``). How a check ended is observed per phase where it ran
(:func:`_observed_phase`) and folded by :func:`attention_claims.framework.verdict.check_outcome`, the one
place that decides it.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from . import config as claims_config
from . import profiles
from .evidence import CheckLog, Counterexample, RefuteArgumentError, resolve_deferred
from .neutral import has_unsafe, neutral
from .records import Claim, ClaimRecordError, load_catalog, load_manifest
from .report_model import REPORT_FORMATS, Report
from .sentences import SentenceDataError
from .sentences import load_all as load_sentences

LOG_KEY = pytest.StashKey[CheckLog]()
PREFIX = "attention_claims."


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("attention-claims", "attention-claims verdicts and report")
    claims_config.add_ini_options(parser)
    group.addoption(
        "--claims-dir",
        default=None,
        help="folder of claim records (*.toml); default: the ini option claims_dir, else claims/ beside the ini "
        "file (without one, the plugin is inert)",
    )
    group.addoption(
        "--claims-sources",
        default=None,
        help="folder of the source documents that every quote is verified against (listed with their SHA-256 in "
        "its SHA256SUMS); default: the ini option claims_sources, else sources/ beside the ini file",
    )
    group.addoption(
        "--claims-report-dir",
        default=None,
        help="where claims.json / claims.md / claims.html are written; default: the ini option claims_report_dir, "
        "else reports/ beside the ini file",
    )
    group.addoption(
        "--claims-select",
        action="append",
        default=[],
        metavar="ID[,ID...]",
        help="decide only these claims: run only the checks that decide them (repeatable; ids as in claims/)",
    )
    group.addoption(
        "--claims-document",
        action="append",
        default=[],
        metavar="DOC",
        help="decide only the claims stated in this document: its number (003), its file name, or an arXiv id "
        "(arXiv:2006.04768); repeatable",
    )
    group.addoption(
        "--claims-shard",
        default=None,
        metavar="K/N",
        help="decide only shard K of N (1 <= K <= N): every N-th claim in id order, starting with the K-th, "
        "so N machines or CI jobs each run one shard and 'attention-claims merge' folds their reports",
    )
    group.addoption(
        "--claims-no-report", action="store_true", default=False, help="compute verdicts but write no report files"
    )
    group.addoption(
        "--claims-report-formats",
        default=",".join(REPORT_FORMATS),
        metavar="FORMAT[,FORMAT...]",
        help="which report files to write: json (claims.json, always written), md (claims.md and figures/), "
        "html (claims.html); default: all three. The files of a format not written are left as they are, "
        "from an earlier run",
    )


@dataclass
class CheckResult:
    nodeid: str
    claim: str
    reading: str
    outcome: str = "pending"  # verdict.CHECK_OUTCOMES: passed | counterexample | skipped | error | pending
    examples: int = 0
    evidence: str = ""
    counterexample: dict | None = None
    skip_reason: str = ""
    error: str = ""
    figures: list = field(default_factory=list)  # [{"path": absolute path, "caption": str}]
    plots: list = field(default_factory=list)  # [{"kind": str, "data": {...}}] (CheckLog.plot)
    failure_profile: dict | None = None  # {"class", "setting", "trials", "failures", "summary"} (CheckLog.failure_profile)
    phases: dict = field(default_factory=dict)  # when -> verdict.Phase, as observed where the check ran
    fixtures: tuple[str, ...] = ()  # the check's pytest fixtures: not part of Hypothesis's example (terminal_lines)

    @property
    def key(self) -> tuple[str, str, str]:
        """``(nodeid, claim, reading)``: the check and the one reading it decides."""
        return (self.nodeid, self.claim, self.reading)


@dataclass
class State:
    catalog: list[Claim]
    by_id: dict[str, Claim]
    report_dir: Path | None
    sources_dir: Path
    report_formats: tuple[str, ...] = REPORT_FORMATS  # --claims-report-formats, in REPORT_FORMATS order
    collected: set = field(default_factory=set)  # (claim, reading, nodeid)
    results: dict[tuple[str, str, str], CheckResult] = field(default_factory=dict)  # CheckResult.key -> result
    partial: bool = False
    active: bool = False
    errors: list[str] = field(default_factory=list)
    report: Report | None = None  # the report of this run, once built
    planted: dict = field(default_factory=dict)  # kind -> [(claim or None, passed), ...] of trust_planted tests
    planted_counts: dict | None = None  # this run's planted counts (trust.planted_counts), once computed
    base: dict = field(default_factory=dict)  # claim id -> ClaimEntry: last decisions of the report found at start
    base_generated: str | None = None  # the 'generated' time of that report
    base_loaded: bool = False
    notices: list[str] = field(default_factory=list)  # warnings for the person running (a report set aside)
    report_written: bool = False  # the final report reached the report folder
    selected: frozenset[str] | None = None  # --claims-select / --claims-document; None: every claim
    project_root: Path | None = None  # the ini file's folder (the git commit of the report's runs)
    running: dict[str, None] = field(default_factory=dict)  # node ids started and not finished (logstart/logfinish)
    usage_error: str = ""  # an xdist worker refused the checks (a bad claim marker): the message, exit 4
    stopped: bool = False  # the session stopped early (-x, --maxfail, no xdist worker left): some checks never ran
    unfinished: dict[str, str] = field(default_factory=dict)  # node id -> what happened, for a check that did not
    # finish and whose claim is not known (a crash before its first report); what the end of the run cannot map
    # to a claim stays here, and in errors


STATE_KEY = pytest.StashKey[State]()


_PREVIOUS_PATHS = pytest.StashKey[object]()


def pytest_unconfigure(config: pytest.Config) -> None:
    """Give :func:`attention_claims.framework.config.current` back what it was before this session (a
    pytester run inside another session must not leave its folders behind)."""
    if _PREVIOUS_PATHS in config.stash:
        claims_config.activate(config.stash[_PREVIOUS_PATHS])


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """Keep the project's rootdir, ini file and ``addopts`` when a path-valued option of this plugin names
    a folder outside the project (:func:`attention_claims.framework.config.repair_rootdir`)."""
    claims_config.repair_rootdir(early_config, parser, args)


_HYPOTHESIS_FAILING_EXAMPLES = "_hypothesis_failing_examples"
"""Where Hypothesis leaves a failing test's examples on the pytest item (``hypothesis.core``) for its
pytest plugin to turn into a patch adding ``@example`` lines (``hypothesis.extra._patching``, libcst)."""


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> None:
    """No Hypothesis patch for a claim check's failing examples: a counterexample is the check's
    finding, recorded in the report with its reproduce command, not an ``@example`` to add to the
    check file (for an installed plugin, a file in site-packages). Hypothesis would otherwise parse the
    whole check module with libcst, where libcst is installed, once per failing check (about 0.3 s to
    import it and up to seconds a module), and write a file under ``.hypothesis/patches``. Tests
    without a ``claim`` marker keep Hypothesis's patches."""
    if item.get_closest_marker("claim") is not None and getattr(item, _HYPOTHESIS_FAILING_EXAMPLES, None):
        setattr(item, _HYPOTHESIS_FAILING_EXAMPLES, None)


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform has one), at least 1."""
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (in the project's ``addopts``): a worker per available core for a full run; no
    workers (in-process, no start-up cost) for one core, ``--collect-only``, a run that selects
    claims with ``--claims-select`` / ``--claims-document``, or one that names its tests
    (``pytest path::test``, as a counterexample's reproduce command does). The report is the same either way
    (``tests/framework/test_trust.py`` compares a serial and an xdist run)."""

    if config.option.collectonly or config.getoption("claims_select") or config.getoption("claims_document"):
        return 0
    args = [a for a in config.args if not a.startswith("-")]
    if args and all("::" in a for a in args):  # named tests (the reproduce commands): too few to share out
        return 0
    cores = available_cores()
    return cores if cores > 1 else 0


THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
"""The variables that set the thread pools of torch (OpenMP), NumPy/SciPy (OpenBLAS) and MKL builds."""


def _share_cores_among_workers(workers: int) -> None:
    """Give each of ``workers`` xdist workers its share of the cores for its BLAS and OpenMP thread
    pools (``cores // workers``, at least 1), through the environment the workers start with; a
    variable the user set is kept.

    By default every worker's torch and OpenBLAS start a thread per core, so two workers on two cores
    run four busy threads, and OpenBLAS's threads spin while they wait: measuring the trained models
    (batched SVDs) took 156 s in a full run instead of about 70 s, and the README's warm run 125-135 s
    instead of about 101 s. Called from the controller's ``pytest_xdist_setupnodes``, before any worker
    starts, with the number of workers xdist really starts (``--tx 2*popen`` counts 2).
    """
    import os

    if workers < 1:
        return
    cores = available_cores()
    for name in THREAD_VARIABLES:
        os.environ.setdefault(name, str(max(1, cores // workers)))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "claim(id, reading=NAME): tie this check to reading NAME of the claim record ID "
        "(attention-claims: a TOML record of the claims_dir ini option's folder, claims/ by default)",
    )
    config.addinivalue_line(
        "markers",
        "trust_planted(kind, claim=ID): a planted-variant test of this project's checks, kind 'falsehood', "
        "'truth' or 'reason' (the claim has nothing to plant); its outcome feeds the report's trust section "
        "(kill rate, pass rate, by claim)",
    )
    if config.getoption("hypothesis_profile", None) is None:
        from hypothesis import settings

        settings.load_profile(profiles.default_profile())
    paths = claims_config.from_pytest(config)
    config.stash[_PREVIOUS_PATHS] = claims_config.activate(paths)
    if not paths.active:
        return  # a project without claims: the plugin stays out of the way (no catalog, no report)
    records, sources = paths.claims_dir, paths.sources_dir
    report_dir = None if config.getoption("claims_no_report") else paths.report_dir
    formats = _report_formats(config.getoption("claims_report_formats"))
    if report_dir is not None and not hasattr(config, "workerinput") and not config.option.collectonly:
        from .report import ReportFolderError, check_report_folder

        try:
            check_report_folder(report_dir, sources_dir=sources, claims_dir=records)
        except ReportFolderError as exc:
            raise pytest.UsageError(f"attention-claims: {exc}") from None
    try:
        catalog = load_catalog(records, sources)
        load_sentences(Path(sources) / "sentences")  # malformed: a usage error now, not at report time
        load_manifest(Path(sources))
    except ClaimRecordError as exc:
        what = "malformed sentence classification" if isinstance(exc, SentenceDataError) else (
            "malformed claim record" if exc.subject == "claim record" else exc.subject)
        raise pytest.UsageError(f"attention-claims: {what}: {exc}") from None
    state = State(
        catalog=catalog,
        by_id={c.id: c for c in catalog},
        report_dir=report_dir,
        sources_dir=sources,
        report_formats=formats,
        selected=_selection(config, catalog),
        project_root=paths.root,
    )
    config.stash[STATE_KEY] = state
    # As pytest's junitxml and pytest-json-report do: the reporter lives on the controller only
    # (a process without ``workerinput``); an xdist worker gets the small class that forwards.
    plugin_class = ClaimsWorker if hasattr(config, "workerinput") else ClaimsController
    config.pluginmanager.register(plugin_class(config, state), "attention-claims-session")


@pytest.fixture
def claim_log(request: pytest.FixtureRequest) -> CheckLog:
    """The evidence log of the current check (see :class:`attention_claims.framework.evidence.CheckLog`)."""
    log = request.node.stash.get(LOG_KEY, None)
    if log is None:
        log = CheckLog()
        request.node.stash[LOG_KEY] = log
    return log


class Claimed:
    """The ``[claimed]`` table of the record a check is tied to (see :mod:`attention_claims.framework.expr`).

    ``claimed.eval("expression", gamma=...)`` evaluates a formula the record states;
    errors name the record file, the claim and the field. ``key in claimed`` says whether the table has
    the field.

    A check receives it from the plugin's ``claimed`` fixture (the record of the check's one ``claim``
    marker); a test of the kit may build one from a record.

    Args:
        claim: the parsed record (:class:`attention_claims.framework.records.Claim`).

    Examples:
        >>> from attention_claims.testkit import Claimed, record
        >>> claimed = Claimed(record("decay-sparsity-closed-form"))  # in a check: the claimed fixture
        >>> "s_squared" in claimed, "no_such_field" in claimed
        (True, False)
    """

    def __init__(self, claim: Claim):
        self.claim = claim

    def __contains__(self, key: str) -> bool:
        return key in self.claim.claimed

    def get(self, key: str, default=None):
        """The raw value of ``claimed.<key>``, or ``default`` when the record has no such field (for an
        optional field; :meth:`text` for a required one).

        Args:
            key: the field's name in the record's ``[claimed]`` table.
            default: what to return when the field is missing.

        Returns:
            The TOML value as read (a formula ``str``, a number, a list ...) or ``default``.

        Examples:
            >>> from attention_claims.testkit import Claimed, record
            >>> claimed = Claimed(record("decay-sparsity-closed-form"))
            >>> claimed.get("domain"), claimed.get("no_such_field", "absent")
            ('0 < lam <= 1', 'absent')
        """
        return self.claim.claimed.get(key, default)

    def text(self, key: str) -> str:
        """The raw value of ``claimed.<key>``.

        Args:
            key: the field's name in the record's ``[claimed]`` table.

        Returns:
            The TOML value as read: the formula as written (a ``str``), or a number.

        Raises:
            ClaimRecordError: the record has no such field (the message names the record's file, the claim
                and ``claimed.<key>``).

        Examples:
            >>> from attention_claims.testkit import Claimed, record
            >>> claimed = Claimed(record("rank-qk-at-most-d"))
            >>> claimed.text("bound")
            'd'
            >>> claimed.text("no_such_field")  # doctest: +ELLIPSIS
            Traceback (most recent call last):
                ...
            attention_claims.framework.records.ClaimRecordError: ...rank-qk-at-most-d.toml: claim 'rank-qk-at-most-d': field 'claimed.no_such_field': missing: the check needs this formula
        """
        if key not in self.claim.claimed:
            raise ClaimRecordError(self.claim.path, self.claim.id, f"claimed.{key}",
                                   "missing: the check needs this formula")
        return self.claim.claimed[key]

    def eval(self, key: str, *, exact: bool = False, floating: bool = False, interval: bool = False, **names):
        """Evaluate ``claimed.<key>`` (a formula string, or a number) with ``names``: in mpmath, or in
        rationals (``exact``), float64 (``floating``) or arb balls (``interval``: an enclosure over the
        variables' balls, for certificates; :func:`attention_claims.framework.expr.evaluate`).

        Args:
            key: the field's name in the record's ``[claimed]`` table.
            exact: evaluate in rationals (``fractions.Fraction``; pass rational or integer values).
            floating: evaluate in float64.
            interval: evaluate in arb balls (python-flint), an enclosure of the true value.
            **names: the formula's variables and their values (in the same arithmetic).

        Returns:
            The formula's value: an ``mpmath.mpf`` (default), a ``Fraction`` (``exact``), a ``float``
            (``floating``) or a ``flint.arb`` (``interval``); a number field is returned as it is (an
            ``arb`` of it with ``interval``).

        Raises:
            ClaimRecordError: missing field, or a formula the check cannot evaluate.
            Counterexample: with ``exact``, the formula divides by exactly 0 at ``names`` (certified: the
                claimed formula is undefined at a point of its domain).
            ZeroDivisionError: a division by exactly zero in mpmath or float64 (``floating``).

        Examples:
            >>> from fractions import Fraction
            >>> from attention_claims.testkit import Claimed, record
            >>> claimed = Claimed(record("decay-sparsity-closed-form"))
            >>> claimed.text("s_squared")
            '(1 - lam**n) / (n*(1 - lam)) * (1 + lam) / (1 + lam**n)'
            >>> claimed.eval("s_squared", exact=True, lam=Fraction(1, 2), n=2)  # S(a)^2 of a = (1/2, 1)
            Fraction(9, 10)
            >>> claimed.eval("s_squared", floating=True, lam=0.5, n=2)
            0.9
        """
        from .expr import ExpressionError, evaluate

        value = self.text(key)
        if not isinstance(value, str):
            if interval:
                from flint import arb

                return arb(repr(value)) if isinstance(value, float) else arb(value)
            return value
        try:
            return evaluate(value, exact=exact, floating=floating, interval=interval, **names)
        except ExpressionError as exc:
            raise ClaimRecordError(self.claim.path, self.claim.id, f"claimed.{key}", str(exc)) from None
        except ZeroDivisionError:
            if not exact:
                raise
            # In exact arithmetic a division by zero is a fact about the claimed formula at
            # a point the check drew from the claim's domain: the formula is undefined there.
            raise Counterexample(
                f"the claimed {key} = {value} is undefined (division by exactly 0) at "
                + ", ".join(f"{k} = {v}" for k, v in names.items()),
                example={k: str(v) for k, v in names.items()},
                certified=True,
                certificate="exact rational arithmetic (fractions.Fraction): a denominator is exactly 0",
                certificate_strength="proved",
            ) from None


@pytest.fixture
def claimed(request: pytest.FixtureRequest) -> Claimed:
    """What the record of the current check's claim states, as data (``[claimed]`` table).

    A check carries exactly one ``claim`` mark (:func:`_mark_problems`), whose record this is.

    Raises:
        pytest.UsageError: the check has no ``claim`` marker.
    """
    targets = _claim_markers(request.node)
    target = targets[0] if targets else None
    if target is None:
        raise pytest.UsageError(f"{request.node.nodeid}: the 'claimed' fixture needs a @pytest.mark.claim marker")
    state = request.config.stash[STATE_KEY]
    return Claimed(state.by_id[target[0]])


def shard_of(catalog: list[Claim], shard: str) -> frozenset[str]:
    """The claim ids of shard ``"K/N"``: the claims whose position in id order is K-1 modulo N, so the N
    shards partition the catalog into parts whose sizes differ by at most one, the same on every machine
    with the same catalog.

    Raises:
        pytest.UsageError: ``shard`` is not ``K/N`` with integers 1 <= K <= N.
    """
    try:
        k, n = (int(x) for x in shard.split("/"))
    except ValueError:
        k = n = 0
    if not 1 <= k <= n:
        raise pytest.UsageError(f"attention-claims: --claims-shard {shard!r}: expected K/N with 1 <= K <= N, e.g. 2/4")
    ids = sorted(c.id for c in catalog)
    return frozenset(ids[k - 1::n])


def _selection(config: pytest.Config, catalog: list[Claim]) -> frozenset[str] | None:
    """The claim ids chosen by ``--claims-select`` and ``--claims-document`` (their union), within
    ``--claims-shard`` when given (:func:`shard_of`), or ``None`` when none was given (every claim is
    selected).

    Raises:
        pytest.UsageError: an id that no record has, or a document that no claim cites, named
            with the ids or documents that exist; an empty ``--claims-select`` / ``--claims-document``
            value (``""``, ``","``); a malformed shard.
    """
    for name, values in (("--claims-select", config.getoption("claims_select")),
                         ("--claims-document", config.getoption("claims_document"))):
        empty = [v for v in values if not any(part.strip() for part in v.split(","))]
        if empty:  # an empty selection never means "every claim"
            raise pytest.UsageError(f"attention-claims: {name} {empty[0]!r}: an empty selection (no claim id or "
                                    f"document); name at least one, or leave {name} out to decide every claim")
    ids = [i.strip() for opt in config.getoption("claims_select") for i in opt.split(",") if i.strip()]
    docs = [d.strip() for d in config.getoption("claims_document") if d.strip()]
    shard = config.getoption("claims_shard", None)
    part = shard_of(catalog, shard) if shard else None
    if not ids and not docs:
        return part
    known = {c.id for c in catalog}
    unknown = [i for i in ids if i not in known]
    if unknown:
        close = sorted(k for k in known if any(u in k or k in u for u in unknown))[:10]
        hint = f" (similar ids: {', '.join(close)})" if close else " (see claims/ for the ids)"
        raise pytest.UsageError(f"attention-claims: --claims-select: no claim record with id {', '.join(unknown)}{hint}")
    chosen = set(ids)
    for doc in docs:
        hits = {c.id for c in catalog if any(d == doc or d.startswith(doc + "_") for d in c.documents)}
        if not hits:
            cited = sorted({d for c in catalog for d in c.documents})
            raise pytest.UsageError(f"attention-claims: --claims-document: no claim is stated in {doc!r} "
                                    f"(documents: {', '.join(cited)})")
        chosen |= hits
    return frozenset(chosen) if part is None else frozenset(chosen) & part


def _claim_markers(item: pytest.Item) -> list[tuple[str, str]]:
    """Every ``(claim id, reading)`` that ``item``'s ``claim`` markers name, closest first, once each.

    A check that carries more than one is refused at collection (:func:`_mark_problems`); until then
    (and in hooks that run for every test) all are listed.

    Raises:
        pytest.UsageError: a marker without exactly one claim id, or without ``reading=`` (or with
            any other keyword), naming the check.
    """
    out: list[tuple[str, str]] = []
    for marker in item.iter_markers("claim"):
        if len(marker.args) != 1 or not isinstance(marker.args[0], str):
            raise pytest.UsageError(f"attention-claims: {item.nodeid}: @pytest.mark.claim needs exactly one claim id")
        extra = set(marker.kwargs) - {"reading"}
        if not isinstance(marker.kwargs.get("reading"), str) or extra:
            raise pytest.UsageError(
                f"attention-claims: {item.nodeid}: @pytest.mark.claim({marker.args[0]!r}, reading=NAME) needs "
                f"reading= and nothing else (got {sorted(marker.kwargs)})"
            )
        target = (marker.args[0], marker.kwargs["reading"])
        if target not in out:
            out.append(target)
    return out


def _mark_problems(item: pytest.Item) -> list[str]:
    """What is wrong with the marks of one claim check (none for a test without a ``claim`` mark):

    - more than one ``claim`` mark, from any level (a module's ``pytestmark``, a class, the function, a
      parameter): a check decides exactly one reading of one claim (``docs/verdicts.md``), and a mark
      inherited from the module would otherwise make the check's counterexample count against a reading
      it never tested;
    - an ``xfail`` mark: whether a counterexample fails the run follows the record's ``expected``, and an
      exception other than an assertion is an error under any mark, so an ``xfail`` mark could only hide
      one (a check that cannot run here skips, with ``pytest.skip`` or a ``skip`` / ``skipif`` mark, whose
      reason the report shows).
    """
    marks = list(item.iter_markers("claim"))
    if not marks:
        return []
    out = []
    if len(marks) > 1:
        named = ", ".join(f"claim({', '.join(map(repr, m.args))}"
                          + "".join(f", {k}={v!r}" for k, v in m.kwargs.items()) + ")" for m in marks)
        out.append(f"{item.nodeid}: {len(marks)} claim marks ({named}), from the function, its class, its module's "
                   "pytestmark or its parameters: a check decides exactly one reading of one claim (write one check "
                   "per reading)")
    if any(True for _ in item.iter_markers("xfail")):
        out.append(f"{item.nodeid}: an xfail mark on a claim check is refused: whether a counterexample fails the "
                   "run follows the record's 'expected', and an exception other than an assertion is an error under "
                   "any mark; remove it (a check that cannot run here uses pytest.skip or a skip/skipif mark)")
    return out


def _target_problem(state: State, nodeid: str, cid: str, reading: str) -> str | None:
    claim = state.by_id.get(cid)
    if claim is None:
        return f"{nodeid}: claim marker names unknown claim '{cid}' (no record with that id)"
    if claim.reading(reading) is None:
        names = ", ".join(r.name for r in claim.readings) or "none"
        return f"{nodeid}: claim '{cid}' ({claim.path}) has no reading '{reading}' (its readings: {names})"
    return None


def _report_formats(value: str) -> tuple[str, ...]:
    """The formats ``--claims-report-formats`` names (comma-separated), with ``json`` always among them
    (``claims.json`` is what a later subset run keeps the last decisions from, and what tools and CI's
    snapshot read), in :data:`REPORT_FORMATS` order.

    Raises:
        pytest.UsageError: an unknown format, or none.
    """
    names = [v.strip() for v in str(value).split(",") if v.strip()]
    unknown = [n for n in names if n not in REPORT_FORMATS]
    if unknown or not names:
        raise pytest.UsageError(f"attention-claims: --claims-report-formats {value!r}: "
                                f"{'unknown format ' + ', '.join(map(repr, unknown)) if unknown else 'no format'}; "
                                f"choose from {', '.join(REPORT_FORMATS)}")
    return tuple(f for f in REPORT_FORMATS if f in names or f == "json")


def _compact_expected_counterexamples(item: pytest.Item) -> None:
    """Format a counterexample of a check whose claims are all expected false or caveat in Python's
    native traceback style instead of pytest's long style, unless a traceback style other than the
    default was given (``--tb``) or more detail was asked for (``--xfail-tb``, ``--fulltrace``, ``-l``).

    Such a failure is the expected result: the plugin turns it into an xfail and the report keeps the
    counterexample from the exception itself, so by default nobody reads this traceback. pytest's long style
    parses the whole source file of every frame (``getstatementrange_ast``) and Hypothesis formats a
    failing test's traceback twice more through ``item.repr_failure``; for the catalog's expected
    counterexamples that was about a quarter of the checks' CPU time. Any other exception (a crash of
    the check) keeps pytest's own representation.
    """
    default = item.repr_failure

    def repr_failure(excinfo: pytest.ExceptionInfo[BaseException], *args, **kwargs) -> object:
        option = item.config.option
        detail = (getattr(option, "tbstyle", "auto") != "auto" or getattr(option, "xfail_tb", False)
                  or getattr(option, "fulltrace", False) or getattr(option, "showlocals", False))
        if excinfo.errisinstance(AssertionError) and not detail:
            return excinfo.getrepr(style="native")
        return default(excinfo, *args, **kwargs)

    item.repr_failure = repr_failure  # type: ignore[method-assign]


def _skip_reason(report: pytest.TestReport) -> str:
    lr = report.longrepr
    if isinstance(lr, tuple) and len(lr) == 3:
        return str(lr[2]).removeprefix("Skipped: ")
    return str(lr or "")


def _props(report: pytest.TestReport) -> dict:
    """The ``attention_claims.*`` user properties of a test report, as a dict."""
    return dict(p for p in report.user_properties if isinstance(p, (tuple, list)) and len(p) == 2)


def _counterexample_dict(exc: AssertionError) -> dict:
    """What the report stores of a counterexample (an ``AssertionError``, a
    :class:`~attention_claims.framework.evidence.Counterexample` or a bare one), with Hypothesis's
    falsifying example and ``@reproduce_failure`` blob when it added them as notes."""
    cx = exc.to_dict() if isinstance(exc, Counterexample) else {
        "message": str(exc).strip() or "assertion failed",
        "example": {},
        "certified": False,
        "certificate": "",
        "certificate_strength": None,
        "boundary": None,
    }
    notes = [n for n in getattr(exc, "__notes__", []) if isinstance(n, str)]
    falsifying = [n for n in notes if n.startswith(("Falsifying", "Failing test case"))]
    cx["hypothesis"] = "\n".join(falsifying) if falsifying else None
    blob = [n for n in notes if "@reproduce_failure" in n]
    cx["reproduce_failure"] = blob[0].strip() if blob else None
    return cx


def _update_result(res: CheckResult, report: pytest.TestReport, props: dict) -> None:
    """Fold one phase's test report (setup, call or teardown) into the check's result: the phase as the
    plugin observed it where the check ran (``attention_claims.phase``, :func:`_observed_phase`), never
    pytest's report outcome (which marks and plugins rewrite), then the check's outcome from every phase
    so far by :func:`attention_claims.framework.verdict.check_outcome`, the one place that decides it."""
    from .verdict import Phase, check_outcome

    observed = props.get(PREFIX + "phase")
    if observed is not None:
        kind, detail = json.loads(observed)
    elif report.failed:  # a report this plugin did not see being made: a failure is an error, never a finding
        last = str(report.longreprtext).strip().splitlines()
        kind, detail = "error", last[-1] if last else "failed"
    else:
        kind, detail = ("skipped", _skip_reason(report)) if report.skipped else ("passed", "")
    res.phases[report.when] = Phase(report.when, kind, neutral(str(detail)))
    if report.when == "call":
        res.examples = int(props.get(PREFIX + "examples", 0))
        res.evidence = neutral(props.get(PREFIX + "evidence", ""))
        res.figures = neutral(json.loads(props.get(PREFIX + "figures", "[]")))
        res.plots = neutral(json.loads(props.get(PREFIX + "plots", "[]")))
        res.failure_profile = neutral(json.loads(props.get(PREFIX + "failure_profile", "null")))
        if kind == "counterexample":
            res.counterexample = neutral(json.loads(props[PREFIX + "counterexample"]))
            res.fixtures = tuple(map(str, json.loads(props.get(PREFIX + "fixtures", "[]"))))
    res.outcome, detail = check_outcome(res.phases)
    res.skip_reason = detail if res.outcome == "skipped" else ""
    res.error = detail if res.outcome == "error" else ""
    if res.outcome != "counterexample":
        res.counterexample = None


class CheckExited(RuntimeError):
    """A claim check called ``os._exit`` (see :meth:`_ClaimsHooks.pytest_runtest_protocol`): an ``error``."""


def _observed_phase(when: str, exc: BaseException | None) -> tuple[str, str]:
    """``(kind, detail)`` of one phase of a claim check from the exception it raised (None: none), in the
    process that ran it: the only place where an exception becomes a kind (``docs/verdicts.md``,
    "Outcomes"). An ``AssertionError`` in the call phase (a :class:`~attention_claims.framework.evidence.Counterexample`
    included) is a ``counterexample``; a skip (``pytest.skip``, ``importorskip``, a ``skip`` or ``skipif``
    mark that fired) in setup or call is ``skipped`` with its reason; anything else, in any phase and
    under any mark (``pytest.xfail()`` called by the check, ``pytest.fail()``, ``SystemExit``, a skip in
    teardown, an assertion in a fixture), is an ``error`` naming the exception."""
    if exc is None:
        return "passed", ""
    if isinstance(exc, pytest.skip.Exception) and when != "teardown":
        return "skipped", str(getattr(exc, "msg", "") or exc)
    if isinstance(exc, pytest.xfail.Exception):
        return "error", (f"pytest.xfail() called by a claim check ({getattr(exc, 'msg', exc)}): a claim check asserts "
                         "its reading; whether a counterexample fails the run follows the record's 'expected'")
    if when == "call" and isinstance(exc, AssertionError):
        return "counterexample", ""
    if isinstance(exc, pytest.skip.Exception):
        return "error", f"skipped in teardown, after the check ran: {getattr(exc, 'msg', exc)}"
    return "error", f"{type(exc).__name__}: {exc}"


class _ClaimsHooks:
    """The hooks that run wherever checks are collected and run: in a plain run's only process
    and in every xdist worker. They validate the markers, apply ``--claims-select``, and attach
    to each test report (``user_properties``, which xdist serialises) what the controller needs."""

    def __init__(self, config: pytest.Config, state: State):
        self.config = config
        self.state = state

    # -- collection -------------------------------------------------------------------
    def pytest_ignore_collect(self, collection_path: Path, config: pytest.Config) -> bool | None:
        # With --claims-select / --claims-document, a test file that names none of the selected
        # claims cannot decide one: markers, claim_params and reading_params name claim ids
        # literally (tests/framework/test_selection.py checks this for every check), so the file is
        # not even imported, and one claim runs in seconds instead of collecting the whole suite.
        selected = self.state.selected
        if selected is None or collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
            return None
        text = collection_path.read_text(encoding="utf-8", errors="replace")
        if any(f'"{cid}"' in text or f"'{cid}'" in text for cid in selected):
            return None
        return True

    def pytest_itemcollected(self, item: pytest.Item) -> None:
        # Claim ids (and "id:reading") become keywords, so ``pytest -k <claim id>`` runs exactly
        # the checks that decide that claim.
        for cid, reading in _claim_markers(item):
            item.extra_keyword_matches.update({cid, f"{cid}:{reading}"})

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session, config, items) -> None:
        """Validate every claim marker; keep only the checks of the selected claims.

        Raises:
            pytest.UsageError: a marker names an unknown claim or a reading its record lacks; a check carries
                more than one claim mark (from any level) or an ``xfail`` mark (:func:`_mark_problems`).
        """
        state = self.state
        problems = [p for item in items for p in _mark_problems(item)]
        problems += [p for item in items for cid, reading in _claim_markers(item)
                     if (p := _target_problem(state, item.nodeid, cid, reading))]
        if problems:
            # pytest calls pytest_collection_finish in a ``finally`` after this hook: the flag keeps its own
            # "no check decides" error from replacing this one, which names the marker (issue 44)
            self._bad_markers = True
            message = "attention-claims: bad claim marker:\n  " + "\n  ".join(problems)
            if hasattr(config, "workerinput"):
                # an xdist worker: a UsageError here would crash xdist's scheduler (INTERNALERROR, exit 3); the
                # worker runs nothing and hands the message to the controller, which exits 4 with it
                config.workeroutput[PREFIX + "usage"] = message
                items[:] = []
                return
            raise pytest.UsageError(message)
        if state.selected is not None:
            # --claims-select / --claims-document: only the checks that decide a selected claim run
            # (the suite's own tests in tests/ are not claim checks and are deselected too).
            chosen = [any(cid in state.selected for cid, _ in _claim_markers(item)) for item in items]
            keep = [item for item, c in zip(items, chosen, strict=True) if c]
            drop = [item for item, c in zip(items, chosen, strict=True) if not c]
            if drop:
                config.hook.pytest_deselected(items=drop)
                items[:] = keep
        for item in items:
            targets = _claim_markers(item)
            for cid, reading in targets:
                state.collected.add((cid, reading, item.nodeid))
            expected = {state.by_id[cid].expected for cid, _ in targets if cid in state.by_id}
            if expected and expected <= {"false", "caveat"}:
                _compact_expected_counterexamples(item)

    def pytest_deselected(self, items) -> None:
        if any(item.get_closest_marker("claim") is not None for item in items):
            self.state.partial = True
            gone = {item.nodeid for item in items}  # deselected after this plugin listed them: they will not run
            self.state.collected = {t for t in self.state.collected if t[2] not in gone}

    # -- running -----------------------------------------------------------------------
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem):
        """While a claim check runs (setup, call and teardown), ``os._exit`` in the process running it raises
        :class:`CheckExited` instead of ending the process: an ``os._exit`` runs no hook, so in a serial run
        the run would end with exit status 0 and no verdict (issue 43, finding 9); raised, it is the check's
        ``error``. A child the check forked (another pid) still exits for real."""
        if item.get_closest_marker("claim") is None:
            yield
            return
        real, pid = os._exit, os.getpid()

        def guarded(status: int) -> None:
            if os.getpid() != pid:
                real(status)
            raise CheckExited(f"the check called os._exit({status}), which would have ended the run with no "
                              "verdict; a claim check asserts its reading or raises")

        os._exit = guarded
        try:
            yield
        finally:
            os._exit = real

    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        if item.get_closest_marker("claim") is not None and LOG_KEY not in item.stash:
            item.stash[LOG_KEY] = CheckLog()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        outcome = yield
        rep: pytest.TestReport = outcome.get_result()
        trust = item.get_closest_marker("trust_planted")
        if trust is not None and trust.args:
            rep.user_properties.append((PREFIX + "trust", str(trust.args[0])))
            if trust.kwargs.get("claim"):
                rep.user_properties.append((PREFIX + "trust_claim", str(trust.kwargs["claim"])))
        note = getattr(self, "_collected_note", None)
        if note is not None:  # an xdist worker's first report: what it collected (ClaimsWorker.pytest_collection_finish),
            # on this report's own copy of the item's properties, so that no later phase (nor JUnit XML) repeats it
            rep.user_properties = [*rep.user_properties, (PREFIX + "collected", note)]
            self._collected_note = None
        targets = _claim_markers(item)
        if not targets:
            return
        props = rep.user_properties
        props.append((PREFIX + "targets", json.dumps(targets)))
        exc = call.excinfo.value if call.excinfo is not None else None
        if rep.when != "call":
            kind, detail = _observed_phase(rep.when, exc)
            _record_phase(rep, kind, detail)
            _neutral_longrepr(rep)
            return
        log = item.stash.get(LOG_KEY, None)
        if log is not None:
            props.append((PREFIX + "examples", log.examples))
            props.append((PREFIX + "evidence", log.summary()))
            if log.figures:
                props.append((PREFIX + "figures", json.dumps(log.figures)))
            if log.profile is not None:
                props.append((PREFIX + "failure_profile", json.dumps(log.profile, allow_nan=False)))
                if log.profile.get("sweep") and not item.config.getoption("claims_no_report", False):
                    from .render.model import profile_plot_spec
                    from .render.plots import warm

                    warm([profile_plot_spec(log.profile)])  # its plot (issue 46), drawn here like the plots below
            if log.plots:
                props.append((PREFIX + "plots", json.dumps(log.plots, allow_nan=False)))
                if not item.config.getoption("claims_no_report", False):
                    from .render.plots import warm

                    warm(log.plots)  # drawn here, in parallel with the other checks, so writing the report only reads
        if isinstance(exc, Counterexample) and exc.certify is not None:
            try:
                exc = resolve_deferred(exc)  # once, on the counterexample Hypothesis reports after shrinking
            except Exception as err:  # noqa: BLE001 - any failure of the certification is a suite error
                exc = err
        kind, detail = _observed_phase("call", exc)
        if kind == "counterexample":
            try:
                cx = json.dumps(_counterexample_dict(exc), allow_nan=False)
            except (RefuteArgumentError, TypeError, ValueError) as err:  # typed evidence, or none
                kind, detail = "error", f"{type(err).__name__}: {err}"
        if kind == "counterexample":
            props.append((PREFIX + "counterexample", cx))
            props.append((PREFIX + "fixtures", json.dumps(list(getattr(item, "fixturenames", ())))))
            expected = {self.state.by_id[cid].expected for cid, _ in targets if cid in self.state.by_id}
            if expected and expected <= {"false", "caveat"}:
                # the expected outcome for every claim the check decides: not a failure of the run
                names = ", ".join(f"{cid} [{reading}]" for cid, reading in targets)
                rep.outcome = "skipped"
                rep.wasxfail = f"counterexample to {names} (expected {'/'.join(sorted(expected))})"
        elif kind == "error":
            props.append((PREFIX + "error", detail))
        _record_phase(rep, kind, detail)
        _neutral_longrepr(rep)


def _neutral_longrepr(rep: pytest.TestReport) -> None:
    """pytest's own text of a claim check's failure or skip (the traceback, the short summary's line, the
    skip reason) with the check's control and bidirectional characters escaped
    (:func:`attention_claims.framework.neutral.neutral_text`), as the plugin's own lines and the report
    have them: a check's message must not drive the terminal. Left as pytest made it when nothing needs
    escaping (its colours and short-summary line kept)."""
    lr = rep.longrepr
    if lr is None:
        return
    if isinstance(lr, tuple) and len(lr) == 3:  # a skip: (path, line, reason)
        rep.longrepr = (lr[0], lr[1], neutral(str(lr[2])))
        return
    text = str(lr)
    if has_unsafe(text):
        rep.longrepr = neutral(text)


def _record_phase(rep: pytest.TestReport, kind: str, detail: str) -> None:
    """Attach the phase as observed (:func:`_observed_phase`) to its report, for the controller's
    :func:`_update_result`; a phase that ended in ``error`` is a failure in pytest's report too (an
    ``xfail`` mark, ``pytest.xfail()`` or a plugin may have turned it into a skip or a pass), so that the
    run fails and the terminal shows it."""
    rep.user_properties.append((PREFIX + "phase", json.dumps([kind, detail])))
    if kind == "error" and not rep.failed:
        rep.outcome = "failed"
        rep.longrepr = detail
        if hasattr(rep, "wasxfail"):
            del rep.wasxfail


class ClaimsWorker(_ClaimsHooks):
    """The plugin in an xdist worker: it collects and runs checks and sends the controller what it
    collected (``workeroutput``, and with its first test report, so that the controller knows every check
    even when the worker dies before it finishes); it never builds or writes a report."""

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.config.workeroutput[PREFIX + "collected"] = sorted(self.state.collected)
        self.config.workeroutput[PREFIX + "partial"] = self.state.partial
        self._collected_note = json.dumps({"collected": sorted(self.state.collected), "partial": self.state.partial})

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """The worker's last hook, after every plugin's own end (its results were sent at
        ``pytest_sessionfinish``): ``gc.freeze()``, so that the interpreter's final garbage collection
        skips the worker's heap (Hypothesis, torch and mpmath objects of a whole run): the controller
        waited about 4 s for two workers to exit at the end of the full run, under 1 s after this.
        Nothing is lost: reference counting still frees every object, ``weakref.finalize`` and
        ``atexit`` callbacks still run; only reference cycles created from here on are not collected
        before the process ends (https://docs.python.org/3/library/gc.html#gc.freeze)."""
        import gc

        gc.freeze()


class ClaimsController(_ClaimsHooks):
    """The plugin in the controlling process (a plain run, or xdist's controller): it gathers every
    check's result from the test reports, computes the verdicts, writes the report and sets the
    exit status."""

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_setupnodes(self, config: pytest.Config, specs) -> None:
        """xdist is about to start ``len(specs)`` workers: share the cores among them."""
        _share_cores_among_workers(len(specs))

    # -- collection -------------------------------------------------------------------
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Start deciding once checks were collected; a ``--claims-select`` / ``--claims-document`` run
        (in this process) that collected no check of a selected claim with readings is a usage error
        naming the claims, not pytest's bare "collected 0 items".

        Raises:
            pytest.UsageError: as above, or from :meth:`_activate`.
        """
        state = self.state
        if self.config.option.collectonly or getattr(self, "_bad_markers", False):
            return
        if state.collected:
            self._activate()
        elif state.selected and not getattr(self.config.option, "numprocesses", None):
            lonely = [c for c in state.catalog if c.id in state.selected and c.readings]
            if lonely:
                names = "; ".join(f"{c.id} ({c.path}: readings {', '.join(r.name for r in c.readings)})" for c in lonely)
                raise pytest.UsageError(
                    f"attention-claims: no check decides the selected claim{'s' if len(lonely) != 1 else ''} {names}: write one in the "
                    "test paths with @pytest.mark.claim(\"<id>\", reading=\"<name>\") (attention-claims new writes a "
                    "skeleton), or check the test paths (a check whose marker misspells the claim id is not collected under a "
                    "selection: pytest --co without it names every bad marker)")

    def _activate(self) -> None:
        """Start deciding: check that every reading has a check (a full run only), write the
        in-progress report.

        Raises:
            pytest.UsageError: a full run in which some reading has no check.
        """
        state = self.state
        missing = self._missing()
        explicit = self.config.args_source == pytest.Config.ArgsSource.ARGS
        selected = bool(self.config.getoption("keyword", "") or self.config.getoption("markexpr", ""))
        if state.selected is not None:
            # --claims-select / --claims-document: every reading of a selected claim needs a check
            # (files that do not name a selected claim were not even collected); the rest is not selected.
            state.partial = True
            missing = [(claim, name) for claim, name in missing if claim.id in state.selected]
            selected = False
        if missing and not (explicit or selected or (state.partial and state.selected is None)):
            lines = [f"{claim.path}: claim '{claim.id}': reading '{name}' has no check" for claim, name in missing]
            raise pytest.UsageError("attention-claims: readings without checks:\n  " + "\n  ".join(lines))
        if missing:
            state.partial = True
        self._start_deciding()

    def _start_deciding(self) -> None:
        """Mark the run as deciding claims, keep the last decisions of the report already there,
        and replace it by an in-progress one (which keeps them too, with their dates), under the
        report folder's lock; remove the temporary files a killed run left there."""
        self.state.active = True
        if self.state.report_dir is None:
            self._load_base()
            return
        from .report import ReportFolderError, remove_stale_temporaries, report_lock, write_in_progress

        try:
            with report_lock(self.state.report_dir):
                remove_stale_temporaries(self.state.report_dir)
                self._load_base()
                write_in_progress(self.state, self.config)
        except (OSError, ReportFolderError) as exc:
            self._load_base()
            self._notice(f"the in-progress report was not written: {exc}")

    def _load_base(self, *, again: bool = False) -> None:
        """Read the last decisions of the report in the report folder (once, or ``again``: the final
        write re-reads it under the lock, so a run that finished meanwhile is merged, not lost)."""
        state = self.state
        if not state.base_loaded or again:
            from .report import load_base

            # the first read says when the previous run left its report in progress; the final read finds
            # this run's own in-progress report there
            state.base, state.base_generated, notice = load_base(state.report_dir, state.catalog,
                                                                 previous_run=not state.base_loaded)
            state.base_loaded = True
            if notice:
                self._notice(notice)

    def _notice(self, text: str) -> None:
        """Tell the person running now (a yellow line) and again at the end of the run."""
        self.state.notices.append(text)
        tr = self.config.pluginmanager.get_plugin("terminalreporter")
        if tr is not None:
            tr.write_line(f"attention-claims: warning: {text}", yellow=True)

    def _missing(self) -> list:
        covered = {(c, r) for c, r, _ in self.state.collected}
        return [
            (claim, r.name)
            for claim in self.state.catalog
            for r in claim.readings
            if (claim.id, r.name) not in covered
        ]

    # -- xdist controller --------------------------------------------------------------
    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error) -> None:
        out = getattr(node, "workeroutput", {}) or {}
        if out.get(PREFIX + "usage"):
            self.state.usage_error = out[PREFIX + "usage"]
        self.state.collected.update(tuple(x) for x in out.get(PREFIX + "collected", []))
        if out.get(PREFIX + "partial"):
            self.state.partial = True

    # -- checks that did not finish ---------------------------------------------------
    def pytest_runtest_logstart(self, nodeid: str, location) -> None:
        self.state.running[nodeid] = None

    def pytest_runtest_logfinish(self, nodeid: str, location) -> None:
        self.state.running.pop(nodeid, None)

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched) -> None:
        """An xdist worker died while it ran ``crashitem`` (killed, out of memory, a segfault): the check
        did not finish, so its readings are ``error`` and its claims' verdicts ``error`` (never skipped)."""
        what = str(report.longrepr or f"the worker crashed while running {crashitem!r}")
        self._did_not_finish(crashitem, f"{what} (the worker process died: killed, out of memory or a segfault)")

    def pytest_internalerror(self, excrepr, excinfo) -> None:
        """pytest reported an internal error (in this process, or an xdist worker's): every check that had
        started and not finished did not finish."""
        lines = [ln for ln in str(excrepr).strip().splitlines() if ln.strip()]
        last = lines[-1].strip() if lines else "no message"
        for nodeid in list(self.state.running):
            self._did_not_finish(nodeid, f"pytest reported an internal error while it ran: {last}")

    def _did_not_finish(self, nodeid: str, what: str) -> None:
        """Record that check ``nodeid`` did not finish (``what`` happened): each ``(claim, reading)`` it decides
        gets the outcome ``error``; a check not known yet to decide any is resolved at the end of the run
        (:meth:`_resolve_unfinished`)."""
        self.state.running.pop(nodeid, None)
        what = neutral(what)
        hits = [r for r in self.state.results.values() if r.nodeid == nodeid]
        hits += [self.state.results.setdefault((n, c, rd), CheckResult(n, c, rd))
                 for c, rd, n in sorted(self.state.collected) if n == nodeid]
        hits = list({id(r): r for r in hits}.values())
        if not hits:
            self.state.unfinished[nodeid] = what
        for res in hits:
            res.outcome, res.error = "error", what
        if hits and not self.state.active:
            self._start_deciding()

    def _resolve_unfinished(self) -> None:
        """Checks that did not finish before any report named their claim: mapped through what the workers
        collected, now that every worker has sent it; a test that no claim marker is known to name is a run
        error naming it (the run is not complete: it may have been a check)."""
        pending, self.state.unfinished = self.state.unfinished, {}
        for nodeid, what in pending.items():
            self._did_not_finish(nodeid, what)
        self.state.errors.extend(f"{nodeid} did not finish: {what}" for nodeid, what in self.state.unfinished.items())

    # -- results -----------------------------------------------------------------------
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = _props(report)
        kind = props.get(PREFIX + "trust")
        if kind is not None and (report.when == "call" or (report.when == "setup" and report.failed)):
            self.state.planted.setdefault(kind, []).append((props.get(PREFIX + "trust_claim"), bool(report.passed)))
        if PREFIX + "collected" in props:  # a worker's collection, sent with its first report
            note = json.loads(props[PREFIX + "collected"])
            self.state.collected.update(tuple(x) for x in note["collected"])
            self.state.partial = self.state.partial or bool(note["partial"])
        targets = json.loads(props.get(PREFIX + "targets", "[]"))
        if targets and not self.state.active:
            # Under xdist the controller collects nothing itself: the first result of a claim check
            # says that this run decides claims (a run of tests/ alone never touches the report).
            self._start_deciding()
        for cid, reading in targets:
            res = self.state.results.setdefault((report.nodeid, cid, reading), CheckResult(report.nodeid, cid, reading))
            _update_result(res, report, props)

    # -- the end -----------------------------------------------------------------------
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        state = self.state
        if state.usage_error:  # a worker refused the checks (a bad claim marker): exit 4, no report written
            import sys

            print(state.usage_error, file=sys.stderr)
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
            return
        if self.config.option.collectonly:
            return  # --collect-only decides nothing and writes nothing
        if state.planted and state.report_dir is not None:
            self._record_planted()
        if state.unfinished:
            self._resolve_unfinished()
        # -x / --maxfail, or xdist's workers gone (--max-worker-restart reached): checks it collected never ran
        never = {n for _c, _r, n in state.collected} - {r.nodeid for r in state.results.values()}
        state.stopped = bool(session.shouldfail or session.shouldstop or (state.results and never))
        broken = int(exitstatus) in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR) or state.stopped
        if not broken:  # every check ran to its end: one that never told how it ended did not finish
            for res in state.results.values():
                if res.outcome == "pending":
                    res.outcome, res.error = "error", "did not finish: no result of its call phase reached the plugin"
        # a selection of claims that have no checks by design (unchecked): decided without running anything
        checkless = bool(state.selected) and all(not state.by_id[c].readings for c in state.selected)
        if checkless and not state.active and not broken:
            state.partial = True  # a selection: the claims not selected keep their last decision
            self._start_deciding()
            if session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
                session.exitstatus = pytest.ExitCode.OK
        if not (state.active or state.results or broken):
            return
        from .report import build_report, write_reports

        if not state.collected:
            state.collected.update((r.claim, r.reading, r.nodeid) for r in state.results.values())
        missing = self._missing()
        if missing and not state.partial:
            explicit = self.config.args_source == pytest.Config.ArgsSource.ARGS
            if not explicit:
                state.errors.extend(
                    f"{claim.path}: claim '{claim.id}': reading '{name}' has no check" for claim, name in missing
                )
            state.partial = True
        if state.report_dir is None:
            self._load_base()
            state.report = report = build_report(state, self.config, int(exitstatus))
        else:
            from .report import ReportFolderError, report_lock

            try:
                # Read-merge-write under the folder's lock: a run that wrote the report since this
                # one started (two runs at once) is merged, never overwritten with older decisions.
                with report_lock(state.report_dir):
                    self._load_base(again=True)
                    state.report = report = build_report(state, self.config, int(exitstatus))
                    unplaced = write_reports(report, state.report_dir, sources_dir=state.sources_dir,
                                             formats=state.report_formats)
                for line in unplaced or []:  # a quote the views cannot highlight (issue 44.3)
                    self._notice(line)
                state.report_written = True
            except (OSError, ReportFolderError) as exc:
                if state.report is None:
                    state.report = build_report(state, self.config, int(exitstatus))
                report = state.report
                state.errors.append(f"the report was not written to {state.report_dir} ({exc}); "
                                    "the files there are as they were")
                session.exitstatus = pytest.ExitCode.USAGE_ERROR
        bad = [c for c in report.claims if c.id in report.fresh and (not c.agrees or c.errors)]
        if (bad or state.errors) and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _record_planted(self) -> None:
        """Keep this run's planted-variant counts in ``reports/planted.json`` (only when every
        planted test that was collected ran, so a ``-k`` subset never overwrites them)."""
        from .trust import PLANTED_FILE, planted_counts

        counts = planted_counts(self.state.planted, {cid: c.expected for cid, c in self.state.by_id.items()})
        self.state.planted_counts = counts
        if (self.state.partial or self.config.getoption("keyword", "") or self.config.getoption("markexpr", "")
                or any("::" in str(arg) for arg in self.config.args)):  # a node-id subset, not every planted test
            return
        from .report_folder import ReportFolder, ReportFolderError

        try:  # through the report folder: a planted.json the suite did not write is never replaced
            ReportFolder(self.state.report_dir).write({PLANTED_FILE: json.dumps(counts, indent=1) + "\n"})
        except (OSError, ReportFolderError) as exc:
            self._notice(f"{PLANTED_FILE} was not written: {exc}")

    def pytest_terminal_summary(self, terminalreporter, exitstatus: int, config: pytest.Config) -> None:
        """With ``-v``: one line per claim decided by this run (its verdict and reason)."""
        report = self.state.report
        if report is None or config.option.verbose <= 0:
            return
        tr = terminalreporter
        tr.section("attention-claims verdicts")
        shown = [c for c in report.claims if c.id in report.fresh]
        width = max((len(c.id) for c in shown), default=10)
        for c in shown:
            flag = "" if c.agrees else f"  <-- expected {c.expected}"
            tr.write_line(f"{c.id:<{width}}  {c.verdict:<9} {c.reason}{flag}")

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """The last lines of the run, after pytest's own summary: the false claims, one line each with
        a one-line counterexample, what disagrees with ``expected`` or errored, and the verdict tally."""
        tr = config.pluginmanager.get_plugin("terminalreporter")
        if tr is None or self.state.report is None:
            return
        shown = self.state.report_dir if self.state.report_written else None
        if shown is not None:  # the file a person opens first: claims.md, else claims.html, else claims.json
            fmt = next(f for f in ("md", "html", "json") if f in self.state.report_formats)
            shown = shown / f"claims.{fmt}"
        found = [(r.claim, r.reading, r.nodeid, r.counterexample, r.fixtures) for r in sorted(
            self.state.results.values(), key=lambda r: r.key) if r.outcome == "counterexample" and r.counterexample]
        for line, red in terminal_lines(self.state.report, self.state.errors, shown,
                                        width=None if config.option.verbose > 0  # -v: every line whole
                                        else tr._tw.fullwidth if getattr(tr, "isatty", False) else 160,
                                        notices=self.state.notices, found=found):
            tr.write_line(line, red=red, yellow=line.startswith("attention-claims: warning:"),
                          bold=line.startswith("verdicts:"))


def _falsifying_line(text: str) -> str:
    """Hypothesis's "Falsifying example" / "Failing test case" note on one line, without the check's
    evidence log argument (``claim_log=CheckLog(...)``, the fixture's state, not the example)."""
    flat = " ".join(text.split())
    while (start := flat.find("=CheckLog(")) != -1:
        name = start
        while name > 0 and (flat[name - 1].isalnum() or flat[name - 1] == "_"):
            name -= 1
        depth, end = 0, start + len("=CheckLog")
        for end in range(start + len("=CheckLog"), len(flat)):
            depth += {"(": 1, ")": -1}.get(flat[end], 0)
            if depth == 0:
                break
        flat = flat[:name] + flat[end + 1:].lstrip(", ")
    return flat.replace("( ", "(").replace(", )", ")").replace(" )", ")")


_HYPOTHESIS_HEAD = re.compile(r"(Falsifying example|Failing test case|Falsifying explicit example): (\w+)\($")
_HYPOTHESIS_ARG = re.compile(r" {4}([A-Za-z_]\w*)=(.*)$")


def _drawn_example(text: str, fixtures: tuple[str, ...] | frozenset = ()) -> str:
    """Hypothesis's falsifying example (its note ``Failing test case: test_x(``, then one ``name=value,`` line
    per argument indented by four spaces, then ``)``, as ``hypothesis`` prints it) on one line with only what
    Hypothesis drew: the check's pytest ``fixtures`` (``claim_log``'s ``CheckLog`` state, a fixture's table of
    values) are the check's inputs, not the example, and are left out; those other than ``claim_log`` (which
    every check has) are named at the end (``(pytest fixtures not shown: table)``). A note of another form is
    flattened whole, less the ``CheckLog`` (:func:`_falsifying_line`)."""
    lines = text.strip().splitlines()
    head = _HYPOTHESIS_HEAD.match(lines[0].strip()) if lines else None
    if head is None or lines[-1].strip() != ")":
        return _falsifying_line(text)
    args: list[list[str]] = []
    for line in lines[1:-1]:
        arg = _HYPOTHESIS_ARG.match(line)
        if arg:
            args.append([arg.group(1), arg.group(2)])
        elif args:
            args[-1][1] += " " + line.strip()
        else:
            return _falsifying_line(text)
    shown, hidden = [], []
    for name, value in args:
        value = " ".join(value.split()).rstrip(",")
        if name in fixtures or value.startswith("CheckLog("):
            hidden.append(name)
        else:
            shown.append(f"{name}={value}".replace("( ", "(").replace("[ ", "[").replace(" )", ")").replace(" ]", "]"))
    named = [name for name in hidden if name != "claim_log"]  # every check has its evidence log: not named
    tail = f" (pytest fixtures not shown: {', '.join(named)})" if named else ""
    return f"{head.group(1)}: {head.group(2)}({', '.join(shown)}){tail}"


TERMINAL_ITEM_LINES = 3
"""The most terminal lines one item of the run's summary takes without ``-v`` (a false claim's counterexample,
an example, a check that did not finish): what does not fit is left out at a word boundary and counted."""

LEFT_OUT = re.compile(r" … \(\+\d+ characters? left out\)")
"""The mark :func:`fit_lines` puts where it left text out."""


def fit_lines(text: str, width: int | None, *, indent: str = "      ", lines: int = TERMINAL_ITEM_LINES,
              tail: str = "") -> list[str]:
    """``text`` then ``tail`` as terminal lines of at most ``width`` characters (``None``: one line, whole).

    Line breaks in ``text`` (a multi-line message) are read as spaces. A text longer than ``width`` wraps at
    spaces onto lines that start with ``indent`` (a word longer than a whole line wraps where the line ends),
    up to ``lines`` lines; what is left after those is not printed, and the last line ends with
    `` … (+N characters left out)`` (:data:`LEFT_OUT`): a line is never cut without saying so and how much.
    ``tail`` (a failure profile) is kept whole after the text, on the last line or a line of its own.

    A ``width`` below ``len(indent) + 40`` (a very narrow terminal) is read as that.

    Raises:
        ValueError: ``lines`` below 1.
    """
    from .render.model import plural

    if lines < 1:
        raise ValueError(f"fit_lines: lines = {lines}, must be at least 1")
    flat = re.sub(r"[ \t]*\r?\n\s*", " ", text.strip("\r\n"))
    if width is not None:
        width = max(width, len(indent) + 40)  # a very narrow terminal: the terminal wraps what is longer
    if width is None or len(flat) + len(tail) <= width:
        return [flat + tail]
    reserve = len(" … (+99999 characters left out)")
    out: list[str] = []
    rest = flat
    while rest and len(out) < lines:
        prefix = indent if out else ""
        room = width - len(prefix)
        if len(rest) <= room:
            out.append(prefix + rest)
            rest = ""
            break
        if len(out) == lines - 1:
            room -= reserve
        cut = rest.rfind(" ", 0, room + 1)
        if cut < room // 2:  # no space in the second half of the line: a long word wraps where the line ends
            cut = room
        out.append(prefix + rest[:cut].rstrip())
        rest = rest[cut:].lstrip(" ")
    if rest:
        out[-1] += f" … (+{plural(len(rest), 'character')} left out)"
    if tail:
        if not out:
            out.append(tail.lstrip())
        elif len(out[-1]) + len(tail) <= width:
            out[-1] += tail
        else:
            out.append(indent + tail.lstrip())
    return out


def _found_lines(report: Report, found: list, width: int | None) -> list:
    """The lines of :func:`terminal_lines` for counterexamples a run found, other than those of the false
    claims it decided (listed above them): per counterexample its claim, reading and check, its message
    and example (Hypothesis's falsifying example with only what it drew, :func:`_drawn_example`, else the
    example's JSON), each fitted to ``width`` (:func:`fit_lines`; ``None``: whole); then per claim its verdict in
    the report, and whether this run decided it or it keeps its last decision. ``found``: ``(claim, reading,
    check, counterexample dict[, the check's pytest fixtures])``."""
    from .render.model import certified_word, example_json

    if not found:
        return []
    lines: list[tuple[str, bool]] = [(f"counterexamples found by this run ({len(found)}):", False)]

    def add(text: str, indent: str) -> None:
        lines.extend((line, False) for line in fit_lines(text, width, indent=indent))

    for cid, reading, nodeid, cx, *more in found:
        fixtures = frozenset(more[0]) if more else frozenset()
        add(f"  {cid} [{reading}] ({nodeid}): {' '.join(str(cx.get('message', '')).split())}", "      ")
        shown = [_drawn_example(cx["hypothesis"], fixtures)] if cx.get("hypothesis") else []
        if cx.get("example"):
            shown.append("example: " + example_json(cx["example"]))
        for line in shown:
            if line.strip():
                add(f"    {line.strip()}", "      ")
        if cx.get("certified") is not None:
            add(f"    {certified_word(cx)}{': ' + cx['certificate'] if cx.get('certificate') else ''}", "      ")
    by_id = {c.id: c for c in report.claims}
    for cid in dict.fromkeys(f[0] for f in found):
        c = by_id.get(cid)
        if c is None:
            continue
        if cid in report.fresh:
            how = "decided by this run"
        elif c.decided is not None:
            how = f"its last decision, of {c.decided.at}: this run ran only some of its checks"
        else:
            how = "never decided whole: this run ran only some of its checks"
        add(f"  verdict of {cid}: {c.verdict} ({how})", "    ")
    return lines


def terminal_lines(report: Report, errors: list[str], report_file: Path | None, *, width: int | None = 120,
                   notices: list[str] = (), found: list = ()) -> list:
    """``[(line, red)]``: the false claims this run decided (id, how its counterexample was certified, ``proved:``,
    ``recomputed:`` or ``not certified:``, one-line counterexample and, when the
    claim has one, its failure profile as `` [class: failures/trials at setting]``, cut to ``width``); the
    counterexamples ``found`` (``[(claim, reading, check, counterexample dict)]``, this run's), in a
    subset run (a counterexample's reproduce command, ``--claims-select``) or of a claim the run did not
    decide whole, each with its example and the claim's verdict; each check that did not finish; the claims whose verdict
    disagrees with ``expected`` or whose check errored, the run's errors, the ``notices`` (warnings such
    as an earlier report set aside), then the tally of this run's verdicts (the last line, naming
    ``report_file`` when one was written). ``width=None`` (``pytest -v``) leaves nothing out; otherwise each
    item wraps at spaces onto at most :data:`TERMINAL_ITEM_LINES` lines of ``width`` characters
    (:func:`fit_lines`), what does not fit is counted where it was left out, and one line before the tally
    says that ``-v`` and the report show it whole. Counts are pluralised ("1 verdict disagrees")."""
    from .render.model import SECTION_ORDER, one_line_counterexample, plural, primary_counterexample

    fresh = [c for c in report.claims if c.id in report.fresh]
    data = {c["id"]: c for c in report.to_json()["claims"]}
    lines: list[tuple[str, bool]] = []
    false = [c for c in fresh if c.verdict == "false"]
    if false:
        lines.append((f"false claims ({len(false)}):", False))
        idw = max(len(c.id) for c in false)
        for c in false:
            cx = primary_counterexample(data[c.id])[1]  # how it was certified: proved | recomputed (issue 45)
            how = (cx.get("certificate_strength") or "certified") if cx and cx.get("certified") else "not certified"
            text = f"  {c.id:<{idw}}  {how}: {one_line_counterexample(data[c.id]) or c.reason}"
            p = c.failure_profile
            tail = f" [{p['class']}: {p['failures']}/{p['trials']} at {p['setting']}]" if p else ""
            # wrapped under the claim's counterexample, the profile kept whole after it
            lines += [(line, False) for line in fit_lines(text, width, indent=" " * min(idw + 4, 24), tail=tail)]
    # a subset run (a reproduce command, --claims-select): every counterexample it found, with its claim's verdict;
    # a full run: those of claims it did not decide whole (the false claims it decided are listed above)
    listed = {c.id for c in false}
    lines += _found_lines(report, [f for f in found if f[0] not in listed
                                   and (report.run.partial or f[0] not in report.fresh)], width)
    unfinished = [(c.id, e) for c in fresh for e in c.errors]
    if unfinished:  # each check that did not finish, and what happened: a bug of the suite or of the check
        lines.append((f"checks that did not finish ({len(unfinished)}): the claims are 'error', not decided:", True))
        lines += [(line, True) for cid, e in unfinished for line in fit_lines(f"  {cid}: {e}", width, indent="    ")]
    bad = [c for c in fresh if not c.agrees or c.errors]
    if bad:
        lines.append((f"attention-claims: {plural(len(bad), 'verdict')} {'disagrees' if len(bad) == 1 else 'disagree'}"
                      " with 'expected' or errored: "
                      + ", ".join(f"{c.id} ({c.verdict}, expected {c.expected})" for c in bad), True))
    lines += [(f"attention-claims: {err}", True) for err in errors]
    lines += [(f"attention-claims: warning: {text}", False) for text in notices]
    if any(LEFT_OUT.search(text) for text, _red in lines):  # some text was left out
        lines.append(("attention-claims: text marked '… (+N characters left out)' is whole under pytest -v, "
                      "and in the report", False))
    counts = {v: sum(c.verdict == v for c in fresh) for v in SECTION_ORDER}
    tally = ", ".join(f"{n} {v}" + (" (could not run here)" if v == "undecided" else "")
                      for v, n in counts.items() if n) or "no claim decided"
    others = [c for c in report.claims if c.id not in report.fresh]
    kept = sum(c.decided is not None for c in others)
    not_selected = len(others) - kept
    if kept:
        tally += f"; {kept} other claim{'s keep their' if kept != 1 else ' keeps its'} last decision"
    if not_selected:
        tally += f"; {not_selected} claim{'s' if not_selected != 1 else ''} not selected"
    if report.run.interrupted:
        tally += "; run interrupted"
    if report_file is not None:
        tally += f"; report: {report_file}"
    lines.append((f"verdicts: {tally}", bool(bad or errors)))
    return lines
