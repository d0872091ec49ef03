"""MME-RealWorld: the first standalone letter (or an option-text match) vs the gold letter.

Registered for ``mme-realworld-ocr``, ``-ad``, ``-mo`` and ``-dt``. No final-answer extraction.
"""

from __future__ import annotations

import re
from typing import Any

from datbench_cli.metrics.averaging import mean_score
from datbench_cli.text.boxed import boxed_letter_any_case

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
# Corrected (mme-boxed-patterns): score_sample_corrected uses PR #3's patterns instead.
_BOXED_PATTERNS = (
    re.compile(r"\\boxed\\{\\s*([A-Ea-e])\\s*\\}"),
    re.compile(r"<\\|begin_of_box\\|>\\s*([A-Ea-e])\\s*<\\|end_of_box\\|>"),
)
# Corrected (mme-boxed-patterns): the patterns of the upstream fix, datologyai/DatBench PR #3
# ("fix boxed parsing for mme_realworld"), used by score_sample_corrected.
_PR3_PIPE_BOX = re.compile(r"<\|begin_of_box\|>\s*([A-Ea-e])\s*<\|end_of_box\|>")
CORRECTIONS = {
    "mme-boxed-patterns": "a \\boxed{X} or <|begin_of_box|>X<|end_of_box|> letter is read with "
    "the upstream fix's patterns (datologyai/DatBench PR #3)",
}
_STANDALONE_LETTER = re.compile(r"(?<![A-Za-z0-9])([A-Ea-e])(?![A-Za-z0-9])")
_UPPER_LETTER = re.compile("[ABCDE]")
_LONG_TEXT_TOKENS = 10


def extract_letter(text: Any, choices: Any, corrected: bool = False) -> str:
    """The answer letter (upper case) in ``text``, or "" (``corrected``: PR #3's box patterns).

    Quirk: the first standalone letter wins, lower-case included ("a", the "e" of "i.e.").
    """
    if isinstance(text, dict):
        text = ""
    text = text.strip()
    for phrase in _ANSWER_PHRASES:
        text = text.replace(phrase, "")
    if corrected:
        boxed = boxed_letter_any_case(text)
        if boxed is None:
            found = _PR3_PIPE_BOX.search(text)
            boxed = found.group(1) if found else None
        if boxed:
            return boxed.upper()
    for pattern in () if corrected else _BOXED_PATTERNS:
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
    return _score(sample, model_output, corrected=False)


def score_sample_corrected(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """The corrected profile: boxed letters are read with PR #3's patterns."""
    details = _score(sample, model_output, corrected=True)
    reference = _score(sample, model_output, corrected=False)
    if details["extracted_letter"] != reference["extracted_letter"]:
        details["corrections"] = ["mme-boxed-patterns"]
    return details


def _score(sample: dict[str, Any], model_output: str, corrected: bool) -> dict[str, Any]:
    gold = (
        sample.get("answer")
        or sample.get("ground_truth_answer")
        or sample.get("mcq_answer_letter")
        or ""
    )
    choices = (
        sample.get("options") or sample.get("candidate_answers") or sample.get("choices") or []
    )
    letter = extract_letter(model_output, choices, corrected)
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
