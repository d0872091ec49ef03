"""Model answers per turn (spec §2.1): which text is judged for turn k of each task.

Accepted lines: ``{"id": "<task>::<k>", "raw_output", "parsed_answer"?}``; the bare task id for
a one-turn task; a per-task ``{"id": "<task>", "turns": [...]}`` line; OpenAI batch output lines.
A string answer (even empty) is judged as is; no line or a null answer means *missing*. A batch
line that reached the model but carries no text (content null, a refusal, a content filter,
reasoning only) is the empty answer, judged as is; a transport failure (``error``, a non-2xx
status, an ``error`` field of a native line or of a ``turns`` item) is no answer (the turn is
*errored*). Each answered turn keeps the status of its line
(see :mod:`datbench_cli.batch.responses`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from datbench_cli.batch.answers import surrogate_at
from datbench_cli.batch.line_keys import (
    RESPONSE_KEYS,
    checked_lines,
    native_id,
    wrong_file_hint,
)
from datbench_cli.batch.responses import (
    ANSWERED_STATUSES,
    ERRORED,
    MISSING,
    OK,
    RESPONSE_STATUSES,
    batch_response_line,
    is_batch_line,
    native_status,
    prompt_filtered,
    text_status,
)
from datbench_cli.benchmarks.vistoolbench.model import Task
from datbench_cli.benchmarks.vistoolbench.official_import import is_official_record
from datbench_cli.benchmarks.vistoolbench.tally import Tally, Warn, ignore
from datbench_cli.errors import InputError

TurnKey = tuple[str, int]
T = TypeVar("T")


@dataclass(frozen=True)
class AnswerLine:
    """One response line: an answer for ``id`` (``None`` = null), or per-task ``turns``.

    ``turns`` items are ``(index or None, answer or None, status, filtered)``; a ``None`` index
    means "by position"; ``filtered``: an errored item whose prompt the service's content
    filter refused, as a line's.
    """

    id: str
    answer: str | None
    turns: tuple[tuple[int | None, str | None, str, bool], ...] | None = None
    errored: bool = False
    status: str = OK
    #: An errored line whose prompt the service's content filter refused.
    filtered: bool = False


def judged_text(raw: Any, parsed: Any) -> str | None:
    """``parsed`` when it is a non-empty string, else ``raw`` (``None`` when both are null)."""
    if isinstance(parsed, str) and parsed:
        return parsed
    return raw if isinstance(raw, str) else None


def _string_or_null(obj: dict[str, Any], key: str, fail: Any) -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise fail(f'"{key}" must be a string or null, got {type(value).__name__}')


def _turn_item(
    item: Any, position: int, fail: Any, path: Path | None, number: int
) -> tuple[int | None, str | None, str, bool]:
    """``(index, answer, status, filtered)`` of a ``turns`` item; an object is read as a native
    line is (an ``error`` field makes the turn errored, filtered when it is a content filter's
    refusal of the prompt; ``finish_reason`` classifies it)."""
    if item is None or isinstance(item, str):
        return None, item, text_status(item), False
    if not isinstance(item, dict):
        raise fail(f"turns[{position}] must be a string, null or an object")
    index = item.get("index")
    if index is not None and (not isinstance(index, int) or isinstance(index, bool)):
        raise fail(f'turns[{position}]: "index" must be an integer')
    if not any(key in item for key in ("raw_output", "parsed_answer", "error")):
        # An answer under another key ("text", "content") would be read as no answer: the
        # turn counted missing, as if its line had never been written.
        raise fail(
            f'turns[{position}] has no "raw_output" (nor "parsed_answer", nor "error"): '
            'write the answer as a string or as {"raw_output": ...}'
        )
    raw = _string_or_null(item, "raw_output", fail)
    parsed = _string_or_null(item, "parsed_answer", fail)
    status, error = native_status(item, raw, parsed, path, number)
    if error is not None:
        return index, None, ERRORED, prompt_filtered(item)
    return index, judged_text(raw, parsed), status, False


def answer_line(
    obj: dict[str, Any], path: Path | None = None, number: int | None = None
) -> AnswerLine:
    """One response object (a parsed JSONL line) as an :class:`AnswerLine`."""

    def fail(message: str) -> InputError:
        return InputError(message, path, number)

    if is_batch_line(obj):
        line = batch_response_line(obj, path, number or 0)
        errored = line.error is not None
        return AnswerLine(
            line.id,
            None if errored else line.text,
            errored=errored,
            status=line.status,
            filtered=line.filtered,
        )
    ident = native_id(obj, path, number, False)
    if "raw_output" not in obj and ("turncase" in obj or "context_policy" in obj):
        what = "an official results record" if is_official_record(obj) else "a task line"
        raise InputError(
            f"{what}, not a response line", path, number, hint=wrong_file_hint(obj, False)
        )
    if "raw_output" not in obj and "turns" in obj:
        turns = obj["turns"]
        if not isinstance(turns, list):
            raise fail('"turns" must be a list')
        items = tuple(_turn_item(item, i, fail, path, number or 0) for i, item in enumerate(turns))
        return AnswerLine(ident, None, turns=items)
    if "raw_output" not in obj and not obj.get("error"):
        # (A line with an error needs no text: a custom loop's failed call, errored below.)
        raise InputError(
            'line has no "raw_output" field', path, number, hint=wrong_file_hint(obj, False)
        )
    raw = _string_or_null(obj, "raw_output", fail)
    parsed = _string_or_null(obj, "parsed_answer", fail)
    status, error = native_status(obj, raw, parsed, path, number or 0)
    if error is not None:
        return AnswerLine(ident, None, errored=True, status=ERRORED, filtered=prompt_filtered(obj))
    return AnswerLine(ident, judged_text(raw, parsed), status=status)


def as_answer_line(item: Any, position: int = 0) -> AnswerLine:
    """An :class:`AnswerLine` from a line, a ``VLMResponse`` or a response dict (a caller's
    ``responses[position]``: what is none of these is a ``TypeError``, a dict no response line
    could be a ``ValueError``, each naming it)."""
    if isinstance(item, AnswerLine):
        return item
    if isinstance(item, dict):
        return caller_line(answer_line, item, f"responses[{position}]")
    if hasattr(item, "raw_output") and isinstance(getattr(item, "id", None), str):
        text = judged_text(item.raw_output, getattr(item, "parsed_answer", None))
        return AnswerLine(item.id, text, status=text_status(text))
    raise TypeError(
        f"responses[{position}] must be a VLMResponse or a response dict, got {type(item).__name__}"
    )


def caller_line(read: Callable[[dict[str, Any]], T], item: dict[str, Any], name: str) -> T:
    """``read(item)`` of a caller's dict ``name``: what a response file's line could not be
    is a ``ValueError`` naming it (an ``InputError`` is the command line's, of a file line),
    a lone surrogate in a text field too (no JSON file holds it: the report could not be
    saved)."""
    for key, value in item.items():
        if isinstance(value, str) and surrogate_at(value) is not None:
            raise ValueError(f'{name}: "{key}" holds a lone surrogate, which no JSON file holds')
    try:
        return read(item)
    except InputError as error:
        raise ValueError(f"{name}: {error.bare_message}") from None


def read_answer_lines(
    path: Path, warn: Warn | None = None, scan: Callable[[bytes], None] | None = None
) -> Iterator[AnswerLine]:
    """The response lines of a file, validated (errors name file and line); ``warn`` hears
    once about keys no reader uses; ``scan`` is given every line read."""
    return checked_lines(path, RESPONSE_KEYS, answer_line, warn, scan)


@dataclass
class Answers:
    """The judged text of every answered turn, plus what was ignored.

    ``errored_turns``: turns whose only lines were errored batch output lines.
    """

    by_turn: dict[TurnKey, str] = field(default_factory=dict)
    unknown_lines: int = 0
    duplicate_lines: int = 0
    errored_turns: set[TurnKey] = field(default_factory=set)
    statuses: dict[TurnKey, str] = field(default_factory=dict)

    def status(self, key: TurnKey) -> str:
        """The status of a turn's answer: a line status, or ``errored``/``missing``."""
        if key in self.by_turn:
            return self.statuses.get(key) or text_status(self.by_turn[key])
        return ERRORED if key in self.errored_turns else MISSING

    def answered(self, task: Task) -> bool:
        """Whether at least one turn of ``task`` has an answer."""
        return any((task.id, turn.index) in self.by_turn for turn in task.turns)

    def missing_turns(self, tasks: Iterable[Task]) -> list[str]:
        """The turn ids of ``tasks`` that have no answer, in task and turn order."""
        return [
            turn.turn_id(task.id)
            for task in tasks
            for turn in task.turns
            if (task.id, turn.index) not in self.by_turn
        ]

    def coverage(self, tasks: Iterable[Task]) -> dict[str, Any]:
        """What the response file covers of ``tasks``: the gaps (turns and tasks without an
        answer) and the lines set aside (duplicates, unknown ids, errored batch lines)."""
        tasks = list(tasks)
        turns = sum(len(task.turns) for task in tasks)
        missing = len(self.missing_turns(tasks))
        in_scope = {(task.id, turn.index) for task in tasks for turn in task.turns}
        statuses = dict.fromkeys((*RESPONSE_STATUSES, MISSING), 0)
        by_turncase: dict[str, list[int]] = {}
        for task in tasks:
            counts = by_turncase.setdefault(task.turncase, [0, 0])
            for turn in task.turns:
                status = self.status((task.id, turn.index))
                statuses[status] += 1
                counts[0] += 1
                counts[1] += status in ANSWERED_STATUSES
        return {
            "turns": turns,
            "answered_turns": turns - missing,
            "missing_turns": missing,
            "tasks_without_answers": sum(1 for task in tasks if not self.answered(task)),
            "duplicate_lines": self.duplicate_lines,
            "unknown_lines": self.unknown_lines,
            "errored_turns": len(self.errored_turns & in_scope),
            "statuses": statuses,
            "coverage": _ratio(turns - missing, turns),
            "by_turncase": {
                name: {"turns": e, "answered_turns": a, "coverage": _ratio(a, e)}
                for name, (e, a) in sorted(by_turncase.items())
            },
        }


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def collect_answers(tasks: Iterable[Task], lines: Iterable[Any], warn: Warn = ignore) -> Answers:
    """Match response lines to turns; the last line for a turn wins."""
    tasks = list(tasks)
    by_task = {task.id: task for task in tasks}
    by_turn_id = {turn.turn_id(t.id): (t.id, turn.index) for t in tasks for turn in t.turns}
    latest: dict[TurnKey, str | None] = {}
    status_of: dict[TurnKey, str] = {}
    tally = Tally()
    result = Answers()

    errored: set[TurnKey] = set()
    filtered: set[TurnKey] = set()  # errored, their prompt refused by a content filter

    def record(key: TurnKey, answer: str | None, failed: bool = False, status: str = OK) -> None:
        # An errored line (a failed request, often retried later) never replaces an answer and
        # is not a duplicate.
        if failed:
            errored.add(key)
            return
        if key in latest:
            result.duplicate_lines += 1
            tally.add(
                "several response lines answer one turn: the last one is used",
                f"{key[0]}::{key[1]}",
            )
        latest[key] = answer
        status_of[key] = status

    for position, item in enumerate(lines):
        line = as_answer_line(item, position)
        if line.turns is not None:
            task = by_task.get(line.id)
            if task is None:
                result.unknown_lines += 1
                tally.add("response ids match no task of the run and were ignored", line.id)
                continue
            for position, (index, answer, status, item_filtered) in enumerate(line.turns):
                k = position if index is None else index
                if not 0 <= k < len(task.turns):
                    tally.add(
                        "answers for turns a task does not have were ignored", f"{task.id}::{k}"
                    )
                    continue
                record((task.id, k), answer, status == ERRORED, status)
                if item_filtered:
                    filtered.add((task.id, k))
            continue
        key = by_turn_id.get(line.id)
        if key is None and line.id in by_task:
            if len(by_task[line.id].turns) == 1:
                key = (line.id, 0)
            else:
                result.unknown_lines += 1
                tally.add(
                    "bare task ids of multi-turn tasks were ignored (answer each turn as "
                    '<task id>::<k>, or give a "turns" list)',
                    line.id,
                )
                continue
        if key is None:
            result.unknown_lines += 1
            tally.add("response ids match no turn of the run and were ignored", line.id)
            continue
        record(key, line.answer, line.errored, line.status)
        if line.filtered:
            filtered.add(key)
    result.by_turn = {key: text for key, text in latest.items() if text is not None}
    result.statuses = {key: status_of[key] for key in result.by_turn}
    result.errored_turns = {key for key in errored if key not in result.by_turn}
    for key in sorted(result.errored_turns):
        tally.add(
            "turns whose only response lines were errored have no answer", f"{key[0]}::{key[1]}"
        )
    for key in sorted(result.errored_turns & filtered):
        tally.add(
            "errored turns are prompts the service's content filter refused (content_filter): "
            "the model never saw them, so they are unanswered, not refused answers; sending "
            "them again gets the same refusal",
            f"{key[0]}::{key[1]}",
        )
    tally.flush(warn)
    return result
