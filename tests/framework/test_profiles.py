"""The Hypothesis settings profiles (:mod:`attention_claims.framework.profiles`)."""

from __future__ import annotations


def test_the_everyday_profiles_skip_the_explain_phase_and_deep_keeps_it():
    """``ci`` and ``dev`` do not re-run shrunk counterexamples to annotate them (half of the checks'
    time); ``deep`` does (attention_claims.framework.profiles)."""
    from hypothesis import Phase, settings

    from attention_claims.framework import profiles

    for name in ("ci", "dev", "deep"):
        phases = settings.get_profile(name).phases
        assert (Phase.explain in phases) is (name == "deep"), (name, phases)
        assert Phase.shrink in phases and Phase.generate in phases, (name, phases)
    assert profiles.EVERYDAY_PHASES == [p for p in Phase if p is not Phase.explain]


def test_each_profile_starts_from_hypothesis_defaults_whatever_is_loaded():
    """Under ``CI=true`` Hypothesis loads its own ``ci`` profile, which registering ours reloads: ``dev`` and
    ``deep`` must not inherit from it (they would run derandomized, without the example database).
    Registered again here with a derandomized ``ci`` loaded, as on a CI machine, whatever this run's own
    environment."""
    import importlib

    from hypothesis import settings

    from attention_claims.framework import profiles

    loaded = settings.get_current_profile_name()
    try:
        settings.register_profile("ci", derandomize=True, database=None)
        settings.load_profile("ci")
        importlib.reload(profiles)
        deep, dev, ci = (settings.get_profile(name) for name in ("deep", "dev", "ci"))
    finally:
        importlib.reload(profiles)
        settings.load_profile(loaded)
    assert deep.derandomize is False and deep.database is not None and deep.max_examples == 1500
    assert dev.derandomize is False and dev.database is not None
    assert ci.derandomize is True and ci.database is None and ci.max_examples == 40


def test_a_derandomized_check_draws_the_same_examples_whatever_modules_are_loaded(tmp_path, monkeypatch):
    """Hypothesis's pool of local constants (the literals of every non-library module loaded) is pinned
    to this package's literals (``profiles.pin_local_constants``): a module full of literals, imported as
    a pytester run's ``conftest.py`` is, changes no derandomized draw. Without the pin the lists differ."""
    import sys

    from hypothesis import given, settings
    from hypothesis import strategies as st
    from hypothesis.internal.conjecture import providers

    from attention_claims.framework import profiles

    assert profiles.pin_local_constants() is True, "Hypothesis's local-constants pool moved: re-pin it"

    def draws() -> list:
        seen = []

        @settings(max_examples=200, derandomize=True, database=None)
        @given(st.floats(-1e6, 1e6), st.integers(-10**6, 10**6))
        def record(x, n):
            seen.append((x, n))

        record()
        return seen

    pool = providers._get_local_constants()
    assert pool == profiles._package_constants() and 1.0e-12 in pool.floats and "float32" in pool.strings
    before = draws()
    literals = ", ".join(str(1234.5678 + k) for k in range(300)) + ", " + ", ".join(str(98765 + k) for k in range(300))
    (tmp_path / "literals_here.py").write_text(f"VALUES = [{literals}]\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    __import__("literals_here")
    monkeypatch.setitem(sys.modules, "literals_here", sys.modules["literals_here"])
    assert providers._get_local_constants() is pool and 98765 not in pool.integers
    assert draws() == before


def test_the_pinned_pool_read_from_the_cache_is_the_collected_one(tmp_path, monkeypatch):
    """``profiles._package_constants`` keeps the pool in ``<cache root>/constants/``: read back, it is the
    pool collected from the sources, in the same order; a damaged entry is collected again."""
    from attention_claims.framework import profiles

    monkeypatch.setenv("ATTENTION_CLAIMS_CACHE", str(tmp_path))
    profiles._package_constants.cache_clear()
    try:
        fresh = profiles._package_constants()
        (entry,) = (tmp_path / "constants").glob("*.json")
        profiles._package_constants.cache_clear()
        again = profiles._package_constants()
        assert again == fresh and [list(again.set_for_type(t)) for t in ("integer", "float", "string")] == [
            list(fresh.set_for_type(t)) for t in ("integer", "float", "string")]
        entry.write_text(entry.read_text(encoding="utf-8").replace('"floats": [', '"floats": ["0x1p+0", '),
                         encoding="utf-8")  # its checksum no longer matches
        profiles._package_constants.cache_clear()
        assert profiles._package_constants() == fresh
    finally:
        profiles._package_constants.cache_clear()
