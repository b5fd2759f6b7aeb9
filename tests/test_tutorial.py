"""The tutorial ``docs/your-own-claims.md`` runs as written, from a wheel (issue 23).

The test builds this checkout's wheel, installs it (not editable) into a fresh virtual environment,
writes every file the tutorial shows (a fenced block with ``title="<path>"``) into a new repository in
a temporary folder and runs every command it shows (``$ ...`` lines of its ``console`` blocks, each
from the repository's root, in that environment). Then it checks the verdicts in that repository's
``reports/``, that this checkout's report was not touched, and that ``pytest`` in an unrelated project
in the same environment runs with the plugin inert.

The fresh environment reaches the packages already installed here (torch, NumPy, ...) through a
``.pth`` file, so nothing is downloaded; the package itself comes only from the wheel: its own
``site-packages`` come first on ``sys.path``, so the wheel's ``attention_claims`` and its entry points
are the ones found.
"""

from __future__ import annotations

import fnmatch
import importlib.metadata
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from attention_claims.framework.render.browser import open_page, unavailable_reason
from attention_claims.framework.render.model import document_slug

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "docs" / "your-own-claims.md"
FENCE = re.compile(r"^```(?P<lang>[\w-]*)(?P<info>[^\n]*)\n(?P<body>.*?)^```$", re.S | re.M)
TITLE = re.compile(r'title="([^"]+)"')


def tutorial_parts(text: str) -> tuple[dict[str, str], list[str], list[str]]:
    """``({path: content}, [command, ...], [output line, ...])`` of the tutorial: the files (fenced
    blocks with a title), the commands (``$`` lines of ``console`` blocks), in order, and the lines of
    its ``text`` blocks (output it shows, ``*`` a wildcard)."""
    files, commands, output = {}, [], []
    for m in FENCE.finditer(text):
        title = TITLE.search(m["info"])
        if title:
            files[title.group(1)] = m["body"]
        elif m["lang"] == "console":
            commands += [line[2:] for line in m["body"].splitlines() if line.startswith("$ ")]
        elif m["lang"] == "text":
            output += m["body"].splitlines()
    return files, commands, output


def tutorial_steps(text: str) -> list[tuple[str, str, str]]:
    """The tutorial's files and commands in the order it shows them: ``("file", path, content)`` for a
    fenced block with a title, ``("command", command, "")`` for each ``$`` line of a ``console`` block (so
    a file shown after ``attention-claims new`` replaces what it wrote, as the reader's edit does)."""
    steps = []
    for m in FENCE.finditer(text):
        title = TITLE.search(m["info"])
        if title:
            steps.append(("file", title.group(1), m["body"]))
        elif m["lang"] == "console":
            steps += [("command", line[2:], "") for line in m["body"].splitlines() if line.startswith("$ ")]
    return steps


def test_the_tutorial_names_its_files_and_commands():
    files, commands, output = tutorial_parts(TUTORIAL.read_text(encoding="utf-8"))
    assert {"sources/softmax-note.md", "pyproject.toml", "checks/test_softmax_note_rank_at_most_d.py"} <= set(files)
    assert sum(p.startswith("claims/") for p in files) == 3
    assert commands[0].startswith("pip install ") and commands[-1] == "pytest"
    news = [c for c in commands if c.startswith("attention-claims new ")]
    assert len(news) == 3  # the tutorial starts its claims with `new`
    for command in news:  # each record and check skeleton `new` writes is then shown filled in
        cid = shlex.split(command)[2]
        assert any(p.startswith("claims/softmax-note/") and p.endswith(f"-{cid}.toml") for p in files), cid
        assert f"checks/test_{cid.replace('-', '_')}.py" in files, cid
    assert any(line.startswith("verdicts: ") for line in output)


