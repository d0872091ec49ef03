"""LogicVista: the set of chosen letters (A-H) must equal the gold set exactly."""

from __future__ import annotations

import re
from typing import Any

from datbench_cli.metrics.averaging import mean_score
from datbench_cli.scorers.base import SampleFields, default_input
from datbench_cli.text.choices import (
    ANSWER_LINE_A_TO_H,
    answer_line_letter,
    candidate_letter,
    lettered_choices,
    pad_response,
)
from datbench_cli.text.extract import extract_final_answer

_CHOICE_LETTERS = "ABCDEFGH"
_MAX_CHOICES = 8
_MAX_LOOSE_LETTERS = 4
_LETTER = re.compile("[A-H]")
# Tried in order; only the first match of each is examined.
_ANSWER_PHRASES = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"(?:answer|final\s+answer)\s*:\s*([A-H,\s]+)",
        r"answer\s+is\s+([A-H,\s]+)",
        r"correct\s+answer\s+is\s+([A-H,\s]+)",
    )
)
# Quirk: not anchored, so any capital A-H followed by ". " in the question starts a choice.
_QUESTION_CHOICE = re.compile(r"([A-H])\.\s+([^\n]+)")


def answer_letters(text: Any) -> set[str]:
    """Every letter A-H named in ``text`` (used for the gold answer and the model output).

    Quirk: every A-H character of the extracted answer counts, including letters inside words
    ("The answer is B" gives {A, B, E, H}).
    """
    if not text:
        return set()
    letters = set(_LETTER.findall(extract_final_answer(text).strip().upper()))
    if letters:
        return letters
    for pattern in _ANSWER_PHRASES:
        match = pattern.search(text)
        if match:
            letters = set(_LETTER.findall(match.group(1).strip().upper()))
            if letters:
                return letters
    letters = set(_LETTER.findall(text.upper().replace(" ", "").replace(",", "")))
    return letters if 0 < len(letters) <= _MAX_LOOSE_LETTERS else set()


def choice_texts(question: str) -> list[str]:
    """Choice texts found as ``X. text`` in the question, in letter order (later duplicates win)."""
    found = {letter: text.strip() for letter, text in _QUESTION_CHOICE.findall(question)}
    return [found[letter] for letter in sorted(found)]


def parse_letter(response: Any, texts: Any) -> Any:
    """An ``Answer: X`` line (A-H, not validated), else the MMMU parser over <= 8 choices."""
    letter = answer_line_letter(response, ANSWER_LINE_A_TO_H)
    if letter is not None:
        return letter
    padded = pad_response(response)
    all_choices, index2ans = lettered_choices(texts, limit=_MAX_CHOICES)
    return candidate_letter(padded, all_choices, index2ans)


def scorer_input(sample: SampleFields, metadata: Any) -> dict[str, Any]:
    """The default input (the reference copies ``options`` once more: the same value)."""
    return default_input(sample, metadata, ("options",))


def score_sample(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """Score one LogicVista sample."""
    gold_list = sample.get("correct_answer_letters")
    gold = answer_letters(sample.get("answer", "")) if gold_list is None else set(gold_list)
    predicted = answer_letters(model_output)
    question = (
        sample.get("question_raw") or sample.get("question") or sample.get("question_text") or ""
    )
    texts = choice_texts(question) or sample.get("options") or sample.get("candidate_answers") or []
    if texts:
        parsed = parse_letter(model_output, texts)
        if parsed:
            # Quirk: the single parsed letter is added, so it can spoil a correct set.
            predicted.add(parsed)
    is_correct = predicted == gold
    predicted_index = None
    if len(predicted) == 1:
        (only,) = predicted
        if only in _CHOICE_LETTERS:
            predicted_index = ord(only) - ord("A")
    extracted = ", ".join(sorted(predicted)) if predicted else None
    return {
        "score": 1.0 if is_correct else 0.0,
        "extracted_output": extracted,
        "predicted_index": predicted_index,
        "is_correct": is_correct,
        "pred_answer": extracted,
    }


def compute_metrics(predictions: list[dict[str, Any]]) -> dict[str, float]:
    """``{"accuracy": mean score}``."""
    return {"accuracy": mean_score(predictions)}
