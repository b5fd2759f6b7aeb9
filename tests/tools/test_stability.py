"""The seed-stability tool (:mod:`attention_claims.tools.stability`)."""

from __future__ import annotations

import pytest

from attention_claims.tools import stability


def test_a_derandomized_profile_is_refused(capsys):
    with pytest.raises(SystemExit) as stop:
        stability.main(["--profile", "ci", "--seeds", "2"])
    assert stop.value.code == 2
    assert "--profile ci is derandomized: every seed runs the same examples" in capsys.readouterr().err


def test_the_seeds_of_a_dev_run_differ_and_are_compared(monkeypatch, tmp_path):
    seen = []

    def fake_run(seed, profile, paths, workers):
        seen.append((seed, profile))
        return {"a": "true", "b": "false" if seed % 2 else "caveat"}

    monkeypatch.setattr(stability, "run_seed", fake_run)
    out = tmp_path / "stability.json"
    assert stability.main(["--profile", "dev", "--seeds", "2", "--base", "10", "--out", str(out)]) == 1
    assert seen == [(10, "dev"), (11, "dev")]
    assert '"b"' in out.read_text(encoding="utf-8")
