"""A scorer owns its input: the evaluator parses metadata and calls the module's hook."""

from __future__ import annotations

import types
import unittest
from pathlib import Path
from typing import Any

from datbench_cli.benchmarks.datbench import scorer_input
from datbench_cli.benchmarks.datbench.schema import DatBenchSample
from datbench_cli.benchmarks.datbench.scorer_input import build_scorer_input
from datbench_cli.scorers import SCORERS
from datbench_cli.scorers.base import default_input


def sample(dataset: str, metadata: str) -> DatBenchSample:
    row = {
        "id": "s1",
        "image": None,
        "question": "q?",
        "answer": "a",
        "all_answers": ["a", "b"],
        "metadata": metadata,
        "source_info": {"dataset": dataset},
    }
    return DatBenchSample.from_hf_row(row, "general")


def fake_scorer(**hooks: Any) -> Any:
    return types.SimpleNamespace(
        score_sample=lambda s, o: {"score": 0.0}, compute_metrics=lambda d: {}, **hooks
    )


class ScorerInputTests(unittest.TestCase):
    def test_no_dataset_name_in_the_evaluator_side(self) -> None:
        text = Path(scorer_input.__file__).read_text(encoding="utf-8")
        named = sorted(name for name in SCORERS if f'"{name}"' in text or f"'{name}'" in text)
        self.assertEqual(named, [])
        self.assertNotIn("startswith(", text)

    def test_a_module_without_hook_gets_the_default_input(self) -> None:
        got = build_scorer_input(sample("new", '{"options": ["x"], "extra": 1}'), fake_scorer())
        self.assertEqual(
            got,
            {
                "question_id": "s1",
                "question": "q?",
                "answer": "a",
                "all_answers": ["a", "b"],
                "options": ["x"],
            },
        )

    def test_the_hook_receives_the_sample_and_parsed_metadata(self) -> None:
        seen: list[Any] = []

        def hook(s: DatBenchSample, metadata: Any) -> dict[str, Any]:
            seen.append((s.id, metadata))
            return default_input(s, metadata, ("extra",))

        got = build_scorer_input(sample("new", '{"extra": 1}'), fake_scorer(scorer_input=hook))
        self.assertEqual(seen, [("s1", {"extra": 1})])
        self.assertEqual(got["extra"], 1)

    def test_every_hook_starts_from_the_default_input(self) -> None:
        metadata = (
            '{"options": ["x"], "is_simple": true, "answer_type": "number", '
            '"question_type": "how many", "bbox": [0, 0, 1, 1], "points_target": [], '
            '"points_mask": [], "has_target": false, "l2_category": "c", "type": "t"}'
        )
        for name, module in SCORERS.items():
            with self.subTest(dataset=name):
                got = build_scorer_input(sample(name, metadata), module)
                base = default_input(sample(name, metadata), {"options": ["x"]})
                for key in ("question_id", "question", "answer", "options"):
                    self.assertEqual(got[key], base[key])
                self.assertEqual(list(got)[:4], list(base)[:4])

    def test_required_fields_raise_from_the_module(self) -> None:
        expected = {
            "tallyqa": "TallyQA sample s1 missing required metadata field: is_simple",
            "vqa-v2": "VQAv2 sample s1 missing required metadata: answer_type, question_type",
            "refcoco_testA": "RefCOCO sample s1 missing required metadata field: bbox",
            "pixmo_points_eval": "Pixmo sample s1 missing required metadata: "
            "['points_target', 'points_mask', 'has_target']",
        }
        for name, message in expected.items():
            with self.subTest(dataset=name), self.assertRaises(ValueError) as caught:
                build_scorer_input(sample(name, "{}"), SCORERS[name])
            self.assertEqual(str(caught.exception), message)
        # A module without required fields takes any metadata.
        self.assertIn("answer", build_scorer_input(sample("docvqa", "{}"), SCORERS["docvqa"]))
