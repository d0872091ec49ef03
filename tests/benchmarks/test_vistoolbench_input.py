"""Bad input: one clear InputError naming task/turn/rubric or file:line (exit 2)."""

from __future__ import annotations

import json
import unittest
from types import SimpleNamespace

from datbench_cli.benchmarks.vistoolbench import stages as pipeline
from datbench_cli.benchmarks.vistoolbench.evaluator import VisToolBenchEvaluator
from datbench_cli.benchmarks.vistoolbench.rows import iter_tasks, parse_weight
from datbench_cli.errors import InputError
from datbench_cli.files.rundir import MANIFEST, REFERENCES, RESPONSES, TASKS
from tests.vtb_support import (
    SAMPLE_JUDGE,
    SAMPLE_RESPONSES,
    TempDirCase,
    rubrics_of,
    sample_rows,
    set_rubrics,
    write_jsonl,
)

B = "vtb-b-maths-002"


def evaluate_rows(rows: list[dict]) -> SimpleNamespace:
    """The rows' tasks as ``export-tasks`` builds them (a bad row: an InputError, exit 2; the
    library's evaluator gives it as a ValueError naming ``hf_dataset``)."""
    return SimpleNamespace(tasks=list(iter_tasks(rows)))


class RubricInputTests(unittest.TestCase):
    def test_unparsable_rubric_json_names_task_and_turn(self) -> None:
        rows = sample_rows()
        rows[1]["rubrics_by_turn"][1] = '{"r3": {"description": "x", "weight": 4,'
        with self.assertRaises(InputError) as caught:
            evaluate_rows(rows)
        message = str(caught.exception)
        self.assertIn(f"task '{B}', turn 1", message)
        self.assertIn("not valid JSON", message)

    def test_non_object_rubrics(self) -> None:
        rows = sample_rows()
        rows[1]["rubrics_by_turn"][0] = "[1, 2]"
        with self.assertRaisesRegex(InputError, f"task '{B}', turn 0: .*JSON object"):
            evaluate_rows(rows)

    def test_empty_null_and_empty_object_mean_no_rubrics(self) -> None:
        for entry in ("", "{}", "null", "  "):
            rows = sample_rows()[1:2]
            rows[0]["rubrics_by_turn"][0] = entry
            with self.subTest(entry=entry):
                task = evaluate_rows(rows).tasks[0]
                self.assertEqual(task.turns[0].rubrics, [])

    def test_bad_weights_name_task_turn_and_rubric(self) -> None:
        for weight in (True, None, "abc", "", [4], {"w": 1}, "5 points"):
            rows = sample_rows()
            rubrics = rubrics_of(rows[1], 1)
            rubrics["r4"]["weight"] = weight
            set_rubrics(rows[1], 1, rubrics)
            with self.subTest(weight=weight), self.assertRaises(InputError) as caught:
                evaluate_rows(rows)
            self.assertIn(f"task '{B}', turn 1, rubric 'r4'", str(caught.exception))
            self.assertIn("weight", str(caught.exception))

    def test_missing_weight(self) -> None:
        rows = sample_rows()
        rubrics = rubrics_of(rows[1], 0)
        del rubrics["r2"]["weight"]
        set_rubrics(rows[1], 0, rubrics)
        with self.assertRaisesRegex(InputError, f"task '{B}', turn 0, rubric 'r2': .*no weight"):
            evaluate_rows(rows)

    def test_numeric_weights(self) -> None:
        where = "task 't', turn 0, rubric 'r'"
        self.assertEqual(parse_weight("5", where), 5)
        self.assertIsInstance(parse_weight("5", where), int)
        self.assertEqual(parse_weight(" 4.0 ", where), 4.0)
        self.assertEqual(parse_weight(2.5, where), 2.5)
        self.assertEqual(parse_weight(-1, where), -1)  # no range check
        with self.assertRaises(InputError):
            parse_weight("1e999", where)

    def test_rubric_must_be_object_with_description(self) -> None:
        rows = sample_rows()
        set_rubrics(rows[1], 0, {"r1": "weight 5"})
        with self.assertRaisesRegex(InputError, "rubric 'r1': a rubric must be a JSON object"):
            evaluate_rows(rows)
        rows = sample_rows()
        set_rubrics(rows[1], 0, {"r1": {"weight": 5}})
        with self.assertRaisesRegex(InputError, "rubric 'r1': rubric has no description"):
            evaluate_rows(rows)

    def test_duplicate_task_ids(self) -> None:
        rows = sample_rows()
        rows[3]["id"] = rows[0]["id"]
        with self.assertRaisesRegex(InputError, "already used"):
            evaluate_rows(rows)

    def test_task_id_equal_to_another_turn_id(self) -> None:
        rows = sample_rows()
        rows[3]["id"] = f"{B}::1"
        with self.assertRaisesRegex(InputError, "already used"):
            evaluate_rows(rows)

    def test_a_very_long_task_id_is_named_cut(self) -> None:
        """A 10,000-character id was repeated whole (three times) in the error line."""
        rows = sample_rows()
        rows[2]["id"] = rows[3]["id"] = "z" * 10_000
        with self.assertRaisesRegex(InputError, "already used") as caught:
            evaluate_rows(rows)
        self.assertLess(len(str(caught.exception)), 800)
        self.assertIn("(10002 characters)", str(caught.exception))
        rows = sample_rows()
        rows[2]["id"] = "z" * 10_000
        rows[2]["turn_prompts"] = []
        with self.assertRaisesRegex(InputError, "turn_prompts") as caught:
            evaluate_rows(rows)
        self.assertLess(len(str(caught.exception)), 300)

    def test_missing_prompts(self) -> None:
        rows = sample_rows()
        rows[2]["turn_prompts"] = []
        with self.assertRaisesRegex(InputError, "turn_prompts"):
            evaluate_rows(rows)


