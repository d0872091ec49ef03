"""DatBenchEvaluator: the reference glue vectors, judge-mode scoring, coverage and errors."""

from __future__ import annotations

import dataclasses
import json
import unittest
import warnings

from datbench_cli import (
    DatBenchEvaluator,
    DatBenchReport,
    JudgeResponse,
    ScorerFailed,
    VLMResponse,
)
from datbench_cli.batch.digests import response_digest
from datbench_cli.benchmarks.datbench.evaluator import ScoreOptions, compute_report
from datbench_cli.benchmarks.datbench.schema import DatBenchSample
from datbench_cli.benchmarks.datbench.scorer_input import build_scorer_input
from datbench_cli.scorers import get_scorer
from tests.vectors import DATA, assert_same, load_lines, round_trip

SEED_SUMMARY_KEYS = (
    "overall_accuracy",
    "total_samples",
    "total_correct",
    "capability_accuracy",
    "capability_counts",
    "dataset_metrics",
)


def records(kind: str) -> list[dict]:
    return [r for r in load_lines(DATA / "evaluator_summary.jsonl") if r["kind"] == kind]


def evaluator_for(record: dict) -> DatBenchEvaluator:
    return DatBenchEvaluator([dict(r, image=None) for r in record["rows"]], record["capability"])


def responses_for(record: dict) -> list[VLMResponse]:
    return [
        VLMResponse(r["id"], r["raw_output"], r.get("parsed_answer")) for r in record["responses"]
    ]


