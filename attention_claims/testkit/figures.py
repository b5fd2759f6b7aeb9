"""Figures the checks draw (matplotlib), attached to a reading through ``CheckLog.figure``.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from .. import _files
from ..maths.sparsity import GAMMAS, IDENTITY_BETAS, RELU2_BETAS, sparsity_curves


def plot_sparsity_figure(kind: str, path: Path | str, betas=None, gammas=GAMMAS, samples=(),
                         z: float = 5.0) -> list[tuple[float, np.ndarray, np.ndarray]]:
    """Draw the figure for ``kind`` and save it as PNG at ``path`` (parent folders created).

    The curves are the closed forms of kexue.fm/archives/9889 (the sparsity figure: S against
    ``gamma = sigma ||q||`` for several ``beta = q . mu``), evaluated by
    :func:`attention_claims.maths.sparsity.sparsity_curves`. ``samples`` is an iterable of
    ``(beta, gamma, S_hat, se)`` (see :func:`attention_claims.maths.sparsity.sampled_sparsity`),
    drawn as points with error bars of ``z`` standard errors in the colour of their curve.
    Attach the file to the reading with :meth:`attention_claims.framework.evidence.CheckLog.figure`.

    Args:
        kind: ``"relu2"`` (relu² attention, GAU) or ``"identity"`` (plain linear attention).
        path: the image file to write (its suffix picks the format; ``.png`` in the checks).
        betas: the curves' beta values (unitless); ``None`` for the post's own
            (:data:`attention_claims.maths.sparsity.RELU2_BETAS` or ``IDENTITY_BETAS``).
        gammas: the grid of gamma (``> 0``, unitless) along each curve, length m (default: the post's
            100 points from 0.02 to 5).
        samples: sampled points ``(beta, gamma, S_hat, se)`` to draw over the curves.
        z: the error bars' half-width, in standard errors.

    Returns:
        What was actually plotted, read back from the figure's ``Line2D`` objects:
        ``[(beta, gamma (m,) float64, S (m,) float64), ...]``, one per curve in the order of ``betas``, so a
        check compares the drawn curves, not the inputs.

    Raises:
        AttentionInputError: unknown ``kind`` or bad ``gammas`` (a ``ValueError``).
        OSError: ``path`` cannot be written.

    Examples:
        >>> import pathlib, tempfile
        >>> from attention_claims.testkit import plot_sparsity_figure
        >>> tmp = tempfile.TemporaryDirectory()
        >>> png = pathlib.Path(tmp.name) / "figures" / "relu2.png"
        >>> drawn = plot_sparsity_figure("relu2", png, betas=[0.5, 1.0], gammas=[0.5, 1.0, 2.0])
        >>> [(beta, gamma.shape, S.shape) for beta, gamma, S in drawn], png.stat().st_size > 0
        ([(0.5, (3,), (3,)), (1.0, (3,), (3,))], True)
        >>> plot_sparsity_figure("cubic", png)
        Traceback (most recent call last):
            ...
        attention_claims.maths.arrays.AttentionInputError: kind: unknown 'cubic' (one of relu2, identity)
        >>> tmp.cleanup()
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
    buf = io.BytesIO()  # drawn in memory, then written through the package's one write primitive
    fig.savefig(buf, format=out.suffix.lstrip(".").lower() or "png")
    _files.write_file(out, buf.getvalue())
    drawn = []
    for line in ax.get_lines():
        gid = line.get_gid() or ""
        if not gid.startswith("beta="):
            continue
        beta = float(gid.split("=", 1)[1])
        x, y = line.get_xydata().T
        drawn.append((beta, np.array(x), np.array(y)))
    return drawn


_TITLES = {"relu2": "relu² attention (GAU): S vs γ", "identity": "plain linear attention (f = identity): S vs γ"}
