"""Posting OpenAI batch request lines to a chat-completions server: retries, resume, no loss.

Each request line's ``body`` is POSTed to ``<base URL>/v1/chat/completions`` by a small pool of
worker threads (standard-library HTTP; daemon threads, so Ctrl-C stops at once). Each finished
request is appended to the output file as one OpenAI batch output line, written with a single
``write`` on an ``O_APPEND`` descriptor and ``fsync``-ed before the next, so a kill loses at most
the requests in flight. The output is ingested by ``score`` and ``make-judge-tasks`` unchanged.

Resume: ids already answered in the output file (a batch line without an error, or a native
answer line) are never sent again; everything else is. A last line cut off by a kill is repaired
first (completed when it is whole JSON, else dropped).

Retries: 408, 429, 5xx, timeouts, dropped connections and unreadable 200 bodies are retried with
exponential backoff and jitter (``Retry-After`` honoured, and a 429 pauses every worker). Other
4xx answers are written as that request's error line. 401, 403 and 404 (wrong key, URL or model)
and a server that cannot be reached after all retries stop the run.
"""

from __future__ import annotations

import contextlib
import email.utils
import http.client
import os
import queue
import random
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from datbench_cli.batch.requests import CHAT_URL
from datbench_cli.batch.responses import batch_line_result
from datbench_cli.errors import DatbenchError, InputError, UsageError
from datbench_cli.files import jsonio
from datbench_cli.version import __version__

_FATAL_STATUSES = frozenset({401, 403, 404})
_MAX_BODY_CHARS = 2000


class SendAborted(DatbenchError):
    """The server refused every request (bad key, URL or model) or cannot be reached."""

    exit_code = 2


@dataclass(frozen=True)
class SendConfig:
    """How to reach the server and how hard to try."""

    base_url: str
    api_key: str | None = field(default=None, repr=False)
    model: str | None = None
    concurrency: int = 8
    timeout: float = 600.0
    max_retries: int = 6
    backoff_base: float = 1.0
    backoff_max: float = 60.0

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise UsageError(
                f"--base-url must start with http:// or https://, got {self.base_url!r}"
            )
        if self.concurrency < 1:
            raise UsageError("--concurrency must be at least 1")

    def endpoint(self, url: str) -> str:
        """The full URL for a request line's ``url``; the base may end in ``/v1`` or not."""
        base = self.base_url.rstrip("/").removesuffix("/v1")
        return base + (url if url.startswith("/") else "/" + url)


# --------------------------------------------------------------------------- planning


@dataclass
class SendPlan:
    """What a send will do, worked out before anything is sent."""

    total: int = 0
    pending: int = 0
    already_answered: int = 0
    duplicate_ids: list[str] = field(default_factory=list)
    repaired_tail: str | None = None
    answered_ids: set[str] = field(default_factory=set)


