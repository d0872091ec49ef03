"""The VisualToolBench stages over a run directory; the command line calls these.

``export`` writes images, ``tasks.jsonl``, ``references.jsonl`` and (last) the manifest;
``make_judge_tasks`` and ``score`` read only the run directory (never the dataset or images).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from datbench_cli import jsonio
from datbench_cli.errors import InputError
from datbench_cli.images import write_if_changed
from datbench_cli.loading import load_split
from datbench_cli.rundir import IMAGES, REFERENCES, TASKS, RunDir
from datbench_cli.vistoolbench.answers import read_answer_lines
from datbench_cli.vistoolbench.evaluator import (
    VisToolBenchEvaluator,
    check_turncase,
    context_policy_for,
)
from datbench_cli.vistoolbench.judging import read_judge_lines
from datbench_cli.vistoolbench.model import BENCHMARK, MULTI_TURN, SINGLE_TURN, Task
from datbench_cli.vistoolbench.records import load_references, reference_line, task_line
from datbench_cli.vistoolbench.rows import (
    IMAGE_COLUMNS,
    USED_COLUMNS,
    ImageDirs,
    iter_dataset_rows,
    iter_tasks,
)
from datbench_cli.vistoolbench.table import summary_notes, summary_table
from datbench_cli.vistoolbench.tally import Warn, ignore
from datbench_cli.vistoolbench.verdict import parse_vtb_verdict

__all__ = [
    "check_judge",
    "export",
    "make_judge_tasks",
    "score",
    "summary_notes",
    "summary_table",
]

Advance = Callable[[int], None]


def _write_images(run: RunDir, task: Task, directory: str) -> list[list[str]]:
    """Write a task's images byte-for-byte; return each turn's relative paths."""
    paths = []
    for turn in task.turns:
        turn_paths = []
        for i, blob in enumerate(turn.images):
            relative = f"{IMAGES}/{directory}/turn_{turn.index}_image_{i}.{blob.ext}"
            write_if_changed(run.root / relative, blob.data)
            turn_paths.append(relative)
        paths.append(turn_paths)
    return paths


def _without_images(dataset: Any, source: str, split: str) -> Any:
    """The split again with only the text columns used (images are never read from disk)."""
    names = dataset.column_names
    if names is None:
        return dataset
    columns = [c for c in USED_COLUMNS if c in names and c not in IMAGE_COLUMNS]
    return load_split(source, None, split, columns=columns)


def export(
    source: str,
    split: str,
    run: RunDir,
    *,
    limit: int | None,
    turncase: str | None,
    context: str,
    first_image_only: bool,
    warn: Warn = ignore,
    advance: Advance | None = None,
) -> dict[str, Any]:
    """Export a VisualToolBench split into ``run``; return the manifest written last."""
    check_turncase(turncase)
    context_policy = context_policy_for(context)
    dataset = load_split(source, None, split)
    # Validate every row (rubrics, weights, ids) before anything in the run directory changes;
    # this pass leaves the image columns unread.
    for _ in iter_tasks(
        iter_dataset_rows(_without_images(dataset, source, split), with_images=False),
        turncase=turncase,
        limit=limit,
    ):
        pass
    tasks = iter_tasks(
        iter_dataset_rows(dataset),
        turncase=turncase,
        limit=limit,
        first_image_only=first_image_only,
        warn=warn,
    )
    run.begin_export()
    dirs = ImageDirs()
    counts = dict.fromkeys(("tasks", "single_turn", "multi_turn", "turns", "rubrics", "images"), 0)
    with (
        jsonio.atomic_writer(run.path(TASKS)) as tasks_out,
        jsonio.atomic_writer(run.path(REFERENCES)) as references_out,
    ):
        for task in tasks:
            images = _write_images(run, task, dirs.assign(task))
            tasks_out.write(jsonio.dumps(task_line(task, images, context_policy)) + b"\n")
            references_out.write(jsonio.dumps(reference_line(task)) + b"\n")
            counts["tasks"] += 1
            counts["single_turn"] += task.turncase == SINGLE_TURN
            counts["multi_turn"] += task.turncase == MULTI_TURN
            counts["turns"] += len(task.turns)
            counts["rubrics"] += sum(len(turn.rubrics) for turn in task.turns)
            counts["images"] += sum(len(paths) for paths in images)
            if advance is not None:
                advance(1)
    if context_policy != "golden_history":
        warn(
            "--context model: runners must answer turns in order from the model's own earlier "
            "answers; scores are not comparable with official numbers"
        )
    manifest = {
        "benchmark": BENCHMARK,
        "source": source,
        "split": split,
        "context_policy": context_policy,
        "counts": counts,
        "options": {
            "context": context,
            "first_image_only": first_image_only,
            "limit": limit,
            "turncase": turncase,
        },
    }
    run.write_manifest(manifest)
    return manifest


def _evaluator(run: RunDir, warn: Warn) -> VisToolBenchEvaluator:
    manifest = run.read_manifest()
    if manifest.get("benchmark") != BENCHMARK:
        raise InputError(
            f"this run directory was exported for {manifest.get('benchmark')!r}, not {BENCHMARK!r}",
            run.root,
        )
    policy = manifest.get("context_policy", "golden_history")
    tasks = load_references(run.path(REFERENCES))
    return VisToolBenchEvaluator.from_tasks(tasks, context_policy=policy, warn=warn)


def make_judge_tasks(run: RunDir, responses: Path, out: Path, warn: Warn = ignore) -> int:
    """Write one judge task per rubric of every answered turn; return how many."""
    evaluator = _evaluator(run, warn)
    lines = evaluator.create_judge_tasks(read_answer_lines(responses))
    return jsonio.write_jsonl_atomic(out, lines)


def score(
    run: RunDir,
    responses: Path,
    judge_responses: Path | None,
    *,
    strict_judge: bool,
    turncase: str | None,
    warn: Warn = ignore,
) -> dict[str, Any]:
    """The report of a run directory (raises ``CheckFailed`` under ``strict_judge``)."""
    check_turncase(turncase)
    evaluator = _evaluator(run, warn)
    answers = evaluator.collect_answers(read_answer_lines(responses))
    judge_lines = read_judge_lines(judge_responses) if judge_responses is not None else None
    if judge_responses is None:
        warn("no judge responses given: every rubric of an answered turn counts as missing")
    if evaluator.context_policy != "golden_history":
        warn(f"context policy {evaluator.context_policy}: not comparable with official numbers")
    return evaluator.compute_metrics(answers, judge_lines, strict_judge, turncase=turncase)


def check_judge(path: Path) -> tuple[dict[str, int], list[str]]:
    """Parse every judge line with ``parse_vtb_verdict``: counts and the unparsed ids."""
    counts = {"lines": 0, "met": 0, "not_met": 0, "unparsed": 0}
    unparsed = []
    for line in read_judge_lines(path):
        counts["lines"] += 1
        status = parse_vtb_verdict(line.verdict, line.raw)
        if status is None:
            counts["unparsed"] += 1
            unparsed.append(line.display_id)
        else:
            counts[status] += 1
    return counts, unparsed
