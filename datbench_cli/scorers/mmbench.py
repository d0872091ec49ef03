"""MMBench: a choice letter parsed MMMU-style, compared case-insensitively with the answer.

No circular-evaluation grouping: ``is_circular`` has no effect, as in the reference.
"""

from __future__ import annotations

from typing import Any

from datbench_cli.metrics.averaging import mean_score
from datbench_cli.text.choices import choices_from_options, mmbench_style_letter


def score_sample(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """Score one MMBench sample."""
    gold = sample.get("answer") or sample.get("ground_truth_answer", "")
    all_choices = sample.get("all_choices", [])
    index2ans = sample.get("index2ans", {})
    if not all_choices or not index2ans:
        # Quirk: options given as a string are split into characters, one option each.
        index2ans, all_choices = choices_from_options(sample.get("options", []))
    letter = mmbench_style_letter(model_output, all_choices, index2ans) if all_choices else None
    is_correct = letter is not None and str(gold).upper() == str(letter).upper()
    return {
        "score": 1.0 if is_correct else 0.0,
        "extracted_output": letter,
        "pred_answer": letter,
        "is_correct": is_correct,
    }


def compute_metrics(predictions: list[dict[str, Any]]) -> dict[str, float]:
    """``{"accuracy": mean score}``."""
    return {"accuracy": mean_score(predictions)}
