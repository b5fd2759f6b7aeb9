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
its reason. Wider still, no module reads a file (``read_text``, ``read_bytes``, ``open``, ``os.open``,
``Path.open``) except through ``_files`` (``read_regular``, ``read_text``, ``open_regular``...), but for the
package's own files and the interpreter's, each in :data:`READ_ALLOWED` with its reason.
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
    ("framework/render/stamp.py", "read"):
        "the JSON stamp in a screenshot's PNG text chunk; the PNG itself is read through _files.read_regular "
        "(size cap, regular file only) and the stamp is checked to be an object",
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


def _owners(source: str) -> list[tuple[str, list[ast.AST]]]:
    """``source``'s statements grouped by the outermost function (or class body, or ``"<module>"``) they are in."""
    tree = ast.parse(source)
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    inner = {id(m) for f in functions for m in ast.walk(f)
             if m is not f and isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)}
    out: list[tuple[str, list[ast.AST]]] = [(f.name, f.body) for f in functions if id(f) not in inner]
    out.append(("<module>", [n for n in tree.body
                             if not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]))
    out += [(c.name, [n for n in c.body if not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)])
            for c in tree.body if isinstance(c, ast.ClassDef)]
    return out


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

    for owner, nodes in _owners(source):
        scan(owner, nodes)
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


READ_ALLOWED = {
    ("framework/render/stamp.py", "write"): "PIL's Image.open of an io.BytesIO of bytes read by _files.read_regular",
    ("framework/render/stamp.py", "read"): "PIL's Image.open of an io.BytesIO of bytes read by _files.read_regular",
    ("_lazy.py", "installed_version"): "an installed distribution's own version file, beside its package",
    ("_cache.py", "files_digest"): "the package's own code and template files, hashed into a cache key",
    ("_cache.py", "_source_digest"): "the source file of a cached function (inspect.getsourcefile): the package's code",
    ("framework/plugin.py", "pytest_ignore_collect"):
        "a test module pytest collects next and imports (a FIFO there blocks pytest's own import first)",
    ("framework/report.py", "nvidia_driver_version"): "/proc/driver/nvidia/version, a kernel file, not a user's",
    ("framework/render/plots.py", "code_digest"): "this module's own source, hashed into the plot cache key",
    ("framework/render/assets.py", "katex_css"): "the KaTeX files bundled in the package",
    ("framework/render/assets.py", "katex_js"): "the KaTeX files bundled in the package",
    ("framework/render/assets.py", "static_text"): "the package's own static files",
    ("framework/report_schema.py", "report_schema"): "the package's claims.schema.json (importlib.resources)",
    ("framework/profiles.py", "_package_constants"): "the package's own .py files (Hypothesis' constants pool)",
    ("models/registry.py", "read_text"): "the built-in passages in the package, checked against texts/SHA256SUMS",
    ("replication/corpus.py", "documents"): "the Python standard library's own sources (the offline corpus)",
    ("replication/finetune.py", "load_minilm"): "the installed MiniLM's weights (a package's file)",
}
"""``(module, function) -> reason`` for each read of a file outside ``_files.py`` that is not a file a user, a
run or another process places: the package's own files and the interpreter's."""

_OPENS = {("io", "open"), ("os", "open"), ("os", "fdopen"), ("builtins", "open")}


def raw_reads(source: str) -> list[tuple[str, str]]:
    """The reads of a file not through ``_files`` in ``source``: ``x.read_text()``, ``x.read_bytes()``, ``open``
    (builtin, ``io``, ``os``, ``os.fdopen``) and ``x.open()`` (``pathlib``), as ``(function, "line: what")``."""
    found = []
    for owner, nodes in _owners(source):
        for stmt in nodes:
            for node in ast.walk(stmt):
                if not isinstance(node, ast.Call):
                    continue
                f = node.func
                attr = isinstance(f, ast.Attribute)
                name = f.attr if attr else f.id if isinstance(f, ast.Name) else ""
                base = f.value.id if attr and isinstance(f.value, ast.Name) else ""
                if base == "_files":
                    what = None
                elif attr and name in ("read_text", "read_bytes"):
                    what = f"{name}()"
                elif (not attr and name == "open") or (base, name) in _OPENS:
                    what = f"{base + '.' if base else ''}{name}()"
                elif attr and name == "open" and not base.endswith("resources"):
                    what = "open()"  # pathlib.Path.open
                else:
                    what = None
                if what:
                    found.append((owner, f"{node.lineno}: {what}"))
    return sorted(set(found), key=lambda f: int(f[1].split(":")[0]))


def test_iii_no_module_reads_a_file_except_through_the_reader():
    """Every file a user, a run or another process can place is read through ``_files`` (a FIFO is never waited
    on, a device never read to the end); :data:`READ_ALLOWED` lists the package's own files."""
    offenders, used = {}, set()
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "_files.py" and path.parent == PACKAGE:
            continue
        module = path.relative_to(PACKAGE).as_posix()
        for function, what in raw_reads(path.read_text(encoding="utf-8")):
            if (module, function) in READ_ALLOWED:
                used.add((module, function))
            else:
                offenders.setdefault(f"{module}:{function}", []).append(what)
    assert offenders == {}, offenders
    assert set(READ_ALLOWED) == used, f"allowed but no longer there (remove): {set(READ_ALLOWED) - used}"


def test_iii_the_scan_sees_each_kind_of_read():
    broken = '''
def a(p, fd):
    p.read_text()
    p.read_bytes()
    open(p)
    p.open("rb")
    os.open(p, os.O_RDONLY)
    os.fdopen(fd)
    io.open(p)
'''
    assert [w.split(": ")[1] for _f, w in raw_reads(broken)] == [
        "read_text()", "read_bytes()", "open()", "open()", "os.open()", "os.fdopen()", "io.open()"]
    assert raw_reads("def b(p):\n    _files.read_text(p, 9)\n    _files.open_regular(p)\n"
                     "    with _files.open_regular(p) as f:\n        f.read(9)\n") == []


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
