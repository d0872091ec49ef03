"""MathVision: boxed/phrase answer extraction, MATH normalisation, numeric equivalence.

Numbers are compared through ``latex2sympy2`` 1.9.1 (its grammar decides which answers count as
numbers); the reference then runs Python ``eval`` on SymPy's printed result, which is replaced
here by :func:`datbench_cli.metrics.safe_arith.evaluate` (same values, same failures, no code).
"""

from __future__ import annotations

import re
import sys
import threading
import types
import typing
from fractions import Fraction
from typing import Any

from datbench_cli.metrics.safe_arith import evaluate
from datbench_cli.runtime.budget import SampleTimeout
from datbench_cli.scorers.base import SampleFields, default_input, note_correction
from datbench_cli.scorers.mathvision_nonnumbers import cut_at_unread_token, settled_not_a_number
from datbench_cli.text.boxed import BOXED_OPEN, greedy_boxed
from datbench_cli.text.math_normalize import strip_string

KNOWN_DEFECT = (
    "MathVision compares only the letter when a row has correct_choice_letter but no option "
    "list, so a correct numeric answer scores 0, and `\\%` is stripped from predictions so "
    "`10\\%` never equals a gold `0.1`."
)
# Fixes of the corrected profile (docs/known-defects.md): name -> the rule applied.
CORRECTIONS = {
    "mathvision-answer-without-options": "with a correct_choice_letter but no option list, the "
    "row's answer counts as the gold option's value, as MATH-V's evaluation accepts the value "
    "of the correct option",
}

# The reference's blanket `except Exception` must not hide a spent time budget, nor a broken
# latex2sympy2 install (which would silently turn every numeric comparison into "not equal").
_NEVER_SWALLOWED = (SampleTimeout, ImportError)

CHOICE_LETTERS = "ABCDE"
ANSWER_PHRASES = (
    "the final answer is",
    "the answer is",
    "the correct answer is",
    "the answer should be",
)
DOUBLE_BOXED = "\\\\boxed{"

# (old, new) replacements of find_math_answer after the boxed/`=`/`\approx` cuts, in order.
# Quirk: unit removals are plain substrings ("12 km" -> "12" but "12 cm" -> "12cm").
_ANSWER_REPLACEMENTS = (
    (" ", ""),
    ("\\,", ""),
    ("∞", "\\infty"),
    ("+\\infty", "\\infty"),
    ("\\\\", "\\"),
    ("\n", ""),
    ("\\text", ""),
    ("\\mbox", ""),
    ("bmatrix", "pmatrix"),
    ("\\left", ""),
    ("\\right", ""),
    ("^{\\circ}", ""),
    ("^\\circ", ""),
    ("{m}^3", ""),
    ("m^3", ""),
    ("{units}", ""),
    ("units", ""),
    ("{km}", ""),
    ("km", ""),
)
# Option-letter unwrapping applied to the final prediction, in order.
_LETTER_UNWRAPS = tuple((f"({c})", c) for c in "abcde") + tuple((f"{{{c}}}", c) for c in "abcde")


def find_math_answer(text: str) -> str:
    """The normalised answer inside a (lower-cased) response, as the reference extracts it."""
    text = text.lower().replace("{}", "")
    boxed = greedy_boxed(text)
    answer = text if boxed is None else boxed
    close, open_ = answer.find("}"), answer.find("{")
    if close != -1 and (open_ == -1 or close < open_):
        answer = answer.split("}")[0]
    answer = answer.split("=")[-1].split("\\approx")[-1]
    for old, new in _ANSWER_REPLACEMENTS:
        answer = answer.replace(old, new)
    return strip_string(answer)


def _typing_io_shim() -> None:
    """Python 3.12 removed ``typing.io``, which the ANTLR runtime pinned by latex2sympy2 1.9.1
    (4.7.2) imports for ``TextIO``; provide it so the parser loads on newer Pythons too."""
    if "typing.io" in sys.modules or sys.version_info < (3, 12):
        return
    module = types.ModuleType("typing.io")
    module.TextIO = typing.TextIO  # type: ignore[attr-defined]
    module.BinaryIO = typing.BinaryIO  # type: ignore[attr-defined]
    module.IO = typing.IO  # type: ignore[attr-defined]
    sys.modules["typing.io"] = module


