"""Loading trained models: GGUF conversion to a safetensors cache, exact eager attention, tokenising, attention matrices
(the whole stack, :func:`attention`, or one layer at a time, :func:`attention_layers`).
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import torch

from .. import _files
from .registry import (
    DTYPES,
    MAX_USER_TEXT_BYTES,
    ModelSpec,
    converted_dir,
    converted_ok,
    file_lock,
    get_spec,
    install_hint,
    model_files,
    read_text_prefix,
    text_for,
    user_converted_dir,
)


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




EXACT_ATTENTION = "claims_eager_exact"


def _eager_exact_attention(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    """Eager attention whose softmax runs in the inputs' own dtype, its ``(H, N, N)`` passes made in place.

    transformers' Llama eager path computes the softmax with ``dtype=torch.float32``, so a
    float64 forward pass would have float32-accurate attention weights (row sums off by ~4e-7).
    This is the same computation (grouped-query heads repeated as ``repeat_kv`` does, additive
    mask, softmax, dropout) with no cast, and in float32 it gives transformers' eager weights bitwise
    (``tests/models/test_exact_attention.py``). Shapes: query ``(B, H, N, d_k)``, key/value
    ``(B, H_kv, N, d_k)``; returns ``(B, N, H, d_k)`` and the ``(B, H, N, N)`` weights.

    The logits are the measurement's largest arrays (302 MB a layer for SmolLM2-135M at N = 2048 in
    float64), and transformers' eager path makes three of them, each a pass over memory (the scaled
    product, the masked sum, the softmax): here the scaling is applied to the ``(B, H, N, d_k)`` query
    when it is a power of two (``1/sqrt(d_k)`` for ``d_k = 4^m``: a product with ``2^-m`` is exact and
    commutes with every rounding of the matrix product, so the logits are bitwise the same, as long as no
    query entry or partial product is subnormal or overflows, which a trained model's are not), else in
    place, and the mask and the softmax are applied in place (the softmax only on the CPU and where no
    gradient is recorded: an ``out=`` softmax has no autograd formula). That took SmolLM2-135M's
    forward passes at N = 2048, one thread, from 15.8 to 9.6 s in float32 and from 30.9 to 20.3 s in
    float64 (issue 37), every layer's weights bitwise equal to before.
    """
    groups = getattr(module, "num_key_value_groups", 1)
    if groups > 1:
        key = key.repeat_interleave(groups, dim=1)
        value = value.repeat_interleave(groups, dim=1)
    if math.frexp(scaling)[0] == 0.5:  # a power of two: exact on the query, so the logits are unchanged
        weights = torch.matmul(query * scaling, key.transpose(2, 3))
    else:
        weights = torch.matmul(query, key.transpose(2, 3))
        weights.mul_(scaling)
    if attention_mask is not None:
        weights.add_(attention_mask)
    if weights.device.type == "cpu" and not (torch.is_grad_enabled() and weights.requires_grad):
        # the CPU kernel reads each element of a row once before writing it
        torch.ops.aten._softmax.out(weights, -1, False, out=weights)
    else:
        weights = torch.softmax(weights, dim=-1)
    weights = torch.nn.functional.dropout(weights, p=dropout, training=module.training)
    return torch.matmul(weights, value).transpose(1, 2).contiguous(), weights


def _register_exact_attention() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, eager_mask

    AttentionInterface.register(EXACT_ATTENTION, _eager_exact_attention)
    AttentionMaskInterface.register(EXACT_ATTENTION, eager_mask)


def convert_smollm2(gguf: Path, dest: Path, quantization: str = "Q4_1") -> Path:
    """Dequantize a GGUF file (SmolLM2's Q4_1, or a user's) to a float32 safetensors folder
    ``dest`` (about 30 s for SmolLM2, once).

    Loads through transformers' GGUF support (needs ``gguf``), drops the GGUF quantization
    config (the dequantized float32 tensors are what is saved) and writes the folder
    atomically, with ``source.json`` recording the GGUF file and its size.
    """
    tf = _transformers()
    with file_lock(dest):
        if converted_ok(dest, gguf):
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
        _files.write_file(tmp / "source.json", json.dumps({
            "gguf": str(gguf), "gguf_size": gguf.stat().st_size, "quantization": quantization,
            "dequantized_to": "float32", "transformers": tf.__version__,
        }, indent=1))
        shutil.rmtree(dest, ignore_errors=True)
        os.replace(tmp, dest)
    return dest


def load_model(key: str, dtype: str = "float32", device: str = "cpu") -> Loaded | None:
    """Load model ``key`` in ``dtype`` ("float32" or "float64") with eager attention (a Llama-like decoder with
    the suite's own eager attention, :func:`_eager_exact_attention`), in ``eval()``
    mode, on ``device`` ("cpu" or "cuda"; loaded once per process and device).

    Returns ``None`` (never raises) when a package is missing; see :func:`install_hint`.
    SmolLM2 is converted from its GGUF file on first use (:func:`convert_smollm2`).
    """
    if install_hint(key) is not None:
        return None
    identity = get_spec(key).identity  # another folder under the same key is loaded afresh
    if device == "cpu":
        return _load_model(key, dtype, identity)
    return _on_device(key, dtype, device, identity)


@lru_cache(maxsize=4)
def _on_device(key: str, dtype: str, device: str, identity: tuple[str, str]) -> Loaded:
    """A copy of the CPU model :func:`_load_model` moved to ``device`` (the CPU one stays loaded for the
    CPU readings)."""
    import copy

    cpu = _load_model(key, dtype, identity)
    return replace(cpu, model=copy.deepcopy(cpu.model).to(device))


@lru_cache(maxsize=4)
def _load_model(key: str, dtype: str, identity: tuple[str, str]) -> Loaded:
    """The model ``key`` (registered now as ``identity``, :attr:`ModelSpec.identity`) in ``dtype`` on the CPU."""
    spec = get_spec(key)
    tf = _transformers()
    src = model_files(key)
    if spec.user:
        return _load_user_model(spec, src, dtype)
    if key == "minilm-l6":
        model = tf.BertModel.from_pretrained(src, attn_implementation="eager", dtype=DTYPES[dtype],
                                             local_files_only=True)
        tok = tf.AutoTokenizer.from_pretrained(src, local_files_only=True)
    else:
        src = convert_smollm2(src, converted_dir())
        _register_exact_attention()  # float32 too: the same weights as transformers' eager path, faster
        impl = EXACT_ATTENTION
        model = tf.AutoModelForCausalLM.from_pretrained(src, attn_implementation=impl, dtype=DTYPES[dtype],
                                                        local_files_only=True)
        tok = tf.AutoTokenizer.from_pretrained(src, local_files_only=True)
    model.eval()
    return Loaded(spec=spec, model=model, tokenizer=tok, dtype=dtype, source=src)


def _load_user_model(spec: ModelSpec, src: Path, dtype: str) -> Loaded:
    """A ``--claims-model`` model as its base model (no LM head): ``AutoModel`` with eager
    attention, or for a Llama-like decoder the exact-softmax hook (:func:`_eager_exact_attention`:
    Llama's eager path softmaxes in float32, which a float64 pass must not; in float32 the hook gives
    the eager path's weights bitwise, faster; BERT's and GPT-2's eager paths softmax in the inputs' dtype). A GGUF file is dequantized to a float32 cache first.
    """
    tf = _transformers()
    if src.suffix == ".gguf":
        src = convert_smollm2(src, user_converted_dir(spec), quantization="as in the GGUF file")
    impl = "eager"
    if spec.model_type == "llama":
        _register_exact_attention()
        impl = EXACT_ATTENTION
    model = tf.AutoModel.from_pretrained(src, attn_implementation=impl, dtype=DTYPES[dtype], local_files_only=True)
    tok = tf.AutoTokenizer.from_pretrained(src, local_files_only=True)
    model.eval()
    return Loaded(spec=spec, model=model, tokenizer=tok, dtype=dtype, source=src)


class TextTooShort(ValueError):
    """The passage has fewer tokens than the ``N`` a measurement needs (the message gives the count)."""


def token_ids(loaded: Loaded, text: str, N: int) -> torch.Tensor:
    """The first ``N`` tokens of ``text`` as a ``(1, N)`` int64 tensor (see the module docstring).

    Raises:
        TextTooShort: (a ``ValueError``) the text has fewer than ``N`` tokens.
    """
    tok = loaded.tokenizer
    if loaded.spec.causal:
        ids = tok(text, add_special_tokens=False)["input_ids"][:N]
    else:
        ids = tok(text, truncation=True, max_length=N)["input_ids"]
    if len(ids) != N:
        raise TextTooShort(f"{loaded.spec.key}: the text has only {len(ids)} tokens, {N} needed")
    return torch.tensor([ids], dtype=torch.int64)


#: tokens beyond ``N`` a prefix must hold before its first ``N`` tokens are taken as the text's
#: (the cut falls far after token ``N``, so it cannot change them)
PREFIX_MARGIN = 16


def passage_ids(loaded: Loaded, name: str, N: int) -> torch.Tensor:
    """The first ``N`` tokens of passage ``name`` (:func:`token_ids`), tokenising only a prefix:
    ``16 N`` bytes (at least 4 kB), four times more while it holds fewer than ``N + 16`` tokens,
    up to the whole file or :data:`MAX_USER_TEXT_BYTES`. A built-in passage is tokenised whole,
    as before. A 50 MB ``--claims-text`` thus costs what its first few kB cost.

    Raises:
        TextTooShort: the text (or its first :data:`MAX_USER_TEXT_BYTES`) has fewer than ``N`` tokens.
    """
    limit = max(4096, 16 * N)
    while True:
        text, complete = read_text_prefix(name, limit)
        if complete:
            return token_ids(loaded, text, N)
        if limit >= MAX_USER_TEXT_BYTES:
            try:
                return token_ids(loaded, text, N)
            except TextTooShort as exc:
                raise TextTooShort(f"{exc} (in the first {MAX_USER_TEXT_BYTES // 2**20} MiB of the file, "
                                   f"all that is read)") from None
        if len(loaded.tokenizer(text, add_special_tokens=False)["input_ids"]) >= N + PREFIX_MARGIN:
            return token_ids(loaded, text, N)
        limit *= 4



def _prepared(key: str, N: int, dtype, text: str | None, device: str = "cpu"):
    """``(loaded model, input ids (1, N), the model without its LM head)`` for a measurement of ``key`` at
    ``N`` on ``text`` (default: the model's passage), or None when the model is not installed.

    Raises:
        TextTooShort: (a ``ValueError``) the text has fewer than ``N`` tokens.
    """
    text = text_for(key) if text is None else text
    loaded = load_model(key, dtype, device)
    if loaded is None:
        return None
    ids = passage_ids(loaded, text, N).to(device)
    return loaded, ids, getattr(loaded.model, "model", loaded.model)  # skip the LM head of a causal model

def attention(key: str, N: int, text: str | None = None, dtype: str = "float32") -> torch.Tensor | None:
    """Every head's attention matrix for the first ``N`` tokens of passage ``text`` (default:
    :func:`text_for` ``(key)``, Moby-Dick ch. 1 or a user model's ``--claims-text``).

    Works for the built-in models and for user models of every type in
    :data:`SUPPORTED_ARCHITECTURES` (grouped-query heads come out repeated, one matrix per query
    head). Returns a ``(layers, heads, N, N)`` tensor of ``dtype`` whose ``[l, h, i, j]`` is the
    softmax weight query ``i`` gives key ``j`` (003 定义 11.24; rows sum to 1; zero above the
    diagonal for a causal model), or ``None`` when the model is not installed.

    Raises:
        TextTooShort: (a ``ValueError``) the text has fewer than ``N`` tokens.
        RuntimeError: the model returned attention of an unexpected shape.
    """
    prepared = _prepared(key, N, dtype, text)
    if prepared is None:
        return None
    loaded, ids, inner = prepared
    with torch.no_grad():
        out = inner(input_ids=ids, output_attentions=True)
    A = torch.stack([a[0] for a in out.attentions])
    spec = loaded.spec
    if tuple(A.shape) != (spec.layers, spec.heads, N, N):
        raise RuntimeError(f"{key}: attention stack has shape {tuple(A.shape)}, expected "
                           f"{(spec.layers, spec.heads, N, N)}")
    return A


def _attention_recorders(model) -> list[tuple[type, str | None, int]]:
    """``(module class, name fragment or None, output index)`` of the modules whose output holds the
    attention weights, from transformers' own ``_can_record_outputs["attentions"]`` (what
    ``output_attentions=True`` records)."""
    spec = getattr(model, "_can_record_outputs", None) or {}
    rec = spec.get("attentions")
    if rec is None:
        raise RuntimeError(f"{type(model).__name__}: transformers records no attention weights for this model")
    out = []
    for r in rec if isinstance(rec, list | tuple) else [rec]:
        if hasattr(r, "target_class"):  # transformers' OutputRecorder
            out.append((r.target_class, r.layer_name, r.index))
        else:
            out.append((r, None, 1))
    return out


def attention_layers(key: str, N: int, text: str | None, dtype: str,
                     on_layer: Callable[[int, torch.Tensor], None], device: str = "cpu") -> int | None:
    """One forward pass of model ``key`` on the first ``N`` tokens of ``text`` (as :func:`attention`),
    handing each layer's attention to ``on_layer(layer, A)`` *while the pass runs*, so that at most
    one layer's weights are alive at a time (a forward hook on each attention module; nothing is
    stacked, ``output_attentions`` stays off).

    ``A`` is the ``(heads, N, N)`` tensor of ``dtype`` of layer ``layer`` (0-based, in order), the
    same values :func:`attention` stacks as ``[layer]``, on ``device`` (where the model and the pass
    run: "cpu" or "cuda"). ``on_layer`` should reduce it and keep nothing that references it. Returns the number of layers, or ``None`` when the model is not
    installed.

    Raises:
        TextTooShort: (a ``ValueError``) the text has fewer than ``N`` tokens.
        RuntimeError: a layer's attention has an unexpected shape, or the count of layers is not the spec's.
    """
    prepared = _prepared(key, N, dtype, text, device)
    if prepared is None:
        return None
    loaded, ids, inner = prepared
    spec = loaded.spec
    done = [0]

    def hook(_module, _args, output, index=1):
        w = output[index] if isinstance(output, tuple) and len(output) > index else None
        if w is None or tuple(w.shape) != (1, spec.heads, N, N):
            raise RuntimeError(f"{key}: layer {done[0]} attention has shape "
                               f"{None if w is None else tuple(w.shape)}, expected {(1, spec.heads, N, N)}")
        on_layer(done[0], w[0].detach())
        done[0] += 1

    handles = []
    try:
        for cls, fragment, index in _attention_recorders(inner):
            for name, module in inner.named_modules():
                if isinstance(module, cls) and (fragment is None or f".{fragment.strip('.')}." in f".{name}."):
                    handles.append(module.register_forward_hook(
                        lambda m, a, o, i=index: hook(m, a, o, i)))
        with torch.no_grad():
            inner(input_ids=ids)
    finally:
        for h in handles:
            h.remove()
    if done[0] != spec.layers:
        raise RuntimeError(f"{key}: {done[0]} attention layers seen, expected {spec.layers}")
    return done[0]
