"""The README's and the documentation's screenshot of the report is current (issue 46): the committed
``reports/screenshot-report.png`` carries a stamp of what it shows (:mod:`attention_claims.framework.render.stamp`),
and a change of the catalog (a claim added, removed, moved, or expected otherwise) or of the committed
verdicts (``tests/snapshots/reading-outcomes.json``) without a new screenshot fails here, naming the
command that takes one. ``.ci/run`` retakes it from its own run's report before it builds the site."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from attention_claims.framework.records import RECORDS_DIR, SOURCES_DIR, load_catalog
from attention_claims.framework.render import stamp

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = [ROOT / "reports" / "screenshot-report.png", ROOT / "reports" / "screenshot-document.png"]
SNAPSHOT = ROOT / "tests" / "snapshots" / "reading-outcomes.json"


def _catalog() -> dict:
    return stamp.catalog_fingerprint((c.id, c.expected, c.documents) for c in load_catalog(RECORDS_DIR, SOURCES_DIR))


def _snapshot_verdicts() -> dict[str, int]:
    return stamp.verdict_counts(v["verdict"] for v in json.loads(SNAPSHOT.read_text(encoding="utf-8")).values())


@pytest.mark.parametrize("png", SCREENSHOTS, ids=lambda p: p.name)
def test_the_committed_screenshot_shows_the_current_catalog(png):
    found = stamp.problems(stamp.read(png), _catalog(), _snapshot_verdicts())
    assert not found, (f"{png.relative_to(ROOT)} is stale: " + "; ".join(found)
                       + f". Take a new one from a full run's report: {stamp.REGENERATE}")


def _report(verdicts=("false", "true"), expected=("false", "caveat"), complete=True, docs=("a.txt", "b.txt")):
    return {"generated": "2026-11-28T10:44:33+00:00", "runs": [{"commit": "abc"}], "run": {"complete": complete},
            "claims": [{"id": f"c{i}", "verdict": v, "expected": e, "source": {"document": d}, "also_in": []}
                       for i, (v, e, d) in enumerate(zip(verdicts, expected, docs, strict=True))]}


def test_a_stamp_round_trips_through_the_png_and_keeps_the_pixels(tmp_path):
    from PIL import Image

    png = tmp_path / "shot.png"
    Image.new("RGB", (4, 3), (200, 10, 10)).save(png)
    assert stamp.read(png) is None
    mark = stamp.from_report(_report())
    stamp.write(png, mark)
    assert stamp.read(png) == mark
    with Image.open(png) as im:
        assert im.size == (4, 3) and im.getpixel((1, 1)) == (200, 10, 10)


def test_stale_screenshots_are_told_and_why():
    mark = stamp.from_report(_report())
    catalog = stamp.catalog_fingerprint([("c0", "false", ["a.txt"]), ("c1", "caveat", ["b.txt"])])
    shown = stamp.verdict_counts(["false", "true"])
    assert stamp.problems(mark, catalog, shown) == []
    assert stamp.problems(None, catalog, shown) == ["it carries no stamp of the report it shows (an older screenshot)"]
    # the catalog expects otherwise: the counts that moved are named
    other = stamp.catalog_fingerprint([("c0", "false", ["a.txt"]), ("c1", "true", ["b.txt"])])
    (msg,) = stamp.problems(mark, other, shown)
    assert "catalog changed" in msg and "caveat 1 -> 0" in msg and "true 0 -> 1" in msg, msg
    # same counts, a claim moved to another document or renamed: the hash still tells
    moved = stamp.catalog_fingerprint([("c0", "false", ["a.txt"]), ("c1", "caveat", ["a.txt"])])
    renamed = stamp.catalog_fingerprint([("c0", "false", ["a.txt"]), ("c9", "caveat", ["b.txt"])])
    assert moved["expected"] == renamed["expected"] == catalog["expected"]
    assert all("other claims or documents" in stamp.problems(mark, c, shown)[0] for c in (moved, renamed))
    # a verdict moved (the snapshot was updated) without a new screenshot
    (msg,) = stamp.problems(mark, catalog, stamp.verdict_counts(["false", "caveat"]))
    assert "other verdict counts than the committed snapshot" in msg and "caveat 0 -> 1" in msg, msg
    # a partial run's report is never the README's picture
    partial = stamp.from_report(_report(complete=False))
    assert any("partial run" in p for p in stamp.problems(partial, catalog, shown))


def test_a_report_without_its_fields_is_refused_by_name():
    bad = _report()
    del bad["claims"][1]["expected"]
    with pytest.raises(ValueError, match=r"claims\[1\] of the report has no 'expected'"):
        stamp.from_report(bad)
    with pytest.raises(ValueError, match="no 'claims' list"):
        stamp.from_report({"schema": 1})
    with pytest.raises(ValueError, match="unknown verdict 'maybe'"):
        stamp.verdict_counts(["maybe"])


def test_the_screenshot_command_names_a_missing_report_and_exits_4(tmp_path, capsys):
    from attention_claims.framework.render.browser import main
    from attention_claims.tools import USAGE_ERROR

    (tmp_path / "claims.html").write_text("<html></html>", encoding="utf-8")
    assert main([str(tmp_path / "claims.html"), str(tmp_path / "out")]) == USAGE_ERROR
    err = capsys.readouterr().err
    assert err.startswith("screenshot: ") and str(tmp_path / "claims.json") in err and "run pytest first" in err
    assert not (tmp_path / "out").exists()


def test_ci_takes_the_screenshot_from_its_own_report_before_it_builds_the_site():
    lines = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
             if ln.strip() and not ln.lstrip().startswith("#")]
    at = {name: next(i for i, ln in enumerate(lines) if ln.startswith(name))
          for name in ("pytest", "python -m attention_claims.framework.render.browser", "NO_MKDOCS_2_WARNING=1 mkdocs")}
    assert at["pytest"] < at["python -m attention_claims.framework.render.browser"] < at["NO_MKDOCS_2_WARNING=1 mkdocs"]
    assert lines[at["pytest"]] == "pytest", "the README's full run writes the report the screenshot shows"
    workflow = (ROOT / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8")  # the same order there
    steps = [workflow.index(f"run: {cmd}") for cmd in ("pytest\n", "python -m attention_claims.framework.render.browser",
                                                       "NO_MKDOCS_2_WARNING=1 mkdocs build")]
    assert steps == sorted(steps), steps


def _browser_reason() -> str | None:
    from attention_claims.framework.render.browser import unavailable_reason

    reason = unavailable_reason()
    if reason is not None and os.environ.get("ATTENTION_CLAIMS_REQUIRE_TOOLS") == "1":
        raise RuntimeError(f"browser test required (ATTENTION_CLAIMS_REQUIRE_TOOLS=1): {reason}")
    return reason


def test_screenshots_are_stamped_with_the_report_they_show(tmp_path):
    reason = _browser_reason()
    if reason is not None:
        pytest.skip(f"browser test: {reason}")
    from attention_claims.framework.render.browser import screenshots

    (tmp_path / "claims.html").write_text("<!doctype html><html data-ready><body><h1>report</h1></body></html>",
                                          encoding="utf-8")
    (tmp_path / "claims.json").write_text(json.dumps(_report()), encoding="utf-8")
    pngs = screenshots(tmp_path / "claims.html", tmp_path / "out")
    assert [p.name for p in pngs] == ["screenshot-report.png", "screenshot-document.png"]
    for png in pngs:
        assert stamp.read(png) == stamp.from_report(_report())
