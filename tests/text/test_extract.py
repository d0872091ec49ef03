"""The final-answer extractor: worked examples and properties (its reference vectors run in
tests/scorers/test_vectors.py)."""

from __future__ import annotations

import random
import re
import sys
import unittest

from datbench_cli.text.extract import extract_final_answer
from tests.bounded import within
from tests.degenerate_texts import FAMILIES


class ExtractFinalAnswerTests(unittest.TestCase):
    def test_non_string_input_gives_empty(self) -> None:
        self.assertEqual(extract_final_answer(None), "")
        self.assertEqual(extract_final_answer(["Answer: 5"]), "")

    def test_worked_examples(self) -> None:
        table = {
            "\\boxed{\\frac{1}{2}}": "\\frac{1",
            "\\boxed{x} <|begin_of_box|>y<|end_of_box|>": "y",
            "<answer>\nB\n</answer>": "</answer>",
            "The answer: 5": "The answer: 5",
            "Answer: 5\u2028more": "5 more",
            "a\u2028b": "b",
            "<|begin_of_box|><|end_of_box|>\\boxed{4}": "",
        }
        for text, expected in table.items():
            with self.subTest(text=text):
                self.assertEqual(extract_final_answer(text), expected)


class LinearScanParityTests(unittest.TestCase):
    """The linear scans find exactly what the reference's patterns find with finditer."""

    TOKENS = (
        "answer",
        "Answer",
        "ANSWER",
        "final answer",
        "Final\nAnswer",
        "final",
        "anſwer",
        ":",
        " ",
        "  ",
        "\n",
        "\t",
        "\r",
        "\u2028",
        "x",
        "5",
        "\\",
        "\\\\",
        "boxed{",
        "}",
        "{",
        "B",
        "<|begin_of_box|>",
        "<|end_of_box|>",
        "<|begin_of_box|>7",
        "<|end_of_box|>\n",
    )

    @staticmethod
    def reference_last(pattern, text):
        last = None
        for last in pattern.finditer(text):  # noqa: B007
            pass
        return None if last is None else last.group(1)

    def test_random_texts(self) -> None:
        import random

        from datbench_cli.text import extract

        rng = random.Random(1234)
        mismatches = []
        for _ in range(20000):
            text = "".join(rng.choice(self.TOKENS) for _ in range(rng.randint(0, 24)))
            if extract.last_pipe_box(text) != self.reference_last(extract.PIPE_BOX_RE, text):
                mismatches.append(("pipe box", text))
            expected = self.reference_last(extract.ANSWER_LINE_RE, text)
            if extract.last_answer_line(text) != expected:
                mismatches.append(("answer line", text))
        self.assertEqual(mismatches[:5], [])

    def test_hostile_inputs_finish(self) -> None:
        # Each of these takes minutes with finditer over the reference patterns.
        self.assertEqual(len(extract_final_answer("\\boxed{" * 200_000)), 1_400_000)
        self.assertEqual(extract_final_answer("   \n" * 200_000 + "Answer: 7"), "7")
        self.assertEqual(extract_final_answer("\n" * 200_000), "")
        self.assertEqual(extract_final_answer("<|begin_of_box|>x" * 100_000 + "\nAnswer: 3"), "3")


class WrapperTagParityTests(unittest.TestCase):
    """``<answer>..</answer>`` (and ``<final>``, ``<final_answer>``) is unwrapped as the
    reference's ``^<\\s*name\\s*>\\s*(.*?)\\s*<\\s*/\\s*name\\s*>$`` (re.I | re.S) match does, in
    linear time (the pattern backtracks cubically over a run of blank space)."""

    TOKENS = (
        "<answer>",
        "< Answer >",
        "</answer>",
        "</ ANSWER\n>",
        "<final>",
        "</final>",
        "<final_answer>",
        "</final_answer >",
        "<anſwer>",
        "<",
        "</",
        ">",
        "/",
        " ",
        "\n",
        "\t",
        "\x1c",
        "\u2028",
        "\xa0",
        "x",
        "B",
    )

    OPENINGS = ("<answer>", "< Answer >", "<final>", "<final_answer>", "<anſwer>", "< final\n>")
    CLOSINGS = (
        "</answer>",
        "</ ANSWER\n>",
        "</final>",
        "</final_answer >",
        "</ FINAL>",
        "<\t/answer>",
    )

    @staticmethod
    def reference_unwrap(text: str) -> str:
        text = text.strip()
        for name in ("answer", "final_answer", "final"):
            pattern = rf"^<\s*{name}\s*>\s*(.*?)\s*<\s*/\s*{name}\s*>$"
            match = re.match(pattern, text, re.I | re.S)
            if match:
                return match.group(1).strip()
        return text

    def test_random_texts(self) -> None:
        from datbench_cli.text.extract import _unwrap_tag

        rng = random.Random(36)
        mismatches = []
        unwrapped = 0
        for _ in range(20000):
            text = "".join(rng.choice(self.TOKENS) for _ in range(rng.randint(0, 12)))
            if rng.random() < 0.5:  # a wrapped text half the time
                text = rng.choice(self.OPENINGS) + text + rng.choice(self.CLOSINGS)
            unwrapped += text.strip() != self.reference_unwrap(text)
            if _unwrap_tag(text) != self.reference_unwrap(text):
                mismatches.append(text)
        self.assertEqual(mismatches[:5], [])
        self.assertGreater(unwrapped, 2000)  # not vacuous

    def test_every_blank_character_is_a_regex_space(self) -> None:
        # The scan strips with str.isspace where the pattern has \s: the same characters.
        differ = [
            hex(point)
            for point in range(sys.maxunicode + 1)
            if chr(point).isspace() != bool(re.match(r"\s", chr(point)))
        ]
        self.assertEqual(differ, [])

    def test_degenerate_blank_space_finishes(self) -> None:
        # Each took minutes to hours (the pattern is cubic in the blank run); 10 s is the bound.
        expected = {
            "Answer: <answer> spaces": "<answer> 12",
            "\\boxed{<final> blank lines}": "<final> 12",
            "pipe box <answer> tabs": "B",
        }
        for name, text in FAMILIES["answer tag around blank space"].items():
            with self.subTest(variant=name):
                self.assertEqual(within(10, extract_final_answer, text), expected[name])


if __name__ == "__main__":
    unittest.main()
