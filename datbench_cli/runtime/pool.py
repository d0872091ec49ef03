"""Scoring on worker processes this tool owns, results in order.

Every item is scored in a worker (``jobs`` 1 and library calls too: a one-worker pool), so
nothing a scorer does reaches the caller's process: not its timers, its recursion limit, its
threads or its memory. The pool is pebble's ``ProcessPool``: a worker acknowledges each task
as it starts, a task past its timeout (counted from that start) has its worker stopped, and a
worker that dies fails only its own task and is replaced. The standard
``ProcessPoolExecutor`` breaks whole on one dead worker (every pending task fails, nobody
knows which one killed it) and has no per-task timeout: on it, the same rules took a pool
rebuild, a rerun of everything in flight and start marks of our own.

Items go out in chunks. Each worker, set up once by :func:`_start_worker`:

- ignores SIGINT (the parent stops it), dies with the parent (``PR_SET_PDEATHSIG``);
- has its address space capped at what it inherited plus ``Limits.memory`` (``setrlimit``):
  an allocation past it raises ``MemoryError``;
- scores each item under ``Limits.budget`` with ``signal.setitimer``: the alarm raises
  :class:`~datbench_cli.runtime.budget.SampleTimeout` (repeating until the item is left), and
  a CPU timer past the hard limit kills a worker stuck in a call into C.

A chunk that fails as a whole (its worker killed, past twice the hard limit) is scored again
one item at a time; an item that fails alone becomes ``failed(item, Failure)``: the run goes on,
never a hang.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import multiprocessing
import os
import resource
import signal
import threading
import traceback
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import Future, TimeoutError
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from datbench_cli.runtime.budget import DEFAULT_SAMPLE_TIMEOUT, SampleTimeout

if TYPE_CHECKING:
    import pebble

T = TypeVar("T")
R = TypeVar("R")

# How much memory scoring one item may add to its worker (bytes).
SAMPLE_MEMORY_CAP = 1 << 30
# A chunk is this many items, or fewer whose sizes reach _CHUNK_BYTES: a worker pickles a
# chunk's results in one piece under its memory cap (23 outputs of 10 MB in one chunk took it
# past 1 GiB: the worker died with a traceback on stderr and the chunk was scored again).
_CHUNK = 64
_CHUNK_BYTES = 8 << 20
# An item may run this long past its budget before its worker is killed (the alarm fires at
# the budget; only a call into C that never checks for signals gets this far).
_GRACE_FACTOR = 0.5
_GRACE_SECONDS = 2.0
# After the budget, the alarm repeats this often until the item is left: a SampleTimeout that
# lands where Python drops exceptions (a __del__, a GC callback) does not unbound the item.
_REPEAT_SECONDS = 0.5
# A worker's collector thresholds: scoring allocates and drops a few hundred containers per
# sample, so collecting the youngest generation every 700 allocations (Python's default) costs
# more than it finds (50,000 samples: 0.12 -> 0.04 s of collection per worker).
_WORKER_GC_THRESHOLDS = (20_000, 20, 10)
_PR_SET_PDEATHSIG = 1
# How often a wait on a chunk checks that the pool has not broken (see _wait).
_POLL_SECONDS = 1.0
# With ``jobs`` 0 (every usable core, the CLI's default) a run of fewer items than this gets
# one worker: starting and feeding a second costs more than its core saves (scripts/bench.py's
# synthetic run, 2 cores: 1,000 samples 0.41 s on one core vs 0.51 s on two).
SMALL_RUN = 1000


@dataclass(frozen=True)
class Limits:
    """What one item may take: seconds (``budget``) and bytes of memory (``memory``)."""

    budget: float | None = DEFAULT_SAMPLE_TIMEOUT
    memory: int | None = SAMPLE_MEMORY_CAP

    @property
    def hard(self) -> float | None:
        """Seconds after which an item's worker is killed (``None``: never)."""
        if not self.budget:
            return None
        return self.budget + max(_GRACE_SECONDS, _GRACE_FACTOR * self.budget)


