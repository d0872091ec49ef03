"""MathVision safety: no code runs from model output, the arithmetic evaluator matches Python,
and hostile outputs finish (or become a recorded error) under the per-sample budget."""

from __future__ import annotations

import ast
import builtins
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from datbench_cli.metrics import safe_arith
from datbench_cli.metrics.safe_arith import (
    MAX_INT_BITS,
    ResultTooLargeError,
    UnsupportedExpressionError,
    evaluate,
)
from datbench_cli.runtime.budget import SampleTimeout
from datbench_cli.scorers import mathvision
from tests.hostile import score_hostile
from tests.vectors import DATA, load_lines

GLOBAL_FLAG = "DATBENCH_MATHVISION_PWNED"


def python_outcome(text: str) -> tuple[str, object]:
    """What Python itself gives for a trusted test expression: ("value", v) or ("error", name)."""
    try:
        return "value", eval(text, {"__builtins__": {}})  # noqa: S307 - constant test input
    except Exception as exc:  # noqa: BLE001
        return "error", type(exc).__name__


def safe_outcome(text: str) -> tuple[str, object]:
    try:
        return "value", evaluate(text)
    except Exception as exc:  # noqa: BLE001
        return "error", type(exc).__name__


class SafeArithMatchesPythonTests(unittest.TestCase):
    """Accepted expressions give Python's value (and type) or Python's exception."""

    EXPRESSIONS = (
        "1",
        "-7",
        "1/2",
        "-1/2",
        "7/2",
        "2**10",
        "2**(-2)",
        "2*3*4",
        "1/6 + 1/3",
        "-2 + 1",
        "(1 + 2)*3",
        "-1*2**2",
        "(-2)**2",
        "(1/2)**2",
        "(-8)**(1/3)",
        "1/0",
        "0**(-1)",
        "1 < 2",
        "2 <= 1",
        "(1 < 2) < 3",
        "(3 > 2) > 1",
        "1 < 2 < 3",
        "1 > 2 < 1/0",
        "3 > 2 < 1/0",
        "True*2",
        "1.5e3",
        "1e999",
        "2.0**(10**10)",
        "0.5**(10**10)",
        "(-1)**(10**100)",
        "1**(10**100)",
        "2**99990",
        "10**(-400)",
        "1_000",
        "+5",
        " 1 + 1",
        "2 ** -1",
        "1 +",
        "",
    )

    def test_listed_expressions(self) -> None:
        for text in self.EXPRESSIONS:
            with self.subTest(text=text):
                expected = python_outcome(text)
                actual = safe_outcome(text)
                self.assertEqual(actual, expected)
                if expected[0] == "value":
                    self.assertIs(type(actual[1]), type(expected[1]))

    def test_deep_chain_beyond_python_recursion_limit(self) -> None:
        text = "1+" * 2000 + "1"
        self.assertEqual(evaluate(text), 2001)
        self.assertEqual(evaluate("-" * 2000 + "1"), 1)

    @settings(max_examples=300, deadline=None)
    @given(st.data())
    def test_random_arithmetic(self, data: st.DataObject) -> None:
        numbers = st.one_of(
            st.integers(-50, 50).map(str),
            st.sampled_from(["0.5", "2.25", "1e3", "True", "False", "0"]),
        )
        ops = st.sampled_from([" + ", " - ", "*", "/", "**", " < ", " <= ", " > ", " >= "])
        parts = [data.draw(numbers)]
        for _ in range(data.draw(st.integers(0, 4))):
            operator_text = data.draw(ops)
            operand = data.draw(numbers)
            if operator_text == "**":
                operand = f"({data.draw(st.integers(-3, 3))})"
            if data.draw(st.booleans()):
                parts = ["(", *parts, ")"]
            parts += [operator_text, operand]
        if data.draw(st.booleans()):
            parts.insert(0, "-")
        text = "".join(parts)
        self.assertEqual(safe_outcome(text), python_outcome(text), text)


