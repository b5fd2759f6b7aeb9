"""Issue 43, finding 14: a corrupt ``model.safetensors`` is refused at configure time.

Overlapping ``data_offsets`` or a dtype ``F128`` passed the configure-time check; every case was then
skipped as "cannot be loaded", exit 0, where docs/models.md promises exit status 4. The header is now
checked against the whole format (:func:`attention_claims.models.registry.validate_safetensors_header`):
known dtypes, shapes of the size their byte ranges hold, integer offsets in bounds, not overlapping and
tiling the data, no name twice, no deep nesting. Each damage in its own case; the run itself stops with
exit status 4 naming the file (in this process, through ``run_at_root``).
"""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
import tiny_models  # noqa: E402

from attention_claims.models import registry  # noqa: E402


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> Path:
    return tiny_models.build("llama", tmp_path_factory.mktemp("iii-finding-14") / "tiny-llama")


@pytest.fixture(autouse=True)
def _forget_user_models(isolated_user_models):
    """Every test here starts with no user model and an empty cache (tests/conftest.py)."""


def _split(path: Path) -> tuple[dict, bytes]:
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8:8 + n]), raw[8 + n:]


def _write(path: Path, header: dict | bytes, data: bytes) -> None:
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)


def _tensors(header: dict) -> list[str]:
    """The tensor names in the order of their data."""
    return sorted((k for k in header if k != "__metadata__"), key=lambda k: header[k]["data_offsets"])


def _overlap(h, d):
    a, b = _tensors(h)[:2]
    h[b] = dict(h[a])  # b now claims a's bytes (a valid size for its dtype and shape): the two overlap
    return h, d


def _f128(h, d):
    h[_tensors(h)[0]]["dtype"] = "F128"
    return h, d


def _shape_too_big(h, d):
    t = h[_tensors(h)[0]]
    t["shape"] = [t["shape"][0] * 2, *t["shape"][1:]]
    return h, d


def _gap(h, d):
    last = _tensors(h)[-1]  # moved 4 bytes on, the file 4 bytes longer: bytes nobody owns before it
    lo, hi = h[last]["data_offsets"]
    h[last]["data_offsets"] = [lo + 4, hi + 4]
    return h, d[:lo] + b"\0" * 4 + d[lo:]


def _trailing(h, d):
    return h, d + b"\0" * 8


def _float_offsets(h, d):
    t = h[_tensors(h)[0]]
    t["data_offsets"] = [float(v) for v in t["data_offsets"]]
    return h, d


def _reversed_offsets(h, d):
    t = h[_tensors(h)[0]]
    t["data_offsets"] = t["data_offsets"][::-1]
    return h, d


def _negative_dimension(h, d):
    h[_tensors(h)[0]]["shape"] = [-1, 4]
    return h, d


def _extra_field(h, d):
    h[_tensors(h)[0]]["scale"] = 2
    return h, d


def _duplicate_name(h, d):
    first = _tensors(h)[0]
    text = json.dumps(h)
    entry = json.dumps({first: h[first]})[1:-1]
    return text[:-1].encode() + b", " + entry.encode() + b"}", d


def _deep(h, d):
    h["__metadata__"] = {"x": "y"}
    text = json.dumps(h)[:-1] + ', "deep": ' + "[" * 50_000 + "]" * 50_000 + "}"
    return text.encode(), d


CORRUPT = {
    "overlapping-offsets": (_overlap, "overlap"),
    "dtype-F128": (_f128, "dtype 'F128' is not a safetensors dtype"),
    "shape-larger-than-its-bytes": (_shape_too_big, "need"),
    "gap-between-tensors": (_gap, "unused"),
    "bytes-after-the-last-tensor": (_trailing, "its tensors end at byte"),
    "float-offsets": (_float_offsets, "is not [begin, end]"),
    "reversed-offsets": (_reversed_offsets, "is not [begin, end]"),
    "negative-dimension": (_negative_dimension, "is not a list of non-negative integers"),
    "extra-field": (_extra_field, "exactly dtype, shape and data_offsets"),
    "duplicate-name": (_duplicate_name, "appears twice"),
    "nested-50000-deep": (_deep, "nests deeper than"),
}


def _corrupt(good: Path, dest: Path, case: str) -> Path:
    tiny_models.copy_with_config(good, dest)
    w = dest / "model.safetensors"
    header, data = CORRUPT[case][0](*_split(w))
    _write(w, header, data)
    return w


@pytest.mark.parametrize("case", sorted(CORRUPT))
def test_iii_finding_14_corrupt_header_refused_naming_the_file(good, tmp_path, case):
    w = _corrupt(good, tmp_path / "m", case)
    with pytest.raises(registry.ModelPathError) as err:
        registry.register_model(tmp_path / "m")
    msg = str(err.value)
    assert str(w) in msg and CORRUPT[case][1] in msg, msg
    assert "safetensors" in msg
    assert registry.USER_MODELS == {}


def test_iii_finding_14_the_good_file_still_passes(good, tmp_path):
    """The saved file is accepted, and so is the same header rewritten (no padding) over the same data."""
    shapes = registry.check_safetensors(good / "model.safetensors")
    assert shapes and all(isinstance(s, list) for s in shapes.values())
    w = tmp_path / "model.safetensors"
    _write(w, *_split(good / "model.safetensors"))
    assert registry.check_safetensors(w) == shapes


@pytest.mark.parametrize("case", ["overlapping-offsets", "dtype-F128"])
def test_iii_finding_14_run_stops_with_exit_4(good, tmp_path, case, run_at_root):
    """The issue's two reproductions, end to end: exit 4 before anything is measured, naming the file, no
    traceback (before: every case skipped as "cannot be loaded", exit 0)."""
    w = _corrupt(good, tmp_path / "m", case)
    res = run_at_root("checks/test_trained.py", "--claims-model", str(tmp_path / "m"), "--claims-select",
                      "lemma-11-34-energy-concentration", "--claims-report-dir", str(tmp_path / "reports"),
                      env={"HF_HUB_OFFLINE": "1", "ATTENTION_CLAIMS_CACHE": str(tmp_path / "cache")})
    text = res.stdout + res.stderr
    assert res.ret == 4, text[-3000:]
    assert str(w) in res.stderr and CORRUPT[case][1] in res.stderr, res.stderr
    assert "Traceback" not in text and "INTERNALERROR" not in text
