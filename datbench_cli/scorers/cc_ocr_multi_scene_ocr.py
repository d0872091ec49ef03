"""CC-OCR multi-scene OCR (``cc-ocr-multi_scene_ocr``).

Bag-of-characters F1 over the lower-cased ASCII letters and digits of the raw output and the GT.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from datbench_cli.metrics.averaging import float_sum
from datbench_cli.scorers.base import SampleFields, default_input, note_correction

KNOWN_DEFECT = (
    "Only ASCII letters and digits are compared, so Chinese and other non-ASCII text is ignored: "
    "a Chinese reference is matched perfectly by any output without ASCII letters or digits."
)

# Fixes of the corrected profile (docs/known-defects.md): name -> the rule applied.
CORRECTIONS = {
    "cc-ocr-chinese-characters": "a reference holding Chinese characters is compared "
    "character by character over every non-blank character, as CC-OCR's own evaluation reads "
    "its Chinese subsets",
}

_WHITESPACE_RE = re.compile(r"\s+")
_NOT_ALNUM_RE = re.compile(r"[^a-z0-9]+")
# CJK unified ideographs (with extension A and the compatibility block).
_CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def tokenize(text: Any) -> list[str]:
    """The ASCII letters/digits of ``text``, lower-cased, one token per character."""
    if not isinstance(text, str):
        return []
    text = text.replace("\t", " ").replace("\n", " ").replace("###", "").replace("***", "")
    text = _WHITESPACE_RE.sub(" ", text).strip().lower()
    # Quirk: everything outside [a-z0-9] is dropped, so non-ASCII (e.g. Chinese) text vanishes.
    # Corrected (cc-ocr-chinese-characters): tokenize_characters keeps them for a Chinese GT.
    return list(_NOT_ALNUM_RE.sub("", text))


def tokenize_characters(text: Any) -> list[str]:
    """Every non-blank character of ``text``, lower-cased, one token per character (CC-OCR's
    character-level rule for its Chinese subsets: no character class is dropped)."""
    if not isinstance(text, str):
        return []
    text = text.replace("###", "").replace("***", "").lower()
    return [char for char in text if not char.isspace()]


def _f1(recall: float, precision: float) -> float:
    return 2 * recall * precision / (recall + precision) if recall + precision > 0 else 0.0


def _empty_side_rates(gt_count: int, pred_count: int) -> float:
    # Quirk: an empty reference scores 1.0 only against an empty prediction.
    return 1.0 if gt_count == 0 and pred_count == 0 else 0.0


def scorer_input(sample: SampleFields, metadata: Any) -> dict[str, Any]:
    """The default input plus ``l2_category`` when the metadata has it."""
    return default_input(sample, metadata, ("l2_category",))


def score_sample(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """Score one sample on the raw output (no answer extraction)."""
    return _score(sample, model_output, tokenize)


def score_sample_corrected(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """The corrected profile: a reference with Chinese characters is read character by
    character, Chinese included; any other reference is scored as the reference does."""
    reference = score_sample(sample, model_output)
    ground_truth = reference["ground_truth"]
    if not isinstance(ground_truth, str) or not _CJK_RE.search(ground_truth):
        return reference
    details = _score(sample, model_output, tokenize_characters)
    return note_correction(details, reference["score"], "cc-ocr-chinese-characters")


def _score(
    sample: dict[str, Any], model_output: str, tokens_of: Callable[[Any], list[str]]
) -> dict[str, Any]:
    ground_truth = sample.get("answer") or sample.get("ground_truth_answer", "")
    pred_tokens = tokens_of(model_output)
    gt_tokens = tokens_of(ground_truth)
    if not gt_tokens or not pred_tokens:
        matched = 0
        recall = precision = f1 = _empty_side_rates(len(gt_tokens), len(pred_tokens))
    else:
        gt_counts, pred_counts = Counter(gt_tokens), Counter(pred_tokens)
        matched = sum(min(count, pred_counts[token]) for token, count in gt_counts.items())
        recall = matched / len(gt_tokens)
        precision = matched / len(pred_tokens)
        f1 = _f1(recall, precision)
    return {
        "score": f1,
        "f1_score": f1,
        "recall": recall,
        "precision": precision,
        "matched_tokens": matched,
        "gt_token_count": len(gt_tokens),
        "pred_token_count": len(pred_tokens),
        "l2_category": sample.get("l2_category", ""),
        "ground_truth": ground_truth,
        "model_output": model_output,
    }


def compute_metrics(predictions: list[dict[str, Any]]) -> dict[str, Any]:
    """Macro means of the per-sample rates and micro rates over the summed token counts."""
    if not predictions:
        return {"macro_f1": 0.0, "micro_f1": 0.0, "accuracy": 0.0}
    details = predictions
    count = len(details)
    macro_f1 = float_sum(d.get("f1_score", 0.0) for d in details) / count
    macro_recall = float_sum(d.get("recall", 0.0) for d in details) / count
    macro_precision = float_sum(d.get("precision", 0.0) for d in details) / count
    matched = sum(d.get("matched_tokens", 0) for d in details)
    gt_total = sum(d.get("gt_token_count", 0) for d in details)
    pred_total = sum(d.get("pred_token_count", 0) for d in details)
    if gt_total == 0 or pred_total == 0:
        micro_recall = micro_precision = _empty_side_rates(gt_total, pred_total)
    else:
        micro_recall = matched / gt_total
        micro_precision = matched / pred_total
    micro_f1 = _f1(micro_recall, micro_precision)
    return {
        "macro_f1": macro_f1,
        "micro_f1": micro_f1,
        "macro_recall": macro_recall,
        "macro_precision": macro_precision,
        "micro_recall": micro_recall,
        "micro_precision": micro_precision,
        "accuracy": micro_f1,
        "score": micro_f1,
    }
