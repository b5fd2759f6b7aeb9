"""Rank collapse with depth: the residual ``res(X) = X - 1 x^T`` of pure-attention stacks.

Dong, Cordonnier & Loukas 2021, "Attention is Not All You Need: Pure Attention Loses Rank
Doubly Exponentially with Depth" (arXiv:2103.03404), §2: ``res(X) = X - 1 x^T`` with
``x = argmin_x ||X - 1 x^T||``. Here the norm is Frobenius, whose minimiser is the column mean,
and the *relative* residual ``r(X) = ||res(X)||_F / ||X||_F`` (dimensionless, scale free) is
reported. A layer is ``X -> softmax(X Wq (X Wk)^T / sqrt(dk)) X Wv`` (their eq. (1), one head),
optionally with a skip connection ``X -> X + Attn(X)`` (their §3) and optionally followed by a
token-wise ReLU MLP ``x -> relu(x W1) W2`` (their §3, "MLPs"; the MLP's Lipschitz constant is what
their corollary for SANs with MLPs depends on).

Computed at ``dps`` digits (python-flint arb matrices at mpmath's working precision for ``dps``
digits, reported as the balls' midpoints, so one rounding per operation as in mpmath, in C) so that a
doubly exponential decay stays visible far below float64's 1e-16 floor.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
from flint import arb, arb_mat, fmpq

from .arrays import AttentionInputError, as_array, as_int
from .attention import arb_softmax_rows
from .exact import arb_matrix, arb_mid_to_mpf, mp_matrix, precision


def relative_residual(X) -> mpmath.mpf:
    """``||X - 1 xbar^T||_F / ||X||_F`` with ``xbar`` the column mean (the Frobenius minimiser),
    for an mpmath or NumPy ``(N, D)`` matrix; 0 for a rank-1 matrix of identical rows.

    Raises:
        AttentionInputError: empty, non-finite or all-zero input.
    """
    M = X if isinstance(X, mpmath.matrix) else mp_matrix(X, "X")
    N, D = M.rows, M.cols
    if N == 0 or D == 0:
        raise AttentionInputError("X: empty matrix")
    mean = [mpmath.fsum(M[i, j] for i in range(N)) / N for j in range(D)]
    num = mpmath.fsum((M[i, j] - mean[j]) ** 2 for i in range(N) for j in range(D))
    den = mpmath.fsum(M[i, j] ** 2 for i in range(N) for j in range(D))
    if den == 0:
        raise AttentionInputError("relative_residual: X is zero (ratio undefined)")
    return mpmath.sqrt(num / den)


def attention_stack_residuals(X0, weights, *, skip: bool = False, mlps=None, dps: int = 200) -> list[mpmath.mpf]:
    """Relative residuals ``[r(X_0), r(X_1), ..., r(X_L)]`` of a single-head attention stack.

    ``X0`` is ``(N, D)``; ``weights`` is a list of ``(Wq, Wk, Wv)``, each ``(D, dk)``, ``(D, dk)``,
    ``(D, D)`` float arrays (converted exactly). ``skip`` adds the identity path. Computed at
    ``dps`` decimal digits (Dong et al. 2021 §2, eq. (1); skip connections §3): python-flint arb
    matrices at the precision mpmath uses for ``dps`` digits, each residual from the midpoints with
    exact column means and sums of squares rounded once; returned as mpmath numbers at ``dps`` digits.

    ``mlps`` (optional, one per layer) is a list of ``(W1, W2)``, ``(D, h)`` and ``(h, D)`` float arrays:
    after the attention of layer ``l``, every token goes through ``x -> relu(x W1) W2`` (Dong et al. 2021
    §3, "MLPs"; no biases), with the identity path ``X -> X + MLP(X)`` when ``skip``.

    Raises:
        AttentionInputError: bad shapes, non-finite input, ``mlps`` not one per layer, or an all-zero
            X along the way (for instance an MLP that switches every ReLU unit off: the relative
            residual of a zero matrix is undefined).
    """
    x0 = as_array(X0, "X0")
    if mlps is not None and len(mlps) != len(weights):
        raise AttentionInputError(f"attention_stack_residuals: {len(mlps)} MLPs for {len(weights)} layers")
    # Computed with python-flint arb matrices at the working precision of ``dps`` digits (the bits
    # mpmath uses for them) and reported as the balls' midpoints: every operation is one rounding
    # at that precision, as it was in mpmath, but in C instead of Python (about 30x faster at 300 digits).
    N, D = x0.shape
    with precision(mpmath.libmp.dps_to_prec(dps)):
        X = arb_matrix(x0, "X0")
        out = [_arb_relative_residual(X)]
        for layer, (Wq, Wk, Wv) in enumerate(weights):
            wq, wk, wv = as_array(Wq, "Wq"), as_array(Wk, "Wk"), as_array(Wv, "Wv")
            if not (wq.shape[0] == wk.shape[0] == wv.shape[0] == D == wv.shape[1]
                    and wq.shape[1] == wk.shape[1]):
                raise AttentionInputError(f"attention_stack_residuals: weight shapes Wq {wq.shape}, Wk {wk.shape}, "
                                          f"Wv {wv.shape} do not fit X {x0.shape}")
            scale = 1 / arb(wq.shape[1]).sqrt()
            P = arb_softmax_rows((X * arb_matrix(wq)) * (X * arb_matrix(wk)).transpose() * scale)
            Y = P * X * arb_matrix(wv)
            X = X + Y if skip else Y
            if mlps is not None:
                Y = _relu_mlp(X, *mlps[layer], D=D)
                X = X + Y if skip else Y
            out.append(_arb_relative_residual(X))
        with mpmath.workdps(dps):
            return [arb_mid_to_mpf(num) for num in out]


def _exact_sum(xs) -> fmpq:
    """The sum of the midpoints of ``xs`` (arb balls), exactly."""
    tot = fmpq(0)
    for x in xs:
        man, exp = x.mid().man_exp()
        tot += fmpq(int(man)) * fmpq(2) ** int(exp)
    return tot


def _arb_relative_residual(X: arb_mat) -> arb:
    """``sqrt(||X - 1 xbar^T||_F^2 / ||X||_F^2)`` of the midpoints of an arb matrix at the current
    precision: column means and both sums of squares exact and then rounded once (so identical rows
    give exactly 0), differences and squares rounded once each.

    Raises:
        AttentionInputError: X is zero (ratio undefined).
    """
    N, D = X.nrows(), X.ncols()
    cols = [[X[i, j].mid() for i in range(N)] for j in range(D)]
    means = [arb(_exact_sum(col) / N) for col in cols]
    num = arb(_exact_sum(((v - m).mid() ** 2).mid() for col, m in zip(cols, means, strict=True) for v in col))
    den = arb(_exact_sum((v**2).mid() for col in cols for v in col))
    if den.mid() == 0:
        raise AttentionInputError("relative_residual: X is zero (ratio undefined)")
    return (num.mid() / den.mid()).sqrt().mid()


def _relu_mlp(X: arb_mat, W1, W2, *, D: int) -> arb_mat:
    """``relu(X W1) W2`` row by row, at the current precision (``W1``: ``(D, h)``, ``W2``: ``(h, D)``);
    an entry is switched off when its midpoint is negative."""
    w1, w2 = as_array(W1, "W1"), as_array(W2, "W2")
    if not (w1.shape[0] == D == w2.shape[1] and w1.shape[1] == w2.shape[0]):
        raise AttentionInputError(f"attention_stack_residuals: MLP weight shapes W1 {w1.shape}, W2 {w2.shape} "
                                  f"do not fit X (D = {D})")
    H = X * arb_matrix(w1)
    for i in range(H.nrows()):
        for j in range(H.ncols()):
            if H[i, j].mid() < 0:
                H[i, j] = arb(0)
    return H * arb_matrix(w2)


def convergence_orders(residuals, *, below: float = 1e-3) -> list[float]:
    """Local convergence orders ``log r_{l+1} / log r_l`` for the layers where ``0 < r_l < below``
    (an order ``p`` means ``r_{l+1} ~ r_l^p``; doubly exponential decay with base 3 has ``p -> 3``,
    Dong et al. 2021 Theorem 2.2's exponent ``3^L``).

    Shapes: ``residuals (L + 1,)`` (dimensionless relative residuals, as
    :func:`attention_stack_residuals` returns them; floats or mpf); returns at most ``L`` float scalars,
    one per qualifying layer, in layer order.

    Raises:
        AttentionInputError: ``below`` not in (0, 1).
    """
    if not (0 < below < 1):
        raise AttentionInputError(f"convergence_orders: below must be in (0, 1), got {below!r}")
    out = []
    for a, b in zip(residuals, residuals[1:], strict=False):
        if 0 < a < below and b > 0:
            out.append(float(mpmath.log(b) / mpmath.log(a)))
    return out


def random_stack(rng: np.random.Generator, L: int, D: int, dk: int, scale: float) -> list:
    """``L`` layers of Gaussian weights with entries ``N(0, scale^2 / D)`` (the ``1/sqrt(D)`` variance
    scaling of LeCun et al. 1998, "Efficient BackProp"): a list of ``L`` float64 NumPy triples
    ``(Wq, Wk, Wv)`` of shapes ``(D, dk)``, ``(D, dk)``, ``(D, D)``, dimensionless, drawn from ``rng``
    (the stacks of :func:`attention_stack_residuals`, Dong et al. 2021 §2).

    Raises:
        AttentionInputError: non-positive sizes or scale.
    """
    L, D, dk = as_int(L, "L"), as_int(D, "D"), as_int(dk, "dk")
    if not (scale > 0 and math.isfinite(scale)):
        raise AttentionInputError(f"scale: must be finite and > 0, got {scale!r}")
    g = lambda *s: rng.standard_normal(s) * scale / math.sqrt(D)  # noqa: E731
    return [(g(D, dk), g(D, dk), g(D, D)) for _ in range(L)]


def relu_mlp(rng: np.random.Generator, D: int, *, lipschitz: float, hidden: int | None = None) -> tuple:
    """Weights ``(W1, W2)`` of a bias-free token-wise MLP ``x -> relu(x W1) W2`` (``W1``: ``(D, h)``,
    ``W2``: ``(h, D)``, float64 NumPy, ``h = hidden`` or ``4 D``, the usual transformer width ratio)
    whose Lipschitz constant (Euclidean norm on tokens) is at most ``lipschitz``: Gaussian entries, each
    matrix then scaled to spectral norm ``sqrt(lipschitz) (1 - 2^-40)``, since ``relu`` is 1-Lipschitz and
    ``Lip(x -> relu(x W1) W2) <= ||W1||_2 ||W2||_2``. Such an MLP is positively homogeneous, so it maps
    identical tokens to identical tokens (a rank-1 ``X`` stays rank 1). Dimensionless.

    Raises:
        AttentionInputError: ``D`` or ``hidden`` below 1, or ``lipschitz`` not finite and positive.
    """
    D = as_int(D, "D")
    h = 4 * D if hidden is None else as_int(hidden, "hidden")
    if not (lipschitz > 0 and math.isfinite(lipschitz)):
        raise AttentionInputError(f"lipschitz: must be finite and > 0, got {lipschitz!r}")
    target = math.sqrt(lipschitz) * (1 - 2.0**-40)
    W1, W2 = rng.standard_normal((D, h)), rng.standard_normal((h, D))
    return W1 * (target / np.linalg.norm(W1, 2)), W2 * (target / np.linalg.norm(W2, 2))
