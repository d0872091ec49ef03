"""A scripted OpenAI-compatible chat server that issues tool calls, for the agent's tests.

Each conversation is keyed by the turn's prompt (the text of the last user message that is not
a saved-images message). ``script[prompt]`` lists one step per round: ``{"tool_calls":
[(name, arguments)]}`` (``arguments`` a string sent verbatim, or an object sent as JSON) or
``{"content": text}`` (with ``"finish_reason"`` or ``"refusal"`` to set those) or ``{"status": 400}``
(an error answer); ``"ids": False`` leaves the calls' ids out; past the list's end the last step
repeats. Prompts without a script get
``answer for: <prompt>``. Every request body is kept in ``requests`` (by prompt). Listens on
127.0.0.1 only.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SAVED_IMAGES_PREFIX = "These are the images produced by tool call"


def turn_prompt(body: dict[str, Any]) -> str:
    """The prompt of the turn a request belongs to."""
    for message in reversed(body["messages"]):
        if message.get("role") != "user":
            continue
        content = message["content"]
        text = content if isinstance(content, str) else content[0]["text"]
        if not text.startswith(SAVED_IMAGES_PREFIX):
            return text
    raise AssertionError("no user message")


def round_of(body: dict[str, Any]) -> int:
    """How many tool rounds the conversation has had (assistant messages with tool calls)."""
    return sum(1 for m in body["messages"] if m.get("role") == "assistant" and m.get("tool_calls"))


class ToolChatServer:
    """Runs in a background thread; use as a context manager."""

    def __init__(self, delay: float = 0.0) -> None:
        self.script: dict[str, list[dict[str, Any]]] = {}
        self.requests: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.delay = delay
        self.authorizations: list[str | None] = []  # each request's Authorization header
        self.paths: list[str] = []  # each request's path
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> ToolChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def status(self, body: dict[str, Any]) -> int:
        """The HTTP status scripted for this request (200 unless a step says otherwise)."""
        steps = self.script.get(turn_prompt(body)) or [{}]
        return int(steps[min(round_of(body), len(steps) - 1)].get("status", 200))

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = turn_prompt(body)
        number = round_of(body)
        with self._lock:
            self.requests[prompt].append(body)
        steps = self.script.get(prompt) or [{"content": f"answer for: {prompt}"}]
        step = steps[min(number, len(steps) - 1)]
        message: dict[str, Any] = {"role": "assistant", "content": step.get("content")}
        if "refusal" in step:
            message["refusal"] = step["refusal"]
        if "tool_calls" in step:
            message["tool_calls"] = [
                {
                    "id": f"call_{number}_{i}",
                    "type": "function",
                    "function": {
                        "name": name,
                        "arguments": args if isinstance(args, str) else json.dumps(args),
                    },
                }
                for i, (name, args) in enumerate(step["tool_calls"])
            ]
            if step.get("ids") is False:
                for call in message["tool_calls"]:
                    del call["id"]
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": step.get(
                        "finish_reason", "tool_calls" if "tool_calls" in step else "stop"
                    ),
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                server.authorizations.append(self.headers.get("Authorization"))
                server.paths.append(self.path)
                if server.delay:
                    time.sleep(server.delay)
                status = server.status(body)
                if status == 200:
                    payload = json.dumps(server.reply(body)).encode()
                else:
                    payload = json.dumps({"error": {"message": "scripted failure"}}).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass

        return Handler
