"""ARS/APR: the worked example of spec §5 (tasks A-E), per task, overall and per group."""

from __future__ import annotations

import io
import unittest
import warnings

from datbench_cli.benchmarks.datbench.schema import JudgeResponse, VLMResponse
from datbench_cli.benchmarks.vistoolbench.ars_apr import RubricOutcome, task_result
from datbench_cli.benchmarks.vistoolbench.evaluator import VisToolBenchEvaluator
from datbench_cli.benchmarks.vistoolbench.model import Rubric, Task, Turn
from tests.vtb_support import SAMPLE_JUDGE, SAMPLE_RESPONSES, read_jsonl, sample_rows

A, B, C, D, E = (
    "vtb-a-medical-001",
    "vtb-b-maths-002",
    "finance/vtb-c-003",
    "vtb-d-sports-004",
    "vtb-e-generalist-005",
)
EXPECTED_TASKS = {
    A: (0.8, 1),
    B: (0.6666666666666666, 0),
    C: (0.42857142857142855, 0),
    D: (0.5, 0),
    E: (0.0, 1),
}


def worked_example_report(**kwargs: object) -> dict:
    evaluator = VisToolBenchEvaluator(sample_rows(), warn=lambda _: None)
    return evaluator.compute_metrics(
        read_jsonl(SAMPLE_RESPONSES), read_jsonl(SAMPLE_JUDGE), **kwargs
    )


class WorkedExampleTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.report = worked_example_report()
        cls.summary = cls.report["summary"]
        cls.by_id = {r["id"]: r for r in cls.report["results"]}

    def test_per_task_ars_and_apr(self) -> None:
        self.assertEqual(list(self.by_id), [A, B, C, D, E])  # F has no answer: not scored
        for task_id, (ars, apr) in EXPECTED_TASKS.items():
            with self.subTest(task=task_id):
                self.assertEqual(self.by_id[task_id]["ars"], ars)
                self.assertEqual(self.by_id[task_id]["apr"], apr)

    def test_weights_and_statuses(self) -> None:
        self.assertEqual((self.by_id[A]["met_weight"], self.by_id[A]["total_weight"]), (8, 10))
        self.assertEqual((self.by_id[B]["met_weight"], self.by_id[B]["total_weight"]), (10.0, 15.0))
        turns = self.by_id[B]["turns"]
        self.assertEqual(
            [(t["met_weight"], t["total_weight"]) for t in turns], [(5, 6), (5.0, 9.0)]
        )
        c_statuses = [r["status"] for t in self.by_id[C]["turns"] for r in t["rubrics"]]
        self.assertEqual(c_statuses, ["unparsed", "met"])
        d_statuses = [r["status"] for r in self.by_id[D]["turns"][0]["rubrics"]]
        self.assertEqual(d_statuses, ["missing", "met"])
        self.assertEqual(self.by_id[E]["turns"][0]["rubrics"], [])

    def test_overall(self) -> None:
        self.assertEqual(self.summary["num_tasks"], 5)
        self.assertEqual(self.summary["apr"], 0.4)
        self.assertEqual(self.summary["ars"], 0.4790476190476191)

    def test_by_turncase(self) -> None:
        self.assertEqual(
            self.summary["by_turncase"],
            {
                "multi-turn": {"n": 2, "apr": 0.0, "ars": 0.5476190476190476},
                "single-turn": {"n": 3, "apr": 0.6666666666666666, "ars": 0.43333333333333335},
            },
        )

    def test_by_domain_folds_stem(self) -> None:
        domains = self.summary["by_domain"]
        self.assertEqual(domains["STEM"], {"n": 1, "apr": 0.0, "ars": 0.6666666666666666})
        self.assertNotIn("maths", domains)
        self.assertIn("maths", self.summary["by_prompt_category"])
        self.assertEqual(self.by_id[B]["domain"], "STEM")

    def test_official_summary_shape(self) -> None:
        official = self.summary["official_summary"]
        self.assertEqual(official["overall_accuracy"], 0.4)
        self.assertEqual(official["overall_score"], 0.4790476190476191)
        self.assertEqual(official["total_examples"], 5)
        self.assertEqual(
            official["domain_results"]["STEM"], {"scores": 0.6666666666666666, "accuracies": 0.0}
        )
        self.assertEqual(
            official["eval_focus_results"]["region_switch_qa"], {"scores": 0.8, "accuracies": 1.0}
        )

    def test_critical_flag_diagnostic(self) -> None:
        # A fails under the critical rule (r2 weight 2, critical yes, not met); E passes.
        self.assertEqual(self.summary["diagnostics"]["apr_using_critical_flag"], 0.2)

    def test_judge_accounting(self) -> None:
        self.assertEqual(
            self.summary["judge"],
            {
                "judge_tasks": 12,
                "met": 7,
                "not_met": 3,
                "unparsed": 1,
                "missing": 1,
                "missing_answer": 0,
                "stale": 0,
                "errored": 0,
                "refused": 0,
                "unknown_responses": 0,
                "unanswered_responses": 0,
                "duplicate_responses": 0,
                "truncated_responses": 0,
                "tasks_with_unjudged_rubrics": 2,
            },
        )

    def test_turncase_filter_reproduces_separate_runs(self) -> None:
        single = worked_example_report(turncase="single-turn")["summary"]
        self.assertEqual(
            (single["num_tasks"], single["apr"], single["ars"]),
            (3, 0.6666666666666666, 0.43333333333333335),
        )
        multi = worked_example_report(turncase="multi-turn")["summary"]
        self.assertEqual(
            (multi["num_tasks"], multi["apr"], multi["ars"]), (2, 0.0, 0.5476190476190476)
        )

    def test_result_rubric_detail(self) -> None:
        first = self.by_id[A]["turns"][0]["rubrics"][0]
        self.assertEqual(
            first,
            {
                "rubric_id": "r1",
                "weight": 5,
                "critical": "yes",
                "counts_for_apr": True,
                "status": "met",
                "explanation": "Upper-left is stated.",
                "raw_judge_output": '{"explanation": "Upper-left is stated.", "judge_result": "Met"}',
            },
        )
        missing = self.by_id[D]["turns"][0]["rubrics"][0]
        self.assertEqual((missing["explanation"], missing["raw_judge_output"]), (None, None))


