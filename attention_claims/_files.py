"""The one door for files: every file the package writes, every file a user hands it, and ``SHA256SUMS``.

A low layer: it imports only the standard library, so :mod:`attention_claims.models` and
:mod:`attention_claims.framework` (and the tools above them) all use it.

- :func:`read_regular` / :func:`open_regular`: a file is read only when it is a regular file, opened
  with ``O_NONBLOCK`` (a FIFO does not wait for a writer), checked with ``fstat`` (not ``/dev/zero``, a
  directory, a socket), and read up to a size cap (:class:`UnsafeFileError` names the path and the cap).
- :func:`read_text`: a text document (an ini file, a seed's report before it is parsed) read through
  :func:`read_regular` and decoded as UTF-8 (a file that is not UTF-8 is refused, naming it).
- :func:`read_json` / :func:`read_toml` / :func:`toml_text`: JSON and TOML read through
  :func:`read_regular`, nested at most :data:`MAX_DEPTH` levels (:func:`nesting_depth`, measured without
  recursion; a parser's ``RecursionError`` becomes an :class:`UnsafeFileError` naming the file).
- :func:`write_file` (:func:`stage_file` + :func:`place_file`) and :func:`create_file`: the package's only
  ways of writing a file (a test scans every other module for writes). A temporary beside the target,
  opened with ``O_CREAT|O_EXCL|O_NOFOLLOW`` under a fresh random name, written, ``fsync``-ed, renamed over
  the target, the folder ``fsync``-ed; a symbolic link at the target is refused, never followed or replaced.
- :func:`parse_sums` / :func:`read_sums`: the format ``sha256sum`` writes (``<64 hex>  <path>``, a ``*``
  before the path for binary mode), tolerant of a byte-order mark and of CRLF line ends.
- :func:`sums_with`: the text of ``SHA256SUMS`` with one more line, a missing final newline of the
  last line added first (so the new line is never glued onto it).
- :func:`sums_replacing` / :func:`write_sums`: the text of ``SHA256SUMS`` with one document's line
  given a new digest (every other byte kept), written atomically (``attention-claims rehash``).
- :func:`document_inside`: a listed document must be a file inside the sources folder once its
  symbolic links are followed (``sources/host.md -> /etc/hostname`` is refused).
"""

from __future__ import annotations

import os
import re
import secrets
import stat
from pathlib import Path
from typing import BinaryIO

__all__ = ["UnsafeFileError", "SumsError", "read_regular", "open_regular", "parse_sums", "read_sums",
           "sums_with", "sums_replacing", "write_sums", "sums_line_problem", "document_inside", "SUMS_NAME",
           "write_file", "stage_file", "place_file", "create_file", "read_json", "read_toml", "nesting_depth",
           "toml_text", "read_text", "MAX_DEPTH"]

MAX_DEPTH = 64
"""The deepest nesting of arrays and objects (tables) a JSON or TOML file the suite reads may have; a
report, a manifest or a record needs under ten."""

SUMS_NAME = "SHA256SUMS"
"""The checksum list's file name in a sources folder (and in ``models/texts/``)."""

_DIGEST = re.compile(r"[0-9a-f]{64}")


class UnsafeFileError(ValueError):
    """A file the suite was asked to read is not a regular file, or is larger than the cap.

    ``str()`` is ``"<path>: <problem>"``; :attr:`problem` alone is the part after the path (for
    callers whose own message already names the file). :attr:`reason` says which check refused it, for
    callers with their own wording: ``"kind"`` (not a regular file), ``"size"`` (over the cap; :attr:`size`
    is the file's size when ``fstat`` gave it, else None), ``"encoding"`` (not UTF-8), ``"syntax"`` (not
    JSON or TOML), ``"depth"`` (nested too deeply), or ``""`` (another problem)."""

    def __init__(self, path: Path | str, problem: str, *, reason: str = "", size: int | None = None):
        self.path = Path(path)
        self.problem = problem
        self.reason = reason
        self.size = size
        super().__init__(f"{path}: {problem}")


