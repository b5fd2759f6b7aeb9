"""Machine-readable formulas in claim records (the ``[claimed]`` table).

A record states what it claims as data, e.g. ``expression = "exp(-gamma**2/2)"`` or
``bound = "min(N, d)"``, and the check evaluates that text; so a planted variant of a
claim (``exp(-gamma**2/3)``) runs through the very same check (issue 5).

Expressions are parsed with :mod:`ast` and only a small arithmetic language is allowed:
numbers, the names a check supplies, ``+ - * / **``, unary minus, comparisons and calls
to :data:`FUNCTIONS`. Nothing else is evaluated (no attribute access, no builtins).
"""

from __future__ import annotations

import ast
import functools
import math
from fractions import Fraction
from typing import Any

import mpmath

FUNCTIONS = {
    "exp": mpmath.exp,
    "log": mpmath.log,
    "sqrt": mpmath.sqrt,
    "erf": mpmath.erf,
    "erfc": mpmath.erfc,
    "abs": abs,
    "min": min,
    "max": max,
}
FLOAT_FUNCTIONS = {"exp": math.exp, "log": math.log, "sqrt": math.sqrt, "erf": math.erf, "erfc": math.erfc,
                   "abs": abs, "min": min, "max": max}
CONSTANTS = {"pi": mpmath.pi, "e": mpmath.e}
_BINOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a**b}
_CMPOPS = {ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b,
           ast.GtE: lambda a, b: a >= b, ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b}


class ExpressionError(ValueError):
    """A ``claimed`` expression is not in the allowed language, or names an unknown variable."""


@functools.lru_cache(maxsize=4096)
def parse(text: str) -> ast.Expression:
    """Parse and whitelist ``text`` (memoised: a check evaluates the same few record formulas for every
    example; the tree is never modified).

    Raises:
        ExpressionError: a syntax error or a construct outside the allowed language.
    """
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"not a valid expression: {text!r} ({exc.msg})") from None
    for node in ast.walk(tree):
        ok = isinstance(node, (ast.Expression, ast.Constant, ast.Name, ast.Load, ast.BinOp, ast.UnaryOp,
                               ast.USub, ast.UAdd, ast.Compare, ast.Call, *_BINOPS, *_CMPOPS))
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float)):
            ok = False
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS
                                               and not node.keywords):
            ok = False
        if not ok:
            raise ExpressionError(f"{text!r}: '{ast.unparse(node)}' is not allowed (numbers, variables, "
                                  f"+ - * / **, comparisons and {', '.join(FUNCTIONS)} only)")
    return tree


def evaluate(text: str, *, exact: bool = False, floating: bool = False, **names: Any) -> Any:
    """Evaluate ``text`` with the given variable values.

    ``exact=True`` reads number literals as :class:`fractions.Fraction` (for rational
    arithmetic; the functions are then unavailable); ``floating=True`` as Python floats
    and the functions from :mod:`math` (IEEE float64, as a reader would evaluate the
    printed formula); otherwise as mpmath numbers at the current ``mpmath.mp.dps``.

    Raises:
        ExpressionError: bad syntax, a disallowed construct, or an unknown variable.
    """
    tree = parse(text)

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant):
            if floating:
                return float(node.value)
            if exact:
                return Fraction(node.value) if isinstance(node.value, int) else Fraction(str(node.value))
            return mpmath.mpf(node.value) if isinstance(node.value, float) else node.value
        if isinstance(node, ast.Name):
            if node.id in names:
                return names[node.id]
            if node.id in CONSTANTS and floating:
                return float(CONSTANTS[node.id])
            if node.id in CONSTANTS and not exact:
                return +CONSTANTS[node.id]
            raise ExpressionError(f"{text!r}: unknown variable '{node.id}' (available: {', '.join(sorted(names))})")
        if isinstance(node, ast.BinOp):
            return _BINOPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else +v
        if isinstance(node, ast.Compare):
            left = ev(node.left)
            for op, comp in zip(node.ops, node.comparators, strict=True):
                right = ev(comp)
                if not _CMPOPS[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.Call):
            if exact and node.func.id not in ("abs", "min", "max"):
                raise ExpressionError(f"{text!r}: '{node.func.id}' is not available in exact arithmetic")
            fn = FLOAT_FUNCTIONS[node.func.id] if floating else FUNCTIONS[node.func.id]
            return fn(*[ev(a) for a in node.args])
        raise ExpressionError(f"{text!r}: cannot evaluate {ast.dump(node)}")  # unreachable after parse()

    return ev(tree)
