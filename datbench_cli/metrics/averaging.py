"""The plain mean the reference scorers report for their aggregates."""

from __future__ import annotations


def mean(values: list[float]) -> float:
    """``sum(values) / len(values)`` with Python's own ``sum``; 0.0 for an empty list."""
    return sum(values) / len(values) if values else 0.0
