"""Time budgets for the suite's own tests that stay meaningful on a loaded machine.

A bound on wall-clock time fails when other work shares the cores: on the shared 2-core development
machine a report write that takes 1 s idle took over 3 s beside other engineers' runs, and one of seven
warm ``pytest`` runs failed once on such a bound (docs/performance.md). What these tests guard against
(a quadratic render, an exponent evaluated in full, a record read until memory runs out) burns CPU in
this process, so :func:`cpu_budget` bounds the CPU seconds of this process and of the child processes
it waited for (``time.process_time`` and ``resource.getrusage(RUSAGE_CHILDREN)``), which another
process's load does not inflate. A wall-clock bound is kept only as a hang guard (something blocked
without using CPU, e.g. a FIFO opened for reading), with a factor generous enough for a loaded
machine, stated where it is used.
"""

from __future__ import annotations

import contextlib
import resource
import time
from collections.abc import Iterator
from dataclasses import dataclass


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Spent:
    """What a :func:`cpu_budget` block spent, in seconds (filled in when the block ends)."""

    cpu: float = 0.0
    wall: float = 0.0


@contextlib.contextmanager
def cpu_budget(cpu_s: float, *, wall_s: float | None = None, what: str = "the block") -> Iterator[Spent]:
    """Assert that the block used at most ``cpu_s`` CPU seconds (this process, all its threads, plus
    the children it waited for), and at most ``wall_s`` wall-clock seconds when given (a hang guard).

    Thread-parallel work counts every thread's seconds, so a budget for a multi-threaded block is a
    bound on the work, not on the elapsed time. Yields a :class:`Spent` that holds both figures after
    the block, for a message or a second measurement.

    Raises:
        AssertionError: over either budget, naming ``what`` and both figures.
    """
    spent = Spent()
    cpu0, children0, wall0 = time.process_time(), _children_cpu(), time.monotonic()
    yield spent
    spent.cpu = time.process_time() - cpu0 + _children_cpu() - children0
    spent.wall = time.monotonic() - wall0
    assert spent.cpu <= cpu_s, f"{what}: {spent.cpu:.2f} CPU s over its budget of {cpu_s} s (wall {spent.wall:.2f} s)"
    if wall_s is not None:
        assert spent.wall <= wall_s, f"{what}: {spent.wall:.2f} s wall-clock over {wall_s} s (CPU {spent.cpu:.2f} s)"
