"""Posting OpenAI batch request lines to a chat-completions server: retries, resume, no loss.

Each request line's ``body`` is POSTed to the base URL joined with the line's endpoint (see
:mod:`~datbench_cli.batch.endpoint`) by a pool of worker threads over one keep-alive connection
pool (:mod:`~datbench_cli.batch.transport`: ``timeout`` bounds each whole exchange, answers are
capped in size, redirects are never followed). Each finished request is appended to the output
file as one OpenAI batch output line, written with a single ``write`` on an ``O_APPEND``
descriptor and ``fsync``-ed before the next, so a kill loses at most the requests in flight. The
output is ingested by ``score`` and ``make-judge-tasks`` unchanged.

Resume: ids already answered in the output file (a batch line without an error, or a native
answer line) are never sent again; everything else is. A last line cut off by a kill is repaired
first (completed when it is whole JSON, else dropped).

Retries (docs/runners.md, "The retry policy"): 408, 429, 5xx, timeouts, dropped connections,
refused connections once the server was reached, and unreadable 200 bodies are retried with
exponential backoff and jitter (``Retry-After`` honoured, and a 429 pauses every worker); when
the retries are spent, the request's error line is written and the run goes on. Other 4xx
answers and answers over the size cap are written as that request's error line at once. 401,
403 and 404 (wrong key, URL or model), 407 (the proxy wants credentials), a redirect
(credentials never follow one), a server never connected to (at once: a wrong URL or port) and
a server that cannot be connected to after all retries stop the run.
"""

from __future__ import annotations

import contextlib
import email.utils
import os
import queue
import random
import re
import stat
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import orjson

from datbench_cli.batch.endpoint import BaseUrl, check_path, shown_url
from datbench_cli.batch.requests import CHAT_URL, REQUESTS_DIR
from datbench_cli.batch.responses import (
    batch_line_result,
    is_responses_body,
    message_problem,
    prompt_filtered,
    responses_problem,
)
from datbench_cli.errors import DatbenchError, InputError, UsageError
from datbench_cli.files import jsonio
from datbench_cli.files.append_log import AppendLog
from datbench_cli.version import __version__

if TYPE_CHECKING:
    from datbench_cli.batch.transport import Answer

_FATAL_STATUSES = frozenset({401, 403, 404, 407})
REDIRECTS = frozenset({301, 302, 303, 307, 308})
_MAX_BODY_CHARS = 2000
DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024
MAX_RESPONSE_BYTES = jsonio.MAX_LINE_BYTES - (1 << 20)  # room for the line's other fields
# The longest --timeout or --max-backoff: a socket timeout or sleep must fit the system's clock
# (--timeout 1e10 overflowed it); about 31 years, so still "for ever" to anyone who means that.
MAX_SECONDS = 1e9
# File descriptors kept free for everything but the connections (output, requests, stdio).
_FD_RESERVE = 64


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
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    key_withheld: bool = False

    def __post_init__(self) -> None:
        BaseUrl.parse(self.base_url)
        if self.concurrency < 1:
            raise UsageError("--concurrency must be at least 1")
        check_waits(self.timeout, self.backoff_max)
        if self.max_response_bytes < 1:
            raise UsageError("--max-response-mb must be positive")
        if self.max_response_bytes > MAX_RESPONSE_BYTES:
            # The answer goes into one output line, and no reader takes a longer line.
            raise UsageError(
                f"--max-response-mb must be at most {MAX_RESPONSE_BYTES >> 20}: a larger answer "
                f"would make a line longer than the {jsonio.MAX_LINE_BYTES >> 20} MiB that "
                "score reads"
            )
        check_api_key(self.api_key)

    def endpoint(self, url: str) -> str:
        """The full URL for a request line's ``url``, joined as the OpenAI SDK does."""
        return BaseUrl.parse(self.base_url).endpoint(url)


def redirect_problem(status: int, location: str | None) -> str:
    """What a redirect that stops the run says (``send`` and ``agent``)."""
    where = f" to {location}" if location else ""
    return (
        f"a redirect (HTTP {status}){where}; redirects are never followed, so no key reaches "
        "another address: pass the final URL as --base-url"
    )


