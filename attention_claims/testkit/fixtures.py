"""pytest fixtures the checks share. A check module uses one by importing it and naming it in
``pytestmark = pytest.mark.usefixtures(...)`` (the fixture object is then found in the module)."""

from __future__ import annotations

import os

import pytest

from .._lazy import loaded


@pytest.fixture
def one_torch_thread():
    """Run the test's small torch ops on one intra-op thread (restored afterwards): on a loaded
    2-core machine, waking the thread pool costs milliseconds per tiny op, far more than the op.

    Before anything has imported torch (a subset run of torch-free checks: the maths modules import
    torch on first use, :class:`attention_claims._lazy.LazyModule`), torch is not imported here, which
    would cost about a second to a check that may never touch a tensor; ``OMP_NUM_THREADS=1`` is set for
    the test instead, so a torch the test imports starts with one intra-op thread (it reads the variable
    once, at import, and keeps that one thread for the rest of the process; the variable itself is
    restored).

    A pytest fixture: pytest calls it, a check names it (it takes no arguments and is never called
    directly).

    Yields:
        ``None``, once, with ``torch.get_num_threads() == 1`` (or ``OMP_NUM_THREADS=1``) for the test's
        duration.

    Examples:
        In a check module (``checks/test_*.py``):

        >>> import pytest
        >>> from attention_claims.testkit import one_torch_thread  # the fixture must be in the module
        >>> pytestmark = pytest.mark.usefixtures("one_torch_thread")
        >>> pytestmark.args
        ('one_torch_thread',)
    """
    torch = loaded("torch")
    if torch is None:
        before = os.environ.get("OMP_NUM_THREADS")
        os.environ["OMP_NUM_THREADS"] = "1"
        try:
            yield
        finally:
            if before is None:
                os.environ.pop("OMP_NUM_THREADS", None)
            else:
                os.environ["OMP_NUM_THREADS"] = before
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
