"""Parametrisation of checks over claims and readings (PyTorch OpInfo style: one record, many
(device, dtype) tests, with the skips declared as data).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import pytest

from ..framework import config as claims_config
from ..framework.records import Claim, load_claim_file
from ..maths.arrays import cuda_available

NO_CUDA = "CUDA not available on this machine (torch.cuda.is_available() is False)"
"""The skip reason of a CUDA reading on a machine without a GPU (the report lists such readings as skipped)."""


@functools.cache
def _index(records_dir: Path) -> dict[str, Path]:
    return {load_claim_file(path).id: path for path in sorted(records_dir.rglob("*.toml"))}


def record(claim_id: str, records_dir: Path | None = None) -> Claim:
    """The record with this id under ``records_dir`` (default: the claims folder of the running pytest
    session, :func:`attention_claims.framework.config.current`), so that checks parametrise from the
    record's own readings.

    Raises:
        KeyError: no record has this id.
    """
    if records_dir is None:
        records_dir = claims_config.current().claims_dir
    path = _index(Path(records_dir)).get(claim_id)
    if path is None:
        raise KeyError(f"no claim record with id {claim_id!r} under {records_dir}")
    return load_claim_file(path)


def reading_params(claim_id: str, *, where: Callable | None = None) -> list:
    """One ``pytest.param((device, dtype, reading_name))`` per reading of ``claim_id`` that has a
    ``device`` and a ``dtype`` (and satisfies ``where(reading)``), each carrying its
    ``claim`` marker and, for ``device = "cuda"`` without a GPU, a skip with :data:`NO_CUDA`.
    The test id is ``<device>-<dtype>``.
    """
    claim = record(claim_id)
    out = []
    for r in claim.readings:
        if r.device is None or r.dtype is None or (where is not None and not where(r)):
            continue
        marks = [pytest.mark.claim(claim_id, reading=r.name)]
        if r.device == "cuda" and not cuda_available():
            marks.append(pytest.mark.skip(reason=NO_CUDA))
        out.append(pytest.param(r.device, r.dtype, r.name, marks=marks, id=f"{r.device}-{r.dtype}"))
    return out


def require_device(device: str) -> None:
    """Skip the running test when ``device`` is ``cuda`` and no GPU is present."""
    if device == "cuda" and not cuda_available():
        pytest.skip(NO_CUDA)


def claim_params(ids, reading: str) -> list:
    """One ``pytest.param(claim_id)`` per id in ``ids``, each carrying
    ``@pytest.mark.claim(claim_id, reading=reading)``: one check that decides the same reading of
    several claims stating the same thing. The test id is the claim id."""
    return [pytest.param(cid, marks=pytest.mark.claim(cid, reading=reading), id=cid) for cid in ids]


def claim_reading(claim_id: str, reading: str):
    """One ``pytest.param(claim_id, reading)`` carrying its ``claim`` marker, for a check
    parametrised over (claim, reading) pairs. The test id is ``<claim>:<reading>``."""
    return pytest.param(claim_id, reading, marks=pytest.mark.claim(claim_id, reading=reading),
                        id=f"{claim_id}:{reading}")
