"""The plain means the reference scorers report for their aggregates."""

from __future__ import annotations

from typing import Any


def mean(values: list[float]) -> float:
    """``sum(values) / len(values)`` with Python's own ``sum``; 0.0 for an empty list."""
    return sum(values) / len(values) if values else 0.0


def mean_score(predictions: list[dict[str, Any]]) -> float:
    """Mean of each item's ``score`` (items may be bare details); 0.0 for no items."""
    return mean([item.get("score_details", item).get("score", 0.0) for item in predictions])
