"""The names a check writer meets first teach by example (issue 46): every public name of
``attention_claims.testkit`` (``__all__``, the public methods of its classes, and the few module-level
helpers a check calls by their module path) has an ``Examples:`` section whose doctest runs here, and the
Google-style sections its code calls for: ``Args:`` when it takes parameters, ``Returns:`` (``Yields:``
for a generator or fixture) when it returns a value, ``Raises:`` when its body raises or skips.

The docstrings are read as the documentation site reads them (griffe, the library under mkdocstrings,
with the Google parser of ``mkdocs.yml``), so a section the page would not show as one (``Example:``,
singular, is an admonition there, its ``>>>`` lines a block quote) is not counted. Each doctest runs with
empty globals (stdlib :mod:`doctest`, ``DocTestParser`` and ``DocTestRunner``): an example imports what
it uses, as a reader copying it would. One case per name, so a failure names the name.
The rounding bounds re-exported from :mod:`attention_claims.maths.rounding` (``Tolerance``,
``within_rounding``, ``softmax_tolerance``, ...) are held to the same contract: a check writer meets them
in the kit.
"""

from __future__ import annotations

import ast
import doctest
import functools
import inspect
import io
import textwrap
from dataclasses import dataclass
from pathlib import Path

import griffe
import pytest
from hypothesis import settings

import attention_claims.testkit as testkit
from attention_claims.tools.reference import defining_modules

ROOT = Path(__file__).resolve().parents[1]

EXTRA = {
    "attention_claims.testkit.references": ["decay_vector_sparsity"],
    "attention_claims.testkit.batched": ["skip_replaced_under_deep"],
    "attention_claims.testkit.failure_profiles": ["gaussian_qk_draws", "gaussian_softmax_ranks", "record_profile",
                                                  "softmax_rank_above_profile"],
    "attention_claims.testkit.model_params": ["USER_READING", "model_params", "model_key_params", "measure_or_skip"],
    "attention_claims.framework.profiles": ["scaled", "current_profile", "default_profile", "pin_local_constants"],
}
"""Public names outside ``__all__`` that a check writer calls by their module (``profiles.scaled`` and the
other functions of ``testkit.profiles``, the reference values, the deep-profile hook of ``checks/conftest.py``)."""


@functools.cache
def _module(path: str) -> griffe.Object:
    return griffe.load(path, search_paths=[str(ROOT)], resolve_aliases=False)


@dataclass(frozen=True)
class Entry:
    """One documented name: its dotted name and griffe object."""

    name: str
    obj: griffe.Object


def public_entries() -> list[Entry]:
    """Every name this test holds to the contract: ``testkit.__all__``, the public methods of its classes,
    and :data:`EXTRA`."""
    groups = {m: list(n) for m, n in defining_modules(testkit.__name__).items()}
    for module, names in EXTRA.items():
        groups.setdefault(module, []).extend(names)
    out = []
    for module, names in groups.items():
        for name in names:
            obj = _module(module)[name]
            out.append(Entry(f"{module}.{name}", obj))
            if obj.kind is griffe.Kind.CLASS:
                out.extend(Entry(f"{module}.{name}.{m}", member) for m, member in obj.members.items()
                           if member.kind is griffe.Kind.FUNCTION and not m.startswith("_"))
    return out


ENTRIES = public_entries()
IDS = [e.name.removeprefix("attention_claims.") for e in ENTRIES]


def _body(obj: griffe.Object) -> ast.AST | None:
    """The AST of a function's (or a class's ``__init__``'s) own code, or None for data and modules."""
    if obj.kind is griffe.Kind.CLASS:
        init = obj.members.get("__init__")
        return _body(init) if init is not None and init.kind is griffe.Kind.FUNCTION else None
    if obj.kind is not griffe.Kind.FUNCTION or not obj.lineno:  # data, a module, a generated __init__
        return None
    lines = Path(obj.filepath).read_text(encoding="utf-8").splitlines()[obj.lineno - 1:obj.endlineno]
    tree = ast.parse(textwrap.dedent("\n".join(lines)))
    return next(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))


def _own_nodes(fn: ast.AST):
    """The nodes of ``fn``'s body, not of the functions, lambdas and classes nested in it."""
    todo = list(ast.iter_child_nodes(fn))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        yield node
        todo.extend(ast.iter_child_nodes(node))


