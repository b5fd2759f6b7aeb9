"""The proved route of the trained-model measurement (issue 45): :func:`residual_bound` and :func:`prove_head`
derive every constant of their enclosure from the computed SVD's residual and orthogonality defects, so an
eigensolver error the assumed ``delta = GRAM_SAFETY N eps lambda_max`` does not cover (between ``delta`` and the
textbook O(N^2 u) backward error, about 10 delta) widens the enclosure instead of moving a decision."""

from __future__ import annotations

import numpy as np
import pytest

from attention_claims.models import measurement as m

N = 64
TAU = 0.9


def _orthogonal(rng, n):
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    return q * np.sign(np.diag(r))


def _spectrum_at_crossing(gap: float) -> tuple[np.ndarray, int]:
    """Squared singular values ``lam`` (descending, ``lam[0] = 1``) and a 1-based ``r`` such that the cumulative
    energy ``C(r)`` is ``gap`` (absolute) above ``0.9`` of the total: the effective rank at 0.9 is ``r``, by a margin
    of ``gap``; ``lam[r]`` (the next one) is large, so that ``C(r + 1)`` is far above."""
    lam = 0.97 ** np.arange(N)
    r = int(np.searchsorted(np.cumsum(lam), TAU * lam.sum())) + 1
    excess = lam[:r].sum() - TAU * lam.sum()  # in [0, lam[r - 1])
    lam[-8:] += (excess - gap) / TAU / 8  # the total grows, C(r) does not: C(r) - 0.9 T = gap
    lam = np.sort(lam)[::-1]
    assert lam[0] == 1.0 and int(np.searchsorted(np.cumsum(lam), TAU * lam.sum())) + 1 == r
    assert abs(lam[:r].sum() - TAU * lam.sum() - gap) < 1e-3 * gap + 1e-13
    return lam, r


def _planted(lam_shift: float, down: int = N):
    """A solver that returns the exact SVD's vectors with the first ``down`` squared singular values moved down by
    ``lam_shift`` and the others up by as much (an eigensolver error of 2-norm ``lam_shift`` on ``a aᵀ``)."""
    def svd(a):
        U, s, Vt = np.linalg.svd(a, full_matrices=False)
        shift = np.where(np.arange(s.size) < down, -lam_shift, lam_shift)
        return U, np.sqrt(np.maximum(s * s + shift, 0.0)), Vt
    return svd


def _head(lam: np.ndarray) -> np.ndarray:
    rng = np.random.default_rng(7)
    return (_orthogonal(rng, N) * np.sqrt(lam)) @ _orthogonal(rng, N).T


def test_honest_solver_proves_the_effective_rank_with_a_tiny_enclosure():
    lam, r = _spectrum_at_crossing(1e-6)
    a = _head(lam)
    out = m.prove_head(a)
    assert out is not None and out["proved"] == 1.0
    assert out["eff_rank_90"] == r
    assert out["energy_top10_err"] < 1e-11
    s, e = m.residual_bound(a)
    assert e < 1e-12 * np.linalg.norm(a)
    assert abs(out["sigma_max"] - 1.0) <= out["sigma_max_err"]


def test_planted_solver_error_between_delta_and_the_textbook_bound_is_refused():
    """Each squared singular value moved by 6 delta, the leading ``r`` down and the rest up (above the assumed delta,
    below the textbook ~10 delta):
    the old route (the computed spectrum trusted within ``own_energy_bound``, ``certify_from_float32`` with
    ``e_f = 0``) certifies the wrong effective rank ``r + 1``; the residual bound sees the error and either
    refuses or proves the true ``r``."""
    delta = m.gram_resolution(N) ** 2 * 1.0  # lambda_max = 1
    lam, r = _spectrum_at_crossing(0.5 * N * delta)  # C(r) only half of N delta above 0.9 T
    a = _head(lam)
    planted = _planted(6 * delta, down=r)
    _, s_planted, _ = planted(a)
    total = float(np.sum(a * a))
    old = m.certify_from_float32(s_planted, m.own_energy_bound(s_planted), 0.0, total)
    assert old is not None and old["eff_rank_90"] == r + 1  # the assumed constant certifies a wrong rank
    new = m.prove_head(a, svd=planted)
    assert new is None or new["eff_rank_90"] == r
    assert new is None  # here the enclosure straddles the crossing: nothing proved
    honest = m.prove_head(a)  # the crossing's margin (0.5 N delta) is near the rigorous enclosure's width itself
    assert honest is None or honest["eff_rank_90"] == r


