"""The run-directory lines of a task: ``tasks.jsonl`` (for the runner) and ``references.jsonl``
(for scoring), and reading ``references.jsonl`` back (spec §1.1, §1.2)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from datbench_cli.benchmarks.vistoolbench.model import IdRegistry, Rubric, Task, Turn
from datbench_cli.benchmarks.vistoolbench.rows import parse_weight
from datbench_cli.errors import InputError
from datbench_cli.files import jsonio

GOLDEN_HISTORY = "golden_history"


def _history(task: Task, k: int, context_policy: str) -> list[dict[str, str]]:
    if context_policy != GOLDEN_HISTORY:
        return []
    history = []
    for earlier in task.turns[:k]:
        history.append({"role": "user", "text": earlier.prompt})
        history.append({"role": "assistant", "text": earlier.golden_answer})
    return history


def task_line(task: Task, images: Sequence[Sequence[Any]], context_policy: str) -> dict[str, Any]:
    """The ``tasks.jsonl`` line: every turn with its prompt, images and (golden) history.

    ``images[k]`` are turn k's images as the caller wants them shown (file paths for the run
    directory, bytes for the Python API). No rubric and no golden answer of turn k or later.
    """
    return {
        "id": task.id,
        "turncase": task.turncase,
        "num_turns": task.num_turns,
        "prompt_category": task.prompt_category,
        "eval_focus": task.eval_focus,
        "context_policy": context_policy,
        "turns": [
            {
                "id": turn.turn_id(task.id),
                "index": turn.index,
                "prompt": turn.prompt,
                "images": list(images[turn.index]),
                "history": _history(task, turn.index, context_policy),
            }
            for turn in task.turns
        ],
    }


def _rubric_line(rubric: Rubric) -> dict[str, Any]:
    return {
        "rubric_id": rubric.rubric_id,
        "description": rubric.description,
        "weight": rubric.weight,
        "critical": rubric.critical,
        "extra": rubric.extra,
    }


def reference_line(task: Task) -> dict[str, Any]:
    """The ``references.jsonl`` line: everything scoring needs, no images."""
    return {
        "id": task.id,
        "turncase": task.turncase,
        "num_turns": task.num_turns,
        "prompt_category": task.prompt_category,
        "eval_focus": task.eval_focus,
        "turns": [
            {
                "index": turn.index,
                "prompt": turn.prompt,
                "golden_answer": turn.golden_answer,
                "rubrics": [_rubric_line(r) for r in turn.rubrics],
            }
            for turn in task.turns
        ],
    }


class _Line:
    """Typed access to one reference line; a wrong field is an error naming file and line."""

    def __init__(self, path: Path, number: int) -> None:
        self.path, self.number = path, number

    def fail(self, message: str) -> InputError:
        return InputError(
            f"not a VisualToolBench reference line: {message}", self.path, self.number
        )

    def get(self, obj: Any, key: str, kind: type | tuple[type, ...], what: str) -> Any:
        value = obj.get(key) if isinstance(obj, dict) else None
        if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
            raise self.fail(f'{what} needs "{key}" of type {getattr(kind, "__name__", kind)}')
        return value


def _rubric_from(line: _Line, obj: Any, where: str) -> Rubric:
    rubric_id = line.get(obj, "rubric_id", str, where)
    try:
        weight = parse_weight(obj.get("weight"), f"{where}, rubric {rubric_id!r}")
    except InputError as exc:
        raise line.fail(str(exc)) from None
    extra = obj.get("extra") or {}
    if not isinstance(extra, dict):
        raise line.fail(f'{where}: "extra" must be an object')
    return Rubric(
        rubric_id, line.get(obj, "description", str, where), weight, obj.get("critical"), extra
    )


def _task_from(line: _Line, obj: dict[str, Any]) -> Task:
    task_id = line.get(obj, "id", str, "the task")
    turns = []
    for position, item in enumerate(line.get(obj, "turns", list, f"task {task_id!r}")):
        where = f"task {task_id!r}, turn {position}"
        if line.get(item, "index", int, where) != position:
            raise line.fail(f"{where}: turns must be listed in order with index {position}")
        rubrics = [_rubric_from(line, r, where) for r in line.get(item, "rubrics", list, where)]
        turns.append(
            Turn(
                position,
                line.get(item, "prompt", str, where),
                line.get(item, "golden_answer", str, where),
                rubrics,
            )
        )
    return Task(
        id=task_id,
        turncase=line.get(obj, "turncase", str, f"task {task_id!r}"),
        num_turns=len(turns),
        prompt_category=line.get(obj, "prompt_category", str, f"task {task_id!r}"),
        eval_focus=line.get(obj, "eval_focus", str, f"task {task_id!r}"),
        turns=turns,
        row_index=line.number - 1,
    )


def load_references(path: Path) -> list[Task]:
    """The tasks of a VisualToolBench run directory, from its ``references.jsonl``."""
    tasks = []
    ids = IdRegistry()
    for number, obj in jsonio.iter_jsonl(path):
        task = _task_from(_Line(path, number), obj)
        ids.add(task, f"{path}:{number}")
        tasks.append(task)
    if not tasks:
        # An export never writes an empty file (an empty split is refused).
        raise InputError(
            "holds no task (emptied after export?); run `datbench export-tasks` again", path
        )
    return tasks
