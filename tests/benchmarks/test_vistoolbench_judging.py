"""Judge tasks (§2), the judge prompt (§2.3), response matching and judge accounting (§3-4.5)."""

from __future__ import annotations

import unittest

from datbench_cli.batch.digests import response_digest
from datbench_cli.benchmarks.vistoolbench import stages as pipeline
from datbench_cli.benchmarks.vistoolbench.evaluator import VisToolBenchEvaluator
from datbench_cli.benchmarks.vistoolbench.prompt import render_judge_prompt
from datbench_cli.errors import StrictJudgeError
from datbench_cli.files.rundir import JUDGE_TASKS
from tests.vtb_support import (
    SAMPLE_JUDGE,
    SAMPLE_RESPONSES,
    TempDirCase,
    read_jsonl,
    sample_rows,
    write_jsonl,
)

A, B, C, D, E, F = (
    "vtb-a-medical-001",
    "vtb-b-maths-002",
    "finance/vtb-c-003",
    "vtb-d-sports-004",
    "vtb-e-generalist-005",
    "vtb-f-physics-006",
)


class PromptTests(unittest.TestCase):
    INPUTS = (
        "Q: what is {x}? Use {question} literally.",
        "Golden: 42 \\n with {golden_answer} and %s",
        "Mentions the value 42 (critical detail).",
        "Model says: {rubric} 41\n\nsecond paragraph",
    )

    def test_four_inputs_verbatim_and_in_order(self) -> None:
        prompt = render_judge_prompt(*self.INPUTS)
        positions = [prompt.find(text) for text in self.INPUTS]
        self.assertTrue(all(p >= 0 for p in positions), positions)
        self.assertEqual(positions, sorted(positions))
        for text in self.INPUTS:
            self.assertEqual(prompt.count(text), 1)

    def test_asks_for_json_with_met_or_not_met(self) -> None:
        prompt = render_judge_prompt("q", "g", "c", "a")
        for part in ('"explanation"', '"judge_result"', '"Met"', '"Not Met"'):
            self.assertIn(part, prompt)


class JudgeTaskTests(TempDirCase):
    def setUp(self) -> None:
        super().setUp()
        self.run, _, _ = self.export()
        self.warnings: list[str] = []
        out = self.run.path(JUDGE_TASKS)
        self.count = pipeline.make_judge_tasks(
            self.run, SAMPLE_RESPONSES, out, self.warnings.append
        ).count
        self.lines = read_jsonl(out)

    def test_one_line_per_rubric_of_answered_turns_in_order(self) -> None:
        self.assertEqual(self.count, 12)
        ids = [line["id"] for line in self.lines]
        self.assertEqual(ids[:3], [f"{A}::0::r1", f"{A}::0::r2", f"{A}::0::r3"])
        self.assertFalse(any(i.startswith(F) or i.startswith(E) for i in ids))
        sample_order = [
            line.get("id")
            or line.get("custom_id")
            or f"{line['task_id']}::{line['turn_index']}::{line['rubric_id']}"
            for line in read_jsonl(SAMPLE_JUDGE)
        ]
        self.assertEqual([i for i in ids if i != f"{D}::0::r1"], sample_order)
        self.assertTrue(any("1 of 6 task(s) have no answered turn" in w for w in self.warnings))

    def test_line_fields(self) -> None:
        line = next(x for x in self.lines if x["id"] == f"{B}::1::r3")
        rows = {r["id"]: r for r in sample_rows()}
        self.assertEqual(
            {k: v for k, v in line.items() if k != "judge_prompt"},
            {
                "id": f"{B}::1::r3",
                "task_id": B,
                "turn_index": 1,
                "rubric_id": "r3",
                "question": rows[B]["turn_prompts"][1],
                "golden_answer": rows[B]["turn_golden_answers"][1],
                "rubric": "Gives an area of 48 square units.",
                "vlm_response": "The area becomes 50 square units.",
                "weight": 4.0,
                "critical": "yes",
                "counts_for_apr": True,
                "response_digest": response_digest("The area becomes 50 square units."),
            },
        )
        self.assertEqual(
            line["judge_prompt"],
            render_judge_prompt(
                line["question"], line["golden_answer"], line["rubric"], line["vlm_response"]
            ),
        )

    def test_prompt_has_no_bookkeeping_and_no_earlier_turns(self) -> None:
        for line in self.lines:
            prompt = line["judge_prompt"].lower()
            with self.subTest(id=line["id"]):
                self.assertNotIn("weight", prompt)
                self.assertNotIn("critical", prompt)
                self.assertNotIn("objective", prompt)
        line = next(x for x in self.lines if x["id"] == f"{B}::1::r3")
        self.assertNotIn(sample_rows()[1]["turn_prompts"][0], line["judge_prompt"])

    def test_parsed_answer_wins_and_per_task_lines_work(self) -> None:
        line = next(x for x in self.lines if x["id"] == f"{C}::1::r2")
        self.assertEqual(line["vlm_response"], "Growth: 5 percent.")
        line = next(x for x in self.lines if x["id"] == f"{C}::0::r1")
        self.assertEqual(line["vlm_response"], "Q3 revenue was 4.5 million.")


