"""Sample -> the dict a dataset scorer receives (the reference's ``_convert_sample_for_scorer``).

Mirrors the reference exactly, including the errors it raises for missing metadata: those become
recorded scorer errors carrying the same exception type and message.
"""

from __future__ import annotations

import json
from typing import Any

from datbench_cli.benchmarks.datbench.schema import DatBenchSample

COMMON_MCQ_FIELDS = ("options", "index2ans", "all_choices")

# dataset name -> metadata keys copied when present (no other effect).
_COPIED_FIELDS: dict[str, tuple[str, ...]] = {
    "mathvision": ("options", "options_struct", "correct_choice_letter"),
    "logicvista": ("options",),
    "cc-ocr-doc_parsing": ("l2_category",),
    "cc-ocr-kie": ("l2_category",),
    "cc-ocr-multi_scene_ocr": ("l2_category",),
    "ocrbench-v2": ("type", "eval", "bbox", "bbox_list", "content"),
    "chartqapro": ("question_type", "year_flags", "is_multi_turn"),
    "charxiv_descriptive": ("question_type",),
    "charxiv_reasoning": ("question_type",),
}

_PIXMO_REQUIRED = ("points_target", "points_mask", "has_target")


def parse_metadata(raw: Any) -> Any:
    """Metadata as the reference reads it: JSON text is parsed, anything else is ``raw or {}``.

    Quirk: ``"null"`` parses to ``None`` and the first membership test then raises ``TypeError``;
    ``"[]"`` gives a list in which no field is ever found. Invalid JSON raises ``JSONDecodeError``
    (the standard library's, so the message matches the reference).
    """
    if isinstance(raw, str):
        return json.loads(raw)
    return raw or {}


def _copy(target: dict[str, Any], metadata: Any, fields: tuple[str, ...]) -> None:
    for name in fields:
        if name in metadata:
            target[name] = metadata[name]


def build_scorer_input(sample: DatBenchSample) -> dict[str, Any]:
    """The scorer's view of a sample: base fields, common MCQ fields, dataset-specific fields."""
    dataset = sample.dataset
    metadata = parse_metadata(sample.metadata)
    out: dict[str, Any] = {
        "question_id": sample.id,
        "question": sample.question,
        "answer": sample.answer,
        "all_answers": sample.all_answers,
    }
    _copy(out, metadata, COMMON_MCQ_FIELDS)

    if dataset == "tallyqa":
        if "is_simple" not in metadata:
            raise ValueError(
                f"TallyQA sample {sample.id} missing required metadata field: is_simple"
            )
        out["is_simple"] = metadata["is_simple"]
    elif dataset == "vqa-v2":
        if "answer_type" not in metadata or "question_type" not in metadata:
            raise ValueError(
                f"VQAv2 sample {sample.id} missing required metadata: answer_type, question_type"
            )
        out["answer_type"] = metadata["answer_type"]
        out["question_type"] = metadata["question_type"]
    elif dataset.startswith("refcoco"):
        if "bbox" not in metadata:
            raise ValueError(f"RefCOCO sample {sample.id} missing required metadata field: bbox")
        out["bbox"] = metadata["bbox"]
    elif dataset == "pixmo_points_eval":
        missing = [name for name in _PIXMO_REQUIRED if name not in metadata]
        if missing:
            raise ValueError(f"Pixmo sample {sample.id} missing required metadata: {missing}")
        out["points"] = metadata["points_target"]
        out["masks"] = metadata["points_mask"]
        out["has_target"] = metadata["has_target"]
    elif dataset in _COPIED_FIELDS:
        _copy(out, metadata, _COPIED_FIELDS[dataset])
        if dataset == "ocrbench-v2":
            out["answers"] = sample.all_answers
        elif dataset == "chartqapro":
            out["all_answers"] = _chartqapro_answers(sample, metadata)
    return out


def _chartqapro_answers(sample: DatBenchSample, metadata: Any) -> Any:
    # Quirk: list metadata ("[]") raises AttributeError here, as in the reference.
    from_metadata = metadata.get("all_answers")
    if isinstance(from_metadata, list) and from_metadata:
        return from_metadata
    if sample.all_answers:
        return sample.all_answers
    return [sample.answer]
