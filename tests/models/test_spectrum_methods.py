"""How a measurement gets each head's singular values (attention_claims.models.measurement): the
exact SVD up to GESDD_MAX_N, the Gram route above it with a per-head certificate for the effective
ranks, heads in parallel with single-threaded BLAS."""

from __future__ import annotations

import numpy as np
import pytest

from attention_claims.maths.spectrum import effective_rank, top_fraction_energy
from attention_claims.models import measurement
from attention_claims.models.measurement import gram_singular_values, head_singular_values


def _causal_attention(N: int, d: int, seed: int, scale: float = 1.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    S = scale * rng.standard_normal((N, d)) @ rng.standard_normal((N, d)).T / np.sqrt(d)
    S[np.triu_indices(N, 1)] = -np.inf
    A = np.exp(S - S.max(axis=1, keepdims=True))
    return A / A.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gram_route_gives_the_exact_svds_effective_ranks_and_energy(seed):
    A = _causal_attention(384, 64, seed, scale=1.0 + seed)
    s, certified = gram_singular_values(A)
    exact = np.linalg.svd(A, compute_uv=False)
    assert certified
    for tau in measurement.TAUS:
        assert effective_rank(s, tau) == effective_rank(exact, tau)
    N = A.shape[0]
    delta = measurement.GRAM_SAFETY * N * np.finfo(np.float64).eps * exact[0] ** 2
    assert abs(top_fraction_energy(s, 0.1) - top_fraction_energy(exact, 0.1)) <= 2 * N * delta / np.sum(exact**2)
    # the unresolved tail is 0, never a made-up value; what is resolved is within sqrt(delta)
    assert np.all((s == 0) | (s >= np.sqrt(delta))) and np.all(np.abs(s - exact) <= 2 * np.sqrt(delta))
    assert (s == 0).any()  # this causal attention has singular values far below sqrt(delta)


def test_a_crossing_within_the_bound_is_not_certified_and_gesdd_takes_over(monkeypatch):
    # ten equal singular values: the cumulative energy is exactly 0.9 of the total at k = 9
    A = np.eye(10) / np.sqrt(10)
    _s, certified = gram_singular_values(A)
    assert not certified
    calls = []
    monkeypatch.setattr(measurement, "GESDD_MAX_N", 4)
    monkeypatch.setattr(measurement, "_gesdd", lambda a: calls.append(a.shape) or np.linalg.svd(a, compute_uv=False))
    S, method = head_singular_values(np.stack([A, _causal_attention(10, 4, 0)]))
    assert method == "gram" and calls == [(10, 10)]  # only the uncertified head went to gesdd
    assert effective_rank(S[0], 0.9) == 9


def test_heads_in_parallel_equal_heads_one_by_one():
    A = np.stack([_causal_attention(128, 16, k) for k in range(4)])
    one, m1 = head_singular_values(A, workers=1)
    two, m2 = head_singular_values(A, workers=2)
    assert m1 == m2 == "gesdd" and np.array_equal(one, two)
    assert np.allclose(one, np.linalg.svd(A, compute_uv=False), rtol=0, atol=1e-13)


def test_the_drawn_spectrum_has_one_resolution_for_every_head():
    N = 1024
    floor = measurement.gram_resolution(N)
    gram_head = np.r_[1.0, np.full(N - 2, 1e-3), 0.0]       # its tail was zeroed by the Gram route
    gesdd_head = np.r_[1.0, np.full(N - 2, 1e-3), 1e-12]    # recomputed exactly: 1e-12 is below the floor
    S = np.stack([gram_head, gesdd_head])
    cut = measurement.resolved(S, "gram")
    assert floor > 1e-12 and cut[1, -1] == 0 and np.array_equal(cut[:, :-1], S[:, :-1])
    assert measurement.resolved(S, "gesdd") is S


def test_the_cold_time_estimate_is_fitted_to_the_benchmarks():
    """The one line a cold measurement prints must not promise a quarter of the real time: within 30% of
    reports/bench.json's SmolLM2-135M entries at N = 512 and 2048 (both dtypes, each in its own process)."""
    import json
    from pathlib import Path

    bench = json.loads((Path(__file__).resolve().parents[2] / "reports" / "bench.json").read_text(encoding="utf-8"))
    for N in (512, 2048):
        measured = bench["results"][f"model_measurement/smollm2-135m/N={N}"]["seconds"]
        est = measurement.estimate_seconds("smollm2-135m", N, ("float32", "float64"))
        assert abs(est - measured) <= 0.3 * measured, (N, est, measured)


def _bidirectional_attention(N: int, d: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    S = rng.standard_normal((N, d)) @ rng.standard_normal((N, d)).T / np.sqrt(d)
    A = np.exp(S - S.max(axis=1, keepdims=True))
    return A / A.sum(axis=1, keepdims=True)


def test_the_triangular_gram_product_is_the_general_ones_lower_triangle():
    """dlauum (issue 37) on a causal head: the lower triangle of aᵀa, within the product's rounding bound."""
    from threadpoolctl import threadpool_info

    A = _causal_attention(300, 16, 3)
    G = measurement.triangular_gram(A)
    ref = A.T @ A
    N = A.shape[0]
    bound = N * np.finfo(np.float64).eps * np.linalg.norm(ref, 2)
    assert np.abs(np.tril(G) - np.tril(ref)).max() <= bound
    assert np.array_equal(np.triu(G, 1), np.triu(A, 1))  # the upper triangle is the input's (zeros), untouched
    if any(i.get("internal_api") == "openblas" for i in threadpool_info()):
        assert measurement._find_dlauum() is not None  # NumPy's OpenBLAS: the fast path, not the fallback
    with pytest.raises(ValueError, match="expected a square matrix"):
        measurement.triangular_gram(A[:, :10])


def test_symmetric_eigenvalues_is_two_stage_lapack_and_agrees_with_eigvalsh():
    """The two-stage eigensolver (issue 37) against NumPy's one-stage ``eigvalsh`` on the lower triangle of a
    Gram matrix: within the backward-error bound both share (N eps ||G||, LAPACK Users' Guide §4.7) -- a wrong
    triangle ('U' for 'L') or a transposed read would give the eigenvalues of a different matrix; the upper
    triangle is not read; bad input is refused."""
    from threadpoolctl import threadpool_info

    A = _causal_attention(300, 16, 5)
    G = measurement.triangular_gram(A)
    ref = np.linalg.eigvalsh(G, UPLO="L")
    junk = G.copy()
    junk[np.triu_indices(300, 1)] = 7.0  # the upper triangle is not read
    w = measurement.symmetric_eigenvalues(junk)
    assert np.all(np.diff(w) >= 0)
    assert np.abs(w - ref).max() <= 300 * np.finfo(np.float64).eps * ref[-1]
    assert abs(np.abs(w - np.linalg.eigvalsh(G, UPLO="U")).max()) > 1e-3  # the other triangle is another matrix
    if any(i.get("internal_api") == "openblas" for i in threadpool_info()):
        for routine in ("dsytrd_sy2sb", "dsytrd_sb2st", "dsterf"):  # the two-stage path, not the fallback
            assert measurement._find_lapack(routine) is not None
        assert measurement._TWO_STAGE and measurement._TWO_STAGE[0] is not None
    for bad in (G[:, :10].copy(), G.astype(np.float32), np.asfortranarray(G)[:, ::2]):
        with pytest.raises(ValueError, match="square C-contiguous float64"):
            measurement.symmetric_eigenvalues(bad)


@pytest.mark.parametrize("kind", ["causal", "bidirectional"])
def test_the_gram_route_per_head_gives_the_stacked_exact_svds_effective_ranks(kind, monkeypatch):
    """head_singular_values above GESDD_MAX_N (the triangular product for causal heads, the general one for
    bidirectional heads) against the stacked exact SVD: every effective rank equal, every resolved value
    within sqrt(delta) (issue 37: the new path keeps every effective rank)."""
    make = _causal_attention if kind == "causal" else _bidirectional_attention
    A = np.stack([make(256, 8 + 8 * k, k) for k in range(5)])
    monkeypatch.setattr(measurement, "GESDD_MAX_N", 64)
    S, method = head_singular_values(A, workers=2)
    exact = np.linalg.svd(A, compute_uv=False)
    assert method == "gram"
    for h in range(A.shape[0]):
        for tau in measurement.TAUS:
            assert effective_rank(S[h], tau) == effective_rank(exact[h], tau)
        floor = measurement.gram_resolution(256) * exact[h, 0]
        assert np.all(np.abs(S[h] - exact[h]) <= 2 * floor)
    one, _ = head_singular_values(A, workers=1)
    assert np.array_equal(one, S)  # one BLAS thread per head: the workers do not change a value


def test_the_scalar_measures_per_head_are_the_stacked_ones_bitwise():
    """_head's row sums, strict upper maximum, diagonal and log-determinant equal _measures_from's on the
    stack, bitwise (they replace its whole-layer torch.triu copy, issue 37)."""
    import torch

    A = np.stack([_causal_attention(300, 8, 0), _bidirectional_attention(300, 8, 1), np.ones((300, 300)) / 300])
    ref = measurement._measures_from(torch.from_numpy(A)[None], np.linalg.svd(A, compute_uv=False)[None], "float64")
    for h in range(3):
        _s, scalars = measurement._head(torch.from_numpy(A).to(torch.float32), h, "gesdd")
        _s, scalars64 = measurement._head(A, h, "gesdd")
        for name, value in scalars64.items():
            assert value == ref[name][0, h], (name, h)
        assert scalars.keys() == scalars64.keys()
    assert ref["upper_max"][0, 0] == 0 and ref["upper_max"][0, 1] > 0
    assert measurement._upper_max(np.ones((1, 1))) == 0.0


def test_a_workers_scratch_matrices_give_the_fresh_arrays_results_bitwise():
    """Issue 37: each worker copies its head into, and makes its Gram product in, two scratch matrices it keeps
    (no 32 MiB page-faulted allocation per head at N = 2048). The product, the eigenvalues and the certificate
    are the fresh arrays' bitwise; heads taken one after another on one thread (so each overwrites the last
    one's scratch, an uncertified head's exact-SVD fallback included) equal heads on two threads and the
    stacked exact SVD's effective ranks."""
    A = _causal_attention(300, 16, 7)
    out = np.full((300, 300), np.nan)
    G = measurement.triangular_gram(A, out=out)
    assert G is out and np.array_equal(G, measurement.triangular_gram(A))
    for bad in (np.empty((300, 299)), np.empty((300, 300), dtype=np.float32), np.empty((300, 300), order="F")):
        with pytest.raises(ValueError, match="out must be a C-contiguous float64"):
            measurement.triangular_gram(A, out=bad)
    s0, c0 = gram_singular_values(A, lower=True)
    s1, c1 = gram_singular_values(A, lower=True, scratch=np.empty((300, 300)))
    assert np.array_equal(s0, s1) and c0 == c1

    a1, g1 = measurement._scratch(64)
    a2, g2 = measurement._scratch(64)
    assert a1 is a2 and g1 is g2 and a1 is not g1  # one pair per thread and size, reused
    measurement._drop_scratch()
    assert measurement._scratch(64)[0] is not a1
    measurement._drop_scratch()


def test_heads_on_the_gram_route_one_by_one_equal_heads_in_parallel(monkeypatch):
    monkeypatch.setattr(measurement, "GESDD_MAX_N", 8)
    flat = np.eye(40) / np.sqrt(40)  # uncertified (a crossing exactly at tau): the exact SVD takes over
    A = np.stack([_causal_attention(40, 4, 1), flat, _causal_attention(40, 4, 2), _causal_attention(40, 4, 3)])
    one, m1 = head_singular_values(A, workers=1)
    two, m2 = head_singular_values(A, workers=2)
    assert m1 == m2 == "gram" and np.array_equal(one, two)
    exact = np.linalg.svd(A, compute_uv=False)
    for h in range(4):
        for tau in measurement.TAUS:
            assert effective_rank(one[h], tau) == effective_rank(exact[h], tau)
    assert np.array_equal(one[1], exact[1])  # the fallback read its own head, not another head's scratch
    assert getattr(measurement._SCRATCH, "bufs", None) is None  # heads on this thread: its scratch freed after


@pytest.mark.parametrize("N", [1, 2, 3, 4, 47, 48, 49, 50, 97, 260])
def test_symmetric_eigenvalues_at_every_size_around_the_band(N):
    """Sizes below, at and above the band half-width (TWO_STAGE_BAND = 48: kd = min(48, N - 1)) and the
    small sizes left to eigvalsh, on a Gram matrix and on an indefinite one: within N eps ||G|| of eigvalsh."""
    rng = np.random.default_rng(N)
    X = rng.standard_normal((N, N))
    for G, psd in ((X @ X.T, True), (X + X.T, False)):
        ref = np.linalg.eigvalsh(G, UPLO="L")
        w = measurement.symmetric_eigenvalues(G.copy(), psd=psd)
        assert w.shape == (N,) and np.all(np.diff(w) >= 0)
        assert np.abs(w - ref).max() <= max(N, 2) * np.finfo(np.float64).eps * np.abs(ref).max()


def test_symmetric_eigenvalues_leaves_a_matrix_that_would_need_scaling_to_eigvalsh(monkeypatch):
    """dsyevd_2stage scales a matrix whose largest entry is outside about [1e-146, 1e146] before reducing it;
    the explicit two stages do not, so such a matrix goes to eigvalsh (which scales) -- read on the lower
    triangle only (the upper one is not the matrix) unless the matrix is a Gram matrix (largest entry on the
    diagonal)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 80))
    calls = []
    real = np.linalg.eigvalsh
    monkeypatch.setattr(np.linalg, "eigvalsh", lambda g, UPLO="L": calls.append(UPLO) or real(g, UPLO=UPLO))
    for scale in (1e-200, 1e200):
        G = (X @ X.T) * scale
        w = measurement.symmetric_eigenvalues(G.copy(), psd=True)
        assert np.allclose(w, real(G) , rtol=1e-12, atol=0)
    assert calls == ["L", "L"]
    G = X + X.T
    G[np.triu_indices(80, 1)] = 1e200  # not read: the two stages run
    measurement.symmetric_eigenvalues(G.copy())
    assert calls == ["L", "L"]
    g = rng.standard_normal((700, 700))
    assert measurement._lower_abs_max(g) == np.abs(np.tril(g)).max()


def test_a_nan_is_not_dropped_by_the_scaling_test_and_the_torch_threads_come_back_after_a_failure(monkeypatch):
    """Two things an independent review found: the lower-triangle maximum must propagate a NaN (Python's max
    drops it), so that such a matrix goes to eigvalsh, which refuses it; and the forward pass's thread count,
    lowered while the workers run, is restored when the measurement fails before or during the pass."""
    import torch

    g = np.eye(300)
    g[200, 100] = np.nan
    assert np.isnan(measurement._lower_abs_max(g))
    with pytest.raises(np.linalg.LinAlgError):
        measurement.symmetric_eigenvalues(g.copy())

    before = torch.get_num_threads()
    monkeypatch.setattr(measurement, "_cpus", lambda: before + 3)
    monkeypatch.setattr(measurement, "_workers", lambda H: 2)
    seen = []

    def failing(*args, **kwargs):
        seen.append(torch.get_num_threads())
        raise RuntimeError("planted: the pass failed")

    monkeypatch.setattr(measurement, "_run_queued", failing)
    monkeypatch.setattr(measurement, "get_spec", lambda key: type("S", (), {"heads": 9})())
    with pytest.raises(RuntimeError, match="planted"):
        measurement._measure_layers_queued("any", 1024, None, "float32", None, "cpu")
    assert seen == [before + 1] and torch.get_num_threads() == before


def test_freed_memory_goes_back_to_the_system_after_a_measurement(monkeypatch):
    """Issue 37: a CPU measurement ends with malloc_trim (the process holds 1.9 GiB after SmolLM2 at N = 2048
    instead of 2.6); where the C library has none it is a no-op that says so."""
    calls = []
    monkeypatch.setattr(measurement, "release_freed_memory", lambda: calls.append(1) or True)
    S = np.stack([_causal_attention(16, 4, k) for k in range(3)])

    def two_layers(key, N, text, dtype, on_layer, device="cpu"):
        import torch

        for layer in range(2):
            on_layer(layer, torch.from_numpy(S.copy()))
        return 2

    monkeypatch.setattr(measurement, "attention_layers", two_layers)
    monkeypatch.setattr(measurement, "get_spec", lambda key: type("S", (), {"heads": 3})())
    measures, spectra = measurement._measure_layers_queued("any", 16, None, "float64", None, "cpu")
    assert calls == [1] and spectra.shape == (2, 16)
    monkeypatch.undo()
    assert isinstance(measurement.release_freed_memory(), bool)
    monkeypatch.setattr(measurement, "_MALLOC_TRIM", [None])
    assert measurement.release_freed_memory() is False


def _two_passes(N: int, d: int, seed: int, scale: float = 2.0) -> tuple[np.ndarray, np.ndarray]:
    """One causal head's attention from the same logits by a float32 and a float64 softmax (both as float64)."""
    import torch

    rng = np.random.default_rng(seed)
    S = scale * rng.standard_normal((N, d)) @ rng.standard_normal((N, d)).T / np.sqrt(d)
    S[np.triu_indices(N, 1)] = -np.inf
    t = torch.from_numpy(S)
    return torch.softmax(t.float(), -1).double().numpy(), torch.softmax(t, -1).numpy()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_float32_spectrum_certifies_the_float64_heads_ranks_and_encloses_its_energies(seed):
    """certify_from_float32 (issue 37) against the float64 head's exact SVD: the effective ranks equal, the
    top-10 % and top-8 % energies and sigma_1 inside their enclosures, the enclosures narrow."""
    a32, a64 = _two_passes(600, 24 + 8 * seed, seed)
    s32, certified = gram_singular_values(a32.copy(), lower=True)
    assert certified
    e_f, total = float(np.linalg.norm(a64 - a32)), float(np.sum(a64**2))
    out = measurement.certify_from_float32(s32, measurement.own_energy_bound(s32), e_f, total)
    exact = np.linalg.svd(a64, compute_uv=False)
    assert out is not None
    for tau in measurement.TAUS:
        assert out[f"eff_rank_{round(tau * 100)}"] == effective_rank(exact, tau)
    for name, fraction in (("energy_top10", 0.1), ("energy_top8", 0.08)):
        assert abs(out[name] - top_fraction_energy(exact, fraction)) <= out[f"{name}_err"] < 1e-5
    assert abs(out["sigma_max"] - exact[0]) <= out["sigma_max_err"] < 1e-5


@pytest.mark.parametrize("moved", ["up", "down"])
def test_the_passes_difference_is_what_keeps_a_moved_effective_rank_from_being_certified(moved):
    """A wrong formula would certify here: the two diagonal heads' effective ranks at tau = 0.9 differ (2 and 3,
    the float64 head's above the float32 head's or below it: each side of the test is needed), and without
    ||A64 - A32||_F (e_f = 0) the float32 head's rank would pass for the float64 head's. With it, nothing is
    certified; and a crossing within the float32 spectrum's own rounding is not either."""
    low, high = np.sqrt([0.5, 0.401, 0.099]), np.sqrt([0.5, 0.399, 0.101])  # effective rank 2 and 3 at tau = 0.9
    a32, a64 = (low, high) if moved == "up" else (high, low)
    assert effective_rank(low, 0.9) == 2 and effective_rank(high, 0.9) == 3
    own, total, e_f = measurement.own_energy_bound(a32), float(np.sum(a64**2)), float(np.linalg.norm(a64 - a32))
    wrong = measurement.certify_from_float32(a32, own, 0.0, total)  # the formula without the passes' difference
    assert wrong["eff_rank_90"] == effective_rank(a32, 0.9) != effective_rank(a64, 0.9)
    assert measurement.certify_from_float32(a32, own, e_f, total) is None
    equal = np.full(10, 1 / np.sqrt(10))  # the cumulative energy is exactly 0.9 of the total at k = 9
    assert measurement.certify_from_float32(equal, measurement.own_energy_bound(equal), 0.0, 1.0) is None
    with pytest.raises(ValueError, match="finite and >= 0"):
        measurement.certify_from_float32(a32, own, float("nan"), total)


def test_every_float64_measure_of_a_read_off_head_is_certified_unresolved_or_a_matrix_scalar():
    """Nothing of a float64 head read off the float32 spectrum is left at the float32 value by accident: every
    measure is in READ_OFF (replaced by the certificate's), GRAM_UNRESOLVED (NaN) or a matrix scalar."""
    scalars = {"row_sum_err", "upper_max", "diag_min", "logdet"}
    assert set(measurement.MEASURES) == set(measurement.READ_OFF) | set(measurement.GRAM_UNRESOLVED) | scalars
    assert set(measurement.ENCLOSED) <= set(measurement.READ_OFF)


def test_the_heap_growth_bound_is_glibcs_mmap_threshold_and_a_no_op_elsewhere(monkeypatch):
    """bound_heap_growth (issue 37) calls mallopt(M_MMAP_THRESHOLD = -3, 4 MiB) where the C library has it, and
    does nothing (returning False) where it has not."""
    calls = []
    monkeypatch.setattr(measurement, "_MALLOPT", [lambda option, value: calls.append((option, value)) or 1])
    assert measurement.bound_heap_growth() is True and calls == [(-3, 4 << 20)]
    monkeypatch.setattr(measurement, "_MALLOPT", [None])
    assert measurement.bound_heap_growth() is False


def test_the_own_energy_bound_holds_at_every_k_zeroed_tail_included():
    """own_energy_bound against the exact SVD, at every cumulative energy of a head whose tail the Gram route
    zeroes: a zeroed value may be up to 2 delta, so the bound is 2 N delta (an independent review's finding)."""
    for seed in range(3):
        A = _causal_attention(384, 64, seed, scale=1.0 + seed)
        s, _ = gram_singular_values(A)
        assert (s == 0).any()
        exact = np.linalg.svd(A, compute_uv=False)
        assert np.abs(np.cumsum(s**2) - np.cumsum(exact**2)).max() <= measurement.own_energy_bound(s)
    # the worst case the bound is for (the rounding above is far inside it): every eigenvalue but the first truly
    # 1.9 delta and computed 0.95 delta, so zeroed as unresolved; at k = N the cumulative energy is off by
    # (N - 1) 1.9 delta, more than N delta
    N = 400
    s = np.zeros(N)
    s[0] = 1.0
    delta = measurement.gram_resolution(N) ** 2
    assert (N - 1) * 1.9 * delta <= measurement.own_energy_bound(s)


def test_an_enclosure_stored_as_midpoint_and_half_width_contains_its_ends_in_floating_point():
    """A reading rebuilds an enclosure as value ± half-width: both ends must be inside, to the last unit (without
    the widening, (lo + hi) / 2 + (hi - lo) / 2 < hi in about 14 % of random intervals)."""
    rng = np.random.default_rng(0)
    lo = rng.random(20000)
    hi = lo + rng.random(20000) * 10.0 ** rng.integers(-12, -1, 20000)
    for a, b in zip(lo, hi, strict=True):
        mid, half = measurement._midpoint_and_half_width(float(a), float(b))
        assert mid - half <= a and mid + half >= b


def test_a_reading_counts_a_float64_head_as_failing_only_where_its_whole_enclosure_fails():
    """checks/test_trained.py (issue 37): a float64 energy read off the float32 spectrum is an enclosure, and a
    head fails in float64 only if every value in it fails, so that a refutation is certified only when the
    float64 numbers surely fail too; a float32 value (half-width 0) is read as before."""
    import checks.test_trained as trained

    class Meas:
        heads = {"float32": {"energy_top10": np.array([[0.8995]]), "energy_top10_err": np.zeros((1, 1))},
                 "float64": {"energy_top10": np.array([[0.8995]]), "energy_top10_err": np.array([[1e-3]]),
                             "energy_top8_err": np.array([[1e-3]]), "read_off_float32": np.ones((1, 1))}}

        def get(self, name, dt="float32"):
            return self.heads[dt][name]

    claimed = type("C", (), {"eval": staticmethod(lambda key: 0.9)})()
    holds = trained._energy_gt(claimed)
    assert not holds(Meas(), "float32")[0, 0]  # 0.8995 <= 0.9: fails
    assert holds(Meas(), "float64")[0, 0]  # [0.8985, 0.9005] reaches above 0.9: not a sure failure
    assert "1 of 1 heads' effective ranks certified" in trained._float64_route(Meas())
    # the table rows' test (a head, and the mean in a refutation's certificate): off only if the whole enclosure is
    assert trained._surely_off(0.84, 0.0, 0.9, 0.05) and not trained._surely_off(0.84, 0.02, 0.9, 0.05)
    assert trained._surely_off(0.96, 0.0, 0.9, 0.05) and not trained._surely_off(0.96, 0.02, 0.9, 0.05)
