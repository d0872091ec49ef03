"""MathVista: MMMU-style open-answer matching (:mod:`datbench_cli.text.open_answer`, with the
reference mathvista copy's rules) and a multiple-choice path for module-level calls.

Through the evaluator every sample takes the open-answer path: ``question_type`` and ``choices``
are never forwarded, so MathVista's own multiple-choice rows are matched as free text too.
"""

from __future__ import annotations

import re
from typing import Any

from datbench_cli.metrics.averaging import mean_score
from datbench_cli.text.extract import extract_final_answer
from datbench_cli.text.mathvista_choices import parse_choice
from datbench_cli.text.open_answer import (
    MATHVISTA,
    normalize_answer,
    open_answer_matches,
    parse_open_response,
)

KNOWN_DEFECT = (
    "MathVista's multiple-choice path is unreachable through the evaluator (question_type and "
    "choices are not forwarded), so multiple-choice answers are matched as free text and an "
    "option letter never matches a gold written as option text."
)
FREE_FORM = "free_form"
MULTI_CHOICE = "multi_choice"

_FIRST_LETTER_RE = re.compile(r"\b([A-E])\b")


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
        if extracted:
            parsed = normalize_answer(extracted, MATHVISTA)
        else:
            parsed = parse_open_response(model_output, MATHVISTA)
        # The reference's "last number" fallback for an unparsed response is unreachable here:
        # the parsed response is always a list.
        score = 1.0 if open_answer_matches(gold, parsed, MATHVISTA) else 0.0
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