class SumsError(ValueError):
    """``SHA256SUMS`` is malformed (``str()`` names the file and the line) or lists a document that
    leads out of its folder."""

    def __init__(self, path: Path | str, problem: str):
        self.path = Path(path)
        self.problem = problem
        super().__init__(f"{path}: {problem}")


def _kind(mode: int) -> str:
    return ("a directory" if stat.S_ISDIR(mode) else "a character device" if stat.S_ISCHR(mode)
            else "a block device" if stat.S_ISBLK(mode) else "a FIFO" if stat.S_ISFIFO(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "of an unknown kind")


def _open_fd(path: Path | str) -> int:
    """A read-only descriptor of the regular file ``path`` (opened with ``O_NONBLOCK``; its ``fstat`` checked)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UnsafeFileError(path, f"not a regular file ({_kind(mode)})", reason="kind")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: Path | str, cap: int) -> bytes:
    """The bytes of the regular file ``path`` (a symbolic link to one is followed), at most ``cap`` bytes.

    The file is opened without blocking and checked with ``fstat`` before anything is read: a file
    whose size is over ``cap`` is refused then, without reading it; and at most ``cap + 1`` bytes are
    read (a file that grows, or one whose ``fstat`` size is 0 as in ``/proc``, is refused after
    reading ``cap + 1`` bytes, not all of it).

    Raises:
        OSError: it cannot be opened (missing, a dangling symbolic link, no permission).
        UnsafeFileError: (a ``ValueError``) it is not a regular file, or is larger than ``cap`` bytes;
            the message names ``path`` and, for the size, the cap.
    """
    fd = _open_fd(path)
    try:
        stated = os.fstat(fd).st_size
        if stated > cap:
            raise UnsafeFileError(path, f"larger than {cap} bytes (the limit)", reason="size", size=stated)
        chunks, size = [], 0
        while size <= cap:
            chunk = os.read(fd, min(cap + 1 - size, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > cap:
            raise UnsafeFileError(path, f"larger than {cap} bytes (the limit)", reason="size")
        return b"".join(chunks)
    finally:
        os.close(fd)


def nesting_depth(value: object) -> int:
    """How deeply lists and dicts nest in ``value`` (a scalar: 0, ``[]``: 1, ``[[1]]``: 2), measured
    without recursion (an explicit stack), so any depth the parser returned is measured."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _parsed(path: Path | str, text: str, parse, what: str, max_depth: int):
    try:
        value = parse(text)
    except RecursionError:
        raise UnsafeFileError(path, f"nested too deeply to be read as {what} (the limit is {max_depth} levels)",
                              reason="depth") from None
    depth = nesting_depth(value)
    if depth > max_depth:
        raise UnsafeFileError(path, f"nested {depth} levels deep; {what} the suite reads may nest at most "
                              f"{max_depth}", reason="depth")
    return value


def _read_utf8(path: Path | str, cap: int) -> str:
    """The text of the regular file ``path`` (:func:`read_regular`, at most ``cap`` bytes), decoded as UTF-8.

    Raises:
        OSError: it cannot be opened.
        UnsafeFileError: not a regular file, larger than ``cap``, or not UTF-8.
    """
    try:
        return read_regular(path, cap).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnsafeFileError(path, f"not UTF-8: {exc}", reason="encoding") from None


def read_text(path: Path | str, cap: int) -> str:
    """The text of the regular file ``path`` (:func:`read_regular`: opened without blocking, at most ``cap``
    bytes), decoded as UTF-8: the one way the package reads a text file a user or a tool hands it.

    Raises:
        OSError: it cannot be opened (missing, no permission).
        UnsafeFileError: not a regular file (a FIFO, a folder, a device), larger than ``cap``, or not
            UTF-8; the message names ``path``.
    """
    return _read_utf8(path, cap)


def read_json(path: Path | str, cap: int, *, max_depth: int = MAX_DEPTH):
    """The JSON value in the regular file ``path`` (:func:`read_regular`, at most ``cap`` bytes, UTF-8),
    nested at most ``max_depth`` levels (a deeper one, even one too deep for the parser's recursion, is
    refused with a message naming the file, not a ``RecursionError``).

    Raises:
        OSError: it cannot be opened.
        UnsafeFileError: not a regular file, larger than ``cap``, not UTF-8, not JSON, or nested too deeply.
    """
    import json

    text = _read_utf8(path, cap)
    try:
        return _parsed(path, text, json.loads, "JSON", max_depth)
    except json.JSONDecodeError as exc:
        raise UnsafeFileError(path, f"not JSON ({exc})", reason="syntax") from None


def read_toml(path: Path | str, cap: int, *, max_depth: int = MAX_DEPTH) -> dict:
    """The TOML document in the regular file ``path``, as :func:`read_json` reads JSON (``tomllib``).

    Raises:
        OSError: it cannot be opened.
        UnsafeFileError: not a regular file, larger than ``cap``, not UTF-8, not TOML, or nested too deeply.
    """
    return toml_text(path, _read_utf8(path, cap), max_depth=max_depth)


def toml_text(path: Path | str, text: str, *, max_depth: int = MAX_DEPTH) -> dict:
    """``text`` (read from ``path``) parsed as TOML, nested at most ``max_depth`` levels.

    Raises:
        UnsafeFileError: not TOML (the parser's message), or nested too deeply (naming ``path``).
    """
    import tomllib

    try:
        return _parsed(path, text, tomllib.loads, "TOML", max_depth)
    except tomllib.TOMLDecodeError as exc:
        raise UnsafeFileError(path, f"malformed TOML: {exc}", reason="syntax") from None


def open_regular(path: Path | str) -> BinaryIO:
    """``path`` opened for binary reading, when it is a regular file (opened with ``O_NONBLOCK``, so a
    FIFO never blocks; checked with ``fstat``); for files read in parts, such as a weights file's header.

    Raises:
        OSError: it cannot be opened.
        UnsafeFileError: it is not a regular file (the message names it and its kind).
    """
    return os.fdopen(_open_fd(path), "rb")


def parse_sums(text: str, where: Path | str) -> dict[str, str]:
    """``{relative path: SHA-256}`` of the text of a ``SHA256SUMS`` file (the format of ``sha256sum``:
    ``<64 lower-case hex>  <path>``, or `` *<path>`` for binary mode; blank lines ignored, a leading
    byte-order mark and CRLF line ends tolerated). A path must be relative, without ``..``, a
    backslash or a control character.

    Raises:
        SumsError: a line is not of that form (naming ``where`` and the line number).
    """
    listed: dict[str, str] = {}
    for k, line in enumerate(text.lstrip("\ufeff").splitlines(), 1):
        if not line.strip():
            continue
        problem = sums_line_problem(line)
        if problem is not None:
            raise SumsError(where, f"line {k} is not '<SHA-256>  <relative path>': {line!r}")
        digest, _, name = line.partition(" ")
        listed[name.strip().lstrip("*")] = digest
    return listed


def sums_line_problem(line: str) -> str | None:
    """Why ``line`` is not a ``SHA256SUMS`` line, or ``None`` when it is one."""
    digest, _, name = line.partition(" ")
    name = name.strip().lstrip("*")
    parts = name.split("/")
    if not _DIGEST.fullmatch(digest):
        return "not a SHA-256 (64 lower-case hex digits)"
    if (not name or name.startswith(("/", "~")) or "\\" in name or any(ord(c) < 32 or c == "\x7f" for c in name)
            or any(p in ("", ".", "..") for p in parts)):
        return "not a relative path inside the folder"
    return None


def read_sums(folder: Path | str, cap: int) -> dict[str, str]:
    """The documents ``folder/SHA256SUMS`` lists (:func:`parse_sums`); no such file lists nothing.
    The documents themselves are not read.

    Raises:
        UnsafeFileError: the file is not a regular file or is larger than ``cap`` bytes.
        OSError: it exists but cannot be read.
        SumsError: it is not UTF-8, or a line is malformed.
    """
    sums = Path(folder) / SUMS_NAME
    if not os.path.lexists(sums):
        return {}
    raw = read_regular(sums, cap)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SumsError(sums, f"not UTF-8 ({exc})") from None
    return parse_sums(text, sums)


def sums_with(existing: bytes, name: str, digest: str) -> bytes:
    """The bytes of a ``SHA256SUMS`` whose text was ``existing``, with the line ``<digest>  <name>``
    appended: a last line without its newline gets one first, and the new line uses the file's own line
    end (CRLF when its first line has one).

    Raises:
        SumsError: ``<digest>  <name>`` is not a valid line (:func:`sums_line_problem`).
    """
    line = f"{digest}  {name}"
    problem = sums_line_problem(line)
    if problem is not None:
        raise SumsError(SUMS_NAME, f"cannot list {name!r}: {problem}")
    first = existing.split(b"\n", 1)
    eol = b"\r\n" if len(first) == 2 and first[0].endswith(b"\r") else b"\n"
    head = existing
    if head and not head.endswith(b"\n"):
        head += eol
    return head + line.encode("utf-8") + eol


def sums_replacing(existing: bytes, name: str, digest: str, where: Path | str = SUMS_NAME) -> bytes:
    """The bytes of a ``SHA256SUMS`` whose text was ``existing`` with the digest of the one line that lists
    ``name`` replaced by ``digest``; every other byte (other lines, the binary-mode ``*``, line ends, a
    byte-order mark) kept.

    Raises:
        SumsError: ``existing`` is not UTF-8 or a line is malformed (:func:`parse_sums`), ``name`` is not
            listed, or ``digest`` is not a SHA-256 (naming ``where``).
    """
    try:
        text = existing.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SumsError(where, f"not UTF-8 ({exc})") from None
    listed = parse_sums(text, where)
    if name not in listed:
        raise SumsError(where, f"does not list {name!r} (attention-claims new adds a document's line)")
    if not _DIGEST.fullmatch(digest):
        raise SumsError(where, f"cannot list {name!r} with {digest!r}: not a SHA-256")
    out = []
    for line in text.splitlines(keepends=True):
        body = line.lstrip("\ufeff").rstrip("\r\n")
        if body.strip() and sums_line_problem(body) is None and body.partition(" ")[2].strip().lstrip("*") == name:
            start = line.index(body)
            line = line[:start] + digest + line[start + 64:]
        out.append(line)
    return "".join(out).encode("utf-8")


def write_sums(folder: Path | str, data: bytes) -> None:
    """Replace ``folder/SHA256SUMS`` by ``data`` atomically (:func:`write_file`): a failed write leaves
    the old file; no backup file is left; a symbolic link at ``SHA256SUMS`` is refused, not replaced.

    Raises:
        UnsafeFileError: ``SHA256SUMS`` is a symbolic link or not a regular file.
        OSError: it cannot be written (the temporary file is removed).
    """
    write_file(Path(folder) / SUMS_NAME, data)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _target_problem(path: Path) -> str | None:
    """Why ``path`` may not be replaced (a symbolic link, a folder, a FIFO...), or None."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(mode):
        return "a symbolic link is there; not written through it (replace it by a file first)"
    if not stat.S_ISREG(mode):
        return f"not a regular file ({_kind(mode)}); not replaced"
    return None


def stage_file(path: Path | str, data: bytes, *, replacing: bool = True) -> Path:
    """Write ``data`` to a fresh temporary beside ``path`` and return the temporary (for
    :func:`place_file`). The temporary ``.<name>.<pid>.<random>.tmp`` is opened with
    ``O_CREAT|O_EXCL|O_NOFOLLOW`` (a file or a symbolic link planted at that name is never opened; another
    name is drawn), written and ``fsync``-ed. Its mode is that of a file already at ``path``, else 0666
    less the umask. ``replacing=False``: the temporary is for a new file placed by a hard link
    (``new``), which itself fails on anything at ``path``; ``path`` is not checked here.

    Raises:
        UnsafeFileError: ``path`` is a symbolic link or not a regular file (``replacing`` only).
        OSError: it cannot be written (the temporary is removed).
    """
    path = Path(path)
    problem = _target_problem(path) if replacing else None
    if problem is not None:
        raise UnsafeFileError(path, problem)
    for _ in range(100):
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666)
        except FileExistsError:
            continue
        break
    else:
        raise FileExistsError(f"{path}: no free temporary name beside it")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if replacing and os.path.lexists(path):
                os.fchmod(f.fileno(), stat.S_IMODE(os.lstat(path).st_mode))
            os.fsync(f.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def place_file(tmp: Path | str, path: Path | str) -> None:
    """Move the temporary ``tmp`` (:func:`stage_file`) over ``path`` (``os.replace``) and ``fsync`` the
    folder. ``path`` is checked again just before: a symbolic link that appeared there is refused.

    Raises:
        UnsafeFileError: ``path`` is a symbolic link or not a regular file (``tmp`` is removed).
        OSError: the rename failed (``tmp`` is removed).
    """
    path = Path(path)
    try:
        problem = _target_problem(path)
        if problem is not None:
            raise UnsafeFileError(path, problem)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems do not sync folders
    finally:
        os.close(fd)


def create_file(path: Path | str, data: bytes) -> None:
    """Create ``path`` holding ``data``, failing when anything (a dangling symbolic link included) is
    there: opened with ``O_CREAT|O_EXCL|O_NOFOLLOW``, written, ``fsync``-ed (for a file system without
    hard links, where a staged temporary cannot be linked to its name).

    Raises:
        FileExistsError: something is at ``path``.
        OSError: it cannot be written (a partly written file is removed).
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        Path(path).unlink(missing_ok=True)
        raise
    _fsync_dir(Path(path).parent)


def write_file(path: Path | str, data: str | bytes) -> None:
    """The package's one way of writing a file: ``data`` (a string as UTF-8) to ``path`` atomically.

    A temporary beside ``path`` opened with ``O_CREAT|O_EXCL|O_NOFOLLOW`` is written and ``fsync``-ed
    (:func:`stage_file`), renamed over ``path`` and the folder ``fsync``-ed (:func:`place_file`): a
    reader never sees half a file, a failed write leaves the old file, and no symbolic link, at the
    temporary name or at ``path``, is ever followed (one at ``path`` is refused, not replaced). The
    folder must exist.

    Raises:
        UnsafeFileError: ``path`` is a symbolic link or not a regular file (the message names it).
        OSError: it cannot be written (no temporary is left).
    """
    place_file(stage_file(path, data.encode("utf-8") if isinstance(data, str) else data), path)


def document_inside(folder: Path | str, name: str) -> Path:
    """``folder/name`` once its symbolic links are resolved, when that is inside ``folder`` (itself
    resolved): a document that leads out of the sources folder (``host.md -> /etc/hostname``) is refused.

    Raises:
        SumsError: the resolved path is outside the folder (the message names both).
    """
    base = Path(folder).resolve()
    target = (Path(folder) / name).resolve()
    try:
        target.relative_to(base)
    except ValueError:
        raise SumsError(Path(folder) / name, f"leads out of the sources folder {base} (to {target}); "
                        "copy the document into the folder instead of linking to it") from None
    return target
