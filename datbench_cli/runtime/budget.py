"""A per-sample time budget: a runaway scorer becomes a recorded error, not a stalled run.

In the main thread of a POSIX process the budget is a ``SIGALRM`` timer: it interrupts any
Python code, ``time.sleep`` and a regex match (Python's regex engine checks for signals). The
caller's own ``SIGALRM`` handler and timer are kept: restored afterwards, with the time spent
subtracted, and an alarm of the caller's that falls due while samples are scored is delivered
to the caller's handler on time.

Elsewhere (a worker thread of a web service, a platform without ``setitimer``) a watchdog
thread raises :class:`SampleTimeout` in the scoring thread when its budget is spent. That stops
Python code, but a single long call into C (a regex match, a sleep) only when the call returns:
a :class:`BudgetWarning` says so, once per process, when such scoring starts. Where neither is
possible (no ``ctypes.pythonapi``), the warning says the budget cannot be enforced.
"""

from __future__ import annotations

import contextlib
import ctypes
import heapq
import itertools
import math
import os
import signal
import threading
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from datbench_cli.errors import UsageError

DEFAULT_SAMPLE_TIMEOUT = 30.0

_ANY_MOMENT = 1e-6  # the shortest timer: "fire now"
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


class BudgetWarning(RuntimeWarning):
    """The per-sample budget is enforced only partly (or not at all) in this context."""


def _message() -> SampleTimeout:
    return SampleTimeout("scoring this sample exceeded its time budget")


def _wanted(seconds: float | None) -> bool:
    return bool(seconds and seconds > 0)


def _signal_usable() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


# -- main thread: SIGALRM ------------------------------------------------------------------


@dataclass
class _AlarmScope:
    """One :func:`alarm_handler` block: the caller's timer it replaced, the running sample."""

    previous: Any
    caller_deadline: float | None
    caller_interval: float
    sample_deadline: float | None = None
    outer: _AlarmScope | None = field(default=None, repr=False)

    def next_delay(self, now: float) -> float:
        """Seconds until the next thing due (the sample's budget or the caller's alarm); 0: none."""
        due = [d for d in (self.sample_deadline, self.caller_deadline) if d is not None]
        return max(min(due) - now, _ANY_MOMENT) if due else 0.0

    def arm(self) -> None:
        signal.setitimer(signal.ITIMER_REAL, self.next_delay(time.monotonic()))

    def fire_caller(self, signum: int, frame: Any) -> None:
        """Deliver the caller's alarm to the caller's handler (its default action included)."""
        now = time.monotonic()
        self.caller_deadline = now + self.caller_interval if self.caller_interval else None
        previous = self.previous
        if callable(previous):
            try:
                previous(signum, frame)
            finally:
                self.arm()
        elif previous == signal.SIG_DFL:
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.raise_signal(signal.SIGALRM)  # the caller asked for the default: exit
        else:  # SIG_IGN or None (installed from C): nothing to deliver
            self.arm()


_scope: _AlarmScope | None = None


def _on_alarm(signum: int, frame: Any) -> None:
    scope = _scope
    if scope is None:
        return
    now = time.monotonic()
    if scope.caller_deadline is not None and now >= scope.caller_deadline - _ANY_MOMENT:
        scope.fire_caller(signum, frame)
        return
    if scope.sample_deadline is not None and now >= scope.sample_deadline - _ANY_MOMENT:
        scope.sample_deadline = now + _REPEAT_SECONDS
        scope.arm()
        raise _message()
    scope.arm()  # early (timer granularity): wait for what is due


@contextlib.contextmanager
def _signal_scope() -> Iterator[None]:
    global _scope
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    delay, interval = signal.setitimer(signal.ITIMER_REAL, 0)
    now = time.monotonic()
    scope = _AlarmScope(previous, now + delay if delay > 0 else None, interval, outer=_scope)
    _scope = scope
    try:
        scope.arm()
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _scope = scope.outer
        signal.signal(signal.SIGALRM, previous)
        if scope.caller_deadline is not None:
            remaining = max(scope.caller_deadline - time.monotonic(), _ANY_MOMENT)
            signal.setitimer(signal.ITIMER_REAL, remaining, scope.caller_interval)


@contextlib.contextmanager
def _signal_limit(scope: _AlarmScope, seconds: float) -> Iterator[None]:
    outer_deadline = scope.sample_deadline
    deadline = time.monotonic() + seconds
    if outer_deadline is not None:
        deadline = min(deadline, outer_deadline)
    scope.sample_deadline = deadline
    scope.arm()
    try:
        yield
    finally:
        scope.sample_deadline = outer_deadline
        scope.arm()


# -- other threads: a watchdog raising SampleTimeout asynchronously ------------------------

