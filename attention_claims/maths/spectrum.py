"""Singular-value spectra: singular values, energy, effective rank, power-law fits and low-rank
approximation (Eckart-Young), in float64, mpmath and exact rationals side by side.

Singular values ``sigma (n,)`` are non-negative and dimensionless (as the matrices are); the energy
of the top ``k`` is ``sum_{i<=k} sigma_i^2`` (descending order).

Effective rank (003 定义 11.25): for ``0 < tau < 1``,

    ``r_tau = min{k : sum_{i<=k} sigma_i^2 >= tau * sum_i sigma_i^2}``,

the least number of singular directions that carry a fraction ``tau`` of the energy. One criterion,
three arithmetics, all running the same search (:func:`_first_reaching`):

- :func:`effective_rank`: float64 energies, each cumulative sum correctly rounded (``math.fsum``);
- :func:`mp_effective_rank`: mpmath singular values, and whether a cumulative ratio came within a
  margin of ``tau`` (then the precision of ``sigma`` could change the answer);
- :func:`exact_effective_rank`: exact rational energies, with the inequality supplied by the caller
  (so a claimed variant of the criterion can be evaluated exactly against the definition).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np

from .arrays import AttentionInputError, as_array, positive_int
from .exact import arb_to_mpf, fmpq_matrix, mp_matrix, precision, to_arb, to_fraction


def singular_values(A) -> np.ndarray:
    """Singular values of ``A`` ``(N, M)`` in float64, descending (LAPACK gesdd via NumPy).

    Raises:
        AttentionInputError: empty, non-2-D or non-finite input.
    """
    return np.linalg.svd(as_array(A, "A"), compute_uv=False)


def energy_fraction(sigma, k: int) -> float:
    """``sum_{i<=k} sigma_i^2 / sum_i sigma_i^2`` (003 定义 11.25, the cumulative energy ratio) of
    singular values ``sigma (n,)`` (sorted here, descending), in float64; a dimensionless scalar in
    ``[0, 1]``.

    Raises:
        AttentionInputError: ``sigma`` not a non-empty finite 1-D array, ``k`` not in ``[0, n]``, or all
            sigma 0.
    """
    s = np.sort(as_array(sigma, "sigma", ndim=1))[::-1]
    if not 0 <= k <= s.size:
        raise AttentionInputError(f"k: must be in [0, {s.size}], got {k}")
    tot = float(np.sum(s**2))
    if tot == 0:
        raise AttentionInputError("sigma: all singular values are zero (energy ratio undefined)")
    return float(np.sum(s[:k] ** 2) / tot)


def _first_reaching(heads, reached) -> int:
    """The search of 003 定义 11.25 shared by the three effective ranks: the least ``k >= 1`` with
    ``reached(heads[k-1])``, where ``heads`` are the cumulative energies ``sum_{i<=k} sigma_i^2`` in
    the caller's arithmetic; ``len(heads)`` if none qualifies (rounding can leave the last short)."""
    k = 0
    for k, head in enumerate(heads, start=1):
        if reached(head):
            return k
    return k


def _check_tau(tau, t) -> None:
    if not (0 < t < 1):
        raise AttentionInputError(f"tau: must be in (0, 1) (003 定义 11.25), got {tau!r}")


def _check_total(total, what: str) -> None:
    if total == 0:
        raise AttentionInputError(f"{what} are zero (effective rank undefined)")


def effective_rank(sigma, tau: float) -> int:
    """Effective rank ``r_tau`` (003 定义 11.25; see the module docstring) of float64 singular
    values ``sigma (n,)`` (sorted here), ``0 < tau < 1``. Each cumulative energy is computed with
    ``math.fsum`` (correctly rounded) so that a ratio equal to ``tau`` is not lost to rounding.

    Raises:
        AttentionInputError: ``sigma`` not a non-empty finite 1-D array, ``tau`` outside (0, 1),
            or all singular values zero.
    """
    _check_tau(tau, tau)
    s = np.sort(as_array(sigma, "sigma", ndim=1))[::-1]
    e = [float(v) ** 2 for v in s]
    tot = math.fsum(e)
    _check_total(tot, "sigma: all singular values")
    return _first_reaching((math.fsum(e[:k]) for k in range(1, len(e) + 1)), lambda h: h >= tau * tot)


