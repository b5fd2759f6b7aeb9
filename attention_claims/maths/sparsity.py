"""Sparsity of attention vectors: the measure S(x) of kexue.fm/archives/9889, its closed forms,
Monte Carlo and quadrature references, Hurley-Rickard criteria, entropy and concentration of softmax.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from fractions import Fraction

import mpmath
import numpy as np
from flint import arb, fmpq

from .._cache import disk_memo
from .arrays import AttentionInputError, as_array, as_int, positive_int, resolve_dtype, torch
from .exact import CertificationError, arb_to_mpf, as_fractions, precision, to_arb


def sparsity_measure(x) -> float:
    """The l1/l2 sparsity ``S(x) = E|x| / sqrt(E x^2) = ||x||_1 / (sqrt(n) ||x||_2)``.

    Source: kexue.fm/archives/9889 eq. (1) (004, "稀疏程度"), after kexue.fm/archives/9595.
    ``S`` lies in ``[1/sqrt(n), 1]``; smaller means sparser; dimensionless (a ratio of two norms in the
    units of ``x``).

    Shapes: ``x (n,)`` gives a float64 scalar; a batch ``x (..., n)`` gives a float64 array ``(...)``,
    one ``S`` per vector along the last axis.

    Raises:
        AttentionInputError: empty, non-finite, or all-zero input (S undefined).
    """
    a = as_array(x, "x", ndim=None)
    l2 = np.sqrt(np.mean(a**2, axis=-1))
    if np.any(l2 == 0):
        raise AttentionInputError("x: all-zero vector, sparsity S is undefined (0/0)")
    return np.mean(np.abs(a), axis=-1) / l2


DPS = 40  # decimal digits for references
"""The decimal digits (mpmath ``dps``) at which the sparsity references are computed."""


def _at_dps(fn):
    """Evaluate ``fn`` at ``DPS`` digits (or at the caller's higher ``mpmath.mp.dps``)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with mpmath.workdps(max(DPS, mpmath.mp.dps)):
            return +fn(*args, **kwargs)

    return wrapper


def _mp(x) -> mpmath.mpf:
    """``x`` as an mpmath number at the current precision, checked finite."""
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
    # erf(x) + 1 is evaluated as erfc(-x) (the same number; no cancellation for beta << 0); the
    # two terms of the numerator and of the radicand still cancel to about (beta/gamma)^4 relative
    # size, so guard digits keep the result at DPS digits.
    guard = int(8 * mpmath.log10(1 + abs(b / g))) + 10
    with mpmath.workdps(mpmath.mp.dps + guard):
        return _s_relu2_printed(b, g)


def _s_relu2_printed(b, g):
    t = b**2 / (2 * g**2)
    er = mpmath.erfc(-b / (mpmath.sqrt(2) * g))  # = erf(b/(sqrt2 g)) + 1, as printed
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
    ``mu_tilde (d,)``, ``sigma_tilde (d, d)`` the mean and covariance of ``k_tilde``. Computed in
    float64; a dimensionless float scalar.

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
    """``S = 1 / sqrt(1 + (sigma/mu * ||q||_2 / ||q||_1)^2)`` (004 "一般线性", iid components): the limit
    of :func:`s_general_linear` when the key components are i.i.d. with mean ``mu`` and standard
    deviation ``sigma`` (scalars, in the keys' units), for a query ``q_tilde (d,)``; a dimensionless
    float64 scalar.

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
    lam, n = _check_decay(lam, n)
    ln = lam**n
    return mpmath.sqrt((1 - ln) / (n * (1 - lam)) * (1 + lam) / (1 + ln))


@_at_dps
def s_decay_bound(lam, n: int) -> mpmath.mpf:
    """The post's upper bound ``sqrt((1/n) (1+lam) / ((1-lam)(1+lam^n)))`` (004 "线性衰减").

    Raises:
        AttentionInputError: as :func:`s_decay`.
    """
    lam, n = _check_decay(lam, n)
    return mpmath.sqrt((1 + lam) / (n * (1 - lam) * (1 + lam**n)))


def _check_decay(lam, n) -> tuple[mpmath.mpf, int]:
    """The arguments of 004 "线性衰减"'s formulas: ``0 < lam < 1`` (the closed form is 0/0 at 1), ``n >= 1``."""
    lam, n = _mp(lam), positive_int(n, "n")
    if not (0 < lam < 1):
        raise AttentionInputError(f"lam: must be in (0, 1) (the closed form is 0/0 at 1), got {lam}")
    return lam, n


@_at_dps
def s_vector_mp(a) -> mpmath.mpf:
    """``S(a) = mean|a| / sqrt(mean a^2)`` (004 eq. (1)) of a finite vector ``a (n,)`` in mpmath at
    ``DPS`` digits (or the caller's higher precision); each entry read by ``mpmath.mpf`` (exact for
    floats, ints and mpf). A dimensionless ``mpmath.mpf`` scalar.

    Raises:
        AttentionInputError: ``a`` empty or all zero (S undefined).
    """
    vals = [mpmath.mpf(v) for v in a]
    if not vals:
        raise AttentionInputError("a: empty vector")
    n = len(vals)
    l1 = mpmath.fsum(abs(v) for v in vals) / n
    l2 = mpmath.sqrt(mpmath.fsum(v * v for v in vals) / n)
    if l2 == 0:
        raise AttentionInputError("a: all-zero vector, S undefined")
    return l1 / l2


F_TORCH: dict[str, Callable] = {
    "exp": lambda x: torch.exp(x),
    "relu2": lambda x: torch.relu(x) ** 2,
    "identity": lambda x: x,
}
"""The functions f of the sparsity measure S(f(k·q)) of kexue.fm/archives/9889 by name, on tensors: ``exp``,
``relu2`` (relu squared) and ``identity``."""


#: Half-width, in standard deviations of the Gaussian factor, of the window each reference integral is
#: taken over; what lies outside is bounded rigorously (:func:`_gaussian_tail`) and added to the radius.
#: At 40 the neglected mass is below ``e^{-800}`` of the bulk.
_WINDOW = 40


def _gaussian_tail(j: int, t: arb) -> arb:
    """``int_t^inf v^j e^{-v^2/2} dv = 2^{(j-1)/2} Gamma((j+1)/2, t^2/2)`` for ``t > 0`` (substitute
    ``w = v^2/2``; DLMF 8.2.2), as an arb enclosure."""
    return arb(2) ** ((arb(j) - 1) / 2) * (t * t / 2).gamma_upper(arb(j + 1) / 2)


def _poly_tail(a: arb, b: arb, k: int, t: arb) -> arb:
    """Upper bound of ``int_t^inf (a + b v)^k e^{-v^2/2} dv`` for ``a, b >= 0``, ``t > 0``: the binomial
    expansion integrated term by term with :func:`_gaussian_tail`."""
    return sum((math.comb(k, j) * a ** (k - j) * b**j * _gaussian_tail(j, t) for j in range(k + 1)), arb(0))


def _integral(h, pieces: list[tuple[arb, arb]], prec: int) -> arb:
    """``int h`` over consecutive ``pieces`` with python-flint's certified Gauss-Legendre/Petras
    integrator (``acb.integral``; Johansson, "Numerical integration in arbitrary-precision ball
    arithmetic", ICMS 2018); ``h`` maps an acb ball to an acb ball and must be analytic on each piece."""
    from flint import acb

    tol = arb(2) ** (-prec)
    return sum((acb.integral(lambda z, _analytic: h(z), lo, hi, rel_tol=tol).real for lo, hi in pieces), arb(0))


def gaussian_moment_arb(f: str, k: int, beta, gamma, prec: int) -> arb:
    """Certified enclosure of a moment of ``X = beta + gamma eps``, ``eps ~ N(0, 1)``, by quadrature in ball
    arithmetic (no closed form is used), at ``prec`` bits:

    - ``f = "identity"``: ``E|X|^k``; the line is split at the kink ``eps = -beta/gamma``;
    - ``f = "exp"``: ``E e^{kX}``; the window is centred on the integrand's peak ``eps = k gamma``;
    - ``f = "relu2"``: ``E[relu(X)^k] / phi(c)``, ``c = -beta/gamma``, as
      ``gamma^k int_0^inf u^k e^{-c u - u^2/2} du`` after ``eps = c + u``: factoring out ``phi(c)`` keeps
      the far tail (``beta << 0``, ``phi(c) ~ 1e-196``) free of underflow and cancellation.

    Each integral is taken over a window of :data:`_WINDOW` standard deviations around the mass of its
    integrand; the rest is bounded rigorously by incomplete gamma functions and added to the radius.
    ``beta``, ``gamma``: floats, ints, Fractions or mpf (converted exactly). Source of the moments: 004
    "简化形式" (the expectation over ``k ~ N(mu, sigma^2 I)`` reduces to one Gaussian variable).

    Raises:
        AttentionInputError: unknown ``f``, ``k`` not a positive integer, ``gamma <= 0`` or non-finite input.
    """
    if f not in ("identity", "exp", "relu2"):
        raise AttentionInputError(f"f: unknown {f!r} (one of exp, relu2, identity)")
    k = as_int(k, "k", lo=1, hi=12)
    with precision(prec):
        b, g = to_arb(beta, "beta"), to_arb(gamma, "gamma")
        if not g > 0:
            raise AttentionInputError(f"gamma = sigma*||q|| must be > 0, got {gamma!r}")
        t = arb(_WINDOW)
        root_two_pi = (2 * arb.pi()).sqrt()
        if f == "identity":
            c = -b / g
            cuts = [-t, *([c] if -t < c < t else []), t]
            pieces = list(itertools.pairwise(cuts))
            # |b + g z| on each piece: the sign of b + g z is that of the piece's midpoint
            signs = [1 if b + g * (lo + hi) / 2 > 0 else -1 for lo, hi in pieces]
            total = arb(0)
            for (lo, hi), sgn in zip(pieces, signs, strict=True):
                total += _integral(lambda z, sgn=sgn: (sgn * (b + g * z)) ** k * (-z * z / 2).exp(), [(lo, hi)], prec)
            tail = 2 * _poly_tail(abs(b), g, k, t)
            return (total + arb(0, tail.upper())) / root_two_pi
        if f == "exp":
            m = k * g
            # exponent k b + k g z - z^2/2 = (its value at m) - (z - m)^2/2: the tails are the peak value times
            # the Gaussian tails beyond m +- t
            peak = (k * b + k * g * m - m * m / 2).exp()
            total = _integral(lambda z: (k * b + k * g * z - z * z / 2).exp(), [(m - t, m), (m, m + t)], prec)
            tail = 2 * peak * _gaussian_tail(0, t)
            return (total + arb(0, tail.upper())) / root_two_pi
        c = -b / g
        top = max(arb(0), -c) + t
        # u^k e^{-cu-u^2/2} = e^{c^2/2} u^k e^{-(u+c)^2/2}; beyond `top`, v = u + c >= t and u <= v + |c|
        total = _integral(lambda z: z**k * (-c * z - z * z / 2).exp(), [(arb(0), top)], prec)
        tail = (c * c / 2).exp() * _poly_tail(abs(c), arb(1), k, top + c)
        return g**k * (total + arb(0, tail.upper()))


@disk_memo
def s_reference(f: str, beta, gamma, dps: int = DPS) -> mpmath.mpf:
    """``S = E|f(X)| / sqrt(E f(X)^2)``, ``X = beta + gamma eps``, by certified quadrature in ball arithmetic
    (:func:`gaussian_moment_arb`; 004 "简化形式", last display equation), independent of every closed form.

    For ``relu2`` the moments are taken over the support ``X > 0`` only with the Gaussian factor
    ``phi(-beta/gamma)`` pulled out, so the reference stays accurate at ``beta/gamma = -30`` where ``phi`` is
    ``1e-196``. The enclosure of ``S`` is computed at ``dps + 10`` digits; the result is its midpoint, and
    its radius is below ``10^-(dps+2)`` relative (the precision is raised until it is), so every digit
    up to ``dps`` is certified. Dimensionless.

    Results are kept on disk keyed by the exact arguments and this module's source
    (:func:`attention_claims._cache.disk_memo`): the ``ci`` profile's examples repeat from run to run.

    Raises:
        AttentionInputError: unknown ``f`` or bad arguments.
        CertificationError: the enclosure stays wider than ``10^-(dps+2)`` relative at 8x the precision.
    """
    if f not in F_TORCH:
        raise AttentionInputError(f"f: unknown {f!r} (one of {', '.join(F_TORCH)})")
    dps = as_int(dps, "dps", lo=5, hi=1000)
    prec = mpmath.libmp.dps_to_prec(dps + 10)  # the bits mpmath uses for dps + 10 digits
    for _ in range(4):
        with precision(prec):
            if f == "relu2":
                b, g = to_arb(beta, "beta"), to_arb(gamma, "gamma")
                phi_c = (-(b / g) ** 2 / 2).exp() / (2 * arb.pi()).sqrt() if g > 0 else arb(1)
                s = phi_c.sqrt() * gaussian_moment_arb(f, 2, beta, gamma, prec) / gaussian_moment_arb(
                    f, 4, beta, gamma, prec).sqrt()
            else:
                s = gaussian_moment_arb(f, 1, beta, gamma, prec) / gaussian_moment_arb(f, 2, beta, gamma, prec).sqrt()
            try:
                return arb_to_mpf(s, dps + 2, dps + 10)
            except CertificationError:
                prec *= 2
    raise CertificationError(f"s_reference({f!r}, {beta!r}, {gamma!r}): enclosure {s} too wide at {prec // 2} bits")


def s_monte_carlo(f: str, q, mu, sigma: float, n: int, *, generator: torch.Generator,
                  dtype="float64", device="cpu") -> float:
    """Finite-n estimate: draw ``k_1..k_n ~ N(mu, sigma^2 I)`` in torch, form
    ``a_j = f(q·k_j)`` and return ``S(a) = mean|a| / sqrt(mean a^2)`` (004 eq. (2)).

    ``q``, ``mu``: ``(d,)``. The estimator converges to the ``n -> infinity`` value at rate
    ``O(1/sqrt(n))`` (delta method); see the check for the tolerance. ``dtype``: a name of
    :data:`~attention_claims.maths.arrays.DTYPES` or a torch dtype; the normal draws are made on the CPU
    by ``generator`` and moved to ``device``.

    Raises:
        AttentionInputError: an unknown ``dtype``.
        KeyError: an ``f`` other than ``exp``, ``relu2``, ``identity``.
    """
    dtype = resolve_dtype(dtype)
    q_t = torch.as_tensor(np.asarray(q, dtype=np.float64), dtype=dtype, device=device)
    mu_t = torch.as_tensor(np.asarray(mu, dtype=np.float64), dtype=dtype, device=device)
    eps = torch.randn(n, q_t.numel(), generator=generator, dtype=dtype, device="cpu").to(device)
    k = mu_t + sigma * eps
    a = F_TORCH[f](k @ q_t)
    return float(a.abs().mean() / torch.sqrt((a * a).mean()))


def relu_moment(k: int, c) -> mpmath.mpf:
    """``m_k(c) = E[relu(c + eps)^k]``, ``eps ~ N(0, 1)``, by the recurrence

        m_0 = Phi(c),  m_1 = c Phi(c) + phi(c),  m_k = c m_{k-1} + (k-1) m_{k-2}  (k >= 2),

    obtained by integrating ``u^{k-1} * u phi(u - c)`` by parts over ``u > 0`` (Stein's
    identity ``E[eps g(eps)] = E[g'(eps)]``); the truncated-normal moments of Johnson, Kotz &
    Balakrishnan, *Continuous Univariate Distributions* vol. 1, §10.1. For ``c << 0`` the terms
    cancel (``m_4 ~ 24 phi(c)/|c|^5``): the recurrence runs with guard digits so the result keeps
    :data:`DPS` digits. Dimensionless.

    Raises:
        AttentionInputError: ``k`` not an integer in ``[0, 12]`` or ``c`` not finite.
    """
    k = as_int(k, "k", lo=0, hi=12)
    with mpmath.workdps(max(DPS, mpmath.mp.dps)):
        c = _mp(c)
        guard = int(3 * k * mpmath.log10(1 + abs(c))) + 10 if c < 0 else 10
    with mpmath.workdps(max(DPS, mpmath.mp.dps) + guard):
        c = mpmath.mpf(c)
        Phi, phi = mpmath.ncdf(c), mpmath.npdf(c)
        ms = [Phi, c * Phi + phi]
        for j in range(2, k + 1):
            ms.append(c * ms[j - 1] + (j - 1) * ms[j - 2])
        out = ms[k]
    return +out


@_at_dps
def s_relu2_moments(c) -> mpmath.mpf:
    """``S`` for ``f = relu^2`` as a function of ``c = beta/gamma`` only: ``m_2(c) / sqrt(m_4(c))``
    (:func:`relu_moment`; ``relu^2`` is homogeneous of degree 2 and ``S`` is scale invariant).

    Facts used by the checks (proved here, verified numerically in ``tests/test_sparsity_module.py``):
    ``S(0) = (1/2)/sqrt(3/2) = 1/sqrt(6)``; ``S`` is non-decreasing in ``c`` because
    ``d/dc log S^2 = 4 (m_1/m_2 - m_3/m_4) >= 0`` (``p -> log E r^p`` is convex, Hölder, so
    ``m_1 m_4 >= m_2 m_3``); and ``S <= sqrt(Phi(c))`` (Cauchy–Schwarz on ``r^2 1{r > 0}``), so
    ``S -> 0`` as ``c -> -inf``. Source of ``S``: 004 "简化形式", last display equation.
    """
    return relu_moment(2, c) / mpmath.sqrt(relu_moment(4, c))


@_at_dps
def s_identity_moments(c) -> mpmath.mpf:
    """``S`` for ``f = identity`` as a function of ``c = beta/gamma``:
    ``E|c + eps| / sqrt(1 + c^2)`` with ``E|c + eps| = c (2 Phi(c) - 1) + 2 phi(c)``
    (folded normal mean). ``S(0) = sqrt(2/pi)``; ``S`` is even and increasing in ``|c|``
    (``d/dc log S^2 >= 0`` for ``c >= 0`` reduces to ``int_0^c phi >= c phi(c)``), with limit 1.
    """
    c = _mp(c)
    return (c * (2 * mpmath.ncdf(c) - 1) + 2 * mpmath.npdf(c)) / mpmath.sqrt(1 + c * c)


def s_squared_exact(a):
    """``S(a)^2 = (mean|a|)^2 / mean(a^2) = ||a||_1^2 / (n ||a||_2^2)`` as a ``Fraction`` scalar, exactly
    (004 eq. (1)); floats are converted exactly. ``a``: 1-D sequence of shape ``(n,)`` (floats,
    ``Fraction``s or ints); dimensionless.

    Raises:
        AttentionInputError: empty, non-finite or all-zero ``a``.
    """

    if len(a) and all(isinstance(v, float) for v in a):
        # float64 values are dyadic rationals m 2^e: scale to one exponent and sum integers exactly
        if not all(math.isfinite(v) for v in a):
            raise AttentionInputError("a: non-finite entry")
        pairs = [v.as_integer_ratio() for v in a]
        k = max(den.bit_length() for _, den in pairs)
        ints = [num << (k - den.bit_length()) for num, den in pairs]
        l1i, l2i = sum(abs(m) for m in ints), sum(m * m for m in ints)
        if l2i == 0:
            raise AttentionInputError("a: all-zero vector, S undefined (0/0)")
        return Fraction(l1i * l1i, len(ints) * l2i)
    x = as_fractions(a)
    # rationals: over the common denominator L, a_i = m_i / L with integers m_i and
    # S^2 = (sum |m_i|)^2 / (n sum m_i^2) (L cancels), one reduction instead of one per addition;
    # zero entries add nothing to either sum (they count only in n = len(x))
    nz = [v for v in x if v]
    if not nz:
        raise AttentionInputError("a: all-zero vector, S undefined (0/0)")
    lcd = math.lcm(*(v.denominator for v in nz))
    ints = [v.numerator * (lcd // v.denominator) for v in nz]
    l1i, l2i = sum(abs(m) for m in ints), sum(m * m for m in ints)
    return Fraction(l1i * l1i, len(x) * l2i)


def population_moments(keys):
    """Exact mean vector ``(d,)`` and population covariance ``(d, d)`` (divisor ``n``) of the rows
    of ``keys`` (``n x d``, rationals or floats converted exactly), as nested ``Fraction`` lists.

    Raises:
        AttentionInputError: empty or ragged ``keys``.
    """
    rows = [as_fractions(r, "keys") for r in keys]
    if not rows:
        raise AttentionInputError("keys: no rows")
    d = len(rows[0])
    if any(len(r) != d for r in rows):
        raise AttentionInputError("keys: rows of different lengths")
    n = len(rows)
    mu = [sum(r[i] for r in rows) / n for i in range(d)]
    cov = [[sum((r[i] - mu[i]) * (r[j] - mu[j]) for r in rows) / n for j in range(d)] for i in range(d)]
    return mu, cov


def product_design(values, d: int) -> list:
    """All ``m^d`` tuples over the multiset ``values`` (shape ``(m,)``): a finite key set, ``m^d`` rows of
    ``d`` ``Fraction``s (shape ``(m^d, d)``, in the units of ``values``), whose ``d`` components are
    exactly independent and identically distributed under the uniform distribution on the rows (mean
    ``mean(values) 1``, population covariance ``var(values) I``). Used for 004 "一般线性"'s i.i.d.
    simplification.

    Raises:
        AttentionInputError: empty ``values`` or ``d`` not in ``[1, 6]``.
    """
    vals = as_fractions(values, "values")
    d = as_int(d, "d", lo=1, hi=6)
    return [list(t) for t in itertools.product(vals, repeat=d)]


def robin_hood(x, i: int, j: int, alpha):
    """D1 Robin Hood: take ``alpha`` from the richer ``x_i`` and give it to ``x_j``, with
    ``0 < alpha < (x_i - x_j)/2``.

    One of the six operations of Hurley & Rickard's criteria for a sparsity measure (D1 Robin Hood, D2
    Scaling, D3 Rising Tide, D4 Cloning, P1 Bill Gates, P2 Babies; in their convention a larger measure
    is sparser): the operation only; whether a measure rises or falls under it is the check's question.
    The criterion D1: a Robin Hood step makes a vector less sparse.

    Shapes: ``x`` is a vector of ``n`` coefficients (shape ``(n,)``: ``Fraction``s, ints or floats, read
    exactly); returns a new list of ``n`` ``Fraction``s (``x`` is not changed), in the units of ``x``.
    Source: Hurley & Rickard 2009, "Comparing Measures of Sparsity", IEEE Trans. Inf. Theory 55(10),
    4723-4741.

    Raises:
        AttentionInputError: ``i == j``, an index outside ``[0, n)``, or ``alpha`` outside that range;
        AttentionInputError: ``x`` empty or an entry not finite (:func:`.exact.as_fractions`).
    """
    x = as_fractions(x, "x")
    if not (0 <= i < len(x) and 0 <= j < len(x) and i != j and 0 < alpha < (x[i] - x[j]) / 2):
        raise AttentionInputError("robin_hood: need i != j in range and 0 < alpha < (x_i - x_j)/2")
    y = list(x)
    y[i] -= alpha
    y[j] += alpha
    return y


def rising_tide(x, alpha):
    """D3 Rising Tide: add ``alpha > 0`` to every entry.

    One of the six operations of Hurley & Rickard's criteria for a sparsity measure (D1 Robin Hood, D2
    Scaling, D3 Rising Tide, D4 Cloning, P1 Bill Gates, P2 Babies; in their convention a larger measure
    is sparser): the operation only; whether a measure rises or falls under it is the check's question.
    The criterion D3: a rising tide makes a (not constant) vector less sparse.

    Shapes: ``x`` is a vector of ``n`` coefficients (shape ``(n,)``: ``Fraction``s, ints or floats, read
    exactly); returns a new list of ``n`` ``Fraction``s (``x`` is not changed), in the units of ``x``.
    Source: Hurley & Rickard 2009, "Comparing Measures of Sparsity", IEEE Trans. Inf. Theory 55(10),
    4723-4741.

    Raises:
        AttentionInputError: ``alpha`` not positive, or
        AttentionInputError: ``x`` empty or an entry not finite (:func:`.exact.as_fractions`).
    """
    if not alpha > 0:
        raise AttentionInputError(f"rising_tide: alpha must be > 0, got {alpha!r}")
    return [v + alpha for v in as_fractions(x, "x")]


def cloning(x):
    """D4 Cloning: the concatenation ``x || x``.

    One of the six operations of Hurley & Rickard's criteria for a sparsity measure (D1 Robin Hood, D2
    Scaling, D3 Rising Tide, D4 Cloning, P1 Bill Gates, P2 Babies; in their convention a larger measure
    is sparser): the operation only; whether a measure rises or falls under it is the check's question.
    The criterion D4: a measure gives ``x``, ``x || x``, ``x || x || x``, ... the same value.

    Shapes: ``x`` is a vector of ``n`` coefficients (shape ``(n,)``: ``Fraction``s, ints or floats, read
    exactly); returns a new list of ``2n`` ``Fraction``s (``x`` is not changed), in the units of ``x``.
    Source: Hurley & Rickard 2009, "Comparing Measures of Sparsity", IEEE Trans. Inf. Theory 55(10),
    4723-4741.

    Raises:
        AttentionInputError: ``x`` empty or an entry not finite (:func:`.exact.as_fractions`).
    """
    x = as_fractions(x, "x")
    return x + x


def babies(x):
    """P2 Babies: append one zero, ``x || 0``.

    One of the six operations of Hurley & Rickard's criteria for a sparsity measure (D1 Robin Hood, D2
    Scaling, D3 Rising Tide, D4 Cloning, P1 Bill Gates, P2 Babies; in their convention a larger measure
    is sparser): the operation only; whether a measure rises or falls under it is the check's question.
    The criterion P2: adding a zero coefficient (a baby, who has no wealth) makes a vector sparser.

    Shapes: ``x`` is a vector of ``n`` coefficients (shape ``(n,)``: ``Fraction``s, ints or floats, read
    exactly); returns a new list of ``n + 1`` ``Fraction``s (``x`` is not changed), in the units of ``x``.
    Source: Hurley & Rickard 2009, "Comparing Measures of Sparsity", IEEE Trans. Inf. Theory 55(10),
    4723-4741.

    Raises:
        AttentionInputError: ``x`` empty or an entry not finite (:func:`.exact.as_fractions`).
    """
    return as_fractions(x, "x") + [Fraction(0)]


def bill_gates(x, i: int, beta):
    """P1 Bill Gates: add ``beta >= 0`` to entry ``i``.

    One of the six operations of Hurley & Rickard's criteria for a sparsity measure (D1 Robin Hood, D2
    Scaling, D3 Rising Tide, D4 Cloning, P1 Bill Gates, P2 Babies; in their convention a larger measure
    is sparser): the operation only; whether a measure rises or falls under it is the check's question.
    The criterion P1: for every ``i`` there is a ``beta`` beyond which making ``x_i`` still larger
    (one person growing ever richer) makes the vector sparser.

    Shapes: ``x`` is a vector of ``n`` coefficients (shape ``(n,)``: ``Fraction``s, ints or floats, read
    exactly); returns a new list of ``n`` ``Fraction``s (``x`` is not changed), in the units of ``x``.
    Source: Hurley & Rickard 2009, "Comparing Measures of Sparsity", IEEE Trans. Inf. Theory 55(10),
    4723-4741.

    Raises:
        AttentionInputError: ``i`` outside ``[0, n)`` or ``beta < 0``;
        AttentionInputError: ``x`` empty or an entry not finite (:func:`.exact.as_fractions`).
    """
    x = as_fractions(x, "x")
    if not (0 <= i < len(x)) or beta < 0:
        raise AttentionInputError("bill_gates: need 0 <= i < n and beta >= 0")
    x[i] += beta
    return x


def entropy_arb(p):
    """Shannon entropy ``-sum p_i ln p_i`` (nats) of a probability vector ``p (n,)`` of ``Fraction``s
    (floats read exactly), as a certified python-flint ``arb`` scalar enclosure (``0 ln 0 = 0``;
    Shannon 1948, "A Mathematical Theory of Communication", sec. 6), at the current arb precision.

    Raises:
        AttentionInputError: negative entries or a sum other than 1 (exactly).
    """
    x = as_fractions(p, "p")
    if any(v < 0 for v in x) or sum(x) != 1:
        raise AttentionInputError("p: not a probability vector (entries >= 0 summing to exactly 1)")
    h = arb(0)
    for v in x:
        if v > 0:
            a = arb(fmpq(v.numerator, v.denominator))
            h -= a * a.log()
    return h


def gini_index(x):
    """Hurley & Rickard's Gini index of a non-negative vector ``x (n,)`` (Hurley & Rickard 2009,
    "Comparing Measures of Sparsity", IEEE Trans. Inf. Theory 55(10), their eq. for ``G(c)``, after
    Gini 1921): larger is sparser, 0 for a flat vector, ``1 - 1/n`` for a one-hot one. An exact
    dimensionless ``Fraction`` scalar.

    Raises:
        AttentionInputError: negative entries or all zeros, or ``x`` empty or not finite.
    """
    c = sorted(as_fractions(x, "x"))
    n = len(c)
    tot = sum(c)
    if any(v < 0 for v in c) or tot == 0:
        raise AttentionInputError("gini_index: need non-negative entries, not all zero")

    return 1 - 2 * sum(v / tot * Fraction(2 * n - 2 * k + 1, 2 * n) for k, v in enumerate(c, start=1))


def s_and_standard_error(a: torch.Tensor) -> tuple[float, float]:
    """``S = mean|a| / sqrt(mean a^2)`` of a sample ``a (n,)`` (004 eq. (1)) and its delta-method
    standard error (first-order Taylor expansion of the ratio in the two sample means, computed in
    float64 by :func:`_s_and_se`).

    Raises:
        AttentionInputError: fewer than 2 samples, non-finite samples or an all-zero sample.
    """
    if a.ndim != 1 or a.numel() < 2:
        raise AttentionInputError(f"a: need a 1-D sample of size >= 2, got shape {tuple(a.shape)}")
    x = a.detach().to("cpu", torch.float64).numpy()
    if not np.isfinite(x).all():
        raise AttentionInputError("a: non-finite samples (overflow in the sampled dtype?)")
    out = _s_and_se(x)
    if out is None:
        raise AttentionInputError("a: all-zero sample, S undefined")
    return out


def _s_and_se(a: np.ndarray) -> tuple[float, float] | None:
    """``S = m1 / sqrt(m2)`` of a float64 sample ``a (n,)`` (``m1 = mean|a|``, ``m2 = mean a^2``) and
    its delta-method standard error ``sqrt(g^T Cov g / n)``, ``g = (1/sqrt(m2), -m1/(2 m2^1.5))``
    the gradient of ``m1 / sqrt(m2)`` and ``Cov`` the sample covariance of ``(|a_j|, a_j^2)``;
    ``None`` when ``m2 = 0``."""
    x1, x2 = np.abs(a), a * a
    m1, m2 = float(x1.mean()), float(x2.mean())
    if m2 == 0.0:
        return None
    cov = np.cov(np.stack([x1, x2]))
    g = np.array([1 / np.sqrt(m2), -m1 / (2 * m2 ** 1.5)])
    return m1 / math.sqrt(m2), float(np.sqrt(g @ cov @ g / a.size))


def participation_ratio(x) -> float:
    """``1 / sum_j p_j^2`` for ``p = softmax(x)`` of logits ``x (N,)`` (float64): the effective number of
    positions a weight vector spreads over (1 for one-hot, ``N`` for uniform); a float64 scalar, a count
    of positions (the inverse participation ratio's reciprocal, Bell & Dean 1970, "Atomic vibrations in
    vitreous silica", Discuss. Faraday Soc. 50).

    Raises:
        AttentionInputError: ``x`` empty, not 1-D or not finite.
    """
    a = as_array(x, "x", ndim=1)
    w = np.exp(a - a.max())
    return float(w.sum() ** 2 / np.sum(w * w))


def ks_distance_normal(x, mean: float, std: float) -> float:
    """Kolmogorov-Smirnov distance ``D_n = sup_t |F_n(t) - Phi((t - mean)/std)|`` between the
    empirical distribution of the sample ``x`` (shape ``(n,)``, float64) and ``N(mean, std^2)``.

    With ``x_(1) <= ... <= x_(n)`` sorted and ``u_i = Phi((x_(i) - mean)/std)``,
    ``D_n = max(max_i (i/n - u_i), max_i (u_i - (i-1)/n))`` (Kolmogorov 1933; Durbin 1973,
    *Distribution Theory for Tests Based on the Sample Distribution Function*, sec. 2.1). The same
    float64 operations as ``scipy.stats.kstest(x, "norm", args=(mean, std)).statistic`` (standardise,
    ``scipy.special.ndtr``, the two one-sided maxima), so the value is bit-for-bit scipy's; it skips
    scipy's exact p-value (an O(n)-term series per call) and its second sort, which callers that
    need only the statistic do not use.

    Raises:
        AttentionInputError: empty or non-finite ``x``, or ``std`` not a positive finite number.
    """
    from scipy.special import ndtr

    a = as_array(x, "x", ndim=1)
    if not (math.isfinite(mean) and math.isfinite(std) and std > 0):
        raise AttentionInputError(f"need a finite mean and a positive finite std, got {mean}, {std}")
    if not np.all(a[1:] >= a[:-1]):  # an already sorted sample (sorted_standard_normals) skips the sort
        a = np.sort(a)
    n = a.size
    u = ndtr((a - mean) / std)
    d_plus = float(np.max(np.arange(1.0, n + 1) / n - u))
    d_minus = float(np.max(u - np.arange(0.0, n) / n))
    return max(d_plus, d_minus)


def sorted_standard_normals(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` i.i.d. ``N(0, 1)`` draws in increasing order, shape ``(n,)``, sampled directly in O(n)
    (no sort): the order statistics of i.i.d. uniforms are ``U_(i) = S_i / S_(n+1)`` with ``S_i`` the
    partial sums of ``n + 1`` i.i.d. ``Exp(1)`` draws (Renyi 1953; David & Nagaraja, *Order
    Statistics*, 3rd ed., 2003, §2.5), and ``Phi^-1(U_(i))`` are those of i.i.d. ``N(0, 1)`` draws.
    So the result has exactly the law of ``np.sort(rng.standard_normal(n))``. Each tail is taken
    from its own side, ``Phi^-1(S_i / (S_i + T_i))`` below the median and ``-Phi^-1(T_i / (S_i +
    T_i))`` above, with ``T_i = S_(n+1) - S_i`` summed from the top, so that neither tail loses
    digits to ``1 - U``.

    Raises:
        AttentionInputError: ``n`` not a positive integer.
    """
    from scipy.special import ndtri

    n = positive_int(n, "n")
    e = rng.standard_exponential(n + 1)
    head = np.cumsum(e[:-1])  # S_i, i = 1..n
    tail = np.cumsum(e[:0:-1])[::-1]  # T_i = e_(i+1) + ... + e_(n+1)
    k = int(np.count_nonzero(head <= tail))  # head increases and tail decreases: the lower half is a prefix
    out = np.empty(n)
    out[:k] = ndtri(head[:k] / (head[:k] + tail[:k]))
    out[k:] = -ndtri(tail[k:] / (head[k:] + tail[k:]))
    return out


def arb_softmax_stats(x, prec: int = 128):
    """Certified enclosures (python-flint ``arb`` balls at ``prec`` bits) of
    ``(participation ratio 1/sum_j p_j^2, max_j p_j)`` for ``p = softmax(x)``, from the exact
    float64 logits ``x (N,)``: two scalars, a count of positions and a probability (see
    :func:`participation_ratio`).

    Raises:
        AttentionInputError: ``x`` empty, not 1-D or not finite.
    """
    a = as_array(x, "x", ndim=1)
    m = float(a.max())
    with precision(prec):
        w = [(arb(float(v)) - arb(m)).exp() for v in a]
        tot = sum(w, arb(0))
        sq = sum((v * v for v in w), arb(0))
        return tot * tot / sq, 1 / tot


def arb_partition_ratio(x, s2: float, prec: int = 128):
    """Certified enclosure (an ``arb`` scalar at ``prec`` bits, dimensionless) of ``Z / (N e^(s2/2))``
    with ``Z = sum_j e^(x_j)`` for logits ``x (N,)`` (float64, read exactly): the law-of-large-numbers
    ratio for logits ``x_j ~ N(0, s2)`` (``E e^x = e^(s2/2)``, the log-normal mean), which tends to 1
    as ``N`` grows.

    Raises:
        AttentionInputError: ``x`` empty, not 1-D or not finite, or ``s2 < 0``.
    """
    a = as_array(x, "x", ndim=1)
    if not s2 >= 0:
        raise AttentionInputError(f"s2: must be >= 0, got {s2!r}")
    with precision(prec):
        tot = sum((arb(float(v)).exp() for v in a), arb(0))
        return tot / (len(a) * (arb(float(s2)) / 2).exp())


def certified_softmax_max_below(x, bound: float, *, prec: int = 128, chunk: int = 64) -> tuple[bool, arb]:
    """Try to certify ``max_j softmax(x)_j < bound`` for a logit vector ``x (N,)`` (float64, exact).

    ``max_j p_j = 1 / sum_j e^(x_j - max x)``, and every term is positive, so the sum over any
    subset of the terms is a lower bound of the full sum. Terms are added in arb (``prec`` bits),
    largest logits first, ``chunk`` at a time, until ``1 / partial`` is certified below ``bound``
    or every term is in: the cost is the number of terms needed, not ``N``.

    Returns ``(certified, upper)`` with ``upper`` an arb enclosure of ``1 / partial``, an upper bound
    of ``max_j p_j``.

    Raises:
        AttentionInputError: ``x`` empty, not 1-D or not finite, or ``bound`` not positive.
    """
    a = as_array(x, "x", ndim=1)
    if not bound > 0:
        raise AttentionInputError(f"bound: must be positive, got {bound!r}")
    order = np.argsort(a)[::-1]
    m = arb(float(a[order[0]]))
    with precision(prec):
        partial = arb(0)
        for start in range(0, a.size, chunk):
            for j in order[start:start + chunk]:
                partial += (arb(float(a[j])) - m).exp()
            upper = 1 / partial
            if upper < bound:
                return True, upper
    return False, upper


RELU2_BETAS = (-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0)
"""The values of beta of the relu² curves in the sparsity figure of kexue.fm/archives/9889 (:func:`sparsity_curves`)."""


IDENTITY_BETAS = (0.0, 0.5, 1.0, 2.0, 4.0)
"""The values of beta of the identity curves in the sparsity figure of kexue.fm/archives/9889 (:func:`sparsity_curves`)."""


GAMMAS = tuple(float(g) for g in np.linspace(0.02, 5.0, 100))
"""The grid of gamma (100 points from 0.02 to 5) along each curve of that figure."""


_FORMS = {"relu2": s_relu2, "identity": s_identity}


_F = {"relu2": lambda x: np.maximum(x, 0.0) ** 2, "identity": lambda x: x}


SAMPLE_GAMMAS = (0.5, 1.0, 2.0, 4.0)
"""The values of gamma at which the figure's sampled attention vectors are drawn beside the curves (:func:`sampled_sparsity`)."""


def sampled_sparsity(kind: str, beta: float, gamma: float, *, n: int, d: int = 4,
                     rng: np.random.Generator) -> tuple[float, float, int]:
    """The l1/l2 sparsity ``S(a) = mean|a| / sqrt(mean a^2)`` of one sampled attention vector
    ``a (n,)``, ``a_j = f(q . k_j)``, ``j = 1..n``, with keys ``k_j (d,)`` drawn from
    ``N(mu, sigma^2 I_d)`` and ``q``, ``mu``, ``sigma`` chosen so that ``q . mu = beta`` and
    ``sigma ||q|| = gamma`` (004 "简化形式": then ``S(a) -> `` the curve's value as
    ``n -> infinity``), in float64.

    Returns ``(S_hat, se, nonzero)``, three scalars: the estimate (dimensionless) and its delta-method
    standard error (as :func:`s_and_standard_error`; ``(nan, inf)`` for an all-zero sample), and how
    many ``a_j`` are non-zero.

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
    out = _s_and_se(a)
    if out is None:
        return float("nan"), float("inf"), 0
    return *out, int(np.count_nonzero(a))


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
