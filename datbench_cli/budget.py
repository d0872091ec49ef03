"""A per-sample time budget: a runaway scorer becomes a recorded error, not a stalled run."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

DEFAULT_SAMPLE_TIMEOUT = 30.0


class SampleTimeout(TimeoutError):
    """Scoring one sample took longer than its budget."""


def _on_alarm(signum: int, frame: object) -> None:
    raise SampleTimeout("scoring this sample exceeded its time budget")


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`SampleTimeout` inside the block once ``seconds`` of wall time have passed.

    Uses ``SIGALRM``, so it acts only in the main thread of a POSIX process (elsewhere, or with
    ``seconds`` of ``None``/0, the block runs unbounded). Python's regex engine checks for signals
    while matching, so catastrophic backtracking is interrupted too.
    """
    usable = (
        seconds
        and seconds > 0
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
