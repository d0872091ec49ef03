"""The terminal summary of a DatBench report: per capability and per source dataset."""

from __future__ import annotations

from rich.table import Table

from datbench_cli.benchmarks.datbench.schema import DatBenchReport
from datbench_cli.benchmarks.datbench.summary import GroupStats, group_stats


def _pct(value: float | None, count: int) -> str:
    return f"{value:.2%}" if count and value is not None else "-"


def _answered(coverage: dict | None) -> str:
    return f"{coverage['answered']}/{coverage['expected']}" if coverage else ""


def _row(table: Table, name: str, stats: GroupStats, coverage: dict | None = None) -> None:
    table.add_row(
        name,
        _answered(coverage),
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
    for header in (
        "group",
        "answered",
        "samples",
        "accuracy",
        "direct",
        "direct acc",
        "judge",
        "judge acc",
    ):
        if header == "group":
            table.add_column(header, no_wrap=True, min_width=24)
        else:
            table.add_column(header, justify="right")
    table.add_row(
        "[bold]overall[/bold]",
        _answered(summary.get("coverage")),
        str(summary["total_samples"]),
        _pct(summary["overall_accuracy"], summary["total_samples"]),
        str(summary["direct_samples"]),
        _pct(summary["direct_accuracy"], summary["direct_samples"]),
        str(summary["judge_samples"]),
        _pct(summary["judge_accuracy"], summary["judge_samples"]),
        end_section=True,
    )
    # Every capability of the export, also those without a scored sample.
    by_capability = (summary.get("coverage") or {}).get("by_capability", {})
    groups = group_stats(report.results, "capability")
    for name in [*groups, *(n for n in by_capability if n not in groups)]:
        _row(table, name, groups.get(name, GroupStats()), by_capability.get(name))
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
    if s.get("judge_stale_verdicts"):
        notes.append(
            f"{s['judge_stale_verdicts']} judge verdict(s) are stale (they judged another "
            "response text; scored 0): run make-judge-tasks --skip-done and the judge again"
        )
    if s.get("unanswered_samples") or s.get("missing_responses"):
        statuses = s.get("response_statuses") or {}
        notes.append(
            f"{s.get('unanswered_samples', s['missing_responses'])} of {s['expected_samples']} "
            f"samples are unanswered ({statuses.get('missing', 0)} without a line, "
            f"{statuses.get('errored', 0)} errored): not scored"
        )
    statuses = s.get("response_statuses") or {}
    answered_badly = {k: statuses.get(k, 0) for k in ("empty", "refused", "truncated")}
    if any(answered_badly.values()):
        notes.append(
            "responses scored as they are: "
            + ", ".join(f"{n} {k}" for k, n in answered_badly.items())
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
