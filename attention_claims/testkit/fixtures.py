"""pytest fixtures the checks share. A check module uses one by importing it and naming it in
``pytestmark = pytest.mark.usefixtures(...)`` (the fixture object is then found in the module)."""

from __future__ import annotations

import pytest

from .._lazy import loaded


@pytest.fixture
def one_torch_thread():
    """Run the test's small torch ops on one intra-op thread (restored afterwards): on a loaded
    2-core machine, waking the thread pool costs milliseconds per tiny op, far more than the op.

    A test that starts before anything has imported torch is left alone: importing torch here only to
    set its pool would cost about a second to a check that may never touch a tensor (the maths modules
    import torch on first use, :class:`attention_claims._lazy.LazyModule`)."""
    torch = loaded("torch")
    if torch is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
