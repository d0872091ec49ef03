"""``datbench send`` against a real local HTTP server that answers, fails, hangs and rate-limits;
resume after a kill; ingestion of batch output lines by ``score``."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from collections import Counter
from pathlib import Path

from datbench_cli.batch.requests import RequestSettings, chat_messages, request_line
from datbench_cli.batch.responses import batch_line_result, load_vlm_responses
from datbench_cli.batch.sender import (
    OutputFile,
    SendAborted,
    SendConfig,
    answered_ids,
    plan_send,
    retry_after,
    send_requests,
)
from datbench_cli.errors import UsageError
from datbench_cli.files.append_log import repair_tail
from tests.chat_server import ChatServer
from tests.cli_helpers import ROOT, make_dataset, make_row, run_cli

IDS = ["a", "b", "c", "d", "e", "f", "g", "h"]


def prompt(ident: str) -> str:
    return f"q:{ident}"


def write_requests(path: Path, ids: list[str]) -> Path:
    settings = RequestSettings("test-model", 16)
    rows = [request_line(i, chat_messages(prompt(i)), settings) for i in ids]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def out_lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def successes(path: Path) -> Counter[str]:
    return Counter(
        line["custom_id"] for line in out_lines(path) if batch_line_result(line)[1] is None
    )


HANG_TIMEOUT = 0.3  # what a test whose server hangs on cue waits before the client gives up


def quick(server: ChatServer, **overrides: object) -> SendConfig:
    options = {
        "base_url": server.base_url,
        "concurrency": 4,
        # Generous, so that an answered request passes on a loaded machine; the tests whose
        # server hangs on cue pass a short one.
        "timeout": 10.0,
        "max_retries": 3,
        "backoff_base": 0.001,
        "backoff_max": 0.02,
    }
    options.update(overrides)
    return SendConfig(**options)  # type: ignore[arg-type]


class SenderTests(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.requests = write_requests(self.tmp / "tasks.openai.00001.jsonl", IDS)
        self.out = self.tmp / "out.jsonl"
        self.server = ChatServer()
        self.server.__enter__()
        self.addCleanup(self.server.__exit__)
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def send(self, **overrides: object):
        with OutputFile(self.out) as output:
            plan = plan_send([self.requests], output)
            config = quick(self.server, **overrides)
            return plan, send_requests([self.requests], output, config, plan)

    def test_survives_failures_with_nothing_lost_and_nothing_twice(self) -> None:
        self.server.retry_after = "30"  # capped by backoff_max, so the test stays fast
        self.server.script.update(
            {
                prompt("b"): ["500", "ok"],
                prompt("c"): ["429", "429", "ok"],
                prompt("d"): ["hang", "ok"],
                prompt("e"): ["400"],
                prompt("f"): ["length"],
                prompt("g"): ["garbage", "error200", "ok"],
                prompt("h"): ["drop", "ok"],
            }
        )
        plan, result = self.send(timeout=HANG_TIMEOUT)
        self.assertEqual(plan.pending, 8)
        self.assertEqual(result.answered, 7)
        self.assertEqual(result.truncated, 1)
        self.assertEqual(result.failed_ids, ["e"])
        self.assertEqual(successes(self.out), Counter({i: 1 for i in IDS if i != "e"}))
        self.assertEqual(
            self.server.hits,
            Counter({prompt(i): n for i, n in zip(IDS, [1, 2, 3, 2, 1, 1, 3, 2], strict=True)}),
        )
        failed = [line for line in out_lines(self.out) if line["custom_id"] == "e"]
        self.assertEqual(len(failed), 1)
        self.assertEqual(failed[0]["response"]["status_code"], 400)
        self.assertEqual(failed[0]["response"]["body"]["error"]["message"], "scripted 400")
        self.assertEqual(set(self.server.paths), {"/v1/chat/completions"})
        for line in out_lines(self.out):
            self.assertEqual(set(line), {"id", "custom_id", "response", "error"})
            self.assertTrue(line["id"].startswith("batch_req_"))

        # Run again: only the failed id is sent; then it succeeds on a third run.
        plan, result = self.send()
        self.assertEqual((plan.pending, plan.already_answered), (1, 7))
        self.assertEqual(self.server.hits[prompt("e")], 2)
        self.assertEqual(self.server.hits[prompt("a")], 1)
        self.server.script[prompt("e")] = ["ok"]
        plan, result = self.send()
        self.assertEqual(result.answered, 1)
        self.assertEqual(successes(self.out), Counter(dict.fromkeys(IDS, 1)))
        loaded = load_vlm_responses(self.out)
        self.assertEqual(sorted(r.id for r in loaded.vlm), IDS)
        self.assertEqual(loaded.errored_ids, [], "a later success supersedes the error line")
        self.assertEqual(loaded.truncated_ids, ["f"])

        before = self.out.read_bytes()
        plan, result = self.send()
        self.assertEqual((plan.pending, result.answered), (0, 0))
        self.assertEqual(self.out.read_bytes(), before)

    def test_persistent_server_errors_become_error_lines(self) -> None:
        self.server.script[prompt("c")] = ["error200"]
        self.server.script[prompt("a")] = ["500"]
        self.server.script[prompt("b")] = ["hang"]
        _, result = self.send(max_retries=1, timeout=HANG_TIMEOUT)
        self.assertEqual(sorted(result.failed_ids), ["a", "b", "c"])
        self.assertEqual(self.server.hits[prompt("a")], 2)
        self.assertEqual(self.server.hits[prompt("c")], 2)
        lines = {line["custom_id"]: line for line in out_lines(self.out)}
        self.assertEqual(lines["a"]["response"]["status_code"], 500)
        self.assertEqual(lines["c"]["error"]["code"], "invalid_response")
        self.assertIn("upstream overloaded", lines["c"]["error"]["message"])
        self.assertIsNone(lines["b"]["response"])
        self.assertEqual(lines["b"]["error"]["code"], "timeout")

    def test_refused_credentials_stop_the_run(self) -> None:
        self.server.default_script = ["401"]
        with self.assertRaises(SendAborted) as caught:
            self.send(concurrency=2)
        self.assertIn("401", str(caught.exception))
        self.assertLessEqual(sum(self.server.hits.values()), 2)
        self.assertEqual(self.out.read_text(), "")

    def test_unreachable_server_stops_the_run(self) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        config = SendConfig(
            f"http://127.0.0.1:{port}", max_retries=1, backoff_base=0.001, backoff_max=0.01
        )
        with OutputFile(self.out) as output, self.assertRaises(SendAborted) as caught:
            send_requests([self.requests], output, config, plan_send([self.requests], output))
        self.assertIn("cannot reach", str(caught.exception))

    def test_model_override_and_duplicate_ids(self) -> None:
        write_requests(self.requests, ["a", "b", "a"])
        plan, result = self.send(model="other")
        self.assertEqual(plan.duplicate_ids, ["a"])
        self.assertEqual(result.answered, 2)
        self.assertEqual(self.server.models, ["other", "other"])


class CommandTests(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.requests = write_requests(self.tmp / "tasks.openai.00001.jsonl", IDS)
        self.out = self.tmp / "out.jsonl"
        self.server = ChatServer()
        self.server.__enter__()
        self.addCleanup(self.server.__exit__)
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def args(self, *extra: str) -> list[str]:
        return [
            "send",
            str(self.requests),
            "--base-url",
            self.server.base_url,
            "-o",
            str(self.out),
            "--concurrency",
            "2",
            "--timeout",
            "5",
            "--max-backoff",
            "0.01",
            *extra,
        ]

    def test_api_key_comes_from_the_environment_and_is_never_shown(self) -> None:
        secret = "sk-test-4f1d9c"
        result = run_cli(*self.args("--api-key-env", "MY_KEY"), env={"MY_KEY": secret})
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(set(self.server.authorizations), {f"Bearer {secret}"})
        for text in (result.stdout, result.stderr, self.out.read_text()):
            self.assertNotIn(secret, text)
        self.assertIn("8 answered", result.stdout)

        result = run_cli(*self.args("--api-key-env", "NOT_SET_ANYWHERE"))
        self.assertEqual(result.exit_code, 2)
        self.assertIn("NOT_SET_ANYWHERE", result.stderr)

    def test_no_key_when_the_default_variable_is_unset(self) -> None:
        result = run_cli(*self.args(), env={"OPENAI_API_KEY": None})  # type: ignore[dict-item]
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(set(self.server.authorizations), {None})

    def test_failed_requests_exit_1_and_name_the_ids(self) -> None:
        self.server.script[prompt("c")] = ["400"]
        result = run_cli(*self.args())
        self.assertEqual(result.exit_code, 1)
        self.assertIn("1 request(s) failed: c", result.stderr)
        self.assertIn("run the same command again", result.stderr)

    def test_prompts_a_content_filter_refused_are_said_apart(self) -> None:
        # A prompt the service's filter refused (Azure: 400, content_filter) was one more
        # failed request "to retry", which gets the same refusal every time.
        self.server.script[prompt("c")] = ["filtered"]
        self.server.script[prompt("d")] = ["400"]
        result = run_cli(*self.args())
        self.assertEqual(result.exit_code, 1)
        said = " ".join(result.stderr.split())
        self.assertRegex(said, r"2 request\(s\) failed: (c, d|d, c);")  # in finishing order
        self.assertIn(
            "(1 of them prompts the service's content filter refused, which a retry gets again: c)",
            said,
        )

    def test_answers_of_another_model_already_in_the_output_are_named(self) -> None:
        # A second model sent into the first one's output used to skip every request with no
        # word: "8 already answered" read like a finished run of the model asked for.
        self.assertEqual(run_cli(*self.args()).exit_code, 0)
        result = run_cli(*self.args("--model", "other-model"))
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertIn(
            "8 answer(s) already in "
            f"{self.out} came from model 'test-model', not 'other-model': they are kept",
            " ".join(result.stderr.split()),
        )
        self.assertEqual(sum(self.server.hits.values()), 8)
        # A longer name is another model unless what it adds is a snapshot date or number:
        # gpt-4o-mini is not gpt-4o (it was taken for the same model, with no warning).
        result = run_cli(*self.args("--model", "test-model-mini"))
        self.assertIn("came from model 'test-model', not 'test-model-mini'", result.stderr)
        # The same model, or a dated name a server gives it, is no other model.
        for same in ("test-model", "test-model-2024-08-06", "org/test-model"):
            result = run_cli(*self.args("--model", same))
            self.assertEqual(result.exit_code, 0, result.stderr)
            self.assertNotIn("came from model", result.stderr)

    def test_bad_request_line_names_file_and_line(self) -> None:
        with self.requests.open("a") as handle:
            handle.write('{"custom_id": "z"}\n')
        result = run_cli(*self.args())
        self.assertEqual(result.exit_code, 2)
        self.assertIn(f"{self.requests}:9:", result.stderr)
        self.assertEqual(sum(self.server.hits.values()), 0)

    def test_a_streamed_request_is_refused_before_anything_is_sent(self) -> None:
        # A streamed answer is no JSON object: every attempt (each a generation paid for) was
        # retried as unreadable, then written as a failure, and a rerun did it all again.
        line = {"custom_id": "z", "body": {"model": "m", "messages": [], "stream": True}}
        with self.requests.open("a") as handle:
            handle.write(json.dumps(line) + "\n")
        result = run_cli(*self.args())
        self.assertEqual(result.exit_code, 2, result.stderr)
        self.assertIn(f"{self.requests}:9:", result.stderr)
        self.assertIn('remove "stream"', result.stderr)
        self.assertEqual(sum(self.server.hits.values()), 0)
        self.assertFalse(self.out.exists())

    def test_request_files_of_two_runs_need_an_output(self) -> None:
        """Without -o, the answers go to the run directory holding requests/; request files of
        two runs went, all of them, to ./responses.jsonl (the working directory's)."""
        parts = []
        for run in ("run-a", "run-b"):
            (self.tmp / run / "requests").mkdir(parents=True)
            parts.append(
                str(write_requests(self.tmp / run / "requests/tasks.openai.00001.jsonl", IDS))
            )
        argv = ["send", *parts, "--base-url", self.server.base_url, "--max-backoff", "0.01"]
        with contextlib.chdir(self.tmp):
            result = run_cli(*argv)
        self.assertEqual(result.exit_code, 2, result.stderr)
        self.assertIn("error: the request files lie in 2 folders", result.stderr)
        self.assertEqual(sum(self.server.hits.values()), 0)
        self.assertFalse((self.tmp / "responses.jsonl").exists())
        for run in ("run-a", "run-b"):  # each run's own files still default to that run
            result = run_cli(
                *argv[:1], str(self.tmp / run / "requests/tasks.openai.00001.jsonl"), *argv[3:]
            )
            self.assertEqual(result.exit_code, 0, result.stderr)
            self.assertEqual(len(out_lines(self.tmp / run / "responses.jsonl")), len(IDS))

    def test_a_killed_send_resumed_with_the_same_command_completes_the_file(self) -> None:
        self.server.hang_after = 3
        command = [sys.executable, "-m", "datbench_cli", *self.args()]
        env = {**os.environ, "NO_COLOR": "1"}
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                if self.out.is_file() and self.out.read_bytes().count(b"\n") >= 3:
                    break
                time.sleep(0.02)
        finally:
            process.kill()
            process.wait()
        first = successes(self.out)
        self.assertEqual(sum(first.values()), 3)
        with self.out.open("ab") as handle:  # what a kill in the middle of a write leaves
            handle.write(b'{"id": "batch_req_x", "custom_id": "zz", "respo')
        self.server.release()

        result = run_cli(*self.args())
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertIn("dropped an incomplete last line", result.stderr)
        self.assertEqual(successes(self.out), Counter(dict.fromkeys(IDS, 1)))
        for ident in first:
            self.assertEqual(self.server.hits[prompt(ident)], 1, "answered before the kill")
        self.assertNotIn("zz", self.out.read_text())


class RepairAndParsingTests(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def test_repair_tail(self) -> None:
        path = self.tmp / "out.jsonl"
        path.write_text('{"custom_id": "a"}\n')
        self.assertIsNone(repair_tail(path))
        path.write_text('{"custom_id": "a"}\n{"custom_id": "b"}')
        self.assertIn("completed", repair_tail(path))
        self.assertEqual(path.read_text(), '{"custom_id": "a"}\n{"custom_id": "b"}\n')
        path.write_text('{"custom_id": "a"}\n{"custom_id": "b", "resp')
        self.assertIn("dropped", repair_tail(path))
        self.assertEqual(path.read_text(), '{"custom_id": "a"}\n')
        path.write_text('{"custom_')
        repair_tail(path)
        self.assertEqual(path.read_text(), "")
        self.assertIsNone(repair_tail(self.tmp / "absent.jsonl"))

    def test_answered_ids_in_an_existing_output(self) -> None:
        path = self.tmp / "out.jsonl"
        rows = [
            {"id": "n1", "raw_output": "x"},
            {"id": "n2", "raw_judge_output": "true"},
            {"id": "n3", "something": "else"},
            # A native line of a failed call (score counts it errored): sent again.
            {"id": "n4", "raw_output": "", "error": "upstream timeout"},
            {"custom_id": "b1", "response": None, "error": "boom"},
            {
                "custom_id": "b2",
                "response": {
                    "status_code": 200,
                    "body": {
                        "choices": [{"message": {"content": "ok"}, "finish_reason": "length"}]
                    },
                },
            },
        ]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        self.assertEqual(answered_ids(path), {"n1": None, "n2": None, "b2": None})

    def test_one_output_file_takes_one_send_at_a_time(self) -> None:
        path = self.tmp / "out.jsonl"
        with OutputFile(path), self.assertRaises(UsageError), OutputFile(path):
            pass
        with OutputFile(path) as output:
            output.append({"custom_id": "a"})
        self.assertEqual(path.read_text(), '{"custom_id":"a"}\n')

    def test_retry_after_header(self) -> None:
        self.assertEqual(retry_after("3"), 3.0)
        self.assertEqual(retry_after("0.25"), 0.25)
        self.assertIsNone(retry_after("soon"))
        self.assertIsNone(retry_after(None))
        self.assertEqual(retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), 0.0)

    def test_endpoint_accepts_a_base_with_or_without_v1(self) -> None:
        for base in ("http://h:8000", "http://h:8000/", "http://h:8000/v1", "http://h:8000/v1/"):
            with self.subTest(base=base):
                self.assertEqual(
                    SendConfig(base).endpoint("/v1/chat/completions"),
                    "http://h:8000/v1/chat/completions",
                )

    def test_the_key_is_not_in_the_config_repr(self) -> None:
        self.assertNotIn("sk-secret", repr(SendConfig("http://h", api_key="sk-secret")))


class EndToEndTests(unittest.TestCase):
    """export-tasks --format openai -> send -> make-judge-tasks --format openai -> send -> score,
    and score's handling of batch output lines."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        rows = [make_row(f"s{i}") for i in range(5)]
        rows.append(make_row("j1", eval_mode="judge", judge_prompt="Is {model_answer} right?"))
        source = make_dataset(cls.tmp, {"math": rows})
        cls.run_dir = cls.tmp / "run"
        result = run_cli(
            "export-tasks",
            "math",
            "--source",
            str(source),
            "-d",
            str(cls.run_dir),
            "--format",
            "openai",
            "--model",
            "vlm",
        )
        assert result.exit_code == 0, result.stderr

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_the_whole_pipeline_through_send(self) -> None:
        work = self.tmp / "pipeline"
        shutil.copytree(self.run_dir, work)
        requests = work / "requests" / "tasks.openai.00001.jsonl"
        with ChatServer(default_answer="yes") as server:
            result = run_cli("send", str(requests), "--base-url", server.base_url)
            self.assertEqual(result.exit_code, 0, result.stderr)
            self.assertTrue((work / "responses.jsonl").is_file(), "default output in the run")
            result = run_cli(
                "make-judge-tasks", "-d", str(work), "--format", "openai", "--model", "judge"
            )
            self.assertEqual(result.exit_code, 0, result.stderr)
            judge_requests = work / "requests" / "judge_tasks.openai.00001.jsonl"
            result = run_cli("send", str(judge_requests), "--base-url", server.base_url)
            self.assertEqual(result.exit_code, 0, result.stderr)
            judged = [p for p in server.hits if p.startswith("Is yes right?\n\nQuestion:\n")]
            self.assertEqual(len(judged), 1)
        self.assertTrue((work / "judge_responses.jsonl").is_file())
        result = run_cli("score", "-d", str(work), "--json", "--strict-judge")
        self.assertEqual(result.exit_code, 0, result.stderr)
        summary = json.loads(result.stdout)
        self.assertEqual(summary["total_samples"], 6)
        self.assertEqual(summary["judge_samples"], 1)
        self.assertEqual(summary["judge_accuracy"], 1.0)
        self.assertEqual(summary["errored_responses"], 0)
        self.assertEqual(summary["missing_responses"], 0)

    def test_score_counts_truncated_and_errored_lines_by_custom_id(self) -> None:
        def ok(ident: str, reason: str = "stop", status: int = 200) -> dict:
            body = {"choices": [{"message": {"content": "yes"}, "finish_reason": reason}]}
            response = {"status_code": status, "request_id": "", "body": body}
            return {"id": "x", "custom_id": ident, "response": response, "error": None}

        lines = [
            ok("s4", "length"),  # order differs from the tasks: matched by custom_id
            ok("s0"),
            ok("s1", status=500),
            {"id": "x", "custom_id": "s2", "response": None, "error": "engine died"},
            {"custom_id": "s3", "response": None, "error": {"code": "timeout", "message": "t"}},
            {"custom_id": "j1", "response": None, "error": {"message": "first try failed"}},
            ok("j1"),
        ]
        work = self.tmp / "ingest"
        shutil.copytree(self.run_dir, work)
        text = "".join(json.dumps(line) + "\n" for line in lines)
        (work / "responses.jsonl").write_text(text + '{"id": "x", "custom_id": "s3", "resp')
        result = run_cli("score", "-d", str(work), "--json")
        self.assertEqual(result.exit_code, 1, "errored lines leave samples unanswered")
        self.assertIn("coverage check failed: 3 of 6", result.stderr)
        result = run_cli("score", "-d", str(work), "--json", "--allow-missing")
        self.assertEqual(result.exit_code, 0, result.stderr)
        summary = json.loads(result.stdout)
        self.assertEqual(summary["response_statuses"]["errored"], 3)
        self.assertEqual(summary["response_statuses"]["truncated"], 1)
        self.assertEqual(summary["truncated_responses"], 1)
        self.assertEqual(summary["errored_responses"], 3)
        self.assertEqual(summary["total_samples"], 3)
        self.assertEqual(summary["missing_responses"], 3)
        self.assertIn("token limit", result.stderr)
        self.assertIn("incomplete", result.stderr)


if __name__ == "__main__":
    unittest.main()
