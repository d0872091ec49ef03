"""MathVista: MMMU-style open-answer matching (and a multiple-choice path for module-level calls).

Through the evaluator every sample takes the open-answer path: ``question_type`` and ``choices``
are never forwarded, so MathVista's own multiple-choice rows are matched as free text too.
"""

from __future__ import annotations

import re
from typing import Any

from datbench_cli.metrics.averaging import mean_score
from datbench_cli.text.extract import extract_final_answer
from datbench_cli.text.mathvista_choices import parse_choice
from datbench_cli.text.mmmu_open import KEY_INDICATORS, shortest_key_tail

KNOWN_DEFECT = (
    "MathVista's multiple-choice path is unreachable through the evaluator (question_type and "
    "choices are not forwarded), so multiple-choice answers are matched as free text and an "
    "option letter never matches a gold written as option text."
)
FREE_FORM = "free_form"
MULTI_CHOICE = "multi_choice"

# The last line may also end in an equation.
_LAST_LINE_INDICATORS = (*KEY_INDICATORS, "=")
_TRIVIAL_TAILS = frozenset({":", ",", ".", "!", "?", ";", "'"})

# The reference's three number patterns. Each digit-led branch carries a (?<!\d) guard that only
# skips start positions inside a digit run; those starts can never match where the run's first
# digit did not, so the matches are the reference's while long digit runs stay linear-time.
_COMMA_NUMBER_RE = re.compile(r"-?\b\d{1,3}(?:,\d{3})+\b")
_SCIENTIFIC_NUMBER_RE = re.compile(r"-?(?<!\d)\d+(?:\.\d+)?[eE][+-]?\d+")
_FIRST_LETTER_RE = re.compile(r"\b([A-E])\b")
_SIMPLE_NUMBER_RE = re.compile(r"-?(?:(?<!\d)\d+\.\d+|\.\d+|(?<!\d)\d+\b)(?![eE][+-]?\d+)(?![,\d])")


def normalize(text: str) -> list[Any]:
    """``[round(number, 2)]`` when ``text`` is a number (commas ignored); else the lower-cased
    text, padded both ways when it is a single character (to avoid trivial substring hits)."""
    text = text.strip()
    try:
        # Quirk: numbers are rounded to 2 decimals on both sides; MathVista's precision is ignored.
        return [round(float(text.replace(",", "")), 2)]
    except ValueError:
        pass
    text = text.lower()
    if len(text) == 1:
        # Quirk: a one-character answer is padded, so "B" never occurs inside "(b)".
        return [" " + text, text + " "]
    return [text]


def extract_numbers(text: str) -> list[str]:
    """Every number in ``text``: comma-grouped, then scientific, then plain ones."""
    return [
        *_COMMA_NUMBER_RE.findall(text),
        *_SCIENTIFIC_NUMBER_RE.findall(text),
        *_SIMPLE_NUMBER_RE.findall(text),
    ]


def _key_responses(response: str) -> list[str]:
    """The answer-looking tail of each line, or the whole (lower-cased) response when none."""
    text = response.strip().strip(".").lower()
    # Quirk: the reference also splits at ". " before a capital, which never occurs after lower().
    lines = text.split("\n")
    keys: list[str] = []
    for index, line in enumerate(lines):
        indicators = _LAST_LINE_INDICATORS if index == len(lines) - 1 else KEY_INDICATORS
        tail = shortest_key_tail(line, indicators)
        if tail and tail.strip() not in _TRIVIAL_TAILS:
            keys.append(tail)
    return keys or [text]


def parse_open_response(response: str) -> list[Any]:
    """Candidate answers (normalised strings and numbers, de-duplicated through a set)."""
    short = extract_final_answer(response)
    keys = [short] if short else _key_responses(response)
    candidates = list(keys)
    for key in keys:
        candidates.extend(extract_numbers(key))
    normalized = [item for candidate in candidates for item in normalize(candidate)]
    # Quirk: set de-duplication makes the order hash-dependent.
    return list(set(normalized))


def eval_open(gold: Any, parsed: list[Any]) -> bool:
    """A parsed string containing a gold string, or a parsed number equal to a gold number."""
    if isinstance(gold, list):
        golds = [item for answer in gold for item in normalize(answer)]
    else:
        golds = normalize(gold)
    gold_texts = [g for g in golds if isinstance(g, str)]
    for candidate in parsed:
        # Quirk: strings match by containment, numbers by equality; never one against the other.
        if isinstance(candidate, str):
            if any(text in candidate for text in gold_texts):
                return True
        elif candidate in golds:
            return True
    return False


def _eval_choice(gold: Any, parsed: Any) -> bool:
    if isinstance(gold, list):
        return any(answer == parsed for answer in gold)
    return gold == parsed


def _score_multi_choice(sample: dict[str, Any], gold: Any, model_output: str) -> tuple[float, Any]:
    all_choices = sample.get("all_choices", [])
    if not all_choices:
        # No letters to parse: the gold text just has to occur in the output.
        return (1.0 if gold in model_output else 0.0), None
    choices = sample.get("choices", [])
    index2ans = {all_choices[i]: choice for i, choice in enumerate(choices) if i < len(all_choices)}
    extracted = extract_final_answer(str(model_output)).strip().upper()
    if len(extracted) == 1 and extracted in all_choices:
        parsed = extracted
    else:
        letter = _FIRST_LETTER_RE.search(extracted)
        if letter and letter.group(1) in all_choices:
            # Quirk: the FIRST letter of the extracted answer wins ("a b c" -> "A").
            parsed = letter.group(1)
        else:
            parsed = parse_choice(model_output, all_choices, index2ans)
    return (1.0 if _eval_choice(gold, parsed) else 0.0), parsed


def score_sample(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """Score one sample; ``question_type`` selects the multiple-choice or open-answer path."""
    # Quirk: the evaluator never forwards question_type, so it is always free-form there.
    question_type = sample.get("question_type", FREE_FORM)
    gold = sample.get("ground_truth_answer") or sample.get("answer")
    if question_type == MULTI_CHOICE:
        score, parsed = _score_multi_choice(sample, gold, model_output)
    else:
        extracted = extract_final_answer(str(model_output)).strip()
        parsed = normalize(extracted) if extracted else parse_open_response(model_output)
        # The reference's "last number" fallback for an unparsed response is unreachable here:
        # the parsed response is always a list.
        score = 1.0 if eval_open(gold, parsed) else 0.0
    return {
        "score": score,
        "ground_truth": gold,
        "question_type": question_type,
        "parsed_response": parsed,
        "model_output": model_output,
    }


def compute_metrics(predictions: list[dict[str, Any]]) -> dict[str, float]:
    """Mean score."""
    return {"accuracy": mean_score(predictions)}
