"""Hostile model outputs for the document/VQA scorers finish, or are recorded as scorer errors."""

from __future__ import annotations

import unittest

from tests.hostile import score_hostile
from tests.vectors import DATA, load_lines

MODULES = ("docvqa", "ocrvqa", "infovqa", "textvqa", "vqav2")

# One line of ~1 MB mixing what the normalizers act on: digit commas, periods, punctuation,
# currency symbols, case-changing letters; then 10,000 short lines, each an "Answer:" line.
ONE_MEGABYTE = ("Word, 1,000. $5 - (x) ß İ don't the " * 30_000)[:1_000_000]
TEN_THOUSAND_LINES = "\n".join(f"Answer: item {i}, 1,000 - $5." for i in range(10_000))
PERIODS_THEN_MONEY = "." * 1_000_000 + "$5"


class HostileOutputTests(unittest.TestCase):
    def assert_finishes(self, module: str, output: str) -> None:
        line = load_lines(DATA / f"{module}.jsonl")[0]
        row = dict(line["row"], image=None)
        result = score_hostile(row, line["capability"], output)
        details = result.metadata["score_details"]
        if "error" in details:
            self.assertIn("type", details["error"])
            self.assertEqual(result.score, 0.0)
        else:
            self.assertIsInstance(result.score, float)
            self.assertTrue(0.0 <= result.score <= 1.0)

    def test_one_megabyte_output(self) -> None:
        for module in MODULES:
            for output in (ONE_MEGABYTE, PERIODS_THEN_MONEY):
                with self.subTest(module=module, output=output[:20]):
                    self.assertGreaterEqual(len(output), 1_000_000)
                    self.assert_finishes(module, output)

    def test_ten_thousand_line_output(self) -> None:
        for module in MODULES:
            with self.subTest(module=module):
                self.assertEqual(len(TEN_THOUSAND_LINES.splitlines()), 10_000)
                self.assert_finishes(module, TEN_THOUSAND_LINES)
