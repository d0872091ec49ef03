"""Texts declared "not a number" without parsing are exactly the parser's failures.

For every generated text the shortcut accepts, the real ``latex2sympy`` (with the reference's
recursion room) must fail to give a number, and must leave latex2sympy's module state as the
shortcut leaves it. The texts are the shapes a model writes at its token limit: repetition loops
of words, parentheses, braces, ``\\frac``, numbers and operators, unbalanced, cut mid-period,
starting mid-period; plus mutations that put barred characters in (those must be declined).
"""

from __future__ import annotations

import random
import unittest
from typing import Any
from unittest import mock

from datbench_cli.metrics.safe_arith import evaluate
from datbench_cli.runtime.stack import call_with_reference_headroom
from datbench_cli.scorers import mathvision
from datbench_cli.scorers.mathvision_nonnumbers import provably_not_a_number, settle_state

WORDS = ("the", "area", "is", "times", "minus", "which", "so", "we", "get", "total", "x", "y")
WORDS += ("count", "again", "there", "are", "in", "top", "row", "i", "j", "t", "s", "n", "a")
PIECES = ("3", "12", "1,000", "0.5", "7", "+", "-", "*", "/", "^", "^{2}", "_1", "_{n}", "!")
PIECES += ("'", ",", ";", ":", ".", "(", ")", "[", "]", "{", "}", "{}", "<", ">", "?", "%")
PIECES += ("\\frac{1}{2}", "\\frac{x}{", "}{3}", "\\times", "\\cdot", "\\div", "\\sqrt{2}")
PIECES += ("\\sqrt[3]{8}", "\\pi", "\\infty", "(3+4)", "{x}", "(1+1)", "[2]", "^T", "°", "×")
# Each of these makes the shortcut decline (or, for "e"/digits first, not apply).
BARRED = ("=", "dx", "d\\alpha", "|", " ", "\t", "\\exp", "\\in", "\\binom{2}{1}", "$", "~")
BARRED += ("\\mathrm{d}", "(a)_{b}", "\\left(", "\\\\", "\\operatorname{rank}")


