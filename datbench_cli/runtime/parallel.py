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

from datbench_cli.benchmarks.datbench.schema import DatBenchSample, JudgeResponse
from datbench_cli.benchmarks.datbench.scoring import REFERENCE, Outcome, score_direct, score_judge
from datbench_cli.runtime.budget import alarm_handler

_MAX_CHUNK = 512
_MIN_CHUNK = 8


@dataclass(frozen=True)
class WorkItem:
    """One sample to score: its model output and, for judge mode, its judge response."""

    sample: DatBenchSample
    output: str
    judge_mode: bool
    judge: JudgeResponse | None
    profile: str = REFERENCE


_WORK: Sequence[WorkItem] = ()
_TIMEOUT: float | None = None


def score_item(item: WorkItem, timeout: float | None) -> Outcome:
    """The outcome of one work item."""
    if item.judge_mode:
        return score_judge(item.output, item.judge)
    return score_direct(item.sample, item.output, timeout, item.profile)


def _score_range(bounds: tuple[int, int]) -> list[tuple]:
    # Plain tuples travel back to the parent much faster than pickled dataclasses.
    start, stop = bounds
    with alarm_handler(_TIMEOUT):
        outcomes = [score_item(_WORK[i], _TIMEOUT) for i in range(start, stop)]
    return [(o.score, o.is_correct, o.details, o.error, o.verdict) for o in outcomes]


def _warm_up(work: Sequence[WorkItem], timeout: float | None) -> None:
    """Score one sample of each dataset in this process before forking, so the heavy libraries
    the scorers import lazily (scipy, sympy, ...) are loaded once and shared by every worker
    instead of being imported again in each. Scorers are pure, so this changes no result."""
    seen: set[str] = set()
    with alarm_handler(timeout):
        for item in work:
            name = item.sample.dataset
            if not item.judge_mode and isinstance(name, str) and name not in seen:
                seen.add(name)
                score_item(item, timeout)


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
    if (
        jobs == 1
        or len(work) < 2 * _MIN_CHUNK
        or "fork" not in multiprocessing.get_all_start_methods()
    ):
        with alarm_handler(timeout):
            for item in work:
                yield score_item(item, timeout)
        return
    _warm_up(work, timeout)
    _WORK, _TIMEOUT = work, timeout
    pool = None
    try:
        # Several chunks per worker keep both busy to the end; large chunks keep IPC cheap.
        chunk = max(_MIN_CHUNK, min(_MAX_CHUNK, len(work) // (jobs * 4)))
        ranges = [(i, min(i + chunk, len(work))) for i in range(0, len(work), chunk)]
        context = multiprocessing.get_context("fork")
        with _sigint_deferred():
            pool = context.Pool(processes=jobs, initializer=_ignore_interrupts)
        for outcomes in pool.imap(_score_range, ranges):
            for fields in outcomes:
                yield Outcome(*fields)
    finally:
        if pool is not None:
            pool.terminate()
        _WORK, _TIMEOUT = (), None
