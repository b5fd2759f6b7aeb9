"""The caches' one home: the cache root, atomic writes, and a disk cache for expensive high-precision
references.

:func:`cache_root` is ``$ATTENTION_CLAIMS_CACHE`` or ``~/.cache/attention-claims``; under it live the
converted decoder and the trained models' measurements (:mod:`attention_claims.models`), the drawn plots
(``plots/``, :func:`attention_claims.framework.render.plots.render_plot`), the rendered report parts
(``render/``, :mod:`attention_claims.framework.render.diskcache`) and the references of
:func:`disk_memo` (``references/``). This module imports neither torch nor matplotlib, so every layer
can use it. :func:`write_atomic` is how every cache entry and report file is written.

Trust: a cache decides verdicts (references, measurements) and what a browser runs (plots, rendered
parts), so every cache folder is reached through :func:`trusted_dir` (or :func:`cache_dir`): it is
used only when it is a real folder (not a symbolic link) that belongs to this user and that no one
else may write to (no group or other write bit; created with mode 0700). A folder that fails is
ignored, with one :class:`UntrustedCacheWarning` per process and folder naming it and why, and its
values are computed again. Entries are checked too (:func:`write_checked` / :func:`read_checked`: a
SHA-256 line; the references also store their key and are used only under the key they are asked for).

Pruning (:func:`prune_oldest`) removes only what the suite wrote and can recognise: plain files the
caller picked by its own name pattern, and folders holding the :data:`MARKER` file the suite writes
into each folder it creates to be pruned; a symbolic link, or anything whose folder is not the pruned
folder itself, is never removed.

A certified 40-digit Gaussian quadrature (:func:`attention_claims.maths.sparsity.s_reference`, arb
balls) takes 2–20 ms (the mpmath tanh-sinh quadrature it replaced took 0.1–0.5 s), and the
derandomized ``ci`` profile draws the same examples on every run, so most of a re-run's quadratures
were already computed by the last one. :func:`disk_memo` keeps each result as a small JSON
file under ``<cache root>/references/<name>/`` (a :func:`trusted_dir`).

The key is exact: the function's qualified name, the SHA-256 of the source file that defines it (an
edit of the reference's code computes everything again), the mpmath version, and every argument
serialised without rounding (a float by ``float.hex``, an mpf by its binary ``(sign, mantissa,
exponent, bitcount)``, a Fraction as ``p/q``). The value, an mpf, is stored the same way and rebuilt
bit for bit (``mpmath.mp.make_mpf``), so a hit returns exactly what the computation returned
(``tests/test_cache.py``). An entry ``<key>.json`` is written by :func:`write_checked` (its SHA-256 on
the first line, then the JSON ``{"key": key, "value": [sign, mantissa, exponent, bitcount]}``); an
entry whose checksum fails, whose stored key is not its key, or whose value is malformed is computed
again and overwritten. Arguments of other types bypass the cache. Set
``ATTENTION_CLAIMS_REFERENCE_CACHE=0`` to turn it off; an unwritable cache only costs the speed-up.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import os
import re
import shutil
import stat
import tempfile
import warnings
from collections.abc import Callable, Iterable
from fractions import Fraction
from pathlib import Path

import mpmath

from . import _files

__all__ = ["cache_root", "write_atomic", "disk_memo", "disk_memo_ints", "reference_cache_dir", "files_digest", "read_checked",
           "write_checked", "prune_oldest", "trusted_dir", "cache_dir", "mark_dir", "MARKER", "UntrustedCacheWarning"]

MARKER = ".attention-claims-cache"
"""The file the suite writes into each cache folder it creates to be pruned (:func:`mark_dir`): pruning
removes a folder only when it holds this file (:func:`prune_oldest`)."""


def cache_root() -> Path:
    """``$ATTENTION_CLAIMS_CACHE`` if set, else ``~/.cache/attention-claims`` (not created here)."""
    env = os.environ.get("ATTENTION_CLAIMS_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "attention-claims"


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write ``text`` (a string as UTF-8, or bytes as they are) to ``path`` through a temporary file in the same folder and ``os.replace``,
    so a reader (another xdist worker, a browser) never sees half a file; the folder is created. The
    file gets the mode a plain ``open`` would give (0666 less the umask: 0644 under the usual 022).

    Raises:
        OSError: the folder cannot be created or written (the temporary file is removed).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    _files.write_file(path, text)


def files_digest(paths: Iterable[str | Path]) -> str:
    """SHA-256 (hex) of the files ``paths``: each one's name and bytes, in sorted order of the paths, so
    a cache keyed by it misses after an edit of any of them (the code and templates a value comes from).

    Raises:
        OSError: a file cannot be read.
    """
    h = hashlib.sha256()
    for p in sorted(Path(p) for p in paths):
        data = p.read_bytes()
        h.update(f"{p.name}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def read_checked(path: Path, *, binary: bool = False) -> str | bytes | None:
    """The content of a cache entry written by :func:`write_checked` (text, or bytes with ``binary``), or
    None when it is missing, unreadable or corrupt (its first line is not the SHA-256 of the rest, or
    the text is not UTF-8): a bad entry is recomputed, never an error."""
    try:  # the package's one reader: a FIFO or a device planted in the cache is a bad entry, never waited on
        digest, _, data = _files.read_regular(path, 1 << 30).partition(b"\n")
    except (OSError, ValueError):
        return None
    if hashlib.sha256(data).hexdigest().encode() != digest:
        return None
    if binary:
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def write_checked(path: Path, data: str | bytes) -> bool:
    """Write ``data`` (text as UTF-8, or bytes) as a cache entry for :func:`read_checked` (its SHA-256 on
    the first line), atomically (:func:`write_atomic`). Returns False, instead of raising, when it cannot
    be written: an unwritable cache only costs the speed-up."""
    raw = data.encode() if isinstance(data, str) else data
    try:
        write_atomic(path, hashlib.sha256(raw).hexdigest().encode() + b"\n" + raw)
    except OSError:
        return False
    return True


def prune_oldest(paths: Iterable[Path], keep: int) -> int:
    """Remove all but the ``keep`` most recently modified of ``paths`` (plain files, or folders with what
    they hold), so a cache does not grow without bound; an entry that vanishes or cannot be removed
    meanwhile (another process pruning too) is skipped. Returns how many were removed.

    Only what the suite wrote is removed: a symbolic link is never removed nor followed, a folder only
    when it holds the :data:`MARKER` file (:func:`mark_dir`), and anything else (a device, a FIFO) is
    left alone; the caller passes only names of its own pattern from one folder of its own. Folders are
    removed by ``shutil.rmtree``, which removes the links inside a folder and does not follow them.
    Never raises."""
    dated = []
    for p in paths:
        try:
            st = p.lstat()
            if stat.S_ISDIR(st.st_mode):
                if not stat.S_ISREG((p / MARKER).lstat().st_mode):
                    continue
            elif not stat.S_ISREG(st.st_mode):
                continue
        except OSError:
            continue
        dated.append((st.st_mtime, stat.S_ISDIR(st.st_mode), p))
    dated.sort(reverse=True, key=lambda d: d[0])
    removed = 0
    for _t, is_dir, p in dated[keep:]:
        try:
            if is_dir:
                if p.is_symlink():  # replaced by a link since it was looked at
                    continue
                shutil.rmtree(p)
            else:
                p.unlink()
            removed += 1
        except OSError:
            pass
    return removed


def mark_dir(folder: Path) -> bool:
    """Create ``folder`` (mode 0700) with the :data:`MARKER` file in it, which lets :func:`prune_oldest`
    remove it later. Returns True when this call created it; a folder that exists already is left as it
    is (not marked: the suite did not create it), and one that cannot be created gives False.
    Never raises."""
    try:
        folder.mkdir(mode=0o700)
    except OSError:
        return False
    try:
        write_atomic(folder / MARKER, "Created by attention-claims: removed when its cache is pruned.\n")
    except OSError:
        return True
    return True


class UntrustedCacheWarning(UserWarning):
    """A cache folder is ignored (someone else could write to it); its values are computed again."""


_WARNED: set[str] = set()


def _untrusted(folder: Path) -> str | None:
    """Why ``folder`` cannot be trusted, or None when it is a real folder of this user that no one else
    may write to (where the platform has no owners, Windows, only the link and folder checks)."""
    try:
        st = folder.lstat()
    except OSError as e:
        return f"it cannot be read ({e.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a folder"
    if hasattr(os, "getuid"):
        if st.st_uid != os.getuid():
            return f"it belongs to user id {st.st_uid}, not to this user ({os.getuid()})"
        if st.st_mode & 0o022:
            return f"others may write to it (mode {stat.S_IMODE(st.st_mode):o}; 'chmod go-w' it to use it again)"
    return None


@functools.cache
def _trusted(folder: Path, create: bool) -> Path | None:
    if create:
        try:
            folder.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            return None  # an unwritable cache only costs the speed-up
        try:
            folder.mkdir(mode=0o700)
            return folder
        except FileExistsError:
            pass
        except OSError:
            return None
    elif not os.path.lexists(folder):
        return folder  # nothing there yet to trust or distrust; the writer creates it
    why = _untrusted(folder)
    if why is None:
        return folder
    if str(folder) not in _WARNED:
        _WARNED.add(str(folder))
        warnings.warn(f"attention-claims: not using the cache folder {folder}: {why}; its values are computed "
                      "again", UntrustedCacheWarning, stacklevel=4)
    return None


def trusted_dir(name: str, *, create: bool = True) -> Path | None:
    """``<cache root>/<name>`` if it may be trusted, else None. Trusted: a real folder (not a symbolic
    link) that belongs to this user and that no one else may write to; with ``create`` a missing one is
    created with mode 0700 (None if it cannot be: an unwritable cache only costs the speed-up), without
    it a missing one is returned as it is (its writer creates it). A folder that fails is ignored with
    one :class:`UntrustedCacheWarning` per process and folder, naming it and why; the check is made
    once per process and folder.

    Raises:
        UntrustedCacheWarning: as an error only where warnings are made errors (``-W error``).
    """
    return _trusted(cache_root() / name, create)


_FALLBACK: list[Path] = []


def cache_dir(name: str, *, create: bool = True) -> Path:
    """:func:`trusted_dir` ``(name)``, or, when that is None, ``<name>`` in a private temporary folder
    of this process (removed at exit), so a caller that needs a folder computes its values again and
    trusts nothing it did not write itself.

    Raises:
        OSError: the temporary folder cannot be created.
        UntrustedCacheWarning: as an error only where warnings are made errors (``-W error``).
    """
    folder = trusted_dir(name, create=create)
    if folder is not None:
        return folder
    if not _FALLBACK:
        _FALLBACK.append(Path(tempfile.mkdtemp(prefix="attention-claims-cache-")))
        import atexit

        atexit.register(shutil.rmtree, _FALLBACK[0], True)
    return _FALLBACK[0] / name


def reference_cache_dir() -> Path | None:
    """``<cache root>/references``, or None when ``ATTENTION_CLAIMS_REFERENCE_CACHE=0`` or when that
    folder may not be trusted (:func:`trusted_dir`: one warning, the references are computed).

    Raises:
        UntrustedCacheWarning: as an error only where warnings are made errors (``-W error``).
    """
    if os.environ.get("ATTENTION_CLAIMS_REFERENCE_CACHE", "1") == "0":
        return None
    return trusted_dir("references")


class _Unkeyable(TypeError):
    pass


def _exact(value) -> object:
    """``value`` as JSON without rounding; raises _Unkeyable for a type it cannot key exactly."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return ["int", str(value)]
    if isinstance(value, float):
        return ["float", value.hex()]
    if isinstance(value, Fraction):
        return ["fraction", f"{value.numerator}/{value.denominator}"]
    if isinstance(value, mpmath.mpf):
        sign, man, exp, bc = value._mpf_
        return ["mpf", sign, hex(man), exp, bc]
    if hasattr(value, "item") and getattr(value, "shape", None) == ():  # a NumPy scalar
        return _exact(value.item())
    raise _Unkeyable(type(value).__name__)


