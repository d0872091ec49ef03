"""Judge tasks (spec §2.2) and matching judge responses to them (spec §3.1)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datbench_cli.batch.digests import DIGEST_FIELD, response_digest
from datbench_cli.batch.line_keys import (
    JUDGE_KEYS,
    checked_lines,
    native_id,
    wrong_file_hint,
)
from datbench_cli.batch.responses import (
    batch_response_line,
    finish_reason,
    is_batch_line,
    is_refusal,
    native_digest,
    native_status,
    prompt_filtered,
)
from datbench_cli.benchmarks.vistoolbench.answers import Answers, caller_line
from datbench_cli.benchmarks.vistoolbench.model import Rubric, Task, Turn, judge_id
from datbench_cli.benchmarks.vistoolbench.prompt import render_judge_prompt
from datbench_cli.benchmarks.vistoolbench.tally import Warn
from datbench_cli.errors import InputError

RubricKey = tuple[str, int, str]


@dataclass(frozen=True)
class JudgeTask:
    """One (task, turn, rubric) to judge, with the turn's answer."""

    task: Task
    turn: Turn
    rubric: Rubric
    answer: str

    @property
    def id(self) -> str:
        return judge_id(self.task.id, self.turn.index, self.rubric.rubric_id)

    @property
    def key(self) -> RubricKey:
        return (self.task.id, self.turn.index, self.rubric.rubric_id)

    def line(self) -> dict[str, Any]:
        """The ``judge_tasks.jsonl`` line; weight and critical stay out of the prompt."""
        return {
            "id": self.id,
            "task_id": self.task.id,
            "turn_index": self.turn.index,
            "rubric_id": self.rubric.rubric_id,
            "question": self.turn.prompt,
            "golden_answer": self.turn.golden_answer,
            "rubric": self.rubric.description,
            "vlm_response": self.answer,
            "judge_prompt": render_judge_prompt(
                self.turn.prompt, self.turn.golden_answer, self.rubric.description, self.answer
            ),
            "weight": self.rubric.weight,
            "critical": self.rubric.critical,
            "counts_for_apr": self.rubric.counts_for_apr,
            DIGEST_FIELD: response_digest(self.answer),
        }


def build_judge_tasks(tasks: Iterable[Task], answers: Answers) -> list[JudgeTask]:
    """One judge task per rubric of every answered turn, in task, turn, rubric order."""
    built = []
    seen: set[str] = set()
    for task in tasks:
        for turn in task.turns:
            answer = answers.by_turn.get((task.id, turn.index))
            if answer is None:
                continue
            for rubric in turn.rubrics:
                judge_task = JudgeTask(task, turn, rubric, answer)
                if judge_task.id in seen:
                    raise InputError(
                        f"judge task id {judge_task.id!r} is ambiguous (task, turn and rubric "
                        "ids combine to the same id twice)"
                    )
                seen.add(judge_task.id)
                built.append(judge_task)
    return built


@dataclass(frozen=True)
class JudgeLine:
    """One judge response: its id (or task/turn/rubric key), raw text and verdict field, the
    digest of the answer it judged when the line carries one, whether the judge's reply
    stopped at its token limit (``finish_reason`` ``length``) and whether it is a refusal (the
    judge's content filter or the judge declined: see
    :func:`~datbench_cli.batch.responses.is_refusal`)."""

    key: str | RubricKey
    raw: str | None
    verdict: Any = None
    errored: bool = False
    digest: str | None = None
    truncated: bool = False
    refused: bool = False

    @property
    def display_id(self) -> str:
        """The judge id this line claims, for messages."""
        return self.key if isinstance(self.key, str) else judge_id(*self.key)


def judge_line(
    obj: dict[str, Any], path: Path | None = None, number: int | None = None
) -> JudgeLine:
    """One judge response object (a parsed JSONL line) as a :class:`JudgeLine`."""

    def fail(message: str) -> InputError:
        return InputError(message, path, number)

    if is_batch_line(obj):
        line = batch_response_line(obj, path, number or 0, tagged=True)
        errored = line.error is not None
        return JudgeLine(
            line.id,
            None if errored else line.text,
            errored=errored,
            digest=line.digest,
            truncated=line.finish_reason == "length",
            refused=is_refusal(line.status, line.filtered),
        )
    if all(k in obj for k in ("task_id", "turn_index", "rubric_id")):
        task_id, turn_index, rubric_id = obj["task_id"], obj["turn_index"], obj["rubric_id"]
        if not isinstance(task_id, str) or not isinstance(rubric_id, str):
            raise fail('"task_id" and "rubric_id" must be strings')
        if not isinstance(turn_index, int) or isinstance(turn_index, bool):
            raise fail('"turn_index" must be an integer')
        key: str | RubricKey = (task_id, turn_index, rubric_id)
    else:
        key = native_id(obj, path, number, True)
    if "raw_judge_output" not in obj and "verdict" not in obj and not obj.get("error"):
        raise InputError(
            'line has no "raw_judge_output" field', path, number, hint=wrong_file_hint(obj, True)
        )
    raw = obj.get("raw_judge_output")
    if raw is not None and not isinstance(raw, str):
        raise fail(f'"raw_judge_output" must be a string or null, got {type(raw).__name__}')
    digest = native_digest(obj, path, number or 0)
    verdict = obj.get("verdict")
    # A custom loop's failed judge call (an ``error``) or its refusal, as DatBench's lines.
    status, error = native_status(
        obj, raw, verdict if isinstance(verdict, str) else None, path, number or 0
    )
    if error is not None:
        return JudgeLine(
            key, None, errored=True, digest=digest, refused=is_refusal(status, prompt_filtered(obj))
        )
    truncated = finish_reason(obj.get("finish_reason")) == "length"
    return JudgeLine(
        key, raw, verdict, digest=digest, truncated=truncated, refused=is_refusal(status, False)
    )