def top_fraction_energy(sigma, fraction: float) -> float:
    """Energy captured by the top ``ceil(fraction * n)`` of the singular values ``sigma (n,)``
    (003 引理 11.34, 表 11.3.1): :func:`energy_fraction`, a dimensionless float64 scalar in ``(0, 1]``.

    Raises:
        AttentionInputError: ``sigma`` not a non-empty finite 1-D array, ``fraction`` outside
            ``(0, 1]``, or all sigma 0.
    """
    s = as_array(sigma, "sigma", ndim=1)
    if not (0 < fraction <= 1):
        raise AttentionInputError(f"fraction: must be in (0, 1], got {fraction}")
    return energy_fraction(s, math.ceil(fraction * s.size))


def power_law_fit(sigma, *, skip_zero: bool = True) -> tuple[float, float, float]:
    """Least-squares fit of ``log sigma_i = log C - alpha log i`` (003 定理 11.21's form) to the singular
    values ``sigma (n,)`` (sorted here, descending), in float64.

    Returns ``(alpha, C, r2)``, three scalars: the exponent (dimensionless), ``C`` in the units of
    ``sigma``, and ``r2`` the coefficient of determination of the fit in log-log space.

    Raises:
        AttentionInputError: a negative value (singular values are >= 0), fewer than 3 positive
            singular values, or a zero one with ``skip_zero=False``.
    """
    s = np.sort(as_array(sigma, "sigma", ndim=1))[::-1]
    if s[-1] < 0:
        raise AttentionInputError(f"sigma: singular values are >= 0, got {float(s[-1])!r}")
    i = np.arange(1, s.size + 1, dtype=np.float64)
    if not skip_zero and np.any(s == 0):
        raise AttentionInputError("sigma: zero singular values have no logarithm; fit with skip_zero=True")
    keep = s > 0 if skip_zero else np.ones_like(s, dtype=bool)
    if keep.sum() < 3:
        raise AttentionInputError("sigma: need at least 3 positive singular values to fit a power law")
    x, y = np.log(i[keep]), np.log(s[keep])
    slope, intercept = np.polyfit(x, y, 1)
    pred = slope * x + intercept
    ss_res = float(np.sum((y - pred) ** 2))
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    return float(-slope), float(math.exp(intercept)), r2


def mp_singular_values(A, dps: int = 40) -> list:
    """Singular values (descending) of the float64 matrix ``A (N, M)`` as stored, or of an
    ``mpmath.matrix``, by ``mpmath.svd_r`` at ``dps`` digits: a list of ``min(N, M)`` ``mpmath.mpf``
    (shape ``(min(N, M),)``) in the units of ``A``. Not certified (a high-precision reference; see
    :mod:`.exact` for certified arithmetic).

    Raises:
        AttentionInputError: empty or non-finite input.
    """
    with mpmath.workdps(dps):
        M = A if isinstance(A, mpmath.matrix) else mp_matrix(A, "A")
        s = mpmath.svd_r(M, compute_uv=False)
        return sorted((s[i] for i in range(len(s))), reverse=True)


def mp_effective_rank(sigma, tau, *, margin: float = 1e-25) -> tuple[int, bool]:
    """Effective rank ``r_tau`` (003 定义 11.25; see the module docstring) of mpmath singular values
    ``sigma (n,)`` (descending, as :func:`mp_singular_values` returns them), at the current mpmath
    precision, with the criterion written as the ratio ``head / total >= tau``.

    Returns ``(k, decided)``, two scalars: ``decided`` is false when some cumulative ratio up to ``k``
    lies within ``margin`` of ``tau`` (the precision of ``sigma`` could then change ``k``).

    Raises:
        AttentionInputError: ``tau`` outside (0, 1) or all singular values zero.
    """
    t = mpmath.mpf(tau)
    _check_tau(tau, t)
    margin = mpmath.mpf(margin)
    e = [mpmath.mpf(x) ** 2 for x in sigma]
    tot = mpmath.fsum(e)
    _check_total(tot, "sigma: all singular values")
    ratios = [h / tot for h in itertools.accumulate(e)]
    k = _first_reaching(ratios, lambda r: r >= t)
    return k, all(abs(r - t) >= margin for r in ratios[:k])


def exact_effective_rank(energies, tau: Fraction, criterion) -> int:
    """Effective rank ``r_tau`` (003 定义 11.25; see the module docstring) of exact rational energies
    ``sigma_i^2``, a sequence of shape ``(n,)`` (descending), with the inequality given by
    ``criterion(head, total, tau)`` (the definition's is ``head >= tau * total``); ``n`` if no ``k``
    satisfies it. Returns a scalar ``int``.

    Raises:
        AttentionInputError: empty, negative or unsorted energies, or all zero.
    """
    e = [Fraction(x) for x in energies]
    if not e or any(x < 0 for x in e) or any(b > a for a, b in itertools.pairwise(e)):
        raise AttentionInputError("energies: need a non-empty, non-negative, descending list")
    total = sum(e, Fraction(0))
    _check_total(total, "energies: all energies")
    return _first_reaching(itertools.accumulate(e), lambda head: criterion(head, total, tau))


