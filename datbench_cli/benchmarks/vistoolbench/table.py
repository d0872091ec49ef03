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


def _bar(value: float, count: int, entry: dict[str, Any] | None) -> str:
    """``61.2 ±1.4`` (percent, ± the 95% half-width in points when known)."""
    if not count:
        return "-"
    half = (entry or {}).get("half_width")
    return f"{value * 100:.1f}" + (f" ±{half * 100:.1f}" if half is not None else "")


def _cells(stats: dict[str, Any], entry: dict[str, Any] | None) -> tuple[str, str]:
    entry = entry or {}
    return (
        _bar(stats["apr"], stats["n"], entry.get("apr")),
        _bar(stats["ars"], stats["n"], entry.get("ars")),
    )


def summary_table(report: dict[str, Any]) -> Table:
    """Overall, per turncase, per domain and per eval focus: tasks, APR, ARS (percent, ± the
    95% half-width)."""
    summary = report["summary"]
    bars = summary.get("uncertainty") or {}
    table = Table(
        title=f"VisualToolBench results ({summary['context_policy']}; %, ±95% interval)",
        title_justify="left",
    )
    for header in ("group", "tasks", "APR", "ARS"):
        table.add_column(header, justify="left" if header == "group" else "right")
    n = summary["num_tasks"]
    table.add_row(
        "[bold]overall[/bold]",
        str(n),
        *_cells(summary | {"n": n}, bars.get("overall")),
        end_section=True,
    )
    for key, label in _SECTIONS:
        groups = summary[key]
        group_bars = bars.get(key) or {}
        for position, (name, stats) in enumerate(groups.items()):
            table.add_row(
                f"{label}: {name}",
                str(stats["n"]),
                *_cells(stats, group_bars.get(str(name))),
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
