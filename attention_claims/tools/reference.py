"""``attention-claims reference [testkit|maths]...``: the API reference of the kit and the maths, read from
the installed package.

The documentation site's reference pages (``docs/reference/*.md``) are filled in when the site is built
(mkdocstrings), and mkdocs does not come with the wheel; this command prints the same names, every one of
``attention_claims.testkit.__all__`` and ``attention_claims.maths.__all__``, grouped by the module that
defines it in the package's own order, each with its signature and whole docstring, as Markdown (readable
as it is in a terminal; ``--output FILE`` writes it to a file). It reads the docstrings of the code that is
installed, so it is never stale. Sphinx roles (``:func:`x```) are shown as code spans, as on the site.

Exit status 0; 4 (:data:`attention_claims.tools.USAGE_ERROR`) for an unknown package name or a file that
cannot be written.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import re
import sys
from pathlib import Path
from types import ModuleType

from . import USAGE_ERROR, description

PACKAGES = {"testkit": "attention_claims.testkit", "maths": "attention_claims.maths"}
"""The short names this command takes -> the packages whose ``__all__`` it documents."""

ROLE = re.compile(r":(?:func|class|mod|data|attr|meth|exc|obj|const):`~?([^`]+)`")
"""A Sphinx cross-reference role; group 1 is its target as written (less a leading ``~``). The site's hook
(docs/hooks/reference.py) links the targets it documents and shows the rest as :func:`plain_roles` does."""


def plain_roles(text: str) -> str:
    """Sphinx cross-reference roles (``:func:`x```, ``:mod:`~a.b```) as Markdown code spans (`` `x` ``), as
    the site's hook (docs/hooks/reference.py) shows them; any other text as it was."""
    return ROLE.sub(lambda m: f"`{m.group(1)}`", text)


def defining_modules(package: str) -> dict[str, list[str]]:
    """Module path -> the names of ``package.__all__`` it defines, in the order of ``__all__``; the modules in
    the package's ``MODULES`` order where it has one. A lazily re-exported name (``_WHERE``,
    :func:`attention_claims._lazy.lazy_exports`) is grouped by where it lives, any other by its
    ``__module__``; a name that is itself a module (``testkit.profiles``) under its parent package.

    Raises:
        AttributeError: a name of ``__all__`` that the package does not define.
    """
    pkg = importlib.import_module(package)
    where = getattr(pkg, "_WHERE", None)
    groups: dict[str, list[str]] = {}
    for name in pkg.__all__:
        if where is not None:
            module = f"{package}.{where[name]}"
        else:
            obj = getattr(pkg, name)
            if isinstance(obj, ModuleType):
                module = obj.__name__.rsplit(".", 1)[0]
            else:
                module = getattr(obj, "__module__", None)
                if not module or not module.startswith("attention_claims"):  # a constant: where the package got it
                    module = _assigned_in(pkg, name) or package
        groups.setdefault(module, []).append(name)
    order = [f"{package}.{m}" for m in getattr(pkg, "MODULES", ())]
    return dict(sorted(groups.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))


def _assigned_in(pkg: ModuleType, name: str) -> str | None:
    """The module a package imported the constant ``name`` from (its ``from .x import name`` line), or ``None``."""
    tree = ast.parse(inspect.getsource(pkg))
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names):
            base = pkg.__name__.rsplit(".", node.level - 1)[0] if node.level > 1 else pkg.__name__
            return f"{base}.{node.module}" if node.level else node.module
    return None


def attribute_docs(module: ModuleType) -> dict[str, str]:
    """The docstrings of a module's constants: the string literal right after ``NAME = ...`` (or
    ``NAME: type = ...``), the convention Sphinx and mkdocstrings read."""
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):
        return {}
    out = {}
    for node, after in zip(tree.body, tree.body[1:], strict=False):
        target = (node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1
                  else node.target if isinstance(node, ast.AnnAssign) else None)
        if (isinstance(target, ast.Name) and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)):
            out[target.id] = inspect.cleandoc(after.value.value)
    return out


def _signature(obj) -> str:
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"


def _doc(obj) -> str:
    return plain_roles(inspect.getdoc(obj) or "(no docstring)")


def entry_markdown(module: str, name: str, obj) -> str:
    """One public name as Markdown: a heading, its signature in a code block, its whole docstring; a
    class also with its public methods and properties defined on it (each with its docstring)."""
    if isinstance(obj, ModuleType):
        return f"### `{name}` (module `{obj.__name__}`)\n\n{_doc(obj)}\n"
    if inspect.isclass(obj):
        parts = [f"### class `{name}`\n\n```python\nclass {name}{_signature(obj)}\n```\n\n{_doc(obj)}\n"]
        for attr, value in vars(obj).items():
            if attr.startswith("_"):
                continue
            if isinstance(value, property) and value.__doc__:
                parts.append(f"#### `{name}.{attr}` (property)\n\n{plain_roles(inspect.cleandoc(value.__doc__))}\n")
            elif isinstance(value, (staticmethod, classmethod)) or inspect.isfunction(value):
                func = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
                if func.__doc__:
                    parts.append(f"#### `{name}.{attr}`\n\n```python\n{attr}{_signature(func)}\n```\n\n{_doc(func)}\n")
        return "\n".join(parts)
    if callable(obj):
        return f"### `{name}`\n\n```python\n{name}{_signature(obj)}\n```\n\n{_doc(obj)}\n"
    doc = attribute_docs(importlib.import_module(module)).get(name, "")
    value = repr(obj)
    value = value if len(value) <= 300 else value[:299] + "…"
    return f"### `{name}`\n\n```python\n{name} = {value}\n```\n\n{plain_roles(doc)}\n".rstrip() + "\n"


def reference_markdown(package: str) -> str:
    """The reference of ``package``: its whole docstring, then a section per defining module (that module's
    first paragraph) with an entry per public name (:func:`entry_markdown`)."""
    pkg = importlib.import_module(package)
    out = [f"# `{package}`\n\n{_doc(pkg)}\n"]
    for module, names in defining_modules(package).items():
        doc = " ".join((importlib.import_module(module).__doc__ or "").strip().split("\n\n", 1)[0].split())
        out.append(f"## `{module}`\n\n{plain_roles(doc) if module != package else ''}\n".replace("\n\n\n", "\n"))
        out.extend(entry_markdown(module, name, getattr(pkg, name)) for name in names)
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="attention-claims reference", description=description(__doc__))
    parser.add_argument("packages", nargs="*", metavar="PACKAGE",
                        help=f"which reference: {' or '.join(PACKAGES)} (default: both, the kit first)")
    parser.add_argument("--output", type=Path, default=None, metavar="FILE",
                        help="write the Markdown to FILE instead of printing it")
    args = parser.parse_args(argv)
    unknown = [p for p in args.packages if p not in PACKAGES and p not in PACKAGES.values()]
    if unknown:
        print(f"attention-claims reference: unknown package {', '.join(map(repr, unknown))}; "
              f"choose from {', '.join(PACKAGES)}", file=sys.stderr)
        return USAGE_ERROR
    chosen = [PACKAGES.get(p, p) for p in args.packages] or list(PACKAGES.values())
    text = "\n".join(reference_markdown(p) for p in dict.fromkeys(chosen))
    if args.output is None:
        sys.stdout.write(text)
        return 0
    from .._files import UnsafeFileError, write_file

    try:
        write_file(args.output, text)
    except UnsafeFileError as exc:
        print(f"attention-claims reference: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except OSError as exc:
        print(f"attention-claims reference: {args.output}: cannot be written ({exc.strerror or exc})", file=sys.stderr)
        return USAGE_ERROR
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
