"""Hypothesis settings profiles (see Hypothesis docs, "Settings profiles").

- ``ci``: derandomized and bounded, so that CI gives the same verdicts on every run; the
  default when the environment variable ``CI`` is ``true``.
- ``dev``: random seeds, the example database on; the default otherwise.
- ``deep``: many more examples, meant for a GPU machine or a nightly run. Under ``deep`` the rank
  and spectrum readings with a batched twin are decided by it (:mod:`attention_claims.testkit.batched`,
  :mod:`attention_claims.engine`): ``BATCH`` instances per example.

Every profile sets ``report_multiple_bugs=False`` (one shrunk counterexample per check),
``deadline=None`` (high-precision certification is slow by design) and
``print_blob=True`` (the report can quote ``@reproduce_failure``).

``ci`` and ``dev`` skip Hypothesis's explain phase (``Phase.explain``): after shrinking it runs a
failing check again many times, varying each part of the shrunk example, only to annotate which parts
could be anything ("# or any other generated value") in the failure text, which the report keeps in
``claims.json`` alone (the HTML and Markdown reports show the shrunk example, its certificate and the
failure profile). On two cores it was 36 of the 76 CPU seconds of ``pytest checks`` under ``ci``;
the shrunk example and every verdict are the same without it. ``deep`` keeps it.

Examples:
    >>> from hypothesis import settings
    >>> from attention_claims.testkit import profiles
    >>> sorted(profiles.PROFILES), settings.get_profile("ci").max_examples
    (['ci', 'deep', 'dev', 'planted', 'planted-seeded'], 40)
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from hypothesis import HealthCheck, Phase, settings

_COMMON = dict(
    deadline=None,
    report_multiple_bugs=False,
    print_blob=True,
    # the claim_log fixture deliberately accumulates across examples
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

EVERYDAY_PHASES = [Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink]
"""Hypothesis's phases but ``explain`` (module docstring), for the ``ci`` and ``dev`` profiles."""

PROFILES = {
    "ci": dict(max_examples=40, derandomize=True, database=None, phases=EVERYDAY_PHASES, **_COMMON),
    "dev": dict(max_examples=80, phases=EVERYDAY_PHASES, **_COMMON),
    "deep": dict(max_examples=1500, **_COMMON),
    # planted variants (tests/test_planted.py) need a certified verdict, not a minimal
    # example: derandomized, bounded, no shrinking.
    "planted": dict(max_examples=30, derandomize=True, database=None,
                    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target], **_COMMON),
    # the planted profile with the seed free (``--hypothesis-seed=N``), for the seed sweep of the planted
    # falsehoods (ATTENTION_CLAIMS_PLANTED_SEED, tests/framework/test_planted.py; docs/trust.md): a falsehood
    # caught under ``planted`` but not under some seed is caught by one lucky draw, not by construction
    "planted-seeded": dict(max_examples=30, derandomize=False, database=None,
                           phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target], **_COMMON),
}

def pin_local_constants() -> bool:
    """Make Hypothesis draw the same examples in every process: its pool of "local constants" is fixed.

    Hypothesis (6.131 and later) mixes into a small share of its draws the literals it finds in every
    module of the process that is not in the standard library or site-packages (nor a ``test_*`` file):
    ``hypothesis.internal.conjecture.providers._get_local_constants`` rescans ``sys.modules`` whenever it
    grew. Here that is this package's modules as they happen to be imported, ``checks/conftest.py`` and
    every ``conftest.py`` a pytester run wrote, so under a derandomized profile a check's examples
    depended on which modules its process had loaded before it: on xdist's scheduling, and on serial
    against xdist (``tests/framework/test_trust.py::test_real_checks_same_report_under_xdist`` saw 69
    examples against 61 for the same check). The pool is pinned to the literals of every source file of
    this package (:func:`_package_constants`, read once, on the first draw that asks for a constant),
    whatever is imported and however the package is installed, so the code under test still lends its
    thresholds and sizes to the draws (two planted falsehoods are caught only through them). The plugin
    calls it when pytest starts; a second call changes nothing.

    Returns:
        ``True`` when the pool is pinned (now or before); ``False``, changing nothing, when this Hypothesis
        has no such pool (the private names are gone): ``tests/framework/test_profiles.py`` then fails.

    Examples:
        >>> from attention_claims.testkit import profiles
        >>> profiles.pin_local_constants(), profiles.pin_local_constants()
        (True, True)
    """
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import _constants_from_source  # noqa: F401
    except ImportError:
        return False
    if not callable(getattr(providers, "_get_local_constants", None)):
        return False
    if getattr(providers._get_local_constants, "_attention_claims_pinned", False):
        return True
    providers._get_local_constants = _package_constants
    return True


