"""MathVista: MMMU-style open-answer matching (:mod:`datbench_cli.text.open_answer`, with the
reference mathvista copy's rules) and a multiple-choice path for module-level calls.

Through the evaluator every sample takes the open-answer path: ``question_type`` and ``choices``
are never forwarded, so MathVista's own multiple-choice rows are matched as free text too.
"""

from __future__ import annotations

import re
from typing import Any

from datbench_cli.metrics.averaging import mean_score
from datbench_cli.metrics.edit_distance import levenshtein
from datbench_cli.scorers.base import SampleFields, copy_fields, default_input, note_correction
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
# Fixes of the corrected profile (docs/known-defects.md): name -> the rule applied.
CORRECTIONS = {
    "mathvista-multi-choice": "a multi_choice row with choices is scored as MathVista's "
    "evaluation does: the answer letter (else the most similar choice) picks an option, whose "
    "text is compared with the gold",
}
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
    # Corrected (mathvista-multi-choice): scorer_input_corrected forwards it and the choices.
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


def scorer_input_corrected(sample: SampleFields, metadata: Any) -> dict[str, Any]:
    """The corrected profile's input: the default one plus ``question_type`` and ``choices``
    (MathVista's own fields, which the reference's evaluator never forwards)."""
    out = default_input(sample, metadata)
    copy_fields(out, metadata, ("question_type", "choices"))
    return out


def score_sample_corrected(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """The corrected profile: MathVista's multiple-choice rule for multi_choice rows."""
    # The reference's input never holds these two fields; its score is taken without them.
    reference_input = {k: v for k, v in sample.items() if k not in ("question_type", "choices")}
    reference = score_sample(reference_input, model_output)
    choices = sample.get("choices")
    if sample.get("question_type") != MULTI_CHOICE or not isinstance(choices, list) or not choices:
        return reference
    # Corrected (mathvista-multi-choice): the chosen option's text is compared with the gold.
    texts = [str(choice) for choice in choices]
    letters = [chr(ord("A") + i) for i in range(len(texts))]
    letter_input = {**sample, "all_choices": letters}
    _, letter = _score_multi_choice(letter_input, None, model_output)
    extracted = extract_final_answer(str(model_output)).strip()
    chosen: str | None = None
    if isinstance(letter, str) and letter in letters:
        chosen = texts[letters.index(letter)]
    elif extracted:  # an empty answer picks nothing
        chosen = min(texts, key=lambda text: levenshtein(extracted, text))
    gold = reference["ground_truth"]
    correct = chosen is not None and (chosen == str(gold).strip() or letter == gold)
    details = {
        **reference,
        "score": 1.0 if correct else 0.0,
        "question_type": MULTI_CHOICE,
        "parsed_response": chosen,
        "parsed_letter": letter,
    }
    return note_correction(details, reference["score"], "mathvista-multi-choice")


def compute_metrics(predictions: list[dict[str, Any]]) -> dict[str, float]:
    """Mean score."""
    return {"accuracy": mean_score(predictions)}
