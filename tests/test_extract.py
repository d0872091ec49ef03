"""The final-answer extractor and the evaluator's fallback path against the reference vectors."""

from __future__ import annotations

import unittest

from datbench_cli.text.extract import extract_final_answer
from tests.vectors import DATA, check_line, load_lines


class ExtractFinalAnswerTests(unittest.TestCase):
    def test_direct_vectors(self) -> None:
        lines = load_lines(DATA / "erma_utils_direct.jsonl")
        self.assertGreater(len(lines), 20)
        for number, line in enumerate(lines, start=1):
            with self.subTest(line=number, input=repr(line["input"])[:40]):
                self.assertEqual(extract_final_answer(line["input"]), line["output"])

    def test_fallback_path_vectors(self) -> None:
        for line in load_lines(DATA / "erma_utils.jsonl"):
            with self.subTest(id=line["row"]["id"]):
                check_line(self, line)

    def test_evaluator_fallback_vectors(self) -> None:
        for line in load_lines(DATA / "evaluator.jsonl"):
            with self.subTest(id=line["row"]["id"]):
                check_line(self, line)

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


if __name__ == "__main__":
    unittest.main()
