"""Benchmarks (issue 13, issue 15), each pair measured in the same run and reported as a ratio in
``reports/bench.json`` (benchmarks/conftest.py):

- instances per second of the batched engine (:mod:`attention_claims.engine`, BATCH instances per
  Hypothesis example) against today's per-example checks (one instance per example), for the rank
  and spectrum readings the engine decides under ``deep`` (and, with a GPU, the engine on CUDA;
  skipped without one). Both sides run the check's computation
  under Hypothesis (derandomized, generate phase only), on one torch thread as the checks do (one
  xdist worker per core), and stop before refuting: what is timed is the search, not the report;
- a certified determinant of a stored float64 ``N x N`` attention matrix, N = 32, 64, 128: arb
  (python-flint, :func:`attention_claims.maths.certify_nonzero_det`) against mpmath's interval
  arithmetic (``mpmath.iv.det``) at the same precision;
- a certified 40-digit Gaussian reference of 004's sparsity checks (``S`` for f = identity, exp, relu^2):
  arb quadrature (:func:`attention_claims.maths.s_reference`, uncached) against mpmath's tanh-sinh
  quadrature of the same integrals (the implementation it replaced, kept here); and a Hurwitz zeta value
  of the power-law spectrum checks: arb against ``mpmath.zeta``;
- the report writers: ``claims.json``, ``claims.md``, ``claims.html`` from ``reports/claims.json``;
- a trained model's per-head measurement (:func:`attention_claims.models.measure`, the encoder
  all-MiniLM-L6-v2 at N = 128, float32 and float64 forward passes): cold (an empty cache; the model
  itself already loaded) against cached (read back from the JSON cache);
- ``model_measurement/smollm2-135m/N=...``: seconds and peak RSS of one cold streaming measurement of
  SmolLM2-135M in its own process, N = 512 (and 1024, 2048 with ``--bench-model-max-n``);
  ``model_measurement/random-bert-base/N=512`` and ``random-bert-large/N=1024`` the same for randomly
  initialised encoders of BERT's shapes (the second with ``--bench-model-max-n 1024`` or more).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from attention_claims.engine import (
    attention_batch,
    batch_logits,
    effective_ranks,
    mean_row_cosines,
    near_zero_fractions,
    numerical_ranks,
    seeded_gaussian_batch,
    seeded_uniform_batch,
    singular_values_batch,
    suspects,
)
from attention_claims.maths import (
    arb_matrix,
    attention_matrix,
    certify_nonzero_det,
    cuda_available,
    effective_rank,
    exact_rank,
    logits,
    numerical_rank,
    row_cosines,
    softmax_attention,
)
from attention_claims.testkit import BATCH, gaussian_batch_spec, gaussian_qk, log_uniform, seeded_gaussian_qk

ROOT = Path(__file__).resolve().parents[1]
PER_EXAMPLE_EXAMPLES = 150
BATCHED_EXAMPLES = 20


def _fast(n: int) -> settings:
    """``n`` derandomized examples, generate phase only (nothing fails, nothing to shrink)."""
    return settings(max_examples=n, derandomize=True, database=None, deadline=None, phases=[Phase.generate])


@pytest.fixture(autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# -- the per-example computations (as in checks/test_rank.py and checks/test_spectrum.py) ---------
def _rank_numerical(qk):
    Q, K, _ = qk
    r, _ = numerical_rank(attention_matrix(Q, K))
    return r >= Q.shape[0]


def _spec_effective(qk):
    Q, K, _ = qk
    N, d = Q.shape
    return effective_rank(np.linalg.svd(attention_matrix(Q, K), compute_uv=False), 0.9) > d


def _spec_near_zero(qk):
    Q, K, _ = qk
    s = np.linalg.svd(attention_matrix(Q, K), compute_uv=False)
    return float(np.mean(s < 0.01 * s[0])) < 0.5


def _spec_cosine(qk):
    Q, K, _ = qk
    C = row_cosines(attention_matrix(Q, K))
    n = Q.shape[0]
    return float((C.sum() - n) / (n * n - n)) < 0.9


def _rank_causal_f32(qk):
    Q, K, _ = qk
    A = softmax_attention(Q, K, causal=True, dtype="float32").to("cpu", torch.float64).numpy()
    return bool((np.diag(A) == 0).any()) and exact_rank(A) < Q.shape[0]


# -- the batched computations (as in the *_batched twins) -------------------------------------------
def _b_rank_numerical(Q, K, N, d, device="cpu"):
    r, _ = numerical_ranks(singular_values_batch(attention_batch(Q, K, device=device)), (N, N))
    return suspects(r >= N)


def _b_spec_effective(Q, K, N, d, device="cpu"):
    return suspects(effective_ranks(singular_values_batch(attention_batch(Q, K, device=device)), 0.9) > d)


def _b_spec_near_zero(Q, K, N, d, device="cpu"):
    return suspects(near_zero_fractions(singular_values_batch(attention_batch(Q, K, device=device)), 0.01) < 0.5)


def _b_spec_cosine(Q, K, N, d, device="cpu"):
    return suspects(mean_row_cosines(attention_batch(Q, K, device=device)) < 0.9)


def _b_rank_causal_f32(Q, K, N, d, device="cpu"):
    A = attention_batch(Q, K, causal=True, dtype="float32", device=device)
    return suspects((torch.diagonal(A, dim1=1, dim2=2) == 0).any(-1))


def _rank_causal_numerical(qk):
    Q, K, _ = qk
    A = softmax_attention(Q, K, causal=True).numpy()
    s = np.linalg.svd(A, compute_uv=False)
    return int(np.sum(s > s[0] * max(A.shape) * np.finfo(np.float64).eps)) < Q.shape[0]


def _b_rank_causal_numerical(Q, K, N, d, device="cpu"):
    r, _ = numerical_ranks(singular_values_batch(attention_batch(Q, K, causal=True, device=device)), (N, N))
    return suspects(r < N)


def _rank_qk_f32(qk):
    Q, K, _ = qk
    M = logits(Q, K, scale=1.0, dtype="float32").to(torch.float64).numpy()
    s = np.linalg.svd(M, compute_uv=False)
    return int(np.sum(s > s[0] * max(M.shape) * float(torch.finfo(torch.float32).eps))) > Q.shape[1]


def _b_rank_qk_f32(Q, K, N, d, device="cpu"):
    M = batch_logits(Q, K, scale=1.0, dtype="float32", device=device).to(torch.float64)
    r, _ = numerical_ranks(singular_values_batch(M), (N, N), float(torch.finfo(torch.float32).eps))
    return suspects(r > d)


READINGS = {  # name: (per-example body, batched body, causal uniform inputs?)
    "rank/numerical-rank (bidirectional-attention-low-rank)": (_rank_numerical, _b_rank_numerical, False),
    "rank/stored-full-rank cpu-float32 (causal-softmax-full-rank)": (_rank_causal_f32, _b_rank_causal_f32, True),
    "rank/numerical-rank cpu-float64 (causal-softmax-full-rank)": (_rank_causal_numerical, _b_rank_causal_numerical, True),
    "rank/numerical-rank of QK^T cpu-float32 (rank-qk-at-most-d)": (_rank_qk_f32, _b_rank_qk_f32, True),
    "spectrum/effective-rank (bidirectional-attention-low-rank)": (_spec_effective, _b_spec_effective, False),
    "spectrum/near-zero (study-note-most-singular-values-near-zero)": (_spec_near_zero, _b_spec_near_zero, False),
    "spectrum/row-cosine (study-note-similar-patterns-correlated)": (_spec_cosine, _b_spec_cosine, False),
}


def _causal_spec():
    """``(N, d, scale, seed)`` over qk_pairs' domain (uniform entries, N <= 8 here for every uniform reading)."""
    return st.tuples(st.integers(1, 8), st.integers(1, 6), log_uniform(-3.0, 5.0), st.integers(0, 2**32 - 1))


