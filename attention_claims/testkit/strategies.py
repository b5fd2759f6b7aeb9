"""Hypothesis strategies the checks share (argument domains declared once, as SciPy's
``_mptestutils.py`` declares them).

Each public name here is a function that *returns a strategy* (a ``hypothesis.strategies.SearchStrategy``),
to pass to ``@given`` or ``data.draw``: ``@given(qk_pairs(n=(2, 6)))``. The drawing code behind the
composite ones is private (``_qk_pairs`` ...), so the reference shows each strategy's own parameters and
what it draws, not Hypothesis's ``draw`` argument.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


def log_uniform(lo_exp: float, hi_exp: float) -> st.SearchStrategy[float]:
    """A strategy for ``10**u`` with ``u`` in ``[lo_exp, hi_exp]``: scales over orders of magnitude.

    Every whole decade in the range is drawn explicitly as well as values in between,
    so a short (``ci``) run still visits the extreme scales where dtype readings break.
    """
    decades = [float(10.0**k) for k in range(math.ceil(lo_exp), math.floor(hi_exp) + 1)]
    between = st.floats(lo_exp, hi_exp, allow_nan=False, allow_infinity=False).map(lambda u: float(10.0**u))
    return st.one_of(st.sampled_from(decades), between) if decades else between


QKTriple = tuple[np.ndarray, np.ndarray, float]
"""``(Q, K, scale)``: query and key matrices (float64) and the logit scale the queries were multiplied by."""


def qk_pairs(*, n: tuple[int, int] = (1, 8), d: tuple[int, int] = (1, 6),
             scale_exp: tuple[float, float] = (-3.0, 4.0), square: bool = True) -> st.SearchStrategy[QKTriple]:
    """A strategy for ``(Q, K, scale)``: ``Q (N, d)`` with entries in ``[-1, 1]`` times a logit scale
    ``10**u`` and ``K (N, d)`` (or ``(M, d)``) with entries in ``[-1, 1]``, so the logits
    ``QK^T/sqrt(d)`` are at most ``scale * sqrt(d)`` in size. Shrinks towards small N, d.

    Args:
        n: inclusive range of the sequence length N (and of M when not ``square``).
        d: inclusive range of the head dimension d.
        scale_exp: range of the scale's decimal exponent u (:func:`log_uniform`).
        square: ``K`` has N rows (else a drawn M).

    Returns:
        A strategy of ``(Q (N, d) float64, K (N or M, d) float64, scale float)``.
    """
    return _qk_pairs(n=n, d=d, scale_exp=scale_exp, square=square)


@st.composite
def _qk_pairs(draw, *, n, d, scale_exp, square):
    N = draw(st.integers(*n), label="N")
    dd = draw(st.integers(*d), label="d")
    M = N if square else draw(st.integers(*n), label="M")
    elems = st.floats(-1.0, 1.0, allow_nan=False, allow_subnormal=False, width=64)
    Q = draw(hnp.arrays(np.float64, (N, dd), elements=elems), label="Q / scale")
    K = draw(hnp.arrays(np.float64, (M, dd), elements=elems), label="K")
    scale = draw(log_uniform(*scale_exp), label="logit scale")
    return Q * scale, K, scale


def shared_argmax_logits(*, n: tuple[int, int] = (2, 8)) -> st.SearchStrategy[np.ndarray]:
    """A strategy for integer logits ``Z (N, N)`` (entries in [-5, 5], as float64) whose rows all peak in
    column 0, by a margin of 1 to 3: attention rows that sharpen to the same one-hot vector (003 定理 11.22,
    推论 11.9).

    Args:
        n: inclusive range of N.

    Returns:
        A strategy of ``Z (N, N)`` float64 arrays.
    """
    return _shared_argmax_logits(n=n)


@st.composite
def _shared_argmax_logits(draw, *, n):
    N = draw(st.integers(*n), label="N")
    Z = draw(hnp.arrays(np.float64, (N, N), elements=st.integers(-5, 5).map(float)), label="Z")
    Z[:, 0] = Z.max(axis=1) + draw(st.integers(1, 3), label="margin")
    return Z


SEQUENCE_LENGTHS = (2, 10, 100, 10**3, 10**4, 10**5, 10**6)
"""Sequence lengths N from 2 to a million, one per decade: where asymptotic cost claims are read."""


def integer_qk(n: tuple[int, int] = (2, 8), d: tuple[int, int] = (1, 4), bound: int = 3,
               wide: bool = False) -> st.SearchStrategy[tuple[np.ndarray, np.ndarray]]:
    """A strategy for integer ``(Q, K)``, each ``(N, d)`` ``int64`` with entries in ``[-bound, bound]``:
    inputs an exact (rational) computation can take as they are.

    Args:
        n, d: inclusive ranges of N and d.
        bound: the entries' largest magnitude.
        wide: force ``N > d`` (d drawn below N).

    Returns:
        A strategy of ``(Q (N, d), K (N, d))`` int64 arrays.
    """
    return _integer_qk(n, d, bound, wide)


@st.composite
def _integer_qk(draw, n, d, bound, wide):
    N = draw(st.integers(*n), label="N")
    dd = draw(st.integers(d[0], min(d[1], N - 1) if wide else d[1]), label="d")
    ints = st.integers(-bound, bound)
    Q = draw(hnp.arrays(np.int64, (N, dd), elements=ints), label="Q")
    K = draw(hnp.arrays(np.int64, (N, dd), elements=ints), label="K")
    return Q, K


def integer_arrays(shape: int | tuple[int, ...], lo: int = -3, hi: int = 3) -> st.SearchStrategy[np.ndarray]:
    """A strategy for ``int64`` arrays of ``shape`` with entries in ``[lo, hi]``."""
    return hnp.arrays(np.int64, shape, elements=st.integers(lo, hi))


def seeded_gaussian_qk(N: int, d: int, scale: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Standard Gaussian ``Q (N, d)`` times ``scale`` and ``K (N, d)``, drawn in that order from
    ``numpy.random.default_rng(seed)``: the generic inputs of the rank and spectrum checks."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((N, d)) * scale, rng.standard_normal((N, d))


def gaussian_qk(n: tuple[int, int] = (8, 24), ratio: int = 4,
                scale_exp: tuple[float, float] = (-2.0, 2.0)) -> st.SearchStrategy[QKTriple]:
    """A strategy for ``(Q, K, scale)``: :func:`seeded_gaussian_qk` with ``N >= ratio * d`` ('n >> d') and
    a drawn logit scale and seed (the generic inputs of the rank and spectrum checks).

    Args:
        n: inclusive range of N.
        ratio: d is drawn in ``1 .. max(1, N // ratio)``.
        scale_exp: range of the scale's decimal exponent (:func:`log_uniform`).

    Returns:
        A strategy of ``(Q (N, d) float64, K (N, d) float64, scale float)``.
    """
    return _gaussian_qk(n, ratio, scale_exp)


@st.composite
def _gaussian_qk(draw, n, ratio, scale_exp):
    N = draw(st.integers(*n), label="N")
    d = draw(st.integers(1, max(1, N // ratio)), label="d")
    s = draw(log_uniform(*scale_exp), label="logit scale")
    seed = draw(st.integers(0, 2**32 - 1), label="seed")
    Q, K = seeded_gaussian_qk(N, d, s, seed)
    return Q, K, s


def search_seeds(shapes, predicate, seeds=range(64)):
    """Deterministic search over ``(N, d, logit scale)`` in ``shapes`` and ``seeds`` for Gaussian
    ``Q, K`` (:func:`seeded_gaussian_qk`) where ``predicate(Q, K)`` holds; returns the first hit
    ``(N, d, scale, seed, Q, K)`` or ``None``."""
    for N, d, s in shapes:
        for seed in seeds:
            Q, K = seeded_gaussian_qk(N, d, s, seed)
            if predicate(Q, K):
                return N, d, s, seed, Q, K
    return None


def probability_vector(n: int | None = None) -> st.SearchStrategy[list[Fraction]]:
    """A strategy for exact probability vectors: integer weights 0..12, not all zero, normalised.

    Args:
        n: the length (drawn in 1..8 when ``None``).

    Returns:
        A strategy of lists of ``n`` ``Fraction`` summing to exactly 1.
    """
    return _probability_vector(n)


@st.composite
def _probability_vector(draw, n):
    n = draw(st.integers(1, 8)) if n is None else n
    w = draw(st.lists(st.integers(0, 12), min_size=n, max_size=n).filter(any))
    t = sum(w)
    return [Fraction(v, t) for v in w]


def flat_probability_vector(n: int) -> st.SearchStrategy[list[Fraction]]:
    """A strategy for vectors uniform on their first k of n entries (k drawn in 1..n): the vectors at
    which sparsity and entropy are easiest to compare.

    Args:
        n: the length.

    Returns:
        A strategy of lists ``[1/k] * k + [0] * (n - k)`` of ``Fraction``.
    """
    return _flat_probability_vector(n)


@st.composite
def _flat_probability_vector(draw, n):
    k = draw(st.integers(1, n))
    return [Fraction(1, k)] * k + [Fraction(0)] * (n - k)


def rationals(lo: int, hi: int, den: int = 4) -> st.SearchStrategy[Fraction]:
    """A strategy for rationals ``k/den`` in ``[lo, hi]`` (``Fraction``, exact)."""
    return st.integers(lo * den, hi * den).map(lambda k: Fraction(k, den))
