"""The corrected scoring profile: each fix changes the samples it should and leaves the rest,
the reference profile is untouched, and the report says which fixes moved how many samples."""

from __future__ import annotations

import json
import shutil
import tempfile
import unittest
import warnings
from pathlib import Path
from typing import Any

from datbench_cli import DatBenchEvaluator, JudgeResponse, VLMResponse
from datbench_cli.benchmarks.datbench.evaluator import compute_report
from datbench_cli.scorers import SCORERS, ai2d, infovqa, mme_realworld
from tests.cli_helpers import ROOT, SAMPLE, run_cli

DOC = ROOT / "docs" / "known-defects.md"


def row(sample_id: str, dataset: str, answer: str, mode: str = "direct") -> dict[str, Any]:
    return {
        "id": sample_id,
        "image": None,
        "question": "q",
        "answer": answer,
        "eval_mode": mode,
        "metadata": "{}",
        "source_info": {"dataset": dataset},
    }


def score(rows: list[dict[str, Any]], outputs: dict[str, str], **kwargs: Any) -> Any:
    evaluator = DatBenchEvaluator(rows, "general")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compute_report(
            evaluator,
            [VLMResponse(i, o) for i, o in outputs.items()],
            [JudgeResponse(r["id"], "true", "true") for r in rows if r["eval_mode"] == "judge"],
            **kwargs,
        )


class Ai2dFixTests(unittest.TestCase):
    def test_changes_a_correct_letter(self) -> None:
        sample = {"answer": "B"}
        self.assertEqual(ai2d.score_sample(sample, "B")["score"], 0.0)
        details = ai2d.score_sample_corrected(sample, "B")
        self.assertEqual(details["score"], 1.0)
        self.assertEqual(details["corrections"], ["ai2d-letter-answer"])
        self.assertEqual(ai2d.score_sample_corrected({"answer": "b "}, "Answer: B")["score"], 1.0)

    def test_changes_index_zero(self) -> None:
        self.assertEqual(ai2d.score_sample({"answer": 0}, "A")["score"], 0.0)
        self.assertEqual(ai2d.score_sample_corrected({"answer": 0}, "A")["score"], 1.0)

    def test_leaves_alone(self) -> None:
        for sample, output in (({"answer": "B"}, "C"), ({"answer": 1}, "B"), ({"answer": "B"}, "")):
            with self.subTest(sample=sample, output=output):
                reference = ai2d.score_sample(sample, output)
                corrected = ai2d.score_sample_corrected(sample, output)
                self.assertEqual(corrected["score"], reference["score"])
                self.assertNotIn("corrections", corrected)


class InfoVqaFixTests(unittest.TestCase):
    SAMPLE = {"answer": "1,250", "all_answers": ["1,250", "twelve fifty"]}

    def test_changes_a_match_with_another_reference(self) -> None:
        self.assertEqual(infovqa.score_sample(self.SAMPLE, "twelve fifty")["score"], 0.0)
        details = infovqa.score_sample_corrected(self.SAMPLE, "twelve fifty")
        self.assertEqual(details["score"], 1.0)
        self.assertEqual(details["all_ground_truth_answers"], ["1,250", "twelve fifty"])
        self.assertEqual(details["corrections"], ["infovqa-all-answers"])

    def test_leaves_alone(self) -> None:
        for sample, output in (
            (self.SAMPLE, "1,250"),
            (self.SAMPLE, "nothing"),
            ({"answer": "x"}, "x"),
        ):
            with self.subTest(sample=sample, output=output):
                reference = infovqa.score_sample(sample, output)
                corrected = infovqa.score_sample_corrected(sample, output)
                self.assertEqual(corrected["score"], reference["score"])
                self.assertNotIn("corrections", corrected)


class MmeRealWorldFixTests(unittest.TestCase):
    def test_changes_a_boxed_letter_after_an_earlier_letter(self) -> None:
        sample = {"answer": "C"}
        for output in (
            "Option a looks right, but \\boxed{C}",
            "a or <|begin_of_box|> c <|end_of_box|>",
        ):
            with self.subTest(output=output):
                self.assertEqual(mme_realworld.score_sample(sample, output)["score"], 0.0)
                details = mme_realworld.score_sample_corrected(sample, output)
                self.assertEqual((details["score"], details["extracted_letter"]), (1.0, "C"))
                self.assertEqual(details["corrections"], ["mme-boxed-patterns"])

    def test_leaves_alone(self) -> None:
        sample = {"answer": "C"}
        for output in ("C", "\\boxed{C}", "The answer is B", "\\boxed{F} A"):
            with self.subTest(output=output):
                reference = mme_realworld.score_sample(sample, output)
                corrected = mme_realworld.score_sample_corrected(sample, output)
                self.assertEqual(corrected["score"], reference["score"])
                self.assertEqual(corrected["extracted_letter"], reference["extracted_letter"])
                self.assertNotIn("corrections", corrected)