@functools.cache
def _source_digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


_HEX = re.compile(r"0x[0-9a-f]+")
_SPECIAL = {mpmath.libmp.fzero, mpmath.libmp.fnzero, mpmath.libmp.finf, mpmath.libmp.fninf, mpmath.libmp.fnan}


def _read_reference(path: Path, key: str) -> mpmath.mpf | None:
    """The mpf stored in the reference entry ``path`` under ``key``, or None when it is missing, fails its
    checksum, was stored under another key, or is not a well-formed normal mpf."""
    text = read_checked(path)
    if text is None:
        return None
    try:
        entry = json.loads(text)
        if entry["key"] != key:
            return None
        sign, man, exp, bc = entry["value"]
        if (sign not in (0, 1) or not isinstance(man, str) or not _HEX.fullmatch(man) or type(exp) is not int
                or type(bc) is not int):
            return None
        mpf = (sign, int(man, 16), exp, bc)
        if mpf[1] == 0 and mpf not in _SPECIAL or mpf[1] and (mpf[1].bit_length() != bc or not mpf[1] & 1):
            return None
        return mpmath.mp.make_mpf(mpf)
    except (ValueError, TypeError, KeyError):
        return None


def _memo_key(name: str, source: str, versions: list, args, kwargs) -> str | None:
    """The exact key of a call (module docstring), or None when an argument cannot be keyed exactly."""
    try:
        blob = json.dumps([name, _source_digest(source), *versions, [_exact(a) for a in args],
                           {k: _exact(v) for k, v in sorted(kwargs.items())}])
    except _Unkeyable:
        return None
    return hashlib.sha256(blob.encode()).hexdigest()


