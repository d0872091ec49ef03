"""VQAv2 (``vqa-v2``): VQA soft accuracy, aggregated overall and by answer and question type."""

from __future__ import annotations

from typing import Any

from datbench_cli.metrics.averaging import mean
from datbench_cli.metrics.vqa_accuracy import normalize_vqa_answer, vqa_accuracy
from datbench_cli.scorers.base import SampleFields, default_input
from datbench_cli.text.extract import extract_final_answer


def scorer_input(sample: SampleFields, metadata: Any) -> dict[str, Any]:
    """The default input plus the required ``answer_type`` and ``question_type``."""
    out = default_input(sample, metadata)
    if "answer_type" not in metadata or "question_type" not in metadata:
        raise ValueError(
            f"VQAv2 sample {sample.id} missing required metadata: answer_type, question_type"
        )
    out["answer_type"] = metadata["answer_type"]
    out["question_type"] = metadata["question_type"]
    return out


def score_sample(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """Score one sample against the annotator answers (``all_answers``)."""
    pred_answer = extract_final_answer(model_output)
    references = sample.get("all_answers", sample.get("answers", []))
    # References get the full normalization too (the official script only strips punctuation).
    score = vqa_accuracy(pred_answer, references, normalize_vqa_answer)
    return {
        "score": score,
        "ground_truth_answers": references,
        "model_output": model_output,
        "pred_answer": pred_answer,
        "answer_type": sample.get("answer_type", "unknown"),
        "question_type": sample.get("question_type", "unknown"),
    }


def _group_means(groups: dict[Any, list[float]]) -> dict[Any, float]:
    return {name: mean(scores) for name, scores in groups.items()}


def compute_metrics(predictions: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean accuracy overall and per answer type / question type (groups in first-seen order)."""
    scores: list[float] = []
    by_answer_type: dict[Any, list[float]] = {}
    by_question_type: dict[Any, list[float]] = {}
    for details in predictions:
        score = details.get("score", 0.0)
        scores.append(score)
        by_answer_type.setdefault(details.get("answer_type", "unknown"), []).append(score)
        by_question_type.setdefault(details.get("question_type", "unknown"), []).append(score)
    # Fractions, not the official script's rounded percentages.
    return {
        "accuracy": mean(scores),
        "accuracy-by-answer-type": _group_means(by_answer_type),
        "accuracy-by-question-type": _group_means(by_question_type),
    }
