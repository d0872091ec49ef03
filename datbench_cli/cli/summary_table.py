"""The terminal summary of a DatBench report: per capability and per source dataset."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from datbench_cli.benchmarks.datbench.schema import DatBenchReport
from datbench_cli.benchmarks.datbench.summary import GroupStats, group_stats


def _pct(value: float, count: int) -> str:
    return f"{value:.2%}" if count else "-"


def _row(table: Table, name: str, stats: GroupStats) -> None:
    table.add_row(
        name,
        str(stats.samples),
        _pct(stats.accuracy, stats.samples),
        str(stats.direct.count),
        _pct(stats.direct.accuracy, stats.direct.count),
        str(stats.judge.count),
        _pct(stats.judge.accuracy, stats.judge.count),
    )


def summary_table(report: DatBenchReport) -> Table:
    """Overall, per-capability and per-dataset accuracy, split into direct and judge mode."""
    summary = report.summary
    table = Table(title="DatBench results", title_justify="left")
    for header in ("group", "samples", "accuracy", "direct", "direct acc", "judge", "judge acc"):
        if header == "group":
            table.add_column(header, no_wrap=True, min_width=24)
        else:
            table.add_column(header, justify="right")
    table.add_row(
        Text("overall", style="bold"),
        str(summary["total_samples"]),
        _pct(summary["overall_accuracy"], summary["total_samples"]),
        str(summary["direct_samples"]),
        _pct(summary["direct_accuracy"], summary["direct_samples"]),
        str(summary["judge_samples"]),
        _pct(summary["judge_accuracy"], summary["judge_samples"]),
        end_section=True,
    )
    for name, stats in group_stats(report.results, "capability").items():
        _row(table, name, stats)
    table.add_section()
    for name, stats in sorted(group_stats(report.results, "dataset").items()):
        _row(table, f"  {name}", stats)
    return table


def summary_notes(report: DatBenchReport) -> list[str]:
    """Lines that belong under the table: judge and coverage problems, known defects."""
    s = report.summary
    notes = []
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
