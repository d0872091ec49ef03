"""A server never reached stops ``send`` and ``agent`` at once, in one sentence naming the URL;
a server that was reached and then refuses, drops or stalls is retried (the policy in
docs/runners.md). Each test has a generous time bound; the retries are counted, never timed."""

from __future__ import annotations

import os
import socket
import tempfile
import unittest
from pathlib import Path
from typing import Any
from unittest import mock

from datbench_cli.batch import transport
from datbench_cli.batch.sender import (
    OutputFile,
    SendAborted,
    SendConfig,
    plan_send,
    send_requests,
)
from datbench_cli.benchmarks.vistoolbench.agent.transport import (
    AgentAborted,
    ChatClient,
    ServerConfig,
)
from tests.batch.test_send_hardening import _Case, bounded, completion, http_head
from tests.batch.test_sender import IDS, out_lines, write_requests
from tests.cli_helpers import run_cli
from tests.raw_server import RawServer
from tests.vtb_support import SAMPLE_DIR

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def answer(conn: socket.socket) -> None:
    """A chat completion, the connection closed after it (none is kept alive)."""
    body = completion()
    conn.sendall(http_head("200 OK", f"Content-Length: {len(body)}", "Connection: close") + body)


class _Backlogged:
    """A port whose listen queue is full, so that connecting to it is never accepted (what a
    host dropping the connection attempts looks like); a context manager."""

    def __enter__(self) -> int:
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=0)
        self._queued = socket.create_connection(self._listener.getsockname()[:2])
        return int(self._listener.getsockname()[1])

    def __exit__(self, *exc: Any) -> None:
        self._queued.close()
        self._listener.close()


class SendReachabilityTests(_Case):
    def test_a_closed_port_stops_the_run_at_once_without_retrying(self) -> None:
        sleeps: list[float] = []
        url = f"http://127.0.0.1:{closed_port()}/v1"
        config = SendConfig(url, max_retries=6, backoff_max=60)
        with OutputFile(self.out) as output, self.assertRaises(SendAborted) as caught:
            plan = plan_send([self.requests], output)
            bounded(self, 20, lambda: send_requests([self.requests], output, config, plan,
                                                    sleep=sleeps.append))  # fmt: skip
        self.assertEqual(sleeps, [], "a server never reached is not waited for")
        message = str(caught.exception)
        self.assertTrue(message.startswith(f"cannot reach {url}/chat/completions ("), message)
        self.assertIn("is the server running", message)
        self.assertNotIn("stopped:", message)  # nothing was written: nothing said of the file

    def test_the_cli_says_one_sentence_and_exits_2_with_the_default_retries(self) -> None:
        # The defaults (6 retries, backoff up to 60 s) took 55 s to give up on a closed port.
        url = f"http://127.0.0.1:{closed_port()}/v1"
        result = bounded(self, 20, lambda: run_cli("send", str(self.requests), "--base-url", url,
                                                   "-o", str(self.out)))  # fmt: skip
        self.assertEqual(result.exit_code, 2, result.stderr)
        errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        self.assertEqual(len(errors), 1, result.stderr)
        self.assertIn(f"{url}/chat/completions", errors[0])
        self.assertNotIn("warning", result.stderr)
        self.assertNotIn("Traceback", result.stderr)

    def test_a_connection_never_accepted_is_cut_at_the_connect_bound(self) -> None:
        # --timeout bounds the whole exchange; connecting gets at most CONNECT_SECONDS of it
        # (a wrong address that drops the attempts waited the whole --timeout, every retry).
        sleeps: list[float] = []
        with _Backlogged() as port, mock.patch.object(transport, "CONNECT_SECONDS", 0.5):
            config = SendConfig(f"http://127.0.0.1:{port}/v1", timeout=600, max_retries=6)
            with OutputFile(self.out) as output, self.assertRaises(SendAborted) as caught:
                plan = plan_send([self.requests], output)
                bounded(self, 20, lambda: send_requests([self.requests], output, config, plan,
                                                        sleep=sleeps.append))  # fmt: skip
        self.assertIn("no connection within 0.5 s", str(caught.exception))
        self.assertEqual(sleeps, [])

    def test_a_server_that_goes_away_mid_run_is_retried_and_its_return_answered(self) -> None:
        self.requests = write_requests(self.requests, IDS[:3])
        retries: list[str | None] = []
        first = RawServer(answer).__enter__()
        self.addCleanup(first.__exit__)
        port = first.port
        again: list[RawServer] = []

        def after_a_line(_count: int) -> None:
            first.stop_listening()  # refused from now on

        def sleep(_seconds: float) -> None:
            if not again:  # the server is back for the retry
                again.append(RawServer(answer, port=port).__enter__())
                self.addCleanup(again[0].__exit__)

        def on_retry(_url: str, _problem: str, code: str | None, _delay: float) -> None:
            retries.append(code)

        config = SendConfig(first.base_url, concurrency=1, timeout=15, max_retries=3)
        with OutputFile(self.out) as output:
            plan = plan_send([self.requests], output)
            result = bounded(self, 20, lambda: send_requests(
                [self.requests], output, config, plan, advance=after_a_line, sleep=sleep,
                on_retry=on_retry))  # fmt: skip
        self.assertEqual(result.answered, 3)
        self.assertEqual(result.failed_ids, [])
        self.assertEqual(retries, ["connect_error"])
        self.assertEqual(sorted(line["custom_id"] for line in out_lines(self.out)), IDS[:3])

    def test_a_server_that_stays_away_mid_run_stops_it_after_the_retries(self) -> None:
        self.requests = write_requests(self.requests, IDS[:3])
        sleeps: list[float] = []
        with RawServer(answer) as server:
            config = SendConfig(server.base_url, concurrency=1, timeout=15, max_retries=2)
            with OutputFile(self.out) as output, self.assertRaises(SendAborted) as caught:
                plan = plan_send([self.requests], output)
                bounded(self, 20, lambda: send_requests(
                    [self.requests], output, config, plan,
                    advance=lambda _n: server.stop_listening(), sleep=sleeps.append))  # fmt: skip
        self.assertEqual(len(sleeps), 2)  # each retry waited for
        message = str(caught.exception)
        self.assertTrue(message.startswith("stopped: cannot reach"), message)
        self.assertIn("running the same command again continues", message)
        self.assertEqual([line["custom_id"] for line in out_lines(self.out)], IDS[:1])

    def test_the_cli_warns_once_of_a_refusal_mid_run(self) -> None:
        self.requests = write_requests(self.requests, IDS[:4])
        for retries, said in (("2", "up to 2 times"), ("1", "up to once (")):
            with self.subTest(retries=retries):
                self.out.unlink(missing_ok=True)
                lines = self._refused_after_one_answer(retries)
                warned = [i for i, line in enumerate(lines) if "is the server running?" in line]
                self.assertEqual(len(warned), 1, lines)  # not once per request or retry
                self.assertIn(said, lines[warned[0]])
                stopped = [i for i, line in enumerate(lines) if line.startswith("error: stopped")]
                self.assertEqual(len(stopped), 1, lines)
                self.assertLess(warned[0], stopped[0])
                self.assertIn("cannot reach", lines[stopped[0]])

    def _refused_after_one_answer(self, retries: str) -> list[str]:
        """The stderr lines of a CLI send whose server stops listening after its first answer."""

        def answer_once(conn: socket.socket) -> None:
            answer(conn)
            server.stop_listening()

        with RawServer(answer_once) as server:
            args = ("--max-retries", retries, "--max-backoff", "0", "--concurrency", "1")
            result = bounded(self, 20, lambda: self.cli(server.base_url, *args))
        self.assertEqual(result.exit_code, 2, result.stderr)
        return result.stderr.splitlines()


