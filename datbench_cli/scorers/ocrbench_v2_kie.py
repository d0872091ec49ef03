"""OCRBench v2 key-information F1: dict parsing of the prediction and field-level F1 against
every variant of the GT dict (list-valued GT fields are alternatives)."""

from __future__ import annotations

import ast
import json
import re
from itertools import product
from typing import Any

from datbench_cli.runtime.budget import SampleTimeout

_FENCE_OPEN_RE = re.compile(r"```(?:python|json)?\n", re.IGNORECASE)
_FENCE_CLOSE = "\n```"
_KEY_RUN_RE = re.compile(r"[\w\s]+")
_SPACE_RUN_RE = re.compile(r"\s*")
_VALUE_RUN_RE = re.compile(r"[^\n,\"'{}]+")
_QUOTES = "\"'"
_ASSIGN = ":="
_NOT_VALUE = "\n,\"'{}"


def _fenced_body(text: str) -> str | None:
    """Group 1 of ``` ```(?:python|json)?\\n(.*?)\\n``` ``` (DOTALL, IGNORECASE), in linear time.

    Only the first opening fence can match: a later one would need a closing fence that the
    first one would have found.
    """
    opening = _FENCE_OPEN_RE.search(text)
    if opening is None:
        return None
    close = text.find(_FENCE_CLOSE, opening.end())
    return None if close == -1 else text[opening.end() : close]


def _run_end(run: re.Pattern[str], text: str, pos: int) -> int:
    """Where ``run`` matched at ``pos`` ends (the callers' runs always match there)."""
    found = run.match(text, pos)
    return pos if found is None else found.end()


def _pair_at(text: str, pos: int) -> tuple[tuple[str, str] | None, int]:
    """One attempt of the reference's key/value regex at ``pos``.

    The regex is ``["']?([\\w\\s]+)["']?\\s*[:=]\\s*["']?([^\\n,"'{}]+)["']?``. Returns the
    ``(key, value)`` groups and the match end, or ``None`` and the next position worth trying:
    the outcome depends only on where the key's run of word/space characters ends, so after a
    failure every later start inside that run fails too (this keeps the scan linear where the
    regex itself backtracks quadratically).
    """
    key_start = pos + 1 if text[pos] in _QUOTES else pos
    key_run = _KEY_RUN_RE.match(text, key_start)
    if key_run is None:
        return None, pos + 1
    key_end = key_run.end()
    assign = key_end
    if assign < len(text) and text[assign] in _QUOTES:
        assign = _run_end(_SPACE_RUN_RE, text, assign + 1)
    if assign >= len(text) or text[assign] not in _ASSIGN:
        return None, key_end
    value_start = _value_start(text, assign + 1)
    if value_start is None:
        return None, key_end
    value_end = _run_end(_VALUE_RUN_RE, text, value_start)
    end = value_end + 1 if value_end < len(text) and text[value_end] in _QUOTES else value_end
    return (text[key_start:key_end], text[value_start:value_end]), end


def _value_start(text: str, after_assign: int) -> int | None:
    """Where ``\\s*["']?([^\\n,"'{}]+)`` starts its group when matched at ``after_assign``."""
    spaces_end = _run_end(_SPACE_RUN_RE, text, after_assign)
    size = len(text)
    if spaces_end < size and text[spaces_end] in _QUOTES:
        if spaces_end + 1 < size and text[spaces_end + 1] not in _NOT_VALUE:
            return spaces_end + 1
    elif spaces_end < size and text[spaces_end] not in _NOT_VALUE:
        return spaces_end
    # Backtracking into the spaces: the last one that is not a newline starts the value.
    for index in range(spaces_end - 1, after_assign - 1, -1):
        if text[index] != "\n":
            return index
    return None


def find_pairs(text: str) -> list[tuple[str, str]]:
    """``re.findall`` of the reference's key/value regex on ``text``, in linear time."""
    pairs: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        pair, pos = _pair_at(text, pos)
        if pair is not None:
            pairs.append(pair)
    return pairs


def scrape_pairs(text: str) -> dict[str, str]:
    """Every ``key: value`` / ``key = value`` pair, stripped (later keys win)."""
    return {key.strip(): value.strip() for key, value in find_pairs(text)}


def _parsed_dict(content: str, parse: Any) -> dict[Any, Any] | None:
    try:
        value = parse(content)
    except SampleTimeout:
        raise
    except Exception:
        return None
    return value if isinstance(value, dict) else None


def parse_prediction_dict(text: Any) -> dict[Any, Any]:
    """The prediction as a dict: fenced or whole text as JSON, else as a Python literal, else
    scraped ``key: value`` pairs."""
    body = _fenced_body(text)
    content = body if body is not None else text.strip()
    for parse in (json.loads, ast.literal_eval):
        value = _parsed_dict(content, parse)
        if value is not None:
            return value
    return scrape_pairs(content)


def gt_variants(gt: dict[Any, Any]) -> list[dict[Any, Any]]:
    """Every combination of the GT's alternatives (a list value lists alternatives)."""
    keys = list(gt)
    choices = [value if isinstance(value, list) else [value] for value in gt.values()]
    variants = [dict(zip(keys, combination, strict=True)) for combination in product(*choices)]
    # Quirk: an empty alternatives list yields no combination; the GT becomes {}.
    return variants or [{}]


def _field_text(value: Any) -> Any:
    # Quirk: only truthy values are normalised; "", 0 and [] compare as they are.
    if value:
        return str(value).lower().strip().replace("\n", " ").replace(" ", "")
    return value


def dict_f1(pred: dict[Any, Any], gt: dict[Any, Any]) -> float:
    """Field F1 over the union of keys (missing value = ``None``)."""
    hits = extra = missed = 0
    for key in set(pred.keys()).union(set(gt.keys())):
        pred_value, gt_value = _field_text(pred.get(key)), _field_text(gt.get(key))
        if pred_value is None and gt_value is None:
            continue
        if pred_value is None:
            missed += 1
        elif gt_value is None:
            extra += 1
        elif pred_value == gt_value:
            hits += 1
        else:
            extra += 1
            missed += 1
    precision = hits / (hits + extra) if (hits + extra) > 0 else 0.0
    recall = hits / (hits + missed) if (hits + missed) > 0 else 0.0
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


def _gt_variants(answers: Any) -> list[dict[Any, Any]] | None:
    """The variants of the first answer read as a dict (a Python literal if text), or ``None``."""
    try:
        first = answers[0]
        gt = ast.literal_eval(first) if isinstance(first, str) else first
        if not isinstance(gt, dict):
            return None
        return gt_variants(gt)
    except SampleTimeout:
        raise
    except Exception:
        return None


def kie_f1(predict: Any, answers: Any) -> float:
    """Best field F1 of the prediction against any GT variant (0.0 without a GT dict)."""
    if not answers:
        return 0.0
    pred = parse_prediction_dict(predict)
    variants = _gt_variants(answers)
    if variants is None:
        return 0.0
    best = 0.0
    for variant in variants:
        best = max(best, dict_f1(pred, variant))
    return best
