"""ARS and APR (spec §4): per task over all rubrics of all turns pooled, then group means.

- ARS_task = met weight / total weight (0.0 when the task has no weight);
- APR_task = 0 when any rubric with weight >= 4 is not met, else 1 (``critical`` is not used).
Only status ``met`` counts as satisfied.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from datbench_cli.benchmarks.vistoolbench.censoring import censoring
from datbench_cli.benchmarks.vistoolbench.model import Task
from datbench_cli.metrics.averaging import mean

MET = "met"
NOT_MET = "not_met"
UNPARSED = "unparsed"
MISSING = "missing"
MISSING_ANSWER = "missing_answer"
STALE = "stale"
ERRORED = "errored"
#: The judge refused the rubric (its content filter or the judge model) and gave no verdict.
REFUSED = "refused"
STATUSES = (MET, NOT_MET, UNPARSED, MISSING, MISSING_ANSWER, STALE, ERRORED, REFUSED)
UNJUDGED = frozenset({UNPARSED, MISSING, MISSING_ANSWER, STALE, ERRORED, REFUSED})


@dataclass(frozen=True)
class RubricOutcome:
    """What became of one rubric: its status, the judge's explanation and raw output."""

    status: str
    explanation: str | None = None
    raw_judge_output: str | None = None


def task_result(task: Task, outcomes: list[list[RubricOutcome]]) -> dict[str, Any]:
    """The report entry of one task; ``outcomes[k][j]`` is rubric j of turn k."""
    turns = []
    total: float = 0
    met: float = 0
    passed = 1
    for turn, turn_outcomes in zip(task.turns, outcomes, strict=True):
        turn_total: float = 0
        turn_met: float = 0
        rubrics = []
        for rubric, outcome in zip(turn.rubrics, turn_outcomes, strict=True):
            turn_total += rubric.weight
            if outcome.status == MET:
                turn_met += rubric.weight
            elif rubric.counts_for_apr:
                passed = 0
            rubrics.append(
                {
                    "rubric_id": rubric.rubric_id,
                    "weight": rubric.weight,
                    "critical": rubric.critical,
                    "counts_for_apr": rubric.counts_for_apr,
                    "status": outcome.status,
                    "explanation": outcome.explanation,
                    "raw_judge_output": outcome.raw_judge_output,
                }
            )
        total += turn_total
        met += turn_met
        turns.append(
            {
                "index": turn.index,
                "met_weight": turn_met,
                "total_weight": turn_total,
                "rubrics": rubrics,
            }
        )
    return {
        "id": task.id,
        "turncase": task.turncase,
        "prompt_category": task.prompt_category,
        "domain": task.domain,
        "eval_focus": task.eval_focus,
        "ars": met / total if total else 0.0,
        "apr": passed,
        "met_weight": met,
        "total_weight": total,
        "turns": turns,
    }


def _stats(results: list[dict[str, Any]]) -> dict[str, Any]:
    # A mean over no task is null, never 0 (nothing was scored).
    return {
        "n": len(results),
        "apr": mean([r["apr"] for r in results]) if results else None,
        "ars": mean([r["ars"] for r in results]) if results else None,
    }


def group_stats(results: list[dict[str, Any]], field: str) -> dict[str, dict[str, Any]]:
    """``{value: {"n", "apr", "ars"}}`` per value of ``field``, keys sorted."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for result in results:
        groups.setdefault(result[field], []).append(result)
    return {name: _stats(groups[name]) for name in sorted(groups)}


def official_summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The official summary's shape: accuracy = APR, score = ARS, per domain and eval focus."""

    def shaped(field: str) -> dict[str, dict[str, float]]:
        return {
            name: {"scores": stats["ars"], "accuracies": stats["apr"]}
            for name, stats in group_stats(results, field).items()
        }

    overall = _stats(results)
    return {
        "overall_accuracy": overall["apr"],
        "overall_score": overall["ars"],
        "domain_results": shaped("domain"),
        "eval_focus_results": shaped("eval_focus"),
        "total_examples": overall["n"],
    }


def _rubrics(result: dict[str, Any]) -> Iterable[dict[str, Any]]:
    for turn in result["turns"]:
        yield from turn["rubrics"]


def _passes(result: dict[str, Any], fails: Callable[[dict[str, Any]], bool]) -> int:
    return 0 if any(fails(r) for r in _rubrics(result)) else 1


def _critical_failure(rubric: dict[str, Any]) -> bool:
    critical = rubric["critical"]
    flagged = isinstance(critical, str) and critical.strip().lower() == "yes"
    return flagged and rubric["status"] != MET


def diagnostics(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Non-official numbers: APR with the ``critical`` flag as the failure rule."""
    passes = [_passes(r, _critical_failure) for r in results]
    return {"apr_using_critical_flag": mean(passes) if passes else None}


def judge_counts(results: list[dict[str, Any]]) -> dict[str, int]:
    """Rubric counts per status over the scored tasks, and tasks with unjudged rubrics."""
    counts = dict.fromkeys(STATUSES, 0)
    unjudged_tasks = 0
    for result in results:
        statuses = [r["status"] for r in _rubrics(result)]
        for status in statuses:
            counts[status] += 1
        unjudged_tasks += any(s in UNJUDGED for s in statuses)
    judged = sum(counts.values()) - counts[MISSING_ANSWER]
    return {"judge_tasks": judged, **counts, "tasks_with_unjudged_rubrics": unjudged_tasks}


def summarize(
    results: list[dict[str, Any]],
    *,
    context_policy: str,
    judge: dict[str, int],
    responses: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The report's ``summary``: overall and group APR/ARS, judge and response accounting,
    official shape."""
    # Here, not at start-up: the error bars import numpy, which make-judge-tasks and
    # check-judge (users of this module's constants) do not need.
    from datbench_cli.benchmarks.vistoolbench.uncertainty import uncertainty

    overall = _stats(results)
    return {
        "num_tasks": overall["n"],
        "apr": overall["apr"],
        "ars": overall["ars"],
        # The headline under the key both benchmarks share (`score --json | jq .overall_accuracy`).
        "overall_accuracy": overall["apr"],
        "context_policy": context_policy,
        "by_turncase": group_stats(results, "turncase"),
        "by_prompt_category": group_stats(results, "prompt_category"),
        "by_domain": group_stats(results, "domain"),
        "by_eval_focus": group_stats(results, "eval_focus"),
        "judge": judge,
        "responses": responses or {},
        "official_summary": official_summary(results),
        "diagnostics": diagnostics(results),
        "uncertainty": uncertainty(results),
        "censoring": censoring(results),
    }