class AgentReachabilityTests(unittest.TestCase):
    def test_a_closed_port_stops_the_run_at_once(self) -> None:
        sleeps: list[float] = []
        url = f"http://127.0.0.1:{closed_port()}/v1"
        client = ChatClient(ServerConfig(url, max_retries=6), sleep=sleeps.append)
        with self.assertRaises(AgentAborted) as caught:
            bounded(self, 20, lambda: client.complete(BODY))
        client.close()
        self.assertEqual(sleeps, [])
        self.assertTrue(str(caught.exception).startswith(f"cannot reach {url}/chat/completions"))

    def test_a_server_that_goes_away_after_answering_is_retried(self) -> None:
        sleeps: list[float] = []
        with RawServer(answer) as server:
            client = ChatClient(ServerConfig(server.base_url, max_retries=2), sleep=sleeps.append)
            self.assertEqual(client.complete(BODY)[1], 1)
            server.stop_listening()
            with self.assertRaises(AgentAborted) as caught:
                bounded(self, 20, lambda: client.complete(BODY))
            client.close()
        self.assertEqual(len(sleeps), 2)
        self.assertIn("cannot reach", str(caught.exception))

    def test_the_agent_command_says_one_sentence_and_exits_2(self) -> None:
        run = Path(self.enterContext(tempfile.TemporaryDirectory()))
        exported = run_cli("export-tasks", "vistoolbench", "--source", str(SAMPLE_DIR), "-d",
                           str(run), "-q")  # fmt: skip
        self.assertEqual(exported.exit_code, 0, exported.stderr)
        url = f"http://127.0.0.1:{closed_port()}/v1"
        result = bounded(self, 30, lambda: run_cli("agent", str(run), "--base-url", url,
                                                   "--model", "m", "--no-code-tools"))  # fmt: skip
        self.assertEqual(result.exit_code, 2, result.stderr)
        errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        self.assertEqual(len(errors), 1, result.stderr)
        self.assertIn(f"cannot reach {url}/chat/completions", errors[0])
        self.assertNotIn("Traceback", result.stderr)


class ProxyUnreachableTests(unittest.TestCase):
    """A proxy that cannot be reached: the stop names the proxy setting, not --base-url."""

    def test_the_hint_asks_about_the_proxy_setting(self) -> None:
        names = ("http_proxy", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY")
        proxy = f"http://127.0.0.1:{closed_port()}"
        with mock.patch.dict("os.environ", {"HTTP_PROXY": proxy}):
            for name in names:
                os.environ.pop(name, None)  # restored by patch.dict
            client = ChatClient(ServerConfig("http://model-host.invalid:8000/v1", max_retries=6))
            with self.assertRaises(AgentAborted) as caught:
                bounded(self, 20, lambda: client.complete(BODY))
            client.close()
        message = str(caught.exception)
        self.assertIn(f"through the proxy {proxy}", message)
        self.assertIn("is HTTP_PROXY right?", message)
        self.assertNotIn("--base-url", message)
