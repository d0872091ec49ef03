"""The terminal summary of any report: a benchmark's :class:`SummaryTable` as a rich table.

Every cell is plain text (never rich markup): group names come from the dataset. Numbers are
never cut: when the terminal is too narrow, optional columns are dropped first and only the
group names wrap. Without a terminal (a pipe, a file, CI logs) the table has no box drawing.
"""

from __future__ import annotations

from rich import box
from rich.table import Table
from rich.text import Text

from datbench_cli.benchmarks.base import SummaryTable

# Rich's padding per column (one space each side), the group column's narrowest width, and
# the widest it asks for before optional columns go (longer names wrap).
_PAD = 2
_MIN_GROUP = 12
_GROUP_WANTED = 28


def _width_needed(summary: SummaryTable, keep: list[int]) -> int:
    rows = [row for section in summary.sections for row in section]
    widths = []
    for index in keep:
        cells = [summary.columns[index], *(row[index] for row in rows if index < len(row))]
        longest = max(len(cell) for cell in cells)
        widths.append(min(max(longest, _MIN_GROUP), _GROUP_WANTED) if index == 0 else longest)
    return sum(widths) + _PAD * len(keep) + len(keep) + 1


def columns_that_fit(summary: SummaryTable, width: int) -> list[int]:
    """The column indices to show at ``width``: all, or without the optional ones (dropped
    from the right) that do not fit."""
    keep = list(range(len(summary.columns)))
    for index in reversed(summary.optional):
        if _width_needed(summary, keep) <= width:
            break
        keep.remove(index)
    return keep


def render(summary: SummaryTable, width: int = 80, plain: bool = False) -> Table:
    """The rich table for a console ``width`` wide (``plain``: no box drawing)."""
    keep = columns_that_fit(summary, width)
    table = Table(
        title=summary.title,
        title_justify="left",
        box=None if plain else box.SIMPLE_HEAD,
        show_edge=not plain,
        pad_edge=False,
    )
    for index in keep:
        header = summary.columns[index]
        if index == 0:
            table.add_column(header, overflow="fold", ratio=1, min_width=_MIN_GROUP)
        else:
            table.add_column(header, justify="right", no_wrap=True)
    for number, section in enumerate(summary.sections):
        for position, cells in enumerate(section):
            style = "bold" if number == 0 else ""
            table.add_row(
                *(Text(cells[i], style=style if i == 0 else "") for i in keep),
                end_section=position == len(section) - 1 and number < len(summary.sections) - 1,
            )
    return table
