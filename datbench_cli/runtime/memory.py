"""Give the memory a long run has freed back to the system before the next phase allocates.

``score`` frees its per-sample columns (references, responses, the work list) before it
aggregates. glibc keeps what was freed inside its heap, scattered among live blocks, and the
aggregation's arrays then grow the heap instead of reusing it: the process's resident size
climbs past what it holds (200,000 samples: 10 MB). ``malloc_trim`` hands the free pages
back, so the next phase starts from what is really in use. Elsewhere (musl, macOS) there is
nothing to call and this does nothing.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(None)  # the symbols already loaded, the C library among them
        trim = libc.malloc_trim
    except (AttributeError, OSError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim  # type: ignore[no-any-return]


def return_freed_memory() -> bool:
    """Return the heap's free pages to the system (glibc's ``malloc_trim(0)``); ``False``
    where the C library has no such call."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
