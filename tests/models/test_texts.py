"""The built-in passages (attention_claims/models/texts): their bytes are checked against SHA256SUMS,
and the joined passage the built-in models read is the three files, verbatim, in order."""

from __future__ import annotations

import re
import shutil

import pytest

from attention_claims.models import registry

TEXTS = registry.TEXTS_DIR


def test_the_checksums_list_every_passage_and_the_readme_gives_the_same_digests():
    sums = registry._text_sums()
    assert sorted(sums) == sorted(f"{t}.txt" for t in registry.TEXTS)
    readme = (TEXTS / "README.md").read_text(encoding="utf-8")
    assert dict(re.findall(r"\| `([\w-]+\.txt)` \| `([0-9a-f]{64})` \|", readme)) == sums
    for name in registry.TEXTS:
        registry.read_text(name)  # raises when the bytes are not the listed ones


def test_the_joined_passage_is_the_three_files_verbatim_with_moby_dick_first():
    joined = registry.read_text(registry.JOINED_TEXT)
    parts = [registry.read_text(t) for t in registry.TEXTS]
    assert joined == "\n\n".join(parts) and registry.PRIMARY_TEXT == registry.JOINED_TEXT
    assert joined.startswith("Call me Ishmael")


def test_an_altered_passage_is_refused_naming_the_file(tmp_path, monkeypatch):
    copy = tmp_path / "texts"
    shutil.copytree(TEXTS, copy)
    f = copy / "pride-and-prejudice-ch1.txt"
    f.write_text(f.read_text(encoding="utf-8").replace("truth", "trvth", 1), encoding="utf-8")
    monkeypatch.setattr(registry, "TEXTS_DIR", copy)
    registry._text_sums.cache_clear()
    try:
        registry.read_text("moby-dick-ch1")  # untouched: fine
        with pytest.raises(registry.TextProvenanceError, match="pride-and-prejudice-ch1.txt.*SHA256SUMS"):
            registry.read_text(registry.JOINED_TEXT)
    finally:
        registry._text_sums.cache_clear()


def test_an_unknown_passage_is_a_clear_error():
    with pytest.raises(FileNotFoundError, match="no built-in passage 'nope'"):
        registry.read_text("nope")
