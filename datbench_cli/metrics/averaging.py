"""The plain means the reference scorers report for their aggregates."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


def float_sum(values: Iterable[Any]) -> Any:
    """Left-to-right addition, exactly as the built-in ``sum`` adds floats before Python 3.12.

    Python 3.12 made ``sum`` compensate rounding errors, which changes the last bits of many of
    the reference's aggregates (computed with the old behaviour); every float sum that decides a
    reported number goes through here so results are identical on every Python.
    """
    total = 0
    for value in values:
        total = total + value
    return total


def mean(values: Sequence[float]) -> float:
    """``float_sum(values) / len(values)``; 0.0 for an empty list."""
    return float_sum(values) / len(values) if values else 0.0


def mean_score(details: list[dict[str, Any]]) -> float:
    """Mean of each score-details dict's ``score`` (missing: 0.0); 0.0 for no items."""
    return mean([item.get("score", 0.0) for item in details])