class ProfileReportTests(unittest.TestCase):
    ROWS = [
        row("a1", "ai2d", "B"),
        row("a2", "ai2d", "B"),
        row("m1", "mme-realworld-ocr", "C"),
        row("d1", "docvqa", "7"),
        row("j1", "ai2d", "B", mode="judge"),
    ]
    OUTPUTS = {"a1": "B", "a2": "C", "m1": "a? no: \\boxed{C}", "d1": "7", "j1": "B"}

    def test_reference_is_the_default_and_records_nothing_new(self) -> None:
        default = score(self.ROWS, self.OUTPUTS)
        reference = score(self.ROWS, self.OUTPUTS, profile="reference")
        self.assertEqual(default.summary, reference.summary)
        self.assertNotIn("profile", reference.summary)
        self.assertNotIn("corrections", reference.summary)

    def test_corrected_report_counts_each_fix_per_dataset(self) -> None:
        reference = score(self.ROWS, self.OUTPUTS)
        corrected = score(self.ROWS, self.OUTPUTS, profile="corrected")
        summary = corrected.summary
        self.assertEqual(summary["profile"], "corrected")
        self.assertEqual(
            summary["corrections"],
            {"ai2d": {"ai2d-letter-answer": 1}, "mme-realworld-ocr": {"mme-boxed-patterns": 1}},
        )
        self.assertEqual(summary["total_samples"], reference.summary["total_samples"])
        self.assertEqual(reference.summary["overall_accuracy"], 2 / 5)  # d1 and the judged j1
        self.assertEqual(summary["overall_accuracy"], 4 / 5)
        # Judge-mode scoring and every count are the same in both profiles.
        for key in ("judge_accuracy", "judge_samples", "direct_samples", "missing_responses"):
            self.assertEqual(summary[key], reference.summary[key], key)
        self.assertEqual(
            summary["dataset_metrics"]["docvqa"], reference.summary["dataset_metrics"]["docvqa"]
        )

    def test_unknown_profile_is_refused(self) -> None:
        with self.assertRaisesRegex(ValueError, "unknown scoring profile 'fixed'"):
            score(self.ROWS, self.OUTPUTS, profile="fixed")

    def test_same_with_several_jobs(self) -> None:
        rows = [row(f"a{i}", "ai2d", "B") for i in range(40)]
        outputs = {f"a{i}": "B" for i in range(40)}
        one = score(rows, outputs, profile="corrected", jobs=1)
        two = score(rows, outputs, profile="corrected", jobs=2)
        self.assertEqual(one.summary, two.summary)
        self.assertEqual(one.summary["corrections"], {"ai2d": {"ai2d-letter-answer": 40}})


class CorrectionsDocumentedTests(unittest.TestCase):
    def test_every_fix_is_named_in_the_doc_and_marked_in_code(self) -> None:
        text = DOC.read_text(encoding="utf-8")
        modules = {m for m in SCORERS.values() if getattr(m, "CORRECTIONS", None)}
        self.assertGreaterEqual(len(modules), 2)
        for module in modules:
            self.assertTrue(hasattr(module, "score_sample_corrected"), module.__name__)
            source = Path(module.__file__ or "").read_text(encoding="utf-8")
            for fix in module.CORRECTIONS:
                with self.subTest(fix=fix):
                    self.assertIn(f"`{fix}`", text)
                    self.assertIn(f"# Corrected ({fix}", source)


class ScoreCommandTests(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp)
        self.run = self.tmp / "run"
        result = run_cli("export-tasks", "all", "--source", str(SAMPLE), "--dir", str(self.run))
        self.assertEqual(result.exit_code, 0, result.stderr)
        shutil.copy(SAMPLE / "responses.jsonl", self.run / "responses.jsonl")

    def report(self, *args: str) -> dict[str, Any]:
        result = run_cli("score", "--dir", str(self.run), "--quiet", *args)
        self.assertEqual(result.exit_code, 0, result.stderr)
        return json.loads((self.run / "report.json").read_text(encoding="utf-8"))

    def test_profiles_on_the_sample_data(self) -> None:
        reference = self.report()
        self.assertEqual(self.report("--profile", "reference"), reference)
        corrected = self.report("--profile", "corrected")["summary"]
        self.assertEqual(corrected["profile"], "corrected")
        self.assertIn("ai2d", corrected["corrections"])
        self.assertGreater(corrected["corrections"]["ai2d"]["ai2d-letter-answer"], 0)
        self.assertGreater(corrected["overall_accuracy"], reference["summary"]["overall_accuracy"])

    def test_an_unknown_profile_is_a_usage_error(self) -> None:
        result = run_cli("score", "--dir", str(self.run), "--profile", "fixed")
        self.assertEqual(result.exit_code, 2)
        self.assertIn("--profile must be reference or corrected", result.stderr)
