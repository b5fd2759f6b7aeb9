"""The HTML renderer (attention_claims.framework.render), without a browser: structure, self-containment,
the annotated documents, budgets on the real report when one is on this machine."""

from __future__ import annotations

import re

import pytest
from budget import cpu_budget
from render_fixture import DOC, DOC_TEXT, fixture_report, real_report, real_sources

from attention_claims.framework.render import annotate, claim_topics, reading_kind, render_html
from attention_claims.framework.render.texmd import clean_tex, find_math, render_inline

VISIBLE_DOLLAR = re.compile(r"\$[^$<>\n]{1,80}\$")


def _strip_tex(html: str) -> str:
    """The page with the KaTeX-typeset elements, scripts and styles removed (what is left is plain text)."""
    html = re.sub(r"<script>.*?</script>|<style>.*?</style>", "", html, flags=re.S)
    html = re.sub(r'\s(data-search|title)="[^"]*"', "", html)
    return re.sub(r'<span class="tex[^"]*">.*?</span>', "", html, flags=re.S)


def test_math_found_in_both_document_styles():
    spans = find_math("a $x_1$ b $$\n\\frac{1}{2}\n$$ c \\\\begin{equation}S = \\\\frac{a\\_1}{b}\\\\end{equation}")
    assert [(s.tex, s.display) for s in spans] == [("x_1", False), ("\\frac{1}{2}", True), ("S = \\frac{a_1}{b}", True)]
    assert clean_tex("l\\_1/l\\_2") == "l_1/l_2"
    assert clean_tex("a \\\\ b") == "a \\\\ b"  # a plain LaTeX row break is left alone


def test_inline_markdown_and_math():
    html = str(render_inline("**快速初期衰减**：$\\sigma_i$ and ![x](http://e/x.png) [link](https://e)"))
    assert "<strong>快速初期衰减</strong>" in html
    assert '<span class="tex">\\sigma_i</span>' in html
    assert "<img" not in html and "[image: x]" in html
    assert '<a href="https://e"' in html


def test_page_is_self_contained_and_ordered(tmp_path):
    png = tmp_path / "figures" / "fig.png"
    png.parent.mkdir()
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"0" * 32)
    html = render_html(fixture_report("figures/fig.png"), sources={DOC: DOC_TEXT}, report_dir=tmp_path)
    page = re.sub(r"<script>.*?</script>", "", html, flags=re.S)
    assert not re.search(r'(src|href)="(?!data:|#|https?://(kexue\.fm|arxiv\.org)/|mailto:)', page)
    assert not re.search(r'<(img|script|link)[^>]+(src|href)="https?:', page)
    assert "data:image/png;base64," in html and "data:font/woff2;base64," in html
    order = [m.group(1) for m in re.finditer(r'<details class="claim v-(\w+)"', html)]
    assert order == ["false", "caveat", "true", "true", "unchecked"]
    assert "https://arxiv.org/abs/2006.04768" in html
    for kind in ("layer_head_heatmap", "spectra", "rank_breaks", "sparsity_curve", "decay_sparsity", "curve"):
        assert html.count("<svg") >= 7, kind
    assert not VISIBLE_DOLLAR.search(_strip_tex(html))


def test_counterexample_shown_once():
    html = render_html(fixture_report())
    body = html[html.index('id="c-toy-false"'):html.index('id="c-toy-caveat"')]
    assert body.count("N = 2 breaks it") == 2  # the summary line and the counterexample box, not the evidence


def test_annotated_document_marks_claim_sentences():
    report = fixture_report()
    doc = annotate(DOC, DOC_TEXT, report["claims"], {"作者认为这很有趣。": "opinion"})
    cov = doc.coverage()
    assert doc.unlocated == []
    assert cov["claim"] >= 4 and cov["not-claim"] == 1 and cov["unclassified"] >= 1
    by_claim = {c: s for s in doc.sentences for c in s.claims}
    assert by_claim["toy-false"].verdict == "false"
    assert DOC_TEXT[by_claim["toy-true"].start:by_claim["toy-true"].end].startswith("注意力矩阵的秩")
    html = render_html(report, sources={DOC: DOC_TEXT}, classification={DOC: {"作者认为这很有趣。": "opinion"}})
    assert re.search(r'<span class="s v-false" id="003-s\d+" data-claims="toy-false"', html)
    assert 'href="#c-toy-false"' in html and "not a claim: opinion" in html


