"""MathVision's fast paths and memo give exactly what the parser gives.

Every expectation here is computed by the slow path itself (``evaluate(str(latex2sympy(t)))``
with the reference's recursion room), on generated inputs: numerals, letters, integer chains
short and longer than the recursion limit, whole long outputs scored with and without the fast
paths, and a sequence of texts (some of which change latex2sympy's module state) parsed with and
without the memo.
"""

from __future__ import annotations

import contextlib
import random
import sys
import unittest
from collections.abc import Iterator
from typing import Any
from unittest import mock

from datbench_cli.metrics.safe_arith import evaluate
from datbench_cli.runtime.stack import call_with_reference_headroom
from datbench_cli.scorers import mathvision


def _parser_outcome(text: str) -> tuple[Any, ...]:
    """The parser's own outcome: ("value", type, value) or ("error",)."""
    mathvision._typing_io_shim()
    from latex2sympy2 import latex2sympy

    def run() -> Any:
        return evaluate(str(latex2sympy(text)))

    try:
        value = call_with_reference_headroom(run)
    except Exception:  # noqa: BLE001 - every caller treats any failure alike
        return ("error",)
    return ("value", type(value), value)


def _fast_outcome(text: str) -> tuple[Any, ...]:
    try:
        value = call_with_reference_headroom(mathvision._known_number, text)
    except mathvision._NotANumber:
        return ("error",)
    if value is mathvision._UNKNOWN:
        raise AssertionError(f"{text[:40]!r} did not take a fast path")
    return ("value", type(value), value)


def _numerals(rng: random.Random) -> list[str]:
    digits = "0123456789"
    texts = ["0", "00", "5", "007", "0.5", "0.10", "5.0", "12.50", "3.14", "999999999999999"]
    for _ in range(300):
        whole = "".join(rng.choice(digits) for _ in range(rng.randint(1, 15)))
        if rng.random() < 0.5:
            whole += "." + "".join(rng.choice(digits) for _ in range(rng.randint(1, 15)))
        texts.append(whole)
    return texts


def _chains(rng: random.Random, terms: int, count: int) -> list[str]:
    texts = []
    for _ in range(count):
        parts = [str(rng.randint(0, 10 ** rng.randint(1, 6)))]
        for _ in range(terms - 1):
            parts.append(rng.choice("+-") + str(rng.randint(0, 999)).zfill(rng.randint(1, 4)))
        texts.append("".join(parts))
    return texts


