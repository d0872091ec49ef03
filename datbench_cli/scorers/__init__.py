"""The scorer registry: source dataset name -> scorer module, in one table.

Names are matched exactly and case-sensitively, as in the reference; any other name takes the
evaluator's fallback path (final-answer extraction + case-insensitive exact match).
"""

from __future__ import annotations

from datbench_cli.scorers import (
    ai2d,
    logicvista,
    mmbench,
    mme_realworld,
    mmmu,
    mmmupro,
    realworldqa,
)
from datbench_cli.scorers.base import Scorer

SCORERS: dict[str, Scorer] = {
    "ai2d": ai2d,
    "logicvista": logicvista,
    "mmbench": mmbench,
    "mme-realworld-ad": mme_realworld,
    "mme-realworld-dt": mme_realworld,
    "mme-realworld-mo": mme_realworld,
    "mme-realworld-ocr": mme_realworld,
    "mmmu": mmmu,
    "mmmupro": mmmupro,
    "realworldqa": realworldqa,
}


def get_scorer(dataset_name: str) -> Scorer | None:
    """The scorer registered for ``dataset_name``, or ``None`` (the fallback path)."""
    return SCORERS.get(dataset_name)


__all__ = ["SCORERS", "Scorer", "get_scorer"]
