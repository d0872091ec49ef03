"""``datbench send`` against hostile or odd servers (issue 15): credentials stay with their host,
every exchange is bounded in time and size, no request stops the run or is sent for ever, and
URLs and request bodies take the shapes real APIs need. Every test has its own time bound, and
hitting it fails the test."""

from __future__ import annotations

import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from datbench_cli.batch.endpoint import BaseUrl, check_path, choose_key
from datbench_cli.batch.requests import RequestSettings, chat_messages, request_line
from datbench_cli.batch.responses import load_vlm_responses
from datbench_cli.batch.sender import (
    OutputFile,
    SendAborted,
    SendConfig,
    SendResult,
    plan_send,
    send_requests,
)
from datbench_cli.errors import UsageError
from tests.batch.test_sender import IDS, out_lines, prompt, successes, write_requests
from tests.chat_server import ChatServer
from tests.cli_helpers import ROOT, make_dataset, make_row, run_cli
from tests.raw_server import RawServer
from tests.vtb_support import SAMPLE_DIR, SAMPLE_RESPONSES

T = TypeVar("T")
SECRET = "sk-test-hardening-93b1"


def bounded(case: unittest.TestCase, seconds: float, work: Callable[[], T]) -> T:
    """``work()``'s result; the test fails when it takes longer than ``seconds``."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    started = time.monotonic()
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        case.fail(f"still running after its {seconds} s bound")
    if "error" in box:
        raise box["error"]
    case.assertLess(time.monotonic() - started, seconds)
    return box["value"]


def http_head(status: str, *headers: str) -> bytes:
    return ("\r\n".join([f"HTTP/1.1 {status}", *headers]) + "\r\n\r\n").encode()


def completion(content: str | None = "yes") -> bytes:
    message = {"role": "assistant", "content": content}
    return json.dumps({"choices": [{"message": message, "finish_reason": "stop"}]}).encode()


class _Case(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.requests = write_requests(self.tmp / "tasks.openai.00001.jsonl", IDS[:2])
        self.out = self.tmp / "out.jsonl"

    def send(self, base_url: str, **options: Any) -> SendResult:
        settings: dict[str, Any] = {
            "base_url": base_url,
            "concurrency": 2,
            # Generous: a test that answers must pass on a loaded machine (a test of the
            # timeout passes its own; under the tests' 20 s bounds).
            "timeout": 15.0,
            "max_retries": 0,
            "backoff_base": 0.001,
            "backoff_max": 0.01,
        }
        settings.update(options)
        config = SendConfig(**settings)
        with OutputFile(self.out) as output:
            return send_requests(
                [self.requests], output, config, plan_send([self.requests], output)
            )

    def cli(self, base_url: str, *extra: str, env: dict[str, Any] | None = None) -> Any:
        args = ["send", str(self.requests), "--base-url", base_url, "-o", str(self.out)]
        return run_cli(*args, "--max-backoff", "0.01", *extra, env=env)


class CredentialTests(_Case):
    """Never forward credentials across hosts; a key only goes to the host it is meant for."""

    def test_a_key_in_the_base_urls_query_is_never_printed(self) -> None:
        # Some servers take the key as ?key=...: the info line and the stopping error showed it.
        def refuse(conn: socket.socket) -> None:
            conn.sendall(http_head("401 Unauthorized", "Content-Length: 0"))

        with RawServer(refuse) as server:
            result = bounded(self, 20, lambda: self.cli(f"{server.base_url}?key={SECRET}"))
        self.assertEqual(result.exit_code, 2, result.stderr)
        self.assertIn("?key=***", result.stderr)
        self.assertNotIn(SECRET, result.stderr + result.stdout)
        self.assertIn(f"key={SECRET}".encode(), server.requests[0])  # still sent as given

    def test_a_server_echoing_the_key_does_not_get_it_printed_or_written(self) -> None:
        # Some servers quote the key they were sent in their error message ("Incorrect API
        # key provided: ..."): it was printed and written to the output's error lines. A proxy
        # may say it with status 200 (an error body, no "choices"): retried, then an error line.
        for status in ("400 Bad Request", "401 Unauthorized", "200 OK"):
            with self.subTest(status=status):

                def echo(conn: socket.socket, status: str = status) -> None:
                    message = f"Incorrect API key provided: {SECRET}"
                    body = json.dumps({"error": {"message": message}}).encode()
                    head = http_head(status, f"Content-Length: {len(body)}", f"X-Key: {SECRET}")
                    conn.sendall(head + body)

                self.out.unlink(missing_ok=True)
                with RawServer(echo) as server:
                    result = bounded(
                        self, 20,
                        lambda: self.cli(server.base_url, "--api-key-env", "MY_KEY",
                                         "--max-retries", "1", env={"MY_KEY": SECRET}),
                    )  # fmt: skip
                self.assertIn(result.exit_code, (1, 2), result.stderr)
                self.assertIn("Incorrect API key provided: ***", result.stderr + self.out_text())
                self.assertNotIn(SECRET, result.stderr + result.stdout + self.out_text())

    def test_a_request_id_echoing_the_key_is_not_written(self) -> None:
        # The x-request-id header of a 200 (an answer, an error body, an answer too large) is
        # written to the output as the line's request_id: a proxy echoing the Authorization
        # header there put the key in the file.
        large = completion("y" * 5000), ("--max-response-mb", "0.001")
        for body, extra in ((completion(), ()), (b'{"error": "down"}', ()), large):
            with self.subTest(body=body, extra=extra):

                def echo(conn: socket.socket, body: bytes = body) -> None:
                    head = http_head(
                        "200 OK", f"Content-Length: {len(body)}", f"X-Request-Id: r-{SECRET}"
                    )
                    conn.sendall(head + body)

                self.out.unlink(missing_ok=True)
                args = ("--api-key-env", "MY_KEY", "--max-retries", "0", *extra)
                with RawServer(echo) as server:
                    result = bounded(
                        self, 20,
                        lambda args=args: self.cli(server.base_url, *args, env={"MY_KEY": SECRET}),
                    )  # fmt: skip
                self.assertIn(result.exit_code, (0, 1), result.stderr)
                self.assertIn("r-***", self.out_text())
                self.assertNotIn(SECRET, result.stderr + result.stdout + self.out_text())

    def out_text(self) -> str:
        return self.out.read_text() if self.out.exists() else ""

    def test_a_redirect_keeping_the_query_key_does_not_print_it(self) -> None:
        # An http -> https redirect keeps the query: its Location was printed as it came.
        def redirect(conn: socket.socket) -> None:
            location = f"https://localhost/v1/chat/completions?key={SECRET}"
            conn.sendall(http_head("301 Moved", f"Location: {location}", "Content-Length: 0"))

        with RawServer(redirect) as server:
            result = bounded(self, 20, lambda: self.cli(f"{server.base_url}?key={SECRET}"))
        self.assertEqual(result.exit_code, 2, result.stderr)
        self.assertIn("completions?key=***", result.stderr)
        self.assertNotIn(SECRET, result.stderr + result.stdout)

    def test_a_redirect_to_another_host_is_not_followed(self) -> None:
        with RawServer(lambda conn: conn.sendall(http_head("200 OK"))) as other:
            location = f"http://localhost:{other.port}/v1/chat/completions"
            for status in ("302 Found", "307 Temporary Redirect", "308 Permanent Redirect"):
                with self.subTest(status=status):

                    def redirect(conn: socket.socket, status: str = status) -> None:
                        conn.sendall(
                            http_head(status, f"Location: {location}", "Content-Length: 0")
                        )

                    with RawServer(redirect) as server:
                        self.out.unlink(missing_ok=True)
                        result = bounded(
                            self, 20,
                            lambda: self.cli(server.base_url, "--api-key-env", "MY_KEY",
                                             env={"MY_KEY": SECRET}),
                        )  # fmt: skip
                        self.assertEqual(result.exit_code, 2, result.stderr)
                        self.assertIn("redirect", result.stderr)
                        self.assertIn("--base-url", result.stderr)
                        self.assertNotIn(SECRET, result.stderr + result.stdout)
                        self.assertTrue(server.requests, "the first host was asked")
                        self.assertIn(f"Bearer {SECRET}".encode(), server.requests[0])
            self.assertEqual(other.requests, [], "nothing, and no key, reached the other host")

    def test_the_openai_key_goes_only_to_the_openai_api(self) -> None:
        with ChatServer() as server:
            result = bounded(
                self, 20, lambda: self.cli(server.base_url, env={"OPENAI_API_KEY": SECRET})
            )
            self.assertEqual(result.exit_code, 0, result.stderr)
            self.assertEqual(set(server.authorizations), {None})
            self.assertIn("OPENAI_API_KEY is not sent", result.stderr)
            self.assertNotIn(SECRET, result.stderr + result.stdout)

            # Named for this server, the key goes there (and only there).
            self.out.unlink()
            result = bounded(
                self, 20,
                lambda: self.cli(server.base_url, "--api-key-env", "OPENAI_API_KEY",
                                 env={"OPENAI_API_KEY": SECRET}),
            )  # fmt: skip
            self.assertEqual(result.exit_code, 0, result.stderr)
            self.assertEqual(server.authorizations[-1], f"Bearer {SECRET}")

    def test_which_key_goes_where(self) -> None:
        env = {"OPENAI_API_KEY": SECRET, "MINE": "sk-mine"}
        openai = choose_key(BaseUrl.parse("https://api.openai.com/v1"), None, env)
        self.assertEqual(openai.key, SECRET)
        for base in (
            "http://api.openai.com/v1",  # plain http: never
            "https://api.openai.com.evil.example/v1",
            "https://example.com/v1",
            "http://10.0.0.5:8000/v1",
            "http://localhost:8000/v1",
        ):
            with self.subTest(base=base):
                choice = choose_key(BaseUrl.parse(base), None, env)
                self.assertIsNone(choice.key)
                self.assertTrue(choice.withheld)
                self.assertIn("--api-key-env", choice.note or "")
        remote = choose_key(BaseUrl.parse("http://10.0.0.5:8000/v1"), "MINE", env)
        self.assertEqual(remote.key, "sk-mine")
        self.assertIn("plain http", remote.note or "")
        local = choose_key(BaseUrl.parse("http://127.0.0.1:8000/v1"), "MINE", env)
        self.assertEqual((local.key, local.note), ("sk-mine", None))
        with self.assertRaises(UsageError):
            choose_key(BaseUrl.parse("https://example.com"), "UNSET_VARIABLE_X", env)
        with self.assertRaises(UsageError):
            BaseUrl.parse(f"https://user:{SECRET}@example.com/v1")

    def test_a_password_in_a_bad_base_url_is_not_printed(self) -> None:
        for base in (
            f"http://user:{SECRET}@127.0.0.1:99999/v1",  # port out of range
            f"http://user:{SECRET} x@127.0.0.1/v1",  # a space
            f"ftp://user:{SECRET}@127.0.0.1/v1",  # not http(s)
            f"http://user:{SECRET}@[::1/v1",  # unclosed IPv6 bracket
            f"http://user:{SECRET}@127.0.0.1/v1#x",
        ):
            with self.subTest(base=base):
                result = self.cli(base)
                self.assertEqual(result.exit_code, 2, result.stderr)
                self.assertTrue(result.stderr.startswith("error: --base-url"), result.stderr)
                self.assertNotIn(SECRET, result.stderr + result.stdout)


class ProxyTests(_Case):
    """A proxy from the environment: the credentials of its URL go to it, its 407 stops."""

    def proxied(self, proxy: str) -> Any:
        names = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY")
        saved = {name: os.environ.pop(name) for name in names if name in os.environ}
        self.addCleanup(os.environ.update, saved)
        os.environ["HTTP_PROXY"] = proxy
        self.addCleanup(os.environ.pop, "HTTP_PROXY")
        # The answers come from the proxy: the host never resolves.
        return self.cli("http://model-host.invalid:8000/v1")

    def test_the_credentials_of_the_proxy_url_go_to_the_proxy(self) -> None:
        body = completion()

        def answer(conn: socket.socket) -> None:
            conn.sendall(http_head("200 OK", f"Content-Length: {len(body)}") + body)

        with RawServer(answer) as proxy:
            result = bounded(
                self, 20, lambda: self.proxied(f"http://alice:s3%40cr%3At@127.0.0.1:{proxy.port}")
            )
            self.assertEqual(result.exit_code, 0, result.stderr)
            self.assertEqual(len(proxy.requests), 2)
            for request in proxy.requests:
                self.assertIn(b"POST http://model-host.invalid:8000/v1/chat/completions", request)
                # base64 of "alice:s3@cr:t", percent-decoded as curl and requests do.
                self.assertIn(b"Proxy-Authorization: Basic YWxpY2U6czNAY3I6dA==", request)
        self.assertEqual(successes(self.out), {"a": 1, "b": 1})

    def test_a_proxy_asking_for_credentials_stops_the_run(self) -> None:
        body = b'{"error": "proxy authentication required"}'

        def refuse(conn: socket.socket) -> None:
            conn.sendall(
                http_head("407 Proxy Authentication Required", 'Proxy-Authenticate: Basic realm="x"',
                          f"Content-Length: {len(body)}") + body
            )  # fmt: skip

        with RawServer(refuse) as proxy:
            result = bounded(self, 20, lambda: self.proxied(f"http://127.0.0.1:{proxy.port}"))
        self.assertEqual(result.exit_code, 2, result.stderr)
        self.assertIn("HTTP 407", result.stderr)
        self.assertEqual(out_lines(self.out), [], "no request was written as failed")

    def test_a_password_in_an_unsupported_proxy_url_is_not_printed(self) -> None:
        result = self.proxied(f"socks5://user:{SECRET}@127.0.0.1:1080")
        self.assertEqual(result.exit_code, 2, result.stderr)
        self.assertIn("socks5://***@127.0.0.1:1080", result.stderr)
        self.assertNotIn(SECRET, result.stderr + result.stdout)


class BoundTests(_Case):
    """--timeout bounds the whole exchange; the answer's size is capped."""

    def test_bounds_that_are_not_numbers_or_too_large_are_usage_errors(self) -> None:
        with ChatServer() as server:
            for option in (["--timeout", "1e10"], ["--timeout", "inf"], ["--timeout", "nan"],
                           ["--max-backoff", "nan"], ["--max-backoff", "inf"],
                           ["--max-response-mb", "inf"], ["--max-response-mb", "nan"],
                           ["--max-response-mb", "256"]):  # fmt: skip
                with self.subTest(option=option):
                    result = self.cli(server.base_url, *option)
                    self.assertEqual(result.exit_code, 2, result.stderr)
                    self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
                    self.assertTrue(result.stderr.startswith(f"error: {option[0]}"), result.stderr)
                    self.assertFalse(self.out.exists())
            self.assertEqual(server.hits, {}, "nothing was sent")
            # The largest bound is still usable.
            self.assertEqual(self.cli(server.base_url, "--timeout", "1e9").exit_code, 0)
            self.out.unlink()
            self.assertEqual(self.cli(server.base_url, "--max-response-mb", "255").exit_code, 0)

    def dribble(self, head: bytes, body: bytes) -> Callable[[socket.socket], None]:
        def respond(conn: socket.socket) -> None:
            conn.sendall(head)
            for byte in body * 1000:
                conn.sendall(bytes([byte]))
                time.sleep(0.1)

        return respond

    def test_a_slowloris_server_is_cut_at_the_timeout(self) -> None:
        body = completion()
        cases = {
            "body": self.dribble(
                http_head("200 OK", "Content-Type: application/json",
                          f"Content-Length: {len(body) * 1000}"),
                body,
            ),
            "headers": self.dribble(b"", http_head("200 OK", "X-Slow: " + "a" * 50)),
        }  # fmt: skip
        for name, respond in cases.items():
            with self.subTest(name), RawServer(respond) as server:
                self.out.unlink(missing_ok=True)
                started = time.monotonic()
                result = bounded(self, 10, lambda: self.send(server.base_url, timeout=1.0))
                self.assertLess(time.monotonic() - started, 4)
                self.assertEqual(sorted(result.failed_ids), IDS[:2])
                codes = {line["error"]["code"] for line in out_lines(self.out)}
                self.assertEqual(codes, {"timeout"})

    def test_an_endless_body_without_content_length_is_capped(self) -> None:
        sent = {"bytes": 0}

        def endless(conn: socket.socket) -> None:
            conn.sendall(http_head("200 OK", "Content-Type: application/json", "Connection: close"))
            chunk = b"[" + b"1," * 512 * 1024
            while sent["bytes"] < 300 * 1024 * 1024:  # 300 MB: far past the cap
                conn.sendall(chunk)
                sent["bytes"] += len(chunk)

        with RawServer(endless) as server:
            result = bounded(self, 30, lambda: self.cli(server.base_url, "--max-retries", "3"))
            self.assertEqual(result.exit_code, 1, result.stderr)
            self.assertEqual(server.connections, 2, "too large: not retried")
            lines = out_lines(self.out)
            self.assertEqual({line["error"]["code"] for line in lines}, {"response_too_large"})
            self.assertIn("67,108,864 bytes", lines[0]["error"]["message"])
            self.assertLess(sent["bytes"], 200 * 1024 * 1024)

    def test_a_compressed_bomb_is_capped_after_decoding(self) -> None:
        packer = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)
        bomb = packer.compress(b"\0" * (64 * 1024 * 1024)) + packer.flush()
        head = http_head(
            "200 OK", "Content-Type: application/json", "Content-Encoding: gzip",
            f"Content-Length: {len(bomb)}",
        )  # fmt: skip
        with RawServer(lambda conn: conn.sendall(head + bomb)) as server:
            result = bounded(
                self, 20, lambda: self.send(server.base_url, max_response_bytes=1024 * 1024)
            )
        self.assertEqual(sorted(result.failed_ids), IDS[:2])
        self.assertEqual(
            {line["error"]["code"] for line in out_lines(self.out)}, {"response_too_large"}
        )

    def test_a_gzip_answer_is_read(self) -> None:
        packer = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)
        packed = packer.compress(completion("zipped")) + packer.flush()
        head = http_head(
            "200 OK", "Content-Type: application/json", "Content-Encoding: gzip",
            f"Content-Length: {len(packed)}",
        )  # fmt: skip
        with RawServer(lambda conn: conn.sendall(head + packed)) as server:
            result = bounded(self, 20, lambda: self.send(server.base_url))
        self.assertEqual(result.answered, 2)
        texts = {r.raw_output for r in load_vlm_responses(self.out).vlm}
        self.assertEqual(texts, {"zipped"})


