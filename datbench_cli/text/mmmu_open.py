"""MMMU open-ended answer parsing and matching, as the reference's ``mmmu`` scorer does it.

Only reachable through direct module calls: the evaluator never forwards ``question_type``, so
every MMMU sample it scores takes the multiple-choice path.
"""

from __future__ import annotations

import re
from typing import Any

from datbench_cli.text.extract import extract_final_answer

# Quirk: the second alternative is a literal backslash + "n", not a newline, and the first can
# never match because the text is lower-cased before splitting.
_SUBRESPONSE_SPLIT = re.compile(r"\.\s(?=[A-Z])|\\n")
KEY_INDICATORS = (
    "could be ",
    "so ",
    "is ",
    "thus ",
    "therefore ",
    "final ",
    "answer ",
    "result ",
)
_TRIVIAL_KEYS = frozenset({":", ",", ".", "!", "?", ";", "'"})
_COMMA_NUMBER = re.compile(r"-?\b\d{1,3}(?:,\d{3})+\b")
# The reference's scientific and simple patterns, plus a "(?<!\d)" before each alternative that
# starts with a digit. No match of the originals starts inside a digit run (one starting a digit
# earlier would exist, and no match ends just before a digit), so findall gives the same list;
# the guard only stops the quadratic retries at every digit of a long run.
_SCIENTIFIC_NUMBER = re.compile(r"-?(?<!\d)\d+(?:\.\d+)?[eE][+-]?\d+")
_SIMPLE_NUMBER = re.compile(r"-?(?:(?<!\d)\d+\.\d+|\.\d+|(?<!\d)\d+\b)(?![eE][+-]?\d+)(?![,\d])")


def shortest_key_tail(piece: str, indicators: tuple[str, ...]) -> str | None:
    """The shortest text after the last occurrence of any indicator in ``piece``."""
    best: str | None = None
    for indicator in indicators:
        if indicator in piece:
            candidate = piece.rpartition(indicator)[2].strip()
            # Quirk: an empty best so far is replaced by the next candidate whatever its length.
            if not best or len(candidate) < len(best):
                best = candidate
    return best


def key_subresponses(response: Any) -> list[str]:
    """The short answer-bearing tails of each piece, or the whole lower-cased response."""
    text = response.strip().strip(".").lower()
    pieces = _SUBRESPONSE_SPLIT.split(text)
    keys: list[str] = []
    for position, piece in enumerate(pieces):
        indicators = KEY_INDICATORS + ("=",) if position == len(pieces) - 1 else KEY_INDICATORS
        best = shortest_key_tail(piece, indicators)
        if best and best.strip() not in _TRIVIAL_KEYS:
            keys.append(best)
    return keys or [text]


def extract_numbers(text: str) -> list[str]:
    """Numbers with thousands commas, then scientific notation, then plain numbers."""
    return (
        _COMMA_NUMBER.findall(text)
        + _SCIENTIFIC_NUMBER.findall(text)
        + _SIMPLE_NUMBER.findall(text)
    )


def _parses_as_float(text: str) -> bool:
    try:
        float(text.replace(",", ""))
    except (ValueError, OverflowError):
        return False
    return True


def normalize_answer(text: str) -> list[Any]:
    """A number rounded to 2 places, else lower-cased text (one character: two padded forms)."""
    text = text.strip()
    if _parses_as_float(text):
        text = text.replace(",", "")
        value = float(text)
        if value in (float("inf"), float("-inf")) or abs(value) > 1e308:
            return [text.lower()]
        return [round(value, 2)]
    text = text.lower()
    if len(text) == 1:
        return [" " + text, text + " "]
    return [text]


def parse_open_response(response: Any) -> list[Any]:
    """Normalised candidate answers (a set, so string order is hash-dependent)."""
    short = extract_final_answer(response)
    keys = [short] if short else key_subresponses(response)
    predictions: list[Any] = list(keys)
    for key in keys:
        predictions.extend(extract_numbers(key))
    normalized: list[Any] = []
    for prediction in predictions:
        normalized.extend(normalize_answer(prediction))
    return list(set(normalized))


def open_answer_matches(gold: Any, predictions: list[Any]) -> bool:
    """A parsed string containing a gold string, or a parsed number equal to a gold number."""
    if isinstance(gold, list):
        golds: list[Any] = []
        for answer in gold:
            golds.extend(normalize_answer(answer))
    else:
        golds = normalize_answer(str(gold))
    for prediction in predictions:
        if isinstance(prediction, str):
            if any(isinstance(g, str) and g in prediction for g in golds):
                return True
        elif prediction in golds:
            return True
    return False
