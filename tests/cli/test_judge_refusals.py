"""A judge that refuses a sample (a content filter's finish_reason, Gemini's SAFETY, an Azure
prompt filter's HTTP 400) is counted and named apart from errored and missing judge calls, in
`score`, `check-judge`, `--strict-judge`, the page `view` writes and the Python API; no score
moves. VisualToolBench's answers given per turn (``turns`` items) read a content filter's
error as its lines do."""

from __future__ import annotations

import json
import shutil
import tempfile
import unittest
import warnings
from pathlib import Path
from typing import Any

from datbench_cli.benchmarks.datbench.evaluator import (
    DatBenchEvaluator,
    ScoreOptions,
    compute_report,
)
from datbench_cli.benchmarks.datbench.schema import JudgeResponse, VLMResponse
from datbench_cli.errors import StrictJudgeError
from tests.cli_helpers import answered_sample, run_cli
from tests.page_records import page_records
from tests.runner_lines import azure_prompt_filtered, read_lines, vllm_ok, write_lines


class JudgeRefusalTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.base = cls.tmp / "base"
        answered_sample(cls.base, judged=False)
        cls.judge_ids = [t["id"] for t in read_lines(cls.base / "judge_tasks.jsonl")]
        assert len(cls.judge_ids) >= 5

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_with(self, name: str, lines: list[dict[str, Any]]) -> tuple[Path, Any]:
        work = self.tmp / name
        shutil.copytree(self.base, work)
        write_lines(work / "judge_responses.jsonl", lines)
        result = run_cli("score", "-d", str(work))
        self.assertEqual(result.exit_code, 0, result.stderr)
        return work, result

    def refusing_lines(self) -> list[dict[str, Any]]:
        """Judge lines: a content-filter stop without text, an Azure prompt filter's refusal,
        a failed call, a filtered stop whose text still holds a verdict, and plain verdicts."""
        refused, filtered, errored, read, *rest = self.judge_ids
        return [
            vllm_ok(refused, "", finish_reason="SAFETY"),
            azure_prompt_filtered(filtered),
            {"id": errored, "raw_judge_output": None, "error": "timed out"},
            vllm_ok(read, "true", finish_reason="content_filter"),
            *({"id": i, "raw_judge_output": "true"} for i in rest),
        ]

    def test_a_judge_refusal_is_counted_and_said_apart_and_no_score_moves(self) -> None:
        refused, filtered, errored, read = self.judge_ids[:4]
        work, result = self.run_with("refusals", self.refusing_lines())
        report = json.loads((work / "report.json").read_text())
        summary = report["summary"]
        self.assertEqual(summary["judge_refused_responses"], 2)
        self.assertEqual(summary["judge_errored_responses"], 1)
        # The seed's counts are unchanged: no judge response is missing, none is unparsed.
        self.assertEqual(summary["judge_missing_responses"], 2)
        self.assertEqual(summary["judge_unparsed_verdicts"], 1)
        said = " ".join(result.stderr.split())
        self.assertIn("the judge refused 2 judge-mode sample(s)", said)
        self.assertIn(
            "of these, 1 errored (every judge line reported an error) and 2 refused by the judge",
            said,
        )
        status = {r["id"]: r["metadata"].get("judge_status") for r in report["results"]}
        self.assertEqual(
            [status[i] for i in (refused, filtered, errored, read)],
            ["refused", "refused", "errored", None],
        )
        # The same scores as with those judge lines absent (and the verdict read as it is).
        plain = [
            {"id": i, "raw_judge_output": "true"}
            for i in self.judge_ids
            if i not in self.judge_ids[:3]
        ]
        other, _ = self.run_with("refusals-absent", plain)
        again = json.loads((other / "report.json").read_text())
        self.assertEqual(
            [r["score"] for r in report["results"]], [r["score"] for r in again["results"]]
        )
        self.assertEqual(summary["overall_accuracy"], again["summary"]["overall_accuracy"])

    def test_check_judge_and_strict_judge_name_the_refusals_apart(self) -> None:
        refused, filtered, errored = self.judge_ids[:3]
        work, _ = self.run_with("refusals-checked", self.refusing_lines())
        check = run_cli("check-judge", "-d", str(work))
        self.assertEqual(check.exit_code, 1, check.stderr)
        self.assertIn(
            "0 missing, 0 unparsed, 0 stale, 1 errored, 2 refused by the judge", check.stdout
        )
        strict = run_cli("score", "-d", str(work), "--strict-judge", "-q")
        self.assertEqual(strict.exit_code, 1, strict.stderr)
        said = " ".join(strict.stderr.split())
        self.assertIn(f"errored: {errored}", said)
        self.assertIn(f"refused by the judge: {refused}, {filtered}", said)

    def test_check_judge_outside_a_run_directory_counts_refusals(self) -> None:
        path = self.tmp / "outside.jsonl"
        write_lines(path, self.refusing_lines()[:3])
        check = run_cli("check-judge", str(path))
        self.assertEqual(check.exit_code, 1, check.stderr)
        self.assertIn("3 verdicts: 0 true, 0 false, 0 unparsed, 1 errored, 2 refused", check.stdout)

    def test_the_page_shows_errored_and_refused_verdicts_not_missing(self) -> None:
        refused, filtered, errored = self.judge_ids[:3]
        work, _ = self.run_with("refusals-page", self.refusing_lines())
        records = page_records(work)
        self.assertEqual(
            [records[i]["f"]["verdict"] for i in (refused, filtered, errored)],
            # The verdict the seed counts it under, and why the judge gave none.
            [["unparsed", "refused"], ["missing", "refused"], ["missing", "errored"]],
        )


