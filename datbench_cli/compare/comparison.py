"""Compare two runs: join by id, refuse different exports, one table of paired rows per
grouping, Holm across each table, and the ``--fail-if-worse`` gate.

The result is plain JSON-able data holding everything a page needs to show the comparison
(every number of every row, the marks, the unmatched ids and every joined pair), so nothing
downstream computes statistics of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from datbench_cli import stats
from datbench_cli.benchmarks import BENCHMARKS
from datbench_cli.compare.inputs import (
    RunReport,
    changed_inputs,
    coverage_and_warnings,
    identity,
    identity_differences,
    load_run,
)
from datbench_cli.compare.paired import ALPHA, Sample, finish_table, metric_block
from datbench_cli.compare.spec import Side, TableSpec
from datbench_cli.errors import InputError, UsageError, name_ids

METHOD = {
    "difference": "B - A (B: the second run)",
    "ci95": "paired bootstrap percentile interval: sample ids resampled with replacement "
    "(inside each source dataset for DatBench overall and capability rows)",
    "mcnemar": "exact McNemar test: two-sided binomial test of b in b + c at 1/2; "
    "b = right in A and wrong in B, c = wrong in A and right in B",
    "p_holm": "Holm-adjusted across the rows of one table",
    "sign_test": "metrics without 0/1 outcomes (VisualToolBench ARS): exact sign test, "
    "b = samples lower in B, c = samples higher in B, p as for McNemar",
    "significant": f"Holm-adjusted McNemar (or sign test) p < {ALPHA}",
    "mdd80": "minimum detectable paired difference at 80% power, two-sided 5%, from the "
    "observed discordance (mean squared per-sample difference; none observed: half a "
    "discordant pair)",
}


def _index(run: RunReport, side: Side) -> dict[str, Sample]:
    samples: dict[str, Sample] = {}
    for sample in side.read(run.results, run.report_path):
        if sample.id in samples:
            raise InputError(f"the results hold id {sample.id!r} more than once", run.report_path)
        samples[sample.id] = sample
    side.check_count(run.report["summary"], len(samples), run.report_path)
    return samples


def _table(
    spec: TableSpec,
    pairs: list[tuple[Sample, Sample]],
    side: Side,
    seed: int,
    resamples: int,
) -> dict[str, Any]:
    groups: dict[str, list[tuple[Sample, Sample]]] = {}
    for pair in pairs:
        name = spec.title if spec.group is None else pair[0].groups[spec.group]
        groups.setdefault(name, []).append(pair)
    names = list(groups) if spec.group in (None, "capability") else sorted(groups)
    rows = [
        {
            "name": name,
            "n": len(groups[name]),
            "metrics": {
                m.key: metric_block(
                    groups[name], m.key, spec.strata, seed=seed, resamples=resamples
                )
                for m in side.metrics
            },
        }
        for name in names
    ]
    finish_table(rows, [m.key for m in side.metrics])
    return {
        "key": spec.key,
        "title": spec.title,
        "group": spec.group,
        "stratified_by": spec.strata,
        "gated": spec.gated,
        "rows": rows,
    }


def _data_check(
    a: RunReport, b: RunReport, pairs: list[tuple[Sample, Sample]], allow: bool
) -> dict[str, Any]:
    ident_a, ident_b = identity(a), identity(b)
    verified, differences = identity_differences(ident_a, ident_b)
    mismatched = [pa.id for pa, pb in pairs if pa.check != pb.check]
    if mismatched:
        differences.append(
            f"{len(mismatched)} sample(s) present in both differ in their reference answer "
            f"or groups ({name_ids(mismatched)})"
        )
    if differences and not allow:
        raise UsageError(
            f"{a.given} and {b.given} were not scored on the same export: "
            f"{'; '.join(differences)} (pass --allow-different-data to compare anyway)"
        )
    return {
        "a": ident_a,
        "b": ident_b,
        "verified": verified,
        "same": not differences,
        "differences": differences,
        "allowed_different_data": allow,
        "mismatched_ids": mismatched,
    }


def _side_block(run: RunReport, samples: int) -> dict[str, Any]:
    return {
        "path": str(run.given),
        "report": str(run.report_path),
        "samples": samples,
        "profile": run.profile,
        "warnings": coverage_and_warnings(run.report["summary"])[1]
        + changed_inputs(run.report, run.report_path),
    }


def _profiles(a: RunReport, b: RunReport) -> dict[str, Any]:
    """Both scoring profiles, and whether both reports scored the very same response (and
    judge) files: then a difference between profiles is the corrections' effect alone."""
    same = None
    digests = [(a.input_digest(n), b.input_digest(n)) for n in ("responses", "judge_responses")]
    if digests[0][0] is not None and digests[0][1] is not None:
        same = all(x == y for x, y in digests)
    return {"a": a.profile, "b": b.profile, "same": a.profile == b.profile, "same_inputs": same}