def _per_example_run(body, causal):
    if causal:
        @_fast(PER_EXAMPLE_EXAMPLES)
        @given(spec=_causal_spec())
        def run(spec):
            N, d, s, seed = spec
            rng = np.random.default_rng(seed)
            body((rng.uniform(-1, 1, (N, d)) * s, rng.uniform(-1, 1, (N, d)), s))
    else:
        @_fast(PER_EXAMPLE_EXAMPLES)
        @given(qk=gaussian_qk())
        def run(qk):
            body(qk)
    return run


def _batched_run(body, causal, device="cpu"):
    @_fast(BATCHED_EXAMPLES)
    @given(spec=_causal_spec() if causal else gaussian_batch_spec())
    def run(spec):
        N, d, s, seed = spec
        Q, K = (seeded_uniform_batch if causal else seeded_gaussian_batch)(seed, BATCH, N, d, s)
        body(Q, K, N, d, device)
    return run


@pytest.mark.parametrize("path", ["per-example", "batched", pytest.param("batched-cuda", marks=pytest.mark.skipif(
    not cuda_available(), reason="no CUDA GPU on this machine: the engine's CUDA leg is not measured here"))])
@pytest.mark.parametrize("reading", list(READINGS))
def test_instances_per_second(benchmark, bench_results, reading, path):
    one, many, causal = READINGS[reading]
    run = (_per_example_run(one, causal) if path == "per-example"
           else _batched_run(many, causal, "cuda" if path == "batched-cuda" else "cpu"))
    n = PER_EXAMPLE_EXAMPLES if path == "per-example" else BATCHED_EXAMPLES * BATCH
    benchmark.pedantic(run, rounds=3, iterations=1, warmup_rounds=1)
    rate = n / benchmark.stats.stats.median
    entry = bench_results.setdefault(f"instances_per_second/{reading}", {"unit": "instances/s, 1 torch thread"})
    entry[path] = round(rate, 1)
    for other in ("batched", "batched-cuda"):
        if "per-example" in entry and other in entry:
            entry[f"ratio_{other.replace('-', '_')}_over_per_example"] = round(entry[other] / entry["per-example"], 2)
    benchmark.extra_info["instances_per_second"] = rate


