"""The caches' home (attention_claims._cache): the disk cache of high-precision references."""

from __future__ import annotations

from fractions import Fraction

import mpmath

from attention_claims._cache import disk_memo
from attention_claims.maths import s_reference

CALLS = []


@disk_memo
def _root(x, digits=30):
    CALLS.append((x, digits))
    with mpmath.workdps(digits):
        return +mpmath.sqrt(mpmath.mpf(x) if not isinstance(x, Fraction) else mpmath.mpf(x.numerator) / x.denominator)


def test_a_hit_returns_the_same_bits_and_does_not_recompute(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_CLAIMS_CACHE", str(tmp_path))
    CALLS.clear()
    first = _root(2.0)
    again = _root(2.0)
    assert again._mpf_ == first._mpf_ and len(CALLS) == 1
    assert len(list((tmp_path / "references").rglob("*.json"))) == 1


def test_the_key_is_exact_in_every_argument(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_CLAIMS_CACHE", str(tmp_path))
    CALLS.clear()
    _root(2.0)
    _root(2.0 + 2**-51)          # the next-but-one float: a different key
    _root(2.0, digits=31)        # keyword arguments are part of the key
    _root(Fraction(2, 1))        # a Fraction is not the float 2.0
    assert len(CALLS) == 4


def test_unkeyable_arguments_and_the_off_switch_bypass_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_CLAIMS_CACHE", str(tmp_path))
    CALLS.clear()
    _root([2.0][0])
    _root.__wrapped__(2.0)  # the undecorated function
    monkeypatch.setenv("ATTENTION_CLAIMS_REFERENCE_CACHE", "0")
    _root(2.0)
    assert len(CALLS) == 3


def test_s_reference_is_cached_and_identical_to_a_fresh_quadrature(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_CLAIMS_CACHE", str(tmp_path))
    with mpmath.workdps(45):
        cached = s_reference("identity", 0.7, 1.3)
        hit = s_reference("identity", 0.7, 1.3)
        fresh = s_reference.uncached("identity", 0.7, 1.3)
    assert hit._mpf_ == cached._mpf_ == fresh._mpf_
    assert list((tmp_path / "references" / "s_reference").glob("*.json"))
