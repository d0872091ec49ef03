"""The linear-time scanners equal the reference regexes; geometry and count helpers."""

from __future__ import annotations

import re
import unittest
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from datbench_cli.metrics.counting import CountTally, sanitized_count
from datbench_cli.metrics.geometry import box_iou, clamp_unit, distance_matrix, point_in_mask
from datbench_cli.runtime.budget import SampleTimeout
from datbench_cli.scorers import pixmo_points_eval, tallyqa
from datbench_cli.text.numbers import count_from_answer, last_digit_token
from datbench_cli.text.scan import DigitLedPattern, first_bracketed

BRACKET_RE = re.compile(r"\[([^\]]+)\]")
NUMBER = r"(\d+(?:\.\d+)?)"
COMMA_PAIR = NUMBER + r"\s*,\s*" + NUMBER
SPACE_PAIR = NUMBER + r"\s+([0-9]+(?:\.\d+)?)"

# Short texts over the characters these patterns care about (incl. a non-ASCII digit).
TEXTS = st.text(alphabet=list("0123456789\u0663., \n\\boxed{}[]()ab"), max_size=40)


class ScannerEquivalenceTests(unittest.TestCase):
    @settings(max_examples=400, deadline=None)
    @given(TEXTS)
    def test_first_bracketed_equals_search(self, text: str) -> None:
        match = BRACKET_RE.search(text)
        self.assertEqual(first_bracketed(text), match.group(0) if match else None)

    @settings(max_examples=800, deadline=None)
    @given(TEXTS)
    def test_digit_led_findall_equals_findall(self, text: str) -> None:
        for pattern in (COMMA_PAIR, SPACE_PAIR):
            self.assertEqual(DigitLedPattern(pattern).findall(text), re.findall(pattern, text))

    def test_digit_led_resumes_after_an_ascii_digit(self) -> None:
        # The previous match ends on "2" and the next starts on the Arabic-Indic digit after it.
        text = "1 2\u0663 4"
        self.assertEqual(DigitLedPattern(SPACE_PAIR).findall(text), re.findall(SPACE_PAIR, text))
        self.assertEqual(len(re.findall(SPACE_PAIR, text)), 2)

    def test_non_string_raises_like_re(self) -> None:
        with self.assertRaisesRegex(TypeError, "expected string or bytes-like object, got 'int'"):
            first_bracketed(5)  # type: ignore[arg-type]


class GeometryTests(unittest.TestCase):
    def test_iou_of_overlapping_boxes(self) -> None:
        self.assertEqual(box_iou([0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 0.5, 1.0]), 0.5)

    def test_iou_of_inverted_box_is_zero(self) -> None:
        self.assertEqual(box_iou([0.0, 0.0, 1.0, 1.0], [0.5, 0.5, 0.1, 0.1]), 0.0)

    def test_clamp_keeps_reference_argument_order(self) -> None:
        self.assertEqual(str(clamp_unit(-0.0)), "0.0")
        self.assertEqual(clamp_unit(float("nan")), 1.0)

    def test_point_on_far_edge_is_outside(self) -> None:
        mask = [[True, True], [True, True]]
        self.assertTrue(point_in_mask((0.99, 0.5), mask))
        self.assertFalse(point_in_mask((1.0, 0.5), mask))
        self.assertFalse(point_in_mask((0.5, 0.5), [[]]))

    def test_distance_matrix_matches_pairwise_python(self) -> None:
        import numpy as np

        points = [(0.1, 0.7), (0.3333, 0.25), (1.0, 0.0)]
        targets = [(0.6476000000000001, 0.6899), (0.2, 0.9)]
        matrix = distance_matrix(points, targets)
        for i, (px, py) in enumerate(points):
            for j, (tx, ty) in enumerate(targets):
                dx, dy = px - tx, py - ty
                self.assertEqual(matrix[i, j], np.sqrt(dx * dx + dy * dy))


class CountTests(unittest.TestCase):
    def test_last_digit_token(self) -> None:
        self.assertEqual(last_digit_token("3 cows and 12 goats"), "12")
        self.assertIsNone(last_digit_token("3rd"))

    def test_count_from_answer(self) -> None:
        self.assertEqual(count_from_answer(" 4 "), 4)
        self.assertIsNone(count_from_answer("\u00b2"))  # isdigit, but int() rejects it
        self.assertIsNone(count_from_answer("three"))
        self.assertEqual(count_from_answer(3.9), 3)

    def test_sanitized_count_bounds(self) -> None:
        self.assertEqual(sanitized_count(1_000_000), 1_000_000)
        self.assertIsNone(sanitized_count(1_000_001))
        self.assertIsNone(sanitized_count(-1))
        self.assertIsNone(sanitized_count("x"))

    def test_within_uses_every_sample_as_denominator(self) -> None:
        tally = CountTally(n_total=4)
        self.assertEqual(tally.add_parse(5, 4), 1)
        self.assertIsNone(tally.add_parse(None, 4))
        self.assertEqual(tally.within(1), 0.25)
        self.assertEqual(tally.mean_absolute_error(), 1.0)

    def test_tallyqa_superscript_capture_raises_like_the_reference(self) -> None:
        with self.assertRaisesRegex(ValueError, "invalid literal for int"):
            tallyqa.parse_count("The answer is \u00b2")


class PixmoParsingTests(unittest.TestCase):
    def test_boxed_collects_comma_then_space_pairs(self) -> None:
        points = pixmo_points_eval.parse_points("\\boxed{120 870, 300 400}")
        self.assertEqual(points, [(0.87, 0.3), (0.12, 0.87), (0.3, 0.4)])

    SAMPLE = {"points": [{"x": 50.0, "y": 50.0}], "masks": [[[True]]], "has_target": True}

    def test_matching_failure_scores_zero(self) -> None:
        with mock.patch.object(pixmo_points_eval, "_assign", side_effect=ValueError("bad")):
            details = pixmo_points_eval.score_sample(self.SAMPLE, "(500, 500)")
        self.assertEqual((details["score"], details["precision"]), (0.0, 0.0))

    def test_time_budget_is_not_swallowed(self) -> None:
        with mock.patch.object(pixmo_points_eval, "_assign", side_effect=SampleTimeout("late")):
            with self.assertRaises(SampleTimeout):
                pixmo_points_eval.score_sample(self.SAMPLE, "(500, 500)")

    def test_none_output_raises_attribute_error(self) -> None:
        with self.assertRaisesRegex(AttributeError, "'NoneType' object has no attribute 'strip'"):
            pixmo_points_eval.parse_points(None)  # type: ignore[arg-type]


if __name__ == "__main__":
    unittest.main()
