"""OCRBench v2 (``ocrbench-v2``): one matcher per task type, averaged per leaderboard category.

Reproduces the reference as installed from its own setup.py, which lacks ``distance`` and
``nltk``: HTML table parsing always scores 0.0 and full-page OCR at most 0.25.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from datbench_cli.metrics.averaging import float_sum, mean
from datbench_cli.metrics.teds_content import table_content_similarity
from datbench_cli.runtime.budget import SampleTimeout
from datbench_cli.scorers.base import SampleFields, default_input, note_correction
from datbench_cli.scorers.ocrbench_v2_answers import (
    cn_math_expression,
    cn_vqa,
    counting,
    full_page_ocr,
    math_expression,
    multiple_choice,
    vqa,
    vqa_case_sensitive,
)
from datbench_cli.scorers.ocrbench_v2_kie import kie_f1
from datbench_cli.scorers.ocrbench_v2_position import vqa_with_position
from datbench_cli.text.extract import extract_final_answer

KNOWN_DEFECT = (
    "In the reference environment (no `distance` or `nltk` package) every HTML table-parsing "
    "answer scores 0.0 and full-page OCR scores at most 0.25; Chinese parsing tasks are averaged "
    "into the English Parsing category."
)
# Fixes of the corrected profile (docs/known-defects.md): name -> the rule applied.
CORRECTIONS = {
    "ocrbench-v2-html-teds": "HTML table-parsing answers score TEDS with cell text against the "
    "first answer, as OCRBench v2's own script does with its TEDS module installed",
}
_TABLE_TYPES = frozenset({"table parsing en", "table parsing cn"})

# Task types scored on the raw output; every other type on the extracted final answer.
_RAW_OUTPUT_TYPES = frozenset(
    {
        "key information extraction en",
        "key information mapping en",
        "key information extraction cn",
        "chart parsing en",
        "document parsing en",
        "document parsing cn",
        "table parsing en",
        "table parsing cn",
        "text grounding en",
        "VQA with position en",
        "text spotting en",
    }
)

_EN_QA_TYPES = (
    "APP agent en",
    "ASCII art classification en",
    "reasoning VQA en",
    "science QA en",
    "text recognition en",
    "document classification en",
    "cognition VQA en",
    "diagram QA en",
    "fine-grained text recognition en",
)
_CN_QA_TYPES = ("cognition VQA cn", "reasoning VQA cn")

Scored = tuple[Any, str]
Route = Callable[[Any, Any, dict[str, Any]], Scored]


def _qa(open_matcher: Callable[[Any, Any], Any], open_method: str) -> Route:
    """Multiple choice / case-sensitive / ``open_matcher``, by the sample's ``eval``."""

    def route(pred: Any, answers: Any, sample: dict[str, Any]) -> Scored:
        mode = sample.get("eval")
        if mode == "multiple choice":
            return multiple_choice(pred, answers), "multiple_choice"
        if mode == "case sensitive":
            return vqa_case_sensitive(pred, answers), "vqa_case_sensitive"
        return open_matcher(pred, answers), open_method

    return route


def _math_qa(pred: Any, answers: Any, sample: dict[str, Any]) -> Scored:
    if sample.get("eval") == "multiple choice":
        return multiple_choice(pred, answers), "multiple_choice"
    return vqa(pred, answers), "vqa"


def _counting(pred: Any, answers: Any, sample: dict[str, Any]) -> Scored:
    return counting(pred, answers, sample.get("eval") or "exact match"), "counting"


def table_parsing(pred: Any, answers: Any, question: Any) -> int | float:
    """HTML requests: 0.0 (see below); other requests (markdown): VQA on the raw output."""
    if not answers or not isinstance(pred, str):
        return 0.0
    try:
        if "html" in question.lower():
            # Quirk: the reference's TEDS module imports `distance`, which its setup.py does not
            # install; the ImportError turns every HTML table into 0.0, whatever its content.
            # Corrected (ocrbench-v2-html-teds): html_table_teds scores it.
            return 0.0
        return vqa(pred, answers)
    except SampleTimeout:
        raise
    except Exception:
        return 0.0


