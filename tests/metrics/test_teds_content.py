"""TEDS with cell text (the corrected profile's CC-OCR table metric): worked examples."""

from __future__ import annotations

import unittest

from datbench_cli.metrics import teds_content
from datbench_cli.metrics.teds_content import table_content_similarity

GOLD = "<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>"


class TableContentSimilarityTests(unittest.TestCase):
    def test_identical_tables_score_one(self) -> None:
        self.assertEqual(table_content_similarity(GOLD, GOLD), 1.0)

    def test_cell_text_counts(self) -> None:
        # Two trs and four tds: each wholly wrong one-character cell costs 1 of 6.
        one_wrong = GOLD.replace(">a<", ">x<")
        self.assertAlmostEqual(table_content_similarity(one_wrong, GOLD), 1 - 1 / 6)
        all_wrong = "<table><tr><td>w</td><td>x</td></tr><tr><td>y</td><td>z</td></tr></table>"
        self.assertAlmostEqual(table_content_similarity(all_wrong, GOLD), 1 - 4 / 6)
        # A partly right cell costs its normalised edit distance.
        gold = "<table><tr><td>abcd</td></tr></table>"
        self.assertAlmostEqual(
            table_content_similarity("<table><tr><td>abcx</td></tr></table>", gold), 1 - 0.25 / 2
        )

    def test_spans_and_nested_tags(self) -> None:
        merged = "<table><tr><td colspan='2'>ab</td></tr><tr><td>c</td><td>d</td></tr></table>"
        # One td deleted, the other renamed at cost 1 (its colspan differs): 2 of 6.
        self.assertAlmostEqual(table_content_similarity(merged, GOLD), 1 - 2 / 6)
        bold = GOLD.replace(">a<", "><b>a</b><")
        # <b> is one more element (7) and the cell's tokens <b> a </b> vs a cost 2/3.
        self.assertAlmostEqual(table_content_similarity(bold, GOLD), 1 - (2 / 3) / 7)

    def test_no_table_or_empty_side_scores_zero(self) -> None:
        for pred, gold in (("", GOLD), (GOLD, ""), ("plain text", GOLD), ("a\x00b", GOLD)):
            with self.subTest(pred=pred):
                self.assertEqual(table_content_similarity(pred, gold), 0.0)

    def test_an_oversized_table_is_an_error_not_a_stall(self) -> None:
        huge = "<table>" + "<tr><td>x</td></tr>" * 2100 + "</table>"
        with self.assertRaises(teds_content.TableTooLarge):
            table_content_similarity(huge, huge)


if __name__ == "__main__":
    unittest.main()
