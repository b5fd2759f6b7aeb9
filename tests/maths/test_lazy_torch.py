"""torch (about 1 s to import) is imported by the first maths function that needs it, never by an
import: a check that touches no tensor (``--claims-select lemma-11-35-temperature-limits``) starts
without it (issue 13: one cheap claim in 3 s)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attention_claims._lazy import LazyModule, loaded
from attention_claims.maths import MODULES

ROOT = Path(__file__).resolve().parents[2]


def _fresh(code: str) -> str:
    """Run ``code`` in a fresh interpreter; return its stdout (raises on a non-zero exit)."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_importing_the_maths_layer_the_test_kit_and_the_plugin_does_not_import_torch():
    imports = "; ".join(f"import attention_claims.maths.{m}" for m in MODULES)
    out = _fresh(f"import sys; {imports}; import attention_claims.testkit, attention_claims.framework.plugin; "
                 "import attention_claims.framework.report; print('torch' in sys.modules)")
    assert out == "False"


def test_the_first_function_that_needs_torch_imports_it():
    # ... and from then on every maths module holds torch itself: no forwarding on each access
    out = _fresh("import sys; from attention_claims.maths import arrays, attention, sparsity, softmax_attention; "
                 "print('torch' in sys.modules, type(attention.torch).__name__, type(sparsity.torch).__name__); "
                 "A = softmax_attention([[1.0]], [[1.0]]); t = sys.modules['torch']; "
                 "print('torch' in sys.modules, type(A).__module__); "
                 "print(arrays.torch is t, attention.torch is t, sparsity.torch is t)")
    assert out.splitlines() == ["False LazyModule LazyModule", "True torch", "True True True"]


def test_a_run_without_torch_reports_its_version_from_the_metadata_and_the_cpu_alone():
    out = _fresh("import sys, importlib.metadata as m; import attention_claims.framework.report as r; "
                 "r.gpu_driver_present = lambda: False; "  # as on a machine without a GPU driver
                 "e = r.environment(None); print('torch' in sys.modules, e.torch == m.version('torch'), e.devices)")
    assert out == "False True ['cpu']"


def test_on_a_machine_with_a_gpu_driver_torch_is_asked_for_the_devices():
    # a subset run there carries CUDA readings decided earlier: "devices: cpu" beside them would be untrue
    out = _fresh("import sys; import attention_claims.framework.report as r; r.gpu_driver_present = lambda: True; "
                 "e = r.environment(None); asked = 'torch' in sys.modules; import torch; "
                 "print(asked, len(e.devices) == 1 + torch.cuda.device_count())")
    assert out == "True True"
    from attention_claims.framework.report import gpu_driver_present

    assert isinstance(gpu_driver_present(), bool)


def test_an_xdist_controller_off_linux_asks_torch_for_the_devices_its_workers_could_use():
    # the controller runs no check: without asking torch it would list the CPU alone on a GPU machine
    # whose driver it cannot see (off Linux)
    out = _fresh("import sys, types; import attention_claims.framework.report as r; "
                 "r.gpu_driver_visible = lambda: False; r.gpu_driver_present = lambda: False; "
                 "e = r.environment(types.SimpleNamespace(option=types.SimpleNamespace(numprocesses=2))); "
                 "asked = 'torch' in sys.modules; import torch; print(asked, e.torch == torch.__version__, "
                 "len(e.devices) == 1 + torch.cuda.device_count())")
    assert out == "True True True"


def test_an_xdist_controller_on_linux_without_a_gpu_driver_lists_the_cpu_without_torch():
    # CUDA needs the kernel driver there: no worker can have used a GPU, and the controller skips the
    # 1.5 s import beside its workers' collection
    out = _fresh("import sys, types; import importlib.metadata as m; import attention_claims.framework.report as r; "
                 "r.gpu_driver_visible = lambda: True; r.gpu_driver_present = lambda: False; "
                 "e = r.environment(types.SimpleNamespace(option=types.SimpleNamespace(numprocesses=2))); "
                 "print('torch' in sys.modules, e.torch == m.version('torch'), e.devices, e.xdist_workers)")
    assert out == "False True ['cpu'] 2"


