"""CC-OCR document parsing (``cc-ocr-doc_parsing``).

Documents, formulas and molecules (SMILES) score ``1 - Levenshtein / longer length`` after a
per-category normalisation; tables score a structure-only tree similarity (tags only, normalised
by the GT node count).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from datbench_cli.metrics.averaging import mean_score
from datbench_cli.metrics.edit_distance import levenshtein
from datbench_cli.metrics.ocr_text import (
    first_pipe_box,
    to_halfwidth,
)
from datbench_cli.metrics.teds import table_structure_similarity
from datbench_cli.metrics.teds_content import table_content_similarity
from datbench_cli.scorers.base import SampleFields, default_input, note_correction
from datbench_cli.text.boxed import greedy_boxed

KNOWN_DEFECT = (
    "Tables are scored on their tag structure only, normalised by the GT node count: cell text "
    "is ignored, so a table of the right shape with wrong text scores 1.0."
)
# Fixes of the corrected profile (docs/known-defects.md): name -> the rule applied.
CORRECTIONS = {
    "cc-ocr-table-teds": "tables score TEDS with cell text (PubTabNet's TEDS, normalised by "
    "the larger table), as CC-OCR's own evaluation scores them",
}

_LATEX_FENCE_RE = re.compile(r"```latex\s*", re.IGNORECASE)
_FENCE_RE = re.compile(r"```\s*")
# Commands deleted from documents, in this order; those ending in "{" lose their argument too,
# up to the first "}" on the same line (the reference's lazy `\{.*?\}`).
_DOC_PREAMBLE = (
    "\\documentclass{",
    "\\usepackage{",
    "\\begin{document}",
    "\\end{document}",
    "\\geometry{",
    "\\title{",
    "\\author{",
)
_TABLE_BLOCK_OPEN_RE = re.compile(r"<table>", re.IGNORECASE)
_TABLE_BLOCK_CLOSE_RE = re.compile(r"</table>", re.IGNORECASE)
_TABLE_TAG_RE = re.compile(r"<table[^>]*>", re.IGNORECASE)
_BETWEEN_TAGS_RE = re.compile(r">\s+<")


def _remove_chars(text: str, chars: str) -> str:
    return text.translate(dict.fromkeys(map(ord, chars)))


def _drop_braced_command(text: str, prefix: str) -> str:
    """Delete every ``prefix`` + argument up to the first ``}`` before the next newline.

    Linear-time equivalent of ``re.sub(re.escape(prefix) + r".*?\\}", "", text)``: when one
    occurrence finds no ``}`` on its line, no later occurrence on that line can either.
    """
    pieces: list[str] = []
    kept_from = 0
    search_from = 0
    while (start := text.find(prefix, search_from)) != -1:
        body = start + len(prefix)
        line_end = text.find("\n", body)
        if line_end == -1:
            line_end = len(text)
        close = text.find("}", body, line_end)
        if close == -1:
            search_from = line_end
            continue
        pieces.append(text[kept_from:start])
        kept_from = search_from = close + 1
    pieces.append(text[kept_from:])
    return "".join(pieces)


def _strip_fences(text: str) -> str:
    return _FENCE_RE.sub("", _LATEX_FENCE_RE.sub("", text))


def normalize_doc(text: Any) -> str:
    """Documents: no code fences, no preamble commands, no spaces/newlines/tabs/CRs."""
    if not isinstance(text, str):
        return ""
    text = _strip_fences(text)
    for command in _DOC_PREAMBLE:
        if command.endswith("{"):
            text = _drop_braced_command(text, command)
        else:
            text = text.replace(command, "")
    return _remove_chars(text, " \n\t\r")


def normalize_formula(text: Any) -> str:
    """Formulas: no code fences, no tabs/newlines/spaces."""
    if not isinstance(text, str):
        return ""
    # Quirk: "\r" is kept for formulas (unlike documents).
    return _remove_chars(_strip_fences(text), "\t\n ")


def normalize_molecular(text: Any) -> str:
    """SMILES: no ``<smiles>`` tags, no newlines/spaces."""
    if not isinstance(text, str):
        return ""
    text = text.replace("<smiles>", "").replace("</smiles>", "")
    # Quirk: tabs and "\r" are kept for molecules.
    return _remove_chars(text, "\n ")


def normalize_table(text: Any) -> str:
    """Tables: first ``<table>...</table>`` block only, bare ``<table>`` tags, no space between
    tags, no newlines, full-width forms folded."""
    if not isinstance(text, str):
        return ""
    opening = _TABLE_BLOCK_OPEN_RE.search(text)
    if opening is not None:
        closing = _TABLE_BLOCK_CLOSE_RE.search(text, opening.end())
        if closing is not None:
            text = "<table>" + text[opening.end() : closing.start()] + "</table>"
    # `<table[^>]*>` can only match before the last ">"; bounding it keeps the substitution
    # linear on outputs full of unterminated "<table".
    last_close = text.rfind(">") + 1
    text = _TABLE_TAG_RE.sub("<table>", text[:last_close]) + text[last_close:]
    text = _BETWEEN_TAGS_RE.sub("><", text)
    return to_halfwidth(text.replace("\n", ""))


def extract_box(text: Any) -> str:
    r"""The first pipe box, else the greedy ``\boxed{...}`` span, else the whole output."""
    if not isinstance(text, str):
        return ""
    # Quirk: the \boxed{ capture is greedy, up to the LAST "}" of the whole output.
    for found in (first_pipe_box(text), greedy_boxed(text)):
        if found is not None:
            return found
    return text


def _edit_similarity(pred: str, gt: str) -> tuple[float, dict[str, Any]]:
    distance = levenshtein(pred, gt)
    longest = max(len(pred), len(gt))
    score = 1.0 if longest == 0 else 1.0 - distance / longest
    details = {"edit_distance": distance, "pred_length": len(pred), "gt_length": len(gt)}
    return max(0.0, min(1.0, score)), details


def _table_similarity(pred: str, gt: str) -> tuple[float, dict[str, Any]]:
    # Quirk: structure only (cell text ignored), normalised by the GT node count.
    # Corrected (cc-ocr-table-teds): _table_content_similarity compares the cell text too.
    score = table_structure_similarity(pred, gt)
    details = {"method": "teds", "pred_length": len(pred), "gt_length": len(gt)}
    return max(0.0, min(1.0, score)), details


def _table_content_similarity(pred: str, gt: str) -> tuple[float, dict[str, Any]]:
    score = table_content_similarity(pred, gt)
    details = {"method": "teds-content", "pred_length": len(pred), "gt_length": len(gt)}
    return max(0.0, min(1.0, score)), details


_NORMALIZERS = {
    "table": normalize_table,
    "formula": normalize_formula,
    "molecular": normalize_molecular,
}


def scorer_input(sample: SampleFields, metadata: Any) -> dict[str, Any]:
    """The default input plus ``l2_category`` when the metadata has it."""
    return default_input(sample, metadata, ("l2_category",))


def score_sample(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """Score one sample, routed by its ``l2_category`` (default ``doc``)."""
    return _score(sample, model_output, _table_similarity)


def score_sample_corrected(sample: dict[str, Any], model_output: str) -> dict[str, Any]:
    """The corrected profile: tables are scored with their cell text; the rest as before."""
    reference = score_sample(sample, model_output)
    if reference.get("method") != "teds":
        return reference
    details = _score(sample, model_output, _table_content_similarity)
    return note_correction(details, reference["score"], "cc-ocr-table-teds")


def _score(
    sample: dict[str, Any],
    model_output: str,
    table_similarity: Callable[[str, str], tuple[float, dict[str, Any]]],
) -> dict[str, Any]:
    prediction = extract_box(model_output)
    ground_truth = sample.get("answer") or sample.get("ground_truth_answer", "")
    category = sample.get("l2_category") or sample.get("l2-category") or "doc"
    # Any other category (or a non-string one) is scored as a document.
    normalize = (
        _NORMALIZERS.get(category, normalize_doc) if isinstance(category, str) else normalize_doc
    )
    pred, gt = normalize(prediction), normalize(ground_truth)
    if normalize is normalize_table:
        score, details = table_similarity(pred, gt)
    else:
        score, details = _edit_similarity(pred, gt)
    return {
        "score": score,
        "l2_category": category,
        "ground_truth": ground_truth,
        "model_output": model_output,
        **details,
    }


def compute_metrics(predictions: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean score (``accuracy`` and ``score``)."""
    if not predictions:
        return {"accuracy": 0.0}
    accuracy = mean_score(predictions)
    return {"accuracy": accuracy, "score": accuracy}
