"""Issue 14 for DatBench, through the CLI: no failure raises a score, no stale verdict counts,
no CI gate passes on a partial or stale run, no stale report, check-judge = the judge half of
score. Lines are native, vLLM run-batch and OpenAI Batch API output/error lines."""

from __future__ import annotations

import json
import shutil
import tempfile
import unittest
from pathlib import Path
from typing import Any

from tests.cli_helpers import SAMPLE, answered_sample, retry_judge_tasks, run_cli
from tests.runner_lines import (
    openai_error_file_line,
    openai_http_error,
    openai_ok,
    read_lines,
    vllm_error,
    vllm_ok,
    write_lines,
)
from tests.vtb_support import SAMPLE_RESPONSES as VTB_RESPONSES

BASE_ACCURACY = 0.7088079718943007
CAPABILITIES = ("chart", "counting", "document", "general", "grounding", "math", "scene")


class DatBenchNothingSilentTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.base = cls.tmp / "base"
        answered_sample(cls.base)
        result = run_cli("score", "-d", str(cls.base), "-q")
        assert result.exit_code == 0, result.stderr
        cls.report = json.loads((cls.base / "report.json").read_text())
        cls.responses = read_lines(cls.base / "responses.jsonl")
        results = cls.report["results"]
        cls.judge_ids = [r["id"] for r in results if r["metadata"]["eval_mode"] == "judge"]
        # Wrong direct-mode answers that are not empty already: 15 of them become empty lines.
        cls.wrong = [
            r["id"]
            for r in results
            if r["score"] == 0.0 and r["metadata"]["eval_mode"] == "direct" and r["vlm_output"]
        ]
        assert len(cls.wrong) >= 19

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def work(self, name: str, responses: list[dict[str, Any]] | None = None) -> Path:
        work = self.tmp / name
        shutil.copytree(self.base, work)
        (work / "report.json").unlink()
        if responses is not None:
            write_lines(work / "responses.jsonl", responses)
        return work

    def replaced(self, lines: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
        return [lines.get(r["id"], r) for r in self.responses]

    def score(self, work: Path, *options: str) -> tuple[Any, dict[str, Any]]:
        result = run_cli("score", "-d", str(work), "--json", *options)
        report = (
            json.loads((work / "report.json").read_text())
            if (work / "report.json").exists()
            else {}
        )
        return result, report.get("summary", {})

    # ------------------------------------------------------------------ 1. failures

    def test_empty_content_is_the_models_answer_and_stays_in_every_denominator(self) -> None:
        chosen = self.wrong[:15]
        shapes = [
            lambda i: vllm_ok(i, ""),
            lambda i: vllm_ok(i, None, finish_reason="stop"),
            lambda i: openai_ok(i, None),
        ]
        lines = {i: shapes[n % 3](i) for n, i in enumerate(chosen)}
        result, summary = self.score(self.work("empty", self.replaced(lines)))
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(summary["total_samples"], 152)
        self.assertEqual(summary["overall_accuracy"], BASE_ACCURACY)
        self.assertEqual(summary["response_statuses"]["empty"], 15 + 4)
        self.assertEqual(summary["unanswered_samples"], 0)
        # The same answers as native lines (the README's own loop) give the same numbers.
        native = {i: {"id": i, "raw_output": ""} for i in chosen}
        _, same = self.score(self.work("empty-native", self.replaced(native)))
        for key in ("overall_accuracy", "capability_accuracy", "total_samples", "coverage"):
            self.assertEqual(same[key], summary[key], key)

    def test_reasoning_only_output_is_truncated_and_scored_as_empty(self) -> None:
        chosen = self.wrong[:3]
        lines = {
            i: vllm_ok(i, None, finish_reason="length", reasoning_content="Let me think" * 50)
            for i in chosen
        }
        result, summary = self.score(self.work("reasoning", self.replaced(lines)))
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(summary["total_samples"], 152)
        self.assertEqual(summary["response_statuses"]["truncated"], 3)
        self.assertEqual(summary["truncated_responses"], 3)
        self.assertEqual(summary["overall_accuracy"], BASE_ACCURACY)
        report = json.loads((self.tmp / "reasoning" / "report.json").read_text())
        statuses = {r["id"]: r["metadata"]["response_status"] for r in report["results"]}
        self.assertEqual({statuses[i] for i in chosen}, {"truncated"})
        self.assertIn("stopped at the token limit", result.stderr)

    def test_a_truncated_answer_replaced_by_a_later_retry_is_not_counted_truncated(self) -> None:
        # A first pass cut at max_tokens, then the same requests sent again with a larger
        # limit and appended: the later, complete lines are the answers scored.
        chosen = self.wrong[:3]
        cut = [vllm_ok(i, "The answer is", finish_reason="length") for i in chosen]
        result, summary = self.score(self.work("retried", cut + self.responses))
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(summary["response_statuses"]["truncated"], 0)
        self.assertEqual(summary["truncated_responses"], 0)
        self.assertEqual(summary["overall_accuracy"], BASE_ACCURACY)
        self.assertNotIn("stopped at the token limit", result.stderr)
        # The other way round, the truncated retry is the answer scored, and counted.
        result, summary = self.score(self.work("cut-last", self.responses + cut))
        self.assertEqual(summary["response_statuses"]["truncated"], 3)
        self.assertEqual(summary["truncated_responses"], 3)
        self.assertIn("3 responses", result.stderr)

    def test_refusals_do_not_turn_a_failing_gate_into_a_pass(self) -> None:
        chosen = self.wrong[:4]
        lines = {
            chosen[0]: openai_ok(chosen[0], None, refusal="I can't help with that."),
            chosen[1]: openai_ok(chosen[1], None, refusal="Sorry, I can't assist."),
            chosen[2]: openai_ok(chosen[2], None, finish_reason="content_filter"),
            chosen[3]: openai_ok(chosen[3], "", finish_reason="content_filter"),
        }
        result, summary = self.score(
            self.work("refused", self.replaced(lines)), "--fail-under", "0.72"
        )
        self.assertEqual(result.exit_code, 1)
        self.assertIn("overall_accuracy 0.7088 is below 0.72", result.stderr)
        self.assertEqual(summary["response_statuses"]["refused"], 4)
        self.assertEqual(summary["total_samples"], 152)

    def test_transport_failures_are_unanswered_and_fail_coverage(self) -> None:
        chosen = [self.wrong[0], self.judge_ids[0], self.wrong[1], self.wrong[2]]
        lines = {
            chosen[0]: vllm_error(chosen[0]),
            chosen[1]: openai_error_file_line(chosen[1]),
            chosen[2]: openai_http_error(chosen[2], 429),
        }
        responses = self.replaced(lines)
        # A failed try followed by a successful retry is an answer.
        responses.insert(0, openai_error_file_line(chosen[3]))
        work = self.work("errored", responses)
        result, summary = self.score(work)
        self.assertEqual(result.exit_code, 1)
        self.assertIn("coverage check failed: 3 of 152 have no usable response", result.stderr)
        self.assertIn("--allow-missing", result.stderr)
        self.assertEqual(summary["unanswered_samples"], 3)
        self.assertEqual(summary["response_statuses"]["errored"], 3)
        self.assertEqual(summary["total_samples"], 149)
        self.assertEqual(summary["coverage"]["answered"], 149)
        self.assertFalse(summary["checks_passed"])
        result, summary = self.score(work, "--allow-missing")
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertTrue(summary["checks_passed"])

    def test_errored_lines_for_ids_of_no_sample_are_unknown_ids(self) -> None:
        # An error file of another export appended: its ids are no sample's.
        work = self.work("foreign-errors", [*self.responses, vllm_error("other_run_000001")])
        write_lines(
            work / "judge_responses.jsonl",
            [
                *({"id": i, "raw_judge_output": "true"} for i in self.judge_ids),
                openai_error_file_line("other_run_judge_000001#0123456789abcdef"),
            ],
        )
        result, summary = self.score(work, "--strict-judge")
        self.assertEqual(result.exit_code, 1)
        self.assertIn("unknown: other_run_judge_000001", result.stderr)
        self.assertEqual(summary["unknown_response_ids"], 1)
        self.assertEqual(summary["unknown_judge_response_ids"], 1)
        self.assertEqual(summary["unanswered_samples"], 0)
        self.assertIn("1 response id(s) match no sample", result.stderr)
        self.assertIn("1 judge response id(s) match no sample", result.stderr)
        check = run_cli("check-judge", "-d", str(work))
        self.assertIn("1 unknown", check.stdout)

    def test_errored_or_cut_lines_of_another_run_count_once_as_unknown_ids(self) -> None:
        # Every sample answered in full, plus an errored and a cut line of another run (in
        # both files): they are unknown ids, and no errored or truncated sample of this run
        # (they were counted twice, and the report disagreed with its response_statuses).
        work = self.work(
            "foreign-counted-once",
            [
                *self.responses,
                vllm_error("other_run_000001"),
                vllm_ok("other_run_000002", "A", finish_reason="length"),
            ],
        )
        write_lines(
            work / "judge_responses.jsonl",
            [
                *({"id": i, "raw_judge_output": "true"} for i in self.judge_ids),
                openai_error_file_line("other_run_judge_000001#0123456789abcdef"),
                vllm_ok("other_run_judge_000002#0123456789abcdef", "tr", finish_reason="length"),
            ],
        )
        result, summary = self.score(work)
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(summary["unknown_response_ids"], 2)
        self.assertEqual(summary["unknown_judge_response_ids"], 2)
        for key in (
            "errored_responses",
            "truncated_responses",
            "judge_errored_responses",
            "judge_truncated_responses",
        ):
            self.assertEqual(summary[key], 0, key)
        self.assertEqual(summary["response_statuses"]["errored"], 0)
        self.assertEqual(summary["response_statuses"]["truncated"], 0)
        self.assertNotIn("token limit", result.stderr)
        for command in ("check-judge", "make-judge-tasks"):
            other = run_cli(command, "-d", str(work))
            self.assertNotIn("token limit", other.stderr, command)
            self.assertNotIn("errored", other.stderr, command)

    def test_ids_of_another_run_given_twice_are_unknown_ids_and_no_duplicates(self) -> None:
        # Another run's lines appended twice: their id is no sample's, so "the last one is
        # used" is untrue of it; it was counted both unknown and duplicate (VisualToolBench
        # counts such lines as unknown only).
        foreign = {"id": "other_run_000001", "raw_output": "A"}
        work = self.work("foreign-twice", [*self.responses, foreign, foreign])
        verdicts = [{"id": i, "raw_judge_output": "true"} for i in self.judge_ids]
        foreign_verdict = {"id": "other_run_judge_000001", "raw_judge_output": "true"}
        write_lines(work / "judge_responses.jsonl", [*verdicts, foreign_verdict, foreign_verdict])
        result, summary = self.score(work)
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(summary["unknown_response_ids"], 1)
        self.assertEqual(summary["duplicate_response_ids"], 0)
        self.assertEqual(summary["unknown_judge_response_ids"], 1)
        self.assertEqual(summary["duplicate_judge_response_ids"], 0)
        self.assertNotIn("more than once", result.stderr)
        check = run_cli("check-judge", "-d", str(work))
        self.assertIn("1 unknown", check.stdout)
        self.assertNotIn("more than once", check.stderr)

    def test_make_judge_tasks_says_which_of_two_answers_it_judges(self) -> None:
        # Two lines for a judge-mode sample (a shard's file included twice, answers that
        # differ): the judge task took the last without a word, while score warns of it.
        first = self.judge_ids[0]
        work = self.work(
            "mjt-duplicate", [{"id": first, "raw_output": "an older answer"}, *self.responses]
        )
        result = run_cli("make-judge-tasks", "-d", str(work))
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertIn("1 response id(s)", result.stderr)
        self.assertIn("occur more than once (last wins)", result.stderr)
        asked = {
            line["id"]: line["vlm_response"] for line in read_lines(work / "judge_tasks.jsonl")
        }
        self.assertEqual(
            asked[first], next(r for r in self.responses if r["id"] == first)["raw_output"]
        )

    def test_a_rejudged_sample_is_counted_as_a_duplicate_judge_id(self) -> None:
        # A sample judged again (appended to the same file): the last verdict is used, and the
        # report says that an id had two, as it does for responses.
        verdicts = [{"id": i, "raw_judge_output": "true"} for i in self.judge_ids]
        summaries = []
        for name, extra in (
            ("judged-once", []),
            ("rejudged", [dict(verdicts[0], raw_judge_output="false")]),
        ):
            work = self.work(name, self.responses)
            write_lines(work / "judge_responses.jsonl", [*verdicts, *extra])
            result, summary = self.score(work)
            self.assertEqual(result.exit_code, 0, result.stderr)
            self.assertEqual(summary["duplicate_judge_response_ids"], len(extra))
            warned = "1 judge response id(s) occur more than once (last wins)" in result.stderr
            self.assertEqual(warned, bool(extra), result.stderr)
            summaries.append(summary)
        once, rejudged = (s["judge_accuracy"] * s["judge_samples"] for s in summaries)
        self.assertAlmostEqual(rejudged, once - 1)

    def test_judge_lines_of_direct_mode_samples_are_said_to_be_ignored(self) -> None:
        # Neither unknown ids nor used: they went without a word.
        direct = [r["id"] for r in self.responses if r["id"] not in self.judge_ids][:2]
        work = self.work("judged-direct", self.responses)
        with (work / "judge_responses.jsonl").open("a") as handle:
            for ident in direct:
                handle.write(json.dumps({"id": ident, "raw_judge_output": "true"}) + "\n")
        result, summary = self.score(work)
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertIn(
            "2 judge response id(s) are of direct-mode samples, which are scored without a "
            "judge: ignored",
            " ".join(result.stderr.split()),
        )
        self.assertEqual(summary["overall_accuracy"], self.report["summary"]["overall_accuracy"])
        self.assertEqual(summary["direct_judge_response_ids"], 2)
        # They match no judge task: --strict-judge and check-judge fail, as on unknown ids.
        strict, _ = self.score(work, "--strict-judge")
        self.assertEqual(strict.exit_code, 1, strict.stderr)
        self.assertIn(f"for direct-mode samples: {direct[0]}, {direct[1]}", strict.stderr)
        check = run_cli("check-judge", "-d", str(work))
        self.assertEqual(check.exit_code, 1, check.stderr)
        self.assertIn("2 for direct-mode samples", check.stdout)

    def test_errored_judge_lines_count_where_check_judge_counts_them(self) -> None:
        # judge_errored_responses counted the errored judge lines of direct-mode and of
        # unanswered samples too, so it said 3 where check-judge said 1 errored.
        direct = next(r["id"] for r in self.responses if r["id"] not in self.judge_ids)
        judged, unanswered = self.judge_ids[:2]
        work = self.work(
            "judge-errored-where",
            [r for r in self.responses if r["id"] != unanswered],
        )
        write_lines(
            work / "judge_responses.jsonl",
            [
                *({"id": i, "raw_judge_output": "true"} for i in self.judge_ids[2:]),
                *(vllm_error(i) for i in (judged, unanswered, direct)),
            ],
        )
        result, summary = self.score(work, "--allow-missing")
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(summary["judge_errored_responses"], 1)
        self.assertEqual(summary["direct_judge_response_ids"], 1)
        self.assertEqual(summary["unanswered_judge_response_ids"], 1)
        self.assertEqual(summary["unknown_judge_response_ids"], 0)
        check = run_cli("check-judge", "-d", str(work))
        self.assertIn(
            "1 errored, 0 refused by the judge, 0 unknown, 1 for direct-mode samples, "
            "1 for unanswered samples",
            check.stdout,
        )

    def test_cut_judge_replies_count_only_for_judge_tasks(self) -> None:
        # A cut judge reply of a direct-mode sample was counted in judge_truncated_responses
        # and said to be "scored as it is", beside the warning that it was ignored.
        direct = next(r["id"] for r in self.responses if r["id"] not in self.judge_ids)
        judged = self.judge_ids[0]
        work = self.work("judge-cut", self.responses)
        write_lines(
            work / "judge_responses.jsonl",
            [
                *({"id": i, "raw_judge_output": "true"} for i in self.judge_ids[1:]),
                vllm_ok(judged, "true", finish_reason="length"),
                vllm_ok(direct, "true", finish_reason="length"),
            ],
        )
        result, summary = self.score(work)
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(summary["judge_truncated_responses"], 1)
        self.assertEqual(summary["direct_judge_response_ids"], 1)
        note = "1 judge responses in"
        self.assertEqual(result.stderr.count(note), 1, result.stderr)
        check = run_cli("check-judge", "-d", str(work))
        self.assertEqual(check.stderr.count(note), 1, check.stderr)

    def test_a_stale_cut_judge_reply_counts_as_stale_only(self) -> None:
        # A judge reply of another response text (stale: its verdict is not read) that was
        # also cut at the token limit was counted truncated too, "scored as it is", by score
        # and check-judge alike: one reply counted in two places, and said to be read.
        stale, cut = self.judge_ids[:2]
        work = self.work("judge-stale-cut", self.responses)
        write_lines(
            work / "judge_responses.jsonl",
            [
                *({"id": i, "raw_judge_output": "true"} for i in self.judge_ids[2:]),
                vllm_ok(f"{stale}#{'0' * 16}", "true", finish_reason="length"),
                vllm_ok(cut, "true", finish_reason="length"),
            ],
        )
        result, summary = self.score(work)
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(summary["judge_stale_verdicts"], 1)
        self.assertEqual(summary["judge_truncated_responses"], 1)
        note = "1 judge responses in"
        self.assertEqual(result.stderr.count(note), 1, result.stderr)
        check = run_cli("check-judge", "-d", str(work))
        self.assertIn("1 stale", check.stdout)
        self.assertEqual(check.stderr.count(note), 1, check.stderr)

    def test_judge_lines_of_unanswered_judge_samples_are_counted_and_fail_strict_judge(
        self,
    ) -> None:
        # Responses run again: one judge-mode sample errored this time, one has no line, and
        # the old verdicts of both went unused without a count, and --strict-judge passed
        # (VisualToolBench counts such lines and fails).
        errored, gone = self.judge_ids[:2]
        responses = [
            vllm_error(r["id"]) if r["id"] == errored else r
            for r in self.responses
            if r["id"] != gone
        ]
        work = self.work("judged-unanswered", responses)
        write_lines(
            work / "judge_responses.jsonl",
            [{"id": i, "raw_judge_output": "true"} for i in self.judge_ids],
        )
        note = (
            "2 judge response id(s) are of judge-mode samples without a usable response, "
            "which are not scored: their verdicts are ignored"
        )
        result, summary = self.score(work, "--allow-missing")
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(summary["unanswered_samples"], 2)
        self.assertEqual(summary["unanswered_judge_response_ids"], 2)
        self.assertIn(note, " ".join(result.stderr.split()))
        strict, summary = self.score(work, "--allow-missing", "--strict-judge")
        self.assertEqual(strict.exit_code, 1, strict.stderr)
        self.assertIn(f"for unanswered samples: {errored}, {gone}", strict.stderr)
        self.assertEqual(summary["checks"][-1]["name"], "strict_judge")
        check = run_cli("check-judge", "-d", str(work))
        self.assertEqual(check.exit_code, 1, check.stderr)
        self.assertIn("2 for unanswered samples", check.stdout)
        self.assertIn(note, " ".join(check.stderr.split()))
        # make-judge-tasks says the same 2, the errored one with the one without a line.
        remade = run_cli("make-judge-tasks", "-d", str(work), "-o", str(work / "again.jsonl"))
        self.assertIn(
            "2 judge-mode sample(s) have no usable response (no line, or only errored ones) "
            "and get no judge task",
            " ".join(remade.stderr.split()),
        )

    def test_an_errored_judge_call_is_said_under_the_table(self) -> None:
        # Its sample counted as missing, and the terminal never said a judge call had failed.
        lines = [{"id": i, "raw_judge_output": "true"} for i in self.judge_ids[1:]]
        # Two failed calls of one sample (a retry that failed again) are one errored verdict:
        # the note said "1 judge line(s) reported an error" of 2 errored lines, and counted
        # the sample "missing" too, where check-judge says "errored".
        lines += [
            {"id": self.judge_ids[0], "raw_judge_output": None, "error": "timed out"},
            {"id": self.judge_ids[0], "raw_judge_output": None, "error": "timed out again"},
        ]
        # A second sample whose judge line is absent: missing, not errored.
        lines = [line for line in lines if line["id"] != self.judge_ids[1]]
        work = self.work("judge-errored", self.responses)
        write_lines(work / "judge_responses.jsonl", lines)
        result = run_cli("score", "-d", str(work))
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertIn(
            "judge verdicts: 2 missing, 0 unparsed (scored 0); of these, 1 errored (every "
            "judge line reported an error)",
            " ".join(result.stderr.split()),
        )
        self.assertNotIn("line(s) reported an error", result.stderr)
        check = run_cli("check-judge", "-d", str(work))
        self.assertIn("1 missing, 0 unparsed, 0 stale, 1 errored", check.stdout)

    def test_a_native_line_keyed_by_custom_id_is_an_input_error(self) -> None:
        # A custom loop that copied the request's "custom_id" into a native line: every line
        # used to count as a transport failure ("152 errored"), with nothing saying why.
        lines = [{"custom_id": r["id"], "raw_output": r["raw_output"]} for r in self.responses]
        work = self.work("custom-id-native", lines)
        result, _ = self.score(work)
        self.assertEqual(result.exit_code, 2, result.stderr)
        self.assertEqual(
            result.stderr.splitlines()[0],
            f'error: {work / "responses.jsonl"}:1: a line with "raw_output" names its sample '
            'with "id", not "custom_id"',
        )
        self.assertNotIn("Traceback", result.stderr)

    # ------------------------------------------------------------------ 3. gates

    def test_unanswered_samples_are_said_once(self) -> None:
        work = self.work("said-once", self.responses[:-12])
        result = run_cli("score", "-d", str(work), "--allow-missing")
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(result.stderr.count("12 of 152 samples are unanswered"), 1, result.stderr)
        self.assertNotIn("have no VLM response", result.stderr)

    def test_a_partial_run_fails_every_gate(self) -> None:
        right = [r["id"] for r in self.report["results"] if r["score"] == 1.0][:10]
        partial = [r for r in self.responses if r["id"] in right]
        work = self.work("partial", partial)
        result = run_cli(
            "score", "-d", str(work), "--strict", "--strict-judge", "--fail-under", "0.9"
        )
        self.assertEqual(result.exit_code, 1)
        self.assertIn("142 of 152 have no usable response", result.stderr)
        self.assertIn("fail_under check failed", result.stderr)
        for capability in (*CAPABILITIES, "spatial", "table"):
            self.assertIn(capability, result.stdout)
        summary = json.loads((work / "report.json").read_text())["summary"]
        self.assertEqual(summary["overall_accuracy"], 1.0)
        self.assertEqual(
            (summary["coverage"]["answered"], summary["coverage"]["expected"]), (10, 152)
        )
        self.assertEqual(len(summary["coverage"]["by_capability"]), 9)

    def test_nothing_scored_is_null_and_fails(self) -> None:
        for name, lines in (
            ("nothing", []),
            ("other-benchmark", [r for r in read_lines(VTB_RESPONSES) if "raw_output" in r]),
        ):
            with self.subTest(name):
                work = self.work(name, lines)
                for options in ((), ("--allow-missing",)):
                    result, summary = self.score(work, *options)
                    self.assertEqual(result.exit_code, 1, result.stderr)
                    self.assertIn("nothing was answered", result.stderr)
                    self.assertIsNone(summary["overall_accuracy"])
                    self.assertIsNone(summary["direct_accuracy"])
                    self.assertIsNone(summary["judge_accuracy"])
                    self.assertIsNone(json.loads(result.stdout)["overall_accuracy"])

    def test_fail_under_takes_a_fraction(self) -> None:
        work = self.work("gate")
        for value in ("50", "-1", "1.5", "nan", "inf", "-inf"):
            with self.subTest(value):
                result = run_cli("score", "-d", str(work), "--fail-under", value)
                self.assertEqual(result.exit_code, 2, result.stderr)
                self.assertIn("fraction in [0, 1]", result.stderr)
                self.assertFalse((work / "report.json").exists())
        self.assertEqual(
            run_cli("score", "-d", str(work), "--fail-under", "0.6", "-q").exit_code, 0
        )
        self.assertEqual(
            run_cli("score", "-d", str(work), "--fail-under", "0.72", "-q").exit_code, 1
        )

    def test_the_readme_ci_recipe_fails_on_a_partial_or_stale_run(self) -> None:
        complete = self.work("ci")
        good = [{"id": i, "raw_judge_output": "true"} for i in self.judge_ids]
        write_lines(complete / "judge_responses.jsonl", good)
        recipe = ("score", "--strict-judge", "--fail-under", "0.6", "-q", "-d")
        self.assertEqual(run_cli(*recipe, str(complete)).exit_code, 0)
        partial = self.work("ci-partial", self.responses[:-1])
        write_lines(partial / "judge_responses.jsonl", good)
        self.assertEqual(run_cli(*recipe, str(partial)).exit_code, 1)
        stale = self.work(
            "ci-stale",
            self.replaced({self.judge_ids[0]: {"id": self.judge_ids[0], "raw_output": "WRONG"}}),
        )
        write_lines(stale / "judge_responses.jsonl", good)
        result = run_cli(*recipe, str(stale))
        self.assertEqual(result.exit_code, 1)
        self.assertIn(f"stale: {self.judge_ids[0]}", result.stderr)

    # ------------------------------------------------------------------ 2. stale verdicts

    def test_native_verdicts_for_replaced_responses_are_stale(self) -> None:
        wrong = [{"id": r["id"], "raw_output": "WRONG"} for r in self.responses]
        work = self.work("stale", wrong)
        result, summary = self.score(work, "--strict-judge")
        self.assertEqual(result.exit_code, 1)
        self.assertIn("strict_judge check failed", result.stderr)
        self.assertIn("stale:", result.stderr)
        # 14 of the 15 judge-mode samples have a verdict line; all judged other text.
        self.assertEqual(summary["judge_stale_verdicts"], 14)
        self.assertEqual(summary["judge_accuracy"], 0.0)
        # make-judge-tasks --skip-done asks them all again.
        result = run_cli(
            "make-judge-tasks", "-d", str(work), "--skip-done", str(work / "judge_responses.jsonl")
        )
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertIn("skipped 0 judge task(s)", result.stderr)
        tasks = read_lines(work / "judge_tasks.jsonl")
        self.assertEqual(len(tasks), 15)
        self.assertEqual({t["vlm_response"] for t in tasks}, {"WRONG"})

    def test_verdicts_left_out_by_skip_done_stay_tied_to_what_they_judged(self) -> None:
        # The sample verdicts carry no response_digest: they are checked against what the
        # run's judge tasks asked. --skip-done's tasks leave the judged samples out, and their
        # verdicts lost that tie: a later change of their response went unseen (0 stale).
        changed, later = self.judge_ids[0], self.judge_ids[1]
        work = self.work("skip-done-ties")
        lines = self.replaced({changed: {"id": changed, "raw_output": "Answer: 2018"}})
        write_lines(work / "responses.jsonl", lines)
        result = run_cli(
            "make-judge-tasks", "-d", str(work), "--skip-done", str(work / "judge_responses.jsonl")
        )
        self.assertEqual(result.exit_code, 0, result.stderr)
        # Said when new tasks ask about a changed response: an old verdict without digest
        # counts for the new text from now on.
        self.assertIn(
            "1 judge task(s) ask about a response that changed", " ".join(result.stderr.split())
        )
        self.assertEqual([t["id"] for t in read_lines(work / "judge_tasks.jsonl")][:1], [changed])
        lines[[r["id"] for r in lines].index(later)] = {"id": later, "raw_output": "Answer: 7"}
        write_lines(work / "responses.jsonl", lines)
        self.assertEqual(self.score(work)[1]["judge_stale_verdicts"], 1)
        # Judge tasks written elsewhere (another model's answers, -o) leave the record alone.
        other = self.replaced({r["id"]: {"id": r["id"], "raw_output": "B"} for r in lines})
        write_lines(work / "b.jsonl", other)
        result = run_cli(
            "make-judge-tasks", str(work / "b.jsonl"), "-d", str(work), "-o", str(work / "b.jt")
        )
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertNotIn("changed", result.stderr)
        self.assertEqual(self.score(work)[1]["judge_stale_verdicts"], 1)

    def test_the_runs_own_judge_tasks_named_through_a_folder_link_are_recorded(self) -> None:
        # -o reaching the run's own judge_tasks.jsonl through a link to its folder writes
        # those tasks: what they asked is recorded as when named plainly (it was not: the
        # paths were compared as spelled).
        work = self.work("through-a-link")
        (work / "judge_digests.json").unlink(missing_ok=True)
        link = work.parent / "through-a-link-link"
        link.symlink_to(work, target_is_directory=True)
        self.addCleanup(link.unlink)
        result = run_cli("make-judge-tasks", "-d", str(work), "-o", str(link / "judge_tasks.jsonl"))
        self.assertEqual(result.exit_code, 0, result.stderr)
        recorded = json.loads((work / "judge_digests.json").read_text())
        asked = {t["id"]: t["response_digest"] for t in read_lines(work / "judge_tasks.jsonl")}
        self.assertEqual(recorded, asked)

    def test_a_copied_run_judged_again_for_another_model_counts_its_verdicts(self) -> None:
        # cp -r run run-b, another model's answers, new judge tasks, the judge's lines without
        # digest: they judged the new tasks and count (none stale).
        work = self.work("copied-run")
        other = [{"id": r["id"], "raw_output": "B " + r["id"]} for r in self.responses]
        write_lines(work / "responses.jsonl", other)
        self.assertEqual(run_cli("make-judge-tasks", "-d", str(work), "-q").exit_code, 0)
        tasks = read_lines(work / "judge_tasks.jsonl")
        write_lines(
            work / "judge_responses.jsonl",
            [{"id": t["id"], "raw_judge_output": "true"} for t in tasks],
        )
        summary = self.score(work)[1]
        self.assertEqual((summary["judge_stale_verdicts"], summary["judge_accuracy"]), (0, 1.0))

    def test_batch_verdicts_carry_their_digest_in_the_custom_id(self) -> None:
        work = self.work("stale-batch")
        result = run_cli("make-judge-tasks", "-d", str(work), "--format", "openai", "--model", "j")
        self.assertEqual(result.exit_code, 0, result.stderr)
        requests = read_lines(work / "requests" / "judge_tasks.openai.00001.jsonl")
        write_lines(
            work / "judge_responses.jsonl", [vllm_ok(r["custom_id"], "true") for r in requests]
        )
        result, summary = self.score(work, "--strict-judge")
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(summary["judge_accuracy"], 1.0)
        # The response changes and judge_tasks.jsonl is written again: the batch verdict still
        # names the text it judged, so it is stale.
        changed = self.judge_ids[3]
        write_lines(
            work / "responses.jsonl",
            self.replaced({changed: {"id": changed, "raw_output": "something else"}}),
        )
        self.assertEqual(run_cli("make-judge-tasks", "-d", str(work), "-q").exit_code, 0)
        result, summary = self.score(work, "--strict-judge")
        self.assertEqual(result.exit_code, 1)
        self.assertIn(f"stale: {changed}", result.stderr)
        self.assertEqual(summary["judge_stale_verdicts"], 1)
        self.assertEqual(summary["judge_accuracy"], 14 / 15)
        result = run_cli("check-judge", "-d", str(work))
        self.assertEqual(result.exit_code, 1)
        self.assertIn("1 stale", result.stdout)
        rest = self.tmp / "rest.jsonl"
        result = retry_judge_tasks(work, rest)
        self.assertEqual([t["id"] for t in read_lines(rest)], [changed])

    def test_skip_done_reads_the_last_line_of_an_id_as_score_does(self) -> None:
        # A re-judged sample whose new verdict is unparsed (or stale): score uses the last
        # line, so --skip-done must ask it again, not skip it for its earlier parsed line.
        work = self.work("rejudged-last-line")
        unparsed, stale = self.judge_ids[0], self.judge_ids[1]
        with (work / "judge_responses.jsonl").open("a") as handle:
            for line in (
                {"id": unparsed, "raw_judge_output": "maybe"},
                {"id": stale, "raw_judge_output": "true", "response_digest": "0" * 16},
            ):
                handle.write(json.dumps(line) + "\n")
        result = run_cli("check-judge", "-d", str(work))
        self.assertEqual(result.exit_code, 1)
        self.assertIn(f"unparsed: {unparsed}", result.stderr)
        self.assertIn(f"stale: {stale}", result.stderr)
        rest = self.tmp / "rejudged-last-line.jsonl"
        result = retry_judge_tasks(work, rest)
        self.assertEqual(result.exit_code, 0, result.stderr)
        asked = {t["id"] for t in read_lines(rest)}
        self.assertEqual(asked, {unparsed, stale, "db_math_judge_008", "db_math_judge_009"})

    # ------------------------------------------------------------------ 4. no stale report

    def test_a_failed_check_never_leaves_an_older_report(self) -> None:
        work = self.work("report")
        self.assertEqual(run_cli("score", "-d", str(work), "-q").exit_code, 0)
        old = json.loads((work / "report.json").read_text())["summary"]
        self.assertTrue(old["checks_passed"])
        write_lines(work / "responses.jsonl", self.responses[:10])
        for options in ((), ("--strict-judge",), ("--fail-under", "0.99")):
            with self.subTest(options):
                result = run_cli("score", "-d", str(work), "-q", *options)
                self.assertEqual(result.exit_code, 1)
                new = json.loads((work / "report.json").read_text())["summary"]
                self.assertEqual(new["total_samples"], 10)
                self.assertFalse(new["checks_passed"])
                failed = [c["name"] for c in new["checks"] if not c["passed"]]
                self.assertEqual(failed[0], "coverage")

    # ------------------------------------------------------------------ 5. check-judge

    def test_check_judge_fails_exactly_where_score_strict_judge_fails(self) -> None:
        good = [{"id": i, "raw_judge_output": "true"} for i in self.judge_ids]
        variants = {
            "sample": read_lines(SAMPLE / "judge_responses.jsonl"),
            "good": good,
            "missing": good[1:],
            "unknown": [*good, {"id": "no-such-sample", "raw_judge_output": "true"}],
            "errored": [*good[1:], vllm_error(self.judge_ids[0])],
            "stale": [
                *good[1:],
                {"id": self.judge_ids[0], "raw_judge_output": "true", "response_digest": "0" * 16},
            ],
            "retried": [openai_error_file_line(self.judge_ids[0]), *good],
        }
        expected = {"good": 0, "retried": 0}
        for name, lines in variants.items():
            with self.subTest(name):
                work = self.work(f"cj-{name}")
                write_lines(work / "judge_responses.jsonl", lines)
                check = run_cli("check-judge", "-d", str(work))
                score = run_cli("score", "-d", str(work), "--strict-judge", "-q")
                self.assertEqual(check.exit_code, expected.get(name, 1), check.stderr)
                self.assertEqual(score.exit_code, check.exit_code, score.stderr)
                if name == "errored":
                    self.assertIn("1 errored", check.stdout)
                    self.assertIn("0 unparsed", check.stdout)
                if name in ("missing", "unknown", "errored", "stale"):
                    self.assertIn(name, check.stderr)

    def test_check_judge_never_stands_the_judge_tasks_in_for_a_named_responses_file(self) -> None:
        # Verdicts for the current responses; a named responses file that is absent (a typo)
        # or is no file must be an error, not a silent check against judge_tasks.jsonl.
        work = self.work("cj-named")
        tasks = read_lines(work / "judge_tasks.jsonl")
        write_lines(
            work / "judge_responses.jsonl",
            [
                {"id": t["id"], "raw_judge_output": "true", "response_digest": t["response_digest"]}
                for t in tasks
            ],
        )
        changed = self.judge_ids[0]
        write_lines(
            work / "new.jsonl",
            self.replaced({changed: {"id": changed, "raw_output": "something else"}}),
        )
        result = run_cli("check-judge", "-d", str(work), "--responses", str(work / "new.jsonl"))
        self.assertEqual(result.exit_code, 1)
        self.assertIn("1 stale", result.stdout)
        for given, message in (("typo.jsonl", "file not found"), ("images", "is a directory")):
            with self.subTest(given):
                result = run_cli("check-judge", "-d", str(work), "--responses", str(work / given))
                self.assertEqual(result.exit_code, 2, result.stdout)
                self.assertEqual(
                    result.stderr,
                    f"error: {work / given}: {message}"
                    + (", not a JSONL file\n" if given == "images" else "\n"),
                )

    def test_skip_done_that_is_no_file_is_an_error(self) -> None:
        work = self.work("skip-dir")
        result = run_cli("make-judge-tasks", "-d", str(work), "--skip-done", str(work / "images"))
        self.assertEqual(result.exit_code, 2, result.stderr)
        self.assertIn("is a directory, not a JSONL file", result.stderr)
        self.assertNotIn("does not exist", result.stderr)

    def test_check_judge_outside_a_run_directory_parses_verdicts(self) -> None:
        path = self.tmp / "judge-only.jsonl"
        write_lines(path, [{"id": "a", "raw_judge_output": "true"}, vllm_error("b")])
        result = run_cli("check-judge", str(path), "-d", str(self.tmp / "no-run"))
        self.assertEqual(result.exit_code, 1)
        self.assertEqual(
            result.stdout.strip(),
            "2 verdicts: 1 true, 0 false, 0 unparsed, 1 errored, 0 refused by the judge",
        )

    def test_check_judge_outside_a_run_directory_warns_of_unknown_keys(self) -> None:
        # As in a run directory (and as VisualToolBench's files outside one): a misspelt
        # "verdict" is said, not silently ignored.
        path = write_lines(
            self.tmp / "judge-misspelt.jsonl",
            [{"id": "a", "raw_judge_output": "maybe", "verdcit": "correct"}],
        )
        result = run_cli("check-judge", str(path), "-d", str(self.tmp / "no-run"))
        self.assertEqual(result.exit_code, 1)
        self.assertIn("unknown key(s) ignored: 'verdcit'", result.stderr)
        self.assertIn("did you mean 'verdict'?", result.stderr)


if __name__ == "__main__":
    unittest.main()