class RunGoesOnTests(_Case):
    """No answer is sent for ever, no request stops the run, no setting crashes it."""

    def test_content_null_is_an_empty_answer_and_not_sent_again(self) -> None:
        with ChatServer() as server:
            server.script[prompt("a")] = ["null"]
            result = bounded(self, 20, lambda: self.cli(server.base_url))
            self.assertEqual(result.exit_code, 0, result.stderr)
            self.assertIn("2 answered", result.stdout)
            result = bounded(self, 20, lambda: self.cli(server.base_url))
            self.assertEqual(result.exit_code, 0, result.stderr)
            self.assertEqual(server.hits[prompt("a")], 1, "answered: never sent again")
        loaded = load_vlm_responses(self.out)
        self.assertEqual({r.id: r.raw_output for r in loaded.vlm}, {"a": "", "b": "yes"})
        self.assertEqual(loaded.errored_ids, [])

    def send_after_unreadable(self, unreadable: bytes) -> SendResult:
        """``send`` (2 retries) against a server whose first two answers are ``unreadable``
        200s, then good ones."""
        answers = iter([unreadable] * 2)

        def respond(conn: socket.socket) -> None:
            body = next(answers, completion())
            conn.sendall(http_head("200 OK", f"Content-Length: {len(body)}") + body)

        with RawServer(respond) as server:
            return bounded(self, 20, lambda: self.send(server.base_url, max_retries=2))

    def test_an_answer_with_an_empty_choice_list_is_retried(self) -> None:
        # {"choices": []} holds no answer (score counts it errored) but was written at once as
        # that request's line, unlike a 200 without "choices", which is retried.
        result = self.send_after_unreadable(b'{"choices": []}')
        self.assertEqual((result.answered, result.failed_ids), (2, []))
        self.assertEqual(successes(self.out), {"a": 1, "b": 1})

    def test_an_answer_whose_content_score_refuses_is_retried(self) -> None:
        # A 200 whose message content is of another type (["yes"], 5) was written as an
        # answer, never sent again, and score refused the whole file (exit 2) for that line.
        message = {"role": "assistant", "content": ["yes"]}
        unreadable = json.dumps({"choices": [{"message": message}]}).encode()
        result = self.send_after_unreadable(unreadable)
        self.assertEqual((result.answered, result.failed_ids), (2, []))
        self.assertEqual(successes(self.out), {"a": 1, "b": 1})
        loaded = load_vlm_responses(self.out)  # scored: the failed attempts are not written
        self.assertEqual({r.id: r.raw_output for r in loaded.vlm}, {"a": "yes", "b": "yes"})

    def test_an_answer_whose_part_text_score_refuses_is_retried(self) -> None:
        # A content part whose "text" is a number was dropped: the answer written as "" and
        # scored 0 as an empty answer.
        message = {"role": "assistant", "content": [{"type": "text", "text": 5}]}
        unreadable = json.dumps({"choices": [{"message": message}]}).encode()
        result = self.send_after_unreadable(unreadable)
        self.assertEqual((result.answered, result.failed_ids), (2, []))
        self.assertEqual(successes(self.out), {"a": 1, "b": 1})

    def test_a_choice_without_message_or_text_is_retried(self) -> None:
        # Read as the legacy completions shape with no text: written as an empty answer,
        # never sent again, and scored as one.
        for choice in ({"index": 0, "finish_reason": "stop"}, {"message": None}):
            with self.subTest(choice=choice):
                self.out.unlink(missing_ok=True)
                result = self.send_after_unreadable(json.dumps({"choices": [choice]}).encode())
                self.assertEqual((result.answered, result.failed_ids), (2, []))
                self.assertEqual(successes(self.out), {"a": 1, "b": 1})

    def test_a_responses_api_answer_is_an_answer(self) -> None:
        # A request line sent to /v1/responses is answered with "output", not "choices": every
        # answer was retried as unreadable, then written as a failure (score: errored).
        part = {"type": "output_text", "text": "yes", "annotations": []}
        output = [{"type": "message", "role": "assistant", "content": [part]}]
        body = json.dumps({"object": "response", "status": "completed", "output": output}).encode()
        answers = []

        def respond(conn: socket.socket) -> None:
            answers.append(1)
            conn.sendall(http_head("200 OK", f"Content-Length: {len(body)}") + body)

        with RawServer(respond) as server:
            result = bounded(self, 20, lambda: self.send(server.base_url, max_retries=2))
        self.assertEqual((result.answered, result.failed_ids, len(answers)), (2, [], 2))
        loaded = load_vlm_responses(self.out)
        self.assertEqual({r.id: r.raw_output for r in loaded.vlm}, {"a": "yes", "b": "yes"})

    def test_an_unreadable_answer_left_after_retries_is_an_error_line(self) -> None:
        # Every attempt unreadable: the line is written as a failure score counts as errored
        # (and a rerun sends again), not as an answer score refuses.
        message = {"role": "assistant", "content": 5}
        unreadable = json.dumps({"choices": [{"message": message}]}).encode()

        def respond(conn: socket.socket) -> None:
            conn.sendall(http_head("200 OK", f"Content-Length: {len(unreadable)}") + unreadable)

        with RawServer(respond) as server:
            result = bounded(self, 20, lambda: self.send(server.base_url))
        self.assertEqual(sorted(result.failed_ids), ["a", "b"])
        loaded = load_vlm_responses(self.out)
        self.assertEqual(sorted(loaded.errored_ids), ["a", "b"])

    def test_answers_stream_to_a_pipe_or_device(self) -> None:
        # -o /dev/stdout (or a FIFO, /dev/null) is written in place, as the output guard says:
        # the first answer was written, then fsync (EINVAL on a pipe) stopped the run with
        # "cannot write".
        self.out = self.tmp / "answers.fifo"
        os.mkfifo(self.out)
        received: list[bytes] = []
        reader = threading.Thread(target=lambda: received.extend(self.out.open("rb")))
        reader.start()
        with ChatServer() as server:
            result = bounded(self, 20, lambda: self.cli(server.base_url))
        reader.join(10)
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertIn("2 answered", result.stdout)
        self.assertEqual(sorted(json.loads(line)["custom_id"] for line in received), ["a", "b"])
        with ChatServer() as server:
            result = bounded(self, 20, lambda: self.cli(server.base_url, "-o", os.devnull))
        self.assertEqual(result.exit_code, 0, result.stderr)

    def test_a_request_the_server_always_drops_is_an_error_line(self) -> None:
        self.requests = write_requests(self.requests, IDS)
        with ChatServer() as server:
            server.script[prompt("c")] = ["drop"]
            result = bounded(self, 20, lambda: self.send(server.base_url, max_retries=2))
            self.assertEqual(server.hits[prompt("c")], 3)
        self.assertEqual(result.failed_ids, ["c"])
        self.assertEqual(result.answered, len(IDS) - 1)
        errors = [line for line in out_lines(self.out) if line["error"]]
        self.assertEqual([(e["custom_id"], e["error"]["code"]) for e in errors],
                         [("c", "connection_error")])  # fmt: skip
        self.assertEqual(sum(successes(self.out).values()), len(IDS) - 1)

    def test_a_server_that_cannot_be_connected_to_still_stops_the_run(self) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        with self.assertRaises(SendAborted) as caught:
            bounded(self, 20, lambda: self.send(f"http://127.0.0.1:{port}/v1", max_retries=1))
        self.assertIn("cannot reach", str(caught.exception))

    def test_concurrency_beyond_the_open_file_limit(self) -> None:
        ids = [f"r{i}" for i in range(400)]
        write_requests(self.requests, ids)
        limit = 200

        def low_file_limit() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

        with ChatServer() as server:
            server.hang_after = 0  # every request waits: as many in flight as the client allows
            timer = threading.Timer(1.5, server.release)
            timer.start()
            self.addCleanup(timer.cancel)
            command = [
                sys.executable, "-m", "datbench_cli", "send", str(self.requests),
                "--base-url", server.base_url, "-o", str(self.out), "--concurrency", "5000",
                "--timeout", "30", "--max-retries", "0",
            ]  # fmt: skip
            try:
                result = subprocess.run(
                    command, cwd=ROOT, env={**os.environ, "NO_COLOR": "1"}, capture_output=True,
                    text=True, timeout=60, preexec_fn=low_file_limit,
                )  # fmt: skip
            except subprocess.TimeoutExpired:
                self.fail("send --concurrency 5000 did not finish within 60 s")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(f"--concurrency 5000 needs more open files than this process may have "
                      f"({limit}); sending {limit - 64} at a time", result.stderr)  # fmt: skip
        self.assertEqual(successes(self.out), dict.fromkeys(ids, 1))

    def test_concurrency_above_the_requests_left(self) -> None:
        with ChatServer() as server:
            result = bounded(self, 20, lambda: self.cli(server.base_url, "--concurrency", "5000"))
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertNotIn("open files", result.stderr)