def quietly(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


class ReferenceGlueVectorTests(unittest.TestCase):
    def test_compute_metrics_records(self) -> None:
        checked = 0
        for record in records("compute_metrics"):
            if any(row.get("eval_mode") == "judge" for row in record["rows"]):
                continue  # the seed overrides: see JudgeModeTests
            with self.subTest(rows=[r["id"] for r in record["rows"]]):
                report = quietly(evaluator_for(record).compute_metrics, responses_for(record))
                summary = round_trip(report.summary)
                for key in SEED_SUMMARY_KEYS:
                    assert_same(self, summary[key], record["expected_summary"][key], key)
                results = round_trip(report.to_dict()["results"])
                assert_same(self, results, record["expected_results"], "results")
                checked += 1
        self.assertGreaterEqual(checked, 3)

    def test_samples_tasks_and_judge_tasks(self) -> None:
        for record in records("from_hf_row+tasks"):
            evaluator = evaluator_for(record)
            samples = [
                {k: v for k, v in dataclasses.asdict(s).items() if k != "image"}
                for s in evaluator.samples
            ]
            expected = [
                {k: v for k, v in s.items() if k != "image"} for s in record["expected_samples"]
            ]
            self.assertEqual(samples, expected)
            tasks = [
                {k: v for k, v in dataclasses.asdict(t).items() if k != "image"}
                for t in evaluator.get_inference_tasks()
            ]
            self.assertEqual(
                tasks,
                [
                    {k: v for k, v in t.items() if k != "image"}
                    for t in record["expected_inference_tasks"]
                ],
            )
            inputs = [
                VLMResponse(r["id"], r["raw_output"], r.get("parsed_answer"))
                for r in record["judge_task_inputs"]
            ]
            judge_tasks = [dataclasses.asdict(t) for t in evaluator.create_judge_tasks(inputs)]
            self.assertEqual(judge_tasks, record["expected_judge_tasks"])

    def test_conversion_errors_match_the_reference(self) -> None:
        for record in records("compute_metrics_error"):
            expected = record["expected"]
            sample = DatBenchSample.from_hf_row(dict(record["rows"][0], image=None), "general")
            scorer = get_scorer(sample.dataset)
            assert scorer is not None
            with self.subTest(dataset=sample.dataset, metadata=sample.metadata):
                if expected["error"] is None:
                    build_scorer_input(sample, scorer)  # no error: "[]" finds no field
                    continue
                with self.assertRaises(Exception) as caught:
                    build_scorer_input(sample, scorer)
                self.assertEqual(type(caught.exception).__name__, expected["error"])
                self.assertEqual(str(caught.exception), expected["message"])


def row(sample_id: str, dataset: str, answer: str = "yes", mode: str = "direct") -> dict:
    return {
        "id": sample_id,
        "image": None,
        "question": f"question {sample_id}",
        "answer": answer,
        "eval_mode": mode,
        "judge_prompt": "Is it right? Respond with exactly two lines:\nReason: x\nanswer: true",
        "source_info": {"dataset": dataset},
        "eval_metrics": {"discrimination": 0.25},
    }


class JudgeModeTests(unittest.TestCase):
    def setUp(self) -> None:
        self.evaluator = DatBenchEvaluator(
            [
                row("d1", "some_unregistered_set", "cat"),
                row("j1", "mathverse_reasoning", "5", "judge"),
                row("j2", "mathverse_reasoning", "6", "judge"),
                row("j3", "chartqa", "7", "judge"),
                row("j4", "chartqa", "8", "judge"),
            ],
            "math",
        )
        self.responses = [
            VLMResponse("d1", "Answer: cat"),
            VLMResponse("j1", "5"),
            VLMResponse("j2", "wrong"),
            VLMResponse("j3", "7"),
            VLMResponse("j4", "8"),
        ]

    def test_judge_samples_are_scored_from_verdicts_only(self) -> None:
        judges = [
            JudgeResponse("j1", "answer: true"),
            JudgeResponse("j2", '{"answer": true}', verdict="incorrect"),
            JudgeResponse("j3", "I think so"),
        ]
        report = self.evaluator.compute_metrics(self.responses, judges)
        by_id = {r.id: r for r in report.results}
        self.assertEqual(by_id["j1"].score, 1.0)
        self.assertEqual(by_id["j2"].score, 0.0)  # verdict field beats the raw text
        details = by_id["j3"].metadata["score_details"]
        self.assertEqual(details["judge_verdict"], "unparsed")
        self.assertEqual(
            list(details),
            [
                "score",
                "eval_mode",
                "match",
                "judge_verdict",
                "judge_raw_output",
                "judge_missing_response",
            ],
        )
        missing = by_id["j4"].metadata["score_details"]
        self.assertEqual(missing["judge_verdict"], "missing")
        self.assertTrue(missing["judge_missing_response"])
        self.assertEqual(by_id["j4"].score, 0.0)
        s = report.summary
        self.assertEqual((s["total_samples"], s["direct_samples"], s["judge_samples"]), (5, 1, 4))
        self.assertEqual(s["judge_accuracy"], 0.25)
        self.assertEqual(s["direct_accuracy"], 1.0)
        self.assertEqual(s["overall_accuracy"], 0.4)
        self.assertEqual((s["judge_missing_responses"], s["judge_unparsed_verdicts"]), (1, 1))
        chart = s["dataset_metrics"]["chartqa"]
        self.assertEqual(
            chart,
            {
                "judge_accuracy": 0.0,
                "judge_samples": 2,
                "judge_missing_responses": 1,
                "judge_unparsed_verdicts": 1,
                "judge_stale_verdicts": 0,
            },
        )
        self.assertEqual(by_id["j1"].metadata["discrimination"], 0.25)

    def test_warning_when_no_judge_response_matches(self) -> None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            report = self.evaluator.compute_metrics(self.responses, [JudgeResponse("zzz", "true")])
        messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
        self.assertTrue(any("no judge response matched" in m for m in messages), messages)
        self.assertEqual(report.summary["judge_missing_responses"], 4)
        self.assertEqual(report.summary["unknown_judge_response_ids"], 1)

    def test_strict_judge_names_offending_ids(self) -> None:
        with self.assertRaises(ValueError) as caught:
            quietly(
                self.evaluator.compute_metrics,
                self.responses,
                [JudgeResponse("j1", "true"), JudgeResponse("j2", "hmm")],
                strict_judge=True,
            )
        message = str(caught.exception)
        for sample_id in ("j2", "j3", "j4"):
            self.assertIn(sample_id, message)
        self.assertNotIn("j1", message)

    def test_strict_judge_passes_when_all_verdicts_parse(self) -> None:
        judges = [JudgeResponse(i, "false") for i in ("j1", "j2", "j3", "j4")]
        report = self.evaluator.compute_metrics(self.responses, judges, strict_judge=True)
        self.assertEqual(report.summary["judge_accuracy"], 0.0)

    def test_judge_tasks_rewrite_and_use_parsed_answer(self) -> None:
        tasks = self.evaluator.create_judge_tasks(
            [VLMResponse("j1", "raw", "parsed"), VLMResponse("d1", "x")]
        )
        self.assertEqual([t.id for t in tasks], ["j1"])
        self.assertEqual(tasks[0].vlm_response, "parsed")
        self.assertTrue(tasks[0].judge_prompt.endswith("true or false. answer: "))


class CoverageAndErrorTests(unittest.TestCase):
    def test_coverage_counts_and_warnings(self) -> None:
        evaluator = DatBenchEvaluator([row("a", "x"), row("b", "x"), row("c", "x")], "general")
        responses = [VLMResponse("a", "yes"), VLMResponse("a", "no"), VLMResponse("zz", "yes")]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            report = evaluator.compute_metrics(responses)
        s = report.summary
        self.assertEqual(s["expected_samples"], 3)
        self.assertEqual(s["missing_responses"], 2)
        self.assertEqual(s["duplicate_response_ids"], 1)
        self.assertEqual(s["unknown_response_ids"], 1)
        self.assertEqual(s["total_samples"], 1)
        self.assertEqual(report.results[0].vlm_output, "no")  # last duplicate wins
        text = " ".join(str(w.message) for w in caught)
        self.assertIn("2 sample(s) have no VLM response", text)
        self.assertIn("1 response id(s) occur more than once", text)

    def test_fallback_error_is_recorded_not_fatal(self) -> None:
        bad = row("b", "not_registered")
        bad["answer"] = 7  # the fallback needs a string answer: the reference would crash here
        evaluator = DatBenchEvaluator([bad, row("g", "not_registered", "yes")], "general")
        report = quietly(
            evaluator.compute_metrics, [VLMResponse("b", "7"), VLMResponse("g", "yes")]
        )
        first = report.results[0].metadata["score_details"]
        self.assertEqual(first["error"]["type"], "AttributeError")
        self.assertEqual(report.summary["scorer_errors"], 1)
        self.assertEqual(report.summary["total_samples"], 2)
        self.assertEqual(report.results[1].score, 1.0)
        with self.assertRaises(ScorerFailed) as caught:
            quietly(
                compute_report,
                evaluator,
                [VLMResponse("b", "7")],
                options=ScoreOptions(strict=True),
            )
        self.assertIn("sample b", str(caught.exception))

    def test_failing_dataset_aggregation_is_recorded(self) -> None:
        # The reference's TallyQA compute_metrics re-parses the raw output and raises on "²";
        # the reference loses the whole report, we record the failure for that dataset only.
        line = load_lines(DATA / "tallyqa.jsonl")[0]
        sample = dict(line["row"], image=None)
        other = row("o1", "not_registered")
        evaluator = DatBenchEvaluator([sample, other], "counting")
        responses = [VLMResponse(sample["id"], "The answer is ²\nok"), VLMResponse("o1", "yes")]
        report = quietly(evaluator.compute_metrics, responses)
        error = report.summary["dataset_metrics"]["tallyqa"]["metrics_error"]
        self.assertEqual(error["type"], "ValueError")
        self.assertEqual(report.summary["total_samples"], 2)
        with self.assertRaises(ScorerFailed):
            quietly(compute_report, evaluator, responses, options=ScoreOptions(strict=True))

    def test_empty_evaluation(self) -> None:
        report = DatBenchEvaluator([], "math").compute_metrics([])
        self.assertEqual(report.summary["overall_accuracy"], 0.0)
        self.assertEqual(report.summary["capability_accuracy"], {})
        self.assertEqual(report.results, [])

    def test_images_stay_with_the_caller(self) -> None:
        # A dataset row's image (a PIL image: megabytes once pickled) is never sent to the
        # scoring workers: one that cannot be pickled at all scores like no image.
        import threading

        rows = [dict(row(i, "countbench", "3"), image=threading.Lock()) for i in "ab"]
        evaluator = DatBenchEvaluator(rows, "counting")
        report = evaluator.compute_metrics([VLMResponse("a", "3"), VLMResponse("b", "4")])
        self.assertEqual([r.score for r in report.results], [1.0, 0.0])
        self.assertEqual(
            [r.metadata["score_details"].get("error") for r in report.results], [None, None]
        )
        self.assertIsInstance(evaluator.samples[0].image, type(threading.Lock()))

    def test_report_save_round_trips(self) -> None:
        import tempfile
        from pathlib import Path

        evaluator = DatBenchEvaluator([row("a", "x")], "general")
        report = evaluator.compute_metrics([VLMResponse("a", "yes")])
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "r.json"
            report.save(path)
            data = json.loads(path.read_text())
        self.assertEqual(data["summary"], round_trip(report.summary))
        self.assertEqual(data["results"][0]["id"], "a")
        self.assertIsInstance(report, DatBenchReport)


if __name__ == "__main__":
    unittest.main()


class SeedApiCoverageTests(unittest.TestCase):
    """compute_metrics keeps the reference's semantics (unanswered samples are not scored,
    accuracies over nothing are 0.0) and exposes the coverage numbers score reports."""

    def evaluator(self) -> DatBenchEvaluator:
        rows = [row("a", "x"), row("b", "x"), row("c", "x", mode="judge")]
        return DatBenchEvaluator(rows, "general")

    def test_unanswered_samples_are_counted_not_scored(self) -> None:
        report = quietly(
            compute_report,
            self.evaluator(),
            [VLMResponse("a", "yes")],
            options=ScoreOptions(errored_ids=frozenset({"b"})),
        )
        s = report.summary
        self.assertEqual(s["total_samples"], 1)
        self.assertEqual(s["unanswered_samples"], 2)
        self.assertEqual(s["response_statuses"]["errored"], 1)
        self.assertEqual(s["response_statuses"]["missing"], 1)
        self.assertEqual(s["coverage"]["by_capability"]["general"], {
            "expected": 3, "answered": 1, "coverage": 1 / 3
        })  # fmt: skip
        self.assertEqual(s["judge_accuracy"], 0.0)  # the reference's value over no sample
        self.assertNotIn("response_status", report.results[0].metadata)

    def test_plain_judge_responses_work_and_a_digest_mismatch_is_stale(self) -> None:
        responses = [VLMResponse(i, "yes") for i in "abc"]
        plain = quietly(self.evaluator().compute_metrics, responses, [JudgeResponse("c", "true")])
        self.assertEqual(plain.summary["judge_accuracy"], 1.0)
        current = JudgeResponse("c", "true", response_digest=response_digest("yes"))
        fresh = quietly(self.evaluator().compute_metrics, responses, [current])
        self.assertEqual(fresh.summary["judge_stale_verdicts"], 0)
        old = JudgeResponse("c", "true", response_digest=response_digest("no"))
        stale = quietly(self.evaluator().compute_metrics, responses, [old])
        self.assertEqual(stale.summary["judge_stale_verdicts"], 1)
        self.assertEqual(stale.summary["judge_accuracy"], 0.0)
        self.assertEqual(stale.results[2].metadata["score_details"]["judge_verdict"], "stale")
        with self.assertRaises(ValueError):
            quietly(self.evaluator().compute_metrics, responses, [old], strict_judge=True)
        # A null raw_output (accepted, scored like an empty answer) is judged as the empty text
        # the judge was shown: its digest is that of "" (the check raised AttributeError in
        # the worker, and the sample became a WorkerDied scorer error).
        null = [VLMResponse("a", "yes"), VLMResponse("b", "yes"), VLMResponse("c", None)]
        for digest, verdict in ((response_digest(""), "correct"), (response_digest("no"), "stale")):
            judged = JudgeResponse("c", "true", response_digest=digest)
            report = quietly(self.evaluator().compute_metrics, null, [judged])
            details = report.results[2].metadata["score_details"]
            self.assertEqual((details.get("judge_verdict"), details.get("error")), (verdict, None))
            self.assertEqual(report.summary["scorer_errors"], 0)
        # The warning speaks to a Python caller, not of a command and its flags.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self.evaluator().compute_metrics(responses, [old])
        (message,) = [str(w.message) for w in caught if "stale" in str(w.message)]
        self.assertIn("judge the current responses again", message)
        self.assertNotIn("--", message)
        self.assertNotIn("make-judge-tasks", message)
