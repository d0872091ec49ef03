"""Linear-time replacements for regex searches that backtrack quadratically (the boxed ones
are in :mod:`datbench_cli.text.boxed`).

Each function returns exactly what the named reference regex returns, but a hostile output (a
million backslashes, unclosed brackets or one endless digit run) costs linear time, not hours.
"""

from __future__ import annotations

import re
from typing import Any

_ANY_RE = re.compile("")


def require_text(value: object) -> None:
    """Raise the ``TypeError`` that ``re`` raises when handed something that is not a string."""
    if not isinstance(value, str):
        _ANY_RE.search(value)  # type: ignore[call-overload]


def first_bracketed(text: str) -> str | None:
    r"""The whole span (brackets included) of ``re.search(r"\[([^\]]+)\]", text)``, or ``None``.

    The match starts at the first ``[`` whose next ``]`` exists and is not adjacent to it.
    """
    require_text(text)
    position = 0
    while True:
        start = text.find("[", position)
        if start < 0:
            return None
        end = text.find("]", start + 1)
        if end < 0:
            return None
        if end > start + 1:
            return text[start : end + 1]
        position = start + 1


class DigitLedPattern:
    r"""``findall`` for a pattern that starts with a greedy ``\d+``, in linear time.

    If such a pattern matches at ``q`` and the character before ``q`` is a digit, it also matches
    one character earlier (the leading ``\d+`` simply takes that digit too). So the leftmost match
    at or after ``pos + 1`` never follows a digit that lies at or after ``pos``, and a copy of the
    pattern guarded by ``(?<!\d)`` finds the same matches without re-scanning every digit run from
    each of its positions. Only the attempt exactly at the resume position ``pos`` may follow a
    digit (the previous match's last one), so it is tried with the unguarded pattern.
    """

    def __init__(self, pattern: str) -> None:
        self.plain = re.compile(pattern)
        self.guarded = re.compile(r"(?<!\d)(?:" + pattern + ")")

    def findall(self, text: str) -> list[Any]:
        """What ``re.findall(pattern, text)`` returns (group tuples for several groups)."""
        found: list[Any] = []
        position = 0
        length = len(text)
        while position < length:
            match = self.plain.match(text, position) or self.guarded.search(text, position + 1)
            if match is None:
                break
            found.append(_findall_item(match))
            position = match.end()
        return found


def _findall_item(match: re.Match[str]) -> Any:
    groups = match.groups("")  # findall reports a group that took no part as ""
    if not groups:
        return match.group(0)
    if len(groups) == 1:
        return groups[0]
    return groups