def hurwitz_zeta(s, a: int) -> mpmath.mpf:
    """The Hurwitz zeta function ``zeta(s, a) = sum_{i>=0} (i + a)^(-s)`` (DLMF 25.11.1) for real ``s > 1``
    and an integer ``a >= 1``, at the current mpmath precision with every digit certified: python-flint's
    ``arb.zeta`` (Euler-Maclaurin with rigorous error bounds; Johansson, "Rigorous high-precision
    computation of the Hurwitz zeta function and its derivatives", Numer. Algorithms 69, 2015), about
    25x faster than ``mpmath.zeta``. ``s``: a float, Fraction or mpf (converted exactly). Dimensionless.

    Raises:
        AttentionInputError: ``s <= 1``, ``a < 1`` or non-finite ``s``.
        CertificationError: the enclosure does not certify the working precision (not expected).
    """
    a = positive_int(a, "a")
    digits = mpmath.mp.dps
    with precision(mpmath.mp.prec + 30):
        sa = to_arb(s, "s")
        if not sa > 1:
            raise AttentionInputError(f"s: the series converges for s > 1 only, got {s!r}")
        return arb_to_mpf(sa.zeta(a), digits, digits)


def _power_sum(s, a: int, b) -> mpmath.mpf:
    """``sum_{i=a}^{b} i^(-s)`` by Hurwitz zeta (``b = None`` means infinity), ``s > 1``."""
    if b is not None and b < a:
        return mpmath.mpf(0)
    return hurwitz_zeta(s, a) - (0 if b is None else hurwitz_zeta(s, b + 1))


def knee_spectrum_energy(alpha, j: int, k: int, N: int | None, dps: int = 40) -> tuple[mpmath.mpf, mpmath.mpf]:
    """Energy of the top ``k`` and the total energy of the spectrum
    ``sigma_1 = 1``, ``sigma_i = (j+1)^-alpha`` for ``2 <= i <= j``, ``sigma_i = i^-alpha`` for
    ``j < i <= N`` (``N = None``: infinitely many). It is non-increasing and satisfies
    ``sigma_i <= sigma_1 i^-alpha`` (the decay condition of 003 定理 11.21 with ``C = sigma_1``),
    with the largest tail the condition allows beyond the knee ``j``: the adversarial family for
    lower bounds on the energy ratio (003 推论 11.8).

    Every argument is a scalar; returns two scalar ``mpmath.mpf`` ``(head, total)`` at ``dps`` digits
    (dimensionless: ``sigma_1 = 1``); the infinite tail by :func:`hurwitz_zeta`.

    Raises:
        AttentionInputError: ``alpha <= 1/2`` (the energy diverges), ``j, k < 1``, or
            ``N < max(j, k)``.
    """
    j, k = positive_int(j, "j"), positive_int(k, "k")
    if N is not None and positive_int(N, "N") < max(j, k):
        raise AttentionInputError(f"N: must be >= max(j, k) = {max(j, k)}, got {N}")
    with mpmath.workdps(dps):
        a = mpmath.mpf(alpha.numerator) / alpha.denominator if isinstance(alpha, Fraction) else mpmath.mpf(alpha)
        if not a > mpmath.mpf(1) / 2:
            raise AttentionInputError(f"alpha: must exceed 1/2 for a finite energy, got {alpha!r}")
        s = 2 * a
        flat = (mpmath.mpf(j) + 1) ** (-s)
        total = 1 + (j - 1) * flat + _power_sum(s, j + 1, N)
        head = 1 + (min(k, j) - 1) * flat + (_power_sum(s, j + 1, k) if k > j else 0)
        return +head, +total


def eckart_young_factors(W, r: int) -> tuple[np.ndarray, np.ndarray, float]:
    """``B = U_r Sigma_r (m, r)``, ``A = V_r^T (r, n)`` from the SVD of ``W (m, n)`` and the tail
    energy ``sum_{i>r} sigma_i^2``: the best rank-``r`` ``BA`` in Frobenius norm (Eckart & Young
    1936), the parametrisation ``Delta W = B A`` of LoRA (Hu et al. 2021, eq. (3)). float64.

    Raises:
        AttentionInputError: bad input, or ``r`` not in ``[1, min(m, n)]``.
    """
    w = as_array(W, "W")
    r = positive_int(r, "r")
    if r > min(w.shape):
        raise AttentionInputError(f"r: must be <= min{w.shape} = {min(w.shape)}, got {r}")
    U, s, Vt = np.linalg.svd(w, full_matrices=False)
    return U[:, :r] * s[:r], Vt[:r], float(np.sum(s[r:] ** 2))