_async_exc_api: Any = getattr(getattr(ctypes, "pythonapi", None), "PyThreadState_SetAsyncExc", None)


def _set_async_exc(thread_id: int, exception: type[BaseException] | None) -> None:
    """Make ``thread_id`` raise ``exception`` at its next bytecode (``None``: take it back)."""
    target = ctypes.c_ulong(thread_id)
    _async_exc_api(target, None if exception is None else ctypes.py_object(exception))


class _Watchdog:
    """One daemon thread that raises :class:`SampleTimeout` in threads whose budget is spent."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, int]] = []  # (deadline, token, thread id)
        self._armed: dict[int, int] = {}  # token -> thread id
        self._fired: set[int] = set()
        self._tokens = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, seconds: float) -> int:
        token = next(self._tokens)
        with self._cond:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="datbench-sample-budget", daemon=True
                )
                self._thread.start()
            thread_id = threading.get_ident()
            heapq.heappush(self._heap, (time.monotonic() + seconds, token, thread_id))
            self._armed[token] = thread_id
            self._cond.notify()
        return token

    def disarm(self, token: int) -> bool:
        """Stop watching; ``True`` when the budget was spent (the exception may be pending)."""
        with self._cond:
            self._armed.pop(token, None)
            if token not in self._fired:
                return False
            self._fired.discard(token)
            # Take back an exception not yet delivered (this thread is running, so it is ours).
            _set_async_exc(threading.get_ident(), None)
            return True

    def _run(self) -> None:
        with self._cond:
            while True:
                while self._heap and self._heap[0][1] not in self._armed:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._cond.wait()
                    continue
                deadline, token, thread_id = self._heap[0]
                wait = deadline - time.monotonic()
                if wait > 0:
                    self._cond.wait(wait)
                    continue
                heapq.heappop(self._heap)
                # Again and again until the block is left (see _REPEAT_SECONDS).
                heapq.heappush(self._heap, (deadline + _REPEAT_SECONDS, token, thread_id))
                self._fired.add(token)
                _set_async_exc(thread_id, SampleTimeout)


_watchdog = _Watchdog()
_warned = False


def _reset_after_fork() -> None:
    global _watchdog
    _watchdog = _Watchdog()  # its thread did not survive the fork


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def _warn_once(text: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(text, BudgetWarning, stacklevel=4)


@contextlib.contextmanager
def _watchdog_limit(seconds: float) -> Iterator[None]:
    token = _watchdog.arm(seconds)
    spent = False
    try:
        yield
    except SampleTimeout:
        spent = True
        raise
    finally:
        over = _watchdog.disarm(token)
        if over and not spent:
            # The block ran past its budget inside one C call: the result came too late.
            raise _message()


# -- the public pair -----------------------------------------------------------------------


@contextlib.contextmanager
def alarm_handler(seconds: float | None) -> Iterator[None]:
    """Prepare the budget once around many :func:`time_limit` blocks (one per sample).

    Installing a signal handler costs more than scoring a typical sample, so a loop over many
    samples installs it once here; the caller's handler and timer are restored afterwards.
    Outside the main thread this is where the :class:`BudgetWarning` is given (once).
    """
    if not _wanted(seconds):
        yield
        return
    if _signal_usable():
        with _signal_scope():
            yield
        return
    if _async_exc_api is None:
        _warn_once(
            "the per-sample time budget cannot be enforced here (neither SIGALRM in the main "
            "thread nor ctypes.pythonapi is available): a runaway scorer runs to completion"
        )
    else:
        _warn_once(
            "scoring outside the main thread: the per-sample time budget stops Python code, "
            "but a single long call into C (a regex match) only when that call returns"
        )
    yield


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`SampleTimeout` inside the block once ``seconds`` of wall time have passed.

    ``seconds`` of ``None`` or 0 means unbounded. Inside :func:`alarm_handler` only the timer is
    set; otherwise the handler is prepared for this block alone.
    """
    if not _wanted(seconds):
        yield
        return
    assert seconds is not None
    if _signal_usable():
        if _scope is None:
            with _signal_scope(), _signal_limit(_scope_now(), seconds):
                yield
            return
        with _signal_limit(_scope, seconds):
            yield
        return
    if _async_exc_api is None:
        yield
        return
    with _watchdog_limit(seconds):
        yield


def _scope_now() -> _AlarmScope:
    assert _scope is not None
    return _scope


def check_sample_timeout(seconds: float) -> float | None:
    """The budget ``--sample-timeout`` asks for (``None``: no limit, for 0 or infinity); a
    negative value or NaN is refused."""
    if math.isnan(seconds) or seconds < 0:
        raise UsageError(
            f"--sample-timeout must be a number of seconds, 0 for no limit, got {seconds:g}"
        )
    return None if seconds == 0 or math.isinf(seconds) else seconds
