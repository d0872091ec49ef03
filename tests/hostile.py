"""Scoring one hostile output in a test: the scorer must finish on its own, not by its budget.

A hostile-output test once counted a ``SampleTimeout`` as a pass (a 60 s sleep injected into
answer extraction still passed six of them). :func:`score_hostile` fails the test when the
scorer needed its budget, and bounds the whole sample's wall time with :func:`within`, so a
scorer that ignores the budget fails the test instead of hanging the suite.
"""

from __future__ import annotations

import warnings
from typing import Any

from datbench_cli import DatBenchEvaluator, SampleScore, VLMResponse
from datbench_cli.benchmarks.datbench.evaluator import ScoreOptions, compute_report
from tests.bounded import within

BUDGET = 10.0  # the per-sample budget the hostile tests score with
BOUND = 40.0  # the seconds one hostile sample may take end to end, budget included


def score_with_budget(
    row: dict[str, Any], capability: str, output: str, budget: float
) -> SampleScore:
    evaluator = DatBenchEvaluator([dict(row, image=None)], capability)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = compute_report(
            evaluator, [VLMResponse(row["id"], output)], options=ScoreOptions(sample_timeout=budget)
        )
    return report.results[0]


def check_not_over_budget(details: dict[str, Any]) -> None:
    """Fail when the details record a spent budget (a scorer error of another type is fine)."""
    error = details.get("error") or {}
    if error.get("type") == "SampleTimeout":
        raise AssertionError("the scorer needed its whole time budget: it must finish on its own")


def score_hostile(
    row: dict[str, Any], capability: str, output: str, budget: float = BUDGET
) -> SampleScore:
    """The row's result for ``output``; fails on a spent budget or after :data:`BOUND` s."""
    result = within(BOUND, score_with_budget, row, capability, output, budget)
    check_not_over_budget(result.metadata["score_details"])
    return result


def score_hostile_batch(
    cases: list[tuple[dict[str, Any], str, str]], budget: float = BUDGET
) -> list[SampleScore]:
    """The result of each (row, capability, output), in order, scored in one evaluator call per
    capability (each sample under its own budget; the pool's hard limit bounds a sample that
    ignores it). Fails on a spent budget, as :func:`score_hostile`."""
    results: list[SampleScore | None] = [None] * len(cases)
    by_capability: dict[str, list[int]] = {}
    for index, (_, capability, _) in enumerate(cases):
        by_capability.setdefault(capability, []).append(index)
    for capability, indexes in by_capability.items():
        rows = [dict(cases[i][0], id=f"{cases[i][0]['id']}#{i}", image=None) for i in indexes]
        evaluator = DatBenchEvaluator(rows, capability)
        responses = [
            VLMResponse(row["id"], cases[i][2]) for row, i in zip(rows, indexes, strict=True)
        ]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = compute_report(
                evaluator, responses, options=ScoreOptions(sample_timeout=budget)
            )
        assert [result.id for result in report.results] == [row["id"] for row in rows]
        for i, result in zip(indexes, report.results, strict=True):
            check_not_over_budget(result.metadata["score_details"])
            results[i] = result
    return results  # type: ignore[return-value]
