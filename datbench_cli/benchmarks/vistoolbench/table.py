"""The terminal summary of a VisualToolBench report: APR and ARS per group."""

from __future__ import annotations

from typing import Any

from rich.table import Table

_SECTIONS = (
    ("by_turncase", "turncase"),
    ("by_domain", "domain"),
    ("by_eval_focus", "eval focus"),
)


def _pct(value: float, count: int) -> str:
    return f"{value:.2%}" if count else "-"


def summary_table(report: dict[str, Any]) -> Table:
    """Overall, per turncase, per domain and per eval focus: tasks, APR, ARS."""
    summary = report["summary"]
    table = Table(
        title=f"VisualToolBench results ({summary['context_policy']})", title_justify="left"
    )
    for header in ("group", "tasks", "APR", "ARS"):
        table.add_column(header, justify="left" if header == "group" else "right")
    n = summary["num_tasks"]
    table.add_row(
        "[bold]overall[/bold]",
        str(n),
        _pct(summary["apr"], n),
        _pct(summary["ars"], n),
        end_section=True,
    )
    for key, label in _SECTIONS:
        groups = summary[key]
        for position, (name, stats) in enumerate(groups.items()):
            table.add_row(
                f"{label}: {name}",
                str(stats["n"]),
                _pct(stats["apr"], stats["n"]),
                _pct(stats["ars"], stats["n"]),
                end_section=position == len(groups) - 1,
            )
    return table


def summary_notes(report: dict[str, Any]) -> list[str]:
    """Lines for under the table: the context policy, gaps and duplicates in the responses,
    and the non-official diagnostic."""
    summary = report["summary"]
    notes = []
    if summary["context_policy"] != "golden_history":
        notes.append(
            f"context policy {summary['context_policy']}: not comparable with official numbers"
        )
    responses = summary.get("responses") or {}
    gaps = [
        f"{responses[key]} {text}"
        for key, text in (
            ("missing_turns", f"of {responses.get('turns', 0)} turn(s) have no answer"),
            ("duplicate_lines", "duplicate line(s) (the last one is used)"),
            ("unknown_lines", "line(s) with unknown ids"),
            ("errored_turns", "turn(s) errored (no answer; rerun the runner to retry)"),
        )
        if responses.get(key)
    ]
    if gaps:
        notes.append("responses: " + "; ".join(gaps))
    diagnostic = summary["diagnostics"]["apr_using_critical_flag"]
    notes.append(
        f"non-official APR using the critical flag: {_pct(diagnostic, summary['num_tasks'])}"
    )
    return notes
