"""Every scorer's KNOWN_DEFECT is documented, and the report names it when that dataset is scored."""

from __future__ import annotations

import unittest
import warnings
from pathlib import Path

from datbench_cli import DatBenchEvaluator, VLMResponse
from datbench_cli.scorers import SCORERS
from tests.vectors import DATA, load_lines

DOC = Path(__file__).resolve().parents[2] / "docs" / "known-defects.md"


class KnownDefectTests(unittest.TestCase):
    def test_every_known_defect_is_documented(self) -> None:
        text = DOC.read_text(encoding="utf-8")
        modules = {
            m.__name__.rsplit(".", 1)[-1]
            for m in SCORERS.values()
            if getattr(m, "KNOWN_DEFECT", None)
        }
        self.assertGreater(len(modules), 3)
        for module in sorted(modules):
            with self.subTest(module=module):
                self.assertTrue(f"| `{module}` (" in text, f"{module} missing from {DOC.name}")

    def test_report_names_the_defect_of_scored_datasets(self) -> None:
        line = load_lines(DATA / "ai2d.jsonl")[0]
        other = load_lines(DATA / "docvqa.jsonl")[0]
        rows = [dict(line["row"], image=None), dict(other["row"], image=None)]
        evaluator = DatBenchEvaluator(rows, "table")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = evaluator.compute_metrics([VLMResponse(r["id"], "A") for r in rows])
        defects = report.summary["known_reference_defects"]
        self.assertEqual(list(defects), ["ai2d"])
        self.assertIn("letter answer", defects["ai2d"])


if __name__ == "__main__":
    unittest.main()
