"""Kernels and feature maps: random features (Performer), Taylor features, the exponential kernel,
kernelised (linear) attention, with certified references.

A feature map ``phi: R^d -> R^m`` turns the kernel ``k(q, k) = phi(q) . phi(k)`` into linear
attention (Katharopoulos et al. 2020 eq. (4)-(6)). Here: the softmax kernel ``e^(q.k)`` through
positive and trigonometric random features (Choromanski et al. 2021) and through its Taylor
(monomial) features (kexue.fm/archives/8601; 003 §11.3.7), 003 核函数一's feature map, and
certified (arb), exact (rational) and quadrature (mpmath) references for each. Inputs are rows
``X (N, d)``; features are ``(N, m)``; everything is dimensionless.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import mpmath
import numpy as np

from .arrays import AttentionInputError, as_array, as_int, as_tensor, positive_int, resolve_dtype, torch
from .attention import arb_logits, feature_map
from .boundaries import bisect_predicate
from .exact import to_fmpq, to_fraction


def arb_feature(name: str, x):
    """Certified enclosure (python-flint ``arb``) of the elementwise feature map ``name`` at the
    scalar float ``x`` (exactly converted): ``identity``, ``relu``, ``elu+1`` (``x + 1`` for ``x >= 0``,
    ``e^x`` for ``x < 0``; Katharopoulos et al. 2020 eq. (7)) or ``exp``; a scalar ``arb`` at the current
    arb precision.

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
    attention matrix before normalisation; Katharopoulos et al. 2020 eq. (4)). ``Q, K`` are
    ``(N, d)`` float arrays (read exactly); returns a list of ``N`` python-flint ``arb`` balls (shape
    ``(N,)``) at the current arb precision, each by :func:`arb_feature`.

    Raises:
        AttentionInputError: shapes differ, non-finite input, unknown map.
    """
    from flint import arb

    q, k = as_array(Q, "Q"), as_array(K, "K")
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
    """Performer positive random features ``exp(omega_r . x - |x|^2/2) / sqrt(m)`` of the rows of
    ``X (N, d)`` for the ``m`` random directions ``omega (m, d)``: a float64 NumPy array of shape
    ``(N, m)`` (dimensionless; ``X`` in the units that make ``x . y`` a logit)
    (Choromanski et al. 2021, Lemma 1). ``phi(x) . phi(y)`` is an unbiased estimate of ``exp(x.y)``.

    Raises:
        AttentionInputError: bad shapes or non-finite input.
    """
    x, w = as_array(X, "X"), as_array(omega, "omega")
    if x.shape[1] != w.shape[1]:
        raise AttentionInputError(f"X, omega: dimensions differ ({x.shape[1]} vs {w.shape[1]})")
    return np.exp(x @ w.T - 0.5 * np.sum(x * x, axis=1, keepdims=True)) / math.sqrt(w.shape[0])


def trig_random_features(X, omega) -> np.ndarray:
    """Trigonometric random features for ``exp(x.y)``: ``exp(|x|^2/2) [cos, sin](omega . x) / sqrt(m)`` of
    the rows of ``X (N, d)`` for ``omega (m, d)``: a float64 NumPy array of shape ``(N, 2m)``
    (Choromanski et al. 2021 eq. (2) with the Gaussian-kernel identity).

    Raises:
        AttentionInputError: bad shapes or non-finite input.
    """
    x, w = as_array(X, "X"), as_array(omega, "omega")
    if x.shape[1] != w.shape[1]:
        raise AttentionInputError(f"X, omega: dimensions differ ({x.shape[1]} vs {w.shape[1]})")
    p = x @ w.T
    s = np.exp(0.5 * np.sum(x * x, axis=1, keepdims=True)) / math.sqrt(w.shape[0])
    return np.concatenate([s * np.cos(p), s * np.sin(p)], axis=1)


def gaussian_mgf_quadrature(a, dps: int = 40) -> mpmath.mpf:
    """``E exp(a w)`` for ``w ~ N(0, 1)``, by certified quadrature of the Gaussian integral in arb balls
    (:func:`attention_claims.maths.sparsity.gaussian_moment_arb` with ``beta = 0``, ``gamma = |a|``; no
    closed form used; ``E exp(a w)`` is even in ``a``), every one of ``dps`` digits certified. The
    closed form is ``exp(a^2/2)``. ``a``: a scalar float or mpf (converted exactly); returns a
    dimensionless ``mpmath.mpf`` scalar.

    Raises:
        AttentionInputError: non-finite ``a``.
        CertificationError: the enclosure does not certify ``dps`` digits.
    """
    from .exact import arb_to_mpf, precision, to_arb
    from .sparsity import gaussian_moment_arb

    am = abs(to_arb(a, "gaussian_mgf_quadrature: a"))
    if am == 0:
        return mpmath.mpf(1)  # E exp(0) = 1
    prec = mpmath.libmp.dps_to_prec(dps + 10)  # the bits mpmath uses for dps + 10 digits
    with precision(prec):
        return arb_to_mpf(gaussian_moment_arb("exp", 1, 0, a if a > 0 else -a, prec), dps, dps + 10)


def prf_moments_quadrature(x, y, dps: int = 40) -> tuple[mpmath.mpf, mpmath.mpf]:
    """First and second moments of one positive random feature product
    ``f = exp(omega.(x+y) - (|x|^2 + |y|^2)/2)``, ``omega ~ N(0, I_d)``, for a query ``x (d,)`` and a key
    ``y (d,)``, by per-coordinate quadrature (the Gaussian factorises): ``(E f, E f^2)``, two
    dimensionless ``mpmath.mpf`` scalars at ``dps`` digits. ``E f = exp(x . y)`` is the softmax kernel
    (Choromanski et al. 2021, "Rethinking Attention with Performers", Lemma 1).

    Raises:
        AttentionInputError: shapes differ or non-finite input.
        CertificationError: a quadrature does not certify ``dps`` digits.
    """
    xa, ya = as_array(x, "x", ndim=1), as_array(y, "y", ndim=1)
    if xa.shape != ya.shape:
        raise AttentionInputError(f"x, y: shapes differ {xa.shape} vs {ya.shape}")
    with mpmath.workdps(dps + 10):
        s = [mpmath.mpf(float(a)) + mpmath.mpf(float(b)) for a, b in zip(xa, ya, strict=True)]
        nrm = mpmath.fsum(mpmath.mpf(float(a)) ** 2 for a in xa) + mpmath.fsum(mpmath.mpf(float(b)) ** 2 for b in ya)
        m1 = mpmath.fprod(gaussian_mgf_quadrature(v, dps) for v in s) * mpmath.exp(-nrm / 2)
        m2 = mpmath.fprod(gaussian_mgf_quadrature(2 * v, dps) for v in s) * mpmath.exp(-nrm)
    return +m1, +m2


def doc_exp_feature_map(X, *, dtype="float64", device=None) -> torch.Tensor:
    """003 核函数一's feature map, computed as written (raw values, no rescaling):
    ``phi(x) = e^(|x|^2/(2d)) * (e^(x_1/sqrt d), ..., e^(x_d/sqrt d))``, the factor and the
    entries evaluated separately in ``dtype`` on ``device``. ``X (N, d)`` -> ``(N, d)``.

    Runs on any device, so a CUDA reading runs the same code as the CPU one.

    Raises:
        AttentionInputError: bad shape, non-finite input, unknown dtype.
    """
    dt = resolve_dtype(dtype)
    x = as_tensor(X, "X", dtype=dt, device=device)
    d = x.shape[1]
    return torch.exp((x * x).sum(dim=1, keepdim=True) / (2 * d)) * torch.exp(x / math.sqrt(d))


def mp_doc_exp_log_extremes(X, dps: int = 40) -> tuple[mpmath.mpf, mpmath.mpf]:
    """The largest natural logarithms, over the rows ``x`` of ``X (N, d)`` (exact float values),
    of the two quantities 003 核函数一's formula evaluates: the factor ``e^(|x|^2/(2d))`` and the
    feature entries ``e^(|x|^2/(2d) + x_i/sqrt d)``. Returns ``(log factor max, log entry max)``
    at ``dps`` digits; a value above ``ln(dtype max)`` means the true number is outside that
    dtype's range (an overflow that is not a rounding artefact).

    Raises:
        AttentionInputError: bad shape or non-finite input.
    """
    x = as_array(X, "X")
    d = x.shape[1]
    with mpmath.workdps(dps):
        best_f, best_e = -mpmath.inf, -mpmath.inf
        for row in x:
            r = [mpmath.mpf(float(v)) for v in row]
            f = mpmath.fsum(v * v for v in r) / (2 * d)
            best_f = max(best_f, f)
            best_e = max(best_e, f + max(r) / mpmath.sqrt(d))
        return +best_f, +best_e


@functools.cache
def doc_exp_overflow_norm_sq(d: int, dtype: str = "float32", device: str = "cpu", *,
                             rows: int | None = None) -> tuple[float, float]:
    """Where 003 核函数一's raw features (:func:`doc_exp_feature_map`) stop being finite in
    ``dtype`` on ``device``, found by bisection on ``s = |x|^2``: ``(s_e1, s_neg)`` for
    ``x = sqrt(s) e_1`` (an entry overflows first) and ``x = -sqrt(s/d) (1, ..., 1)`` (only the
    factor ``e^(|x|^2/(2d))`` overflows; theory ``2 d ln(dtype max)``).

    Measured on ``rows`` copies of ``x`` (default :data:`VECTORIZED_ELEMENTS`, torch's vectorized path, which
    attention's tensors take); ``rows=1`` gives the one-row path (the same values on the CPUs measured,
    2026-11, for d = 1, 4, 64 in float32). Units: squared input norm.

    Raises:
        AttentionInputError: ``d`` or ``rows`` not a positive integer, or an unknown dtype.
    """
    d = positive_int(d, "d")
    rows = positive_int(VECTORIZED_ELEMENTS if rows is None else rows, "rows")
    hi = 4.0 * d * math.log(torch.finfo(resolve_dtype(dtype)).max)

    def fails(direction):
        return lambda s: not bool(torch.isfinite(doc_exp_feature_map(
            np.tile(np.sqrt(s) * direction[None], (rows, 1)), dtype=dtype, device=device)).all())

    e1 = np.zeros(d)
    e1[0] = 1.0
    neg = -np.ones(d) / math.sqrt(d)
    return bisect_predicate(fails(e1), 0.0, hi), bisect_predicate(fails(neg), 0.0, hi)


#: elements of the tensors a boundary is measured on: torch's CPU kernels take their vectorized path (and
#: its own exp, expm1 and log) on tensors of 16 or 32 elements and more (AVX2, AVX-512), the scalar path on
#: shorter ones, and the two can round differently; attention's tensors are long, so 64 is the default
VECTORIZED_ELEMENTS = 64


@functools.cache
def feature_zero_threshold(name: str, dtype: str = "float32", device: str = "cpu", *,
                           elements: int = VECTORIZED_ELEMENTS) -> float:
    """The ``x`` (bisection, relative accuracy ``1e-7``) below which the elementwise feature map ``name``
    of :func:`attention_claims.maths.feature_map` computed in ``dtype`` on ``device`` returns exactly 0,
    although its true value is positive (``elu+1``: ``elu(x)`` rounds to ``-1``, near ``ln(eps/2)``;
    ``exp``: underflow below half the smallest subnormal).

    Measured on a tensor of ``elements`` copies of ``x`` (0 when any is 0): the default (64) takes the
    vectorized path real tensors take; ``elements=1`` the one-element path, which can differ (float32
    ``elu+1`` on an AVX-512 CPU: -16.64 = ln(eps/2) vectorized, -17.33 = ln(eps/4) on one element, whose
    scalar ``expm1`` rounds ``-1 + e^x`` to ``-1`` only below ``eps/4``). Units: the map's input.

    Raises:
        AttentionInputError: unknown map or dtype.
        ValueError: ``elements < 1``; the map is already 0 at ``x = 0`` or nowhere in ``[-10^4, 0]`` in
            this dtype (no threshold to bisect).
    """
    if isinstance(elements, bool) or not isinstance(elements, int) or elements < 1:
        raise ValueError(f"feature_zero_threshold: elements must be a positive integer, got {elements!r}")
    f = feature_map(name)
    dt = resolve_dtype(dtype)

    def fails(neg_x: float) -> bool:
        x = torch.full((elements,), -neg_x, dtype=torch.float64).to(device=device, dtype=dt)
        return bool((f(x) == 0).any().item())

    return -bisect_predicate(fails, 0.0, 1.0e4, rtol=1e-7)


def normalised_prf_attention(Q, K, V, omega) -> tuple[np.ndarray, np.ndarray]:
    """Normalised linear attention with Performer positive random features for the softmax kernel
    ``e^(q.k/sqrt d)`` (inputs scaled by ``d^(-1/4)``, Choromanski et al. 2021 Lemma 1 and §2.3;
    the normaliser of Katharopoulos et al. 2020 eq. (5)-(6)), float64.

    ``Q, K (N, d)``, ``V (N, d_v)``, ``omega (m, d)`` -> ``(out (N, d_v), se (N, d_v))``:
    ``out = sum_r num_r / sum_r den_r`` over the ``m`` features, with ``num_r = m phi_r(q)
    sum_j phi_r(k_j) v_j`` and ``den_r = m phi_r(q) sum_j phi_r(k_j)`` (each an unbiased
    one-feature estimate), and ``se`` the delta-method standard error of the ratio,
    ``sd_r(num_r - out den_r) / (sqrt(m) mean_r den_r)``.

    Raises:
        AttentionInputError: bad shapes, non-finite input, ``m < 2``.
    """
    q, k, v, w = as_array(Q, "Q"), as_array(K, "K"), as_array(V, "V"), as_array(omega, "omega")
    if q.shape[1] != k.shape[1] or k.shape[0] != v.shape[0] or w.shape[1] != q.shape[1] or w.shape[0] < 2:
        raise AttentionInputError(f"normalised_prf_attention: shapes Q {q.shape}, K {k.shape}, V {v.shape}, "
                                  f"omega {w.shape} (m >= 2 features)")
    m, s = w.shape[0], q.shape[1] ** -0.25
    fq, fk = positive_random_features(q * s, w) * m, positive_random_features(k * s, w)
    # the m one-feature terms along the last, contiguous axis: the means and standard deviations are
    # contiguous (pairwise-summed) reductions rather than strided ones
    num_r = fq[:, None, :] * (v.T @ fk)[None]  # (N, d_v, m)
    den_r = fq * fk.sum(axis=0)[None]  # (N, m)
    den = den_r.mean(axis=1)
    out = num_r.mean(axis=2) / den[:, None]
    resid = num_r - out[:, :, None] * den_r[:, None, :]
    return out, resid.std(axis=2, ddof=1) / (math.sqrt(m) * den[:, None])


def monomial_feature_dots(q, k, degree: int) -> list[Fraction]:
    """Exact dot products, degree by degree, of the Taylor (monomial) features of the exponential
    kernel ``e^(q.k)``: ``phi_alpha(x) = x^alpha / sqrt(alpha!)`` over multi-indices ``alpha``, so
    ``c_n = sum_{|alpha| = n} phi_alpha(q) phi_alpha(k) = sum_{|alpha|=n} prod_l (q_l k_l)^alpha_l
    / alpha_l!`` for ``n = 0..degree`` (the feature space of 003 §11.3.7; its dimension up to
    degree ``D`` is ``C(D + d, d)``). Computed as the truncated product over coordinates of the
    series ``sum_a (q_l k_l)^a t^a / a!``, in rationals from the exact float values; the
    multinomial theorem gives ``c_n = (q.k)^n / n!``.

    Raises:
        AttentionInputError: shapes differ, non-finite input, negative degree.
    """
    a, b = as_array(q, "q", ndim=1), as_array(k, "k", ndim=1)
    if a.shape != b.shape:
        raise AttentionInputError(f"q {a.shape} and k {b.shape} differ in shape")
    degree = as_int(degree, "degree", lo=0)
    from flint import fmpq

    out = [fmpq(1)] + [fmpq(0)] * degree
    for u, v in zip(a, b, strict=True):
        p = to_fmpq(u) * to_fmpq(v)
        series = [fmpq(1)]
        for n in range(1, degree + 1):
            series.append(series[-1] * p / n)
        out = [sum((out[i] * series[n - i] for i in range(n + 1)), fmpq(0)) for n in range(degree + 1)]
    return [to_fraction(c) for c in out]


def lognormal_feature_moments(mu, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """Mean ``(d,)`` and covariance ``(d, d)`` of ``h(k) = exp(k)`` (elementwise) for
    ``k ~ N(mu, sigma^2 I)`` with ``mu (d,)``: ``E h_i = e^(mu_i + sigma^2/2)``,
    ``Cov = diag(e^(2 mu_i + sigma^2) (e^(sigma^2) - 1))`` (the log-normal moments; Johnson, Kotz &
    Balakrishnan, *Continuous Univariate Distributions* vol. 1, 2nd ed., ch. 14), as float64 NumPy arrays.

    Raises:
        AttentionInputError: ``mu`` not a non-empty finite 1-D array, or ``sigma`` not finite and ``>= 0``.
    """
    m = as_array(mu, "mu", ndim=1)
    if not (0 <= sigma < float("inf")):
        raise AttentionInputError(f"sigma: must be finite and >= 0, got {sigma!r}")
    mean = np.exp(m + sigma**2 / 2)
    return mean, np.diag(np.exp(2 * m + sigma**2) * np.expm1(sigma**2))


def taylor_features(x: torch.Tensor, degree: int) -> torch.Tensor:
    """Explicit features of the exponential kernel truncated at ``degree``:
    ``phi(x) = concat_{k <= degree} vec(x^{(x) k}) / sqrt(k!)``, so that
    ``phi(q) . phi(k) = sum_{j <= degree} (q.k)^j / j!  ->  exp(q.k)``
    (kexue.fm/archives/8601, cited in 004 "一般线性"). ``x (N, m)`` -> ``(N, sum_k m^k)``, a torch tensor in
    ``x``'s dtype and on its device.

    Raises:
        AttentionInputError: ``x`` not 2-D, or ``degree`` not in ``[0, 12]``, or too many features.
    """
    if x.ndim != 2:
        raise AttentionInputError(f"x: expected 2 dimensions, got shape {tuple(x.shape)}")
    degree = as_int(degree, "degree", lo=0, hi=12)
    n, m = x.shape
    if sum(m**k for k in range(degree + 1)) > 2_000_000:
        raise AttentionInputError("taylor_features: too many features")
    parts = [torch.ones(n, 1, dtype=x.dtype, device=x.device)]
    cur = parts[0]
    for k in range(1, degree + 1):
        cur = (cur[:, :, None] * x[:, None, :]).reshape(n, -1)
        parts.append(cur / math.sqrt(math.factorial(k)))
    return torch.cat(parts, dim=1)


def arb_exp_kernel(X):
    """Certified enclosure of ``exp(X X^T)`` (``(N, N)`` python-flint ``arb_mat``; unscaled
    logits), the unnormalised standard attention matrix with ``Q = K = X``, from float64 ``X (N, m)``,
    at the current flint precision.

    Raises:
        AttentionInputError: ``X`` not a non-empty finite 2-D array.
    """
    from flint import arb_mat

    z = arb_logits(X, X, scale=1.0)
    n = len(z)
    return arb_mat(n, n, [z[i][j].exp() for i in range(n) for j in range(n)])
