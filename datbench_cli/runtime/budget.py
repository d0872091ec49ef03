"""A per-sample time budget: a runaway scorer becomes a recorded error, not a stalled run."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

DEFAULT_SAMPLE_TIMEOUT = 30.0
# After the budget, the alarm repeats this often until the block is left: a SampleTimeout that
# lands where Python drops exceptions (a __del__, a weakref or GC callback: "Exception ignored
# in ...") would otherwise leave the rest of the sample unbounded.
_REPEAT_SECONDS = 0.5


class SampleTimeout(BaseException):
    """Scoring one sample took longer than its budget.

    A ``BaseException`` (like ``KeyboardInterrupt``), so the broad ``except Exception`` blocks
    that reference scorers use to turn failures into a score of 0 cannot swallow it: the
    evaluator catches it explicitly and records the sample as a scorer error.
    """


def _on_alarm(signum: int, frame: object) -> None:
    raise SampleTimeout("scoring this sample exceeded its time budget")


def _usable(seconds: float | None) -> bool:
    return bool(
        seconds
        and seconds > 0
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )


_handler_depth = 0


@contextlib.contextmanager
def alarm_handler(seconds: float | None) -> Iterator[None]:
    """Install the ``SIGALRM`` handler once around many :func:`time_limit` blocks.

    Installing a signal handler costs more than scoring a typical sample, so a loop over many
    samples installs it once here; the previous handler is restored afterwards.
    """
    global _handler_depth
    if not _usable(seconds):
        yield
        return
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    _handler_depth += 1
    try:
        yield
    finally:
        _handler_depth -= 1
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`SampleTimeout` inside the block once ``seconds`` of wall time have passed.

    Uses ``SIGALRM``, so it acts only in the main thread of a POSIX process (elsewhere, or with
    ``seconds`` of ``None``/0, the block runs unbounded). Python's regex engine checks for signals
    while matching, so catastrophic backtracking is interrupted too. Inside
    :func:`alarm_handler` only the timer is set; otherwise the handler is installed for the block.
    """
    if not _usable(seconds):
        yield
        return
    assert seconds is not None
    if _handler_depth == 0:
        with alarm_handler(seconds), time_limit(seconds):
            yield
        return
    signal.setitimer(signal.ITIMER_REAL, seconds, _REPEAT_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
