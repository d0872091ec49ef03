"""OCRBench v2 grounding: half answer match, half box IoU."""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from datbench_cli.runtime.budget import SampleTimeout
from datbench_cli.scorers.ocrbench_v2_answers import vqa

_BOX_RE = re.compile(r"[\(\[]\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*[\)\]]")


def last_box(text: str) -> list[int] | None:
    """The last distinct 0..1000 box written as ``(x1, y1, x2, y2)`` or ``[x1, y1, x2, y2]``.

    Quirk: a repeated box keeps its first position, so in ``[A] [B] [A]`` the answer is B.
    """
    distinct: dict[tuple[int, ...], None] = {}
    for found in _BOX_RE.finditer(text):
        box = tuple(map(int, found.groups()))
        if all(0 <= value <= 1000 for value in box):
            distinct.setdefault(box, None)
    return list(next(reversed(distinct))) if distinct else None


def iou(first: Any, second: Any) -> float:
    """Intersection over union of two boxes, coordinates truncated to ints.

    Quirk: areas are not clamped, so an inverted box has a negative area.
    """
    try:
        first = [int(value) for value in first]
        second = [int(value) for value in second]
    except Exception:  # the reference scores any unconvertible box 0
        return 0.0
    width = max(0, min(first[2], second[2]) - max(first[0], second[0]))
    height = max(0, min(first[3], second[3]) - max(first[1], second[1]))
    inter = width * height
    union = (
        (first[2] - first[0]) * (first[3] - first[1])
        + (second[2] - second[0]) * (second[3] - second[1])
        - inter
    )
    return inter / union if union != 0 else 0.0


def _as_mapping(text: Any) -> Any:
    for parse in (json.loads, ast.literal_eval):
        try:
            return parse(text)
        except SampleTimeout:
            raise
        except Exception:  # unparseable output is free-form text
            continue
    return None


def _box_score(predicted: Any, gt_box: Any) -> float:
    try:
        return iou(ast.literal_eval(str(predicted)), gt_box)
    except SampleTimeout:
        raise
    except Exception:
        return 0.0


def vqa_with_position(predict: Any, sample: dict[str, Any]) -> float:
    """``0.5 * answer match + 0.5 * IoU`` from a JSON/dict output with ``answer``/``bbox``, else
    from the whole text and its last box."""
    answers = sample.get("answers", [])
    parsed = _as_mapping(predict)
    content: int | float = 0.0
    box: float = 0.0
    if isinstance(parsed, dict) and "answer" in parsed:
        content = vqa(parsed["answer"], answers)
        if "bbox" in parsed and sample.get("bbox"):
            box = _box_score(parsed["bbox"], sample["bbox"])
    else:
        found = last_box(predict)
        if found and sample.get("bbox"):
            box = iou(found, sample["bbox"])
        content = vqa(predict, answers)
    return 0.5 * content + 0.5 * box
