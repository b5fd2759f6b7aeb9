"""How a check reports what it measured and what it found.

A check asserts a reading. It reports a counterexample by raising :class:`Counterexample`
(an ``AssertionError``, so Hypothesis shrinks it like any failed assertion) through
:func:`refute`, after it has recomputed the example in exact or high-precision
arithmetic; ``certified`` says whether that recomputation confirmed it
(DESIGN.md, "Verdicts": a ``false`` verdict needs a confirmed counterexample).
:func:`refute_deferred` hands an expensive recomputation to the plugin, which runs it once, on
the counterexample Hypothesis re-raises after shrinking (public behaviour only, no hook into
Hypothesis's internals).

:class:`CheckLog` accumulates, across the examples Hypothesis draws, the number of
examples and the range of each tracked quantity, and turns them into the evidence line
of the report. The plugin gives every claim-marked test one log (fixture ``claim_log``).
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

import numpy as np


def _jsonable(value: Any) -> Any:
    """Convert numpy/torch/mpmath/flint scalars and arrays to plain JSON values."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        return _jsonable(tolist())
    try:
        f = float(value)
    except (TypeError, ValueError):
        return str(value)
    return f if math.isfinite(f) else repr(f)


#: The plot kinds :func:`attention_claims.framework.render.plots.render_plot` draws, each with the
#: fields its data must have (kept here so that a check does not import matplotlib to attach one;
#: tests/framework/test_evidence.py checks the two lists agree).
PLOT_KINDS: dict[str, tuple[str, ...]] = {
    "layer_head_heatmap": ("model", "N", "measures"),
    "spectra": ("spectra",),
    "rank_breaks": ("breaks",),
    "sparsity_curve": ("x", "closed_form"),
    "decay_sparsity": ("n", "S"),
    "curve": ("x", "series"),
}


#: The classes of a failure profile (:meth:`CheckLog.failure_profile`, docs/verdicts.md "Failure
#: profile"): ``generic``, every draw at the stated setting fails (the failure is the rule);
#: ``at-document-parameters``, some but not all draws fail there; ``special-inputs``, none does (the
#: counterexample needs inputs a random draw does not produce). :func:`failure_class` computes it.
FAILURE_PROFILE_CLASSES: tuple[str, ...] = ("generic", "at-document-parameters", "special-inputs")


def failure_class(trials: int, failures: int) -> str:
    """The class of :data:`FAILURE_PROFILE_CLASSES` that ``failures`` of ``trials`` draws give: all
    fail, ``generic``; some, ``at-document-parameters``; none, ``special-inputs``.

    Raises:
        ValueError: ``trials < 1`` or ``failures`` outside ``[0, trials]``.
    """
    if isinstance(trials, bool) or not isinstance(trials, numbers.Integral) or trials < 1:
        raise ValueError(f"trials: must be an integer >= 1, got {trials!r}")
    if isinstance(failures, bool) or not isinstance(failures, numbers.Integral) or not 0 <= failures <= trials:
        raise ValueError(f"failures: must be an integer in [0, trials = {trials}], got {failures!r}")
    if failures == trials:
        return "generic"
    return "at-document-parameters" if failures else "special-inputs"