def test_topics_and_reading_kinds_derived_or_given():
    report = fixture_report()
    assert claim_topics({**report["claims"][0], "topic": "kernels"}) == ["kernels"]
    kinds = {r["name"]: reading_kind(r) for c in report["claims"] for r in c["readings"]}
    assert kinds["cpu-float32"] == "dtype on CPU" and kinds["cuda-float16"] == "CUDA"
    assert kinds["on-minilm-l6-at-n-512"] == "trained model" and kinds["exact"] == "exact"


def test_renderer_does_not_modify_the_report():
    import copy

    report = fixture_report()
    before = copy.deepcopy(report)
    render_html(report, sources={DOC: DOC_TEXT})
    assert report == before


@pytest.fixture(scope="module")
def real():
    found = real_report()
    if found is None or not real_sources():
        pytest.skip("no complete full-run report yet (reports/claims.json): .ci/run runs this test again after the full run")
    return found


def test_real_report_budgets_and_quotes(real, tmp_path):
    from attention_claims.framework.render import render_markdown
    from attention_claims.framework.render.model import plot_files
    from attention_claims.framework.render.plots import warm
    from attention_claims.framework.report import write_plot_files

    report, folder = real
    sources = real_sources()
    # the checks draw their plots during the run (plugin, in the workers); here the cache is warmed first
    warm([p for c in report["claims"] for r in c.get("readings", []) for p in r.get("plots") or []])
    warm([spec for c in report["claims"] for _n, spec, _p in plot_files(c) if spec["kind"] == "failure_profile"])
    # the 3 s budget (docs/performance.md) in CPU seconds: wall-clock time failed it beside other runs
    with cpu_budget(3.0, what="writing the whole catalog's report"):
        html = render_html(report, sources=sources, report_dir=folder)
        md = render_markdown(report)
        write_plot_files(report, tmp_path)
        import json

        json.dumps(report, indent=2, ensure_ascii=False)
    assert len(html.encode()) <= 5_000_000
    assert html.count('<details class="claim') == len(report["claims"])
    assert md.count("<details") == len(report["claims"])
    for name, text in sources.items():
        assert annotate(name, text, report["claims"]).unlocated == [], name
    assert not VISIBLE_DOLLAR.search(_strip_tex(html))


def test_fixture_report_has_every_plot_kind():
    """The fixture the browser test opens carries every kind the renderer draws (so the browser test
    asserts each one), including the data forms the checks emit."""
    from attention_claims.framework.evidence import PLOT_KINDS

    kinds = {p["kind"] for c in fixture_report()["claims"] for r in c["readings"] for p in r.get("plots", [])}
    assert kinds == set(PLOT_KINDS)


def test_each_plot_drawn_with_its_kind():
    from attention_claims.framework.evidence import PLOT_KINDS

    html = render_html(fixture_report())
    for kind in PLOT_KINDS:
        figs = re.findall(rf'<figure class="plot" data-kind="{kind}"><svg[^>]*class="plot"', html)
        assert figs, kind


def test_plot_forms_the_checks_emit():
    """The per-label forms: one curve per beta with its quadrature and Monte Carlo points in its colour,
    reference lines on spectra, closed form and dashed bound on decay; nulls are gaps, not errors."""
    from render_fixture import plot_specs

    from attention_claims.framework.render.plots import render_plot, sparsity_curve_svg, spectra_svg

    specs = {(p["kind"], i): p for i, p in enumerate(plot_specs())}
    for (_kind, _i), spec in specs.items():
        assert render_plot(spec).startswith("<svg")
    assert render_plot(plot_specs()[-1]) is render_plot(plot_specs()[-1])  # memoised
    svg = spectra_svg({"L0": [1.0, 0.5, None, 0.0]}, index=[1, 2, 4, 8], vlines={"claimed rank 3": 3},
                      claimed_alpha=1, claimed_c=1.0)
    assert "claimed rank 3" in svg and "stroke-dasharray" in svg  # the dotted rank line and the dashed power law
    svg = sparsity_curve_svg([1, 2], {"β = 0": [0.9, 0.8], "β = 1": [0.7, 0.6]}, quadrature={"β = 1": [0.6]},
                             quad_x={"β = 1": [2]}, mc_x={"β = 0": [1]}, mc_y={"β = 0": [0.9]}, mc_err={"β = 0": [0.01]})
    assert "β = 0" in svg and "closed form" in svg and "quadrature" in svg and "Monte Carlo" in svg


