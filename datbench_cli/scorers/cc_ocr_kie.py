"""CC-OCR key information extraction (``cc-ocr-kie``).

The prediction and the GT are parsed as JSON; the score is the mean of a set-based field F1 and
an nTED accuracy (Zhang-Shasha distance over key-sorted label trees, character-weighted costs).
"""

from __future__ import annotations

import json
import re
from typing import Any

from datbench_cli.metrics.averaging import float_sum
from datbench_cli.metrics.ocr_text import first_pipe_box, to_halfwidth
from datbench_cli.metrics.teds import (
    json_label_tree,
    label_weight,
    weighted_tree_distance,
)
from datbench_cli.runtime.budget import SampleTimeout
from datbench_cli.scorers.base import SampleFields, default_input
from datbench_cli.text.boxed import balanced_boxed

_JSON_FENCE_RE = re.compile(r"```json\s*", re.IGNORECASE)
_FENCE_RE = re.compile(r"```\s*")
_WHITESPACE_RE = re.compile(r"\s+")
_DECODER = json.JSONDecoder()
_ROOT = "root"


def _first_braced_object(text: str) -> Any:
    """The reference's recovery scan, in linear time.

    The reference counts braces from the first ``{`` and, each time the count returns to 0 at
    index ``i``, tries ``json.loads(text[first:i + 1])``. At most one such slice can parse: the
    JSON value that starts at ``first``. So: decode that value once and accept it iff the naive
    brace count over its span is 0 (braces inside strings count too).
    """
    first = text.find("{")
    if first == -1:
        return {}
    try:
        value, end = _DECODER.raw_decode(text, first)
    except SampleTimeout:
        raise
    except Exception:
        return {}
    span = text[first:end]
    # Quirk: braces inside JSON strings are counted too, so '{"a": "}"}' is not recovered.
    if span.count("{") != span.count("}"):
        return {}
    return value


def extract_json(text: Any) -> Any:
    """The JSON value in a model output or GT string (``{}`` when there is none)."""
    if not isinstance(text, str):
        return {}
    boxed = first_pipe_box(text)
    if boxed is None:
        boxed = balanced_boxed(text)
    if boxed is not None:
        text = boxed.strip()
    text = _FENCE_RE.sub("", _JSON_FENCE_RE.sub("", text)).strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return _first_braced_object(text)


def _normalize_text(text: str) -> str:
    return _WHITESPACE_RE.sub(" ", to_halfwidth(text)).strip()


def normalize_value(data: Any) -> Any:
    """Normalise the strings of a dict, recursively (anything but a dict is returned as is)."""
    if not isinstance(data, dict):
        return data
    normalized: dict[Any, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            normalized[key] = normalize_value(value)
        elif isinstance(value, list):
            # Quirk: non-dict list items become strings (numbers, nested lists as their repr).
            normalized[key] = [
                normalize_value(item) if isinstance(item, dict) else _normalize_text(str(item))
                for item in value
            ]
        elif isinstance(value, str):
            normalized[key] = _normalize_text(value)
        else:
            normalized[key] = value
    return normalized


def _field_set(value: Any) -> set[tuple[Any, str]]:
    """``(dotted path, str(leaf))`` pairs; list items share their parent's path."""
    fields: set[tuple[Any, str]] = set()
    pending: list[tuple[Any, Any]] = [(value, "")]
    while pending:
        data, path = pending.pop()
        if isinstance(data, dict):
            for key, item in data.items():
                pending.append((item, f"{path}.{key}" if path else key))
        elif isinstance(data, list):
            pending.extend((item, path) for item in data)
        else:
            fields.add((path, str(data)))
    return fields


def field_f1(pred: Any, gt: Any) -> float:
    """Set-based field F1 over normalised values."""
    pred_fields, gt_fields = _field_set(pred), _field_set(gt)
    hits = len(pred_fields & gt_fields)
    extra = len(pred_fields - gt_fields)
    missed = len(gt_fields - pred_fields)
    # Quirk: the 1e-6 in the denominator keeps a perfect match just below 1 and gives 0 for
    # two empty sides.
    f1 = hits / (hits + (extra + missed) / 2.0 + 1e-6)
    return min(1.0, max(0.0, f1))


def nted_accuracy(pred: Any, gt: Any, f1: float) -> float:
    """``1 - TED(pred, gt) / TED(root, gt)``, clamped; ``f1`` if the distance computation fails.

    Every edit changes a tree's total label length by at most its cost, so TED(pred, gt) is at
    least the difference of the totals; when that bound already reaches TED(root, gt), the
    accuracy is exactly 0 and the distance is not computed. The result is a Python float where
    the reference returns numpy float64 (same value; it only changed the type of is_correct).
    """
    from zss import Node

    pred_tree, gt_tree = json_label_tree(pred), json_label_tree(gt)
    try:
        gt_distance = weighted_tree_distance(Node(_ROOT), gt_tree)
        lower_bound = abs(label_weight(pred_tree) - label_weight(gt_tree))
        if lower_bound > 0 and lower_bound >= gt_distance:
            return 0.0
        pred_distance = weighted_tree_distance(pred_tree, gt_tree)
    except SampleTimeout:
        raise
    except Exception:
        return f1
    if gt_distance == 0:
        # Quirk: a GT without labels is matched only by a distance of 0 ({} vs {} gives 1.0).
        return 1.0 if pred_distance == 0 else 0.0
    return min(1.0, max(0.0, 1.0 - pred_distance / gt_distance))


def scorer_input(sample: SampleFields, metadata: Any) -> dict[str, Any]:
    """The default input plus ``l2_category`` when the metadata has it."""
    return default_input(sample, metadata, ("l2_category",))


def score_sample(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """Score one sample: mean of field F1 and nTED accuracy."""
    ground_truth = sample.get("answer") or sample.get("ground_truth_answer", "")
    pred = normalize_value(extract_json(model_output))
    gt = normalize_value(extract_json(ground_truth))
    f1 = field_f1(pred, gt)
    nted = nted_accuracy(pred, gt, f1)
    return {
        "score": (f1 + nted) / 2.0,
        "f1_score": f1,
        "nted_score": nted,
        "l2_category": sample.get("l2_category", ""),
        "ground_truth": ground_truth,
        "model_output": model_output,
    }


def compute_metrics(predictions: list[dict[str, Any]]) -> dict[str, Any]:
    """Means of ``f1_score``, ``nted_score`` and ``score``."""
    if not predictions:
        return {"f1_score": 0.0, "nted_score": 0.0, "accuracy": 0.0}
    details = predictions
    count = len(details)
    accuracy = float_sum(d.get("score", 0.0) for d in details) / count
    return {
        "f1_score": float_sum(d.get("f1_score", 0.0) for d in details) / count,
        "nted_score": float_sum(d.get("nted_score", 0.0) for d in details) / count,
        "accuracy": accuracy,
        "score": accuracy,
    }
