"""Feature maps, random features and random projections: the kernel view of attention.

Shapes: ``X (N, d)`` rows are tokens; random frequencies ``omega (m, d)``. All quantities are
dimensionless. Sources:

- linear attention ``phi(Q) phi(K)^T``: Katharopoulos et al. 2020 (arXiv:2006.16236) §3.2,
  elu+1 their eq. (7); 002 "低秩问题" (rank at most d without a mask).
- positive random features for the softmax kernel ``exp(x.y)``:
  ``phi(x) = exp(omega.x - |x|^2/2) / sqrt(m)``, ``omega ~ N(0, I_d)``: Choromanski et al. 2021,
  "Rethinking Attention with Performers" (arXiv:2009.14794), Lemma 1 (positive random features),
  and the trigonometric features ``exp(|x|^2/2) [sin(omega.x), cos(omega.x)] / sqrt(m)`` (their eq. (2)
  with the Gaussian-kernel identity ``SM(x, y) = exp(|x|^2/2) K_gauss(x, y) exp(|y|^2/2)``).
- Linformer: ``head = softmax(Q (E K)^T / sqrt(d)) (F V)``, ``E, F`` of shape ``(k, N)``:
  Wang et al. 2020 (arXiv:2006.04768) §4 eq. (7); Theorem 1's ``P~ = P R^T R``,
  ``R (k, N)`` i.i.d. ``N(0, 1/k)``, ``k = 5 log(n) / (eps^2 - eps^3)`` (their proof of Theorem 1).
- the Johnson–Lindenstrauss tail: ``|Rx|^2 / |x|^2 ~ chi^2_k / k`` for Gaussian ``R`` with
  ``N(0, 1/k)`` entries (Dasgupta & Gupta 2003, "An elementary proof of a theorem of Johnson and
  Lindenstrauss", Random Struct. Alg. 22(1), Lemma 2.2 and Theorem 2.1).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

from .attention import AttentionInputError


def _arr(x, name: str, ndim: int = 2) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != ndim or a.size == 0:
        raise AttentionInputError(f"{name}: expected a non-empty {ndim}-D array, got shape {a.shape}")
    if not np.isfinite(a).all():
        raise AttentionInputError(f"{name}: contains NaN or Inf")
    return a


def arb_feature(name: str, x):
    """Certified enclosure (python-flint ``arb``) of the elementwise feature map ``name`` at the
    float ``x`` (exactly converted): ``identity``, ``relu``, ``elu+1`` (``x + 1`` for ``x >= 0``,
    ``e^x`` for ``x < 0``; Katharopoulos et al. 2020 eq. (7)) or ``exp``.

    Raises:
        AttentionInputError: unknown feature map or non-finite ``x``.
    """
    from flint import arb

    v = float(x)
    if not math.isfinite(v):
        raise AttentionInputError(f"arb_feature: x = {x!r} is not finite")
    a = arb(v)
    if name == "identity":
        return a
    if name == "relu":
        return a if v > 0 else arb(0)
    if name == "elu+1":
        return a + 1 if v >= 0 else a.exp()
    if name == "exp":
        return a.exp()
    raise AttentionInputError(f"arb_feature: unknown feature map {name!r}")


def arb_kernel_diagonal(name: str, Q, K) -> list:
    """Enclosures of ``phi(q_i) . phi(k_i)`` for ``i < N`` (the diagonal of the causal linear
    attention matrix before normalisation). ``Q, K`` are ``(N, d)``.

    Raises:
        AttentionInputError: shapes differ, non-finite input, unknown map.
    """
    from flint import arb

    q, k = _arr(Q, "Q"), _arr(K, "K")
    if q.shape != k.shape:
        raise AttentionInputError(f"Q, K: shapes differ {q.shape} vs {k.shape}")
    out = []
    for qi, ki in zip(q, k, strict=True):
        acc = arb(0)
        for a, b in zip(qi, ki, strict=True):
            acc += arb_feature(name, a) * arb_feature(name, b)
        out.append(acc)
    return out


def positive_random_features(X, omega) -> np.ndarray:
    """Performer positive random features ``exp(omega_r . x - |x|^2/2) / sqrt(m)``, shape ``(N, m)``
    (Choromanski et al. 2021, Lemma 1). ``phi(x) . phi(y)`` is an unbiased estimate of ``exp(x.y)``.

    Raises:
        AttentionInputError: bad shapes or non-finite input.
    """
    x, w = _arr(X, "X"), _arr(omega, "omega")
    if x.shape[1] != w.shape[1]:
        raise AttentionInputError(f"X, omega: dimensions differ ({x.shape[1]} vs {w.shape[1]})")
    return np.exp(x @ w.T - 0.5 * np.sum(x * x, axis=1, keepdims=True)) / math.sqrt(w.shape[0])


def trig_random_features(X, omega) -> np.ndarray:
    """Trigonometric random features for ``exp(x.y)``: ``exp(|x|^2/2) [cos, sin](omega . x) / sqrt(m)``,
    shape ``(N, 2m)`` (Choromanski et al. 2021 eq. (2) with the Gaussian-kernel identity).

    Raises:
        AttentionInputError: bad shapes or non-finite input.
    """
    x, w = _arr(X, "X"), _arr(omega, "omega")
    if x.shape[1] != w.shape[1]:
        raise AttentionInputError(f"X, omega: dimensions differ ({x.shape[1]} vs {w.shape[1]})")
    p = x @ w.T
    s = np.exp(0.5 * np.sum(x * x, axis=1, keepdims=True)) / math.sqrt(w.shape[0])
    return np.concatenate([s * np.cos(p), s * np.sin(p)], axis=1)


def gaussian_mgf_quadrature(a, dps: int = 40) -> mpmath.mpf:
    """``E exp(a w)`` for ``w ~ N(0, 1)``, by mpmath quadrature of the Gaussian integral (no closed
    form used), at ``dps`` digits. The closed form is ``exp(a^2/2)``.

    Raises:
        AttentionInputError: non-finite ``a``.
    """
    if not mpmath.isfinite(mpmath.mpf(a)):
        raise AttentionInputError(f"gaussian_mgf_quadrature: a = {a!r} is not finite")
    with mpmath.workdps(dps + 10):
        am = mpmath.mpf(a)
        f = lambda w: mpmath.exp(am * w - w * w / 2)  # noqa: E731
        # split at the integrand's peak w = a for an accurate tanh-sinh quadrature
        v = mpmath.quad(f, [-mpmath.inf, am, mpmath.inf]) / mpmath.sqrt(2 * mpmath.pi)
    return +v


def prf_moments_quadrature(x, y, dps: int = 40) -> tuple[mpmath.mpf, mpmath.mpf]:
    """First and second moments of one positive random feature product
    ``f = exp(omega.(x+y) - (|x|^2 + |y|^2)/2)``, ``omega ~ N(0, I_d)``, by per-coordinate
    quadrature (the Gaussian factorises): ``(E f, E f^2)``.

    Raises:
        AttentionInputError: shapes differ or non-finite input.
    """
    xa, ya = _arr(x, "x", 1), _arr(y, "y", 1)
    if xa.shape != ya.shape:
        raise AttentionInputError(f"x, y: shapes differ {xa.shape} vs {ya.shape}")
    with mpmath.workdps(dps + 10):
        s = [mpmath.mpf(float(a)) + mpmath.mpf(float(b)) for a, b in zip(xa, ya, strict=True)]
        nrm = mpmath.fsum(mpmath.mpf(float(a)) ** 2 for a in xa) + mpmath.fsum(mpmath.mpf(float(b)) ** 2 for b in ya)
        m1 = mpmath.fprod(gaussian_mgf_quadrature(v, dps) for v in s) * mpmath.exp(-nrm / 2)
        m2 = mpmath.fprod(gaussian_mgf_quadrature(2 * v, dps) for v in s) * mpmath.exp(-nrm)
    return +m1, +m2


def chi2_two_sided_tail(k: int, eps, dps: int = 40) -> mpmath.mpf:
    """``Pr(| chi^2_k / k - 1 | > eps)``: the probability that a Gaussian random projection with
    ``N(0, 1/k)`` entries distorts one squared length by more than ``eps`` (exact, via the
    regularised incomplete gamma function at ``dps`` digits; Dasgupta & Gupta 2003 §2).

    Raises:
        AttentionInputError: ``k < 1`` or ``eps`` outside ``(0, 1)``.
    """
    if not (isinstance(k, int) and k >= 1):
        raise AttentionInputError(f"chi2_two_sided_tail: k must be a positive integer, got {k!r}")
    if not (0 < float(eps) < 1):
        raise AttentionInputError(f"chi2_two_sided_tail: eps must be in (0, 1), got {eps!r}")
    with mpmath.workdps(dps + 10):
        e = mpmath.mpf(eps)
        half = mpmath.mpf(k) / 2
        lower = mpmath.gammainc(half, 0, (1 - e) * k / 2, regularized=True)
        upper = mpmath.gammainc(half, (1 + e) * k / 2, mpmath.inf, regularized=True)
        return +(lower + upper)


def linformer_mixing(Q, K, E, F) -> tuple[np.ndarray, np.ndarray]:
    """Linformer's context mapping ``P_bar = softmax(Q (E K)^T / sqrt(d))`` ``(N, k)`` and the
    token-mixing matrix ``P_bar F`` ``(N, N)`` that multiplies ``V`` (Wang et al. 2020 eq. (7)),
    in float64. ``Q, K (N, d)``, ``E, F (k, N)``.

    Raises:
        AttentionInputError: bad shapes or non-finite input.
    """
    q, kk, e, f = _arr(Q, "Q"), _arr(K, "K"), _arr(E, "E"), _arr(F, "F")
    if q.shape != kk.shape or e.shape != f.shape or e.shape[1] != q.shape[0]:
        raise AttentionInputError(f"linformer_mixing: shapes Q {q.shape}, K {kk.shape}, E {e.shape}, F {f.shape}")
    z = q @ (e @ kk).T / math.sqrt(q.shape[1])
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    return p, p @ f
