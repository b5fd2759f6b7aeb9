"""``attention-claims new --reading NAME:numerical:DTYPE`` writes the reading's ``dtype`` (issue 44, item 6), as
the tutorial's record has it; a dtype after another kind, or an unknown one, is a one-line usage error."""

from __future__ import annotations

import pytest

from attention_claims.cli import main
from attention_claims.framework.records import load_catalog


def test_new_writes_the_dtype_of_a_numerical_reading(note_project):
    assert main(["new", "rows-sum-to-one", "--document", "note.md", "--quote", "Every row of A sums to one.",
                 "--reading", "half:numerical:float16", "--reading", "float32:numerical"]) == 0
    (claim,) = load_catalog(note_project / "claims", note_project / "sources")
    assert [(r.name, r.kind, r.dtype) for r in claim.readings] == [
        ("as-stated", None, None), ("half", "numerical", "float16"), ("float32", "numerical", None)]
    text = (note_project / "claims" / "note" / "001-rows-sum-to-one.toml").read_text(encoding="utf-8")
    assert 'name = "half"\ndtype = "float16"\nkind = "numerical"\n' in text


@pytest.mark.parametrize("reading", ["half:scope:float16", "half:numerical:float8", "half:numerical:"])
def test_a_dtype_after_another_kind_or_an_unknown_dtype_is_a_usage_error(note_project, capsys, reading):
    assert main(["new", "rows-sum-to-one", "--document", "note.md", "--quote", "Every row of A sums to one.",
                 "--reading", reading]) == 4
    err = capsys.readouterr().err
    assert f"--reading {reading!r}: a dtype follows the kind numerical only" in err and "float16" in err, err
    assert "Traceback" not in err
    assert not (note_project / "claims" / "note").exists() or not list((note_project / "claims" / "note").iterdir())
