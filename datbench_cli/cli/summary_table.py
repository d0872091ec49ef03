"""The terminal summary of any report: a benchmark's :class:`SummaryTable` as a rich table.

Every cell is plain text (never rich markup): group names come from the dataset.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from datbench_cli.benchmarks.base import SummaryTable


def render(summary: SummaryTable) -> Table:
    """The rich table: the group column left, numbers right, the first section in bold."""
    table = Table(title=summary.title, title_justify="left")
    for position, header in enumerate(summary.columns):
        if position == 0:
            table.add_column(header, no_wrap=True, min_width=24)
        else:
            table.add_column(header, justify="right")
    for number, section in enumerate(summary.sections):
        for position, cells in enumerate(section):
            style = "bold" if number == 0 else ""
            table.add_row(
                *(Text(cell, style=style if i == 0 else "") for i, cell in enumerate(cells)),
                end_section=position == len(section) - 1 and number < len(summary.sections) - 1,
            )
    return table
