"""Shared ANLS and VQA-accuracy helpers: rules the vectors do not pin down on their own."""

from __future__ import annotations

import hashlib
import json
import unittest

from datbench_cli.metrics.anls import (
    anls_package_score,
    best_raw_similarity,
    exact_match_any,
    raw_similarity,
)
from datbench_cli.metrics.vqa_accuracy import (
    CONTRACTIONS,
    leave_one_out_accuracy,
    normalize_evalai_answer,
    normalize_vqa_answer,
)

CONTRACTIONS_SHA256 = "ec2778ee4c013cdbe08a275f8a05c671d3ed57cea6179f8a25c1c171b2fa05ee"


class AnlsTests(unittest.TestCase):
    def test_raw_similarity_keeps_half(self) -> None:
        self.assertEqual(raw_similarity("ac", "ab"), 0.5)
        self.assertEqual(raw_similarity("", ""), 1.0)
        self.assertEqual(raw_similarity("", "x"), 0.0)

    def test_best_raw_similarity_normalizes_and_takes_max(self) -> None:
        self.assertEqual(best_raw_similarity("  HELLO   world ", ["x", "hello world"]), 1.0)
        self.assertEqual(best_raw_similarity("abc", []), 0.0)

    def test_package_rules_strict_threshold_and_upper_length(self) -> None:
        self.assertEqual(anls_package_score("ac", ["ab"]), 0.0)
        self.assertEqual(anls_package_score("Fus", ["Fuß"]), 0.75)
        with self.assertRaises(ValueError):
            anls_package_score("x", [])

    def test_exact_match_any(self) -> None:
        self.assertEqual(exact_match_any(" Foo  Bar", ["x", "foo bar"]), 1.0)
        self.assertEqual(exact_match_any("foo", []), 0.0)


class VqaAccuracyTests(unittest.TestCase):
    def test_contraction_table_is_the_ascii_vqa_table(self) -> None:
        dumped = json.dumps(CONTRACTIONS, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
        self.assertEqual(len(CONTRACTIONS), 120)
        self.assertEqual(hashlib.sha256(dumped.encode()).hexdigest(), CONTRACTIONS_SHA256)

    def test_period_removal_capped_at_32(self) -> None:
        self.assertEqual(normalize_vqa_answer("x" + "." * 33), "x.")
        self.assertEqual(normalize_vqa_answer("x" + "." * 32), "x")
        self.assertEqual(normalize_vqa_answer("3.5."), "3.5")

    def test_digit_comma_switches_punctuation_to_deletion(self) -> None:
        self.assertEqual(normalize_vqa_answer("1,000 red/white"), "1000 redwhite")
        self.assertEqual(normalize_vqa_answer("red,white"), "red white")
        self.assertEqual(normalize_evalai_answer("red,white"), "redwhite")

    def test_words(self) -> None:
        self.assertEqual(normalize_vqa_answer("The Two dogs DONT"), "2 dogs don't")
        self.assertEqual(normalize_evalai_answer("John's"), "john 's")
        self.assertEqual(normalize_vqa_answer(""), "")

    def test_evalai_rejects_non_strings_like_the_reference(self) -> None:
        with self.assertRaises(AttributeError):
            normalize_evalai_answer(None)  # type: ignore[arg-type]

    def test_leave_one_out(self) -> None:
        self.assertEqual(leave_one_out_accuracy("a", ["a"]), 0.0)
        self.assertEqual(leave_one_out_accuracy("a", ["a", "a"]), 1 / 3)
        self.assertEqual(leave_one_out_accuracy("a", ["a"] * 4 + ["b"] * 6), 1.0)
        self.assertEqual(leave_one_out_accuracy("a", []), 0.0)
