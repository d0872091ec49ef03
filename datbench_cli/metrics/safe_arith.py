"""Evaluate a printed arithmetic expression without ``eval``.

Some reference scorers call Python's ``eval`` on text that SymPy printed from model output
(MathVision: ``eval(str(latex2sympy(x)))``). This module replaces that call: it parses the text
with :mod:`ast`, accepts only what a SymPy print of a number can contain (int, float, complex and
bool literals; ``+ - * / **``; unary ``+``/``-``; the comparisons ``< <= > >=``) and computes with
Python's own operators, so every accepted expression gives exactly what ``eval`` gives and raises
exactly where ``eval`` raises (``ZeroDivisionError``, ``OverflowError``, ``TypeError``...).

Everything else (names, calls, attributes, subscripts, containers, lambdas, comprehensions,
strings) is refused with :class:`UnsupportedExpressionError`; under ``eval`` such text would
either fail too (SymPy names such as ``sqrt``, ``pi``, ``oo`` are undefined there; lists fail in
``round``) or run arbitrary code.

Bound on the work: an ``int ** int`` or ``int * int`` whose result would exceed
:data:`MAX_INT_BITS` bits (about 30,000 decimal digits) raises :class:`ResultTooLargeError`
instead of being computed, so ``10**10**10`` cannot hang or exhaust memory. No realistic answer
comes near that size (Python already refuses to print integers of more than 4,300 digits). The
walk is iterative, so any expression the parser accepts (nesting up to ~3,000) is evaluated
without hitting Python's recursion limit.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any, cast

MAX_INT_BITS = 100_000

_LITERAL_TYPES = (int, float, complex, bool)

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}


class UnsupportedExpressionError(ValueError):
    """The text holds something other than number literals and arithmetic."""


class ResultTooLargeError(ArithmeticError):
    """An integer result would exceed :data:`MAX_INT_BITS` bits."""


def _check_product(left: object, right: object) -> None:
    # bool counts as int, as in Python arithmetic
    if isinstance(left, int) and isinstance(right, int):
        bits = abs(left).bit_length() + abs(right).bit_length() - 1
        if bits > MAX_INT_BITS:
            raise ResultTooLargeError(f"product of about {bits} bits refused")


def _check_power(base: object, exponent: object) -> None:
    if not (isinstance(base, int) and isinstance(exponent, int)) or exponent <= 0 or abs(base) <= 1:
        return  # float/complex powers overflow or finish fast; |base| <= 1 stays tiny
    if exponent > MAX_INT_BITS or exponent * math.log2(abs(base)) > MAX_INT_BITS:
        raise ResultTooLargeError("power too large refused")


def _binary(op: ast.operator, left: Any, right: Any) -> Any:
    if isinstance(op, ast.Mult):
        _check_product(left, right)
    elif isinstance(op, ast.Pow):
        _check_power(left, right)
    return _BINARY[type(op)](left, right)


def _check_node(node: ast.AST) -> None:
    """Refuse every node that is not a number literal or an allowed operation."""
    if isinstance(node, ast.Constant):
        if type(node.value) not in _LITERAL_TYPES:
            raise UnsupportedExpressionError(f"{type(node.value).__name__} literal is not allowed")
        return
    allowed = (
        isinstance(node, ast.Expression)
        or (isinstance(node, ast.BinOp) and type(node.op) in _BINARY)
        or (isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY)
        or (isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops))
        or type(node) in _BINARY
        or type(node) in _UNARY
        or type(node) in _COMPARE
    )
    if not allowed:
        raise UnsupportedExpressionError(f"{type(node).__name__} is not allowed")


def evaluate(text: str) -> Any:
    """The value Python's ``eval(text)`` would give, for arithmetic on number literals only.

    Raises :class:`UnsupportedExpressionError` for any other construct,
    :class:`ResultTooLargeError` past the integer size bound, and otherwise whatever ``eval``
    raises (``SyntaxError`` from parsing, ``ZeroDivisionError``, ``OverflowError``...).
    """
    # eval() skips leading blanks of a string source; the parser alone does not.
    tree = ast.parse(text.lstrip(" \t"), mode="eval")
    for node in ast.walk(tree):  # the whole tree is checked before anything is computed
        _check_node(node)
    # Work stack of ("eval", node) / ("apply", node, step) entries; results go on `values`.
    work: list[tuple[Any, ...]] = [("eval", tree.body)]
    values: list[Any] = []
    while work:
        entry = work.pop()
        node = entry[1]
        if entry[0] == "eval":
            _schedule(node, work, values)
        elif isinstance(node, ast.BinOp):
            right = values.pop()
            values.append(_binary(node.op, values.pop(), right))
        elif isinstance(node, ast.UnaryOp):
            values.append(_UNARY[type(node.op)](values.pop()))
        else:
            _compare_step(node, entry[2], work, values)
    return values.pop()


def _schedule(node: ast.AST, work: list[tuple[Any, ...]], values: list[Any]) -> None:
    """Push a checked node's value (literal) or the steps that compute it, left operand first."""
    if isinstance(node, ast.Constant):
        values.append(node.value)
    elif isinstance(node, ast.BinOp):
        work += [("apply", node), ("eval", node.right), ("eval", node.left)]
    elif isinstance(node, ast.UnaryOp):
        work += [("apply", node), ("eval", node.operand)]
    else:
        compare = cast(ast.Compare, node)
        work += [("apply", compare, 0), ("eval", compare.comparators[0]), ("eval", compare.left)]


def _compare_step(
    node: ast.Compare, step: int, work: list[tuple[Any, ...]], values: list[Any]
) -> None:
    """One link of a comparison chain; like Python, stop at the first false link."""
    right = values.pop()
    left = values.pop()
    outcome = _COMPARE[type(node.ops[step])](left, right)
    if step + 1 == len(node.ops) or not outcome:
        values.append(outcome)
        return
    values.append(right)
    work += [("apply", node, step + 1), ("eval", node.comparators[step + 1])]
