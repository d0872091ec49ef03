"""MMMU's open-answer parsing and matching, shared by the ``mmmu`` and ``mathvista`` scorers.

The reference carries two copies of MMMU's ``parse_open_response`` / ``eval_open`` (in its
``mmmu`` and ``mathvista`` modules) that differ in exactly three places; :class:`OpenRules`
names them, and :data:`MMMU` and :data:`MATHVISTA` hold each copy's choice. Neither path is
reachable through the evaluator for MMMU (``question_type`` is never forwarded); MathVista
takes it for every sample.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from datbench_cli.text.extract import extract_final_answer


@dataclass(frozen=True)
class OpenRules:
    """Where the reference's two copies differ."""

    # The text the response is split at into pieces. Both copies also split at ". " before a
    # capital, which never occurs: the text is lower-cased first.
    piece_separator: str
    # A number too large for a float (inf, > 1e308) is kept as its text, not as ``inf``.
    huge_numbers_as_text: bool
    # A single (non-list) gold is passed through ``str()``; otherwise a non-string gold raises.
    gold_as_text: bool


# Quirk: the mmmu copy splits at a literal backslash + "n" (its regex is "\\n"), not a newline.
MMMU = OpenRules(piece_separator="\\n", huge_numbers_as_text=True, gold_as_text=True)
MATHVISTA = OpenRules(piece_separator="\n", huge_numbers_as_text=False, gold_as_text=False)

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
# The last piece may also end in an equation.
_LAST_PIECE_INDICATORS = (*KEY_INDICATORS, "=")
_TRIVIAL_KEYS = frozenset({":", ",", ".", "!", "?", ";", "'"})
# The reference's comma, scientific and simple number patterns, plus a "(?<!\d)" before each
# alternative that starts with a digit. No match of the originals starts inside a digit run (one
# starting a digit earlier would exist, and no match ends just before a digit), so findall gives
# the same list; the guard only stops the quadratic retries at every digit of a long run.
_COMMA_NUMBER = re.compile(r"-?\b\d{1,3}(?:,\d{3})+\b")
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


def key_subresponses(response: Any, rules: OpenRules) -> list[str]:
    """The short answer-bearing tails of each piece, or the whole lower-cased response."""
    text = response.strip().strip(".").lower()
    pieces = text.split(rules.piece_separator)
    keys: list[str] = []
    for position, piece in enumerate(pieces):
        last = position == len(pieces) - 1
        best = shortest_key_tail(piece, _LAST_PIECE_INDICATORS if last else KEY_INDICATORS)
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


def normalize_answer(text: str, rules: OpenRules) -> list[Any]:
    """``[round(number, 2)]`` when ``text`` is a number (commas ignored); else the lower-cased
    text, padded both ways when it is a single character (to avoid trivial substring hits)."""
    text = text.strip()
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        pass
    else:
        if rules.huge_numbers_as_text and (
            value in (float("inf"), float("-inf")) or abs(value) > 1e308
        ):
            return [text.replace(",", "").lower()]
        # Quirk: numbers are rounded to 2 decimals on both sides; the dataset's precision is ignored.
        return [round(value, 2)]
    text = text.lower()
    if len(text) == 1:
        # Quirk: a one-character answer is padded, so "B" never occurs inside "(b)".
        return [" " + text, text + " "]
    return [text]


def parse_open_response(response: Any, rules: OpenRules) -> list[Any]:
    """Normalised candidate answers (de-duplicated through a set, so their order is
    hash-dependent): the final answer if one is found, else the key tails, plus their numbers."""
    short = extract_final_answer(response)
    keys = [short] if short else key_subresponses(response, rules)
    predictions: list[Any] = list(keys)
    for key in keys:
        predictions.extend(extract_numbers(key))
    normalized = [
        item for prediction in predictions for item in normalize_answer(prediction, rules)
    ]
    return list(set(normalized))


def open_answer_matches(gold: Any, predictions: list[Any], rules: OpenRules) -> bool:
    """A parsed string containing a gold string, or a parsed number equal to a gold number."""
    if isinstance(gold, list):
        golds = [item for answer in gold for item in normalize_answer(answer, rules)]
    else:
        golds = normalize_answer(str(gold) if rules.gold_as_text else gold, rules)
    gold_texts = [g for g in golds if isinstance(g, str)]
    for prediction in predictions:
        # Quirk: strings match by containment, numbers by equality; never one against the other.
        if isinstance(prediction, str):
            if any(text in prediction for text in gold_texts):
                return True
        elif prediction in golds:
            return True
    return False
