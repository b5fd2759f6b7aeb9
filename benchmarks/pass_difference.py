"""How far apart SmolLM2-135M's float32 and float64 forward passes put each head's attention, against what an
effective rank's certificate needs (issue 37): could the float64 pass's effective ranks be read off the float32
pass's spectra instead of a second eigendecomposition per head?

For one head per layer (head ``layer mod H``) at ``N`` (default 2048) it prints ``||E||_F`` with
``E = A64 - A32`` (the float64 pass's attention minus the float32 pass's, both as float64), ``||A64||_F``,
the smallest distance ``|sum_{i<=k} sigma_i^2 - tau ||A64||_F^2|`` at the two cumulative energies beside each
effective rank's crossing (tau = 0.9, 0.95; the float64 head's own spectrum, by the Gram route), and whether the
float32 head certifies it: ``sqrt(sum_{i<=k} sigma_i^2)`` is the Ky Fan (2, k)-norm,
a unitarily invariant norm, so it moves by at most ``||E||_(2,k) <= ||E||_F`` (Horn and Johnson, *Topics in
Matrix Analysis*, 3.5): whether the float32 head's spectrum certifies the float64 head's effective ranks is
decided by the measurement's own certificate, :func:`attention_claims.models.measurement.certify_from_float32`,
which every measurement above N = 512 now uses (issue 37).

Run: ``python benchmarks/pass_difference.py [N]`` (SmolLM2 installed; holds every float32 layer, about 4.5 GB at
N = 2048; about 2 minutes on this suite's 2-core machine). Not collected by pytest.
"""

from __future__ import annotations

import sys

import numpy as np
import torch

from attention_claims.models import measurement
from attention_claims.models.loading import attention_layers

KEY = "smollm2-135m"


def main(N: int = 2048) -> None:
    stored: list[torch.Tensor | None] = []
    attention_layers(KEY, N, None, "float32", lambda layer, A: stored.append(A.clone()))
    rows = []

    def compare(layer: int, A64: torch.Tensor) -> None:
        A32 = stored[layer]
        h = layer % A64.shape[0]
        a32, a64 = A32[h].to(torch.float64).numpy().copy(), A64[h].numpy().copy()
        e_f, total = float(np.linalg.norm(a64 - a32)), float(np.sum(a64**2))
        s32, _ = measurement.gram_singular_values(a32, lower=True)
        s64, _ = measurement.gram_singular_values(a64, lower=True)
        cum, gaps = np.cumsum(s64**2), []
        for tau in measurement.TAUS:
            r = int(np.searchsorted(cum, tau * cum[-1]))
            gaps += [abs(cum[k] - tau * cum[-1]) for k in (r - 1, r) if 0 <= k < N]
        # the production certificate (measurement.certify_from_float32), one home for the Ky Fan bound
        cert = measurement.certify_from_float32(s32, measurement.own_energy_bound(s32), e_f, total)
        rows.append((layer, h, e_f, np.sqrt(total), min(gaps), cert))
        stored[layer] = None

    attention_layers(KEY, N, None, "float64", compare)
    for layer, h, e_f, a_f, gap, cert in rows:
        said = ("certifies, top-10 % energy enclosed within " f"{cert['energy_top10_err']:.1e}" if cert is not None
                else "does not certify")
        print(f"layer {layer:2d} head {h}: ||E||_F {e_f:.2e}, ||A||_F {a_f:.2f}, gap at the crossings {gap:.2e}: "
              f"{said}")
    print(f"{sum(c is not None for *_, c in rows)} of {len(rows)} heads: the other pass's effective ranks certified")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2048)
