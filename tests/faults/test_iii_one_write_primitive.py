"""Issue 43, "one guarded door for files": no module of the package writes a file except through
:func:`attention_claims._files.write_file` (and its parts ``stage_file``/``place_file``/``create_file``).

An AST scan of every module but ``_files.py``: no ``write_text``/``write_bytes``, no ``open``/``Path.open``/
``os.fdopen`` with a writing mode (``w``, ``a``, ``x``, ``+``), no ``os.open`` with a writing flag, no
``savefig`` to anything but an in-memory buffer (a name ``buf``), no ``shutil.copy*``/``json.dump``. A
scan that finds nothing on purpose-broken code is checked too, so the test can fail.
"""

from __future__ import annotations

import ast
from pathlib import Path

import attention_claims

PACKAGE = Path(attention_claims.__file__).parent
_WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}


def _mode(call: ast.Call, position: int) -> str | None:
    node = call.args[position] if len(call.args) > position else next(
        (k.value for k in call.keywords if k.arg == "mode"), None)
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def writes(source: str) -> list[str]:
    """The writing calls in ``source`` (``"line: what"``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""
        what = None
        if name in ("write_text", "write_bytes"):
            what = name
        elif name == "open" and owner == "os":
            flags = {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)} | {
                n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            what = "os.open for writing" if flags & _WRITE_FLAGS else None
        elif name in ("open", "fdopen"):
            mode = _mode(node, 0 if isinstance(f, ast.Attribute) and owner not in ("os", "io", "builtins") else 1)
            what = f"{name}(mode={mode!r})" if mode and set(mode) & set("wax+") else None
        elif name == "savefig":
            target = node.args[0] if node.args else None
            what = None if isinstance(target, ast.Name) and target.id == "buf" else "savefig to a file"
        elif owner == "shutil" and name.startswith("copy") or (owner == "json" and name == "dump"):
            what = f"{owner}.{name}"
        if what:
            found.append(f"{node.lineno}: {what}")
    return found


def test_iii_no_module_writes_except_through_the_primitive():
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "_files.py" and path.parent == PACKAGE:
            continue
        found = writes(path.read_text(encoding="utf-8"))
        if found:
            offenders[path.relative_to(PACKAGE).as_posix()] = found
    assert offenders == {}, offenders


def test_iii_the_scan_sees_each_kind_of_write():
    broken = '''
p.write_text("x")
p.write_bytes(b"x")
open(p, "w")
open(p, mode="a")
p.open("w")
os.fdopen(fd, "wb")
os.open(p, os.O_WRONLY | os.O_CREAT)
fig.savefig(out)
shutil.copyfile(a, b)
json.dump(x, f)
'''
    assert len(writes(broken)) == 10, writes(broken)
    assert writes('open(p)\nopen(p, "rb")\np.open("r")\nos.open(p, os.O_RDONLY)\nfig.savefig(buf)\n') == []