def loop_texts(rng: random.Random, count: int, longest: int) -> list[str]:
    """Repetition loops: a random period repeated, cut at a random length and start."""
    texts = []
    for _ in range(count):
        period = "".join(
            rng.choice(WORDS) if rng.random() < 0.5 else rng.choice(PIECES)
            for _ in range(rng.randint(1, 8))
        )
        lead = rng.choice(("", "", "(", "{", "[", "-", "+(", "{[", "(-", "e", "each", "(e", "e^"))
        start = rng.randrange(len(period))
        size = rng.randint(1, longest)
        texts.append(lead + (period * (size // len(period) + 2))[start : start + size])
    return texts


def mutated(rng: random.Random, texts: list[str]) -> list[str]:
    out = []
    for text in texts:
        at = rng.randrange(len(text) + 1)
        out.append(text[:at] + rng.choice(BARRED) + text[at:])
    return out


def _module() -> Any:
    mathvision._typing_io_shim()
    import latex2sympy2

    return latex2sympy2


def _state(module: Any) -> tuple[Any, ...]:
    return (
        type(module.var),
        dict(module.var) if isinstance(module.var, dict) else module.var,
        dict(module.variances),
        module.frac_type,
        module.VARIABLE_VALUES,
    )


def parser_gives_a_number(module: Any, text: str) -> bool:
    def run() -> Any:
        return evaluate(str(module.latex2sympy(text)))

    try:
        call_with_reference_headroom(run)
    except Exception:  # noqa: BLE001 - any failure is "not a number" for every caller
        return False
    return True


class ShortcutIsTheParsersFailureTests(unittest.TestCase):
    def setUp(self) -> None:
        import sympy

        self.module = _module()
        for name in ("frac_type", "VARIABLE_VALUES", "variances", "var"):
            self.addCleanup(setattr, self.module, name, getattr(self.module, name))
        # The state latex2sympy's import leaves, as far as letter atoms see it (an earlier test
        # in this process may have converted a differential, which rebinds var to a Symbol).
        i, j = sympy.Symbol("i"), sympy.Symbol("j")
        self.module.variances = {i: sympy.I, j: sympy.I}
        self.module.var = {"i": sympy.I, "j": sympy.I, "\\bm{I}_1": sympy.eye(1).as_mutable()}

    def check(self, texts: list[str]) -> int:
        """Assert the shortcut's soundness on ``texts``; return how many it accepted."""
        accepted = 0
        for text in texts:
            if not provably_not_a_number(text, self.module):
                continue
            accepted += 1
            with self.subTest(text=text[:80]):
                self.module.frac_type = "<before>"
                before = _state(self.module)
                self.assertFalse(parser_gives_a_number(self.module, text))
                after_parser = _state(self.module)
                self.module.frac_type = "<before>"
                settle_state(text, self.module)
                self.assertEqual(_state(self.module), after_parser)
                self.assertEqual(after_parser[:3], before[:3])
        return accepted

    def test_repetition_loops(self) -> None:
        texts = loop_texts(random.Random(19), 200, 160)  # each accepted loop is parsed in full
        accepted = self.check(texts)
        self.assertGreater(accepted, 60)  # the shortcut applies to a good share of loops

    def test_long_loops_of_the_bench_shapes(self) -> None:
        periods = ("theareais(3+4)times2minus(1+1),which", "{x}", "{x}{", "x\\frac{1}{2}")
        periods += ("(a+b)(", "t^{2}+3t-", "[x,y],", "-(s)!", "eachrowhas(3+4)squares,", "e!(2)")
        texts = [(period * 40)[:cut] for period in periods for cut in (17, 150, 400, 401, 403)]
        self.assertEqual(self.check(texts), len(texts))

    def test_barred_characters_are_declined(self) -> None:
        rng = random.Random(5)
        base = [
            text for text in loop_texts(rng, 300, 80) if provably_not_a_number(text, self.module)
        ]
        for text in mutated(rng, base):
            with self.subTest(text=text[:80]):
                barred = [piece for piece in BARRED if piece in text]
                self.assertTrue(barred)
                self.assertFalse(provably_not_a_number(text, self.module))

    def test_other_first_tokens_are_declined(self) -> None:
        for text in (
            "3x(1+1)",
            "e^{0}x",
            "e^2",
            "E",
            "(2)x",
            "\\frac{x}{1}",
            "tr(x)",
            "diag",
            "-5x",
        ):
            with self.subTest(text=text):
                self.assertFalse(provably_not_a_number(text, self.module))

    def test_differentials_once_var_is_a_symbol(self) -> None:
        # After a converted differential (any English "and the" does it), var is a Symbol and
        # stays one; further differentials only rebind it to another Symbol.
        import sympy

        saved = self.module.var
        self.addCleanup(setattr, self.module, "var", saved)
        rng = random.Random(23)
        words = ("and", "add", "divided", "dx", "red", "d", "need", "d\\frac{1}{2}")
        texts = [
            rng.choice(("and", "x", "(t", "{s")) + text.replace("the", rng.choice(words))
            for text in loop_texts(rng, 70, 80)
        ]
        self.module.var = sympy.Symbol("q")
        self.assertFalse(provably_not_a_number("dx(1+1)", self.module))  # first token
        accepted = 0
        for text in texts:
            self.module.var = sympy.Symbol("q")
            if not provably_not_a_number(text, self.module):
                continue
            accepted += 1
            with self.subTest(text=text[:80]):
                variances = dict(self.module.variances)
                self.assertFalse(parser_gives_a_number(self.module, text))
                self.assertIs(type(self.module.var), sympy.Symbol)
                self.assertEqual(self.module.variances, variances)
        self.assertGreater(accepted, 15)
        self.module.var = saved
        self.assertFalse(provably_not_a_number("andthe(1+1)", self.module))

    def test_a_changed_module_state_is_left_to_the_parser(self) -> None:
        import sympy

        saved = self.module.var
        self.addCleanup(setattr, self.module, "var", saved)
        self.module.var = dict(saved, x=sympy.Matrix([[1]]))
        self.assertFalse(provably_not_a_number("x(1+1)", self.module))
        self.module.var = [sympy.Symbol("x")]
        self.assertFalse(provably_not_a_number("x(1+1)", self.module))
        self.module.var = saved
        self.assertTrue(provably_not_a_number("x(1+1)", self.module))


class WholeOutputsTests(unittest.TestCase):
    def test_scores_and_details_equal_the_parsers(self) -> None:
        rng = random.Random(11)
        outputs = loop_texts(rng, 30, 200)
        outputs += [
            ("The area is (3 + 4) times 2 minus (1 + 1), which " * 8)[:300],
            ("{x} " * 80)[:300],
            ("So \\frac{1}{2} of x, " * 20)[:250],
        ]
        for output in outputs:
            for gold, options in (("12", []), ("B", ["3", "x", "5"])):
                sample = {"answer": gold, "options": options}
                with self.subTest(output=output[:60], gold=gold):
                    fast = call_with_reference_headroom(mathvision.score_sample, sample, output)
                    with mock.patch.object(mathvision, "settled_not_a_number", lambda *a: False):
                        slow = call_with_reference_headroom(mathvision.score_sample, sample, output)
                    self.assertEqual(fast, slow)

    def test_the_bench_outputs_are_not_parsed(self) -> None:
        module = _module()
        outputs = [
            ("The area is (3 + 4) times 2 minus (1 + 1), which " * 200)[:8192],
            ("{x} " * 2048)[:8192],
        ]
        with mock.patch.object(module.PSParser, "math", side_effect=AssertionError("parsed")):
            for output in outputs:
                details = mathvision.score_sample({"answer": "12", "options": []}, output)
                self.assertEqual(details["score"], 0.0)


if __name__ == "__main__":
    unittest.main()
