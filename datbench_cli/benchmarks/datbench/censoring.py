"""Censoring beside accuracy (our addition, ``summary["censoring"]``): per group, how many
scored samples did not get a complete answer or verdict, and the accuracy over the rest.

A scored sample is *censored* when its response was truncated (``finish_reason: length``),
empty, refused or errored (``metadata.response_status`` where the report carries it), its
output has an unclosed ``<think>`` block or is thinking only (nothing after ``</think>``), or
its judge verdict is unparsed, missing or stale. ``accuracy_completed`` is the mean score over
the other samples; it is an extra number and never replaces the official accuracy (censored
samples count, as scored, in every seed key).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from datbench_cli.benchmarks.datbench.schema import SampleScore

_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_STATUSES = ("truncated", "empty", "refused", "errored")
_VERDICTS = ("unparsed", "missing", "stale")
KEYS = (
    *_STATUSES,
    "unclosed_think",
    "thinking_only",
    *(f"judge_{v}" for v in _VERDICTS),
)


def thinking(output: str) -> str | None:
    """``unclosed_think`` (a ``<think>`` never closed), ``thinking_only`` (nothing but
    whitespace after the last ``</think>``), or ``None``."""
    opens = [m.start() for m in _THINK_OPEN.finditer(output)]
    closes = [m.end() for m in _THINK_CLOSE.finditer(output)]
    if opens and (not closes or max(opens) > max(closes)):
        return "unclosed_think"
    if closes and not output[max(closes) :].strip():
        return "thinking_only"
    return None


def reasons(result: SampleScore, truncated_ids: Collection[str] = ()) -> list[str]:
    """Why one scored sample is censored (empty list: completed)."""
    meta = result.metadata if isinstance(result.metadata, dict) else {}
    status = meta.get("response_status")
    if status is None and result.id in truncated_ids:
        status = "truncated"
    details = meta.get("score_details")
    verdict = details.get("judge_verdict") if isinstance(details, dict) else None
    return sample_reasons(status, result.vlm_output, meta.get("eval_mode"), verdict)


def sample_reasons(status: Any, output: Any, eval_mode: Any, verdict: Any) -> list[str]:
    """:func:`reasons` from the parts of one result: its response status (``None``: not
    known), output text, eval mode and judge verdict."""
    found: list[str] = []
    text = str(output or "")
    if status is None and not text.strip():
        status = "empty"
    if status in _STATUSES:
        found.append(str(status))
    think = thinking(text)
    if think is not None:
        found.append(think)
    if eval_mode == "judge" and verdict in _VERDICTS:
        found.append(f"judge_{verdict}")
    return found
