"""The benchmark suite (``pytest benchmarks``; pytest-benchmark): not collected by the README's plain
``pytest`` (``testpaths`` are ``checks`` and ``tests``).

Each benchmark stores its measurement in :data:`RESULTS` (the ``bench_results`` fixture); at the end of the session the ratios
measured in this same run, with the machine they were measured on, are written to
``reports/bench.json`` (``--bench-json PATH`` to write elsewhere, ``--bench-json ''`` not at all).
The suite runs in-process (no xdist workers: pytest-benchmark cannot time in parallel workers).
"""

from __future__ import annotations

import datetime as _dt
import json
import platform
from pathlib import Path

import pytest

from attention_claims.framework.plugin import available_cores

ROOT = Path(__file__).resolve().parents[1]
RESULTS: dict[str, dict] = {}


def pytest_addoption(parser):
    parser.addoption("--bench-json", default=str(ROOT / "reports" / "bench.json"),
                     help="where to write the benchmark ratios ('' for nowhere)")
    parser.addoption("--bench-model-max-n", type=int, default=512,
                     help="largest N of the model_measurement benchmarks to run (512, 1024, 2048; "
                          "SmolLM2-135M at N = 2048 takes about 2 minutes on 2 idle cores)")


@pytest.fixture(scope="session")
def bench_results() -> dict[str, dict]:
    """The session's measurements, ``{benchmark: {path: value, ..., ratio: value}}``."""
    return RESULTS


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config):
    return 0  # timings need the whole machine, one benchmark at a time


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def pytest_sessionfinish(session, exitstatus):
    path = session.config.getoption("--bench-json")
    if not path or not RESULTS:
        return
    import torch

    cores = available_cores()
    out = {
        "machine": {"cpu": _cpu_name(), "cpu_count": cores, "platform": platform.platform(),
                    "python": platform.python_version(), "torch": torch.__version__,
                    "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None},
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "results": {},
    }
    # a run of some benchmarks (``-k``) keeps the other entries of the file, each with the date and machine
    # it was measured on: no entry is lost to a partial run
    try:
        earlier = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        earlier = {}
    for name, entry in (earlier.get("results") or {}).items():
        if name not in RESULTS and isinstance(entry, dict):
            out["results"][name] = {"date": earlier.get("date"), **entry}
    for name, entry in RESULTS.items():
        out["results"][name] = {**entry, "date": out["date"]}
    out["results"] = dict(sorted(out["results"].items()))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
