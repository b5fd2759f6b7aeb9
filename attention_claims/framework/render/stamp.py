"""What a report screenshot shows, written into the PNG itself, so that a stale screenshot can be told.

:func:`attention_claims.framework.render.browser.screenshots` writes a PNG text chunk (``tEXt``, key
:data:`KEY`; PNG specification, section 11.3.4.3) holding JSON: the verdict counts of the report it
photographed, that report's date, commit and whether it was a complete run, and a fingerprint of the
catalog it was built from (:func:`catalog_fingerprint`: the number of claims, the counts of their
``expected`` verdicts and a SHA-256 over each claim's id, ``expected`` and documents). The test
``tests/test_screenshot_current.py`` compares the committed ``reports/screenshot-report.png`` with the
current catalog and the committed verdict snapshot (``tests/snapshots/reading-outcomes.json``) by
:func:`problems`, so a catalog or verdict change without a new screenshot fails with the command that
makes one (:data:`REGENERATE`).

The chunk is written and read with Pillow (``PIL.PngImagePlugin.PngInfo``), which matplotlib installs.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterable
from pathlib import Path

__all__ = ["KEY", "REGENERATE", "catalog_fingerprint", "from_report", "write", "read", "problems", "verdict_counts"]

KEY = "attention-claims"
"""The key of the PNG text chunk that holds the stamp."""

REGENERATE = "pytest && python -m attention_claims.framework.render.browser reports/claims.html reports/"
"""The commands that write a current screenshot: a full run's report, then its picture (``.ci/run`` does both)."""

VERDICTS = ("false", "caveat", "true", "unchecked", "undecided", "error")
"""The verdicts counted, in the report's order (DESIGN.md, "Verdicts")."""


def verdict_counts(verdicts: Iterable[str]) -> dict[str, int]:
    """``{verdict: count}`` over :data:`VERDICTS` (zeros included) of ``verdicts``, one per claim.

    Raises:
        ValueError: a verdict outside :data:`VERDICTS`.
    """
    counts = dict.fromkeys(VERDICTS, 0)
    for v in verdicts:
        if v not in counts:
            raise ValueError(f"unknown verdict {v!r} (one of {', '.join(VERDICTS)})")
        counts[v] += 1
    return counts


def catalog_fingerprint(claims: Iterable[tuple[str, str, Iterable[str]]]) -> dict:
    """The catalog as a screenshot shows it: ``{"claims": n, "expected": {verdict: count},
    "sha256": hex}`` of ``claims``, ``(id, expected, documents)`` per claim (``documents``: the source
    document first, then each ``also_in`` one). The hash is over the lines ``id<TAB>expected<TAB>doc doc``
    sorted by id, UTF-8, joined by newlines: it changes when a claim is added, removed, renamed, moved to
    another document or expected otherwise, and not when a quote or a note is edited."""
    rows = sorted((str(cid), str(exp), " ".join(dict.fromkeys(docs))) for cid, exp, docs in claims)
    text = "\n".join("\t".join(row) for row in rows)
    return {"claims": len(rows), "expected": verdict_counts(exp for _cid, exp, _docs in rows),
            "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}


def from_report(report: dict) -> dict:
    """The stamp of a screenshot of ``report`` (a ``claims.json``, DESIGN.md "Report"): ``{"verdicts":
    {verdict: count}, "catalog": catalog_fingerprint(...), "report": {"generated", "commit", "complete"}}``.

    Raises:
        ValueError: ``report`` is not a report (no ``claims`` list, a claim without ``id``, ``verdict``,
            ``expected`` or ``source.document``), naming what is missing.
    """
    claims = report.get("claims") if isinstance(report, dict) else None
    if not isinstance(claims, list):
        raise ValueError("not a claims.json report: no 'claims' list")
    rows, verdicts = [], []
    for i, c in enumerate(claims):
        try:
            docs = [c["source"]["document"], *(s["document"] for s in c.get("also_in") or [])]
            rows.append((c["id"], c["expected"], docs))
            verdicts.append(c["verdict"])
        except (KeyError, TypeError) as exc:
            raise ValueError(f"claims[{i}] of the report has no {exc}") from None
    runs = report.get("runs") or [{}]
    run = report.get("run") or {}
    return {"verdicts": verdict_counts(verdicts), "catalog": catalog_fingerprint(rows),
            "report": {"generated": report.get("generated"), "commit": runs[-1].get("commit"),
                       "complete": bool(run.get("complete"))}}


#: The largest screenshot read (a 1280 x 1000 PNG is about 0.3 MB).
PNG_MAX_BYTES = 32 << 20


def write(png: str | Path, stamp: dict) -> None:
    """Rewrite the PNG ``png`` with ``stamp`` (JSON) in its :data:`KEY` text chunk; the pixels are kept."""
    from PIL import Image
    from PIL.PngImagePlugin import PngInfo

    from ... import _files

    info = PngInfo()
    info.add_text(KEY, json.dumps(stamp, sort_keys=True))
    with Image.open(io.BytesIO(_files.read_regular(png, PNG_MAX_BYTES))) as im:
        im.load()
        image = im.copy()
    out = io.BytesIO()
    image.save(out, format="PNG", pnginfo=info, optimize=True)
    _files.write_file(png, out.getvalue())  # the package's one write (atomic: a stopped run leaves the old PNG)


def read(png: str | Path) -> dict | None:
    """The stamp in the PNG ``png``, or ``None`` when it has none.

    Raises:
        ValueError: the chunk is there but not a JSON object.
    """
    from PIL import Image

    from ... import _files

    with Image.open(io.BytesIO(_files.read_regular(png, PNG_MAX_BYTES))) as im:
        text = getattr(im, "text", {}).get(KEY)
    if text is None:
        return None
    try:
        stamp = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{png}: its {KEY!r} text chunk is not JSON ({exc})") from None
    if not isinstance(stamp, dict):
        raise ValueError(f"{png}: its {KEY!r} text chunk is not a JSON object")
    return stamp


def problems(stamp: dict | None, catalog: dict, verdicts: dict[str, int]) -> list[str]:
    """Why a screenshot with ``stamp`` is not current (empty: it is): it has no stamp, was taken of a
    partial run, of another catalog than ``catalog`` (a :func:`catalog_fingerprint`), or shows other
    verdict counts than ``verdicts`` (those of the committed snapshot: what a full CPU run gives)."""
    if stamp is None:
        return ["it carries no stamp of the report it shows (an older screenshot)"]
    out = []
    report = stamp.get("report") or {}
    if not report.get("complete"):
        out.append(f"it shows a partial run's report (generated {report.get('generated')}), not a full run's")
    shot = stamp.get("catalog") or {}
    if shot.get("sha256") != catalog["sha256"]:
        diff = ", ".join(f"{v} {shot.get('expected', {}).get(v)} -> {n}" for v, n in catalog["expected"].items()
                         if shot.get("expected", {}).get(v) != n)
        out.append(f"the catalog changed since it was taken ({shot.get('claims')} -> {catalog['claims']} claims"
                   + (f"; expected {diff}" if diff else "; same counts of expected, other claims or documents") + ")")
    shown = stamp.get("verdicts") or {}
    if shown != verdicts:
        diff = ", ".join(f"{v} {shown.get(v)} -> {n}" for v, n in verdicts.items() if shown.get(v) != n)
        out.append(f"it shows other verdict counts than the committed snapshot ({diff})")
    return out
