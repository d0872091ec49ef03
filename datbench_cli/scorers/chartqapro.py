"""ChartQAPro: relaxed correctness per answer item, with year flags, list repair and MCQ letters.

A sample's score is the mean over answer items (or over conversation turns), so it can be
fractional; ``is_correct`` is decided by the evaluator (score >= 0.5).
"""

from __future__ import annotations

import ast
import re
import warnings
from typing import Any

from datbench_cli.metrics.averaging import float_sum, mean_score
from datbench_cli.metrics.relaxed import RELATIVE_TOLERANCE, normalize_text, relaxed_match
from datbench_cli.scorers.base import SampleFields, default_input
from datbench_cli.text.extract import extract_final_answer

# Quirk: ChartQAPro's tolerance carries a tiny epsilon that ChartQA's lacks (1 vs 1.05 passes).
TOLERANCE = RELATIVE_TOLERANCE + 1e-10
EXACT_MATCH_TYPES = frozenset({"Fact Checking", "Multi Choice"})
OPTION_LETTERS = frozenset("ABCDE")

_BRACKETED_RE = re.compile(r"^\[(.*)\]$")
_BARE_ITEM_RE = re.compile(r"(?<!['\w])(\w[^,]*?)(?!['\w])")
_LEADING_LETTER_RE = re.compile(r"^([a-zA-Z])[).]")


