"""``pytest --claims-model PATH`` and ``--claims-text FILE``: the trained-model readings on your
own models (a second ``pytest11`` plugin, next to :mod:`attention_claims.framework.plugin`).

- ``--claims-model PATH`` (repeatable): a local Hugging Face model folder (``config.json``,
  ``*.safetensors``, tokenizer files) or a GGUF file. At configure time, before the check modules
  are collected, each is registered in :mod:`attention_claims.models.registry` as
  ``user-<name>``; the trained-model checks parametrise over the registry
  (:mod:`attention_claims.testkit.model_params`), so every check of a trained-model claim gets
  one more case per user model, tied to the claim's reading ``on-user-model``
  (``user_model = "separate"``: reported, never counted in the verdict; docs/verdicts.md).
  A path that is missing, not a model, or of an architecture outside
  :data:`attention_claims.models.registry.SUPPORTED_ARCHITECTURES` is a ``pytest.UsageError``
  naming the path, its ``config.model_type`` and the supported ones; so is a model that cannot
  load (layers, heads or hidden size not positive or not dividing, an unreadable config, a
  truncated or corrupt safetensors file, a damaged GGUF header), whose ``config.json`` disagrees
  with the tensor shapes of its weights' headers (``num_hidden_layers = 10**9`` beside two layers of
  weights; a hidden size or heads the weights do not have), whose measurement would need more memory
  than the machine has free, or whose files are not regular files within their size caps (a FIFO as
  ``model.safetensors`` is refused at once, a 200 MB ``config.json`` after reading 4 MiB): exit
  status 4 before anything is collected or measured, one message naming the path, the file or the
  field, and what is wrong (:func:`attention_claims.models.registry.register_model`).
- ``--claims-text FILE``: the user models are measured on this UTF-8 text instead of Moby-Dick
  ch. 1 (the built-in models keep Moby-Dick: their readings name it). Needs ``--claims-model``.
  Only a prefix is read and tokenised (at most
  :data:`attention_claims.models.registry.MAX_USER_TEXT_BYTES`); an empty or binary file is a
  ``pytest.UsageError``, a text with fewer than N tokens skips those cases with the count.

A counterexample on a user model to a claim whose record expects ``true`` would be a failed test
(the main plugin marks only counterexamples to ``false``/``caveat`` claims as expected failures);
for a ``separate`` reading this plugin reports it as an expected failure too, so a user model
changes neither a verdict nor the exit status.
"""

from __future__ import annotations

from pathlib import Path

import pytest

PREFIX = "attention_claims."

#: :data:`attention_claims.models.measurement.DEVICE_ENV`, named here so that a run without it imports no torch
DEVICE_ENV = "ATTENTION_CLAIMS_MODEL_DEVICE"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("attention-claims", "attention-claims verdicts and report")
    group.addoption(
        "--claims-model",
        action="append",
        default=[],
        metavar="PATH",
        help="also run every trained-model reading on this model: a Hugging Face model folder (config.json, "
        "safetensors, tokenizer) or a GGUF file; BERT-like, GPT-2 and Llama-like architectures (repeatable)",
    )
    group.addoption(
        "--claims-text",
        default=None,
        metavar="FILE",
        help="measure the --claims-model models on this UTF-8 text instead of Moby-Dick ch. 1",
    )


def _resolve(config: pytest.Config, path: str) -> Path:
    p = Path(path).expanduser()
    return p if p.is_absolute() else Path(config.invocation_params.dir) / p


_SAVED = pytest.StashKey[tuple]()


def _check_device() -> None:
    """A set :data:`DEVICE_ENV` that names no usable device is a usage error before anything is collected."""
    import os

    if not os.environ.get(DEVICE_ENV, "").strip():
        return
    from attention_claims.models.measurement import ModelDeviceError, measurement_device

    try:
        measurement_device()
    except ModelDeviceError as exc:
        raise pytest.UsageError(f"attention-claims: {exc}") from None


MODELS_EXTRA = 'pip install "attention-claims[models]"'
""":data:`attention_claims.models.registry.MODELS_EXTRA`, named here so that counting the skips imports no torch."""


