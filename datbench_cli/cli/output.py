"""Terminal output: data on stdout, everything else (progress, warnings, errors) on stderr.

Colours and progress bars appear only when stderr is a terminal, and never with ``NO_COLOR``.
Every message and table cell may hold untrusted text (dataset names and ids, model output, file
names): it is printed as plain text, never read as rich markup, with control characters (escape
sequences, carriage returns, bidirectional overrides) shown escaped (:func:`plain`).
"""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from datbench_cli.runtime import interrupt
from datbench_cli.shown_text import CONTROL_RE, json_escaped, plain, shortened


class RateColumn(ProgressColumn):
    """Items per second (or per minute when slow)."""

    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        if speed is None:
            return Text(f"- {self.unit}/s")
        if speed < 1:
            return Text(f"{speed * 60:.1f} {self.unit}/min")
        return Text(f"{speed:.1f} {self.unit}/s")


class StatusColumn(ProgressColumn):
    """A line of live counts ("12 answered, 0 failed, 3 retrying"), read at each refresh."""

    def __init__(self, status: Callable[[], str]) -> None:
        super().__init__()
        self.status = status

    def render(self, task: Task) -> Text:
        return Text(plain(self.status(), one_line=True))


class Output:
    """The two streams of a command, with its quiet setting."""

    def __init__(self, quiet: bool = False) -> None:
        no_color = bool(os.environ.get("NO_COLOR"))
        self.quiet = quiet
        self.err = Console(stderr=True, no_color=no_color, highlight=False, soft_wrap=True)
        self.out = Console(no_color=no_color, highlight=False, soft_wrap=True)
        if not self.out.is_terminal and not os.environ.get("COLUMNS"):
            # Piped or captured: lay tables out for a standard terminal.
            self.out = Console(no_color=no_color, highlight=False, soft_wrap=True, width=80)

    def warn(self, message: str) -> None:
        """A warning on stderr (suppressed by --quiet): one line, whatever the untrusted text
        in it (a newline in an id is shown escaped); on a terminal wrapped at words to its
        width with a hanging indent (the terminal's own wrap would cut a number or an id)."""
        if self.quiet:
            return
        text = plain(message, one_line=True)
        if not self.err.is_terminal:
            self.err.print(Text.assemble(("warning:", "yellow"), " ", text))
            return
        lines = textwrap.wrap(
            f"warning: {text}",
            max(self.err.width, 20),
            subsequent_indent="  ",
            break_long_words=False,
            break_on_hyphens=False,
        )
        self.err.print(Text.assemble(("warning:", "yellow"), lines[0][len("warning:") :]))
        for line in lines[1:]:
            self.err.print(Text(line))

    def info(self, message: str) -> None:
        """A progress/hint line on stderr (suppressed by --quiet), each of its lines cut as
        :func:`shortened` cuts a long one."""
        if not self.quiet:
            lines = (plain(shortened(line)) for line in message.split("\n"))
            self.err.print(Text("\n".join(lines)))

    def data(self, text: str) -> None:
        """Plain data on stdout, never wrapped or coloured."""
        text = plain(text)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()

    def json(self, document: bytes) -> None:
        """A JSON document on stdout. The control characters JSON allows raw in a string (C1
        codes, bidirectional marks, line separators, invisible characters) are written as
        ``\\u`` escapes: the document reads back the same and shows nothing on a terminal
        (``\\x`` escapes, as :meth:`data` writes them, are not JSON)."""
        text = CONTROL_RE.sub(json_escaped, document.decode())
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    @property
    def width(self) -> int:
        """The width tables on stdout are laid out for (80 when piped without ``COLUMNS``)."""
        return self.out.width

    @property
    def terminal(self) -> bool:
        """Whether stdout is a terminal (off one, tables are markdown at natural width)."""
        return self.out.is_terminal

    @contextmanager
    def progress(
        self,
        description: str,
        total: int | None,
        rate_unit: str | None = None,
        status: Callable[[], str] | None = None,
    ) -> Iterator[Any]:
        """A progress bar on stderr, shown only when stderr is a terminal; yields
        ``advance(n=1, total=None)`` (``total`` sets the bar's length once it is known).

        ``rate_unit`` adds a rate column ("12.3 req/s"); ``status`` a column of live counts.
        """
        enabled = self.err.is_terminal and not self.quiet and not os.environ.get("NO_COLOR")
        columns: tuple[ProgressColumn, ...] = (
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            *((RateColumn(rate_unit),) if rate_unit else ()),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            *((StatusColumn(status),) if status else ()),
        )
        with Progress(*columns, console=self.err, disable=not enabled, transient=True) as bar:
            task = bar.add_task(description, total=total)

            def advance(n: int = 1, total: int | None = None) -> None:
                interrupt.checkpoint()  # each counted step ends a Ctrl-C Python dropped
                if total is not None:
                    bar.update(task, total=total)
                if n:
                    bar.advance(task, n)

            yield advance


def error_line(message: str, label: str = "error") -> None:
    """One ``error:`` (or ``hint:``) sentence on stderr, on one line: a newline in untrusted
    text (an id) is shown escaped, so it cannot start a line of its own."""
    no_color = bool(os.environ.get("NO_COLOR"))
    colour = "red" if label == "error" else "cyan"
    Console(stderr=True, no_color=no_color, highlight=False, soft_wrap=True).print(
        Text.assemble((f"{label}:", colour), " ", plain(message, one_line=True))
    )