class _NotANumber(Exception):  # noqa: N818 - a verdict, not a malfunction
    """The parser would raise or give no number: every caller treats that as any failure."""


# Fast paths in front of the parser, each giving exactly what ``evaluate(str(latex2sympy(t)))``
# gives (checked against the parser itself in tests/scorers/test_mathvision_fast_paths.py):
# - a plain decimal numeral: sympy.Rational of its digits (an int, else p/q as a float);
# - one ASCII letter: a symbol (or E, I), never a number;
# - a chain of integers joined by + and -: an unevaluated sum of integers (its exact value)
#   when short; longer than the recursion limit, a RecursionError in latex2sympy's convert_add
#   (one frame per operator), which the reference hits too (5,000 terms: 20 s to get there).
_NUMERAL = re.compile(r"[0-9]{1,15}(?:\.[0-9]{1,15})?")
_LETTER = re.compile(r"[A-Za-z]")
_INTEGER_CHAIN = re.compile(r"[0-9]{1,15}(?:[+-][0-9]{1,15})+")
_CHAIN_TERM = re.compile(r"[+-]?[0-9]+")
_SHORT_CHAIN = 200  # operators; up to here the sum is computed here
_UNKNOWN = object()


def _known_number(text: str) -> Any:
    """The fast paths: the value, :class:`_NotANumber`, or ``_UNKNOWN`` (ask the parser)."""
    if _NUMERAL.fullmatch(text):
        value = Fraction(text)
        return value.numerator if value.denominator == 1 else value.numerator / value.denominator
    if _LETTER.fullmatch(text):
        raise _NotANumber(text)
    if _INTEGER_CHAIN.fullmatch(text):
        operators = len(_CHAIN_TERM.findall(text)) - 1
        if operators > sys.getrecursionlimit():
            raise _NotANumber("deeper than the recursion limit")
        if operators <= _SHORT_CHAIN:
            return sum(int(term) for term in _CHAIN_TERM.findall(text))
    return _UNKNOWN


# Memo of parser outcomes (value or _FAILED) by text. latex2sympy is a pure function of its text
# while its module state (``variances``/``var``: filled by its import, changed by `:=`, `\in` and
# differentials) stays the same, so the memo keeps the state it started in (taken when it is
# empty) and only outcomes computed and reused in exactly that state are kept; a RecursionError
# depends on the stack depth of the call, a MemoryError on the moment, so neither is kept.
# Bounded in entries and text size; tied to the converter function (a test's stand-in gets a
# fresh memo).
_MEMO: dict[str, Any] = {}
_MEMO_OWNER: list[Any] = [None]
_MEMO_STATE: list[Any] = [None]  # _state_of(module) when the memo started
_MEMO_LOCK = threading.Lock()  # scorers may run in several threads (a web service)
_MEMO_ENTRIES = 512
_MEMO_TEXT = 20_000
_FAILED = object()


def _state_of(module: Any) -> Any:
    """The two state dicts with their items (``None`` once either is not a dict: a differential
    such as ``dx`` rebinds ``var`` to a Symbol, after which every letter atom fails to convert)."""
    variances, var = getattr(module, "variances", None), getattr(module, "var", None)
    if type(variances) is not dict or type(var) is not dict:
        return None
    return ((variances, tuple(variances.items())), (var, tuple(var.items())))


def _stateless(module: Any) -> bool:
    """The module's state is the one the memo started in: the same two dicts, holding the same
    keys and values (compared by identity)."""
    start, now = _MEMO_STATE[0], _state_of(module)
    if start is None or now is None:
        return False
    return all(
        then is current
        and len(items) == len(current_items)
        and all(a is c and b is d for (a, b), (c, d) in zip(items, current_items, strict=True))
        for (then, items), (current, current_items) in zip(start, now, strict=True)
    )


