"""POSTing one chat-completions request, with the retry rules of ``datbench send``.

408, 429, 5xx, timeouts, dropped connections and unreadable 200 bodies are retried with
exponential backoff and jitter (``Retry-After`` honoured, capped); another 4xx fails the turn;
401, 403 and 404 (wrong key, URL or model) and a server unreachable after every retry stop the
whole run (:class:`AgentAborted`).
"""

from __future__ import annotations

import email.utils
import http.client
import random
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from datbench_cli.errors import DatbenchError, UsageError
from datbench_cli.version import __version__

_FATAL = frozenset({401, 403, 404})


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

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise UsageError(
                f"--base-url must start with http:// or https://, got {self.base_url!r}"
            )

    @property
    def endpoint(self) -> str:
        """``<server>/v1/chat/completions`` (the base may end in ``/v1`` or not)."""
        return self.base_url.rstrip("/").removesuffix("/v1") + "/v1/chat/completions"


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _message(raw: bytes) -> str:
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw[:300].decode("utf-8", "replace")
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict):
        error = error.get("message") or error
    return str(error)[:300]


class ChatClient:
    """Sends request bodies; safe to share between worker threads."""

    def __init__(self, config: ServerConfig, sleep: Callable[[float], None] = time.sleep) -> None:
        self.config = config
        self.sleep = sleep
        self._headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"datbench/{__version__}",
        }
        if config.api_key:
            self._headers["Authorization"] = f"Bearer {config.api_key}"

    def _attempt(self, data: bytes) -> tuple[int | None, Any, str, float | None]:
        """``(status, body or None, problem, retry_after)``."""
        request = urllib.request.Request(
            self.config.endpoint, data=data, headers=self._headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=self.config.timeout) as reply:
                raw, status = reply.read(), reply.status
        except urllib.error.HTTPError as exc:
            try:
                raw = exc.read()
            except (OSError, http.client.HTTPException):
                raw = b""
            after = _retry_after(exc.headers.get("Retry-After") if exc.headers else None)
            return exc.code, None, f"HTTP {exc.code}: {_message(raw)}", after
        except (OSError, http.client.HTTPException) as exc:
            reason = getattr(exc, "reason", exc)
            return None, None, f"{type(reason).__name__}: {reason}", None
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("choices"), list):
            return status, None, "the server's answer is not a chat completion", None
        return status, body, "", None

    def complete(self, body: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """The server's answer to ``body`` and the number of attempts it took."""
        data = orjson.dumps(body)
        number = 0
        while True:
            status, answer, problem, after = self._attempt(data)
            if answer is not None:
                return answer, number + 1
            if status in _FATAL:
                raise AgentAborted(f"{self.config.endpoint} answered {problem}")
            retryable = status is None or status in (200, 408, 429) or status >= 500
            if not retryable:
                raise RequestFailed(problem, number + 1)
            if number >= self.config.max_retries:
                if status is None:
                    raise AgentAborted(f"cannot reach {self.config.endpoint} ({problem})")
                raise RequestFailed(problem, number + 1)
            cap = self.config.backoff_max
            delay = (
                min(after, cap)
                if after is not None
                else min(cap, self.config.backoff_base * 2**number) * (0.5 + random.random() / 2)
            )
            self.sleep(delay)
            number += 1
