"""Scorers run with the reference's call-stack headroom, however deep our own stack is.

A deeply nested model output (JSON 990 levels deep) makes the reference's recursive scorers
succeed or raise ``RecursionError`` depending on how many frames are already on the stack. The
reference is called from a script: ``<module>`` -> ``compute_metrics`` -> ``score_sample``. Our
path to a scorer (the CLI, generators, the worker pool, the time budget) is deeper, so without
this an output the reference scores would raise here. :func:`call_with_reference_headroom` raises
the recursion limit for the call by exactly the difference, so the scorer sees the recursion
room it has under the reference, whatever called us.
"""

from __future__ import annotations

import sys
import threading
import types
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

# Recursion units the reference has used where ``compute_metrics`` calls ``score_sample`` from
# a top-level script (the same on CPython 3.11 to 3.13, measured with a probe).
_REFERENCE_USED = 3

_lock = threading.Lock()
_active = 0
_base_limit = 0
# Call path (the ids of its frames' code objects) -> (recursion units used there, the code
# objects themselves: held, so that no id of a key is reused by another code object).
_used_by_path: dict[tuple[int, ...], tuple[int, tuple[types.CodeType, ...]]] = {}


def _path_codes(frame: Any) -> tuple[types.CodeType, ...]:
    codes = []
    while frame is not None:
        codes.append(frame.f_code)
        frame = frame.f_back
    return tuple(codes)


def _room(depth: int = 0) -> int:
    """How many more nested calls fit from here (a probe; run once per call path)."""
    try:
        return _room(depth + 1)
    except RecursionError:
        return depth


def _used_here(codes: tuple[types.CodeType, ...]) -> int:
    # Keyed by the code objects' ids: hashing a code object hashes its constants every time
    # (about 15 us a sample for a worker's 30-odd frames, against 3 us for their ids).
    key = tuple(map(id, codes))
    known = _used_by_path.get(key)
    if known is not None:
        return known[0]
    # The probe starts one frame below the caller's call site.
    used = sys.getrecursionlimit() - _room() - 1
    _used_by_path[key] = (used, codes)
    return used


def call_with_reference_headroom(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)`` with the recursion room the reference's ``score_sample`` has."""
    global _active, _base_limit
    codes = _path_codes(sys._getframe())
    with _lock:
        if _active == 0:
            _base_limit = sys.getrecursionlimit()
        _active += 1
        extra = _used_here(codes) - _REFERENCE_USED
        if extra > 0 and sys.getrecursionlimit() < _base_limit + extra:
            sys.setrecursionlimit(_base_limit + extra)
    try:
        return function(*args)
    finally:
        with _lock:
            _active -= 1
            if _active == 0:
                sys.setrecursionlimit(_base_limit)


# -- the interpreter's frame stack -------------------------------------------------------------

# Value-stack slots reserved by the frame of :func:`in_roomy_frame` (8 bytes each: 256 KB).
_ROOM_SLOTS = 32_768


def _roomy(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    return function(*args, **kwargs)


# The same function with a deep value stack declared: its frame does not fit a 16 KB chunk.
_roomy = types.FunctionType(
    _roomy.__code__.replace(co_stacksize=_roomy.__code__.co_stacksize + _ROOM_SLOTS),
    _roomy.__globals__,
    "_roomy",
)


def in_roomy_frame(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``function(*args, **kwargs)``, its calls in a large chunk of the interpreter's frame stack.

    CPython (3.11+) keeps Python frames in 16 KB chunks and frees a chunk as soon as the frame
    at its start returns, so a loop whose calls cross a chunk's end maps and unmaps memory on
    every crossing (measured in ``score``: 7 mmap/munmap pairs per sample, about a second of
    system time per 20,000 samples). The frame this runs ``function`` from declares a 256 KB
    value stack, so it gets a fresh chunk of its own; the calls below it use the unused part
    of that chunk (hundreds of frames) and it is freed only when ``function`` returns. Nothing
    else changes: the extra room is never touched.
    """
    return _roomy(function, *args, **kwargs)