@pytest.mark.parametrize("library", ["arb", "mpmath-iv"])
@pytest.mark.parametrize("N", [32, 64, 128])
def test_certified_determinant(benchmark, bench_results, N, library):
    Q, K = seeded_gaussian_qk(N, 4, 1.0, N)
    A = attention_matrix(Q, K)
    bits = 128

    def arb_det():
        ok, det, _ = certify_nonzero_det(lambda: arb_matrix(A), start_bits=bits, max_bits=bits)
        return ok

    def iv_det():
        mpmath.iv.prec = bits
        d = mpmath.iv.det(mpmath.iv.matrix(A.tolist()))
        return bool(d.a > 0 or d.b < 0)

    rounds = 5 if library == "arb" else (3 if N < 128 else 1)
    certified = benchmark.pedantic(arb_det if library == "arb" else iv_det, rounds=rounds, iterations=1)
    assert certified, f"{library} did not certify det != 0 at {bits} bits (N = {N})"
    entry = bench_results.setdefault(f"certified_determinant/N={N}", {"unit": "seconds per determinant, 128 bits"})
    entry[library] = benchmark.stats.stats.median
    if "arb" in entry and "mpmath-iv" in entry:
        entry["ratio_mpmath_over_arb"] = round(entry["mpmath-iv"] / entry["arb"], 1)


def _s_reference_mpmath(f: str, beta: float, gamma: float, dps: int = 40) -> mpmath.mpf:
    """S = E|f(X)| / sqrt(E f(X)^2), X = beta + gamma eps, by mpmath tanh-sinh quadrature split at the bulk
    of the Gaussian and at the kink: the reference of 004's checks before the arb quadrature
    (which, for relu^2, integrated over the support X > 0 after a substitution instead)."""
    with mpmath.workdps(dps + 10):
        b, g = mpmath.mpf(beta), mpmath.mpf(gamma)
        fn = {"identity": lambda x: x, "exp": mpmath.exp, "relu2": lambda x: (x if x > 0 else 0) ** 2}[f]

        def expect(h):
            pts = sorted({mpmath.mpf(0), mpmath.mpf(-8), mpmath.mpf(8), 2 * g, 4 * g, -b / g})
            return mpmath.quad(lambda e: h(b + g * e) * mpmath.npdf(e), [-mpmath.inf, *pts, mpmath.inf])

        return expect(lambda x: abs(fn(x))) / mpmath.sqrt(expect(lambda x: fn(x) ** 2))


