"""Scorers run with the reference's call-stack headroom.

A deeply nested model output (JSON 990 levels deep) makes the reference's recursive scorers
succeed or raise ``RecursionError`` depending on how many frames are already on the stack. The
reference is called from a script: ``<module>`` -> ``compute_metrics`` -> ``score_sample``. A
worker's path to a scorer is deeper and always the same, so the first call in a process
measures it and sets the recursion limit once, to exactly the reference's room (under CPython's
default limit) above that path; every later call in that process sees the recursion room the
scorer has under the reference. A forked process measures again: it inherits its parent's
limit and flag, not its parent's stack, and a parent's raised limit (or a caller's own) must
not change what a worker's scorer can do.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

# Recursion units the reference has used where ``compute_metrics`` calls ``score_sample`` from
# a top-level script (the same on CPython 3.11 to 3.13, measured with a probe), under the
# default limit a script runs with.
_REFERENCE_USED = 3
_REFERENCE_LIMIT = 1000

_set_in: list[int] = []  # the process id the limit was set in (a worker's first call)


def _room(depth: int = 0) -> int:
    """How many more nested calls fit from here."""
    try:
        return _room(depth + 1)
    except RecursionError:
        return depth


def _set_once() -> None:
    # The probe starts one frame below the caller's call site.
    used = sys.getrecursionlimit() - _room() - 1
    sys.setrecursionlimit(used + _REFERENCE_LIMIT - _REFERENCE_USED)
    _set_in[:] = [os.getpid()]


def call_with_reference_headroom(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)`` with the recursion room the reference's ``score_sample`` has (the
    limit is set at this process's first call: call it from one place only)."""
    if _set_in != [os.getpid()]:
        _set_once()
    return function(*args)
