"""The project lock and the signal guard of the tools that change a project's files (``new``, ``rehash``).

- :func:`project_lock`: a ``filelock`` lock on the project (a lock file named by the SHA-256 of the
  project's resolved path, in the user's cache folder, so nothing is added to the project), so two commands
  at once never read the same ``SHA256SUMS`` or allocate the same record number (issue 43, finding 7).
- :func:`signals_raise`: while it is held, SIGTERM, SIGINT and SIGHUP raise :class:`Interrupted` in the
  main thread, so the callers' ``except BaseException`` cleanup runs for a kill as for an error
  (finding 8); the earlier handlers are restored afterwards.
"""

from __future__ import annotations

import contextlib
import hashlib
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import filelock

LOCK_NAME = ".attention-claims.lock"
"""The lock file's name in the project folder, used only when the cache folder cannot be created."""
LOCK_TIMEOUT = 60.0
"""Seconds a command waits for another one holding the project's lock."""


class Interrupted(BaseException):
    """A signal (SIGTERM, SIGINT, SIGHUP) arrived while files were being placed; :attr:`signum` names it."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(f"interrupted by {signal.Signals(signum).name}; nothing was left written")


class LockTimeout(RuntimeError):
    """Another command held the project's lock for longer than :data:`LOCK_TIMEOUT` seconds."""


def lock_path(root: Path) -> Path:
    """The lock file of the project ``root``: ``<cache root>/project-locks/<SHA-256 of the resolved
    path>.lock`` (:func:`attention_claims._cache.cache_root`; the same for every command on this project
    and user), or ``root/.attention-claims.lock`` where that folder cannot be created."""
    from .._cache import cache_root

    folder = cache_root() / "project-locks"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return Path(root) / LOCK_NAME
    digest = hashlib.sha256(str(Path(root).resolve()).encode("utf-8", "surrogatepass")).hexdigest()
    return folder / f"{digest}.lock"


@contextlib.contextmanager
def project_lock(root: Path, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """Hold the project's lock (:func:`lock_path`, :mod:`filelock`) for the block.

    Raises:
        LockTimeout: another process holds it for longer than ``timeout`` seconds (the message names the file).
    """
    path = lock_path(root)
    lock = filelock.FileLock(str(path))
    try:
        lock.acquire(timeout=timeout)
    except filelock.Timeout:
        raise LockTimeout(f"{path}: held by another attention-claims command for over {timeout:g} s; "
                          "try again when it has finished") from None
    try:
        yield
    finally:
        lock.release()


_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name))


_state = {"deferring": 0, "pending": None}


@contextlib.contextmanager
def signals_raise() -> Iterator[None]:
    """In the block, SIGTERM, SIGINT and SIGHUP raise :class:`Interrupted` (in the main thread; elsewhere
    signals cannot be handled and nothing changes), or, inside :func:`deferred`, when it ends; the
    earlier handlers are restored on leaving."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _raise(signum, _frame):
        if _state["deferring"]:
            _state["pending"] = _state["pending"] or signum
            return
        raise Interrupted(signum)

    earlier = {s: signal.signal(s, _raise) for s in _SIGNALS}
    try:
        yield
    finally:
        for s, handler in earlier.items():
            signal.signal(s, handler)
        _state["pending"] = None


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """In the block, a signal that :func:`signals_raise` turns into :class:`Interrupted` is held and raised
    when the block ends: a step and the note of its having been done (a file placed, and listed for the
    rollback) are never split by a signal. Outside :func:`signals_raise`, nothing changes."""
    _state["deferring"] += 1
    try:
        yield
    finally:
        _state["deferring"] -= 1
    if not _state["deferring"] and _state["pending"] is not None:
        signum, _state["pending"] = _state["pending"], None
        raise Interrupted(signum)
