"""ChartQA: relaxed accuracy (5 % numeric tolerance, normalised text otherwise), best over golds."""

from __future__ import annotations

from typing import Any

from datbench_cli.metrics.averaging import mean_score
from datbench_cli.metrics.relaxed import relaxed_match
from datbench_cli.text.extract import extract_final_answer

METRIC_KEY = "accuracy__ChartQA-Relaxed"


def _gold_answers(sample: dict[str, Any], answer: Any) -> list[Any]:
    # Quirk: a non-empty all_answers wins; the row's own answer is then ignored.
    golds = sample.get("all_answers") or sample.get(
        "all_ground_truth_answers", [answer] if answer else []
    )
    if not isinstance(golds, list):
        golds = [golds]
    return [gold for gold in golds if gold]


def score_sample(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """1.0 when the extracted answer relaxed-matches any gold answer."""
    answer = sample.get("answer") or sample.get("ground_truth_answer")
    golds = _gold_answers(sample, answer)
    prediction = extract_final_answer(model_output)
    matched = any(relaxed_match(prediction, gold) for gold in golds)
    return {
        "score": 1.0 if matched else 0.0,
        "ground_truth": answer,
        "all_ground_truth_answers": golds,
        "model_output": model_output,
        "pred_answer": prediction,
    }


def compute_metrics(predictions: list[dict[str, Any]]) -> dict[str, float]:
    """Mean score (0.0 for no samples)."""
    return {METRIC_KEY: mean_score(predictions)}