class UrlTests(_Case):
    """URLs joined as the OpenAI SDK joins them; non-ASCII and odd request URLs."""

    def test_the_base_url_is_joined_as_the_sdk_does(self) -> None:
        cases = {
            "http://h:8000": "http://h:8000/v1/chat/completions",
            "http://h:8000/": "http://h:8000/v1/chat/completions",
            "http://h:8000/v1": "http://h:8000/v1/chat/completions",
            "http://h:8000/v1/": "http://h:8000/v1/chat/completions",
            "https://g.example/v1beta/openai/": "https://g.example/v1beta/openai/chat/completions",
            "https://g.example/v1beta/openai": "https://g.example/v1beta/openai/chat/completions",
            "https://o.example/api/v1": "https://o.example/api/v1/chat/completions",
            "https://a.example/openai/deployments/x?api-version=1":
                "https://a.example/openai/deployments/x/chat/completions?api-version=1",
        }  # fmt: skip
        for base, expected in cases.items():
            with self.subTest(base=base):
                self.assertEqual(BaseUrl.parse(base).endpoint("/v1/chat/completions"), expected)
        with ChatServer() as server:
            base = server.base_url.removesuffix("/v1") + "/v1beta/openai/"
            result = bounded(self, 20, lambda: self.cli(base))
            self.assertEqual(result.exit_code, 0, result.stderr)
            self.assertEqual(set(server.paths), {"/v1beta/openai/chat/completions"})

    def test_non_ascii_urls(self) -> None:
        lines = [json.loads(x) for x in self.requests.read_text().splitlines()]
        lines[0]["url"] = "/v1/chät/completions"
        self.requests.write_text("".join(json.dumps(x) + "\n" for x in lines))
        with ChatServer() as server:
            base = server.base_url.removesuffix("/v1") + "/ü/v1"
            result = bounded(self, 20, lambda: self.cli(base))
            self.assertEqual(result.exit_code, 0, result.stderr)
            self.assertEqual(
                sorted(server.paths),
                ["/%C3%BC/v1/ch%C3%A4t/completions", "/%C3%BC/v1/chat/completions"],
            )

    def test_a_request_url_must_be_a_path(self) -> None:
        for url in ("https://evil.example/v1/chat/completions", "//evil.example/x", "v1/chat",
                    "/v1/chat completions", "/v1/../admin", "/v1/chat?x=1", "/v1/\x1b[31m"):  # fmt: skip
            with self.subTest(url=url):
                self.assertIsNotNone(check_path(url))
                lines = [json.loads(x) for x in self.requests.read_text().splitlines()]
                lines[1]["url"] = url
                self.requests.write_text("".join(json.dumps(x) + "\n" for x in lines))
                result = bounded(self, 20, lambda: self.cli("http://127.0.0.1:9/v1"))
                self.assertEqual(result.exit_code, 2, result.stderr)
                self.assertIn(f"{self.requests}:2:", result.stderr)
        self.assertIsNone(check_path("/v1/chat/completions"))


