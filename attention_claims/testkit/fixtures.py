"""pytest fixtures the checks share. A check module uses one by importing it and naming it in
``pytestmark = pytest.mark.usefixtures(...)`` (the fixture object is then found in the module)."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture
def one_torch_thread():
    """Run the test's small torch ops on one intra-op thread (restored afterwards): on a loaded
    2-core machine, waking the thread pool costs milliseconds per tiny op, far more than the op."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
