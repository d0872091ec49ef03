"""The scorer registry: source dataset name -> scorer module, in one table.

Names are matched exactly and case-sensitively, as in the reference; any other name takes the
evaluator's fallback path (final-answer extraction + case-insensitive exact match).
"""

from __future__ import annotations

from datbench_cli.scorers import (
    ai2d,
    cc_ocr_doc_parsing,
    cc_ocr_kie,
    cc_ocr_multi_scene_ocr,
    chartqa,
    chartqapro,
    charxiv,
    countbench,
    docvqa,
    infovqa,
    logicvista,
    mathverse,
    mathvision,
    mathvista,
    mmbench,
    mme_realworld,
    mmmu,
    mmmupro,
    ocrbench_v2,
    ocrvqa,
    pixmo_points_eval,
    realworldqa,
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
    "cc-ocr-doc_parsing": cc_ocr_doc_parsing,
    "cc-ocr-kie": cc_ocr_kie,
    "ocrbench-v2": ocrbench_v2,
    # Counting
    "countbench": countbench,
    "tallyqa": tallyqa,
    # Scene text
    "text-vqa": textvqa,
    "cc-ocr-multi_scene_ocr": cc_ocr_multi_scene_ocr,
    # General
    "vqa-v2": vqav2,
    "ai2d": ai2d,
    "mmbench": mmbench,
    "mmmu": mmmu,
    "mmmupro": mmmupro,
    # Spatial
    "realworldqa": realworldqa,
    "mme-realworld-ocr": mme_realworld,
    "mme-realworld-ad": mme_realworld,
    "mme-realworld-mo": mme_realworld,
    "mme-realworld-dt": mme_realworld,
    # Charts
    "chartqa": chartqa,
    "chartqapro": chartqapro,
    "charxiv_descriptive": charxiv,
    "charxiv_reasoning": charxiv,
    # Math
    "mathvista": mathvista,
    "mathverse_reasoning": mathverse,
    "mathverse_wo": mathverse,
    "mathvision": mathvision,
    "logicvista": logicvista,
}


def get_scorer(dataset_name: str) -> Scorer | None:
    """The scorer registered for ``dataset_name``, or ``None`` (the fallback path)."""
    return SCORERS.get(dataset_name)


__all__ = ["SCORERS", "Scorer", "get_scorer"]