def test_enclosures_contain_the_truth_under_the_planted_error():
    lam, _ = _spectrum_at_crossing(1e-3)
    a = _head(lam)
    s, e = m.residual_bound(a, svd=_planted(6 * m.gram_resolution(N) ** 2))
    assert np.all(np.abs(s - np.sqrt(np.sort(lam)[::-1])) <= e)
    out = m.prove_head(a, svd=_planted(6 * m.gram_resolution(N) ** 2))
    k = int(np.ceil(0.1 * N))
    truth = np.sort(lam)[::-1][:k].sum() / lam.sum()
    assert out is not None and abs(out["energy_top10"] - truth) <= out["energy_top10_err"]


def test_residual_bound_rejects_bad_input_and_non_orthonormal_factors():
    with pytest.raises(ValueError, match="finite 2-D"):
        m.residual_bound(np.full((3, 3), np.nan))
    with pytest.raises(ValueError, match="orthonormal"):
        m.residual_bound(np.eye(4), svd=lambda a: (2 * np.eye(4), np.ones(4), np.eye(4)))
    with pytest.raises(ValueError, match="descending"):
        m.residual_bound(np.eye(2), svd=lambda a: (np.eye(2), np.array([1.0, 2.0]), np.eye(2)))


def test_needs_proof_flags_a_decision_that_a_hundredfold_constant_would_change(monkeypatch):
    # the 0.9 crossing 0.5 N delta above the threshold: certified with the assumed constant, not with 100 times it
    lam, r = _spectrum_at_crossing(0.5 * N * m.gram_resolution(N) ** 2 * 8)
    a = _head(lam)
    s = np.linalg.svd(a, compute_uv=False)
    total = float(np.sum(a * a))
    own = m.own_energy_bound(s)
    near = m.certify_from_float32(s, own, 0.0, total)
    assert near is not None and near["eff_rank_90"] == r
    assert m.needs_proof(s, own, 0.0, total, near)
    far_lam, _ = _spectrum_at_crossing(1e-3)
    b = _head(far_lam)
    sb = np.linalg.svd(b, compute_uv=False)
    own_b, total_b = m.own_energy_bound(sb), float(np.sum(b * b))
    cb = m.certify_from_float32(sb, own_b, 0.0, total_b)
    assert cb is not None and not m.needs_proof(sb, own_b, 0.0, total_b, cb)
    # the same head with its top-10 % energy within 100 own-widths of 0.8 is near
    k = int(np.ceil(0.1 * N))
    monkeypatch.setattr(m, "ENERGY_THRESHOLD", float(np.sum(sb[:k] ** 2) / total_b) + 50 * own_b / total_b)
    assert m.needs_proof(sb, own_b, 0.0, total_b, cb)


def test_a_trained_reading_is_proved_only_where_every_head_near_a_threshold_was_proved():
    """``checks/test_trained.py``'s ``_strength``: ``recomputed`` at N <= 512 (a float64 gesdd recomputation) and
    where a head near its threshold was not proved; ``proved`` above, on the CPU, where every such head was."""
    from types import SimpleNamespace

    import checks.test_trained as trained

    def meas(N, near, proved, device="cpu"):
        heads = {"float64": {"near_threshold": np.array([near], float), "proved": np.array([proved], float)}}
        return SimpleNamespace(N=N, device=device, heads=heads)

    assert trained._strength(meas(2048, [0, 1, 1], [0, 1, 1])) == "proved"
    assert trained._strength(meas(2048, [0, 0], [0, 0])) == "proved"
    assert trained._strength(meas(2048, [0, 1, 1], [0, 1, 0])) == "recomputed"
    assert trained._strength(meas(512, [0], [0])) == "recomputed"
    assert trained._strength(meas(2048, [0], [0], device="cuda")) == "recomputed"
    assert trained._strength(meas(1024, [1], [1]), meas(512, [0], [0])) == "recomputed"
    assert trained._strength(SimpleNamespace(N=2048, device="cpu", heads={"float64": {}})) == "recomputed"
