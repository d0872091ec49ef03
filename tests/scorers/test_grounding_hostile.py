"""Hostile model outputs for the grounding and counting scorers finish under the time budget.

Each output is scored (a float score) or recorded as that sample's scorer error; none may stall
or exhaust memory.
"""

from __future__ import annotations

import json
import unittest
from typing import Any

from datbench_cli.benchmarks.datbench.schema import SampleScore
from tests.hostile import score_hostile, score_hostile_batch
from tests.vectors import DATA, load_lines

MODULES = ("refcoco", "pixmo_points_eval", "countbench", "tallyqa")
DATASET_NAMES = (
    "refcoco_testA",
    "refcoco_testB",
    "refcoco_plus_testA",
    "refcoco_plus_testB",
    "refcoco_m_val",
    "refcocog_test",
    "pixmo_points_eval",
    "countbench",
    "tallyqa",
)
COUNT = 100_000
HOSTILE_OUTPUTS = {
    "100k point pairs": "(123, 456) " * COUNT,
    "100k boxes": "[0.1, 0.2, 0.3, 0.4] " * COUNT,
    "100k spaced digits": "7 " * COUNT,
    "100k boxed points": "\\boxed{" + "100, 200, " * COUNT + "}",
    "1M-digit run": "1" * 1_000_000 + "a",
}
# Inputs on which a naive regex search backtracks quadratically (the parsers these scorers own).
SCANNER_OUTPUTS = {
    "1M backslashes": "\\" * 1_000_000,
    "unclosed boxed blocks": "\\boxed{" * 150_000,
    "unclosed brackets": "[" * 1_000_000,
}


def base_rows() -> dict[str, dict[str, Any]]:
    """The first vector row of each dataset name, with its capability."""
    rows: dict[str, dict[str, Any]] = {}
    for module in MODULES:
        for line in load_lines(DATA / f"{module}.jsonl"):
            rows.setdefault(line["row"]["source_info"]["dataset"], line)
    return rows


def score(line: dict[str, Any], output: str, row: dict[str, Any] | None = None) -> SampleScore:
    """Score one output for the line's row through the evaluator with a 10 s budget."""
    return score_hostile(dict(row or line["row"], image=None), line["capability"], output)


class HostileOutputTests(unittest.TestCase):
    """Every dataset name survives huge outputs."""

    def assert_finished(self, result: SampleScore) -> None:
        details = result.metadata["score_details"]
        error = details.get("error")
        if error is None:
            self.assertIsInstance(result.score, float)
            self.assertIsInstance(details["score"], float)
        else:
            self.assertEqual(result.score, 0.0)
            self.assertTrue(error["type"])

    def test_every_dataset_name_has_a_base_row(self) -> None:
        self.assertEqual(set(base_rows()), set(DATASET_NAMES))

    def assert_all_finish(self, names: Any, outputs: dict[str, str]) -> None:
        """Every output for every dataset name, scored in one evaluator call per capability."""
        rows = base_rows()
        cases = [(name, label) for name in names for label in outputs]
        results = score_hostile_batch(
            [(rows[name]["row"], rows[name]["capability"], outputs[label]) for name, label in cases]
        )
        for (name, label), result in zip(cases, results, strict=True):
            with self.subTest(dataset=name, output=label):
                self.assert_finished(result)

    def test_huge_outputs_finish(self) -> None:
        self.assert_all_finish(DATASET_NAMES, HOSTILE_OUTPUTS)

    def test_backtracking_bait_finishes(self) -> None:
        self.assert_all_finish(("refcoco_testA", "pixmo_points_eval"), SCANNER_OUTPUTS)

    def test_refcoco_reads_the_first_of_many_boxes(self) -> None:
        result = score(base_rows()["refcoco_testA"], "[0.1, 0.2, 0.3, 0.4] " * COUNT)
        self.assertEqual(result.metadata["score_details"]["pred_bbox"], [0.1, 0.2, 0.3, 0.4])

    def test_pixmo_scores_many_points_against_few_targets(self) -> None:
        result = score(base_rows()["pixmo_points_eval"], "(648, 690) " * COUNT)
        details = result.metadata["score_details"]
        self.assertNotIn("error", details)
        self.assertEqual(len(details["predicted_points"]), COUNT)
        # One target, one of the identical points is assigned to it and hits its mask.
        self.assertEqual(details["precision"], 1 / COUNT)
        self.assertEqual(details["recall"], 1.0)

    def test_pixmo_oversized_assignment_is_a_recorded_error(self) -> None:
        line = base_rows()["pixmo_points_eval"]
        metadata = json.loads(line["row"]["metadata"])
        metadata["points_target"] = [{"x": 1.0 + i, "y": 50.0} for i in range(60)]
        metadata["points_mask"] = [[[True]]] * 60
        row = dict(line["row"], metadata=json.dumps(metadata))
        result = score(line, "(500, 500) " * COUNT, row)
        error = result.metadata["score_details"]["error"]
        self.assertEqual(error["type"], "AssignmentTooLarge")
        self.assertIn("100000 predicted to 60 target points", error["message"])


if __name__ == "__main__":
    unittest.main()