def _literal(text: str) -> Any:
    """``ast.literal_eval`` with its compile-time warnings silenced (they never change a value)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.literal_eval(text)


def _gold_answers(sample: dict[str, Any]) -> list[Any]:
    """The gold list: ``all_answers``; else the legacy keys; else ``[answer]``; else ``[]``."""
    golds = sample.get("all_answers")
    if isinstance(golds, list) and golds:
        return golds
    legacy = sample.get("Answer") or sample.get("ground_truth_answer")
    if isinstance(legacy, list):
        return legacy
    if legacy is not None:
        return [legacy]
    answer = sample.get("answer")
    return [] if answer is None else [answer]


def _trim(value: Any) -> str:
    # Two successive strips: "5.\n" keeps its dot.
    return str(value).strip(".").strip("\n")


def _choice_letter(text: Any) -> str:
    """ "b) text" / "B." / "b" -> "B"; anything else unchanged (stripped)."""
    text = str(text).strip()
    match = _LEADING_LETTER_RE.match(text)
    if match:
        return match.group(1).upper()
    if len(text) == 1 and text.isalpha():
        return text.upper()
    return text


def _letter_prediction(sample: dict[str, Any], target: str, prediction: str) -> str:
    """Multi Choice: reduce the prediction to its option letter when the target is one."""
    target_letter = str(target).strip().upper()
    is_letter = len(target_letter) == 1 and target_letter in OPTION_LETTERS
    # Quirk: a text target ("UK") leaves "b) UK" unconverted and it is then compared exactly.
    if is_letter and sample.get("mcq_conversion") is None:
        return _choice_letter(prediction)
    return prediction


def _repair_list(target: Any) -> Any:
    """Quote the bare items of a ``[a, b]`` target and evaluate it; the original when that fails."""
    if not isinstance(target, str):
        return target
    match = _BRACKETED_RE.match(target.strip())
    if not match:
        return target
    # Quirk: each item is quoted word by word, so "[New York, Boston]" gives ['NewYork', 'Boston'].
    quoted = _BARE_ITEM_RE.sub(r"'\1'", match.group(1))
    try:
        return _literal(f"[{quoted}]")
    except (SyntaxError, ValueError):
        return target


def _as_list(text: Any) -> list[str] | None:
    """The items (as trimmed strings) of a Python list literal; ``None`` for anything else."""
    if not isinstance(text, str):
        return None
    try:
        parsed = _literal(text)
    except Exception:  # noqa: BLE001 - any unparsable text is simply not a list
        return None
    if not isinstance(parsed, list):
        return None
    return [str(item).strip(" '") for item in parsed]


def _expand_flags(year_flags: Any, count: int) -> list[str] | None:
    if year_flags is None:
        return None
    if not isinstance(year_flags, list):
        year_flags = [year_flags]
    flags = [str(flag).upper() for flag in year_flags]
    # Quirk: too few flags repeats the whole list count times (not padding).
    return flags * count if len(flags) < count else flags


def _is_percentage_question(question: Any) -> bool:
    return question is not None and "percentage" in question.lower()


def relaxed_correctness(
    target: Any,
    prediction: Any,
    year_flags: Any,
    always_exact: bool,
    question: Any,
) -> float:
    """Mean item score of ``prediction`` against ``target`` (both possibly list literals)."""
    targets = _as_list(str(_repair_list(target))) or [str(target)]
    # Quirk: the prediction gets no list repair; "[a, c]" stays one opaque string.
    predictions = _as_list(str(prediction)) or [str(prediction)]
    flags = _expand_flags(year_flags, len(targets))

    scores: list[float] = []
    for index in range(max(len(targets), len(predictions))):
        if index >= len(targets) or index >= len(predictions):
            scores.append(0.0)
            continue
        target_item, pred_item = targets[index], predictions[index]
        flag = flags[index] if flags and index < len(flags) else "NO"
        if flag.upper() == "YES" or always_exact:
            matched = normalize_text(str(target_item)) == normalize_text(str(pred_item))
        else:
            matched = relaxed_match(
                pred_item,
                target_item,
                tolerance=TOLERANCE,
                exact_zero_target=True,
                ratio_as_percent=_is_percentage_question(question),
            )
        scores.append(1.0 if matched else 0.0)
    return float_sum(scores) / len(scores) if scores else 0.0


def _question_type(sample: dict[str, Any]) -> Any:
    return sample.get("Question Type") or sample.get("question_type", "unknown")


def _year_flags(sample: dict[str, Any]) -> Any:
    return sample.get("Year") or sample.get("year_flags", [])


def _score_single_turn(sample: dict[str, Any], model_output: Any) -> dict[str, Any]:
    golds = _gold_answers(sample)
    # Quirk: the LAST gold item is the target.
    target = _trim(golds[-1]) if golds else ""
    question_type = _question_type(sample)
    year_flags = _year_flags(sample)
    prediction = _trim(extract_final_answer(str(model_output)))
    if question_type == "Conversational":
        # Quirk: a conversational question is judged with its last year flag only.
        year_flags = year_flags[-1:] if isinstance(year_flags, list) else [year_flags]
    if question_type == "Multi Choice":
        prediction = _letter_prediction(sample, target, prediction)
    score = relaxed_correctness(
        target,
        prediction,
        year_flags,
        question_type in EXACT_MATCH_TYPES,
        sample.get("question", ""),
    )
    return {
        "score": score,
        "ground_truth": target,
        "model_output": str(model_output),
        "pred_answer": prediction,
        "question_type": question_type,
        "is_multi_turn": False,
    }


def _turn_flags(question_type: Any, year_flags: list[Any], turn: int) -> list[Any]:
    if question_type == "Conversational":
        return year_flags[-1:]
    if turn < len(year_flags):
        return [year_flags[turn]]
    return [year_flags[0]] if year_flags else []


def _turn_question(sample: dict[str, Any], turn: int) -> Any:
    questions = sample.get("all_questions") or sample.get("question", [])
    if isinstance(questions, list) and turn < len(questions):
        return questions[turn]
    if isinstance(questions, str):
        return questions
    return sample.get("question", "")


def _score_multi_turn(sample: dict[str, Any], model_output: Any) -> dict[str, Any]:
    golds = _gold_answers(sample)
    year_flags = _year_flags(sample)
    question_type = _question_type(sample)
    if not isinstance(year_flags, list):
        year_flags = [year_flags]
    outputs = model_output if isinstance(model_output, list) else [model_output]
    # Quirk: turns are paired from the FIRST gold item on (the single-turn path uses the last).
    turns = min(len(golds), len(outputs), len(year_flags) if year_flags else len(golds))

    turn_scores: list[float] = []
    turn_details: list[dict[str, Any]] = []
    for turn in range(turns):
        target = _trim(golds[turn])
        prediction = _trim(extract_final_answer(str(outputs[turn])))
        if question_type == "Multi Choice":
            prediction = _letter_prediction(sample, target, prediction)
        score = relaxed_correctness(
            target,
            prediction,
            _turn_flags(question_type, year_flags, turn),
            question_type in EXACT_MATCH_TYPES,
            _turn_question(sample, turn),
        )
        turn_scores.append(score)
        turn_details.append(
            {"turn": turn + 1, "score": score, "ground_truth": target, "prediction": prediction}
        )
    return {
        "score": float_sum(turn_scores) / len(turn_scores) if turn_scores else 0.0,
        "ground_truth": golds,
        "model_output": outputs,
        "pred_answer": [_trim(extract_final_answer(str(output))) for output in outputs],
        "question_type": question_type,
        "is_multi_turn": True,
        "turn_scores": turn_scores,
        "turn_details": turn_details,
    }


def scorer_input(sample: SampleFields, metadata: Any) -> dict[str, Any]:
    """The default input plus the question fields; ``all_answers`` prefers the metadata's list."""
    out = default_input(sample, metadata, ("question_type", "year_flags", "is_multi_turn"))
    # Quirk: list metadata ("[]") raises AttributeError here, as in the reference.
    from_metadata = metadata.get("all_answers")
    if isinstance(from_metadata, list) and from_metadata:
        out["all_answers"] = from_metadata
    elif sample.all_answers:
        out["all_answers"] = sample.all_answers
    else:
        out["all_answers"] = [sample.answer]
    return out


def score_sample(sample: dict[str, Any], model_output: Any) -> dict[str, Any]:
    """Score one sample; a list output (or ``is_multi_turn``) is scored turn by turn."""
    if sample.get("is_multi_turn", False) or isinstance(model_output, list):
        return _score_multi_turn(sample, model_output)
    return _score_single_turn(sample, model_output)


def compute_metrics(predictions: list[dict[str, Any]]) -> dict[str, float]:
    """Mean (possibly fractional) score."""
    return {"accuracy": mean_score(predictions)}
