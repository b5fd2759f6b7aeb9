"""Fixtures for the suite's own tests: build a throw-away project (claim records + checks)
and run the real plugin on it with pytest's ``pytester``."""

from __future__ import annotations

import importlib
import json
import pkgutil
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from attention_claims._cache import cache_root


def _preload_heavy_modules() -> None:
    """Import the heavy modules once, before any in-process pytester run: pytester restores
    sys.modules after each inline run, and torch, numpy's C extensions and scipy cannot be imported
    a second time. Every attention_claims module and what the checks import is loaded here.

    Called by the session fixture below, which every ``pytester`` use requests, and not at import
    time: a run that selects claim checks only (``pytest --claims-select ID``) then pays for none
    of it (about 7 s on 2 cores).
    """
    import torch  # noqa: F401

    import attention_claims

    for mod in ["numpy.fft", "scipy.linalg", "scipy.special", "scipy.stats", "scipy.optimize", "scipy.integrate",
                "flint", "mpmath", "hypothesis.extra.numpy", "matplotlib", "torch.nn.functional",
                # the report's renderers draw with matplotlib in the plugin's process: a second import of
                # matplotlib's submodules after a pytester run breaks its isinstance checks
                "attention_claims.framework.render", "attention_claims.framework.report", "jsonschema",
                "filelock"]:
        try:
            importlib.import_module(mod)
        except ImportError:  # an optional dependency that is not installed
            pass
    for info in pkgutil.walk_packages(attention_claims.__path__, "attention_claims."):
        try:
            importlib.import_module(info.name)
        except ImportError:
            pass
    # torch's FlopCounterMode imports torch._inductor.test_operators on first use, which registers a
    # torch library; a second import after pytester's sys.modules restore would register it twice.
    from attention_claims.maths import meta_matmul_flops

    meta_matmul_flops("standard", 2, 1)
    # Draw one plot and render one report now, so that every matplotlib and Jinja2 module the plugin's
    # report writer needs is loaded before pytester snapshots sys.modules.
    from attention_claims.framework.render import render_html, render_markdown
    from attention_claims.framework.render.plots import verdict_counts_svg

    verdict_counts_svg({"warm-up": {"true": 1, "false": 0, "caveat": 0, "unchecked": 0, "undecided": 0}})
    warm = {"schema": 1, "generated": "", "environment": {}, "run": {"complete": True}, "counts": {}, "trust": {},
            "claims": []}
    render_html(warm)
    render_markdown(warm)
    # Everything loaded so far lives as long as the process: move it out of the garbage collector's
    # generations (https://docs.python.org/3/library/gc.html#gc.freeze), so that every later collection,
    # pytest's own gc_collect_harder at the end of each in-process pytester run included (0.12 s each
    # over torch's, scipy's and matplotlib's objects), looks only at what was allocated since.
    import gc

    gc.freeze()


@pytest.fixture
def isolated_user_models(tmp_path, monkeypatch):
    """No ``--claims-model`` model or ``--claims-text`` text registered while the test runs, and an empty
    cache of its own; the registry's user models and texts are given back afterwards."""
    from attention_claims.models import registry

    monkeypatch.setenv("ATTENTION_CLAIMS_CACHE", str(tmp_path / "cache"))
    saved = dict(registry.USER_MODELS), dict(registry.USER_TEXTS), registry.USER_TEXT
    registry.clear_user_models()
    yield
    registry.clear_user_models()
    registry.USER_MODELS.update(saved[0])
    registry.USER_TEXTS.update(saved[1])
    registry.USER_TEXT = saved[2]


REPO = Path(__file__).resolve().parents[1]
"""This checkout (the suite's own catalog: ``claims/``, ``sources/``, ``checks/``)."""
REPO_SOURCES = REPO / "sources"
"""This checkout's source documents, for planted runs of its real checks."""

