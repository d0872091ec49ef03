"""The terminal summary of a DatBench report: per capability and per source dataset."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from datbench_cli.benchmarks.datbench.schema import DatBenchReport
from datbench_cli.benchmarks.datbench.summary import GroupStats, group_stats


def _pct(value: float, count: int, entry: dict[str, Any] | None = None) -> str:
    """``61.2 ±1.4`` (percent, 95% half-width in points; the half-width only when known)."""
    if not count:
        return "-"
    half = (entry or {}).get("half_width")
    return f"{value:.1%}"[:-1] + (f" ±{half * 100:.1f}" if half is not None else "")


def _mdd(entry: dict[str, Any] | None) -> str:
    value = (entry or {}).get("mdd80")
    return "-" if value is None else f"{value * 100:.1f}"


def _row(table: Table, name: str, stats: GroupStats, entry: dict[str, Any] | None) -> None:
    table.add_row(
        name,
        str(stats.samples),
        _pct(stats.accuracy, stats.samples, entry),
        str(stats.direct.count),
        _pct(stats.direct.accuracy, stats.direct.count),
        str(stats.judge.count),
        _pct(stats.judge.accuracy, stats.judge.count),
        _mdd(entry),
    )


def summary_table(report: DatBenchReport) -> Table:
    """Overall, per-capability and per-dataset accuracy (percent, ± the 95% half-width), split
    into direct and judge mode, and the minimum detectable difference at 80% power."""
    summary = report.summary
    bars = summary.get("uncertainty") or {}
    table = Table(title="DatBench results (%, ±95% interval)", title_justify="left")
    headers = (
        "group",
        "samples",
        "accuracy",
        "direct",
        "direct acc",
        "judge",
        "judge acc",
        "MDD80",
    )
    for header in headers:
        if header == "group":
            table.add_column(header, no_wrap=True, min_width=24)
        else:
            table.add_column(header, justify="right")
    table.add_row(
        "[bold]overall[/bold]",
        str(summary["total_samples"]),
        _pct(summary["overall_accuracy"], summary["total_samples"], bars.get("overall")),
        str(summary["direct_samples"]),
        _pct(summary["direct_accuracy"], summary["direct_samples"], bars.get("direct")),
        str(summary["judge_samples"]),
        _pct(summary["judge_accuracy"], summary["judge_samples"], bars.get("judge")),
        _mdd(bars.get("overall")),
        end_section=True,
    )
    capabilities = bars.get("capabilities") or {}
    for name, stats in group_stats(report.results, "capability").items():
        _row(table, name, stats, capabilities.get(name))
    table.add_section()
    datasets = bars.get("datasets") or {}
    for name, stats in sorted(group_stats(report.results, "dataset").items()):
        _row(table, f"  {name}", stats, datasets.get(name))
    return table


def summary_notes(report: DatBenchReport) -> list[str]:
    """Lines that belong under the table: judge and coverage problems, known defects."""
    s = report.summary
    notes = [
        "± is the 95% interval half-width (CLT); MDD80 is the smallest paired difference a "
        "comparison with another run of this size detects with 80% power (points)"
    ]
    if s.get("judge_missing_responses") or s.get("judge_unparsed_verdicts"):
        notes.append(
            f"judge verdicts: {s['judge_missing_responses']} missing, "
            f"{s['judge_unparsed_verdicts']} unparsed (scored 0)"
        )
    if s.get("missing_responses"):
        notes.append(
            f"{s['missing_responses']} of {s['expected_samples']} samples have no response"
        )
    if s.get("scorer_errors"):
        notes.append(f"{s['scorer_errors']} sample(s) hit a scorer error (scored 0)")
    defects = s.get("known_reference_defects") or {}
    if defects:
        notes.append(
            f"known reference defects (kept for parity) affect: {', '.join(sorted(defects))}; "
            "see summary.known_reference_defects in the report and docs/known-defects.md"
        )
    return notes
