"""MkDocs hook: the generated parts of the documentation site, filled in at build time so they cannot drift.

- ``<!-- reference: PACKAGE -->`` (``attention_claims.testkit``, ``attention_claims.maths``) becomes one
  mkdocstrings block per name of ``PACKAGE.__all__``, grouped by the module that defines it, in the
  order of ``__all__``; mkdocstrings renders each from its signature and docstring.
- The docstrings' Sphinx roles (``:func:`refute```) become autorefs links (`` [`refute`][module.refute] ``)
  to the entry of their target on either reference page, or code spans where the site has no entry for
  it (griffe extension ``LinkRoles``, mkdocs.yml; :class:`RoleLinker`). ``attention-claims reference``
  shows every role as a code span.
- ``<!-- cli-help -->`` becomes ``attention-claims --help`` and each subcommand's ``--help``, as the
  installed command prints them.

``tests/test_docs_site.py`` builds the site and checks the result against ``__all__``.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import io
import os
import re
from pathlib import Path

MARKER = re.compile(r"^<!-- reference: ([\w.]+) -->$", re.M)
CLI_MARKER = "<!-- cli-help -->"


def defining_modules(package: str) -> dict[str, list[str]]:
    """Module path -> the names of ``package.__all__`` it defines, in the order of ``__all__``: the grouping of
    ``attention-claims reference`` (:func:`attention_claims.tools.reference.defining_modules`), so the site and
    the command a wheel user runs list the same names under the same modules."""
    from attention_claims.tools.reference import defining_modules as grouped

    return grouped(package)


def directive(module: str, name: str) -> str:
    """The mkdocstrings block of ``module.name``."""
    return f"::: {module}.{name}\n"


def reference_markdown(package: str) -> str:
    """The generated reference of ``package``: a section per defining module, a block per public name."""
    out = []
    for module, names in defining_modules(package).items():
        doc = (importlib.import_module(module).__doc__ or "").strip().split("\n\n", 1)[0]
        out.append(f"## `{module}`\n\n{page_roles(' '.join(doc.split()), module)}\n")
        out.extend(directive(module, name) for name in names)
    return "\n".join(out)


def cli_markdown() -> str:
    """``attention-claims --help`` and every subcommand's ``--help``, each in a fenced block."""
    from attention_claims import cli

    def captured(argv: list[str]) -> str:
        buf = io.StringIO()
        saved = os.environ.get("COLUMNS")
        os.environ["COLUMNS"] = "80"  # argparse wraps to the terminal's width: the same page on every
        # machine, and 78 characters fit the page's column without a horizontal scroll bar
        try:
            with contextlib.redirect_stdout(buf), contextlib.suppress(SystemExit):
                cli.main(argv)
        finally:
            if saved is None:
                del os.environ["COLUMNS"]
            else:
                os.environ["COLUMNS"] = saved
        return buf.getvalue().rstrip()

    parts = ["```text\n$ attention-claims --help\n" + captured(["--help"]) + "\n```\n"]
    for name in cli.COMMANDS:
        parts.append(f"### `attention-claims {name}`\n\n```text\n$ attention-claims {name} --help\n"
                     + captured([name, "--help"]) + "\n```\n")
    return "\n".join(parts)


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ARG001 - MkDocs hook signature
    """Fill the page's markers (MkDocs calls this for every page before it renders the Markdown)."""
    markdown = MARKER.sub(lambda m: reference_markdown(m.group(1)), markdown)
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, cli_markdown())
    return markdown


# -- Sphinx roles as links (mkdocs-autorefs) -----------------------------------------------------------------

PACKAGES = ("attention_claims.testkit", "attention_claims.maths")
"""The packages whose reference pages the site generates (``<!-- reference: PACKAGE -->``)."""

ROOT = Path(__file__).resolve().parents[2]
HIDDEN = re.compile(r"^_[^_]")
"""mkdocstrings' default filter (``"!^_[^_]"``): a member named so is not rendered."""


def plain_roles(text: str) -> str:
    """The docstrings' Sphinx cross-reference roles as Markdown code spans
    (:func:`attention_claims.tools.reference.plain_roles`, which ``attention-claims reference`` uses too)."""
    from attention_claims.tools.reference import plain_roles as plain

    return plain(text)


def rendered(obj, path: str):
    """``(anchor, griffe object)`` of ``obj`` shown as ``::: path`` and of each member mkdocstrings renders
    under it with this site's options (mkdocs.yml): members not inherited, not ``_private``, with a docstring
    somewhere in them (``show_if_no_docstring: false``), an imported one only when public, no submodules."""
    yield path, obj
    target = obj.final_target if obj.is_alias else obj
    if not (target.is_class or target.is_module):
        return
    for name, member in target.members.items():
        if HIDDEN.search(name) or (member.is_alias and not member.is_public):
            continue
        try:
            if member.is_module or not member.has_docstrings:
                continue
        except (_griffe.AliasResolutionError, _griffe.CyclicAliasError):  # not rendered either
            continue
        yield from rendered(member, f"{path}.{name}")


