"""Hostile model outputs for the chart and math scorers: each sample finishes, scored or errored."""

from __future__ import annotations

import unittest
import warnings
from typing import Any

from tests.hostile import score_hostile, score_hostile_batch
from tests.vectors import DATA, load_lines

MODULE_FILES = ("chartqa", "chartqapro", "charxiv", "mathvista", "mathverse")
DATASET_NAMES = (
    "chartqa",
    "chartqapro",
    "charxiv_descriptive",
    "charxiv_reasoning",
    "mathvista",
    "mathverse_reasoning",
    "mathverse_wo",
)
MEGABYTE = 1_000_000

HOSTILE_OUTPUTS = {
    "1MB digits": "1" * MEGABYTE,
    # An empty box sends MathVista to open-answer parsing, which scans the text for numbers.
    "1MB digit run after an empty box": "\\boxed{ }\n" + "1" * MEGABYTE + ",",
    "1MB words and parens": "the answer is (B) so " * (MEGABYTE // 21),
    "10,000-item list": "[" + ", ".join(f"item {i}" for i in range(10_000)) + "]",
    "10,000-number list": str(list(range(10_000))),
}


def _base_rows() -> dict[str, tuple[str, dict[str, Any]]]:
    """The first direct-mode vector row of each dataset name, with its capability."""
    rows: dict[str, tuple[str, dict[str, Any]]] = {}
    for stem in MODULE_FILES:
        for line in load_lines(DATA / f"{stem}.jsonl"):
            row = line["row"]
            name = row["source_info"]["dataset"]
            if row.get("eval_mode", "direct") == "direct" and name not in rows:
                rows[name] = (line["capability"], dict(row, image=None))
    return rows


class HostileOutputTests(unittest.TestCase):
    """A 1 MB output and a 10,000-item list output finish for every dataset name."""

    def test_every_dataset_name_has_a_base_row(self) -> None:
        self.assertEqual(set(_base_rows()), set(DATASET_NAMES))

    def test_hostile_outputs_finish(self) -> None:
        rows = sorted(_base_rows().items())
        cases = [(name, label) for name, _ in rows for label in HOSTILE_OUTPUTS]
        by_name = dict(rows)
        results = score_hostile_batch(
            [(by_name[name][1], by_name[name][0], HOSTILE_OUTPUTS[label]) for name, label in cases]
        )
        for (name, label), result in zip(cases, results, strict=True):
            with self.subTest(dataset=name, output=label):
                details = result.metadata["score_details"]
                if "error" in details:
                    self.assertEqual(result.score, 0.0)
                    self.assertIn("type", details["error"])
                else:
                    self.assertIsInstance(result.score, float)
                    self.assertGreaterEqual(result.score, 0.0)
                    self.assertLessEqual(result.score, 1.0)

    def test_mathverse_records_its_error(self) -> None:
        rows = _base_rows()
        for name in ("mathverse_reasoning", "mathverse_wo"):
            capability, row = rows[name]
            with self.subTest(dataset=name), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = score_hostile(row, capability, "1" * MEGABYTE)
                error = result.metadata["score_details"]["error"]
                self.assertEqual(error["type"], "NotImplementedError")


if __name__ == "__main__":
    unittest.main()
