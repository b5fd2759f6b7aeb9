"""``attention-claims reference`` (issue 44, item 2): a wheel user reads the kit's and the maths' reference
without building the site: every public name, its signature and its whole docstring, from the installed code."""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path

import pytest

from attention_claims.cli import main
from attention_claims.tools.reference import PACKAGES, defining_modules, reference_markdown

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("package", PACKAGES.values())
def test_every_public_name_is_there_with_its_whole_docstring(package):
    text = reference_markdown(package)
    pkg = importlib.import_module(package)
    for name in pkg.__all__:
        obj = getattr(pkg, name)
        assert any(f"`{name}`" in line for line in text.splitlines() if line.startswith("### ")), name
        doc = inspect.getdoc(obj) if callable(obj) or inspect.ismodule(obj) else None
        if doc:  # the last line of the docstring too: nothing is cut (Sphinx roles become code spans)
            last = doc.strip().splitlines()[-1].strip()
            if ":" not in last and "`" not in last:
                assert last in text, (name, last)
    assert sum(len(v) for v in defining_modules(package).values()) == len(pkg.__all__)


def test_the_kernel_helpers_are_in_the_maths_reference():
    text = reference_markdown("attention_claims.maths")
    for name in ("positive_random_features", "trig_random_features", "prf_moments_quadrature"):
        assert f"### `{name}`\n\n```python\n{name}(" in text
    assert "Choromanski et al. 2021, Lemma 1" in text  # the docstring itself, not only the name


def test_constants_show_their_value_and_attribute_docstring():
    text = reference_markdown("attention_claims.testkit")
    entry = text.split("### `SEQUENCE_LENGTHS`", 1)[1].split("### ", 1)[0]
    assert "SEQUENCE_LENGTHS = (2, 10," in entry


def test_the_site_groups_the_names_as_the_command_does():
    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        hook = importlib.import_module("reference")
    finally:
        sys.path.remove(str(ROOT / "docs" / "hooks"))
    for package in PACKAGES.values():
        assert hook.defining_modules(package) == defining_modules(package)


def test_the_command_prints_writes_and_refuses_an_unknown_package(tmp_path, capsys):
    assert main(["reference", "maths"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# `attention_claims.maths`") and "# `attention_claims.testkit`" not in out
    target = tmp_path / "reference.md"
    assert main(["reference", "--output", str(target)]) == 0
    written = target.read_text(encoding="utf-8")
    assert written.startswith("# `attention_claims.testkit`") and "\n# `attention_claims.maths`" in written
    assert main(["reference", "kernels"]) == 4
    err = capsys.readouterr().err
    assert "unknown package 'kernels'; choose from testkit, maths" in err
    assert main(["reference", "--output", str(tmp_path / "no" / "such" / "dir.md")]) == 4
    assert "cannot be written" in capsys.readouterr().err


def test_the_testkit_page_names_every_maths_family_with_real_names():
    """docs/testkit.md has one line per module of ``attention_claims.maths`` (its ``MODULES``), and every
    name it quotes there is a public name of that module (so a renamed helper breaks this test)."""
    import re

    import attention_claims.maths as maths

    text = (ROOT / "docs" / "testkit.md").read_text(encoding="utf-8")
    block = text.split("<!-- maths-families:begin -->", 1)[1].split("<!-- maths-families:end -->", 1)[0]
    lines = re.findall(r"^- `(\w+)`: (.*?)(?=^- |\Z)", block, re.S | re.M)
    assert [m for m, _ in lines] == list(maths.MODULES)
    groups = defining_modules("attention_claims.maths")
    for module, body in lines:
        quoted = set(re.findall(r"`(\w+)`", body))
        assert quoted, module
        assert quoted <= set(groups[f"attention_claims.maths.{module}"]), (module, quoted - set(groups[f"attention_claims.maths.{module}"]))
    for name in ("positive_random_features", "trig_random_features", "prf_moments_quadrature"):
        assert f"`{name}`" in block