@pytest.mark.parametrize("library", ["arb", "mpmath"])
@pytest.mark.parametrize("f,beta,gamma", [("identity", 0.7, 1.3), ("exp", -3.0, 2.5), ("relu2", -0.5, 1.5)])
def test_gaussian_reference(benchmark, bench_results, f, beta, gamma, library):
    from attention_claims.maths import s_reference

    fn = (lambda: s_reference.uncached(f, beta, gamma)) if library == "arb" else (
        lambda: _s_reference_mpmath(f, beta, gamma))
    value = benchmark.pedantic(fn, rounds=5 if library == "arb" else 2, iterations=1)
    with mpmath.workdps(45):
        assert abs(value - s_reference.uncached(f, beta, gamma)) < mpmath.mpf(10) ** -35 * value  # the same number
    entry = bench_results.setdefault(f"gaussian_reference/{f}", {"unit": "seconds per 40-digit S(beta, gamma)"})
    entry[library] = benchmark.stats.stats.median
    if "arb" in entry and "mpmath" in entry:
        entry["ratio_mpmath_over_arb"] = round(entry["mpmath"] / entry["arb"], 1)


@pytest.mark.parametrize("library", ["arb", "mpmath"])
def test_hurwitz_zeta(benchmark, bench_results, library):
    from attention_claims.maths import hurwitz_zeta

    def run():
        with mpmath.workdps(40):
            return [hurwitz_zeta(s, a) if library == "arb" else mpmath.zeta(s, a)
                    for s in (mpmath.mpf(2.2), mpmath.mpf(3.5), mpmath.mpf(8)) for a in (2, 101, 12345)]

    values = benchmark.pedantic(run, rounds=5, iterations=1)
    assert all(v > 0 for v in values)
    entry = bench_results.setdefault("hurwitz_zeta", {"unit": "seconds per 9 values at 40 digits"})
    entry[library] = benchmark.stats.stats.median
    if "arb" in entry and "mpmath" in entry:
        entry["ratio_mpmath_over_arb"] = round(entry["mpmath"] / entry["arb"], 1)


@pytest.mark.parametrize("fmt", ["json", "md", "html"])
def test_report_writers(benchmark, bench_results, fmt):
    path = ROOT / "reports" / "claims.json"
    if not path.is_file():
        pytest.skip("reports/claims.json is missing: run the README's pytest first")
    from attention_claims.framework.render import load_sources, render_html, render_markdown

    data = json.loads(path.read_text(encoding="utf-8"))
    sources = load_sources(ROOT / "sources")
    write = {"json": lambda: json.dumps(data, indent=2, ensure_ascii=False),
             "md": lambda: render_markdown(data),
             "html": lambda: render_html(data, sources=sources, report_dir=ROOT / "reports")}[fmt]
    out = benchmark.pedantic(write, rounds=3, iterations=1)
    entry = bench_results.setdefault("report_writers", {"unit": "seconds per write, from reports/claims.json"})
    entry[fmt] = benchmark.stats.stats.median
    entry[f"{fmt}_bytes"] = len(out.encode("utf-8"))
    if all(k in entry for k in ("json", "md", "html")):
        entry["ratio_html_over_json"] = round(entry["html"] / entry["json"], 1)
        entry["ratio_md_over_json"] = round(entry["md"] / entry["json"], 1)


def test_sanity_of_the_rate_measurement():
    """The batched body finds what the per-example body finds on instance 0 (same drawn values)."""
    Q, K = seeded_gaussian_batch(5, BATCH, 12, 3, 100.0)
    hits = _b_rank_numerical(Q, K, 12, 3)
    assert (0 in hits) == _rank_numerical((Q[0], K[0], 100.0))
    assert math.isfinite(float(attention_matrix(Q[0], K[0]).sum()))


@pytest.mark.parametrize("path", ["cold", "cached"])
def test_trained_model_measurement(benchmark, bench_results, tmp_path_factory, monkeypatch, path):
    from attention_claims import models
    from attention_claims.models import measurement

    key, N = "minilm-l6", 128
    if models.install_hint(key) is not None:
        pytest.skip(models.install_hint(key))
    cache = tmp_path_factory.getbasetemp() / "measurement-cache"  # shared by both paths: cached reads cold's files
    monkeypatch.setenv("ATTENTION_CLAIMS_CACHE", str(cache))

    def run():
        measurement._MEMO.clear()  # the in-process memo: every round goes to the cache or measures
        if path == "cold":
            for f in (cache / "measurements").glob("*.json"):
                f.unlink()
        return models.measure(key, N)

    meas = benchmark.pedantic(run, rounds=3, iterations=1, warmup_rounds=1)
    assert meas is not None and meas.get("eff_rank_90").shape == (6, 12)
    entry = bench_results.setdefault("trained_model_measurement/minilm-l6-n128",
                                     {"unit": "seconds per measurement, float32 and float64"})
    entry[path] = benchmark.stats.stats.median
    if "cold" in entry and "cached" in entry:
        entry["ratio_cold_over_cached"] = round(entry["cold"] / entry["cached"], 1)


