"""Scorers run with the reference's call-stack headroom.

A deeply nested model output (JSON 990 levels deep) makes the reference's recursive scorers
succeed or raise ``RecursionError`` depending on how many frames are already on the stack. The
reference is called from a script: ``<module>`` -> ``compute_metrics`` -> ``score_sample``. A
worker's path to a scorer is deeper and always the same, so the first call in a process
measures it and raises the recursion limit once, by exactly the difference; every later call
in that process sees the recursion room the scorer has under the reference.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

# Recursion units the reference has used where ``compute_metrics`` calls ``score_sample`` from
# a top-level script (the same on CPython 3.11 to 3.13, measured with a probe).
_REFERENCE_USED = 3

_raised: list[bool] = []  # set once per process (a worker's first call)


def _room(depth: int = 0) -> int:
    """How many more nested calls fit from here."""
    try:
        return _room(depth + 1)
    except RecursionError:
        return depth


def _raise_once() -> None:
    # The probe starts one frame below the caller's call site.
    limit = sys.getrecursionlimit()
    extra = limit - _room() - 1 - _REFERENCE_USED
    if extra > 0:
        sys.setrecursionlimit(limit + extra)
    _raised.append(True)


def call_with_reference_headroom(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)`` with the recursion room the reference's ``score_sample`` has (the
    limit is set at this process's first call: call it from one place only)."""
    if not _raised:
        _raise_once()
    return function(*args)
