"""Warnings that repeat per task or per line, printed once each with a count and examples."""

from __future__ import annotations

from collections.abc import Callable

from datbench_cli.errors import name_ids

Warn = Callable[[str], None]


def ignore(_: str) -> None:
    """A ``warn`` that drops the message."""
    return None


class Tally:
    """Collects ``(message, subject)`` pairs; :meth:`flush` sends one line per message."""

    def __init__(self) -> None:
        self._subjects: dict[str, list[str]] = {}

    def add(self, message: str, subject: str) -> None:
        """Record that ``message`` applies to ``subject`` (a task, turn or line)."""
        self._subjects.setdefault(message, []).append(subject)

    def flush(self, warn: Warn) -> None:
        """Send each message once, as ``message (N: a, b and 3 more)``, then forget them."""
        for message, subjects in self._subjects.items():
            warn(f"{message} ({len(subjects)}: {name_ids(subjects)})")
        self._subjects.clear()
