"""Every terminal table of ``datbench`` (score's summary, compare, check-judge, leaderboard):
laid out here, so that no number is ever cut.

A caller builds a :class:`TextTable` of cells that are already strings (numbers formatted
first), says which columns may be dropped and what each column means, and calls
:func:`render`. The table is measured before anything is printed:

- off a terminal (a pipe, a file, a CI log): a markdown table at its natural width, every
  column, never wrapped;
- on a terminal where it fits: aligned columns, cells never wrapped;
- too wide: optional columns are dropped (the last listed first) until it fits;
- still too wide: a stacked layout, one block per row, its ``header value`` pairs packed onto
  lines at pair boundaries (a pair wider than a line alone: its value on lines of its own,
  broken at its spaces if it must be, never inside a number).

The legend names only the columns shown and is wrapped at words.

Example::

    table = TextTable(
        headers=["model", "n", "score", "MDD80"],
        rows=[["run-a", "152", "61.2 ±7.7", "15.0"]],
        optional=[3],
        legend=[("MDD80", "MDD80: the smallest difference detectable at 80% power")],
    )
    rendered = render(table, width=80, terminal=True)
    print("\\n".join(rendered.lines))
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from rich.cells import cell_len

from datbench_cli.cli.output import Output
from datbench_cli.shown_text import MAX_CELL_CHARS, plain

# Between two aligned columns, and between two pairs of a stacked block.
_GAP = "  "
_PAIR_GAP = "   "


@dataclass(frozen=True)
class TextTable:
    """A table of text cells.

    ``headers``: one per column; the first column names the row (left-aligned), the others are
    right-aligned. ``rows``: cells already formatted as strings; ``None`` in place of a row
    starts a new section (a blank line on a terminal). ``optional``: indices of the columns a
    narrow terminal may drop, the last listed first. ``legend``: ``(header, text)`` lines shown
    under the table when a column with that header is shown (a header that names no column:
    always shown). ``title``: a line above the table.
    """

    headers: Sequence[str]
    rows: Sequence[Sequence[str] | None]
    optional: Sequence[int] = ()
    legend: Sequence[tuple[str, str]] = field(default_factory=tuple)
    title: str = ""


@dataclass(frozen=True)
class Rendered:
    """The lines of a rendered table and the headers of the columns it shows (as the table
    names them, before any is cut)."""

    lines: list[str]
    shown: list[str]


def _cells(table: TextTable) -> tuple[list[str], list[list[str] | None]]:
    """Headers and rows as single-line plain text (untrusted text escaped, a long header or cell
    cut in the middle: numbers are far shorter), every row as long as the headers."""
    headers = [plain(h, one_line=True, limit=MAX_CELL_CHARS) for h in table.headers]
    rows: list[list[str] | None] = []
    for row in table.rows:
        if row is None:
            rows.append(None)
            continue
        cells = [plain(str(c), one_line=True, limit=MAX_CELL_CHARS) for c in row]
        rows.append(cells + [""] * (len(headers) - len(cells)))
    return headers, rows


def _widths(headers: list[str], rows: list[list[str] | None], keep: list[int]) -> list[int]:
    body = [r for r in rows if r is not None]
    return [max(cell_len(c) for c in [headers[i], *(r[i] for r in body)]) for i in keep]


def natural_width(table: TextTable, keep: Sequence[int] | None = None) -> int:
    """The width of the aligned layout of ``table`` with the columns ``keep`` (all by
    default)."""
    headers, rows = _cells(table)
    columns = list(range(len(headers))) if keep is None else list(keep)
    return sum(_widths(headers, rows, columns)) + len(_GAP) * (len(columns) - 1)


def columns_that_fit(table: TextTable, width: int) -> list[int] | None:
    """The columns the aligned layout shows at ``width``: all, or without optional ones (the
    last listed dropped first); ``None`` when even without every optional column it is too
    wide (the stacked layout then)."""
    keep = list(range(len(table.headers)))
    for index in [None, *reversed(table.optional)]:
        if index is not None and index in keep:
            keep.remove(index)
        if natural_width(table, keep) <= width:
            return keep
    return None


def _pad(text: str, width: int, right: bool) -> str:
    space = " " * (width - cell_len(text))
    return space + text if right else text + space


def _aligned(headers: list[str], rows: list[list[str] | None], keep: list[int]) -> list[str]:
    widths = _widths(headers, rows, keep)

    def line(cells: list[str]) -> str:
        return _GAP.join(
            _pad(cells[i], w, right=n > 0)
            for n, (i, w) in enumerate(zip(keep, widths, strict=True))
        ).rstrip()

    lines = [line(headers), "\u2500" * (sum(widths) + len(_GAP) * (len(keep) - 1))]
    for row in rows:
        if row is None:
            if lines[-1]:
                lines.append("")
        else:
            lines.append(line(row))
    return lines


# What a markdown reader would take as markup in untrusted text (a model's name, a label, a
# group): a pipe (a cell's end), ``<`` (raw HTML such as ``<img onerror=...>``, an autolink),
# ``&`` starting an entity, ``](`` (a link or image) and a backslash before punctuation (which
# would undo the escapes). Each gets a backslash, which CommonMark reads as "this character".
_MARKUP_RE = re.compile(r"\\(?=[!-/:-@\[-`{-~])|[|<]|&(?=#?\w+;)|\](?=\()")


def _markdown_cell(text: str) -> str:
    return _MARKUP_RE.sub(lambda found: "\\" + found.group(), text)


def _markdown(headers: list[str], rows: list[list[str] | None]) -> list[str]:
    body = [[_markdown_cell(c) for c in r] for r in rows if r is not None]
    heads = [_markdown_cell(h) for h in headers]
    keep = list(range(len(heads)))
    widths = [max(3, w) for w in _widths(heads, list(body), keep)]

    def line(cells: list[str]) -> str:
        return (
            "| "
            + " | ".join(
                _pad(c, w, right=n > 0) for n, (c, w) in enumerate(zip(cells, widths, strict=True))
            )
            + " |"
        )

    rule = (
        "| "
        + " | ".join(("-" * w if n == 0 else "-" * (w - 1) + ":") for n, w in enumerate(widths))
        + " |"
    )
    return [line(heads), rule, *(line(r) for r in body)]


def _stacked(
    headers: list[str], rows: list[list[str] | None], keep: list[int], width: int
) -> list[str]:
    lines: list[str] = []
    for row in rows:
        if row is None:
            if lines and lines[-1]:
                lines.append("")
            continue
        name = row[keep[0]]
        lines.append(name)
        indent = " " * (len(name) - len(name.lstrip()) + 2)
        current = ""
        for i in keep[1:]:
            if not row[i]:
                continue
            pair = f"{headers[i]} {row[i]}" if headers[i] else row[i]
            candidate = f"{current}{_PAIR_GAP}{pair}" if current else pair
            if current and cell_len(indent + candidate) > width:
                lines.append(indent + current)
                candidate = pair
            if cell_len(indent + candidate) > width:
                # Wider than the line alone: the terminal would wrap it inside the value, so
                # the value goes on lines of its own.
                if headers[i]:
                    lines.append(indent + headers[i])
                lines += _value_lines(row[i], indent + "  ", width)
                candidate = ""
            current = candidate
        if current:
            lines.append(indent + current)
    return lines


def _value_lines(value: str, indent: str, width: int) -> list[str]:
    """``value`` on lines of its own: at ``indent`` when it fits there, else further left,
    else broken at its spaces, never inside a number."""
    for lead in (indent, ""):
        if cell_len(lead + value) <= width:
            return [lead + value]
    tokens = value.split(" ")
    lead = indent if max(map(cell_len, tokens)) + cell_len(indent) <= width else ""
    lines: list[str] = []
    current = ""
    for token in tokens:
        candidate = f"{current} {token}" if current else token
        if current and cell_len(lead + candidate) > width:
            lines.append(lead + current)
            candidate = token
        current = candidate
    return [*lines, lead + current]


def render(table: TextTable, width: int, terminal: bool) -> Rendered:
    """The lines of ``table`` for an output ``width`` columns wide; ``terminal`` False: the
    markdown layout at natural width (``width`` is then ignored)."""
    headers, rows = _cells(table)
    title = [plain(table.title, one_line=True)] if table.title else []
    if not terminal:
        title = [_markdown_cell(line) for line in title]
        if title:
            title.append("")
        return Rendered(title + _markdown(headers, rows), list(table.headers))
    title = [line for t in title for line in textwrap.wrap(t, width, break_long_words=False)]
    keep = columns_that_fit(table, width)
    if keep is not None:
        return Rendered(title + _aligned(headers, rows, keep), [table.headers[i] for i in keep])
    required = [i for i in range(len(headers)) if i not in table.optional]
    return Rendered(
        title + _stacked(headers, rows, required, width), [table.headers[i] for i in required]
    )


def legend_lines(
    entries: Iterable[tuple[str, str]], headers: Sequence[str], shown: Iterable[str], width: int
) -> list[str]:
    """The legend entries for the ``shown`` columns (and those naming no column of
    ``headers``), each wrapped at words to ``width`` with a hanging indent."""
    visible, known = set(shown), set(headers)
    lines: list[str] = []
    seen: set[str] = set()
    for header, text in entries:
        if (header in known and header not in visible) or text in seen:
            continue
        seen.add(text)
        lines += _wrapped(text, width)
    return lines


def _wrapped(text: str, width: int) -> list[str]:
    """A note on stderr (untrusted text on one line) wrapped at words to ``width``, with a
    hanging indent."""
    return textwrap.wrap(
        plain(text, one_line=True),
        max(width, 20),
        subsequent_indent="  ",
        break_long_words=False,
        break_on_hyphens=False,
    )


def show(out: Output, tables: Sequence[TextTable]) -> None:
    """``tables`` on stdout, laid out for ``out``'s width (markdown when stdout is not a
    terminal), then one legend on stderr naming the columns any of them shows, and a line
    naming the columns left out at this width: of every table, and of some tables only
    (nothing with ``--quiet``)."""
    if out.quiet:
        return
    shown: list[str] = []
    dropped: list[tuple[str, list[str]]] = []
    for number, table in enumerate(tables):
        rendered = render(table, out.width, out.terminal)
        out.data("\n".join(([""] if number else []) + rendered.lines))
        shown += rendered.shown
        dropped.append((table.title, [h for h in table.headers if h not in rendered.shown]))
    headers = [h for t in tables for h in t.headers]
    entries = [e for t in tables for e in t.legend]
    for line in legend_lines(entries, headers, shown, out.err.width):
        out.info(line)
    for line in _wrapped(_left_out_note(headers, set(shown), dropped), out.err.width):
        out.info(line)


def notes(out: Output, lines: Iterable[str]) -> None:
    """The lines under the tables on stderr, each on one line (untrusted text escaped); on a
    terminal wrapped at words to its width, as the legend is (the terminal's own wrap would
    cut a number in two)."""
    for line in lines:
        parts = _wrapped(line, out.err.width) if out.err.is_terminal else [line]
        for part in parts:
            out.info(plain(part, one_line=True))


def _left_out_note(
    headers: Sequence[str], visible: set[str], dropped: Sequence[tuple[str, list[str]]]
) -> str:
    """The line naming the columns no table shows, then those some table shows but another
    (named by its title) leaves out; ``""`` when every table shows every column."""
    left_out = [h for h in dict.fromkeys(headers) if h and h not in visible]
    parts = []
    if left_out:
        parts.append(f"{len(left_out)} column(s) left out at this width: {', '.join(left_out)}")
    for title, columns in dropped:
        partly = [h for h in columns if h and h in visible]
        if partly:
            parts.append(f"{', '.join(partly)} left out of {title or 'a table'}")
    if not parts:
        return ""
    return "; ".join(parts) + " (a wider terminal or a pipe shows every column)"
