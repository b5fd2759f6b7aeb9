"""The sparsity closed forms of kexue.fm/archives/9889 (source document 004, repost 001),
their independent high-precision references, and finite-n Monte Carlo estimators.

Notation (004, "简化形式"): ``a_j ∝ f(q·k_j)``, ``k ~ N(mu, sigma^2 I)``,
``beta = q·mu``, ``gamma = sigma ||q||``; in the ``n -> infinity`` limit

    S(a) = E|f(beta + gamma eps)| / sqrt(E f^2(beta + gamma eps)),   eps ~ N(0, 1).

The closed forms below are transcribed *as printed* in the post (equation numbers are the
post's order of display equations); :func:`s_reference` computes the same expectation by
numerical quadrature in mpmath, independently of any closed form.
"""

from __future__ import annotations

from collections.abc import Callable

import mpmath
import numpy as np
import torch

from .attention import AttentionInputError

DPS = 40  # decimal digits for references


def _at_dps(fn):
    """Evaluate ``fn`` at ``DPS`` digits (or at the caller's higher ``mpmath.mp.dps``)."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with mpmath.workdps(max(DPS, mpmath.mp.dps)):
            return +fn(*args, **kwargs)

    return wrapper


def _mp(x) -> mpmath.mpf:
    v = mpmath.mpf(x)
    if not mpmath.isfinite(v):
        raise AttentionInputError(f"argument {x!r} is not finite")
    return v


def _check_gamma(gamma) -> mpmath.mpf:
    g = _mp(gamma)
    if g <= 0:
        raise AttentionInputError(f"gamma = sigma*||q|| must be > 0, got {gamma!r}")
    return g


@_at_dps
def s_exp(gamma) -> mpmath.mpf:
    """``S = exp(-gamma^2 / 2)`` for ``f = exp`` (004, "两个例子", first display equation).

    Independent of ``beta``. ``gamma > 0``.

    Raises:
        AttentionInputError: ``gamma`` not finite or not positive.
    """
    g = _check_gamma(gamma)
    return mpmath.exp(-g**2 / 2)


@_at_dps
def s_relu2(beta, gamma) -> mpmath.mpf:
    """``S`` for ``f = relu^2`` (GAU), exactly as printed in 004 "两个例子" (Mathematica output)::

        e^{-b^2/2g^2} (sqrt2 b g + sqrtpi e^{b^2/2g^2} (b^2+g^2)(erf(b/(sqrt2 g))+1))
        / ( pi^{1/4} sqrt( 2 sqrt2 b g e^{-b^2/2g^2} (b^2+5g^2)
                           + 2 sqrtpi (b^4+6b^2g^2+3g^4)(erf(b/(sqrt2 g))+1) ) )

    Raises:
        AttentionInputError: non-finite input or ``gamma <= 0``.
    """
    b, g = _mp(beta), _check_gamma(gamma)
    t = b**2 / (2 * g**2)
    # erf(..)+1 cancels catastrophically for beta << 0: evaluate the printed expression
    # with enough guard digits (about t/ln 10 are lost) so the result keeps DPS digits.
    guard = (int(mpmath.ceil(2 * t / mpmath.log(10))) if b < 0 else 0) + 10
    with mpmath.workdps(mpmath.mp.dps + guard):
        return _s_relu2_printed(b, g)


def _s_relu2_printed(b, g):
    t = b**2 / (2 * g**2)
    er = mpmath.erf(b / (mpmath.sqrt(2) * g)) + 1
    num = mpmath.exp(-t) * (mpmath.sqrt(2) * b * g + mpmath.sqrt(mpmath.pi) * mpmath.exp(t) * (b**2 + g**2) * er)
    inner = (2 * mpmath.sqrt(2) * b * g * mpmath.exp(-t) * (b**2 + 5 * g**2)
             + 2 * mpmath.sqrt(mpmath.pi) * (b**4 + 6 * b**2 * g**2 + 3 * g**4) * er)
    return num / (mpmath.pi ** mpmath.mpf(0.25) * mpmath.sqrt(inner))


@_at_dps
def s_identity(beta, gamma) -> mpmath.mpf:
    """``S`` for ``f = identity`` (004 "极简线性")::

        (sqrt(2/pi) g e^{-b^2/2g^2} + b erf(b/(sqrt2 g))) / sqrt(b^2 + g^2)

    Raises:
        AttentionInputError: non-finite input or ``gamma <= 0``.
    """
    b, g = _mp(beta), _check_gamma(gamma)
    num = mpmath.sqrt(2 / mpmath.pi) * g * mpmath.exp(-b**2 / (2 * g**2)) + b * mpmath.erf(b / (mpmath.sqrt(2) * g))
    return num / mpmath.sqrt(b**2 + g**2)


def s_general_linear(q_tilde, mu_tilde, sigma_tilde) -> float:
    """``S = 1 / sqrt(1 + q^T Sigma q / (q^T mu)^2)`` for non-negative linear attention
    (004 "一般线性", last member of the display equation); ``q_tilde (d,)``,
    ``mu_tilde (d,)``, ``sigma_tilde (d, d)`` the mean and covariance of ``k_tilde``.

    Raises:
        AttentionInputError: shapes disagree, or ``q^T mu == 0``.
    """
    q = np.asarray(q_tilde, dtype=np.float64)
    mu = np.asarray(mu_tilde, dtype=np.float64)
    cov = np.asarray(sigma_tilde, dtype=np.float64)
    if q.ndim != 1 or mu.shape != q.shape or cov.shape != (q.size, q.size):
        raise AttentionInputError(f"shapes: q {q.shape}, mu {mu.shape}, Sigma {cov.shape} do not agree")
    qm = float(q @ mu)
    if qm == 0:
        raise AttentionInputError("q_tilde . mu_tilde = 0: S is undefined (0/0)")
    return float(1.0 / np.sqrt(1.0 + (q @ cov @ q) / qm**2))


def s_iid_linear(q_tilde, mu: float, sigma: float) -> float:
    """``S = 1 / sqrt(1 + (sigma/mu * ||q||_2 / ||q||_1)^2)`` (004 "一般线性", iid components).

    Raises:
        AttentionInputError: ``mu == 0`` or ``q_tilde`` all zero.
    """
    q = np.asarray(q_tilde, dtype=np.float64)
    if mu == 0 or not np.any(q):
        raise AttentionInputError("mu must be non-zero and q_tilde not all zero")
    r = (sigma / mu) * np.linalg.norm(q, 2) / np.linalg.norm(q, 1)
    return float(1.0 / np.sqrt(1.0 + r**2))


@_at_dps
def s_decay(lam, n: int) -> mpmath.mpf:
    """``S`` of ``a = (lam^{n-1}, ..., lam, 1)``: ``sqrt((1-lam^n)/(n(1-lam)) * (1+lam)/(1+lam^n))``
    (004 "线性衰减"). Defined for ``0 < lam < 1``; at ``lam = 1`` the printed form is 0/0.

    Raises:
        AttentionInputError: ``n < 1`` or ``lam`` outside ``(0, 1)``.
    """
    lam = _mp(lam)
    if not (isinstance(n, int) and n >= 1):
        raise AttentionInputError(f"n must be a positive integer, got {n!r}")
    if not (0 < lam < 1):
        raise AttentionInputError(f"lam must be in (0, 1) for the closed form (0/0 at 1), got {lam}")
    ln = lam**n
    return mpmath.sqrt((1 - ln) / (n * (1 - lam)) * (1 + lam) / (1 + ln))


@_at_dps
def s_decay_bound(lam, n: int) -> mpmath.mpf:
    """The post's upper bound ``sqrt((1/n) (1+lam) / ((1-lam)(1+lam^n)))`` (004 "线性衰减").

    Raises:
        AttentionInputError: as :func:`s_decay`.
    """
    lam = _mp(lam)
    if not (isinstance(n, int) and n >= 1):
        raise AttentionInputError(f"n must be a positive integer, got {n!r}")
    if not (0 < lam < 1):
        raise AttentionInputError(f"lam must be in (0, 1), got {lam}")
    return mpmath.sqrt((1 + lam) / (n * (1 - lam) * (1 + lam**n)))


@_at_dps
def s_vector_mp(a) -> mpmath.mpf:
    """``S(a) = mean|a| / sqrt(mean a^2)`` of a finite vector, in mpmath (exact inputs)."""
    vals = [mpmath.mpf(v) for v in a]
    if not vals:
        raise AttentionInputError("a: empty vector")
    n = len(vals)
    l1 = mpmath.fsum(abs(v) for v in vals) / n
    l2 = mpmath.sqrt(mpmath.fsum(v * v for v in vals) / n)
    if l2 == 0:
        raise AttentionInputError("a: all-zero vector, S undefined")
    return l1 / l2


F_MP: dict[str, Callable] = {
    "exp": mpmath.exp,
    "relu2": lambda x: (x if x > 0 else mpmath.mpf(0)) ** 2,
    "identity": lambda x: x,
}
F_TORCH: dict[str, Callable] = {
    "exp": torch.exp,
    "relu2": lambda x: torch.relu(x) ** 2,
    "identity": lambda x: x,
}


def gaussian_expectation(g: Callable, beta, gamma, dps: int = DPS, *, kink: bool = True) -> mpmath.mpf:
    """``E[g(beta + gamma eps)]``, ``eps ~ N(0,1)``, by mpmath tanh-sinh quadrature.

    The real line is split around the bulk of the Gaussian and, when ``kink`` (``g`` has a
    kink at 0, as ``|x|`` does) and it lies where the density is not negligible, at
    ``eps = -beta/gamma``, so the quadrature converges to the working precision.
    """
    with mpmath.workdps(dps + 10):
        b, gm = _mp(beta), _check_gamma(gamma)
        c = -b / gm
        pts = {mpmath.mpf(0), mpmath.mpf(-8), mpmath.mpf(8), 2 * gm, 4 * gm}
        if kink and abs(c) < 40:
            pts.add(c)
        # mpmath's quadrature stops on an absolute error estimate: scale the integrand to
        # order one first (its size near the bulk), so tiny expectations (e^{-68}) keep
        # their relative precision.
        size = max(abs(g(b + gm * e)) * mpmath.exp(-e * e / 2) for e in (-2, -1, 0, 1, 2, gm, 2 * gm))
        size = size if size > 0 else mpmath.mpf(1)
        dens = lambda e: g(b + gm * e) * mpmath.exp(-e * e / 2) / (size * mpmath.sqrt(2 * mpmath.pi))  # noqa: E731
        return size * mpmath.quad(dens, [-mpmath.inf, *sorted(pts), mpmath.inf])


def _relu_moment(k: int, beta, gamma) -> mpmath.mpf:
    """``E[relu(beta + gamma eps)^k] / phi(c)``, ``c = -beta/gamma``, by quadrature after the
    substitution ``eps = c + u`` (``u >= 0``): ``gamma^k int_0^inf u^k exp(-c u - u^2/2) du``.

    Factoring out ``phi(c)`` keeps the far tail (``beta << 0``) free of underflow and of
    the cancellation that a quadrature over the whole line suffers there.
    """
    b, gm = _mp(beta), _check_gamma(gamma)
    c = -b / gm
    peak = max(mpmath.mpf(0), -c)  # the weight u^k e^{-cu-u^2/2} peaks near max(0, -c)
    scale = 1 / (1 + abs(c))
    pts = sorted({mpmath.mpf(0), scale, 4 * scale, peak, peak + 4, peak + 16})
    w = lambda u: u**k * mpmath.exp(-c * u - u * u / 2)  # noqa: E731
    return gm**k * mpmath.quad(w, [*pts, mpmath.inf])


def s_reference(f: str, beta, gamma, dps: int = DPS) -> mpmath.mpf:
    """``S = E|f(X)| / sqrt(E f(X)^2)``, ``X = beta + gamma eps``, by quadrature (004 "简化形式",
    last display equation), independent of every closed form.

    For ``relu2`` the expectations are taken over the support ``X > 0`` only, with the
    Gaussian factor ``phi(-beta/gamma)`` pulled out (see :func:`_relu_moment`), so the
    reference stays accurate at ``beta/gamma = -30`` where ``phi`` is ``1e-196``.

    Raises:
        AttentionInputError: unknown ``f`` or bad arguments.
    """
    if f not in F_MP:
        raise AttentionInputError(f"f: unknown {f!r} (one of {', '.join(F_MP)})")
    with mpmath.workdps(dps + 10):
        if f == "relu2":
            b, gm = _mp(beta), _check_gamma(gamma)
            c = -b / gm
            phi_c = mpmath.exp(-c * c / 2) / mpmath.sqrt(2 * mpmath.pi)
            return +(mpmath.sqrt(phi_c) * _relu_moment(2, b, gm) / mpmath.sqrt(_relu_moment(4, b, gm)))
        fn = F_MP[f]
        kink = f != "exp"  # |exp| is smooth; |x| has a kink at x = 0
        e1 = gaussian_expectation(lambda x: abs(fn(x)), beta, gamma, dps, kink=kink)
        e2 = gaussian_expectation(lambda x: fn(x) ** 2, beta, gamma, dps, kink=kink)
        return +(e1 / mpmath.sqrt(e2))


def s_monte_carlo(f: str, q, mu, sigma: float, n: int, *, generator: torch.Generator,
                  dtype=torch.float64, device="cpu") -> float:
    """Finite-n estimate: draw ``k_1..k_n ~ N(mu, sigma^2 I)`` in torch, form
    ``a_j = f(q·k_j)`` and return ``S(a) = mean|a| / sqrt(mean a^2)`` (004 eq. (2)).

    ``q``, ``mu``: ``(d,)``. The estimator converges to the ``n -> infinity`` value at rate
    ``O(1/sqrt(n))`` (delta method); see the check for the tolerance.
    """
    q_t = torch.as_tensor(np.asarray(q, dtype=np.float64), dtype=dtype, device=device)
    mu_t = torch.as_tensor(np.asarray(mu, dtype=np.float64), dtype=dtype, device=device)
    eps = torch.randn(n, q_t.numel(), generator=generator, dtype=dtype, device="cpu").to(device)
    k = mu_t + sigma * eps
    a = F_TORCH[f](k @ q_t)
    return float(a.abs().mean() / torch.sqrt((a * a).mean()))