def test_trust_lines_have_one_home():
    """The HTML and the Markdown show the same trust lines, from attention_claims.framework.trust."""
    from attention_claims.framework import trust
    from attention_claims.framework.render import html as html_mod
    from attention_claims.framework.render import markdown as md_mod

    assert not hasattr(html_mod, "_trust_lines")
    assert html_mod.trust_lines is trust.trust_lines and md_mod.trust_lines is trust.trust_lines
    t = {"planted": {"caught": 3, "falsehoods": 4, "kill_rate": 0.75, "truths": 2, "held": 2, "truth_pass_rate": 1.0,
                     "from_this_run": True},
         "stability": {"seeds": [1, 2], "profile": "ci", "claims": 9, "date": "2026-01-01", "flips": []},
         "mutation": {"tool": "mutmut", "date": "2026-01-02", "score": 0.5, "killed": 1, "total": 2}}
    rep = dict(fixture_report(), trust=t)
    page = render_html(rep)
    md = md_mod.render_markdown(rep)
    for line in trust.trust_lines(t):
        assert line in md
        assert str(render_inline(line)) in page
    assert trust.trust_lines(None) == [] and "not run yet" in trust.trust_lines({"planted": None})[0]
    partial = trust.trust_lines({"planted": {"killed": 1, "total": 2}, "stability": None, "mutation": None})
    assert "1/2" in partial[0] and "50.0 %" in partial[0]


def test_drawn_plots_are_cached_across_processes(tmp_path, monkeypatch):
    """A drawn plot is kept under the cache root keyed by code and data, and read back instead of drawn."""
    from attention_claims._cache import read_checked, write_checked
    from attention_claims.framework.render import plots

    monkeypatch.setenv("ATTENTION_CLAIMS_CACHE", str(tmp_path))
    monkeypatch.setattr(plots, "_RENDERED", {})
    spec = {"kind": "curve", "data": {"x": [1, 2], "series": {"y": [3, 4]}}}
    svg = plots.render_plot(spec)
    path = plots.plot_cache_dir() / f"{plots.plot_key(spec)}.svg"
    assert path.parent == tmp_path / "plots" and read_checked(path) == svg
    cached = svg.replace("</svg>", "<g id=\"from-the-cache\"/></svg>")
    write_checked(path, cached)
    plots._RENDERED.clear()
    assert plots.render_plot(spec) == cached
    other = {"kind": "curve", "data": {"x": [1, 2], "series": {"y": [3, 5]}}}
    assert plots.plot_key(other) != plots.plot_key(spec)
    plots.warm([other, {"kind": "curve", "data": {}}])  # the second cannot be drawn: ignored
    assert (plots.plot_cache_dir() / f"{plots.plot_key(other)}.svg").is_file()


def test_the_verdict_chart_is_drawn_once_for_the_same_counts(tmp_path, monkeypatch):
    """The report's verdict chart goes through the plot cache too: a report re-written with the same
    counts (the in-progress and final reports of a subset run, the planted runs) is not re-drawn, and
    row order is part of the key."""
    from attention_claims.framework.render import plots

    monkeypatch.setenv("ATTENTION_CLAIMS_CACHE", str(tmp_path))
    monkeypatch.setattr(plots, "_RENDERED", {})
    calls = []
    real = plots.verdict_counts_svg
    monkeypatch.setattr(plots, "verdict_counts_svg", lambda rows: calls.append(list(rows)) or real(rows))
    rows = [["003", {"false": 2, "true": 1}], ["all (each claim once)", {"false": 2, "true": 1}]]
    first = plots.render_plot({"kind": "verdict_counts", "data": {"rows": rows}})
    assert plots.render_plot({"kind": "verdict_counts", "data": {"rows": rows}}) == first
    assert calls == [["003", "all (each claim once)"]]
    plots.render_plot({"kind": "verdict_counts", "data": {"rows": rows[::-1]}})
    assert len(calls) == 2


