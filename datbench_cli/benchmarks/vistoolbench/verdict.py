"""Reading a rubric judge's output: ``parse_vtb_verdict`` (met / not met / unparsed).

Rules, first hit wins (spec §3.2):

1. the ``verdict`` field: a JSON boolean, or a string that normalises to a known token;
2. the raw output as JSON (one surrounding code fence dropped; else the first ``{`` from which a
   JSON object decodes): the first present key of :data:`VERDICT_KEYS` decides when its value is
   a boolean or a known token; a top-level JSON string or boolean is itself the value;
3. a ``judge result: met`` / ``judge_result = "not met"`` phrase anywhere in the raw output;
4. the whole raw output normalising to a known token;
5. otherwise unparsed (``None``). The word "met" in free text never decides by itself.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

Status = Literal["met", "not_met"]

MET_TOKENS = frozenset({"met", "meets", "yes", "true", "pass", "passed", "satisfied"})
NOT_MET_TOKENS = frozenset(
    {"not met", "unmet", "does not meet", "not satisfied", "no", "false", "fail", "failed"}
)
VERDICT_KEYS = ("judge_result", "verdict", "result", "judgement", "judgment")

_EDGE_CHARS = " \t\r\n\"'`*"
_SPACE_RE = re.compile(r"\s+")
# The fence rule is ``\A```(?:json)?[ \t]*\r?\n?(.*?)\r?\n?```\Z`` (re.S | re.I), group 1 stripped:
# :func:`unfenced` computes it without the pattern, which backtracks quadratically over blank
# space after an opening fence with no closing one.
_FENCE = "```"
_FENCE_OPEN_RE = re.compile(r"```(?:json)?", re.IGNORECASE)
_PHRASE_RE = re.compile(r"judge[ _]result[\s*\"'`]*[:=][\s*\"'`]*(not\s+met|met)\b", re.IGNORECASE)
# Candidate "{" positions tried for an embedded object; bounds the work on hostile output.
_MAX_OBJECT_STARTS = 64
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class Judgement:
    """The parsed verdict (``None`` = unparsed) and the judge's explanation, if any."""

    status: Status | None
    explanation: str | None = None


def normalise(text: str) -> str:
    """Lower-case; trim; drop surrounding quotes/backticks/asterisks and one trailing period;
    ``_`` and ``-`` become spaces; whitespace runs become one space."""
    text = text.lower().strip(_EDGE_CHARS)
    if text.endswith("."):
        text = text[:-1].strip(_EDGE_CHARS)
    text = text.replace("_", " ").replace("-", " ")
    return _SPACE_RE.sub(" ", text).strip()


def _token_status(value: Any) -> Status | None:
    if isinstance(value, bool):
        return "met" if value else "not_met"
    if isinstance(value, str):
        word = normalise(value)
        if word in MET_TOKENS:
            return "met"
        if word in NOT_MET_TOKENS:
            return "not_met"
    return None


def _first_object(text: str) -> dict[str, Any] | None:
    start = text.find("{")
    tries = 0
    while start != -1 and tries < _MAX_OBJECT_STARTS:
        tries += 1
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None


def unfenced(text: str) -> str:
    """``text`` without one surrounding code fence, stripped (unchanged without one).

    The fence pattern matches exactly when ``text`` starts and ends with its own three
    backticks: the lazy group takes anything (re.S), the optional parts between it and the
    fences are blank space, and a greedy ``json`` is never given back. Stripped, the group is
    what lies between ``json`` (if any) and the closing fence.
    """
    opening = _FENCE_OPEN_RE.match(text)
    if opening is None or len(text) < 2 * len(_FENCE) or not text.endswith(_FENCE):
        return text
    return text[opening.end() : -len(_FENCE)].strip()


def _json_value(raw: str) -> Any:
    """The raw output as JSON: the whole (unfenced) text, else its first decodable object."""
    text = unfenced(raw.strip())
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _first_object(text)


def _lookup(obj: dict[str, Any], key: str) -> tuple[bool, Any]:
    for name, value in obj.items():
        if isinstance(name, str) and name.lower() == key:
            return True, value
    return False, None


def _from_json(value: Any) -> Status | None:
    if isinstance(value, str | bool):
        return _token_status(value)
    if isinstance(value, dict):
        for key in VERDICT_KEYS:
            present, item = _lookup(value, key)
            if present:
                return _token_status(item)
    return None


def _explanation(value: Any) -> str | None:
    if isinstance(value, dict):
        present, text = _lookup(value, "explanation")
        if present and isinstance(text, str):
            return text
    return None


def read_judgement(verdict: Any, raw: Any) -> Judgement:
    """The verdict and explanation of one judge line (never raises)."""
    text = raw if isinstance(raw, str) else ""
    value = _json_value(text) if text else None
    explanation = _explanation(value)
    status = _token_status(verdict)
    if status is None:
        status = _from_json(value)
    if status is None and text:
        phrase = _PHRASE_RE.search(text)
        if phrase:
            status = "not_met" if phrase.group(1).lower().startswith("not") else "met"
    if status is None and text:
        status = _token_status(text)
    return Judgement(status, explanation)


def parse_vtb_verdict(verdict: Any, raw: Any) -> Status | None:
    """``"met"``, ``"not_met"`` or ``None`` (unparsed) for one judge output."""
    return read_judgement(verdict, raw).status
