"""Our additions to a DatBench summary (not in the reference): error bars, power, and what the
dataset's own per-item statistics (``eval_metrics``) say.

- ``summary["uncertainty"]``: for overall, direct, judge, each capability and each source
  dataset the sample count, accuracy, CLT standard error, 95% interval (Wilson with continuity correction, within
  [0, 1]), and
  the minimum detectable paired difference at 80% power; overall and capabilities also carry
  the standard error clustered by source dataset (Miller 2024, eq. 4), its design effect and
  the interval at the effective sample size.
- ``summary["item_statistics"]``: per capability, accuracy on ``eval_metrics.is_frontier``
  items vs the rest, and the discrimination-weighted accuracy, only where rows carry them.
- ``summary["censoring"]``: see :mod:`datbench_cli.benchmarks.datbench.censoring`.

Definitions: ``docs/statistics.md``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np

from datbench_cli import stats
from datbench_cli.benchmarks.datbench.censoring import reasons
from datbench_cli.benchmarks.datbench.columns import ScoreColumns
from datbench_cli.benchmarks.datbench.references import item_metrics
from datbench_cli.benchmarks.datbench.schema import DatBenchSample, SampleScore

UNCERTAINTY_METHOD = {
    "confidence": stats.CONFIDENCE,
    "se": "CLT: sqrt(sample variance / n) of per-sample scores",
    "se_clustered": "clustered by source dataset (Miller 2024, Adding Error Bars to Evals, eq. 4)",
    "ci95": "Wilson score interval with continuity correction of n * accuracy in n "
    "(conservative for partial credit); always within [0, 1]",
    "ci95_clustered": "the same at the effective sample size n / design_effect, "
    "design_effect = max(1, se_clustered^2 / se^2) (Kish; Korn and Graubard 1998)",
    "mdd80": "minimum detectable paired difference at 80% power, two-sided 5%, "
    "from 2 p (1 - p) / n (a second run of equal accuracy, uncorrelated outcomes)",
}


def describe(
    scores: Sequence[float] | np.ndarray, clusters: Sequence[str] | np.ndarray | None = None
) -> dict[str, Any]:
    """One group's entry (:func:`datbench_cli.stats.describe`, its mean named ``accuracy``)."""
    entry = stats.describe(scores, clusters)
    return {"n": entry.pop("n"), "accuracy": entry.pop("mean"), **entry}


def columns_of(
    results: Sequence[SampleScore],
    samples: Mapping[str, DatBenchSample] | None = None,
    truncated_ids: Collection[str] = (),
) -> ScoreColumns:
    """The compact table of ``results`` (item statistics from ``samples``' ``eval_metrics``)."""
    table = ScoreColumns()
    for result in results:
        meta = result.metadata
        frontier = discrimination = None
        if samples is not None:
            sample = samples.get(result.id)
            metrics = sample.eval_metrics if sample is not None else None
            frontier, discrimination = item_metrics(metrics)
        table.add(
            result.score,
            meta.get("capability"),
            meta.get("dataset"),
            meta.get("eval_mode"),
            reasons(result, truncated_ids),
            frontier,
            discrimination,
        )
    return table


def uncertainty(results: Sequence[SampleScore]) -> dict[str, Any]:
    """``summary["uncertainty"]`` from the scored results."""
    return table_uncertainty(columns_of(results))


def table_uncertainty(table: ScoreColumns) -> dict[str, Any]:
    """``summary["uncertainty"]`` from the compact table of the scored samples."""
    # Arrays, not lists: no float or string object per sample (200,000 samples: 15 MB); the
    # groups as masks, made one at a time.
    return {
        "method": dict(UNCERTAINTY_METHOD),
        "overall": describe(table.score_array(), table.dataset_ranks()),
        "direct": describe(table.score_array(table.mode_mask("direct"))),
        "judge": describe(table.score_array(table.mode_mask("judge"))),
        "capabilities": {
            name: describe(table.score_array(group), table.dataset_ranks(group))
            for name, group in table.capability_groups()
        },
        "datasets": {
            name: describe(table.score_array(group)) for name, group in table.dataset_groups()
        },
    }


def item_statistics(
    results: Sequence[SampleScore], samples: Mapping[str, DatBenchSample]
) -> dict[str, Any]:
    """``summary["item_statistics"]``: per capability, frontier vs other accuracy and the
    discrimination-weighted accuracy (only capabilities whose rows carry the fields)."""
    return columns_of(results, samples).item_statistics()


def additions(
    results: Sequence[SampleScore], samples: Mapping[str, DatBenchSample]
) -> dict[str, Any]:
    """The summary keys this module adds (after the seed's and the accounting keys)."""
    return table_additions(columns_of(results, samples))


def table_additions(table: ScoreColumns) -> dict[str, Any]:
    """:func:`additions` from the compact table of the scored samples."""
    return {
        "uncertainty": table_uncertainty(table),
        "item_statistics": table.item_statistics(),
        "censoring": table.censoring(),
    }
