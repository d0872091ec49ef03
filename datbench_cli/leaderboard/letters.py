"""Compact letter display by Piepho's insert-and-absorb (Piepho 2004, "An algorithm for a
letter-based representation of all-pairwise comparisons"; the algorithm of R's
multcompView::multcompLetters).

Groups that share a letter are not significantly different. Start with one letter joining
every group; for each significant pair, split every letter that joins both into two (one
without each member), then drop any letter whose members are a subset of another's. Letters
are named a, b, ... in the order of their best member, so with the groups ordered best first
the best gets "a".
"""

from __future__ import annotations

import string
from collections.abc import Iterable, Sequence

_NAMES = string.ascii_lowercase + string.ascii_uppercase


def _absorb(columns: list[frozenset[int]]) -> list[frozenset[int]]:
    kept: list[frozenset[int]] = []
    for index, column in enumerate(columns):
        if any(column < other for other in columns):
            continue
        if column in columns[:index]:
            continue
        kept.append(column)
    return kept


def compact_letters(count: int, different: Iterable[tuple[int, int]]) -> list[str]:
    """The letters of ``count`` groups (index 0 first: order them best first) given the pairs
    ``(i, j)`` that differ significantly. Past 52 letters (54 runs that all differ: a long
    ``--trend``) the groups are numbered instead, joined by commas ("1,2")."""
    columns: list[frozenset[int]] = [frozenset(range(count))] if count else []
    for i, j in sorted({(min(p), max(p)) for p in different}):
        split: list[frozenset[int]] = []
        for column in columns:
            if i in column and j in column:
                split += [column - {j}, column - {i}]
            else:
                split.append(column)
        columns = _absorb(split)
    columns.sort(key=lambda column: (min(column), -len(column), sorted(column)))
    names: Sequence[str] = _NAMES
    joint = ""
    if len(columns) > len(_NAMES):  # was a ValueError: "internal error", exit 3
        names, joint = [str(k + 1) for k in range(len(columns))], ","
    return [
        joint.join(names[k] for k, column in enumerate(columns) if index in column)
        for index in range(count)
    ]
