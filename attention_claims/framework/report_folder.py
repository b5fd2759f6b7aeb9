"""The report folder: the one place through which the suite's report writers (``pytest``'s report,
:func:`attention_claims.framework.report.write_report_data`, and ``attention-claims merge -o DIR``)
create, replace, set aside or delete anything there (:class:`ReportFolder`).

The rule: **the writer replaces or deletes only files it wrote.** It keeps a manifest,
:data:`MANIFEST` (``.attention-claims-manifest.json``: each file it wrote, by its path relative to the
folder, with the SHA-256 of what it wrote), and

- refuses (:class:`ReportFolderError`, exit status 4, naming the folder and why) a folder that is the
  home folder or a folder above it (``/``, ``/home``), the session's sources or claims folder or a folder
  inside them, or a folder that holds a ``SHA256SUMS`` or ``*.toml`` files (a sources or claims folder);
- refuses, before it writes anything, when a file it is about to create or replace is already there and
  is not one it wrote: not listed in the manifest, or listed with another SHA-256 (a person changed it
  since), or not a regular file (a link, a folder). ``site/claims.md`` of a user stops ``merge -o site``;
- deletes only files the manifest lists with their recorded SHA-256 (the SVG files of plots that an
  earlier report drew and this one does not); ``figures/logo.svg`` of a user is never touched;
- leaves every other file of the folder alone. That is what lets the project's own ``reports/`` hold
  committed files of the suite that no report writer wrote (``README.md``, ``bench.json``, ``deep/``,
  screenshots): the writer never writes those names, so they never stop it and it never deletes them.

The suite's other writers into the folder go through it too (:func:`write_suite_file`: the folder's lock,
the same refusals, the manifest): ``python -m attention_claims.tools.stability`` (``stability.json``),
``python -m attention_claims.tools.mutation_report`` (``mutation.json``, ``mutation.md``) and the checks'
own files (``figures/9889-relu2.png``, ``figures/9889-identity.png``, ``trained/<model>-n<N>.md``). Each
names, for its file, how to recognise one that it wrote before the manifest (``adopt``: a committed
``stability.json`` is a JSON object with ``seeds``, ``flips`` and ``profile``; a figure is a PNG written by
Matplotlib; ...): such a file is replaced (and then listed); any other file of that name stops the writer
with :class:`ReportFolderError`.

``claims.json`` is never replaced unread: the plugin reads it first (its decisions are kept) and a file
there that is not a schema-1 report (truncated, edited, someone else's) is renamed to
``claims.json.corrupt-<UTC date>`` (:meth:`ReportFolder.set_aside_damaged_report`), never deleted.

Migration: a folder without a manifest that holds a schema-1 ``claims.json`` is a report folder written by
a version of the suite before the manifest; its ``claims.json`` and ``planted.json``, and the pages and plot
SVG files rendered from that very report (``claims.md`` and ``claims.html`` carrying its heading and its
``generated`` stamp, the SVG files it names) count as the writer's, and the next write records them in a
manifest. Any other file of the writer's names there (a person's own ``claims.md`` beside a copied
``claims.json``) refuses the folder; a ``claims.json`` that is not a report is set aside only when the
manifest lists it, else refused (issue 43, finding 5). The lock file :data:`REPORT_LOCK` (empty) and the
temporary files ``.<name>.<pid>[.<random>].tmp`` of the writer's own file names are the writer's too. Every
file is written through :func:`attention_claims._files.write_file` (never through a symbolic link) and
every manifest or report read through :func:`attention_claims._files.read_json` (a FIFO refused, a depth cap).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from .. import _files

__all__ = ["ReportFolder", "ReportFolderError", "MANIFEST", "REPORT_LOCK", "LOCK_TIMEOUT", "REPORT_FILES",
           "write_suite_file", "is_matplotlib_png"]

MANIFEST = ".attention-claims-manifest.json"
"""The manifest of the files the writer wrote in the folder (``{"manifest": 1, "files": {path: {"sha256":
hex}}}``)."""

REPORT_LOCK = ".claims.lock"
"""The lock file in the report folder that serialises the runs writing it (:meth:`ReportFolder.lock`)."""

LOCK_TIMEOUT = 600.0
"""Seconds a run waits for another run to finish writing the same report folder."""

REPORT_FILES = ("claims.json", "claims.md", "claims.html", "planted.json")
"""The fixed names the writer writes at the folder's top (plots go to ``figures/<claim id>-<k>.svg``)."""