class ResponseMatchingTests(unittest.TestCase):
    def setUp(self) -> None:
        self.warnings: list[str] = []
        self.evaluator = VisToolBenchEvaluator(sample_rows(), warn=self.warnings.append)

    def answers(self, lines: list[dict]) -> dict:
        return self.evaluator.collect_answers(lines).by_turn

    def test_a_value_outside_the_choices_is_a_value_error(self) -> None:
        # Raised as the CLI's UsageError alone, a library caller's `except ValueError` missed it.
        with self.assertRaises(ValueError) as caught:
            VisToolBenchEvaluator(sample_rows(), context="models")
        self.assertIn("context must be one of", str(caught.exception))
        with self.assertRaises(ValueError):
            self.evaluator.compute_metrics([], None, turncase="single")
        # Each was "'NoneType' (or 'int') object is not iterable", naming no argument.
        for bad in (None, 5, "rows", {"id": "x"}):
            with self.assertRaisesRegex(TypeError, "hf_dataset must be VisualToolBench's rows"):
                VisToolBenchEvaluator(bad)
        for bad in (None, 5):
            with self.assertRaisesRegex(TypeError, "^responses must be an iterable"):
                self.evaluator.compute_metrics(bad, [])
            with self.assertRaisesRegex(TypeError, "^responses must be an iterable"):
                self.evaluator.create_judge_tasks(bad)
        with self.assertRaisesRegex(TypeError, "^judge_responses must be an iterable"):
            self.evaluator.compute_metrics([], 5)

    def test_shapes(self) -> None:
        got = self.answers(
            [
                {"id": D, "raw_output": "bare id of a one-turn task"},
                {"id": f"{B}::1", "raw_output": "raw", "parsed_answer": ""},
                {
                    "id": C,
                    "turns": [
                        {"index": 1, "raw_output": "second"},
                        {"index": 0, "raw_output": None},
                    ],
                },
                {"custom_id": f"{A}::0", "error": {"message": "rate limited"}},
                {"id": f"{E}::0", "raw_output": ""},
            ]
        )
        self.assertEqual(
            got, {(D, 0): "bare id of a one-turn task", (B, 1): "raw", (C, 1): "second", (E, 0): ""}
        )
        self.assertTrue(any("errored" in w for w in self.warnings))

    def test_turns_items_are_read_as_native_lines(self) -> None:
        # A per-task line's turn object with an "error" is an errored turn (not missing), and
        # its finish_reason classifies the answer, as on a native line of its own.
        answers = self.evaluator.collect_answers(
            [
                {
                    "id": C,
                    "turns": [
                        {"raw_output": None, "error": {"message": "rate limited"}},
                        {"raw_output": "cut", "finish_reason": "length"},
                    ],
                }
            ]
        )
        self.assertEqual(answers.by_turn, {(C, 1): "cut"})
        self.assertEqual((answers.status((C, 0)), answers.status((C, 1))), ("errored", "truncated"))
        self.assertEqual(answers.errored_turns, {(C, 0)})
        self.assertTrue(any("were errored" in w for w in self.warnings))

    def test_unknown_ids_and_bare_multi_turn_ids_are_ignored(self) -> None:
        answers = self.evaluator.collect_answers(
            [{"id": "nope::0", "raw_output": "x"}, {"id": B, "raw_output": "x"}]
        )
        self.assertEqual((answers.by_turn, answers.unknown_lines), ({}, 2))
        self.assertTrue(any("bare task ids of multi-turn" in w for w in self.warnings))

    def test_last_line_wins(self) -> None:
        answers = self.evaluator.collect_answers(
            [
                {"id": f"{A}::0", "raw_output": "first"},
                {"id": f"{A}::0", "raw_output": "second"},
                {"id": f"{D}::0", "raw_output": "x"},
                {"id": D, "raw_output": None},
            ]
        )
        self.assertEqual(answers.by_turn, {(A, 0): "second"})
        self.assertEqual(answers.duplicate_lines, 2)
        self.assertTrue(any("the last one is used" in w for w in self.warnings))


