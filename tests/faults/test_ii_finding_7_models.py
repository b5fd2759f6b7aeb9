"""Issue 33, finding 7 (models): a model is checked before it costs anything.

A ``config.json`` saying ``num_hidden_layers = 10**9`` (or a hidden size or heads its weights do not
have) is refused at configure time against the tensor shapes in its weights' headers, naming the file
and the field; a measurement whose memory estimate exceeds the machine's free memory is refused, naming
the model and what it needs; a FIFO as ``model.safetensors``, ``config.json`` or ``--claims-text`` is
refused without blocking; a 200 MB ``config.json`` is refused after reading its cap. Each reproduction in
its own test; the run itself stops with exit status 4 (one end-to-end test, in this process).
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
from pathlib import Path

import pytest
from budget import cpu_budget

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
import tiny_models  # noqa: E402

from attention_claims.models import registry  # noqa: E402


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("ii-finding-7")
    return {f: tiny_models.build(f, base / f"tiny-{f}") for f in ("llama", "bert", "gpt2")}


@pytest.fixture(autouse=True)
def _forget_user_models(isolated_user_models):
    """Every test here starts with no user model or text and an empty cache (tests/conftest.py)."""


_copy = tiny_models.copy_with_config


def _refused(path: Path, *words: str, within: float = 20.0) -> str:
    """``register_model(path)`` raises a ModelPathError naming ``path`` and ``words`` within ``within`` seconds
    (in a thread, so that a hang fails the test instead of stopping the suite); returns the message."""
    result: dict = {}

    def run():
        try:
            registry.register_model(path)
            result["ok"] = True
        except registry.ModelPathError as exc:
            result["error"] = str(exc)

    # ``within`` bounds the CPU seconds (tests/budget.py); the hang guard allows 60 s of wall-clock time at
    # least, as a loaded shared machine can stretch milliseconds of work into seconds
    hang = max(within, 60.0)
    with cpu_budget(within, what=f"register_model({path})"):
        t = threading.Thread(target=run, daemon=True)
        t.start()
        t.join(hang)
    assert not t.is_alive(), f"register_model({path}) still running after {hang} s"
    assert "error" in result, f"{path} was accepted"
    msg = result["error"]
    assert str(path) in msg and all(w in msg for w in words), msg
    assert registry.USER_MODELS == {}
    return msg


@pytest.mark.parametrize("family, key", [("llama", "num_hidden_layers"), ("bert", "num_hidden_layers"),
                                         ("gpt2", "n_layer")])
def test_ii_finding_7_a_billion_layers_refused_against_the_weights(good, tmp_path, family, key):
    d = _copy(good[family], tmp_path / "m", **{key: 10**9})
    _refused(d.resolve(), "config.json", f"{key} = 1000000000", "hold 2 layers", "model.safetensors", within=10)


def test_ii_finding_7_fewer_layers_than_the_weights_refused(good, tmp_path):
    d = _copy(good["llama"], tmp_path / "m", num_hidden_layers=1)
    _refused(d.resolve(), "num_hidden_layers = 1", "hold 2 layers")


def test_ii_finding_7_hidden_size_not_that_of_the_weights_refused(good, tmp_path):
    d = _copy(good["bert"], tmp_path / "m", hidden_size=64, intermediate_size=128)
    _refused(d.resolve(), "config.json", "hidden_size = 64", "width 32")


def test_ii_finding_7_heads_not_those_of_the_weights_refused(good, tmp_path):
    d = _copy(good["llama"], tmp_path / "m", num_key_value_heads=4)
    _refused(d.resolve(), "num_key_value_heads = 4", "k_proj")
    shutil.rmtree(d)
    d = _copy(good["llama"], tmp_path / "m", head_dim=16)
    _refused(d.resolve(), "num_attention_heads = 4", "q_proj", "64 rows")


def test_ii_finding_7_good_models_of_every_family_still_register(good):
    for family in ("llama", "bert", "gpt2"):
        spec = registry.register_model(good[family])
        assert (spec.layers, spec.heads, spec.hidden) == (2, 4, 32)


def test_ii_finding_7_measurement_larger_than_free_memory_refused(good, monkeypatch):
    monkeypatch.setattr(registry, "available_memory", lambda: 1 << 20)
    msg = _refused(good["llama"].resolve(), "N = 512", "GiB", "num_attention_heads = 4", "free")
    assert "0.0 GiB free" in msg


def test_ii_finding_7_memory_estimate_is_the_measurement_bound():
    """12 bytes a parameter (float32 and float64 copies) and H N^2 (8 + 8 + 8 + 2 * 8) bytes for one layer."""
    assert registry.measurement_peak_bytes(1000, 4, 512) == 12 * 1000 + 4 * 512**2 * 40
    # SmolLM2-135M at N = 2048 (135M parameters, 9 heads): 2.9 GiB; the benchmarks measured a 3.80 GiB peak
    # (the interpreter, torch and the tokenizer besides), so the refusal errs on the side of running
    assert 2.5 < registry.measurement_peak_bytes(135_000_000, 9, 2048) / 2**30 < 4.0


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_ii_finding_7_fifo_as_weights_does_not_hang(good, tmp_path):
    d = _copy(good["llama"], tmp_path / "m")
    (d / "model.safetensors").unlink()
    os.mkfifo(d / "model.safetensors")
    _refused(d.resolve(), "model.safetensors", "not a regular file (a FIFO)", within=10)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_ii_finding_7_fifo_as_config_does_not_hang(good, tmp_path):
    d = _copy(good["llama"], tmp_path / "m")
    (d / "config.json").unlink()
    os.mkfifo(d / "config.json")
    _refused(d.resolve(), "config.json", "not a regular file (a FIFO)", within=10)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_ii_finding_7_fifo_as_tokenizer_refused_at_configure(good, tmp_path):
    d = _copy(good["llama"], tmp_path / "m")
    (d / "tokenizer.json").unlink()
    os.mkfifo(d / "tokenizer.json")
    _refused(d.resolve(), "tokenizer.json", "not a regular file", within=10)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_ii_finding_7_fifo_as_text_does_not_hang(tmp_path):
    fifo = tmp_path / "text.txt"
    os.mkfifo(fifo)
    result: dict = {}

    def run():
        try:
            registry.register_text(fifo)
        except registry.ModelPathError as exc:
            result["error"] = str(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(60)  # a hang guard: milliseconds when it works; 60 s leaves room for a loaded machine
    assert not t.is_alive() and "not a regular file" in result.get("error", ""), result


def test_ii_finding_7_200_mb_config_refused_quickly(good, tmp_path):
    d = _copy(good["llama"], tmp_path / "m")
    with open(d / "config.json", "r+b") as f:
        f.truncate(200 * 2**20)  # sparse: 200 MB of file, no 200 MB of disk
    msg = _refused(d.resolve(), "config.json", f"larger than {registry.CONFIG_MAX_BYTES} bytes", within=5)
    assert "regular file of at most" in msg


def test_ii_finding_7_large_tokenizer_config_refused_quickly(good, tmp_path):
    d = _copy(good["llama"], tmp_path / "m")
    with open(d / "tokenizer_config.json", "r+b") as f:
        f.truncate(200 * 2**20)
    _refused(d.resolve(), "tokenizer_config.json", "larger than", within=5)


def test_ii_finding_7_deeply_nested_config_refused(good, tmp_path):
    d = _copy(good["llama"], tmp_path / "m")
    (d / "config.json").write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    _refused(d.resolve(), "config.json", "not readable JSON")


def test_ii_finding_7_run_stops_with_exit_4_before_measuring(good, tmp_path, run_at_root):
    """``pytest checks/test_trained.py --claims-model <a billion layers>``: exit status 4 at configure time,
    one message naming the model, the file and the field; nothing measured."""
    d = _copy(good["llama"], tmp_path / "m", num_hidden_layers=10**9).resolve()
    with cpu_budget(120, what="the run that stops at configure time"):  # seconds idle; a billion layers never built
        res = run_at_root("checks/test_trained.py", "--claims-model", str(d), "--claims-select",
                          "lemma-11-34-energy-concentration", "--claims-report-dir", str(tmp_path / "reports"),
                          env={"HF_HUB_OFFLINE": "1", "ATTENTION_CLAIMS_CACHE": str(tmp_path / "cache")})
    assert res.ret == 4, (res.stdout + res.stderr)[-3000:]
    assert str(d) in res.stderr and "num_hidden_layers = 1000000000" in res.stderr, res.stderr
    assert "Traceback" not in res.stdout + res.stderr and "measuring" not in res.stdout + res.stderr
