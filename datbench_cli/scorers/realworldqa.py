"""RealWorldQA: exact match after light normalisation, with choice-letter mapping."""

from __future__ import annotations

import re
import string
from typing import Any

from datbench_cli.metrics.averaging import mean_score
from datbench_cli.text.extract import extract_final_answer

_NUMBER_WORDS = {
    word: str(value)
    for value, word in enumerate(
        ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
    )
}
_LETTERS = frozenset("ABCDE")
_FUZZY_THRESHOLD = 0.8
_SHORT_LINE_TOKENS = 10

_PUNCTUATION = str.maketrans("", "", string.punctuation)
_WHITESPACE = re.compile(r"\s+")
_NON_ALNUM = re.compile(r"[^a-z0-9\s]")
_QUESTION_CHOICE_LINE = re.compile(r"\s*([A-Ea-e])\s*\.\s*(.+)$")
_THINK_OPEN = re.compile("<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile("</think>", re.IGNORECASE)
_ANSWER_LINE = re.compile(r"(?i)^\s*answer\s*:\s*(.+)$")
_LETTER_TOKEN = re.compile(r"\b([A-Ea-e])\b")
# Quirk: redundant in the reference (it only matches where the pattern above already does).
_LOOSE_LETTER = re.compile(r"(?:^|\s)[\(\[]?([A-Ea-e])[\)\]\.!?,]?(?:\s|$)")


def _normalize_choice(text: str) -> str:
    """Lower-case, drop ASCII punctuation, collapse whitespace."""
    text = text.lower().translate(_PUNCTUATION)
    return _WHITESPACE.sub(" ", text).strip()


def _fuzzy_norm(text: str) -> str:
    text = _NON_ALNUM.sub(" ", (text or "").lower())
    return _WHITESPACE.sub(" ", text).strip()


def _strip_think(text: str) -> str:
    """Remove each ``<think>...</think>`` block (shortest, case-insensitive), in linear time.

    Same result as the reference's lazy regex substitution, which is quadratic when many
    ``<think>`` tags have no closing tag.
    """
    kept: list[str] = []
    position = 0
    while (opening := _THINK_OPEN.search(text, position)) is not None:
        closing = _THINK_CLOSE.search(text, opening.end())
        if closing is None:
            break
        kept.append(text[position : opening.start()])
        position = closing.end()
    kept.append(text[position:])
    return "".join(kept)


def _letter_in(text: str) -> str | None:
    for pattern in (_LETTER_TOKEN, _LOOSE_LETTER):
        match = pattern.search(text)
        if match:
            return match.group(1).upper()
    return None


def predicted_letter(model_output: Any) -> str | None:
    """A letter from the last ``Answer:`` line, else from the last short line, or None.

    Quirk: lower-case letters count, so the article "a" reads as A.
    """
    if not isinstance(model_output, str):
        return None
    lines = [line for line in _strip_think(model_output).splitlines() if line.strip()]
    for line in reversed(lines):
        match = _ANSWER_LINE.match(line.strip())
        if match:
            letter = _letter_in(match.group(1).strip())
            if letter:
                return letter
            break
    for line in reversed(lines):
        line = line.strip()
        if len(line.split()) <= _SHORT_LINE_TOKENS:
            return _letter_in(line)
    return None


def choices_from_question(question: Any) -> dict[str, str]:
    """Lower-case letter -> normalised text for each ``X. text`` line (later lines win).

    Quirk: any line starting with a lone a-e letter and a dot counts (``e.g. ...`` makes "e").
    """
    if not isinstance(question, str) or not question:
        return {}
    choices: dict[str, str] = {}
    for line in question.splitlines():
        match = _QUESTION_CHOICE_LINE.match(line)
        if match:
            choices[match.group(1).lower()] = _normalize_choice(match.group(2))
    return choices


def _fuzzy_choice(prediction: str, choices: dict[str, str]) -> str | None:
    """The choice whose tokens are best covered by the prediction (>= 80 %), upper-cased."""
    predicted_tokens = set(_fuzzy_norm(prediction).split())
    if not predicted_tokens:
        return None
    best, best_overlap = None, 0.0
    for letter, text in choices.items():
        choice_tokens = set(_fuzzy_norm(text).split())
        if not choice_tokens:
            continue
        overlap = len(choice_tokens & predicted_tokens) / float(len(choice_tokens))
        if overlap > best_overlap:
            best, best_overlap = letter, overlap
    if best is not None and best_overlap >= _FUZZY_THRESHOLD:
        return best.upper()
    return None


def _map_to_choice(final: str, prediction: str, model_output: Any, choices: dict) -> str:
    letter = (final or "").strip().upper()
    if letter in _LETTERS and letter.lower() in choices:
        return letter
    predicted = predicted_letter(model_output)
    if predicted and predicted.lower() in choices:
        return predicted
    return _fuzzy_choice(prediction, choices) or prediction


def score_sample(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """Score one RealWorldQA sample."""
    gold = sample.get("ground_truth_answer") or sample.get("answer") or ""
    question = (
        sample.get("question_text") or sample.get("question_raw") or sample.get("question") or ""
    )
    final = extract_final_answer(model_output)
    prediction = _NUMBER_WORDS.get(final.lower().strip(), final)
    choices = choices_from_question(question)
    if not choices:
        options = (
            sample.get("options") or sample.get("candidate_answers") or sample.get("answer_choices")
        ) or []
        if isinstance(options, (list, tuple)):
            choices = {chr(ord("a") + i): _normalize_choice(o) for i, o in enumerate(options)}
    if choices:
        prediction = _map_to_choice(final, prediction, model_output, choices)
    # Quirk: trailing dots are removed from the prediction only, not from the gold.
    normalized = (prediction or "").lower().strip().rstrip(".")
    score = 1.0 if normalized == (str(gold) or "").lower().strip() and normalized != "" else 0.0
    return {
        "score": score,
        "ground_truth": gold,
        "pred_answer": prediction,
        "model_output": model_output,
    }


def compute_metrics(predictions: list[dict[str, Any]]) -> dict[str, float]:
    """``{"accuracy__RealWorldQA-Accuracy": mean score}``."""
    return {"accuracy__RealWorldQA-Accuracy": mean_score(predictions)}
