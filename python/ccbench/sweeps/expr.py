"""Arithmetic and comparisons for sweep specs, evaluated safely.

Derived values (``"{k}BDP"``, ``"{5 + 2 * rep}s"``) and filters (``"not (cca == 'bbr'
and k > 8)"``) are small expressions over the sweep's variables. Specs are data, not
programs, so an expression is parsed with :mod:`ast` and only literals, variable
names, arithmetic, comparisons, boolean operators, conditional expressions and a few
pure functions (``min``, ``max``, ``abs``, ``round``, ``int``, ``float``, ``str``) are
evaluated; anything else (attributes, subscripts, lambdas, other calls) is an error.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["ExpressionError", "evaluate", "render"]


class ExpressionError(ValueError):
    """An expression or template is malformed, or uses something not allowed."""


_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Not: operator.not_,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "min": min,
    "max": max,
    "abs": abs,
    "round": round,
    "int": int,
    "float": float,
    "str": str,
    "ceil": math.ceil,
    "floor": math.floor,
}
#: Guard against ``10 ** 10 ** 10``: exponents above this are refused.
_MAX_EXPONENT = 1024


def _eval(node: ast.AST, names: Mapping[str, Any], text: str) -> Any:
    if isinstance(node, ast.Expression):
        return _eval(node.body, names, text)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool)):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in names:
            return names[node.id]
        if node.id in ("true", "false"):  # TOML spelling
            return node.id == "true"
        known = ", ".join(sorted(names)) or "(none)"
        raise ExpressionError(f"{text!r}: unknown name {node.id!r}; known names: {known}")
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(_eval(e, names, text) for e in node.elts)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left, names, text), _eval(node.right, names, text)
        if isinstance(node.op, ast.Pow) and isinstance(right, (int, float)) and abs(right) > _MAX_EXPONENT:
            raise ExpressionError(f"{text!r}: exponent {right} is too large")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand, names, text))
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.And):
            return all(_eval(v, names, text) for v in node.values)
        return any(_eval(v, names, text) for v in node.values)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, names, text)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = _eval(comparator, names, text)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        return _eval(node.body if _eval(node.test, names, text) else node.orelse, names, text)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
        and not node.keywords
    ):
        return _FUNCTIONS[node.func.id](*(_eval(a, names, text) for a in node.args))
    allowed = "numbers, strings, names, + - * / // % **, comparisons, and/or/not, x if c else y, " + ", ".join(
        f"{f}()" for f in _FUNCTIONS
    )
    raise ExpressionError(f"{text!r}: {ast.unparse(node)!r} is not allowed; expressions may use {allowed}")


def evaluate(text: str, names: Mapping[str, Any]) -> Any:
    """Evaluate one expression over ``names``; raises :class:`ExpressionError`."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        raise ExpressionError(f"{text!r} is not a valid expression ({e.msg})") from None
    try:
        return _eval(tree, names, text)
    except ExpressionError:
        raise
    except (TypeError, ValueError, ZeroDivisionError, OverflowError) as e:
        raise ExpressionError(f"{text!r} cannot be evaluated: {e}") from None


def _text(value: Any) -> str:
    """A value as it appears inside a template: integral floats without ``.0`` (so
    ``{k}BDP`` with k = 2.0 gives ``2BDP``), other floats in their shortest form."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def render(template: str, names: Mapping[str, Any]) -> Any:
    """Fill a template: each ``{expression}`` is evaluated over ``names``; ``{{`` and
    ``}}`` are literal braces. A template that is exactly one ``{expression}`` gives the
    expression's value with its type (``"{n}"`` with n = 4 gives the integer 4)."""
    parts: list[str | tuple[str]] = []
    i, n = 0, len(template)
    buf = ""
    while i < n:
        c = template[i]
        if c == "{" and template.startswith("{{", i):
            buf += "{"
            i += 2
        elif c == "}" and template.startswith("}}", i):
            buf += "}"
            i += 2
        elif c == "{":
            end = template.find("}", i + 1)
            if end < 0:
                raise ExpressionError(f"{template!r}: '{{' without a closing '}}'")
            if buf:
                parts.append(buf)
                buf = ""
            parts.append((template[i + 1 : end],))
            i = end + 1
        elif c == "}":
            raise ExpressionError(f"{template!r}: '}}' without an opening '{{' (write '}}}}' for a literal brace)")
        else:
            buf += c
            i += 1
    if buf:
        parts.append(buf)
    if len(parts) == 1 and isinstance(parts[0], tuple):
        return evaluate(parts[0][0], names)
    return "".join(p if isinstance(p, str) else _text(evaluate(p[0], names)) for p in parts)