class RoleLinker:
    """Turns the Sphinx roles of the docstrings of one griffe package (``attention_claims``) into autorefs
    links, `` [`name`][anchor] ``, where the target is an object the site documents (a name of a
    :data:`PACKAGES` ``__all__`` as :func:`defining_modules` groups it, and the members rendered under it,
    :func:`rendered`), and into code spans otherwise (an autorefs link to an anchor no page has is a
    warning, an error under ``mkdocs build --strict``).

    A role's text is looked up as Sphinx does: a leading dot relative to the docstring's package
    (``:func:`.exact.as_fractions``` in ``attention_claims.maths.rank``), else in the docstring's own class
    (and the classes around it), its module, the :data:`PACKAGES` roots (``:class:`CheckLog``` anywhere),
    then as a full dotted path; the first object found is the target.
    """

    def __init__(self, pkg) -> None:
        self.pkg = pkg
        # ``package.name`` (re-exports, some lazy, which griffe does not see) -> its anchor ``module.name``
        self.roots = {f"{p}.{n}": f"{m}.{n}" for p in PACKAGES for m, ns in defining_modules(p).items() for n in ns}
        # the anchor of each documented object, by its anchor and by its canonical path
        self.anchors: dict[str, str] = {}
        for root in self.roots.values():
            obj = self.lookup(root)
            if obj is None:
                continue
            for anchor, member in rendered(obj, root):
                self.anchors.setdefault(anchor, anchor)
                canonical = self.canonical(member)
                if canonical is not None:
                    self.anchors.setdefault(canonical, anchor)

    def lookup(self, path: str):
        """The griffe object at the dotted ``path`` (through the package roots' re-exports and imports), or
        ``None``."""
        parts = path.split(".")
        for k in range(len(parts), 0, -1):
            head = ".".join(parts[:k])
            if head in self.roots:
                path = ".".join([self.roots[head], *parts[k:]])
                break
        if path == self.pkg.path:
            return self.pkg
        if not path.startswith(self.pkg.path + "."):
            return None
        try:
            return self.pkg[path[len(self.pkg.path) + 1:]]
        except (KeyError, ValueError, _griffe.AliasResolutionError, _griffe.CyclicAliasError):
            return None

    @staticmethod
    def canonical(obj) -> str | None:
        """Where ``obj`` is defined (an alias's final target), or ``None`` when griffe cannot tell."""
        try:
            return obj.final_target.path if obj.is_alias else obj.path
        except (_griffe.AliasResolutionError, _griffe.CyclicAliasError):
            return None

    def candidates(self, text: str, obj) -> list[str]:
        """The dotted paths ``text``, written in the docstring of ``obj``, may name, in lookup order."""
        module = obj if obj.is_module else obj.module
        if text.startswith("."):
            package = module if module.is_init_module else (module.parent or module)
            return [package.path + text]
        scopes = []
        scope = obj
        while scope is not None and not scope.is_module:
            if scope.is_class:
                scopes.append(scope.path)
            scope = scope.parent
        return [f"{s}.{text}" for s in [*scopes, module.path, *PACKAGES]] + [text]

    def anchor(self, text: str, obj) -> str | None:
        """The anchor of the documented object ``text`` names in ``obj``'s docstring, or ``None``."""
        for path in self.candidates(text.strip(), obj):
            if path in self.anchors:
                return self.anchors[path]
            found = self.lookup(path)
            if found is not None:
                return self.anchors.get(self.canonical(found) or "")
        return None

    def link(self, docstring: str, obj) -> str:
        """``docstring`` (of ``obj``) with each role a link to its target's anchor, or a code span."""
        from attention_claims.tools.reference import ROLE

        def one(m: re.Match) -> str:
            anchor = self.anchor(m.group(1), obj)
            return f"[`{m.group(1)}`][{anchor}]" if anchor else f"`{m.group(1)}`"

        return ROLE.sub(one, docstring)


def objects(root):
    """``root`` and every object defined under it (aliases left out: their docstring is the target's)."""
    todo, seen = [root], set()
    while todo:
        obj = todo.pop()
        if obj.is_alias or id(obj) in seen:
            continue
        seen.add(id(obj))
        yield obj
        todo.extend(obj.members.values())


@functools.cache
def linker() -> RoleLinker:
    """A :class:`RoleLinker` over ``attention_claims`` as griffe reads it here, for the roles of the pages'
    own text (each module's first paragraph, :func:`reference_markdown`)."""
    return RoleLinker(_griffe.load("attention_claims", search_paths=[str(ROOT)], resolve_aliases=False))


def page_roles(text: str, module: str) -> str:
    """The roles of ``text`` (written in ``module``) as links where the site documents their target
    (:class:`RoleLinker`), as code spans otherwise or without griffe."""
    if _griffe is None:  # pragma: no cover - MkDocs' python handler brings griffe
        return plain_roles(text)
    links = linker()
    return links.link(text, links.lookup(module) or links.pkg)


# -- griffe extension (mkdocs.yml: the python handler's ``extensions``) ------------------------------------

try:
    import griffe as _griffe
except ImportError:  # pragma: no cover - only MkDocs imports this module, and it brings griffe
    _griffe = None

if _griffe is not None:

    class LinkRoles(_griffe.Extension):
        """Rewrites the Sphinx roles of every docstring of ``attention_claims`` once griffe has loaded the
        whole package (:class:`RoleLinker`): links where the site documents the target, code spans
        otherwise; any other package's roles as code spans."""

        def on_package(self, *, pkg, loader, **kwargs) -> None:  # noqa: ARG002 - griffe's hook signature
            """Called by griffe once per package it has loaded completely."""
            links = RoleLinker(pkg) if pkg.path == "attention_claims" else None
            for obj in objects(pkg):
                if obj.docstring is not None:
                    value = obj.docstring.value
                    obj.docstring.value = links.link(value, obj) if links else plain_roles(value)
