"""The paired statistics of one comparison row, and Holm's adjustment across a table's rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from datbench_cli import stats
from datbench_cli.metrics.averaging import mean

ALPHA = 0.05


@dataclass(frozen=True)
class Sample:
    """One side's view of one sample (a DatBench sample or a VisualToolBench task).

    ``groups``: the fields rows are grouped by (capability, dataset, ... / turncase, domain,
    ...); ``values``: per metric, the score whose mean the row reports; ``correct``: per
    metric with a paired exact test, the 0/1 outcome McNemar's test counts; ``check``: what
    must be equal in both runs for the same id (the reference answer, the groups).
    """

    id: str
    groups: dict[str, str]
    values: dict[str, float]
    correct: dict[str, bool] = field(default_factory=dict)
    check: tuple[Any, ...] = ()


def metric_block(
    pairs: Sequence[tuple[Sample, Sample]],
    metric: str,
    strata: str | None,
    *,
    seed: int,
    resamples: int,
) -> dict[str, Any]:
    """Both means, the difference B - A with its paired-bootstrap interval (resampling sample
    ids inside each ``strata`` group), the minimum detectable difference at 80% power from the
    observed discordance, and, where the metric has 0/1 outcomes, McNemar's exact test and the
    flips (otherwise the exact sign test). ``p_holm`` and ``significant`` are filled in by
    :func:`finish_table`."""
    a = [pa.values[metric] for pa, _ in pairs]
    b = [pb.values[metric] for _, pb in pairs]
    labels = [pa.groups[strata] for pa, _ in pairs] if strata else None
    boot = stats.paired_bootstrap(a, b, labels, resamples=resamples, seed=seed)
    assert boot is not None  # rows exist only for groups with pairs
    mean_a, mean_b = mean(a), mean(b)
    block: dict[str, Any] = {
        "a": mean_a,
        "b": mean_b,
        "difference": mean_b - mean_a,
        "ci95": [boot.low, boot.high],
        "mdd80": stats.mdd_paired(a, b),
    }
    if metric not in pairs[0][0].correct:
        # No 0/1 outcomes (VisualToolBench ARS): the exact sign test on the per-sample
        # differences, as the leaderboard tests such a metric. Significance read off the
        # bootstrap interval alone called a single task's change significant (its interval
        # is that one difference).
        lower = sum(1 for x, y in zip(a, b, strict=True) if y < x)
        higher = sum(1 for x, y in zip(a, b, strict=True) if y > x)
        block["sign_test"] = {
            "b": lower,
            "c": higher,
            "p": stats.mcnemar_exact(lower, higher),
            "p_holm": None,
        }
    else:
        right_to_wrong = sum(1 for pa, pb in pairs if pa.correct[metric] and not pb.correct[metric])
        wrong_to_right = sum(1 for pa, pb in pairs if not pa.correct[metric] and pb.correct[metric])
        both_right = sum(1 for pa, pb in pairs if pa.correct[metric] and pb.correct[metric])
        block["mcnemar"] = {
            "b": right_to_wrong,
            "c": wrong_to_right,
            "p": stats.mcnemar_exact(right_to_wrong, wrong_to_right),
            "p_holm": None,
        }
        block["flips"] = {
            "right_to_wrong": right_to_wrong,
            "wrong_to_right": wrong_to_right,
            "both_right": both_right,
            "both_wrong": len(pairs) - both_right - right_to_wrong - wrong_to_right,
        }
    return block


def finish_table(rows: list[dict[str, Any]], metrics: Sequence[str]) -> None:
    """Holm-adjust each metric's exact p-values (McNemar's, or the sign test's) across the
    rows and mark significance: Holm-adjusted p < 0.05."""
    for metric in metrics:
        blocks = [row["metrics"][metric] for row in rows]
        tests = [b.get("mcnemar") or b["sign_test"] for b in blocks]
        for test, adjusted in zip(tests, stats.holm([t["p"] for t in tests]), strict=True):
            test["p_holm"] = adjusted
        for block, test in zip(blocks, tests, strict=True):
            block["significant"] = test["p_holm"] < ALPHA