class RequestBodyTests(unittest.TestCase):
    """The token limit's field and the temperature are settable in every request file."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        rows = [
            make_row("s0"),
            make_row("j1", eval_mode="judge", judge_prompt="Is {model_answer}?"),
        ]
        cls.source = make_dataset(cls.tmp, {"math": rows})

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def bodies(self, run_dir: Path, stem: str) -> list[dict[str, Any]]:
        parts = sorted((run_dir / "requests").glob(f"{stem}.openai.*.jsonl"))
        return [json.loads(x)["body"] for p in parts for x in p.read_text().splitlines()]

    def test_max_completion_tokens_and_no_temperature(self) -> None:
        reasoning = ["--max-tokens-field", "max_completion_tokens", "--temperature", "none"]
        run_dir = self.tmp / "run"
        result = bounded(self, 60, lambda: run_cli(
            "export-tasks", "math", "--source", str(self.source), "-d", str(run_dir),
            "--format", "openai", "--model", "o4-mini", "--max-tokens", "700", *reasoning,
        ))  # fmt: skip
        self.assertEqual(result.exit_code, 0, result.stderr)
        (run_dir / "responses.jsonl").write_text(
            "".join(json.dumps({"id": i, "raw_output": "4"}) + "\n" for i in ("s0", "j1"))
        )
        result = bounded(self, 60, lambda: run_cli(
            "make-judge-tasks", "-d", str(run_dir), "--format", "openai", "--model", "o3",
            *reasoning,
        ))  # fmt: skip
        self.assertEqual(result.exit_code, 0, result.stderr)
        tasks, judge = self.bodies(run_dir, "tasks"), self.bodies(run_dir, "judge_tasks")
        self.assertEqual(len(tasks), 2)
        self.assertEqual(len(judge), 1)
        for body in tasks + judge:
            self.assertEqual(set(body), {"model", "messages", "max_completion_tokens"})
        self.assertEqual(tasks[0]["max_completion_tokens"], 700)
        self.assertEqual(judge[0]["max_completion_tokens"], 512)
        manifest = json.loads((run_dir / "datbench.json").read_text())
        recorded = manifest["options"]["openai_requests"]
        self.assertEqual(
            (recorded["max_tokens_field"], recorded["temperature"]), ("max_completion_tokens", None)
        )

    def test_visualtoolbench_requests_too(self) -> None:
        reasoning = ["--max-tokens-field", "max_completion_tokens", "--temperature", "none"]
        run_dir = self.tmp / "vtb"
        result = bounded(self, 60, lambda: run_cli(
            "export-tasks", "vistoolbench", "--source", str(SAMPLE_DIR), "-d", str(run_dir),
            "--format", "openai", "--model", "o4-mini", *reasoning,
        ))  # fmt: skip
        self.assertEqual(result.exit_code, 0, result.stderr)
        shutil.copy(SAMPLE_RESPONSES, run_dir / "responses.jsonl")
        result = bounded(self, 60, lambda: run_cli(
            "make-judge-tasks", "-d", str(run_dir), "--format", "openai", "--model", "o3",
            *reasoning,
        ))  # fmt: skip
        self.assertEqual(result.exit_code, 0, result.stderr)
        turns, judge = self.bodies(run_dir, "tasks"), self.bodies(run_dir, "judge_tasks")
        self.assertTrue(turns and judge)
        for body in turns:
            self.assertEqual(set(body), {"model", "messages", "max_completion_tokens"})
        for body in judge:
            self.assertEqual(
                set(body), {"model", "messages", "max_completion_tokens", "response_format"}
            )

    def test_the_defaults_and_bad_values(self) -> None:
        body = request_line("x", chat_messages("p"), RequestSettings("m", 9))["body"]
        self.assertEqual((body["max_tokens"], body["temperature"]), (9, 0.0))
        for option in (["--temperature", "hot"], ["--temperature", "3"],
                       ["--max-tokens-field", "tokens"]):  # fmt: skip
            with self.subTest(option=option):
                result = run_cli(
                    "export-tasks", "math", "--source", str(self.source), "-d",
                    str(self.tmp / "bad"), "--format", "openai", "--model", "m", *option,
                )  # fmt: skip
                self.assertEqual(result.exit_code, 2, result.stderr)
        result = run_cli("export-tasks", "math", "--source", str(self.source), "-d",
                         str(self.tmp / "bad"), "--temperature", "none")  # fmt: skip
        self.assertEqual(result.exit_code, 2)
        self.assertIn("only apply with --format openai", result.stderr)


if __name__ == "__main__":
    unittest.main()