_MEASURE_ONE = """
import json, os, resource, sys, time
from attention_claims.models import measurement, registry
key, N, text_file = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if len(sys.argv) > 4:  # a model folder, registered as pytest --claims-model does
    key = registry.register_model(sys.argv[4]).key
text = registry.register_text(text_file)
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rates_now():  # GFLOP/s of a 2048 x 2048 product on the machine's threads, best of 6 (issue 37's floor)
    import numpy as np, torch

    def rate(mul, a, reps=5):
        best = float("inf")
        for _ in range(reps + 1):
            t = time.perf_counter(); mul(a); best = min(best, time.perf_counter() - t)
        return 2 * a.shape[0] ** 3 / best / 1e9

    n = 2048
    return {"torch_float32": rate(lambda a: a @ a, torch.rand(n, n, dtype=torch.float32)),
            "torch_float64": rate(lambda a: a @ a, torch.rand(n, n, dtype=torch.float64)),
            "numpy_float64": rate(lambda a: a @ a, np.random.default_rng(0).random((n, n)))}


# the rates before and after the measurement: the floor takes the faster of each (a 2-core VM's rate dropped to
# half for minutes at a time on 2026-11-27: the slower would flatter the ratio)
before = rates_now() if N > measurement.GESDD_MAX_N else {}
t0 = time.perf_counter()
meas = measurement.measure_uncached(key, N, text)
seconds = time.perf_counter() - t0
peak = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
floor = {}
if N > measurement.GESDD_MAX_N:  # the floor of the Gram route (issue 37), at rates measured now, in this process
    import numpy as np, torch
    from attention_claims.models import loading

    after = rates_now()
    rates = {k: max(before[k], after[k]) for k in after}
    inner = loading._prepared(key, N, "float32", text)[2]
    cfg, spec = inner.config, meas.spec
    width = spec.heads * getattr(cfg, "head_dim", None) if getattr(cfg, "head_dim", None) else cfg.hidden_size
    linear = sum(2 * N * m.in_features * m.out_features for m in inner.modules() if isinstance(m, torch.nn.Linear))
    attention = spec.layers * 4 * N * N * width  # Q K^T and A V, every head, the whole N x N (eager)
    forward = linear + attention
    heads = spec.layers * spec.heads * len(meas.heads)
    gram = heads * 7 / 3 * N ** 3
    # the eigendecompositions the measurement made: every float32 head, and the float64 heads its spectrum could
    # not certify (measurement.certify_from_float32; all of them before issue 37's fourth session)
    read_off = int(np.nansum(meas.heads.get("float64", {}).get("read_off_float32", np.zeros(1))))
    decomposed = heads - read_off
    floor_s = forward / rates["torch_float32"] / 1e9 + forward / rates["torch_float64"] / 1e9 + gram / rates["numpy_float64"] / 1e9
    f64 = meas.heads.get("float64", {})
    floor = {"floor": {"seconds": round(floor_s, 1), "forward_gflop_per_pass": round(forward / 1e9, 1),
                       "gram_gflop": round(gram / 1e9, 1), "heads": heads, "heads_decomposed": decomposed,
                       "float64_heads_read_off_float32": read_off,
                       # issue 45: the float64 heads near a threshold, and those proved (measurement.prove_head)
                       "float64_heads_near_threshold": int(np.nansum(f64.get("near_threshold", np.zeros(1)))),
                       "float64_heads_proved": int(np.nansum(f64.get("proved", np.zeros(1)))),
                       "matmul_gflops": {k: round(v, 1) for k, v in rates.items()},
                       "matmul_gflops_before_after": {k: [round(before[k], 1), round(after[k], 1)] for k in rates},
                       "formula": "forward/rate(torch float32) + forward/rate(torch float64) + heads (7/3) N^3 / "
                                  "rate(numpy float64), rates of a 2048 x 2048 product on the machine's threads, "
                                  "the faster of before and after the measurement"},
             "ratio_to_floor": round(seconds / floor_s, 2)}
    # What LAPACK itself allows (issue 37): the forward passes at the matmul rates plus, per head, the Gram
    # product and the eigensolver the measurement calls, timed here on causal attention-like heads of size N,
    # as many at once as the measurement runs (one BLAS thread each): the floor the schedule can reach.
    from concurrent.futures import ThreadPoolExecutor
    from threadpoolctl import threadpool_limits
    workers = measurement._workers(spec.heads)
    def head_matrix(seed):
        logits = np.random.default_rng(seed).standard_normal((N, N))
        logits[np.triu_indices(N, 1)] = -np.inf
        a = np.exp(logits - logits.max(axis=1, keepdims=True))
        return a / a.sum(axis=1, keepdims=True)
    mats = [head_matrix(k) for k in range(2 * workers)]
    def one(a):
        t = time.perf_counter(); g = measurement.triangular_gram(a); t1 = time.perf_counter()
        measurement.symmetric_eigenvalues(g)
        return t1 - t, time.perf_counter() - t1
    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(workers) as pool:
        t = time.perf_counter(); parts = list(pool.map(one, mats)); wall = time.perf_counter() - t
    per_head = wall / len(mats)
    lapack_s = forward / rates["torch_float32"] / 1e9 + forward / rates["torch_float64"] / 1e9 + decomposed * per_head
    floor["lapack_floor"] = {
        "seconds": round(lapack_s, 1), "seconds_per_head": round(per_head, 4), "workers": workers,
        "gram_seconds_per_head_one_thread": round(float(np.median([p[0] for p in parts])), 4),
        "eigensolver_seconds_per_head_one_thread": round(float(np.median([p[1] for p in parts])), 4),
        "formula": "forward passes as in floor + heads decomposed x (triangular Gram + two-stage eigensolver) per head, "
                   f"{len(mats)} heads of size N on {workers} workers, one BLAS thread each, timed in this process"}
    floor["ratio_to_lapack_floor"] = round(seconds / lapack_s, 2)
print(json.dumps({"seconds": round(seconds, 1), "peak_rss_mb": peak, **floor,
                  "rss_after_import_mb": round(rss0), "eff_rank_90_mean": float(meas.get("eff_rank_90").mean())}))
dump = os.environ.get("ATTENTION_CLAIMS_BENCH_DUMP")  # a folder: the whole measurement, to compare two runs' heads
if dump:
    with open(os.path.join(dump, f"{meas.model}-n{N}.json"), "w", encoding="utf-8") as f:
        json.dump(meas.to_json(), f)
"""


