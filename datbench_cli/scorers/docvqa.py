"""DocVQA (``docvqa``): continuous ANLS similarity against every reference answer."""

from __future__ import annotations

from typing import Any

from datbench_cli.metrics.anls import (
    best_raw_similarity,
    exact_match_any,
    keep_at_threshold,
    passes_threshold,
    reference_answers,
)
from datbench_cli.metrics.averaging import mean
from datbench_cli.text.extract import extract_final_answer


def score_sample(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """Score one sample; ``score`` is the raw (unthresholded) best similarity."""
    ground_truth = sample.get("answer") or sample.get("ground_truth_answer")
    # An empty ``all_answers`` falls back to [answer]; empty strings are dropped.
    references = reference_answers(sample, "all_answers", ground_truth)
    pred_answer = extract_final_answer(model_output)
    # Quirk: the per-sample score is the raw similarity; standard ANLS is only a side value.
    anls = best_raw_similarity(pred_answer, references)
    return {
        "score": anls,
        "anls": anls,
        "anls_thresholded_0_5": keep_at_threshold(anls),
        "threshold_0_5_accuracy": passes_threshold(anls),
        "ground_truth": ground_truth,
        "all_ground_truth_answers": references,
        "model_output": model_output,
        "pred_answer": pred_answer,
    }


def compute_metrics(predictions: list[dict[str, Any]]) -> dict[str, float]:
    """Means of raw ANLS, thresholded ANLS, threshold accuracy and exact match."""
    all_details = predictions
    return {
        "accuracy__DocVQA-ANLS": mean([d.get("anls", d.get("score", 0.0)) for d in all_details]),
        "accuracy__DocVQA-ANLS-thresholded-0.5": mean(
            [d.get("anls_thresholded_0_5", 0.0) for d in all_details]
        ),
        "accuracy__DocVQA-threshold@0.5": mean(
            [d.get("threshold_0_5_accuracy", 0.0) for d in all_details]
        ),
        "accuracy__DocVQA-ExactMatch": mean(
            [
                exact_match_any(d.get("pred_answer", ""), d.get("all_ground_truth_answers", []))
                for d in all_details
            ]
        ),
    }
