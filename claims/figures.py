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

Each figure also carries sampled points (:func:`sampled_sparsity`): the sparsity of an actual
attention vector ``a_j = f(q . k_j)`` over ``N`` keys ``k_j ~ N(mu, sigma^2 I_d)``, drawn as error
bars of a stated number of standard errors, so the curves are checked against simulation and
not only against other formulas.
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
_F = {"relu2": lambda x: np.maximum(x, 0.0) ** 2, "identity": lambda x: x}
SAMPLE_GAMMAS = (0.5, 1.0, 2.0, 4.0)


def sampled_sparsity(kind: str, beta: float, gamma: float, *, n: int, d: int = 4,
                     rng: np.random.Generator) -> tuple[float, float, int]:
    """The l1/l2 sparsity ``S(a) = mean|a| / sqrt(mean a^2)`` of one sampled attention vector
    ``a_j = f(q . k_j)``, ``j = 1..n``, with ``k_j ~ N(mu, sigma^2 I_d)`` and ``q``, ``mu``,
    ``sigma`` chosen so that ``q . mu = beta`` and ``sigma ||q|| = gamma`` (004 "简化形式": then
    ``S(a) -> `` the curve's value as ``n -> infinity``), in float64.

    Returns ``(S_hat, se, nonzero)``: the estimate, its delta-method standard error
    (``sqrt(g^T Cov g / n)`` with ``g`` the gradient of ``m1 / sqrt(m2)`` at the sample moments
    ``m1 = mean|a|``, ``m2 = mean a^2``), and how many ``a_j`` are non-zero.

    Raises:
        AttentionInputError: unknown ``kind``, ``gamma <= 0``, ``n < 2`` or ``d < 1``.
    """
    if kind not in _F:
        raise AttentionInputError(f"kind: unknown {kind!r} (one of {', '.join(_F)})")
    if not gamma > 0 or n < 2 or d < 1:
        raise AttentionInputError(f"sampled_sparsity: need gamma > 0, n >= 2, d >= 1; got {gamma!r}, {n!r}, {d!r}")
    q = rng.standard_normal(d)
    u = rng.standard_normal(d)
    u -= (u @ q) / (q @ q) * q  # a direction orthogonal to q: mu's free part
    mu = beta * q / (q @ q) + u
    sigma = gamma / float(np.linalg.norm(q))
    keys = mu + sigma * rng.standard_normal((n, d))
    a = _F[kind](keys @ q)
    x1, x2 = np.abs(a), a * a
    m1, m2 = float(x1.mean()), float(x2.mean())
    if m2 == 0.0:
        return float("nan"), float("inf"), 0
    cov = np.cov(np.stack([x1, x2]))
    g = np.array([1 / np.sqrt(m2), -m1 / (2 * m2 ** 1.5)])
    return m1 / np.sqrt(m2), float(np.sqrt(g @ cov @ g / n)), int(np.count_nonzero(a))
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


def plot_sparsity_figure(kind: str, path: Path | str, betas=None, gammas=GAMMAS, samples=(),
                         z: float = 5.0) -> list[tuple[float, np.ndarray, np.ndarray]]:
    """Draw the figure for ``kind`` and save it as PNG at ``path`` (parent folders created).

    ``samples`` is an iterable of ``(beta, gamma, S_hat, se)`` (see :func:`sampled_sparsity`),
    drawn as points with error bars of ``z`` standard errors in the colour of their curve.

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
    colours = {}
    for b, s in curves.items():
        (line,) = ax.plot(np.asarray(gammas, dtype=np.float64), s, label=f"β = {b:g}", gid=f"beta={b!r}")
        colours[b] = line.get_color()
    for b, g, s_hat, se in samples:
        ax.errorbar([g], [s_hat], yerr=[z * se], fmt="o", ms=3, capsize=2, color=colours.get(float(b), "k"),
                    gid=f"sample beta={float(b)!r}")
    if samples:
        ax.plot([], [], "ko", ms=3, label=f"sampled a (±{z:g} s.e.)", gid="legend-sample")
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
        gid = line.get_gid() or ""
        if not gid.startswith("beta="):
            continue
        beta = float(gid.split("=", 1)[1])
        x, y = line.get_xydata().T
        drawn.append((beta, np.array(x), np.array(y)))
    return drawn
