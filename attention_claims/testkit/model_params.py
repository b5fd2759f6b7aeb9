"""Parametrisation of the trained-model checks over the registry's models: the built-in ones
(each with its own readings, ``<prefix>on-<model>-at-n-<N>``) and the models given with
``pytest --claims-model PATH`` (all tied to the claim's one :data:`USER_READING`).

The user models are registered by :mod:`attention_claims.framework.models_option` at configure
time, before the check modules are imported, so :func:`attention_claims.models.model_keys`
already lists them here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest

from .. import models

USER_READING = "on-user-model"
"""The reading every check of a trained-model claim decides on a ``--claims-model`` model
(``user_model = "separate"`` in the records: reported, never counted in the verdict).

Examples:
    >>> from attention_claims.testkit.model_params import USER_READING
    >>> USER_READING
    'on-user-model'
"""

NO_USER_MODEL = "no --claims-model given: this reading runs only on your own models (docs/models.md, 'Your own model')"


def _user_keys(user: Callable[[models.ModelSpec], bool]) -> list[str]:
    return [k for k in models.USER_MODELS if user(models.get_spec(k))]


def model_params(claim: str, prefix: str = "", *, lengths: Iterable[int] = models.LENGTHS,
                 builtin: Iterable[str] | None = None, user: Callable[[models.ModelSpec], bool] = lambda s: True,
                 placeholder: bool = False, skip_if: Callable[[models.ModelSpec], str | None] = lambda s: None) -> list:
    """One ``pytest.param(key, N)`` per model and length, each with its ``claim`` marker.

    ``builtin`` (default: every built-in model) get reading ``<prefix>on-<key>-at-n-<N>`` and
    id ``<key>-n<N>``; each registered user model that satisfies ``user(spec)`` gets reading
    :data:`USER_READING` and id ``<user key>-n<N>``. With ``placeholder`` and no such user model,
    one skipped ``pytest.param(None, None)`` (id ``no-user-model``) keeps :data:`USER_READING`
    covered, as the plugin requires of every reading of a record (put it on one check per claim).
    ``skip_if(spec)`` returns a reason to skip a user model's cases (e.g. too few layers), or ``None``.

    Args:
        claim: the claim id every case's marker names.
        prefix: put before each built-in reading's name (``"uniform-in-n-"`` gives ``uniform-in-n-on-<key>-at-n-<N>``).
        lengths: the sequence lengths N (default :data:`attention_claims.models.LENGTHS`).
        builtin: the built-in model keys to include (default: all of :data:`attention_claims.models.MODELS`).
        user: a predicate on a user model's :class:`attention_claims.models.ModelSpec` that keeps it.
        placeholder: add the skipped ``no-user-model`` case when no user model is kept.
        skip_if: a function of a user model's spec giving a reason to skip its cases, or ``None``.

    Returns:
        A list of ``pytest.param(key, N)`` (``key`` a ``str``, ``N`` an ``int``; ``(None, None)`` for the
        placeholder), built-in models first, for ``@pytest.mark.parametrize("key,N", ...)``.

    Examples:
        >>> from attention_claims.testkit.model_params import model_params
        >>> params = model_params("theorem-11-21-spectral-power-law-decay", builtin=["minilm-l6"], lengths=(128,))
        >>> [(p.id, p.values, p.marks[0].kwargs) for p in params]  # without --claims-model
        [('minilm-l6-n128', ('minilm-l6', 128), {'reading': 'on-minilm-l6-at-n-128'})]
        >>> [p.id for p in model_params("x", builtin=[], placeholder=True)]
        ['no-user-model']
    """
    lengths = tuple(lengths)
    keys = tuple(models.MODELS) if builtin is None else tuple(builtin)
    out = [pytest.param(m, N, marks=pytest.mark.claim(claim, reading=f"{prefix}on-{m}-at-n-{N}"), id=f"{m}-n{N}")
           for m in keys for N in lengths]
    users = _user_keys(user)
    for m in users:
        reason = skip_if(models.get_spec(m))
        marks = [pytest.mark.claim(claim, reading=USER_READING)] + ([pytest.mark.skip(reason=f"{m}: {reason}")]
                                                                   if reason else [])
        out += [pytest.param(m, N, marks=marks, id=f"{m}-n{N}") for N in lengths]
    if placeholder and not users:
        out.append(pytest.param(None, None, marks=[pytest.mark.claim(claim, reading=USER_READING),
                                                   pytest.mark.skip(reason=NO_USER_MODEL)], id="no-user-model"))
    return out


def model_key_params(claim: str, prefix: str = "", *, placeholder: bool = False) -> list:
    """As :func:`model_params` for a check over all lengths at once: ``pytest.param(key)``,
    reading ``<prefix>on-<key>`` for a built-in model, :data:`USER_READING` for a user model.

    Args:
        claim: the claim id every case's marker names.
        prefix: put before each built-in reading's name.
        placeholder: add a skipped ``no-user-model`` case (``pytest.param(None)``) when no user model is
            registered.

    Returns:
        A list of ``pytest.param(key)``, every built-in model then every user model, for
        ``@pytest.mark.parametrize("key", ...)``.

    Examples:
        >>> from attention_claims import models
        >>> from attention_claims.testkit.model_params import model_key_params
        >>> params = model_key_params("theorem-11-21-spectral-power-law-decay", "uniform-in-n-")
        >>> [p.id for p in params][:len(models.MODELS)] == list(models.MODELS)
        True
        >>> params[0].marks[0].kwargs["reading"] == f"uniform-in-n-on-{params[0].id}"
        True
    """
    out = [pytest.param(m, marks=pytest.mark.claim(claim, reading=f"{prefix}on-{m}"), id=m) for m in models.MODELS]
    users = _user_keys(lambda s: True)
    out += [pytest.param(m, marks=pytest.mark.claim(claim, reading=USER_READING), id=m) for m in users]
    if placeholder and not users:
        out.append(pytest.param(None, marks=[pytest.mark.claim(claim, reading=USER_READING),
                                             pytest.mark.skip(reason=NO_USER_MODEL)], id="no-user-model"))
    return out


_UNMEASURABLE: dict[tuple, str] = {}
"""User models whose loading or measuring failed in this process (by key, path, fingerprint): the reason."""


def measure_or_skip(key: str, N: int) -> models.Measurement:
    """The cached measurement of model ``key`` at ``N`` (float32 and float64 forward passes).

    Skips the running check when the model is not installed, when a user model's context
    (``max_position_embeddings``) is shorter than ``N``, or when its text has fewer than ``N``
    tokens; each reason names the model. A user model that fails to load or measure (what
    :func:`attention_claims.models.register_model` could not see at configure time) skips its
    cases with one line naming the model, its path and the error, tried once per process: its
    ``on-user-model`` reading is then skipped, and no built-in reading or verdict is touched.

    Args:
        key: a model key of :data:`attention_claims.models.MODELS` or a registered user model.
        N: the sequence length, in tokens.

    Returns:
        The model's :class:`attention_claims.models.Measurement` at ``N`` (computed once, then cached).

    Raises:
        pytest.skip.Exception: the model is not installed, a user model's context or text is shorter than
            ``N``, or a user model cannot be loaded or measured (each reason names the model).
        KeyError: ``key`` names no registered model.
        attention_claims.models.loading.TextTooShort: a built-in model's text has fewer than ``N`` tokens.
        Exception: a built-in model's loading or measuring error, passed on (a fault of the suite).

    Examples:
        Loading a model takes seconds, so only the lookup is shown here; ``checks/test_trained.py`` calls
        it with each case of :func:`model_params`:

        >>> from attention_claims.testkit.model_params import measure_or_skip
        >>> measure_or_skip("no-such-model", 128)
        Traceback (most recent call last):
            ...
        KeyError: 'no-such-model'
    """
    from ..models.loading import TextTooShort

    spec = models.get_spec(key)
    hint = models.install_hint(key)
    if hint is not None:
        pytest.skip(f"{spec.title} not installed: {hint}")
    if spec.user and spec.max_positions is not None and spec.max_positions < N:
        pytest.skip(f"{spec.key} ({spec.path}): context of {spec.max_positions} positions < N = {N}")
    failed = (spec.key, spec.path, spec.fingerprint)
    if spec.user and failed in _UNMEASURABLE:
        pytest.skip(_UNMEASURABLE[failed])
    try:
        return models.measure(key, N)
    except TextTooShort as exc:
        if spec.user:
            pytest.skip(f"{spec.key} ({spec.path}): {exc} (text {models.text_label(models.text_for(key))})")
        raise
    except Exception as exc:
        if not spec.user:
            raise
        first = " ".join(str(exc).split())[:300]
        _UNMEASURABLE[failed] = f"{spec.key} ({spec.path}): cannot be loaded or measured: {type(exc).__name__}: {first}"
        pytest.skip(_UNMEASURABLE[failed])