#: What each forward pass contributes (issue 37), written beside every model measurement in reports/bench.json
MODEL_MEASUREMENT_NOTES = (
    "float32 pass: every reading's per-head values, each head's singular values computed (the exact SVD up to "
    "N = 512, the Gram route above, its effective ranks certified per head, else the exact SVD). float64 pass (same "
    "weights and tokens): every reading reads its values for every head: the failure profile's float64 count "
    "(checks/test_trained.py _float64_fails), the table-row and lemma 11.43 mean effective ranks and energies, the "
    "depth thirds, the exact-nonsingularity and encoder readings (N <= 512) and the certification of a refutation "
    "(a head is a certified counterexample only if its float64 numbers fail too). Above N = 512 the passes run in "
    "lockstep and a float64 head's effective ranks are certified, and its energies and sigma_1 enclosed (within "
    "5e-5 here), from the float32 head's spectrum and ||A64 - A32||_F (Ky Fan; "
    "measurement.certify_from_float32); only the heads that fails for get their own eigendecomposition "
    "(heads_decomposed), and a reading decides such a head only where its whole enclosure is on one side of the "
    "threshold. The floor is the issue's: the forward passes' flops plus (7/3) N^3 per head of both passes "
    "(heads), at the rates measured in the same process; lapack_floor prices the eigendecompositions made.")



