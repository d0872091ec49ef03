r"""Each ``\boxed{}`` finder of ``text/boxed.py`` against the reference regex it reproduces."""

from __future__ import annotations

import random
import re
import unittest

from hypothesis import given, settings
from hypothesis import strategies as st

import tests.hypothesis_profiles  # noqa: F401 - selects the profile
from datbench_cli.text import boxed

ERMA_RE = re.compile(r"\\+boxed\{([^}]+)\}")  # erma_utils (final-answer extraction)
FINDALL_RE = re.compile(r"\\+boxed\{([^}]*)\}")  # pixmo_points_eval, refcoco
DOC_PARSING_RE = re.compile(r"\\boxed\{(.*)\}", re.DOTALL)  # cc_ocr_doc_parsing
MATHVISION_RE = re.compile(r"\\+boxed\{(.*)\}", re.S)  # mathvision find_math_answer
LETTER_RE = re.compile(r"\\+boxed\{\s*([A-E])\s*\}")  # mathvista multiple choice

TOKENS = ("\\", "\\\\", "boxed{", "\\boxed{", "\\\\boxed{", "boxed", "{", "}", "{}", "x", " ")
TOKENS += ("\n", "B", "b", "F", " \t", "1, 2")
BOXED_TEXTS = st.lists(st.sampled_from(TOKENS), max_size=14).map("".join)


def last_group(pattern: re.Pattern[str], text: str) -> str | None:
    found = None
    for found in pattern.finditer(text):  # noqa: B007
        pass
    return None if found is None else found.group(1)


def search_group(pattern: re.Pattern[str], text: str) -> str | None:
    found = pattern.search(text)
    return None if found is None else found.group(1)


def naive_balanced(text: str) -> str | None:
    """The reference's KIE loop, character by character."""
    start = text.find("\\boxed{")
    if start == -1:
        return None
    depth = 1
    for index in range(start + 7, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return text[start + 7 : index]
    return None


class BoxedFinderEquivalenceTests(unittest.TestCase):
    @settings(max_examples=400)
    @given(BOXED_TEXTS)
    def test_every_finder_equals_its_regex(self, text: str) -> None:
        self.assertEqual(boxed.last_boxed(text), last_group(ERMA_RE, text))
        self.assertEqual(boxed.all_boxed(text), FINDALL_RE.findall(text))
        self.assertEqual(boxed.greedy_boxed(text), search_group(DOC_PARSING_RE, text))
        matches = MATHVISION_RE.findall(text)
        self.assertEqual(boxed.greedy_boxed(text), matches[-1] if matches else None)
        self.assertEqual(boxed.balanced_boxed(text), naive_balanced(text))
        self.assertEqual(boxed.boxed_letter(text), search_group(LETTER_RE, text))

    def test_random_texts(self) -> None:
        rng = random.Random(1234)
        mismatches = []
        for _ in range(5000):
            text = "".join(rng.choice(TOKENS) for _ in range(rng.randint(0, 20)))
            if boxed.last_boxed(text) != last_group(ERMA_RE, text):
                mismatches.append(("last_boxed", text))
            if boxed.boxed_letter(text) != search_group(LETTER_RE, text):
                mismatches.append(("boxed_letter", text))
        self.assertEqual(mismatches[:5], [])

    def test_worked_examples(self) -> None:
        self.assertEqual(boxed.last_boxed("\\boxed{\\frac{1}{2}}"), "\\frac{1")
        self.assertEqual(boxed.last_boxed("\\boxed{a} \\boxed{} x"), "a")
        self.assertEqual(boxed.all_boxed("\\boxed{} \\\\boxed{1, 2}"), ["", "1, 2"])
        self.assertEqual(boxed.greedy_boxed("\\boxed{a} b}"), "a} b")
        self.assertEqual(boxed.balanced_boxed("\\boxed{{a}} b}"), "{a}")
        self.assertIsNone(boxed.balanced_boxed("\\boxed{{a}"))
        self.assertEqual(boxed.boxed_letter("\\boxed{x} \\boxed{ C }"), "C")
        self.assertIsNone(boxed.boxed_letter("\\boxed{c}"))

    def test_non_strings_raise_like_re(self) -> None:
        for finder in (boxed.all_boxed, boxed.boxed_letter):
            with self.assertRaisesRegex(TypeError, "expected string or bytes-like object"):
                finder(5)  # type: ignore[arg-type]

    def test_hostile_inputs_finish(self) -> None:
        # Each regex above backtracks quadratically on these (minutes at this size).
        backslashes = "\\" * 300_000
        self.assertIsNone(boxed.last_boxed(backslashes + "boxed"))
        self.assertEqual(boxed.all_boxed("\\boxed{" * 100_000), [])
        self.assertIsNone(boxed.greedy_boxed("\\boxed{" * 100_000))
        self.assertIsNone(boxed.boxed_letter(backslashes + "boxed{ "))
        self.assertIsNone(boxed.boxed_letter("\\boxed{" * 100_000))
        self.assertIsNone(boxed.balanced_boxed("\\boxed{" + "{" * 300_000))
