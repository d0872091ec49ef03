"""Reading model and judge response files: the native lines and OpenAI batch output lines.

A batch output line (``custom_id`` + ``response.body.choices[0].message.content``) is detected per
line, so one file may mix both shapes. ``error`` may be an object or a plain string (vLLM writes
both); such a line, or one whose ``status_code`` is not 200, is an *errored* response.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datbench_cli.errors import InputError
from datbench_cli.jsonio import iter_jsonl
from datbench_cli.schema import JudgeResponse, VLMResponse


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
    reason = choice.get("finish_reason")
    return (content if isinstance(content, str) else None), (
        reason if isinstance(reason, str) else None
    )


def _optional_str(obj: dict[str, Any], key: str, path: Path, number: int) -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise InputError(f'"{key}" must be a string, got {type(value).__name__}', path, number)


def is_batch_line(obj: dict[str, Any]) -> bool:
    """True for an OpenAI-style batch output line (it carries ``custom_id``)."""
    return "custom_id" in obj


def batch_response_line(obj: dict[str, Any], path: Path | None, number: int) -> ResponseLine:
    """One batch output line as a :class:`ResponseLine` (``custom_id`` is its id)."""
    ident = obj["custom_id"]
    if not isinstance(ident, str) or not ident:
        raise InputError('"custom_id" must be a non-empty string', path, number)
    response = obj.get("response")
    error = _batch_error(obj, response)
    text, reason = (None, None) if error else _batch_content(response)
    if error is None and text is None:
        error = "no message content in the batch output"
    return ResponseLine(ident, text, None, error, number, reason)


def iter_response_lines(
    path: Path, text_field: str = "raw_output", parsed_field: str = "parsed_answer"
) -> Iterator[ResponseLine]:
    """Yield each line of a response file as a :class:`ResponseLine`, validating field types."""
    for number, obj in iter_jsonl(path):
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


def load_vlm_responses(path: Path) -> LoadedResponses:
    """VLM responses from a file; errored batch lines are set aside (not scored)."""
    loaded = LoadedResponses()
    for line in iter_response_lines(path):
        if line.error is not None:
            loaded.errored_ids.append(line.id)
            continue
        if line.finish_reason == "length":
            loaded.truncated_ids.append(line.id)
        loaded.vlm.append(VLMResponse(line.id, line.text or "", line.parsed))
    return loaded


def load_judge_responses(path: Path) -> LoadedResponses:
    """Judge responses from a file; errored batch lines are set aside (their verdict is missing)."""
    loaded = LoadedResponses()
    for line in iter_response_lines(path, "raw_judge_output", "verdict"):
        if line.error is not None:
            loaded.errored_ids.append(line.id)
            continue
        if line.finish_reason == "length":
            loaded.truncated_ids.append(line.id)
        loaded.judge.append(JudgeResponse(line.id, line.text or "", line.parsed))
    return loaded
