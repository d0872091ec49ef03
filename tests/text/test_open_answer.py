"""The one open-answer matcher under the rules of each of the reference's two copies."""

from __future__ import annotations

import math
import unittest

from datbench_cli.scorers import mathvista, mmmu
from datbench_cli.text.open_answer import (
    MATHVISTA,
    MMMU,
    key_subresponses,
    normalize_answer,
    open_answer_matches,
    parse_open_response,
)


class RuleDifferenceTests(unittest.TestCase):
    def test_pieces_split_at_a_literal_backslash_n_for_mmmu_and_a_newline_for_mathvista(
        self,
    ) -> None:
        text = "so it is 5\nthe answer is 7"
        self.assertEqual(key_subresponses(text, MMMU), ["7"])
        self.assertEqual(key_subresponses(text, MATHVISTA), ["5", "7"])
        literal = "so it is 5\\nthe answer is 7"
        self.assertEqual(key_subresponses(literal, MMMU), ["5", "7"])
        self.assertEqual(key_subresponses(literal, MATHVISTA), ["7"])

    def test_huge_numbers_stay_text_for_mmmu_only(self) -> None:
        self.assertEqual(normalize_answer("1e999", MMMU), ["1e999"])
        self.assertEqual(normalize_answer("1,0e999", MMMU), ["10e999"])
        self.assertEqual(normalize_answer("1e999", MATHVISTA), [math.inf])
        for rules in (MMMU, MATHVISTA):
            self.assertEqual(normalize_answer(" 1,234.567 ", rules), [1234.57])

    def test_a_scalar_gold_is_str_for_mmmu_and_raises_for_mathvista(self) -> None:
        self.assertTrue(open_answer_matches(5, [5.0], MMMU))
        with self.assertRaises(AttributeError):
            open_answer_matches(5, [5.0], MATHVISTA)
        for rules in (MMMU, MATHVISTA):
            self.assertTrue(open_answer_matches(["x", "5"], [5.0], rules))

    def test_shared_rules(self) -> None:
        for rules in (MMMU, MATHVISTA):
            with self.subTest(rules=rules):
                self.assertEqual(normalize_answer("B", rules), [" b", "b "])
                self.assertFalse(open_answer_matches("B", ["(b)"], rules))
                self.assertTrue(open_answer_matches("paris", ["it is paris."], rules))
                self.assertFalse(open_answer_matches("5", ["5"], rules))  # text vs number
                self.assertEqual(sorted(parse_open_response("Answer: 3.14159", rules)), [3.14])

    def test_the_scorers_use_their_own_rules(self) -> None:
        output = "so it is 5\\nthe answer is 7"
        self.assertEqual(
            mmmu.score_sample({"question_type": "open", "answer": "5"}, output)["score"], 1.0
        )
        # MathVista's final-answer extraction takes the last line first.
        details = mathvista.score_sample({"answer": "5"}, "x\n" + output)
        self.assertEqual(details["score"], 0.0)
