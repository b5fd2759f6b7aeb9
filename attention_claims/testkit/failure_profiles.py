"""Failure profiles at the document's own parameters (docs/verdicts.md, "Failure profile").

A check's certified counterexample is shrunk by Hypothesis to its smallest form; these helpers
measure, separately and cheaply, how often the same proposition fails at the sizes the document
uses, and attach the result with :meth:`attention_claims.framework.evidence.CheckLog.failure_profile`,
the class computed from the counts by :func:`attention_claims.framework.evidence.failure_class`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from .._cache import disk_memo_ints
from ..framework.evidence import CheckLog, failure_class

#: Singular values below ``RANK_REL_TOL * sigma_1`` are not counted by :func:`gaussian_softmax_ranks`.
#: The float64 attention matrix is within about ``N * 1e-16`` (spectral norm) of the exact one, so by
#: Weyl's inequality a singular value counted at this tolerance is far above any rounding error.
RANK_REL_TOL = 1e-6


def gaussian_qk_draws(N: int, d: int, trials: int, seed: int):
    """The profiles' natural distribution: ``trials`` draws of ``Q, K (N, d)`` with i.i.d. standard normal
    entries from ``numpy.random.default_rng(seed)``, Q before K, yielded one at a time as ``(Q, K, rng)``
    (``rng`` for whatever else a draw needs, drawn after its Q and K).

    Args:
        N: the sequence length (rows of Q and K).
        d: the head dimension (columns).
        trials: the number of draws.
        seed: the seed of ``numpy.random.default_rng``.

    Yields:
        ``(Q (N, d) float64, K (N, d) float64, rng numpy.random.Generator)``, ``trials`` times.

    Raises:
        ValueError: ``N``, ``d`` or ``trials`` below 1 (on the first ``next``).

    Examples:
        >>> from attention_claims.testkit.failure_profiles import gaussian_qk_draws
        >>> draws = gaussian_qk_draws(4, 2, trials=3, seed=0)
        >>> Q, K, rng = next(draws)
        >>> Q.shape, K.shape, Q.dtype, sum(1 for _ in draws)  # the two draws left
        ((4, 2), (4, 2), dtype('float64'), 2)
    """
    if min(N, d, trials) < 1:
        raise ValueError(f"N, d and trials must be >= 1, got N={N}, d={d}, trials={trials}")
    rng = np.random.default_rng(seed)
    for _ in range(trials):
        Q, K = rng.standard_normal((N, d)), rng.standard_normal((N, d))
        yield Q, K, rng


@functools.lru_cache(maxsize=16)
@disk_memo_ints
def gaussian_softmax_ranks(N: int, d: int, trials: int, seed: int, rel_tol: float = RANK_REL_TOL) -> tuple[int, ...]:
    """Numerical ranks of ``A = softmax(QK^T / sqrt(d))`` (rows, float64) for ``trials`` independent
    draws of ``Q, K (N, d)`` with i.i.d. standard normal entries from ``numpy.random.default_rng(seed)``:
    the number of singular values of ``A`` (``np.linalg.svd``) above ``rel_tol * sigma_1``. Cached in the
    process and on disk (:func:`attention_claims._cache.disk_memo_ints`), so a Hypothesis check that asks
    on every example computes it once (about 40 ms a draw at N = 512 on one core), and a warm run not at all.

    Args:
        N: the sequence length (A is ``(N, N)``).
        d: the head dimension.
        trials: the number of independent draws (:func:`gaussian_qk_draws`).
        seed: the seed of ``numpy.random.default_rng``.
        rel_tol: the relative threshold on the singular values (default :data:`RANK_REL_TOL`).

    Returns:
        The ``trials`` numerical ranks, a ``tuple`` of ``int`` in ``[1, N]``, in draw order.

    Raises:
        ValueError: ``N``, ``d`` or ``trials`` below 1, or ``rel_tol`` not in (0, 1).

    Examples:
        >>> from attention_claims.testkit.failure_profiles import gaussian_softmax_ranks
        >>> gaussian_softmax_ranks(8, 2, trials=5, seed=0)  # full rank 8 although d = 2
        (8, 8, 8, 8, 8)
    """
    if not 0.0 < rel_tol < 1.0:
        raise ValueError(f"rel_tol must lie in (0, 1), got {rel_tol}")
    ranks = []
    for Q, K, _ in gaussian_qk_draws(N, d, trials, seed):
        S = Q @ K.T / math.sqrt(d)
        S -= S.max(axis=1, keepdims=True)
        A = np.exp(S)
        A /= A.sum(axis=1, keepdims=True)
        s = np.linalg.svd(A, compute_uv=False)
        ranks.append(int((s > rel_tol * s[0]).sum()))
    return tuple(ranks)


def sweep_counts(failed: Sequence[bool], values: Sequence[float], parameter: str, *,
                 boundary: float | None = None, boundary_label: str = "") -> dict:
    """The ``sweep`` of a failure profile (:meth:`CheckLog.failure_profile`) from per-draw results: the
    draws grouped by the value of ``parameter`` each was taken at (``values[i]`` for draw ``i``), in
    increasing order, with the draws and failures at each value; ``boundary`` (optional) the value where
    the reading is known to start or stop failing.

    Args:
        failed: one ``bool`` a draw: whether the proposition failed on it.
        values: one finite number a draw (any shape, flattened to ``len(failed)``): the parameter's value.
        parameter: the parameter's name as the plot labels it (e.g. ``"logit scale"``, ``"layer"``).
        boundary: a value of the parameter to mark on the plot, or ``None``.
        boundary_label: the boundary's label.

    Returns:
        ``{"parameter", "values", "trials", "failures"}`` (plus ``"boundary"``, ``"boundary_label"`` when
        given), checked by :func:`attention_claims.framework.evidence.check_sweep`.

    Raises:
        ValueError: ``failed`` and ``values`` differ in length, a value is not a finite number, or
            ``parameter`` is empty (:func:`attention_claims.framework.evidence.check_sweep`).

    Examples:
        >>> from attention_claims.testkit.failure_profiles import sweep_counts
        >>> sweep_counts([False, True, True, True], [1, 1, 2, 2], "logit scale")
        {'parameter': 'logit scale', 'values': [1.0, 2.0], 'trials': [2, 2], 'failures': [1, 2]}
    """
    from ..framework.evidence import check_sweep

    flat = [float(v) for v in np.asarray(values, dtype=float).ravel()]
    if len(flat) != len(failed):
        raise ValueError(f"sweep of {parameter!r}: {len(flat)} values for {len(failed)} draws")
    if not all(math.isfinite(v) for v in flat):
        raise ValueError(f"sweep of {parameter!r}: the values must be finite numbers")
    xs = sorted(set(flat))
    trials = [sum(1 for v in flat if v == x) for x in xs]
    failures = [sum(1 for v, f in zip(flat, failed, strict=True) if v == x and f) for x in xs]
    sweep = {"parameter": parameter, "values": xs, "trials": trials, "failures": failures}
    if boundary is not None:
        sweep.update(boundary=boundary, boundary_label=boundary_label)
    return check_sweep(sweep)


def record_profile(log: CheckLog, failed: Sequence[bool], *, setting: str, summary: str,
                   by: tuple[str, Sequence[float]] | None = None, boundary: float | None = None,
                   boundary_label: str = "") -> str:
    """Attach the failure profile of the draws ``failed`` (one bool a draw: whether the proposition
    failed on it) to ``log``, its class computed from the counts (:func:`failure_class`); returns the
    class. ``by = (parameter, values)`` (one value a draw, e.g. the logit scale or the layer of each
    draw) adds the profile's sweep (:func:`sweep_counts`), which the report draws as the failing
    fraction against that parameter, with ``boundary`` (a value of the parameter) marked.

    Args:
        log: the check's log (the ``claim_log`` fixture).
        failed: one ``bool`` a draw: whether the proposition failed on it.
        setting: the parameters of the draws (e.g. ``"N=512, d=64"``).
        summary: one sentence on how the draws were made and judged.
        by: ``(parameter, values)``, one value a draw, for the sweep; or ``None``.
        boundary: the sweep's boundary (:func:`sweep_counts`), or ``None``.
        boundary_label: its label.

    Returns:
        The class: ``"generic"``, ``"at-document-parameters"`` or ``"special-inputs"``.

    Raises:
        ValueError: no draw, or an empty ``setting`` (:meth:`CheckLog.failure_profile`); a malformed
            ``by`` (:func:`sweep_counts`).

    Examples:
        >>> from attention_claims.testkit import CheckLog
        >>> from attention_claims.testkit.failure_profiles import record_profile
        >>> log = CheckLog()
        >>> record_profile(log, [True, False, False], setting="N=8, d=2", summary="3 Gaussian draws")
        'at-document-parameters'
        >>> log.profile["trials"], log.profile["failures"]
        (3, 1)
    """
    failed = [bool(f) for f in np.asarray(failed, dtype=bool).ravel()] if len(failed) else []
    trials, failures = len(failed), sum(failed)
    cls = failure_class(trials, failures)
    sweep = None
    if by is not None:
        parameter, values = by
        sweep = sweep_counts(failed, values, parameter, boundary=boundary, boundary_label=boundary_label)
    log.failure_profile(cls, setting=setting, trials=trials, failures=failures, summary=summary, sweep=sweep)
    return cls


def softmax_rank_above_profile(log: CheckLog, *, N: int, d: int, bound: int, trials: int = 30, seed: int = 0,
                               setting: str | None = None, what: str = "rank A") -> str:
    """Profile of "rank softmax(QK^T/sqrt d) <= bound" at ``N, d``: a draw of
    :func:`gaussian_softmax_ranks` fails when its numerical rank exceeds ``bound``. Attaches the profile
    (with the seed, the tolerance and the range of ranks in its summary) and returns its class.

    Args:
        log: the check's log (the ``claim_log`` fixture).
        N: the sequence length of the draws.
        d: the head dimension of the draws.
        bound: the claimed bound on the rank.
        trials: the number of draws.
        seed: the seed of ``numpy.random.default_rng``.
        setting: the profile's setting text (default ``"N=<N>, d=<d>"``).
        what: the quantity's name in the summary.

    Returns:
        The profile's class (see :func:`record_profile`).

    Raises:
        ValueError: as :func:`gaussian_softmax_ranks`.

    Examples:
        >>> from attention_claims.testkit import CheckLog
        >>> from attention_claims.testkit.failure_profiles import softmax_rank_above_profile
        >>> log = CheckLog()
        >>> softmax_rank_above_profile(log, N=8, d=2, bound=2, trials=5)  # "rank A <= d" fails on every draw
        'generic'
        >>> log.profile["setting"]
        'N=8, d=2'
    """
    ranks = gaussian_softmax_ranks(N, d, trials, seed)
    summary = (f"{what} = numerical rank of softmax(QK^T/sqrt d), float64, Gaussian Q, K "
               f"(numpy default_rng({seed})), singular values above {RANK_REL_TOL:g} sigma_1 counted: "
               f"{min(ranks)}..{max(ranks)} against the bound {bound}")
    return record_profile(log, [r > bound for r in ranks], setting=setting or f"N={N}, d={d}", summary=summary)
