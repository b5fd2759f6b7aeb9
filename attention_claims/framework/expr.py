"""Machine-readable formulas in claim records (the ``[claimed]`` table).

A record states what it claims as data, e.g. ``expression = "exp(-gamma**2/2)"`` or
``bound = "min(N, d)"``, and the check evaluates that text; so a planted variant of a
claim (``exp(-gamma**2/3)``) runs through the very same check (issue 5).

Expressions are parsed with :mod:`ast` and only a small arithmetic language is allowed:
numbers, the names a check supplies, ``+ - * / **``, unary minus, comparisons and calls
to :data:`FUNCTIONS`. Nothing else is evaluated (no attribute access, no builtins).

A record cannot make the run hang or crash (issue 22, finding 6): a formula longer than
:data:`MAX_LENGTH` characters, with more than :data:`MAX_NODES` syntax-tree nodes or nested deeper
than :data:`MAX_DEPTH`, is refused before or right after :func:`ast.parse` (whose ``RecursionError``
and ``MemoryError`` on pathological input are turned into an :class:`ExpressionError`); a ``**``
whose exponent is a constant larger than :data:`MAX_EXPONENT` in magnitude, or whose constant
operands would give a result of more than :data:`MAX_POW_BITS` bits, is refused at parse time; and
at evaluation a ``**`` of exact numbers (integers, fractions) is refused under the same two bounds
(float and mpmath powers cannot hang: they overflow or carry a binary exponent).
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
"""The binary operators (``**`` is evaluated by :func:`_pow`, which bounds exact powers)."""
_CMPOPS = {ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b,
           ast.GtE: lambda a, b: a >= b, ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b}


MAX_LENGTH = 1000
"""The longest formula, in characters (the longest shipped one has about 320), checked before parsing."""
MAX_NODES = 500
"""The most syntax-tree nodes a formula may have (the largest shipped one has about 230)."""
MAX_DEPTH = 50
"""The deepest nesting of a formula's syntax tree (the deepest shipped one: 14)."""
MAX_EXPONENT = 100_000
"""The largest magnitude of the exponent of a ``**``: constant exponents at parse time, exact
(integer or fraction) ones at evaluation (a check raises lambda = 1 to n = 10,000)."""
MAX_POW_BITS = 1 << 16
"""The largest estimated size in bits (``|exponent| * log2 |base|``) of an exact power (about
19,700 decimal digits), and of a power of two constants at parse time."""


class ExpressionError(ValueError):
    """A ``claimed`` expression is not in the allowed language, names an unknown variable, or is
    beyond the size limits (length, nodes, depth, exponent)."""


def _shown(text: str) -> str:
    """``text`` for an error message: quoted, and cut short when long."""
    return repr(text) if len(text) <= 80 else repr(text[:60]) + f"... ({len(text)} characters)"


def _is_exact(x: Any) -> bool:
    return isinstance(x, (int, Fraction)) and not isinstance(x, bool)


def _bits(x: Any) -> int:
    """Bits of the larger of numerator and denominator of an exact number (at least 1)."""
    f = Fraction(x)
    return max(abs(f.numerator).bit_length(), f.denominator.bit_length(), 1)


def _pow(a: Any, b: Any, text: str) -> Any:
    """``a ** b``, refused when both are exact and the exponent or the result would be too large
    (an exact power is computed digit by digit: ``10**10**10`` would never finish)."""
    if _is_exact(a) and _is_exact(b):
        if abs(b) > MAX_EXPONENT:
            raise ExpressionError(f"{_shown(text)}: exponent {b} of '**' is too large "
                                  f"(|exponent| at most {MAX_EXPONENT})")
        if abs(a) not in (0, 1) and abs(b) * _bits(a) > MAX_POW_BITS:
            raise ExpressionError(f"{_shown(text)}: the power {a} ** {b} would have about {abs(b) * _bits(a)} "
                                  f"bits (at most {MAX_POW_BITS})")
    return a**b


