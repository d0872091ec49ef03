"""RefCOCO / RefCOCO+ / RefCOCOg referring-expression grounding: one box, scored by IoU."""

from __future__ import annotations

import re
from itertools import islice
from typing import Any

from datbench_cli.metrics.averaging import mean
from datbench_cli.metrics.geometry import box_iou, center_inside, clamp_unit
from datbench_cli.scorers.base import SampleFields, default_input, required_field
from datbench_cli.text.boxed import all_boxed
from datbench_cli.text.scan import first_bracketed

KNOWN_DEFECT = (
    "Only the last \\boxed{} and the first [...] span are read, and a box whose largest "
    "coordinate exceeds 1.5 is taken as a 0-1000 grid, so pixel-coordinate answers score as misses."
)

# Quirk: no leading-dot decimals (".5" reads as "5") and no exponents.
_NUMBER_RE = re.compile(r"-?\d+(?:\.\d+)?")
_THRESHOLDS = (0.3, 0.5, 0.7)
_EMPTY_BOX = (0.0, 0.0, 0.0, 0.0)
# A box whose largest absolute value is at most this is already normalized.
_NORMALIZED_LIMIT = 1.5


def parse_box(text: Any) -> list[float]:
    """The first four numbers of the last boxed block, else of the first ``[...]`` span.

    A candidate with fewer than four numbers passes to the next one; none → all zeros.
    """
    if not text:
        return list(_EMPTY_BOX)
    candidates = []
    boxed = all_boxed(text)
    if boxed:
        candidates.append(boxed[-1])
    # Quirk: only the first bracketed span is tried, brackets included.
    bracketed = first_bracketed(text)
    if bracketed is not None:
        candidates.append(bracketed)
    for candidate in candidates:
        numbers = [m.group() for m in islice(_NUMBER_RE.finditer(candidate), 4)]
        if len(numbers) == 4:
            return [float(n) for n in numbers]
    return list(_EMPTY_BOX)


def normalize_box(box: list[float]) -> list[float]:
    """Scale to [0, 1] and clamp, without re-ordering the corners."""
    # Quirk: one |value| above 1.5 makes all four read as a 0-1000 grid (pixels are misread too).
    if not max(abs(v) for v in box) <= _NORMALIZED_LIMIT:
        box = [v / 1000.0 for v in box]
    # Quirk: an inverted box is kept inverted (its area, hence its IoU, is zero).
    return [clamp_unit(v) for v in box]


def scorer_input(sample: SampleFields, metadata: Any) -> dict[str, Any]:
    """The default input plus the required target ``bbox``."""
    out = default_input(sample, metadata)
    out["bbox"] = required_field(sample, metadata, "RefCOCO", "bbox")
    return out


def score_sample(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """IoU against the metadata box; the score is recall at IoU 0.5."""
    predicted = normalize_box(parse_box(model_output))
    target = sample["bbox"]
    iou = box_iou(target, predicted)
    details: dict[str, Any] = {
        "iou": iou,
        # Quirk: the all-zero fallback box has its centre at the origin.
        "center_acc": 1.0 if center_inside(target, predicted) else 0.0,
        "pred_bbox": predicted,
        "gt_bbox": target,
        "model_output": model_output,
    }
    for threshold in _THRESHOLDS:
        details[f"recall@{threshold}"] = 1.0 if iou >= threshold else 0.0
    details["score"] = details["recall@0.5"]
    return details


def compute_metrics(predictions: list[dict[str, Any]]) -> dict[str, Any]:
    """Means of recall@0.5, IoU (twice, as ``iou_mean`` and ``iou``), centre accuracy, recalls."""
    if not predictions:
        return {}
    details = predictions
    recalls = {t: mean([d.get(f"recall@{t}", 0.0) for d in details]) for t in _THRESHOLDS}
    iou = mean([d.get("iou", 0.0) for d in details])
    # Quirk: "recall@0.5" is written first and again in the loop (same value, same position).
    metrics: dict[str, Any] = {
        "recall@0.5": recalls[0.5],
        "iou_mean": iou,
        "iou": iou,
        "center_acc": mean([d.get("center_acc", 0.0) for d in details]),
    }
    for threshold in _THRESHOLDS:
        metrics[f"recall@{threshold}"] = recalls[threshold]
    return metrics
