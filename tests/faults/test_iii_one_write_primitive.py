"""Issue 43, "one guarded door for files": no module of the package writes a file except through
:func:`attention_claims._files.write_file` (and its parts ``stage_file``/``place_file``/``create_file``).

An AST scan of every module but ``_files.py``: no ``write_text``/``write_bytes``, no ``open``/``Path.open``/
``os.fdopen`` with a writing mode (``w``, ``a``, ``x``, ``+``), no ``os.open`` with a writing flag, no
``savefig`` to anything but an in-memory buffer (a name ``buf``), no ``shutil.copy*``/``json.dump``. A
scan that finds nothing on purpose-broken code is checked too, so the test can fail.

The same scan holds the reading side: no module but ``_files.py`` parses a file as JSON or TOML itself
(``json.load``/``tomllib.load`` of an open file, ``json.loads``/``tomllib.loads`` of what ``read_text``,
``read_bytes`` or ``.read()`` returned, directly or through a name assigned in the same function): every
such file is read through :func:`attention_claims._files.read_json` / ``read_toml`` (a regular file only,
opened without blocking, size and depth caps). The few exceptions are in :data:`PARSE_ALLOWED`, each with
its reason.
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


_PARSERS = {("json", "load"), ("json", "loads"), ("tomllib", "load"), ("tomllib", "loads")}
_READS = {"read_text", "read_bytes", "read"}

PARSE_ALLOWED = {
    ("models/registry.py", "check_safetensors"):
        "a safetensors header: an 8-byte length, then that many bytes of JSON read from a file opened with "
        "_files.open_regular (a weights file is read in parts, never whole); its depth is checked first",
    ("replication/finetune.py", "load_minilm"):
        "the header inside the installed MiniLM's model.safetensors, read whole as the weights themselves "
        "(a package's file, not a user's)",
    ("framework/report_schema.py", "report_schema"):
        "the package's own claims.schema.json through importlib.resources (possibly inside a zip, where "
        "there is no path for _files to open)",
}
"""``(module, function) -> reason`` for each parse of a file's content outside ``_files.py``."""


def _reads(node: ast.AST, tainted: set[str]) -> bool:
    """Whether ``node`` holds a read of a file's content (``x.read_text()``, ``x.read_bytes()``, ``f.read()``;
    not ``_files.read_text``) or a name in ``tainted`` (assigned from one)."""
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id in tainted:
            return True
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _READS
                and not (isinstance(n.func.value, ast.Name) and n.func.value.id == "_files")):
            return True
    return False


def parses(source: str) -> list[tuple[str, str]]:
    """The JSON/TOML parses of a file's content in ``source``: ``(function or "<module>", "line: what")``."""
    found = []

    def scan(body_owner: str, nodes: list[ast.AST]) -> None:
        tainted: set[str] = set()
        for stmt in nodes:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None and _reads(node.value, tainted):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    tainted |= {t.id for tgt in targets for t in ast.walk(tgt) if isinstance(t, ast.Name)}
                if isinstance(node, ast.withitem) and node.optional_vars is not None:
                    tainted |= {t.id for t in ast.walk(node.optional_vars) if isinstance(t, ast.Name)}
        for stmt in nodes:
            for node in ast.walk(stmt):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and isinstance(node.func.value, ast.Name)):
                    continue
                key = (node.func.value.id, node.func.attr)
                if key not in _PARSERS:
                    continue
                if key[1] == "load" or any(_reads(a, tainted) for a in node.args):
                    found.append((body_owner, f"{node.lineno}: {key[0]}.{key[1]} of a file's content"))

    tree = ast.parse(source)
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    inner = {id(m) for f in functions for m in ast.walk(f) if m is not f and isinstance(m, ast.FunctionDef
                                                                                         | ast.AsyncFunctionDef)}
    for f in functions:  # a nested function is scanned with its enclosing one
        if id(f) not in inner:
            scan(f.name, f.body)
    scan("<module>", [n for n in tree.body if not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef
                                                            | ast.ClassDef)])
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        scan(cls.name, [n for n in cls.body if not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)])
    return sorted(set(found), key=lambda f: int(f[1].split(":")[0]))


def test_iii_no_module_parses_a_file_except_through_the_reader():
    offenders, used = {}, set()
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "_files.py" and path.parent == PACKAGE:
            continue
        module = path.relative_to(PACKAGE).as_posix()
        for function, what in parses(path.read_text(encoding="utf-8")):
            if (module, function) in PARSE_ALLOWED:
                used.add((module, function))
            else:
                offenders.setdefault(f"{module}:{function}", []).append(what)
    assert offenders == {}, offenders
    assert set(PARSE_ALLOWED) == used, f"allowed but no longer there (remove): {set(PARSE_ALLOWED) - used}"


def test_iii_the_scan_sees_each_kind_of_parse():
    broken = '''
def a(p, f):
    json.load(f)
    tomllib.load(f)
    json.loads(p.read_text())
    tomllib.loads(p.read_text(encoding="utf-8"))
    json.loads(p.read_bytes().decode())
    text = p.read_text()
    json.loads(text)
    with p.open("rb") as g:
        json.loads(g.read())
    def inner():
        return json.loads(text)
'''
    assert [w.split(": ")[1] for _f, w in parses(broken)] == ["json.load of a file's content"] + [
        "tomllib.load of a file's content", "json.loads of a file's content", "tomllib.loads of a file's content"
    ] + ["json.loads of a file's content"] * 4, parses(broken)
    assert len(parses(broken)) == 8
    assert parses("def b(p, s):\n    json.loads(s)\n    json.loads(_files.read_text(p, 9))\n"
                  "    x = _files.read_regular(p, 9)\n    json.loads(x.decode())\n") == []


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
