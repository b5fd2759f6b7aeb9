"""表 11.3.1 (003): the columns that can be recomputed from each row's own N and d and from
定义 11.25 (effective rank at energy threshold tau)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from attention_claims.maths import effective_rank, top_fraction_energy
from attention_claims.testkit import refute

# (model, N, d, theoretical max rank, effective rank, top fraction, energy), transcribed from 表 11.3.1.
TABLE_11_3_1 = [
    ("Base (12层)", 512, 768, 768, 150, Fraction(10, 100), Fraction(85, 100)),
    ("Large (24层)", 1024, 1024, 1024, 200, Fraction(10, 100), Fraction(90, 100)),
    ("XL (48层)", 2048, 2048, 2048, 300, Fraction(8, 100), Fraction(88, 100)),
]


def _rows(claimed):
    """The table rows with the values the record claims (``[claimed]``) substituted."""
    keys = ("base", "large", "xl")
    return [(m, N, d, int(claimed.eval(f"max_rank_{k}")), int(claimed.eval(f"eff_rank_{k}")), frac, e)
            for k, (m, N, d, _mr, _er, frac, e) in zip(keys, TABLE_11_3_1, strict=True)]


@pytest.mark.claim("table-11-3-1-spectral-features", reading="max-rank-column")
def test_max_rank_column(claim_log, claimed):
    wrong = []
    for model, N, d, max_rank, *_ in _rows(claimed):
        claim_log.example(N=N, d=d)
        if max_rank != min(N, d):
            wrong.append((model, N, d, max_rank))
    if wrong:
        model, N, d, max_rank = wrong[0]
        refute(f"{model}: the table's theoretical maximum rank {max_rank} is not min(N, d) = {min(N, d)}: an "
               f"{N}x{N} attention matrix with head dimension {d} has rank <= {min(N, d)}",
               example={"row": model, "N": N, "d": d, "table": max_rank, "max_possible": min(N, d)},
               certified=True, certificate=f"integer comparison: {max_rank} != min({N}, {d}) = {min(N, d)}")


def witness_spectrum(N: int, k: int, energy: Fraction, r: int, tau: Fraction) -> np.ndarray | None:
    """A non-increasing spectrum (singular values, descending) of length ``N`` whose top ``k``
    squared values carry ``energy`` of the total and whose effective rank at ``tau`` is ``r``
    (定义 11.25), or ``None`` when no spectrum can: ``energy >= tau`` forces eff-rank <= k,
    ``energy < tau`` forces eff-rank > k.
    """
    if not (1 <= k < N and 1 <= r <= N):
        return None
    if energy >= tau or r <= k:
        return None  # energy >= tau forces eff-rank <= k; energy < tau forces eff-rank > k
    head = [energy / k] * k
    step = (tau - energy) / (r - k) * (1 + Fraction(1, 2 * (r - k)))  # reaches tau at r, not before
    mid = [step] * (r - k)
    rest = 1 - energy - step * (r - k)
    tail = [rest / (N - r)] * (N - r) if N > r else []
    energies = head + mid + tail
    if rest < 0 or any(b > a for a, b in zip(energies, energies[1:], strict=False)):
        return None
    return np.sqrt(np.array([float(e) for e in energies]))


@pytest.mark.parametrize("tau", [
    pytest.param(Fraction(9, 10), marks=pytest.mark.claim("table-11-3-1-spectral-features", reading="effective-rank-vs-energy-tau-0.9"),
                 id="tau-0.9"),
    pytest.param(Fraction(95, 100), marks=pytest.mark.claim("table-11-3-1-spectral-features", reading="effective-rank-vs-energy-tau-0.95"),
                 id="tau-0.95"),
])
def test_effective_rank_consistent_with_energy(tau, claim_log, claimed):
    inconsistent = []
    for model, N, _d, _max_rank, r, frac, energy in _rows(claimed):
        k = math.ceil(frac * N)  # the convention of attention_claims.maths.top_fraction_energy
        claim_log.example(N=N, k=k)
        sigma = witness_spectrum(N, k, energy, r, tau)
        if sigma is None:
            inconsistent.append((model, N, k, r, frac, energy))
            continue
        got_r = effective_rank(sigma, float(tau))
        got_e = top_fraction_energy(sigma, float(frac))
        assert got_r == r and abs(got_e - float(energy)) < 1e-9, (
            f"witness construction broken for {model}: eff-rank {got_r}, energy {got_e}")
        claim_log.note(f"{model}: witness spectrum has eff-rank {got_r} at tau = {float(tau)} and "
                       f"{got_e:.2%} of the energy in the top {k}.")
    if inconsistent:
        model, N, k, r, frac, energy = inconsistent[0]
        refute(f"{model}: 'top {float(frac):.0%} capture {float(energy):.0%}' means the top k = {k} singular "
               f"values already reach tau = {float(tau)}, so eff-rank <= {k}, but the table says ~{r}",
               example={"rows": [row[0] for row in inconsistent], "N": N, "k": k, "energy": float(energy),
                        "eff_rank": r, "tau": float(tau)},
               certified=True,
               certificate="exact rational comparison: cumulative energy at k >= energy >= tau implies "
                           "eff-rank <= k (定义 11.25)")


# The readings on trained models (on-minilm-l6-at-n-512, on-smollm2-135m-at-n-512) are checked in
# checks/test_trained.py::test_table_base_row_on_trained_model.
