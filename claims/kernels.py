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
- 003 (``../shared/seeds/003_a0ad15dda516ed1d.txt``) §11.3.4 核函数一 (the raw exponential-kernel
  features and where they overflow), 推论 11.11 (float32 zeros of elu+1), 定理 11.27 (normalised
  Performer attention, with its Monte Carlo standard error), §11.3.7 (the Taylor feature space
  of ``e^(q.k)``) and 表 11.3.3 (LoRA's ``Delta W = B A``: exact Frobenius errors and the
  column-row factorisation).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import mpmath
import numpy as np
import torch

from .attention import AttentionInputError, as_float64_array, as_tensor, feature_map, resolve_dtype
from .boundaries import bisect_predicate

_arr = as_float64_array



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


# -- 003 §11.3.4-11.3.5 and §11.3.7: the textbook's kernel feature maps, the kernel rewrite, LoRA --------


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
    x = _arr(X, "X")
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
def doc_exp_overflow_norm_sq(d: int, dtype: str = "float32", device: str = "cpu") -> tuple[float, float]:
    """Where 003 核函数一's raw features (:func:`doc_exp_feature_map`) stop being finite in
    ``dtype`` on ``device``, found by bisection on ``s = |x|^2``: ``(s_e1, s_neg)`` for
    ``x = sqrt(s) e_1`` (an entry overflows first) and ``x = -sqrt(s/d) (1, ..., 1)`` (only the
    factor ``e^(|x|^2/(2d))`` overflows; theory ``2 d ln(dtype max)``).

    Raises:
        AttentionInputError: ``d`` not a positive integer or an unknown dtype.
    """
    if isinstance(d, bool) or not isinstance(d, int) or d < 1:
        raise AttentionInputError(f"d: must be a positive integer, got {d!r}")
    hi = 4.0 * d * math.log(torch.finfo(resolve_dtype(dtype)).max)

    def fails(direction):
        return lambda s: not bool(torch.isfinite(doc_exp_feature_map(
            np.sqrt(s) * direction[None], dtype=dtype, device=device)).all())

    e1 = np.zeros(d)
    e1[0] = 1.0
    neg = -np.ones(d) / math.sqrt(d)
    return bisect_predicate(fails(e1), 0.0, hi), bisect_predicate(fails(neg), 0.0, hi)


@functools.cache
def feature_zero_threshold(name: str, dtype: str = "float32", device: str = "cpu") -> float:
    """The ``x`` (bisection) below which the elementwise feature map ``name`` of
    :func:`claims.attention.feature_map` computed in ``dtype`` on ``device`` returns exactly 0,
    although its true value is positive (``elu+1``: ``elu(x)`` rounds to ``-1``, near
    ``ln(eps/2)``; ``exp``: underflow below half the smallest subnormal).

    Raises:
        AttentionInputError: unknown map or dtype.
        ValueError: the map is already 0 at ``x = 0`` or nowhere in ``[-10^4, 0]`` in this dtype
            (no threshold to bisect).
    """
    f = feature_map(name)
    dt = resolve_dtype(dtype)

    def fails(neg_x: float) -> bool:
        return bool((f(torch.tensor([-neg_x], dtype=torch.float64).to(device=device, dtype=dt)) == 0).item())

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
    q, k, v, w = _arr(Q, "Q"), _arr(K, "K"), _arr(V, "V"), _arr(omega, "omega")
    if q.shape[1] != k.shape[1] or k.shape[0] != v.shape[0] or w.shape[1] != q.shape[1] or w.shape[0] < 2:
        raise AttentionInputError(f"normalised_prf_attention: shapes Q {q.shape}, K {k.shape}, V {v.shape}, "
                                  f"omega {w.shape} (m >= 2 features)")
    m, s = w.shape[0], q.shape[1] ** -0.25
    fq, fk = positive_random_features(q * s, w) * m, positive_random_features(k * s, w)
    num_r = fq[:, :, None] * (fk.T @ v)[None]  # (N, m, d_v)
    den_r = fq * fk.sum(axis=0)[None]  # (N, m)
    den = den_r.mean(axis=1)
    out = num_r.mean(axis=1) / den[:, None]
    resid = num_r - out[:, None, :] * den_r[:, :, None]
    return out, resid.std(axis=1, ddof=1) / (math.sqrt(m) * den[:, None])


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
    a, b = _arr(q, "q", 1), _arr(k, "k", 1)
    if a.shape != b.shape:
        raise AttentionInputError(f"q {a.shape} and k {b.shape} differ in shape")
    if isinstance(degree, bool) or not isinstance(degree, int) or degree < 0:
        raise AttentionInputError(f"degree: must be a non-negative integer, got {degree!r}")
    from flint import fmpq

    out = [fmpq(1)] + [fmpq(0)] * degree
    for u, v in zip(a, b, strict=True):
        p = fmpq(*float(u).as_integer_ratio()) * fmpq(*float(v).as_integer_ratio())
        series = [fmpq(1)]
        for n in range(1, degree + 1):
            series.append(series[-1] * p / n)
        out = [sum((out[i] * series[n - i] for i in range(n + 1)), fmpq(0)) for n in range(degree + 1)]
    return [Fraction(int(c.p), int(c.q)) for c in out]


def _fmpq_mat(x):
    from flint import fmpq, fmpq_mat

    a = _arr(x, "matrix")
    return fmpq_mat(a.shape[0], a.shape[1], [fmpq(*float(v).as_integer_ratio()) for v in a.ravel()])


def exact_frobenius_sq(W, B, A) -> Fraction:
    """``|W - B A|_F^2`` exactly (rational arithmetic on the exact float64 values), for
    ``W (m, n)``, ``B (m, r)``, ``A (r, n)``: the error of a LoRA-style factorisation (003 表 11.3.3).

    Raises:
        AttentionInputError: shapes that do not chain, empty or non-finite input.
    """
    w, b, a = _fmpq_mat(W), _fmpq_mat(B), _fmpq_mat(A)
    if b.nrows() != w.nrows() or a.ncols() != w.ncols() or b.ncols() != a.nrows():
        raise AttentionInputError(f"exact_frobenius_sq: shapes W {w.nrows()}x{w.ncols()}, B {b.nrows()}x"
                                  f"{b.ncols()}, A {a.nrows()}x{a.ncols()}")
    e = w - b * a
    tot = Fraction(0)
    for i in range(e.nrows()):
        for j in range(e.ncols()):
            x = e[i, j]
            tot += Fraction(int(x.p), int(x.q)) ** 2
    return tot


def cr_factorization(W):
    """Exact column-row factorisation ``W = C R`` of a rational (float64 or integer) ``W (m, n)`` of
    rank ``r``: ``C (m, r)`` the pivot columns of ``W``, ``R (r, n)`` the non-zero rows of its
    reduced row echelon form (Strang, "Linear Algebra for Everyone", §1.4). Both are
    ``flint.fmpq_mat``; ``r = 0`` gives empty factors. This is ``Delta W = B A`` with inner
    dimension exactly the rank (003 表 11.3.3).

    Raises:
        AttentionInputError: empty or non-finite input.
    """
    from flint import fmpq_mat

    w = _fmpq_mat(W)
    rref, r = w.rref()
    m, n = w.nrows(), w.ncols()
    pivots = [next(j for j in range(n) if rref[i, j] != 0) for i in range(r)]
    C = fmpq_mat(m, r, [w[i, j] for i in range(m) for j in pivots])
    R = fmpq_mat(r, n, [rref[i, j] for i in range(r) for j in range(n)])
    return C, R
