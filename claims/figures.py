"""Reproductions of the two figures of kexue.fm/archives/9889 (source document 004; repost 001):

- "relu2注意力的稀疏程度曲线图": ``S`` of ``f = relu^2`` (GAU) against ``gamma = sigma ||q||`` for
  several ``beta = q . mu`` (004 "两个例子", the Mathematica closed form);
- "极简线性注意力的稀疏程度曲线图": ``S`` of ``f = identity`` against ``gamma`` for several
  ``beta >= 0`` (004 "极简线性").

The post's images are not part of the text, so the ``beta`` values and the ``gamma`` range are
chosen here (:data:`RELU2_BETAS`, :data:`IDENTITY_BETAS`, :data:`GAMMAS`). The curves are the
post's closed forms (:func:`claims.sparsity.s_relu2`, :func:`claims.sparsity.s_identity`),
evaluated in mpmath (the printed ``relu^2`` form cancels catastrophically in float64 for
``beta << 0``), drawn with matplotlib's non-interactive Agg backend.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .attention import AttentionInputError
from .sparsity import s_identity, s_relu2

RELU2_BETAS = (-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0)
IDENTITY_BETAS = (0.0, 0.5, 1.0, 2.0, 4.0)
GAMMAS = tuple(float(g) for g in np.linspace(0.02, 5.0, 100))

_FORMS = {"relu2": s_relu2, "identity": s_identity}
_TITLES = {"relu2": "relu² attention (GAU): S vs γ", "identity": "plain linear attention (f = identity): S vs γ"}


def sparsity_curves(kind: str, betas, gammas) -> dict[float, np.ndarray]:
    """``{beta: S(beta, gammas)}`` from the post's closed form for ``kind`` (``relu2`` or
    ``identity``); each value is a float64 array of shape ``(len(gammas),)``.

    Raises:
        AttentionInputError: unknown ``kind``, or a ``gamma <= 0``.
    """
    if kind not in _FORMS:
        raise AttentionInputError(f"kind: unknown {kind!r} (one of {', '.join(_FORMS)})")
    form = _FORMS[kind]
    return {float(b): np.array([float(form(b, g)) for g in gammas]) for b in betas}


def plot_sparsity_figure(kind: str, path: Path | str, betas=None, gammas=GAMMAS) -> list[tuple[float, np.ndarray,
                                                                                                    np.ndarray]]:
    """Draw the figure for ``kind`` and save it as PNG at ``path`` (parent folders created).

    Returns what was actually plotted, read back from the figure's ``Line2D`` objects:
    ``[(beta, gamma (m,), S (m,)), ...]``, so a check compares the drawn curves, not the inputs.

    Raises:
        AttentionInputError: unknown ``kind`` or bad ``gammas``.
    """
    import matplotlib

    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure

    if betas is None:
        betas = RELU2_BETAS if kind == "relu2" else IDENTITY_BETAS
    curves = sparsity_curves(kind, betas, gammas)
    fig = Figure(figsize=(6.4, 4.2), dpi=110)
    ax = fig.add_subplot()
    for b, s in curves.items():
        ax.plot(np.asarray(gammas, dtype=np.float64), s, label=f"β = {b:g}", gid=f"beta={b!r}")
    ax.set_xlabel("γ = σ‖q‖")
    ax.set_ylabel("S(a)")
    ax.set_ylim(0, 1.02)
    ax.set_title(_TITLES[kind])
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    drawn = []
    for line in ax.get_lines():
        beta = float(line.get_gid().split("=", 1)[1])
        x, y = line.get_xydata().T
        drawn.append((beta, np.array(x), np.array(y)))
    return drawn
