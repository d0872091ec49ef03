"""OpenAI batch request lines for inference tasks and judge tasks, written as numbered part files.

One request line is ``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body":
{"model", "messages", "max_tokens", "temperature"}}``: the shape of the OpenAI Batch API input,
which ``vllm run-batch`` reads too and ``datbench send`` posts line by line. ``custom_id`` is our
task id, so outputs are matched by id, never by line order. The token limit may be sent as
``max_completion_tokens`` instead, and the temperature left out (OpenAI's reasoning models take
only those).

Part files are ``<stem>.openai.00001.jsonl``, ``.00002``, ... in the run directory's ``requests/``
folder; each holds at most :data:`MAX_LINES_PER_PART` lines and at most ``max_bytes`` bytes, so
hosted batch limits (50,000 requests, 200 MB a file) are never hit.
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

from datbench_cli.errors import InputError, UsageError
from datbench_cli.files import jsonio
from datbench_cli.files.images import extension_from_bytes

CHAT_URL = "/v1/chat/completions"
REQUESTS_DIR = "requests"
MAX_LINES_PER_PART = 50_000
DEFAULT_MAX_FILE_MB = 190
MB = 1_000_000
IMAGE_MODES = ("data-url", "file", "url")
MAX_TOKENS_FIELDS = ("max_tokens", "max_completion_tokens")

_MIME_BY_EXTENSION = {
    "png": "image/png",
    "jpg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
    "bmp": "image/bmp",
    "tiff": "image/tiff",
}


@dataclass(frozen=True)
class RequestSettings:
    """The options of one request file set: model, sampling, image transport, part size.

    ``temperature`` ``None`` leaves it out of the body; ``max_tokens_field`` names the body field
    carrying ``max_tokens`` (``max_tokens`` or ``max_completion_tokens``).
    """

    model: str
    max_tokens: int
    temperature: float | None = 0.0
    image_mode: str = "data-url"
    image_base_url: str | None = None
    max_file_bytes: int = DEFAULT_MAX_FILE_MB * MB
    max_tokens_field: str = "max_tokens"

    def __post_init__(self) -> None:
        if not self.model:
            raise UsageError("--format openai needs --model (the model name the server expects)")
        if self.max_tokens < 1:
            raise UsageError("--max-tokens must be at least 1")
        if self.max_tokens_field not in MAX_TOKENS_FIELDS:
            raise UsageError(
                f"unknown token limit field {self.max_tokens_field!r} "
                f"(use {' or '.join(MAX_TOKENS_FIELDS)})"
            )
        if self.temperature is not None and not 0 <= self.temperature <= 2:
            raise UsageError(f"--temperature must be between 0 and 2, got {self.temperature}")
        if self.image_mode not in IMAGE_MODES:
            raise UsageError(
                f"unknown image mode {self.image_mode!r} (use {', '.join(IMAGE_MODES)})"
            )
        if self.image_mode == "url" and not self.image_base_url:
            raise UsageError("--image-mode url needs --image-base-url")
        if self.image_mode != "url" and self.image_base_url:
            raise UsageError("--image-base-url is only used with --image-mode url")

    def describe(self) -> dict[str, Any]:
        """The settings as recorded in the manifest."""
        return {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "max_tokens_field": self.max_tokens_field,
            "temperature": self.temperature,
            "image_mode": self.image_mode,
            "image_base_url": self.image_base_url,
            "max_file_mb": self.max_file_bytes / MB,
        }


# --------------------------------------------------------------------------- images


def mime_type(data: bytes) -> str:
    """The MIME type of image bytes, from their magic number (``application/octet-stream``
    when unknown)."""
    return _MIME_BY_EXTENSION.get(extension_from_bytes(data), "application/octet-stream")


def data_url(data: bytes) -> str:
    """A ``data:`` URL holding the bytes as base64, with the MIME type read from the bytes."""
    return f"data:{mime_type(data)};base64,{base64.b64encode(data).decode('ascii')}"


def image_url(
    run_root: Path, rel_path: str, settings: RequestSettings, named_root: Path | None = None
) -> str:
    """The URL a request uses for one image of the run directory (``rel_path`` as in tasks.jsonl).

    ``data-url``: the file's bytes inlined; ``file``: an absolute ``file://`` URL (for vLLM's
    ``--allowed-local-media-path``); ``url``: ``--image-base-url`` + ``/`` + ``rel_path``, so the
    base URL stands for the run directory (``<base>/images/<file>``). ``named_root``: the run
    directory the URL names when the file is read from elsewhere (an export's private folder).
    """
    path = run_root / rel_path
    if settings.image_mode == "url":
        assert settings.image_base_url is not None
        return f"{settings.image_base_url.rstrip('/')}/{quote(rel_path)}"
    if not path.is_file():
        raise InputError("image file is missing; run `datbench export-tasks` again", path)
    if settings.image_mode == "file":
        return (named_root / rel_path if named_root else path).resolve().as_uri()
    return data_url(path.read_bytes())


# --------------------------------------------------------------------------- request lines


def chat_messages(
    prompt: str,
    image_urls: Sequence[str] = (),
    history: Sequence[dict[str, Any]] = (),
    system: str | None = None,
    *,
    text_first: bool = False,
) -> list[dict[str, Any]]:
    """Chat messages: optional system message, prior turns, then the user turn (images first,
    then the prompt text; ``text_first``: the prompt, then the images).

    ``history`` items are ``{"role": "user"|"assistant", "text": str}`` (the VisualToolBench
    tasks.jsonl shape); each becomes one plain-text message.
    """
    messages: list[dict[str, Any]] = []
    if system:
        messages.append({"role": "system", "content": system})
    for item in history:
        messages.append({"role": item["role"], "content": item["text"]})
    parts: list[dict[str, Any]] = [
        {"type": "image_url", "image_url": {"url": url}} for url in image_urls
    ]
    text = {"type": "text", "text": prompt}
    parts = [text, *parts] if text_first else [*parts, text]
    messages.append({"role": "user", "content": parts})
    return messages


def request_line(
    custom_id: str,
    messages: list[dict[str, Any]],
    settings: RequestSettings,
    *,
    response_format: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One OpenAI batch input line (``response_format``, when given, goes into the body)."""
    body: dict[str, Any] = {
        "model": settings.model,
        "messages": messages,
        settings.max_tokens_field: settings.max_tokens,
    }
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if response_format is not None:
        body["response_format"] = dict(response_format)
    return {"custom_id": custom_id, "method": "POST", "url": CHAT_URL, "body": body}


def prompt_request(
    custom_id: str,
    prompt: str,
    images: Sequence[str],
    history: Sequence[dict[str, Any]],
    run_root: Path,
    settings: RequestSettings,
    named_root: Path | None = None,
    text_first: bool = False,
) -> dict[str, Any]:
    """The request for one inference unit: a DatBench task or a VisualToolBench turn.

    ``images`` are paths relative to the run directory, ``history`` prior turns and
    ``text_first`` as in :func:`chat_messages`; ``named_root`` as in :func:`image_url`.
    """
    urls = [image_url(run_root, rel, settings, named_root) for rel in images]
    messages = chat_messages(prompt, urls, history, text_first=text_first)
    return request_line(custom_id, messages, settings)


InferenceUnit = tuple[str, str, Sequence[str], Sequence[dict[str, Any]]]
"""One request's worth of a task: ``(custom_id, prompt, image paths, history)``."""


def task_requests(
    units: Iterable[InferenceUnit],
    run_root: Path,
    settings: RequestSettings,
    named_root: Path | None = None,
    text_first: bool = False,
) -> Iterator[dict[str, Any]]:
    """The requests of a task's inference units (a benchmark says what its units are, and
    whether its prompt comes before its images: ``text_first``)."""
    for custom_id, prompt, images, history in units:
        yield prompt_request(
            custom_id, prompt, images, history, run_root, settings, named_root, text_first
        )


# --------------------------------------------------------------------------- judge requests

# JSON output mode: the server only returns a JSON object (the prompt must mention JSON).
JSON_OUTPUT: dict[str, str] = {"type": "json_object"}


def judge_request(
    custom_id: str,
    text: str,
    settings: RequestSettings,
    *,
    response_format: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The text-only request for one judge task: ``text`` is what the judge sees, one user
    message (``response_format``: e.g. :data:`JSON_OUTPUT` for a judge asked for JSON)."""
    messages = [{"role": "user", "content": text}]
    return request_line(custom_id, messages, settings, response_format=response_format)


# --------------------------------------------------------------------------- part files

_PART_RE = r"\.openai\.(\d{5})\.jsonl"


def part_name(stem: str, number: int) -> str:
    """``<stem>.openai.<number, 5 digits>.jsonl``."""
    return f"{stem}.openai.{number:05d}.jsonl"


def existing_parts(directory: Path, stem: str) -> list[Path]:
    """The part files of ``stem`` present in ``directory``, in number order."""
    if not directory.is_dir():
        return []
    pattern = re.compile(re.escape(stem) + _PART_RE)
    found = [p for p in directory.iterdir() if pattern.fullmatch(p.name)]
    return sorted(found, key=lambda p: p.name)


def remove_parts(directory: Path, stem: str, keep: Iterable[Path] = ()) -> list[Path]:
    """Delete the part files of ``stem`` not in ``keep``; return what was removed."""
    kept = {p.name for p in keep}
    removed = [p for p in existing_parts(directory, stem) if p.name not in kept]
    for path in removed:
        path.unlink(missing_ok=True)
    return removed


def _size(count: int) -> str:
    return f"{count / MB:.1f} MB" if count >= MB // 10 else f"{count:,} bytes"


class PartWriter:
    """Writes JSONL lines into numbered part files, all renamed into place only at the end.

    A new part starts before a part would exceed ``max_lines`` lines or ``max_bytes`` bytes.
    On success, stale parts of the same stem from an earlier run are removed; on failure, no
    part file is touched.
    """

    def __init__(
        self,
        directory: Path,
        stem: str,
        *,
        max_lines: int = MAX_LINES_PER_PART,
        max_bytes: int = DEFAULT_MAX_FILE_MB * MB,
    ) -> None:
        if max_lines < 1 or max_bytes < 1:
            raise UsageError("part files need room for at least one line")
        self.directory = directory
        self.stem = stem
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self.lines = 0
        self.paths: list[Path] = []
        self._temps: list[Path] = []
        self._handle: IO[bytes] | None = None
        self._part_lines = 0
        self._part_bytes = 0

    def __enter__(self) -> PartWriter:
        with jsonio.writing(self.directory):
            self.directory.mkdir(parents=True, exist_ok=True)
        return self

    def write(self, row: dict[str, Any], label: str = "") -> None:
        """Add one JSON line (``label`` names it in the error when it alone is too large)."""
        data = jsonio.dumps(row) + b"\n"
        if len(data) > self.max_bytes:
            raise UsageError(
                f"request {label or row.get('custom_id')!r} is {_size(len(data))}, larger "
                f"than the part-file limit of {_size(self.max_bytes)}; raise --max-file-mb "
                "or use --image-mode file/url"
            )
        if (
            self._handle is None
            or self._part_lines >= self.max_lines
            or self._part_bytes + len(data) > self.max_bytes
        ):
            self._next_part()
        assert self._handle is not None
        with jsonio.writing(self.directory / part_name(self.stem, len(self._temps))):
            self._handle.write(data)
        self._part_lines += 1
        self._part_bytes += len(data)
        self.lines += 1

    def _next_part(self) -> None:
        self._close_current()
        with jsonio.writing(self.directory / part_name(self.stem, len(self._temps) + 1)):
            fd, temp = jsonio.make_temp(self.directory, f"{self.stem}.openai")
        self._temps.append(temp)
        self._handle = os.fdopen(fd, "wb")
        self._part_lines = self._part_bytes = 0

    def _close_current(self) -> None:
        if self._handle is not None:
            with jsonio.writing(self.directory / part_name(self.stem, len(self._temps))):
                self._handle.flush()
                os.fsync(self._handle.fileno())
                self._handle.close()
            self._handle = None

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        try:
            if exc_type is None:
                self._close_current()
                self._put_in_place()
                return
        except BaseException:
            self._discard()
            raise
        self._discard()

    def _put_in_place(self) -> None:
        for number, temp in enumerate(self._temps, start=1):
            target = self.directory / part_name(self.stem, number)
            with jsonio.writing(target):
                os.chmod(temp, jsonio.file_mode())
                os.replace(temp, target)
            self.paths.append(target)
        remove_parts(self.directory, self.stem, keep=self.paths)

    def _discard(self) -> None:
        if self._handle is not None:
            with contextlib.suppress(OSError):
                self._handle.close()
            self._handle = None
        for temp in self._temps:
            with contextlib.suppress(OSError):
                temp.unlink()


def write_parts(
    directory: Path,
    stem: str,
    rows: Iterable[dict[str, Any]],
    *,
    max_lines: int = MAX_LINES_PER_PART,
    max_bytes: int = DEFAULT_MAX_FILE_MB * MB,
) -> list[Path]:
    """Write ``rows`` as numbered part files; return their paths (none for no rows)."""
    with PartWriter(directory, stem, max_lines=max_lines, max_bytes=max_bytes) as writer:
        for row in rows:
            writer.write(row)
    return writer.paths
