"""OCRBench v2 answer matchers (the reference's ``vqa_metric.py`` family).

Each matcher mirrors the reference's control flow closely, because the flow decides both the
score's type (``int`` 0/1 for substring hits, ``float`` for similarities) and which exception a
malformed value raises.
"""

from __future__ import annotations

import re
from typing import Any

from datbench_cli.metrics.edit_distance import levenshtein

_TEXT_COMMAND_RE = re.compile(r"\\text\{([^{}]*)\}")
_FIRST_NUMBER_RE = re.compile(r"\d+")


def _fold(text: Any, *, lower: bool, drop_spaces: bool) -> str:
    """``[lower()] strip() \\n->space [drop spaces]``; non-strings raise AttributeError."""
    if lower:
        text = text.lower()
    text = text.strip().replace("\n", " ")
    return text.replace(" ", "") if drop_spaces else text


def _similarity(pred: str, answer: str) -> float:
    """``1 - Levenshtein / longer length`` (1.0 for two empty strings)."""
    longest = max(len(pred), len(answer))
    return 1 - (0.0 if longest == 0 else float(levenshtein(pred, answer)) / float(longest))


def _is_short_words(answer: str) -> bool:
    return len(answer.split()) < 5


def _is_short_commas(answer: str) -> bool:
    return len(answer.split(",")) < 4


def _best_match(
    predict: Any, answers: Any, *, lower: bool, drop_spaces: bool, coerce_pred: bool, short: Any
) -> int | float:
    """Substring hit (1) for short answers, else the best similarity >= 0.5, else 0."""
    score: int | float = 0
    if not isinstance(answers, list):
        answer = _fold(answers, lower=lower, drop_spaces=drop_spaces)
        pred = _fold(predict, lower=lower, drop_spaces=drop_spaces)
        return _update(score, pred, answer, short)
    for answer in answers:
        if isinstance(answer, int | float):
            answer = str(answer)
        try:
            answer = _fold(answer, lower=lower, drop_spaces=drop_spaces)
        except AttributeError:
            continue  # Quirk: answers that are neither text nor numbers are skipped.
        if coerce_pred and isinstance(predict, int | float):
            predict = str(predict)
        score = _update(score, _fold(predict, lower=lower, drop_spaces=drop_spaces), answer, short)
    return score


def _update(score: int | float, pred: str, answer: str, short: Any) -> int | float:
    if short(answer):
        # Quirk: a short answer anywhere inside the prediction counts (and "" is everywhere).
        return 1 if answer in pred else score
    similarity = _similarity(pred, answer)
    return similarity if similarity >= 0.5 and similarity > score else score


def vqa(predict: Any, answers: Any) -> int | float:
    """English VQA: case-insensitive; fewer than 5 words means substring match."""
    return _best_match(
        predict, answers, lower=True, drop_spaces=False, coerce_pred=True, short=_is_short_words
    )


def cn_vqa(predict: Any, answers: Any) -> int | float:
    """Chinese VQA: case-insensitive, spaces removed; fewer than 4 comma parts means substring."""
    return _best_match(
        predict, answers, lower=True, drop_spaces=True, coerce_pred=True, short=_is_short_commas
    )


def vqa_case_sensitive(predict: Any, answers: Any) -> int | float:
    """English VQA without case folding."""
    return _best_match(
        predict, answers, lower=False, drop_spaces=False, coerce_pred=False, short=_is_short_words
    )


def multiple_choice(predict: Any, answers: Any) -> float:
    """1.0 iff the letters of the prediction, concatenated, equal the single answer exactly."""
    if not isinstance(predict, str):
        return 0.0
    letters = "".join(char for char in predict if char.isalpha())
    # Quirk: "A. cat" gives "Acat"; any Unicode letter counts.
    return 1.0 if len(answers) == 1 and letters == answers[0] else 0.0


def _squeeze(text: Any) -> str:
    return text.strip().replace("\n", " ").replace(" ", "")


def math_expression(predict: Any, answers: Any) -> int:
    """1 if some answer, without spaces, is a substring of the prediction without spaces."""
    if not isinstance(answers, list):
        return 1 if _squeeze(answers) in _squeeze(predict) else 0
    score = 0
    for answer in answers:
        squeezed = _squeeze(answer)
        if squeezed in _squeeze(predict):
            score = 1
    return score


def _unwrap_text_commands(latex: Any) -> str:
    return _TEXT_COMMAND_RE.sub(r"\1", latex)


def cn_math_expression(predict: Any, answers: Any) -> int:
    r"""``math_expression`` after replacing ``\text{...}`` by its content (in a single answer and
    in the prediction)."""
    if len(answers) == 1:
        answers = [_unwrap_text_commands(answers[0])]
    return math_expression(_unwrap_text_commands(predict), answers)


def _first_number(text: str) -> int | None:
    found = _FIRST_NUMBER_RE.search(text)
    return int(found.group()) if found else None


def _regression(predicted: int | None, answer: Any) -> int | float:
    """Closeness ``1 - |n - g| / g`` of the predicted count to ``int(answer)``, if above 0.5."""
    if predicted is None:
        return 0
    try:
        expected = int(answer)
    except (ValueError, TypeError, OverflowError):
        return 0  # a malformed answer scores 0
    if predicted <= 0 or predicted >= 2 * expected:
        return 0
    closeness = 1 - abs(predicted - expected) / expected
    return closeness if closeness > 0.5 else 0


def counting(predict: Any, answers: Any, mode: Any) -> int | float:
    """Counting: substring match, or for ``regression`` the closeness of the first number."""
    if not isinstance(answers, list):
        # Quirk: a single (non-list) answer has its own rules: no newline folding, and modes
        # other than the two known ones score 0.
        if mode == "exact match":
            return 1 if answers.lower().strip() in predict.lower().strip() else 0
        if mode == "regression":
            return _regression(_first_number(predict), answers)
        return 0
    best: int | float = 0
    for answer in answers:
        if mode == "regression":
            score = _regression(_first_number(predict), answer)
        else:
            folded = _fold(answer, lower=True, drop_spaces=False)
            score = 1 if folded in _fold(predict, lower=True, drop_spaces=False) else 0
        if score > best:
            best = score
    return best


def full_page_ocr(predict: Any, answers: Any) -> float:
    """``(BLEU + METEOR + F-measure + (1 - normalised edit distance)) / 4``.

    Quirk: the reference environment has no ``nltk``, so BLEU, METEOR and the F-measure are all
    0.0 and the score is at most 0.25.
    """
    if not answers:
        return 0.0
    gt = answers[0] if isinstance(answers, list) else answers
    pred, gt = predict.strip(), gt.strip()
    longest = max(len(pred), len(gt))
    distance = levenshtein(pred, gt) / longest if longest > 0 else 0.0
    return max(0.0, min(1.0, (1 - distance) / 4.0))