def _latex_number(text: str) -> Any:
    """The reference's ``eval(str(latex2sympy(text)))``, without ``eval``."""
    known = _known_number(text)
    if known is not _UNKNOWN:
        return known
    _typing_io_shim()
    import latex2sympy2  # heavy (SymPy + ANTLR); only when a number is needed

    converter = latex2sympy2.latex2sympy
    if _is_the_real(converter, latex2sympy2):
        cut = cut_at_unread_token(text)  # the parser never reads past the cut
        if cut != text:
            return _latex_number(cut)
        if settled_not_a_number(text, latex2sympy2):
            raise _NotANumber(text)
    with _MEMO_LOCK:
        if _MEMO_OWNER[0] is not converter:
            _MEMO.clear()
            _MEMO_OWNER[0] = converter
        if not _MEMO:
            _MEMO_STATE[0] = _state_of(latex2sympy2)
        memo = _MEMO_ENTRIES > 0 and len(text) <= _MEMO_TEXT and _stateless(latex2sympy2)
        cached = _MEMO.get(text, _UNKNOWN) if memo else _UNKNOWN
    if cached is _FAILED:
        raise _NotANumber(text)
    if cached is not _UNKNOWN:
        return cached
    try:
        value = evaluate(str(converter(text)))
    except (RecursionError, MemoryError):
        raise
    except Exception:
        if memo and _stateless(latex2sympy2):
            _remember(text, _FAILED)
        raise
    if memo and _stateless(latex2sympy2):
        _remember(text, value)
    return value


def _is_the_real(converter: Any, module: Any) -> bool:
    """The module's own function (a test's stand-in is asked every time)."""
    return getattr(converter, "__module__", None) == module.__name__


def _remember(text: str, outcome: Any) -> None:
    with _MEMO_LOCK:
        while _MEMO and len(_MEMO) >= _MEMO_ENTRIES:
            del _MEMO[next(iter(_MEMO))]
        _MEMO[text] = outcome


def _rounded_items(text: str) -> str:
    """``(a,b,...)``/``[a,b,...]`` with each numeric item rounded to 2 places; else unchanged."""
    items = text[1:-1].split(",")
    try:
        brackets = text[0] + text[-1]
        if brackets not in ("()", "[]") or len(items) < 2:
            return text
        # Quirk: str(round(int, 2)) keeps "2" while 2.001 gives "2.0", so [1,2] != [1,2.001].
        rounded = [
            item if "infty" in item or item in ("a", "-a") else str(round(_latex_number(item), 2))
            for item in items
        ]
    except _NEVER_SWALLOWED:
        raise
    except Exception:  # noqa: BLE001 - the reference keeps the text on any failure
        return text
    return brackets[0] + ",".join(rounded) + brackets[1]


def is_equal(gold: str, prediction: str) -> bool:
    """Reference ``is_equal(asw, gt_asw)``: string, tuple-wise, then 2-decimal numeric match."""
    gold, prediction = gold.lower(), prediction.lower()
    if not gold.replace(" ", "") or not prediction.replace(" ", ""):
        return False
    if gold.strip() == prediction.strip():
        return True
    gold, prediction = _rounded_items(gold), _rounded_items(prediction)
    if gold == prediction:
        return True
    try:
        # The reference evaluates its second argument (the prediction) first.
        return round(_latex_number(prediction), 2) == round(_latex_number(gold), 2)
    except _NEVER_SWALLOWED:
        raise
    except Exception:  # noqa: BLE001 - any conversion/evaluation failure means "not equal"
        return False