def required_sections(obj: griffe.Object) -> set[str]:
    """The griffe section kinds ``obj``'s docstring needs: ``examples`` always; ``parameters`` when it takes
    any (``attributes`` does for a class); ``returns`` / ``yields`` / ``raises`` when its code returns a
    value, yields, or raises (a ``raise`` statement or a ``pytest.skip`` / ``pytest.fail`` call)."""
    need = {"examples"}
    if obj.kind in (griffe.Kind.FUNCTION, griffe.Kind.CLASS):
        if [p for p in obj.parameters if p.name not in ("self", "cls")]:
            need.add("parameters")
    fn = _body(obj)
    if fn is None:
        return need
    for node in _own_nodes(fn):
        if isinstance(node, ast.Return) and node.value is not None and obj.kind is griffe.Kind.FUNCTION:
            if not (isinstance(node.value, ast.Constant) and node.value.value is None):
                need.add("returns")
        elif isinstance(node, (ast.Yield, ast.YieldFrom)):
            need.add("yields")
        elif isinstance(node, ast.Raise):
            need.add("raises")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and isinstance(node.func.value, ast.Name) and node.func.value.id == "pytest"
              and node.func.attr in ("skip", "fail")):
            need.add("raises")
    if "yields" in need:
        need.discard("returns")  # a generator's bare-value return ends it
    return need


def present_sections(docstring: str) -> set[str]:
    """The section kinds the Google parser finds in ``docstring`` (an ``examples`` section only when it
    holds a ``>>>`` example)."""
    sections = griffe.Docstring(docstring).parse("google", warnings=False)
    kinds = set()
    for s in sections:
        kind = s.kind.value
        if kind == "examples" and not any(k.value == "examples" for k, _ in s.value):
            continue
        kinds.add(kind)
    return kinds


def missing_sections(obj: griffe.Object, docstring: str | None = None) -> list[str]:
    """The sections ``obj``'s docstring (or ``docstring`` in its place) lacks, by their Google titles."""
    titles = {"examples": "Examples", "parameters": "Args", "returns": "Returns", "yields": "Yields",
              "raises": "Raises"}
    text = obj.docstring.value if docstring is None and obj.docstring else (docstring or "")
    have = present_sections(text)
    if obj.kind is griffe.Kind.CLASS and "attributes" in have:
        have.add("parameters")
    return [titles[k] for k in sorted(required_sections(obj)) if k not in have]


def run_doctests(name: str, docstring: str, filename: str) -> tuple[doctest.TestResults, str]:
    """Run the ``>>>`` examples of ``docstring`` with empty globals; the results and the runner's report."""
    test = doctest.DocTestParser().get_doctest(docstring, {}, name, filename, 0)
    out = io.StringIO()
    runner = doctest.DocTestRunner(verbose=False)
    profile = settings.get_current_profile_name()  # an example that loads a profile and fails half-way
    try:
        results = runner.run(test, out=out.write, clear_globs=True)
    finally:
        test.globs.clear()
        settings.load_profile(profile)
    return results, out.getvalue()


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_public_name_has_its_sections(entry):
    assert entry.obj.docstring is not None, f"{entry.name}: no docstring"
    missing = missing_sections(entry.obj)
    assert not missing, f"{entry.name} ({entry.obj.filepath}:{entry.obj.lineno}): docstring lacks {', '.join(missing)}"


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_public_name_example_runs(entry):
    results, report = run_doctests(entry.name, entry.obj.docstring.value, str(entry.obj.filepath))
    assert results.attempted, f"{entry.name}: no >>> example"
    assert not results.failed, f"{entry.name}: its example fails:\n{report}"


def test_the_list_covers_the_kit():
    names = {e.name.rsplit(".", 1)[1] for e in ENTRIES}
    assert set(testkit.__all__) <= names
    assert {"CheckLog", "refute", "qk_pairs", "plot", "failure_profile", "decay_vector_sparsity", "within_rounding",
            "softmax_tolerance", "excess", "around", "current_profile", "pin_local_constants"} <= names


# the checks above can fail: a docstring without its Examples, a name that raises without Raises, and a
# wrong example are each caught


def _entry(name: str) -> Entry:
    return next(e for e in ENTRIES if e.name.endswith(name))


def test_a_missing_examples_section_is_caught():
    e = _entry("testkit.strategies.qk_pairs")
    text = e.obj.docstring.value
    stripped = text[:text.index("Examples:")]
    assert missing_sections(e.obj) == []
    assert missing_sections(e.obj, stripped) == ["Examples"]
    singular = stripped + text[text.index("Examples:"):].replace("Examples:", "Example:", 1)
    assert missing_sections(e.obj, singular) == ["Examples"]  # an admonition on the page, not a section


def test_missing_args_returns_raises_yields_are_caught():
    e = _entry("framework.evidence.CheckLog.failure_profile")
    text = e.obj.docstring.value
    without_raises = text[:text.index("Raises:")] + text[text.index("Args:"):]
    assert missing_sections(e.obj, without_raises) == ["Raises"]
    without_args = text[:text.index("Args:")] + text[text.index("Returns:"):]
    assert missing_sections(e.obj, without_args) == ["Args"]
    e = _entry("testkit.strategies.rationals")
    text = e.obj.docstring.value
    assert missing_sections(e.obj, text[:text.index("Returns:")] + text[text.index("Raises:"):]) == ["Returns"]
    e = _entry("testkit.fixtures.one_torch_thread")
    assert required_sections(e.obj) == {"examples", "yields"}
    text = e.obj.docstring.value
    assert missing_sections(e.obj, text[:text.index("Yields:")] + text[text.index("Examples:"):]) == ["Yields"]