def unreachable(url: str, problem: str | None, proxy: str | None = None) -> str:
    """What stops a run whose server was never reached (``send`` and ``agent``); ``proxy``:
    the proxy the connection went through, which the hint then asks about."""
    if proxy is not None:
        setting = "HTTPS_PROXY" if url.lower().startswith("https:") else "HTTP_PROXY"
        hint = f"is the proxy running, and is {setting} right?"
    else:
        hint = "is the server running, and are the host and port of --base-url right?"
    return f"cannot reach {shown_url(url)} ({problem}): {hint}"


def check_waits(timeout: float, backoff_max: float) -> None:
    """A usage error unless ``--timeout`` is positive and ``--max-backoff`` not negative, both
    numbers (not nan) of at most :data:`MAX_SECONDS`."""
    if not 0 < timeout <= MAX_SECONDS:
        raise UsageError(f"--timeout must be a positive number of seconds, at most {MAX_SECONDS:g}")
    if not 0 <= backoff_max <= MAX_SECONDS:
        raise UsageError(
            f"--max-backoff must be a number of seconds from 0 to {MAX_SECONDS:g}, "
            f"got {backoff_max}"
        )


def check_api_key(key: str | None) -> None:
    """A usage error for a key no HTTP header can carry (``send`` and ``agent``): sent, it
    failed every request with an error that quoted the header, key included, into the run's
    files."""
    if key is not None and not (key.isascii() and key.isprintable() and " " not in key):
        raise UsageError(
            "the API key holds spaces, control or non-ASCII characters; check the variable"
        )


