"""Lazy re-export of a layer's public names (PEP 562), shared by :mod:`attention_claims.maths` and
:mod:`attention_claims.models`: ``from attention_claims.maths import X`` imports only the module that
defines ``X``, so a check that needs no torch or python-flint does not pay for them."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_exports(package: str, where: Mapping[str, str]) -> tuple[list[str], Callable, Callable]:
    """``(__all__, __getattr__, __dir__)`` for ``package``, whose public name ``n`` lives in its
    submodule ``where[n]``.

    The returned ``__getattr__`` raises ``AttributeError`` for a name not in ``where``, as a module's
    must; a found name is cached in the package's namespace, so it is looked up once.
    """
    names = sorted(where)

    def __getattr__(name: str):
        if name in where:
            module = importlib.import_module(f".{where[name]}", package)
            value = getattr(module, name)
            setattr(importlib.import_module(package), name, value)
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return names

    return names, __getattr__, __dir__
