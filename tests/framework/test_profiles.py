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
    """Under ``CI=true`` Hypothesis loads its own ``ci`` profile, which registering ours reloads: ``deep``
    must not inherit from it (it would run derandomized, without the example database)."""
    from hypothesis import settings

    from attention_claims.framework import profiles

    deep = settings.get_profile("deep")
    assert deep.derandomize is False and deep.database is not None and deep.max_examples == 1500
    dev = settings.get_profile("dev")
    assert dev.derandomize is False and dev.database is not None
    ci = settings.get_profile("ci")
    assert ci.derandomize is True and ci.database is None
    assert profiles.current_profile() in profiles.PROFILES or profiles.current_profile() == "default"