def usable_concurrency(requested: int, pending: int) -> tuple[int, str | None]:
    """How many requests can be in flight: at most ``pending``, and at most what the limit on
    open files allows (raised to its hard limit first); a note when that is below
    ``requested``."""
    wanted = max(1, min(requested, pending))
    try:
        import resource
    except ImportError:  # not POSIX
        return wanted, None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = wanted + _FD_RESERVE
    if soft != resource.RLIM_INFINITY and soft < need:
        target = need if hard == resource.RLIM_INFINITY else min(need, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY or soft >= need:
        return wanted, None
    allowed = max(1, soft - _FD_RESERVE)
    return allowed, (
        f"--concurrency {requested} needs more open files than this process may have "
        f"({soft}); sending {allowed} at a time"
    )


# --------------------------------------------------------------------------- planning


@dataclass
class SendPlan:
    """What a send will do, worked out before anything is sent."""

    total: int = 0
    pending: int = 0
    already_answered: int = 0
    duplicate_ids: list[str] = field(default_factory=list)
    repaired_tail: str | None = None
    answered_ids: dict[str, str | None] = field(default_factory=dict)
    other_model: dict[tuple[str, str], list[str]] = field(default_factory=dict)


REQUEST_FILES_HINT = (
    "send the request files: export-tasks --format openai writes "
    "requests/tasks.openai.NNNNN.jsonl (make-judge-tasks --format openai: "
    "requests/judge_tasks.openai.NNNNN.jsonl)"
)


def _folder_hint(folder: Path) -> str:
    """Name the request files of a folder given to ``send`` (the ``requests/`` folder or the
    run directory holding it), as shell patterns: the shell expands them, ``send`` does not."""
    stems: dict[Path, None] = {}
    for place in (folder, folder / REQUESTS_DIR):
        with contextlib.suppress(OSError):
            for part in sorted(place.glob("*.openai.*.jsonl")):
                stems[place / f"{part.name.split('.openai.')[0]}.openai.*.jsonl"] = None
    if not stems:
        return REQUEST_FILES_HINT
    return "pass the request files in it: " + " or ".join(str(pattern) for pattern in stems)


def check_request_paths(paths: Sequence[Path]) -> None:
    """Refuse a file that does not exist, and a run directory's own task files (``tasks.jsonl``,
    ``judge_tasks.jsonl``): they are for the user's runner, not OpenAI request files; the hint
    names the right files."""
    from datbench_cli.files.rundir import JUDGE_TASKS, TASKS

    for path in paths:
        if path.is_dir():
            raise InputError("is a directory, not a request file", path, hint=_folder_hint(path))
        if not path.exists():
            # Said before the output is chosen from the file names, which a mistyped name
            # would fail with advice to pass --out. A pattern the shell left as it was matched
            # no file: the request files were not written.
            hint = REQUEST_FILES_HINT if "*" in path.name else None
            raise InputError("file not found", path, hint=hint)
        if path.name in (TASKS, JUDGE_TASKS):
            raise InputError(
                "this is a task file for your own runner, not an OpenAI request file",
                path,
                hint=REQUEST_FILES_HINT,
            )
        with contextlib.suppress(OSError):
            if not stat.S_ISREG(os.stat(path).st_mode) and not path.is_dir():
                # Read once to count and again to send: a pipe would send nothing the second
                # time, silently.
                raise InputError(
                    "is a pipe or device, not a file: send reads its request files twice "
                    "(to count, then to send); save the requests to a file first",
                    path,
                )


def iter_request_lines(paths: Sequence[Path]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(custom_id, url, body)`` of every request line, validated (file:line on bad input)."""
    for path in paths:
        for number, obj in jsonio.iter_jsonl(path):
            ident = obj.get("custom_id")
            if not isinstance(ident, str) or not ident:
                raise InputError(
                    'a request line needs a non-empty string "custom_id"',
                    path,
                    number,
                    hint=REQUEST_FILES_HINT if "id" in obj and "body" not in obj else None,
                )
            body = obj.get("body")
            if not isinstance(body, dict):
                raise InputError('a request line needs a "body" object', path, number)
            if body.get("stream"):
                # A streamed answer is no JSON object: each was retried as unreadable (every
                # attempt a generation paid for), then written as a failure.
                raise InputError(
                    '"stream" is set in the request body; send reads one JSON answer per request',
                    path,
                    number,
                    hint='remove "stream" from the request bodies (or set it to false)',
                )
            url = obj.get("url", CHAT_URL)
            if not isinstance(url, str):
                raise InputError('"url" must be a string', path, number)
            problem = check_path(url)
            if problem is not None:
                raise InputError(problem, path, number)
            yield ident, url, body


def answered_ids(out: Path) -> dict[str, str | None]:
    """Ids with an answer in an existing output file, each with the model its answer names
    (``None`` when it names none): batch output lines without an error, and native lines
    (``raw_output`` or ``raw_judge_output``, without an ``error``)."""
    ids: dict[str, str | None] = {}
    if not out.is_file():
        return ids
    for _, obj in jsonio.iter_jsonl(out):
        if "custom_id" in obj:
            if isinstance(obj["custom_id"], str) and batch_line_result(obj)[1] is None:
                ids[obj["custom_id"]] = _answer_model(obj)
        elif (
            isinstance(obj.get("id"), str)
            and any(isinstance(obj.get(key), str) for key in ("raw_output", "raw_judge_output"))
            and not obj.get("error")  # a failed call of the user's runner: score's errored
        ):
            model = obj.get("model")
            ids[obj["id"]] = model if isinstance(model, str) else None
    return ids


def _answer_model(obj: dict[str, Any]) -> str | None:
    """The model named in a batch output line's ``response.body.model``, if any."""
    response = obj.get("response")
    body = response.get("body") if isinstance(response, dict) else None
    model = body.get("model") if isinstance(body, dict) else None
    return model if isinstance(model, str) else None


# What a server adds to a model's name for the same model: a snapshot date or number
# (gpt-4o-2024-08-06, claude-3-5-sonnet@20241022, gpt-4-0613, gemini-1.5-pro-002).
_SNAPSHOT_RE = re.compile(r"[-@:](?:\d{4}-\d{2}-\d{2}|\d{3,8})")


def same_model(asked: str, answered: str) -> bool:
    """Whether an answer naming ``answered`` can be the model ``asked`` for: the same name, the
    same with a snapshot suffix (servers add a date: ``gpt-4o`` answers as
    ``gpt-4o-2024-08-06``; ``gpt-4o-mini`` is another model), or the other's last path part
    (``openai/gpt-4o``). An empty name names no model."""
    a, b = asked.casefold(), answered.casefold()
    if "/" not in a or "/" not in b:
        a, b = a.rsplit("/", 1)[-1], b.rsplit("/", 1)[-1]
    short, long = sorted((a, b), key=len)
    if not short or long == short:
        return True
    return long.startswith(short) and _SNAPSHOT_RE.fullmatch(long[len(short) :]) is not None


class OutputFile(AppendLog):
    """The output file of one send, held for the whole run (a context manager).

    Opening locks it (so two sends cannot write one file at once) and repairs a torn last line
    (``repaired_tail``); :meth:`append` writes whole lines, ``fsync``-ed. A file this send
    created and left empty because the request files were bad is removed again. ``named``:
    the user named ``path`` (``--out``); only such a path is written in place when it is a
    pipe or device, the default output in a run directory never is.
    """

    def __init__(self, path: Path, *, named: bool = True) -> None:
        super().__init__(path, lock_holder="datbench send", make_parent=True)
        self._created = False
        self._named = named

    def __enter__(self) -> Self:
        self._created = not os.path.lexists(self.path)
        # A link is followed only to what is written in place (/dev/stdout, a pipe): a link
        # put at a file's path since the output guard looked is refused, never appended to.
        self.follow_links = self._named and (
            jsonio.is_descriptor_link(self.path) or jsonio.is_stream_output(self.path)
        )
        return super().__enter__()

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        # Bad request files (found before anything is sent): leave no empty output behind.
        if exc_type is not None and issubclass(exc_type, InputError | UsageError) and self._created:
            with contextlib.suppress(OSError):
                own = os.fstat(self._fd)
                if own.st_size == 0 and os.path.samestat(own, os.lstat(self.path)):
                    os.unlink(self.path)
        super().__exit__(exc_type, *exc)

    def answered_ids(self) -> dict[str, str | None]:
        """Ids already answered in the file, each with the model its answer names."""
        return answered_ids(self.path)

    @property
    def repaired_tail(self) -> str | None:
        """What repairing the last line did, if anything, said as of an interrupted send."""
        return None if self.repaired is None else f"{self.repaired} left by an interrupted send"


def plan_send(paths: Sequence[Path], output: OutputFile, model: str | None = None) -> SendPlan:
    """Validate the request files and count what is left to send to the (open) output.

    ``model``: the ``--model`` that replaces each request's; an answer already in the output
    that names another model is kept and listed in ``other_model`` by ``(asked, answered)``.
    """
    plan = SendPlan(repaired_tail=output.repaired_tail)
    plan.answered_ids = output.answered_ids()
    seen: set[str] = set()
    for ident, _, body in iter_request_lines(paths):
        plan.total += 1
        if ident in seen:
            plan.duplicate_ids.append(ident)
            continue
        seen.add(ident)
        if ident not in plan.answered_ids:
            plan.pending += 1
            continue
        plan.already_answered += 1
        asked, answered = model or body.get("model"), plan.answered_ids[ident]
        if isinstance(asked, str) and answered is not None and not same_model(asked, answered):
            plan.other_model.setdefault((asked, answered), []).append(ident)
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
    location: str = ""
    proxy: str | None = None  # the proxy a failed connection went through


def request_headers(api_key: str | None) -> dict[str, str]:
    """The headers of every chat-completions POST (``send``'s and the agent's); the key, when
    there is one, as a bearer token."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json",
        "Accept-Encoding": "identity",
        "User-Agent": f"datbench/{__version__}",
    }
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


def retry_after(value: str | None) -> float | None:
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


def decode_body(data: bytes) -> Any:
    """A server's answer body: its JSON, else its text (cut at a bound)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        text = data.decode("utf-8", "replace")
        return text if len(text) <= _MAX_BODY_CHARS else text[:_MAX_BODY_CHARS] + "..."


def _plain(text: str, limit: int = 300) -> str:
    """Server-supplied text made safe for one line of a terminal."""
    text = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
    return text if len(text) <= limit else text[:limit] + "..."


def server_message(body: Any) -> str:
    """The error message of an answer body (see :func:`decode_body`), safe for one terminal
    line: OpenAI-style ``error.message`` when there is one."""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            return _plain(str(error.get("message") or error))
        return _plain(str(error))
    return _plain(str(body)) if body != "" else "(an empty body)"


def _attempt(answer: Answer) -> _Attempt:
    """An HTTP answer (or its absence) read as one attempt."""
    if answer.status is None or answer.headers is None:
        return _Attempt(None, problem=answer.problem, code=answer.code, proxy=answer.proxy)
    headers = answer.headers
    request_id = headers.get("x-request-id", "")
    if answer.problem is not None:  # the body was not read (too large)
        return _Attempt(answer.status, None, request_id, problem=answer.problem, code=answer.code)
    body = decode_body(answer.body)
    if answer.status in REDIRECTS:
        return _Attempt(
            answer.status, body, request_id, problem=f"HTTP {answer.status} (a redirect)",
            code=f"http_{answer.status}", location=_plain(shown_url(headers.get("location", "")), 200),
        )  # fmt: skip
    if answer.status != 200:
        return _Attempt(
            answer.status, body, request_id, retry_after(headers.get("retry-after")),
            f"HTTP {answer.status}: {server_message(body)}", f"http_{answer.status}",
        )  # fmt: skip
    attempt = _Attempt(200, body, request_id)
    if not isinstance(body, dict):
        attempt.problem = "the server's answer is not a JSON object"
        attempt.code = "invalid_response"
    elif is_responses_body(body):
        # A request line whose url is /v1/responses: its answer has "output", not "choices"
        # (score reads it as the Batch API's Responses lines); was retried as unreadable.
        if problem := responses_problem(body):
            attempt.problem = f"the server's answer cannot be read: {problem}"
            attempt.code = "invalid_response"
    elif not isinstance(body.get("choices"), list) or not body["choices"]:
        # A proxy's upstream failure said with status 200 ({"error": ...}), or an empty choice
        # list (no answer: score would count it errored): retried as unreadable.
        said = f": {server_message(body)}" if body.get("error") else ""
        attempt.problem = f'the server\'s answer has no "choices"{said}'
        attempt.code = "invalid_response"
    elif isinstance(choice := body["choices"][0], dict) and (problem := message_problem(choice)):
        # An answer of another type (content 5): score refuses such a line, so it is retried
        # as unreadable and, failing that, written as a failure (sent again by a rerun).
        attempt.problem = f"the server's answer cannot be read: {problem}"
        attempt.code = "invalid_response"
    return attempt


class _Client:
    """POSTs request bodies with retries; shared by the worker threads."""

    def __init__(
        self,
        config: SendConfig,
        sleep: Callable[[float], None] = time.sleep,
        counts: SendResult | None = None,
        on_retry: OnRetry | None = None,
    ) -> None:
        from datbench_cli.batch.transport import Transport  # the HTTP stack, only when sending

        self.config = config
        self.sleep = sleep
        self.counts = counts if counts is not None else SendResult()
        self.on_retry = on_retry
        self.base = BaseUrl.parse(config.base_url)
        self.transport = Transport(config.base_url, config.concurrency)
        self._gate_lock = threading.Lock()
        self._not_before = 0.0
        self._headers = request_headers(config.api_key)

    def close(self) -> None:
        self.transport.close()

    def _post(self, url: str, data: bytes) -> _Attempt:
        answer = self.transport.post(
            url, self._headers, data, self.config.timeout, self.config.max_response_bytes
        )
        attempt = _attempt(answer)
        key = (self.config.api_key or "").encode()
        if attempt.problem is not None and key and key in answer.body:
            # A 200 that is no answer (a proxy's error body) quoting the key: shown and written
            # with *** in its place, as the transport does for every other status.
            attempt = _attempt(replace(answer, body=answer.body.replace(key, b"***")))
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

    def _fatal(self, target: str, attempt: _Attempt) -> str:
        if attempt.status in REDIRECTS:
            problem = redirect_problem(attempt.status, attempt.location)
            return f"{shown_url(target)} answered with {problem}"
        hint = ""
        if attempt.status in (401, 403) and self.config.key_withheld:
            hint = " (no key was sent; pass --api-key-env NAME to send one)"
        return f"{shown_url(target)} answered {attempt.problem}{hint}"

    def send(self, custom_id: str, url: str, body: dict[str, Any]) -> _Reply:
        """Send one request until it is answered, fails for good, or the run must stop; from
        its first retry until it ends it is counted in ``counts.retrying``."""
        if self.config.model:
            body = {**body, "model": self.config.model}
        data = jsonio.dumps(body)
        target = self.base.endpoint(url)
        number = 0
        try:
            while True:
                self._wait_gate()
                attempt = self._post(target, data)
                if attempt.code == "unreachable":
                    return _Reply(fatal=unreachable(target, attempt.problem, attempt.proxy))
                if attempt.status in _FATAL_STATUSES or attempt.status in REDIRECTS:
                    return _Reply(fatal=self._fatal(target, attempt))
                if attempt.status == 200 and attempt.problem is None:
                    return _Reply(_output_line(custom_id, attempt))
                retryable = attempt.status in (None, 408, 429) or (attempt.status or 0) >= 500
                retryable = retryable or attempt.code == "invalid_response"
                if attempt.code == "response_too_large":
                    retryable = False
                if not retryable:
                    return _Reply(_output_line(custom_id, attempt))
                if number >= self.config.max_retries:
                    if attempt.code == "connect_error":
                        return _Reply(fatal=f"cannot reach {shown_url(target)} ({attempt.problem})")
                    return _Reply(_output_line(custom_id, attempt))
                delay = self._delay(attempt, number)
                with self._gate_lock:
                    if attempt.status == 429:
                        self._not_before = max(self._not_before, time.monotonic() + delay)
                    if number == 0:
                        self.counts.retrying += 1
                if self.on_retry is not None:
                    problem = attempt.problem or f"HTTP {attempt.status}"
                    self.on_retry(target, problem, attempt.code, delay)
                self.sleep(delay)
                number += 1
        finally:
            if number:
                with self._gate_lock:
                    self.counts.retrying -= 1


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
    if attempt.problem is not None and (
        attempt.status is None or attempt.status == 200 or attempt.body is None
    ):
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
    # Of the failed, the prompts the service's content filter refused (a retry gets the same).
    filtered_ids: list[str] = field(default_factory=list)
    # Requests waiting to be tried again right now (a live count, for progress displays).
    retrying: int = 0


# Called from a worker thread when a request is about to be tried again: (endpoint, what went
# wrong, its code such as "connect_error", seconds until the next attempt).
OnRetry = Callable[[str, str, str | None, float], None]


class _Workers:
    """Daemon threads running ``work`` on submitted jobs; results come back on a queue."""

    def __init__(self, count: int, work: Callable[..., _Reply]) -> None:
        self._jobs: queue.Queue[tuple[Any, ...] | None] = queue.Queue()
        self._results: queue.Queue[tuple[str, _Reply | BaseException]] = queue.Queue()
        self._work = work
        self._threads: list[threading.Thread] = []
        for _ in range(count):
            thread = threading.Thread(target=self._run, daemon=True)
            try:
                thread.start()
            except RuntimeError:  # the system allows no more threads: work with those started
                if not self._threads:
                    raise DatbenchError("cannot start a thread to send requests") from None
                break
            self._threads.append(thread)

    @property
    def count(self) -> int:
        """How many threads work (fewer than asked when the system allowed no more)."""
        return len(self._threads)

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
    counts: SendResult | None = None,
    on_retry: OnRetry | None = None,
) -> SendResult:
    """Send every request of ``paths`` not answered in ``output`` (per ``plan``), appending the
    output lines; raise :class:`SendAborted` after writing what finished when the run must stop.

    ``counts``: the result to fill, which a caller may read while the run goes on;
    ``on_retry``: told of each retry as it is decided.
    """
    result = counts if counts is not None else SendResult()
    client = _Client(config, sleep, result, on_retry)
    sent: set[str] = set(plan.answered_ids)
    fatal: str | None = None
    in_flight = 0
    try:
        workers = _Workers(config.concurrency, client.send)
    except BaseException:
        client.close()
        raise

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
            if prompt_filtered(reply.line):
                result.filtered_ids.append(ident)
        if advance is not None:
            advance(1)

    try:
        for ident, url, body in iter_request_lines(paths):
            if ident in sent:
                continue
            while in_flight >= workers.count and fatal is None:
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
        if not in_flight:
            client.close()
    if fatal is not None and not (result.answered or result.failed_ids):
        raise SendAborted(fatal)  # nothing written: nothing to say of the output
    if fatal is not None:
        raise SendAborted(
            f"stopped: {fatal}; answers received so far are kept in {output.path}, and running "
            "the same command again continues from there"
        )
    return result