class FastPathsAreTheParsersTests(unittest.TestCase):
    def assert_same(self, texts: list[str]) -> None:
        for text in texts:
            with self.subTest(text=text[:60]):
                self.assertEqual(_fast_outcome(text), _parser_outcome(text))

    def test_numerals(self) -> None:
        self.assert_same(_numerals(random.Random(19)))

    def test_every_ascii_letter(self) -> None:
        letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
        self.assert_same(letters + [c.upper() for c in letters])

    def test_short_integer_chains(self) -> None:
        rng = random.Random(7)
        texts = ["1+1", "5-3", "0-0", "007+1", "1-2-3", "10-20+30"]
        for terms in (2, 3, 10, 50, mathvision._SHORT_CHAIN + 1):
            texts += _chains(rng, terms, 5 if terms < 50 else 2)
        self.assert_same(texts)

    def test_a_chain_longer_than_the_recursion_limit(self) -> None:
        # The parser needs seconds here (one convert_add frame per operator, then
        # RecursionError); the fast path says so without parsing.
        terms = sys.getrecursionlimit() + 50
        self.assert_same(["1" + "+1" * terms, "9" + "-2+3" * (terms // 2)])

    def test_other_texts_go_to_the_parser(self) -> None:
        for text in ("\\frac{1}{2}", "1,5", "-5", "1.", ".5", "1+", "ab", "1e3", "(1)", "１"):
            with self.subTest(text=text):
                self.assertIs(mathvision._known_number(text), mathvision._UNKNOWN)


def _long_outputs(rng: random.Random) -> list[tuple[str, list[str], str]]:
    """(gold, options, output) triples: long outputs of the shapes models produce."""
    loops = (
        "Let me count the squares again. There are 4 in the top row, so ",
        "Wait, 2 + 2 is 4. But ",
        "12345 ",
        "Step 1: compute.\nStep 2: compute again.\n",
        "\\frac{1}{2} \\cdot ",
    )
    cases: list[tuple[str, list[str], str]] = []
    for loop in loops:
        for size in (300, 2_000):
            output = (loop * (size // len(loop) + 1))[:size]
            cases.append(("12", [], output))
            cases.append(("B", ["3", "12", "5"], output))
    for terms in (3, 40, 250):
        body = "+".join(["1"] * terms)
        cases.append((str(terms), [], f"So the total is \\boxed{{{body}}}"))
        cases.append(("12", [], f"\\boxed{{{body}}} " * 3))
    for text in _numerals(rng)[:40]:
        cases.append((rng.choice([text, "12", "0.5", "A"]), ["0.5", "12"], f"\\boxed{{{text}}}"))
    for letter in "abcdeABCDExyz":
        cases.append((rng.choice("ABCDE"), ["1", "2", "3", "4", "5"], f"The answer is {letter}"))
    return cases


class WholeOutputsTests(unittest.TestCase):
    def test_scores_and_details_equal_the_slow_path(self) -> None:
        for gold, options, output in _long_outputs(random.Random(3)):
            sample = {"answer": gold, "options": options}
            with self.subTest(gold=gold, output=output[:50]):
                fast = call_with_reference_headroom(mathvision.score_sample, sample, output)
                with (
                    mock.patch.object(mathvision, "_known_number", lambda t: mathvision._UNKNOWN),
                    mock.patch.object(mathvision, "_MEMO_ENTRIES", 0),
                    mock.patch.dict(mathvision._MEMO, clear=True),
                ):
                    slow = call_with_reference_headroom(mathvision.score_sample, sample, output)
                self.assertEqual(fast, slow)


class MemoTests(unittest.TestCase):
    def setUp(self) -> None:
        # On Python 3.12+ latex2sympy2's ANTLR runtime needs the shim the scorer installs before
        # its own import (a worker that has scored no MathVision sample yet has none).
        mathvision._typing_io_shim()
        import latex2sympy2

        self.module = latex2sympy2
        saved = (latex2sympy2.variances, latex2sympy2.var)
        self.addCleanup(self.restore, *saved)
        self.addCleanup(mathvision._MEMO.clear)
        self.reset_state()
        mathvision._MEMO.clear()

    def reset_state(self) -> None:
        self.module.variances, self.module.var = {}, {}

    def restore(self, variances: Any, var: Any) -> None:
        self.module.variances, self.module.var = variances, var

    def outcome(self, text: str) -> tuple[Any, ...]:
        try:
            value = call_with_reference_headroom(mathvision._latex_number, text)
        except Exception:  # noqa: BLE001
            return ("error",)
        return ("value", type(value), value)

    @contextlib.contextmanager
    def counting_parses(self) -> Iterator[list[str]]:
        """Every text the real parser is called with, in order."""
        calls: list[str] = []
        real = self.module.latex2sympy

        def counting(text: str, *args: Any) -> Any:
            calls.append(text)
            return real(text, *args)

        with mock.patch.object(self.module, "latex2sympy", counting):
            yield calls

    def test_a_repeated_text_is_parsed_once(self) -> None:
        with self.counting_parses() as calls:
            for _ in range(3):
                self.assertEqual(self.outcome("\\frac{3}{4}"), ("value", float, 0.75))
                self.assertEqual(self.outcome("\\frac{x}{y}"), ("error",))
        self.assertEqual(calls, ["\\frac{3}{4}", "\\frac{x}{y}"])

    def test_the_memo_works_in_the_state_the_import_leaves(self) -> None:
        # latex2sympy's import fills variances/var (i, j, identity matrices): that state, not
        # only an empty one, is the one a scoring process parses in.
        import sympy

        i = sympy.Symbol("i")
        self.module.variances, self.module.var = {i: sympy.I}, {"i": sympy.I}
        mathvision._MEMO.clear()
        with self.counting_parses() as calls:
            for _ in range(3):
                self.assertEqual(self.outcome("\\frac{3}{4}"), ("value", float, 0.75))
            self.module.var["x"] = sympy.Integer(1)  # a changed state: parsed again
            self.assertEqual(self.outcome("\\frac{3}{4}"), ("value", float, 0.75))
        self.assertEqual(calls, ["\\frac{3}{4}", "\\frac{3}{4}"])

    def test_memo_gives_what_fresh_parses_give_across_state_changes(self) -> None:
        plain = ["\\frac{1}{2}", "x", "2x", "x:=3", "x", "\\frac{1}{2}", "2x", "\\sqrt{4}"]
        # A bare differential rebinds latex2sympy's `var` to a Symbol: from then on every
        # letter atom fails to convert, so nothing computed before may be reused.
        differential = ["\\frac{3}{4}", "y", "2y", "dx", "y", "\\frac{3}{4}", "2y"]
        for texts in (plain, differential):
            with self.subTest(texts=texts):
                self.reset_state()
                mathvision._MEMO.clear()
                memoised = [self.outcome(text) for text in texts]
                self.assertEqual(mathvision._stateless(self.module), texts is plain)
                self.reset_state()
                with mock.patch.object(mathvision, "_MEMO_ENTRIES", 0):
                    fresh = []
                    for text in texts:
                        mathvision._MEMO.clear()
                        fresh.append(self.outcome(text))
                self.assertEqual(memoised, fresh)


if __name__ == "__main__":
    unittest.main()
