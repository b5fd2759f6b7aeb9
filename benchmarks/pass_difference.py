"""How far apart SmolLM2-135M's float32 and float64 forward passes put each head's attention, against what an
effective rank's certificate needs (issue 37): could the float64 pass's effective ranks be read off the float32
pass's spectra instead of a second eigendecomposition per head?

For one head per layer (head ``layer mod H``) at ``N`` (default 2048) it prints ``||E||_F`` with
``E = A64 - A32`` (the float64 pass's attention minus the float32 pass's, both as float64), ``||A64||_F``,
the smallest distance ``|sum_{i<=k} sigma_i^2 - tau ||A64||_F^2|`` at the two cumulative energies beside each
effective rank's crossing (tau = 0.9, 0.95; the float64 head's own spectrum, by the Gram route), and the most
any cumulative energy can move between the passes: ``sqrt(sum_{i<=k} sigma_i^2)`` is the Ky Fan (2, k)-norm,
a unitarily invariant norm, so it moves by at most ``||E||_(2,k) <= ||E||_F`` (Horn and Johnson, *Topics in
Matrix Analysis*, 3.5), and the energy by at most ``2 ||A||_F ||E||_F + ||E||_F^2``. Where the gap is larger,
the effective rank of one pass certifies the other's.

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
        e_f = float(torch.linalg.norm(A64[h] - A32[h].to(torch.float64)))
        s, _certified = measurement.gram_singular_values(A64[h].numpy().copy(), lower=True)
        cum = np.cumsum(s**2)
        total = float(torch.linalg.norm(A64[h]) ** 2)
        gaps = []
        for tau in measurement.TAUS:
            r = int(np.searchsorted(cum, tau * cum[-1]))
            gaps += [abs(cum[k] - tau * cum[-1]) for k in (r - 1, r) if 0 <= k < N]
        moved = 2 * np.sqrt(total) * e_f + e_f**2
        rows.append((layer, h, e_f, np.sqrt(total), min(gaps), moved))
        stored[layer] = None

    attention_layers(KEY, N, None, "float64", compare)
    for layer, h, e_f, a_f, gap, moved in rows:
        print(f"layer {layer:2d} head {h}: ||E||_F {e_f:.2e}, ||A||_F {a_f:.2f}, gap at the crossings {gap:.2e}, "
              f"energy moved at most {moved:.2e}: {'certifies' if gap > moved else 'does not certify'}")
    print(f"{sum(g > m for *_, g, m in rows)} of {len(rows)} heads: the other pass's effective ranks certified")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2048)
