"""Verdict rules, exactly as ``docs/verdicts.md`` ("Verdicts") fixes them.

Pure functions over reading outcomes, so that the rules are tested without pytest.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from .records import Claim

HELD, FAILED, SKIPPED, ERROR = "held", "failed", "skipped", "error"


@dataclass(frozen=True)
class ReadingOutcome:
    """What the checks of one reading produced in this run.

    ``outcome`` is ``held`` (every check that ran passed, at least one ran), ``failed``
    (some check produced a counterexample), ``skipped`` (no check ran) or ``error`` (some check did
    not finish: it raised something other than a counterexample, its worker crashed, or pytest
    reported an internal error while it ran).
    ``certified`` is true when some counterexample was confirmed by a high-precision or
    exact recomputation.
    """

    outcome: str
    certified: bool = False


PASSED, COUNTEREXAMPLE, PENDING = "passed", "counterexample", "pending"
CHECK_OUTCOMES = (PASSED, COUNTEREXAMPLE, SKIPPED, ERROR, PENDING)
"""How one check ended (:func:`check_outcome`): it ``passed``; it found a ``counterexample`` (an
``AssertionError`` in its call phase, typed by :func:`attention_claims.framework.evidence.refute`); it was
``skipped`` (a skip the check or its fixtures raised, or a ``skip`` / ``skipif`` mark that fired); it ended
in ``error`` (any other exception, in any phase, under any mark); or it is ``pending`` (no phase has told how
it ended yet: it has not run, or the run stopped before it finished)."""

PHASES = ("setup", "call", "teardown")


@dataclass(frozen=True)
class Phase:
    """How one phase (``setup``, ``call`` or ``teardown``) of a check ended, as the plugin observed it in
    the process that ran it (from the exception the phase raised, never from pytest's report outcome,
    which marks and other plugins rewrite): ``kind`` is ``passed``, ``counterexample`` (call phase only),
    ``skipped`` (setup or call) or ``error``; ``detail`` is the skip reason or what went wrong."""

    when: str
    kind: str
    detail: str = ""


def check_outcome(phases: dict[str, Phase]) -> tuple[str, str]:
    """``(outcome, detail)`` of one check (one of :data:`CHECK_OUTCOMES`) from its phases so far: the one
    place where how a check ended is decided, as pytest's ``_pytest/skipping.py`` decides xfail and skip in
    one place.

    - an ``error`` in any phase makes the check ``error`` (the first, in phase order; its detail names the
      phase when it is not the call), whatever the other phases found;
    - a setup phase that was ``skipped`` (a skip mark, a fixture's ``pytest.skip``) makes it ``skipped``;
    - otherwise the call phase decides (``passed``, ``counterexample`` or ``skipped``), and a teardown
      that passed changes nothing;
    - with no call phase yet, the check is ``pending`` (never ``held`` nor ``skipped``).

    Raises:
        ValueError: a phase of an unknown ``when`` or ``kind``.
    """
    for when, p in phases.items():
        if when not in PHASES or p.kind not in (PASSED, COUNTEREXAMPLE, SKIPPED, ERROR):
            raise ValueError(f"phase {when!r}: unknown phase or kind {p.kind!r}")
    for when in PHASES:
        p = phases.get(when)
        if p is not None and p.kind == ERROR:
            return ERROR, p.detail if when == "call" else f"error in {when}: {p.detail}"
    setup = phases.get("setup")
    if setup is not None and setup.kind == SKIPPED:
        return SKIPPED, setup.detail
    call = phases.get("call")
    if call is None:
        return PENDING, ""
    if call.kind == COUNTEREXAMPLE:
        return COUNTEREXAMPLE, call.detail
    return call.kind, call.detail


def reading_outcome(check_outcomes: list[str]) -> str:
    """Fold per-check outcomes (:data:`CHECK_OUTCOMES`) into a reading outcome.

    A check that did not finish (``error``, or still ``pending`` when the reading is decided) makes the
    reading ``error`` whatever its other checks found: what the unfinished check would have found is
    unknown, so the reading is never ``held`` nor ``skipped`` (``docs/verdicts.md``, the ``error`` verdict).
    """
    if ERROR in check_outcomes or PENDING in check_outcomes:
        return ERROR
    if COUNTEREXAMPLE in check_outcomes:
        return FAILED
    if PASSED in check_outcomes:
        return HELD
    return SKIPPED


def compute_verdict(claim: Claim, outcomes: dict[str, ReadingOutcome]) -> tuple[str, str]:
    """Return ``(verdict, reason)`` for ``claim`` given its readings' outcomes.

    Rules (DESIGN.md): ``false`` needs the as-stated reading to fail with a certified
    counterexample; an uncertified failure of the as-stated reading leaves the claim
    ``undecided`` (it is reported as a defect of the check). ``caveat`` when the
    as-stated reading held (or there is none) and another reading failed. ``true`` when
    every reading that ran held. ``undecided`` when the as-stated reading was skipped,
    or when no reading ran at all. ``error`` when some reading (one decided on user models too) has
    the outcome ``error`` (a check of it did not finish): never a verdict about the claim, whatever
    the other readings found.

    A reading with ``user_model = "separate"`` (decided on the models given with
    ``--claims-model``) never enters these rules; when it failed, the reason says so.
    """
    verdict, reason = _verdict(claim, outcomes)
    separate = [r.name for r in claim.readings
                if not r.counts and outcomes.get(r.name, ReadingOutcome(SKIPPED)).outcome == FAILED]
    if separate:
        reason += f"; on user models (reported separately, not counted): {', '.join(separate)} fails"
    return verdict, reason


def _readings(names: list[str]) -> str:
    """``reading 'a'`` or ``readings 'a', 'b'``."""
    return ("reading " if len(names) == 1 else "readings ") + ", ".join(f"'{n}'" for n in names)


def _counted(claim: Claim) -> list:
    return [r for r in claim.readings if r.counts]


def _verdict(claim: Claim, outcomes: dict[str, ReadingOutcome]) -> tuple[str, str]:
    if claim.expected == "unchecked" and not claim.readings:
        return "unchecked", claim.unchecked_reason or "computation cannot judge it"
    errored = [r.name for r in claim.readings if outcomes.get(r.name, ReadingOutcome(SKIPPED)).outcome == ERROR]
    if errored:
        return "error", f"a check of {_readings(errored)} did not finish (see errors)"
    stated = claim.as_stated
    if stated is not None:
        o = outcomes.get(stated.name, ReadingOutcome(SKIPPED))
        if o.outcome == SKIPPED:
            return "undecided", f"the as-stated reading '{stated.name}' could not run here"
        if o.outcome == FAILED:
            if o.certified:
                return "false", f"the as-stated reading '{stated.name}' has a certified counterexample"
            return "undecided", (
                f"the as-stated reading '{stated.name}' failed but its counterexample was not certified"
            )
    failed = [r.name for r in _counted(claim) if outcomes.get(r.name, ReadingOutcome(SKIPPED)).outcome == FAILED]
    ran = [r.name for r in _counted(claim) if outcomes.get(r.name, ReadingOutcome(SKIPPED)).outcome != SKIPPED]
    if not ran:
        return "undecided", "no reading could run here"
    if failed:
        head = "the as-stated reading holds" if stated else "the claim has no as-stated reading (its words are vague)"
        return "caveat", f"{head}, but these fail: {', '.join(failed)}"
    skipped = [r.name for r in _counted(claim) if r.name not in ran]
    tail = f" ({len(skipped)} skipped here)" if skipped else ""
    return "true", f"every reading that ran held{tail}"


def agrees_with_expected(claim: Claim, outcomes: dict[str, ReadingOutcome]) -> bool:
    """Whether the computed verdict agrees with ``claim.expected``.

    When readings were skipped, it agrees if *some* outcome of the skipped readings
    (held, or failed with a certified counterexample) would have produced ``expected``
    (DESIGN.md: a CPU-only run that finds ``true`` agrees with an expected ``caveat``
    that only a CUDA reading shows). An ``error`` verdict never agrees (no record expects one).
    Readings decided on user models (``user_model``) are not tried: they are not part of what
    ``expected`` says, and a run without ``--claims-model`` skips them.
    """
    verdict, _ = compute_verdict(claim, outcomes)
    if verdict == "error":
        return False
    if verdict == claim.expected:
        return True
    skipped = [
        r.name for r in claim.readings
        if r.user_model is None and outcomes.get(r.name, ReadingOutcome(SKIPPED)).outcome == SKIPPED
    ]
    if not skipped:
        return False
    # The verdict depends only on the as-stated outcome and on whether *any* other
    # reading failed, so trying "all held" and "one failed" per group is exhaustive.
    stated = claim.as_stated
    stated_options = [None]
    if stated is not None and stated.name in skipped:
        stated_options = [HELD, FAILED]
    others = [n for n in skipped if stated is None or n != stated.name]
    other_options = [None] if not others else [HELD, FAILED]
    for so, oo in itertools.product(stated_options, other_options):
        trial = dict(outcomes)
        if so is not None:
            trial[stated.name] = ReadingOutcome(so, certified=so == FAILED)
        for i, name in enumerate(others):
            o = FAILED if (oo == FAILED and i == 0) else HELD
            trial[name] = ReadingOutcome(o, certified=o == FAILED)
        if compute_verdict(claim, trial)[0] == claim.expected:
            return True
    return False


@dataclass(frozen=True)
class Decision:
    """A claim's verdict in one run, with its reason and whether it agrees with ``expected``."""

    verdict: str
    reason: str
    agrees: bool


NOT_SELECTED = "not selected in this run (--claims-select / --claims-document / -k / paths) and never decided before"
IN_PROGRESS = "not decided: the run has not finished (in progress, killed or crashed)"


def decide(claim: Claim, outcomes: dict[str, ReadingOutcome], *, errors: int = 0, pending: int = 0,
           interrupted: bool = False, selected: bool = True, in_progress: bool = False) -> Decision:
    """The verdict of ``claim`` in a run, every rule of ``docs/verdicts.md`` included:

    - a claim the run was not asked to decide (``selected=False``) is ``undecided``, "not
      selected", and agrees with ``expected`` (it is no failure of the run);
    - while the run is in progress (``in_progress=True``) every claim it decides is ``undecided``
      and does not agree (a report left in that state must not pass for a finished one);
    - in an interrupted run, a claim with ``pending`` checks that never reported is ``undecided``
      and does not agree (``unchecked`` claims have no checks and stay ``unchecked``);
    - a claim with ``errors`` (a check did not finish: it raised something other than a
      counterexample, its worker crashed, pytest reported an internal error while it ran; a bug of
      the suite or of the user's check) is ``error`` and does not agree, interrupted or not;
    - otherwise :func:`compute_verdict` on the outcomes, and :func:`agrees_with_expected`.
    """
    if not selected:
        return Decision("undecided", NOT_SELECTED, True)
    if claim.expected == "unchecked" and not claim.readings:
        verdict, reason = compute_verdict(claim, outcomes)
        return Decision(verdict, reason, True)
    if in_progress:
        return Decision("undecided", IN_PROGRESS, False)
    if errors:
        verdict, reason = compute_verdict(claim, outcomes)
        if verdict != "error":
            reason = f"{errors} check(s) did not finish (see errors)"
        return Decision("error", reason, False)
    if interrupted and pending:
        return Decision("undecided", f"the run was interrupted before {pending} of its checks ran", False)
    verdict, reason = compute_verdict(claim, outcomes)
    return Decision(verdict, reason, agrees_with_expected(claim, outcomes))
