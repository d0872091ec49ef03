"""The ``calculator`` tool: arithmetic on numbers, parsed with :mod:`ast`, never ``eval``.

The official tool's grammar: number literals; ``+ - * / % **``; unary minus; the one-argument
functions ``sqrt sin cos tan log exp``. Anything else is an error result (the model sees it),
with the official result shape. Integer products and powers are size-checked first (as in
``metrics.safe_arith``), so ``9**9**9**9`` is refused instead of hanging; the text is capped.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

from datbench_cli.metrics.safe_arith import MAX_INT_BITS, ResultTooLargeError

MAX_EXPRESSION_CHARS = 10_000
_MAX_DEPTH = 200

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_FUNCTIONS: dict[str, Callable[[Any], Any]] = {
    "sqrt": math.sqrt,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "log": math.log,
    "exp": math.exp,
}


def _bits(value: Any) -> int:
    return abs(value).bit_length() if isinstance(value, int) else 0


def _guard(op: type[ast.operator], left: Any, right: Any) -> None:
    if not (isinstance(left, int) and isinstance(right, int)):
        return
    if op is ast.Mult and _bits(left) + _bits(right) > MAX_INT_BITS:
        raise ResultTooLargeError("the product is too large")
    if op is ast.Pow and right > 0 and abs(left) > 1:
        if right > MAX_INT_BITS or right * math.log2(abs(left)) > MAX_INT_BITS:
            raise ResultTooLargeError("the power is too large")


def _evaluate(node: ast.AST, depth: int = 0) -> Any:
    if depth > _MAX_DEPTH:
        raise ValueError("the expression is nested too deeply")
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, complex):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left, depth + 1), _evaluate(node.right, depth + 1)
        _guard(type(node.op), left, right)
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand, depth + 1)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        function = _FUNCTIONS.get(node.func.id)
        if function is None:
            raise ValueError(f"Function {node.func.id} not allowed.")
        if len(node.args) != 1 or node.keywords:
            raise ValueError("Only one argument permitted.")
        return function(_evaluate(node.args[0], depth + 1))
    raise ValueError("Unsupported expression element.")


def calculate(expression: Any) -> dict[str, str]:
    """The calculator's result object (the official keys)."""
    try:
        if not isinstance(expression, str):
            raise ValueError("the expression must be a string")
        if len(expression) > MAX_EXPRESSION_CHARS:
            raise ValueError(f"the expression is longer than {MAX_EXPRESSION_CHARS} characters")
        result = _evaluate(ast.parse(expression, mode="eval").body)
        text = str(result)
    except (
        ArithmeticError,
        ValueError,
        TypeError,
        SyntaxError,
        MemoryError,
        RecursionError,
    ) as exc:
        return {
            "result": "Error",
            "expression": str(expression)[:200],
            "status": "error",
            "error": str(exc),
        }
    return {"result": text, "expression": expression, "status": "success"}
