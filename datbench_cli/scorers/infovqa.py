"""InfoVQA (``infovqa``): thresholded ANLS with the PyPI ``anls`` package's rules."""

from __future__ import annotations

from typing import Any

from datbench_cli.metrics.anls import anls_package_score, exact_match_any, reference_answers
from datbench_cli.metrics.averaging import mean
from datbench_cli.text.extract import extract_final_answer

KNOWN_DEFECT = (
    "InfoVQA reads a sample key 'answers' that is never set, so 'all_answers' is ignored and "
    "only the single 'answer' counts as a reference."
)
# Fixes of the corrected profile (docs/known-defects.md): name -> the rule applied.
CORRECTIONS = {
    "infovqa-all-answers": "ANLS is the best match over every reference answer (all_answers), "
    "as InfoVQA's ANLS is defined",
}


def score_sample(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """Score one sample: ANLS (threshold 0.5, strict) of the extracted answer."""
    return _score(sample, model_output, "answers")


def score_sample_corrected(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """The corrected profile: every reference answer counts."""
    details = _score(sample, model_output, "all_answers")
    if details["score"] != score_sample(sample, model_output)["score"]:
        details["corrections"] = ["infovqa-all-answers"]
    return details


def _score(sample: dict[str, Any], model_output: str, list_key: str) -> dict[str, Any]:
    ground_truth = sample.get("answer") or sample.get("ground_truth_answer")
    # Quirk: looks up "answers" (never present), so the references fall back to [answer].
    # Corrected (infovqa-all-answers): score_sample_corrected reads "all_answers" instead.
    references = reference_answers(sample, list_key, ground_truth)
    pred_answer = extract_final_answer(model_output)
    score = anls_package_score(pred_answer, references) if references else 0.0
    return {
        "score": score,
        "anls": score,
        "ground_truth": ground_truth,
        "all_ground_truth_answers": references,
        "model_output": model_output,
        "pred_answer": pred_answer,
    }


def compute_metrics(predictions: list[dict[str, Any]]) -> dict[str, float]:
    """Mean ANLS and mean exact match (case/whitespace-insensitive)."""
    all_details = predictions
    exact = [
        exact_match_any(
            d.get("pred_answer", ""),
            d.get("all_ground_truth_answers", [d.get("ground_truth", "")]),
        )
        for d in all_details
    ]
    return {
        "accuracy__InfoVQA-ANLS": mean([d.get("score", 0.0) for d in all_details]),
        "accuracy__InfoVQA-ExactMatch": mean(exact),
    }
