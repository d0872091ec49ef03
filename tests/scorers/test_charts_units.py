"""Unit checks for the chart/math helpers beyond the reference vectors.

Expected values below were produced by running the reference implementation's functions.
"""

from __future__ import annotations

import unittest

from datbench_cli.metrics.relaxed import bracket_items, normalize_text, parse_number, relaxed_match
from datbench_cli.scorers import chartqapro, mathverse
from datbench_cli.text import open_answer

# MathVista's number extraction (reference ``_extract_numbers``) on inputs that exercise each
# pattern's boundaries; the guarded patterns must give exactly these lists, in this order.
NUMBER_CASES = {
    "5-3e2": ["-3e2", "5", "2"],
    "1.2.3e5": ["2.3e5", "1.2", "5"],
    "5.5.5": ["5.5", ".5"],
    "1,000,000x": ["1,000"],
    "12,3456": ["3456"],
    "-7 and 3.5e-2 and .5": ["3.5e-2", "-7", "3", "-2", ".5"],
    "1_000 12abc 4,": ["000"],
    "x=-12.50, y=1,234": ["1,234", "-12", "234"],
    "123123123123123e": [],
    "0.5%": ["0.5"],
}


class RelaxedPrimitiveTests(unittest.TestCase):
    def test_parse_number(self) -> None:
        self.assertEqual(parse_number(" 1,234%% "), (1234.0, True))
        self.assertEqual(parse_number("1_000"), (1000.0, False))
        self.assertIsNone(parse_number("12 cm"))
        self.assertIsNone(parse_number(12))

    def test_normalize_and_lists(self) -> None:
        self.assertEqual(normalize_text("  United-States  of\tA.  "), "unitedstates of a")
        self.assertEqual(normalize_text(None), "")
        self.assertEqual(bracket_items("[b, , A.]"), ["a", "b"])
        self.assertEqual(bracket_items("[]"), [])
        with self.assertRaises(AttributeError):
            normalize_text(5)

    def test_relaxed_match_options(self) -> None:
        self.assertFalse(relaxed_match("1.05", "1"))
        self.assertTrue(relaxed_match("1.05", "1", tolerance=chartqapro.TOLERANCE))
        self.assertFalse(relaxed_match("0.0", "0"))
        self.assertTrue(relaxed_match("0.0", "0", exact_zero_target=True))
        self.assertFalse(relaxed_match("60", "0.6"))
        self.assertTrue(relaxed_match("60", "0.6", ratio_as_percent=True))


class ChartQAProHelperTests(unittest.TestCase):
    def test_list_repair_and_year_flags(self) -> None:
        self.assertEqual(
            chartqapro.relaxed_correctness("[a, b]", "['a', 'x']", ["NO"], False, ""), 0.5
        )
        self.assertEqual(chartqapro.relaxed_correctness("2019", "2020", "yes", False, ""), 0.0)
        self.assertEqual(chartqapro.relaxed_correctness("2019", "2020", None, False, ""), 1.0)

    def test_unhashable_gold_raises_like_the_reference(self) -> None:
        with self.assertRaises(TypeError):
            chartqapro.relaxed_correctness("[{[a]: b}]", "x", [], False, "")


class MathVistaHelperTests(unittest.TestCase):
    def test_extract_numbers(self) -> None:
        for text, expected in NUMBER_CASES.items():
            with self.subTest(text=text):
                self.assertEqual(open_answer.extract_numbers(text), expected)


class MathVerseTests(unittest.TestCase):
    def test_always_raises_and_aggregates_nothing(self) -> None:
        with self.assertRaisesRegex(NotImplementedError, "^MathVerse uses LM-judge scoring only.$"):
            mathverse.score_sample({}, "12")
        self.assertEqual(mathverse.compute_metrics([]), {})
        self.assertEqual(mathverse.compute_metrics([{"score": 1.0}]), {})
        self.assertIn("always raises", mathverse.KNOWN_DEFECT)


if __name__ == "__main__":
    unittest.main()
