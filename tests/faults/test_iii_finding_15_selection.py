"""Issue 43 (faults III), finding 15 (the selection part): an empty selection is a usage error, and
selecting an ``unchecked`` claim reports it ``unchecked``.

Before: ``--claims-select ""`` ran the whole catalog, and ``--claims-select`` of an ``unchecked`` claim (a claim
with no checks by design) exited 5 ("no tests collected") and reported it ``undecided``.
"""

from __future__ import annotations

import pytest

from conftest import small_project_checks as _checks
from conftest import small_project_records as _records


@pytest.mark.parametrize("args", [["--claims-select", ""], ["--claims-select", " , "], ["--claims-select=,"],
                                  ["--claims-document", ""], ["--claims-select", "alpha-claim", "--claims-select", ""]],
                         ids=["empty", "blank-list", "comma", "empty-document", "one-empty"])
def test_iii_finding_15_an_empty_selection_is_a_usage_error(planted, args):
    run = planted(_records(), _checks(), args=args)
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR, run.result.stdout.str()
    assert "empty" in run.result.stderr.str(), run.result.stderr.str()
    assert not (run.report_dir / "claims.json").exists()


def test_iii_finding_15_selecting_an_unchecked_claim_reports_it_unchecked(planted):
    run = planted(_records(), _checks(), args=["--claims-select", "gamma-claim"])
    assert run.result.ret == pytest.ExitCode.OK, run.result.stdout.str()
    gamma = run.claim("gamma-claim")
    assert gamma["verdict"] == "unchecked" and gamma["agrees"] is True, gamma
    assert run.claim("alpha-claim")["verdict"] == "undecided"  # not selected, never decided
    assert "1 unchecked" in run.result.stdout.str()


def test_iii_finding_15_an_unchecked_claim_beside_a_checked_one(planted):
    run = planted(_records(), _checks(), args=["--claims-select", "gamma-claim,alpha-claim"])
    assert run.result.ret == pytest.ExitCode.OK, run.result.stdout.str()
    assert run.claim("gamma-claim")["verdict"] == "unchecked" and run.claim("alpha-claim")["verdict"] == "true"