class RuleTests(unittest.TestCase):
    def test_pooled_not_per_turn_mean(self) -> None:
        task = Task(
            "t",
            "multi-turn",
            2,
            "maths",
            "f",
            [
                Turn(0, "p", "g", [Rubric("a", "", 1), Rubric("b", "", 1)]),
                Turn(1, "p", "g", [Rubric("c", "", 8)]),
            ],
        )
        outcomes = [[RubricOutcome("met"), RubricOutcome("not_met")], [RubricOutcome("met")]]
        self.assertEqual(task_result(task, outcomes)["ars"], 0.9)

    def test_weight_four_not_met_fails_apr_and_three_does_not(self) -> None:
        def apr(weight: int, status: str) -> int:
            task = Task(
                "t", "single-turn", 1, "x", "y", [Turn(0, "p", "g", [Rubric("r", "", weight)])]
            )
            return task_result(task, [[RubricOutcome(status)]])["apr"]

        self.assertEqual(apr(4, "not_met"), 0)
        self.assertEqual(apr(3, "not_met"), 1)
        for status in ("unparsed", "missing", "missing_answer"):
            self.assertEqual(apr(5, status), 0)

    def test_no_rubrics_gives_zero_ars_and_passing_apr(self) -> None:
        task = Task("t", "single-turn", 1, "x", "y", [Turn(0, "p", "g", [])])
        result = task_result(task, [[]])
        self.assertEqual((result["ars"], result["apr"], result["total_weight"]), (0.0, 1, 0))


class PythonApiTests(unittest.TestCase):
    def test_dataclass_responses_and_default_warnings(self) -> None:
        evaluator = VisToolBenchEvaluator(sample_rows())
        responses = [VLMResponse(f"{A}::0", "raw", parsed_answer="")]
        judges = [
            JudgeResponse(f"{A}::0::r1", "", verdict="Met"),
            JudgeResponse(f"{A}::0::r2", "Not Met"),
            JudgeResponse(f"{A}::0::r3", '{"judge_result": "Met"}'),
        ]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            report = evaluator.compute_metrics(responses, judges)
        self.assertEqual([r["id"] for r in report["results"]], [A])
        self.assertEqual(report["results"][0]["ars"], 0.8)
        self.assertTrue(any("no answered turn" in str(w.message) for w in caught))

    def test_default_warnings_point_at_the_callers_line(self) -> None:
        # As DatBenchEvaluator's do: a warning names the caller's file and line (so it can be
        # found, and filtered by module), not a line inside the library.
        rows = sample_rows()
        rows[1]["num_turns"] = 7  # a row-reading warning
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            evaluator = VisToolBenchEvaluator(rows)
            evaluator.create_judge_tasks(read_jsonl(SAMPLE_RESPONSES))
            evaluator.compute_metrics(
                read_jsonl(SAMPLE_RESPONSES) + [{"id": "nope::0", "raw_output": ""}], []
            )
        self.assertGreaterEqual(len(caught), 5)
        self.assertEqual({w.filename for w in caught}, {__file__})

    def test_inference_tasks_carry_pil_images(self) -> None:
        from PIL import Image

        rows = sample_rows()
        tasks = VisToolBenchEvaluator(rows, warn=lambda _: None).get_inference_tasks()
        images = tasks[0]["turns"][0]["images"]
        self.assertEqual(len(images), len(rows[0]["images"]))
        for image, cell in zip(images, rows[0]["images"], strict=True):
            self.assertIsInstance(image, Image.Image)
            expected = Image.open(io.BytesIO(cell["bytes"]))
            self.assertEqual(image.size, expected.size)
            self.assertEqual(image.tobytes(), expected.tobytes())
        self.assertEqual(tasks[1]["turns"][1]["images"], [])


if __name__ == "__main__":
    unittest.main()
