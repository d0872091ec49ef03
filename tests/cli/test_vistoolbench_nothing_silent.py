"""Issue 14 for VisualToolBench, through the CLI: empty answers are judged, transport failures
are unanswered, stale verdicts do not count, gates fail on partial runs, no stale report,
check-judge = the judge half of score."""

from __future__ import annotations

import json
import shutil
import tempfile
import unittest
from pathlib import Path
from typing import Any

from tests.cli_helpers import retry_judge_tasks, run_cli
from tests.runner_lines import (
    openai_error_file_line,
    openai_ok,
    read_lines,
    vllm_error,
    vllm_ok,
    write_lines,
)
from tests.vtb_support import SAMPLE_DIR, SAMPLE_RESPONSES

MET = json.dumps({"explanation": "ok", "judge_result": "Met"})
F0, F1 = "vtb-f-physics-006::0", "vtb-f-physics-006::1"
A0, B1 = "vtb-a-medical-001::0", "vtb-b-maths-002::1"


class VisToolBenchNothingSilentTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.base = cls.tmp / "base"
        export = run_cli(
            "export-tasks", "vistoolbench", "--source", str(SAMPLE_DIR), "-d", str(cls.base)
        )
        assert export.exit_code == 0, export.stderr
        # The sample leaves task F unanswered; answer it so the run is complete.
        cls.responses = [
            *read_lines(SAMPLE_RESPONSES),
            {"id": F0, "raw_output": "The ball lands after 2 s."},
            {"id": F1, "raw_output": "It travels 10 m."},
        ]
        write_lines(cls.base / "responses.jsonl", cls.responses)
        assert run_cli("make-judge-tasks", "-d", str(cls.base), "-q").exit_code == 0
        cls.tasks = read_lines(cls.base / "judge_tasks.jsonl")
        cls.good = [{"id": t["id"], "raw_judge_output": MET} for t in cls.tasks]
        write_lines(cls.base / "judge_responses.jsonl", cls.good)

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def work(self, name: str, responses: list[dict[str, Any]] | None = None) -> Path:
        work = self.tmp / name
        shutil.copytree(self.base, work)
        if responses is not None:
            write_lines(work / "responses.jsonl", responses)
        return work

    def replaced(self, lines: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
        return [lines.get(r.get("id", ""), r) for r in self.responses]

    def score(self, work: Path, *options: str) -> tuple[Any, dict[str, Any]]:
        result = run_cli("score", "-d", str(work), "--json", *options)
        path = work / "report.json"
        return result, json.loads(path.read_text()) if path.exists() else {}

    def test_the_complete_run_passes_the_readme_recipe(self) -> None:
        work = self.work("complete")
        result = run_cli("score", "-d", str(work), "--strict-judge", "--fail-under", "0.6", "-q")
        self.assertEqual(result.exit_code, 0, result.stderr)

    def test_no_usable_text_is_judged_as_the_empty_answer(self) -> None:
        lines = {
            A0: vllm_ok(A0, None, finish_reason="length", reasoning_content="thinking " * 99),
            B1: openai_ok(B1, None, refusal="I can't help with that."),
        }
        work = self.work("empty", self.replaced(lines))
        self.assertEqual(run_cli("make-judge-tasks", "-d", str(work), "-q").exit_code, 0)
        tasks = read_lines(work / "judge_tasks.jsonl")
        judged = {t["id"].rsplit("::", 1)[0]: t["vlm_response"] for t in tasks}
        self.assertEqual((judged[A0], judged[B1]), ("", ""))
        self.assertEqual(len(tasks), len(self.tasks))
        result, report = self.score(work)
        self.assertEqual(result.exit_code, 0, result.stderr)
        responses = report["summary"]["responses"]
        self.assertEqual(responses["statuses"]["truncated"], 1)
        self.assertEqual(responses["statuses"]["refused"], 1)
        self.assertEqual(responses["coverage"], 1.0)
        statuses = {
            f"{r['id']}::{t['index']}": t["response_status"]
            for r in report["results"]
            for t in r["turns"]
        }
        self.assertEqual((statuses[A0], statuses[B1]), ("truncated", "refused"))
        # Said under the table too, as DatBench says its responses scored as they are.
        table = run_cli("score", "-d", str(work))
        self.assertEqual(table.exit_code, 0, table.stderr)
        self.assertIn(
            "turn answers judged as they are: 0 empty, 1 refused, 1 truncated",
            table.stdout + table.stderr,
        )

    def test_transport_failures_are_unanswered_and_fail_coverage(self) -> None:
        lines = {A0: vllm_error(A0), F0: openai_error_file_line(F0)}
        work = self.work("errored", self.replaced(lines))
        result, report = self.score(work)
        self.assertEqual(result.exit_code, 1)
        self.assertIn("coverage check failed: 2 of 9 have no usable response", result.stderr)
        self.assertIn("single-turn 2/3", result.stderr)
        self.assertIn("multi-turn 5/6", result.stderr)
        responses = report["summary"]["responses"]
        self.assertEqual(responses["statuses"]["errored"], 2)
        self.assertEqual(responses["by_turncase"]["single-turn"]["answered_turns"], 2)
        self.assertFalse(report["summary"]["checks_passed"])
        result, report = self.score(work, "--allow-missing", "--fail-under", "0.1")
        self.assertEqual(result.exit_code, 0, result.stderr)

    def test_make_judge_tasks_names_the_unanswered_turns_of_answered_tasks(self) -> None:
        # B's second turn has no line: its three rubrics got no judge task without a word
        # (only a task with no answered turn at all was said), as DatBench says of samples.
        work = self.work("turn-gap", [r for r in self.responses if r.get("id") != B1])
        result = run_cli("make-judge-tasks", "-d", str(work))
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertIn(
            f"1 turn(s) of answered tasks have no model answer: their 3 rubric(s) get no judge "
            f"task and score as missing_answer: {B1}",
            " ".join(result.stderr.split()),
        )
        self.assertEqual(len(read_lines(work / "judge_tasks.jsonl")), len(self.tasks) - 3)
        _, report = self.score(work, "--allow-missing")
        self.assertEqual(report["summary"]["judge"]["missing_answer"], 3)

    def test_a_turns_item_without_an_answer_field_is_bad_input(self) -> None:
        # {"text": ...} in a per-task "turns" list was read as a null answer: the turn counted
        # missing ("a shard not run?"), the answer gone without a word about the key.
        lines = [r for r in self.responses if not r.get("id", "").startswith("vtb-f")]
        lines.append({"id": "vtb-f-physics-006", "turns": [{"text": "2 s"}, "10 m"]})
        work = self.work("turn-item-key", lines)
        for command in ("score", "make-judge-tasks"):
            result = run_cli(
                command, "-d", str(work), "--allow-missing" if command == "score" else "-q"
            )
            self.assertEqual(result.exit_code, 2, result.stderr)
            self.assertRegex(
                result.stderr, r'^error: \S*responses.jsonl:\d+: turns\[0\] has no "raw_output"'
            )
            self.assertNotIn("Traceback", result.stderr)

    def test_partial_and_empty_runs_fail_every_gate(self) -> None:
        work = self.work("partial", self.responses[:1])
        result, report = self.score(work, "--strict-judge", "--fail-under", "0.1")
        self.assertEqual(result.exit_code, 1)
        self.assertIn("8 of 9 have no usable response", result.stderr)
        self.assertIn("fail_under check failed", result.stderr)
        work = self.work("nothing", [])
        for options in ((), ("--allow-missing",)):
            result, report = self.score(work, *options)
            self.assertEqual(result.exit_code, 1)
            self.assertIn("nothing was answered", result.stderr)
            self.assertIsNone(report["summary"]["apr"])
            self.assertIsNone(report["summary"]["ars"])
        table = run_cli("score", "-d", str(work), "--allow-missing")
        self.assertIn("turncase: single-turn", table.stdout)
        self.assertIn("0/3", table.stdout)
        self.assertIn("0/6", table.stdout)
        for value in ("50", "-1", "nan", "inf"):
            result = run_cli("score", "-d", str(work), "--fail-under", value)
            self.assertEqual(result.exit_code, 2)
            self.assertIn("fraction in [0, 1]", result.stderr)

    def test_verdicts_for_changed_answers_are_stale(self) -> None:
        work = self.work("stale", self.replaced({B1: {"id": B1, "raw_output": "WRONG"}}))
        result, report = self.score(work, "--strict-judge")
        self.assertEqual(result.exit_code, 1)
        self.assertIn("strict_judge check failed", result.stderr)
        self.assertIn(f"{B1}::r", result.stderr)
        stale = report["summary"]["judge"]["stale"]
        self.assertEqual(stale, sum(1 for t in self.tasks if t["id"].startswith(B1 + "::")))
        self.assertLess(report["summary"]["ars"], 1.0)
        rest = self.tmp / "rest.jsonl"
        result = retry_judge_tasks(work, rest)
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual({t["id"].rsplit("::", 1)[0] for t in read_lines(rest)}, {B1})
        self.assertEqual({t["vlm_response"] for t in read_lines(rest)}, {"WRONG"})

    def test_the_judge_tasks_file_does_not_decide_what_a_verdict_judged(self) -> None:
        # Spec section 4: a stale judge_tasks.jsonl cannot change results. Deleting it turned
        # the stale verdicts (no response_digest) of a changed answer into counted ones.
        work = self.work("tasks-deleted", self.replaced({B1: {"id": B1, "raw_output": "WRONG"}}))
        b1 = sum(1 for t in self.tasks if t["id"].startswith(B1 + "::"))
        self.assertEqual(self.score(work)[1]["summary"]["judge"]["stale"], b1)
        (work / "judge_tasks.jsonl").unlink()
        self.assertEqual(self.score(work)[1]["summary"]["judge"]["stale"], b1)
        # New judge tasks say that the changed answer's old verdicts now count for it.
        result = run_cli(
            "make-judge-tasks", "-d", str(work), "--skip-done", str(work / "judge_responses.jsonl")
        )
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertIn(
            f"{b1} judge task(s) ask about a response that changed",
            " ".join(result.stderr.split()),
        )
        # Verdicts that carry the digest of the new answer count.
        rejudged = [
            {"id": t["id"], "raw_judge_output": MET, "response_digest": t["response_digest"]}
            for t in read_lines(work / "judge_tasks.jsonl")
        ]
        write_lines(work / "judge_responses.jsonl", [*self.good, *rejudged])
        self.assertEqual(self.score(work)[1]["summary"]["judge"]["stale"], 0)

    def test_a_retry_with_nothing_left_to_ask_says_so(self) -> None:
        # The documented retry loop then sends requests/judge_retry.openai.*.jsonl, which a
        # retry of nothing does not write: send failed with "file not found", unexplained.
        work = self.work("all-judged")
        result = run_cli(
            "make-judge-tasks", "-d", str(work), "--skip-done", str(work / "judge_responses.jsonl"),
            "--format", "openai", "--model", "j", "-o", str(work / "judge_retry.jsonl"),
        )  # fmt: skip
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertIn("wrote 0 judge task(s)", result.stderr)
        self.assertIn("no request file was written: nothing to send", result.stderr)
        self.assertEqual(list((work / "requests").glob("judge_retry.openai.*")), [])

    def test_batch_verdicts_carry_their_digest_in_the_custom_id(self) -> None:
        work = self.work("stale-batch")
        result = run_cli("make-judge-tasks", "-d", str(work), "--format", "openai", "--model", "j")
        self.assertEqual(result.exit_code, 0, result.stderr)
        requests = read_lines(work / "requests" / "judge_tasks.openai.00001.jsonl")
        write_lines(
            work / "judge_responses.jsonl", [openai_ok(r["custom_id"], MET) for r in requests]
        )
        result, report = self.score(work, "--strict-judge")
        self.assertEqual(result.exit_code, 0, result.stderr)
        write_lines(work / "responses.jsonl", self.replaced({A0: {"id": A0, "raw_output": "new"}}))
        self.assertEqual(run_cli("make-judge-tasks", "-d", str(work), "-q").exit_code, 0)
        result, report = self.score(work, "--strict-judge")
        self.assertEqual(result.exit_code, 1)
        self.assertGreater(report["summary"]["judge"]["stale"], 0)
        self.assertEqual(run_cli("check-judge", "-d", str(work)).exit_code, 1)

    def test_judge_replies_cut_at_the_token_limit_are_counted_and_said(self) -> None:
        # A judge that ran out of tokens after writing its verdict: read as it is (as DatBench
        # scores a cut judge reply), but counted and said, never silently.
        work = self.work("cut-judge")
        result = run_cli("make-judge-tasks", "-d", str(work), "--format", "openai", "--model", "j")
        self.assertEqual(result.exit_code, 0, result.stderr)
        requests = read_lines(work / "requests" / "judge_tasks.openai.00001.jsonl")
        cut = MET + " Let me double-check the second half of the"
        lines = [openai_ok(r["custom_id"], MET) for r in requests]
        lines[0] = openai_ok(requests[0]["custom_id"], cut, finish_reason="length")
        # A native line (a custom judge loop) says it the same way.
        native = {"id": self.tasks[1]["id"], "raw_judge_output": cut, "finish_reason": "length"}
        native["response_digest"] = self.tasks[1]["response_digest"]
        lines[1] = native
        write_lines(work / "judge_responses.jsonl", lines)
        result, report = self.score(work, "--strict-judge")
        self.assertEqual(result.exit_code, 0, result.stderr)
        judge = report["summary"]["judge"]
        self.assertEqual((judge["truncated_responses"], judge["met"]), (2, len(self.tasks)))
        self.assertIn("2 judge response(s) stopped at the token limit", result.stderr)
        checked = run_cli("check-judge", "-d", str(work))  # the judge half of score says it too
        self.assertEqual(checked.exit_code, 0, checked.stderr)
        self.assertIn("2 judge response(s) in", checked.stderr)

    def test_a_stale_cut_judge_reply_counts_as_stale_only(self) -> None:
        # Its verdict is not read, so it is not "read as it is": stale, not truncated (as
        # DatBench's score and check-judge count it).
        work = self.work("stale-cut-judge")
        first = self.tasks[0]["id"]
        stale = {"id": first, "raw_judge_output": MET, "finish_reason": "length"}
        stale["response_digest"] = "0" * 16
        write_lines(work / "judge_responses.jsonl", [*self.good[1:], stale])
        result, report = self.score(work)
        self.assertEqual(result.exit_code, 0, result.stderr)
        judge = report["summary"]["judge"]
        self.assertEqual((judge["stale"], judge["truncated_responses"]), (1, 0))
        self.assertNotIn("token limit", result.stderr)
        checked = run_cli("check-judge", "-d", str(work))
        self.assertIn("1 stale", checked.stdout)
        self.assertNotIn("token limit", checked.stderr)

    def test_a_failed_check_never_leaves_an_older_report(self) -> None:
        work = self.work("report")
        self.assertEqual(run_cli("score", "-d", str(work), "-q").exit_code, 0)
        write_lines(work / "responses.jsonl", self.responses[:1])
        self.assertEqual(run_cli("score", "-d", str(work), "-q").exit_code, 1)
        summary = json.loads((work / "report.json").read_text())["summary"]
        self.assertEqual(summary["num_tasks"], 1)
        self.assertFalse(summary["checks_passed"])

    def test_check_judge_fails_exactly_where_score_strict_judge_fails(self) -> None:
        first = self.tasks[0]["id"]
        variants = {
            "good": self.good,
            "missing": self.good[1:],
            "unparsed": [*self.good[1:], {"id": first, "raw_judge_output": "hmm"}],
            "unknown": [*self.good, {"id": "nope::0::r1", "raw_judge_output": MET}],
            "errored": [*self.good[1:], vllm_error(first)],
            "stale": [
                *self.good[1:],
                {"id": first, "raw_judge_output": MET, "response_digest": "0" * 16},
            ],
            "retried": [openai_error_file_line(first), *self.good],
        }
        for name, lines in variants.items():
            with self.subTest(name):
                work = self.work(f"cj-{name}")
                write_lines(work / "judge_responses.jsonl", lines)
                check = run_cli("check-judge", "-d", str(work))
                score = run_cli("score", "-d", str(work), "--strict-judge", "-q")
                self.assertEqual(
                    check.exit_code, 0 if name in ("good", "retried") else 1, check.stderr
                )
                self.assertEqual(score.exit_code, check.exit_code, score.stderr)
                if name == "errored":
                    self.assertIn("1 errored", check.stdout)
                    self.assertIn("0 unparsed", check.stdout)


if __name__ == "__main__":
    unittest.main()