def cut_replies_note(count: int, path: Path | None = None) -> str:
    """The warning about ``count`` judge replies cut at the judge's token limit (read from
    ``path``, when it is named)."""
    where = f" in {path}" if path is not None else ""
    return (
        f"{count} judge response(s){where} stopped at the token limit (finish_reason length); "
        "their verdicts are read as they are"
    )


def replaced_note(count: int) -> str:
    """How ``score`` and ``check-judge`` say that judge lines were replaced by later ones."""
    return (
        f"{count} judge line(s) were replaced by a later line for the same judge task "
        "(the last one is used)"
    )


def as_judge_line(item: Any, position: int = 0) -> JudgeLine:
    """A :class:`JudgeLine` from a line, a ``JudgeResponse`` or a judge response dict (a
    caller's ``judge_responses[position]``: what is none of these is a ``TypeError``, a dict
    no judge line could be a ``ValueError``, each naming it)."""
    if isinstance(item, JudgeLine):
        return item
    if isinstance(item, dict):
        return caller_line(judge_line, item, f"judge_responses[{position}]")
    if hasattr(item, "raw_judge_output") and isinstance(getattr(item, "id", None), str):
        return JudgeLine(
            item.id,
            item.raw_judge_output,
            getattr(item, "verdict", None),
            digest=getattr(item, "response_digest", None),
        )
    raise TypeError(
        f"judge_responses[{position}] must be a JudgeResponse or a judge response dict, "
        f"got {type(item).__name__}"
    )


def read_judge_lines(
    path: Path, warn: Warn | None = None, scan: Callable[[bytes], None] | None = None
) -> Iterator[JudgeLine]:
    """The judge response lines of a file, validated (errors name file and line); ``warn``
    hears once about keys no reader uses; ``scan`` is given every line read."""
    return checked_lines(path, JUDGE_KEYS, judge_line, warn, scan)


@dataclass
class JudgeMatch:
    """Judge lines matched to judge tasks (the last line wins), keyed by (task, turn, rubric);
    ``unanswered_lines``: of the ``unknown_lines`` (that match no judge task), those for a
    rubric of a turn without an answer."""

    by_key: dict[RubricKey, JudgeLine] = field(default_factory=dict)
    unknown_lines: int = 0
    unanswered_lines: int = 0
    lost_lines: Counter[RubricKey] = field(default_factory=Counter)


def match_judge_lines(
    judge_tasks: Iterable[JudgeTask],
    lines: Iterable[Any],
    unanswered: Collection[str | RubricKey] = (),
) -> JudgeMatch:
    """Match each judge line to its judge task by id, or by (task_id, turn_index, rubric_id);
    a line that matches none is counted, and counted apart when its id or key is one of
    ``unanswered`` (the rubrics of turns without an answer, which get no judge task).

    The last line for a judge task wins, except that an errored line (a failed request, often
    retried later: a batch line's error or a native line's ``error`` field) never replaces
    an answered line or a refusal and is not counted as a duplicate.
    """
    keys: dict[str | RubricKey, RubricKey] = {}
    for judge_task in judge_tasks:
        keys[judge_task.key] = judge_task.key
        keys[judge_task.id] = judge_task.key
    match = JudgeMatch()
    for position, item in enumerate(lines):
        line = as_judge_line(item, position)
        target = keys.get(line.key)
        if target is None:
            match.unknown_lines += 1
            match.unanswered_lines += line.key in unanswered
            continue
        previous = match.by_key.get(target)
        if previous is not None and not previous.errored:
            if line.errored:
                continue
            match.lost_lines[target] += 1
        if previous is not None and previous.refused and line.errored:
            continue  # a content filter refuses its prompt again: a later failure hides it not
        match.by_key[target] = line
    return match
