"""The terminal summary of any report: a benchmark's :class:`SummaryTable` as a
:class:`~datbench_cli.cli.tables.TextTable` (laid out, never cut, by ``cli/tables.py``)."""

from __future__ import annotations

from datbench_cli.benchmarks.base import SummaryTable
from datbench_cli.cli.tables import TextTable


def text_table(summary: SummaryTable) -> TextTable:
    """The summary's sections as rows, a section break between two."""
    rows: list[list[str] | None] = []
    for number, section in enumerate(summary.sections):
        if number:
            rows.append(None)
        rows += section
    return TextTable(
        headers=summary.columns,
        rows=rows,
        optional=summary.optional,
        legend=summary.legend,
        title=summary.title,
    )
