"""The agent's HTTP client is ``datbench send``'s: the whole exchange bounded by ``timeout``,
no redirect followed (so no key reaches another host), URLs joined as the OpenAI SDK does."""

from __future__ import annotations

import socket
import time
import unittest

from datbench_cli.benchmarks.vistoolbench.agent.transport import (
    AgentAborted,
    ChatClient,
    RequestFailed,
    ServerConfig,
)
from datbench_cli.errors import UsageError
from tests.batch.test_send_hardening import bounded, completion, http_head
from tests.raw_server import RawServer

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def _client(base_url: str, **config: float) -> ChatClient:
    # A generous timeout, so that an answered exchange passes on a loaded machine; the test of
    # the timeout passes its own.
    settings = {"timeout": 10.0, "max_retries": 0, "backoff_base": 0.0, **config}
    return ChatClient(ServerConfig(base_url, "sk-secret", **settings))  # type: ignore[arg-type]


class AgentTransportTests(unittest.TestCase):
    def test_a_server_trickling_bytes_is_cut_at_the_timeout(self) -> None:
        body = completion()

        def respond(conn: socket.socket) -> None:
            conn.sendall(http_head("200 OK", f"Content-Length: {len(body) * 100}"))
            for byte in body * 100:
                conn.sendall(bytes([byte]))
                time.sleep(0.1)

        with RawServer(respond) as server:
            client = _client(server.base_url, timeout=1.0)
            started = time.monotonic()
            with self.assertRaises(RequestFailed) as caught:
                bounded(self, 10, lambda: client.complete(BODY))
            self.assertLess(time.monotonic() - started, 4)
            self.assertIn("1 s", str(caught.exception))
            client.close()

    def test_a_redirect_is_not_followed(self) -> None:
        def respond(conn: socket.socket) -> None:
            conn.sendall(
                http_head("307 Temporary Redirect", "Location: http://127.0.0.2:9/v1/x",
                          "Content-Length: 0")
            )  # fmt: skip

        with RawServer(respond) as server:
            client = _client(server.base_url, max_retries=3)
            # The run stops (as send's does), naming where the redirect pointed.
            with self.assertRaises(AgentAborted) as caught:
                client.complete(BODY)
            self.assertIn("HTTP 307", str(caught.exception))
            self.assertIn("to http://127.0.0.2:9/v1/x", str(caught.exception))
            self.assertIn("--base-url", str(caught.exception))
            self.assertEqual(len(server.requests), 1)
            client.close()

    def test_a_redirect_keeping_the_query_key_does_not_show_it(self) -> None:
        def respond(conn: socket.socket) -> None:
            location = "https://localhost/v1/chat/completions?key=sk-in-query-78"
            conn.sendall(http_head("301 Moved", f"Location: {location}", "Content-Length: 0"))

        with RawServer(respond) as server:
            client = _client(f"{server.base_url}?key=sk-in-query-78")
            with self.assertRaises(AgentAborted) as caught:
                client.complete(BODY)
            client.close()
        self.assertIn("completions?key=***", str(caught.exception))
        self.assertNotIn("sk-in-query-78", str(caught.exception))

    def test_a_proxy_asking_for_credentials_stops_the_run(self) -> None:
        def respond(conn: socket.socket) -> None:
            conn.sendall(http_head("407 Proxy Authentication Required", "Content-Length: 0"))

        with RawServer(respond) as server:
            client = _client(server.base_url, max_retries=3)
            with self.assertRaises(AgentAborted) as caught:
                client.complete(BODY)
            client.close()
        self.assertIn("HTTP 407", str(caught.exception))
        self.assertEqual(len(server.requests), 1, "not retried")

    def test_a_key_in_the_base_urls_query_is_not_in_the_stopping_error(self) -> None:
        def respond(conn: socket.socket) -> None:
            conn.sendall(http_head("401 Unauthorized", "Content-Length: 0"))

        with RawServer(respond) as server:
            client = _client(f"{server.base_url}?key=sk-in-query-77")
            with self.assertRaises(AgentAborted) as caught:
                client.complete(BODY)
            client.close()
        self.assertIn("?key=***", str(caught.exception))
        self.assertNotIn("sk-in-query-77", str(caught.exception))

    def test_an_answer_over_the_size_cap_is_not_asked_again(self) -> None:
        body = completion() + b" " * 4096

        def respond(conn: socket.socket) -> None:
            conn.sendall(http_head("200 OK", f"Content-Length: {len(body)}") + body)

        with RawServer(respond) as server:
            client = _client(server.base_url, max_retries=4, max_response_bytes=1024)
            with self.assertRaises(RequestFailed) as caught:
                client.complete(BODY)
            client.close()
        self.assertEqual(len(server.requests), 1, "asked again for an answer as large")
        self.assertEqual(caught.exception.attempts, 1)

    def test_bounds_that_are_not_numbers_or_too_large_are_usage_errors(self) -> None:
        for settings in ({"timeout": 1e10}, {"timeout": float("nan")},
                         {"backoff_max": float("inf")}, {"backoff_max": float("nan")}):  # fmt: skip
            with self.subTest(settings=settings), self.assertRaises(UsageError):
                ServerConfig("http://127.0.0.1:9/v1", **settings)  # type: ignore[arg-type]

    def test_the_endpoint_is_joined_as_the_sdk_joins_it(self) -> None:
        cases = {
            "http://h:8000": "http://h:8000/v1/chat/completions",
            "http://h:8000/v1": "http://h:8000/v1/chat/completions",
            "https://h/v1beta/openai/": "https://h/v1beta/openai/chat/completions",
        }
        for base, url in cases.items():
            with self.subTest(base):
                self.assertEqual(ServerConfig(base).endpoint, url)

    def test_a_servers_error_text_reaches_the_terminal_escaped(self) -> None:
        payload = b'{"error": {"message": "bad \\u001b[31mred\\u001b]0;title\\u0007"}}'

        def respond(conn: socket.socket) -> None:
            conn.sendall(http_head("400 Bad Request", f"Content-Length: {len(payload)}") + payload)

        with RawServer(respond) as server:
            client = _client(server.base_url)
            with self.assertRaises(RequestFailed) as caught:
                client.complete(BODY)
            client.close()
        message = str(caught.exception)
        self.assertIn("HTTP 400: bad", message)
        self.assertNotIn("\x1b", message)
        self.assertNotIn("\x07", message)