COLLECTED = pytest.StashKey[list]()
"""Every item this session collected, before any deselection (``-k``, ``--claims-select``)."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "subprocess_run: a self-test that runs pytest in a subprocess "
                            "(seconds each, mostly interpreter start-up); scheduled first")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    config.stash[COLLECTED] = list(items)
    # Longest first, as checks/conftest.py does for the trained-model checks: started last, a
    # subprocess run of several seconds would leave the other worker idle at the end of the run.
    items.sort(key=lambda item: item.get_closest_marker("subprocess_run") is None)


@pytest.fixture
def session_checks(request: pytest.FixtureRequest) -> list | None:
    """The claim checks this session collected (every item of every ``checks/test_*.py``), when it
    collected all of them, as the README's plain ``pytest`` does; ``None`` otherwise."""
    root = Path(__file__).resolve().parents[1] / "checks"
    items = [i for i in request.config.stash.get(COLLECTED, []) if root in Path(i.path).parents]
    files = set(root.rglob("test_*.py"))
    return items if files and {Path(i.path) for i in items} == files else None


@pytest.fixture(scope="session")
def _heavy_modules_preloaded() -> None:
    _preload_heavy_modules()


_CACHE_ROOT = str(cache_root())
"""The cache root of the process that runs the tests, read before ``pytester`` points ``HOME`` at a
temporary folder."""


@pytest.fixture
def pytester(_heavy_modules_preloaded, pytester: pytest.Pytester, monkeypatch) -> pytest.Pytester:
    """pytest's ``pytester``, after the heavy modules are loaded (a session fixture, so before
    pytester's snapshot of ``sys.modules``), with the real cache root: pytester moves ``HOME``, which
    would give every run an empty cache of model measurements, plots and quadrature references (all
    keyed by their inputs and code, so sharing them changes no result)."""
    monkeypatch.setenv("ATTENTION_CLAIMS_CACHE", _CACHE_ROOT)
    return pytester


@dataclass
class RootRun:
    """What ``pytest ARGS`` at the checkout's root gave: exit status and output."""

    ret: int
    stdout: str
    stderr: str


@pytest.fixture
def run_at_root(pytester: pytest.Pytester, monkeypatch):
    """``run_at_root(*args, env={...}) -> RootRun``: ``pytest -p no:cacheprovider ARGS`` as a person
    types it at the checkout's root (its ``pyproject.toml``, ``addopts`` and ``conftest.py``), run in this
    process by pytester (about 0.3 s, where a new interpreter takes 3 s or more). For runs that stop at
    configure time (usage errors), a run of a user model and the serial half of the serial-against-xdist
    comparison; ``env`` is set for the run. The end-to-end path of a usage error in a new interpreter
    keeps a subprocess test of its own (``tests/faults/test_finding_7_models.py``), and so does the
    rootdir a bare command line picks (``tests/models/test_user_models.py``): pytester in process does
    not reproduce pytest's rootdir choice."""

    def run(*args: str, env: dict | None = None) -> RootRun:
        for key, value in (env or {}).items():
            monkeypatch.setenv(key, value)
        monkeypatch.chdir(REPO)
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)
        return RootRun(int(result.ret), result.stdout.str(), result.stderr.str())

    return run


#: A stranger's Markdown note: the document of the `new`, `rehash` and CLI tests' projects (:func:`note_project`).
NOTE_DOC = "# A note\n\nEvery row of A sums to one. The rank is at most d.\n"