@pytest.fixture(scope="module")
def wheel_env(tmp_path_factory) -> Path:
    """A fresh virtual environment with this checkout's wheel installed (``--no-deps``); its
    dependencies are those of the running interpreter, reached through a ``.pth`` file."""
    work = tmp_path_factory.mktemp("wheel")
    # built from a copy of the tracked files as they are now: setuptools packs whatever an earlier build
    # left in the checkout's build/, so a file missing from the package data would go unseen here
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split("\0")
    source = work / "source"
    for rel in filter(None, tracked):
        if (ROOT / rel).is_file():  # a tracked file deleted in the work tree is not part of it
            (source / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, source / rel)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                    str(work / "dist"), str(source)], check=True, timeout=300)
    (wheel,) = (work / "dist").glob("attention_claims-*.whl")
    # the wheel holds the package's files, each tracked one and no other (a file left out of the
    # package data, as the report's stylesheet once was, breaks every report written from an install)
    package = {rel for rel in tracked if rel.startswith("attention_claims/") and (ROOT / rel).is_file()}
    with zipfile.ZipFile(wheel) as zf:
        packed = {n for n in zf.namelist() if n.startswith("attention_claims/")}
    assert packed == package, (sorted(package - packed), sorted(packed - package))
    env_dir = work / "venv"
    # without pip (ensurepip alone takes 3 s): this interpreter's pip installs into it (``pip --python``)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=300)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    Path(purelib, "outer-packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index",
                    str(wheel)], check=True, timeout=300)
    # pytest's console script, as ``pip install pytest`` writes it: without it ``pytest`` would be the outer
    # environment's script, whose interpreter imports this checkout's package, not the wheel's
    (entry,) = importlib.metadata.entry_points(group="console_scripts", name="pytest")
    launcher = env_dir / "bin" / "pytest"
    launcher.write_text(f"#!{python}\nimport sys\nfrom {entry.module} import {entry.attr}\nsys.exit({entry.attr}())\n",
                        encoding="utf-8")
    launcher.chmod(0o755)
    where = subprocess.run([str(python), "-c", "import attention_claims; print(attention_claims.__file__)"],
                           check=True, capture_output=True, text=True, cwd=work).stdout
    assert where.startswith(purelib), where  # the wheel's copy, not this checkout
    # the tutorial's `pytest` is that script, run by that interpreter
    assert shutil.which("pytest", path=_env(env_dir)["PATH"]) == str(launcher)
    return env_dir


def _env(env_dir: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHONPATH"))}
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env['PATH']}"
    env["VIRTUAL_ENV"] = str(env_dir)
    return env


def _report_state() -> dict:
    out = {}
    for name in ("claims.json", "claims.md", "claims.html"):
        p = ROOT / "reports" / name
        out[name] = p.stat().st_mtime_ns if p.exists() else None
    return out


@pytest.fixture(scope="module")
def tutorial_run(wheel_env, tmp_path_factory) -> tuple[Path, dict, subprocess.CompletedProcess, dict]:
    """The tutorial done as written in a new repository, in the wheel's environment:
    ``(repository, environment, result of its last command, this checkout's report state before)``."""
    text = TUTORIAL.read_text(encoding="utf-8")
    repo = tmp_path_factory.mktemp("tutorial") / "my-claims"
    repo.mkdir()
    before = _report_state()
    env = _env(wheel_env)
    result = None
    for kind, command, body in tutorial_steps(text):
        if kind == "file":  # written when the tutorial shows it
            (repo / command).parent.mkdir(parents=True, exist_ok=True)
            (repo / command).write_text(body, encoding="utf-8")
            continue
        if command.startswith("pip install "):
            continue  # done by the fixture, from this checkout's wheel
        argv = command if "&&" in command or ">" in command else shlex.split(command)
        result = subprocess.run(argv, shell=isinstance(argv, str), cwd=repo, env=env, capture_output=True,
                                text=True, timeout=600)
        assert result.returncode == 0, f"$ {command}\n{result.stdout}\n{result.stderr}"
    assert result is not None
    return repo, env, result, before