def _is_float_text(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _cut_after_phrase(text: str, phrase: str) -> str:
    had_phrase = phrase in text
    text = text.split(phrase)[-1].strip()  # Quirk: stripped even when the phrase is absent
    if had_phrase:
        text = text.split("\n")[0].split(". ")[0]
    return text


def _extract_prediction(output: Any) -> str:
    """The reference's chain from a raw output to the compared answer string."""
    answer = str(output).strip()
    for c in CHOICE_LETTERS:
        if answer.endswith((f" {c}.", f" ({c}).")) or answer.startswith(
            (f"{c}\n", f"({c})\n", f"({c}) {c}\n")
        ):
            answer = c
    # Quirk: any float-parsable text after the last "is " (e.g. "nan", "1e3") replaces it all.
    tail = answer.split("is ")[-1].rstrip(".")
    if _is_float_text(tail):
        answer = tail
    if BOXED_OPEN not in answer:
        for phrase in ANSWER_PHRASES:
            answer = _cut_after_phrase(answer, phrase)
            answer = _cut_after_phrase(answer, phrase.replace("the", "The"))
    elif answer.count(DOUBLE_BOXED) > 1:
        answer = DOUBLE_BOXED + answer.split(DOUBLE_BOXED)[-1]
    elif answer.count(BOXED_OPEN) > 1:
        answer = BOXED_OPEN + answer.split(BOXED_OPEN)[-1]
    answer = find_math_answer(answer)
    for old, new in _LETTER_UNWRAPS:
        answer = answer.replace(old, new)
    return answer.rstrip(".").lstrip(":").strip()


def _gold_option_value(gold: str, options: Any) -> str:
    """The option text the gold letter points at, or ``""``."""
    if not options:
        return ""
    try:
        index = ord(gold) - ord("A")
        return options[index] if 0 <= index < len(options) else ""
    except _NEVER_SWALLOWED:
        raise
    except Exception:  # noqa: BLE001 - Quirk: a gold that is not one character has no value
        return ""


def mathvision_process_results(doc: dict[str, Any], results: Any) -> dict[str, Any]:
    """Reference ``mathvision_process_results``: one correctness flag per prediction.

    ``results`` is a list of predictions; a single string counts as one prediction (the form
    the reference's direct-call vectors record).
    """
    predictions = [results] if isinstance(results, str) else results
    scores = []
    for prediction in predictions:
        gold = str(doc.get("answer", ""))
        value = _gold_option_value(gold, doc.get("options", []) or [])
        answer = _extract_prediction(prediction)
        scores.append(is_equal(gold, answer) or is_equal(value, answer))
    return {"mathvision_standard_eval": {"response": predictions, "scores": scores}}


def _option_texts(sample: dict[str, Any]) -> list[Any]:
    structured = sample.get("options_struct")
    if structured:
        return [item["text"] for item in structured]
    texts = []
    for index, raw in enumerate(sample.get("options") or []):
        value = str(raw).strip()
        texts.append(value if value else chr(ord("A") + index))  # empty option -> its letter
    return texts


def scorer_input(sample: SampleFields, metadata: Any) -> dict[str, Any]:
    """The default input plus ``options``, ``options_struct`` and ``correct_choice_letter`` when the metadata has it."""
    return default_input(sample, metadata, ("options", "options_struct", "correct_choice_letter"))


def score_sample(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """Score one MathVision sample (gold letter wins over the row answer)."""
    # Quirk: a correct_choice_letter wins, so with no option list only the letter can match.
    # Corrected (mathvision-answer-without-options): score_sample_corrected also accepts the
    # row's answer there.
    gold = str(sample.get("correct_choice_letter") or sample.get("answer") or "").strip()
    return _score(gold, _option_texts(sample), model_output)


def score_sample_corrected(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """The corrected profile: a letter gold without options also matches the row's answer."""
    reference = score_sample(sample, model_output)
    options = _option_texts(sample)
    letter = str(sample.get("correct_choice_letter") or "").strip()
    answer = str(sample.get("answer") or "").strip()
    if not letter or options or not answer or answer == letter:
        return reference
    # The row's answer stands for the value _gold_option_value reads from an option list.
    if is_equal(answer, _extract_prediction(model_output)):
        details = _score(letter, options, model_output)
        details.update(score=1.0, normalized_target=letter, gold_option_value=answer)
        return note_correction(details, reference["score"], "mathvision-answer-without-options")
    return reference


def _score(gold: str, options: list[Any], model_output: str) -> dict[str, Any]:
    doc = {"answer": gold, "options": options}
    scores = mathvision_process_results(doc, [model_output])["mathvision_standard_eval"]["scores"]
    correct = bool(scores and scores[0])
    return {
        "score": 1.0 if correct else 0.0,
        "pred_answer": model_output,
        # Quirk: "normalized_prediction" is only the stripped raw output.
        "normalized_prediction": (
            model_output.strip() if isinstance(model_output, str) else model_output
        ),
        "normalized_target": gold,
    }


def compute_metrics(predictions: list[dict[str, Any]]) -> dict[str, float]:
    """Accuracy over ``score == 1.0``, rounded to 6 decimals (0.0 for no items)."""
    flags = [details.get("score", 0.0) == 1.0 for details in predictions]
    if not flags:
        return {"accuracy": 0.0}
    # Quirk: rounded to 6 decimals, unlike a plain mean.
    return {"accuracy": round(sum(flags) / len(flags), 6)}