_TEMPORARY = re.compile(r"^\.(.+?)\.(\d+)(?:\.[0-9a-f]{8})?\.tmp$")
_PLOT_SVG = re.compile(r"^[A-Za-z0-9._-]+-\d+\.svg$")


class ReportFolderError(Exception):
    """The report folder cannot or must not be written: read-only, full, held by another run too long,
    or not the suite's (a home, sources or claims folder; a file there the suite did not write). The
    plugin turns it into one message and exit status 4 (:data:`pytest.ExitCode.USAGE_ERROR`); ``merge``
    exits 4 with it."""


_MANIFEST_MAX_BYTES = 16 << 20
"""The largest manifest read (a line per file: far under this)."""
_REPORT_MAX_BYTES = 256 << 20
"""The largest ``claims.json`` read to tell whether it is a report of the suite."""


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with _files.open_regular(path) as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _is_report(path: Path) -> bool:
    """Whether ``path`` holds a schema-1 report of the suite (a JSON object with ``schema`` 1, a
    ``claims`` list and a ``run`` object)."""
    try:
        data = _files.read_json(path, _REPORT_MAX_BYTES)
    except (OSError, ValueError):
        return False
    return (isinstance(data, dict) and data.get("schema") == 1 and type(data.get("schema")) is int
            and isinstance(data.get("claims"), list) and isinstance(data.get("run"), dict))


def _holds(path: Path, text: str, head: str) -> bool:
    """Whether the regular file ``path`` (at most 64 MiB) begins with ``head`` (after blanks) and holds ``text``."""
    if path.is_symlink():
        return False
    try:
        data = _files.read_regular(path, 64 << 20).decode("utf-8", "replace")
    except (OSError, ValueError):
        return False
    return data.lstrip().lower().startswith(head.lower()) and text in data


def _plain_relative(rel: str) -> bool:
    """Whether ``rel`` is a plain relative path inside a folder: ``/``-separated, no empty, ``.`` or ``..``
    part, not absolute, no backslash or NUL."""
    parts = rel.split("/")
    return bool(rel) and "\\" not in rel and "\0" not in rel and all(p not in ("", ".", "..") for p in parts)


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