class NoWorker(RuntimeError):
    """A worker process could not be started (its fork failed): nothing can be scored."""


@dataclass(frozen=True)
class Failure:
    """Why an item has no result: ``timeout``, ``memory`` or ``died`` (with the cause)."""

    kind: str
    message: str


def usable_cpus() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def most_workers() -> int:
    """The most workers a run may ask for: four per usable core (scoring is CPU-bound, and
    every worker is a process: ``--jobs 100000`` forked until the machine stalled)."""
    return 4 * usable_cpus()


def worker_count(jobs: int, items: int) -> int:
    """The workers for ``items`` items when ``jobs`` were asked for (0 or less: every usable
    core, or one for a run under :data:`SMALL_RUN` items); never more than the items."""
    if jobs > 0:
        return max(1, min(jobs, items))
    return 1 if items < SMALL_RUN else usable_cpus()


def _die_with(parent: int) -> None:
    """Be killed when the parent ends, whatever ends it (Linux; elsewhere the pool's pipe
    closing ends an idle worker)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:  # the parent ended before the signal was armed
        os._exit(1)


def _address_space() -> int | None:
    try:
        with open("/proc/self/statm", "rb") as handle:
            return int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _on_alarm(signum: int, frame: Any) -> None:
    raise SampleTimeout("scoring this sample exceeded its time budget")


def owned_worker(parent: int) -> None:
    """Make this process a worker the tool owns: Ctrl-C is the parent's to handle (it stops
    the workers), SIGTERM ends it at once (whatever handler the parent had), and the worker
    dies with ``parent``, whatever ends it. Every pool of ours runs this first in each
    worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # No signal blocked, whatever the forking thread blocked (the first fork holds SIGINT and
    # SIGTERM; a caller's thread may block SIGALRM): the pool stops a worker with SIGTERM, and
    # the budget's alarms must arrive.
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    _die_with(parent)


def _start_worker(parent: int, limits: Limits) -> None:
    """A scoring worker's set-up, once."""
    owned_worker(parent)
    size = _address_space()
    if limits.memory is not None and size is not None:
        # Never above a hard limit the caller set (``ulimit -v``): raising it is refused.
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = size + limits.memory
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        if soft == resource.RLIM_INFINITY or cap < soft:
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.signal(signal.SIGPROF, signal.SIG_DFL)  # the hard limit: ends the process
    gc.set_threshold(*_WORKER_GC_THRESHOLDS)
    gc.freeze()  # the inherited heap: never walked (nor copied) by this worker's collector


def _score_chunk(
    function: Callable[[T], R], chunk: list[T], limits: Limits
) -> list[tuple[bool, Any]]:
    """In a worker: ``(True, function(item))`` per item, or ``(False, failure kind)``."""
    budget, hard = limits.budget, limits.hard
    results: list[tuple[bool, Any]] = []
    for item in chunk:
        try:
            try:
                if hard:
                    signal.setitimer(signal.ITIMER_PROF, hard)
                    signal.setitimer(signal.ITIMER_REAL, budget, _REPEAT_SECONDS)  # type: ignore[arg-type]
                results.append((True, function(item)))
            finally:
                if hard:
                    signal.setitimer(signal.ITIMER_REAL, 0)
                    signal.setitimer(signal.ITIMER_PROF, 0)
        except SampleTimeout:
            results.append((False, "timeout"))
        except MemoryError:
            results.append((False, "memory"))
    return results


def _cause(error: BaseException, limits: Limits) -> Failure:
    """The failure of an item scored alone, from what its task raised."""
    code = getattr(error, "exitcode", None)
    if isinstance(error, TimeoutError) or code in (-signal.SIGPROF, -signal.SIGXCPU):
        return Failure("timeout", "scoring this sample exceeded its time budget")
    if code is not None:  # pebble's ProcessExpired: the worker died
        if code < 0:
            try:
                how = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
            if -code == signal.SIGKILL:
                how += ", perhaps out of memory"
        else:
            how = f"exit status {code}"
        return Failure("died", f"the scoring worker process died ({how}) on this sample")
    return Failure("died", f"scoring this sample failed in its worker: {error!r}")


