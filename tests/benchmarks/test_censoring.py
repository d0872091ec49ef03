"""Censoring beside accuracy (our addition) for both benchmarks."""

from __future__ import annotations

import unittest

from datbench_cli.benchmarks.datbench.censoring import reasons, thinking
from datbench_cli.benchmarks.datbench.schema import SampleScore
from datbench_cli.benchmarks.datbench.uncertainty import columns_of
from datbench_cli.benchmarks.vistoolbench.censoring import censoring as vtb_censoring
from tests.compare_support import scored_sample_report


def _result(sample_id, score, output, capability="c", mode="direct", verdict=None, status=None):
    metadata = {"capability": capability, "eval_mode": mode, "dataset": f"ds-{capability}"}
    if verdict is not None:
        metadata["score_details"] = {"judge_verdict": verdict}
    if status is not None:
        metadata["response_status"] = status
    return SampleScore(sample_id, score, output, "gt", score == 1.0, metadata)


class ThinkingTest(unittest.TestCase):
    def test_cases(self) -> None:
        self.assertIsNone(thinking("42"))
        self.assertIsNone(thinking("<think>hm</think> 42"))
        self.assertEqual(thinking("<think>still going"), "unclosed_think")
        self.assertEqual(thinking("<think>a</think> b <THINK> again"), "unclosed_think")
        self.assertEqual(thinking("<think>only this</think>  \n"), "thinking_only")
        self.assertEqual(thinking("</think>"), "thinking_only")


class DatBenchCensoringTest(unittest.TestCase):
    def test_counts_and_completed_accuracy(self) -> None:
        results = [
            _result("ok", 1.0, "42"),
            _result("ok2", 0.0, "41"),
            _result("trunc", 0.0, "4", status="truncated"),
            _result("cut", 0.0, "partial answer"),  # truncated by the ids passed in
            _result("empty", 0.0, "   "),
            _result("think", 0.0, "<think>long reasoning"),
            _result("only", 0.0, "<think>x</think>"),
            _result("refused", 0.0, "no", status="refused"),
            _result("judged", 1.0, "yes", mode="judge", verdict="correct"),
            _result("unparsed", 0.0, "yes", mode="judge", verdict="unparsed"),
            _result("missing", 0.0, "yes", mode="judge", verdict="missing"),
            _result("stale", 0.0, "yes", mode="judge", verdict="stale"),
            _result("other", 1.0, "x", capability="d"),
        ]
        got = columns_of(results, truncated_ids={"cut"}).censoring()
        overall = got["overall"]
        self.assertEqual(overall["samples"], 13)
        self.assertEqual(overall["truncated"], 2)
        self.assertEqual(overall["empty"], 1)
        self.assertEqual(overall["refused"], 1)
        self.assertEqual(overall["unclosed_think"], 1)
        self.assertEqual(overall["thinking_only"], 1)
        self.assertEqual(
            (overall["judge_unparsed"], overall["judge_missing"], overall["judge_stale"]),
            (1, 1, 1),
        )
        self.assertEqual(overall["censored"], 9)
        self.assertEqual(overall["completed"], 4)  # ok, ok2, judged, other
        self.assertEqual(overall["accuracy_completed"], 0.75)
        self.assertEqual(got["capabilities"]["c"]["completed"], 3)
        self.assertAlmostEqual(got["capabilities"]["c"]["accuracy_completed"], 2 / 3, places=15)
        self.assertEqual(got["capabilities"]["d"]["censored"], 0)
        self.assertEqual(sorted(got["datasets"]), ["ds-c", "ds-d"])

    def test_nothing_completed_is_null(self) -> None:
        got = columns_of([_result("e", 0.0, "")]).censoring()
        self.assertEqual(got["overall"]["completed"], 0)
        self.assertIsNone(got["overall"]["accuracy_completed"])
        self.assertEqual(reasons(_result("e", 0.0, "")), ["empty"])

    def test_sample_report(self) -> None:
        summary = scored_sample_report()["summary"]
        block = summary["censoring"]
        self.assertEqual(block["overall"]["samples"], summary["total_samples"])
        self.assertEqual(block["overall"]["judge_missing"], summary["judge_missing_responses"])
        self.assertEqual(block["overall"]["judge_unparsed"], summary["judge_unparsed_verdicts"])
        self.assertEqual(
            sum(e["samples"] for e in block["capabilities"].values()), summary["total_samples"]
        )
        # the official numbers are untouched
        self.assertNotEqual(block["overall"]["accuracy_completed"], summary["overall_accuracy"])


