"""POSTing one chat-completions request, with the retry rules of ``datbench send``.

The HTTP exchange is ``datbench send``'s (:mod:`datbench_cli.batch.transport`): a deadline on
the whole exchange (a server trickling bytes cannot hold a turn past ``timeout``), a cap on the
answer's size, redirects never followed; the URL is joined as the OpenAI SDK joins it and the
key is chosen by the caller with :func:`datbench_cli.batch.endpoint.choose_key`.

408, 429, 5xx, timeouts, dropped connections and unreadable 200 bodies are retried with
exponential backoff and jitter (``Retry-After`` honoured, capped); another 4xx fails the turn;
401, 403 and 404 (wrong key, URL or model), 407 (the proxy wants credentials), a redirect, a
server never connected to (at once) and a server that cannot be connected to after every retry
stop the whole run (:class:`AgentAborted`);
a timeout or a dropped answer after every retry fails only its turn (recorded as errored; a
rerun retries it).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from datbench_cli.batch.endpoint import BaseUrl, shown_url
from datbench_cli.batch.requests import CHAT_URL
from datbench_cli.batch.sender import (
    REDIRECTS,
    check_api_key,
    check_waits,
    decode_body,
    redirect_problem,
    request_headers,
    retry_after,
    server_message,
    unreachable,
)
from datbench_cli.errors import DatbenchError

if TYPE_CHECKING:
    from datbench_cli.batch.transport import Transport

DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024
_FATAL = frozenset({401, 403, 404, 407})


class AgentAborted(DatbenchError):
    """The server refuses every request or cannot be reached: the run stops."""

    exit_code = 2


class RequestFailed(Exception):
    """One request failed for good (the turn is recorded as errored)."""

    def __init__(self, message: str, attempts: int) -> None:
        super().__init__(message)
        self.attempts = attempts


@dataclass(frozen=True)
class ServerConfig:
    """Where the server is and how hard to try."""

    base_url: str
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 600.0
    max_retries: int = 6
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    connections: int = 4
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    key_withheld: bool = False  # $OPENAI_API_KEY was set but not sent (not the OpenAI API)

    def __post_init__(self) -> None:
        BaseUrl.parse(self.base_url)  # a usage error when it is not a usable base URL
        check_waits(self.timeout, self.backoff_max)
        check_api_key(self.api_key)

    @property
    def endpoint(self) -> str:
        """The chat-completions URL, joined as the OpenAI SDK does
        (``https://host/v1beta/openai/`` -> ``https://host/v1beta/openai/chat/completions``)."""
        return BaseUrl.parse(self.base_url).endpoint(CHAT_URL)


class ChatClient:
    """Sends request bodies; safe to share between worker threads."""

    def __init__(self, config: ServerConfig, sleep: Callable[[float], None] = time.sleep) -> None:
        self.config = config
        self.sleep = sleep
        self.url = config.endpoint
        self._transport: Transport | None = None
        self._headers = request_headers(config.api_key)

    def _pool(self) -> Transport:
        if self._transport is None:
            from datbench_cli.batch.transport import Transport  # the HTTP stack, when sending

            self._transport = Transport(self.config.base_url, self.config.connections)
        return self._transport

    def close(self) -> None:
        """Close the connections (the client may be used again after)."""
        if self._transport is not None:
            self._transport.close()
            self._transport = None

    def _attempt(self, data: bytes) -> tuple[int | None, Any, str, float | None]:
        """``(status, body or None, problem, retry_after)``; ``status`` is ``None`` only when
        the server could not be connected to (a timeout or dropped answer is ``0``, an answer
        over the size cap ``-1``: asked again, it would be as large)."""
        answer = self._pool().post(
            self.url,
            self._headers,
            data,
            self.config.timeout,
            self.config.max_response_bytes,
        )
        if answer.code == "unreachable":
            raise AgentAborted(unreachable(self.url, answer.problem, answer.proxy))
        if answer.code == "response_too_large":
            return -1, None, answer.problem or "an answer over the size cap", None
        if answer.status is None or answer.problem is not None:
            status = None if answer.code == "connect_error" else (answer.status or 0)
            return status, None, answer.problem or "no answer", None
        if answer.status in REDIRECTS:
            location = (answer.headers or {}).get("location")
            shown = server_message(shown_url(location)) if location else None
            return answer.status, None, redirect_problem(answer.status, shown), None
        if answer.status >= 300:
            after = retry_after((answer.headers or {}).get("retry-after"))
            return (
                answer.status,
                None,
                f"HTTP {answer.status}: {server_message(decode_body(answer.body))}",
                after,
            )
        try:
            body = orjson.loads(answer.body)
        except orjson.JSONDecodeError:
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("choices"), list):
            return answer.status, None, "the server's answer is not a chat completion", None
        return answer.status, body, "", None

    def complete(self, body: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """The server's answer to ``body`` and the number of attempts it took."""
        data = orjson.dumps(body)
        number = 0
        while True:
            status, answer, problem, after = self._attempt(data)
            if answer is not None:
                return answer, number + 1
            if status in _FATAL or status in REDIRECTS:
                hint = ""
                if status == 401 and self.config.key_withheld:
                    hint = (
                        " ($OPENAI_API_KEY is only sent to the OpenAI API; pass "
                        "--api-key-env NAME to send a key to this server)"
                    )
                raise AgentAborted(f"{shown_url(self.url)} answered {problem}{hint}")
            retryable = status is None or status in (0, 200, 408, 429) or status >= 500
            if not retryable:
                raise RequestFailed(problem, number + 1)
            if number >= self.config.max_retries:
                if status is None:
                    raise AgentAborted(f"cannot reach {shown_url(self.url)} ({problem})")
                raise RequestFailed(problem, number + 1)
            cap = self.config.backoff_max
            delay = (
                min(after, cap)
                if after is not None
                else min(cap, self.config.backoff_base * 2**number) * (0.5 + random.random() / 2)
            )
            self.sleep(delay)
            number += 1
