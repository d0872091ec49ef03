"""The shared multiple-choice parser, the linear-time rewrites, and the AI2D defect report."""

from __future__ import annotations

import random
import re
import unittest
import warnings

from datbench_cli import DatBenchEvaluator, VLMResponse
from datbench_cli.scorers import ai2d, mmmu, realworldqa
from datbench_cli.text import open_answer
from datbench_cli.text.choices import (
    ANSWER_LINE_A_TO_E,
    answer_line_letter,
    candidate_letter,
    choices_from_options,
    letter_in_extracted,
    lettered_choices,
    pad_response,
)
from tests.vectors import DATA, load_lines

FOUR = ["A", "B", "C", "D"]
TEXTS = {"A": "alpha", "B": "beta", "C": "gamma", "D": "delta"}


def parse(response: str, index2ans: dict[str, str] | None = None) -> object:
    return candidate_letter(pad_response(response), FOUR, index2ans or TEXTS)


class CandidateParserTests(unittest.TestCase):
    def test_trim_strips_each_character_once_in_order(self) -> None:
        self.assertEqual(pad_response("B.!"), " B. ")
        self.assertEqual(pad_response(",.B"), " B ")

    def test_bracket_stage_takes_the_last_bracketed_letter(self) -> None:
        self.assertEqual(parse("A or B? (A) no (B) yes"), "B")

    def test_letter_space_stage_needs_no_leading_space(self) -> None:
        self.assertEqual(parse("NASA is"), "A")
        self.assertEqual(parse("NASA B."), "B")

    def test_ties_go_to_the_earliest_candidate(self) -> None:
        # Both found via "X " without a leading space: positions -1 and -1.
        self.assertEqual(parse("xA xB"), "A")

    def test_content_stage_needs_more_than_five_tokens(self) -> None:
        self.assertIsNone(parse("I pick beta"))
        self.assertEqual(parse("I think the right one is beta here"), "B")
        self.assertEqual(parse("first gamma then finally delta it is"), "D")

    def test_empty_option_text_matches_any_long_response(self) -> None:
        texts = {"A": "zzz", "B": ""}
        self.assertEqual(parse("one two three four five six", texts), "B")

    def test_unrecognised_formats_give_none(self) -> None:
        for response in ("\\boxed{B}", "<answer>B</answer>", ""):
            with self.subTest(response=response):
                self.assertIsNone(parse(response))

    def test_no_random_guess(self) -> None:
        results = {mmmu.parse_letter("nothing here", FOUR, TEXTS) for _ in range(20)}
        self.assertEqual(results, {None})

    def test_pipe_is_a_member_of_the_letter_class(self) -> None:
        self.assertEqual(letter_in_extracted("1|2", FOUR), "|")
        self.assertEqual(letter_in_extracted("THE ANSWER IS A CAT", FOUR), "A")

    def test_answer_line_letter(self) -> None:
        self.assertEqual(answer_line_letter("x\nFinal Answer: E", ANSWER_LINE_A_TO_E), "E")
        self.assertEqual(answer_line_letter("answer: b\nmore", ANSWER_LINE_A_TO_E), "B")
        for response in ("Answer: (B)", "**Answer:** B", "Answer: apple"):
            with self.subTest(response=response):
                self.assertIsNone(answer_line_letter(response, ANSWER_LINE_A_TO_E))

    def test_option_maps(self) -> None:
        self.assertEqual(choices_from_options("ab"), ({"A": "a", "B": "b"}, ["A", "B"]))
        letters, texts = lettered_choices(list("abcdefghij"), limit=8)
        self.assertEqual(letters, list("ABCDEFGH"))
        self.assertEqual(texts["H"], "h")


class LinearRewriteTests(unittest.TestCase):
    """Rewrites that avoid quadratic regex backtracking agree with the reference's regexes."""

    def random_texts(self, alphabet: list[str], count: int) -> list[str]:
        rng = random.Random(1234)
        return ["".join(rng.choices(alphabet, k=rng.randint(0, 12))) for _ in range(count)]

    def test_think_removal_matches_the_lazy_regex(self) -> None:
        reference = re.compile(r"<think>[\s\S]*?</think>", re.IGNORECASE)
        alphabet = ["<think>", "</think>", "<THINK>", "</Think>", "a", "\n", "<", "/"]
        for text in self.random_texts(alphabet, 20_000):
            self.assertEqual(realworldqa._strip_think(text), reference.sub("", text), repr(text))

    def test_number_extraction_matches_the_reference_patterns(self) -> None:
        reference = (
            re.compile(r"-?\b\d{1,3}(?:,\d{3})+\b"),
            re.compile(r"-?\d+(?:\.\d+)?[eE][+-]?\d+"),
            re.compile(r"-?(?:\d+\.\d+|\.\d+|\d+\b)(?![eE][+-]?\d+)(?![,\d])"),
        )
        alphabet = list("0123456789.,-+eE a_") + ["\u0663", "111", "1,000"]
        for text in self.random_texts(alphabet, 50_000):
            expected = [m for pattern in reference for m in pattern.findall(text)]
            self.assertEqual(open_answer.extract_numbers(text), expected, repr(text))


class Ai2dDefectReportTests(unittest.TestCase):
    def test_summary_lists_the_ai2d_defect(self) -> None:
        line = load_lines(DATA / "ai2d.jsonl")[0]
        row = dict(line["row"], image=None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = DatBenchEvaluator([row], line["capability"]).compute_metrics(
                [VLMResponse(row["id"], "B")]
            )
        self.assertEqual(report.results[0].score, 0.0)  # string answer "B": the defect itself
        defects = report.summary["known_reference_defects"]
        self.assertEqual(defects["ai2d"], ai2d.KNOWN_DEFECT)


if __name__ == "__main__":
    unittest.main()