@functools.cache
def _package_constants():
    """The literals of every ``.py`` file of this package, in Hypothesis's own collection
    (``constants_ast._constants_from_source``; a file with too many is skipped, as Hypothesis skips it)
    and in its deterministic order (``SortedSet``, floats by their bits), for :func:`pin_local_constants`.

    Parsing the package takes about 0.17 s, so the pool is kept in the cache (``<cache root>/constants/``,
    :func:`attention_claims._cache.write_checked`) under the SHA-256 of the Hypothesis version and every
    file's path and bytes (the latest four kept): an edit of any file, or another Hypothesis, collects them
    again.
    """
    import hashlib
    import json
    import re

    import hypothesis
    from hypothesis.internal.conjecture.providers import SortedSet, float_to_int
    from hypothesis.internal.constants_ast import Constants, _constants_from_source

    from attention_claims._cache import prune_oldest, read_checked, trusted_dir, write_checked

    root = Path(__file__).resolve().parents[1]
    files = []
    for path in sorted(root.rglob("*.py")):
        try:
            files.append((path.relative_to(root).as_posix(), path.read_bytes()))
        except OSError:  # unreadable: its literals are left out, everywhere alike
            continue
    h = hashlib.sha256(hypothesis.__version__.encode())
    for rel, data in files:
        h.update(f"\0{rel}\0{len(data)}\0".encode())
        h.update(data)
    folder = trusted_dir("constants")
    entry = folder / f"{h.hexdigest()}.json" if folder is not None else None
    pool = Constants(integers=SortedSet(), floats=SortedSet(key=float_to_int), bytes=SortedSet(),
                     strings=SortedSet())
    stored = read_checked(entry) if entry is not None else None
    try:
        kept = json.loads(stored) if stored else None
        if kept is not None:
            pool.integers.update(int(i) for i in kept["integers"])
            pool.floats.update(float.fromhex(x) for x in kept["floats"])
            pool.bytes.update(bytes.fromhex(b) for b in kept["bytes"])
            pool.strings.update(kept["strings"])
            return pool
    except (ValueError, KeyError, TypeError):  # a damaged entry: collected again below
        pool = Constants(integers=SortedSet(), floats=SortedSet(key=float_to_int), bytes=SortedSet(),
                         strings=SortedSet())
    for _rel, data in files:
        try:
            pool |= _constants_from_source(data, limit=True)
        except (SyntaxError, ValueError):
            continue
    if entry is not None:
        write_checked(entry, json.dumps({"integers": [str(i) for i in pool.integers],
                                         "floats": [float(x).hex() for x in pool.floats],
                                         "bytes": [b.hex() for b in pool.bytes], "strings": list(pool.strings)}))
        prune_oldest([e for e in folder.iterdir() if re.fullmatch(r"[0-9a-f]{64}\.json", e.name)], keep=4)
    return pool


_package_constants._attention_claims_pinned = True


pin_local_constants()

for _name, _kw in PROFILES.items():
    # each from Hypothesis's own defaults: registering "ci" while Hypothesis's built-in "ci" profile is loaded
    # (it loads it where CI is set) reloads it, and a profile registered after it would inherit from it
    settings.register_profile(_name, parent=settings.get_profile("default"), **_kw)


def default_profile() -> str:
    """The Hypothesis profile a run loads when none is named: ``ci`` under ``CI=true`` (any case; ``1`` and
    ``yes`` too), else ``dev``.

    Returns:
        The profile's name, ``"ci"`` or ``"dev"``.

    Examples:
        >>> import os
        >>> from unittest import mock
        >>> from attention_claims.testkit import profiles
        >>> with mock.patch.dict(os.environ, {"CI": "True"}):
        ...     profiles.default_profile()
        'ci'
        >>> with mock.patch.dict(os.environ, {"CI": ""}):
        ...     profiles.default_profile()
        'dev'
    """
    return "ci" if os.environ.get("CI", "").lower() in ("true", "1", "yes") else "dev"


def current_profile() -> str:
    """The name of the Hypothesis profile now loaded (``settings.get_current_profile_name()``).

    Returns:
        The profile's name: ``"dev"``, ``"ci"``, ``"deep"``, or another one registered with Hypothesis.

    Examples:
        >>> from hypothesis import settings
        >>> from attention_claims.testkit import profiles
        >>> before = profiles.current_profile()
        >>> settings.load_profile("ci")
        >>> profiles.current_profile()
        'ci'
        >>> settings.load_profile(before)
    """
    return settings.get_current_profile_name()


def scaled(fraction: float, *, minimum: int = 5, explain: bool = True) -> settings:
    """Settings for an expensive check: ``fraction`` of the current profile's
    ``max_examples`` (at least ``minimum``), so ``deep`` still scales it up.

    ``explain=False`` drops Hypothesis's explain phase (``Phase.explain``) under ``deep`` too (``ci``
    and ``dev`` never run it), for checks that refute their claim by design: explaining every shrunk
    counterexample can double their run time, and the report already carries the shrunk example and
    its certificate.

    Use as a decorator below ``@given``: ``@profiles.scaled(0.25)``.

    Args:
        fraction: the share of the current profile's ``max_examples`` (a ``float``, e.g. 0.25).
        minimum: the fewest examples, whatever the profile.
        explain: keep Hypothesis's explain phase where the profile has it.

    Returns:
        A ``hypothesis.settings`` derived from the current default settings, usable as a decorator.

    Examples:
        >>> from hypothesis import given, settings, strategies as st
        >>> from attention_claims.testkit import profiles
        >>> before = settings.get_current_profile_name()
        >>> settings.load_profile("ci")  # max_examples = 40
        >>> profiles.scaled(0.25).max_examples, profiles.scaled(0.01).max_examples
        (10, 5)
        >>> @given(st.integers())
        ... @profiles.scaled(0.25)
        ... def check(n):
        ...     assert n == n
        >>> check()
        >>> settings.load_profile(before)
    """
    current = settings.default
    kw = {} if explain else {"phases": [p for p in current.phases if p is not Phase.explain]}
    return settings(current, max_examples=max(minimum, int(current.max_examples * fraction)), **kw)
