"""Every array function of :mod:`attention_claims.maths` states its shapes in its docstring (issue 46).

The rule, checked on every public function (a name without a leading ``_`` defined in one of
``attention_claims.maths.MODULES``):

*Array function.* A function is an array function when its return annotation, or the annotation of
one of its parameters, names an array type (``ndarray``, ``Tensor``, ``matrix``, ``arb_mat``/
``fmpq_mat``/``fmpz_mat``, ``list``, ``tuple``, ``Sequence``, ``Array``), or when an unannotated
parameter has one of the field's array names (a capital such as ``Q``, ``K``, ``V``, ``X``, ``A``,
``M``, ``W`` or ``M_int``; ``x``, ``y``, ``z``, ``q``, ``p``, ``a``, ``b``; ``sigma``, ``mu``,
``keys``, ``values``, ``rows``, ``omega``, ``residuals``, ...; see ``ARRAY_NAME``).

*States a shape.* Its docstring contains at least one of:

1. a shape tuple: parentheses around comma-separated dimensions, each an integer, ``...``, a
   dimension name of the field (``N`` sequence length, ``M`` keys, ``L``, ``d`` head dimension and
   ``d_v``/``d_k``/``d_model``/..., ``D`` model width, ``H`` heads, ``B`` batch, ``T``, ``n``, ``m``,
   ``k``, ``r``, ``h``, ``dk``) or ``len(x)``, optionally combined by ``+ - * / ^`` or an integer
   factor: ``(N, d)``, ``(n,)``, ``(H, N, N)``, ``(N + 1, 2m)``, ``(len(gammas),)``;
2. a product of such dimensions written ``N x d`` or ``N×d``;
3. the word "shape" followed by a code span (``shape ``(r^2, (n + m) r)``` ``) or the words
   "any shape";
4. the word "scalar" (an argument with an array's name that is in fact one number says so).

Intervals such as ``(0, 1)`` and value tuples such as ``(alpha, C, r2)`` are not shapes. The
rule is checked on examples in :func:`test_the_rule_accepts_shapes_and_rejects_prose`.

*States its errors.* A public function whose body has a ``raise`` statement or calls one of the
layer's validators (``VALIDATORS``: ``as_array``, ``as_tensor``, ``as_fractions``, ``positive_int``,
...) has a ``Raises:`` section.
"""

from __future__ import annotations

import importlib
import inspect
import re

import pytest

import attention_claims.maths as maths

DIM = r"(?:\.\.\.|[1-9]\d*|len\(\w+\)|dk|hidden|[NMLDHBTdnmkrh](?:_\w+)?)"
EXPR = r"(?:[1-9]\d*)?" + DIM + r"(?:\s*[-+*/^]\s*(?:[1-9]\d*)?" + DIM + r")*"
SHAPE = re.compile(
    r"\(\s*" + EXPR + r"\s*,\s*(?:" + EXPR + r"(?:\s*,\s*" + EXPR + r")*\s*,?\s*)?\)"  # (N, d), (n,)
    + r"|(?<![\w^])" + EXPR + r"(?: x |\s*×\s*)" + EXPR + r"(?!\w)"  # N x d, N×d
    + r"|\bshape\s+``|\bany shape\b"  # shape ``...``, any shape
    + r"|\bscalars?\b"
)
"""A statement of shape in a docstring (the rule of the module docstring)."""

ARRAY_ANNOTATION = re.compile(r"ndarray|Tensor|matrix|_mat\b|\blist\b|\btuple\b|Sequence|Array")
ARRAY_NAME = re.compile(
    r"^(?:[A-Z]\w*|f[QK]|[xyzqpab]|sigma|mu|keys|values|rows|omega|exps|coeffs|energies|residuals"
    r"|weights|z_row|q_tilde|mu_tilde|sigma_tilde|computed|reference|betas|gammas)$"
)
"""Names of the field that mean an array when a parameter carries no annotation."""


VALIDATORS = re.compile(r"\b(?:as_array|as_tensor|as_fractions|as_int|positive_int|resolve_dtype|mp_matrix"
                        r"|fmpq_matrix|fmpz_matrix|arb_matrix|to_arb|_check\w*)\(")
"""Calls that raise ``AttentionInputError`` on bad input."""