@pytest.fixture
def note_project(tmp_path, monkeypatch):
    """A stranger's project in ``tmp_path`` (the working directory for the test): ``sources/note.md``
    (:data:`NOTE_DOC`) and an empty ``[tool.pytest.ini_options]``, no claims yet."""
    (tmp_path / "sources").mkdir()
    (tmp_path / "sources" / "note.md").write_text(NOTE_DOC, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def record_toml(cid: str, *, expected: str = "true", readings=(("exact", True),), quote: str = "自注意力机制（Self-Attention）是Transformer架构的核心组件",
                document: str = "003_a0ad15dda516ed1d.txt", extra: str = "") -> str:
    """A minimal valid claim record (TOML text) with the given readings ``(name, as_stated)`` (a
    reading that is not as stated gets ``kind = "numerical"``)."""
    parts = [
        f'id = "{cid}"',
        f'title = "planted {cid}"',
        'statement = "a planted claim"',
        f'expected = "{expected}"',
        extra,
        "[source]",
        f'document = "{document}"',
        'section = "planted"',
        f"quote = '''{quote}'''",
    ]
    for name, stated in readings:
        parts += ["[[readings]]", f'name = "{name}"', 'statement = "a reading"']
        parts.append("as_stated = true" if stated else 'kind = "numerical"')
    return "\n".join(p for p in parts if p) + "\n"


SMALL_PROJECT_CHECK = '''
import os
import pytest

@pytest.mark.claim("{cid}", reading="exact")
def test_{name}(claim_log):
    if os.environ.get("PLANTED_INTERRUPT") == "{cid}":
        raise KeyboardInterrupt
    claim_log.example(x=1.0)
'''
REPORT_FILES = ("claims.json", "claims.md", "claims.html")


def small_project_records() -> dict[str, str]:
    """Three planted records: two claims with one check each (``alpha-claim``, ``beta-claim``, both
    expected true) and an unchecked one (``gamma-claim``)."""
    return {"a.toml": record_toml("alpha-claim"),
            "b.toml": record_toml("beta-claim", document="004_5f57af8801c437dc.txt", quote="一句话"),
            "u.toml": record_toml("gamma-claim", expected="unchecked", readings=(),
                                  extra='unchecked_reason = "about training"')}


def small_project_checks() -> dict[str, str]:
    """The checks of :func:`small_project_records` (each raises KeyboardInterrupt when ``PLANTED_INTERRUPT``
    names its claim)."""
    return {"test_a.py": SMALL_PROJECT_CHECK.format(cid="alpha-claim", name="a"),
            "test_b.py": SMALL_PROJECT_CHECK.format(cid="beta-claim", name="b")}


@dataclass
class Run:
    result: pytest.RunResult
    report_dir: Path

    @property
    def report(self) -> dict:
        return json.loads((self.report_dir / "claims.json").read_text(encoding="utf-8"))

    def claim(self, cid: str) -> dict:
        return next(c for c in self.report["claims"] if c["id"] == cid)


def write_sums(folder: Path) -> Path:
    """Write ``folder/SHA256SUMS`` (the ``sha256sum`` format) for every file under ``folder``."""
    import hashlib

    lines = [f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(folder).as_posix()}\n"
             for p in sorted(folder.rglob("*")) if p.is_file() and p.name != "SHA256SUMS"]
    (folder / "SHA256SUMS").write_text("".join(lines), encoding="utf-8")
    return folder / "SHA256SUMS"


def _planted_sources(folder: Path, records: dict[str, str]) -> Path:
    """A folder of source documents made of the planted records' own quotes, listed with their SHA-256
    in its ``SHA256SUMS``, so that quote verification runs on planted records as on the real ones."""
    import tomllib

    folder.mkdir(exist_ok=True)
    texts: dict[str, list[str]] = {}
    for text in records.values():
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            continue
        for place in [data.get("source", {}), *data.get("also_in", [])]:
            if isinstance(place, dict) and isinstance(place.get("document"), str):
                texts.setdefault(place["document"], []).append(str(place.get("quote", "")))
    import hashlib

    lines = []
    for doc, quotes in texts.items():
        if "/" not in doc and not doc.startswith("arXiv:"):
            data = ("\n".join(quotes) + "\n").encode()
            (folder / doc).write_bytes(data)
            lines.append(f"{hashlib.sha256(data).hexdigest()}  {doc}\n")
    (folder / "SHA256SUMS").write_text("".join(lines), encoding="utf-8")
    return folder


@pytest.fixture
def planted(pytester: pytest.Pytester):
    """``planted(records={name: toml}, checks={name: source}, args=[...]) -> Run``."""

    def run(records: dict[str, str], checks: dict[str, str], args=(), subprocess: bool = False) -> Run:
        rec = pytester.path / "records"
        rec.mkdir(exist_ok=True)
        for name, text in records.items():
            (rec / name).write_text(text, encoding="utf-8")
        for name, src in checks.items():
            (pytester.path / name).write_text(textwrap.dedent(src), encoding="utf-8")
        out = pytester.path / "out"
        sources = _planted_sources(pytester.path / "sources", records)
        argv = ["--claims-dir", str(rec), "--claims-sources", str(sources),
                "--claims-report-dir", str(out), "-p", "no:cacheprovider",
                "--hypothesis-profile=ci", *args]
        if subprocess:
            result = pytester.runpytest_subprocess(*argv)
        else:
            result = pytester.runpytest(*argv)
        return Run(result, out)

    return run
