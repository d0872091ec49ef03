"""Relaxed answer matching (ChartQA family): numbers within a relative tolerance, bracketed lists
compared as sorted items, otherwise punctuation-free text equality.

Shared by the ``chartqa`` and ``chartqapro`` scorers, which differ only in the options passed to
:func:`relaxed_match`.
"""

from __future__ import annotations

import re
from typing import Any

RELATIVE_TOLERANCE = 0.05
# Targets this close to zero also accept an absolute difference of the same size.
TINY_TARGET = 1e-6

_PUNCTUATION_RE = re.compile(r"[^\w\s]")
_WHITESPACE_RUN_RE = re.compile(r"\s+")


def normalize_text(answer: Any) -> str:
    """Lower-case, drop every character that is neither a word character nor whitespace, collapse
    whitespace runs; a falsy value gives ""."""
    if not answer:
        return ""
    # Quirk: a truthy non-string raises AttributeError here, as in the reference.
    text = _PUNCTUATION_RE.sub("", answer.lower().strip())
    return _WHITESPACE_RUN_RE.sub(" ", text).strip()


def parse_number(text: Any) -> tuple[float, bool] | None:
    """``(value, has_percent_sign)`` for a number written with optional thousands commas and
    trailing ``%`` signs, in Python ``float`` syntax; ``None`` when it is not one (or not a str)."""
    if not isinstance(text, str):
        return None
    core = text.strip().replace(",", "")
    percent = core.endswith("%")
    if percent:
        core = core.rstrip("%")
    try:
        return float(core), percent
    except ValueError:
        return None


def bracket_items(text: Any) -> list[str]:
    """Sorted normalised items of a ``[a, b, ...]`` string (empty items dropped); else ``[]``."""
    if not isinstance(text, str):
        return []
    stripped = text.strip()
    if len(stripped) < 2 or stripped[0] != "[" or stripped[-1] != "]":
        return []
    items = (normalize_text(part) for part in stripped[1:-1].split(","))
    return sorted(item for item in items if item)


def _align_percent(
    pred: float, pred_percent: bool, gold: float, gold_percent: bool
) -> tuple[float, float]:
    # Only when exactly one side has "%": a ratio-looking value on the other side is scaled by 100.
    if pred_percent != gold_percent:
        if not pred_percent and gold >= 2 and 0 <= pred <= 1.5:
            pred = pred * 100.0
        if not gold_percent and pred >= 2 and 0 <= gold <= 1.5:
            gold = gold * 100.0
    return pred, gold


def _compare_numbers(
    pred: tuple[float, bool],
    gold: tuple[float, bool],
    tolerance: float,
    exact_zero_target: bool,
    ratio_as_percent: bool,
) -> bool | None:
    """True/False when the numbers decide the match, ``None`` to fall through to lists/text."""
    (pred_value, pred_percent), (gold_value, gold_percent) = pred, gold
    if ratio_as_percent:
        # Percentage questions read a bare value in [0, 1.5] as a ratio.
        if not gold_percent and 0 <= gold_value <= 1.5:
            gold_value, gold_percent = gold_value * 100.0, True
        if not pred_percent and 0 <= pred_value <= 1.5:
            pred_value, pred_percent = pred_value * 100.0, True
    pred_value, gold_value = _align_percent(pred_value, pred_percent, gold_value, gold_percent)
    if gold_value != 0:
        if abs(pred_value - gold_value) / abs(gold_value) <= tolerance:
            return True
        if abs(gold_value) < TINY_TARGET and abs(pred_value - gold_value) <= TINY_TARGET:
            return True
        # Quirk: a numeric miss is not final; the list and text tests still run.
        return None
    if exact_zero_target:
        return pred_value == 0.0
    # Quirk: a zero target skips the numeric test entirely ("0" vs "0.0" compares as text).
    return None


def relaxed_match(
    prediction: Any,
    target: Any,
    *,
    tolerance: float = RELATIVE_TOLERANCE,
    exact_zero_target: bool = False,
    ratio_as_percent: bool = False,
) -> bool:
    """Relaxed correctness of ``prediction`` against one ``target``.

    Numbers (both sides parse) match within ``tolerance`` relative error after percent/ratio
    alignment; ``exact_zero_target`` makes a zero target decide by exact equality;
    ``ratio_as_percent`` first scales bare values in [0, 1.5] by 100 (percentage questions).
    Then two bracketed lists compare as sorted normalised items; otherwise normalised text.
    """
    pred_number, gold_number = parse_number(prediction), parse_number(target)
    if pred_number is not None and gold_number is not None:
        verdict = _compare_numbers(
            pred_number, gold_number, tolerance, exact_zero_target, ratio_as_percent
        )
        if verdict is not None:
            return verdict
    pred_items, gold_items = bracket_items(prediction), bracket_items(target)
    if pred_items and gold_items:
        return pred_items == gold_items
    # Quirk: punctuation (including "." and "%") is deleted, so "1.5" equals "15".
    return normalize_text(prediction) == normalize_text(target)
