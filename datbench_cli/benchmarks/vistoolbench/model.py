"""The records every VisualToolBench stage works on: a task, its turns, their rubrics."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datbench_cli.errors import InputError, name_ids
from datbench_cli.files.fields import STRING, check_document, line_of_key

BENCHMARK = "vistoolbench"
DEFAULT_SOURCE = "ScaleAI/VisualToolBench"
UNKNOWN_GROUP = "unknown"
SINGLE_TURN = "single-turn"
MULTI_TURN = "multi-turn"
TURNCASES = (SINGLE_TURN, MULTI_TURN)

# A rubric of at least this weight must be met for the task to pass (official APR rule).
APR_MIN_WEIGHT = 4
# prompt_category values the official summary folds into one "STEM" domain.
STEM_CATEGORIES = frozenset({"chemistry", "maths", "biology", "engineering", "physics"})

CONTEXT_POLICIES = {"golden": "golden_history", "model": "model_history"}
_AGAIN = "run `datbench export-tasks vistoolbench` again"


def manifest_context_policy(manifest: dict[str, Any], path: Path) -> str:
    """The manifest's ``context_policy`` (``golden_history`` when absent); one of another type
    or an unknown one is an :class:`InputError` naming the manifest (``path``) and its line."""
    check_document(manifest, {"context_policy": STRING}, path, _AGAIN)
    policy = manifest.get("context_policy", CONTEXT_POLICIES["golden"])
    if policy not in CONTEXT_POLICIES.values():
        raise InputError(
            f'"context_policy" must be {" or ".join(CONTEXT_POLICIES.values())}, got {policy!r}',
            path,
            line_of_key(path, "context_policy"),
            hint=_AGAIN,
        )
    return str(policy)


Number = int | float


@dataclass(frozen=True)
class Rubric:
    """One rubric criterion of one turn; ``weight`` is already a number."""

    rubric_id: str
    description: str
    weight: Number
    critical: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def counts_for_apr(self) -> bool:
        """Whether failing this rubric fails the task (weight >= 4)."""
        return self.weight >= APR_MIN_WEIGHT

    @property
    def critical_flag(self) -> bool:
        """Whether ``critical`` says "yes" (for the non-official diagnostic only)."""
        return isinstance(self.critical, str) and self.critical.strip().lower() == "yes"


@dataclass(frozen=True)
class ImageBlob:
    """An image's original bytes and the file extension to store them under."""

    data: bytes
    ext: str


@dataclass
class Turn:
    """One turn: prompt, golden answer, rubrics (in key order) and images."""

    index: int
    prompt: str
    golden_answer: str
    rubrics: list[Rubric] = field(default_factory=list)
    images: list[ImageBlob] = field(default_factory=list)

    def turn_id(self, task_id: str) -> str:
        """The id a runner answers this turn under: ``<task id>::<k>``."""
        return f"{task_id}::{self.index}"


@dataclass
class Task:
    """One VisualToolBench task (one dataset row)."""

    id: str
    turncase: str
    num_turns: int
    prompt_category: str
    eval_focus: str
    turns: list[Turn]
    row_index: int = 0

    @property
    def domain(self) -> str:
        """``prompt_category``, with the STEM subjects folded into ``"STEM"``."""
        return "STEM" if self.prompt_category in STEM_CATEGORIES else self.prompt_category


def judge_id(task_id: str, turn_index: int, rubric_id: str) -> str:
    """The id of one judge task: ``<task id>::<k>::<rubric id>``."""
    return f"{task_id}::{turn_index}::{rubric_id}"


class IdRegistry:
    """Refuses duplicate task ids, and task ids that equal another task's turn id."""

    def __init__(self) -> None:
        self._owner: dict[str, str] = {}

    def add(self, task: Task, where: str) -> None:
        """Register ``task`` (found at ``where``) or raise :class:`InputError`."""
        task_name = name_ids([repr(task.id)])
        for ident in (task.id, *(turn.turn_id(task.id) for turn in task.turns)):
            if ident in self._owner:
                raise InputError(
                    f"{where}: id {name_ids([repr(ident)])} of task {task_name} is already "
                    f"used by {self._owner[ident]}; task ids must be unique"
                )
            self._owner[ident] = f"task {task_name} ({where})"
