"""Empirical claims of 003 decided on real trained attention (issue 4).

定理 11.21 (power-law spectral decay), 引理 11.34 (top 10% of singular values carry > 80% of the
energy; eff-rank <= d), 表 11.3.1's measured columns, 引理 11.43 (mean effective rank ~150) and
定理 11.29 (effective rank falls with depth), measured by :mod:`attention_claims.models` on

- all-MiniLM-L6-v2 (BERT encoder, 6 x 12 heads, head dimension 32), and
- SmolLM2-135M-Instruct (Llama decoder, 30 x 9 heads, head dimension 64), whose weights ship
  only 4-bit quantized (GGUF Q4_1) and are dequantized to float32,

on the first N = 128, 256, 512 tokens of Moby-Dick ch. 1 (``claims/data/texts/``).

Every reading is decided on the float32 forward pass. A failing reading is recomputed from the
float64 forward pass (same weights, same tokens, singular values in float64) and the
counterexample is ``certified`` only if the float64 numbers fail the same criterion. A model
that is not installed skips its readings ("<model> not installed: pip install ...").

The per-layer tables (mean/min/max over heads) go into the evidence of the 定理 11.29 checks and
into ``<report dir>/trained/<model>-n<N>.md``.

Failure profiles (docs/verdicts.md, "Failure profile"): every check attaches one whose draws are
the measured heads of the model at that N (the layers, for 定理 11.29), a draw failing where the
reading's per-head (per-layer) proposition fails in float32, the float64 count in the summary. The
heads are fixed by the weights and the passage, not random; the profile says how many of them break
the bound, computed from the cached measurement at no extra cost.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from attention_claims import models
from attention_claims.framework.plugin import STATE_KEY
from attention_claims.testkit import refute
from attention_claims.testkit.failure_profiles import record_profile
from attention_claims.testkit.model_params import measure_or_skip, model_key_params, model_params

MINILM, SMOL = "minilm-l6", "smollm2-135m"
MODELS = (MINILM, SMOL)  # the built-in models; the parametrised checks also run on every --claims-model
LENGTHS = models.LENGTHS


def _measure(key: str, N: int) -> models.Measurement:
    """The cached measurement of ``key`` at ``N`` (float32 and float64), or skip if not installed."""
    return measure_or_skip(key, N)


_params = model_params  # built-in models with their own readings, --claims-model models with on-user-model


def _label(meas: models.Measurement) -> str:
    spec = meas.spec
    where = "" if meas.device == "cpu" else f" ({meas.device})"
    return f"{spec.key} ({spec.layers}x{spec.heads} heads) at N = {meas.N}{where}"


def _share_passes(ok: np.ndarray, need: float, strict: bool) -> bool:
    """Whether the share of true entries of ``ok`` is at least ``need`` (more than, if ``strict``), compared
    exactly: count / heads against ``need`` as the decimal the record writes (0.9 is 9/10), so that 243
    heads of 270 meet "at least 90%" whatever the rounding of 243/270."""
    count, total = int(np.sum(ok)), int(np.size(ok))
    want = Fraction(str(need)) * total
    return count > want if strict else count >= want


def _share_check(meas: models.Measurement, holds, need: float, strict: bool, what: str, claim_log, *,
                 quantity: str, values: np.ndarray, setting: str | None = None) -> None:
    """Assert that ``holds(meas, dtype) -> (L, H) bool`` is true in at least ``need`` of the heads
    (more than ``need`` if ``strict``); recompute in float64 before refuting. First attach the
    reading's failure profile over the heads (:func:`_head_profile`: a head fails where ``holds`` is
    false; ``quantity`` names the per-head ``values`` it tests, ``setting`` defaults to the model and N)."""
    ok = holds(meas, "float32")
    _head_profile(claim_log, ~np.asarray(ok, dtype=bool), _float64_fails(meas, holds), text=meas.text,
                  setting=setting or _heads_setting(meas), quantity=quantity, values=values, bound=what,
                  allowed=f"{'fewer than' if strict else 'at most'} {1 - need:.0%} of heads failing")
    share = float(np.mean(ok))
    per_layer = ", ".join(f"L{i} {int(r.sum())}/{r.size}" for i, r in enumerate(ok))
    claim_log.note(f"{_label(meas)}: {what} in {share:.1%} ({int(np.sum(ok))} of {ok.size}) heads (float32; "
                   f"per layer: {per_layer}).")
    if _share_passes(ok, need, strict):
        return
    ok64 = holds(meas, "float64")
    share64 = float(np.mean(ok64))
    fails64 = not _share_passes(ok64, need, strict)
    bad = [(int(layer), int(h)) for layer, h in zip(*np.nonzero(~ok), strict=True)]
    refute(f"{_label(meas)}: {what} in only {share:.1%} of the heads (needs {'more than' if strict else 'at least'} "
           f"{need:.0%}); float64 recomputation: {share64:.1%}",
           example={"model": meas.model, "N": meas.N, "text": meas.text, "share_float32": share,
                    "share_float64": share64, "failing_heads_layer_head": bad[:40]},
           certified=fails64, certificate_strength=_strength(meas) if fails64 else None,
           certificate=(f"{_float64_route(meas)}: {share64:.1%} of heads" if fails64 else ""))


def _float64_route(meas: models.Measurement) -> str:
    """How the float64 pass's numbers of ``meas`` were obtained, for a certificate: its own SVD for every head, or,
    above ``models.GESDD_MAX_N`` on the CPU, for the heads whose float32 spectrum certifies them, the effective
    ranks exactly and the energies and sigma_1 as enclosures from the float32 pass's spectrum and
    ``||A64 - A32||_F`` (``attention_claims.models.measurement.certify_from_float32``; a reading decides such a
    head only where the whole enclosure is on one side of its threshold)."""
    read = meas.heads.get("float64", {}).get("read_off_float32")
    n = 0 if read is None else int(np.nansum(read))
    proved = meas.heads.get("float64", {}).get("proved")
    p = 0 if proved is None else int(np.nansum(proved))
    if n == 0 and p == 0:
        return "float64 forward pass and SVD"
    widest = max(float(np.nanmax(meas.get(err, "float64"))) for err in ("energy_top10_err", "energy_top8_err"))
    return (f"float64 forward pass of the same weights and tokens ({n} of {read.size} heads' effective ranks "
            f"certified, and energies enclosed within {widest:.1e}, "
            f"from the float32 spectrum and ||A64 - A32||_F by the Ky Fan bound; {p} heads near a threshold proved "
            f"by a residual bound on their own Gram matrix's eigendecomposition, every constant derived; the other heads "
            f"by their own SVD)")


def _strength(*metas: models.Measurement) -> str:
    """The certificate strength (docs/verdicts.md, "Certified") of a float64 recomputation of ``metas``: ``proved``
    where every one was measured above ``models.GESDD_MAX_N`` on the CPU (the passes in lockstep) and every float64
    head whose decision lies near its threshold (``near_threshold``: not certified from the float32 spectrum, or not
    with the assumed eigensolver constant ``PROOF_FACTOR`` = 100 times larger) was proved by a residual bound on its
    own Gram matrix's eigendecomposition with every constant derived (``proved``, ``attention_claims.models.measurement.prove_head``); the other heads are more
    than 100 half-widths of their enclosure from their threshold, beyond a textbook O(N^2 u) backward error
    (about 10 times the enclosure's assumed ``delta``). ``recomputed`` otherwise: at N <= 512 a float64 gesdd
    recomputation agrees, with no error bound (issue 45)."""
    for meas in metas:
        f64 = meas.heads.get("float64", {})
        near, proved = f64.get("near_threshold"), f64.get("proved")
        if meas.N <= models.GESDD_MAX_N or meas.device != "cpu" or near is None or proved is None:
            return "recomputed"
        if not np.all(proved[near == 1] == 1):
            return "recomputed"
    return "proved"


def _heads_setting(meas: models.Measurement, lengths: str | None = None) -> str:
    """The profile setting of one model's heads: ``"smollm2-135m, 30 layers x 9 heads, N=512"``."""
    spec = meas.spec
    return f"{spec.key}, {spec.layers} layers x {spec.heads} heads, {lengths or f'N={meas.N}'}"


def _float64_fails(meas: models.Measurement, holds) -> np.ndarray | None:
    """``~holds(meas, "float64")`` (the float64 forward pass's failing heads), or ``None`` when that
    dtype was not measured."""
    try:
        return ~np.asarray(holds(meas, "float64"), dtype=bool)
    except KeyError:
        return None


def _head_profile(claim_log, fails: np.ndarray, fails64: np.ndarray | None, *, text: str, setting: str,
                  quantity: str, values: np.ndarray, bound: str, allowed: str) -> str:
    """Attach the failure profile whose draws are the measured heads (docs/verdicts.md, "Failure
    profile"): ``fails`` (any shape, one bool a head, e.g. ``(L, H)``) marks the heads where the
    reading's per-head proposition ``bound`` fails in the float32 forward pass, ``fails64`` the same in
    float64 (or ``None``), measured on passage ``text``; ``values`` are the per-head ``quantity`` the proposition tests (NaN ignored
    in its range). The model's heads are fixed by its weights and the passage, not drawn at random,
    so the profile says how many of the heads the document's "usually" speaks of break the bound;
    ``allowed`` is what the reading tolerates. Returns the class (:func:`record_profile`).

    Raises:
        ValueError: no head (:func:`record_profile`).
    """
    fails = np.asarray(fails, dtype=bool)
    layers = np.indices(fails.shape)[0].ravel() if fails.ndim == 2 else None  # (L, H): the draws by layer
    fails = fails.ravel()
    v = np.asarray(values, dtype=np.float64).ravel()
    v = v[np.isfinite(v)]
    spread = (f"{v.min():.3g}..{v.max():.3g} (median {np.median(v):.3g})" if v.size else "undefined in every head")
    also = "" if fails64 is None else f"; float64 forward pass: {int(np.sum(fails64))} heads fail"
    summary = (f"one draw per head (float32 forward pass on the first N tokens of {text}, float64 SVD): {quantity} {spread}; a head fails unless {bound}; "
               f"{int(fails.sum())} of {fails.size} fail{also} (the reading allows {allowed})")
    return record_profile(claim_log, fails.tolist(), setting=setting, summary=summary,
                          by=("layer", layers) if layers is not None else None)


# -- 定理 11.21 ---------------------------------------------------------------------------------


@pytest.mark.claim("theorem-11-21-spectral-power-law-decay", reading="literal-per-matrix")
def test_power_law_bound_holds_for_every_finite_spectrum(claim_log):
    rng = np.random.default_rng(1121)
    for _ in range(200):
        N = int(rng.integers(3, 600))
        sigma = np.sort(rng.exponential(size=N) * rng.choice([1e-8, 1.0, 1e3]))[::-1]
        i = np.arange(1, N + 1, dtype=np.float64)
        C = float(np.max(sigma * i**2))
        claim_log.example(N=N)
        assert np.all(sigma <= C * i**-2.0 * (1 + 1e-12)), "max_i sigma_i i^2 is not an upper envelope"
    for key in MODELS:
        if models.install_hint(key) is not None:
            claim_log.note(f"{key} not installed: checked on random spectra only.")
            continue
        for N in LENGTHS:
            c1 = _measure(key, N).get("envelope_c1")
            assert np.all(np.isfinite(c1) & (c1 > 0)), f"{key} N={N}: C_1 not finite and positive"
            claim_log.note(f"{key} at N = {N}: every head satisfies sigma_i <= C i^-2 with C = N * C_1, "
                           f"C_1 = max_i sigma_i i in [{c1.min():.3g}, {c1.max():.3g}].")
    claim_log.note("Holds by construction for any finite spectrum (sigma_i i^2 <= N * max_j sigma_j j), so this "
                   "reading says nothing about training; see the exponent, fit and uniform-in-n readings.")


def _alpha_gt(claimed):
    alpha_min = float(claimed.eval("alpha_min"))
    return lambda m, dt: np.nan_to_num(m.get("alpha", dt), nan=-np.inf) > alpha_min


@pytest.mark.parametrize(("key", "N"), _params("theorem-11-21-spectral-power-law-decay", "exponent-", placeholder=True))
def test_power_law_exponent_above_one(key, N, claim_log, claimed):
    meas = _measure(key, N)
    for a, r2 in zip(meas.get("alpha").ravel(), meas.get("alpha_r2").ravel(), strict=True):
        claim_log.example(alpha=a, r2=r2)
    _spectra(meas, claim_log, title="spectrum per layer", claimed_alpha=float(claimed.eval("alpha_min")))
    claim_log.note(f"Median fitted alpha {np.nanmedian(meas.get('alpha')):.2f}, median R^2 "
                   f"{np.nanmedian(meas.get('alpha_r2')):.2f} (least squares of log sigma_i on log i, all sigma_i > 0; "
                   f"attention_claims.maths.power_law_fit).")
    _share_check(meas, _alpha_gt(claimed), float(claimed.eval("share")), False,
                 f"the fitted exponent alpha > {claimed.eval('alpha_min')}", claim_log,
                 quantity="the least-squares exponent alpha of log sigma_i on log i", values=meas.get("alpha"))


@pytest.mark.parametrize(("key", "N"), _params("theorem-11-21-spectral-power-law-decay", "power-law-fit-", lengths=(512,)))
def test_power_law_fits(key, N, claim_log, claimed):
    meas = _measure(key, N)
    r2_min = float(claimed.eval("r2_min"))
    gt = _alpha_gt(claimed)
    for r2 in meas.get("alpha_r2").ravel():
        claim_log.example(r2=r2)
    claim_log.note(f"R^2 of the log-log fit: median {np.nanmedian(meas.get('alpha_r2')):.2f}, "
                   f"max {np.nanmax(meas.get('alpha_r2')):.3f}.")
    _share_check(meas, lambda m, dt: gt(m, dt) & (np.nan_to_num(m.get("alpha_r2", dt)) >= r2_min),
                 float(claimed.eval("share")), False, f"alpha > 1 with R^2 >= {r2_min}", claim_log,
                 quantity=(f"R^2 of the log-log least-squares fit (its exponent alpha "
                           f"{np.nanmin(meas.get('alpha')):.3g}..{np.nanmax(meas.get('alpha')):.3g})"),
                 values=meas.get("alpha_r2"))


@pytest.mark.parametrize("key", model_key_params("theorem-11-21-spectral-power-law-decay", "uniform-in-n-"))
def test_power_law_constant_uniform_in_n(key, claim_log, claimed):
    small, large = _measure(key, 128), _measure(key, 512)
    growth_max = float(claimed.eval("growth_max"))

    def holds(_m, dt):
        return large.get("envelope_c1", dt) / small.get("envelope_c1", dt) < growth_max

    ratio = large.get("envelope_c1") / small.get("envelope_c1")
    for r in ratio.ravel():
        claim_log.example(c1_ratio_512_over_128=r)
    claim_log.note(f"C_1(512)/C_1(128) per head: median {np.median(ratio):.2f}, quartiles "
                   f"{np.quantile(ratio, 0.25):.2f}-{np.quantile(ratio, 0.75):.2f} (4 if C_1 grew like N).")
    _share_check(large, holds, float(claimed.eval("share")), False,
                 f"C_1 = max_i sigma_i i grows by less than x{growth_max:g} from N = 128 to 512", claim_log,
                 quantity="the growth C_1(512) / C_1(128) of the same head", values=ratio,
                 setting=_heads_setting(large, f"N={small.N} vs {large.N}"))


def _spectra(meas: models.Measurement, claim_log, *, title: str, claimed_alpha: float | None = None,
             vlines: dict[str, float] | None = None, points: int = 48) -> None:
    """Attach the ``spectra`` plot of this model and N (float32): per layer, the head average of the
    normalised singular values sigma_i / sigma_1 (:func:`attention_claims.models.layer_spectra`), at
    ``points`` log-spaced indices of 1..N (a log-log plot shows no more), with the claimed power law
    ``i^-alpha`` (C = 1, since sigma_1 / sigma_1 = 1) and the claimed indices ``vlines`` as references."""
    spectra = meas.layer_spectrum("float32")
    idx = np.unique(np.geomspace(1, meas.N, points).round().astype(int))
    data = {"spectra": {f"L{layer}": row[idx - 1] for layer, row in enumerate(spectra)}, "index": idx,
            "title": f"{meas.model}, N = {meas.N}: {title}", "ylabel": "mean over heads of sigma_i / sigma_1"}
    if claimed_alpha is not None:
        data.update(claimed_alpha=claimed_alpha, claimed_c=1.0,
                    claimed_label=f"i^-{claimed_alpha:g}: the claim needs a faster decay (alpha > {claimed_alpha:g})")
    if vlines:
        data["vlines"] = vlines
    claim_log.plot("spectra", data)


# -- 引理 11.34 ---------------------------------------------------------------------------------


def _heatmap(meas: models.Measurement, claim_log) -> None:
    """Attach the layer x head heatmap of this model and N (float32): effective rank (tau 0.9),
    top-10 % energy and numerical rank; attached once per model and N, by the 引理 11.34 energy check."""
    claim_log.plot("layer_head_heatmap", {
        "model": meas.model, "N": meas.N,
        "measures": {k: meas.get(k) for k in ("eff_rank_90", "energy_top10", "numerical_rank")},
        "names": {"eff_rank_90": "effective rank (tau 0.9)", "energy_top10": "top-10 % energy",
                  "numerical_rank": "numerical rank"}})


def _energy_gt(claimed):
    e = float(claimed.eval("energy"))
    # a float64 head read off the float32 spectrum holds unless its whole enclosure fails (_float64_route)
    return lambda m, dt: m.get("energy_top10", dt) + m.get("energy_top10_err", dt) > e


#: 表 11.3.1's Large and XL lengths, measured on SmolLM2-135M only (MiniLM stops at 512 positions; a user
#: model is measured at LENGTHS); above models.GESDD_MAX_N the effective ranks and energies come from the
#: Gram route, certified per head (attention_claims.models.measurement.gram_singular_values)
LARGE_LENGTHS = (1024, 2048)


def _large(claim: str, prefix: str) -> list:
    return _params(claim, prefix, lengths=LARGE_LENGTHS, builtin=(SMOL,), user=lambda spec: False)


@pytest.mark.parametrize(("key", "N"), [*_params("lemma-11-34-energy-concentration", "energy-", placeholder=True),
                                        *_large("lemma-11-34-energy-concentration", "energy-")])
def test_top_tenth_energy(key, N, claim_log, claimed):
    meas = _measure(key, N)
    for e in meas.get("energy_top10").ravel():
        claim_log.example(energy_top10=e)
    k = math.ceil(float(claimed.eval("top_fraction")) * N)
    claim_log.note(f"Mean energy of the top {k} singular values: {np.mean(meas.get('energy_top10')):.1%}.")
    _heatmap(meas, claim_log)
    _share_check(meas, _energy_gt(claimed), float(claimed.eval("share")), False,
                 f"the top {k} singular values carry > {float(claimed.eval('energy')):.0%} of the energy", claim_log,
                 quantity=f"the energy share sum_(i <= {k}) sigma_i^2 / sum_i sigma_i^2", values=meas.get("energy_top10"))


@pytest.mark.parametrize(("key", "N"), _params("lemma-11-34-energy-concentration", "energy-majority-", lengths=(512,)))
def test_top_tenth_energy_majority(key, N, claim_log, claimed):
    meas = _measure(key, N)
    for e in meas.get("energy_top10").ravel():
        claim_log.example(energy_top10=e)
    _share_check(meas, _energy_gt(claimed), 0.5, True,
                 f"the top 10% carry > {float(claimed.eval('energy')):.0%} of the energy", claim_log,
                 quantity="the energy share of the top ceil(0.1 N) singular values", values=meas.get("energy_top10"))


@pytest.mark.parametrize(("key", "N"), [*_params("lemma-11-34-energy-concentration", "eff-rank-le-d-"),
                                        *_large("lemma-11-34-energy-concentration", "eff-rank-le-d-")])
def test_effective_rank_at_most_head_dim(key, N, claim_log, claimed):
    meas = _measure(key, N)
    d = meas.spec.head_dim
    for r in meas.get("eff_rank_90").ravel():
        claim_log.example(eff_rank_90=r)
    claim_log.note(f"Mean eff-rank {np.mean(meas.get('eff_rank_90')):.1f} (tau 0.9), "
                   f"{np.mean(meas.get('eff_rank_95')):.1f} (tau 0.95); at tau 0.95, "
                   f"{np.mean(meas.get('eff_rank_95') <= d):.1%} of heads have eff-rank <= {d}; "
                   f"{np.mean(meas.get('eff_rank_90') <= meas.spec.hidden):.1%} have eff-rank <= the hidden "
                   f"size {meas.spec.hidden}.")
    _share_check(meas, lambda m, dt: m.get("eff_rank_90", dt) <= d, float(claimed.eval("share")), False,
                 f"eff-rank (tau 0.9) <= d = {d}", claim_log,
                 quantity="the effective rank at tau = 0.9 (定义 11.25)", values=meas.get("eff_rank_90"))


@pytest.mark.parametrize(("key", "N"), [
    *_params("lemma-11-34-energy-concentration", "eff-rank-le-hidden-", lengths=(512,), builtin=(MINILM,)),
    *_large("lemma-11-34-energy-concentration", "eff-rank-le-hidden-")])
def test_effective_rank_at_most_hidden_size(key, N, claim_log, claimed):
    # 引理 11.34 (3) in the lemma's own words: eff-rank <= 隐藏维度 d, the hidden size (表 11.3.1 and
    # 引理 11.43 give BERT-base's d as 768, its hidden size). eff-rank <= N always, so the bound says
    # something only when N > hidden: all-MiniLM-L6-v2 (hidden 384) at N = 512, SmolLM2-135M (hidden 576)
    # at N = 1024 and 2048 (as 768 > 512 in 表 11.3.1's Base row).
    meas = _measure(key, N)
    d = meas.spec.hidden
    if d >= meas.N:
        pytest.skip(f"{_label(meas)}: hidden size {d} >= N = {meas.N}, so eff-rank <= {d} cannot fail")
    for r in meas.get("eff_rank_90").ravel():
        claim_log.example(eff_rank_90=r)
    _share_check(meas, lambda m, dt: m.get("eff_rank_90", dt) <= d, float(claimed.eval("share")), False,
                 f"eff-rank (tau 0.9) <= the hidden size d = {d}", claim_log,
                 quantity="the effective rank at tau = 0.9 (定义 11.25)", values=meas.get("eff_rank_90"))


@pytest.mark.parametrize(("key", "N"), _params("lemma-11-34-energy-concentration", "full-rank-", lengths=(512,),
                                                builtin=(SMOL,), user=lambda spec: spec.causal))
def test_causal_heads_exactly_nonsingular(key, N, claim_log):
    meas = _measure(key, N)
    N = meas.N
    for dt in ("float32", "float64"):
        upper, diag, logdet = meas.get("upper_max", dt), meas.get("diag_min", dt), meas.get("logdet", dt)
        for a, ld in zip(diag.ravel(), logdet.ravel(), strict=True):
            claim_log.example(smallest_diagonal=a, logdet=ld)
        bad = np.argwhere((upper != 0) | ~(diag > 0) | ~np.isfinite(logdet))
        if bad.size:
            layer, h = (int(x) for x in bad[0])
            refute(f"{_label(meas)}, {dt}: head L{layer}.{h} is not lower triangular with a positive diagonal "
                   f"(max upper {upper[layer, h]:.3g}, min diagonal {diag[layer, h]:.3g})",
                   example={"layer": layer, "head": h, "dtype": dt}, certified=False)
    n32, n64 = meas.get("numerical_rank"), meas.get("numerical_rank", "float64")
    claim_log.note(f"{_label(meas)}: in every head the upper triangle is exactly 0 and the diagonal positive "
                   f"(smallest a_ii {meas.get('diag_min', 'float64').min():.3e}), so det A = prod a_ii > 0 and "
                   f"rank A = {N} exactly; log det A = sum log a_ii in "
                   f"[{meas.get('logdet', 'float64').min():.1f}, {meas.get('logdet', 'float64').max():.1f}] nats. "
                   f"Yet the numerical rank (tol sigma_1 N eps) is {n32.min():.0f}-{n32.max():.0f} (mean {n32.mean():.1f}) "
                   f"in float32 and {n64.min():.0f}-{n64.max():.0f} in float64; smallest singular value "
                   f"{meas.get('sigma_min', 'float64').min():.2e}, largest condition number "
                   f"{meas.get('condition', 'float64').max():.2e}.")


@pytest.mark.parametrize(("key", "N"), _params("lemma-11-34-energy-concentration", "numerical-full-rank-",
                                                lengths=(512,), builtin=(MINILM,), user=lambda spec: not spec.causal))
def test_encoder_heads_numerically_full_rank(key, N, claim_log):
    meas = _measure(key, N)
    n64 = meas.get("numerical_rank", "float64")
    for r in n64.ravel():
        claim_log.example(numerical_rank_float64=r)
    claim_log.note(f"{_label(meas)}: numerical rank {n64.min():.0f}-{n64.max():.0f} in float64 (tol sigma_1 N eps64), "
                   f"{meas.get('numerical_rank').min():.0f}-{meas.get('numerical_rank').max():.0f} in float32; "
                   f"smallest singular value {meas.get('sigma_min', 'float64').min():.2e}; upper triangle nonzero "
                   f"(max {meas.get('upper_max').max():.3f}).")
    if np.any(n64 < meas.N):
        layer, h = (int(x) for x in np.argwhere(n64 < meas.N)[0])
        refute(f"{_label(meas)}: head L{layer}.{h} has float64 numerical rank {n64[layer, h]:.0f} < {meas.N}",
               example={"layer": layer, "head": h}, certified=False)


# -- 表 11.3.1 and 引理 11.43 ---------------------------------------------------------------------


def _near(value: float, target: float, rel: float) -> bool:
    return abs(value - target) <= rel * target


def _eff_rank_near(meas, target: float, rel: float, dt: str = "float32",
                   taus: tuple[int, ...] = (90, 95)) -> tuple[bool, float, float]:
    """Whether the mean effective rank at one of ``taus`` (percent: 90, 95) is within ``rel * target`` of
    ``target``, and the two means (tau 0.9, tau 0.95)."""
    m = {tau: float(np.mean(meas.get(f"eff_rank_{tau}", dt))) for tau in (90, 95)}
    return any(_near(m[tau], target, rel) for tau in taus), m[90], m[95]


def _heads_near(meas, target: float, rel: float, dt: str = "float32", taus: tuple[int, ...] = (90, 95)) -> np.ndarray:
    """``(L, H)`` bool: the heads whose own effective rank, at one of ``taus`` (percent; default tau = 0.9 or
    0.95, 定义 11.25), is within ``rel * target`` of ``target`` (the per-head form of :func:`_eff_rank_near`'s mean)."""
    tol = rel * target
    return np.logical_or.reduce([np.abs(meas.get(f"eff_rank_{tau}", dt) - target) <= tol for tau in taus])


def _eff_rank_profile(claim_log, metas: list, targets: list[float], rel: float, *, bound: str, setting: str,
                      per_n: bool = False, also_fails=None, taus: tuple[int, ...] = (90, 95)) -> str:
    """Failure profile of "a head's effective rank (tau 0.9 or 0.95) is within ``rel * target`` of the
    target", one draw per head of each measurement in ``metas`` (one model at one or more N),
    ``targets[i]`` the target at ``metas[i]``; ``also_fails(meas, dt) -> (L, H) bool`` marks further
    failing heads (e.g. an energy bound) or is ``None``. ``bound`` words the per-head proposition for
    the summary, whose range is of eff-rank / N when ``per_n``. Returns the class.

    Raises:
        ValueError: no head (:func:`record_profile`).
    """
    def fails(dt):
        out = []
        for meas, target in zip(metas, targets, strict=True):
            bad = ~_heads_near(meas, target, rel, dt, taus)
            out.append((bad | also_fails(meas, dt)) if also_fails is not None else bad)
        return np.concatenate([f.ravel() for f in out])

    try:
        fails64 = fails("float64")
    except KeyError:
        fails64 = None
    spread = {tau: np.concatenate([m.get(f"eff_rank_{tau}").ravel() / (m.N if per_n else 1) for m in metas])
              for tau in (90, 95)}
    name = "effective rank / N" if per_n else "effective rank"
    quantity = f"the {name} at tau = 0.95 {spread[95].min():.3g}..{spread[95].max():.3g}, at tau = 0.9"
    return _head_profile(claim_log, fails("float32"), fails64, text=metas[0].text, setting=setting,
                         quantity=quantity, values=spread[90], bound=bound,
                         allowed="any number of failing heads: it bounds the mean over the heads, and the "
                                 "profile asks the bound of each head")


def _surely_off(value, half_width, want, tol):
    """Whether every value within ``half_width`` of ``value`` is farther than ``tol`` from ``want`` (elementwise):
    how a reading tests a float64 energy that may be an enclosure (``measurement.ENCLOSED``; half-width 0 for a
    computed value, where it is ``|value - want| > tol``)."""
    return np.abs(value - want) - half_width > tol


#: 表 11.3.1's rows by N: (row, the [claimed] keys of its effective rank, maximum rank, energy and top fraction)
TABLE_ROWS = {512: ("Base", "eff_rank_base", "max_rank_base", "energy_base", "top_fraction_base"),
              1024: ("Large", "eff_rank_large", "max_rank_large", "energy_large", "top_fraction_large"),
              2048: ("XL", "eff_rank_xl", "max_rank_xl", "energy_xl", "top_fraction_xl")}

#: the measure of the top fraction of the energy each row names (models.MEASURES)
ENERGY_MEASURE = {0.1: "energy_top10", 0.08: "energy_top8"}


def _with_taus(params: list, taus: tuple[int, ...] = (90, 95)) -> list:
    """``params`` (``pytest.param(key, N)``) with ``taus`` appended to each one's values."""
    return [pytest.param(*p.values, taus, marks=p.marks, id=p.id) for p in params]


#: 定义 11.25 says tau is "usually 0.9 or 0.95": the Large row is decided at each one in its own reading (issue 45:
#: at tau = 0.95 its mean, 150.6, is just above the 25 % floor of 150, at tau = 0.9, 103, far below)
LARGE_BY_TAU = [pytest.param(SMOL, 1024, (tau,), id=f"{SMOL}-n1024-tau{tau}", marks=pytest.mark.claim(
    "table-11-3-1-spectral-features", reading=f"on-{SMOL}-at-n-1024-tau-0.{tau}")) for tau in (90, 95)]


@pytest.mark.parametrize(("key", "N", "taus"), [
    *_with_taus(_params("table-11-3-1-spectral-features", "", lengths=(512,), placeholder=True)),
    # the Large and XL rows at their own N: SmolLM2-135M (8,192 positions; MiniLM stops at 512) on the three
    # chapters joined (2,450 tokens); user models are measured at the Base row's N only
    *LARGE_BY_TAU,
    *_with_taus(_params("table-11-3-1-spectral-features", "", lengths=(2048,), builtin=(SMOL,), user=lambda spec: False)),
])
def test_table_row_on_trained_model(key, N, taus, claim_log, claimed):
    meas = _measure(key, N)
    row_n = N if N in TABLE_ROWS else 512  # a user model at another N is held to the Base row
    row, rank_key, max_key, energy_key, fraction_key = TABLE_ROWS[row_n]
    target, want = float(claimed.eval(rank_key)), float(claimed.eval(energy_key))
    fraction = float(claimed.eval(fraction_key))
    measure = ENERGY_MEASURE[fraction]
    top = f"top-{fraction:.0%}"
    for r, e in zip(meas.get("eff_rank_90").ravel(), meas.get(measure).ravel(), strict=True):
        claim_log.example(eff_rank_90=r, **{measure: e})
    ok_r, m90, m95 = _eff_rank_near(meas, target, 0.25, taus=taus)
    energy = float(np.mean(meas.get(measure)))
    at = " or ".join(f"0.{t}" for t in taus)
    ok_e = abs(energy - want) <= 0.05
    _spectra(meas, claim_log, title=f"spectrum per layer against table 11.3.1's {row} row",
             vlines={f"{row} row: effective rank ~{target:g}": target, f"measured mean eff-rank (tau 0.9) {m90:.0f}": m90,
                     f"{row} row: max rank {claimed.eval(max_key)}": float(claimed.eval(max_key))})
    _eff_rank_profile(claim_log, [meas], [target], 0.25, setting=_heads_setting(meas),
                      bound=(f"its eff-rank (tau {at}) is within 25% of the {row} row's ~{target:g} and its "
                             f"{top} energy within 5 points of {want:.0%}"), taus=taus,
                      also_fails=lambda m, dt: _surely_off(m.get(measure, dt), m.get(f"{measure}_err", dt), want, 0.05))
    claim_log.note(f"{_label(meas)}: mean eff-rank {m90:.1f} (tau 0.9) / {m95:.1f} (tau 0.95) vs the {row} row's "
                   f"~{target:g}; mean {top} energy {energy:.1%} vs {want:.0%}."
                   + (f" Singular values by the Gram route above N = {models.GESDD_MAX_N}, effective ranks certified "
                      f"per head (attention_claims.models.measurement.gram_singular_values)." if N > models.GESDD_MAX_N else ""))
    if ok_r and ok_e:
        return
    ok64, m90_64, m95_64 = _eff_rank_near(meas, target, 0.25, "float64", taus)
    e64 = float(np.mean(meas.get(measure, "float64")))
    e64_err = float(np.mean(meas.get(f"{measure}_err", "float64")))  # 0 unless read off the float32 spectrum
    still = not ok64 or bool(_surely_off(e64, e64_err, want, 0.05))
    refute(f"{_label(meas)}: " + "; ".join(
               ([] if ok_r else [f"mean eff-rank {m90:.1f} (tau 0.9) / {m95:.1f} (tau 0.95) is not within 25% of the "
                                 f"{row} row's ~{target:g} at tau {at}"])
               + ([] if ok_e else [f"mean {top} energy {energy:.1%} is not within 5 points of {want:.0%}"])),
           example={"model": key, "N": N, "row": row, "mean_eff_rank_90": m90, "mean_eff_rank_95": m95,
                    f"mean_{measure}": energy},
           certified=still, certificate_strength=_strength(meas) if still else None,
           certificate=f"{_float64_route(meas)}: mean eff-rank {m90_64:.2f} / {m95_64:.2f}, {top} energy {e64:.2%}"
                       + (f" ± {e64_err:.1e}" if e64_err else ""))


@pytest.mark.claim("lemma-11-43-bert-base-effective-rank", reading="arithmetic")
def test_lemma_11_43_arithmetic(claim_log, claimed):
    r = Fraction(str(claimed.eval("mean_eff_rank")))
    tol = Fraction(str(claimed.eval("tolerance")))
    checks = [("N", Fraction(str(claimed.eval("N"))), Fraction(str(claimed.eval("fraction_of_n")))),
              ("hidden", Fraction(str(claimed.eval("hidden"))), Fraction(str(claimed.eval("fraction_of_hidden"))))]
    for name, denom, stated in checks:
        got = r / denom
        claim_log.example(ratio=float(got))
        claim_log.note(f"{r}/{denom} = {float(got):.4f} vs stated {float(stated):.0%}.")
        if abs(got - stated) > tol * stated:
            refute(f"{r}/{denom} = {float(got):.4f} is not within {float(tol):.0%} of {float(stated):.0%} ({name})",
                   example={"ratio": str(got), "stated": str(stated)}, certified=True,
                   certificate="exact rational arithmetic (fractions.Fraction)", certificate_strength="proved")


def _is_bert_base(spec: models.ModelSpec) -> bool:
    """Whether a model given with ``--claims-model`` is BERT-base's architecture (Devlin et al. 2019, §3:
    ``model_type`` bert, 12 layers of 12 heads, hidden 768): the model 引理 11.43 names."""
    return spec.model_type == "bert" and (spec.layers, spec.heads, spec.hidden) == (12, 12, 768)


NO_BERT_BASE = ("BERT-base's weights are not on this machine (none ships on PyPI, and the suite downloads nothing): "
                "give them with --claims-model PATH (e.g. a bert-base-uncased folder) to decide the as-stated reading")


def _bert_base_params() -> list:
    """One ``pytest.param(key)`` per ``--claims-model`` model that is BERT-base, reading ``on-bert-base-at-n-512``;
    without one, a single skipped case, so that the claim is ``undecided`` (its words name BERT-base)."""
    mark = pytest.mark.claim("lemma-11-43-bert-base-effective-rank", reading="on-bert-base-at-n-512")
    keys = [k for k in models.USER_MODELS if _is_bert_base(models.get_spec(k))]
    return ([pytest.param(k, marks=mark, id=k) for k in keys]
            or [pytest.param(None, marks=[mark, pytest.mark.skip(reason=NO_BERT_BASE)], id="no-bert-base")])


@pytest.mark.parametrize("key", _bert_base_params())
def test_lemma_11_43_on_bert_base(key, claim_log, claimed):
    _mean_effective_rank_near(key, int(claimed.eval("N", exact=True)), claim_log, claimed)


@pytest.mark.parametrize(("key", "N"), _params("lemma-11-43-bert-base-effective-rank", "", lengths=(512,), placeholder=True))
def test_lemma_11_43_mean_effective_rank(key, N, claim_log, claimed):
    _mean_effective_rank_near(key, N, claim_log, claimed)


def _mean_effective_rank_near(key: str, N: int, claim_log, claimed) -> None:
    """The mean effective rank of model ``key`` at ``N`` (tau 0.9 or 0.95) is within the record's tolerance of
    its ``mean_eff_rank``; refutes otherwise (certified when the float64 pass agrees)."""
    meas = _measure(key, N)
    target, tol = float(claimed.eval("mean_eff_rank")), float(claimed.eval("tolerance"))
    for r in meas.get("eff_rank_90").ravel():
        claim_log.example(eff_rank_90=r)
    ok, m90, m95 = _eff_rank_near(meas, target, tol)
    _eff_rank_profile(claim_log, [meas], [target], tol, setting=_heads_setting(meas),
                      bound=f"its eff-rank (tau 0.9 or 0.95) is within {tol:.0%} of {target:g}")
    claim_log.note(f"{_label(meas)}: mean eff-rank {m90:.1f} (tau 0.9) = {m90 / N:.1%} of N, {m95:.1f} (tau 0.95) = "
                   f"{m95 / N:.1%} of N; the hidden size is {meas.spec.hidden} ({m90 / meas.spec.hidden:.1%}).")
    if ok:
        return
    ok64, m90_64, m95_64 = _eff_rank_near(meas, target, tol, "float64")
    refute(f"{_label(meas)}: mean eff-rank {m90:.1f} (tau 0.9) / {m95:.1f} (tau 0.95) is not within "
           f"{tol:.0%} of {target:g}",
           example={"model": key, "N": N, "mean_eff_rank_90": m90, "mean_eff_rank_95": m95},
           certified=not ok64, certificate_strength=None if ok64 else _strength(meas),
           certificate=f"{_float64_route(meas)}: {m90_64:.2f} / {m95_64:.2f}")


@pytest.mark.parametrize("key", model_key_params("lemma-11-43-bert-base-effective-rank", "fraction-of-n-"))
def test_lemma_11_43_fraction_of_n(key, claim_log, claimed):
    frac, tol = float(claimed.eval("fraction_of_n")), float(claimed.eval("tolerance"))
    bad, metas = [], []
    for N in LENGTHS:
        meas = _measure(key, N)
        metas.append(meas)
        ok, m90, m95 = _eff_rank_near(meas, frac * N, tol)
        claim_log.example(N=N, fraction_90=m90 / N, fraction_95=m95 / N)
        if not ok:
            ok64, m90_64, m95_64 = _eff_rank_near(meas, frac * N, tol, "float64")
            bad.append((N, m90 / N, m95 / N, not ok64, m90_64 / N, m95_64 / N))
    _eff_rank_profile(claim_log, metas, [frac * m.N for m in metas], tol, per_n=True,
                      setting=_heads_setting(metas[0], "N=" + ", ".join(str(m.N) for m in metas)),
                      bound=f"its eff-rank (tau 0.9 or 0.95) is within {tol:.0%} of {frac:g} N")
    if bad:
        N, f90, f95, cert, f90_64, f95_64 = bad[0]
        refute(f"{key}: mean eff-rank / N is {f90:.3f} (tau 0.9) and {f95:.3f} (tau 0.95) at N = {N}, not within "
               f"{tol:.0%} of {frac:g}" + (f" (also at N = {', '.join(str(b[0]) for b in bad[1:])})" if bad[1:] else ""),
               example={"model": key, "failing": [{"N": b[0], "fraction_90": b[1], "fraction_95": b[2]} for b in bad]},
               certified=all(b[3] for b in bad),
               certificate_strength=_strength(*metas) if all(b[3] for b in bad) else None,
               certificate=f"{_float64_route(next(m for m in metas if m.N == N))} at N = {N}: {f90_64:.4f} / "
                           f"{f95_64:.4f}")


# -- 定理 11.29 ---------------------------------------------------------------------------------


def _thirds(values: np.ndarray) -> list[float]:
    """Mean over the heads of the first, middle and last third of the layers (``values`` is ``(L, H)``)."""
    return [float(np.mean(part)) for part in np.array_split(values, 3, axis=0)]


def _depth_fails(meas: models.Measurement, dt: str = "float32") -> tuple[np.ndarray, np.ndarray, list[float]]:
    """定理 11.29 layer by layer: ``(fails (L,) bool, layer means (L,), thirds' means [3])``, where a
    layer's mean is its heads' mean effective rank (tau 0.9) and the thirds are :func:`_thirds`'s; layer
    l of third t fails unless its mean is below the mean of every earlier third and above the mean of
    every later third (first third: above the middle and last thirds' means; last: below both)."""
    values = meas.get("eff_rank_90", dt)
    layer = values.mean(axis=1)
    thirds = _thirds(values)
    fails = np.zeros(layer.size, dtype=bool)
    for t, part in enumerate(np.array_split(np.arange(layer.size), 3)):
        for i in part:
            fails[i] = (any(layer[i] >= thirds[s] for s in range(t))
                        or any(layer[i] <= thirds[s] for s in range(t + 1, 3)))
    return fails, layer, thirds


def _depth_profile(claim_log, meas: models.Measurement) -> str:
    """Attach 定理 11.29's failure profile with one draw per layer (:func:`_depth_fails`, float32;
    the float64 count in the summary). Returns the class.

    Raises:
        ValueError: a model without layers (:func:`record_profile`).
    """
    fails, layer, thirds = _depth_fails(meas)
    try:
        also = f"; float64 forward pass: {int(_depth_fails(meas, 'float64')[0].sum())} layers fail"
    except KeyError:
        also = ""
    sizes = "+".join(str(len(p)) for p in np.array_split(layer, 3))
    bad = ", ".join(f"L{i}" for i in np.flatnonzero(fails)) or "none"
    summary = (f"one draw per layer (float32 forward pass on the first N tokens of {meas.text}, float64 SVD): the "
               f"layer's mean effective rank at tau = 0.9 over its {meas.spec.heads} heads, {layer.min():.3g}.."
               f"{layer.max():.3g}, against the thirds' means {thirds[0]:.3g} / {thirds[1]:.3g} / {thirds[2]:.3g} "
               f"(first / middle / last): a layer fails unless it is below the mean of every earlier third and "
               f"above the mean of every later third; {int(fails.sum())} of {fails.size} fail ({bad}){also}")
    return record_profile(claim_log, fails.tolist(), summary=summary,
                          setting=f"{meas.spec.key}, {fails.size} layers ({sizes}) x {meas.spec.heads} heads, N={meas.N}")


def _write_layer_report(request, meas: models.Measurement) -> None:
    state = request.config.stash.get(STATE_KEY, None)
    report_dir = getattr(state, "report_dir", None)
    if report_dir is None:
        return
    from attention_claims.framework.report_folder import write_suite_file

    # through the report folder: refused (ReportFolderError) when a file there is not a table the suite wrote
    write_suite_file(report_dir, f"trained/{meas.model}-n{meas.N}.md", models.report_markdown(meas),
                     adopt=_is_layer_report)


def _is_layer_report(path) -> bool:
    """Whether ``path`` holds a per-layer table of :func:`models.report_markdown` (a ``# `` title, then the
    ``- model: `` line): one written before the report folder's manifest."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, ValueError):
        return False
    return len(lines) > 2 and lines[0].startswith("# ") and lines[2].startswith("- model: `")


@pytest.mark.parametrize(("key", "N"), _params("theorem-11-29-effective-rank-by-depth", "", placeholder=True,
                                                skip_if=lambda s: "fewer than 3 layers, no thirds" if s.layers < 3 else None))
def test_effective_rank_falls_with_depth(key, N, claim_log, claimed, request):
    meas = _measure(key, N)
    _write_layer_report(request, meas)
    for mean, _lo, _hi in meas.layer_stats("eff_rank_90"):
        claim_log.example(layer_mean_eff_rank=mean)
    claim_log.note(models.compact_layer_table(meas))
    sizes = [len(p) for p in np.array_split(np.arange(meas.spec.layers), 3)]
    t = _thirds(meas.get("eff_rank_90"))
    _depth_profile(claim_log, meas)
    energy = _thirds(meas.get("energy_top10"))
    claim_log.note(f"Thirds of the layers ({'+'.join(map(str, sizes))}): mean eff-rank {t[0]:.1f} / {t[1]:.1f} / "
                   f"{t[2]:.1f}; mean top-10% energy {energy[0]:.3f} / {energy[1]:.3f} / {energy[2]:.3f}.")
    # the claimed order of the thirds' mean effective ranks (the document: high, medium, low, so first > middle > last)
    order = lambda th: claimed.eval("order", first=th[0], middle=th[1], last=th[2])  # noqa: E731
    if order(t):
        return
    t64 = _thirds(meas.get("eff_rank_90", "float64"))
    refute(f"{_label(meas)}: mean eff-rank by thirds of the layers is {t[0]:.1f} (first) / {t[1]:.1f} (middle) / "
           f"{t[2]:.1f} (last), not {claimed.text('order')}",
           example={"model": key, "N": N, "thirds": t, "layer_means": [s[0] for s in meas.layer_stats("eff_rank_90")]},
           certified=not order(t64), certificate_strength=None if order(t64) else _strength(meas),
           certificate=f"{_float64_route(meas)}: {t64[0]:.2f} / {t64[1]:.2f} / {t64[2]:.2f}")
