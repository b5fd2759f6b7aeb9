"""Issue 22, finding 7 (models): a ``--claims-model`` that cannot be loaded (a GGUF file with a
valid magic and a damaged header, a config with ``num_attention_heads = 0`` or other impossible
sizes, a truncated or corrupt ``model.safetensors``, an unreadable config) is a usage error at
configure time (exit status 4, one message naming the model path, the file and what is wrong),
never an INTERNALERROR, and the run stops before any verdict is decided. A failure that only shows
when the model is loaded skips that user model's own cases, with one line, once.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
import tiny_models  # noqa: E402

from attention_claims.models import registry  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("finding-7")
    return {f: tiny_models.build(f, base / f"tiny-{f}") for f in ("llama", "bert")}


@pytest.fixture(autouse=True)
def _forget_user_models(isolated_user_models):
    """Every test here starts with no user model or text and an empty cache (tests/conftest.py)."""


_copy = tiny_models.copy_with_config


def bogus_gguf(tmp: Path) -> Path:
    """The GGUF magic and version 3, then garbage where the tensor and key/value counts are."""
    p = tmp / "bogus.gguf"
    p.write_bytes(b"GGUF" + struct.pack("<I", 3) + bytes(range(256)) * 3)
    return p


def _gguf_bad_version(tmp: Path) -> Path:
    p = tmp / "v.gguf"
    p.write_bytes(b"GGUF" + b"\xff" * 64)
    return p


def truncated(good: dict, tmp: Path) -> Path:
    d = _copy(good["llama"], tmp / "truncated")
    w = d / "model.safetensors"
    w.write_bytes(w.read_bytes()[: w.stat().st_size // 2])
    return d


BROKEN = {
    # name: (build(good, tmp) -> model path, file the message names, words it says)
    "gguf-damaged-header": (lambda good, tmp: bogus_gguf(tmp), "bogus.gguf", "GGUF"),
    "gguf-bad-version": (lambda good, tmp: _gguf_bad_version(tmp), "v.gguf", "GGUF"),
    "zero-heads": (lambda good, tmp: _copy(good["llama"], tmp / "m", num_attention_heads=0), "config.json",
                   "num_attention_heads = 0"),
    "negative-layers": (lambda good, tmp: _copy(good["bert"], tmp / "m", num_hidden_layers=-2), "config.json",
                        "num_hidden_layers = -2"),
    "zero-hidden": (lambda good, tmp: _copy(good["bert"], tmp / "m", hidden_size=0), "config.json", "hidden_size = 0"),
    "hidden-not-divisible": (lambda good, tmp: _copy(good["bert"], tmp / "m", hidden_size=33), "config.json",
                             "not divisible"),
    "truncated-safetensors": (truncated, "model.safetensors", "truncated"),
    "corrupt-safetensors-header": (lambda good, tmp: _corrupt_header(good, tmp), "model.safetensors", "corrupt"),
    "unreadable-config": (lambda good, tmp: _bad_json(good, tmp), "config.json", "not readable JSON"),
}


def _corrupt_header(good: dict, tmp: Path) -> Path:
    d = _copy(good["llama"], tmp / "corrupt")
    w = d / "model.safetensors"
    data = bytearray(w.read_bytes())
    data[8:16] = b"\x00garbage"
    w.write_bytes(bytes(data))
    return d


def _bad_json(good: dict, tmp: Path) -> Path:
    d = _copy(good["llama"], tmp / "badjson")
    (d / "config.json").write_text("{not json", encoding="utf-8")
    return d


@pytest.mark.parametrize("case", list(BROKEN))
def test_finding_7_broken_model_is_a_clear_model_path_error(good, tmp_path, case):
    build, file, words = BROKEN[case]
    path = Path(build(good, tmp_path)).resolve()
    with pytest.raises(registry.ModelPathError) as err:
        registry.register_model(path)
    msg = str(err.value)
    assert str(path) in msg and file in msg and words in msg, msg
    assert registry.USER_MODELS == {}


def test_finding_7_good_models_still_register(good):
    for family in ("llama", "bert"):
        spec = registry.register_model(good[family])
        assert (spec.layers, spec.heads, spec.head_dim, spec.hidden) == (2, 4, 8, 32)


def test_finding_7_safetensors_check_accepts_a_whole_file_and_names_missing_bytes(good, tmp_path):
    w = good["llama"] / "model.safetensors"
    registry.check_safetensors(w)  # no error
    cut = tmp_path / "model.safetensors"
    cut.write_bytes(w.read_bytes()[:-1])
    with pytest.raises(registry.ModelPathError, match="1 bytes are missing"):
        registry.check_safetensors(cut)
    cut.write_bytes(b"\x01\x02")
    with pytest.raises(registry.ModelPathError, match="truncated"):
        registry.check_safetensors(cut)


def test_finding_7_load_time_failure_skips_only_that_model_once(good, tmp_path):
    """A broken tokenizer passes the configure-time checks; measuring then fails: the user model's
    case is skipped with one line naming it (no traceback, no error that would make a claim
    undecided), and the second case does not try again."""
    from attention_claims.testkit import model_params

    d = _copy(good["llama"], tmp_path / "bad-tokenizer")
    (d / "tokenizer.json").write_text("{broken", encoding="utf-8")
    spec = registry.register_model(d)
    for _ in range(2):
        with pytest.raises(pytest.skip.Exception) as skip:
            model_params.measure_or_skip(spec.key, 64)
        msg = str(skip.value)
        assert spec.key in msg and str(spec.path) in msg and "cannot be loaded or measured" in msg
        assert "\n" not in msg
    model_params._UNMEASURABLE.clear()


def _pytest(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


_STOPS_AT_CONFIGURE = ["gguf-damaged-header", "zero-heads", "truncated-safetensors"]


@pytest.mark.subprocess_run
def test_finding_7_run_stops_with_exit_4_and_decides_nothing(good, tmp_path):
    """``pytest checks/test_trained.py --claims-model <broken>`` in a new interpreter, as a person runs it:
    exit status 4 and one message naming the path and the file; no INTERNALERROR, no traceback, no
    report (so no built-in verdict, e.g. lemma-11-34-energy-concentration's, is made undecided)."""
    build, file, words = BROKEN["gguf-damaged-header"]
    path = Path(build(good, tmp_path)).resolve()
    env = os.environ | {"HF_HUB_OFFLINE": "1", "ATTENTION_CLAIMS_CACHE": str(tmp_path / "cache"),
                        "PYTHONPATH": str(ROOT)}
    res = _pytest(*_stopping_args(path, tmp_path / "reports"), env=env)
    _assert_stops_with_one_message(res.returncode, res.stdout, res.stderr, path, file, words, tmp_path / "reports")


@pytest.mark.parametrize("case", _STOPS_AT_CONFIGURE)
def test_finding_7_each_broken_model_stops_the_run_with_exit_4(good, tmp_path, case, run_at_root):
    """The same run for each kind of damage, in this process (the path is the one above)."""
    build, file, words = BROKEN[case]
    path = Path(build(good, tmp_path)).resolve()
    res = run_at_root(*_stopping_args(path, tmp_path / "reports"),
                         env={"HF_HUB_OFFLINE": "1", "ATTENTION_CLAIMS_CACHE": str(tmp_path / "cache")})
    _assert_stops_with_one_message(res.ret, res.stdout, res.stderr, path, file, words, tmp_path / "reports")


def _stopping_args(path: Path, out: Path) -> tuple[str, ...]:
    return ("checks/test_trained.py", "--claims-model", str(path), "--claims-select",
            "lemma-11-34-energy-concentration", "--claims-report-dir", str(out))


def _assert_stops_with_one_message(returncode: int, stdout: str, stderr: str, path: Path, file: str, words: str,
                                   out: Path) -> None:
    text = stdout + stderr
    assert returncode == 4, text[-3000:]
    assert "INTERNALERROR" not in text and "Traceback" not in text, text[-3000:]
    assert str(path) in stderr and file in stderr and words in stderr, stderr
    assert len(stderr.strip().splitlines()) <= 2, stderr
    report = out / "claims.json"
    if report.exists():
        claims = {c["id"]: c for c in json.loads(report.read_text(encoding="utf-8"))["claims"]}
        assert claims.get("lemma-11-34-energy-concentration", {}).get("verdict") != "undecided"
