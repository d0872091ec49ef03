"""MMMU-Pro: mmbench's letter parsing over up to ten options, with literal-parsed options."""

from __future__ import annotations

import ast
from typing import Any

from datbench_cli.metrics.averaging import mean_score
from datbench_cli.text.choices import choices_from_options, mmbench_style_letter


def _is_correct(gold: Any, letter: Any) -> bool:
    if letter is None:
        return False
    wanted = str(letter).upper()
    if isinstance(gold, list):
        return any(str(answer).upper() == wanted for answer in gold)
    return str(gold).upper() == wanted


def score_sample(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """Score one MMMU-Pro sample.

    Quirk: with ten choices the letter class includes "I", so the pronoun can be "predicted".
    """
    gold = sample.get("answer") or sample.get("ground_truth_answer", "")
    options = sample.get("options", [])
    all_choices = sample.get("all_choices", [])
    index2ans = sample.get("index2ans", {})
    if not all_choices or not index2ans:
        if isinstance(options, str):
            # Python literal syntax only (metadata text, never model output); malformed raises.
            options = ast.literal_eval(options)
        index2ans, all_choices = choices_from_options(options)
    letter = mmbench_style_letter(model_output, all_choices, index2ans) if all_choices else None
    is_correct = _is_correct(gold, letter)
    return {
        "score": 1.0 if is_correct else 0.0,
        "extracted_output": letter,
        "pred_answer": letter,
        "is_correct": is_correct,
    }


def compute_metrics(predictions: list[dict[str, Any]]) -> dict[str, float]:
    """``{"accuracy": mean score}``."""
    return {"accuracy": mean_score(predictions)}
