"""A small OpenAI-compatible chat server for tests: answers, fails, hangs and rate-limits on cue.

Each request is keyed by its prompt (the text of the last user message). ``script[prompt]`` is a
list of actions, one per attempt (the last one repeats; no entry means ``default_script``,
itself ``["ok"]`` unless changed). With ``hang_after = N``, every request after the N-th answered
one hangs:

- ``ok``: a chat completion whose content is ``answers.get(prompt, default_answer)``
- ``length``: the same with ``finish_reason: "length"``
- ``null``: the same with ``content: null`` (what a reasoning model out of tokens answers)
- ``500``, ``400``, ``401``, ``404``: that status with an OpenAI-style error body
- ``429``: status 429 with ``Retry-After: <retry_after>``
- ``hang``: no answer until ``release()`` (the client times out)
- ``garbage``: status 200 with a body that is not JSON
- ``error200``: status 200 with an OpenAI-style error body (no ``choices``), as some proxies send
- ``drop``: close the connection without any answer
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def prompt_of(body: dict[str, Any]) -> str:
    """The text of the last message (a string, or the text part of a content list)."""
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return next(part["text"] for part in content if part["type"] == "text")


class _HTTPServer(ThreadingHTTPServer):
    request_queue_size = 1024  # hundreds of clients connecting at once are all accepted
    daemon_threads = True


class ChatServer:
    """Runs on 127.0.0.1 (a free port) in a background thread; use as a context manager."""

    def __init__(self, default_answer: str = "yes", retry_after: str = "0.01") -> None:
        self.script: dict[str, list[str]] = {}
        self.answers: dict[str, str] = {}
        self.default_answer = default_answer
        self.retry_after = retry_after
        self.hits: Counter[str] = Counter()
        self.authorizations: list[str | None] = []
        self.models: list[str] = []
        self.paths: list[str] = []
        self.default_script = ["ok"]
        self.hang_after: int | None = None
        self.answered = 0
        self._released = threading.Event()
        self._lock = threading.Lock()
        self._httpd = _HTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> ChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()
        self._httpd.shutdown()
        self._httpd.server_close()

    def release(self) -> None:
        """Let every hanging request finish (and no later one hang)."""
        self.hang_after = None
        self._released.set()

    def _next_action(self, prompt: str) -> str:
        with self._lock:
            self.hits[prompt] += 1
            if self.hang_after is not None and self.answered >= self.hang_after:
                return "hang"
            actions = self.script.get(prompt) or self.default_script
            action = actions[min(self.hits[prompt], len(actions)) - 1]
            self.answered += action in ("ok", "length", "null")
            return action

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return None

            def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                with server._lock:
                    server.authorizations.append(self.headers.get("Authorization"))
                    server.models.append(body.get("model"))
                    server.paths.append(self.path)
                prompt = prompt_of(body)
                action = server._next_action(prompt)
                try:
                    self._act(action, prompt, body)
                except OSError:
                    pass  # the client gave up (timeout) or went away

            def _act(self, action: str, prompt: str, body: dict[str, Any]) -> None:
                if action == "hang":
                    server._released.wait(30)
                    action = "ok"
                if action == "drop":
                    self.close_connection = True
                    self.connection.close()
                    return
                if action == "garbage":
                    self._send(200, b"<html>upstream trouble</html>")
                    return
                if action == "filtered":  # Azure OpenAI's prompt content filter
                    inner = {"code": "ResponsibleAIPolicyViolation"}
                    error = {"code": "content_filter", "message": "filtered", "status": 400}
                    payload = {"error": {**error, "innererror": inner}}
                    self._send(400, json.dumps(payload).encode())
                    return
                if action == "error200":
                    self._send(200, b'{"error": {"message": "upstream overloaded", "code": 502}}')
                    return
                if action in ("ok", "length", "null"):
                    answer = server.answers.get(prompt, server.default_answer)
                    answer = None if action == "null" else answer
                    completion = {
                        "id": "chatcmpl-test",
                        "object": "chat.completion",
                        "model": body.get("model"),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": answer},
                                "finish_reason": "length" if action == "length" else "stop",
                            }
                        ],
                    }
                    self._send(200, json.dumps(completion).encode(), {"x-request-id": "req-1"})
                    return
                status = int(action)
                error = {"error": {"message": f"scripted {status}", "type": "test", "code": status}}
                headers = {"Retry-After": server.retry_after} if status == 429 else None
                self._send(status, json.dumps(error).encode(), headers)

        return Handler
