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


def test_a_run_that_writes_no_report_is_exit_status_4_with_pytests_reason(note_project, capsys):
    """A stranger's project whose record is malformed: each seed's pytest stops with exit status 4 before
    any report; stability once raised RuntimeError (a traceback) and hid pytest's output. It is exit status
    4 naming the seed, pytest's exit status and its last lines."""
    (note_project / "claims").mkdir()
    (note_project / "claims" / "bad.toml").write_text('id = "Not Kebab"\n', encoding="utf-8")
    (note_project / "checks").mkdir()
    assert stability.main(["--seeds", "2", "--base", "7", "--out", str(note_project / "out.json")]) == 4
    err = capsys.readouterr().err
    assert err.startswith("attention-claims stability: seed 7: the run of pytest wrote no report (exit status 4")
    assert "bad.toml" in err and "Traceback" not in err
    assert not (note_project / "out.json").exists()
