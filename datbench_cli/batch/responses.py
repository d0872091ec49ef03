"""Reading model and judge response files: the native lines and OpenAI batch output lines.

A batch output line (``custom_id`` + ``response.body.choices[0].message.content``) is detected per
line, so one file may mix both shapes. ``error`` may be an object or a plain string (vLLM writes
both); such a line, or one whose ``status_code`` is not 200 or that has no message, is an
*errored* response, unless another line of the same file answers that id (a retry that succeeded
later, as ``datbench send`` appends). A message whose ``content`` is ``null`` is an answer with
empty text. A ``finish_reason`` of ``length`` marks a *truncated* response, which is still
scored. A last line cut off mid-write (no line end, not valid JSON: an interrupted ``datbench
send``) is skipped and reported, never an error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datbench_cli.benchmarks.datbench.schema import JudgeResponse, VLMResponse
from datbench_cli.errors import InputError
from datbench_cli.files.jsonio import iter_jsonl


@dataclass
class ResponseLine:
    """One response line, whatever its shape."""

    id: str
    text: str | None
    parsed: str | None
    error: str | None
    line: int
    finish_reason: str | None = None


def _batch_error(obj: dict[str, Any], response: Any) -> str | None:
    error = obj.get("error")
    if error:
        if isinstance(error, dict):
            return str(error.get("message") or error.get("code") or error)
        return str(error)
    if isinstance(response, dict):
        status = response.get("status_code", 200)
        if status != 200:
            return f"HTTP status {status}"
    return None


def _batch_content(response: Any) -> tuple[str | None, str | None]:
    try:
        choice = response["body"]["choices"][0]
    except (KeyError, IndexError, TypeError):
        return None, None
    if not isinstance(choice, dict):
        return None, None
    message = choice.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if content is None and isinstance(message, dict):
        # An answer without text (all tokens spent on reasoning, or only tool calls) is still
        # the model's answer: empty, never an error to send again.
        content = ""
    reason = choice.get("finish_reason")
    return (content if isinstance(content, str) else None), (
        reason if isinstance(reason, str) else None
    )


def batch_line_result(obj: dict[str, Any]) -> tuple[str | None, str | None, str | None]:
    """``(text, error, finish_reason)`` of one OpenAI batch output line; exactly one of text and
    error is ``None``."""
    response = obj.get("response")
    error = _batch_error(obj, response)
    text, reason = (None, None) if error else _batch_content(response)
    if error is None and text is None:
        error = "no message content in the batch output"
    return text, error, reason


def is_batch_line(obj: dict[str, Any]) -> bool:
    """True for an OpenAI-style batch output line (it carries ``custom_id``)."""
    return "custom_id" in obj


def batch_response_line(obj: dict[str, Any], path: Path | None, number: int) -> ResponseLine:
    """One batch output line as a :class:`ResponseLine` (``custom_id`` is its id)."""
    ident = obj["custom_id"]
    if not isinstance(ident, str) or not ident:
        raise InputError('"custom_id" must be a non-empty string', path, number)
    text, error, reason = batch_line_result(obj)
    return ResponseLine(ident, text, None, error, number, reason)


def _optional_str(obj: dict[str, Any], key: str, path: Path, number: int) -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise InputError(f'"{key}" must be a string, got {type(value).__name__}', path, number)


def iter_response_lines(
    path: Path,
    text_field: str = "raw_output",
    parsed_field: str = "parsed_answer",
    on_torn_tail: Callable[[int], None] | None = None,
) -> Iterator[ResponseLine]:
    """Yield each line of a response file as a :class:`ResponseLine`, validating field types.

    ``on_torn_tail`` is passed to :func:`~datbench_cli.files.jsonio.iter_jsonl`.
    """
    for number, obj in iter_jsonl(path, on_torn_tail):
        if is_batch_line(obj):
            yield batch_response_line(obj, path, number)
            continue
        ident = obj.get("id")
        if not isinstance(ident, str) or not ident:
            raise InputError('each line needs an "id" that is a non-empty string', path, number)
        if text_field not in obj:
            raise InputError(f'line has no "{text_field}" field', path, number)
        text = _optional_str(obj, text_field, path, number)
        parsed = _optional_str(obj, parsed_field, path, number)
        yield ResponseLine(ident, text, parsed, None, number)


@dataclass
class LoadedResponses:
    """Responses ready for the evaluator, plus what was set aside."""

    vlm: list[VLMResponse] = field(default_factory=list)
    judge: list[JudgeResponse] = field(default_factory=list)
    errored_ids: list[str] = field(default_factory=list)
    truncated_ids: list[str] = field(default_factory=list)
    torn_tail_line: int | None = None

    def record_torn_tail(self, number: int) -> None:
        self.torn_tail_line = number


def _load(path: Path, judge: bool) -> LoadedResponses:
    loaded = LoadedResponses()
    fields = ("raw_judge_output", "verdict") if judge else ("raw_output", "parsed_answer")
    errored: list[str] = []
    answered: set[str] = set()
    for line in iter_response_lines(path, *fields, on_torn_tail=loaded.record_torn_tail):
        if line.error is not None:
            errored.append(line.id)
            continue
        answered.add(line.id)
        if line.finish_reason == "length":
            loaded.truncated_ids.append(line.id)
        if judge:
            loaded.judge.append(JudgeResponse(line.id, line.text or "", line.parsed))
        else:
            loaded.vlm.append(VLMResponse(line.id, line.text or "", line.parsed))
    loaded.errored_ids = [i for i in dict.fromkeys(errored) if i not in answered]
    return loaded


def load_vlm_responses(path: Path) -> LoadedResponses:
    """VLM responses from a file; errored batch lines are set aside (not scored)."""
    return _load(path, judge=False)


def load_judge_responses(path: Path) -> LoadedResponses:
    """Judge responses from a file; errored batch lines are set aside (their verdict is missing)."""
    return _load(path, judge=True)