def test_a_failing_example_is_caught():
    e = _entry("testkit.strategies.rationals")
    wrong = e.obj.docstring.value.replace("Fraction(5, 4)", "Fraction(3, 2)")
    results, report = run_doctests(e.name, wrong, str(e.obj.filepath))
    assert results.failed == 1 and "Fraction(5, 4)" in report
    results, report = run_doctests("globals", ">>> CheckLog()\nCheckLog()\n", "x.py")  # no module globals
    assert results.failed == 1 and "NameError" in report


def test_strategies_read_as_strategies_on_the_page():
    """The page shows what griffe reads: no strategy of the kit shows Hypothesis's ``draw`` (an
    ``@st.composite`` function does, ``gaussian_batch_spec`` did), each is typed as returning a
    ``SearchStrategy``, and calling it with its own parameters gives one."""
    from hypothesis import strategies as st

    strategies = [e for e in ENTRIES if e.obj.kind is griffe.Kind.FUNCTION and "SearchStrategy" in str(e.obj.returns)]
    assert {"gaussian_batch_spec", "qk_pairs", "rationals"} <= {e.name.rsplit(".", 1)[1] for e in strategies}
    for e in strategies:
        params = [p.name for p in e.obj.parameters]
        assert "draw" not in params, f"{e.name}: the page shows Hypothesis's draw: {params}"
        assert all(p.annotation is not None for p in e.obj.parameters), f"{e.name}: an untyped parameter"
        assert e.obj.docstring.value.startswith("A strategy for"), e.name
    assert isinstance(testkit.gaussian_batch_spec(), st.SearchStrategy)


# CheckLog.plot is the one place a check writer learns the plot kinds (issue 46: it pointed at PLOT_KINDS and
# framework.render.plots, neither in the reference): its list must be whole and agree with the renderer


def plot_kinds_documented(docstring: str) -> dict[str, tuple[set[str], set[str]]]:
    """``kind -> (required fields, optional fields)`` as the bullets of ``CheckLog.plot``'s docstring list
    them (``- ``"kind"``: REQUIRED; OPTIONAL``; a code span that is not one word, such as
    ``{label: y}``, describes a field's value and is no field)."""
    import re

    out = {}
    for kind, body in re.findall(r'^- ``"(\w+)"``:(.*?)(?=^- |^\S|\Z)', inspect.cleandoc(docstring), re.M | re.S):
        required, _, optional = body.partition(";")
        out[kind] = tuple(set(re.findall(r"``(\w+)``", part)) for part in (required, optional))
    return out


def plot_kinds_drawn() -> dict[str, tuple[set[str], set[str]]]:
    """``kind -> (required fields, optional fields)`` as the renderer's drawing functions read them
    (``d["x"]``, against ``d.get("x")`` or ``"x" in d``), from the source of attention_claims/framework/render/plots.py."""
    tree = ast.parse((ROOT / "attention_claims/framework/render/plots.py").read_text(encoding="utf-8"))
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    table = next(n.value for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "PLOT_KINDS")
    out = {}
    for key, value in zip(table.keys, table.values, strict=True):
        required, optional = set(), set()
        for node in ast.walk(funcs[value.id]):
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
                required.add(node.slice.value)
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                  and isinstance(node.args[0], ast.Constant)):
                optional.add(node.args[0].value)
            elif isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In) and isinstance(node.left, ast.Constant):
                optional.add(node.left.value)
        out[key.value] = (required - optional, optional)
    return out


def test_checklog_plot_lists_every_kind_and_field():
    from attention_claims.framework.evidence import PLOT_KINDS

    doc = _entry("framework.evidence.CheckLog.plot").obj.docstring.value
    listed = plot_kinds_documented(doc)
    assert set(listed) == set(PLOT_KINDS)
    assert {k: req for k, (req, _opt) in listed.items()} == {k: set(v) for k, v in PLOT_KINDS.items()}
    assert listed == plot_kinds_drawn(), "the docstring's optional fields are not the ones the renderer reads"
    for name in ("PLOT_KINDS", "render.plots", "render_plot"):  # names the reference does not show
        assert name not in doc, f"CheckLog.plot sends the reader to {name}, which the reference does not document"


def test_a_plot_kind_left_out_of_the_docstring_is_caught():
    doc = _entry("framework.evidence.CheckLog.plot").obj.docstring.value
    start = doc.index('- ``"rank_breaks"``')
    without = doc[:start] + doc[doc.index('- ``"layer_head_heatmap"``'):]
    assert "rank_breaks" not in plot_kinds_documented(without)
    assert plot_kinds_documented(doc.replace("``logy``", "``logz``"))["curve"][1] != plot_kinds_drawn()["curve"][1]
