"""The tool loop of one turn, as the official runner runs it, and its trajectory record.

Messages: the system prompt of the chosen level (if any), the turn's history as plain text, then
the turn's prompt with its images (text first). Each round sends the conversation with the tool
list; an answer without tool calls ends the turn; otherwise every call is run, its result goes
back as a ``tool`` message, and the images an image-processing call saved follow as one user
message per call. After ``max_tool_rounds`` rounds that all asked for tools the turn's answer is
the official literal. The trajectory keeps every message sent (images by digest, never their
data), every answer, tool call and result, timings and token usage.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from datbench_cli.batch.responses import content_text, message_problem
from datbench_cli.benchmarks.vistoolbench.agent import images as transport_images
from datbench_cli.benchmarks.vistoolbench.agent import protocol
from datbench_cli.benchmarks.vistoolbench.agent.tools import ToolSettings, TurnTools
from datbench_cli.benchmarks.vistoolbench.agent.transport import ChatClient, RequestFailed

ANSWERED = "answered"
ERRORED = "errored"
# The most tool calls run for one answer; the others are answered with an error, unrun. Each
# code call may take the whole wall-clock limit: 20 calls of time.sleep took 20 limits, and a
# 1.2 MB answer holds 10,000 calls (333 hours at the default 120 s).
MAX_CALLS_PER_ANSWER = 64
# The most text one request may carry: the turn's messages as sent (the model's answers, its
# tool calls' arguments, the tool results), the images' data aside (they have their own
# budgets). Each answer is kept for the rounds after it: 20 answers of 64 MB of arguments (the
# answer size cap) held 1.28 GB, sent again in every request. 64 MB is about 16 million tokens,
# more than any model's context window holds: a request past it is refused unsent, the turn
# errored.
MAX_CONVERSATION_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class LoopSettings:
    """The request settings of every round."""

    model: str
    system_prompt: str = protocol.DEFAULT_SYSTEM_PROMPT
    max_tool_rounds: int = protocol.DEFAULT_MAX_TOOL_ROUNDS
    temperature: float = 0.0
    max_tokens: int | None = None
    image_transport: str = transport_images.JPEG_Q85
    max_conversation_bytes: int = MAX_CONVERSATION_BYTES


@dataclass
class TurnInput:
    """One turn to answer: its prompt, images (file name, bytes) and text history."""

    id: str
    task_id: str
    index: int
    prompt: str
    images: list[tuple[str, bytes]] = field(default_factory=list)
    history: list[dict[str, str]] = field(default_factory=list)


class _Conversation:
    """The messages sent so far, and their record with image data replaced by digests.

    The images the model's code saved are sent up to ``saved_budget`` bytes in all (as sent):
    their re-encoding can be far larger than their files (a 1.4 MB PNG of 64 megapixels became
    44 MB of JPEG, and 12 of them made a 713 MB request). Past
    the budget (from the first image that does not fit) no image is decoded, and the model
    reads a note in each one's place."""

    def __init__(self, transport: str, saved_budget: int) -> None:
        self.transport = transport
        self.saved_budget = saved_budget
        self.messages: list[dict[str, Any]] = []
        self.records: list[dict[str, Any]] = []
        self.sent = 0
        self.text_bytes = 0  # the messages' bytes as sent, the images' data aside

    def add(self, message: dict[str, Any], record: dict[str, Any] | None = None) -> None:
        self.messages.append(message)
        self.records.append(record if record is not None else message)
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, list):  # text, images
            parts = [part for part in content if part.get("type") != "image_url"]
            message = {**message, "content": parts}
        self.text_bytes += len(orjson.dumps(message))

    def add_user(
        self, text: str, images: list[tuple[str, bytes]], plain: bool, saved: bool = False
    ) -> list[dict[str, Any]]:
        """A user message: a plain string without images (``plain``), else text then images;
        returns the images' records (digests). ``saved``: the images the code saved, sent
        within the budget."""
        if plain and not images:
            self.add({"role": "user", "content": text})
            return []
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        record: list[dict[str, Any]] = [{"type": "text", "text": text}]
        described = []
        for name, data in images:
            sent = None
            if not saved or self.saved_budget > 0:
                sent = transport_images.encode(data, self.transport)
            if sent is None or (saved and sent.size > self.saved_budget):
                self.saved_budget = 0  # none is decoded after the first that does not fit
                note = f"[{name} was not sent: the images saved in this turn are over the limit]"
                content.append({"type": "text", "text": note})
                record.append({"type": "text", "text": note})
                described.append(
                    {"name": name, "bytes": len(data), "note": "not sent: over the limit"}
                )
                continue
            self.saved_budget -= sent.size if saved else 0
            content.append({"type": "image_url", "image_url": {"url": sent.url}})
            record.append({"type": "image_url", "image": sent.record(name)})
            described.append(sent.record(name))
        self.add({"role": "user", "content": content}, {"role": "user", "content": record})
        return described

    def new_records(self) -> list[dict[str, Any]]:
        """The records of the messages added since the last request."""
        new = self.records[self.sent :]
        self.sent = len(self.records)
        return new


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _add_usage(total: dict[str, int], usage: Any) -> None:
    if not isinstance(usage, dict):
        return
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        value = usage.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            total[key] = total.get(key, 0) + value


