"""Issue 22, finding 3: caches that someone else could write decided verdicts (a planted reference
entry) and what the report runs (a planted plot SVG with a script, a truncated one, one without a
viewBox)."""

from __future__ import annotations

import hashlib
import json
import warnings

import mpmath
import pytest

from attention_claims._cache import UntrustedCacheWarning, disk_memo, read_checked, write_checked

CALLS = []


@disk_memo
def _third(x):
    CALLS.append(x)
    return mpmath.mpf(x) / 3


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh cache root and a fresh process's folder checks."""
    from attention_claims._cache import _trusted
    from attention_claims.framework.render import plots

    monkeypatch.setenv("ATTENTION_CLAIMS_CACHE", str(tmp_path))
    monkeypatch.delenv("ATTENTION_CLAIMS_REFERENCE_CACHE", raising=False)
    monkeypatch.setattr(plots, "_RENDERED", {})
    _trusted.cache_clear()
    CALLS.clear()
    yield tmp_path
    _trusted.cache_clear()


def _entry(tmp_path):
    [path] = (tmp_path / "references").rglob("*.json")
    return path


def test_finding_3_a_writable_references_folder_is_ignored_with_one_warning(cache):
    honest = _third(1.0)
    path = _entry(cache)
    (cache / "references").chmod(0o777)
    (path.parent).chmod(0o777)
    path.write_text(json.dumps([0, "0x1", -1, 1]), encoding="utf-8")  # the planted 1/2 of the issue
    write_checked(path.with_name("planted.json"), "anything")
    from attention_claims._cache import _trusted

    _trusted.cache_clear()
    with pytest.warns(UntrustedCacheWarning, match=r"references: others may write to it") as record:
        assert _third(1.0)._mpf_ == honest._mpf_
        assert _third(1.0)._mpf_ == honest._mpf_
    assert len([w for w in record if issubclass(w.category, UntrustedCacheWarning)]) == 1
    assert len(CALLS) == 3  # computed every time, never read from the folder


def test_finding_3_a_planted_entry_with_a_valid_checksum_is_still_keyed(cache):
    honest = _third(2.0)
    path = _entry(cache)
    key = path.stem
    # the old plain-JSON format, a wrong checksum, another key, a malformed mantissa: all recomputed
    bad = [json.dumps([0, "0x1", -1, 1]),
           "0" * 64 + "\n" + json.dumps({"key": key, "value": [0, "0x1", -1, 1]})]
    for text in bad:
        path.write_text(text, encoding="utf-8")
        assert _third(2.0)._mpf_ == honest._mpf_
    for entry in ({"key": "0" * 64, "value": [0, "0x1", -1, 1]}, {"key": key, "value": [0, "0x2", -1, 2]},
                  {"key": key, "value": [0, "zz", -1, 1]}, {"key": key}, [0, "0x1", -1, 1]):
        write_checked(path, json.dumps(entry))
        assert _third(2.0)._mpf_ == honest._mpf_
    assert len(CALLS) == 1 + len(bad) + 5
    # what a hit reads is what was written, under its key, with its checksum
    text = read_checked(path)
    assert json.loads(text)["key"] == key and path.read_bytes().startswith(hashlib.sha256(text.encode()).hexdigest().encode())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _third(2.0)._mpf_ == honest._mpf_ and len(CALLS) == 1 + len(bad) + 5


SPEC = {"kind": "curve", "data": {"x": [1, 2, 3], "series": {"y": [3, 4, 2]}}}
EVIL = [
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"><script>alert(1)</script></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1" onload="alert(1)"/>',
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"><a href="javascript:alert(1)"><text>x</text></a></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg" xmlns:x="http://www.w3.org/1999/xlink" viewBox="0 0 1 1">'
    '<image x:href="https://example.org/track.png"/></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"><foreignObject><div>x</div></foreignObject></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"><style>@import url(https://e.org/x.css);</style></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"><rect style="fill:url(https://e.org/x)"/></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg"><rect/></svg>',  # no viewBox: was an INTERNALERROR
    '<svg>from the cache</svg>',
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"><rect',  # truncated
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"><!DOCTYPE x [<!ENTITY a "b">]></svg>',
]


def test_finding_3_drawn_plots_are_safe_svg_and_planted_ones_are_not():
    from attention_claims.framework.render import plots

    drawn = [plots.render_plot(SPEC),
             plots.render_plot({"kind": "verdict_counts", "data": {"rows": [["all", {"true": 3, "false": 1}]]}}),
             plots.render_plot({"kind": "curve", "data": {"x": [1, 10, 100], "logx": True, "series": {"a": [1, 2, 3]}}}),
             plots.layer_head_heatmap_svg({"energy_top10": [[0.5, 0.25], [0.75, float("nan")]]}, "m", 8)]
    assert "data:image/png;base64," in drawn[-1]  # an inline image: a link that is allowed
    assert all(plots.safe_svg(svg) for svg in drawn)
    assert not any(plots.safe_svg(svg) for svg in EVIL)


@pytest.mark.parametrize("planted", EVIL + ["truncate"])
def test_finding_3_a_planted_or_truncated_plot_is_drawn_again(cache, planted):
    from attention_claims.framework.render import plots

    svg = plots.render_plot(SPEC)
    path = plots.plot_cache_dir() / f"{plots.plot_key(SPEC)}.svg"
    assert path.parent == cache / "plots" and read_checked(path) == svg
    if planted == "truncate":
        path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    else:
        write_checked(path, planted)  # even with a valid checksum
    plots._RENDERED.clear()
    again = plots.render_plot(SPEC)
    assert again == svg and plots.safe_svg(again) and "viewBox" in plots.standalone_svg(again)
    assert read_checked(path) == svg  # the entry is rewritten


def test_finding_3_a_plots_folder_others_may_write_is_not_read(cache):
    from attention_claims.framework.render import plots

    svg = plots.render_plot(SPEC)
    (cache / "plots").chmod(0o777)
    lookalike = svg.replace("</svg>", "<g id=\"planted\"/></svg>")
    write_checked(cache / "plots" / f"{plots.plot_key(SPEC)}.svg", lookalike)
    from attention_claims._cache import _trusted

    _trusted.cache_clear()
    plots._RENDERED.clear()
    with pytest.warns(UntrustedCacheWarning, match="plots"):
        assert plots.render_plot(SPEC) == svg and plots.plot_cache_dir() != cache / "plots"


def test_finding_3_measurement_and_converted_model_folders_are_checked(cache):
    from attention_claims._cache import cache_dir

    (cache / "measurements").mkdir(mode=0o700)
    assert cache_dir("measurements") == cache / "measurements"
    (cache / "smollm2-135m-f32").mkdir()
    (cache / "smollm2-135m-f32").chmod(0o777)
    assert cache_dir("missing-f32", create=False) == cache / "missing-f32"
    assert not (cache / "missing-f32").exists()
    with pytest.warns(UntrustedCacheWarning, match="smollm2-135m-f32"):
        other = cache_dir("smollm2-135m-f32", create=False)
    assert other != cache / "smollm2-135m-f32" and other.name == "smollm2-135m-f32"
    assert other.parent.is_dir() and not other.exists()
