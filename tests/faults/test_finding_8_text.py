"""Issue 22, finding 8 (``--claims-text``): a 50 MB text took 204 s and 6.4 GB for a 3-layer toy
model, because the whole text was tokenised and then cut to N. Now only a prefix is read and
tokenised (16 N bytes, grown while too few tokens, never more than ``MAX_USER_TEXT_BYTES``); a
text with fewer than N tokens is skipped with the count; empty or binary text is a usage error.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
import tiny_models  # noqa: E402

from attention_claims.models import loading, registry  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LINE = "Call me Ishmael. Some years ago, never mind how long precisely, having little or no money in my purse.\n"


@pytest.fixture(scope="module")
def llama(tmp_path_factory) -> Path:
    return tiny_models.build("llama", tmp_path_factory.mktemp("finding-8") / "tiny-llama")


@pytest.fixture(scope="module")
def big_text(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("finding-8-text") / "big.txt"
    p.write_text(LINE * (20 * 2**20 // len(LINE)), encoding="utf-8")  # 20 MB
    return p


@pytest.fixture(autouse=True)
def _forget_user_models(isolated_user_models):
    """Every test here starts with no user model or text and an empty cache (tests/conftest.py)."""


def test_finding_8_large_text_reads_a_bounded_prefix(llama, big_text, monkeypatch):
    """The tokens of a 20 MB text come from its first few kB, and are the ones the whole text gives."""
    assert big_text.stat().st_size > 20e6
    name = registry.register_text(big_text)
    spec = registry.register_model(llama)
    asked: list[int] = []

    def counting(n: str, limit: int):
        text, complete = registry.read_text_prefix(n, limit)
        asked.append(len(text.encode("utf-8")))
        return text, complete

    monkeypatch.setattr(loading, "read_text_prefix", counting)
    loaded = loading.load_model(spec.key)
    ids = loading.passage_ids(loaded, name, 512)
    assert ids.shape == (1, 512)
    assert sum(asked) <= 64 * 1024, asked  # bytes decoded and tokenised, all reads together
    whole = loading.token_ids(loaded, big_text.read_text(encoding="utf-8")[:100_000], 512)
    assert bool((ids == whole).all())


def test_finding_8_text_is_read_at_most_up_to_the_cap(big_text):
    name = registry.register_text(big_text)
    text, complete = registry.read_text_prefix(name, 10**12)
    assert not complete and len(text.encode("utf-8")) <= registry.MAX_USER_TEXT_BYTES
    assert len(registry.read_text(name).encode("utf-8")) <= registry.MAX_USER_TEXT_BYTES
    small, complete = registry.read_text_prefix(name, 1000)
    assert not complete and len(small.encode("utf-8")) <= 1000 and big_text.read_text()[: len(small)] == small


def test_finding_8_prefix_cut_inside_a_character_is_dropped(tmp_path):
    p = tmp_path / "utf8.txt"
    p.write_text("é" * 5000, encoding="utf-8")  # 2 bytes each
    name = registry.register_text(p)
    text, complete = registry.read_text_prefix(name, 1001)
    assert text == "é" * 500 and not complete


def test_finding_8_large_text_measurement_is_fast(llama, big_text):
    """The whole measurement (float32 and float64, N = 512) of a tiny model on a 20 MB text: a few
    seconds (it was minutes and gigabytes); the bound is generous for a shared 2-core machine."""
    from attention_claims import models

    registry.register_text(big_text)
    spec = registry.register_model(llama)
    t0 = time.perf_counter()
    meas = models.measure(spec.key, 512)
    assert time.perf_counter() - t0 < 60
    assert meas.get("eff_rank_90").shape == (2, 4)


def test_finding_8_short_text_is_skipped_with_the_count(llama, tmp_path):
    from attention_claims.testkit.model_params import measure_or_skip

    p = tmp_path / "short.txt"
    p.write_text("Call me Ishmael. " * 10, encoding="utf-8")
    registry.register_text(p)
    spec = registry.register_model(llama)
    with pytest.raises(pytest.skip.Exception) as skip:
        measure_or_skip(spec.key, 128)
    msg = str(skip.value)
    assert "only 40 tokens, 128 needed" in msg and spec.key in msg and str(p.resolve()) in msg


@pytest.mark.parametrize(("content", "words"), [(b"", "empty"), (b" \n\t\n", "empty"),
                                                (b"abc\x00\x01\x02", "NUL"), (b"\xff\xfe\x00\x00", "UTF-8")])
def test_finding_8_empty_or_binary_text_is_a_clear_error(tmp_path, content, words):
    p = tmp_path / "t.txt"
    p.write_bytes(content)
    with pytest.raises(registry.ModelPathError, match=words) as err:
        registry.register_text(p)
    assert str(p.resolve()) in str(err.value)


@pytest.mark.parametrize("content", [b"", b"\x00\x01binary\xff"])
def test_finding_8_empty_or_binary_text_exits_4(llama, tmp_path, content, run_at_root):
    """``pytest --co checks/test_trained.py --claims-model M --claims-text <empty or binary>``: a usage
    error (exit 4) naming the text, no INTERNALERROR."""
    text = tmp_path / "t.txt"
    text.write_bytes(content)
    res = run_at_root("--co", "-q", "checks/test_trained.py", "--claims-model", str(llama), "--claims-text",
                      str(text), "--claims-report-dir", str(tmp_path / "reports"),
                      env={"HF_HUB_OFFLINE": "1", "ATTENTION_CLAIMS_CACHE": str(tmp_path / "cache")})
    assert res.ret == 4, res.stdout[-2000:] + res.stderr[-2000:]
    assert str(text.resolve()) in res.stderr and "INTERNALERROR" not in res.stdout + res.stderr