def _first_message(answer: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    choices = answer.get("choices") or []
    choice = choices[0] if choices and isinstance(choices[0], dict) else None
    message = choice.get("message") if choice else None
    if choice is None or not isinstance(message, dict):
        raise RequestFailed("the server's answer has no message", 1)
    # An answer of another type (content 5, tool calls as an object) is no empty answer.
    problem = message_problem(choice)
    calls = message.get("tool_calls")
    if problem is None and calls is not None and not isinstance(calls, list):
        problem = f'"choices[0].message.tool_calls" must be a list, got {type(calls).__name__}'
    if problem is not None:
        raise RequestFailed(f"the server's answer cannot be read: {problem}", 1)
    reason = choice.get("finish_reason")
    return message, reason if isinstance(reason, str) else None


def run_turn(
    turn: TurnInput, settings: LoopSettings, tools: ToolSettings, client: ChatClient
) -> dict[str, Any]:
    """Answer one turn with the tool loop; the trajectory (``status`` answered or errored)."""
    started, clock = _now(), time.monotonic()
    usage: dict[str, int] = {}
    steps: list[dict[str, Any]] = []
    trajectory: dict[str, Any] = {
        "id": turn.id,
        "task_id": turn.task_id,
        "turn_index": turn.index,
        "status": ERRORED,
        "answer": None,
        "stop": None,
        "tool_rounds": 0,
        "started_at": started,
    }
    # The saved images of a turn are sent up to the turn folder's own cap.
    conversation = _Conversation(settings.image_transport, tools.limits.max_dir_mb * 1024 * 1024)
    system = protocol.SYSTEM_PROMPTS.get(settings.system_prompt)
    if system is not None:
        conversation.add({"role": "system", "content": system})
    for item in turn.history:
        conversation.add({"role": item["role"], "content": item["text"]})
    conversation.add_user(turn.prompt, turn.images, plain=bool(turn.history))
    try:
        with TurnTools(tools, turn.images) as box:
            answer, stop = _rounds(conversation, box, settings, client, steps, usage, trajectory)
        trajectory.update(status=ANSWERED, answer=answer, stop=stop)
    except RequestFailed as exc:
        trajectory.update(stop="error", error=str(exc))
    trajectory.update(elapsed_s=round(time.monotonic() - clock, 3), usage=usage, steps=steps)
    return trajectory


def _rounds(
    conversation: _Conversation,
    box: TurnTools,
    settings: LoopSettings,
    client: ChatClient,
    steps: list[dict[str, Any]],
    usage: dict[str, int],
    trajectory: dict[str, Any],
) -> tuple[str, str]:
    for number in range(settings.max_tool_rounds):
        if conversation.text_bytes > settings.max_conversation_bytes:
            raise RequestFailed(
                f"the request of round {number} was not sent: the turn's conversation holds "
                f"{conversation.text_bytes:,} bytes of text (the model's answers, its tool "
                "calls' arguments, the tool results), over the "
                f"{settings.max_conversation_bytes:,} bytes "
                f"({settings.max_conversation_bytes / 1024 / 1024:g} MB) a request may carry",
                0,
            )
        schemas = box.schemas()
        body: dict[str, Any] = {
            "model": settings.model,
            "messages": conversation.messages,
            "temperature": settings.temperature,
        }
        if schemas:
            body.update(tools=schemas, tool_choice="auto")
        if settings.max_tokens is not None:
            body["max_tokens"] = settings.max_tokens
        step: dict[str, Any] = {
            "round": number,
            "request": {
                "new_messages": conversation.new_records(),
                "tools": [schema["function"]["name"] for schema in schemas],
                "image_files": list(box.image_files),
                "temperature": settings.temperature,
            },
        }
        steps.append(step)
        clock = time.monotonic()
        try:
            answer, attempts = client.complete(body)
        except RequestFailed as exc:
            step.update(elapsed_s=round(time.monotonic() - clock, 3), error=str(exc))
            raise
        message, reason = _first_message(answer)
        _add_usage(usage, answer.get("usage"))
        content = message.get("content")
        calls = message.get("tool_calls") or []
        step["response"] = {
            "content": content,
            "tool_calls": calls,
            "finish_reason": reason,
            "usage": answer.get("usage"),
            "attempts": attempts,
            "elapsed_s": round(time.monotonic() - clock, 3),
        }
        if not isinstance(calls, list) or not calls:
            if reason == "length":
                trajectory["truncated"] = True
            # Content parts ([{"type": "text", "text": ...}]) are read as a batch line's are.
            text = content_text(content)
            if text is None:
                trajectory["empty_answer"] = True
            # What score counts the answer as (truncated, refused), as for a batch line.
            trajectory["finish_reason"] = reason
            refusal = message.get("refusal")
            if isinstance(refusal, str) and refusal:
                trajectory["refusal"] = refusal
            return text or "", "answer"
        calls = [_with_id(call, number, position) for position, call in enumerate(calls)]
        conversation.add(
            {"role": "assistant", "content": content, "tool_calls": calls},
        )
        step["tool_results"] = _run_calls(conversation, box, calls, number)
        trajectory["tool_rounds"] = number + 1
    return protocol.MAX_ROUNDS_ANSWER, "max_tool_rounds"


def _with_id(call: Any, number: int, position: int) -> Any:
    """A call as sent back: one the server gave no id gets the id its tool message answers
    (``call_<round>_<position>``), so the two still match."""
    if isinstance(call, dict) and not isinstance(call.get("id"), str):
        return {**call, "id": f"call_{number}_{position}"}
    return call


def _run_calls(
    conversation: _Conversation, box: TurnTools, calls: list[Any], number: int
) -> list[dict[str, Any]]:
    results = []
    image_messages: list[tuple[dict[str, Any], list[tuple[str, bytes]]]] = []
    for position, call in enumerate(calls):
        call = call if isinstance(call, dict) else {}
        function: dict[str, Any]
        call_id = call["id"] if isinstance(call.get("id"), str) else f"call_{number}_{position}"
        function = call["function"] if isinstance(call.get("function"), dict) else {}
        name = function.get("name")
        if position < MAX_CALLS_PER_ANSWER:
            outcome = box.call(name, function.get("arguments"))
        else:
            outcome = box.refuse(
                name,
                function.get("arguments"),
                f"not run: an answer may ask for at most {MAX_CALLS_PER_ANSWER} tool calls, "
                f"and this one asked for {len(calls)}",
            )
        conversation.add(
            {
                "role": "tool",
                "tool_call_id": call_id,
                "name": name if isinstance(name, str) else "",
                "content": outcome.content,
            }
        )
        record = {"id": call_id, **outcome.record}
        if outcome.images:
            image_messages.append((record, outcome.images))
        results.append(record)
    # The saved images follow the tool messages of the round (strict servers refuse a user
    # message between the tool messages answering one assistant message).
    for record, saved in image_messages:
        text = protocol.transformed_images_text(record["id"])
        record["images"] = conversation.add_user(text, saved, False, saved=True)
    return results
