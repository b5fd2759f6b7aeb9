"""Hypothesis strategies the checks share (argument domains declared once, as SciPy's
``_mptestutils.py`` declares them).
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


def log_uniform(lo_exp: float, hi_exp: float) -> st.SearchStrategy[float]:
    """``10**u`` with ``u`` in ``[lo_exp, hi_exp]``: scales over orders of magnitude.

    Every whole decade in the range is drawn explicitly as well as values in between,
    so a short (``ci``) run still visits the extreme scales where dtype readings break.
    """
    decades = [float(10.0**k) for k in range(math.ceil(lo_exp), math.floor(hi_exp) + 1)]
    between = st.floats(lo_exp, hi_exp, allow_nan=False, allow_infinity=False).map(lambda u: float(10.0**u))
    return st.one_of(st.sampled_from(decades), between) if decades else between


@st.composite
def qk_pairs(draw, *, n=(1, 8), d=(1, 6), scale_exp=(-3.0, 4.0), square: bool = True):
    """``(Q, K, scale)``: ``Q (N, d)`` with entries in ``[-1, 1]`` times a logit scale
    ``10**u`` and ``K (N, d)`` (or ``(M, d)``) with entries in ``[-1, 1]``, so the logits
    ``QK^T/sqrt(d)`` are at most ``scale * sqrt(d)`` in size. Shrinks towards small N, d."""
    N = draw(st.integers(*n), label="N")
    dd = draw(st.integers(*d), label="d")
    M = N if square else draw(st.integers(*n), label="M")
    elems = st.floats(-1.0, 1.0, allow_nan=False, allow_subnormal=False, width=64)
    Q = draw(hnp.arrays(np.float64, (N, dd), elements=elems), label="Q / scale")
    K = draw(hnp.arrays(np.float64, (M, dd), elements=elems), label="K")
    scale = draw(log_uniform(*scale_exp), label="logit scale")
    return Q * scale, K, scale


@st.composite
def shared_argmax_logits(draw, *, n=(2, 8)):
    """Integer logits ``Z (N, N)`` (entries in [-5, 5], as floats) whose rows all peak in column 0, by a margin
    of 1 to 3: attention rows that sharpen to the same one-hot vector (003 定理 11.22, 推论 11.9)."""
    N = draw(st.integers(*n), label="N")
    Z = draw(hnp.arrays(np.float64, (N, N), elements=st.integers(-5, 5).map(float)), label="Z")
    Z[:, 0] = Z.max(axis=1) + draw(st.integers(1, 3), label="margin")
    return Z
