"""Judge-mode helpers: the judge-prompt rewrite and :func:`parse_judge_verdict`."""

from __future__ import annotations

import re
from typing import Any

import orjson

# The reference rewrites prompts whose last instruction asks for a two-line "Reason:/answer:"
# reply, so a judge run with a small max_new_tokens cannot truncate the verdict.
TWO_LINE_MARKER = "Respond with exactly two lines:"
SINGLE_TOKEN_INSTRUCTION = "\n\nOutput exactly one boolean token: true or false. answer: "

_TRUE_WORDS = frozenset({"correct", "true", "yes"})
_FALSE_WORDS = frozenset({"incorrect", "false", "no"})
_FENCE_RE = re.compile(r"\A```[^\n]*\n(.*?)\n?```\Z", re.DOTALL)
# Rule 3: a line "answer: true|false|yes|no" anywhere; the last such line wins. The words match
# ASCII letters only ((?a:...)): a Unicode-case-insensitive regex would also take look-alikes
# such as "yeſ" (long s) or "anſwer" for the words.
_ANSWER_LINE_RE = re.compile(
    r"^[ \t]*(?a:answer[ \t]*:[ \t]*(true|false|yes|no))\b", re.IGNORECASE | re.MULTILINE
)


def rewrite_judge_prompt(judge_prompt: str | None) -> str:
    """Replace a trailing two-line "Reason/answer" instruction by a single-token one.

    Only the last occurrence of the (case-sensitive) marker counts: everything from it on is
    dropped, the rest is right-stripped and the single-token instruction appended. A prompt
    without the marker is returned unchanged; ``None`` becomes ``""``.
    """
    prompt = judge_prompt or ""
    at = prompt.rfind(TWO_LINE_MARKER)
    if at == -1:
        return prompt
    return prompt[:at].rstrip() + SINGLE_TOKEN_INSTRUCTION


def _word_verdict(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE_WORDS:
            return True
        if word in _FALSE_WORDS:
            return False
    return None


def _json_verdict(text: str) -> bool | None:
    fenced = _FENCE_RE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if not text or text[0] not in "{tfTF":
        return None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and key.strip().lower() == "answer":
                return _word_verdict(item)
    return None


def parse_judge_verdict(verdict: Any, raw_judge_output: Any) -> bool | None:
    """Read a judge verdict: ``True``, ``False`` or ``None`` when it cannot be understood.

    Rules, in order (first hit wins, case-insensitive):

    1. ``verdict``: correct/true/yes or incorrect/false/no; any other value falls through.
    2. ``raw_judge_output`` as JSON, optionally inside one ``` code fence: ``{"answer": bool}``,
       ``{"answer": "yes"|"no"|"true"|"false"|"correct"|"incorrect"}`` or a bare JSON boolean.
    3. A line ``answer: true|false|yes|no`` anywhere in the output (the last one wins).
    4. The whole output being one of true/false/yes/no/correct/incorrect.

    Never raises; deterministic.
    """
    from_field = _word_verdict(verdict)
    if from_field is not None:
        return from_field
    if not isinstance(raw_judge_output, str):
        return None
    text = raw_judge_output.strip()
    if not text:
        return None
    from_json = _json_verdict(text)
    if from_json is not None:
        return from_json
    lines = _ANSWER_LINE_RE.findall(text)
    if lines:
        return lines[-1].lower() in _TRUE_WORDS
    return _word_verdict(text)
