"""The rendered report parts kept on disk between processes: the HTML claim cards, the annotated
documents (their sentence cuts and their HTML), the Markdown claim sections and the compiled Jinja
templates.

A fresh process (each pytest run) renders the whole catalog twice, the in-progress and the final
report. The in-progress report, and every claim a subset run does not decide, carry the last report's
entries unchanged, so their cards were rendered by the last process; a claim decided now gets a new
card (its entry says when it was decided), so a full run's final report renders most cards anew and
writes them for the next run's in-progress report. :func:`memo` keeps cards, document views (:mod:`.html`) and the
Markdown claim sections (:mod:`.markdown`) in memory keyed by what they show, and as files, so the
first report of a process costs about what the second does.

Where: ``<cache root>/render/<first 16 hex digits of render_digest()>/`` (:func:`render_cache_dir`,
under :func:`attention_claims._cache.cache_root`), one file per value: ``<kind>-<key>.html`` for the
kinds ``card``, ``document`` and ``md``, ``annotated-<key>.pickle`` (:func:`cached_object`) and
``tpl-<Jinja's bucket key>.jinja``; ``key`` is the in-memory memo's key (SHA-256 of the canonical JSON
of everything the value is made of: a card's claim entry, order, anchors, figures as data URIs and
the plot drawing code; a Markdown section's claim entry; a document's text, classification and the
claims that quote it; ...). Files are written by
:func:`attention_claims._cache.write_checked` (atomic, with its SHA-256 on the first line: a corrupt
or unreadable entry is recomputed, never an error; an unwritable cache only costs the speed-up).

The key of a file is therefore (render digest, kind, memo key): :func:`render_digest` is the SHA-256 of
every Python module of this package (``html.py``, ``texmd.py``, ``model.py``, ``plots.py``,
``documents.py``, ``markdown.py``, this one, ...), every template under ``templates/`` and Jinja's
version, so an edit of a template, a filter or a helper the card calls never serves stale HTML (the
package imports no other module of the project that shapes a card; MarkupSafe's version is not in the
key: its escaping of ``<>&'"`` is fixed). The compiled templates (:data:`BYTECODE`, Jinja's bytecode
cache) live in the same folder.

One file per value rather than one map per render: reading the 160 cards of the full catalog as files
takes about 9 ms against 4 ms for one JSON map, but a run changes a card or two, which costs one small
file here against rewriting the whole map (7 ms, 1.6 MB), and the suite's many small reports, which
share the cache, never evict each other's entries.

Trust: compiled templates and pickles run code when loaded, so the disk cache is used only while
``<cache root>/render`` is a real folder (not a symbolic link) that belongs to this user and no one else
may write to (:func:`attention_claims._cache.trusted_dir`; created with mode 0700; otherwise one
warning and the disk cache is off), and a pickle may name the classes of :mod:`.documents` alone.

Growth: the render folder keeps the :data:`KEEP_DIGESTS` most recently written code versions (older
ones are removed when a new entry is written), and a code version's folder is cut back to the
:data:`KEEP_ENTRIES` newest files when it holds more than twice that. Only what this module wrote is
removed (:func:`attention_claims._cache.prune_oldest`): a code version's folder is created with the
:data:`attention_claims._cache.MARKER` file in it and only such folders with a name of 16 hex digits
are pruned; within one, only plain files named like its entries. Anything else under ``render/``
(a folder of one's own, a symbolic link, a folder of an older version of the suite, which carries no
marker) is left alone. ``ATTENTION_CLAIMS_RENDER_CACHE=0``
turns the disk cache off (the in-memory memo still works).
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import pickle
import re
from collections.abc import Callable
from pathlib import Path

import jinja2

from ..._cache import files_digest, mark_dir, prune_oldest, read_checked, trusted_dir, write_atomic, write_checked

__all__ = ["memo", "render_digest", "render_cache_dir", "cached", "cached_object", "BYTECODE", "KEEP_DIGESTS", "KEEP_ENTRIES"]

PACKAGE = Path(__file__).parent
QUOTES = PACKAGE.parent / "quotes.py"
"""The quote matcher's module, outside this package, whose code the annotated documents depend on too."""
KEEP_DIGESTS = 4
"""How many code versions' folders ``<cache root>/render/`` keeps (other worktrees, recent edits)."""
KEEP_ENTRIES = 2048
"""A code version's folder is cut back to this many newest files when it holds more than twice as many."""