def exact_frobenius_sq(W, B, A) -> Fraction:
    """``|W - B A|_F^2`` exactly (rational arithmetic on the exact float64 values), for
    ``W (m, n)``, ``B (m, r)``, ``A (r, n)``: the error of a LoRA-style factorisation (003 表 11.3.3).

    Raises:
        AttentionInputError: shapes that do not chain, empty or non-finite input.
    """
    w, b, a = fmpq_matrix(W, "W"), fmpq_matrix(B, "B"), fmpq_matrix(A, "A")
    if b.nrows() != w.nrows() or a.ncols() != w.ncols() or b.ncols() != a.nrows():
        raise AttentionInputError(f"exact_frobenius_sq: shapes W {w.nrows()}x{w.ncols()}, B {b.nrows()}x"
                                  f"{b.ncols()}, A {a.nrows()}x{a.ncols()}")
    e = w - b * a
    return sum((to_fraction(e[i, j]) ** 2 for i in range(e.nrows()) for j in range(e.ncols())), Fraction(0))


def mp_matrix_effective_rank(A, tau, dps: int = 30) -> int:
    """003 定义 11.25's effective rank of the float64 matrix ``A (N, M)`` as stored, at ``dps`` digits:
    :func:`mp_effective_rank` of :func:`mp_singular_values`, the energies summed at ``dps``
    digits too, so that it decides what float64 arithmetic may round (used as the reference for
    :func:`effective_rank`). Returns a scalar ``int``.

    Raises:
        AttentionInputError: empty or non-finite ``A``, ``tau`` outside (0, 1), or ``A = 0``.
    """
    with mpmath.workdps(dps):
        return mp_effective_rank(mp_singular_values(A, dps), tau)[0]


# -- certified bounds for the exact matrix behind a float64 one (Weyl) ------------------------------

def _arb_upper(x) -> Fraction:
    """The exact upper end of the arb ball ``x`` as a :class:`fractions.Fraction`."""
    man, exp = x.upper().man_exp()
    return Fraction(int(man)) * Fraction(2) ** int(exp)


def _arb_lower(x) -> Fraction:
    """The exact lower end of the arb ball ``x`` as a :class:`fractions.Fraction`."""
    man, exp = x.lower().man_exp()
    return Fraction(int(man)) * Fraction(2) ** int(exp)


def _float_up(x: Fraction) -> float:
    """The least float64 ``>= x`` (``x`` a non-negative rational below the float range's top)."""
    f = float(x)
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


def enclosure_frobenius_distance(A_arb, A) -> Fraction:
    """An upper bound, exact, of ``|X - A|_F`` over every matrix ``X`` in the arb enclosure ``A_arb``
    (an ``(N, M)`` ``flint.arb_mat``, e.g. :func:`attention_claims.maths.arb_softmax_attention`) for the
    float64 ``A (N, M)``: ``sqrt(sum_ij (|mid_ij - a_ij| + rad_ij)^2)`` in arb, its upper end. By Weyl's
    inequality for singular values (Horn & Johnson, Matrix Analysis, 2nd ed., Cor. 7.3.5),
    ``|sigma_i(X) - sigma_i(A)| <= |X - A|_2 <= |X - A|_F`` for every ``i``. Dimensionless (as ``A``).

    Raises:
        AttentionInputError: ``A`` not a non-empty finite 2-D array, or its shape differs from ``A_arb``'s.
    """
    from flint import arb

    a = as_array(A, "A")
    if (A_arb.nrows(), A_arb.ncols()) != a.shape:
        raise AttentionInputError(f"A: shape {a.shape} differs from the enclosure's ({A_arb.nrows()}, {A_arb.ncols()})")
    total = arb(0)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            total += (A_arb[i, j] - arb(float(a[i, j]))).abs_upper() ** 2
    return _arb_upper(total.sqrt())


