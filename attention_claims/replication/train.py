"""Training and evaluation of one arm of an analog for one seed.

Pairing: every arm of a seed starts from the same initial weights (``torch.manual_seed(seed)`` right
before the model is built; arms differ only in masks or in a parameter held fixed), sees the same
training windows and the same MLM masks (a ``torch.Generator`` seeded with the seed), and is evaluated
on the same eval windows with the same masks (seed-independent). The optimiser is AdamW (Loshchilov &
Hutter 2019) with linear warm-up and cosine decay to a tenth of the peak rate.
"""

from __future__ import annotations

import math
import time

import numpy as np
import torch
import torch.nn.functional as F

from attention_claims.replication.corpus import Corpus
from attention_claims.replication.nets import TinyTransformer

__all__ = ["train_arm", "EVAL_SEED"]

EVAL_SEED = 20260601
"""Seed of the eval windows' MLM masks: the same for every arm and every seed."""


def _windows(tokens: np.ndarray, starts: torch.Tensor, n: int) -> torch.Tensor:
    idx = starts[:, None].numpy() + np.arange(n)[None, :]
    return torch.from_numpy(tokens[idx].astype(np.int64))


def _mlm_mask(shape, gen: torch.Generator, rate: float) -> torch.Tensor:
    m = torch.rand(shape, generator=gen) < rate
    m[:, 0] |= ~m.any(dim=1)  # at least one masked position per window
    return m


def _loss(model: TinyTransformer, ids: torch.Tensor, objective: str, mask: torch.Tensor | None,
          corpus: Corpus) -> torch.Tensor:
    """Mean cross-entropy (nats) of the objective's scored positions."""
    if objective == "mlm":
        inp = ids.masked_fill(mask, corpus.mask_id)
        h = model(inp)[mask]
        return F.cross_entropy(model.logits(h), ids[mask])
    h = model(ids)
    start = ids.shape[1] // 2 - 1 if objective == "prefixlm" else 0
    h = h[:, start:-1]
    return F.cross_entropy(model.logits(h).flatten(0, 1), ids[:, start + 1:].flatten())


def train_arm(corpus: Corpus, arm: dict, scale: dict, seed: int, *, progress=None) -> dict:
    """Train one arm (``arm``: model options and ``objective``) at ``scale`` (d, layers, heads, n, batch,
    steps, lr, eval_every, eval_windows, mask_rate) from ``seed``; returns the final eval loss (nats), the
    eval curve ``[[step, loss], ...]``, the step at which the eval loss first went below the unigram
    plateau minus ``scale['plateau_margin']`` (None if never), the parameter count and the wall time (s).
    ``progress`` (a callable taking a number of steps) is told of each step."""
    torch.manual_seed(seed)
    n = scale["n"]
    model_kw = {k: v for k, v in arm.items() if k not in ("objective", "name")}
    model = TinyTransformer(corpus.vocab_size, scale["d"], scale["layers"], scale["heads"], n, **model_kw)
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # the gpu scale on a lent GPU
    model.to(dev)
    params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=scale["lr"], betas=(0.9, 0.98), weight_decay=0.01)
    steps, warm = scale["steps"], max(1, scale["steps"] // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warm if s < warm else 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (s - warm) / max(1, steps - warm))))
    gen = torch.Generator().manual_seed(seed)
    egen = torch.Generator().manual_seed(EVAL_SEED)
    e_starts = torch.arange(scale["eval_windows"]) * n
    if int(e_starts[-1]) + n > corpus.eval.size:
        raise ValueError("eval split too short for the requested eval windows")
    e_ids = _windows(corpus.eval, e_starts, n)
    e_mask = _mlm_mask(e_ids.shape, egen, scale["mask_rate"]).to(dev)
    e_ids = e_ids.to(dev)
    objective = arm["objective"]

    def evaluate() -> float:
        model.eval()
        with torch.no_grad():
            total, count = 0.0, 0
            for i in range(0, e_ids.shape[0], scale["batch"]):
                ids, m = e_ids[i:i + scale["batch"]], e_mask[i:i + scale["batch"]]
                total += float(_loss(model, ids, objective, m, corpus)) * ids.shape[0]
                count += ids.shape[0]
        model.train()
        return total / count

    curve, sparsity = [], []
    t0 = time.perf_counter()
    for step in range(1, steps + 1):
        starts = torch.randint(0, corpus.train.size - n, (scale["batch"],), generator=gen)
        ids = _windows(corpus.train, starts, n)
        m = _mlm_mask(ids.shape, gen, scale["mask_rate"]).to(dev)
        ids = ids.to(dev)
        loss = _loss(model, ids, objective, m, corpus)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % scale["eval_every"] == 0 or step == steps:
            curve.append([step, round(evaluate(), 5)])
            sparsity.append(model.sparsity())
        if progress is not None:
            progress(1)
    left = next((s for s, v in curve if v < corpus.unigram_entropy - scale["plateau_margin"]), None)
    out = {"eval_loss": curve[-1][1], "curve": curve, "left_plateau_at": left, "parameters": params,
           "seconds": round(time.perf_counter() - t0, 2)}
    if not math.isnan(sparsity[-1]):
        out["sparsity"] = round(sparsity[-1], 5)
    return out
