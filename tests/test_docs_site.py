"""The documentation site (issue 34): every public name of ``attention_claims.testkit`` and
``attention_claims.maths`` has a docstring, the generated reference lists each of them and nothing that
does not exist, no page writes a signature of one by hand, and the site builds with warnings as errors.
The pages (README.md and docs/*.md) name only options the commands have, files and modules this repository
has, and environment variables the code reads; the command-line help fits the page's width.

The build needs MkDocs (the ``dev`` extra); without it those tests skip, except under
``ATTENTION_CLAIMS_REQUIRE_TOOLS=1`` (set by ``.ci/run``), where a missing tool fails.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PACKAGES = {"attention_claims.testkit": "reference/testkit", "attention_claims.maths": "reference/maths"}


def _hook():
    """``docs/hooks/reference.py``, the MkDocs hook that generates the reference pages."""
    spec = importlib.util.spec_from_file_location("docs_reference_hook", DOCS / "hooks" / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _require(module: str):
    """Import ``module`` or skip saying why (fail under ATTENTION_CLAIMS_REQUIRE_TOOLS=1)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        why = f"{module} is not installed (pip install -c constraints.txt -e '.[dev]')"
        if os.environ.get("ATTENTION_CLAIMS_REQUIRE_TOOLS") == "1":
            pytest.fail(why)
        pytest.skip(why)


def undocumented(package: str, search_paths: list[str] | None = None) -> list[str]:
    """The names of ``package.__all__`` whose object has no docstring, as griffe reads it statically
    (an attribute's docstring is the string literal after its assignment)."""
    import griffe

    hook = _hook()
    top = package.split(".", 1)[0]
    tree = griffe.load(top, search_paths=search_paths or [str(ROOT)], resolve_aliases=True,
                       resolve_external=False)
    missing = []
    for module, names in hook.defining_modules(package).items():
        for name in names:
            path = f"{module}.{name}".split(".", 1)[1]
            obj = tree[path]
            doc = obj.docstring.value.strip() if obj.docstring else ""
            if not doc:
                missing.append(f"{package}.{name} ({module})")
    return missing


def unresolvable(ids: set[str]) -> list[str]:
    """The dotted paths among ``ids`` that do not name an importable object (longest importable module,
    then attributes)."""
    bad = []
    for dotted in sorted(ids):
        parts = dotted.split(".")
        obj = None
        for k in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:k]))
            except ImportError:
                continue
            rest = parts[k:]
            break
        try:
            for attr in rest:
                obj = getattr(obj, attr)
        except AttributeError:
            obj = None
        if obj is None:
            bad.append(dotted)
    return bad


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_every_public_name_has_a_docstring(package):
    _require("griffe")
    assert undocumented(package) == [], "public names without a docstring (the reference would show them bare)"


