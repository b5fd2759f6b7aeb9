"""The caches' home (attention_claims._cache): the disk cache of high-precision references."""

from __future__ import annotations

from fractions import Fraction

import mpmath

from attention_claims._cache import disk_memo, disk_memo_ints
from attention_claims.maths import s_reference

CALLS = []


@disk_memo
def _root(x, digits=30):
    CALLS.append((x, digits))
    with mpmath.workdps(digits):
        return +mpmath.sqrt(mpmath.mpf(x) if not isinstance(x, Fraction) else mpmath.mpf(x.numerator) / x.denominator)


def test_a_hit_returns_the_same_bits_and_does_not_recompute(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_CLAIMS_CACHE", str(tmp_path))
    CALLS.clear()
    first = _root(2.0)
    again = _root(2.0)
    assert again._mpf_ == first._mpf_ and len(CALLS) == 1
    assert len(list((tmp_path / "references").rglob("*.json"))) == 1


def test_the_key_is_exact_in_every_argument(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_CLAIMS_CACHE", str(tmp_path))
    CALLS.clear()
    _root(2.0)
    _root(2.0 + 2**-51)          # the next-but-one float: a different key
    _root(2.0, digits=31)        # keyword arguments are part of the key
    _root(Fraction(2, 1))        # a Fraction is not the float 2.0
    assert len(CALLS) == 4


def test_unkeyable_arguments_and_the_off_switch_bypass_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_CLAIMS_CACHE", str(tmp_path))
    CALLS.clear()
    _root([2.0][0])
    _root.__wrapped__(2.0)  # the undecorated function
    monkeypatch.setenv("ATTENTION_CLAIMS_REFERENCE_CACHE", "0")
    _root(2.0)
    assert len(CALLS) == 3


def test_s_reference_is_cached_and_identical_to_a_fresh_quadrature(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_CLAIMS_CACHE", str(tmp_path))
    with mpmath.workdps(45):
        cached = s_reference("identity", 0.7, 1.3)
        hit = s_reference("identity", 0.7, 1.3)
        fresh = s_reference.uncached("identity", 0.7, 1.3)
    assert hit._mpf_ == cached._mpf_ == fresh._mpf_
    assert list((tmp_path / "references" / "s_reference").glob("*.json"))


def test_checked_entries_are_verified_and_unwritable_ones_ignored(tmp_path):
    """A text entry carries its SHA-256: a missing, corrupt or non-UTF-8 entry reads as None, and a
    path that cannot be written returns False instead of raising."""
    from attention_claims._cache import read_checked, write_checked

    path = tmp_path / "sub" / "entry.html"
    assert read_checked(path) is None
    assert write_checked(path, "<p>π\nline two</p>") and read_checked(path) == "<p>π\nline two</p>"
    path.write_text(path.read_text(encoding="utf-8").replace("two", "2"), encoding="utf-8")
    assert read_checked(path) is None
    path.write_bytes(b"\xff\xfe")
    assert read_checked(path) is None
    assert write_checked(path, b"\x00\n\r\n\xff") and read_checked(path, binary=True) == b"\x00\n\r\n\xff"
    assert read_checked(path) is None  # not UTF-8 text
    assert write_checked(path, "a\r\nb") and read_checked(path) == "a\r\nb"  # bytes as written, no newline translation
    blocked = tmp_path / "a-file"
    blocked.write_text("x", encoding="utf-8")
    assert write_checked(blocked / "entry.html", "text") is False


def test_write_atomic_takes_bytes_and_files_digest_follows_every_file(tmp_path):
    from attention_claims._cache import files_digest, write_atomic

    write_atomic(tmp_path / "b.bin", b"\x00\x01")
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01" and not list(tmp_path.glob(".*.tmp"))
    (tmp_path / "a.txt").write_text("a", encoding="utf-8")
    digest = files_digest([tmp_path / "b.bin", tmp_path / "a.txt"])
    assert digest == files_digest([tmp_path / "a.txt", tmp_path / "b.bin"])  # order of the arguments is irrelevant
    (tmp_path / "a.txt").write_text("b", encoding="utf-8")
    assert files_digest([tmp_path / "a.txt", tmp_path / "b.bin"]) != digest


def test_prune_oldest_keeps_the_newest(tmp_path):
    """The newest ``keep`` of the files and marked folders stay; a folder without the marker (not the
    suite's) and a symbolic link are never removed, whatever their age."""
    import os

    from attention_claims._cache import mark_dir, prune_oldest

    paths = []
    for i in range(5):
        p = tmp_path / (f"f{i}" if i % 2 else f"d{i}")
        if i % 2:
            p.write_text("x", encoding="utf-8")
        else:
            assert mark_dir(p) and not mark_dir(p)  # created once, and only then marked
            (p / "inner").write_text("x", encoding="utf-8")
        os.utime(p, (100 + i, 100 + i))
        paths.append(p)
    (tmp_path / "foreign").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "d0")
    for p in ("foreign", "link"):
        os.utime(tmp_path / p, (1, 1), follow_symlinks=False)
    extra = [tmp_path / "foreign", tmp_path / "link", tmp_path / "missing"]
    assert prune_oldest(paths + extra, 2) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d4", "f3", "foreign", "link"]


INT_CALLS = []


@disk_memo_ints
def _draws(n, seed=0):
    INT_CALLS.append((n, seed))
    return tuple(bool((seed + i) % 3 == 0) for i in range(n))


def test_integer_draws_are_kept_and_a_damaged_entry_is_recomputed(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_CLAIMS_CACHE", str(tmp_path))
    INT_CALLS.clear()
    first = _draws(5)
    assert first == (1, 0, 0, 1, 0) and _draws(5) == first and len(INT_CALLS) == 1
    _draws(5, seed=1)
    assert len(INT_CALLS) == 2
    (entry,) = [p for p in (tmp_path / "references").rglob("*.json") if p.read_text().count("[1, 0, 0, 1, 0]")]
    entry.write_text(entry.read_text().replace("[1, 0, 0, 1, 0]", "[1, 1, 1, 1, 1]"))  # checksum now fails
    assert _draws(5) == first and len(INT_CALLS) == 3