def compare(
    path_a: Path,
    path_b: Path,
    *,
    seed: int = stats.DEFAULT_SEED,
    resamples: int = stats.DEFAULT_RESAMPLES,
    allow_different_data: bool = False,
) -> dict[str, Any]:
    """The comparison of run B against run A (report files or run directories)."""
    if not 1 <= resamples <= stats.MAX_RESAMPLES:
        raise UsageError(f"--resamples must be between 1 and {stats.MAX_RESAMPLES}")
    if seed < 0:
        raise UsageError("--seed must be 0 or more")
    a, b = load_run(path_a), load_run(path_b)
    if a.benchmark != b.benchmark:
        raise UsageError(f"cannot compare a {a.benchmark} run with a {b.benchmark} run")
    if a.benchmark not in BENCHMARKS:
        raise InputError(f"unknown benchmark {a.benchmark!r}", a.report_path)
    side = BENCHMARKS[a.benchmark].pairing()
    samples_a, samples_b = _index(a, side), _index(b, side)
    only_a = [i for i in samples_a if i not in samples_b]
    only_b = [i for i in samples_b if i not in samples_a]
    pairs = [(sample, samples_b[i]) for i, sample in samples_a.items() if i in samples_b]
    data = _data_check(a, b, pairs, allow_different_data)
    if not pairs:
        raise UsageError(f"{a.given} and {b.given} share no sample id: nothing to compare")
    return {
        "benchmark": a.benchmark,
        "a": _side_block(a, len(samples_a)),
        "b": _side_block(b, len(samples_b)),
        "profiles": _profiles(a, b),
        "settings": {
            "seed": seed,
            "resamples": resamples,
            "confidence": stats.CONFIDENCE,
            "alpha": ALPHA,
        },
        "method": dict(METHOD),
        "data": data,
        "join": {
            "paired": len(pairs),
            "only_in_a": len(only_a),
            "only_in_b": len(only_b),
            "only_in_a_ids": only_a,
            "only_in_b_ids": only_b,
        },
        "metrics": [
            {"key": m.key, "label": m.label, "exact_test": m.exact_test} for m in side.metrics
        ],
        "tables": [_table(spec, pairs, side, seed, resamples) for spec in side.tables],
        "pairs": [side.pair_fields(pa, pb) for pa, pb in pairs],
    }


def gate(comparison: dict[str, Any], margin: float) -> dict[str, Any]:
    """``--fail-if-worse MARGIN``: fails when, in a gated table, any row's upper 95% bound of
    B - A is below ``-margin`` for any metric. Returns the rule, the verdict and the rows."""
    if not 0 <= margin <= 1:
        raise UsageError(
            f"--fail-if-worse takes a fraction in [0, 1] (0.02 for 2 points), not {margin!r}"
        )
    tables = [t for t in comparison["tables"] if t["gated"]]
    labels = ", ".join(m["label"] for m in comparison["metrics"])
    rule = (
        f"fail when the upper bound of the 95% interval of B - A ({labels}) is below "
        f"-{margin:g} in any row of: {', '.join(t['title'] for t in tables)}"
    )
    failing = [
        {"table": t["key"], "row": row["name"], "metric": key, "upper": block["ci95"][1]}
        for t in tables
        for row in t["rows"]
        for key, block in row["metrics"].items()
        if block["ci95"][1] < -margin
    ]
    return {"margin": margin, "rule": rule, "failed": bool(failing), "failing": failing}


def significant_rows(comparison: dict[str, Any]) -> Sequence[tuple[str, str, str]]:
    """``(table, row, metric)`` of every significant row (for a one-line summary)."""
    return [
        (t["key"], row["name"], key)
        for t in comparison["tables"]
        for row in t["rows"]
        for key, block in row["metrics"].items()
        if block["significant"]
    ]