@dataclass
class _Batch(Generic[T]):
    items: list[T]
    future: Future


def score_in_workers(
    function: Callable[[T], R],
    items: Iterable[T],
    failed: Callable[[T, Failure], R],
    jobs: int = 1,
    limits: Limits = Limits(),
    size: Callable[[T], int] = lambda item: 0,
) -> Generator[tuple[T, R], None, None]:
    """``(item, function(item))`` for every item, in order, computed on ``jobs`` workers
    (``jobs`` <= 0: every usable core). ``function`` and the items travel to the workers
    pickled, in chunks of at most :data:`_CHUNK` items and about :data:`_CHUNK_BYTES` of
    ``size`` (an item's bytes); an item whose scoring fails in its worker (see the module)
    comes with ``failed(item, failure)``."""
    import pebble  # here, not at start-up: it loads asyncio (and ssl) for its decorators

    if multiprocessing.current_process().daemon:
        # Said here, not as multiprocessing's AssertionError from inside pebble.
        raise RuntimeError(
            "scoring runs on worker processes, which a daemonic process (a "
            "multiprocessing.Pool worker) cannot start; score from the main process or a "
            "concurrent.futures.ProcessPoolExecutor worker"
        )
    workers = jobs if jobs > 0 else usable_cpus()
    # A chunk's wall limit: past it (a worker stuck in a call into C that sleeps, or a chunk of
    # slow items), its items are scored again one by one, each under the hard limit; results
    # do not change, only the work is done again.
    wall = limits.hard and 2 * limits.hard
    pool = pebble.ProcessPool(
        max_workers=workers,
        initializer=_start_worker,
        initargs=(os.getpid(), limits),
        context=multiprocessing.get_context("fork"),
    )
    try:
        batches: deque[_Batch[T]] = deque()
        source = iter(items)
        while True:
            while len(batches) < 4 * workers:
                chunk = _chunk(source, size)
                if not chunk:
                    break
                # A Ctrl-C or SIGTERM meanwhile waits until the chunk is scheduled and kept:
                # the first schedule forks the workers (it must not land in the fork's
                # handlers, nor in a worker that has not set its own handlers yet), and a
                # future the stop below does not see keeps the error of its interrupted send.
                with _signals_held():
                    future = _schedule(pool, function, chunk, limits, wall)
                    batches.append(_Batch(chunk, future))
            if not batches:
                break
            batch = batches[0]
            try:
                outcomes = _wait(pool, batch.future)
            except NoWorker:
                raise
            except Exception:  # noqa: BLE001 - the chunk failed as a whole: item by item
                outcomes = [_alone(pool, function, item, limits) for item in batch.items]
            for item, (ok, value) in zip(batch.items, outcomes, strict=True):
                if ok:
                    yield item, value
                else:
                    why = value if isinstance(value, Failure) else _failure(value, limits)
                    yield item, failed(item, why)
            batches.popleft()
    finally:
        _stop(pool)
        _release_stop_error(pending.future for pending in batches)


def _chunk(source: Iterator[T], size: Callable[[T], int]) -> list[T]:
    """The next items of ``source`` to send together (empty: none left)."""
    chunk: list[T] = []
    total = 0
    for item in source:
        chunk.append(item)
        total += size(item)
        if len(chunk) == _CHUNK or total >= _CHUNK_BYTES:
            break
    return chunk


