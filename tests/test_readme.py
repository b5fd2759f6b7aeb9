"""The README stays true and short: CI runs its two commands, its links lead somewhere; the catalog counts
(docs/catalog.md) are generated, and the architecture page (docs/architecture.md) lists every module."""

from __future__ import annotations

import re
from pathlib import Path

from attention_claims.tools.catalog import BEGIN, END, render_block

ROOT = Path(__file__).resolve().parents[1]


def _quick_start() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [ln.strip() for ln in block.strip().splitlines()]


def test_catalog_block_is_generated():
    text = (ROOT / "docs" / "catalog.md").read_text(encoding="utf-8")
    block = BEGIN + text.split(BEGIN, 1)[1].split(END, 1)[0] + END
    assert block == render_block(), "docs/catalog.md counts are stale: run attention-claims catalog --update docs/catalog.md"


def test_catalog_update_of_a_file_without_the_block_is_a_usage_error(tmp_path, capsys):
    from attention_claims.tools.catalog import main

    page = tmp_path / "page.md"
    page.write_text("no block here\n", encoding="utf-8")
    assert main(["--update", str(page)]) == 4
    assert main(["--update", str(tmp_path / "missing.md")]) == 4
    err = capsys.readouterr().err
    assert "page.md: no <!-- catalog:begin -->" in err and "missing.md" in err and "Traceback" not in err
    assert page.read_text(encoding="utf-8") == "no block here\n"


def test_readme_is_a_short_page_whose_links_exist():
    """A newcomer's page (issue 34): at most 150 lines, and every relative link or image names a file here."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if "://" not in t]
    assert "reports/screenshot-report.png" in local and "docs/your-own-claims.md" in local
    assert [t for t in local if not (ROOT / t).exists()] == []


def test_quick_start_is_two_commands_and_ci_runs_them():
    install, run = _quick_start()
    assert "-c constraints.txt" in install and run == "pytest"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert install in [ln.strip() for ln in ci]
    assert run in [ln.strip() for ln in ci]


def test_every_module_is_listed_in_the_architecture_page():
    """One line per module in the layout table of docs/architecture.md, so "where is X computed" has one answer."""
    root = Path(__file__).resolve().parents[1]
    text = (root / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = text[text.index("<!-- layout:begin -->"):text.index("<!-- layout:end -->")]
    listed = set(re.findall(r"`(attention_claims/[\w/]+(?:\.py|/))`", block))
    missing = []
    for path in sorted((root / "attention_claims").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if path.name == "__init__.py" or any(rel.startswith(d) for d in listed if d.endswith("/")):
            continue
        if rel not in listed:
            missing.append(rel)
    assert not missing, f"modules missing from the layout table of docs/architecture.md: {missing}"
    rows = re.findall(r"^\| `(attention_claims/[\w/]+(?:\.py|/))` \|", block, re.M)
    assert sorted({r for r in rows if rows.count(r) > 1}) == [], "a module with two rows in docs/architecture.md"
    assert [r for r in rows if not (root / r).exists()] == [], "a row of docs/architecture.md names no module"


def test_claims_folder_holds_only_records():
    root = Path(__file__).resolve().parents[1]
    stray = [p.relative_to(root).as_posix() for p in (root / "claims").rglob("*")
             if p.is_file() and p.suffix not in (".toml", ".md")]
    assert not stray, f"claims/ holds the records and their README only, found {stray}"


def test_pyproject_pins_nothing_exactly_and_constraints_pin_everything():
    import tomllib

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    deps = meta["dependencies"] + [d for extra in meta.get("optional-dependencies", {}).values() for d in extra]
    assert not [d for d in deps if "==" in d], "pyproject.toml states ranges; exact pins go in constraints.txt"
    pins = [ln for ln in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines()
            if ln.strip() and not ln.startswith("#")]
    assert all("==" in ln for ln in pins) and any(ln.startswith("torch==") for ln in pins)


def test_no_public_name_shadows_a_submodule():
    """``from attention_claims.maths import X`` must not depend on import order: once a submodule
    ``attention_claims.maths.X`` is imported, the package attribute ``X`` is that module."""
    import attention_claims.maths as maths
    import attention_claims.models as models

    for layer in (maths, models):
        assert not set(layer.__all__) & set(layer.MODULES), layer.__name__
