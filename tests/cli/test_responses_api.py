"""Batch output lines of the Responses API (the OpenAI Batch API's ``/v1/responses`` endpoint)
are read like chat completions: the same texts give the same report, for both benchmarks, model
and judge responses; refusals, cut answers and unfinished responses are counted as such; a
body of another shape is refused naming the file and line."""

from __future__ import annotations

import json
import shutil
import tempfile
import unittest
from pathlib import Path
from typing import Any

from datbench_cli.batch.responses import batch_outcome
from tests.cli_helpers import export_samples, run_cli
from tests.runner_lines import openai_responses_ok, write_lines


def as_responses_api(line: dict[str, Any]) -> dict[str, Any]:
    """A native ``{"id", "raw_output"}`` or judge line as a Responses API batch line (other
    shapes, such as VisualToolBench's per-task turn lists, as they are)."""
    for field in ("raw_output", "raw_judge_output"):
        if isinstance(line.get(field), str) and set(line) <= {"id", field, "response_digest"}:
            digest = line.get("response_digest")
            ident = line["id"] if digest is None else f"{line['id']}#{digest}"
            return openai_responses_ok(ident, line[field])
    return line


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


class ResponsesApiTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.runs = export_samples(cls.tmp)

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp)

    def score(self, run: Path, name: str) -> tuple[Any, dict[str, Any]]:
        result = run_cli("score", "-d", str(run), "--allow-missing", "-q", "-o", str(run / name))
        self.assertEqual(result.exit_code, 0, result.stderr)
        return result, json.loads((run / name).read_text(encoding="utf-8"))

    def test_the_same_texts_give_the_same_report(self) -> None:
        for name, (run, sample) in self.runs.items():
            with self.subTest(benchmark=name):
                shutil.copy(sample / "responses.jsonl", run / "responses.jsonl")
                self.assertEqual(run_cli("make-judge-tasks", "-d", str(run), "-q").exit_code, 0)
                shutil.copy(sample / "judge_responses.jsonl", run / "judge_responses.jsonl")
                _, native = self.score(run, "native.json")
                converted = 0
                for file in ("responses.jsonl", "judge_responses.jsonl"):
                    lines = read_lines(run / file)
                    new = [as_responses_api(line) for line in lines]
                    converted += sum(a is not b for a, b in zip(lines, new, strict=True))
                    write_lines(run / file, new)
                self.assertGreater(converted, 10)
                _, read = self.score(run, "responses-api.json")
                self.assertEqual(read["summary"], native["summary"])
                self.assertEqual(read["results"], native["results"])

    def test_statuses(self) -> None:
        run, _ = self.runs["dat"]
        ids = [json.loads(x)["id"] for x in (run / "tasks.jsonl").read_text().splitlines()][:7]
        failed = openai_responses_ok(ids[5], None, status="failed")
        failed["response"]["body"]["error"] = {"code": "server_error", "message": "boom"}
        lines = [
            openai_responses_ok(ids[0], "B"),
            openai_responses_ok(ids[1], None, refusal="I can't help with that."),
            openai_responses_ok(ids[2], "The answer is", incomplete="max_output_tokens"),
            openai_responses_ok(ids[3], None, incomplete="content_filter"),
            openai_responses_ok(ids[4], None),
            failed,
            openai_responses_ok(ids[6], None, status="queued"),
        ]
        write_lines(run / "responses.jsonl", lines)
        _, report = self.score(run, "statuses.json")
        statuses = {r["id"]: r["metadata"]["response_status"] for r in report["results"]}
        self.assertEqual(
            [statuses[i] for i in ids[:5]], ["ok", "refused", "truncated", "refused", "empty"]
        )
        counts = report["summary"]["response_statuses"]
        self.assertEqual((counts["errored"], report["summary"]["truncated_responses"]), (2, 1))
        self.assertNotIn(ids[5], statuses)
        self.assertNotIn(ids[6], statuses)
        self.assertEqual(batch_outcome(failed).error, "boom")
        self.assertEqual(batch_outcome(lines[6]).error, 'the response\'s status is "queued"')
        unknown = openai_responses_ok(ids[0], "B", status="incomplete", incomplete="other")
        self.assertEqual(batch_outcome(unknown).error, "the response is incomplete (other)")

    def test_bodies_of_another_shape_are_refused(self) -> None:
        for name, (run, _) in self.runs.items():
            first = json.loads((run / "tasks.jsonl").read_text().splitlines()[0])["id"]
            if name == "vtb":
                first = f"{first}::0"
            shapes: dict[str, Any] = {
                "output string": "B",
                "output of strings": ["B"],
                "content string": [{"type": "message", "role": "assistant", "content": "B"}],
                "content of strings": [{"type": "message", "role": "assistant", "content": ["B"]}],
                "output number": 5,
                "output of numbers": [3],
                "content number": [{"type": "message", "role": "assistant", "content": 7}],
                # A part of another type with text: its text was left out, the answer scored
                # as empty.
                "text part": [
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "text", "text": "B"}],
                    }
                ],
            }
            for shape, output in shapes.items():
                with self.subTest(benchmark=name, shape=shape):
                    line = openai_responses_ok(first, "B")
                    line["response"]["body"]["output"] = output
                    responses = write_lines(run / "responses.jsonl", [line])
                    result = run_cli("score", "-d", str(run), "--allow-missing", "-q")
                    self.assertEqual(result.exit_code, 2, result.stderr)
                    self.assertIn(f"error: {responses}:1:", result.stderr)
                    self.assertIn('"output', result.stderr)
                    self.assertNotIn("Traceback", result.stderr)


if __name__ == "__main__":
    unittest.main()