@pytest.mark.subprocess_run
def test_the_readmes_one_claim_run_of_a_torch_free_check_never_imports_torch(tmp_path):
    """``pytest --claims-select lemma-11-35-temperature-limits`` (not quiet: the header hooks run too),
    end to end: a plugin in the run says at the very end whether torch was ever imported."""
    (tmp_path / "torch_probe.py").write_text(
        "import sys\n"
        "def pytest_unconfigure(config):\n"
        "    print('torch imported:', 'torch' in sys.modules)\n", encoding="utf-8")
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    res = subprocess.run([sys.executable, "-m", "pytest", "-p", "torch_probe", "-p", "no:cacheprovider",
                          "--claims-select", "lemma-11-35-temperature-limits",
                          "--claims-report-dir", str(tmp_path / "reports")],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    from attention_claims.framework.report import gpu_driver_present

    # on a machine with a GPU driver the report's environment asks torch for the devices, at the very end
    assert f"torch imported: {gpu_driver_present()}" in res.stdout, res.stdout[-3000:]
    assert "1 passed" in res.stdout


def test_lazy_module_imports_on_first_attribute_and_follows_the_module(monkeypatch):
    code = ("import sys; from attention_claims._lazy import LazyModule; m = LazyModule('wave'); "
            "print('wave' in sys.modules); f = m.open; print('wave' in sys.modules, f is sys.modules['wave'].open)")
    assert _fresh(code).splitlines() == ["False", "True True"]
    fake = LazyModule("json")
    assert "'json'" in repr(fake)
    import json

    assert fake.dumps is json.dumps
    monkeypatch.setattr(json, "dumps", lambda *a, **k: "patched")
    assert fake.dumps() == "patched"  # read from the module at each access: a patch is seen while it lasts
    monkeypatch.undo()
    assert fake.dumps is json.dumps
    with pytest.raises(AttributeError):
        fake.no_such_name  # noqa: B018
    with pytest.raises(AttributeError):
        LazyModule("attention_claims_no_such_module").__wrapped__  # noqa: B018 - introspection never imports
    with pytest.raises(ImportError):
        LazyModule("attention_claims_no_such_module").x  # noqa: B018


def test_loaded_never_imports():
    assert loaded("attention_claims_no_such_module") is None
    assert loaded("numpy") is np


def test_tensor_and_array_inputs_still_go_through_the_same_validators():
    import torch

    from attention_claims.maths import as_array, as_tensor, resolve_dtype
    from attention_claims.maths.arrays import is_tensor

    t = torch.tensor([[1.0, 2.0]], dtype=torch.float32)
    assert is_tensor(t) and not is_tensor(np.ones((1, 2)))
    assert as_array(t, "x").dtype == np.float64
    assert as_tensor(t, "x") is t
    assert resolve_dtype("bfloat16") is torch.bfloat16 and resolve_dtype(torch.float16) is torch.float16
    with pytest.raises(ValueError, match="dtype: unknown 'float8'"):
        resolve_dtype("float8")


def test_a_test_that_imports_torch_itself_still_runs_on_one_thread():
    """The thread fixture before torch is loaded: a torch imported inside the test starts with one
    intra-op thread, and the environment is left as it was."""
    code = ("import os, sys; from attention_claims.testkit.fixtures import one_torch_thread; "
            "os.environ.pop('OMP_NUM_THREADS', None); gen = one_torch_thread.__wrapped__(); next(gen); "
            "import torch; print(torch.get_num_threads()); next(gen, None); print(os.environ.get('OMP_NUM_THREADS'))")
    assert _fresh(code).splitlines() == ["1", "None"]


def test_installed_version_reads_the_build_time_file_or_the_metadata():
    import importlib.metadata

    from attention_claims._lazy import installed_version

    for package, version_file in (("torch", "version.py"), ("matplotlib", "_version.py"), ("numpy", "no-such.py")):
        assert installed_version(package, version_file) == importlib.metadata.version(package)
    with pytest.raises(importlib.metadata.PackageNotFoundError):
        installed_version("attention_claims_no_such_module", "version.py")