def _plot_json(value: Any, where: str) -> Any:
    """``value`` as plain JSON for a plot: arrays to lists, non-finite floats to ``None``.

    Raises:
        TypeError: a value (at ``where``) that is none of JSON's types, an array or a number.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _plot_json(v, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plot_json(v, f"{where}[{i}]") for i, v in enumerate(value)]
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        return _plot_json(tolist(), where)
    if isinstance(value, numbers.Real):
        f = float(value)
        return f if math.isfinite(f) else None
    raise TypeError(f"plot {where} is a {type(value).__name__}, which is not JSON (use numbers, strings, "
                    "lists, dicts or arrays)")


class Counterexample(AssertionError):
    """A reading failed on a concrete example.

    Attributes:
        message: one sentence saying what failed, with numbers.
        example: the inputs (plain JSON values: lists for arrays).
        certified: whether an exact / high-precision recomputation confirmed it.
        certificate: how it was confirmed (method, precision, the interval or value).
        boundary: for a dtype or scale reading, where the reading starts to fail.
    """

    def __init__(
        self,
        message: str,
        *,
        example: dict | None = None,
        certified: bool = False,
        certificate: str = "",
        boundary: str | None = None,
        certify: Callable[[], None] | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.example = _jsonable(example or {})
        self.certified = bool(certified)
        self.certificate = certificate
        self.boundary = boundary
        self.certify = certify

    def to_dict(self) -> dict:
        """The counterexample as the report stores it."""
        return {
            "message": self.message,
            "example": self.example,
            "certified": self.certified,
            "certificate": self.certificate,
            "boundary": self.boundary,
        }


def refute(
    message: str,
    *,
    example: dict | None = None,
    certified: bool,
    certificate: str = "",
    boundary: str | None = None,
) -> None:
    """Raise :class:`Counterexample`; ``certified`` must be stated explicitly."""
    raise Counterexample(
        message, example=example, certified=certified, certificate=certificate, boundary=boundary
    )


def refute_deferred(message: str, *, certify: Callable[[], None], example: dict | None = None) -> NoReturn:
    """Report a counterexample found cheaply (in floating point) whose confirmation is expensive.

    Raises an uncertified :class:`Counterexample` that carries ``certify``, a function of no
    arguments that recomputes the same example in exact or high-precision arithmetic and then
    calls :func:`refute` with the outcome (``certified=...``, certificate, boundary). Hypothesis
    shrinks on the cheap exception; the plugin calls ``certify()`` once, on the counterexample
    Hypothesis finally reports, so the expensive work is done for the shrunk example only. If
    ``certify()`` returns instead of refuting, the cheap test disagreed with its own
    recomputation, and the plugin reports an error of the suite, not a counterexample.
    """
    raise Counterexample(message, example=example, certified=False, certify=certify)


def resolve_deferred(exc: Counterexample) -> Counterexample:
    """Run a deferred certification (see :func:`refute_deferred`) and return the counterexample to
    report: the one ``exc.certify()`` raises, or ``exc`` itself when it has nothing to run.

    Raises:
        RuntimeError: ``certify()`` returned without refuting (the cheap test and the
            recomputation disagree), or raised an ``AssertionError`` that is not a
            :class:`Counterexample`.
    """
    if exc.certify is None:
        return exc
    try:
        exc.certify()
    except Counterexample as final:
        final.certify = None
        return final
    except AssertionError as other:
        raise RuntimeError(f"the deferred certification of {exc.message!r} failed an assertion: {other}") from other
    raise RuntimeError(f"the recomputation did not confirm the counterexample {exc.message!r}: the check's cheap "
                       "test and its exact / high-precision recomputation disagree")


def _fmt(x: float) -> str:
    if x == 0 or (1e-3 <= abs(x) < 1e5):
        return f"{x:.4g}"
    return f"{x:.3e}"


@dataclass
class CheckLog:
    """Evidence accumulated by one check across its examples.

    ``example()`` counts one example; ``track(name, value)`` keeps the range of a
    measured quantity (e.g. the logit gap, the smallest certified determinant);
    ``note(text)`` adds a fixed line (e.g. the boundary found by a bisection);
    ``figure(path, caption)`` attaches an image the check drew, which the report shows;
    ``plot(kind, data)`` attaches data the HTML report draws (one of :data:`PLOT_KINDS`);
    ``failure_profile(cls, ...)`` says how often the reading fails at the document's own parameters
    (shown next to a shrunk counterexample, which alone reads as a corner case).
    """

    examples: int = 0
    ranges: dict[str, list[float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    figures: list[dict[str, str]] = field(default_factory=list)
    plots: list[dict[str, Any]] = field(default_factory=list)
    profile: dict[str, Any] | None = None  # failure_profile(): {"class", "setting", "trials", "failures", "summary"}

    def example(self, **tracked: float) -> None:
        """Count one example and track the given quantities."""
        self.examples += 1
        for k, v in tracked.items():
            self.track(k, v)

    def batch(self, count: int, /, **tracked) -> None:
        """Count ``count`` examples at once (the instances one batched example evaluated; see
        :mod:`attention_claims.engine`) and track the range of each given array (NumPy or torch,
        any shape; NaN ignored) or number.

        Raises:
            ValueError: ``count`` is negative.
        """
        if count < 0:
            raise ValueError(f"count: must be >= 0, got {count}")
        self.examples += int(count)
        for k, v in tracked.items():
            a = v.detach().cpu().double().numpy() if hasattr(v, "detach") else v
            a = np.asarray(a, dtype=np.float64).ravel()
            a = a[~np.isnan(a)]
            if a.size:
                self.track(k, float(a.min()))
                self.track(k, float(a.max()))

    def track(self, name: str, value: float) -> None:
        """Keep the min and max of ``value`` under ``name`` (NaN is ignored)."""
        v = float(value)
        if math.isnan(v):
            return
        lo_hi = self.ranges.setdefault(name, [v, v])
        lo_hi[0] = min(lo_hi[0], v)
        lo_hi[1] = max(lo_hi[1], v)

    def note(self, text: str) -> None:
        """Add one line of evidence (kept once, in order)."""
        if text not in self.notes:
            self.notes.append(text)

    def figure(self, path, caption: str) -> None:
        """Attach the image at ``path`` (absolute, or relative to the working directory) with a
        one-line ``caption``. The report embeds it next to the reading's evidence when the file lies in
        the report folder's ``figures/`` (``reports/figures/`` by default; in a check,
        ``attention_claims.framework.config.current().report_dir / "figures"`` follows the
        ``claims_report_dir`` ini option and ``--claims-report-dir``); an image anywhere else (a
        ``tmp_path``) is listed as not shown, since the report may not read files outside its folder."""
        from pathlib import Path

        entry = {"path": str(Path(path).resolve()), "caption": caption}
        if entry not in self.figures:
            self.figures.append(entry)

    def plot(self, kind: str, data: dict) -> None:
        """Attach ``data`` for the report to draw as a plot of ``kind`` (kept once, in order).

        ``kind`` is one of :data:`PLOT_KINDS`, whose value names the fields ``data`` must have
        (the shapes are documented by the functions of
        :mod:`attention_claims.framework.render.plots`). Numpy / torch arrays and scalars become
        lists and numbers; NaN and infinities become ``null`` (a blank cell or point).

        Raises:
            ValueError: ``kind`` is not a plot kind the renderer knows, or ``data`` lacks a field.
            TypeError: ``data`` is not a dict, or holds a value that is not JSON (after the conversions).
        """
        if kind not in PLOT_KINDS:
            raise ValueError(f"unknown plot kind {kind!r}; the renderer draws {', '.join(sorted(PLOT_KINDS))}")
        if not isinstance(data, dict):
            raise TypeError(f"plot data must be a dict, not {type(data).__name__}")
        missing = [k for k in PLOT_KINDS[kind] if k not in data]
        if missing:
            raise ValueError(f"{kind} plot data lacks {', '.join(missing)} (needs {', '.join(PLOT_KINDS[kind])})")
        entry = {"kind": kind, "data": _plot_json(data, "data")}
        if entry not in self.plots:
            self.plots.append(entry)

    def failure_profile(self, cls: str, *, setting: str, trials: int, failures: int, summary: str) -> None:
        """Attach the check's failure profile: of ``trials`` independent draws at ``setting`` (the
        document's own parameters, e.g. ``"N=512, d=64, Gaussian Q, K"``), ``failures`` broke the
        reading; ``cls`` (one of :data:`FAILURE_PROFILE_CLASSES`, best computed by
        :func:`failure_class`) says whether the failure is the rule or a corner case, ``summary`` one
        sentence on how it was measured (tolerance, seed). A second call replaces the first. The
        report shows it on the reading when the reading failed, and on a false claim.

        Raises:
            ValueError: ``cls`` is not a profile class or not the class :func:`failure_class` gives these
                counts (``generic`` needs every draw to fail), ``trials < 1``, ``failures`` outside
                ``[0, trials]``, or ``setting`` is empty.
        """
        if cls not in FAILURE_PROFILE_CLASSES:
            raise ValueError(f"unknown failure profile class {cls!r}; one of {', '.join(FAILURE_PROFILE_CLASSES)}")
        if isinstance(trials, bool) or not isinstance(trials, numbers.Integral) or trials < 1:
            raise ValueError(f"trials: must be an integer >= 1, got {trials!r}")
        if isinstance(failures, bool) or not isinstance(failures, numbers.Integral) or not 0 <= failures <= trials:
            raise ValueError(f"failures: must be an integer in [0, trials = {trials}], got {failures!r}")
        if cls != failure_class(trials, failures):  # the class is computed from the counts, not chosen
            raise ValueError(f"failure profile class {cls!r} does not fit {failures} failures in {trials} draws: "
                             f"those counts are {failure_class(trials, failures)!r} (failure_class)")
        if not str(setting).strip():
            raise ValueError("setting: must name the parameters the draws were taken at")
        self.profile = {"class": cls, "setting": str(setting), "trials": int(trials), "failures": int(failures),
                        "summary": str(summary)}

    def summary(self) -> str:
        """One paragraph: the examples, the tracked ranges, then the notes."""
        parts = []
        if self.examples:
            parts.append(f"{self.examples} examples")
        for k, (lo, hi) in self.ranges.items():
            parts.append(f"{k} in [{_fmt(lo)}, {_fmt(hi)}]" if lo != hi else f"{k} = {_fmt(lo)}")
        text = "; ".join(parts)
        if self.notes:
            text = (text + ". " if text else "") + " ".join(self.notes)
        return text

    def to_json(self) -> str:
        return json.dumps({"examples": self.examples, "summary": self.summary()})
