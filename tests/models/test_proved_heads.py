"""The proved route of the trained-model measurement (issue 45): :func:`gram_eigen_bound` and :func:`prove_head`
derive every constant of their enclosure from the Gram product's rounding and the computed eigendecomposition's
residual and orthogonality defect, so an
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
    """An eigensolver that returns the honest eigenvectors of the Gram matrix with its ``down`` largest eigenvalues
    (the leading squared singular values) moved down by ``lam_shift`` and the others up by as much (an eigensolver
    error of 2-norm ``lam_shift`` on ``aᵀ a``)."""
    def eigh(g):
        lam, W = np.linalg.eigh(g)  # ascending: the largest last
        shift = np.where(np.arange(lam.size)[::-1] < down, -lam_shift, lam_shift)
        return lam + shift, W
    return eigh


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
    lam_c, eta, (t_lo, t_hi) = m.gram_eigen_bound(a)
    assert eta < 1e-12 * t_lo and t_lo <= float(np.sum(lam)) <= t_hi
    assert np.all(np.abs(lam_c - np.sort(lam)[::-1]) <= eta)
    assert abs(out["sigma_max"] - 1.0) <= out["sigma_max_err"]


def test_planted_solver_error_between_delta_and_the_textbook_bound_is_refused():
    """Each squared singular value moved by 6 delta, the leading ``r`` down and the rest up (above the assumed delta,
    below the textbook ~10 delta):
    the old route (the computed spectrum trusted within ``own_energy_bound``, ``certify_from_float32`` with
    ``e_f = 0``) certifies the wrong effective rank ``r + 1``; the residual bound sees the error and either
    refuses or proves the true ``r``. The same planted error in the squared singular values themselves (the
    old route's input) is what the planted eigensolver returns here."""
    delta = m.gram_resolution(N) ** 2 * 1.0  # lambda_max = 1
    lam, r = _spectrum_at_crossing(0.5 * N * delta)  # C(r) only half of N delta above 0.9 T
    a = _head(lam)
    planted = _planted(6 * delta, down=r)
    s_planted = np.sqrt(np.maximum(planted(a.T @ a)[0][::-1], 0.0))
    total = float(np.sum(a * a))
    old = m.certify_from_float32(s_planted, m.own_energy_bound(s_planted), 0.0, total)
    assert old is not None and old["eff_rank_90"] == r + 1  # the assumed constant certifies a wrong rank
    new = m.prove_head(a, eigh=planted)
    assert new is None or new["eff_rank_90"] == r
    assert new is None  # here the enclosure straddles the crossing: nothing proved
    honest = m.prove_head(a)  # the crossing's margin (0.5 N delta) is near the rigorous enclosure's width itself
    assert honest is None or honest["eff_rank_90"] == r


def test_enclosures_contain_the_truth_under_the_planted_error():
    lam, _ = _spectrum_at_crossing(1e-3)
    a = _head(lam)
    lam_c, eta, _ = m.gram_eigen_bound(a, eigh=_planted(6 * m.gram_resolution(N) ** 2))
    assert np.linalg.norm(lam_c - np.sort(lam)[::-1]) <= eta  # Hoffman–Wielandt: the whole spectrum, in 2-norm
    assert eta >= 6 * m.gram_resolution(N) ** 2 * np.sqrt(N) * 0.99  # the planted error is seen, not assumed away
    out = m.prove_head(a, eigh=_planted(6 * m.gram_resolution(N) ** 2))
    k = int(np.ceil(0.1 * N))
    truth = np.sort(lam)[::-1][:k].sum() / lam.sum()
    assert out is not None and abs(out["energy_top10"] - truth) <= out["energy_top10_err"]


def test_gram_eigen_bound_rejects_bad_input_and_non_orthonormal_vectors():
    with pytest.raises(ValueError, match="finite 2-D"):
        m.gram_eigen_bound(np.full((3, 3), np.nan))
    with pytest.raises(ValueError, match="orthonormal"):
        m.gram_eigen_bound(np.eye(4), eigh=lambda g: (np.ones(4), 2 * np.eye(4)))
    with pytest.raises(ValueError, match="finite"):
        m.gram_eigen_bound(np.eye(2), eigh=lambda g: (np.array([1.0, np.nan]), np.eye(2)))
    with pytest.raises(ValueError, match="finite"):
        m.gram_eigen_bound(np.eye(2), eigh=lambda g: (np.ones(3), np.eye(3)))


def test_enclosure_contains_the_exact_spectrum_of_a_causal_head_in_arb():
    """A small causal row-stochastic head (the route a trained head takes: the triangular Gram product): its exact
    squared singular values, enclosed by python-flint's certified eigenvalues of the exact Gram matrix ``aᵀa``
    (arb balls over the float entries read exactly), lie within ``eta`` of the computed ones in 2-norm, and each
    proved cumulative energy's enclosure contains the exact one."""
    flint = pytest.importorskip("flint")
    n = 24
    rng = np.random.default_rng(3)
    logits = np.tril(rng.standard_normal((n, n)) * 2) + np.triu(np.full((n, n), -np.inf), 1)
    a = np.exp(logits - logits.max(1, keepdims=True))
    a /= a.sum(1, keepdims=True)
    lam_c, eta, (t_lo, t_hi) = m.gram_eigen_bound(a)
    prec, flint.ctx.prec = flint.ctx.prec, 256
    try:
        A = flint.arb_mat([[flint.arb(float(x)) for x in row] for row in a])  # float entries are exact in arb
        balls = flint.acb_mat(A.transpose() * A).eig(algorithm="rump")
        assert all(float(z.real.rad()) < 1e-40 and float(z.imag.rad()) < 1e-40 for z in balls)
        exact = sorted((float(z.real.mid()) for z in balls), reverse=True)
    finally:
        flint.ctx.prec = prec
    assert np.linalg.norm(lam_c - np.array(exact)) <= eta
    assert t_lo <= sum(exact) <= t_hi
    out = m.prove_head(a)
    assert out is not None
    k = int(np.ceil(0.1 * n))
    truth = sum(exact[:k]) / sum(exact)
    assert abs(out["energy_top10"] - truth) <= out["energy_top10_err"]


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


def test_orthogonality_defect_bound_encloses_the_exact_defect():
    """The error-free split's bound is at least the exact ``||WᵀW - I||_F`` (rationals), within 1 % of it, and far
    below the plain product's rounding bound ``gamma_N ||W||_F^2``."""
    from fractions import Fraction

    rng = np.random.default_rng(5)
    for n in (3, 17, 60):
        q, _ = np.linalg.qr(rng.standard_normal((n, n)))
        Q = [[Fraction(x) for x in row] for row in q]
        exact = float(sum((sum(Q[k][i] * Q[k][j] for k in range(n)) - (i == j)) ** 2
                          for i in range(n) for j in range(n))) ** 0.5
        bound = m.orthogonality_defect_bound(q)
        assert exact <= bound <= 1.01 * exact + 1e-300
        if n == 60:
            assert bound < 0.1 * m._gamma(n) * n, (bound, m._gamma(n) * n)
    with pytest.raises(ValueError, match="not near orthonormal"):
        m.orthogonality_defect_bound(np.full((2, 2), 2.5))