def test_claim_cards_and_annotated_documents_are_reused_only_when_unchanged(monkeypatch):
    """A re-rendered report reuses each claim's card and each annotated document from memory (keyed by
    what they show): the page is byte-identical to a fresh rendering, and a claim whose verdict changes
    gets a new card and a re-annotated document. The disk cache is off: "fresh" means computed."""
    import copy

    monkeypatch.setenv("ATTENTION_CLAIMS_RENDER_CACHE", "0")

    from attention_claims.framework.render import html as H

    report = fixture_report()
    sources = {DOC: DOC_TEXT}
    H._CARDS.clear()
    H._ANNOTATED.clear()
    fresh = render_html(report, sources=sources)
    assert render_html(report, sources=sources) == fresh and H._CARDS and len(H._ANNOTATED) == 1
    changed = copy.deepcopy(report)
    changed["claims"][0]["verdict"] = "undecided"
    page = render_html(changed, sources=sources)
    assert len(H._ANNOTATED) == 2
    H._CARDS.clear()
    H._ANNOTATED.clear()
    assert render_html(changed, sources=sources) == page != fresh


def test_a_cached_document_view_follows_its_claims_titles(monkeypatch):
    """The annotated document's HTML is reused only while the verdicts and titles of the claims it marks
    are unchanged (disk cache off: the memory memo alone)."""
    import copy

    monkeypatch.setenv("ATTENTION_CLAIMS_RENDER_CACHE", "0")

    from attention_claims.framework.render import html as H

    report = fixture_report()
    sources = {DOC: DOC_TEXT}
    H._DOC_HTML.clear()
    first = render_html(report, sources=sources)
    renamed = copy.deepcopy(report)
    renamed["claims"][0]["title"] = "a new title for the first claim"
    page = render_html(renamed, sources=sources)
    assert page != first and len(H._DOC_HTML) == 2
    H._CARDS.clear()
    H._ANNOTATED.clear()
    H._DOC_HTML.clear()
    assert render_html(renamed, sources=sources) == page


