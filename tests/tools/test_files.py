"""``attention_claims._files``: the one home for reading user files safely and for ``SHA256SUMS``
(issue 33, findings 5 and 7), and the layering it allows (models import no framework module)."""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

import pytest

from attention_claims import _files

PACKAGE = Path(_files.__file__).resolve().parent
D1, D2 = "a" * 64, "b" * 64


def test_read_regular_reads_up_to_the_cap_and_names_path_and_cap(tmp_path):
    f = tmp_path / "f.txt"
    f.write_bytes(b"x" * 10)
    assert _files.read_regular(f, 10) == b"x" * 10
    with pytest.raises(_files.UnsafeFileError) as err:
        _files.read_regular(f, 9)
    assert str(f) in str(err.value) and "larger than 9 bytes" in str(err.value)
    assert err.value.problem == "larger than 9 bytes (the limit)"


@pytest.mark.parametrize("special, kind", [("dir", "a directory"), ("/dev/zero", "a character device"),
                                           ("fifo", "a FIFO")])
def test_read_regular_refuses_what_is_not_a_regular_file(tmp_path, special, kind):
    if special == "dir":
        path = tmp_path
    elif special == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs on this system")
        path = tmp_path / "pipe"
        os.mkfifo(path)
    else:
        if not Path(special).exists():
            pytest.skip(f"no {special}")
        path = tmp_path / "zero"
        path.symlink_to(special)
    with pytest.raises(_files.UnsafeFileError, match=f"not a regular file \\({kind}\\)"):
        _files.read_regular(path, 100)
    with pytest.raises(_files.UnsafeFileError):
        _files.open_regular(path)


def test_read_regular_missing_file_is_an_oserror(tmp_path):
    with pytest.raises(FileNotFoundError):
        _files.read_regular(tmp_path / "none", 10)
    (tmp_path / "dangling").symlink_to(tmp_path / "none")
    with pytest.raises(FileNotFoundError):
        _files.read_regular(tmp_path / "dangling", 10)


def test_parse_sums_tolerates_bom_crlf_binary_mode_and_blank_lines():
    text = f"\ufeff{D1}  a.md\r\n\r\n{D2} *sub/b.txt\r\n"
    assert _files.parse_sums(text, "S") == {"a.md": D1, "sub/b.txt": D2}


@pytest.mark.parametrize("line", [f"{D1[:-1]}  a.md", f"{D1.upper()}  a.md", f"{D1}  ../a.md", f"{D1}  /etc/x",
                                  f"{D1}  a\\b", f"{D1}  ", f"{D1}  a\x07.md"])
def test_parse_sums_refuses_a_malformed_line_naming_file_and_line(line):
    with pytest.raises(_files.SumsError, match=r"SUMS: line 2 is not"):
        _files.parse_sums(f"{D2}  ok.md\n{line}\n", "SUMS")


@pytest.mark.parametrize("existing, expected", [
    (b"", f"{D2}  new.md\n".encode()),
    (f"{D1}  a.md\n".encode(), f"{D1}  a.md\n{D2}  new.md\n".encode()),
    (f"{D1}  a.md".encode(), f"{D1}  a.md\n{D2}  new.md\n".encode()),  # no final newline: one is added
    (f"{D1}  a.md\r\n".encode(), f"{D1}  a.md\r\n{D2}  new.md\r\n".encode()),
    (f"{D1}  a.md\r\n{D1}  c.md".encode(), f"{D1}  a.md\r\n{D1}  c.md\r\n{D2}  new.md\r\n".encode()),
])
def test_sums_with_appends_one_line_never_glued(existing, expected):
    out = _files.sums_with(existing, "new.md", D2)
    assert out == expected
    assert set(_files.parse_sums(out.decode(), "S")) >= {"new.md"}


def test_sums_with_refuses_a_name_that_is_not_a_relative_path():
    with pytest.raises(_files.SumsError, match="cannot list"):
        _files.sums_with(b"", "../up.md", D2)


def test_read_sums_missing_file_lists_nothing_and_not_utf8_is_refused(tmp_path):
    assert _files.read_sums(tmp_path, 1000) == {}
    (tmp_path / "SHA256SUMS").write_bytes(b"\xff\xfe")
    with pytest.raises(_files.SumsError, match="not UTF-8"):
        _files.read_sums(tmp_path, 1000)


def test_document_inside_follows_links_within_and_refuses_links_out(tmp_path):
    src = tmp_path / "sources"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "real.md").write_text("x", encoding="utf-8")
    (src / "alias.md").symlink_to(src / "sub" / "real.md")
    assert _files.document_inside(src, "alias.md") == (src / "sub" / "real.md").resolve()
    (tmp_path / "outside.md").write_text("y", encoding="utf-8")
    (src / "out.md").symlink_to(tmp_path / "outside.md")
    with pytest.raises(_files.SumsError, match="leads out of the sources folder"):
        _files.document_inside(src, "out.md")


def _imports(path: Path) -> set[str]:
    """The modules ``path`` imports, absolute (``from ..framework import x`` in ``attention_claims.models``
    is ``attention_claims.framework``)."""
    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                out.add(".".join(base + ([node.module] if node.module else [])))
            else:
                out.add(node.module or "")
    return out


def test_models_import_no_framework_and_files_import_only_the_standard_library():
    for path in sorted((PACKAGE / "models").glob("*.py")):
        bad = {m for m in _imports(path) if m.startswith("attention_claims.framework")}
        assert not bad, f"{path.name} imports {bad} (the framework is the layer above models)"
    std = set(sys.stdlib_module_names) | {"__future__"}
    assert {m.split(".")[0] for m in _imports(PACKAGE / "_files.py")} <= std