def _depth(tree: ast.AST) -> int:
    """The nesting depth of ``tree`` (iterative: the check itself must not recurse without bound)."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        stack.extend((child, d + 1) for child in ast.iter_child_nodes(node))
    return deepest


@functools.lru_cache(maxsize=4096)
def parse(text: str) -> ast.Expression:
    """Parse and whitelist ``text`` (memoised: a check evaluates the same few record formulas for every
    example; the tree is never modified).

    Raises:
        ExpressionError: a syntax error, a construct outside the allowed language, or a formula
            beyond the limits (:data:`MAX_LENGTH`, :data:`MAX_NODES`, :data:`MAX_DEPTH`, a constant
            exponent beyond :data:`MAX_EXPONENT` or a constant power beyond :data:`MAX_POW_BITS`).
    """
    if len(text) > MAX_LENGTH:  # before ast.parse: a long pathological text exhausts its stack or memory
        raise ExpressionError(f"{_shown(text)}: too long ({len(text)} characters, at most {MAX_LENGTH})")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"not a valid expression: {_shown(text)} ({exc.msg})") from None
    except (RecursionError, MemoryError, ValueError) as exc:  # nesting the parser cannot take; a NUL byte
        raise ExpressionError(f"not a valid expression: {_shown(text)} ({type(exc).__name__}: "
                              "too deeply nested or not parseable)") from None
    nodes = list(ast.walk(tree))  # breadth-first: no recursion
    if len(nodes) > MAX_NODES:
        raise ExpressionError(f"{_shown(text)}: too large ({len(nodes)} syntax-tree nodes, at most {MAX_NODES})")
    depth = _depth(tree)
    if depth > MAX_DEPTH:
        raise ExpressionError(f"{_shown(text)}: nested too deeply (depth {depth}, at most {MAX_DEPTH})")
    for node in nodes:
        ok = isinstance(node, (ast.Expression, ast.Constant, ast.Name, ast.Load, ast.BinOp, ast.UnaryOp,
                               ast.USub, ast.UAdd, ast.Compare, ast.Call, *_BINOPS, *_CMPOPS))
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float)):
            ok = False
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS
                                               and not node.keywords):
            ok = False
        if not ok:
            raise ExpressionError(f"{_shown(text)}: '{ast.unparse(node)}' is not allowed (numbers, variables, "
                                  f"+ - * / **, comparisons and {', '.join(FUNCTIONS)} only)")
    _check_constant_powers(tree, text)
    return tree


def _constant(node: ast.AST) -> bool:
    """Whether ``node`` names no variable (only numbers and the constants ``pi``, ``e``)."""
    return all(n.id in CONSTANTS for n in ast.walk(node) if isinstance(n, ast.Name))


def _check_constant_powers(tree: ast.Expression, text: str) -> None:
    """Refuse a ``**`` whose exponent is a constant beyond :data:`MAX_EXPONENT` in magnitude, or
    whose two operands are constants giving more than :data:`MAX_POW_BITS` bits (so ``x ** 10**10``
    and ``10**10**10`` are refused at load, whatever arithmetic a check evaluates them in).

    Raises:
        ExpressionError: such a power (or an exact power beyond the bounds inside a constant).
    """
    for node in ast.walk(tree):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and _constant(node.right)):
            continue
        exponent = _fold(node.right, text)
        if exponent is None:
            continue
        if abs(exponent) > MAX_EXPONENT:
            raise ExpressionError(f"{_shown(text)}: constant exponent {mpmath.nstr(exponent, 6)} of "
                                  f"'{ast.unparse(node)[:60]}' is too large (|exponent| at most {MAX_EXPONENT})")
        base = _fold(node.left, text) if _constant(node.left) else None
        if base is not None and base != 0:
            bits = abs(exponent) * abs(mpmath.log(abs(mpmath.mpf(base)), 2))
            if bits > MAX_POW_BITS:
                raise ExpressionError(f"{_shown(text)}: the constant power '{ast.unparse(node)[:60]}' would have "
                                      f"about {int(bits)} bits (at most {MAX_POW_BITS})")


def _fold(node: ast.AST, text: str) -> Any:
    """The value of the constant subtree ``node`` (mpmath arithmetic, exact powers bounded), or ``None``
    when it has no real value (a division by zero, a complex power, ...).

    Raises:
        ExpressionError: an exact power beyond the bounds inside it.
    """
    try:
        value = _evaluate_node(node, text, exact=False, floating=False, names={})
    except (ArithmeticError, ValueError, TypeError) as exc:
        if isinstance(exc, ExpressionError):
            raise
        return None
    if isinstance(value, mpmath.mpc) or isinstance(value, complex) or not mpmath.isfinite(value):
        return None
    return value


def evaluate(text: str, *, exact: bool = False, floating: bool = False, interval: bool = False, **names: Any) -> Any:
    """Evaluate ``text`` with the given variable values.

    ``exact=True`` reads number literals as :class:`fractions.Fraction` (for rational
    arithmetic; the functions are then unavailable); ``floating=True`` as Python floats
    and the functions from :mod:`math` (IEEE float64, as a reader would evaluate the
    printed formula); otherwise as mpmath numbers at the current ``mpmath.mp.dps``.

    Raises:
        ExpressionError: bad syntax, a disallowed construct, an unknown variable, a formula beyond
            the limits (:func:`parse`), or an exact power beyond :data:`MAX_EXPONENT` or
            :data:`MAX_POW_BITS`.
    """
    if sum((exact, floating, interval)) > 1:
        raise ValueError("evaluate: at most one of exact, floating and interval")
    if interval:
        return _evaluate_node(parse(text), text, exact=False, floating=False, names=names, interval=True)
    return _evaluate_node(parse(text), text, exact=exact, floating=floating, names=names)


def _decimal_mpf(written: str | None, value: float) -> mpmath.mpf:
    """A float literal as the decimal ``written`` in the formula, at the working precision (underscores
    dropped); the float's shortest round-trip decimal where the text is not at hand or not mpmath's syntax."""
    try:
        return mpmath.mpf((written or "").replace("_", ""))
    except (ValueError, TypeError):
        return mpmath.mpf(repr(value))


def _arb_functions() -> dict:
    """:data:`FUNCTIONS` in arb balls (python-flint): each encloses the function's values over its argument's ball."""
    from flint import arb

    def one(name):
        return lambda x: getattr(x if isinstance(x, arb) else arb(x), name)()

    return {"exp": one("exp"), "log": one("log"), "sqrt": one("sqrt"), "erf": one("erf"), "erfc": one("erfc"),
            "abs": abs, "min": lambda *xs: functools.reduce(lambda a, b: arb(a).min(arb(b)), xs),
            "max": lambda *xs: functools.reduce(lambda a, b: arb(a).max(arb(b)), xs)}


def _evaluate_node(tree: ast.AST, text: str, *, exact: bool, floating: bool, names: dict,
                   interval: bool = False) -> Any:
    """Evaluate the whitelisted syntax tree ``tree`` of ``text`` (see :func:`evaluate`)."""
    if interval:
        from flint import arb

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant):
            if interval:
                if isinstance(node.value, float):
                    written = (ast.get_source_segment(text, node) or repr(node.value)).replace("_", "")
                    try:
                        return arb(written)
                    except (ValueError, TypeError):
                        return arb(repr(node.value))
                return arb(node.value)
            if floating:
                return float(node.value)
            if exact:
                return Fraction(node.value) if isinstance(node.value, int) else Fraction(str(node.value))
            if isinstance(node.value, float):  # the decimal as written (0.9 is nine tenths, not float64's 0.9000...0222)
                return _decimal_mpf(ast.get_source_segment(text, node), node.value)
            return node.value
        if isinstance(node, ast.Name):
            if node.id in names:
                return names[node.id]
            if node.id in CONSTANTS and interval:
                return arb.pi() if node.id == "pi" else arb(1).exp()
            if node.id in CONSTANTS and floating:
                return float(CONSTANTS[node.id])
            if node.id in CONSTANTS and not exact:
                return +CONSTANTS[node.id]
            raise ExpressionError(f"{_shown(text)}: unknown variable '{node.id}' (available: {', '.join(sorted(names))})")
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Pow):
                return _pow(ev(node.left), ev(node.right), text)
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
                raise ExpressionError(f"{_shown(text)}: '{node.func.id}' is not available in exact arithmetic")
            fn = (_arb_functions() if interval else FLOAT_FUNCTIONS if floating else FUNCTIONS)[node.func.id]
            return fn(*[ev(a) for a in node.args])
        raise ExpressionError(f"{_shown(text)}: cannot evaluate {ast.dump(node)}")  # unreachable after parse()

    return ev(tree)
