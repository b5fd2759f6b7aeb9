"""Reference values the checks compare claimed formulas against, computed from first principles and
kept for the process (``functools.lru_cache``): a reference does not depend on the record under test,
so the planted variants of a claim (``tests/framework/test_planted.py``), which re-run the same check
against rewritten records, compute it once.
"""

from __future__ import annotations

import functools

import mpmath


@functools.cache
def decay_vector_sparsity(lam_text: str, n: int, dps: int = 50) -> mpmath.mpf:
    """The sparsity measure ``S(a) = ||a||_1 / (sqrt(n) ||a||_2)`` of the decay-attention vector
    ``a = (lambda^{n-1}, ..., lambda, 1)`` (length ``n``), from the vector's entries: the ``n``
    powers of ``lambda`` multiplied out and summed with ``mpmath.fsum`` at ``dps`` digits, no closed
    form used (Su Jianlin, kexue.fm 9889, the decay example; the measure is the post's S(x)).

    S lies in ``(0, 1]``: 1 for a flat vector (``lambda = 1``), ``1/sqrt(n)`` for a one-hot one. Cost grows
    as ``n`` (n = 16384: ~0.1 s); kept for the process (``functools.cache``, keyed by all three arguments).

    Args:
        lam_text: the decay rate lambda as exact decimal text (e.g. ``"0.99"``), read at ``dps`` digits
            (text, not a float, so that 0.99 is not first rounded to binary).
        n: the vector's length (an ``int >= 1``).
        dps: the working precision, in decimal digits.

    Returns:
        ``S(a)`` as an ``mpmath.mpf`` computed at ``dps`` digits (unitless).

    Raises:
        ValueError: ``n < 1``, or ``lam_text`` is not a number.

    Examples:
        >>> from attention_claims.testkit.references import decay_vector_sparsity
        >>> print(decay_vector_sparsity("1", 4))  # a flat vector
        1.0
        >>> S = decay_vector_sparsity("0.5", 2, dps=30)  # a = (1/2, 1): (3/2) / (sqrt(2) * sqrt(5/4))
        >>> import mpmath
        >>> mpmath.nstr(S, 25), mpmath.nstr(3 / mpmath.sqrt(10), 15)  # 25 of its 30 digits; 3 / sqrt(10)
        ('0.9486832980505137995996681', '0.948683298050514')
        >>> decay_vector_sparsity("0.5", 0)
        Traceback (most recent call last):
            ...
        ValueError: n: the vector needs at least one entry, got 0
    """
    if n < 1:
        raise ValueError(f"n: the vector needs at least one entry, got {n}")
    with mpmath.workdps(dps):
        lam = mpmath.mpf(lam_text)
        powers = [mpmath.mpf(1)]
        for _ in range(n - 1):
            powers.append(powers[-1] * lam)
        return mpmath.fsum(powers) / mpmath.sqrt(n * mpmath.fsum(p * p for p in powers))
