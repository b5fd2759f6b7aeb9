"""Messages under a selection that point at the fix (issue 44, item 6): a misspelt reading in a check's
marker is named under ``--claims-select`` as under ``--co``, not hidden behind "no check decides"."""

from __future__ import annotations

import pytest

from conftest import record_toml

CHECK = '''
import pytest

@pytest.mark.claim({marker})
def test_c(claim_log):
    claim_log.example(x=1.0)
'''


@pytest.mark.parametrize("extra", [[], ["--co"]], ids=["run", "collect-only"])
def test_a_misspelt_reading_under_a_selection_names_the_marker(planted, extra):
    run = planted({"c.toml": record_toml("c")}, {"test_c.py": CHECK.format(marker='"c", reading="exactt"')},
                  args=["--claims-select", "c", *extra])
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR
    err = run.result.stderr.str()
    assert "bad claim marker" in err and "test_c.py::test_c: claim 'c'" in err, err
    assert "has no reading 'exactt' (its readings: exact)" in err, err
    assert "no check decides" not in err, err


def test_a_misspelt_claim_id_under_a_selection_points_at_collect_only(planted):
    """The file does not name the selected id, so it is not even collected (plugin.pytest_ignore_collect):
    the message says how to find such a marker."""
    run = planted({"c.toml": record_toml("c")}, {"test_c.py": CHECK.format(marker='"cc", reading="exact"')},
                  args=["--claims-select", "c"])
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR
    err = run.result.stderr.str()
    assert "no check decides the selected claim c (" in err and "pytest --co without it" in err, err
