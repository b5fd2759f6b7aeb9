"""The public test kit is documented: every name of ``attention_claims.testkit.__all__`` is listed in
``docs/testkit.md`` (issue 23), and every maths name the page promises exists."""

from __future__ import annotations

import re
from pathlib import Path

import attention_claims.maths as maths
import attention_claims.testkit as testkit

DOC = Path(__file__).resolve().parents[1] / "docs" / "testkit.md"


def test_every_public_test_kit_name_is_documented():
    text = DOC.read_text(encoding="utf-8")
    missing = [name for name in testkit.__all__ if f"`{name}" not in text]
    assert missing == [], f"docs/testkit.md does not list {missing}"


def test_every_maths_name_the_page_lists_exists():
    text = DOC.read_text(encoding="utf-8").split("## Exact and certified arithmetic", 1)[1]
    names = set(re.findall(r"`([a-z_]+)\(", text)) | {"CertificationError"}
    assert names and all(hasattr(maths, n) for n in names), sorted(n for n in names if not hasattr(maths, n))
