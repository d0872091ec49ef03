"""Censoring beside ARS and APR (our addition, ``summary["censoring"]``): per group, how many
scored tasks lack a complete answer or verdict, and ARS/APR over the rest.

A task is *censored* when a turn's answer was truncated, empty, refused or errored (the turn's
``response_status`` where the report carries it), a turn has no answer (rubric status
``missing_answer``), or a rubric's verdict is unparsed, missing (an errored judge call or a judge's
refusal too) or stale. Each count is of
tasks; ``ars_completed`` / ``apr_completed`` are the means over the uncensored tasks, extra
numbers that never replace the official ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from datbench_cli.metrics.averaging import mean_or_none

_STATUSES = ("truncated", "empty", "refused", "errored")
_RUBRICS = {
    "missing_answer": "unanswered",
    "unparsed": "judge_unparsed",
    "missing": "judge_missing",
    "errored": "judge_missing",  # a failed judge call gave no verdict (DatBench counts it so)
    "refused": "judge_missing",  # nor did a judge that refused it
    "stale": "judge_stale",
}
KEYS = (*_STATUSES, *dict.fromkeys(_RUBRICS.values()))
_GROUPS = ("turncase", "domain", "eval_focus")


def reasons(result: dict[str, Any]) -> set[str]:
    """Why one scored task is censored (empty set: completed)."""
    found: set[str] = set()
    for turn in result.get("turns") or []:
        status = turn.get("response_status")
        if status in _STATUSES:
            found.add(status)
        for rubric in turn.get("rubrics") or []:
            reason = _RUBRICS.get(rubric.get("status"))
            if reason is not None:
                found.add(reason)
    return found


def _entry(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    counts = dict.fromkeys(KEYS, 0)
    completed = []
    for result in results:
        found = reasons(result)
        for reason in found:
            counts[reason] += 1
        if not found:
            completed.append(result)
    return {
        "tasks": len(results),
        **counts,
        "censored": len(results) - len(completed),
        "completed": len(completed),
        "ars_completed": mean_or_none([r["ars"] for r in completed]),
        "apr_completed": mean_or_none([r["apr"] for r in completed]),
    }


def censoring(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``summary["censoring"]``: ``overall`` and ``by_turncase``/``by_domain``/``by_eval_focus``."""
    out: dict[str, Any] = {"overall": _entry(results)}
    for field in _GROUPS:
        groups: dict[str, list[dict[str, Any]]] = {}
        for result in results:
            groups.setdefault(str(result.get(field)), []).append(result)
        out[f"by_{field}"] = {name: _entry(groups[name]) for name in sorted(groups)}
    return out
