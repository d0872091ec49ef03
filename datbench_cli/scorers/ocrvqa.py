"""OCR-VQA (``ocr-vqa``): continuous ANLS similarity against the single ``answer``."""

from __future__ import annotations

from typing import Any

from datbench_cli.metrics.anls import (
    keep_at_threshold,
    normalize_answer,
    passes_threshold,
    raw_similarity,
)
from datbench_cli.metrics.averaging import mean
from datbench_cli.text.extract import extract_final_answer


def score_sample(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """Score one sample; ``score`` is the raw similarity to ``answer``."""
    # Quirk: only ``answer`` counts; alternatives in ``all_answers`` are ignored.
    answer = sample.get("answer", "")
    pred_answer = extract_final_answer(model_output)
    prediction = normalize_answer(pred_answer)
    reference = normalize_answer(answer)
    anls = raw_similarity(prediction, reference) if answer else 0.0
    return {
        "score": anls,
        "anls": anls,
        "anls_thresholded_0_5": keep_at_threshold(anls),
        "threshold_0_5_accuracy": passes_threshold(anls),
        # Quirk: computed even for an empty answer, so "" vs "" is an exact match scoring 0.0.
        "exact_match": 1.0 if prediction == reference else 0.0,
        "ground_truth": answer,
        "model_output": model_output,
        "pred_answer": pred_answer,
    }


def compute_metrics(predictions: list[dict[str, Any]]) -> dict[str, float]:
    """Means of the per-sample values; ``accuracy`` and ``score`` repeat the raw ANLS mean."""
    all_details = predictions
    anls = mean([d.get("anls", d.get("score", 0.0)) for d in all_details])
    return {
        "anls": anls,
        "anls_thresholded_0_5": mean([d.get("anls_thresholded_0_5", 0.0) for d in all_details]),
        "threshold_0_5_accuracy": mean([d.get("threshold_0_5_accuracy", 0.0) for d in all_details]),
        "exact_match": mean([d.get("exact_match", 0.0) for d in all_details]),
        "accuracy": anls,
        "score": anls,
    }
