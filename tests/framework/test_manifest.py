"""Documents as data (issue 23): titles, authors and links of documents come from the sources
folder's ``documents.toml``, not from code; the report carries them; a malformed manifest is a usage
error naming the file and field."""

from __future__ import annotations

import pytest
from test_plugin import checks

from attention_claims.framework.records import ClaimRecordError, load_manifest
from attention_claims.framework.render import render_html, render_markdown
from conftest import record_toml


def test_the_report_shows_the_manifests_titles_and_links(planted, pytester):
    sources = pytester.path / "sources"
    sources.mkdir()
    (sources / "documents.toml").write_text('["003_a0ad15dda516ed1d.txt"]\ntitle = "A planted chapter"\n'
                                            'url = "https://example.org/chapter"\nauthor = "Someone"\n',
                                            encoding="utf-8")
    run = planted({"c.toml": record_toml("c")}, checks(exact="pass"))
    report = run.report
    assert report["documents"] == {"003_a0ad15dda516ed1d.txt": {"title": "A planted chapter",
                                                               "url": "https://example.org/chapter",
                                                               "author": "Someone"}}
    md = render_markdown(report)
    assert "003 — A planted chapter" in md and "(https://example.org/chapter)" in md
    html = render_html(report)
    assert "003 — A planted chapter" in html and 'href="https://example.org/chapter"' in html
    bare = render_markdown(dict(report, documents={}))
    assert "A planted chapter" not in bare and "003_a0ad15dda516ed1d.txt" in bare  # no manifest: the name


@pytest.mark.parametrize("text, field, problem", [
    ('["a.md"]\ncolour = "red"\n', "a.md.colour", "unknown field"),
    ('["a.md"]\ntitle = 3\n', "a.md.title", "must be a string"),
    ('["a.md"]\nurl = "javascript:alert(1)"\n', "a.md.url", "http(s) URL"),
    ('["a.md"\n', None, "cannot be read as TOML"),
])
def test_a_malformed_manifest_names_the_file_and_field(tmp_path, text, field, problem):
    (tmp_path / "documents.toml").write_text(text, encoding="utf-8")
    with pytest.raises(ClaimRecordError) as err:
        load_manifest(tmp_path)
    assert "documents.toml" in str(err.value) and problem in str(err.value)
    if field:
        assert field in str(err.value)


def test_a_malformed_manifest_stops_the_run_with_exit_4(planted, pytester):
    sources = pytester.path / "sources"
    sources.mkdir()
    (sources / "documents.toml").write_text('["x.md"]\ncolour = "red"\n', encoding="utf-8")
    run = planted({"c.toml": record_toml("c")}, checks(exact="pass"))
    assert run.result.ret == 4 and "documents.toml" in run.result.stderr.str()
