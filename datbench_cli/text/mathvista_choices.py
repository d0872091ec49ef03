"""MathVista's multiple-choice letter parser (the reference's MMMU-derived cascade).

Only reachable through a module-level call with ``question_type == "multi_choice"``: the evaluator
never forwards ``question_type`` for MathVista rows.
"""

from __future__ import annotations

import re
from typing import Any

from datbench_cli.text.boxed import boxed_letter

_ANSWER_BOXED_LINE_RE = re.compile(
    r"^(?:final\s+answer|answer)\s*:\s*\\+boxed\{\s*([A-E])\s*\}\s*$", re.IGNORECASE
)
_ANSWER_LETTER_LINE_RE = re.compile(r"^(?:final\s+answer|answer)\s*:\s*([A-E])\b", re.IGNORECASE)
_LONE_LETTER_RE = re.compile(r"\b([A-E])\b", re.IGNORECASE)
_NOT_ALNUM_SPACE_RE = re.compile(r"[^a-z0-9\s]")
_WHITESPACE_RUN_RE = re.compile(r"\s+")

# Stripped from both ends one after the other (not as one set).
_EDGE_PUNCTUATION = (",", ".", "!", "?", ";", ":", "'")
FUZZY_THRESHOLD = 0.8


def _answer_line_letter(response: str) -> str | None:
    """A letter from an ``Answer: \\boxed{X}`` line, else an ``Answer: X`` line (last line first)."""
    lines = [line.strip() for line in str(response).splitlines() if line.strip()]
    for pattern in (_ANSWER_BOXED_LINE_RE, _ANSWER_LETTER_LINE_RE):
        for line in reversed(lines):
            match = pattern.match(line)
            if match:
                # Quirk: this letter is not checked against all_choices.
                return match.group(1).upper()
    return None


def _token_set(text: Any) -> set[str]:
    text = _NOT_ALNUM_SPACE_RE.sub(" ", (text or "").lower())
    return set(_WHITESPACE_RUN_RE.sub(" ", text).strip().split())


def _fuzzy_letter(response: str, all_choices: Any, index2ans: dict[Any, Any]) -> Any:
    """The option whose tokens mostly (>= 80 %) occur in the response, or ``None``."""
    response_tokens = _token_set(response)
    best, best_overlap = None, 0.0
    for letter, option in index2ans.items():
        option_tokens = _token_set(option)
        if not option_tokens:
            continue
        overlap = len(option_tokens & response_tokens) / float(len(option_tokens))
        if overlap > best_overlap:
            best, best_overlap = letter, overlap
    if best is not None and best_overlap >= FUZZY_THRESHOLD and best in all_choices:
        return best
    return None


def _candidates(
    response: str, all_choices: Any, index2ans: dict[Any, Any]
) -> tuple[list[Any], str]:
    """Candidate letters and how they were found: "bracket", "letter" or "content"."""
    found = [c for c in all_choices if f"({c})" in response]
    if found:
        return found, "bracket"
    found = [c for c in all_choices if f"{c} " in response]
    if not found:
        found = [c for c in all_choices if f"{c}." in response]
    if found:
        return found, "letter"
    if len(response.split()) > 5:
        lowered = response.lower()
        return [k for k, option in index2ans.items() if option.lower() in lowered], "content"
    return [], "letter"


def _last_mentioned(
    candidates: list[Any], how: str, response: str, index2ans: dict[Any, Any]
) -> Any:
    """The candidate mentioned last (first one on ties, like ``numpy.argmax``)."""
    if how == "bracket":
        positions = [response.rfind(f"({c})") for c in candidates]
    elif how == "letter":
        positions = [response.rfind(f" {c} ") for c in candidates]
    else:
        lowered = response.lower()
        positions = [lowered.rfind(index2ans[c].lower()) for c in candidates]
    return candidates[positions.index(max(positions))]


def parse_choice(response: str, all_choices: Any, index2ans: dict[Any, Any]) -> Any:
    """The chosen option letter of a free-text ``response``, or ``None``."""
    letter = _answer_line_letter(response)
    if letter is not None:
        return letter
    boxed = boxed_letter(response)
    if boxed is not None:
        return boxed.upper()
    for char in _EDGE_PUNCTUATION:
        response = response.strip(char)
    response = f" {response} "
    lone = response.strip().upper()
    if lone in all_choices:
        return lone
    for letter in reversed(_LONE_LETTER_RE.findall(response)):
        if letter.upper() in all_choices:
            return letter.upper()
    candidates, how = _candidates(response, all_choices, index2ans)
    if not candidates:
        return _fuzzy_letter(response, all_choices, index2ans)
    if len(candidates) == 1:
        return candidates[0]
    return _last_mentioned(candidates, how, response, index2ans)
