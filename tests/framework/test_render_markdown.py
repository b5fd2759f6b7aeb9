"""The Markdown renderer: the answer first, false before caveat before true before unchecked, no repeats."""

from __future__ import annotations

from render_fixture import fixture_report

from attention_claims.framework.render import render_markdown
from attention_claims.framework.render.markdown import md_cell, md_text


def test_sections_in_order_and_summary_first():
    md = render_markdown(fixture_report())
    heads = [line for line in md.splitlines() if line.startswith("## ")]
    assert heads == ["## False (1)", "## True with a caveat (1)", "## True (2)",
                     "## Unchecked (computation cannot judge them) (1)"]
    assert md.index("| **all**") < md.index("## False")
    assert len(md[:md.index("## False")].splitlines()) < 40  # the summary fits one screen


def test_each_claim_folded_and_counterexample_once():
    md = render_markdown(fixture_report())
    assert md.count("<details") == md.count("</details>") == 5
    assert md.count("N = 2 breaks it") == 2  # summary line and the counterexample paragraph


def test_math_is_github_math():
    assert md_text("$l\\_1/l\\_2$ and \\\\begin{equation}x\\\\end{equation}") == "$l_1/l_2$ and \n\n$$\nx\n$$\n\n"
    assert md_cell("a | $b$") == "a \\| $b$"


def test_plots_written_as_svg_and_linked(tmp_path):
    """Every plot of the report becomes figures/<claim id>-<k>.svg (a standalone SVG file with a size),
    linked from claims.md; SVG files of an earlier report (listed in the folder's manifest) are removed,
    other files are kept."""
    import xml.etree.ElementTree as ET

    from attention_claims.framework.render.model import plot_files
    from attention_claims.framework.report import write_plot_files

    rep = fixture_report()
    from attention_claims.framework.report_folder import ReportFolder

    ReportFolder(tmp_path).write({"figures/stale-1.svg": "<svg/>"})  # a plot of an earlier report
    (tmp_path / "figures" / "9889-relu2.png").write_bytes(b"png")
    (tmp_path / "figures" / "logo.svg").write_text("<svg/>", encoding="utf-8")  # not the writer's: kept
    written = write_plot_files(rep, tmp_path)
    expected = [tmp_path / rel for c in rep["claims"] for _n, _s, rel in plot_files(c)]
    assert written == expected and len(written) == sum(len(r.get("plots", [])) for c in rep["claims"]
                                                        for r in c["readings"])
    for path in written:
        root = ET.fromstring(path.read_bytes())
        assert root.tag.endswith("svg") and root.get("width", "").endswith("pt")
    assert not (tmp_path / "figures" / "stale-1.svg").exists()
    assert (tmp_path / "figures" / "9889-relu2.png").exists() and (tmp_path / "figures" / "logo.svg").exists()
    md = render_markdown(rep)
    for path in written:
        rel = path.relative_to(tmp_path).as_posix()
        assert f"]({rel})" in md
        assert rel.startswith("figures/") and rel.endswith(".svg")


def test_plot_links_have_readable_captions():
    from attention_claims.framework.render.markdown import _plot_caption

    assert _plot_caption({"kind": "layer_head_heatmap", "data": {"model": "m", "N": 8}}) == "m, N = 8: per layer and head"
    assert _plot_caption({"kind": "curve", "data": {"title": "a [b]\n c"}}) == "a (b) c"
    assert "IEEE" in _plot_caption({"kind": "rank_breaks", "data": {}})


def test_what_a_check_wrote_is_plain_text_in_both_reports():
    """A counterexample message is plain text: ``lam**n`` (Python's power) must not turn into bold in the
    HTML or in the Markdown, and a record's own Markdown (a note) still renders."""
    from attention_claims.framework.render import render_html

    report = fixture_report()
    message = "the claimed s = (1 - lam**n) / (1 + lam**n) is undefined at lam = 1 [n = 1] x_1"
    for r in report["claims"][0]["readings"]:
        if r.get("counterexample"):
            r["counterexample"]["message"] = message
            r["counterexample"]["boundary"] = "ties once lam**n < 2**-53"
    html = render_html(report)
    assert "(1 - lam**n) / (1 + lam**n)" in html and "lam<strong>" not in html and "ties once lam**n" in html
    assert "A <strong>bold</strong> note." in html
    md = render_markdown(report)
    assert r"(1 - lam\*\*n) / (1 + lam\*\*n) is undefined at lam = 1 \[n = 1\] x\_1" in md
    assert r"ties once lam\*\*n \< 2\*\*-53" in md


def test_claim_sections_come_from_the_disk_cache_byte_identical(tmp_path, monkeypatch):
    """Each claim's ``<details>`` block is kept under ``<cache root>/render/`` (kind ``md``): a process with
    nothing in memory writes the same Markdown from it as a cold one, and as one without the disk cache;
    a corrupt entry is rendered again."""
    from attention_claims._cache import read_checked, write_checked
    from attention_claims.framework.render import diskcache, markdown

    monkeypatch.setenv("ATTENTION_CLAIMS_CACHE", str(tmp_path))
    monkeypatch.delenv("ATTENTION_CLAIMS_RENDER_CACHE", raising=False)

    def forget():
        monkeypatch.setattr(markdown, "_SECTIONS", {})
        markdown._environment.cache_clear()

    forget()
    report = fixture_report()
    cold = render_markdown(report)
    entries = sorted(diskcache.render_cache_dir().glob("md-*.html"))
    assert len(entries) == len(report["claims"])
    forget()
    assert render_markdown(report) == cold
    monkeypatch.setenv("ATTENTION_CLAIMS_RENDER_CACHE", "0")
    forget()
    assert render_markdown(report) == cold
    monkeypatch.delenv("ATTENTION_CLAIMS_RENDER_CACHE")
    write_checked(entries[0], read_checked(entries[0]) + "from disk\n")
    forget()
    assert "from disk\n" in render_markdown(report)
    entries[0].write_text("not a checked entry", encoding="utf-8")
    forget()
    assert render_markdown(report) == cold
    markdown._environment.cache_clear()