class StrictJudgeApiTests(unittest.TestCase):
    """The Python API's ``strict_judge`` counts errored and refused judge results apart from
    missing ones, as ``score --strict-judge`` does."""

    ROWS = [
        {"id": f"s{n}", "image": None, "question": "Is it?", "answer": "yes", "eval_mode": "judge"}
        for n in range(4)
    ]

    def test_errored_and_refused_judge_results_are_named_apart(self) -> None:
        evaluator = DatBenchEvaluator(self.ROWS, "chart")
        responses = [VLMResponse(f"s{n}", "yes") for n in range(4)]
        options = ScoreOptions(judge_errored_ids=("s1", "s2"), judge_refusal_ids=frozenset({"s2"}))
        judges = [JudgeResponse("s0", "true")]
        with self.assertRaises(StrictJudgeError) as raised, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compute_report(evaluator, responses, judges, strict_judge=True, options=options)
        message = str(raised.exception)
        self.assertIn("3 judge-mode sample(s) have no usable judge verdict", message)
        self.assertIn("missing: s3", message)
        self.assertIn("errored: s1", message)
        self.assertIn("refused by the judge: s2", message)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            report = compute_report(evaluator, responses, judges, options=options)
        self.assertEqual(report.summary["judge_errored_responses"], 1)
        self.assertEqual(report.summary["judge_refused_responses"], 1)
        self.assertEqual(report.summary["judge_accuracy"], 0.25)
        self.assertTrue(any("the judge refused 1" in str(w.message) for w in caught))
        status = [r.metadata.get("judge_status") for r in report.results]
        self.assertEqual(status, [None, "errored", "refused", None])


if __name__ == "__main__":
    unittest.main()


class VisToolBenchRefusalTests(unittest.TestCase):
    """VisualToolBench: a judge's refusal is a rubric of its own status (``refused``), by the
    same rule; a ``turns`` item whose error is a content filter's is counted as such."""

    MET = json.dumps({"explanation": "ok", "judge_result": "Met"})

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.base = cls.tmp / "base"
        answered_sample(cls.base, "vistoolbench", judged=False)
        cls.ids = [t["id"] for t in read_lines(cls.base / "judge_tasks.jsonl")]

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def score(self, name: str, lines: list[dict[str, Any]]) -> tuple[Any, dict[str, Any]]:
        work = self.tmp / name
        shutil.copytree(self.base, work)
        write_lines(work / "judge_responses.jsonl", lines)
        result = run_cli("score", "-d", str(work), "--allow-missing")
        self.assertEqual(result.exit_code, 0, result.stderr)
        return result, json.loads((work / "report.json").read_text())

    def test_a_judge_refusal_is_a_rubric_status_of_its_own_and_no_score_moves(self) -> None:
        refused, filtered, errored, *rest = self.ids
        lines = [
            vllm_ok(refused, None, finish_reason="PROHIBITED_CONTENT"),
            azure_prompt_filtered(filtered),
            # A failed retry after the filter's refusal hides it not.
            {"id": filtered, "raw_judge_output": None, "error": "timed out"},
            {"id": errored, "raw_judge_output": None, "error": "timed out"},
            *({"id": i, "raw_judge_output": self.MET} for i in rest),
        ]
        result, report = self.score("refused", lines)
        judge = report["summary"]["judge"]
        self.assertEqual((judge["refused"], judge["errored"], judge["unparsed"]), (2, 1, 0))
        said = " ".join(result.stderr.split())
        self.assertIn("the judge refused 2 rubric(s)", said)
        status = {
            f"{r['id']}::{t['index']}::{rubric['rubric_id']}": rubric["status"]
            for r in report["results"]
            for t in r["turns"]
            for rubric in t["rubrics"]
        }
        self.assertEqual(
            [status[i] for i in (refused, filtered, errored)], ["refused", "refused", "errored"]
        )
        # The same ARS and APR as with those judge lines absent.
        _, absent = self.score("absent", lines[4:])
        for key in ("ars", "apr"):
            self.assertEqual(report["summary"][key], absent["summary"][key])
        check = run_cli("check-judge", "-d", str(self.tmp / "refused"))
        self.assertEqual(check.exit_code, 1, check.stderr)
        self.assertIn("1 errored, 2 refused;", check.stdout)
        outside = run_cli("check-judge", str(self.tmp / "refused" / "judge_responses.jsonl"))
        self.assertIn("0 unparsed, 1 errored, 2 refused by the judge", outside.stdout)

    def test_a_turns_item_refused_by_a_content_filter_is_counted_as_the_lines_are(self) -> None:
        task = next(t for t in read_lines(self.base / "references.jsonl") if len(t["turns"]) > 1)
        work = self.tmp / "turns"
        shutil.copytree(self.base, work)
        error = azure_prompt_filtered("x")["response"]["body"]
        turns = [error] + [{"raw_output": "an answer"}] * (len(task["turns"]) - 1)
        write_lines(work / "responses.jsonl", [{"id": task["id"], "turns": turns}])
        result = run_cli("score", "-d", str(work), "--allow-missing", "--json")
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertIn(
            "errored turns are prompts the service's content filter refused",
            " ".join(result.stderr.split()),
        )
        self.assertEqual(json.loads(result.stdout)["responses"]["errored_turns"], 1)