def _stop(pool: pebble.ProcessPool) -> None:
    """Stops the pool and waits until its workers and threads are gone. A Ctrl-C (or
    SIGTERM) meanwhile is raised only then: cut short, ``join`` leaves a worker and the pool's
    threads running in a caller that goes on (a notebook). Blocking the signals here would not
    do: a caller's other threads let them through."""
    interrupted: KeyboardInterrupt | None = None
    while True:
        try:
            pool.stop()
            pool.join()
            break
        except KeyboardInterrupt as error:
            interrupted = error
    if interrupted is not None:
        raise interrupted


def _release_stop_error(futures: Iterable[Future]) -> None:
    """Clears the frames of the errors a stopped pool leaves on the futures not yet read.

    A pool stopped (Ctrl-C, SIGTERM) while its scheduler thread writes a chunk to the workers
    fails that write, and pebble sets the error on that chunk's future. The error's traceback
    holds the half-sent pickle (a view of a ``BytesIO``) in a reference cycle; when the
    collector frees it, it may close the ``BytesIO`` before it drops the view, and Python 3.13
    prints ``Exception ignored ... BufferError`` at exit (4 of 8 SIGTERMs of ``score --jobs 2``
    at 50,000 samples; 0 of 36 with this). Clearing the frames drops the view first."""
    for future in futures:
        if not future.done() or future.cancelled():
            continue
        error, seen = future.exception(), set[int]()
        while error is not None and id(error) not in seen:
            seen.add(id(error))
            traceback.clear_frames(error.__traceback__)
            error = error.__cause__ or error.__context__


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM blocked in this thread (the main one); delivered afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _schedule(
    pool: pebble.ProcessPool,
    function: Callable[[T], R],
    chunk: list[T],
    limits: Limits,
    timeout: float | None,
) -> Future:
    """``pool.schedule`` of one chunk; a pool that could not start or replace a worker is
    :func:`_no_worker`'s error (pebble raises a bare ``BrokenProcessPool``, or, once a
    replacement failed, ``RuntimeError: Unexpected error within the Pool`` without a cause)."""
    try:
        return pool.schedule(_score_chunk, (function, chunk, limits), timeout=timeout)
    except (BrokenProcessPool, RuntimeError) as error:
        raise _no_worker(error) from error


def _wait(pool: pebble.ProcessPool, future: Future) -> Any:
    """``future.result()``; a pool that broke meanwhile is :func:`_no_worker`'s error. Pebble
    aborts the tasks it holds when a worker cannot be replaced, but a task its scheduler had
    not taken yet is never resolved: waiting on it alone never ended."""
    while True:
        try:
            return future.result(timeout=_POLL_SECONDS)
        except BrokenProcessPool as error:
            raise _no_worker(error) from error
        except TimeoutError:
            if future.done():  # the task's own outcome (its timeout too), not the poll's
                return future.result()
            if not pool.active:
                raise _no_worker(None) from None


def _no_worker(error: BaseException | None) -> NoWorker:
    """The error of a pool whose worker process could not be started (its fork failed)."""
    cause = error.__cause__ if error is not None else None
    return NoWorker(
        "scoring runs on worker processes, and one could not be started (a limit on "
        "processes or memory reached?)" + (f": {cause}" if cause is not None else "")
    )


def _alone(
    pool: pebble.ProcessPool, function: Callable[[T], R], item: T, limits: Limits
) -> tuple[bool, Any]:
    """One item of a failed chunk, scored by itself: its result, or its failure."""
    future = _schedule(pool, function, [item], limits, limits.hard)
    try:
        return _wait(pool, future)[0]  # type: ignore[no-any-return]
    except NoWorker:  # no worker to score it: not this item's failure
        raise
    except Exception as error:  # noqa: BLE001 - recorded as the item's failure
        return False, _cause(error, limits)


def _failure(kind: str, limits: Limits) -> Failure:
    if kind == "memory":
        cap = f" ({limits.memory >> 20} MiB)" if limits.memory else ""
        return Failure("memory", f"scoring this sample needed more than its memory cap{cap}")
    return Failure("timeout", "scoring this sample exceeded its time budget")
