"""Run an analog seed by seed, resumably, and write its evidence file.

Order of events (pre-registration): the configuration (:func:`attention_claims.replication.analogs.config_for`
plus the corpus's and tokenizer's SHA-256) is hashed and written to a partial file *before* the first
step; each finished seed is added to the partial file atomically; a rerun with the same configuration
hash skips the seeds already there. When every seed is done, the outcome is decided by the analog's rule
and ``reports/evidence/<claim>/<date>-<device>.json`` is written (the date is the pre-registration's).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import socket
from pathlib import Path

from attention_claims._cache import cache_dir, write_atomic
from attention_claims._files import read_json
from attention_claims.replication.analogs import ANALOGS, Analog, config_for, config_sha256
from attention_claims.replication.schema import MAX_BYTES
from attention_claims.replication.stats import paired_interval, power, seeds_for_power

__all__ = ["run_analog", "decide", "SCHEMA_ID", "evidence_path"]

SCHEMA_ID = "attention-claims/evidence/1"


def _device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def evidence_path(root: Path, claim: str, date: str, device: str) -> Path:
    """``<root>/reports/evidence/<claim>/<date>-<device>.json``."""
    return Path(root) / "reports" / "evidence" / claim / f"{date}-{device}.json"


def result_path(root: Path, claim: str, date: str, device: str, digest: str) -> Path:
    """:func:`evidence_path`, or ``<date>-<device>-<first 8 hex of digest>.json`` beside it when that file
    holds another configuration (a second pre-registration the same day never overwrites the first)."""
    path = evidence_path(root, claim, date, device)
    if path.exists() and read_json(path, MAX_BYTES).get("config_sha256") != digest:
        path = path.with_name(f"{path.stem}-{digest[:8]}.json")
    return path


def contrast_of(analog: Analog, arms: dict) -> float:
    """The analog's contrast (a signed sum of arms' eval losses) for one seed's results."""
    return analog.offset + sum(sign * arms[name][analog.value] for sign, name in analog.contrast)


def decide(config: dict, seeds: list[dict]) -> tuple[str, str, dict, dict]:
    """The outcome (``consistent``/``inconsistent``/``inconclusive``), its reason, the interval and the power."""
    diffs = [s["contrast"] for s in seeds]
    iv = paired_interval(diffs)
    sesoi, sd0 = config["sesoi_nats"], config["assumed_sd_nats"]  # in config["unit"] when not nats
    needed = seeds_for_power(sesoi, sd0)
    pw = {"smallest_effect_of_interest_nats": sesoi, "assumed_sd_nats": sd0, "target": 0.8, "alpha": 0.05,
          "seeds_needed": needed, "seeds_run": iv["n"], "achieved_power_at_assumed_sd": round(power(iv["n"], sesoi, sd0), 4),
          "achieved_power_at_observed_sd": round(power(iv["n"], sesoi, iv["sd"]), 4) if iv["sd"] > 0 else 1.0}
    lo, hi, s, d = iv["lo"], iv["hi"], sesoi, config["direction"]
    if d == "no-gain":
        reading = "inconsistent" if hi < 0 else "consistent" if lo > -s else "inconclusive"
    else:
        sign = -1 if d == "negative" else 1
        claimed = hi < 0 if sign < 0 else lo > 0
        opposite = lo > 0 if sign < 0 else hi < 0
        no_effect = lo > -s if sign < 0 else hi < s
        reading = "consistent" if claimed else "inconsistent" if (opposite or no_effect) else "inconclusive"
    stuck = [f"seed {x['seed']} {name}" for x in seeds for name, r in x["arms"].items()
             if r["left_plateau_at"] is None and r.get("plateau_applies", True)]
    iv["interval_reading"] = reading
    if stuck:
        return "inconclusive", f"stayed on the unigram plateau: {', '.join(stuck)}", iv, pw
    if iv["n"] < needed:
        reason = (f"{iv['n']} paired seeds where the power calculation asks {needed} "
                  f"(power {pw['achieved_power_at_assumed_sd']:.2f} at the assumed sd); the interval alone reads "
                  f"{reading}")
        return "inconclusive", reason, iv, pw
    return reading, "by the pre-registered rule", iv, pw


