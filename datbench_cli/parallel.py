"""Scoring outcomes for many samples, in order, on one core or several.

With ``jobs > 1`` the work list is handed to forked worker processes through a module global
(inherited copy-on-write, never pickled); only index ranges go out and outcomes come back, in
order. Each worker applies the per-sample time budget in its own main thread.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from datbench_cli.schema import DatBenchSample, JudgeResponse
from datbench_cli.scoring import Outcome, score_direct, score_judge

_CHUNK = 256


@dataclass(frozen=True)
class WorkItem:
    """One sample to score: its model output and, for judge mode, its judge response."""

    sample: DatBenchSample
    output: str
    judge_mode: bool
    judge: JudgeResponse | None


_WORK: Sequence[WorkItem] = ()
_TIMEOUT: float | None = None


def score_item(item: WorkItem, timeout: float | None) -> Outcome:
    """The outcome of one work item."""
    if item.judge_mode:
        return score_judge(item.output, item.judge)
    return score_direct(item.sample, item.output, timeout)


def _score_range(bounds: tuple[int, int]) -> list[Outcome]:
    start, stop = bounds
    return [score_item(_WORK[i], _TIMEOUT) for i in range(start, stop)]


def _ignore_interrupts() -> None:
    # Ctrl-C reaches the whole process group: the parent stops the pool and reports it once,
    # workers must not each print a KeyboardInterrupt traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def _sigint_deferred() -> Iterator[None]:
    """Hold SIGINT back while the workers are forked: a worker must not be interrupted before
    it ignores SIGINT, nor the pool half-built; a Ctrl-C meanwhile is delivered afterwards."""
    usable = hasattr(signal, "pthread_sigmask") and (
        threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def usable_cpus() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def score_all(work: Sequence[WorkItem], timeout: float | None, jobs: int = 1) -> Iterator[Outcome]:
    """Yield one outcome per work item, in order. ``jobs`` <= 0 means every usable core."""
    global _WORK, _TIMEOUT
    if jobs <= 0:
        jobs = usable_cpus()
    if jobs == 1 or len(work) < 2 * _CHUNK or "fork" not in multiprocessing.get_all_start_methods():
        for item in work:
            yield score_item(item, timeout)
        return
    _WORK, _TIMEOUT = work, timeout
    pool = None
    try:
        ranges = [(i, min(i + _CHUNK, len(work))) for i in range(0, len(work), _CHUNK)]
        context = multiprocessing.get_context("fork")
        with _sigint_deferred():
            pool = context.Pool(processes=jobs, initializer=_ignore_interrupts)
        for outcomes in pool.imap(_score_range, ranges):
            yield from outcomes
    finally:
        if pool is not None:
            pool.terminate()
        _WORK, _TIMEOUT = (), None