class ReportFolder:
    """The report folder ``path`` of a session whose sources and claims folders are ``sources_dir`` and
    ``claims_dir`` (either may be None: not known to the caller). See the module docstring for the rule.
    """

    def __init__(self, path: Path | str, *, sources_dir: Path | str | None = None,
                 claims_dir: Path | str | None = None):
        self.path = Path(path)
        self.sources_dir = Path(sources_dir) if sources_dir is not None else None
        self.claims_dir = Path(claims_dir) if claims_dir is not None else None

    # -- what the folder may be ------------------------------------------------------------
    def refusal(self) -> str | None:
        """Why the folder must not be a report folder at all (None when it may): the home folder or one
        above it, the sources or claims folder or one inside them, a folder holding ``SHA256SUMS`` or
        ``*.toml`` files, or a path that is not a folder."""
        where = self.path.resolve()
        home = Path.home().resolve()
        if _inside(home, where):
            return "it is the home folder" if where == home else f"it is a folder above the home folder {home}"
        for name, folder in (("sources", self.sources_dir), ("claims", self.claims_dir)):
            if folder is not None and _inside(where, folder.resolve()):
                return f"it is the {name} folder {folder}" + ("" if where == folder.resolve() else " or inside it")
        if where.exists() and not where.is_dir():
            return "it is not a folder"
        if where.is_dir():
            if (where / "SHA256SUMS").exists():
                return "it holds SHA256SUMS (a sources folder)"
            toml = sorted(p.name for p in where.glob("*.toml"))
            if toml:
                return f"it holds {toml[0]} (a claims folder)"
        return None

    def _error(self, why: str) -> ReportFolderError:
        return ReportFolderError(f"the report folder {self.path} is not the suite's to write: {why}; "
                                 "name an empty or new folder with --claims-report-dir (or -o for merge)")

    # -- the manifest --------------------------------------------------------------------------
    def owned(self) -> dict[str, set[str] | None]:
        """The files the writer wrote here: path relative to the folder -> the SHA-256 digests its
        content may have (None: any content, a file adopted from a report written before the manifest).

        Raises:
            ReportFolderError: the manifest cannot be read or is malformed.
        """
        manifest = self.path / MANIFEST
        try:
            data = _files.read_json(manifest, _MANIFEST_MAX_BYTES)
        except FileNotFoundError:
            return self._legacy()
        except (OSError, ValueError) as exc:
            raise self._error(f"its manifest {manifest} cannot be read ({exc}); delete it if every file it "
                              "listed is the suite's") from None
        files = data.get("files") if isinstance(data, dict) and data.get("manifest") == 1 else None
        if not isinstance(files, dict) or not all(isinstance(v, dict) and isinstance(v.get("sha256"), str)
                                                  and _plain_relative(k) for k, v in files.items()):
            raise self._error(f"its manifest {manifest} is not a manifest of the suite (no 'files' of sha256 "
                              "digests by plain relative paths); delete it if every file it listed is the suite's")
        return {k: {v["sha256"], *([v["pending"]] if isinstance(v.get("pending"), str) else [])}
                for k, v in files.items()}

    def _legacy(self) -> dict[str, set[str] | None]:
        """The report files of a report written before the manifest (see the module docstring)."""
        report = self.path / "claims.json"
        if not report.is_file() or report.is_symlink() or not _is_report(report):
            return {}
        from .render.model import plot_files

        names = ["claims.json", "planted.json"]
        data = _files.read_json(report, _REPORT_MAX_BYTES)
        stamp = data.get("generated") if isinstance(data.get("generated"), str) else None
        for name, head in (("claims.md", "# attention-claims report"), ("claims.html", "<!doctype html>")):
            # adopted only when rendered from this very report: its own heading and generation stamp (a
            # person's claims.md beside a copied claims.json is not the suite's, issue 43, finding 5)
            if stamp and _holds(self.path / name, stamp, head):
                names.append(name)
        try:
            for claim in data["claims"]:
                names += [rel for _n, _s, rel in plot_files(claim)
                          if _holds(self.path / rel, "<svg", "<")] if isinstance(claim, dict) else []
        except (KeyError, TypeError, ValueError, AttributeError):
            pass
        return {n: None for n in names}

    def _write_manifest(self, files: Mapping[str, dict]) -> None:
        text = json.dumps({"manifest": 1, "writer": "attention-claims", "files": dict(sorted(files.items()))},
                          indent=1) + "\n"
        _write_together({self.path / MANIFEST: text})

    def _settled(self, owned: Mapping[str, set[str] | None]) -> dict[str, str]:
        """The manifest's files with one digest each: a file a killed write left with two (its old and its
        new content) keeps the one it holds; a file adopted from a report before the manifest (no digest)
        gets the one it holds now; an adopted file that is not there is dropped."""
        out = {}
        for rel, digests in owned.items():
            if digests is not None and len(digests) == 1:
                out[rel] = next(iter(digests))
            elif (self.path / rel).is_file() and not (self.path / rel).is_symlink():
                digest = _sha256(self.path / rel)
                if digests is None or digest in digests:
                    out[rel] = digest
        return out

    def _foreign(self, rel: str, owned: Mapping[str, set[str] | None],
                 adopt: Mapping[str, Callable[[Path], bool]] | None = None) -> str | None:
        """Why the file ``rel`` there is not the writer's to replace or delete (None: it is, or nothing
        is there). ``adopt[rel]``, when given, says whether an unlisted file there is one the suite wrote
        before the manifest (see the module docstring)."""
        if not _plain_relative(rel):
            return f"{rel!r} is not a plain relative path inside it"
        path = self.path / rel
        parent = self.path
        for part in rel.split("/")[:-1]:
            parent = parent / part
            if parent.is_symlink() or (os.path.lexists(parent) and not parent.is_dir()):
                return f"{parent} is a link or not a folder"
        if not os.path.lexists(path):
            return None
        if path.is_symlink() or not path.is_file():
            return f"{path} is there and is not a plain file the suite wrote"
        if rel not in owned:
            if rel == "claims.json" and _is_report(path):
                return None  # a report of the suite, read (and merged) before it is replaced
            if adopt is not None and rel in adopt and adopt[rel](path):
                return None  # the suite's own file, written before the manifest
            return f"{path} is there and the suite did not write it (its manifest {MANIFEST} does not list it)"
        digests = owned[rel]
        if digests is not None and rel != "claims.json" and _sha256(path) not in digests:
            return f"{path} was changed since the suite wrote it; move it away to keep it"
        return None

    # -- checks ----------------------------------------------------------------------------
    def check(self, names: Iterable[str] = REPORT_FILES, *, create: bool = True) -> None:
        """Make sure the folder is the suite's and can be written: run at configure time (and by
        ``merge`` before anything is read), so a refused or unwritable folder stops the run before any
        check runs. With ``create``, creates the folder and its lock file (a real write: ``root`` passes
        ``os.access`` on a read-only folder). ``claims.json`` is not checked here: it is read, or set aside
        when it is not a report (:meth:`set_aside_damaged_report`), before it is replaced.

        Raises:
            ReportFolderError: the folder is refused (:meth:`refusal`), a file of ``names`` there is not
                the writer's, or the folder or its lock file cannot be created.
        """
        why = self.refusal()
        if why is not None:
            raise self._error(why)
        if self.path.is_dir():
            owned = self.owned()
            for rel in (*names, REPORT_LOCK):
                if rel == "claims.json":
                    continue
                problem = self._lock_problem() if rel == REPORT_LOCK else self._foreign(rel, owned)
                if problem:
                    raise self._error(problem)
        if not create:
            return
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            try:
                _files.create_file(self.path / REPORT_LOCK, b"")
            except FileExistsError:
                pass
        except OSError as exc:
            raise ReportFolderError(f"the report folder {self.path} cannot be written ({exc.strerror or exc}); "
                                    "name another with --claims-report-dir, or run with --claims-no-report") from None

    def _lock_problem(self) -> str | None:
        lock = self.path / REPORT_LOCK
        if os.path.lexists(lock) and (lock.is_symlink() or not lock.is_file() or lock.stat().st_size > 0):
            return f"{lock} is there and is not the suite's (empty) lock file"
        return None

    @contextlib.contextmanager
    def lock(self, timeout: float | None = None) -> Iterator[None]:
        """Hold the folder's lock (``filelock``, an exclusive lock on :data:`REPORT_LOCK`) while a run
        reads the last report, merges its own decisions into it and writes the files, so that two runs
        at once serialise their read-merge-write and neither loses the other's verdicts.

        Raises:
            ReportFolderError: the folder is refused, the lock file is not the suite's or cannot be
                created, or another run held it for ``timeout`` s (default :data:`LOCK_TIMEOUT`).
        """
        from filelock import FileLock, Timeout

        timeout = LOCK_TIMEOUT if timeout is None else timeout
        why = self.refusal() or (self._lock_problem() if self.path.is_dir() else None)
        if why is not None:
            raise self._error(why)
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            lock = FileLock(str(self.path / REPORT_LOCK))
            lock.acquire(timeout=timeout)
        except Timeout:
            raise ReportFolderError(f"another run has held {self.path / REPORT_LOCK} for {timeout:.0f} s; "
                                    "the report was not written") from None
        except OSError as exc:
            raise ReportFolderError(f"the report folder {self.path} cannot be written ({exc.strerror or exc})") from None
        try:
            yield
        finally:
            lock.release()

    # -- what a killed run left --------------------------------------------------------------
    def remove_stale_temporaries(self) -> list[Path]:
        """Remove the temporary files (``.<name>.<pid>.tmp``) that a killed writer left, of its own file
        names only (:data:`REPORT_FILES`, the manifest, the files it lists, plot SVG names under
        ``figures/``) and of a process that no longer runs. Only regular files are touched. Returns the
        files removed."""
        try:
            listed = set(self.owned())
        except ReportFolderError:
            listed = set()
        removed = []
        for sub in ("", "figures"):
            folder = self.path / sub if sub else self.path
            try:
                entries = list(folder.iterdir())
            except OSError:
                continue
            for p in entries:
                m = _TEMPORARY.match(p.name)
                if m is None:
                    continue
                rel = f"{sub}/{m.group(1)}" if sub else m.group(1)
                ours = (rel in listed or rel in REPORT_FILES or rel == MANIFEST
                        or (sub == "figures" and _PLOT_SVG.match(m.group(1))))
                if not ours or _alive(int(m.group(2))) or p.is_symlink() or not p.is_file():
                    continue
                try:
                    p.unlink()
                    removed.append(p)
                except OSError:
                    pass
        return removed

    def set_aside(self, rel: str) -> Path:
        """Rename the file ``rel`` to ``<name>.corrupt-<UTC date and time>`` (a free name), never deleting
        it, and return the new path.

        Raises:
            OSError: it cannot be renamed.
        """
        path = self.path / rel
        stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
        target = path.with_name(f"{path.name}.corrupt-{stamp}")
        k = 1
        while os.path.lexists(target):
            k += 1
            target = path.with_name(f"{path.name}.corrupt-{stamp}-{k}")
        os.replace(path, target)
        return target

    def set_aside_damaged_report(self) -> Path | None:
        """Set ``claims.json`` aside (:meth:`set_aside`) when it is there and is not a schema-1 report of
        the suite; return where it went (None when nothing was moved). For a writer that does not read
        the report before replacing it (``merge``)."""
        path = self.path / "claims.json"
        if not os.path.lexists(path) or (path.is_file() and not path.is_symlink() and _is_report(path)):
            return None
        if path.is_symlink() or not path.is_file():
            raise self._error(f"{path} is there and is not a plain file the suite wrote")
        if "claims.json" not in self.owned():
            raise self._error(f"{path} is there, is not a report of the suite, and its manifest {MANIFEST} "
                              "does not list it (the suite did not write it)")
        return self.set_aside("claims.json")

    # -- writing -----------------------------------------------------------------------------
    def write(self, files: Mapping[str, str | bytes], *, replace_prefix: str | None = None,
              replace_suffix: str = "", adopt: Mapping[str, Callable[[Path], bool]] | None = None) -> list[Path]:
        """Write ``files`` (path relative to the folder -> text as UTF-8, or bytes) together: every file
        is checked first (none is written when one is refused), written to a temporary beside it and
        moved into place (``os.replace``), so a failed write (a full disk) leaves every earlier file as it
        was; the manifest records each with its SHA-256. With ``replace_prefix``, the files the manifest
        lists under that prefix with ``replace_suffix`` (``"figures/"``, ``".svg"``: the plots of an
        earlier report) that ``files`` does not name are deleted, when they still hold what the writer
        wrote. ``adopt`` (path -> predicate on the file there) names the unlisted files that are the
        suite's anyway (written before the manifest). Returns the paths written.

        Raises:
            ReportFolderError: the folder is refused, or a file to write is there and is not the writer's.
            OSError: a file cannot be written (the temporary files are removed).
        """
        why = self.refusal()
        if why is not None:
            raise self._error(why)
        owned = self.owned()
        for rel in files:
            problem = self._foreign(rel, owned, adopt)
            if problem:
                raise self._error(problem)
        stale = []
        if replace_prefix is not None:
            for rel in sorted(owned):
                if rel.startswith(replace_prefix) and rel.endswith(replace_suffix) and rel not in files:
                    path = self.path / rel
                    if not os.path.lexists(path):
                        stale.append(rel)
                    elif self._foreign(rel, owned) is None:
                        stale.append(rel)
        data = {rel: text.encode("utf-8") if isinstance(text, str) else text for rel, text in files.items()}
        digests = {rel: hashlib.sha256(b).hexdigest() for rel, b in data.items()}
        entries = {rel: {"sha256": digest} for rel, digest in self._settled(owned).items()}
        entries.update({rel: {"sha256": d} for rel, d in digests.items()})
        # first the manifest that accepts both the old and the new content (a kill between the two
        # writes leaves files the manifest still owns), then the files, then the final manifest
        pending = dict(entries)
        for rel, d in digests.items():
            old = self.path / rel
            if os.path.lexists(old) and old.is_file():
                pending[rel] = {"sha256": _sha256(old), "pending": d}
        self.path.mkdir(parents=True, exist_ok=True)
        self._write_manifest(pending)
        _write_together({self.path / rel: b for rel, b in data.items()})
        for rel in stale:
            (self.path / rel).unlink(missing_ok=True)
            entries.pop(rel, None)
        self._write_manifest(entries)
        return [self.path / rel for rel in files]