def _wrap_table(markup: str) -> str:
    """``markup`` without newlines, with a ``<table>`` and ``</table>`` tag added where one is
    missing (what OCRBench v2's script does before TEDS)."""
    markup = markup.replace("\n", "")
    opens, closes = "<table" in markup, "</table>" in markup
    if opens and not closes:
        return markup + "</table>"
    if closes and not opens:
        return "<table>" + markup
    if not opens and not closes:
        return "<table>" + markup + "</table>"
    return markup


def html_table_teds(pred: Any, answers: Any) -> float:
    """The corrected profile's HTML table score: the output from its first ``<body`` (else
    ``<table``) on, TEDS with cell text against the first answer; no table in the output
    scores 0."""
    if not answers or not isinstance(pred, str) or not isinstance(answers, list):
        return 0.0
    flat = pred.replace("\n", "")
    start = flat.find("<body")
    if start < 0:
        start = flat.find("<table")
    if start < 0:
        return 0.0
    return table_content_similarity(_wrap_table(flat[start:]), _wrap_table(str(answers[0])))


def _table(pred: Any, answers: Any, sample: dict[str, Any]) -> Scored:
    return table_parsing(pred, answers, sample.get("question", "")), "teds"


def _handwritten(pred: Any, answers: Any, sample: dict[str, Any]) -> Scored:
    if "简答" in sample.get("question", ""):
        return full_page_ocr(pred, answers), "handwritten_extraction"
    return cn_vqa(pred, answers), "handwritten_extraction"


def _simple(matcher: Callable[[Any, Any], Any], method: str) -> Route:
    def route(pred: Any, answers: Any, sample: dict[str, Any]) -> Scored:
        return matcher(pred, answers), method

    return route


def _grounding(pred: Any, answers: Any, sample: dict[str, Any]) -> Scored:
    return vqa_with_position(pred, sample), "vqa_with_position"


def _spotting(pred: Any, answers: Any, sample: dict[str, Any]) -> Scored:
    return vqa(pred, sample.get("answers", [])), "text_spotting"


_ROUTES: dict[str, Route] = {
    **dict.fromkeys(_EN_QA_TYPES, _qa(vqa, "vqa")),
    **dict.fromkeys(_CN_QA_TYPES, _qa(cn_vqa, "cn_vqa")),
    "formula recognition en": _simple(math_expression, "math_expression"),
    "formula recognition cn": _simple(cn_math_expression, "cn_math_expression"),
    "math QA en": _math_qa,
    "text counting en": _counting,
    "key information extraction en": _simple(kie_f1, "kie_f1"),
    "key information mapping en": _simple(kie_f1, "kie_f1"),
    "key information extraction cn": _simple(kie_f1, "kie_f1"),
    "table parsing en": _table,
    "table parsing cn": _table,
    # Quirk: document and chart parsing use the key-information F1 (a markdown GT scores 0).
    "document parsing en": _simple(kie_f1, "doc_parsing_f1"),
    "document parsing cn": _simple(kie_f1, "doc_parsing_f1"),
    "chart parsing en": _simple(kie_f1, "chart_parsing_f1"),
    "text grounding en": _grounding,
    "VQA with position en": _grounding,
    # Quirk: text spotting is plain VQA against the answers.
    "text spotting en": _spotting,
    # Quirk: full-page OCR is scored on the extracted last line of the output.
    "full-page OCR en": _simple(full_page_ocr, "full_page_ocr"),
    "full-page OCR cn": _simple(full_page_ocr, "full_page_ocr"),
    "handwritten answer extraction cn": _handwritten,
    "text translation cn": _simple(cn_vqa, "cn_vqa"),
}
_FALLBACK: Route = _simple(vqa, "vqa_fallback")


def _known(task_type: Any) -> str | None:
    """``task_type`` if it is a string (metadata may hold anything), else ``None``."""
    return task_type if isinstance(task_type, str) else None


def scorer_input(sample: SampleFields, metadata: Any) -> dict[str, Any]:
    """The default input plus the task fields the metadata has, and ``answers`` (all answers)."""
    out = default_input(sample, metadata, ("type", "eval", "bbox", "bbox_list", "content"))
    out["answers"] = sample.all_answers
    return out


