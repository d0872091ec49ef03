"""TextVQA (``text-vqa``): VQA soft accuracy with the EvalAI processor, plus a currency fallback."""

from __future__ import annotations

import re
from typing import Any

from datbench_cli.metrics.averaging import mean_score
from datbench_cli.metrics.vqa_accuracy import normalize_evalai_answer, vqa_accuracy
from datbench_cli.text.extract import extract_final_answer

# Any of these in the prediction or a reference enables the numeric fallback.
MONEY_SYMBOLS = ("$", "£", "€", "¥", "₹", "%")
# Deleted before the non-numeric sweep (the sweep removes "¥" and "₹" anyway).
_DELETED_FIRST = ("$", "£", "€", "%", ",")
_NON_NUMERIC_RE = re.compile(r"[^0-9.]")


def numeric_form(text: str) -> str:
    """Digits and periods only; several periods keep the first as the decimal point."""
    if not text:
        return ""
    for symbol in _DELETED_FIRST:
        text = text.replace(symbol, "")
    text = _NON_NUMERIC_RE.sub("", text)
    if text.count(".") > 1:
        parts = [part for part in text.split(".") if part]
        if parts:
            text = parts[0] + "." + "".join(parts[1:])
    return text.strip(".")


def _has_digit(text: str) -> bool:
    return any(char.isdigit() for char in text)


def _numeric_fallback(pred_answer: str, references: Any) -> bool:
    """True when a currency/percent answer equals some reference once reduced to its number."""
    # Quirk: both checks run before the "or", so a null reference list raises TypeError here.
    pred_has_symbol = any(symbol in str(pred_answer) for symbol in MONEY_SYMBOLS)
    ref_has_symbol = any(
        any(symbol in str(reference) for symbol in MONEY_SYMBOLS) for reference in references
    )
    if not (pred_has_symbol or ref_has_symbol):
        return False
    prediction = numeric_form(pred_answer)
    if not (_has_digit(pred_answer) and prediction):
        return False
    # Quirk: full credit on one matching reference, and "5%" equals "$5" (symbols are dropped).
    for reference in references:
        if reference and _has_digit(str(reference)):
            if numeric_form(str(reference)) == prediction:
                return True
    return False


def score_sample(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """Score one sample against the annotator answers (``all_answers``)."""
    # Quirk: ``answers`` is never set by the evaluator, so this reads ``all_answers``.
    references = sample.get("answers", sample.get("all_answers", []))
    pred_answer = extract_final_answer(model_output)
    score = vqa_accuracy(pred_answer or "", references, normalize_evalai_answer)
    if score == 0.0 and _numeric_fallback(pred_answer, references):
        score = 1.0
    return {
        "score": score,
        "ground_truth_answers": references,
        "model_output": model_output,
        "pred_answer": pred_answer,
    }


def compute_metrics(predictions: list[dict[str, Any]]) -> dict[str, float]:
    """Mean soft accuracy."""
    return {"accuracy__TextVQA-OCR": mean_score(predictions)}
