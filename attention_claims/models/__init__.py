"""Trained models: which ones (:mod:`.registry`), loading and GGUF conversion (:mod:`.loading`),
per-head measurements and their cache (:mod:`.measurement`), per-layer tables and the command line
(:mod:`.tables`, ``python -m attention_claims.models.tables``).
"""

from __future__ import annotations

from .._lazy import lazy_exports

MODULES = ('registry', 'loading', 'measurement', 'tables')
"""The concept modules of this layer, each importable on its own."""

_WHERE = {
    "LENGTHS": "registry",
    "TEXTS_DIR": "registry",
    "TEXTS": "registry",
    "PRIMARY_TEXT": "registry",
    "JOINED_TEXT": "registry",
    "TextProvenanceError": "registry",
    "ModelSpec": "registry",
    "MODELS": "registry",
    "GGUF_FILE": "registry",
    "MODELS_EXTRA": "registry",
    "model_files": "registry",
    "install_hint": "registry",
    "read_text": "registry",
    "text_sha256": "registry",
    "cache_root": "registry",
    "converted_dir": "registry",
    "converted_ok": "registry",
    "file_lock": "registry",
    "text_label": "registry",
    "SUPPORTED_ARCHITECTURES": "registry",
    "USER_MODELS": "registry",
    "ModelPathError": "registry",
    "get_spec": "registry",
    "model_keys": "registry",
    "is_user_model": "registry",
    "register_model": "registry",
    "register_text": "registry",
    "text_for": "registry",
    "user_converted_dir": "registry",
    "clear_user_models": "registry",
    "Loaded": "loading",
    "EXACT_ATTENTION": "loading",
    "convert_smollm2": "loading",
    "load_model": "loading",
    "token_ids": "loading",
    "attention": "loading",
    "attention_layers": "loading",
    "MEASURE_VERSION": "measurement",
    "EPS": "measurement",
    "TOP_FRACTION": "measurement",
    "MEASURES": "measurement",
    "head_measures": "measurement",
    "layer_spectra": "measurement",
    "measure_stack": "measurement",
    "GESDD_MAX_N": "measurement",
    "GRAM_UNRESOLVED": "measurement",
    "gram_resolution": "measurement",
    "gram_singular_values": "measurement",
    "head_singular_values": "measurement",
    "measure_layers": "measurement",
    "DEVICE_ENV": "measurement",
    "ModelDeviceError": "measurement",
    "measurement_device": "measurement",
    "torch_singular_values": "measurement",
    "measure_uncached": "measurement",
    "estimate_seconds": "measurement",
    "Measurement": "measurement",
    "measure": "measurement",
    "layer_table": "tables",
    "compact_layer_table": "tables",
    "report_markdown": "tables",
    "main": "tables",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _WHERE)

#: callables ``f(line: str) -> bool`` tried in order to show the one line a cold measurement writes before
#: it starts (:func:`.measurement.measure`); the first to return True took it. The repository's root
#: ``conftest.py`` adds pytest's terminal (past its output capture); with none taking it the line goes to
#: ``sys.__stderr__``.
ANNOUNCERS: list = []