def disk_memo(fn: Callable[..., mpmath.mpf]) -> Callable[..., mpmath.mpf]:
    """Decorate a pure function returning an mpf with the disk cache of this module (see above).

    A result that is not an mpf is returned and not stored."""
    name = f"{fn.__module__}.{fn.__qualname__}"
    source = inspect.getsourcefile(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        folder = reference_cache_dir()
        if folder is None:
            return fn(*args, **kwargs)
        key = _memo_key(name, source, [mpmath.__version__, mpmath.mp.prec], args, kwargs)
        if key is None:
            return fn(*args, **kwargs)
        path = folder / fn.__qualname__ / f"{key}.json"
        hit = _read_reference(path, key)
        if hit is not None:
            return hit
        value = fn(*args, **kwargs)
        if isinstance(value, mpmath.mpf):
            sign, man, exp, bc = value._mpf_
            write_checked(path, json.dumps({"key": key, "value": [sign, hex(man), exp, bc]}))
        return value

    wrapper.uncached = fn
    return wrapper


def _read_ints(path: Path, key: str) -> tuple[int, ...] | None:
    """The integer tuple stored in ``path`` under ``key``, or None (missing, checksum, key or type)."""
    text = read_checked(path)
    if text is None:
        return None
    try:
        entry = json.loads(text)
    except ValueError:
        return None
    if not isinstance(entry, dict) or entry.get("key") != key or not isinstance(entry.get("value"), list):
        return None
    if not all(type(v) is int for v in entry["value"]):
        return None
    return tuple(entry["value"])


def disk_memo_ints(fn: Callable[..., tuple[int, ...]]) -> Callable[..., tuple[int, ...]]:
    """:func:`disk_memo` for a pure, seeded function returning a tuple of ints (or bools, stored and
    returned as ints): the draws of a failure profile (:mod:`attention_claims.testkit.failure_profiles`),
    such as the numerical ranks of 30 Gaussian attention matrices at N = 512. The key adds the NumPy
    version and the machine (``platform.machine()``) to the function's name, source digest and
    arguments, since floating-point results may differ across LAPACK builds. Same folder, same trust and
    checksum rules, same ``ATTENTION_CLAIMS_REFERENCE_CACHE=0`` switch.

    A result that is not a tuple or list of ints is returned and not stored."""
    import platform

    import numpy

    name = f"{fn.__module__}.{fn.__qualname__}"
    source = inspect.getsourcefile(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        folder = reference_cache_dir()
        key = None if folder is None else _memo_key(name, source, [numpy.__version__, platform.machine()],
                                                        args, kwargs)
        if key is None:
            return fn(*args, **kwargs)
        path = folder / fn.__qualname__ / f"{key}.json"
        hit = _read_ints(path, key)
        if hit is not None:
            return hit
        value = fn(*args, **kwargs)
        if isinstance(value, (tuple, list)) and all(isinstance(v, (int, bool)) for v in value):
            value = tuple(int(v) for v in value)
            write_checked(path, json.dumps({"key": key, "value": list(value)}))
        return value

    wrapper.uncached = fn
    return wrapper
