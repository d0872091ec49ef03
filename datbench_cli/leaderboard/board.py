"""The leaderboard as plain JSON-able data: every run's headline score and per-group scores
with 95% intervals, ranks, pairwise tests Holm-adjusted over all pairs, compact letters and,
with ``--trend``, the checkpoints in order. Nothing downstream computes statistics."""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any

import numpy as np

from datbench_cli import stats
from datbench_cli.benchmarks import BENCHMARKS
from datbench_cli.compare.spec import Metric
from datbench_cli.errors import UsageError
from datbench_cli.leaderboard.letters import compact_letters
from datbench_cli.leaderboard.runs import Run, label_number

ALPHA = 0.05

METHOD = {
    "interval": "95% Wilson score interval with continuity correction of n * mean in n "
    "(conservative for partial credit); within [0, 1]; over scores outside [0, 1] (an ARS "
    "under negative rubric weights) mean +/- 1.96 CLT standard errors",
    "paired": "every run scored the same samples: exact McNemar test on the 0/1 outcomes "
    "(metrics without them: exact sign test on the per-sample differences)",
    "unpaired": "runs scored different samples: Fisher's exact test on the 0/1 outcomes "
    "(metrics without them: two-sample z-test of the means, CLT standard errors)",
    "holm": "p-values Holm-adjusted over all pairs of runs",
    "ranks": "competition ranks by the headline score; scores within 1e-9 of each other "
    "(the same values summed in another order) share a rank",
    "letters": "compact letter display (Piepho 2004, insert-and-absorb) over the runs ordered "
    "by score (numbers past 52 groups): runs sharing a letter are not significantly different at Holm-adjusted p < 0.05",
    "trend": "a checkpoint is better than every earlier one when its score is higher and the "
    "Holm-adjusted test against each earlier checkpoint is significant",
}


def _entry(values: np.ndarray) -> dict[str, Any]:
    n = len(values)
    # Summed left to right as the report sums it (numpy's pairwise mean can differ in the
    # last bit, which told apart, and ranked 1 and 2, runs whose reports say the same).
    score = stats.mean(values.tolist())
    bounds = stats.mean_interval(values, score)
    low, high = bounds if bounds is not None else (None, None)
    return {"score": score, "low": low, "high": high, "n": n}


def _headline_first(metrics: tuple[Metric, ...]) -> list[Metric]:
    """The headline metric first: the benchmark's metric with 0/1 outcomes (DatBench
    accuracy, VisualToolBench APR), then the others beside it."""
    exact = [m for m in metrics if m.exact_test]
    return [*exact[:1], *(m for m in metrics if m not in exact[:1])]


def _aligned(runs: list[Run]) -> list[np.ndarray] | None:
    """Each run's order that lines its samples up with every other's, when all runs scored
    the very same samples (else ``None``: the tests are unpaired)."""
    orders = [np.argsort(run.index, kind="stable") for run in runs]
    first = runs[0].index[orders[0]]
    for run, order in zip(runs, orders, strict=True):
        if run.n != len(first) or not np.array_equal(run.index[order], first):
            return None
    return orders


def _paired_columns(runs: list[Run], metric: Metric, orders: list[np.ndarray]) -> list[np.ndarray]:
    """Each run's column the paired test counts (0/1 outcomes, else scores), in the shared
    order: lined up once, not once per pair."""
    if metric.exact_test:
        return [run.correct[metric.key][order] for run, order in zip(runs, orders, strict=True)]
    return [run.values[metric.key][order] for run, order in zip(runs, orders, strict=True)]


def _pair_p(
    a: Run, b: Run, metric: Metric, columns: list[np.ndarray] | None, i: int, j: int
) -> float:
    if columns is not None:
        x, y = columns[i], columns[j]
        if metric.exact_test:
            return stats.mcnemar_exact(int(np.count_nonzero(x & ~y)), int(np.count_nonzero(~x & y)))
        diff = y - x
        return stats.mcnemar_exact(int(np.count_nonzero(diff < 0)), int(np.count_nonzero(diff > 0)))
    if metric.exact_test:  # unpaired 0/1 outcomes: exact at any n, never p = 0 from n = 2
        ca, cb = a.correct[metric.key], b.correct[metric.key]
        return stats.fisher_exact(
            int(np.count_nonzero(ca)), len(ca), int(np.count_nonzero(cb)), len(cb)
        )
    va, vb = a.values[metric.key], b.values[metric.key]
    se_a, se_b = stats.clt_se(va), stats.clt_se(vb)
    if se_a is None or se_b is None:
        return 1.0
    spread = math.sqrt(se_a * se_a + se_b * se_b)
    gap = abs(float(vb.mean()) - float(va.mean()))
    if spread == 0:
        return 0.0 if gap > 0 else 1.0
    return math.erfc(gap / spread / math.sqrt(2))


# Scores this close (relative) are one score: a sum of the same values in another order
# differs in its last bits (partial credits 0.5 and 0.25 on two samples, or the other way
# round), far below any difference a run can make.
RANK_TOLERANCE = 1e-9


def _ranks(scores: list[float]) -> list[int]:
    """Competition ranks (1, 2, 2, 4) of scores, highest first; scores within
    :data:`RANK_TOLERANCE` of each other share a rank."""
    return [
        1 + sum(other > score and not _same(other, score) for other in scores) for score in scores
    ]


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=RANK_TOLERANCE, abs_tol=RANK_TOLERANCE)