class PythonCallerInputTests(unittest.TestCase):
    """Bad items of a Python caller's lists: a TypeError or ValueError naming the item, not
    the command line's InputError ("not a response: str", "each line needs an id")."""

    def test_items_are_named_by_argument_and_position(self) -> None:
        evaluator = VisToolBenchEvaluator(sample_rows(), warn=lambda _: None)
        good = {"id": f"{B}::0", "raw_output": "24"}
        for responses, judges, kind, message in (
            ([good, "24"], [], TypeError, "responses[1] must be a VLMResponse or a response"),
            (
                [good, {"id": 7, "raw_output": "x"}],
                [],
                ValueError,
                'responses[1]: each line needs an "id"',
            ),
            (
                [{"id": f"{B}::0", "raw_output": 24}],
                [],
                ValueError,
                '"raw_output" must be a string',
            ),
            (
                [good],
                [{"id": f"{B}::0::r1", "raw_judge_output": "Met"}, 3],
                TypeError,
                "judge_responses[1] must be a JudgeResponse or a judge",
            ),
        ):
            with self.subTest(message), self.assertRaises(kind) as caught:
                evaluator.compute_metrics(responses, judges)
            self.assertIn(message, str(caught.exception))
            self.assertNotIsInstance(caught.exception, InputError)

    def test_a_limit_that_keeps_no_task_is_refused(self) -> None:
        # limit=0 (or -1) gave an evaluator of no task and a report of nothing, without a
        # word; the command line refuses --limit 0.
        for limit in (0, -1, True, "2", 1.5):
            with self.subTest(limit=limit), self.assertRaises(ValueError) as caught:
                VisToolBenchEvaluator(sample_rows(), limit=limit)  # type: ignore[arg-type]
            self.assertIn("limit must be a positive integer", str(caught.exception))
        self.assertEqual(len(VisToolBenchEvaluator(sample_rows(), limit=2).tasks), 2)

    def test_a_lone_surrogate_is_refused_before_the_report_cannot_be_saved(self) -> None:
        # The judge's text went into the report, whose to_json() then raised
        # "TypeError: str is not valid UTF-8".
        evaluator = VisToolBenchEvaluator(sample_rows(), warn=lambda _: None)
        good = {"id": f"{B}::0", "raw_output": "24"}
        judge = {"id": f"{B}::0::r1", "raw_judge_output": "\udcff Met"}
        with self.assertRaises(ValueError) as caught:
            evaluator.compute_metrics([good], [judge])
        self.assertIn(
            'judge_responses[0]: "raw_judge_output" holds a lone surrogate', str(caught.exception)
        )


