"""Response lines as real runners write them: ``vllm run-batch`` output lines and the OpenAI
Batch API's output and error files (field sets and nesting as those services write them)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any


def _chat_body(model: str, choice: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": 1764547200,
        "model": model,
        "choices": [choice],
        "usage": {"prompt_tokens": 321, "completion_tokens": 17, "total_tokens": 338},
    }


def vllm_ok(
    custom_id: str,
    content: str | None,
    *,
    finish_reason: str = "stop",
    reasoning_content: str | None = None,
) -> dict[str, Any]:
    """A ``vllm run-batch`` output line for a request the server answered."""
    choice = {
        "index": 0,
        "message": {
            "role": "assistant",
            "reasoning_content": reasoning_content,
            "content": content,
            "tool_calls": [],
        },
        "logprobs": None,
        "finish_reason": finish_reason,
        "stop_reason": None,
    }
    body = _chat_body("Qwen/Qwen2.5-VL-7B-Instruct", choice)
    body["prompt_logprobs"] = None
    return {
        "id": f"vllm-{uuid.uuid4().hex}",
        "custom_id": custom_id,
        "response": {
            "status_code": 200,
            "request_id": f"vllm-batch-{uuid.uuid4().hex}",
            "body": body,
        },
        "error": None,
    }


def vllm_error(custom_id: str, message: str = "The prompt is too long") -> dict[str, Any]:
    """A ``vllm run-batch`` output line for a request that failed (status 400, error text)."""
    return {
        "id": f"vllm-{uuid.uuid4().hex}",
        "custom_id": custom_id,
        "response": {
            "status_code": 400,
            "request_id": f"vllm-batch-{uuid.uuid4().hex}",
            "body": None,
        },
        "error": message,
    }


def openai_ok(
    custom_id: str,
    content: str | None,
    *,
    finish_reason: str = "stop",
    refusal: str | None = None,
) -> dict[str, Any]:
    """An OpenAI Batch API output-file line for a completed request."""
    choice = {
        "index": 0,
        "message": {
            "role": "assistant",
            "content": content,
            "refusal": refusal,
            "annotations": [],
        },
        "logprobs": None,
        "finish_reason": finish_reason,
    }
    return {
        "id": f"batch_req_{uuid.uuid4().hex[:24]}",
        "custom_id": custom_id,
        "response": {
            "status_code": 200,
            "request_id": uuid.uuid4().hex,
            "body": _chat_body("gpt-4o-2024-08-06", choice),
        },
        "error": None,
    }


def openai_http_error(custom_id: str, status: int = 429) -> dict[str, Any]:
    """An OpenAI Batch API output-file line whose request got an HTTP error."""
    return {
        "id": f"batch_req_{uuid.uuid4().hex[:24]}",
        "custom_id": custom_id,
        "response": {
            "status_code": status,
            "request_id": uuid.uuid4().hex,
            "body": {
                "error": {
                    "message": "Rate limit reached for requests",
                    "type": "requests",
                    "param": None,
                    "code": "rate_limit_exceeded",
                }
            },
        },
        "error": None,
    }


def azure_prompt_filtered(custom_id: str) -> dict[str, Any]:
    """An Azure OpenAI batch output line whose prompt the content filter refused (HTTP 400):
    the request never reached the model."""
    category = {"filtered": False, "severity": "safe"}
    return {
        "id": f"batch_req_{uuid.uuid4().hex[:24]}",
        "custom_id": custom_id,
        "response": {
            "status_code": 400,
            "request_id": uuid.uuid4().hex,
            "body": {
                "error": {
                    "code": "content_filter",
                    "message": "The response was filtered due to the prompt triggering Azure "
                    "OpenAI's content management policy.",
                    "param": "prompt",
                    "type": None,
                    "status": 400,
                    "innererror": {
                        "code": "ResponsibleAIPolicyViolation",
                        "content_filter_result": {
                            "hate": category,
                            "self_harm": category,
                            "sexual": category,
                            "violence": {"filtered": True, "severity": "medium"},
                        },
                    },
                }
            },
        },
        "error": None,
    }


def openai_error_file_line(custom_id: str) -> dict[str, Any]:
    """An OpenAI Batch API error-file line (the request never ran)."""
    return {
        "id": f"batch_req_{uuid.uuid4().hex[:24]}",
        "custom_id": custom_id,
        "response": None,
        "error": {
            "code": "batch_expired",
            "message": "This request could not be executed before the completion window expired.",
        },
    }


def write_lines(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def openai_responses_ok(
    custom_id: str,
    text: str | None,
    *,
    status: str | None = None,
    incomplete: str | None = None,
    refusal: str | None = None,
) -> dict[str, Any]:
    """An OpenAI Batch API output-file line for a request sent to ``/v1/responses``: a reasoning
    item, then the assistant message (its text split over two ``output_text`` parts). The status
    is ``incomplete`` when an ``incomplete`` reason is given, ``completed`` otherwise."""
    if status is None:
        status = "completed" if incomplete is None else "incomplete"
    content: list[dict[str, Any]] = []
    if text is not None:
        half = len(text) // 2
        content += [
            {"type": "output_text", "text": part, "annotations": [], "logprobs": []}
            for part in (text[:half], text[half:])
        ]
    if refusal is not None:
        content.append({"type": "refusal", "refusal": refusal})
    body = {
        "id": f"resp_{uuid.uuid4().hex}",
        "object": "response",
        "created_at": 1764547200,
        "status": status,
        "error": None,
        "incomplete_details": None if incomplete is None else {"reason": incomplete},
        "model": "gpt-5-2025-08-07",
        "output": [
            {"id": f"rs_{uuid.uuid4().hex}", "type": "reasoning", "summary": []},
            {
                "id": f"msg_{uuid.uuid4().hex}",
                "type": "message",
                "status": "completed" if incomplete is None else "incomplete",
                "role": "assistant",
                "content": content,
            },
        ],
        "usage": {"input_tokens": 321, "output_tokens": 17, "total_tokens": 338},
    }
    return {
        "id": f"batch_req_{uuid.uuid4().hex[:24]}",
        "custom_id": custom_id,
        "response": {"status_code": 200, "request_id": uuid.uuid4().hex, "body": body},
        "error": None,
    }