@pytest.mark.parametrize("N", [512, 1024, 2048])
def test_model_measurement(benchmark, bench_results, request, tmp_path, N):
    """A cold streaming measurement of SmolLM2-135M (:func:`attention_claims.models.measurement.measure_uncached`,
    float32 and float64 forward passes, every head's float64 singular values), each N in its own Python process,
    so that ``peak_rss_mb`` (``ru_maxrss`` of that process: imports, both models' weights, the measurement) is
    this measurement's alone; ``seconds`` is the measurement's wall time in it (model loading included, the
    GGUF conversion cached). Torch and LAPACK use the machine's threads. The input is the three built-in
    passages one after the other (moby-dick, pride-and-prejudice, tale-of-two-cities; about 2,400
    SmolLM2 tokens: each alone has fewer than 1,024), cut to N tokens."""
    import os
    import subprocess
    import sys

    from attention_claims import models

    key = "smollm2-135m"
    if N > request.config.getoption("--bench-model-max-n"):
        pytest.skip(f"N = {N} is above --bench-model-max-n (a cold measurement grows as N³)")
    if models.install_hint(key) is not None:
        pytest.skip(models.install_hint(key))
    models.load_model(key)  # the GGUF conversion (once per cache) is not timed
    from attention_claims.models.registry import TEXTS, read_text

    text_file = tmp_path / "three-openings.txt"
    text_file.write_text("\n\n".join(read_text(t) for t in TEXTS), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}

    def run():
        proc = subprocess.run([sys.executable, "-c", _MEASURE_ONE, key, str(N), str(text_file)], capture_output=True, text=True,
                              env=env, cwd=ROOT, check=False)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return json.loads(proc.stdout.strip().splitlines()[-1])

    out = benchmark.pedantic(run, rounds=1, iterations=1)
    entry = bench_results.setdefault(f"model_measurement/{key}/N={N}", {
        "unit": "seconds and peak RSS (MiB) of one cold measurement, float32 + float64, own process",
        "notes": MODEL_MEASUREMENT_NOTES})
    entry.update(out)


#: BERT-shaped encoders, randomly initialised: (name, layers, heads, hidden, N)
BERT_SHAPES = [("bert-base", 12, 12, 768, 512), ("bert-large", 24, 16, 1024, 1024)]


def _random_bert(dest: Path, layers: int, heads: int, hidden: int, positions: int, text: str) -> Path:
    """A randomly initialised ``BertModel`` (seed 0; BERT's own shape: intermediate size 4·hidden) with a
    word-level tokenizer over the words of ``text`` (so the text tokenises to about one token a word), saved to
    ``dest`` offline by the tests' model builder (``tests/models/tiny_models.py``)."""
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "models"))
    import tiny_models

    return tiny_models.build("bert", dest, layers=layers, heads=heads, hidden=hidden, intermediate=4 * hidden,
                             positions=positions, corpus=text)


@pytest.mark.parametrize(("name", "layers", "heads", "hidden", "N"), BERT_SHAPES, ids=[b[0] for b in BERT_SHAPES])
def test_random_bert_measurement(benchmark, bench_results, request, tmp_path, name, layers, heads, hidden, N):
    """A cold streaming measurement (as :func:`test_model_measurement`, own process, float32 and float64 forward
    passes) of a randomly initialised encoder shaped like BERT-base (12 x 12 heads, hidden 768) at N = 512 or
    BERT-large (24 x 16, hidden 1024) at N = 1024, passed as a user model (``--claims-model``), on the three
    built-in chapters joined. Random weights: the time and memory are the shape's; the spectra are not a
    trained model's."""
    import os
    import subprocess
    import sys

    from attention_claims.models.registry import JOINED_TEXT, read_text

    if N > request.config.getoption("--bench-model-max-n"):
        pytest.skip(f"N = {N} is above --bench-model-max-n")
    text = read_text(JOINED_TEXT)
    text_file = tmp_path / "three-chapters.txt"
    text_file.write_text(text, encoding="utf-8")
    folder = _random_bert(tmp_path / name, layers, heads, hidden, N, text)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "HF_HUB_OFFLINE": "1"}

    def run():
        proc = subprocess.run([sys.executable, "-c", _MEASURE_ONE, "-", str(N), str(text_file), str(folder)],
                              capture_output=True, text=True, env=env, cwd=ROOT, check=False)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return json.loads(proc.stdout.strip().splitlines()[-1])

    out = benchmark.pedantic(run, rounds=1, iterations=1)
    entry = bench_results.setdefault(f"model_measurement/random-{name}/N={N}", {
        "unit": f"seconds and peak RSS (MiB) of one cold measurement of a random {layers} x {heads}-head, hidden-{hidden} "
                "BERT encoder, float32 + float64, own process"})
    entry.update(out)
