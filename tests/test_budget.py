"""``tests/budget.py``: CPU-second budgets for the suite's own tests, wall-clock time only as a hang guard."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from budget import cpu_budget


def _spin(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_waiting_costs_no_cpu_so_a_loaded_machine_does_not_break_the_budget():
    with cpu_budget(0.5, what="sleeping") as spent:
        time.sleep(0.3)  # what a descheduled process looks like: time passes, no CPU is used
    assert spent.wall >= 0.3 and spent.cpu < 0.2


def test_cpu_over_the_budget_fails_naming_the_block():
    with pytest.raises(AssertionError, match=r"spinning: .* CPU s over its budget of 0\.1 s"):
        with cpu_budget(0.1, what="spinning"):
            _spin(0.3)


def test_the_cpu_of_waited_children_counts():
    with pytest.raises(AssertionError, match="CPU s over its budget"):
        with cpu_budget(0.1, what="a child"):
            subprocess.run([sys.executable, "-c", "import time\nend = time.process_time() + 0.4\n"
                            "while time.process_time() < end: pass"], check=True)


def test_the_wall_clock_guard_catches_a_block_that_waits_too_long():
    with pytest.raises(AssertionError, match=r"waiting: .* wall-clock over 0\.1 s"):
        with cpu_budget(1, wall_s=0.1, what="waiting"):
            time.sleep(0.3)
