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


class RefuteArgumentError(TypeError):
    """:func:`refute` (or :class:`Counterexample`) was called with an argument of the wrong type: a
    ``certified`` that is not a ``bool`` (the string ``"False"`` is not false), an ``example`` that is not
    a dict of JSON values, a message or certificate that is not a ``str``. Not an ``AssertionError``: the
    check ends as an ``error`` of the suite (naming the check and the argument), never as a counterexample."""


def _json_example(example: Any) -> dict:
    """``example`` as the report stores it: a dict with string keys whose values are JSON (numpy/torch
    arrays and scalars, mpmath and flint numbers converted by :func:`_jsonable`; a torch or NumPy dtype
    or device by its name), ``{}`` for ``None``.

    Raises:
        RefuteArgumentError: ``example`` is not a dict (or None), a key is not a ``str``, or a value is
            of a type that has no JSON form (a set, an arbitrary object).
    """
    if example is None:
        return {}
    if not isinstance(example, dict):
        raise RefuteArgumentError(f"refute(example=...): must be a dict of named inputs, got a "
                                  f"{type(example).__name__}")

    def check(value: Any, where: str) -> Any:
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if isinstance(value, dict):
            for k in value:
                if not isinstance(k, str):
                    raise RefuteArgumentError(f"refute(example=...): key {k!r} at {where} is a "
                                              f"{type(k).__name__}, not a str")
            return {k: check(v, f"{where}[{k!r}]") for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [check(v, f"{where}[{i}]") for i, v in enumerate(value)]
        if callable(getattr(value, "tolist", None)) or isinstance(value, numbers.Number) or _is_multiprecision(value):
            return _jsonable(value)
        if type(value).__module__.split(".")[0] in ("torch", "numpy"):  # a dtype or device: its name
            return str(value)
        raise RefuteArgumentError(f"refute(example=...): {where} is a {type(value).__name__}, which has no JSON "
                                  "form (use numbers, strings, lists, dicts or arrays)")

    out = check(example, "example")
    json.dumps(out, allow_nan=False)  # every float is finite or a repr string by now
    return out


def _is_multiprecision(value: Any) -> bool:
    """Whether ``value`` is an mpmath or python-flint number (which :func:`_jsonable` turns into a float
    or its text)."""
    return type(value).__module__.split(".")[0] in ("mpmath", "flint")


#: The two strengths of a certificate (docs/verdicts.md, "Certified"): ``proved``, exact rationals, arb
#: balls, or a rigorous bound whose every constant is derived; ``recomputed``, an independent
#: higher-precision floating-point computation agrees, with no error bound.
CERTIFICATE_STRENGTHS: tuple[str, ...] = ("proved", "recomputed")

#: What a certified counterexample whose check states no ``certificate_strength`` gets (docs/verdicts.md,
#: "Certified"): the weaker word, never ``proved`` read off the certificate's words (words are not a proof).
STRENGTH_DEFAULT = "recomputed"

#: Added to the certificate of such a counterexample, so that ``claims.json``, ``claims.md``, ``claims.html``
#: and the terminal say that the word was not the check's.
STRENGTH_NOT_STATED = "strength not stated by the check, so recomputed (the weaker word)"


class Counterexample(AssertionError):
    """A reading failed on a concrete example.

    Attributes:
        message: one sentence saying what failed, with numbers.
        example: the inputs (plain JSON values: lists for arrays).
        certified: whether an exact / high-precision recomputation confirmed it.
        certificate: how it was confirmed (method, precision, the interval or value).
        certificate_strength: when ``certified``, ``proved`` or ``recomputed`` (:data:`CERTIFICATE_STRENGTHS`),
            as the check states it or, when it states none, :data:`STRENGTH_DEFAULT` (``recomputed``; the
            certificate then ends with :data:`STRENGTH_NOT_STATED`); ``None`` when not certified.
        strength_stated: whether the check stated ``certificate_strength`` (``False`` when not certified).
        boundary: for a dtype or scale reading, where the reading starts to fail.

    Raises:
        RefuteArgumentError: an argument of the wrong type (see :func:`refute`).
        ValueError: ``certificate_strength`` is not one of :data:`CERTIFICATE_STRENGTHS`, or is given
            for a counterexample that is not certified.
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
        certificate_strength: str | None = None,
    ):
        if not isinstance(message, str):
            raise RefuteArgumentError(f"refute(message): must be a str, got a {type(message).__name__}")
        if not isinstance(certified, (bool, np.bool_)):
            raise RefuteArgumentError(f"refute(certified=...): must be True or False, got {certified!r} "
                                      f"(a {type(certified).__name__})")
        certified = bool(certified)  # a NumPy comparison's numpy.bool_ is a bool too
        if not isinstance(certificate, str):
            raise RefuteArgumentError(f"refute(certificate=...): must be a str, got a {type(certificate).__name__}")
        if boundary is not None and not isinstance(boundary, str):
            raise RefuteArgumentError(f"refute(boundary=...): must be a str or None, got a {type(boundary).__name__}")
        if certify is not None and not callable(certify):
            raise RefuteArgumentError(f"refute_deferred(certify=...): must be callable, got a {type(certify).__name__}")
        super().__init__(message)
        if certificate_strength is not None and certificate_strength not in CERTIFICATE_STRENGTHS:
            raise ValueError(f"certificate_strength: one of {', '.join(CERTIFICATE_STRENGTHS)}, "
                             f"got {certificate_strength!r}")
        if certificate_strength is not None and not certified:
            raise ValueError(f"certificate_strength={certificate_strength!r} given for a counterexample that is "
                             "not certified")
        self.message = message
        self.example = _json_example(example)
        self.certified = certified
        self.strength_stated = self.certified and certificate_strength is not None
        if self.certified and certificate_strength is None:
            # a check that does not say how strong its certificate is gets the weaker word, and the report says so
            certificate_strength = STRENGTH_DEFAULT
            certificate = f"{certificate}; {STRENGTH_NOT_STATED}" if certificate else STRENGTH_NOT_STATED
        self.certificate = certificate
        self.certificate_strength = certificate_strength if self.certified else None
        self.boundary = boundary
        self.certify = certify

    def to_dict(self) -> dict:
        """The counterexample as the report stores it.

        Raises:
            RefuteArgumentError: a field was replaced after construction by a value of the wrong type.
        """
        if not isinstance(self.certified, bool) or not isinstance(self.message, str):
            raise RefuteArgumentError(f"counterexample: certified must be a bool and message a str, got "
                                      f"{self.certified!r} and a {type(self.message).__name__}")
        return {
            "message": self.message,
            "example": _json_example(self.example),
            "certified": self.certified,
            "certificate": str(self.certificate),
            "certificate_strength": self.certificate_strength,
            "boundary": self.boundary if self.boundary is None else str(self.boundary),
        }


def refute(
    message: str,
    *,
    example: dict | None = None,
    certified: bool,
    certificate: str = "",
    boundary: str | None = None,
    certificate_strength: str | None = None,
) -> NoReturn:
    """Report a counterexample to the reading the check asserts: raise :class:`Counterexample`.

    Call it after recomputing the example in exact or high-precision arithmetic (mpmath, rationals,
    arb balls from python-flint); ``certified`` says whether that recomputation confirmed the failure
    (``docs/verdicts.md``: only a certified counterexample to the as-stated reading makes a claim
    ``false``). Since :class:`Counterexample` is an ``AssertionError``, Hypothesis shrinks it like any
    failed assertion.

    Args:
        message: one sentence saying what failed, with numbers (a ``str``).
        example: the inputs, by name: a dict whose keys are ``str`` and whose values are JSON values,
            NumPy or torch arrays and scalars, or mpmath / flint numbers (converted to lists, numbers
            or their text); ``None`` for none.
        certified: ``True`` when an exact or high-precision recomputation confirmed it, else ``False``;
            must be a ``bool`` (or NumPy's ``numpy.bool_``) and must be given (the string ``"False"``, an
            int or None is refused, never read through ``bool()``).
        certificate: how it was confirmed (method, precision, the interval or value), a ``str``.
        boundary: for a dtype or scale reading, where the reading starts to fail (a ``str``), or None.
        certificate_strength: ``"proved"`` (exact rationals, arb balls, a rigorous bound whose every constant
            is derived) or ``"recomputed"`` (an independent higher-precision floating-point computation
            agrees, with no error bound), docs/verdicts.md "Certified"; only with ``certified=True``; decided
            by what the check computes, not by the certificate's words. Every check of the catalog states it
            (``tests/framework/test_certificate_strength.py`` scans ``checks/``); left out with
            ``certified=True``, the counterexample is ``recomputed`` (:data:`STRENGTH_DEFAULT`, the weaker word)
            and its certificate ends with :data:`STRENGTH_NOT_STATED`. Where ``certified`` is computed at run
            time, pass ``"proved" if ok else None`` (or the strength computed with it).

    Returns:
        Never returns.

    Raises:
        Counterexample: always, when the arguments are valid.
        RefuteArgumentError: an argument of the wrong type (a ``TypeError``, not an assertion): the plugin
            records the check as ``error``, naming it and the argument.
        ValueError: ``certificate_strength`` is not one of :data:`CERTIFICATE_STRENGTHS`, or is given with
            ``certified=False``.

    Example:
        >>> try:
        ...     refute("row 0 sums to 0.999", example={"N": 3, "row": [0.5, 0.25, 0.249]}, certified=True,
        ...            certificate="exact rationals: sum = 999/1000", certificate_strength="proved")
        ... except Counterexample as cx:
        ...     (cx.certified, cx.example["N"], cx.certificate, cx.certificate_strength)
        (True, 3, 'exact rationals: sum = 999/1000', 'proved')
        >>> try:
        ...     refute("row 0 sums to 0.999", certified="False")  # a string, not a bool
        ... except RefuteArgumentError as err:
        ...     print(err)
        refute(certified=...): must be True or False, got 'False' (a str)
    """
    raise Counterexample(
        message, example=example, certified=certified, certificate=certificate, boundary=boundary,
        certificate_strength=certificate_strength,
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

        Numpy / torch arrays and scalars become lists and numbers; NaN and infinities become ``null``
        (a blank cell or point). The kinds, the fields ``data`` must have, and the optional ones:

        - ``"curve"``: ``x`` (length n), ``series`` ``{label: y (length n)}``; ``xlabel``, ``ylabel``,
          ``title``, ``logx``, ``logy``.
        - ``"spectra"``: ``spectra`` ``{label: sigma_i, i = 1..}`` (log-log; more than 8 lines are told
          apart by a colour bar); ``index``, ``claimed_alpha``, ``claimed_c``, ``vlines`` ``{label: i}``,
          ``title``, ``ylabel``, ``claimed_label``.
        - ``"rank_breaks"``: ``breaks`` ``[{"dtype", "device", "gap"}]`` (the logit gap, in nats, at which
          the rank drops); ``thresholds`` ``{dtype: gap}``.
        - ``"layer_head_heatmap"``: ``model``, ``N``, ``measures`` ``{name: (L, H) array}``; ``names``.
        - ``"sparsity_curve"``: ``x`` (length n), ``closed_form`` (length n, or ``{label: ...}``);
          ``quadrature``, ``quad_x``, ``mc_x``, ``mc_y``, ``mc_err``, ``xlabel``, ``title``, ``logx``.
        - ``"decay_sparsity"``: ``n`` (length m), ``S`` ``{label: S at each n}``; ``closed_form``, ``bound``, ``title``.

        Args:
            kind: one of the kinds above.
            data: the plot's fields (plain JSON after the conversions).

        Example::

            log.plot("curve", {"x": [1, 2, 4], "series": {"rank": [1, 2, 4]}, "xlabel": "N", "ylabel": "rank"})

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
