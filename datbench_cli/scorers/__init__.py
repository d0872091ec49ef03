"""The scorer registry: source dataset name -> scorer module, in one table.

Names are matched exactly and case-sensitively, as in the reference; any other name takes the
evaluator's fallback path (final-answer extraction + case-insensitive exact match).
"""

from __future__ import annotations

from datbench_cli.scorers import (
    countbench,
    docvqa,
    infovqa,
    ocrvqa,
    pixmo_points_eval,
    refcoco,
    tallyqa,
    textvqa,
    vqav2,
)
from datbench_cli.scorers.base import Scorer

SCORERS: dict[str, Scorer] = {
    # Grounding
    "pixmo_points_eval": pixmo_points_eval,
    "refcoco_testA": refcoco,
    "refcoco_testB": refcoco,
    "refcoco_plus_testA": refcoco,
    "refcoco_plus_testB": refcoco,
    "refcoco_m_val": refcoco,
    "refcocog_test": refcoco,
    # Documents
    "docvqa": docvqa,
    "ocr-vqa": ocrvqa,
    "infovqa": infovqa,
    # Counting
    "countbench": countbench,
    "tallyqa": tallyqa,
    # Scene text
    "text-vqa": textvqa,
    # General
    "vqa-v2": vqav2,
}


def get_scorer(dataset_name: str) -> Scorer | None:
    """The scorer registered for ``dataset_name``, or ``None`` (the fallback path)."""
    return SCORERS.get(dataset_name)


__all__ = ["SCORERS", "Scorer", "get_scorer"]