def certified_sigma1_upper(A, *, rel: float = 1e-12) -> Fraction:
    """An exact ``t >= sigma_1(A)`` for the float64 matrix ``A (N, M)`` as stored: the float64 SVD's
    ``sigma_1`` times ``1 + rel`` (rounded up), certified by
    :func:`attention_claims.maths.certified_singular_value_count` ``(A, t) == 0`` (no singular value
    exceeds ``t``: exact rational Sylvester inertia); ``rel`` is widened 1000-fold (twice at most) if the
    float64 value was not an upper bound that close (LAPACK's ``sigma_1`` errs by about ``N eps``
    relative, Demmel & Kahan 1990). Dimensionless (as ``A``).

    Raises:
        AttentionInputError: ``A`` not a non-empty finite 2-D array, or ``rel`` not positive.
        CertificationError: no ``t`` up to ``sigma_1 (1 + 1000^2 rel)`` was certified (not expected).
    """
    from .exact import CertificationError
    from .rank import certified_singular_value_count

    a = as_array(A, "A")
    if not rel > 0:
        raise AttentionInputError(f"rel: must be > 0, got {rel!r}")
    s1 = float(np.linalg.svd(a, compute_uv=False)[0])
    for widen in (1.0, 1e3, 1e6):
        t = _float_up(Fraction(s1) * (1 + Fraction(rel) * Fraction(widen)))
        if t > 0 and certified_singular_value_count(a, t) == 0:
            return Fraction(t)
    raise CertificationError(f"sigma_1 of A: no upper bound within {1e6 * rel:g} relative of {s1!r} was certified")


def certified_count_above_relative(A_arb, A, rel) -> tuple[int, Fraction]:
    """A certified lower bound ``m`` of ``#{i : sigma_i(X) > rel * sigma_1(X)}`` for every matrix ``X`` in
    the arb enclosure ``A_arb (N, M)`` of the float64 ``A (N, M)`` (singular values ``i <= min(N, M)``),
    with ``rel`` in ``[0, 1]`` (a float or Fraction, taken exactly). With ``delta =``
    :func:`enclosure_frobenius_distance` and ``t1 =`` :func:`certified_sigma1_upper` ``(A)``, Weyl gives
    ``rel * sigma_1(X) <= rel (t1 + delta)`` and ``sigma_i(X) >= sigma_i(A) - delta``, so every ``i`` with
    ``sigma_i(A) > T = rel (t1 + delta) + delta`` counts; ``m`` is the exact count of those
    (:func:`attention_claims.maths.certified_singular_value_count` at ``T`` rounded up). Hence at most
    ``min(N, M) - m`` singular values of ``X`` lie below ``rel * sigma_1(X)``.

    Returns ``(m, T)``. ``m = 0`` also when a zero pivot prevents the exact count (nothing certified).

    Raises:
        AttentionInputError: bad ``A``, shapes that differ, or ``rel`` outside ``[0, 1]``.
        CertificationError: as :func:`certified_sigma1_upper`.
    """
    from .rank import certified_singular_value_count

    r = Fraction(rel)
    if not 0 <= r <= 1:
        raise AttentionInputError(f"rel: must be in [0, 1], got {rel!r}")
    delta = enclosure_frobenius_distance(A_arb, A)
    T = r * (certified_sigma1_upper(A) + delta) + delta
    m = certified_singular_value_count(A, _float_up(T))
    return (m or 0), T


def certified_top_energy_upper(A_arb, A) -> Fraction:
    """An exact upper bound of the top-1 energy fraction ``sigma_1(X)^2 / |X|_F^2`` (003 定义 11.25's
    ratio at ``k = 1``) over every matrix ``X`` in the arb enclosure ``A_arb (N, M)`` of the float64
    ``A (N, M)``: ``(t1 + delta)^2 / F^2`` with ``t1 =`` :func:`certified_sigma1_upper` ``(A)``,
    ``delta =`` :func:`enclosure_frobenius_distance` (Weyl: ``sigma_1(X) <= t1 + delta``) and ``F`` the
    lower end of the arb enclosure of ``|X|_F``. Dimensionless.

    Raises:
        AttentionInputError: bad ``A``, shapes that differ, or an enclosure of ``|X|_F`` that reaches 0.
        CertificationError: as :func:`certified_sigma1_upper`.
    """
    from flint import arb

    delta = enclosure_frobenius_distance(A_arb, A)
    sq = arb(0)
    for i in range(A_arb.nrows()):
        for j in range(A_arb.ncols()):
            sq += A_arb[i, j] ** 2
    low = _arb_lower(sq)
    if not low > 0:
        raise AttentionInputError(f"A: the enclosure of |X|_F^2 ({sq}) reaches 0; no energy fraction")
    return min(Fraction(1), (certified_sigma1_upper(A) + delta) ** 2 / low)
