"""AI2D: a letter A-D parsed from the output, compared as an index with the row's answer."""

from __future__ import annotations

import re
from typing import Any

from datbench_cli.metrics.averaging import mean_score
from datbench_cli.text.choices import candidate_letter, lettered_choices, pad_response
from datbench_cli.text.extract import extract_final_answer

KNOWN_DEFECT = (
    "The reference compares the predicted choice index (0-3) with the row's letter answer, "
    "so every AI2D sample with a string answer scores 0 whatever the model outputs."
)

# Fixes of the corrected profile (docs/known-defects.md): name -> the rule applied.
CORRECTIONS = {
    "ai2d-letter-answer": "the parsed letter is compared with a letter answer (an index answer "
    "with the letter's index, 0 included), as AI2D's multiple-choice accuracy counts the chosen "
    "option",
}

_LETTERS = "ABCD"
_STANDALONE_LETTER = re.compile(r"\b([ABCD])\b")


def parse_letter(response: Any, answer_choices: Any) -> Any:
    """The choice letter in ``response``: extracted final answer first, then the MMMU parser.

    Quirk: the extracted text is upper-cased first, so the article "a" reads as choice A.
    """
    extracted = extract_final_answer(str(response)).strip().upper()
    if len(extracted) == 1 and extracted in _LETTERS:
        return extracted
    match = _STANDALONE_LETTER.search(extracted)
    if match:
        return match.group(1)
    padded = pad_response(response)
    all_choices, index2ans = lettered_choices(answer_choices)
    return candidate_letter(padded, all_choices, index2ans)


def score_sample(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """Score one AI2D sample (``answer_choices`` is never supplied through the evaluator)."""
    answer_label = (
        sample.get("answer") or sample.get("answer_label") or sample.get("ground_truth_answer")
    )
    letter = parse_letter(model_output, sample.get("answer_choices", []))
    predicted_index = ord(letter) - ord("A") if letter and letter in _LETTERS else None
    # Quirk: an int index is compared with the (string) letter answer, so "B" never matches;
    # an int answer 0 is falsy and became None above, so it never matches either.
    # Corrected (ai2d-letter-answer, score_sample_corrected): letter vs letter, index vs index.
    is_correct = predicted_index is not None and predicted_index == answer_label
    return _details(letter, predicted_index, is_correct, answer_label)


def score_sample_corrected(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """The corrected profile: the chosen option is compared with the gold option."""
    reference = score_sample(sample, model_output)
    letter = reference["extracted_output"]
    gold = sample.get("answer")
    if gold is None or gold == "":
        gold = sample.get("answer_label", sample.get("ground_truth_answer"))
    # Corrected: a letter answer is compared with the parsed letter, an index with its index.
    if isinstance(gold, str):
        is_correct = bool(letter) and letter == gold.strip().upper()
    else:
        is_correct = (
            reference["predicted_index"] is not None and reference["predicted_index"] == gold
        )
    details = _details(letter, reference["predicted_index"], is_correct, gold)
    if is_correct != reference["is_correct"]:
        details["corrections"] = ["ai2d-letter-answer"]
    return details


def _details(letter: Any, predicted_index: Any, is_correct: bool, gold: Any) -> dict[str, Any]:
    return {
        "score": 1.0 if is_correct else 0.0,
        "extracted_output": letter,
        "predicted_index": predicted_index,
        "is_correct": is_correct,
        "pred_answer": letter,
        "ground_truth": gold,
    }


def compute_metrics(predictions: list[dict[str, Any]]) -> dict[str, float]:
    """``{"accuracy": mean score}``."""
    return {"accuracy": mean_score(predictions)}