def write_suite_file(folder: Path | str, rel: str, data: str | bytes, *,
                     adopt: Callable[[Path], bool] | None = None, sources_dir: Path | str | None = None,
                     claims_dir: Path | str | None = None) -> Path:
    """Write one file of the suite other than the report (``stability.json``, a check's figure) at
    ``folder/rel`` through :class:`ReportFolder`: under the folder's lock, refused like the report (a home,
    sources or claims folder; a file there that the suite did not write), listed in the manifest. ``adopt``
    says whether a file already there, not in the manifest, is one the suite wrote before the manifest
    (then it is replaced). ``sources_dir``, ``claims_dir``: the session's folders, refused as the folder.
    Returns the path written.

    Raises:
        ReportFolderError: the folder is refused, the file there is not the suite's, or the lock is held
            too long.
        OSError: the file cannot be written.
    """
    report_folder = ReportFolder(folder, sources_dir=sources_dir, claims_dir=claims_dir)
    with report_folder.lock():
        return report_folder.write({rel: data}, adopt={rel: adopt} if adopt is not None else None)[0]


def is_matplotlib_png(path: Path) -> bool:
    """Whether ``path`` is a PNG file that Matplotlib wrote (its ``Software`` text chunk, in the first
    4 KiB, names Matplotlib): a figure of a check written before the manifest."""
    try:
        with _files.open_regular(path) as f:
            head = f.read(4096)
    except (OSError, ValueError):
        return False
    return head.startswith(b"\x89PNG\r\n\x1a\n") and b"Software\x00Matplotlib" in head


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def _write_together(files: Mapping[Path, str | bytes]) -> None:
    """Write every file of ``files`` through a temporary file beside it, then move them all into place
    (``os.replace``): a write that fails (a full disk) leaves every earlier file as it was and no
    temporary file behind.

    Raises:
        OSError: a file cannot be written (the temporary files are removed).
    """
    temporaries: list[tuple[Path, Path]] = []
    try:
        for path, text in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            temporaries.append((_files.stage_file(path, text.encode("utf-8") if isinstance(text, str) else text), path))
    except BaseException:
        for tmp, _ in temporaries:
            tmp.unlink(missing_ok=True)
        raise
    for tmp, path in temporaries:
        _files.place_file(tmp, path)
