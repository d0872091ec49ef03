"""The scorer registry: source dataset name -> scorer module, in one table.

Names are matched exactly and case-sensitively, as in the reference; any other name takes the
evaluator's fallback path (final-answer extraction + case-insensitive exact match).
"""

from __future__ import annotations

from datbench_cli.scorers import mathvision
from datbench_cli.scorers.base import Scorer

SCORERS: dict[str, Scorer] = {
    "mathvision": mathvision,
}


def get_scorer(dataset_name: str) -> Scorer | None:
    """The scorer registered for ``dataset_name``, or ``None`` (the fallback path)."""
    return SCORERS.get(dataset_name)


__all__ = ["SCORERS", "Scorer", "get_scorer"]