def score_sample(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """Score one sample with the matcher of its task type (``type`` metadata)."""
    task_type = sample.get("type", "")
    answers = sample.get("answers") or sample.get("all_answers", [])
    known = _known(task_type)
    if known in _RAW_OUTPUT_TYPES:
        pred = model_output
    else:
        pred = extract_final_answer(model_output)
    route = _ROUTES.get(known, _FALLBACK) if known is not None else _FALLBACK
    score, method = route(pred, answers, sample)
    return {
        "score": score,
        "task_type": task_type,
        "dataset_name": sample.get("dataset_name", ""),
        "scoring_method": method,
        "ground_truth": answers,
        "model_output": model_output,
        "pred_answer": pred,
    }


def score_sample_corrected(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """The corrected profile: HTML table parsing is scored with TEDS; the rest as before."""
    reference = score_sample(sample, model_output)
    question = sample.get("question", "")
    if (
        reference["task_type"] not in _TABLE_TYPES
        or not isinstance(question, str)
        or "html" not in question.lower()
    ):
        return reference
    score = html_table_teds(reference["pred_answer"], reference["ground_truth"])
    details = {**reference, "score": score, "scoring_method": "teds-content"}
    return note_correction(details, reference["score"], "ocrbench-v2-html-teds")


# Leaderboard categories (English first, then Chinese), by task type.
_EN_CATEGORIES = (
    "Recognition",
    "Referring",
    "Spotting",
    "Extraction",
    "Parsing",
    "Calculation",
    "Understanding",
    "Reasoning",
)
_CN_CATEGORIES = (
    "CN_Recognition",
    "CN_Extraction",
    "CN_Parsing",
    "CN_Understanding",
    "CN_Reasoning",
)
_CATEGORY_OF: dict[str, str] = {
    **dict.fromkeys(
        ("text recognition en", "fine-grained text recognition en", "full-page OCR en"),
        "Recognition",
    ),
    **dict.fromkeys(("text grounding en", "VQA with position en"), "Referring"),
    "text spotting en": "Spotting",
    **dict.fromkeys(("key information extraction en", "key information mapping en"), "Extraction"),
    **dict.fromkeys(
        (
            "document parsing en",
            "chart parsing en",
            "table parsing en",
            "formula recognition en",
            # Quirk: the Chinese parsing tasks are counted in the English Parsing category,
            # which leaves CN_Parsing always empty (0.0).
            "document parsing cn",
            "table parsing cn",
            "formula recognition cn",
        ),
        "Parsing",
    ),
    **dict.fromkeys(("math QA en", "text counting en"), "Calculation"),
    **dict.fromkeys(
        ("document classification en", "cognition VQA en", "diagram QA en"), "Understanding"
    ),
    **dict.fromkeys(
        ("reasoning VQA en", "science QA en", "APP agent en", "ASCII art classification en"),
        "Reasoning",
    ),
    "full-page OCR cn": "CN_Recognition",
    **dict.fromkeys(
        ("key information extraction cn", "handwritten answer extraction cn"), "CN_Extraction"
    ),
    "cognition VQA cn": "CN_Understanding",
    **dict.fromkeys(("reasoning VQA cn", "text translation cn"), "CN_Reasoning"),
}


def compute_metrics(predictions: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-category means (0.0 when empty), ``Average`` over the 8 English categories (the
    headline ``accuracy``) and ``CN_Average`` over the 5 Chinese ones."""
    if not predictions:
        return {"accuracy": 0.0}
    scores: dict[str, list[Any]] = {name: [] for name in _EN_CATEGORIES + _CN_CATEGORIES}
    for details in predictions:
        task_type = _known(details.get("task_type", ""))
        category = _CATEGORY_OF.get(task_type) if task_type is not None else None
        if category is not None:
            scores[category].append(details.get("score", 0.0))
    english = {name: mean(scores[name]) for name in _EN_CATEGORIES}
    chinese = {name: mean(scores[name]) for name in _CN_CATEGORIES}
    average = float_sum(english.values()) / len(english)
    return {
        **english,
        **chinese,
        "Average": average,
        "CN_Average": float_sum(chinese.values()) / len(chinese),
        "accuracy": average,
        "score": average,
    }
