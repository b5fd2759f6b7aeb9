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

    ``lam_text`` is the decay rate as exact decimal text (e.g. ``"0.99"``), read at ``dps`` digits.
    Cost grows as ``n`` (n = 16384: ~0.1 s). Returns an mpmath number at ``dps`` digits.

    Raises:
        ValueError: ``n < 1``, or ``lam_text`` is not a number.
    """
    if n < 1:
        raise ValueError(f"n: the vector needs at least one entry, got {n}")
    with mpmath.workdps(dps):
        lam = mpmath.mpf(lam_text)
        powers = [mpmath.mpf(1)]
        for _ in range(n - 1):
            powers.append(powers[-1] * lam)
        return mpmath.fsum(powers) / mpmath.sqrt(n * mpmath.fsum(p * p for p in powers))
