"""Hostile model outputs and option lists finish (scored or recorded as an error) for every MCQ
dataset name, under the evaluator's per-sample budget."""

from __future__ import annotations

import json
import unittest
from typing import Any

from tests.hostile import score_hostile_batch
from tests.vectors import DATA, load_lines

MCQ_STEMS = ("ai2d", "mmbench", "mmmu", "mmmupro", "realworldqa", "mme_realworld", "logicvista")
MEGABYTE = 1_000_000
LINE_COUNT = 100_000

HOSTILE_OUTPUTS = {
    "mixed_1mb": ("(A) a. Answer: B <think> 1,234e5 final answer is C, (b) i.e. " * 20_000)[
        :MEGABYTE
    ],
    "unclosed_think_1mb": "<think>" * (MEGABYTE // 7),
    "digits_1mb": "1" * MEGABYTE + ",",
    "letters_1mb": "A " * (MEGABYTE // 2),
    "option_lines": "A. option text\n" * LINE_COUNT,
    "answer_lines": "Answer: B\n" * LINE_COUNT,
}


def base_rows() -> dict[str, dict[str, Any]]:
    """The first vector line of each dataset name served by the MCQ scorers."""
    rows: dict[str, dict[str, Any]] = {}
    for stem in MCQ_STEMS:
        for line in load_lines(DATA / f"{stem}.jsonl"):
            rows.setdefault(line["row"]["source_info"]["dataset"], line)
    return rows


def many_options_row(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with 100,000 options in its metadata and as lettered lines in its question."""
    options = [f"option {i}" for i in range(LINE_COUNT)]
    lines = "\n".join(f"{chr(ord('A') + i % 8)}. {text}" for i, text in enumerate(options))
    return dict(row, metadata=json.dumps({"options": options}), question=f"Pick one.\n{lines}")


class HostileInputTests(unittest.TestCase):
    """Every case must end as a float score or a recorded scorer error from the dataset scorer."""

    def assert_all_finish(self, cases: list[tuple[str, str, dict[str, Any], str]]) -> None:
        """Each (dataset, output name, line, row) case scored, in one evaluator call per
        capability."""
        results = score_hostile_batch(
            [(row, line["capability"], HOSTILE_OUTPUTS[name]) for _, name, line, row in cases]
        )
        for (dataset, name, _, _), result in zip(cases, results, strict=True):
            with self.subTest(dataset=dataset, output=name):
                details = result.metadata["score_details"]
                self.assertIsInstance(result.score, float)
                if "error" in details:
                    self.assertIn("type", details["error"])
                else:
                    self.assertIsInstance(details["score"], float)
                    self.assertGreater(
                        len(details), 1, "scored by the fallback, not the dataset scorer"
                    )

    def test_hostile_outputs(self) -> None:
        rows = base_rows()
        self.assertEqual(len(rows), 10)
        self.assert_all_finish(
            [
                (dataset, name, line, line["row"])
                for dataset, line in rows.items()
                for name in HOSTILE_OUTPUTS
            ]
        )

    def test_hundred_thousand_options(self) -> None:
        self.assert_all_finish(
            [
                (dataset, name, line, many_options_row(line["row"]))
                for dataset, line in base_rows().items()
                for name in ("mixed_1mb", "option_lines")
            ]
        )


if __name__ == "__main__":
    unittest.main()
