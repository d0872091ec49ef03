"""CountBench: exact-count accuracy on the final answer's last number."""

from __future__ import annotations

import re
from typing import Any

from datbench_cli.metrics.counting import CountTally
from datbench_cli.scorers.base import note_correction
from datbench_cli.text.extract import extract_final_answer
from datbench_cli.text.numbers import WORDS_UP_TO_TEN, count_from_answer, last_digit_token

KNOWN_DEFECT = (
    "Number words are found as substrings in a fixed order, so 'none' reads as 1, 'often' as 10 "
    "and 'two or three' as 2."
)
# Fixes of the corrected profile (docs/known-defects.md): name -> the rule applied.
CORRECTIONS = {
    "countbench-whole-words": "a number word counts only as a whole word, and the last one "
    "wins, as the last digit token does",
}
_WORD_UP_TO_TEN_RE = re.compile(
    r"\b(" + "|".join(word for word, _ in WORDS_UP_TO_TEN) + r")\b", re.IGNORECASE
)
_VALUE_OF_WORD = dict(WORDS_UP_TO_TEN)


def parse_count(text: str, whole_words: bool = False) -> int | None:
    """The last digit token of ``text``, else the first of "zero".."ten" found in it
    (``whole_words``, the corrected profile: the last of them found as a whole word)."""
    if not text:
        return None
    # Quirk: "3.5" reads as 5, "1,000" as 0, "-2" as 2.
    token = last_digit_token(text)
    if token is not None:
        try:
            return int(token)
        except ValueError:
            pass  # Quirk: a token beyond int()'s digit limit falls through to the words
    lowered = text.lower()
    if whole_words:
        # Corrected (countbench-whole-words): "none" and "often" hold no number word, and
        # "two or three" reads as 3, as "2 or 3" does through the last digit token.
        words = _WORD_UP_TO_TEN_RE.findall(lowered)
        return _VALUE_OF_WORD[words[-1].lower()] if words else None
    # Quirk: substring test in list order ("none" -> 1, "often" -> 10, "two or three" -> 2).
    for word, value in WORDS_UP_TO_TEN:
        if word in lowered:
            return value
    return None


def _ground_truth(sample: dict[str, Any]) -> Any:
    """The answer as an int where ``int()`` takes it; otherwise the raw value."""
    raw = sample.get("answer") or sample.get("ground_truth_answer")
    try:
        if isinstance(raw, str):
            return int(raw.strip())
        if isinstance(raw, (int, float)):
            return int(raw)
    except (ValueError, AttributeError):
        # Quirk: an unparsable answer ("three") stays a string and never equals a count.
        return raw
    return None


def score_sample(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """1.0 when the parsed count equals the integer answer."""
    return _score(sample, model_output, whole_words=False)


def score_sample_corrected(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """The corrected profile: number words are read as whole words."""
    reference = score_sample(sample, model_output)["score"]
    details = _score(sample, model_output, whole_words=True)
    return note_correction(details, reference, "countbench-whole-words")


def _score(sample: dict[str, Any], model_output: str, whole_words: bool) -> dict[str, Any]:
    truth = _ground_truth(sample)
    parsed = parse_count(extract_final_answer(model_output), whole_words)
    return {
        "score": 1.0 if parsed is not None and parsed == truth else 0.0,
        "ground_truth": truth,
        "parsed_answer": parsed,
        "model_output": model_output,
    }


def compute_metrics(predictions: list[dict[str, Any]]) -> dict[str, Any]:
    """Accuracy, parse rate, MAE and within-1/within-3 rates over all samples."""
    tally = CountTally(n_total=len(predictions))
    for details in predictions:
        truth = count_from_answer(details.get("ground_truth"))
        tally.add_score(details)
        tally.add_parse(details.get("parsed_answer"), truth)
    return {
        "accuracy__CountBench-Accuracy": tally.accuracy(),
        "accuracy__CountBench-ParseRate": tally.parse_rate(),
        "accuracy__CountBench-MAE": tally.mean_absolute_error(),
        "accuracy__CountBench-Within1": tally.within(1),
        "accuracy__CountBench-Within3": tally.within(3),
    }
