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
"""The skip reason of a CUDA reading on a machine without a GPU (the report lists such readings as skipped).

Examples:
    >>> from attention_claims.testkit import NO_CUDA
    >>> NO_CUDA.split(" (")[0]
    'CUDA not available on this machine'
"""


@functools.cache
def _index(records_dir: Path) -> dict[str, Path]:
    return {load_claim_file(path).id: path for path in sorted(records_dir.rglob("*.toml"))}


def record(claim_id: str, records_dir: Path | None = None) -> Claim:
    """The record with this id under ``records_dir`` (default: the claims folder of the running pytest
    session, :func:`attention_claims.framework.config.current`), so that checks parametrise from the
    record's own readings.

    The records are indexed once per folder (``functools.cache``); each call reads its record's file.

    Args:
        claim_id: the record's ``id`` (its TOML ``id`` field, not its file name).
        records_dir: the folder searched (every ``*.toml`` below it); ``None`` for the session's.

    Returns:
        The parsed record, a :class:`attention_claims.framework.records.Claim` (``.id``, ``.path``,
        ``.readings``, ``.claimed``, ...; ``.path`` is the file's path as a ``str``).

    Raises:
        KeyError: no record has this id.
        attention_claims.framework.records.ClaimRecordError: a record under ``records_dir`` does not parse
            (naming its file and field).

    Examples:
        >>> from attention_claims.testkit import record
        >>> claim = record("rank-qk-at-most-d")  # the claims folder found from the working folder
        >>> claim.id, [r.name for r in claim.readings]
        ('rank-qk-at-most-d', ['exact', 'cpu-float32-numerical-rank', 'cpu-bfloat16-numerical-rank'])
        >>> record("no-such-claim")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
            ...
        KeyError: "no claim record with id 'no-such-claim' under ..."
    """
    if records_dir is None:
        records_dir = claims_config.current().claims_dir
    path = _index(Path(records_dir)).get(claim_id)
    if path is None:
        raise KeyError(f"no claim record with id {claim_id!r} under {records_dir}")
    return load_claim_file(path)


def reading_params(claim_id: str, *, where: Callable | None = None) -> list:
    """One ``pytest.param(device, dtype, reading_name)`` per reading of ``claim_id`` that has a
    ``device`` and a ``dtype`` (and satisfies ``where(reading)``), each carrying its
    ``claim`` marker and, for ``device = "cuda"`` without a GPU, a skip with :data:`NO_CUDA`.
    The test id is ``<device>-<dtype>``.

    Args:
        claim_id: the record's id (found as :func:`record` finds it, in the session's claims folder).
        where: a predicate on a reading (:class:`attention_claims.framework.records.Reading`) that keeps
            it; ``None`` keeps every reading with a device and a dtype.

    Returns:
        A list of ``pytest.param`` (three values each: ``device`` str, ``dtype`` str, the reading's name),
        for ``@pytest.mark.parametrize("device,dtype,reading", ...)``; empty when no reading qualifies.

    Raises:
        KeyError: no record has this id (:func:`record`).

    Examples:
        >>> from attention_claims.testkit import reading_params
        >>> params = reading_params("rank-qk-at-most-d")
        >>> [(p.id, p.values) for p in params]  # doctest: +NORMALIZE_WHITESPACE
        [('cpu-float32', ('cpu', 'float32', 'cpu-float32-numerical-rank')),
         ('cpu-bfloat16', ('cpu', 'bfloat16', 'cpu-bfloat16-numerical-rank'))]
        >>> params[0].marks[0].kwargs
        {'reading': 'cpu-float32-numerical-rank'}
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
    """Skip the running test when ``device`` is ``cuda`` and no GPU is present.

    Args:
        device: a torch device name (``"cpu"``, ``"cuda"``); any but ``"cuda"`` always passes.

    Returns:
        ``None`` when the test can run on ``device``.

    Raises:
        pytest.skip.Exception: ``device == "cuda"`` and ``torch.cuda.is_available()`` is False (reason
            :data:`NO_CUDA`).

    Examples:
        >>> from attention_claims.testkit import require_device
        >>> require_device("cpu")  # never skips
    """
    if device == "cuda" and not cuda_available():
        pytest.skip(NO_CUDA)


def claim_params(ids, reading: str) -> list:
    """One ``pytest.param(claim_id)`` per id in ``ids``, each carrying
    ``@pytest.mark.claim(claim_id, reading=reading)``: one check that decides the same reading of
    several claims stating the same thing. The test id is the claim id.

    The ids are not looked up here: the plugin reports a marker naming an unknown claim or reading.

    Args:
        ids: an iterable of claim ids (``str``).
        reading: the name of the reading the check decides, the same in every record.

    Returns:
        A list of ``pytest.param(claim_id)``, one per id, in order.

    Examples:
        >>> from attention_claims.testkit import claim_params
        >>> params = claim_params(["bidirectional-attention-low-rank", "study-note-encoder-low-rank"], "exact-generic")
        >>> [(p.id, p.marks[0].args, p.marks[0].kwargs) for p in params]  # doctest: +NORMALIZE_WHITESPACE
        [('bidirectional-attention-low-rank', ('bidirectional-attention-low-rank',), {'reading': 'exact-generic'}),
         ('study-note-encoder-low-rank', ('study-note-encoder-low-rank',), {'reading': 'exact-generic'})]
    """
    return [pytest.param(cid, marks=pytest.mark.claim(cid, reading=reading), id=cid) for cid in ids]


def claim_reading(claim_id: str, reading: str):
    """One ``pytest.param(claim_id, reading)`` carrying its ``claim`` marker, for a check
    parametrised over (claim, reading) pairs. The test id is ``<claim>:<reading>``.

    Args:
        claim_id: the claim's id (not looked up here; the plugin reports an unknown one).
        reading: the name of one of its readings.

    Returns:
        One ``pytest.param(claim_id, reading)``, for ``@pytest.mark.parametrize("cid,reading", [...])``.

    Examples:
        >>> from attention_claims.testkit import claim_reading
        >>> p = claim_reading("rank-qk-at-most-d", "exact")
        >>> p.id, p.values, p.marks[0].kwargs
        ('rank-qk-at-most-d:exact', ('rank-qk-at-most-d', 'exact'), {'reading': 'exact'})
    """
    return pytest.param(claim_id, reading, marks=pytest.mark.claim(claim_id, reading=reading),
                        id=f"{claim_id}:{reading}")