class VisToolBenchCensoringTest(unittest.TestCase):
    @staticmethod
    def _task(task_id, ars, apr, statuses, response_status=None, turncase="single-turn"):
        turn = {"index": 0, "rubrics": [{"status": s} for s in statuses]}
        if response_status is not None:
            turn["response_status"] = response_status
        return {
            "id": task_id,
            "turncase": turncase,
            "domain": "d",
            "eval_focus": "f",
            "ars": ars,
            "apr": apr,
            "turns": [turn],
        }

    def test_counts(self) -> None:
        results = [
            self._task("a", 1.0, 1, ["met", "met"]),
            self._task("b", 0.5, 0, ["met", "not_met"]),
            self._task("c", 0.0, 0, ["unparsed", "missing"]),
            self._task("d", 0.0, 0, ["missing_answer"], turncase="multi-turn"),
            self._task("e", 0.2, 0, ["met", "not_met"], response_status="truncated"),
            self._task("f", 0.0, 0, ["stale"]),
        ]
        got = vtb_censoring(results)
        overall = got["overall"]
        self.assertEqual(overall["tasks"], 6)
        self.assertEqual(overall["judge_unparsed"], 1)
        self.assertEqual(overall["judge_missing"], 1)
        self.assertEqual(overall["judge_stale"], 1)
        self.assertEqual(overall["unanswered"], 1)
        self.assertEqual(overall["truncated"], 1)
        self.assertEqual(overall["censored"], 4)
        self.assertEqual(overall["completed"], 2)
        self.assertEqual(overall["ars_completed"], 0.75)
        self.assertEqual(overall["apr_completed"], 0.5)
        self.assertEqual(got["by_turncase"]["multi-turn"]["completed"], 0)
        self.assertIsNone(got["by_turncase"]["multi-turn"]["ars_completed"])

    def test_an_errored_judge_call_censors_its_task(self) -> None:
        # A rubric whose judge line errored has no verdict (scored not met, as a missing one):
        # its task once counted as completed, in ars_completed and apr_completed.
        results = [
            self._task("a", 1.0, 1, ["met"]),
            self._task("b", 0.3, 0, ["errored", "not_met", "met"]),
        ]
        overall = vtb_censoring(results)["overall"]
        self.assertEqual(overall["judge_missing"], 1)
        self.assertEqual((overall["censored"], overall["completed"]), (1, 1))
        self.assertEqual((overall["ars_completed"], overall["apr_completed"]), (1.0, 1.0))
        self.assertEqual(
            list(overall)[5:9], ["unanswered", "judge_unparsed", "judge_missing", "judge_stale"]
        )


if __name__ == "__main__":
    unittest.main()


class TruncatedThroughScoreTest(unittest.TestCase):
    def test_finish_reason_length_is_counted_per_capability(self) -> None:
        import json
        import shutil
        import tempfile
        from pathlib import Path

        from tests.cli_helpers import run_cli
        from tests.compare_support import read_jsonl, scored_run, write_jsonl

        tmp = Path(tempfile.mkdtemp())
        try:
            run = scored_run("datbench", tmp / "run")
            rows = read_jsonl(run / "responses.jsonl")
            first = rows[0]
            rows[0] = {
                "custom_id": first["id"],
                "response": {
                    "status_code": 200,
                    "body": {
                        "choices": [
                            {
                                "message": {"content": first["raw_output"]},
                                "finish_reason": "length",
                            }
                        ]
                    },
                },
            }
            write_jsonl(run / "responses.jsonl", rows)
            result = run_cli("score", "-d", str(run), "-q")
            self.assertEqual(result.exit_code, 0, result.stderr)
            summary = json.loads((run / "report.json").read_text())["summary"]
            references = read_jsonl(run / "references.jsonl")
            capability = next(r["capability"] for r in references if r["id"] == first["id"])
            self.assertEqual(summary["censoring"]["overall"]["truncated"], 1)
            self.assertEqual(summary["censoring"]["capabilities"][capability]["truncated"], 1)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
