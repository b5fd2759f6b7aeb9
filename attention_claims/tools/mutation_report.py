"""Summarise a mutmut run into ``reports/mutation.md`` and ``reports/mutation.json``.

Usage (from the repository root; see docs/trust.md, "Mutation testing")::

    pip install mutmut==3.8.1 && mutmut run && python -m attention_claims.tools.mutation_report

The score is ``(killed + timeout) / tested`` with ``tested = total - skipped - not checked``, as
``mutmut badge`` computes it once every mutant has run (a mutant that no selected test reaches, "no
tests", counts as not killed). A run stopped before the end (``mutmut run`` resumes it) is reported as
such: the mutants not yet checked are counted per module and left out of the score, never counted as
killed. Each surviving mutant is listed with its diff and the one-line explanation kept in
``reports/mutation_explanations.json`` (``{mutant name: why it survives}``, each starting with
``equivalent:`` (no input can tell it from the original) or ``not observable here:`` (it differs only on
a device this CPU-only run does not have)); a survivor without one is marked "UNEXPLAINED" (a test to
write). The report gives both the score and the share of mutants killed or explained.

Reads mutmut 3's own files in ``mutants/`` (``<module>.meta``: the exit code of each mutant's test run;
``mutmut-stats.json``: the commit the run mutated) and takes the diffs from mutmut's API in this process.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import sys
from pathlib import Path

from ..framework import config as claims_config
from ..framework.report import git_commit
from ..framework.report_folder import ReportFolder, ReportFolderError
from . import USAGE_ERROR, description

#: mutmut 3's exit codes, grouped as its ``status_by_exit_code`` (mutmut/stats.py) groups them.
_STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped", 36: "timeout",
           -24: "timeout", 24: "timeout", 152: "timeout", 255: "timeout", 2: "interrupted", -11: "segfault",
           -9: "segfault", 37: "caught by type check", None: "not checked"}


class MutationInputError(ValueError):
    """A mutmut configuration or run this tool cannot summarise (malformed, or no run to summarise); the
    message names the file and the field."""


def _mutmut_config(root: Path) -> dict:
    """``[tool.mutmut]`` of ``root/pyproject.toml`` (empty when the file or the table is absent), read through
    the package's one reader (:func:`attention_claims._files.read_toml`: a regular file, at most
    :data:`~attention_claims.framework.config.INI_MAX_BYTES`, nested at most 64 levels).

    Raises:
        MutationInputError: the file is not a regular file, too large, not UTF-8, not TOML or nested too
            deeply, or ``tool`` or ``[tool.mutmut]`` is not a table (naming the file and the table).
    """
    from .._files import UnsafeFileError, read_toml

    path = root / "pyproject.toml"
    try:
        data = read_toml(path, claims_config.INI_MAX_BYTES)
    except FileNotFoundError:
        return {}
    except UnsafeFileError as exc:
        raise MutationInputError(f"{path}: cannot read it as TOML ({exc.problem})") from None
    except OSError as exc:
        raise MutationInputError(f"{path}: cannot read it as TOML ({exc.strerror or exc})") from None
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise MutationInputError(f"{path}: tool is not a table")
    cfg = tool.get("mutmut", {})
    if not isinstance(cfg, dict):
        raise MutationInputError(f"{path}: [tool.mutmut] is not a table")
    return dict(cfg)


def _string_list(path: Path, key: str, value: object) -> list[str]:
    """``value`` of ``[tool.mutmut] key`` as a list of strings: a list of strings as it is, a single string as a
    one-item list (as one path, never split into its characters).

    Raises:
        MutationInputError: anything else (a number, a table, a list holding a non-string), naming the field.
    """
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise MutationInputError(f"{path}: [tool.mutmut] {key} = {value!r} is not a list of strings")


def mutated_modules(root: Path) -> list[str]:
    """The files ``[tool.mutmut] only_mutate`` of ``root/pyproject.toml`` names (empty without one; a single
    string is one file).

    Raises:
        MutationInputError: the file is unreadable, or ``only_mutate`` is not a string or a list of strings.
    """
    return _string_list(root / "pyproject.toml", "only_mutate", _mutmut_config(root).get("only_mutate", []))


def status_of(exit_code: int | None) -> str:
    """mutmut 3's status for a mutant's exit code (``None``: not run yet); an unknown code is
    ``suspicious``, as in mutmut."""
    return _STATUS.get(exit_code, "suspicious")


def summarise(exit_codes: dict[str, dict[str, int | None]], explanations: dict[str, str]) -> dict:
    """Counts and score of a run from ``{module: {mutant name: exit code}}``.

    Returns ``{"per_module": {module: {status: count}}, "killed", "tested", "not_checked", "survivors":
    [names of survived or no-tests mutants], "explained", "score", "killed_or_explained"}``;
    ``tested`` excludes skipped and not-checked mutants, ``killed`` counts timeouts (as mutmut does),
    ``explained`` the survivors with an entry in ``explanations``. The two rates are ``None`` when
    nothing was tested.
    """
    per_module: dict[str, dict[str, int]] = {}
    survivors: list[str] = []
    killed = tested = not_checked = 0
    for module, codes in exit_codes.items():
        counts: dict[str, int] = {}
        for name, code in codes.items():
            st = status_of(code)
            counts[st] = counts.get(st, 0) + 1
            if st == "not checked":
                not_checked += 1
                continue
            if st == "skipped":
                continue
            tested += 1
            if st in ("killed", "timeout"):
                killed += 1
            elif st in ("survived", "no tests"):
                survivors.append(name)
        per_module[module] = counts
    explained = sum(1 for s in survivors if s in explanations)
    return {"per_module": per_module, "killed": killed, "tested": tested, "not_checked": not_checked,
            "survivors": survivors, "explained": explained,
            "score": killed / tested if tested else None,
            "killed_or_explained": (killed + explained) / tested if tested else None}


MD_TITLE = "# Mutation testing of the numerical core"


def is_mutation_json(path: Path) -> bool:
    """Whether ``path`` holds this tool's ``mutation.json`` (a JSON object whose ``tool`` is mutmut's and
    with a ``survivors`` list): one written before the report folder's manifest, which it may replace. Read
    through the package's one reader (a FIFO, a deep or a non-UTF-8 file is not this tool's, never waited on)."""
    from .._files import read_json

    try:
        data = read_json(path, 64 << 20)
    except (OSError, ValueError):
        return False
    return (isinstance(data, dict) and str(data.get("tool", "")).startswith("mutmut ")
            and isinstance(data.get("survivors"), list))


def is_mutation_md(path: Path) -> bool:
    """Whether ``path`` holds this tool's ``mutation.md`` (its first line is :data:`MD_TITLE`), read through
    the package's one reader (:func:`attention_claims._files.read_text`: a FIFO is not this tool's file)."""
    from .._files import read_text

    try:
        return read_text(path, 64 << 20).split("\n", 1)[0].rstrip("\r") == MD_TITLE
    except (OSError, ValueError):
        return False


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f} %"


_MISSING = object()
"""What :func:`_json_input` returns for a file that does not exist."""


def _json_input(path: Path):
    """The JSON in ``path``, read through the package's one reader (:func:`attention_claims._files.read_json`:
    a regular file, at most 64 MiB, nested at most 64 levels), or :data:`_MISSING` when there is no such file.

    Raises:
        MutationInputError: it cannot be read, is not UTF-8 or not JSON, or is nested too deeply (naming it).
    """
    from .._files import UnsafeFileError, read_json

    try:
        return read_json(path, 64 << 20)
    except FileNotFoundError:
        return _MISSING
    except UnsafeFileError as exc:
        raise MutationInputError(str(exc)) from None
    except OSError as exc:
        raise MutationInputError(f"{path}: cannot read it ({exc.strerror or exc})") from None


def _read_run(root: Path, modules: list[str]) -> tuple[dict[str, dict[str, int | None]], str | None]:
    """``({module: {mutant name: exit code or None}}, the commit mutmut recorded)`` from mutmut 3's files in
    ``root/mutants`` (``<module>.meta``: ``{"exit_code_by_key": {...}}``; ``mutmut-stats.json``).

    Raises:
        MutationInputError: no module to summarise; no ``.meta`` file of any module (no ``mutmut run`` yet);
            a ``.meta`` file that is not JSON or whose ``exit_code_by_key`` is not a map of mutant names to
            integer exit codes or null (each naming the file); a module of ``only_mutate`` without one
            (naming those modules: never summarised as having no mutants); a ``mutmut-stats.json`` (optional)
            that is not a regular file, too large, not UTF-8, not a JSON object or nested too deeply (naming it).
    """
    if not modules:
        raise MutationInputError(f"{root / 'pyproject.toml'}: [tool.mutmut] only_mutate names no module: nothing "
                                 "was mutated, nothing to summarise")
    codes: dict[str, dict[str, int | None]] = {}
    missing = []
    for m in modules:
        meta = root / "mutants" / f"{m}.meta"
        data = _json_input(meta)
        if data is _MISSING:
            missing.append(m)
            continue
        by_key = data.get("exit_code_by_key") if isinstance(data, dict) else None
        if not isinstance(by_key, dict) or not all(
                v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in by_key.values()):
            raise MutationInputError(f"{meta}: exit_code_by_key is not a map of mutant names to exit codes "
                                     "(integers, or null for a mutant not checked yet)")
        codes[m] = by_key
    if len(missing) == len(modules):
        raise MutationInputError(f"{root / 'mutants'}: no mutmut run to summarise (no .meta file of "
                                 f"{', '.join(modules[:3])}{' ...' if len(modules) > 3 else ''}); run `mutmut run` "
                                 "first")
    if missing:
        raise MutationInputError(f"{root / 'mutants'}: no .meta file of {', '.join(missing)} (in only_mutate): "
                                 "that module was not mutated by this run; run `mutmut run` again")
    stats_path = root / "mutants" / "mutmut-stats.json"
    stats = _json_input(stats_path)  # optional: without it (or its git_commit) the report names the checkout's
    if stats is _MISSING:
        return codes, None
    if not isinstance(stats, dict):
        raise MutationInputError(f"{stats_path}: not a JSON object (mutmut writes one); a damaged run's files")
    commit = stats.get("git_commit")
    return codes, commit if isinstance(commit, str) else None


def _explanations(path: Path) -> dict[str, str]:
    """``mutation_explanations.json``: ``{mutant name: why it survives}`` (empty when absent).

    Raises:
        MutationInputError: not JSON, or not a map of strings to strings (naming the file).
    """
    data = _json_input(path)
    if data is _MISSING:
        return {}
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise MutationInputError(f"{path}: not a map of mutant names to explanations (strings)")
    return data


def _provenance(result: dict) -> str:
    """The report's first sentence: the tool, the commits and the date. mutmut keeps a function's results
    while its code hashes the same and re-tests a function whose code changed, so a run begun at one
    commit (``commit``, recorded when mutmut collected which tests reach which function) and resumed at a
    later one (``tests_commit``) covers the modules as of the later commit, with the mutants checked before
    the resumption run against the earlier tests."""
    if result["commit"] == result["tests_commit"]:
        return (f"Run with {result['tool']} over the modules and tests as of commit `{result['commit']}`; "
                f"summarised {result['date']}.")
    return (f"Run with {result['tool']} over the modules as of commit `{result['tests_commit']}`: begun at "
            f"`{result['commit']}` (when mutmut collected which tests reach which function) and resumed at "
            f"`{result['tests_commit']}` (mutmut keeps a function's results while its code is unchanged and "
            f"re-tests the functions that changed), so the mutants checked before the resumption ran against the "
            f"tests as of `{result['commit']}`, the others against those of `{result['tests_commit']}`; "
            f"summarised {result['date']}.")


def main(argv: list[str] | None = None) -> int:
    """Summarise the last ``mutmut run`` of the project (the ini file's folder) in
    ``<report folder>/mutation.md`` and ``mutation.json`` through the report folder
    (:class:`~attention_claims.framework.report_folder.ReportFolder`: exit status 4, nothing written, when
    the folder is refused or a file of those names there is not this tool's); takes no options. Exit status
    4, nothing written, too when there is nothing to summarise or its files are malformed
    (:class:`MutationInputError`: no module in ``only_mutate``, no ``mutmut run`` yet, no mutant checked yet,
    a malformed ``.meta`` file, ``mutmut-stats.json``, ``mutation_explanations.json`` or ``[tool.mutmut]``: each
    read through the package's one reader, so a FIFO, a too-deep or a non-UTF-8 file is refused naming it,
    never waited on), so that an earlier report is never replaced by an empty one."""
    import argparse

    argparse.ArgumentParser(description=description(__doc__)).parse_args(argv)
    try:  # an optional dependency (the extra 'mutation'): without it a usage error, not a traceback
        from mutmut.mutation.diff_apply import get_diff_for_mutant
    except ImportError as exc:
        print(f"attention-claims mutation-report: mutmut is not installed ({exc}); it summarises a `mutmut run`: "
              "pip install 'attention-claims[mutation]' (mutmut 3), then `mutmut run`", file=sys.stderr)
        return USAGE_ERROR
    try:
        paths = claims_config.discover()
    except claims_config.ConfigFileError as exc:
        print(f"attention-claims mutation-report: {exc}", file=sys.stderr)
        return USAGE_ERROR
    ROOT, REPORTS = paths.root, paths.report_dir
    try:
        cfg = _mutmut_config(ROOT)
        modules = mutated_modules(ROOT)
        codes, commit = _read_run(ROOT, modules)
        notes = _explanations(REPORTS / "mutation_explanations.json")
        tests = _string_list(ROOT / "pyproject.toml", "pytest_add_cli_args_test_selection",
                             cfg.get("pytest_add_cli_args_test_selection", []))
        pytest_args = _string_list(ROOT / "pyproject.toml", "pytest_add_cli_args", cfg.get("pytest_add_cli_args", []))
        s = summarise(codes, notes)
        if not s["tested"]:  # never an empty report over a result: nothing to score yet
            raise MutationInputError(f"{ROOT / 'mutants'}: no mutant has been checked yet ({s['not_checked']} not "
                                     "checked): run `mutmut run` first; nothing written")
    except MutationInputError as exc:
        print(f"attention-claims mutation-report: {exc}", file=sys.stderr)
        return USAGE_ERROR
    from importlib.metadata import version

    module_of = {name: m for m, c in codes.items() for name in c}
    diffs = {}
    with contextlib.chdir(ROOT):
        for name in s["survivors"]:
            try:
                diffs[name] = get_diff_for_mutant(name, path=module_of[name])
            except Exception as exc:  # noqa: BLE001 - mutmut's reader of its own mutants/ folder, any failure
                print(f"attention-claims mutation-report: mutant {name} of {module_of[name]}: mutmut cannot give "
                      f"its diff ({type(exc).__name__}: {str(exc)[:200]}); is mutants/ from another run? "
                      "Nothing written", file=sys.stderr)
                return USAGE_ERROR
    result = {
        "tool": f"mutmut {version('mutmut')}",
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "modules": modules,
        "tests": tests,
        "pytest_args": pytest_args,
        "commit": commit or git_commit(ROOT),
        "tests_commit": git_commit(ROOT),
        "score": s["score"],
        "killed_or_explained": s["killed_or_explained"],
        "killed": s["killed"],
        "explained": s["explained"],
        "total": s["tested"],
        "not_checked": s["not_checked"],
        "per_module": s["per_module"],
        "survivors": [{"name": n, "status": status_of(codes[module_of[n]][n]),
                       "explanation": notes.get(n, "UNEXPLAINED")} for n in s["survivors"]],
    }
    json_text = json.dumps(result, indent=1, ensure_ascii=False) + "\n"
    md = [MD_TITLE, "",
          _provenance(result), "",
          f"Modules mutated: {', '.join(f'`{m}`' for m in modules)}.", "",
          f"Tests run against each mutant (mutmut runs, of these, the tests that reach the mutated function): "
          f"{', '.join(f'`{t}`' for t in tests)}, with `{' '.join(result['pytest_args'])}`.", ""]
    if s["not_checked"]:
        md += [f"**Partial run: {s['not_checked']} mutants not checked yet** (`mutmut run` resumes the run; "
               "they are left out of both figures below).", ""]
    md += [f"**Score: {_pct(s['score'])}** ({s['killed']} killed or timed out of {s['tested']} tested); "
           f"**killed or explained: {_pct(s['killed_or_explained'])}** ({s['explained']} of the "
           f"{len(s['survivors'])} survivors explained below).", "",
           "| module | killed | timeout | survived | no tests | not checked |", "|---|---|---|---|---|---|"]
    for m, c in s["per_module"].items():
        md.append(f"| `{m}` | {c.get('killed', 0)} | {c.get('timeout', 0)} | {c.get('survived', 0)} | "
                  f"{c.get('no tests', 0)} | {c.get('not checked', 0)} |")
    md += ["", f"## Surviving mutants ({len(s['survivors'])})", ""]
    for item in result["survivors"]:
        md += [f"### `{item['name']}` ({item['status']})", "", f"Why: {item['explanation']}", "", "```diff",
               diffs[item["name"]].strip(), "```", ""]
    try:
        folder = ReportFolder(REPORTS, sources_dir=paths.sources_dir, claims_dir=paths.claims_dir)
        with folder.lock():
            folder.write({"mutation.json": json_text, "mutation.md": "\n".join(md) + "\n"},
                         adopt={"mutation.json": is_mutation_json, "mutation.md": is_mutation_md})
    except (ReportFolderError, OSError) as exc:
        print(f"mutation_report: {REPORTS / 'mutation.json'} and mutation.md not written: {exc}", file=sys.stderr)
        return USAGE_ERROR
    print(f"score {_pct(s['score'])}, killed or explained {_pct(s['killed_or_explained'])}, "
          f"{len(s['survivors']) - s['explained']} unexplained, {s['not_checked']} not checked -> reports/mutation.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