@pytest.mark.subprocess_run
def test_the_tutorial_runs_from_a_wheel_in_its_own_repository(tutorial_run, tmp_path):
    _files, _commands, output = tutorial_parts(TUTORIAL.read_text(encoding="utf-8"))
    repo, env, result, before = tutorial_run
    assert "verdicts: 1 false, 1 caveat, 1 true" in result.stdout, result.stdout
    shown = result.stdout.splitlines()
    for line in output:  # the output the tutorial shows is the output of the run
        assert any(fnmatch.fnmatchcase(got, line) for got in shown), (line, result.stdout)
    report = json.loads((repo / "reports" / "claims.json").read_text(encoding="utf-8"))
    verdicts = {c["id"]: c["verdict"] for c in report["claims"]}
    assert verdicts == {"softmax-note-rows-sum-to-one": "true", "softmax-note-rank-at-most-d": "false",
                        "softmax-note-entries-positive": "caveat"}
    false = next(c for c in report["claims"] if c["verdict"] == "false")
    assert false["readings"][0]["certified"] is True
    assert (repo / "reports" / "claims.html").is_file() and (repo / "reports" / "claims.md").is_file()
    for name in ("claims.html", "claims.md"):  # a user's report speaks of the user's documents only
        assert "restates 004" not in (repo / "reports" / name).read_text(encoding="utf-8")
    assert _report_state() == before  # this checkout's report untouched

    # An altered document stops the run with exit status 4, naming it (in a copy: the report in
    # ``repo`` is read by the browser test too).
    repo = shutil.copytree(repo, tmp_path / "altered" / "my-claims")
    doc = repo / "sources" / "softmax-note.md"
    doc.write_text(doc.read_text(encoding="utf-8") + "One more sentence.\n", encoding="utf-8")
    altered = subprocess.run(["pytest"], cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    assert altered.returncode == 4, altered.stdout + altered.stderr
    assert "softmax-note.md" in altered.stderr and "altered" in altered.stderr

    # An unrelated project in the same environment: the plugin is inert.
    other = tmp_path / "unrelated"
    other.mkdir()
    (other / "test_plain.py").write_text("def test_plain():\n    assert True\n", encoding="utf-8")
    plain = subprocess.run(["pytest", "-q", "-p", "no:cacheprovider"], cwd=other, env=env, capture_output=True,
                           text=True, timeout=600)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert "1 passed" in plain.stdout and "verdicts" not in plain.stdout
    assert sorted(p.name for p in other.iterdir() if not p.name.startswith(".")) == ["test_plain.py"]


SENTENCES_JS = """(slug) => [...document.querySelectorAll('#view-doc-' + slug + ' span.s[data-claims]')].map(e => ({
  id: e.id, claims: e.dataset.claims.split(' '), classes: [...e.classList], text: e.textContent,
  background: getComputedStyle(e).backgroundColor, visible: e.checkVisibility(),
  links: [...(e.nextElementSibling && e.nextElementSibling.matches('sup.mks')
              ? e.nextElementSibling.querySelectorAll('a.mk') : [])].map(a => a.getAttribute('href'))}))"""


def _words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.subprocess_run
def test_the_tutorial_report_shows_its_document_in_chromium(request):
    """The tutorial's ``reports/claims.html`` in headless Chromium (one start): the view of
    ``softmax-note.md`` opens from its tab's fragment, shows its title and text, highlights exactly one
    sentence per claim that cites it, that sentence holding the claim's quote, in the claim's verdict
    colour, and the sentence's mark opens the claim."""
    reason = unavailable_reason()
    if reason is not None:
        if os.environ.get("ATTENTION_CLAIMS_REQUIRE_TOOLS") == "1":  # .ci/run installs Chromium
            pytest.fail(f"browser test required (ATTENTION_CLAIMS_REQUIRE_TOOLS=1): {reason}")
        pytest.skip(f"browser test: {reason}")
    repo = request.getfixturevalue("tutorial_run")[0]  # after the check: a skip costs no wheel build
    report = json.loads((repo / "reports" / "claims.json").read_text(encoding="utf-8"))
    name = "softmax-note.md"
    cites = {c["id"]: c for c in report["claims"]
             if c["source"]["document"] == name or any(p["document"] == name for p in c.get("also_in") or [])}
    assert len(cites) == 3, sorted(cites)
    slug = document_slug(name)
    title = (report.get("documents") or {}).get(name, {}).get("title") or name  # the label the report gives it
    with open_page(repo / "reports" / "claims.html") as (page, log):
        # the report's own tab for the document routes to its view
        tab = page.locator(f'nav.tabs a.tab[data-view="doc-{slug}"]')
        assert tab.count() == 1 and tab.get_attribute("href") == f"#doc-{slug}"
        tab.click()
        page.wait_for_function("id => !document.getElementById(id).hidden", arg=f"view-doc-{slug}")
        view = page.locator(f"#view-doc-{slug}")
        assert view.is_visible() and page.locator("#view-claims").is_hidden()
        assert title in view.locator("h1").first.inner_text()
        assert view.locator("article.doc h1").inner_text().strip() == "A note on softmax attention"
        sentences = page.evaluate(SENTENCES_JS, slug)
        assert sorted(c for s in sentences for c in s["claims"]) == sorted(cites), sentences
        backgrounds = {}
        for s in sentences:
            assert s["visible"], s
            (cid,) = s["claims"]
            claim = cites[cid]
            quotes = [claim["source"]["quote"]] * (claim["source"]["document"] == name) + [
                p["quote"] for p in claim.get("also_in") or [] if p["document"] == name]
            assert any(_words(q) in _words(s["text"]) for q in quotes), (s["text"], quotes)
            assert f"v-{claim['verdict']}" in s["classes"], s
            assert s["background"] not in ("rgba(0, 0, 0, 0)", "transparent"), s
            backgrounds[claim["verdict"]] = s["background"]
            assert s["links"] == [f"#c-{cid}"], s
        assert len(set(backgrounds.values())) == len(backgrounds) == 3, backgrounds  # one colour per verdict
        for s in sentences:  # each sentence's mark opens its claim, from the document's view
            page.evaluate("h => { location.hash = h; }", f"#doc-{slug}")
            page.wait_for_function("id => !document.getElementById(id).hidden", arg=f"view-doc-{slug}")
            page.click(f'#{s["id"]} + sup.mks a.mk[href="#c-{s["claims"][0]}"]')
            page.wait_for_function("id => { const c = document.getElementById(id); return c && c.open && "
                                   "!document.getElementById('view-claims').hidden; }", arg=f"c-{s['claims'][0]}")
            claim = page.locator(f"#c-{s['claims'][0]}")
            assert claim.is_visible() and view.is_hidden()
            assert claim.get_attribute("data-verdict") == cites[s["claims"][0]]["verdict"]
        assert log["console_errors"] == [] and log["page_errors"] == [] and log["requests"] == [], log
