"""Reading model and judge response files: the native lines and OpenAI batch output lines.

A batch output line (``custom_id`` + ``response.body.choices[0].message.content``, or
``choices[0].text`` of the legacy completions shape, or a Responses API body: ``"object":
"response"`` with ``output[]`` messages of ``output_text`` parts, as the Batch API's
``/v1/responses`` endpoint writes) is detected per line, so one file may mix the shapes. Every
line gets a *status* (:data:`RESPONSE_STATUSES`):

- ``errored``: a transport failure, not an answer (``error`` set, which may be an object or a
  plain string as vLLM writes both; a ``status_code`` outside 2xx; no choice in the body).
  The sample stays unanswered, unless another line of the same file answers that id (a retry
  that succeeded later, as ``datbench send`` appends). A prompt the service's content filter
  refused (Azure OpenAI: HTTP 400, error code ``content_filter``, inner code
  ``ResponsibleAIPolicyViolation``) is errored too, never ``refused``: the model never saw
  it; such lines are marked ``filtered`` and counted apart (a retry gets the same refusal).
- ``refused``: the model was reached but declined (``message.refusal`` set, or ``finish_reason``
  ``content_filter``); ``truncated``: ``finish_reason`` ``length``; ``empty``: no usable text
  (content null or empty, or only ``reasoning_content``); ``ok`` otherwise. These are the
  model's answer: the text (``""`` when there is none) is scored as it is. A Responses API
  body says the same with a ``refusal`` part, and ``"status": "incomplete"`` for
  ``max_output_tokens`` (truncated) or ``content_filter`` (refused); any other status but
  ``completed`` (failed, cancelled, still queued) is errored.

A *refusal* (:func:`is_refusal`, the one rule both benchmarks use for the model's and the
judge's lines) is a line that is ``refused``, or an errored line whose prompt the content
filter refused (``filtered``): the model's side counts the two apart (refused answers are
scored, filtered prompts are unanswered); a judge's refusal is counted as the judge refusing.

A last line cut off mid-write (no line end, not valid JSON: an interrupted ``datbench send``) is
skipped and reported, never an error. Judge lines may carry the digest of the response they
judged (see :mod:`datbench_cli.batch.digests`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from datbench_cli.batch.answers import JudgeResponse, VLMResponse
from datbench_cli.batch.digests import DIGEST_FIELD, is_digest, split_tagged_id
from datbench_cli.batch.line_keys import (
    JUDGE_KEYS,
    RESPONSE_KEYS,
    UnknownKeys,
    is_batch_line,
    native_id,
    other_service_hint,
    wrong_file_hint,
)
from datbench_cli.errors import InputError
from datbench_cli.files.jsonio import iter_jsonl

OK = "ok"
EMPTY = "empty"
REFUSED = "refused"
TRUNCATED = "truncated"
ERRORED = "errored"
RESPONSE_STATUSES = (OK, EMPTY, REFUSED, TRUNCATED, ERRORED)
#: What a sample without any usable line is counted as (beside the line statuses).
MISSING = "missing"
ANSWERED_STATUSES = frozenset({OK, EMPTY, REFUSED, TRUNCATED})


#: Other servers' names for the finish reasons that classify an answer, as the chat
#: completion's own (lower-cased): Mistral's ``model_length``, Anthropic's ``max_tokens`` and
#: ``refusal`` stop reasons (through a proxy, or copied by a loop), Gemini's ``MAX_TOKENS`` and
#: blocked-output reasons.
_FINISH_ALIASES = {
    "max_tokens": "length",
    "model_length": "length",
    "max_output_tokens": "length",
    "refusal": "content_filter",
    "safety": "content_filter",
    "prohibited_content": "content_filter",
    "blocklist": "content_filter",
    "spii": "content_filter",
    "recitation": "content_filter",
}


def finish_reason(value: Any) -> str | None:
    """A line's ``finish_reason`` (``None`` unless a string), another server's name for
    ``length`` or ``content_filter`` read as that."""
    if not isinstance(value, str):
        return None
    return _FINISH_ALIASES.get(value.lower(), value)


def text_status(text: str | None, finish_reason: str | None = None, refused: bool = False) -> str:
    """The status of an answer that reached the model (never ``errored``)."""
    if refused or finish_reason == "content_filter":
        return REFUSED
    if finish_reason == "length":
        return TRUNCATED
    return OK if text else EMPTY


@dataclass
class ResponseLine:
    """One response line, whatever its shape (``text`` is ``None`` only for an errored line
    or a native null)."""

    id: str
    text: str | None
    parsed: str | None
    error: str | None
    line: int
    finish_reason: str | None = None
    status: str = OK
    digest: str | None = None
    #: An errored line whose prompt the service's content filter refused (see
    #: :func:`prompt_filtered`).
    filtered: bool = False


@dataclass(frozen=True)
class BatchOutcome:
    """What one batch output line says: its text, error, finish reason and status
    (``filtered``: an errored line whose prompt the service's content filter refused)."""

    text: str | None
    error: str | None
    finish_reason: str | None
    status: str
    filtered: bool = False


#: The error codes (lower-cased) of a prompt the service's content filter refused before the
#: model saw it: Azure OpenAI's ``content_filter``, with inner code
#: ``ResponsibleAIPolicyViolation``.
_PROMPT_FILTER_CODES = frozenset({"content_filter", "responsibleaipolicyviolation"})
#: How an errored line of a filtered prompt is said (its error text starts with it).
PROMPT_FILTERED = "the service's content filter refused the prompt"


def _filter_error(error: Any) -> bool:
    """Whether an error object (``error``, or a body's ``error``) is a content filter's refusal
    of the prompt: its ``code`` or its ``innererror.code``."""
    if not isinstance(error, dict):
        return False
    inner = error.get("innererror", error.get("inner_error"))
    codes = [error.get("code"), inner.get("code") if isinstance(inner, dict) else None]
    return any(isinstance(c, str) and c.lower() in _PROMPT_FILTER_CODES for c in codes)


def prompt_filtered(obj: dict[str, Any]) -> bool:
    """Whether an errored batch output line (or a native line's ``error`` object) says the
    service's content filter refused the prompt: the request never reached the model, so it
    is errored (no answer), not the model's refusal."""
    if _filter_error(obj.get("error")):
        return True
    response = obj.get("response")
    body = response.get("body") if isinstance(response, dict) else None
    return isinstance(body, dict) and _filter_error(body.get("error"))


def is_refusal(status: str, filtered: bool) -> bool:
    """Whether a line of ``status`` (``filtered``: an errored line whose prompt the service's
    content filter refused) is a refusal: the service's filter or the model declined the
    request (a content filter, a model's refusal, Gemini's blocked-output reasons)."""
    return filtered or status == REFUSED


def _batch_error(obj: dict[str, Any], response: Any) -> str | None:
    error = obj.get("error")
    if error:
        if isinstance(error, dict):
            return str(error.get("message") or error.get("code") or error)
        return str(error)
    if isinstance(response, dict):
        status = response.get("status_code", 200)
        if not isinstance(status, int) or isinstance(status, bool) or not 200 <= status < 300:
            return f"HTTP status {status}"
        body = response.get("body")
        if isinstance(body, dict) and body.get("error"):
            body_error = body["error"]
            if isinstance(body_error, dict):
                return str(body_error.get("message") or body_error.get("code") or body_error)
            return str(body_error)
    elif response is None:
        return "no response in the batch output"
    return None


def content_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        # Content parts ([{"type": "text", "text": ...}]), as some servers return them.
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return "".join(p for p in parts if isinstance(p, str))
    return None


#: A Responses API ``incomplete_details.reason``, as the chat ``finish_reason`` it means.
_INCOMPLETE_REASONS = {"max_output_tokens": "length", "content_filter": "content_filter"}


def is_responses_body(body: Any) -> TypeGuard[dict[str, Any]]:
    """Whether a batch line's body is a Responses API object (not a chat completion)."""
    return isinstance(body, dict) and body.get("object") == "response" and "choices" not in body


def _message_parts(body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The content parts of the assistant messages of a Responses API body, in order (parts
    of the wrong shape are left out here; :func:`responses_problem` names them)."""
    output = body.get("output")
    for item in output if isinstance(output, list) else ():
        if not isinstance(item, dict) or item.get("type") != "message":
            continue
        content = item.get("content")
        if isinstance(content, list):
            yield from (part for part in content if isinstance(part, dict))


def _responses_outcome(body: dict[str, Any]) -> BatchOutcome:
    """Classify a Responses API body (see the module docstring): its text is the
    ``output_text`` parts of its messages joined, as the API's own ``output_text`` is."""
    status = body.get("status", "completed")
    reason = None
    if status == "incomplete":
        details = body.get("incomplete_details")
        said = details.get("reason") if isinstance(details, dict) else None
        reason = _INCOMPLETE_REASONS.get(said) if isinstance(said, str) else None
        if reason is None:
            return BatchOutcome(None, f"the response is incomplete ({said})", None, ERRORED)
    elif status != "completed":
        return BatchOutcome(None, f'the response\'s status is "{status}"', None, ERRORED)
    parts = list(_message_parts(body))
    text = "".join(
        p["text"]
        for p in parts
        if p.get("type") == "output_text" and isinstance(p.get("text"), str)
    )
    refused = any(p.get("type") == "refusal" for p in parts) and not text
    return BatchOutcome(text, None, reason, text_status(text, reason, refused=refused))


#: The content part types of a Responses API message (the answer's text, a refusal).
_MESSAGE_PARTS = ("output_text", "refusal")


def responses_problem(body: dict[str, Any]) -> str | None:
    """Why a Responses API body cannot be read (``None`` when it can): read anyway, its answer
    would be scored as the empty string."""
    output = body.get("output")
    if not isinstance(output, list):
        return f'"output" of a Responses API body must be a list, got {type(output).__name__}'
    for item in output:
        if not isinstance(item, dict):
            return f'"output" items must be objects, got {type(item).__name__}'
        content = item.get("content")
        if item.get("type") != "message":
            continue  # reasoning, tool calls: not the answer
        if not isinstance(content, list):
            return f'"content" of an "output" message must be a list, got {type(content).__name__}'
        if not all(isinstance(part, dict) for part in content):
            return '"content" parts of an "output" message must be objects'
        if problem := _part_text_problem(content, 'a content part of an "output" message'):
            return problem
        for part in content:
            if part.get("type") not in _MESSAGE_PARTS and isinstance(part.get("text"), str):
                # Only output_text parts are the answer: this text would be left out.
                return 'a content part of an "output" message has "text" but is no "output_text"'
    return None


def _part_text_problem(parts: list[dict[str, Any]], what: str) -> str | None:
    """Why a content part's ``text`` cannot be read (``None`` when every part's can): a
    string, or null for none; another type would be left out, its answer scored as empty."""
    for part in parts:
        text = part.get("text")
        if text is not None and not isinstance(text, str):
            return f'"text" of {what} must be a string, got {type(text).__name__}'
    return None


def batch_outcome(obj: dict[str, Any]) -> BatchOutcome:
    """Classify one OpenAI batch output line (see the module docstring)."""
    response = obj.get("response")
    error = _batch_error(obj, response)
    if error is not None:
        if prompt_filtered(obj):
            return BatchOutcome(None, f"{PROMPT_FILTERED} ({error})", None, ERRORED, True)
        return BatchOutcome(None, error, None, ERRORED)
    body = response.get("body") if isinstance(response, dict) else None
    if is_responses_body(body):
        return _responses_outcome(body)
    try:
        choice = response["body"]["choices"][0]  # type: ignore[index]
    except (KeyError, IndexError, TypeError):
        choice = None
    if not isinstance(choice, dict):
        return BatchOutcome(None, "no choice in the batch output", None, ERRORED)
    message = choice.get("message")
    if isinstance(message, dict):
        text = content_text(message.get("content")) or ""
    else:  # the legacy completions shape: choices[0].text
        message, legacy = {}, choice.get("text")
        text = legacy if isinstance(legacy, str) else ""
    reason = finish_reason(choice.get("finish_reason"))
    refusal = message.get("refusal")
    status = text_status(text, reason, refused=bool(refusal) and not text)
    return BatchOutcome(text, None, reason, status)


def _not_output_hint(obj: dict[str, Any], judge: bool) -> str:
    """The hint for a ``custom_id`` line that is not a batch output line."""
    if other := other_service_hint(obj, judge):
        return other
    if "body" in obj or "method" in obj:
        return (
            "this looks like a request file (the runner's input): run it, e.g. with "
            "`datbench send`, and pass the output it writes"
        )
    return 'batch output lines are {"custom_id", "response": {"body": <chat completion>}, "error"}'


def message_problem(choice: dict[str, Any]) -> str | None:
    """Why ``choices[0]`` of a batch line that reached the model cannot be read (``None`` when
    it can): an answer of another type would otherwise be scored as the empty string (``send``
    retries such an answer rather than write one score refuses)."""
    if "message" not in choice or choice["message"] is None:
        # The legacy completions shape (choices[0].text); with neither, no answer at all.
        if isinstance(choice.get("text"), str):
            return None
        return '"choices[0]" has neither a "message" nor a legacy "text"'
    message = choice["message"]
    if not isinstance(message, dict):
        return f'"choices[0].message" must be an object, got {type(message).__name__}'
    content = message.get("content")
    if content is None or isinstance(content, str):
        return None
    if isinstance(content, list) and all(isinstance(part, dict) for part in content):
        if problem := _part_text_problem(content, 'a "choices[0].message.content" part'):
            return problem
        for part in content:
            kind = part.get("type", "text")
            if kind != "text" and isinstance(part.get("text"), str):
                # Only text parts are the answer: a reasoning part's text ({"type":
                # "thinking", "text": ...}) would be scored as if the model had said it.
                return (
                    f'a "choices[0].message.content" part of type {json.dumps(kind)} has "text": '
                    'only "text" parts are the answer'
                )
        return None
    if isinstance(content, list):
        return '"choices[0].message.content" parts must be objects ({"type": "text", "text": ...})'
    return (
        '"choices[0].message.content" must be a string, a list of parts or null, '
        f"got {type(content).__name__}"
    )


def batch_line_result(obj: dict[str, Any]) -> tuple[str | None, str | None, str | None]:
    """``(text, error, finish_reason)`` of one OpenAI batch output line; exactly one of text and
    error is ``None`` (a line that reached the model has text, ``""`` when it gave none)."""
    outcome = batch_outcome(obj)
    return outcome.text, outcome.error, outcome.finish_reason


def batch_response_line(
    obj: dict[str, Any], path: Path | None, number: int, *, tagged: bool = False
) -> ResponseLine:
    """One batch output line as a :class:`ResponseLine` (``custom_id`` is its id; ``tagged``:
    a judge line, whose ``custom_id`` may end in ``#<response digest>``)."""
    ident = obj["custom_id"]
    if not isinstance(ident, str) or not ident:
        raise InputError('"custom_id" must be a non-empty string', path, number)
    field = "raw_judge_output" if tagged else "raw_output"
    if field in obj and "response" not in obj and "error" not in obj:
        # A native line naming its sample "custom_id" (copied from a request line), not a
        # runner's output line: it would otherwise count as a transport failure.
        raise InputError(
            f'a line with "{field}" names its sample with "id", not "custom_id"',
            path,
            number,
            hint=f'native lines are {{"id", "{field}"}}; batch output lines carry "response"',
        )
    if "response" not in obj and "error" not in obj:
        # A request line, or another service's result line: no answer and no failure in it.
        raise InputError(
            'a line with "custom_id" has neither "response" nor "error": not an OpenAI batch '
            "output line",
            path,
            number,
            hint=_not_output_hint(obj, tagged),
        )
    digest = None
    if tagged:
        ident, digest = split_tagged_id(ident)
    outcome = batch_outcome(obj)
    if outcome.error is None:
        body = obj["response"]["body"]
        if is_responses_body(body):
            problem = responses_problem(body)
        else:
            problem = message_problem(body["choices"][0])
        if problem is not None:
            raise InputError(problem, path, number)
    return ResponseLine(
        ident,
        outcome.text,
        None,
        outcome.error,
        number,
        outcome.finish_reason,
        outcome.status,
        digest,
        outcome.filtered,
    )


def _optional_str(obj: dict[str, Any], key: str, path: Path | None, number: int) -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise InputError(f'"{key}" must be a string or null, got {type(value).__name__}', path, number)


def native_digest(obj: dict[str, Any], path: Path | None, number: int) -> str | None:
    """The ``response_digest`` a native judge line carries (``None`` without one)."""
    value = obj.get(DIGEST_FIELD)
    if value is None:
        return None
    if not is_digest(value):
        raise InputError(
            f'"{DIGEST_FIELD}" must be the 16 hex digits make-judge-tasks wrote', path, number
        )
    return value


def native_status(
    obj: dict[str, Any], text: str | None, parsed: str | None, path: Path | None, number: int
) -> tuple[str, str | None]:
    """``(status, error)`` of a native line: an ``error`` field (a custom loop's failed call)
    makes it errored; ``finish_reason``/``refusal`` fields classify it as a batch line's (a
    refusal beside text is an answer, as a batch line's is)."""
    error = obj.get("error")
    if error:
        return ERRORED, str(error.get("message") if isinstance(error, dict) else error)
    reason = finish_reason(_optional_str(obj, "finish_reason", path, number))
    judged = parsed or text
    return text_status(judged, reason, refused=bool(obj.get("refusal")) and not judged), None


def iter_response_lines(
    path: Path,
    text_field: str = "raw_output",
    parsed_field: str = "parsed_answer",
    on_torn_tail: Callable[[int], None] | None = None,
    unknown: UnknownKeys | None = None,
) -> Iterator[ResponseLine]:
    """Yield each line of a response file as a :class:`ResponseLine`, validating field types.

    ``on_torn_tail`` is passed to :func:`~datbench_cli.files.jsonio.iter_jsonl`. With the judge
    fields (``raw_judge_output``), batch ids are read with their digest tag. ``unknown``
    collects the keys of native lines that no reader uses.
    """
    for number, obj in iter_jsonl(path, on_torn_tail):
        yield response_line(obj, path, number, text_field, parsed_field, unknown)


def response_line(
    obj: dict[str, Any],
    path: Path | None,
    number: int,
    text_field: str = "raw_output",
    parsed_field: str = "parsed_answer",
    unknown: UnknownKeys | None = None,
) -> ResponseLine:
    """One parsed line of a response file as a :class:`ResponseLine` (see
    :func:`iter_response_lines`)."""
    judge = text_field == "raw_judge_output"
    if is_batch_line(obj):
        return batch_response_line(obj, path, number, tagged=judge)
    ident = native_id(obj, path, number, judge)
    if text_field not in obj and not obj.get("error"):
        # (A line with an error needs no text: a custom loop's failed call, errored below.)
        raise InputError(
            f'line has no "{text_field}" field', path, number, hint=wrong_file_hint(obj, judge)
        )
    if unknown is not None:
        unknown.check(obj, number)
    text = _optional_str(obj, text_field, path, number)
    parsed = _optional_str(obj, parsed_field, path, number)
    status, error = native_status(obj, text, parsed, path, number)
    digest = native_digest(obj, path, number) if judge else None
    reason = finish_reason(obj.get("finish_reason"))
    if error is not None:
        text = parsed = None
    filtered = error is not None and prompt_filtered(obj)
    return ResponseLine(ident, text, parsed, error, number, reason, status, digest, filtered)


@dataclass
class LoadedResponses:
    """Responses ready for the evaluator, plus what was set aside.

    ``statuses``: the status of the line used for each id (the last answered line; ``errored``
    when every line of the id errored); ``truncated_ids``: the ids whose line used stopped at the
    token limit (see :meth:`note_stop`); ``filtered_ids``: of the ``errored_ids``, those with
    a line whose prompt the service's content filter refused (see :func:`prompt_filtered`);
    ``refusal_ids``: the ids whose line used is a refusal (see :func:`is_refusal`).
    """

    vlm: list[VLMResponse] = field(default_factory=list)
    judge: list[JudgeResponse] = field(default_factory=list)
    errored_ids: list[str] = field(default_factory=list)
    filtered_ids: list[str] = field(default_factory=list)
    # The ids whose latest answered line was cut at the token limit (a dict: each once).
    _truncated: dict[str, None] = field(default_factory=dict, repr=False)
    # The ids whose latest answered line is a refusal (a dict: each once).
    _refused: dict[str, None] = field(default_factory=dict, repr=False)
    statuses: dict[str, str] = field(default_factory=dict)
    torn_tail_line: int | None = None
    unknown_keys: str | None = None

    def note_stop(self, ident: str, finish_reason: str | None, status: str = OK) -> None:
        """An answered line of ``ident`` (of ``status``) was read: it counts as truncated
        while its latest answered line stopped at the token limit (a retry's complete answer
        replaces a cut one), and as refused while that line is a refusal."""
        _mark(self._truncated, ident, finish_reason == "length")
        _mark(self._refused, ident, is_refusal(status, False))

    @property
    def truncated_ids(self) -> list[str]:
        """The ids whose answered line used stopped at the token limit, each once."""
        return list(self._truncated)

    @property
    def refusal_ids(self) -> list[str]:
        """The ids whose line used is a refusal (:func:`is_refusal`): its last answered line,
        or, with no answered line, an errored line whose prompt the content filter refused."""
        return [*self._refused, *self.filtered_ids]

    def record_torn_tail(self, number: int) -> None:
        self.torn_tail_line = number

    def set_errored(self, errored: list[str], filtered: set[str], answered: set[str]) -> None:
        """The ids of ``errored`` (lines that errored, in file order) with no answered line,
        each once, and of them those with a filtered prompt's line."""
        self.errored_ids = [i for i in dict.fromkeys(errored) if i not in answered]
        self.filtered_ids = [i for i in self.errored_ids if i in filtered]


def _mark(ids: dict[str, None], ident: str, said: bool) -> None:
    """``ident`` in ``ids`` when its latest line ``said`` so, out of them otherwise."""
    if said:
        ids[ident] = None
    else:
        ids.pop(ident, None)


def _load(path: Path, judge: bool) -> LoadedResponses:
    loaded = LoadedResponses()
    fields = ("raw_judge_output", "verdict") if judge else ("raw_output", "parsed_answer")
    errored: list[str] = []
    filtered: set[str] = set()
    answered: set[str] = set()
    unknown = UnknownKeys(JUDGE_KEYS if judge else RESPONSE_KEYS)
    lines = iter_response_lines(
        path, *fields, on_torn_tail=loaded.record_torn_tail, unknown=unknown
    )
    for line in lines:
        if line.error is not None:
            errored.append(line.id)
            if line.filtered:
                filtered.add(line.id)
            continue
        answered.add(line.id)
        loaded.statuses[line.id] = line.status
        loaded.note_stop(line.id, line.finish_reason, line.status)
        if judge:
            loaded.judge.append(
                JudgeResponse(line.id, line.text or "", line.parsed, response_digest=line.digest)
            )
        else:
            loaded.vlm.append(VLMResponse(line.id, line.text or "", line.parsed))
    loaded.unknown_keys = unknown.message(path)
    loaded.set_errored(errored, filtered, answered)
    for ident in loaded.errored_ids:
        loaded.statuses[ident] = ERRORED
    return loaded


def load_vlm_responses(path: Path) -> LoadedResponses:
    """VLM responses from a file; errored lines are set aside (the sample is unanswered)."""
    return _load(path, judge=False)


def load_judge_responses(path: Path) -> LoadedResponses:
    """Judge responses from a file; errored lines are set aside (their verdict is missing)."""
    return _load(path, judge=True)