@pytest.fixture
def fresh_render_state(tmp_path, monkeypatch):
    """An empty cache root and empty in-memory render memos, as in a fresh process; returns a function
    that empties the memos again (a "next process" reading only the disk cache)."""
    from attention_claims.framework.render import diskcache
    from attention_claims.framework.render import html as H

    monkeypatch.setenv("ATTENTION_CLAIMS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("ATTENTION_CLAIMS_RENDER_CACHE", raising=False)
    monkeypatch.setattr(diskcache, "_PRUNED", set())

    def forget():
        for name in ("_CARDS", "_DOC_HTML", "_ANNOTATED"):
            monkeypatch.setattr(H, name, {})
        H.environment.cache_clear()

    forget()
    yield forget
    H.environment.cache_clear()


def _render_fixture(tmp_path):
    return render_html(fixture_report(), sources={DOC: DOC_TEXT}, classification={DOC: {"作者认为这很有趣。": "opinion"}},
                       report_dir=tmp_path)


def test_a_fresh_process_renders_the_same_page_from_the_disk_cache(tmp_path, fresh_render_state, monkeypatch):
    """The claim cards, document views and compiled templates kept under ``<cache root>/render/`` give a
    byte-identical page in a process that has none of them in memory, and are what it reads."""
    from attention_claims._cache import read_checked, write_checked
    from attention_claims.framework.render import diskcache

    cold = _render_fixture(tmp_path)
    folder = diskcache.render_cache_dir()
    assert folder.parent == tmp_path / "cache" / "render"
    cards = sorted(folder.glob("card-*.html"))
    assert len(cards) == len(fixture_report()["claims"])
    assert len(list(folder.glob("document-*.html"))) == 1 and len(list(folder.glob("annotated-*.pickle"))) == 1
    assert list(folder.glob("tpl-*.jinja"))
    fresh_render_state()
    assert _render_fixture(tmp_path) == cold
    monkeypatch.setenv("ATTENTION_CLAIMS_RENDER_CACHE", "0")
    fresh_render_state()
    assert _render_fixture(tmp_path) == cold  # and the same as rendering without any disk cache
    monkeypatch.delenv("ATTENTION_CLAIMS_RENDER_CACHE")
    # what the next process shows is what is on disk: a (valid) edited entry is served as it is
    write_checked(cards[0], read_checked(cards[0]).replace("</details>", "<!-- from disk --></details>", 1))
    fresh_render_state()
    assert "<!-- from disk -->" in _render_fixture(tmp_path)


def test_an_edit_of_the_render_code_or_templates_misses_the_disk_cache(tmp_path, fresh_render_state, monkeypatch):
    """The disk cache's folder is named by the digest of the render package's modules and templates: an
    edit of a template (or module) changes it, and a changed digest never reads the old entries."""
    import shutil

    from attention_claims._cache import read_checked, write_checked
    from attention_claims.framework.render import diskcache

    package = tmp_path / "render"
    shutil.copytree(diskcache.PACKAGE, package, ignore=shutil.ignore_patterns("static", "vendor", "__pycache__"))
    monkeypatch.setattr(diskcache, "PACKAGE", package)
    before = diskcache.render_digest.__wrapped__()
    template = package / "templates" / "macros.html.j2"
    template.write_text(template.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    after_template = diskcache.render_digest.__wrapped__()
    (package / "texmd.py").write_text((package / "texmd.py").read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert len({before, after_template, diskcache.render_digest.__wrapped__()}) == 3

    monkeypatch.setattr(diskcache, "render_digest", lambda: "a" * 64)
    cold = _render_fixture(tmp_path)
    for card in (tmp_path / "cache" / "render" / ("a" * 16)).glob("card-*.html"):
        write_checked(card, "stale")
    fresh_render_state()
    monkeypatch.setattr(diskcache, "render_digest", lambda: "b" * 64)
    assert _render_fixture(tmp_path) == cold
    assert all(read_checked(c) != "stale" for c in (tmp_path / "cache" / "render" / ("b" * 16)).glob("card-*.html"))


def test_a_corrupt_or_unwritable_disk_cache_is_recomputed(tmp_path, fresh_render_state, monkeypatch):
    """A corrupt card, document view, annotated document or compiled template is rendered again (and
    rewritten); an unwritable cache root only costs the speed-up."""
    import pickle

    from attention_claims._cache import read_checked, write_checked
    from attention_claims.framework.render import diskcache

    cold = _render_fixture(tmp_path)
    folder = diskcache.render_cache_dir()
    entries = sorted(folder.iterdir())
    for i, path in enumerate(entries):
        path.write_bytes([b"", b"garbage\n<details>", b"\xff\xfe\x00 not utf-8", b"j2\x00\x01junk"][i % 4])
    fresh_render_state()
    assert _render_fixture(tmp_path) == cold
    assert all(read_checked(p) is not None for p in folder.glob("*.html"))
    (annotated,) = folder.glob("annotated-*.pickle")
    for bad in (pickle.dumps("not a document"), b"\x80\x05 not a pickle"):  # checksum right, content wrong
        write_checked(annotated, bad)
        fresh_render_state()
        assert _render_fixture(tmp_path) == cold
        assert pickle.loads(read_checked(annotated, binary=True)).name == DOC
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("ATTENTION_CLAIMS_CACHE", str(blocked))
    fresh_render_state()
    assert _render_fixture(tmp_path) == cold


class _Boom:
    """A global an attacker's pickle could name: unpickling it would run ``__reduce__``'s call."""

    def __reduce__(self):
        return (exec, ("raise SystemExit('a render cache entry ran code')",))


def test_the_disk_cache_runs_no_code_from_an_entry_and_reads_no_shared_folder(tmp_path, fresh_render_state,
                                                                               monkeypatch):
    """A pickle entry with the right checksum but a global other than the document classes is a bad
    entry (recomputed; its code never runs); a render folder that others may write to is not used."""
    import os
    import pickle

    from attention_claims._cache import read_checked, write_checked
    from attention_claims.framework.render import diskcache

    cold = _render_fixture(tmp_path)
    folder = diskcache.render_cache_dir()
    (annotated,) = folder.glob("annotated-*.pickle")
    write_checked(annotated, pickle.dumps(_Boom()))
    fresh_render_state()
    assert _render_fixture(tmp_path) == cold
    assert pickle.loads(read_checked(annotated, binary=True)).name == DOC
    if not hasattr(os, "getuid"):
        return
    shared = tmp_path / "shared-cache"
    (shared / "render").mkdir(parents=True)
    (shared / "render").chmod(0o777)
    monkeypatch.setenv("ATTENTION_CLAIMS_CACHE", str(shared))
    fresh_render_state()
    from attention_claims._cache import UntrustedCacheWarning

    with pytest.warns(UntrustedCacheWarning, match="others may write to it"):
        assert diskcache.render_cache_dir() is None
    assert _render_fixture(tmp_path) == cold and list((shared / "render").iterdir()) == []


def test_the_disk_cache_keeps_a_few_code_versions(tmp_path, fresh_render_state, monkeypatch):
    """Writing an entry prunes ``<cache root>/render/`` to the newest :data:`KEEP_DIGESTS` code versions."""
    import os

    from attention_claims._cache import mark_dir
    from attention_claims.framework.render import diskcache

    root = tmp_path / "cache" / "render"
    root.mkdir(parents=True, mode=0o700)
    for i in range(diskcache.KEEP_DIGESTS + 2):  # code versions the suite wrote (marked; finding 1 of issue 22)
        assert mark_dir(root / f"{i:016x}")
        (root / f"{i:016x}" / "card-x.html").write_text("x", encoding="utf-8")
        os.utime(root / f"{i:016x}", (1000 + i, 1000 + i))
    _render_fixture(tmp_path)
    newest = {f"{i:016x}" for i in range(3, diskcache.KEEP_DIGESTS + 2)} | {diskcache.render_cache_dir().name}
    assert {p.name for p in root.iterdir()} == newest and len(newest) == diskcache.KEEP_DIGESTS


def test_a_cached_card_follows_its_figure_files_and_the_plot_code(tmp_path, fresh_render_state, monkeypatch):
    """A card is keyed by what its view is made of, not by the view: a figure file's new bytes and a
    new plot drawing code (which draws the same specs differently) each give a new card."""
    import base64

    from attention_claims.framework.render import plots

    png = tmp_path / "figures" / "fig.png"
    png.parent.mkdir()
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"0" * 32)
    report = fixture_report("figures/fig.png")
    first = render_html(report, report_dir=tmp_path)
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"1" * 32)
    second = render_html(report, report_dir=tmp_path)
    assert second != first and base64.b64encode(png.read_bytes()).decode() in second
    fresh_render_state()
    assert render_html(report, report_dir=tmp_path) == second  # from the disk cache
    monkeypatch.setattr(plots, "code_digest", lambda: "0" * 64)
    monkeypatch.setattr(plots, "render_plot", lambda spec: f'<svg class="plot">redrawn {spec["kind"]}</svg>')
    third = render_html(report, report_dir=tmp_path)
    assert "redrawn spectra" in third


def test_a_monte_carlo_reading_is_sampled_evidence_not_exact():
    from attention_claims.framework.render import model

    mc = {"name": "as-stated", "as_stated": True, "condition": {},
          "statement": "A Monte Carlo estimate over 10^5 random draws of k agrees within 6 standard errors."}
    assert model.reading_kind(mc) == "sampled"
    assert model.reading_kind({"name": "monte-carlo-cpu-float64", "condition": {"dtype": "float64"}}) == "sampled"
    assert model.reading_kind({"name": "as-stated", "as_stated": True, "condition": {},
                               "statement": "For every rational q the moments agree exactly."}) == "exact"


def _listed_folder(folder, docs: dict[str, str]):
    import hashlib

    folder.mkdir(exist_ok=True)
    lines = []
    for name, text in docs.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
        lines.append(f"{hashlib.sha256(text.encode()).hexdigest()}  {name}\n")
    (folder / "SHA256SUMS").write_text("".join(lines), encoding="utf-8")
    return folder


NOTE = "# A note\n\nLinear attention uses a feature map [Tsa19]. Note that its cost is linear in $N$.\n"


def test_every_listed_document_of_any_format_and_folder_is_annotated(tmp_path):
    """Issue 34.1: a ``.md``, a ``.tex`` and an ``.html`` document and one in a subfolder, all listed in
    SHA256SUMS, each get an annotated view with the claim's sentence highlighted and linked; an unlisted
    ``.txt`` does not."""
    from attention_claims.framework.render import load_sources
    from attention_claims.framework.render.model import document_slug

    docs = {"note.md": NOTE, "papers/draft.tex": NOTE, "page.html": NOTE, "sub/dir/n.txt": NOTE}
    folder = _listed_folder(tmp_path / "sources", docs)
    (folder / "stray.txt").write_text(NOTE, encoding="utf-8")
    sources = load_sources(folder)
    assert sorted(sources) == sorted(docs)
    claims = [{"id": f"c{k}", "title": "t", "verdict": "false", "expected": "false", "statement": "s",
               "source": {"document": d, "section": "1", "quote": "Note that its cost is linear in $N$."},
               "readings": []} for k, d in enumerate(docs)]
    report = {"schema": 1, "generated": "x", "environment": {}, "claims": claims, "run": {"complete": True},
              "documents": {"note.md": {"title": "A note on linear attention"}}}
    html = render_html(report, sources=sources)
    for k, name in enumerate(docs):
        slug = document_slug(name)
        assert f'id="view-doc-{slug}"' in html and f'href="#doc-{slug}"' in html
        span = re.search(rf'<span class="s v-false" id="{slug}-s(\d+)" data-claims="c{k}"', html)
        assert span and span.group(1) == "2", name  # heading s0, the citation sentence s1, the claim s2
        assert f'href="#{slug}-s2"' in html
    assert "note.md — A note on linear attention" in html
    assert "stray" not in html


def test_no_sha256sums_no_documents(tmp_path):
    from attention_claims.framework.render import load_sources

    (tmp_path / "a.txt").write_text(NOTE, encoding="utf-8")
    assert load_sources(tmp_path) == {}


def test_an_html_document_is_shown_as_its_text_with_its_claims(tmp_path):
    """Issue 34.1, ``.html``: tags are neither text nor sentences (a block tag ends a paragraph), script
    and style content is dropped, character references are decoded, and a quote copied from the page's
    source (tags included) highlights its sentence."""
    page = ("<html><head><style>p {color: red}</style></head><body>\n<h1>A note</h1>\n"
            "<p>Linear attention uses a map [Tsa19]. Note that its <b>cost</b> is linear &amp; cheap.</p>"
            "<script>document.title = 'PWNED'. x</script></body></html>\n")
    claims = [{"id": "c", "title": "t", "verdict": "true", "expected": "true", "statement": "s",
               "source": {"document": "page.html", "section": "1", "quote": "its <b>cost</b> is linear"},
               "readings": []}]
    html = render_html({"schema": 1, "generated": "x", "environment": {}, "claims": claims, "run": {"complete": True}},
                       sources={"page.html": page})
    view = html.split('id="view-doc-page-html-')[1].split("</section>")[0]
    assert "PWNED" not in view and "color: red" not in view and "&lt;b&gt;" not in view
    assert '<article class="doc" lang="en">' in view  # an English page is not typeset as Chinese
    assert re.search(r'<span class="s v-true" id="page-html-[0-9a-f]{8}-s2" data-claims="c"[^>]*>Note that its cost '
                     r"is linear &amp; cheap\.</span>", view), view
    assert annotate("page.html", page, claims).coverage()["total"] == 3  # heading, two sentences
