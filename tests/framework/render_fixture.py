"""A small report and source document for the renderer tests (every verdict, every plot kind)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT / "sources"

DOC = "003_a0ad15dda516ed1d.txt"
DOC_TEXT = """## 11.3 注意力矩阵的低秩结构
然而，标准的自注意力计算需要$O(N^2)$ 的时间和空间复杂度，其中$N$是序列长度。这是一句普通的话。

**定义 11.24（注意力矩阵）** 注意力权重矩阵$\\mathbf{A} \\in \\mathbb{R}^{N \\times N}$定义为：
$$
\\mathbf{A} = \\text{softmax}\\left(\\frac{\\mathbf{Q}\\mathbf{K}^{\\top}}{\\sqrt{d_k}}\\right)
$$其中$d_k$是键向量的维度。

- **快速初期衰减**：前几个奇异值迅速下降。
- 注意力矩阵的秩满足$\\operatorname{rank}(\\mathbf{A}) \\le d$。

| 模型 | 有效秩 |
| --- | --- |
| Base | ~150 |

作者认为这很有趣。
"""


def _reading(name, outcome, *, as_stated=False, cx=None, condition=None, figures=(), plots=()):
    return {"name": name, "as_stated": as_stated, "statement": f"reading {name} with $x^2 \\ge 0$",
            "condition": condition or {}, "outcome": outcome, "checks": [f"checks/test_x.py::test_{name}"],
            "examples": 7, "evidence": "7 examples; N in [2, 5]." + (f" Counterexample: {cx['message']}" if cx else ""),
            "counterexample": cx, "certified": bool(cx and cx.get("certified")), "figures": list(figures),
            "plots": list(plots)}


def _cx(message, certified=True, boundary=None):
    return {"message": message, "example": {"N": 2, "C": [[0, 0], [0, 0]]}, "certified": certified,
            "certificate": "exact rational arithmetic", "boundary": boundary,
            "reproduce": "python -m pytest checks/test_x.py::test_exact -n 0 --hypothesis-profile=ci"}


def plot_specs() -> list[dict]:
    """One plot spec of each kind, with small synthetic data."""
    rng = np.random.default_rng(0)
    x = np.linspace(0.1, 3, 20)
    return [
        {"kind": "layer_head_heatmap", "data": {"model": "toy", "N": 16, "measures": {
            "eff_rank_90": rng.integers(1, 16, (4, 3)).tolist(), "energy_top10": rng.random((4, 3)).tolist(),
            "numerical_rank": rng.integers(8, 17, (4, 3)).tolist()}}},
        {"kind": "spectra", "data": {"spectra": {f"layer {i}": sorted(rng.random(16) ** (i + 1), reverse=True)
                                                 for i in range(3)}, "claimed_alpha": 1.5}},
        {"kind": "rank_breaks", "data": {"breaks": [{"dtype": "float16", "device": "cpu", "gap": 8.3},
                                                    {"dtype": "float32", "device": "cpu", "gap": 16.6}],
                                         "thresholds": {"float16": 7.6, "float32": 15.9}}},
        {"kind": "sparsity_curve", "data": {"x": x.tolist(), "closed_form": (1 / np.sqrt(1 + x**2)).tolist(),
                                            "quadrature": (1 / np.sqrt(1 + x**2)).tolist(), "mc_x": [0.5, 1.5],
                                            "mc_y": [0.9, 0.55], "mc_err": [0.02, 0.03]}},
        {"kind": "decay_sparsity", "data": {"n": [10, 100, 1000], "S": {"lambda = 0.9": [0.8, 0.4, 0.13]}}},
        {"kind": "curve", "data": {"x": [1, 2, 3], "series": {"y": [1, 4, 9]}, "title": "a curve"}},
        # the forms the checks emit: per-layer spectra at log-spaced indices with reference lines (test_trained),
        # one curve per beta with quadrature and Monte Carlo points (test_sparsity), decay with closed form and
        # bound (test_sparsity_linear)
        {"kind": "spectra", "data": {"spectra": {f"L{i}": (np.arange(1, 9.0) ** -(i + 1.0)).tolist() for i in range(12)},
                                     "index": [1, 2, 3, 4, 5, 6, 7, 8], "claimed_alpha": 1, "claimed_c": 1.0,
                                     "vlines": {"claimed effective rank ~5": 5}, "title": "toy, N = 8: per layer",
                                     "ylabel": "mean over heads of sigma_i / sigma_1"}},
        {"kind": "sparsity_curve", "data": {
            "x": x.tolist(), "closed_form": {f"β = {b:g}": (1 / np.sqrt(1 + (x + b) ** 2)).tolist() for b in (0, 1)},
            "quadrature": {"β = 0": [1 / np.sqrt(2)]}, "quad_x": {"β = 0": [1.0]},
            "mc_x": {"β = 1": [0.5]}, "mc_y": {"β = 1": [0.55]}, "mc_err": {"β = 1": [0.05]}, "xlabel": "γ"}},
        {"kind": "decay_sparsity", "data": {"n": [1, 2, 4], "S": {"λ = 0.5": [1.0, 0.95, 0.8]},
                                            "closed_form": {"λ = 0.5": [1.0, 0.95, 0.8]},
                                            "bound": {"λ = 0.5": [None, 1.2, 0.9]}}},
    ]


def fixture_report(figure_path: str | None = None) -> dict:
    """A schema-1 report of 5 claims (false, caveat, true, unchecked, undecided) quoting :data:`DOC`."""
    figs = [{"path": figure_path, "caption": "a figure with $S$ against $\\gamma$", "check": "c"}] if figure_path else []
    claims = [
        {"id": "toy-false", "title": "Quadratic time and memory", "verdict": "false", "expected": "false",
         "agrees": True, "statement": "Attention needs $O(N^2)$ time.", "formal": "T(N) = \\Theta(N^2)",
         "reason": "the as-stated reading 'exact' has a certified counterexample. exact: N = 2 breaks it",
         "source": {"document": DOC, "section": "11.3", "quote": "然而，标准的自注意力计算需要$O(N^2)$ 的时间和空间复杂度，其中$N$是序列长度。"},
         "also_in": [], "unchecked_reason": None, "notes": "A **bold** note.", "record": "r.toml",
         "readings": [_reading("exact", "failed", as_stated=True, cx=_cx("N = 2 breaks it"), plots=plot_specs()[:3]),
                      _reading("cpu-float32", "held", condition={"dtype": "float32", "device": "cpu"})],
         "errors": []},
        {"id": "toy-caveat", "title": "Definition 11.24", "verdict": "caveat", "expected": "caveat", "agrees": True,
         "statement": "A is softmax of the scaled logits.", "formal": "A = \\mathrm{softmax}(QK^\\top/\\sqrt{d_k})",
         "reason": "the as-stated reading holds, but these fail: cuda-float16. cuda-float16: overflow above 11.1",
         "source": {"document": DOC, "section": "11.3.1", "quote": "**定义 11.24（注意力矩阵）** 注意力权重矩阵$\\mathbf{A} \\in \\mathbb{R}^{N \\times N}$定义为："},
         "also_in": [], "unchecked_reason": None, "notes": None, "record": "r.toml",
         "readings": [_reading("exact", "held", as_stated=True, figures=figs),
                      _reading("cuda-float16", "failed", condition={"dtype": "float16", "device": "cuda"},
                               cx=_cx("row sums are NaN", boundary="overflow above 11.1"), plots=plot_specs()[3:])],
         "errors": []},
        {"id": "toy-true", "title": "Rank at most d", "verdict": "true", "expected": "true", "agrees": True,
         "statement": "rank is at most d", "formal": "\\operatorname{rank}(A) \\le d", "reason": "every reading held",
         "source": {"document": DOC, "section": "11.3.2", "quote": "注意力矩阵的秩满足$\\operatorname{rank}(\\mathbf{A}) \\le d$。"},
         "also_in": [], "unchecked_reason": None, "notes": None, "record": "r.toml",
         "readings": [_reading("exact", "held", as_stated=True),
                      _reading("on-minilm-l6-at-n-512", "held", condition={"condition": "all-MiniLM-L6-v2, N = 512"})],
         "errors": []},
        {"id": "toy-unchecked", "title": "Fast initial decay", "verdict": "unchecked", "expected": "unchecked",
         "agrees": True, "statement": "Singular values drop fast.", "formal": None,
         "reason": "a claim about trained models' training; no computation decides it",
         "source": {"document": DOC, "section": "11.3.3", "quote": "**快速初期衰减**：前几个奇异值迅速下降。"},
         "also_in": [], "unchecked_reason": "a claim about trained models' training; no computation decides it",
         "notes": None, "record": "r.toml", "readings": [], "errors": []},
        {"id": "toy-paper", "title": "A paper's theorem", "verdict": "true", "expected": "true", "agrees": True,
         "statement": "From the paper.", "formal": None, "reason": "every reading held",
         "source": {"document": "arXiv:2006.04768", "section": "Theorem 1", "quote": "For any $A$ there is ..."},
         "also_in": [], "unchecked_reason": None, "notes": None, "record": "r.toml",
         "readings": [_reading("exact", "held", as_stated=True)], "errors": []},
    ]
    total = {v: sum(c["verdict"] == v for c in claims) for v in ("true", "false", "caveat", "unchecked", "undecided")}
    return {"schema": 1, "generated": "2026-01-01T00:00:00+00:00",
            "environment": {"python": "3.11", "torch": "2.13.0", "devices": ["cpu"], "hypothesis_profile": "ci"},
            "run": {"complete": True, "partial": False, "interrupted": False, "exitstatus": 0, "errors": []},
            "counts": {"total": total, "by_document": {DOC: {**total, "true": 1}, "arXiv:2006.04768":
                                                       {"true": 1, "false": 0, "caveat": 0, "unchecked": 0,
                                                        "undecided": 0}}},
            "claims": claims}


def real_report() -> tuple[dict, Path] | None:
    """``(report, its folder)`` of a complete full run if one is on this machine (``$ATTENTION_CLAIMS_REPORT``,
    ``reports/claims.json``), else None."""
    candidates = [os.environ.get("ATTENTION_CLAIMS_REPORT"), ROOT / "reports" / "claims.json"]
    for c in candidates:
        if c and Path(c).is_file():
            try:
                report = json.loads(Path(c).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if report.get("run", {}).get("complete") and len(report.get("claims", [])) > 100:
                return report, Path(c).parent
    return None


def real_sources() -> dict[str, str]:
    """The five source documents from the repository's ``sources/`` ({} when absent)."""
    if not SEEDS.is_dir():
        return {}
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(SEEDS.glob("*.txt"))}
