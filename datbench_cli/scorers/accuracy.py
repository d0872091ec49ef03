"""The mean-score aggregate most scorers' ``compute_metrics`` report as accuracy."""

from __future__ import annotations

from typing import Any


def mean_score(predictions: list[dict[str, Any]]) -> float:
    """Mean of each item's ``score`` (items may be bare details); 0.0 for no items."""
    scores = [item.get("score_details", item).get("score", 0.0) for item in predictions]
    return sum(scores) / len(scores) if scores else 0.0
