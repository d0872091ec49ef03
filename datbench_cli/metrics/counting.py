"""Aggregates shared by the counting scorers: accuracy, parse rate, MAE and within-k rates."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from datbench_cli.metrics.averaging import float_sum

# Parsed counts outside [0, MAX_COUNT] are treated as unparsed; errors above it are dropped.
MAX_COUNT = 1_000_000


def sanitized_count(parsed: Any) -> int | None:
    """``int(parsed)`` when that works and lies in [0, MAX_COUNT], else ``None``."""
    try:
        count = int(parsed)
    except Exception:  # noqa: BLE001 - the reference skips whatever int() rejects
        return None
    if count < 0 or count > MAX_COUNT:
        return None
    return count


@dataclass
class CountTally:
    """Running totals over one dataset's samples (``n_total`` is every sample)."""

    n_total: int
    scores: list[float] = field(default_factory=list)
    n_parsed: int = 0
    n_correct_parses: int = 0
    errors: list[int] = field(default_factory=list)

    def add_score(self, details: dict[str, Any]) -> float | None:
        """Record ``details["score"]`` (0.0 if it is not a number); ``None`` when absent."""
        if "score" not in details:
            return None
        try:
            value = float(details.get("score", 0.0))
        except Exception:  # noqa: BLE001
            value = 0.0
        self.scores.append(value)
        return value

    def add_parse(self, parsed: Any, truth: int | None) -> int | None:
        """Record a parsed count; returns its absolute error when one was recorded."""
        if parsed is None:
            return None
        count = sanitized_count(parsed)
        if count is None:
            return None
        self.n_parsed += 1
        if truth is None:
            return None
        if count == int(truth):
            self.n_correct_parses += 1
        error = abs(count - int(truth))
        if error > MAX_COUNT:
            return None
        self.errors.append(error)
        return error

    def accuracy(self) -> float:
        """Mean score when every sample had one, else the share of exactly right parses."""
        if len(self.scores) == self.n_total and self.n_total > 0:
            return float(float_sum(self.scores) / self.n_total)
        return float(self.n_correct_parses) / self.n_total if self.n_total > 0 else 0.0

    def parse_rate(self) -> float:
        """Share of all samples whose count was parsed and sane."""
        return float(self.n_parsed) / self.n_total if self.n_total > 0 else 0.0

    def mean_absolute_error(self) -> float:
        """Mean absolute error over parsed samples with a ground truth (0.0 if none).

        The errors are integers, so this exact-sum mean equals the reference's ``numpy.mean``.
        """
        return float_sum(self.errors) / len(self.errors) if self.errors else 0.0

    def within(self, tolerance: int) -> float:
        """Share of ALL samples whose error is at most ``tolerance``."""
        if self.n_total <= 0:
            return 0.0
        return sum(1 for e in self.errors if e <= tolerance) / self.n_total
