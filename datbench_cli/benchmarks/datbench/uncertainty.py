"""Our additions to a DatBench summary (not in the reference): error bars, power, and what the
dataset's own per-item statistics (``eval_metrics``) say.

- ``summary["uncertainty"]``: for overall, direct, judge, each capability and each source
  dataset the sample count, accuracy, CLT standard error, 95% interval and its half-width, and
  the minimum detectable paired difference at 80% power; overall and capabilities also carry
  the standard error clustered by source dataset (Miller 2024, eq. 4).
- ``summary["item_statistics"]``: per capability, accuracy on ``eval_metrics.is_frontier``
  items vs the rest, and the discrimination-weighted accuracy, only where rows carry them.
- ``summary["censoring"]``: see :mod:`datbench_cli.benchmarks.datbench.censoring`.

Definitions: ``docs/statistics.md``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from datbench_cli import stats
from datbench_cli.benchmarks.datbench.censoring import censoring
from datbench_cli.benchmarks.datbench.schema import DatBenchSample, SampleScore
from datbench_cli.metrics.averaging import float_sum

UNCERTAINTY_METHOD = {
    "confidence": stats.CONFIDENCE,
    "se": "CLT: sqrt(sample variance / n) of per-sample scores",
    "se_clustered": "clustered by source dataset (Miller 2024, Adding Error Bars to Evals, eq. 4)",
    "ci95": "accuracy +- 1.96 se (ci95_clustered: with se_clustered)",
    "mdd80": "minimum detectable paired difference at 80% power, two-sided 5%, "
    "from 2 p (1 - p) / n (a second run of equal accuracy, uncorrelated outcomes)",
}


def describe(scores: Sequence[float], clusters: Sequence[str] | None = None) -> dict[str, Any]:
    """One group's entry (:func:`datbench_cli.stats.describe`, its mean named ``accuracy``)."""
    entry = stats.describe(scores, clusters)
    return {"n": entry.pop("n"), "accuracy": entry.pop("mean"), **entry}


def _accuracy(scores: Sequence[float]) -> float | None:
    return float_sum(scores) / len(scores) if scores else None


def _groups(results: Sequence[SampleScore], key: str) -> dict[str, list[SampleScore]]:
    groups: dict[str, list[SampleScore]] = {}
    for result in results:
        groups.setdefault(str(result.metadata.get(key)), []).append(result)
    return groups


def _scores(results: Sequence[SampleScore]) -> list[float]:
    return [float(r.score) for r in results]


def _datasets(results: Sequence[SampleScore]) -> list[str]:
    return [str(r.metadata.get("dataset")) for r in results]


def uncertainty(results: Sequence[SampleScore]) -> dict[str, Any]:
    """``summary["uncertainty"]`` from the scored results."""
    by_mode = _groups(results, "eval_mode")
    return {
        "method": dict(UNCERTAINTY_METHOD),
        "overall": describe(_scores(results), _datasets(results)),
        "direct": describe(_scores(by_mode.get("direct", []))),
        "judge": describe(_scores(by_mode.get("judge", []))),
        "capabilities": {
            name: describe(_scores(group), _datasets(group))
            for name, group in _groups(results, "capability").items()
        },
        "datasets": {
            name: describe(_scores(group))
            for name, group in sorted(_groups(results, "dataset").items())
        },
    }


def _frontier_flag(metrics: Any) -> bool | None:
    value = metrics.get("is_frontier") if isinstance(metrics, Mapping) else None
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    return None


def _discrimination(metrics: Any) -> float | None:
    value = metrics.get("discrimination") if isinstance(metrics, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _capability_items(
    results: Sequence[SampleScore], samples: Mapping[str, DatBenchSample]
) -> dict[str, Any]:
    frontier: list[float] = []
    rest: list[float] = []
    weighted = weights = 0.0
    with_weight = 0
    for result in results:
        sample = samples.get(result.id)
        metrics = sample.eval_metrics if sample is not None else None
        flag = _frontier_flag(metrics)
        if flag is not None:
            (frontier if flag else rest).append(float(result.score))
        weight = _discrimination(metrics)
        if weight is not None:
            with_weight += 1
            clipped = max(weight, 0.0)
            weighted += clipped * float(result.score)
            weights += clipped
    entry: dict[str, Any] = {}
    if frontier or rest:
        entry["frontier"] = {"n": len(frontier), "accuracy": _accuracy(frontier)}
        entry["non_frontier"] = {"n": len(rest), "accuracy": _accuracy(rest)}
    if with_weight:
        entry["discrimination_weighted_accuracy"] = weighted / weights if weights else None
        entry["discrimination_samples"] = with_weight
        entry["discrimination_weight_total"] = weights
    return entry


def item_statistics(
    results: Sequence[SampleScore], samples: Mapping[str, DatBenchSample]
) -> dict[str, Any]:
    """``summary["item_statistics"]``: per capability, frontier vs other accuracy and the
    discrimination-weighted accuracy (only capabilities whose rows carry the fields)."""
    out = {}
    for name, group in _groups(results, "capability").items():
        entry = _capability_items(group, samples)
        if entry:
            out[name] = entry
    return out


def additions(
    results: Sequence[SampleScore], samples: Mapping[str, DatBenchSample]
) -> dict[str, Any]:
    """The summary keys this module adds (after the seed's and the accounting keys)."""
    return {
        "uncertainty": uncertainty(results),
        "item_statistics": item_statistics(results, samples),
        "censoring": censoring(results),
    }
