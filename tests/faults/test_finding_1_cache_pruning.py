"""Issue 22, finding 1: the render cache's pruning removed folders it did not create (foreign folders
under ``<cache root>/render/``; with ``render`` a symbolic link, the folders it pointed into)."""

from __future__ import annotations

import os
import warnings

import pytest

from attention_claims._cache import MARKER, UntrustedCacheWarning, write_checked


@pytest.fixture
def render(tmp_path, monkeypatch):
    """A fresh cache root, a fresh process's pruning and folder checks, and a tiny entry writer."""
    from attention_claims._cache import _trusted
    from attention_claims.framework.render import diskcache

    monkeypatch.setenv("ATTENTION_CLAIMS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("ATTENTION_CLAIMS_RENDER_CACHE", raising=False)
    monkeypatch.setattr(diskcache, "_PRUNED", set())
    _trusted.cache_clear()
    diskcache._in_use.cache_clear()
    yield diskcache
    _trusted.cache_clear()
    diskcache._in_use.cache_clear()


def _write_entries(diskcache, n=1):
    for i in range(n):
        assert diskcache.cached("card", f"{i:064x}", lambda: "<p>card</p>") == "<p>card</p>"


def test_finding_1_foreign_folders_in_render_survive_pruning(tmp_path, render):
    root = tmp_path / "cache" / "render"
    for i, name in enumerate("abcdef"):
        (root / name).mkdir(parents=True)
        (root / name / "keep.txt").write_text("mine", encoding="utf-8")
        os.utime(root / name, (1000 + i, 1000 + i))
    _write_entries(render)
    current = render.render_cache_dir()
    assert (current / MARKER).is_file()
    assert {p.name for p in root.iterdir()} == set("abcdef") | {current.name}
    assert all((root / name / "keep.txt").read_text(encoding="utf-8") == "mine" for name in "abcdef")


def test_finding_1_only_marked_versions_and_own_entries_are_pruned(tmp_path, render, monkeypatch):
    from attention_claims._cache import mark_dir

    root = tmp_path / "cache" / "render"
    root.mkdir(parents=True, mode=0o700)
    old = [root / f"{i:016x}" for i in range(render.KEEP_DIGESTS + 2)]
    for i, folder in enumerate(old):
        assert mark_dir(folder)
        os.utime(folder, (1000 + i, 1000 + i))
    unmarked = root / ("f" * 16)  # a name of the suite's pattern, but no marker: not the suite's
    unmarked.mkdir()
    os.utime(unmarked, (1, 1))
    _write_entries(render)
    kept = {p.name for p in root.iterdir()}
    newest = {p.name for p in old[-(render.KEEP_DIGESTS - 1):]}
    assert kept == newest | {unmarked.name, render.render_cache_dir().name}

    # within a code version's folder, only its own entries are cut back
    monkeypatch.setattr(render, "KEEP_ENTRIES", 2)
    monkeypatch.setattr(render, "_PRUNED", set())
    folder = render.render_cache_dir()
    (folder / "notes.txt").write_text("mine", encoding="utf-8")
    (folder / "mine").mkdir()
    os.utime(folder / "notes.txt", (1, 1))
    for i in range(10, 15):  # five entries of the suite's own, older than what is written next
        assert write_checked(folder / f"card-{i:064x}.html", "<p>old</p>")
        os.utime(folder / f"card-{i:064x}.html", (100 + i, 100 + i))
    _write_entries(render, 2)  # a write prunes: 6 own entries > 2 * KEEP_ENTRIES
    names = {p.name for p in folder.iterdir()}
    assert {"notes.txt", "mine", MARKER} <= names
    assert len([n for n in names if n.startswith("card-")]) == 2


def test_finding_1_a_render_symlink_to_an_outside_folder_deletes_nothing(tmp_path, render):
    home = tmp_path / "home"
    for name in ("Documents", "Photos", "projects", "a", "b", "c", "d", "e", "f"):
        (home / name).mkdir(parents=True)
        (home / name / "file").write_text("precious", encoding="utf-8")
        os.utime(home / name, (1, 1))
    (home / ("0" * 16)).mkdir()
    (home / ("0" * 16) / MARKER).write_text("", encoding="utf-8")  # even a planted marker outside
    os.utime(home / ("0" * 16), (1, 1))
    before = sorted(str(p.relative_to(home)) for p in home.rglob("*"))
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "render").symlink_to(home, target_is_directory=True)
    with pytest.warns(UntrustedCacheWarning, match="symbolic link"):
        assert render.render_cache_dir() is None
    _write_entries(render, 3)  # rendered without the disk cache
    assert sorted(str(p.relative_to(home)) for p in home.rglob("*")) == before


def test_finding_1_a_symlinked_code_version_or_entry_is_never_removed(tmp_path, render):
    from attention_claims._cache import prune_oldest

    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / MARKER).write_text("", encoding="utf-8")
    target = outside / "entry.html"
    target.write_text("precious", encoding="utf-8")
    root = tmp_path / "cache" / "render"
    root.mkdir(parents=True, mode=0o700)
    (root / ("1" * 16)).symlink_to(outside, target_is_directory=True)
    (root / ("card-" + "2" * 64 + ".html")).symlink_to(target)
    links = [root / ("1" * 16), root / ("card-" + "2" * 64 + ".html")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _write_entries(render)
    assert prune_oldest(links, 0) == 0
    assert (outside / "sub").is_dir() and target.read_text(encoding="utf-8") == "precious"
    assert all(p.is_symlink() for p in links)
