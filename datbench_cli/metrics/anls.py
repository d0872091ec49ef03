"""Normalized Levenshtein similarity (ANLS) in the two flavours the reference uses.

* ``raw_similarity`` / ``best_raw_similarity``: DocVQA and OCR-VQA's own helper, unthresholded,
  lengths of the normalized strings.
* ``anls_package_score``: the PyPI ``anls`` 0.0.2 package's ``anls_score`` rules (InfoVQA),
  strict threshold and upper-cased lengths.

Levenshtein distances come from :mod:`datbench_cli.metrics.edit_distance`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from datbench_cli.metrics.edit_distance import levenshtein


def normalize_answer(text: str) -> str:
    """Lower-case, strip, collapse whitespace runs to one space ("" for a falsy input)."""
    if not text:
        return ""
    return " ".join(text.strip().lower().split())


def raw_similarity(prediction: str, reference: str) -> float:
    """``1 - lev / max(len)`` of two normalized strings; 1.0 if both empty, 0.0 if one is."""
    if not prediction and not reference:
        return 1.0
    if not prediction or not reference:
        return 0.0
    longest = max(len(prediction), len(reference))
    return 1.0 - levenshtein(prediction, reference) / longest


def best_raw_similarity(prediction: str, references: Iterable[str]) -> float:
    """Highest raw similarity of the normalized prediction to any normalized reference (min 0.0)."""
    normalized_prediction = normalize_answer(prediction)
    best = 0.0
    for reference in references:
        similarity = raw_similarity(normalized_prediction, normalize_answer(reference))
        if similarity > best:
            best = similarity
    return best


def keep_at_threshold(value: float, threshold: float = 0.5) -> float:
    """``value`` if it reaches ``threshold`` (inclusive), else 0.0: standard ANLS clipping."""
    return value if value >= threshold else 0.0


def passes_threshold(value: float, threshold: float = 0.5) -> float:
    """1.0 if ``value`` reaches ``threshold`` (inclusive), else 0.0."""
    return 1.0 if value >= threshold else 0.0


def _package_similarity(prediction: str, reference: str, threshold: float) -> float:
    # Quirk: the divisor is the length of the UPPER-cased strings ("ß" counts as "SS").
    longest = max(len(prediction.upper()), len(reference.upper()))
    distance = 0.0 if longest == 0 else levenshtein(prediction, reference) / longest
    # Quirk: strict threshold, so a normalized distance of exactly 0.5 scores 0.0.
    return 1 - distance if distance < threshold else 0.0


def anls_package_score(prediction: str, references: list[str], threshold: float = 0.5) -> float:
    """``anls.anls_score(prediction, references, threshold)`` of PyPI ``anls`` 0.0.2.

    Inputs are normalized by calling ``strip``/``lower`` on them directly, so a non-string
    reference fails the same way. An empty ``references`` raises ``ValueError`` as ``max`` does.
    """
    normalized_prediction = " ".join(prediction.strip().lower().split())
    scores = [
        _package_similarity(
            normalized_prediction, " ".join(reference.strip().lower().split()), threshold
        )
        for reference in references
    ]
    return max(scores)


def exact_match_any(prediction: str, references: Iterable[str]) -> float:
    """1.0 if the normalized prediction equals any normalized reference, else 0.0."""
    normalized_prediction = normalize_answer(prediction)
    return 1.0 if any(normalize_answer(ref) == normalized_prediction for ref in references) else 0.0


def reference_answers(sample: dict[str, Any], list_key: str, ground_truth: Any) -> list[Any]:
    """``sample[list_key]`` if truthy, else ``[ground_truth]`` (or ``[]``); a list, falsy dropped."""
    answers = sample.get(list_key) or sample.get(
        "all_ground_truth_answers", [ground_truth] if ground_truth else []
    )
    if not isinstance(answers, list):
        answers = [answers]
    return [answer for answer in answers if answer]