def test_an_undocumented_public_name_is_caught(tmp_path, monkeypatch):
    _require("griffe")
    pkg = tmp_path / "plantedkit"
    pkg.mkdir()
    (pkg / "__init__.py").write_text('"""A planted package."""\nfrom .mod import bare, told\n__all__ = ["bare", "told"]\n',
                                     encoding="utf-8")
    (pkg / "mod.py").write_text('"""Its module."""\ndef bare(x):\n    return x\n\n\ndef told(x):\n    """Documented."""\n',
                                encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert undocumented("plantedkit", search_paths=[str(tmp_path)]) == ["plantedkit.bare (plantedkit.mod)"]


def test_a_listed_name_that_does_not_exist_is_caught():
    assert unresolvable({"attention_claims.maths.rank.numerical_rank", "attention_claims.testkit",
                         "attention_claims.maths.rank.no_such_name", "attention_claims.no_such_module.x"}) == [
        "attention_claims.maths.rank.no_such_name", "attention_claims.no_such_module.x"]


def test_no_page_writes_a_signature_of_a_public_name_by_hand():
    """The signatures are the generated reference's: a hand-written ``name(args)`` drifts (issue 34: the
    guide gave ``exact_softmax_rank(Q, K, ...)`` for a function of ``(M_int, mask=None)``)."""
    import attention_claims.maths as maths
    import attention_claims.testkit as testkit

    names = set(maths.__all__) | set(testkit.__all__)
    found = []
    for page in [DOCS / "testkit.md", DOCS / "index.md", *sorted((DOCS / "reference").glob("*.md"))]:
        for name in re.findall(r"`@?(\w+)\(", page.read_text(encoding="utf-8")):
            if name in names:
                found.append(f"{page.relative_to(ROOT)}: {name}(")
    assert found == []


SITE_TOOLS = ("mkdocs", "mkdocs-material", "mkdocstrings", "mkdocstrings-python", "mkdocs-autorefs", "griffe", "griffelib",
              "pymdown-extensions", "markdown", "pygments", "jinja2")
"""The distributions the build runs; their versions are part of the built site's cache key."""


def site_inputs_digest() -> str:
    """SHA-256 of everything ``mkdocs build`` reads here: ``mkdocs.yml``, every file under ``docs/`` (the
    pages and the hook), every file of the package (the docstrings, the command line's help), each by its
    path and bytes, and the Python and :data:`SITE_TOOLS` versions. An edit of any of them changes it."""
    import hashlib
    from importlib import metadata

    h = hashlib.sha256(sys.version.encode())
    for name in SITE_TOOLS:
        try:
            h.update(f"\0{name}=={metadata.version(name)}".encode())
        except metadata.PackageNotFoundError:
            h.update(f"\0{name} absent".encode())
    files = [ROOT / "mkdocs.yml", *(p for top in ("docs", "attention_claims") for p in (ROOT / top).rglob("*")
                                    if p.is_file() and "__pycache__" not in p.parts)]
    for p in sorted(files):
        data = p.read_bytes()
        h.update(f"\0{p.relative_to(ROOT).as_posix()}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site, built once with ``mkdocs build --strict`` (warnings are errors).

    A build that passed is kept in the suite's cache (``<cache root>/docs-site/<digest>``, the digest of
    its inputs, :func:`site_inputs_digest`; the latest two are kept) and reused while no input changed:
    the build is 14 s of the warm run, and the same inputs give the same site. ``.ci/run`` builds it
    afresh (``mkdocs build --strict``) besides."""
    from attention_claims._cache import mark_dir, prune_oldest, trusted_dir

    _require("mkdocs")
    _require("mkdocstrings")
    digest = site_inputs_digest()
    cache = trusted_dir("docs-site")
    if cache is not None and (cache / digest / "built").is_file():
        return cache / digest / "site"
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-4000:]
    if cache is not None and digest == site_inputs_digest() and mark_dir(cache / digest):  # unchanged meanwhile
        try:
            shutil.copytree(out, cache / digest / "site")
            (cache / digest / "built").write_text(f"{digest}\n", encoding="utf-8")  # last: the copy is whole
        except OSError:
            pass
        prune_oldest([p for p in cache.iterdir() if re.fullmatch(r"[0-9a-f]{64}", p.name)], keep=2)
    return out


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_the_reference_lists_every_public_name_and_nothing_else(site, package):
    hook = _hook()
    html = (site / PACKAGES[package] / "index.html").read_text(encoding="utf-8")
    ids = set(re.findall(r'id="(attention_claims\.[\w.]+)"', html))
    expected = {f"{module}.{name}" for module, names in hook.defining_modules(package).items() for name in names}
    pkg = importlib.import_module(package)
    assert len(expected) == len(pkg.__all__)
    assert sorted(expected - ids) == [], "public names the reference does not show"
    assert unresolvable(ids) == [], "the reference lists names that do not exist"
    # each entry shows its signature: a function's heading carries its parameters
    assert 'class="doc doc-heading"' in html and "doc-signature" in html
    # the docstrings' Sphinx roles are shown as links or code, not as ":func:name" (LinkRoles, docs/hooks/reference.py)
    assert re.findall(r":(?:func|class|mod|data|attr|meth|exc):", html) == []


def test_sphinx_roles_become_code_spans():
    hook = _hook()
    assert hook.plain_roles("see :func:`numerical_rank` and :mod:`~attention_claims.maths.rank`, not `x`") == (
        "see `numerical_rank` and `attention_claims.maths.rank`, not `x`")


@pytest.fixture(scope="module")
def linker():
    """The hook's :class:`RoleLinker` over ``attention_claims`` as griffe reads it (raw docstrings)."""
    _require("griffe")
    return _hook().linker()


def _segments(html: str) -> dict[str, str]:
    """Each object's part of a reference page: from its heading (``id="attention_claims.x.y"``) to the next
    heading of one (a class's or module's own docstring, up to its first member)."""
    heads = list(re.finditer(r'id="(attention_claims[\w.]*)"', html))
    return {m.group(1): html[m.end():nxt.start() if nxt else len(html)]
            for m, nxt in zip(heads, [*heads[1:], None], strict=True) if "." in m.group(1)}


def _link(anchor: str, text: str) -> re.Pattern:
    """An autorefs link to ``anchor`` (on this page or the other reference page) showing ``text`` as code."""
    import html as html_lib

    return re.compile(rf'<a class="autorefs autorefs-internal"[^>]*href="(?:\.\./(?:testkit|maths)/)?#{re.escape(anchor)}">'
                      rf"<code>{re.escape(html_lib.escape(text, quote=False))}</code></a>")


def unlinked_roles(site: Path, linker) -> list[str]:
    """``"page: object: role"`` for each Sphinx role in the docstring of an object the reference pages show
    whose target the site documents (:meth:`RoleLinker.anchor`) and that the object's part of the page
    does not show as a link to that target, as many times as the docstring has it."""
    from attention_claims.tools.reference import ROLE

    bad = []
    for page in PACKAGES.values():
        for ident, part in _segments((site / page / "index.html").read_text(encoding="utf-8")).items():
            obj = linker.lookup(ident)
            obj = obj.final_target if obj is not None and obj.is_alias else obj
            if obj is None or obj.docstring is None:
                continue
            wanted = {}
            for m in ROLE.finditer(obj.docstring.value):
                anchor = linker.anchor(m.group(1), obj)
                if anchor is not None:
                    wanted[(anchor, m.group(1))] = wanted.get((anchor, m.group(1)), 0) + 1
            bad += [f"{page}: {ident}: {text} -> {anchor}" for (anchor, text), n in wanted.items()
                    if len(_link(anchor, text).findall(part)) < n]
    return bad


def test_the_site_documents_what_the_linker_links_to(site, linker):
    """:class:`RoleLinker` links to exactly the objects the reference pages have an entry for: one more
    would be an autorefs link to nothing (a strict-build error), one fewer a mention left unlinked."""
    ids = set()
    for page in PACKAGES.values():
        ids |= set(re.findall(r'id="(attention_claims\.[\w.]+)"', (site / page / "index.html").read_text(encoding="utf-8")))
    assert set(linker.anchors.values()) == ids


def test_role_targets_the_site_documents_are_links(site, linker):
    """Every ``:func:`` / ``:class:`` / ``:meth:`` / ``:data:`` / ``:mod:`` of a docstring on the reference pages
    whose target has an entry there is a link to that entry (issue 46: "names in docstrings are not links")."""
    assert unlinked_roles(site, linker) == []
    testkit = _segments((site / "reference/testkit/index.html").read_text(encoding="utf-8"))
    evidence = "attention_claims.framework.evidence."
    assert _link(evidence + "Counterexample", "Counterexample").search(testkit[evidence + "refute"])
    assert _link(evidence + "CheckLog.summary", "summary").search(testkit[evidence + "CheckLog"])
    assert _link(evidence + "CheckLog.plot", "plot").search(testkit[evidence + "CheckLog"])
    # a target the site does not document stays code: no link to nothing
    assert "<code>fractions.Fraction</code>" in "".join(testkit.values())


def test_the_reference_pages_links_land_on_entries(site):
    """Each autorefs link of the reference pages, in-page or to the other reference page, names an anchor
    that page has."""
    pages = {page: (site / page / "index.html").read_text(encoding="utf-8") for page in PACKAGES.values()}
    hrefs = []
    for page, html in pages.items():
        for href in re.findall(r'<a class="autorefs autorefs-internal"[^>]*href="([^"]+)"', html):
            other, _, anchor = href.partition("#")
            target = page if other == "" else "reference/" + other.strip("./").rstrip("/")
            hrefs.append((page, target))
            assert target in pages, f"{page}: a link off the reference pages: {href}"
            assert f'id="{anchor}"' in pages[target], f"{page}: {href} lands on no entry"
    assert ("reference/testkit", "reference/maths") in hrefs and ("reference/testkit", "reference/testkit") in hrefs


def test_an_unlinked_role_is_caught(site, linker, tmp_path):
    """:func:`unlinked_roles` finds a mention that the page shows as code although its target is documented."""
    for page in PACKAGES.values():
        html = (site / page / "index.html").read_text(encoding="utf-8")
        if page.endswith("testkit"):
            html = _link("attention_claims.framework.evidence.Counterexample", "Counterexample").sub(
                "<code>Counterexample</code>", html)
        (tmp_path / page).mkdir(parents=True)
        (tmp_path / page / "index.html").write_text(html, encoding="utf-8")
    assert ("reference/testkit: attention_claims.framework.evidence.refute: Counterexample -> "
            "attention_claims.framework.evidence.Counterexample") in unlinked_roles(tmp_path, linker)


def test_roles_resolve_as_sphinx_reads_them(linker):
    """The lookup order of :meth:`RoleLinker.anchor`: the docstring's class, its module, the package roots,
    a full path; a target the site does not document gives a code span."""
    evidence = "attention_claims.framework.evidence"
    refute, checklog = linker.lookup(f"{evidence}.refute"), linker.lookup(f"{evidence}.CheckLog")
    assert linker.anchor("Counterexample", refute) == f"{evidence}.Counterexample"  # its module
    assert linker.anchor("summary", checklog) == f"{evidence}.CheckLog.summary"  # its class
    assert linker.anchor("CheckLog.plot", refute) == f"{evidence}.CheckLog.plot"
    assert linker.anchor("within_rounding", refute) == "attention_claims.maths.rounding.within_rounding"  # a root
    assert linker.anchor("attention_claims.maths.as_array", refute) == "attention_claims.maths.arrays.as_array"
    assert linker.anchor("attention_claims.testkit.CheckLog.note", refute) == f"{evidence}.CheckLog.note"
    rank = linker.lookup("attention_claims.maths.rank.numerical_rank")
    assert linker.anchor(".exact.as_fractions", rank) == "attention_claims.maths.exact.as_fractions"  # relative
    for undocumented in ("PLOT_KINDS", "fractions.Fraction", "attention_claims.engine", "no_such_name"):
        assert linker.anchor(undocumented, checklog) is None, undocumented
    assert linker.link("a :class:`Counterexample`, :data:`~PLOT_KINDS` and :meth:`summary`", checklog) == (
        f"a [`Counterexample`][{evidence}.Counterexample], `PLOT_KINDS` and [`summary`][{evidence}.CheckLog.summary]")
    # the pages' own text (a module's first paragraph) is linked the same way, relative to its module
    assert _hook().page_roles(":mod:`.profiles`, :mod:`.plugin`", "attention_claims.framework") == (
        "[`.profiles`][attention_claims.framework.profiles], `.plugin`")


def test_the_command_line_page_shows_every_subcommand(site):
    from attention_claims.cli import COMMANDS

    html = (site / "cli" / "index.html").read_text(encoding="utf-8")
    missing = [name for name in COMMANDS if f"$ attention-claims {name} --help" not in html]
    assert missing == [] and "usage: attention-claims new" in html


def test_the_command_line_help_fits_the_page():
    """The help on the Command line page is wrapped to 78 characters (``COLUMNS=80`` in the hook), which the
    page's column shows without a horizontal scroll bar (at 100 it needed one)."""
    wide = [line for line in _hook().cli_markdown().splitlines() if len(line) > 80]
    assert wide == []


PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
OPTION = re.compile(r"(?<![\w-])(--[a-z](?:[\w-]*\w)?)")


def _help(argv: list[str]) -> str:
    """What ``attention-claims ARGV`` prints (its ``--help``)."""
    import contextlib
    import io

    from attention_claims import cli

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.suppress(SystemExit):
        cli.main(argv)
    return buf.getvalue()


def unknown_options(pages: list[Path]) -> list[str]:
    """``"page:line: command --option"`` for each option that a line of ``pages`` gives a command which
    that command's ``--help`` does not list: after ``attention-claims SUBCOMMAND``,
    ``attention_claims.tools.MODULE`` or ``scripts/gpu-run``, up to the end of the code span or table
    cell; and any ``--claims-*`` option the plugin does not declare."""
    from attention_claims.cli import COMMANDS

    module_command = {module: name for name, (module, _help) in COMMANDS.items()}
    helps = {name: _help([name, "--help"]) for name in COMMANDS}
    gpu_run = subprocess.run([sys.executable, str(ROOT / "scripts" / "gpu-run"), "--help"], capture_output=True,
                             text=True, timeout=60, cwd=ROOT).stdout
    plugin = set(re.findall(r'"(--claims-[\w-]+)"', "".join(
        p.read_text(encoding="utf-8") for p in (ROOT / "attention_claims" / "framework").glob("*.py"))))
    assert "--claims-select" in plugin and "--update" in helps["catalog"] and "--cap" in gpu_run
    commands = ((r"attention-claims ([a-z][\w-]*)", helps.get),
                (r"attention_claims\.tools\.(\w+)", lambda m: helps.get(module_command.get(m))),
                (r"scripts/gpu-run()", lambda _m: gpu_run))
    unknown = []
    for page in pages:
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            where = f"{page.name}:{n}"
            unknown += [f"{where}: pytest {o}" for o in OPTION.findall(line) if o.startswith("--claims-")
                        and o not in plugin]
            for pattern, text_of in commands:
                for m in re.finditer(pattern, line):
                    text = text_of(m.group(1))
                    if text is None:
                        continue
                    rest = re.split(r"[`|;]", line[m.end():], maxsplit=1)[0]  # to the end of the code span
                    unknown += [f"{where}: {m.group(0)} {o}" for o in OPTION.findall(rest)
                                if o not in text and o != "--help" and not o.startswith("--claims-")]
    return unknown


def test_every_option_the_pages_give_a_command_exists():
    """A page that shows ``attention-claims merge --allow-mixed``, ``python -m attention_claims.tools.snapshot
    --update``, ``scripts/gpu-run --cap`` or ``pytest --claims-shard`` names an option the command has."""
    assert unknown_options(PAGES) == [], "options that the pages give a command and its --help does not list"


def test_every_pytest_option_of_the_plugin_is_on_a_page():
    """Each ``--claims-*`` option the plugins declare is named on some page (``--claims-no-report`` was not)."""
    declared = set(re.findall(r'"(--claims-[\w-]+)"', "".join(
        p.read_text(encoding="utf-8") for p in (ROOT / "attention_claims" / "framework").glob("*.py"))))
    named = {o for page in PAGES for o in OPTION.findall(page.read_text(encoding="utf-8"))}
    assert "--claims-select" in declared and sorted(declared - named) == []


def test_an_option_a_command_does_not_have_is_caught(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("`attention-claims merge --allow-mixed -o DIR --frobnicate`, `pytest --claims-nope`\n"
                    "| `python -m attention_claims.tools.snapshot --update --all` | `scripts/gpu-run --cap x` |\n"
                    "`scripts/gpu-run --dry-run --wheels DIR --fast`; `pytest --claims-select ID`\n", encoding="utf-8")
    assert unknown_options([page]) == [
        "page.md:1: pytest --claims-nope", "page.md:1: attention-claims merge --frobnicate",
        "page.md:2: attention_claims.tools.snapshot --all", "page.md:3: scripts/gpu-run --fast"]


def missing_names(pages: list[Path]) -> list[str]:
    """``"page: name"`` for each code span of ``pages`` that names a file of this repository
    (``attention_claims/...``, ``tests/...``, ``scripts/...``, ``docs/...``, ``.ci/...``, ``.github/...``,
    ``benchmarks/...``, ``checks/...``, ``sources/...``; ``file.py::NAME`` names ``NAME`` in it too) that
    does not exist, or a dotted ``attention_claims.x.y`` that does not import. A span with a placeholder
    (``<doc>``, ``*``, ``{...}``, ``…``) is a pattern, not a name, and is left out."""
    missing = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for span in re.findall(r"`([^`\n]+)`", text):
            if re.search(r"[<>*{}\[\]…]|\.\.\.", span):
                continue
            for path in re.findall(r"(?<![\w./-])((?:attention_claims|tests|scripts|docs|\.ci|\.github|benchmarks|checks"
                                   r"|sources)/[\w./-]*(?:::\w+)?)", span):
                file, _, name = path.partition("::")
                target = ROOT / file
                if not target.exists() or (name and not re.search(rf"\b{name}\b", target.read_text(encoding="utf-8"))):
                    missing.append(f"{page.name}: {path}")
        dotted = set(re.findall(r"`(attention_claims(?:\.\w+)+)`", text))
        missing += [f"{page.name}: {name}" for name in unresolvable(dotted)]
    return missing


def test_every_file_and_module_the_pages_name_exists():
    """The pages name files (``tests/framework/test_exit_status.py``, ``scripts/gpu-run``) and modules
    (``attention_claims.framework.report_folder.ReportFolder``) a reader goes to look at. The tutorial's
    paths are those of the reader's own project, written by ``tests/test_tutorial.py``, and are left out."""
    pages = [p for p in PAGES if p.name != "your-own-claims.md"]
    assert missing_names(pages) == [], "names on the pages that this repository does not have"


def test_a_missing_file_or_module_is_caught(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("`tests/test_readme.py`, `scripts/gpu-run --dry-run`, `tests/no_such_test.py`,\n"
                    "`attention_claims/framework/evidence.py::PLOT_KINDS`, `attention_claims/framework/evidence.py::NOPE`,\n"
                    "`claims/<doc>/NNN-<id>.toml`, `attention_claims.maths.rank`, `attention_claims.maths.nope`\n",
                    encoding="utf-8")
    assert missing_names([page]) == ["page.md: tests/no_such_test.py", "page.md: attention_claims/framework/evidence.py::NOPE",
                                     "page.md: attention_claims.maths.nope"]


def test_every_environment_variable_the_pages_name_is_read():
    """An ``ATTENTION_CLAIMS_*`` variable a page tells the reader to set is one the code reads."""
    code = "".join(p.read_text(encoding="utf-8", errors="replace") for top in ("attention_claims", "tests", "scripts", ".ci")
                   for p in (ROOT / top).rglob("*") if p.is_file() and p.suffix in (".py", "") and "__pycache__" not in p.parts)
    named = {v for page in PAGES for v in re.findall(r"\bATTENTION_CLAIMS_[A-Z_]*[A-Z]", page.read_text(encoding="utf-8"))}
    assert "ATTENTION_CLAIMS_CACHE" in named
    assert sorted(v for v in named if not re.search(rf"[\"']{v}[\"'=]|\b{v}=", code)) == []


def test_the_site_cache_key_changes_with_every_input(tmp_path, monkeypatch):
    """The cached site is reused only while :func:`site_inputs_digest` is unchanged: an edit of a page,
    of the hook, of ``mkdocs.yml``, of a module, or a new file in either folder changes it."""
    (tmp_path / "docs" / "hooks").mkdir(parents=True)
    (tmp_path / "attention_claims" / "__pycache__").mkdir(parents=True)
    files = {"mkdocs.yml": "site_name: x\n", "docs/index.md": "# x\n", "docs/hooks/reference.py": "X = 1\n",
             "attention_claims/cli.py": '"""Help."""\n'}
    for rel, text in files.items():
        (tmp_path / rel).write_text(text, encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    seen = {site_inputs_digest()}
    (tmp_path / "attention_claims" / "__pycache__" / "cli.pyc").write_bytes(b"compiled")  # not an input
    assert site_inputs_digest() in seen
    for rel in [*files, "docs/new.md", "attention_claims/new.py"]:
        (tmp_path / rel).write_text("edited\n", encoding="utf-8")
        digest = site_inputs_digest()
        assert digest not in seen, rel
        seen.add(digest)
