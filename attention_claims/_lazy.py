"""Laziness, in one place: the lazy re-export of a layer's public names (PEP 562), shared by
:mod:`attention_claims.maths`, :mod:`attention_claims.models` and :mod:`attention_claims.testkit`
(``from attention_claims.maths import X`` imports only the module that defines ``X``), and
:class:`LazyModule`, the stand-in through which the maths modules reach torch, so a check that needs no
torch or python-flint does not pay for them."""

from __future__ import annotations

import importlib
import sys
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


class LazyModule:
    """A stand-in for the module ``name`` that imports it on first attribute access.

    ``torch = LazyModule("torch")`` at the top of a module lets its functions say ``torch.softmax(...)``
    while importing the module costs nothing: torch (about 1 s to import) is loaded by the first function
    that needs it, so a check that never touches a tensor never pays for it. On that first access the
    stand-in also replaces itself by the real module wherever a module holds it as a global under the
    module's own name (``torch``, e.g. after ``from .arrays import torch``), so from then on those
    modules' functions reach torch directly, at the cost of any global lookup, and a monkeypatched
    ``torch.x`` is seen exactly while the patch lasts. A reference kept elsewhere goes on forwarding each
    attribute to the module. Dunder names (``__wrapped__``, ``__file__``..., which introspection such as
    ``inspect.unwrap`` or doctest collection probes) are not forwarded: they raise ``AttributeError``
    instead of importing the module. The stand-in is not put in ``sys.modules``, so code that asks
    whether torch is loaded (:func:`loaded`) is told the truth.

    Raises (on attribute access):
        ImportError: the module cannot be imported.
        AttributeError: the module has no such attribute, or the name is a dunder.
    """

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_name", name)

    def __getattr__(self, attr: str):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        name = self._name
        module = sys.modules.get(name)
        if module is None:
            module = importlib.import_module(name)
        self._replace_by(module)
        return getattr(module, attr)

    def _replace_by(self, module) -> None:
        """Rebind every module global ``<last part of the name>`` that is this stand-in to ``module``."""
        binding = self._name.rpartition(".")[2]
        for m in list(sys.modules.values()):
            namespace = getattr(m, "__dict__", None)
            if isinstance(namespace, dict) and namespace.get(binding) is self:
                namespace[binding] = module

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


def loaded(name: str):
    """The module ``name`` if it has been imported (by anyone), else None; never imports it. An object
    can only be an instance of a class of ``torch`` once torch is loaded, so
    ``(t := loaded("torch")) is not None and isinstance(x, t.Tensor)`` tests for a tensor for free."""
    return sys.modules.get(name)


def installed_version(package: str, version_file: str) -> str:
    """The version of the installed ``package`` without importing it: the ``version = "..."`` or
    ``__version__ = "..."`` line of its build-time ``version_file`` (matplotlib's ``_version.py``,
    torch's ``version.py``; 0.2 ms), else the distribution's metadata (``importlib.metadata``, about
    35 ms the first time, as it scans every installed distribution). Both give the same string.

    Raises:
        importlib.metadata.PackageNotFoundError: the package is not installed.
    """
    import importlib.metadata
    import importlib.util
    import re
    from pathlib import Path

    spec = importlib.util.find_spec(package)
    if spec is not None and spec.origin:
        try:
            text = (Path(spec.origin).parent / version_file).read_text(encoding="utf-8")
        except OSError:
            text = ""
        m = re.search(r"""^(?:__)?version(?:__)?\s*=\s*["']([^"']+)["']""", text, flags=re.M)
        if m:
            return m.group(1)
    return importlib.metadata.version(package)
