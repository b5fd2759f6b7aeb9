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

import itertools
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


def check_sweep(sweep: Any, *, trials: int | None = None, failures: int | None = None) -> dict[str, Any]:
    """A failure profile's ``sweep`` (:meth:`CheckLog.failure_profile`) checked and as plain JSON:
    ``{"parameter": str, "values": [float], "trials": [int], "failures": [int]}`` plus ``"boundary"``
    (a float) and ``"boundary_label"`` (a str) when given; keys in that order, others refused.

    Args:
        sweep: the sweep as a check passes it (sequences may be NumPy arrays).
        trials, failures: the profile's totals the per-value counts must add up to (not checked when None).

    Raises:
        ValueError: a field is missing or unknown, the parameter is empty, the values are not finite and
            strictly increasing, the three lists differ in length or are empty, a count is not an integer
            with ``0 <= failures_k <= trials_k`` and ``trials_k >= 1``, the counts do not add up to the
            totals, or the boundary is not a finite number.
    """
    if not isinstance(sweep, dict):
        raise ValueError(f"sweep: must be a dict, not {type(sweep).__name__}")
    known = ("parameter", "values", "trials", "failures", "boundary", "boundary_label")
    unknown = [k for k in sweep if k not in known]
    missing = [k for k in known[:4] if k not in sweep]
    if unknown or missing:
        raise ValueError(f"sweep: needs {', '.join(known[:4])} (optional boundary, boundary_label); "
                         + (f"unknown {', '.join(map(str, unknown))}" if unknown else f"missing {', '.join(missing)}"))
    parameter = str(sweep["parameter"]).strip()
    if not parameter:
        raise ValueError("sweep.parameter: must name the parameter the draws vary")

    def ints(name: str) -> list[int]:
        out = []
        for v in np.asarray(sweep[name]).ravel().tolist():
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise ValueError(f"sweep.{name}: must be integers, got {v!r}")
            out.append(int(v))
        return out

    try:
        values = [float(v) for v in np.asarray(sweep["values"], dtype=float).ravel()]
    except (TypeError, ValueError):
        raise ValueError(f"sweep.values: must be numbers, got {sweep['values']!r}") from None
    n_trials, n_failures = ints("trials"), ints("failures")
    if not values or not len(values) == len(n_trials) == len(n_failures):
        raise ValueError(f"sweep: values, trials and failures must be non-empty and of one length, got "
                         f"{len(values)}, {len(n_trials)}, {len(n_failures)}")
    if not all(math.isfinite(v) for v in values) or any(b <= a for a, b in itertools.pairwise(values)):
        raise ValueError(f"sweep.values: must be finite and strictly increasing, got {values}")
    for t, f in zip(n_trials, n_failures, strict=True):
        if t < 1 or not 0 <= f <= t:
            raise ValueError(f"sweep: each value needs trials >= 1 and 0 <= failures <= trials, got {f} of {t}")
    if trials is not None and sum(n_trials) != trials:
        raise ValueError(f"sweep.trials: add up to {sum(n_trials)}, not the profile's {trials} draws")
    if failures is not None and sum(n_failures) != failures:
        raise ValueError(f"sweep.failures: add up to {sum(n_failures)}, not the profile's {failures} failures")
    out: dict[str, Any] = {"parameter": parameter, "values": values, "trials": n_trials, "failures": n_failures}
    if sweep.get("boundary") is not None:
        try:
            boundary = float(sweep["boundary"])
        except (TypeError, ValueError):
            boundary = math.nan
        if not math.isfinite(boundary):
            raise ValueError(f"sweep.boundary: must be a finite number, got {sweep['boundary']!r}")
        out["boundary"] = boundary
        out["boundary_label"] = str(sweep.get("boundary_label") or "")
    return out


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

    A check raises it through :func:`refute` (or :func:`refute_deferred`) rather than constructing it; the
    plugin catches it and records the reading's outcome. An ``AssertionError``, so Hypothesis shrinks it.

    Args:
        message: one sentence saying what failed, with numbers (a ``str``).
        example: the inputs by name (see :func:`refute`), or ``None``.
        certified: whether an exact / high-precision recomputation confirmed it (a ``bool``).
        certificate: how it was confirmed (a ``str``).
        boundary: where a dtype or scale reading starts to fail (a ``str``), or ``None``.
        certify: for :func:`refute_deferred`, the function of no arguments that recomputes the example and
            calls :func:`refute`; ``None`` otherwise.
        certificate_strength: ``"proved"``, ``"recomputed"`` or ``None`` (see :func:`refute`).

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

    Examples:
        >>> import numpy as np
        >>> from attention_claims.testkit import Counterexample
        >>> cx = Counterexample("rank 2 > d = 1", example={"Q": np.eye(2)}, certified=True,
        ...                     certificate="exact rationals: det = 1", certificate_strength="proved")
        >>> isinstance(cx, AssertionError), cx.example, cx.certificate_strength
        (True, {'Q': [[1.0, 0.0], [0.0, 1.0]]}, 'proved')
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

        Returns:
            A dict of plain JSON values with the keys ``message``, ``example``, ``certified``,
            ``certificate``, ``certificate_strength`` and ``boundary``.

        Raises:
            RefuteArgumentError: a field was replaced after construction by a value of the wrong type.

        Examples:
            >>> from attention_claims.testkit import Counterexample
            >>> Counterexample("row 0 sums to 0.999", example={"N": 3}).to_dict()  # doctest: +NORMALIZE_WHITESPACE
            {'message': 'row 0 sums to 0.999', 'example': {'N': 3}, 'certified': False, 'certificate': '',
             'certificate_strength': None, 'boundary': None}
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

    Examples:
        >>> from attention_claims.testkit import Counterexample, refute
        >>> from attention_claims.framework.evidence import RefuteArgumentError
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

    Args:
        message: one sentence saying what failed in floating point, with numbers (a ``str``).
        certify: a function of no arguments that recomputes the example exactly (or at high precision)
            and calls :func:`refute`; it is called at most once, by the plugin, after shrinking.
        example: the inputs by name, as for :func:`refute`, or ``None``.

    Returns:
        Never returns.

    Raises:
        Counterexample: always, uncertified, carrying ``certify``.
        RefuteArgumentError: ``message`` is not a ``str``, ``certify`` is not callable, or ``example`` is
            not a dict of JSON values (see :func:`refute`).

    Examples:
        >>> from fractions import Fraction
        >>> from attention_claims.testkit import Counterexample, refute, refute_deferred
        >>> row = [0.1, 0.2, 0.7]
        >>> def certify():
        ...     total = sum(Fraction(x) for x in row)  # the stored floats, read back exactly
        ...     refute(f"row sums to {total} != 1", example={"row": row}, certified=total != 1,
        ...            certificate="exact rationals of the float64 entries",
        ...            certificate_strength="proved" if total != 1 else None)
        >>> try:
        ...     refute_deferred("row sums to 1 - 1e-16 in float64", certify=certify, example={"row": row})
        ... except Counterexample as cheap:
        ...     cheap.certified, cheap.certify is certify
        (False, True)
        >>> try:
        ...     certify()  # what the plugin runs, once, on the shrunk example
        ... except Counterexample as final:
        ...     final.certified, final.certificate_strength
        (True, 'proved')
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
    ``plot(kind, data)`` attaches data the HTML report draws (the kinds and their fields: :meth:`plot`);
    ``failure_profile(cls, ...)`` says how often the reading fails at the document's own parameters
    (shown next to a shrunk counterexample, which alone reads as a corner case).

    A check receives its log from the plugin's ``claim_log`` fixture (one per claim-marked test, kept
    across the test's Hypothesis examples) and never constructs one; the plugin writes
    :meth:`summary`, the figures, plots and profile into the report.

    Attributes:
        examples: the number of examples counted (an ``int``).
        ranges: ``{name: [min, max]}`` of each tracked quantity (``float``, in the quantity's own units).
        notes: the fixed evidence lines, in order, each once.
        figures: ``[{"path": absolute path, "caption": str}]`` of the attached images.
        plots: ``[{"kind": str, "data": dict}]`` of the attached plot data (plain JSON).
        profile: the failure profile (``{"class", "setting", "trials", "failures", "summary"}``) or ``None``.

    Examples:
        >>> from attention_claims.testkit import CheckLog
        >>> log = CheckLog()  # in a check: the claim_log fixture
        >>> for gap in (2.5, 0.125):
        ...     log.example(gap=gap)
        >>> log.note("the rank drops below a logit gap of 0.1")
        >>> log.summary()
        '2 examples; gap in [0.125, 2.5]. the rank drops below a logit gap of 0.1'
    """

    examples: int = 0
    ranges: dict[str, list[float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    figures: list[dict[str, str]] = field(default_factory=list)
    plots: list[dict[str, Any]] = field(default_factory=list)
    profile: dict[str, Any] | None = None  # failure_profile(): {"class", "setting", "trials", "failures", "summary"}

    def example(self, **tracked: float) -> None:
        """Count one example and track the given quantities.

        Args:
            **tracked: ``name=value`` pairs, each a real number (Python, NumPy or torch scalar) kept as by
                :meth:`track`.

        Returns:
            ``None``.

        Raises:
            TypeError: a value that ``float()`` cannot take (``None``, an array of more than one element).
            ValueError: a string that is not a number.

        Examples:
            >>> from attention_claims.testkit import CheckLog
            >>> log = CheckLog()
            >>> log.example(N=4, gap=0.5)
            >>> log.examples, log.ranges
            (1, {'N': [4.0, 4.0], 'gap': [0.5, 0.5]})
        """
        self.examples += 1
        for k, v in tracked.items():
            self.track(k, v)

    def batch(self, count: int, /, **tracked) -> None:
        """Count ``count`` examples at once (the instances one batched example evaluated; see
        :mod:`attention_claims.engine`) and track the range of each given array (NumPy or torch,
        any shape; NaN ignored) or number.

        Args:
            count: the number of instances evaluated (an ``int >= 0``; positional only).
            **tracked: ``name=values``: an array (NumPy or torch, any shape and dtype, read as float64)
                or a number; its smallest and largest non-NaN entries are tracked.

        Returns:
            ``None``.

        Raises:
            ValueError: ``count`` is negative.

        Examples:
            >>> import numpy as np
            >>> from attention_claims.testkit import CheckLog
            >>> log = CheckLog()
            >>> log.batch(128, det=np.array([[1.0, np.nan], [3.0, 4.0]]))
            >>> log.summary()
            '128 examples; det in [1, 4]'
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
        """Keep the min and max of ``value`` under ``name`` (NaN is ignored).

        Args:
            name: the quantity's name as the report shows it (say its unit in it where it has one).
            value: a real number (anything ``float()`` takes).

        Returns:
            ``None``.

        Raises:
            TypeError: ``value`` is not a number ``float()`` takes (``None``, an array of several entries).
            ValueError: ``value`` is a string that is not a number.

        Examples:
            >>> from attention_claims.testkit import CheckLog
            >>> log = CheckLog()
            >>> for v in (3.0, float("nan"), -1.0):
            ...     log.track("smallest singular value", v)
            >>> log.ranges
            {'smallest singular value': [-1.0, 3.0]}
        """
        v = float(value)
        if math.isnan(v):
            return
        lo_hi = self.ranges.setdefault(name, [v, v])
        lo_hi[0] = min(lo_hi[0], v)
        lo_hi[1] = max(lo_hi[1], v)

    def note(self, text: str) -> None:
        """Add one line of evidence (kept once, in order).

        Args:
            text: the line (a sentence, e.g. the boundary a bisection found).

        Returns:
            ``None``.

        Examples:
            >>> from attention_claims.testkit import CheckLog
            >>> log = CheckLog()
            >>> for _ in range(3):
            ...     log.note("float32 breaks at scale 1e3")
            >>> log.notes
            ['float32 breaks at scale 1e3']
        """
        if text not in self.notes:
            self.notes.append(text)

    def figure(self, path, caption: str) -> None:
        """Attach the image at ``path`` (absolute, or relative to the working directory) with a
        one-line ``caption``. The report embeds it next to the reading's evidence when the file lies in
        the report folder's ``figures/`` (``reports/figures/`` by default; in a check,
        ``attention_claims.framework.config.current().report_dir / "figures"`` follows the
        ``claims_report_dir`` ini option and ``--claims-report-dir``); an image anywhere else (a
        ``tmp_path``) is listed as not shown, since the report may not read files outside its folder.

        Args:
            path: the image file (a ``str`` or ``pathlib.Path``; PNG or SVG), resolved to an absolute path.
            caption: one line saying what the image shows.

        Returns:
            ``None`` (the same path and caption twice is kept once).

        Examples:
            >>> import pathlib
            >>> from attention_claims.testkit import CheckLog
            >>> log = CheckLog()
            >>> log.figure("reports/figures/spectrum.png", "singular values of A, N = 64")  # not read here
            >>> log.figures[0]["caption"], pathlib.Path(log.figures[0]["path"]).is_absolute()
            ('singular values of A, N = 64', True)
        """
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

        These six are all the kinds: the HTML report draws each under its claim when the report is written,
        and refuses any other ``kind`` here. A field of ``data`` not listed for its kind is kept but not drawn.

        Args:
            kind: one of the kinds above.
            data: the plot's fields (plain JSON after the conversions).

        Returns:
            ``None`` (the same kind and data twice is kept once).

        Raises:
            ValueError: ``kind`` is not a plot kind the renderer knows, or ``data`` lacks a field.
            TypeError: ``data`` is not a dict, or holds a value that is not JSON (after the conversions).

        Examples:
            >>> import numpy as np
            >>> from attention_claims.testkit import CheckLog
            >>> log = CheckLog()
            >>> log.plot("curve", {"x": np.array([1, 2, 4]), "series": {"rank": [1.0, 2.0, np.inf]},
            ...                    "xlabel": "N", "ylabel": "rank"})
            >>> log.plots[0]["data"]["x"], log.plots[0]["data"]["series"]
            ([1, 2, 4], {'rank': [1.0, 2.0, None]})
            >>> log.plot("curve", {"x": [1, 2, 4]})
            Traceback (most recent call last):
                ...
            ValueError: curve plot data lacks series (needs x, series)
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

    def failure_profile(self, cls: str, *, setting: str, trials: int, failures: int, summary: str,
                        sweep: dict | None = None) -> None:
        """Attach the check's failure profile: of ``trials`` independent draws at ``setting`` (the
        document's own parameters, e.g. ``"N=512, d=64, Gaussian Q, K"``), ``failures`` broke the
        reading; ``cls`` (one of :data:`FAILURE_PROFILE_CLASSES`, best computed by
        :func:`failure_class`) says whether the failure is the rule or a corner case, ``summary`` one
        sentence on how it was measured (tolerance, seed). A second call replaces the first. The
        report shows it on the reading when the reading failed, and on a false claim.

        ``sweep`` (optional) splits the draws by the one parameter they were taken at several values of
        (a logit scale, a layer, N): ``{"parameter": name, "values": [x_1 < x_2 < ...], "trials":
        [draws at x_k], "failures": [failures at x_k]}`` (equal lengths; the counts add up to ``trials``
        and ``failures``), and optionally ``"boundary"``, the value of the parameter where the reading
        is known to start (or stop) failing, with ``"boundary_label"``. The HTML report draws it as the
        failing fraction against the parameter (:func:`attention_claims.framework.render.plots.failure_profile_svg`);
        :func:`attention_claims.testkit.failure_profiles.record_profile` builds it from per-draw values.

        Raises:
            ValueError: ``cls`` is not a profile class or not the class :func:`failure_class` gives these
                counts (``generic`` needs every draw to fail), ``trials < 1``, ``failures`` outside
                ``[0, trials]``, ``setting`` is empty, or ``sweep`` is malformed (:func:`check_sweep`).

        Args:
            cls: the profile's class, ``"generic"``, ``"at-document-parameters"`` or ``"special-inputs"``.
            setting: the parameters the draws were taken at (a non-empty ``str``).
            trials: the number of independent draws (an ``int >= 1``).
            failures: how many of them broke the reading (an ``int`` in ``[0, trials]``).
            summary: one sentence on how it was measured.
            sweep: the draws split by one parameter (above), or ``None``.

        Returns:
            ``None``.

        Examples:
            >>> from attention_claims.testkit import CheckLog
            >>> from attention_claims.framework.evidence import failure_class
            >>> log = CheckLog()
            >>> log.failure_profile(failure_class(30, 4), setting="N=512, d=64, Gaussian Q, K", trials=30,
            ...                     failures=4, summary="numerical rank at 1e-6 sigma_1, default_rng(0)")
            >>> log.profile["class"], log.profile["failures"]
            ('at-document-parameters', 4)
            >>> log.failure_profile("generic", setting="N=512", trials=30, failures=4, summary="")
            Traceback (most recent call last):
                ...
            ValueError: failure profile class 'generic' does not fit 4 failures in 30 draws: those counts are 'at-document-parameters' (failure_class)
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
        if sweep is not None:
            self.profile["sweep"] = check_sweep(sweep, trials=int(trials), failures=int(failures))

    def summary(self) -> str:
        """One paragraph: the examples, the tracked ranges, then the notes.

        Numbers are shown to 4 significant digits (scientific notation outside ``[1e-3, 1e5)``); a range
        whose two ends are equal is shown as one value.

        Returns:
            The evidence line of the report (a ``str``; empty when nothing was counted or noted).

        Examples:
            >>> from attention_claims.testkit import CheckLog
            >>> log = CheckLog()
            >>> log.example(gap=2.5)
            >>> log.example(gap=1e-6, N=4)
            >>> log.note("certified in exact rationals.")
            >>> log.summary()
            '2 examples; gap in [1.000e-06, 2.5]; N = 4. certified in exact rationals.'
        """
        parts = []
        if self.examples:
            parts.append(f"{self.examples} example{'' if self.examples == 1 else 's'}")
        for k, (lo, hi) in self.ranges.items():
            parts.append(f"{k} in [{_fmt(lo)}, {_fmt(hi)}]" if lo != hi else f"{k} = {_fmt(lo)}")
        text = "; ".join(parts)
        if self.notes:
            text = (text + ". " if text else "") + " ".join(self.notes)
        return text

    def to_json(self) -> str:
        """The count of examples and :meth:`summary` as JSON text.

        Returns:
            A JSON object ``{"examples": int, "summary": str}`` as a ``str``.

        Examples:
            >>> from attention_claims.testkit import CheckLog
            >>> log = CheckLog()
            >>> log.example(gap=0.5)
            >>> log.to_json()
            '{"examples": 1, "summary": "1 example; gap = 0.5"}'
        """
        return json.dumps({"examples": self.examples, "summary": self.summary()})