class _MissingModelStack:
    """Counts the checks skipped because the model stack (the ``models`` extra) is not installed, whose
    skip reasons name :data:`MODELS_EXTRA` (:func:`attention_claims.testkit.model_params.measure_or_skip`),
    and says so once at the end of the run: the light core runs every other check."""

    def __init__(self) -> None:
        self.skipped = 0

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        longrepr = report.longrepr
        if report.skipped and isinstance(longrepr, tuple) and len(longrepr) == 3 and MODELS_EXTRA in str(longrepr[2]):
            self.skipped += 1

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.skipped:
            terminalreporter.write_line(
                f"attention-claims: {self.skipped} trained-model check(s) skipped: the model stack is not installed "
                f"here ({MODELS_EXTRA}; the report gives each skipped reading's reason)", yellow=True)


def pytest_configure(config: pytest.Config) -> None:
    _check_device()
    config.pluginmanager.register(_MissingModelStack(), "attention_claims_missing_model_stack")
    paths = config.getoption("claims_model", default=[]) or []
    text = config.getoption("claims_text", default=None)
    if not paths and not text:
        return
    if text and not paths:
        raise pytest.UsageError("attention-claims: --claims-text measures the --claims-model models; "
                                "give at least one --claims-model PATH")
    from attention_claims.models import registry

    # This run's models only; what was registered before (an outer in-process run) is put back at unconfigure.
    config.stash[_SAVED] = (dict(registry.USER_MODELS), dict(registry.USER_TEXTS), registry.USER_TEXT)
    registry.clear_user_models()
    try:
        if text:
            registry.register_text(_resolve(config, text))
        for p in paths:
            registry.register_model(_resolve(config, p))
    except registry.ModelPathError as exc:
        raise pytest.UsageError(f"attention-claims: --claims-model / --claims-text: {exc}") from None
    config.pluginmanager.register(_SeparateReadings(config), "attention_claims_models_option")


def pytest_unconfigure(config: pytest.Config) -> None:
    saved = config.stash.get(_SAVED, None)
    if saved is None:
        return
    from attention_claims.models import registry

    registry.clear_user_models()
    registry.USER_MODELS.update(saved[0])
    registry.USER_TEXTS.update(saved[1])
    registry.USER_TEXT = saved[2]


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    if config.stash.get(_SAVED, None) is None:
        return None  # no --claims-model: nothing to say, and no reason to import the registry (and torch)
    from attention_claims.models import registry

    if not registry.USER_MODELS:
        return None
    lines = [f"attention-claims: user model {s.key}: {s.path} ({s.model_type}, {s.layers} layers x {s.heads} heads)"
             for s in registry.USER_MODELS.values()]
    if registry.USER_TEXT:
        lines.append(f"attention-claims: user models measured on {registry.text_label(registry.USER_TEXT)}")
    return lines


class _SeparateReadings:
    """Counterexamples of ``user_model = "separate"`` readings are expected failures (``x``)."""

    def __init__(self, config: pytest.Config):
        self.config = config

    def _separate(self, cid: str, reading: str) -> bool:
        from .plugin import STATE_KEY

        state = self.config.stash.get(STATE_KEY, None)
        claim = getattr(state, "by_id", {}).get(cid) if state is not None else None
        r = claim.reading(reading) if claim is not None else None
        return r is not None and r.user_model == "separate"

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        outcome = yield
        rep: pytest.TestReport = outcome.get_result()
        if rep.when != "call" or not rep.failed:
            return
        marker = item.get_closest_marker("claim")
        if marker is None or not marker.args or not isinstance(marker.kwargs.get("reading"), str):
            return
        props = dict(p for p in rep.user_properties if isinstance(p, (tuple, list)) and len(p) == 2)
        if PREFIX + "counterexample" not in props or PREFIX + "error" in props:
            return
        cid, reading = marker.args[0], marker.kwargs["reading"]
        if self._separate(cid, reading):
            rep.outcome = "skipped"
            rep.wasxfail = f"counterexample to {cid} [{reading}] on a user model (reported separately, not counted)"
