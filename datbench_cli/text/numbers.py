"""Counts in text: digit tokens, English number words, integer ground truths."""

from __future__ import annotations

import re
from typing import Any

# Python's `\d` and `\b` are Unicode-aware: "٣" is a digit token.
DIGIT_TOKEN_RE = re.compile(r"\b\d+\b")

NUMBER_WORDS: dict[str, int] = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "thousand": 1000,
}
# "zero" .. "ten", in this order.
WORDS_UP_TO_TEN: tuple[tuple[str, int], ...] = tuple(
    (word, value) for word, value in NUMBER_WORDS.items() if value <= 10
)
TENS_WORDS: dict[str, int] = {w: v for w, v in NUMBER_WORDS.items() if 20 <= v <= 90}
UNIT_WORDS: dict[str, int] = {w: v for w, v in NUMBER_WORDS.items() if v <= 9}


def last_digit_token(text: str) -> str | None:
    """The last whole-word run of digits in ``text``, or ``None``."""
    last = None
    for last in DIGIT_TOKEN_RE.finditer(text):  # noqa: B007 - only the last one is wanted
        pass
    return last.group() if last is not None else None


def count_from_answer(value: Any) -> int | None:
    """An integer ground truth: a digit string (surrounding spaces allowed) or a number.

    ``None`` for anything else, and wherever ``int()`` fails (a superscript digit, a float NaN).
    """
    try:
        if isinstance(value, str) and value.strip().isdigit():
            return int(value.strip())
        if isinstance(value, (int, float)):
            return int(value)
    except Exception:  # noqa: BLE001 - the reference maps every failure to "no ground truth"
        return None
    return None
