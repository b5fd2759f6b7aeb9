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

    Args:
        lo_exp: the smallest decimal exponent u (a ``float``; the value drawn is ``10**lo_exp`` at least).
        hi_exp: the largest decimal exponent u (``>= lo_exp``).

    Returns:
        A strategy of positive Python ``float`` in ``[10**lo_exp, 10**hi_exp]`` (unitless scale factors).

    Raises:
        hypothesis.errors.InvalidArgument: ``lo_exp > hi_exp`` (when the strategy is first drawn from).

    Examples:
        >>> from hypothesis import find
        >>> from attention_claims.testkit import log_uniform
        >>> find(log_uniform(-2, 3), lambda x: x > 50)  # the decades 0.01 .. 1000 are drawn as they are
        100.0
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

    Raises:
        hypothesis.errors.InvalidArgument: an empty range (``lo > hi``) in ``n``, ``d`` or ``scale_exp``
            (when the strategy is first drawn from).

    Examples:
        >>> from hypothesis import find
        >>> from attention_claims.testkit import qk_pairs
        >>> Q, K, scale = find(qk_pairs(n=(2, 4), d=(1, 3)), lambda t: True)  # the smallest draw
        >>> Q.shape, K.shape, Q.dtype, scale
        ((2, 1), (2, 1), dtype('float64'), 0.001)
        >>> Q, K, scale = find(qk_pairs(n=(2, 4), square=False), lambda t: len(t[1]) == 3)
        >>> Q.shape, K.shape  # M = 3 key rows against N = 2 queries
        ((2, 1), (3, 1))
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
        A strategy of ``Z (N, N)`` float64 arrays (logits, in nats).

    Raises:
        hypothesis.errors.InvalidArgument: ``n`` is an empty range (when the strategy is first drawn from).

    Examples:
        >>> from hypothesis import find
        >>> from attention_claims.testkit import shared_argmax_logits
        >>> find(shared_argmax_logits(n=(3, 5)), lambda Z: True)
        array([[1., 0., 0.],
               [1., 0., 0.],
               [1., 0., 0.]])
    """
    return _shared_argmax_logits(n=n)


@st.composite
def _shared_argmax_logits(draw, *, n):
    N = draw(st.integers(*n), label="N")
    Z = draw(hnp.arrays(np.float64, (N, N), elements=st.integers(-5, 5).map(float)), label="Z")
    Z[:, 0] = Z.max(axis=1) + draw(st.integers(1, 3), label="margin")
    return Z


SEQUENCE_LENGTHS = (2, 10, 100, 10**3, 10**4, 10**5, 10**6)
"""Sequence lengths N from 2 to a million, one per decade: where asymptotic cost claims are read.

Examples:
    >>> from attention_claims.testkit import SEQUENCE_LENGTHS
    >>> SEQUENCE_LENGTHS[:3], SEQUENCE_LENGTHS[-1]
    ((2, 10, 100), 1000000)
"""


def integer_qk(n: tuple[int, int] = (2, 8), d: tuple[int, int] = (1, 4), bound: int = 3,
               wide: bool = False) -> st.SearchStrategy[tuple[np.ndarray, np.ndarray]]:
    """A strategy for integer ``(Q, K)``, each ``(N, d)`` ``int64`` with entries in ``[-bound, bound]``:
    inputs an exact (rational) computation can take as they are.

    Args:
        n: inclusive range of the sequence length N.
        d: inclusive range of the head dimension d.
        bound: the entries' largest magnitude (an ``int >= 0``).
        wide: force ``N > d`` (d drawn below N).

    Returns:
        A strategy of ``(Q (N, d), K (N, d))`` int64 arrays.

    Raises:
        hypothesis.errors.InvalidArgument: an empty range in ``n`` or ``d`` (with ``wide``, also a
            ``d`` range that starts at or above N), or a negative ``bound`` (when first drawn from).

    Examples:
        >>> from hypothesis import find
        >>> from attention_claims.testkit import integer_qk
        >>> Q, K = find(integer_qk(n=(3, 3), d=(1, 4), wide=True), lambda qk: qk[0].shape[1] == 2)
        >>> Q.shape, K.shape, Q.dtype  # wide: d = 2 < N = 3 (d = 3 or 4 is never drawn)
        ((3, 2), (3, 2), dtype('int64'))
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
    """A strategy for ``int64`` arrays of ``shape`` with entries in ``[lo, hi]``.

    Args:
        shape: the array's shape (an ``int`` for a vector).
        lo: the smallest entry.
        hi: the largest entry (``>= lo``).

    Returns:
        A strategy of ``int64`` NumPy arrays of exactly ``shape``.

    Raises:
        hypothesis.errors.InvalidArgument: ``lo > hi`` (when the strategy is first drawn from).
        ValueError: a shape with a negative size (NumPy's error, when drawn from).

    Examples:
        >>> from hypothesis import find
        >>> from attention_claims.testkit import integer_arrays
        >>> a = find(integer_arrays((2, 3), lo=0, hi=5), lambda a: a.max() == 5)
        >>> a.shape, a.dtype, int(a.max()), bool((a >= 0).all())
        ((2, 3), dtype('int64'), 5, True)
    """
    return hnp.arrays(np.int64, shape, elements=st.integers(lo, hi))


