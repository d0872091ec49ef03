"""Output lines of real runners in shapes datbench does not read are refused, naming the file
and line (exit 2), never scored as an empty answer or counted as a transport failure (both
benchmarks, model and judge responses)."""

from __future__ import annotations

import json
import shutil
import tempfile
import unittest
from pathlib import Path
from typing import Any

from tests.cli_helpers import SAMPLE, export_samples, run_cli
from tests.runner_lines import azure_prompt_filtered, openai_ok, openai_responses_ok

FIRST_IDS = {"dat": "db_table_000000", "vtb": "vtb-a-medical-001::0"}
SECOND_IDS = {"dat": "db_table_000001", "vtb": "vtb-b-maths-002::0"}
JUDGE_IDS = {"dat": "db_chart_judge_000", "vtb": "vtb-a-medical-001::0::r1"}


def with_message(custom_id: str, message: Any) -> dict[str, Any]:
    """An OpenAI batch output line whose ``choices[0].message`` is ``message``."""
    line = openai_ok(custom_id, "B")
    line["response"]["body"]["choices"][0]["message"] = message
    return line


class RunnerShapeTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.runs = {name: run for name, (run, _) in export_samples(cls.tmp).items()}

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp)

    def refused(self, run: Path, line: dict[str, Any], *wanted: str) -> None:
        """Score ``line`` after one good line; assert exit 2 naming the file's line 2."""
        responses = run / "responses.jsonl"
        good = openai_ok(FIRST_IDS[run.name], "B")
        responses.write_text(json.dumps(good) + "\n" + json.dumps(line) + "\n", encoding="utf-8")
        result = run_cli("score", "-d", str(run), "--allow-missing", "-o", str(run / "r.json"))
        self.assertEqual(result.exit_code, 2, result.stderr)
        errors = [x for x in result.stderr.splitlines() if x.startswith("error: ")]
        self.assertEqual(len(errors), 1, result.stderr)
        self.assertIn(f"{responses}:2:", errors[0])
        for text in wanted:
            self.assertIn(text, result.stderr)
        self.assertNotIn("Traceback", result.stderr)

    def statuses(self, run: Path, lines: list[dict[str, Any]]) -> dict[str, int]:
        """Score ``lines`` as the run's responses (exit 0 asserted); the response statuses."""
        responses = run / "responses.jsonl"
        responses.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
        out = run / "r.json"
        result = run_cli("score", "-d", str(run), "--allow-missing", "-o", str(out))
        self.assertEqual(result.exit_code, 0, result.stderr)
        summary = json.loads(out.read_text(encoding="utf-8"))["summary"]
        statuses: dict[str, int] = (
            summary.get("response_statuses") or summary["responses"]["statuses"]
        )
        return statuses

    def test_content_of_another_type_is_refused_not_scored_empty(self) -> None:
        for name, run in self.runs.items():
            ident = FIRST_IDS[name]
            shapes = {
                "int": with_message(ident, {"role": "assistant", "content": 5}),
                "object": with_message(ident, {"role": "assistant", "content": {"text": "B"}}),
                "string parts": with_message(ident, {"role": "assistant", "content": ["B"]}),
                "string message": with_message(ident, "B"),
                "part text int": with_message(
                    ident, {"role": "assistant", "content": [{"type": "text", "text": 5}]}
                ),
                "part text list": with_message(
                    ident, {"role": "assistant", "content": [{"type": "text", "text": ["B"]}]}
                ),
            }
            for shape, line in shapes.items():
                with self.subTest(benchmark=name, shape=shape):
                    self.refused(run, line, "message")

    def test_chat_content_parts_of_reasoning_are_not_read_as_the_answer(self) -> None:
        # A server's reasoning part beside the text part ({"type": "thinking", "text": ...})
        # was joined into the answer: the reasoning scored as if the model had said it.
        for name, run in self.runs.items():
            for kind in ("thinking", "reasoning", "reasoning_text"):
                content = [{"type": kind, "text": "A? no, B."}, {"type": "text", "text": "B"}]
                line = with_message(FIRST_IDS[name], {"role": "assistant", "content": content})
                with self.subTest(benchmark=name, kind=kind):
                    self.refused(run, line, f'"{kind}"', "message")

    def test_responses_api_part_text_of_another_type_is_refused(self) -> None:
        # An output_text part whose "text" is not a string was left out: "" scored as empty.
        for name, run in self.runs.items():
            line = openai_responses_ok(FIRST_IDS[name], "B")
            message = line["response"]["body"]["output"][1]
            for value in (["B"], 5, {"value": "B"}):
                message["content"] = [{"type": "output_text", "text": value, "annotations": []}]
                with self.subTest(benchmark=name, text=value):
                    self.refused(run, line, '"text"', '"output" message')

    def test_request_lines_are_refused_with_a_hint(self) -> None:
        for name, run in self.runs.items():
            request = {
                "custom_id": FIRST_IDS[name],
                "method": "POST",
                "url": "/v1/chat/completions",
                "body": {"model": "m", "messages": []},
            }
            with self.subTest(benchmark=name):
                self.refused(run, request, '"response"', "hint: ", "datbench send")

    def test_lines_of_other_batch_services_are_refused(self) -> None:
        """An Anthropic Message Batches result line carries "custom_id" but no "response"."""
        for name, run in self.runs.items():
            line = {
                "custom_id": FIRST_IDS[name],
                "result": {"type": "succeeded", "message": {"content": [{"text": "B"}]}},
            }
            with self.subTest(benchmark=name):
                self.refused(run, line, '"response"', "hint: ", "Anthropic Message Batches")

    def test_gemini_batch_lines_are_refused_with_a_hint(self) -> None:
        # Gemini's batch output names its request "key" (Vertex AI: the whole "request"): it
        # was refused for lacking an "id", with no word of what the file is.
        candidates = [{"content": {"parts": [{"text": "B"}]}, "finishReason": "STOP"}]
        for name, run in self.runs.items():
            shapes = {
                "gemini": {"key": FIRST_IDS[name], "response": {"candidates": candidates}},
                "gemini error": {"key": FIRST_IDS[name], "error": {"code": 3, "message": "x"}},
                "vertex": {"request": {"contents": []}, "response": {"candidates": candidates}},
            }
            for shape, line in shapes.items():
                with self.subTest(benchmark=name, shape=shape):
                    self.refused(run, line, "hint: ", "Gemini batch output")

    def test_official_results_records_point_to_import_responses(self) -> None:
        # The official runner's records, one per line, were called task lines, a multi-turn
        # one "references.jsonl" (its turns carry rubrics).
        run = self.runs["vtb"]
        single = {
            "id": "vtb-a-medical-001",
            "task_id": "vtb-a-medical-001",
            "turncase": "single-turn",
            "rubrics": {},
            "model_answer": "Upper left.",
        }
        turns = [
            {"turn_number": k, "prompt": "p", "model_answer": "24", "rubrics": {"r1": {}}}
            for k in (0, 1)
        ]
        multi = {"id": "vtb-b-maths-002", "task_id": "vtb-b-maths-002", "turncase": "multi-turn"}
        for shape, line in (("single", single), ("multi", {**multi, "turns": turns})):
            with self.subTest(shape=shape):
                self.refused(run, line, "official results record", "datbench import-responses")

    def test_judge_lines_of_a_wrong_shape_are_refused_too(self) -> None:
        run = self.runs["dat"]
        shutil.copy(SAMPLE / "responses.jsonl", run / "responses.jsonl")
        judge = run / "judge_responses.jsonl"
        self.addCleanup(judge.unlink)
        for content in ({"t": "true"}, [{"type": "text", "text": True}]):
            line = with_message("db_chart_judge_000", {"role": "assistant", "content": content})
            judge.write_text(json.dumps(line) + "\n", encoding="utf-8")
            with self.subTest(content=content):
                result = run_cli("check-judge", "-d", str(run))
                self.assertEqual(result.exit_code, 2, result.stderr)
                self.assertIn(f"{judge}:1:", result.stderr)

    def test_a_native_error_line_needs_no_text(self) -> None:
        # A custom loop's failed call, {"id", "error"}: documented as an errored line, it was
        # refused for lacking "raw_output" (a "turns" item without one was read as errored).
        for name, run in self.runs.items():
            lines = [openai_ok(FIRST_IDS[name], "B"), {"id": SECOND_IDS[name], "error": "timeout"}]
            with self.subTest(benchmark=name):
                statuses = self.statuses(run, lines)
                self.assertEqual((statuses["ok"], statuses["errored"]), (1, 1))

    def test_a_refusal_beside_text_counts_alike_in_native_and_batch_lines(self) -> None:
        # A batch line with text and a "refusal" is an answer (ok); a native line saying the
        # same was counted refused (and censored), so the same answer counted two ways.
        for name, run in self.runs.items():
            lines = [
                openai_ok(FIRST_IDS[name], "B", refusal="I would rather not."),
                {"id": SECOND_IDS[name], "raw_output": "B", "refusal": "I would rather not."},
            ]
            with self.subTest(benchmark=name):
                statuses = self.statuses(run, lines)
                self.assertEqual((statuses["ok"], statuses["refused"]), (2, 0))

    def test_other_servers_names_for_a_cut_or_filtered_answer_are_read(self) -> None:
        # Mistral's "model_length", Anthropic-style "max_tokens" (a proxy, or a loop copying
        # stop_reason) and "refusal"/"SAFETY" were read as a normal stop: a cut answer or a
        # refusal counted as an ordinary one.
        for name, run in self.runs.items():
            first, second = FIRST_IDS[name], SECOND_IDS[name]
            for reason, status in (
                ("model_length", "truncated"),
                ("max_tokens", "truncated"),
                ("MAX_TOKENS", "truncated"),
                ("refusal", "refused"),
                ("SAFETY", "refused"),
            ):
                lines = [
                    openai_ok(first, "B", finish_reason=reason),
                    {"id": second, "raw_output": "B", "finish_reason": reason},
                ]
                with self.subTest(benchmark=name, reason=reason):
                    self.assertEqual(self.statuses(run, lines)[status], 2)

    def test_a_prompt_the_services_content_filter_refused_is_errored_and_said(self) -> None:
        # An Azure OpenAI line whose prompt the content filter refused (HTTP 400,
        # content_filter / ResponsibleAIPolicyViolation) never reached the model: an errored,
        # unanswered sample (not the model's refusal, scored), and said to be a filtered prompt
        # (a retry gets the same refusal), where it was one more "HTTP status 400".
        inner_only = azure_prompt_filtered("x")
        inner_only["response"]["body"]["error"]["code"] = None
        shapes = {
            "output file": lambda i: azure_prompt_filtered(i),
            "inner code only": lambda i: {**inner_only, "custom_id": i},
            "error file": lambda i: {
                "custom_id": i,
                "response": None,
                "error": {"code": "content_filter", "message": "filtered"},
            },
        }
        for name, run in self.runs.items():
            for shape, filtered in shapes.items():
                lines = [
                    openai_ok(FIRST_IDS[name], "B"),
                    filtered(SECOND_IDS[name]),
                    filtered(SECOND_IDS[name]),  # sent again: refused again, one sample
                ]
                responses = run / "responses.jsonl"
                text = "".join(json.dumps(x) + "\n" for x in lines)
                responses.write_text(text, encoding="utf-8")
                out = run / "r.json"
                with self.subTest(benchmark=name, shape=shape):
                    result = run_cli("score", "-d", str(run), "--allow-missing", "-o", str(out))
                    self.assertEqual(result.exit_code, 0, result.stderr)
                    summary = json.loads(out.read_text(encoding="utf-8"))["summary"]
                    statuses = summary.get("response_statuses") or summary["responses"]["statuses"]
                    self.assertEqual((statuses["errored"], statuses["refused"]), (1, 0))
                    said = [
                        line
                        for line in result.stderr.split("warning: ")
                        if "content filter" in line
                    ]
                    self.assertEqual(len(said), 1, result.stderr)
                    said_once = " ".join(said[0].split())
                    if name == "dat":
                        self.assertIn("1 of the errored samples in", said_once)
                    else:
                        self.assertTrue(said_once.endswith(f"(1: {SECOND_IDS[name]})"), said_once)
                    remade = run_cli(
                        "make-judge-tasks", "-d", str(run), "-o", str(run / "again.jsonl")
                    )
                    self.assertIn(
                        "the service's content filter refused", " ".join(remade.stderr.split())
                    )
                # The same prompt answered later (the filter changed): answered, nothing said.
                lines.append(openai_ok(SECOND_IDS[name], "B"))
                text = "".join(json.dumps(x) + "\n" for x in lines)
                responses.write_text(text, encoding="utf-8")
                with self.subTest(benchmark=name, shape=shape, answered=True):
                    result = run_cli("score", "-d", str(run), "--allow-missing", "-o", str(out))
                    self.assertNotIn("content filter", result.stderr)

    def test_a_native_judge_error_line_needs_no_text(self) -> None:
        samples = {"dat": SAMPLE, "vtb": SAMPLE.parent / "vistoolbench"}
        for name, run in self.runs.items():
            shutil.copy(samples[name] / "responses.jsonl", run / "responses.jsonl")
            self.assertEqual(run_cli("make-judge-tasks", "-d", str(run), "-q").exit_code, 0)
            judge = run / "judge_responses.jsonl"
            self.addCleanup(judge.unlink)
            line = {"id": JUDGE_IDS[name], "error": "timeout"}
            judge.write_text(json.dumps(line) + "\n", encoding="utf-8")
            with self.subTest(benchmark=name):
                result = run_cli("check-judge", "-d", str(run))
                self.assertEqual(result.exit_code, 1, result.stderr)
                self.assertIn("1 errored", result.stdout + result.stderr)

    def test_the_documented_shapes_still_read(self) -> None:
        """Content parts, null content (tool calls only) and the legacy text shape."""
        for name, run in self.runs.items():
            ident = FIRST_IDS[name]
            parts = with_message(ident, {"role": "assistant", "content": [{"type": "text"}]})
            tools = with_message(ident, {"role": "assistant", "content": None, "tool_calls": []})
            legacy = openai_ok(ident, "B")
            legacy["response"]["body"]["choices"][0] = {"index": 0, "text": "B"}
            for shape, line in (("parts", parts), ("tool calls", tools), ("legacy", legacy)):
                with self.subTest(benchmark=name, shape=shape):
                    responses = run / "responses.jsonl"
                    responses.write_text(json.dumps(line) + "\n", encoding="utf-8")
                    out = run / "r.json"
                    result = run_cli("score", "-d", str(run), "--allow-missing", "-o", str(out))
                    self.assertEqual(result.exit_code, 0, result.stderr)


if __name__ == "__main__":
    unittest.main()