def iter_request_lines(paths: Sequence[Path]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(custom_id, url, body)`` of every request line, validated (file:line on bad input)."""
    for path in paths:
        for number, obj in jsonio.iter_jsonl(path):
            ident = obj.get("custom_id")
            if not isinstance(ident, str) or not ident:
                raise InputError(
                    'a request line needs a non-empty string "custom_id"', path, number
                )
            body = obj.get("body")
            if not isinstance(body, dict):
                raise InputError('a request line needs a "body" object', path, number)
            url = obj.get("url", CHAT_URL)
            if not isinstance(url, str):
                raise InputError('"url" must be a string', path, number)
            yield ident, url, body


def repair_tail(out: Path) -> str | None:
    """Fix a last line left without its line end by a kill; say what was done (or ``None``)."""
    if not out.is_file() or out.stat().st_size == 0:
        return None
    with out.open("rb+") as handle:
        handle.seek(-1, os.SEEK_END)
        if handle.read(1) == b"\n":
            return None
        data = out.read_bytes()
        start = data.rfind(b"\n") + 1
        tail = data[start:]
        try:
            complete = isinstance(orjson.loads(tail), dict)
        except orjson.JSONDecodeError:
            complete = False
        if complete:
            handle.seek(0, os.SEEK_END)
            handle.write(b"\n")
            return "completed its last line, which lacked a line end"
        handle.truncate(start)
        handle.flush()
        os.fsync(handle.fileno())
        return f"dropped an incomplete last line ({len(tail)} bytes) left by an interrupted send"


def answered_ids(out: Path) -> set[str]:
    """Ids with an answer in an existing output file: batch output lines without an error, and
    native lines (``raw_output`` or ``raw_judge_output``)."""
    ids: set[str] = set()
    if not out.is_file():
        return ids
    for _, obj in jsonio.iter_jsonl(out):
        if "custom_id" in obj:
            if isinstance(obj["custom_id"], str) and batch_line_result(obj)[1] is None:
                ids.add(obj["custom_id"])
        elif isinstance(obj.get("id"), str) and any(
            isinstance(obj.get(key), str) for key in ("raw_output", "raw_judge_output")
        ):
            ids.add(obj["id"])
    return ids


class OutputFile:
    """The output file of one send, held for the whole run (a context manager).

    Opening locks it (so two sends cannot write one file at once) and repairs a torn last line;
    :meth:`append` writes whole lines with one ``write`` each, ``fsync``-ed.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.repaired_tail: str | None = None
        self._fd = -1

    def __enter__(self) -> OutputFile:
        with jsonio.writing(self.path):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            _lock(self._fd, self.path)
            with jsonio.writing(self.path):
                self.repaired_tail = repair_tail(self.path)
        except BaseException:
            os.close(self._fd)
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        os.close(self._fd)

    def answered_ids(self) -> set[str]:
        """Ids already answered in the file."""
        return answered_ids(self.path)

    def append(self, row: dict[str, Any]) -> None:
        """Add one line, durably; a failed write (disk full) leaves the file as it was."""
        data = memoryview(jsonio.dumps(row) + b"\n")
        with jsonio.writing(self.path):
            size = os.fstat(self._fd).st_size
            try:
                while data:
                    data = data[os.write(self._fd, data) :]
                os.fsync(self._fd)
            except OSError:
                # Drop the part of the line that made it to disk: no torn line is left behind.
                with contextlib.suppress(OSError):
                    os.ftruncate(self._fd, size)
                raise


def _lock(fd: int, path: Path) -> None:
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise UsageError(f"another datbench send is writing to {path}") from None


def plan_send(paths: Sequence[Path], output: OutputFile) -> SendPlan:
    """Validate the request files and count what is left to send to the (open) output."""
    plan = SendPlan(repaired_tail=output.repaired_tail)
    plan.answered_ids = output.answered_ids()
    seen: set[str] = set()
    for ident, _, _ in iter_request_lines(paths):
        plan.total += 1
        if ident in seen:
            plan.duplicate_ids.append(ident)
            continue
        seen.add(ident)
        if ident in plan.answered_ids:
            plan.already_answered += 1
        else:
            plan.pending += 1
    return plan


# --------------------------------------------------------------------------- one request


@dataclass
class _Reply:
    """The outcome of one request: an output line, or a reason to stop the whole run."""

    line: dict[str, Any] | None = None
    fatal: str | None = None


@dataclass
class _Attempt:
    status: int | None
    body: Any = None
    request_id: str = ""
    retry_after: float | None = None
    problem: str | None = None  # set when there is no usable answer
    code: str | None = None


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (a number or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _decode_body(data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        text = data.decode("utf-8", "replace")
        return text if len(text) <= _MAX_BODY_CHARS else text[:_MAX_BODY_CHARS] + "..."


def _server_message(body: Any) -> str:
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            return str(error.get("message") or error)[:300]
        return str(error)[:300]
    return str(body)[:300]


class _Client:
    """POSTs request bodies with retries; shared by the worker threads."""

    def __init__(self, config: SendConfig, sleep: Callable[[float], None] = time.sleep) -> None:
        self.config = config
        self.sleep = sleep
        self._gate_lock = threading.Lock()
        self._not_before = 0.0
        self._headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"datbench/{__version__}",
        }
        if config.api_key:
            self._headers["Authorization"] = f"Bearer {config.api_key}"

    def _post(self, url: str, data: bytes) -> _Attempt:
        request = urllib.request.Request(url, data=data, headers=self._headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.config.timeout) as reply:
                raw = reply.read()
                status, headers = reply.status, reply.headers
        except urllib.error.HTTPError as exc:
            try:
                raw = exc.read()
            except (OSError, http.client.HTTPException):
                raw = b""
            body = _decode_body(raw)
            return _Attempt(
                exc.code,
                body,
                exc.headers.get("x-request-id", "") if exc.headers else "",
                _retry_after(exc.headers.get("Retry-After") if exc.headers else None),
                f"HTTP {exc.code}: {_server_message(body)}",
                f"http_{exc.code}",
            )
        except TimeoutError:
            return _Attempt(None, problem="timed out", code="timeout")
        except (OSError, http.client.HTTPException) as exc:
            reason = getattr(exc, "reason", exc)
            code = "timeout" if isinstance(reason, TimeoutError) else "connection_error"
            return _Attempt(None, problem=f"{type(reason).__name__}: {reason}", code=code)
        body = _decode_body(raw)
        attempt = _Attempt(status, body, headers.get("x-request-id", ""))
        if not isinstance(body, dict):
            attempt.problem, attempt.code = (
                "the server's answer is not a JSON object",
                "invalid_response",
            )
        return attempt

    def _wait_gate(self) -> None:
        with self._gate_lock:
            wait = self._not_before - time.monotonic()
        if wait > 0:
            self.sleep(wait)

    def _delay(self, attempt: _Attempt, number: int) -> float:
        cap = self.config.backoff_max
        if attempt.retry_after is not None:
            return min(attempt.retry_after, cap)
        base = min(cap, self.config.backoff_base * 2**number)
        return base * (0.5 + random.random() / 2)

    def send(self, custom_id: str, url: str, body: dict[str, Any]) -> _Reply:
        """Send one request until it is answered, fails for good, or the run must stop."""
        if self.config.model:
            body = {**body, "model": self.config.model}
        data = jsonio.dumps(body)
        target = self.config.endpoint(url)
        number = 0
        while True:
            self._wait_gate()
            attempt = self._post(target, data)
            if attempt.status in _FATAL_STATUSES:
                return _Reply(fatal=f"{target} answered {attempt.problem}")
            if attempt.status == 200 and attempt.problem is None:
                return _Reply(_output_line(custom_id, attempt))
            retryable = attempt.status in (None, 408, 429) or attempt.status >= 500
            retryable = retryable or attempt.code == "invalid_response"
            if not retryable:
                return _Reply(_output_line(custom_id, attempt))
            if number >= self.config.max_retries:
                if attempt.code == "connection_error":
                    return _Reply(fatal=f"cannot reach {target} ({attempt.problem})")
                return _Reply(_output_line(custom_id, attempt))
            delay = self._delay(attempt, number)
            if attempt.status == 429:
                with self._gate_lock:
                    self._not_before = max(self._not_before, time.monotonic() + delay)
            self.sleep(delay)
            number += 1


def _output_line(custom_id: str, attempt: _Attempt) -> dict[str, Any]:
    """One OpenAI batch output line: ``response`` when the server answered, else ``error``."""
    response = None
    if attempt.status is not None:
        response = {
            "status_code": attempt.status,
            "request_id": attempt.request_id,
            "body": attempt.body,
        }
    error = None
    if attempt.problem is not None and (attempt.status is None or attempt.status == 200):
        error = {"code": attempt.code, "message": attempt.problem}
    return {
        "id": f"batch_req_{uuid.uuid4().hex}",
        "custom_id": custom_id,
        "response": response,
        "error": error,
    }


# --------------------------------------------------------------------------- the run


@dataclass
class SendResult:
    """What a send did."""

    answered: int = 0
    truncated: int = 0
    failed_ids: list[str] = field(default_factory=list)


class _Workers:
    """Daemon threads running ``work`` on submitted jobs; results come back on a queue."""

    def __init__(self, count: int, work: Callable[..., _Reply]) -> None:
        self._jobs: queue.Queue[tuple[Any, ...] | None] = queue.Queue()
        self._results: queue.Queue[tuple[str, _Reply | BaseException]] = queue.Queue()
        self._work = work
        self._threads = [threading.Thread(target=self._run, daemon=True) for _ in range(count)]
        for thread in self._threads:
            thread.start()

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            try:
                result: _Reply | BaseException = self._work(*job)
            except BaseException as exc:  # noqa: BLE001 - handed to the main thread
                result = exc
            self._results.put((job[0], result))

    def submit(self, *job: Any) -> None:
        self._jobs.put(job)

    def result(self) -> tuple[str, _Reply]:
        while True:
            try:
                ident, result = self._results.get(timeout=0.5)
            except queue.Empty:
                continue
            if isinstance(result, BaseException):
                raise result
            return ident, result

    def close(self) -> None:
        for _ in self._threads:
            self._jobs.put(None)


def send_requests(
    paths: Sequence[Path],
    output: OutputFile,
    config: SendConfig,
    plan: SendPlan,
    *,
    advance: Callable[[int], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> SendResult:
    """Send every request of ``paths`` not answered in ``output`` (per ``plan``), appending the
    output lines; raise :class:`SendAborted` after writing what finished when the run must stop."""
    client = _Client(config, sleep)
    result = SendResult()
    sent: set[str] = set(plan.answered_ids)
    fatal: str | None = None
    in_flight = 0
    workers = _Workers(config.concurrency, client.send)

    def collect() -> None:
        nonlocal fatal, in_flight
        ident, reply = workers.result()
        in_flight -= 1
        if reply.fatal is not None:
            fatal = fatal or reply.fatal
            return
        assert reply.line is not None
        output.append(reply.line)
        _, error, reason = batch_line_result(reply.line)
        if error is None:
            result.answered += 1
            result.truncated += reason == "length"
        else:
            result.failed_ids.append(ident)
        if advance is not None:
            advance(1)

    try:
        for ident, url, body in iter_request_lines(paths):
            if ident in sent:
                continue
            while in_flight >= config.concurrency and fatal is None:
                collect()
            if fatal is not None:
                break
            sent.add(ident)
            workers.submit(ident, url, body)
            in_flight += 1
        while in_flight:
            collect()
    finally:
        workers.close()
    if fatal is not None:
        raise SendAborted(
            f"stopped: {fatal}; answers received so far are kept in {output.path}, and running "
            "the same command again continues from there"
        )
    return result
