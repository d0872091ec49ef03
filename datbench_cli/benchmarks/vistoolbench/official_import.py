"""The official runner's output files -> ``responses.jsonl`` (``datbench import-responses``).

The official scripts write one JSON array of task records. A single-turn record carries the
answer in ``model_answer``; a multi-turn record has ``turns``, a list of objects with
``turn_number`` and ``model_answer``. Records are matched to the run's tasks by ``task_id``
(else ``id``). A string answer, even an official error text such as ``API Error: ...``, is kept
as is (officially it is judged); a null answer is missing. Unknown task ids, duplicate records
(the last wins: only it is imported and warned about), turns given twice in one record (the
last wins) and turns a task does not have are counted, never silently dropped; so are the
run's tasks no record names (one official file holds only single-turn or only multi-turn tasks).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from datbench_cli.benchmarks.vistoolbench.model import Task
from datbench_cli.errors import InputError
from datbench_cli.files import jsonio

_ERROR_PREFIXES = ("API Error:", "Processing Error:", "Model inference failed")


def is_official_record(obj: dict[str, Any]) -> bool:
    """Whether a line is a record of the official runner's results (its ``model_answer``, at
    the top or in its ``turns``), which ``import-responses`` converts."""
    if "model_answer" in obj:
        return True
    turns = obj.get("turns")
    return isinstance(turns, list) and any(
        isinstance(t, dict) and "model_answer" in t for t in turns
    )


def official_line_hint(obj: dict[str, Any]) -> str | None:
    """The hint for an official results record given as a response or judge line."""
    if not is_official_record(obj):
        return None
    return (
        'this looks like the official runner\'s results (records with "model_answer"): '
        "convert them with `datbench import-responses FILE -d RUN`"
    )


@dataclass
class ImportResult:
    """What an import found."""

    records: int = 0
    lines: list[dict[str, Any]] = field(default_factory=list)
    unknown_ids: list[str] = field(default_factory=list)
    duplicate_records: list[str] = field(default_factory=list)
    null_answers: list[str] = field(default_factory=list)
    extra_turns: list[str] = field(default_factory=list)
    error_answers: list[str] = field(default_factory=list)
    missing_turns: list[str] = field(default_factory=list)
    duplicate_turns: list[str] = field(default_factory=list)
    absent_tasks: list[str] = field(default_factory=list)
    absent_turns: int = 0


def _records(path: Path) -> Iterator[tuple[str, Any]]:
    """``(where, record)`` from a JSON array (the official shape) or a JSONL file."""
    data = jsonio.read_bounded(path).removeprefix(b"\xef\xbb\xbf")
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if data.lstrip().startswith(b"["):
            # A JSON array (the official shape) is one document, never JSONL: name where it breaks.
            raise _bad_array(data, exc, path) from None
        for number, obj in jsonio.iter_jsonl_data(data, path):
            yield f"{path}:{number}", obj
        return
    except MemoryError:
        raise InputError("is too large to parse in the memory available", path) from None
    if isinstance(document, dict):
        document = [document]
    if not isinstance(document, list):
        raise InputError("expected a JSON array of task records (the official results file)", path)
    for position, record in enumerate(document):
        yield f"{path}: record {position}", record


def _bad_array(data: bytes | bytearray, exc: orjson.JSONDecodeError, path: Path) -> InputError:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as bad:
        line = data.count(b"\n", 0, bad.start) + 1
        return InputError(f"not valid UTF-8 (byte 0x{data[bad.start]:02x})", path, line)
    return InputError(f"not a valid JSON array ({exc.msg}, column {exc.colno})", path, exc.lineno)


def _answer(value: Any, where: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise InputError(f'{where}: "model_answer" must be a string or null')


def _turn_answers(record: dict[str, Any], where: str) -> list[tuple[int, str | None]]:
    turns = record.get("turns")
    if turns is None:
        if "model_answer" not in record:
            raise InputError(f'{where}: a record needs "model_answer" or "turns"')
        return [(0, _answer(record["model_answer"], where))]
    if not isinstance(turns, list):
        raise InputError(f'{where}: "turns" must be a list')
    answers = []
    for position, turn in enumerate(turns):
        here = f"{where}, turn {position}"
        if not isinstance(turn, dict):
            raise InputError(f"{here}: each turn must be an object")
        number = turn.get("turn_number", position)
        if not isinstance(number, int) or isinstance(number, bool) or number < 0:
            raise InputError(f'{here}: "turn_number" must be a non-negative integer')
        if "model_answer" not in turn:
            raise InputError(f'{here}: the turn has no "model_answer"')
        answers.append((number, _answer(turn["model_answer"], here)))
    return answers


def import_official(path: Path, tasks: list[Task]) -> ImportResult:
    """Response lines (``<task id>::<k>``) for the official records matching ``tasks``."""
    by_id = {task.id: task for task in tasks}
    # The last record of each task: only it decides the task's answers and warnings.
    latest: dict[str, list[tuple[int, str | None]]] = {}
    result = ImportResult()
    for where, record in _records(path):
        result.records += 1
        if not isinstance(record, dict):
            raise InputError(f"{where}: each record must be an object")
        ident = record.get("task_id", record.get("id"))
        if not isinstance(ident, str | int) or isinstance(ident, bool):
            raise InputError(f'{where}: a record needs a "task_id" or "id"')
        ident = str(ident)
        if ident not in by_id:
            result.unknown_ids.append(ident)
            continue
        if ident in latest:
            result.duplicate_records.append(ident)
        latest[ident] = _turn_answers(record, where)
    for task in tasks:
        answers = latest.get(task.id)
        if answers is None:
            result.absent_tasks.append(task.id)
            result.absent_turns += len(task.turns)
            continue
        found: dict[int, str | None] = {}
        for number, answer in answers:
            turn_id = f"{task.id}::{number}"
            if number >= len(task.turns):
                result.extra_turns.append(turn_id)
                continue
            if number in found:
                result.duplicate_turns.append(turn_id)
            found[number] = answer
        for turn in task.turns:
            turn_id = turn.turn_id(task.id)
            answer = found.get(turn.index)
            if answer is None:
                if turn.index in found:
                    result.null_answers.append(turn_id)
                result.missing_turns.append(turn_id)
                continue
            if answer.startswith(_ERROR_PREFIXES):
                result.error_answers.append(turn_id)
            result.lines.append({"id": turn_id, "raw_output": answer})
    return result