def seeded_gaussian_qk(N: int, d: int, scale: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Standard Gaussian ``Q (N, d)`` times ``scale`` and ``K (N, d)``, drawn in that order from
    ``numpy.random.default_rng(seed)``: the generic inputs of the rank and spectrum checks.

    Not a strategy: the same arguments give the same arrays, so a counterexample is reproduced from its
    four numbers (what :func:`gaussian_qk` and :func:`search_seeds` draw and report).

    Args:
        N: the sequence length (rows of Q and K).
        d: the head dimension (columns).
        scale: the logit scale the queries are multiplied by (a ``float``, unitless).
        seed: the seed of ``numpy.random.default_rng`` (an ``int >= 0``).

    Returns:
        ``(Q, K)``: ``Q (N, d)`` float64 (standard normal times ``scale``) and ``K (N, d)`` float64
        (standard normal), Q drawn first.

    Raises:
        ValueError: a negative ``N`` or ``d``, or a negative ``seed`` (NumPy's own errors).

    Examples:
        >>> import numpy as np
        >>> from attention_claims.testkit import seeded_gaussian_qk
        >>> Q, K = seeded_gaussian_qk(4, 2, 10.0, seed=0)
        >>> Q.shape, K.shape, Q.dtype
        ((4, 2), (4, 2), dtype('float64'))
        >>> Q2, _ = seeded_gaussian_qk(4, 2, 1.0, seed=0)
        >>> bool(np.array_equal(Q, 10.0 * Q2))  # the same draw, scaled
        True
    """
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

    Raises:
        hypothesis.errors.InvalidArgument: an empty range in ``n`` or ``scale_exp`` (when the strategy is
            first drawn from).

    Examples:
        >>> from hypothesis import given, settings
        >>> from attention_claims.testkit import gaussian_qk
        >>> @settings(max_examples=10, database=None)
        ... @given(gaussian_qk(n=(8, 24), ratio=4))
        ... def check(qks):
        ...     Q, K, scale = qks
        ...     N, d = Q.shape
        ...     assert K.shape == (N, d) and N >= 4 * d  # 'n >> d'
        >>> check()
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
    ``Q, K`` (:func:`seeded_gaussian_qk`) where ``predicate(Q, K)`` holds: for a property that random
    draws meet too rarely for Hypothesis to find, searched in a fixed order so the hit is the same on
    every machine.

    Args:
        shapes: an iterable of ``(N, d, scale)`` triples, tried in order.
        predicate: a function of ``(Q (N, d) float64, K (N, d) float64)`` returning a truth value.
        seeds: the seeds tried for each shape, in order.

    Returns:
        The first hit ``(N, d, scale, seed, Q (N, d), K (N, d))`` (shapes outer, seeds inner), or ``None``
        when no pair satisfies ``predicate``.

    Raises:
        Exception: whatever ``predicate`` raises (passed on unchanged).

    Examples:
        >>> from attention_claims.testkit import search_seeds
        >>> hit = search_seeds([(4, 2, 1.0)], lambda Q, K: Q[0, 0] > 1.0)
        >>> N, d, scale, seed, Q, K = hit
        >>> (N, d, scale, seed), Q.shape
        ((4, 2, 1.0, 3), (4, 2))
        >>> search_seeds([(4, 2, 1.0)], lambda Q, K: False, seeds=range(3)) is None
        True
    """
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

    Raises:
        hypothesis.errors.InvalidArgument: ``n`` is negative (when the strategy is first drawn from); with
            ``n = 0`` no vector exists, and Hypothesis reports that it could not satisfy the strategy's
            filter (``hypothesis.errors.Unsatisfiable`` or a failed health check).

    Examples:
        >>> from hypothesis import find
        >>> from attention_claims.testkit import probability_vector
        >>> p = find(probability_vector(3), lambda p: p[0] > 0 and p[2] > 0)
        >>> p, sum(p)
        ([Fraction(1, 2), Fraction(0, 1), Fraction(1, 2)], Fraction(1, 1))
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

    Raises:
        hypothesis.errors.InvalidArgument: ``n < 1`` (when the strategy is first drawn from).

    Examples:
        >>> from hypothesis import find
        >>> from attention_claims.testkit import flat_probability_vector
        >>> find(flat_probability_vector(4), lambda p: p[1] > 0)
        [Fraction(1, 2), Fraction(1, 2), Fraction(0, 1), Fraction(0, 1)]
    """
    return _flat_probability_vector(n)


@st.composite
def _flat_probability_vector(draw, n):
    k = draw(st.integers(1, n))
    return [Fraction(1, k)] * k + [Fraction(0)] * (n - k)


def rationals(lo: int, hi: int, den: int = 4) -> st.SearchStrategy[Fraction]:
    """A strategy for rationals ``k/den`` in ``[lo, hi]`` (``Fraction``, exact).

    Args:
        lo: the smallest value (an ``int``).
        hi: the largest value (an ``int >= lo``).
        den: the denominator of the grid (an ``int >= 1``): the values are multiples of ``1/den``.

    Returns:
        A strategy of ``fractions.Fraction`` in ``[lo, hi]`` on the grid ``1/den`` (in lowest terms).

    Raises:
        hypothesis.errors.InvalidArgument: ``lo > hi`` (when the strategy is first drawn from).
        ZeroDivisionError: ``den = 0`` (when drawn from).

    Examples:
        >>> from hypothesis import find
        >>> from attention_claims.testkit import rationals
        >>> find(rationals(0, 2), lambda x: x > 1)  # the smallest quarter above 1
        Fraction(5, 4)
    """
    return st.integers(lo * den, hi * den).map(lambda k: Fraction(k, den))
