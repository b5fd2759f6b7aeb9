"""Reading a ``claims.json`` that the suite did not just write (an input of ``attention-claims merge``):
every input is validated against the report's JSON Schema (``docs/claims.schema.json``, shipped in the
package as ``attention_claims/framework/claims.schema.json``) with the ``jsonschema`` library before
anything is folded (:func:`read_report`).

Limits, checked in this order, each a :class:`ReportInputError` naming the file:

- (read through the package's one reader, :func:`attention_claims._files.read_json`)
- a regular file (not a FIFO, a device or a folder), opened without blocking;
- size: at most :data:`MAX_BYTES` (32 MiB; the suite's own full report is about 0.4 MB), checked on the
  open file before it is read, so a 100 MB report costs nothing;
- UTF-8 JSON, nested at most :data:`MAX_DEPTH` levels (a report needs about 12; a 200,000-deep array is
  refused, never a ``RecursionError``);
- the schema: enums (verdicts, outcomes, kinds, plot kinds), booleans that are booleans (``"schema":
  true`` is not schema 1), integers that are integers, required fields. The message gives the JSON path
  of the first error (``$.claims[0].readings[1].examples``) and what is wrong there;
- each claim id once in the report, each reading name once in its claim;
- every plot can be drawn (:func:`check_plots`: its text parses, its data has the renderer's shapes).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path

__all__ = ["ReportInputError", "read_report", "validate_report", "check_plots", "report_schema", "MAX_BYTES", "MAX_DEPTH"]

MAX_BYTES = 32 * 1024 * 1024
"""The largest report file :func:`read_report` reads (32 MiB)."""

MAX_DEPTH = 64
"""The deepest nesting of JSON arrays and objects :func:`read_report` accepts."""

SCHEMA_FILE = "claims.schema.json"


class ReportInputError(ValueError):
    """A report that may not be folded: too large, not a regular file, not JSON, nested too deep, or not
    valid against the schema. ``str()`` names the file (and the JSON path of the first error)."""


@cache
def report_schema() -> dict:
    """The report's JSON Schema (draft 2020-12), from the package's ``claims.schema.json`` (the same file
    as ``docs/claims.schema.json``)."""
    return json.loads(resources.files(__package__).joinpath(SCHEMA_FILE).read_text(encoding="utf-8"))


def _depth(value) -> int:
    """The nesting depth of a parsed JSON value (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict | list):
            d += 1
            deepest = max(deepest, d)
            if deepest > MAX_DEPTH:
                return deepest
            stack.extend((x, d) for x in (v.values() if isinstance(v, dict) else v))
    return deepest


def validate_report(data, name: str) -> dict:
    """``data`` (a parsed ``claims.json``) when it is a schema-1 report by :func:`report_schema`.

    Raises:
        ReportInputError: nested deeper than :data:`MAX_DEPTH`, or invalid; names ``name`` and the JSON
            path of the first error.
    """
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    if _depth(data) > MAX_DEPTH:
        raise ReportInputError(f"{name}: nested deeper than {MAX_DEPTH} levels; not a report")
    validator = Draft202012Validator(report_schema())
    error = best_match(validator.iter_errors(data))
    if error is not None:
        raise ReportInputError(f"{name}: not a valid report at {error.json_path}: {_short(error.message)}")
    first: dict[str, int] = {}
    for i, claim in enumerate(data["claims"]):  # which of two entries of one claim would be merged is no rule
        if claim["id"] in first:
            raise ReportInputError(f"{name}: not a valid report at $.claims[{i}].id: {claim['id']!r} appears "
                                   f"twice (also at $.claims[{first[claim['id']]}])")
        first[claim["id"]] = i
        names: dict[str, int] = {}
        for j, reading in enumerate(claim["readings"]):
            if reading["name"] in names:
                raise ReportInputError(f"{name}: not a valid report at $.claims[{i}].readings[{j}].name: "
                                       f"{reading['name']!r} appears twice in claim {claim['id']!r} (also at "
                                       f"$.claims[{i}].readings[{names[reading['name']]}])")
            names[reading["name"]] = j
    return data


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def read_report(path: Path | str) -> dict:
    """The report at ``path``, read within the limits of the module docstring and validated
    (:func:`validate_report`), every text in it neutralised (:func:`attention_claims.framework.neutral.neutral`).

    Raises:
        ReportInputError: it cannot be read, or breaks a limit or the schema (names the file).
    """
    from .._files import UnsafeFileError, read_json

    path = Path(path)
    try:  # the package's one reader: O_NONBLOCK, fstat (the size checked before reading), the depth cap
        data = read_json(path, MAX_BYTES, max_depth=MAX_DEPTH)
    except UnsafeFileError as exc:
        mib = MAX_BYTES // (1 << 20)
        problem = {"kind": "not a regular file; a report is a claims.json file",
                   "size": (f"{exc.size} bytes, more than the {mib} MiB a report may have" if exc.size is not None
                            else f"more than the {mib} MiB a report may have"),
                   "depth": f"nested deeper than {MAX_DEPTH} levels; not a report",
                   }.get(exc.reason, f"cannot be read as a report ({exc.problem})")
        raise ReportInputError(f"{path}: {problem}") from None
    except OSError as exc:
        raise ReportInputError(f"{path}: cannot be read as a report ({exc.strerror or exc})") from None
    from .neutral import neutral

    # a report from another machine carries its checks' texts: neutralised like this run's own (issue 43,
    # finding 12), so a control or bidi character in it reaches no terminal, claims.md or claims.html raw
    return neutral(check_plots(validate_report(data, str(path)), str(path)))


def check_plots(data: dict, name: str) -> dict:
    """``data`` (a valid report) when every plot it carries can be drawn
    (:func:`attention_claims.framework.render.plots.render_plot`): a plot's text that matplotlib cannot
    parse, or data the renderer cannot draw (series of another length than their x axis), is found here,
    with the file and the plot's JSON path, not as a traceback while the merged report is written.

    Raises:
        ReportInputError: a plot cannot be drawn (names ``name``, the JSON path and the renderer's message).
    """
    from .render.plots import render_plot

    for i, claim in enumerate(data["claims"]):
        places = [(f"$.claims[{i}]", claim), *((f"$.claims[{i}].readings[{j}]", r)
                                               for j, r in enumerate(claim["readings"]))]
        for where, entry in places:
            for k, spec in enumerate(entry.get("plots") or []):
                try:
                    render_plot(spec)
                except Exception as exc:  # untrusted data tried on the renderer: any failure is the input's
                    why = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
                    raise ReportInputError(f"{name}: the plot at {where}.plots[{k}] cannot be drawn "
                                           f"({type(exc).__name__}: {_short(why)})") from None
            profile = entry.get("failure_profile")
            if isinstance(profile, dict) and profile.get("sweep") is not None:  # drawn too (issue 46)
                from .report_model import failure_profile_from_json

                try:
                    failure_profile_from_json(profile)
                except ValueError as exc:
                    raise ReportInputError(f"{name}: the failure profile at {where}.failure_profile cannot be "
                                           f"drawn ({_short(str(exc))})") from None
    return data
