"""MMMU: an answer line or MMMU-parsed letter compared exactly with the answer.

Through the evaluator every sample takes the multiple-choice path (``question_type`` is never
forwarded); the open-ended path is reachable only by calling this module directly.
"""

from __future__ import annotations

from typing import Any

from datbench_cli.metrics.averaging import mean_score
from datbench_cli.text.choices import (
    ANSWER_LINE_A_TO_E,
    answer_line_letter,
    candidate_letter,
    pad_response,
)
from datbench_cli.text.extract import extract_final_answer
from datbench_cli.text.open_answer import MMMU, open_answer_matches, parse_open_response


def parse_letter(response: Any, all_choices: Any, index2ans: Any) -> Any:
    """An ``Answer: X`` line (A-E, not validated), else the MMMU candidate parser.

    Quirk: no final-answer extraction, so ``\\boxed{B}`` and ``<answer>B</answer>`` give None.
    Quirk: choices are used as given; they are not rebuilt from ``options``.
    """
    letter = answer_line_letter(response, ANSWER_LINE_A_TO_E)
    if letter is not None:
        return letter
    return candidate_letter(pad_response(response), all_choices, index2ans)


def _choice_matches(gold: Any, letter: Any) -> bool:
    if isinstance(gold, list):
        return any(answer == letter for answer in gold)
    # Quirk: case-sensitive, and str(None) == "None", so a gold "None" matches no parse.
    return str(gold) == str(letter)


def score_sample(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """Score one MMMU sample."""
    gold = sample.get("answer", "")
    if sample.get("question_type", "multiple-choice") == "multiple-choice":
        letter = parse_letter(
            model_output, sample.get("all_choices", []), sample.get("index2ans", {})
        )
        is_correct = _choice_matches(gold, letter)
        return {
            "score": 1.0 if is_correct else 0.0,
            "extracted_output": letter,
            "pred_answer": letter,
            "is_correct": is_correct,
        }
    parsed = parse_open_response(model_output, MMMU)
    is_correct = open_answer_matches(gold, parsed, MMMU)
    short = extract_final_answer(model_output)
    return {
        "score": 1.0 if is_correct else 0.0,
        "extracted_output": parsed,
        "pred_answer": short or (parsed[0] if parsed else None),
        "is_correct": is_correct,
    }


def compute_metrics(predictions: list[dict[str, Any]]) -> dict[str, float]:
    """``{"accuracy": mean score}``."""
    return {"accuracy": mean_score(predictions)}
