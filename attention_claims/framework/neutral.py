"""Text from a check, made safe for every output: the one place where it is neutralised.

A check's messages, notes, skip reasons, exception texts and example keys and values reach the terminal,
``claims.md`` and ``claims.html``. A control character there (an ANSI escape such as ``ESC[2J``, a carriage
return that overwrites a line, a NUL) or a Unicode bidirectional control (``U+202E`` RIGHT-TO-LEFT OVERRIDE,
the "Trojan Source" characters of CVE-2021-42574) would change what a reader sees. :func:`neutral` writes
each of them as a visible escape (``\\x1b``, ``\\u202e``) before the text enters the report model
(:mod:`attention_claims.framework.report_model`), so the terminal lines, the JSON and both renderers all get
the escaped form; Markdown and HTML escaping proper stay with the renderers. Line breaks and tabs are kept.
"""

from __future__ import annotations

import re
from typing import Any

BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
"""The Unicode bidirectional formatting characters (Unicode Standard Annex #9, "Explicit Directional
Embeddings", "Overrides" and "Isolates", and the implicit marks ALM, LRM, RLM)."""

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029" + BIDI_CONTROLS + "]")
"""C0 controls but tab and line feed, DEL, C1 controls (ECMA-48 CSI ``\\x9b`` among them), the Unicode line and
paragraph separators, and :data:`BIDI_CONTROLS`."""


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def neutral_text(text: str) -> str:
    """``text`` with every control character but tab and line feed, and every bidirectional control,
    written as a visible escape (``\\x1b``, ``\\r`` as ``\\x0d``, ``\\u202e``); other text unchanged.

    >>> neutral_text("ok\\x1b[31m red \\u202eevil")
    'ok\\\\x1b[31m red \\\\u202eevil'
    """
    return _UNSAFE.sub(_escape, text)


def has_unsafe(text: str) -> bool:
    """Whether :func:`neutral_text` would change ``text``."""
    return _UNSAFE.search(text) is not None


def neutral(value: Any) -> Any:
    """:func:`neutral_text` applied to every string in ``value`` (a str, or JSON-like dicts and lists,
    keys included); numbers, booleans and None unchanged."""
    if isinstance(value, str):
        return neutral_text(value)
    if isinstance(value, dict):
        return {neutral(k): neutral(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [neutral(v) for v in value]
    return value