class SafeArithRefusesTests(unittest.TestCase):
    """Anything beyond number literals and arithmetic is refused before anything runs."""

    REFUSED = (
        "x",
        "E",
        "oo",
        "sqrt(2)",
        "abs(-2)",
        "__import__('os')",
        "(1).real",
        "().__class__",
        "[1, 2]",
        "[1, 2][0]",
        "(1, 2)",
        "{1: 2}",
        "{1, 2}",
        "'a'",
        "b'a'",
        "f'{1}'",
        "None",
        "...",
        "lambda: 1",
        "[i for i in ()]",
        "(i for i in ())",
        "{i for i in ()}",
        "{i: i for i in ()}",
        "(y := 1)",
        "1 if 1 else 2",
        "1 and 2",
        "not 1",
        "~1",
        "1 // 2",
        "1 % 2",
        "1 << 2",
        "1 & 2",
        "1 @ 2",
        "1 == 1",
        "1 != 2",
        "1 in ()",
        "1 is 1",
        "1/0 + x",
    )

    def test_refused_constructs(self) -> None:
        for text in self.REFUSED:
            with self.subTest(text=text):
                with self.assertRaises(UnsupportedExpressionError):
                    evaluate(text)

    def test_huge_integer_results_are_refused(self) -> None:
        for text in ("10**10**10", "2**(2**64)", "3**70000", "2**99999*2**99999"):
            with self.subTest(text=text):
                with self.assertRaises(ResultTooLargeError):
                    evaluate(text)

    def test_bound_leaves_large_realistic_values(self) -> None:
        self.assertEqual(evaluate(f"2**{MAX_INT_BITS - 10}"), 2 ** (MAX_INT_BITS - 10))
        self.assertEqual(evaluate("123456789**100"), 123456789**100)


def _sample(answer: str) -> dict[str, object]:
    return {"question_id": "q", "question": "", "answer": answer, "all_answers": [answer]}


class NoCodeRunsTests(unittest.TestCase):
    """Text that Python's eval would run as code is scored wrong, and nothing runs."""

    def setUp(self) -> None:
        self.workdir = Path(tempfile.mkdtemp())
        self.marker = self.workdir / "marker"
        self.addCleanup(lambda: hasattr(builtins, GLOBAL_FLAG) and delattr(builtins, GLOBAL_FLAG))

    def payloads(self) -> list[str]:
        target = str(self.marker)
        return [
            f"__import__('pathlib').Path({target!r}).touch()",
            f"open({target!r}, 'w').close()",
            f"(lambda: __import__('pathlib').Path({target!r}).write_text('x'))()",
            f"__import__('builtins').__dict__.update({GLOBAL_FLAG}=True)",
            "().__class__.__base__.__subclasses__()",
        ]

    def assert_nothing_ran(self) -> None:
        self.assertFalse(self.marker.exists(), "payload created its file")
        self.assertFalse(hasattr(builtins, GLOBAL_FLAG), "payload set a global")

    def test_converter_output_with_code_is_wrong_and_inert(self) -> None:
        import sympy

        # mock.patch imports latex2sympy2, which needs the scorer's shim on Python 3.12+.
        mathvision._typing_io_shim()

        for payload in self.payloads():
            # The payload is real Python: only the evaluator's policy stops it.
            self.assertIsInstance(ast.parse(payload, mode="eval"), ast.Expression)

            def converter(text: str, _payload: str = payload) -> object:
                return sympy.Symbol(_payload)

            # Inputs the parser must see (plain numerals take a fast path that never calls it).
            with self.subTest(payload=payload), mock.patch("latex2sympy2.latex2sympy", converter):
                details = mathvision.score_sample(_sample("7"), "\\boxed{\\frac{16}{2}}")
                self.assertEqual(details["score"], 0.0)
                self.assertFalse(mathvision.is_equal("(\\frac{1}{1},2)", "(\\frac{3}{1},4)"))
                self.assert_nothing_ran()

    def test_code_written_in_the_output_is_wrong_and_inert(self) -> None:
        for payload in self.payloads():
            for output in (payload, f"\\boxed{{{payload}}}", f"The answer is {payload}"):
                with self.subTest(output=output):
                    details = mathvision.score_sample(_sample("5"), output)
                    self.assertEqual(details["score"], 0.0)
                    self.assert_nothing_ran()

    def test_evaluator_refuses_payloads_directly(self) -> None:
        for payload in self.payloads():
            with self.subTest(payload=payload):
                with self.assertRaises(UnsupportedExpressionError):
                    safe_arith.evaluate(payload)
                self.assert_nothing_ran()