@functools.cache
def render_digest() -> str:
    """SHA-256 (hex) of the render package's Python modules, its templates and Jinja's version: what a
    rendered card or document view depends on besides its view (read once per process).

    Raises:
        OSError: a module or template cannot be read.
    """
    files = sorted(PACKAGE.glob("*.py")) + sorted(p for p in (PACKAGE / "templates").iterdir() if p.is_file())
    files.append(QUOTES)  # where the views place a quote (annotate's matcher)
    return files_digest(files) + "-" + jinja2.__version__


def render_cache_dir() -> Path | None:
    """``<cache root>/render/<render_digest()[:16]>``, or None (the disk cache off) when
    ``ATTENTION_CLAIMS_RENDER_CACHE=0`` or when ``<cache root>/render`` may not be trusted
    (:func:`attention_claims._cache.trusted_dir`: one warning): its entries include compiled templates
    and pickles, which run code when loaded, so a folder that someone else can write to is never read.

    Raises:
        attention_claims._cache.UntrustedCacheWarning: as an error only where warnings are made errors.
    """
    if os.environ.get("ATTENTION_CLAIMS_RENDER_CACHE", "1") == "0":
        return None
    root = trusted_dir("render")
    return None if root is None else _in_use(root / render_digest()[:16])


@functools.cache
def _in_use(folder: Path) -> Path:
    """``folder``, created with the pruning marker when missing (:func:`attention_claims._cache.mark_dir`),
    else its modification time set to now; once per process: old code versions are pruned by that time
    (:func:`_prune`), so a version whose entries are all read, never written, is not taken for an old one."""
    if not mark_dir(folder):
        try:
            os.utime(folder, follow_symlinks=False)
        except (OSError, NotImplementedError):
            pass
    return folder


class _DocumentUnpickler(pickle.Unpickler):
    """Unpickles an annotated document and nothing else: the classes of :mod:`.documents` and the builtin
    containers they hold; any other global in an entry (which could run code) makes it a bad entry."""

    def find_class(self, module: str, name: str):
        if module == f"{__package__}.documents" and name in ("AnnotatedDocument", "Block", "Sentence"):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a render cache entry")


def memo(store: dict, limit: int, key_parts, compute: Callable[[], object], disk=None) -> tuple[str, object]:
    """``compute()``, kept in ``store`` under the SHA-256 of ``key_parts``' canonical JSON (sorted keys;
    a value JSON cannot write is written as its ``str``; the store is emptied when it grows past
    ``limit``); returns ``(key, value)``. The render caches key on everything their value shows, so an
    equal key is an equal value. With ``disk`` (``disk(key, compute)``: :func:`cached` or
    :func:`cached_object` with a kind) the value is also kept across processes under the same key, in
    the folder of the render code's digest."""
    key = hashlib.sha256(json.dumps(key_parts, sort_keys=True, default=str).encode()).hexdigest()
    if key not in store:
        if len(store) > limit:
            store.clear()
        store[key] = compute() if disk is None else disk(key, compute)
    return key, store[key]


_PRUNED: set[Path] = set()
_VERSION = re.compile(r"[0-9a-f]{16}")
_ENTRY = re.compile(r"[a-z]+-[0-9a-f]{64}\.(?:html|pickle)|tpl-[0-9a-f]+\.jinja")