class AccountingTests(TempDirCase):
    def setUp(self) -> None:
        super().setUp()
        self.run, _, _ = self.export()
        self.warnings: list[str] = []

    def score(
        self, responses=SAMPLE_RESPONSES, judge=SAMPLE_JUDGE, strict=False, turncase=None
    ) -> dict:
        return pipeline.score(
            self.run,
            responses,
            judge,
            strict_judge=strict,
            turncase=turncase,
            warn=self.warnings.append,
        )

    def test_unknown_duplicate_and_missing_answer_counts(self) -> None:
        judge = read_jsonl(SAMPLE_JUDGE)
        judge.append(
            {"id": f"{A}::0::r1", "raw_judge_output": "Not Met"}
        )  # replaces an earlier line
        judge.append({"id": "nope::0::r1", "raw_judge_output": "Met"})  # unknown id
        judge.append({"id": f"{F}::0::r1", "raw_judge_output": "Met"})  # unanswered task: unknown
        responses = read_jsonl(SAMPLE_RESPONSES)[:2]  # A::0 and B::0 only; B::1 is missing
        report = self.score(
            write_jsonl(self.tmp / "r.jsonl", responses), write_jsonl(self.tmp / "j.jsonl", judge)
        )
        judge_summary = report["summary"]["judge"]
        self.assertEqual(
            judge_summary,
            {
                "judge_tasks": 5,
                "met": 2,
                "not_met": 3,
                "unparsed": 0,
                "missing": 0,
                "missing_answer": 3,
                "stale": 0,
                "errored": 0,
                "refused": 0,
                "unknown_responses": 8,  # 2 above + 6 sample lines of C, D and B::1 (no answer)
                "unanswered_responses": 7,  # all of them but nope's: their turns have no answer
                "duplicate_responses": 1,
                "truncated_responses": 0,
                "tasks_with_unjudged_rubrics": 1,
            },
        )
        b = next(r for r in report["results"] if r["id"] == B)
        self.assertEqual([r["status"] for r in b["turns"][1]["rubrics"]], ["missing_answer"] * 3)
        self.assertEqual((b["ars"], b["apr"]), (5 / 15, 0))  # missing answers stay in the total
        self.assertEqual(report["summary"]["num_tasks"], 2)
        self.assertTrue(any("missing_answer" in w for w in self.warnings))
        self.assertIn(
            "8 judge line(s) match no judge task and were ignored (7 of them for rubrics of "
            "turns without an answer)",
            self.warnings,
        )

    def test_task_key_line_for_an_unanswered_turn_is_unknown(self) -> None:
        # A task_id/turn_index/rubric_id line for an unanswered turn has no judge task either.
        judge = [{"task_id": B, "turn_index": 1, "rubric_id": "r5", "raw_judge_output": "Met"}]
        responses = [{"id": f"{B}::0", "raw_output": "x"}]
        report = self.score(
            write_jsonl(self.tmp / "r.jsonl", responses), write_jsonl(self.tmp / "j.jsonl", judge)
        )
        self.assertEqual(report["summary"]["judge"]["unknown_responses"], 1)
        self.assertEqual(report["summary"]["judge"]["missing"], 2)

    def test_a_native_line_with_an_error_is_errored_and_replaces_no_verdict(self) -> None:
        # A custom judge loop's failed call, as DatBench's native judge lines record it.
        judge = read_jsonl(SAMPLE_JUDGE)  # A::0::r1 is Met; D::0::r1 has no line
        judge.append({"id": f"{A}::0::r1", "raw_judge_output": "", "error": "timed out"})
        judge.append({"id": f"{D}::0::r1", "raw_judge_output": None, "error": {"message": "x"}})
        report = self.score(judge=write_jsonl(self.tmp / "j.jsonl", judge))
        judge_summary = report["summary"]["judge"]
        self.assertEqual(
            {k: judge_summary[k] for k in ("met", "unparsed", "missing", "errored")},
            {"met": 7, "unparsed": 1, "missing": 0, "errored": 1},
        )
        self.assertEqual(judge_summary["duplicate_responses"], 0)

    def test_no_judge_file(self) -> None:
        report = self.score(judge=None)
        self.assertEqual(report["summary"]["judge"]["missing"], 12)
        self.assertEqual(report["summary"]["ars"], 0.0)
        self.assertTrue(any("no judge response" in w for w in self.warnings))

    def test_strict_judge_fails_with_counts_and_ids(self) -> None:
        with self.assertRaises(StrictJudgeError) as caught:
            self.score(strict=True)
        message = str(caught.exception)
        self.assertIsInstance(caught.exception, ValueError)
        self.assertNotIn("--strict-judge", message)  # a library error names no CLI option
        self.assertIn("1 unparsed, 1 missing, 0 missing_answer", message)
        self.assertIn(f"{C}::0::r1", message)
        self.assertIn(f"{D}::0::r1", message)

    def test_strict_judge_names_at_most_ten_ids(self) -> None:
        with self.assertRaises(StrictJudgeError) as caught:
            self.score(judge=None, strict=True)
        message = str(caught.exception)
        self.assertIn("12 rubric(s)", message)
        self.assertEqual(message.count("::r"), 10)

    def test_strict_judge_passes_when_everything_is_judged(self) -> None:
        judge = read_jsonl(SAMPLE_JUDGE)
        judge[8] = {"id": f"{C}::0::r1", "raw_judge_output": "Not Met"}
        judge.append({"id": f"{D}::0::r1", "raw_judge_output": "Met"})
        report = self.score(judge=write_jsonl(self.tmp / "j.jsonl", judge), strict=True)
        self.assertEqual(report["summary"]["judge"]["tasks_with_unjudged_rubrics"], 0)

    def test_strict_judge_only_looks_at_the_filtered_turncase(self) -> None:
        judge = read_jsonl(SAMPLE_JUDGE)
        judge[8] = {"id": f"{C}::0::r1", "raw_judge_output": "Not Met"}
        report = self.score(
            judge=write_jsonl(self.tmp / "j.jsonl", judge), strict=True, turncase="multi-turn"
        )
        self.assertEqual(report["summary"]["num_tasks"], 2)

    def test_check_judge_counts(self) -> None:
        warnings: list[str] = []
        counts, unparsed = pipeline.check_judge_file(SAMPLE_JUDGE, warnings.append)
        self.assertEqual(
            counts, {"lines": 11, "met": 7, "not_met": 3, "unparsed": 1, "errored": 0, "refused": 0}
        )
        self.assertEqual(unparsed, [f"{C}::0::r1"])
        self.assertEqual(warnings, [])

    def test_check_judge_file_reads_the_last_line_of_each_id(self) -> None:
        # What `send` appends after a retry, and a rubric judged again: as scoring reads them.
        met = {"choices": [{"message": {"content": '{"judge_result": "Met"}'}}]}
        lines = [
            {"custom_id": f"{A}::0::r1", "response": None, "error": {"message": "rate limited"}},
            {"custom_id": f"{A}::0::r1", "response": {"status_code": 200, "body": met}},
            {"id": f"{A}::0::r2", "raw_judge_output": "garbage"},
            {"task_id": A, "turn_index": 0, "rubric_id": "r2", "raw_judge_output": "Not Met"},
            {"id": f"{A}::0::r3", "raw_judge_output": "Met"},
            {"id": f"{A}::0::r3", "raw_judge_output": "", "error": "timed out"},
        ]
        counts, unusable = pipeline.check_judge_file(
            write_jsonl(self.tmp / "j.jsonl", lines), self.warnings.append
        )
        self.assertEqual(
            counts, {"lines": 3, "met": 2, "not_met": 1, "unparsed": 0, "errored": 0, "refused": 0}
        )
        self.assertEqual(unusable, [])


if __name__ == "__main__":
    unittest.main()
