"""The reference's final-answer extractor (``erma_utils.extract_final_answer``), byte-exact.

Used by the evaluator's fallback path and by most scorers before they compare answers. Any
deviation here changes scores almost everywhere, so every rule below mirrors the reference,
including its quirks (noted inline).
"""

from __future__ import annotations

import re

from datbench_cli.text.boxed import last_boxed

# `\s*` may cross newlines before the keyword and after the colon ("Answer:\nB" gives "B");
# `.` stops only at "\n", so "\r" or "\u2028" stay inside the captured text.
ANSWER_LINE_RE = re.compile(r"(?im)^\s*(?:final\s+answer|answer)\s*:\s*(.+)$")
# The boxed rule, r"\\+boxed\{([^}]+)\}", is text.boxed.last_boxed.
PIPE_BOX_RE = re.compile(r"<\|begin_of_box\|>(.*?)<\|end_of_box\|>", re.DOTALL)
# The reference unwraps ``^<\s*name\s*>\s*(.*?)\s*<\s*/\s*name\s*>$`` (re.I | re.S), which is
# cubic in a run of blank space between the tags; :func:`_unwrap_tag` matches the two tags with
# these halves instead.
_WRAPPER_NAMES = ("answer", "final_answer", "final")
_OPEN_TAG_RES = tuple(re.compile(rf"<\s*{name}\s*>", re.I | re.S) for name in _WRAPPER_NAMES)
_CLOSE_TAG_RES = tuple(re.compile(rf"<\s*/\s*{name}\s*>$", re.I | re.S) for name in _WRAPPER_NAMES)
_WHITESPACE_RE = re.compile(r"\s+")
_PLACEHOLDER_RE = re.compile(r"<\s*answer\s*>")
_PLACEHOLDERS = frozenset({"<answer>", "<final>", "<final answer>", "<final_answer>"})
# Exactly these four characters are stripped from both ends (no typographic quotes).
_QUOTE_CHARS = "\"'` "


def _wrapped_body(text: str, opening: re.Pattern[str], closing: re.Pattern[str]) -> str | None:
    """Group 1 of the reference's wrapper pattern for one tag name, matched at the start of
    ``text``, or ``None``.

    The closing tag must end the text and holds no ``<`` after its first character, so it can
    only start at the last ``<``. Between the tags, the leading ``\\s*`` takes the whole run of
    blank space and the lazy group stops where only blank space is left before the closing tag.
    (``\\s`` and ``str.isspace`` are the same characters.)
    """
    opened = opening.match(text)
    if opened is None:
        return None
    start = opened.end()
    close_at = text.rfind("<")
    if close_at < start or closing.match(text, close_at) is None:
        return None
    return text[start:close_at].strip()


def _unwrap_tag(text: str) -> str:
    text = text.strip()
    for opening, closing in zip(_OPEN_TAG_RES, _CLOSE_TAG_RES, strict=True):
        body = _wrapped_body(text, opening, closing)
        if body is not None:
            return body
    return text


def clean_candidate(text: str | None) -> str:
    """Normalise an extracted candidate the way the reference does ("" for placeholders)."""
    text = (text or "").strip().strip(_QUOTE_CHARS)
    text = _unwrap_tag(text)
    text = _WHITESPACE_RE.sub(" ", text).strip()
    if not text:
        return ""
    lowered = text.strip().lower()
    if lowered in _PLACEHOLDERS or _PLACEHOLDER_RE.fullmatch(lowered):
        return ""
    return text


# The patterns above backtrack quadratically on hostile text when run with finditer (many
# unclosed "<|begin_of_box|>" or "\\boxed{", or thousands of blank lines). The scans that follow find the
# same last match as finditer would, in linear time; tests/test_extract.py checks them against
# the patterns on random inputs.
_ANSWER_TAIL_RE = re.compile(r"(?:final\s+answer|answer)\s*:\s*(.+)$", re.I | re.M)
_NON_SPACE_RE = re.compile(r"\S")


_PIPE_OPEN = "<|begin_of_box|>"
_PIPE_CLOSE = "<|end_of_box|>"


def last_pipe_box(text: str) -> str | None:
    """Group 1 of the last ``PIPE_BOX_RE`` match in ``finditer`` order, or ``None``.

    Each match runs from an opening marker to the first closing marker after it; once no closing
    marker follows, no later opening marker can match either.
    """
    last = None
    opening = text.find(_PIPE_OPEN)
    while opening != -1:
        start = opening + len(_PIPE_OPEN)
        closing = text.find(_PIPE_CLOSE, start)
        if closing == -1:
            break
        last = text[start:closing]
        opening = text.find(_PIPE_OPEN, closing + len(_PIPE_CLOSE))
    return last


def last_answer_line(text: str) -> str | None:
    """Group 1 of the last ``ANSWER_LINE_RE`` match in ``finditer`` order, or ``None``.

    A match starts at a line start; its leading ``\\s*`` reaches the first non-space character,
    where the keyword must begin, so every line start in one run of whitespace shares one
    candidate position and only that position needs trying.
    """
    last = None
    line_start = 0
    size = len(text)
    while line_start <= size:
        found = _NON_SPACE_RE.search(text, line_start)
        if found is None:
            break
        keyword_at = found.start()
        match = _ANSWER_TAIL_RE.match(text, keyword_at)
        if match is not None:
            last = match.group(1)
            resume = match.end()
        else:
            resume = keyword_at
        newline = text.find("\n", resume)
        if newline == -1:
            break
        line_start = newline + 1
    return last


def extract_final_answer(text: object) -> str:
    """The final short answer in a model output, or "" (non-strings give "").

    First applicable rule returns: the last ``<|begin_of_box|>..<|end_of_box|>`` block; else the
    last ``\\boxed{...}``; else the last ``Answer:``/``Final Answer:`` line; else the last
    non-blank line (split with ``str.splitlines``, which knows more line breaks than the regex).
    A winning rule returns its cleaned candidate even when that is "".
    """
    if not isinstance(text, str):
        return ""
    for finder in (last_pipe_box, last_boxed, last_answer_line):
        found = finder(text)
        if found is not None:
            return clean_candidate(found)
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return clean_candidate(lines[-1]) if lines else ""
