"""The NumPy bfloat16 rounding of the tied-maxima profile (checks/test_concentration.py, kept torch-free)
rounds as torch does, ties to even included."""

from __future__ import annotations

import numpy as np
import torch

from checks.test_concentration import _to_bfloat16


def test_numpy_bfloat16_rounding_equals_torchs():
    Z = np.random.default_rng(0).standard_normal((200, 200)) * 5
    Z[0, :6] = [1.00390625, 1.01171875, -3.0e38, 1e-40, 0.0, -0.0]  # halfway cases, huge, subnormal, zeros
    assert np.array_equal(_to_bfloat16(Z), torch.from_numpy(Z).to(torch.bfloat16).double().numpy())
