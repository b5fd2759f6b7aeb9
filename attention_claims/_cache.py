"""The caches' one home: the cache root, atomic writes, and a disk cache for expensive high-precision
references.

:func:`cache_root` is ``$ATTENTION_CLAIMS_CACHE`` or ``~/.cache/attention-claims``; under it live the
converted decoder and the trained models' measurements (:mod:`attention_claims.models`), the drawn plots
(``plots/``, :func:`attention_claims.framework.render.plots.render_plot`), the rendered report parts
(``render/``, :mod:`attention_claims.framework.render.diskcache`) and the references of
:func:`disk_memo` (``references/``). This module imports neither torch nor matplotlib, so every layer
can use it. :func:`write_atomic` is how every cache entry and report file is written.

A certified 40-digit Gaussian quadrature (:func:`attention_claims.maths.sparsity.s_reference`, arb
balls) takes 2–20 ms (the mpmath tanh-sinh quadrature it replaced took 0.1–0.5 s), and the
derandomized ``ci`` profile draws the same examples on every run, so most of a re-run's quadratures
were already computed by the last one. :func:`disk_memo` keeps each result as a small JSON
file under ``<cache root>/references/<name>/``.

The key is exact: the function's qualified name, the SHA-256 of the source file that defines it (an
edit of the reference's code computes everything again), the mpmath version, and every argument
serialised without rounding (a float by ``float.hex``, an mpf by its binary ``(sign, mantissa,
exponent, bitcount)``, a Fraction as ``p/q``). The value, an mpf, is stored the same way and rebuilt
bit for bit (``mpmath.mp.make_mpf``), so a hit returns exactly what the computation returned
(``tests/test_cache.py``). Arguments of other types bypass the cache. Set
``ATTENTION_CLAIMS_REFERENCE_CACHE=0`` to turn it off; an unwritable cache only costs the speed-up.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import os
import shutil
from collections.abc import Callable, Iterable
from fractions import Fraction
from pathlib import Path

import mpmath

__all__ = ["cache_root", "write_atomic", "disk_memo", "reference_cache_dir", "files_digest", "read_checked",
           "write_checked", "prune_oldest"]


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
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        if isinstance(text, bytes):
            with open(tmp, "wb") as f:
                f.write(text)
        else:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


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
    try:
        digest, _, data = path.read_bytes().partition(b"\n")
    except OSError:
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
    """Remove all but the ``keep`` most recently modified of ``paths`` (files, or folders with what they
    hold), so a cache does not grow without bound; an entry that vanishes or cannot be removed meanwhile
    (another process pruning too) is skipped. Returns how many were removed."""
    dated = []
    for p in paths:
        try:
            dated.append((p.stat().st_mtime, p))
        except OSError:
            pass
    dated.sort(reverse=True)
    removed = 0
    for _t, p in dated[keep:]:
        try:
            if p.is_dir():
                shutil.rmtree(p)
            else:
                p.unlink()
            removed += 1
        except OSError:
            pass
    return removed


def reference_cache_dir() -> Path | None:
    """``<cache root>/references``, or None when ``ATTENTION_CLAIMS_REFERENCE_CACHE=0``."""
    if os.environ.get("ATTENTION_CLAIMS_REFERENCE_CACHE", "1") == "0":
        return None
    return cache_root() / "references"


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
        try:
            blob = json.dumps([name, _source_digest(source), mpmath.__version__, mpmath.mp.prec,
                               [_exact(a) for a in args], {k: _exact(v) for k, v in sorted(kwargs.items())}])
        except _Unkeyable:
            return fn(*args, **kwargs)
        key = hashlib.sha256(blob.encode()).hexdigest()
        path = folder / fn.__qualname__ / f"{key}.json"
        try:
            sign, man, exp, bc = json.loads(path.read_text(encoding="utf-8"))
            return mpmath.mp.make_mpf((sign, int(man, 16), exp, bc))
        except (OSError, ValueError, TypeError):
            pass
        value = fn(*args, **kwargs)
        if isinstance(value, mpmath.mpf):
            sign, man, exp, bc = value._mpf_
            try:
                write_atomic(path, json.dumps([sign, hex(man), exp, bc]))
            except OSError:
                pass
        return value

    wrapper.uncached = fn
    return wrapper
