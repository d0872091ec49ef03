"""MME-RealWorld: the first standalone letter (or an option-text match) vs the gold letter.

Registered for ``mme-realworld-ocr``, ``-ad``, ``-mo`` and ``-dt``. No final-answer extraction.
"""

from __future__ import annotations

import re
from typing import Any

from datbench_cli.metrics.averaging import mean_score

_ANSWER_PHRASES = (
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    "The best option is",
    "The correct option is",
    "Best answer:",
    "Best option:",
)
# Quirk: mis-escaped in the reference and kept verbatim. The first needs literal backslashes
# around the letter; the second is an alternation of five branches (the "|" is unescaped), and
# only its third branch captures, so realistic boxed outputs never match either pattern.
_BOXED_PATTERNS = (
    re.compile(r"\\boxed\\{\\s*([A-Ea-e])\\s*\\}"),
    re.compile(r"<\\|begin_of_box\\|>\\s*([A-Ea-e])\\s*<\\|end_of_box\\|>"),
)
_STANDALONE_LETTER = re.compile(r"(?<![A-Za-z0-9])([A-Ea-e])(?![A-Za-z0-9])")
_UPPER_LETTER = re.compile("[ABCDE]")
_LONG_TEXT_TOKENS = 10


def extract_letter(text: Any, choices: Any) -> str:
    """The answer letter (upper case) in ``text``, or "".

    Quirk: the first standalone letter wins, lower-case included ("a", the "e" of "i.e.").
    """
    if isinstance(text, dict):
        text = ""
    text = text.strip()
    for phrase in _ANSWER_PHRASES:
        text = text.replace(phrase, "")
    for pattern in _BOXED_PATTERNS:
        match = pattern.search(text)
        if match:
            if match.group(1):
                return match.group(1).upper()
    match = _STANDALONE_LETTER.search(text)
    if match:
        return match.group(1).upper()
    if len(text.split()) > _LONG_TEXT_TOKENS and not _UPPER_LETTER.search(text):
        return ""
    lowered = text.lower()
    for choice in choices:
        # Quirk: an empty text is inside every choice, so "" returns the first "(X) ..." letter.
        if lowered in choice.lower() and len(choice) >= 2 and choice[1] in "ABCDE":
            return choice[1]
    return ""


def score_sample(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """Score one MME-RealWorld sample."""
    gold = (
        sample.get("answer")
        or sample.get("ground_truth_answer")
        or sample.get("mcq_answer_letter")
        or ""
    )
    choices = (
        sample.get("options") or sample.get("candidate_answers") or sample.get("choices") or []
    )
    letter = extract_letter(model_output, choices)
    correct = letter.upper() == gold.upper()
    return {
        "score": 1.0 if correct else 0.0,
        "extracted_letter": letter,
        "ground_truth": gold,
        "model_output": model_output,
    }


def compute_metrics(predictions: list[dict[str, Any]]) -> dict[str, float]:
    """``{"accuracy", "score"}`` (both the mean score); only ``accuracy`` (0.0) when empty."""
    if not predictions:
        return {"accuracy": 0.0}
    accuracy = mean_score(predictions)
    return {"accuracy": accuracy, "score": accuracy}