def _prune(folder: Path) -> None:
    """Once per process and folder, after a write: drop old code versions and cut an overfull folder,
    removing only what this module wrote (module docstring)."""
    if folder in _PRUNED:
        return
    _PRUNED.add(folder)
    try:
        prune_oldest([p for p in folder.parent.iterdir() if _VERSION.fullmatch(p.name)], KEEP_DIGESTS)
        entries = [p for p in folder.iterdir() if _ENTRY.fullmatch(p.name)]
    except OSError:
        return
    if len(entries) > 2 * KEEP_ENTRIES:
        prune_oldest(entries, KEEP_ENTRIES)


def _stored(name: str, load: Callable[[Path], object | None], dump: Callable[[object], str | bytes],
            compute: Callable[[], object]) -> object:
    """The value of the entry ``<render_cache_dir()>/<name>`` as ``load`` reads it (None: missing or bad),
    or ``compute()``, written there as ``dump`` gives it (:func:`write_checked`) and the folder pruned.
    The disk cache off: ``compute()``."""
    folder = render_cache_dir()
    if folder is None:
        return compute()
    path = folder / name
    value = load(path)
    if value is None:
        value = compute()
        if write_checked(path, dump(value)):
            _prune(folder)
    return value


def cached(kind: str, key: str, compute: Callable[[], str]) -> str:
    """The text stored as ``<render_cache_dir()>/<kind>-<key>.html``, or ``compute()`` stored there.

    ``key`` must determine the value given this package's code (the caller's memo key: the SHA-256 of
    everything the value shows); the folder carries :func:`render_digest`. A missing, unreadable or
    corrupt entry is recomputed; an unwritable folder is ignored.
    """
    return _stored(f"{kind}-{key}.html", read_checked, lambda text: text, compute)


def cached_object(kind: str, key: str, compute: Callable[[], object], cls: type) -> object:
    """Like :func:`cached` for an object of class ``cls`` defined in this package (an
    :class:`~.documents.AnnotatedDocument`), pickled as ``<kind>-<key>.pickle``: the folder's digest
    covers the class's code. An entry that does not unpickle to a ``cls`` is recomputed.
    """

    def load(path: Path) -> object | None:
        data = read_checked(path, binary=True)
        if data is None:
            return None
        try:
            value = _DocumentUnpickler(io.BytesIO(data)).load()
        except Exception:  # noqa: BLE001 - whatever a bad entry raises, it is recomputed
            return None
        return value if isinstance(value, cls) else None

    return _stored(f"{kind}-{key}.pickle", load, lambda v: pickle.dumps(v, protocol=pickle.HIGHEST_PROTOCOL),
                   compute)


class _Bytecode(jinja2.BytecodeCache):
    """Jinja's compiled templates in :func:`render_cache_dir` (``tpl-<bucket key>.jinja``): compiling the
    report templates takes about 45 ms in a fresh process, loading them about 1 ms. Jinja checks the
    source's checksum and its bytecode format (with Python's version) itself and drops a mismatching or
    unreadable entry; the folder's digest covers the environments' options (in this package's code)."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        folder = render_cache_dir()
        if folder is None:
            return
        from ..._files import read_regular

        try:  # the package's one reader: a FIFO planted in the cache is a miss, never waited on
            data = read_regular(folder / f"tpl-{bucket.key}.jinja", 64 << 20)
        except (OSError, ValueError):
            return
        try:
            bucket.bytecode_from_string(data)
        except Exception:  # noqa: BLE001 - a corrupt entry is recompiled, whatever marshal makes of it
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        folder = render_cache_dir()
        if folder is None:
            return
        try:
            write_atomic(folder / f"tpl-{bucket.key}.jinja", bucket.bytecode_to_string())
        except OSError:
            pass


BYTECODE: jinja2.BytecodeCache = _Bytecode()
"""The bytecode cache of the report's Jinja environments (``bytecode_cache=BYTECODE``)."""