def _environment() -> dict:
    import subprocess

    import numpy
    import scipy
    import tokenizers
    import torch

    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True,
                                cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = None
    return {"commit": commit, "host": socket.gethostname(), "platform": platform.platform(), "python": platform.python_version(),
            "torch": torch.__version__, "numpy": numpy.__version__, "scipy": scipy.__version__,
            "tokenizers": tokenizers.__version__, "threads": torch.get_num_threads(),
            "cpu": platform.processor() or platform.machine(),
            "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}


def _scale_sentence(config: dict, params: int, corpus: dict, device: str, threads: int) -> dict:
    sc = config["scale"]
    tokens = sc["steps"] * sc["batch"] * sc["n"]
    amount = f"{tokens / 1e6:.1f} M" if tokens >= 100_000 else f"{tokens / 1e3:.1f} k"
    return {"parameters": params, "layers": sc["layers"], "d_model": sc["d"], "heads": sc["heads"],
            "length": sc["n"], "steps": sc["steps"], "tokens_seen_per_arm": tokens, "seeds": len(config["seeds"]),
            "corpus": corpus["name"], "corpus_sha256": corpus["sha256"], "device": device, "threads": threads,
            "sentence": (f"{params / 1e6:.2f} M parameters ({sc['layers']} layers, d = {sc['d']}), "
                         f"{sc['steps']} steps x {sc['batch']} x {sc['n']} tokens ({amount} tokens), "
                         f"{len(config['seeds'])} paired seeds, {corpus['train_tokens'] / 1e3:.0f} k-token "
                         f"corpus {corpus['sha256'][:12]}, {device}, {threads} thread(s)")}


def run_analog(claim: str, *, scale: str = "cpu", root: Path = Path("."), write: bool = True,
               progress: bool = True, seeds: int | None = None) -> dict:
    """Run every seed of ``claim``'s analog at ``scale`` (resuming finished seeds) and return the evidence
    document; writes it under ``root`` when ``write`` (never for the ``smoke`` scale). Raises KeyError for
    a claim without an analog."""
    import torch
    from tqdm import tqdm

    from attention_claims.replication.corpus import load_corpus
    from attention_claims.replication.train import train_arm

    if claim not in ANALOGS:
        raise KeyError(f"no small-scale analog for claim {claim!r} (have: {', '.join(sorted(ANALOGS))})")
    analog = ANALOGS[claim]
    config = config_for(analog, scale)
    if seeds is not None:
        config["seeds"] = list(range(seeds))
    corpus = load_corpus(config["scale"]["vocab"])
    config["corpus"] = corpus.describe()
    digest = config_sha256(config)
    device = _device()
    partial_path = cache_dir("evidence") / f"partial-{claim}-{scale}-{digest[:16]}.json"
    if partial_path.exists():
        state = read_json(partial_path, MAX_BYTES)
    else:
        state = {"preregistered": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                 "config": config, "config_sha256": digest, "seeds": []}
        if scale != "smoke":
            write_atomic(partial_path, json.dumps(state, indent=1))
    done = {s["seed"] for s in state["seeds"]}
    sc = config["scale"]
    if analog.kind == "finetune":
        from attention_claims.replication.finetune import _task, finetune_arm, load_minilm

        weights, model_sha = load_minilm()
        if config.get("model_sha256") != model_sha:
            raise RuntimeError(f"the installed MiniLM (SHA-256 {model_sha}) is not the pre-registered one")
        task = _task(sc)
    todo = [s for s in config["seeds"] if s not in done]
    bar = tqdm(total=len(todo) * len(config["arms"]) * sc["steps"], desc=claim, unit="step",
               disable=not progress, mininterval=5.0)
    for seed in todo:
        arms = {}
        for arm in config["arms"]:
            bar.set_postfix_str(f"seed {seed} {arm['name']}")
            if analog.kind == "finetune":
                arms[arm["name"]] = finetune_arm(sc, seed, arm["objective"] == "random-labels", task, weights,
                                                 progress=bar.update)
            else:
                arms[arm["name"]] = train_arm(corpus, arm, sc, seed, progress=bar.update)
        state["seeds"].append({"seed": seed, "arms": arms, "contrast": contrast_of(analog, arms)})
        if scale != "smoke":
            write_atomic(partial_path, json.dumps(state, indent=1))
    bar.close()
    params = max(r["parameters"] for s in state["seeds"] for r in s["arms"].values())
    outcome, reason, iv, pw = decide(config, state["seeds"])
    doc = {"schema": SCHEMA_ID, "claim": claim, "not_a_verdict": True,
           "preregistered": state["preregistered"], "config_sha256": digest, "config": config,
           "quantity": config["quantity"], "decision_rule": config["decision_rule"],
           "scale": _scale_sentence(config, params, config["corpus"], device, torch.get_num_threads()),
           "seeds": sorted(state["seeds"], key=lambda s: s["seed"]), "interval": iv, "power": pw,
           "outcome": outcome, "outcome_reason": reason, "environment": _environment(),
           "completed": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")}
    if write and scale != "smoke":
        path = result_path(root, claim, state["preregistered"][:10], device, digest)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        doc["path"] = str(path)
    return doc


def main_threads() -> None:
    """Honour ``OMP_NUM_THREADS`` for torch's intra-op pool (the evidence states the threads it ran on)."""
    import torch

    n = os.environ.get("OMP_NUM_THREADS")
    if n and n.isdigit():
        torch.set_num_threads(int(n))