class NeverSwallowedTests(unittest.TestCase):
    """The reference's blanket except must not hide a spent budget or a broken install."""

    def test_sample_timeout_propagates(self) -> None:
        def converter(text: str) -> object:
            raise SampleTimeout("budget spent")

        # mock.patch imports latex2sympy2: on Python 3.12+ its ANTLR runtime needs the shim the
        # scorer installs first (a worker that has not scored MathVision yet has none).
        mathvision._typing_io_shim()
        # Inputs the parser must see (plain numerals take a fast path that never calls it).
        with mock.patch("latex2sympy2.latex2sympy", converter):
            with self.assertRaises(SampleTimeout):
                mathvision.is_equal("\\frac{7}{1}", "\\frac{8}{1}")
            with self.assertRaises(SampleTimeout):
                mathvision.is_equal("(\\frac{1}{1},2)", "(\\frac{3}{1},4)")

    def test_missing_latex2sympy_propagates(self) -> None:
        with mock.patch.dict("sys.modules", {"latex2sympy2": None}):
            with self.assertRaises(ImportError):
                mathvision.is_equal("\\frac{7}{1}", "\\frac{8}{1}")


class HostileOutputTests(unittest.TestCase):
    """Hostile outputs finish, scored or recorded as a scorer error, under a 10 s budget."""

    MB = 1_000_000

    def run_output(self, output: str) -> tuple[float, dict[str, object]]:
        line = next(
            line for line in load_lines(DATA / "mathvision.jsonl") if line["row"]["answer"] == "12"
        )
        result = score_hostile(dict(line["row"], image=None), line["capability"], output)
        return result.score, result.metadata["score_details"]

    def assert_finished(self, output: str) -> None:
        score, details = self.run_output(output)
        if "error" in details:
            self.assertEqual(score, 0.0)
            self.assertIsInstance(details["error"]["type"], str)
        else:
            self.assertIn(details["score"], (0.0, 1.0))
            self.assertEqual(details["score"], score)

    def test_one_megabyte_outputs(self) -> None:
        outputs = {
            "backslash run": "\\" * self.MB,
            "unclosed boxes": "\\boxed{" * (self.MB // 7),
        }
        for name, output in outputs.items():
            with self.subTest(name=name):
                self.assert_finished(output)

    def test_a_long_boxed_sum_finishes(self) -> None:
        # A boxed sum of more terms than the recursion limit ends in latex2sympy's RecursionError
        # (one convert_add frame per operator) after a parse of tens of seconds (5,000 terms:
        # ~20 s); the fast path gives that outcome at once. The default 10 s budget fails the
        # parse (a 1 s budget failed the fast path itself on a loaded CI machine, 500,000 terms).
        for terms in (5_000, self.MB // 2):
            with self.subTest(terms=terms):
                output = "\\boxed{" + "1+" * terms + "1}"
                line = next(
                    line
                    for line in load_lines(DATA / "mathvision.jsonl")
                    if line["row"]["answer"] == "12"
                )
                row = dict(line["row"], image=None)
                result = score_hostile(row, line["capability"], output)
                self.assertEqual(result.score, 0.0)
                self.assertNotIn("error", result.metadata["score_details"])

    def test_pathological_exponents(self) -> None:
        for output in (
            "\\boxed{10^{10^{10}}}",
            "\\boxed{2^{2^{2^{2^{2^{2}}}}}}",
            "(10^{10^{10}},1)",
            "\\boxed{" + "\\times".join(["2^{99999}"] * 50) + "}",
        ):
            with self.subTest(output=output):
                score, details = self.run_output(output)
                self.assertEqual(score, 0.0)
                self.assertNotIn("error", details)  # refused by the bound, not by the budget


if __name__ == "__main__":
    unittest.main()