def _groups(runs: list[Run]) -> list[str]:
    names: dict[str, None] = {}
    for run in runs:
        names.update(dict.fromkeys(run.group_names))
    return list(names)


def _by_group(run: Run, key: str, names: list[str]) -> dict[str, Any]:
    out = {}
    for name in names:
        code = run.group_names.index(name) if name in run.group_names else -1
        out[name] = _entry(run.values[key][run.group == code])
    return out


def build(
    runs: list[Run],
    group_by: str | None,
    differences: list[str],
    *,
    allow_different_data: bool = False,
    trend: bool = False,
) -> dict[str, Any]:
    """The leaderboard of ``runs`` (already checked comparable, ``differences`` allowed)."""
    benchmark = BENCHMARKS[runs[0].benchmark]
    metrics = _headline_first(benchmark.pairing().metrics)
    head = metrics[0]
    names = _groups(runs) if group_by else []
    orders = _aligned(runs)
    columns = _paired_columns(runs, head, orders) if orders is not None else None
    pairs: list[dict[str, Any]] = []
    for i, j in combinations(range(len(runs)), 2):
        p = _pair_p(runs[i], runs[j], head, columns, i, j)
        pairs.append({"a": runs[i].label, "b": runs[j].label, "p": p})
    for pair, adjusted in zip(pairs, stats.holm([p["p"] for p in pairs]), strict=True):
        pair["p_holm"] = adjusted
        pair["significant"] = adjusted is not None and adjusted < ALPHA
    entries = []
    for run in runs:
        entry: dict[str, Any] = {
            "label": run.label,
            "path": str(run.given),
            "report": str(run.report_path),
            "model": run.model,
            "profile": run.profile,
            "samples": run.n,
            "coverage": run.coverage,
            "warnings": list(run.warnings),
            "overall": _entry(run.values[head.key]),
            "capabilities": _by_group(run, head.key, names),
            "beside": {
                m.key: {
                    "overall": _entry(run.values[m.key]),
                    "capabilities": _by_group(run, m.key, names),
                }
                for m in metrics[1:]
            },
        }
        if trend:
            entry["step"] = label_number(run.label)
        entries.append(entry)
    scores = [e["overall"]["score"] if e["overall"]["score"] is not None else -1.0 for e in entries]
    for entry, rank in zip(entries, _ranks(scores), strict=True):
        entry["rank"] = rank
    order = sorted(range(len(runs)), key=lambda k: (entries[k]["rank"], k))
    position = {k: at for at, k in enumerate(order)}
    label_index = {run.label: k for k, run in enumerate(runs)}
    different = [
        (position[label_index[p["a"]]], position[label_index[p["b"]]])
        for p in pairs
        if p["significant"]
    ]
    letters = compact_letters(len(runs), different)
    for k, entry in enumerate(entries):
        entry["group"] = letters[position[k]]
    board: dict[str, Any] = {
        "benchmark": runs[0].benchmark,
        "headline": {"key": head.key, "label": head.label},
        "beside": [{"key": m.key, "label": m.label} for m in metrics[1:]],
        "group_by": group_by,
        "groups": names,
        "paired": orders is not None,
        "test": _test_name(head, orders is not None),
        "alpha": ALPHA,
        "confidence": stats.CONFIDENCE,
        "method": dict(METHOD),
        "comparable": not differences,
        "allowed_different_data": allow_different_data,
        "differences": differences,
        "runs": [entries[k] for k in order],
        "pairs": pairs,
    }
    if trend:
        board["trend"] = _trend(entries, pairs)
    return board


def _test_name(metric: Metric, paired: bool) -> str:
    if not paired:
        kind = "Fisher's exact test" if metric.exact_test else "z-test of the means"
        return f"unpaired {kind} on {metric.label}, Holm over all pairs"
    kind = "exact McNemar" if metric.exact_test else "exact sign test"
    return f"paired {kind} on {metric.label}, Holm over all pairs"


def _trend(entries: list[dict[str, Any]], pairs: list[dict[str, Any]]) -> dict[str, Any]:
    missing = [e["label"] for e in entries if e["step"] is None]
    if missing:
        raise UsageError(
            f"--trend needs a number in every label; {missing[0]!r} has none",
            hint="label checkpoints like step1000=runs/ckpt-1000",
        )
    steps = [e["step"] for e in entries]
    if len(set(steps)) != len(steps):
        raise UsageError("--trend needs a different number in every label")
    significant = {(p["a"], p["b"]) for p in pairs if p["significant"]}
    significant |= {(b, a) for a, b in significant}
    axis = sorted(entries, key=lambda e: e["step"])
    better = []
    for k, entry in enumerate(axis):
        earlier = axis[:k]
        if earlier and all(
            (entry["label"], e["label"]) in significant
            and entry["overall"]["score"] > e["overall"]["score"]
            for e in earlier
        ):
            better.append(entry["label"])
    for entry in axis:
        entry["better_than_every_earlier"] = entry["label"] in better
    return {
        "axis": [{"label": e["label"], "step": e["step"]} for e in axis],
        "better_than_every_earlier": better,
    }