class ExportInputTests(TempDirCase):
    def test_bad_rubric_leaves_an_earlier_export_intact(self) -> None:
        run, _, _ = self.export()
        before = {name: run.path(name).read_bytes() for name in (MANIFEST, TASKS, REFERENCES)}
        rows = sample_rows()
        rows[4]["rubrics_by_turn"][0] = "{not json"
        bad = self.dataset_dir(rows)
        with self.assertRaisesRegex(InputError, "task 'vtb-e-generalist-005', turn 0"):
            self.export(bad)
        after = {name: run.path(name).read_bytes() for name in before}
        self.assertEqual(after, before)

    def test_dataset_without_prompts_column(self) -> None:
        from datasets import Dataset

        directory = self.tmp / "cols"
        directory.mkdir()
        Dataset.from_list([{"id": "x"}]).to_parquet(str(directory / "test.parquet"))
        with self.assertRaisesRegex(InputError, "turn_prompts"):
            self.export(directory)


class RunFileInputTests(TempDirCase):
    def setUp(self) -> None:
        super().setUp()
        self.run, _, _ = self.export()

    def score(self, responses=SAMPLE_RESPONSES, judge=SAMPLE_JUDGE, **kwargs) -> dict:
        return pipeline.score(
            self.run, responses, judge, strict_judge=False, turncase=None, **kwargs
        )

    def test_malformed_response_line_names_file_and_line(self) -> None:
        path = self.tmp / RESPONSES
        path.write_text('{"id": "vtb-d-sports-004", "raw_output": "x"}\n{oops\n')
        with self.assertRaises(InputError) as caught:
            self.score(path)
        self.assertEqual((caught.exception.path, caught.exception.line), (str(path), 2))

    def test_response_with_wrong_types(self) -> None:
        cases = [
            {"id": "vtb-d-sports-004", "raw_output": 5},
            {"id": "", "raw_output": "x"},
            {"id": "vtb-d-sports-004"},
            {"id": "finance/vtb-c-003", "turns": "x"},
            {"id": "finance/vtb-c-003", "turns": [{"index": "0", "raw_output": "x"}]},
        ]
        for number, line in enumerate(cases):
            path = write_jsonl(self.tmp / f"r{number}.jsonl", [line])
            with self.subTest(line=line), self.assertRaises(InputError) as caught:
                self.score(path)
            self.assertEqual(caught.exception.line, 1)

    def test_judge_line_without_id(self) -> None:
        path = write_jsonl(self.tmp / "j.jsonl", [{"raw_judge_output": "Met"}])
        with self.assertRaisesRegex(InputError, r"j\.jsonl:1: .*\"id\""):
            self.score(judge=path)
        path = write_jsonl(
            self.tmp / "j2.jsonl", [{"task_id": "a", "turn_index": "0", "rubric_id": "r"}]
        )
        with self.assertRaisesRegex(InputError, "turn_index"):
            self.score(judge=path)

    def test_changed_references_are_refused(self) -> None:
        path = self.run.path(REFERENCES)
        path.write_text(path.read_text().replace('"weight":5', '"weight":1', 1))
        with self.assertRaisesRegex(InputError, "does not match the manifest"):
            self.score()

    def test_datbench_run_directory_is_refused(self) -> None:
        manifest = json.loads(self.run.path(MANIFEST).read_text())
        manifest["benchmark"] = "datbench"
        self.run.path(MANIFEST).write_text(json.dumps(manifest))
        with self.assertRaisesRegex(InputError, "not 'vistoolbench'"):
            self.score()

    def test_missing_response_file(self) -> None:
        with self.assertRaisesRegex(InputError, "file not found"):
            self.score(self.tmp / "nope.jsonl")


if __name__ == "__main__":
    unittest.main()