def public_functions() -> list[tuple[str, object]]:
    """``(module.name, function)`` for every public function defined in a module of the layer."""
    out = []
    for name in maths.MODULES:
        mod = importlib.import_module(f"attention_claims.maths.{name}")
        for attr, obj in vars(mod).items():
            if not attr.startswith("_") and inspect.isfunction(obj) and obj.__module__ == mod.__name__:
                out.append((f"{name}.{attr}", obj))
    return out


def is_array_function(fn) -> bool:
    """Whether ``fn`` takes or returns an array, by the rule of the module docstring."""
    sig = inspect.signature(fn)
    if sig.return_annotation is not inspect.Signature.empty and ARRAY_ANNOTATION.search(str(sig.return_annotation)):
        return True
    for p in sig.parameters.values():
        if p.annotation is not inspect.Parameter.empty:
            if ARRAY_ANNOTATION.search(str(p.annotation)):
                return True
        elif ARRAY_NAME.match(p.name):
            return True
    return False


def states_shape(doc: str | None) -> bool:
    """Whether ``doc`` states a shape (the rule of the module docstring)."""
    return bool(doc and SHAPE.search(doc))


ARRAY_FUNCTIONS = [(n, f) for n, f in public_functions() if is_array_function(f)]


def test_the_walk_finds_the_array_functions():
    names = {n for n, _ in ARRAY_FUNCTIONS}
    assert len(names) >= 120, len(names)  # 130 when this test was written; a walk that finds none is no test
    assert {"attention.softmax_attention", "sparsity.babies", "rank.numerical_rank"} <= names
    assert "rounding.unit_roundoff" not in names  # (dtype) -> float: no array


def test_every_array_function_states_its_shapes():
    missing = [n for n, f in ARRAY_FUNCTIONS if not states_shape(inspect.getdoc(f))]
    assert missing == [], f"array functions whose docstring states no shape (rule: tests/maths/test_docstrings.py): {missing}"


def raises_without_saying(fn) -> bool:
    """Whether ``fn`` raises (a ``raise`` statement or a validator's call after its docstring) and its
    docstring has no ``Raises:`` section."""
    source = inspect.getsource(inspect.unwrap(fn))
    body = source.split('"""', 2)[-1]
    raises = re.search(r"^\s*raise \w", body, re.M) or VALIDATORS.search(body)
    return bool(raises) and "Raises:" not in (inspect.getdoc(fn) or "")


def test_every_public_function_that_raises_says_so():
    assert [n for n, f in public_functions() if raises_without_saying(f)] == []


def test_every_public_function_has_a_docstring():
    assert [n for n, f in public_functions() if not (inspect.getdoc(f) or "").strip()] == []


@pytest.mark.parametrize("text", [
    "returns ``(N, d)``", "a vector ``x (n,)``", "heads ``(H, N, N)``", "``(N + 1, 2m)``",
    "shape ``(len(gammas),)``", "a ``k x k`` minor", "the ``N×d`` keys", "shape ``(r^2, (n + m) r)``",
    "a tensor of any shape", "``x`` is a scalar", "``(d_model, d_v)``", "``(..., n)``",
])
def test_the_rule_accepts_shapes_and_rejects_prose(text):
    assert states_shape(text)


@pytest.mark.parametrize("text", [
    "an interval (0, 1)", "Returns ``(alpha, C, r2)``", "on bad shapes", "(see Higham, 2nd ed.)",
    "``(certified, det, bits)``", "exact arithmetic", "X - 1 xbar", "(j, k)", "", None,
])
def test_the_rule_rejects_what_is_no_shape(text):
    assert not states_shape(text)


def test_the_sparsity_criteria_say_what_they_are():
    """``babies`` and its siblings name Hurley & Rickard's criteria, not only their labels."""
    from attention_claims.maths import sparsity

    for fn, label in [(sparsity.robin_hood, "D1"), (sparsity.rising_tide, "D3"), (sparsity.cloning, "D4"),
                      (sparsity.bill_gates, "P1"), (sparsity.babies, "P2")]:
        doc = inspect.getdoc(fn)
        assert doc.startswith(label) and "Hurley & Rickard" in doc and "Raises:" in doc, fn.__name__
