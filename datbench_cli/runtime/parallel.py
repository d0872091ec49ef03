"""Scoring outcomes for many samples, in order, on one core or several.

With ``jobs > 1`` the work list is handed to forked worker processes through a module global
(inherited copy-on-write, never pickled); index ranges go out, each with its items' places
(a :meth:`WorkList.piece`, a few bytes an item, so that items appended after the fork by a
:class:`Feed` reach the workers), and outcomes come back as plain tuples. A feed lets the
pool score the items already matched while the caller matches the rest.

Each worker applies the per-sample time budget in its own main thread and records, in shared
memory, which sample it is on and since when. The parent watches both:

- a sample still running well past its budget (a call into C that the alarm cannot
  interrupt) gets its worker killed and is recorded as a ``SampleTimeout``, exactly as the
  budget would have recorded it; the rest of its chunk goes to a fresh worker;
- a worker that dies (killed, out of memory, a crash in a C extension) has its chunk scored
  again, once, by a fresh worker; dying twice on the same sample stops the run with
  :class:`~datbench_cli.errors.WorkerDied` naming it. Nothing waits for a dead process;
- a worker whose resident memory grows past the parent's at its fork plus the per-sample cap
  (:data:`SAMPLE_MEMORY_CAP`, Linux) while scoring a sample gets killed, and the sample is
  recorded as a ``SampleMemoryExceeded`` scorer error; the rest of its range goes to a fresh
  worker. The memory of one hostile output (a 10 MB list literal that ``ast.literal_eval``
  turns into gigabytes of syntax tree) is bounded this way, whatever the scorer catches.

Work that would be scored in this process (``jobs`` of 1, a short list) but holds a model
output longer than :data:`_LARGE_OUTPUT` characters is scored by one worker instead, so the
memory cap holds there too.
"""

from __future__ import annotations

import contextlib
import gc
import math
import multiprocessing
import os
import signal
import threading
import time
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from datbench_cli.batch.judge_store import Judges
from datbench_cli.batch.response_store import Responses
from datbench_cli.benchmarks.datbench.codes import Ascending, Codes, UIntArray
from datbench_cli.benchmarks.datbench.schema import DatBenchSample, JudgeResponse
from datbench_cli.benchmarks.datbench.scoring import Outcome, score_direct, score_judge
from datbench_cli.benchmarks.profiles import REFERENCE
from datbench_cli.errors import InputError, WorkerDied
from datbench_cli.runtime.budget import SampleTimeout, alarm_handler
from datbench_cli.runtime.stack import in_roomy_frame

_MAX_CHUNK = 512
_MIN_CHUNK = 8
# A sample may run this long past its budget before its worker is killed (the alarm fires at
# the budget; only a call into C that never checks for signals gets this far).
_GRACE_FACTOR = 0.5
_GRACE_SECONDS = 2.0
_POLL_SECONDS = 0.25
_WARM_UP_SECONDS = 5.0
# How much resident memory scoring one sample may add to its worker (bytes).
SAMPLE_MEMORY_CAP = 1 << 30
# How often a busy worker's memory is looked at while the cap is on.
_MEMORY_POLL_SECONDS = 0.02
# Outputs longer than this are scored in a worker (under the memory cap) even with --jobs 1.
_LARGE_OUTPUT = 1 << 16
_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
# A worker's collector thresholds: scoring allocates and drops a few hundred containers per
# sample, so collecting the youngest generation every 700 allocations (Python's default) costs
# more than it finds (50,000 samples: 0.12 -> 0.04 s of collection per worker).
_WORKER_GC_THRESHOLDS = (20_000, 20, 10)
# With ``jobs`` 0 (every usable core, the CLI's default) a run of fewer samples than this is
# scored in this process: forking the pool, warming it up and sending results back costs more
# than a second core saves. Measured (scripts/bench.py's synthetic run over every scorer, the
# scorers' imports already paid, best of 5, 2 cores): 100 samples 0.05 s in-process vs 0.09 s
# pooled, 1,000: 0.41 vs 0.51 s, 2,000: 1.06 vs 1.15 s, 4,000: 1.57 vs 1.47 s. An explicit
# ``--jobs N`` always gets its N workers.
SMALL_RUN = 1000


@dataclass(frozen=True)
class WorkItem:
    """One sample to score: its model output and, for judge mode, its judge response."""

    sample: DatBenchSample
    output: str
    judge_mode: bool
    judge: JudgeResponse | None
    profile: str = REFERENCE
    # The status of its response line (``ok``, ``empty``, ...), where the caller knows it.
    status: str | None = None


class WorkList(Sequence[WorkItem]):
    """Work items built when asked for, from compact columns: the sample comes from
    ``sample_of(index)`` and the model output from ``responses`` by position (either may
    parse it from a file), so a long run holds no item, sample or response objects. The last
    item built is kept: the caller and the scorer ask for the same item in turn."""

    def __init__(
        self,
        sample_of: Callable[[int], DatBenchSample],
        profile: str,
        responses: Responses,
        judges: Judges | None = None,
    ) -> None:
        self._sample_of = sample_of
        self._profile = profile
        self._responses = responses
        self._judge_source = judges
        # About 2 bytes an item: sample and response places as runs (a few bytes a run; in a
        # run's order they take four bytes each), statuses as one-byte codes, judges only where
        # given.
        self.indices = Ascending()
        self._positions = Ascending()
        # The items that have a judge response (ascending) and its position in ``judges``.
        self._judged, self._judge_positions = UIntArray(), UIntArray()
        self._status_names, self._statuses = Codes(), UIntArray()
        self._judge_modes = bytearray()
        self._last: tuple[int, WorkItem] | None = None

    def append(
        self,
        index: int,
        position: int,
        judge_mode: bool,
        judge: int | None,
        status: str | None,
    ) -> None:
        """One item: the sample at ``index`` of ``sample_of``, the response at ``position``
        of ``responses``, its judge response at ``judge`` of ``judges``."""
        if judge is not None:
            self._judged.append(len(self.indices))
            self._judge_positions.append(judge)
        self.indices.append(index)
        self._positions.append(position)
        self._statuses.append(self._status_names.code(status))
        self._judge_modes.append(judge_mode)

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, position: int) -> WorkItem:  # type: ignore[override]
        last = self._last
        if last is not None and last[0] == position:
            return last[1]
        item = WorkItem(
            self._sample_of(self.indices[position]),
            self._responses.response(self._positions[position]).model_output,
            bool(self._judge_modes[position]),
            self._judge_of(position),
            self._profile,
            self._status_names.names[self._statuses[position]],
        )
        self._last = (position, item)
        return item

    def __iter__(self) -> Iterator[WorkItem]:
        for position in range(len(self.indices)):
            yield self[position]

    def _judge_of(self, position: int) -> JudgeResponse | None:
        judged = self._judged.values
        at = bisect_left(judged, position)
        if at == len(judged) or judged[at] != position:
            return None
        assert self._judge_source is not None
        return self._judge_source.judge(self._judge_positions[at])

    def judge_count(self) -> int:
        return sum(self._judge_modes)

    def piece(self, start: int, stop: int) -> tuple:
        """Items ``start`` to ``stop`` as plain values, for a worker forked before they were
        appended: it holds the same samples and responses and builds them (:meth:`part`)."""
        judged = self._judged.values
        first, last = bisect_left(judged, start), bisect_left(judged, stop)
        names = self._status_names.names
        places = range(start, stop)
        return (
            [self.indices[p] for p in places],
            [self._positions[p] for p in places],
            bytes(self._judge_modes[start:stop]),
            {judged[k] - start: self._judge_positions[k] for k in range(first, last)},
            [names[self._statuses[p]] for p in places],
        )

    def part(self, piece: tuple) -> WorkList:
        """The items of a :meth:`piece`, from place 0, over this list's samples and responses."""
        indices, positions, modes, judges, statuses = piece
        part = WorkList(self._sample_of, self._profile, self._responses, self._judge_source)
        for k, (index, position) in enumerate(zip(indices, positions, strict=True)):
            part.append(index, position, bool(modes[k]), judges.get(k), statuses[k])
        return part

    def longest_direct_output(self) -> int:
        """An upper bound of the length of the longest direct-mode output."""
        sizes = (
            self._responses.size(at)
            for position, at in enumerate(self._positions)
            if not self._judge_modes[position]
        )
        return max(sizes, default=0)


# What a worker sends back for one item: by default the outcome's fields; a caller may pass
# ``finish`` to score_all to turn (item, outcome) into something more compact, in the worker.
Finish = Callable[[WorkItem, Outcome], Any]

_WORK: Sequence[WorkItem] = ()
_TIMEOUT: float | None = None
_FINISH: Finish | None = None


def score_item(item: WorkItem, timeout: float | None) -> Outcome:
    """The outcome of one work item."""
    if item.judge_mode:
        return score_judge(item.output, item.judge)
    return score_direct(item.sample, item.output, timeout, item.profile)


def _fields(_: WorkItem, outcome: Outcome) -> tuple:
    # Plain tuples travel back to the parent much faster than pickled dataclasses.
    return (outcome.score, outcome.is_correct, outcome.details, outcome.error, outcome.verdict)


def _timed_out() -> Outcome:
    """What the budget records for a sample that ran out of time (see ``score_direct``)."""
    exc = SampleTimeout("scoring this sample exceeded its time budget")
    error = {"type": type(exc).__name__, "message": str(exc)}
    return Outcome(0.0, False, {"score": 0.0, "error": error}, error=error)


def _over_memory(cap: int) -> Outcome:
    """What is recorded for a sample whose worker outgrew the memory cap."""
    error = {
        "type": "SampleMemoryExceeded",
        "message": f"scoring this sample needed more than its memory cap ({cap >> 20} MiB)",
    }
    return Outcome(0.0, False, {"score": 0.0, "error": error}, error=error)


def resident_bytes(pid: int | str = "self") -> int | None:
    """The resident memory of process ``pid`` (``None`` where ``/proc`` cannot tell)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as handle:
            return int(handle.read().split()[1]) * _PAGE_SIZE
    except (OSError, ValueError, IndexError):
        return None


@dataclass
class Feed:
    """Work still to come. Each step of ``steps`` appends items to the work list (the caller
    matching its samples to their responses), and the pool's workers score the items already
    there meanwhile; ``representatives`` are items (a sample of each dataset, in direct mode)
    whose reference answers warm the scorers up before the workers are forked; ``expected``
    is an upper bound of the number of items in all (it sizes the ranges)."""

    steps: Iterator[None]
    representatives: Callable[[], Iterable[WorkItem]]
    expected: int


_END = object()


def _settled(
    work: Sequence[WorkItem], steps: Iterator[None], enough: float
) -> Iterator[None] | None:
    """Run ``steps`` until the work list holds ``enough`` items; ``None`` once they are done."""
    while len(work) < enough:
        if next(steps, _END) is _END:
            return None
    return steps


def _chunk_size(items: int, jobs: int) -> int:
    # Several chunks per worker keep both busy to the end; large chunks keep IPC cheap.
    return max(_MIN_CHUNK, min(_MAX_CHUNK, items // (jobs * 4)))


class _Ranges:
    """The ranges of the work list still to score, in order. With a feed, more are cut as the
    list grows: full chunks while it grows, the rest (in chunks sized by the final length)
    once it is done."""

    def __init__(
        self, work: Sequence[WorkItem], jobs: int, steps: Iterator[None] | None, expected: int
    ) -> None:
        self.pending: deque[tuple[int, int]] = deque()
        self._work, self._jobs, self._cut = work, jobs, 0
        self._steps = steps  # the feed's, while it still appends
        self._chunk = _chunk_size(expected, jobs)
        self._cut_ranges()

    @property
    def growing(self) -> bool:
        return self._steps is not None

    def grow(self) -> None:
        """One step of the feed, and the ranges it completes."""
        assert self._steps is not None
        if next(self._steps, _END) is _END:
            self._steps = None
            self._chunk = min(self._chunk, _chunk_size(len(self._work), self._jobs))
        self._cut_ranges()

    def _cut_ranges(self) -> None:
        length, chunk = len(self._work), self._chunk
        while self._cut < length and (self._steps is None or length - self._cut >= chunk):
            stop = min(self._cut + chunk, length)
            self.pending.append((self._cut, stop))
            self._cut = stop


def _warm_up(representatives: Iterable[WorkItem], timeout: float | None) -> None:
    """Score each dataset's reference answer once in this process before forking, so the heavy
    libraries the scorers import lazily (scipy, sympy, ...) are loaded once and shared by every
    worker instead of being imported again in each. Model outputs are never scored here (a
    hostile one would cost its budget twice); scorers are pure, so this changes no result."""
    seen: set[str] = set()
    budget = min(timeout, _WARM_UP_SECONDS) if timeout else _WARM_UP_SECONDS
    with alarm_handler(budget):
        for item in representatives:
            sample = item.sample
            name = sample.dataset
            if not item.judge_mode and isinstance(name, str) and name not in seen:
                seen.add(name)
                answer = sample.answer if isinstance(sample.answer, str) else ""
                score_direct(sample, answer, budget, item.profile)


def _ignore_interrupts() -> None:
    # Ctrl-C reaches the whole process group: the parent stops the workers and reports it
    # once, workers must not each print a KeyboardInterrupt traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def _sigint_deferred() -> Iterator[None]:
    """Hold SIGINT back while a worker is forked: it must not be interrupted before it
    ignores SIGINT; a Ctrl-C meanwhile is delivered afterwards."""
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


def _serve(conn: Connection, progress: Any, slot: int) -> None:
    """A worker's loop: score each range it is sent and send back the outcomes."""
    index, since = 2 * slot, 2 * slot + 1
    finish = _FINISH or _fields
    gc.set_threshold(*_WORKER_GC_THRESHOLDS)
    with alarm_handler(_TIMEOUT):
        while True:
            try:
                task = conn.recv()
            except (EOFError, OSError):  # the parent is gone
                return
            if task is None:
                return
            start, stop, piece = task
            outcomes: list[Any] = []
            reply: list[Any] | _BadInput = outcomes
            try:
                # Items appended after this worker was forked come as a piece (see WorkList).
                items = _WORK if piece is None else _WORK.part(piece)  # type: ignore[attr-defined]
                base = 0 if piece is None else start
                for i in range(start, stop):
                    progress[index] = i
                    progress[since] = time.monotonic()
                    item = items[i - base]
                    outcomes.append(finish(item, score_item(item, _TIMEOUT)))
            except InputError as exc:  # an input file that went bad mid-run: the parent says it
                reply = _BadInput(str(exc), exc.hint)
            progress[since] = 0.0
            try:
                conn.send(reply)
            except OSError:  # the parent is gone (killed): nobody to tell, nothing to print
                return


@dataclass(frozen=True)
class _BadInput:
    """What a worker sends instead of outcomes when reading its work failed (a reference line
    rewritten while it was scored): the parent raises it as the one-sentence input error."""

    message: str
    hint: str | None


def _worker_main(conn: Connection, progress: Any, slot: int, parent_ends: list[Connection]) -> None:
    """A worker: score the ranges it is sent, marking the sample it is on in ``progress``.

    It first closes its copies of the parent's pipe ends (its own and earlier workers'), so
    that when the parent dies every worker reads end-of-file and exits instead of waiting.
    """
    _ignore_interrupts()
    for end in parent_ends:
        end.close()
    in_roomy_frame(_serve, conn, progress, slot)  # see runtime/stack.py
    conn.close()
    os._exit(0)  # a forked copy of the caller: run none of its exit handlers


class _Worker:
    """One worker process, its pipe, and the range it is scoring."""

    def __init__(
        self, context: Any, progress: Any, slot: int, others: list[_Worker], cap: int | None
    ) -> None:
        self.slot = slot
        # A forked copy holds at most the parent's pages plus what it allocates itself.
        parent = resident_bytes() if cap else None
        self.memory_limit = parent + cap if parent is not None and cap else None
        self.task: tuple[int, int] | None = None
        self.conn, child = context.Pipe()
        parent_ends = [self.conn, *(w.conn for w in others if not w.conn.closed)]
        self.process = context.Process(
            target=_worker_main,
            args=(child, progress, slot, parent_ends),
            # Daemonic where allowed (not inside a daemonic process): never waited for at exit.
            daemon=not multiprocessing.current_process().daemon,
        )
        with _sigint_deferred():
            self.process.start()
        child.close()

    def give(self, task: tuple[int, int], piece: tuple | None) -> None:
        self.task = task
        self.conn.send((*task, piece))

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.close()
        if self.process.is_alive():
            self.process.kill()
        self.process.join()


def _death_cause(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        hint = ", perhaps out of memory" if -exitcode == signal.SIGKILL else ""
        return f"killed by {name}{hint}"
    return f"exit status {exitcode}"


class _Pool:
    """Forked workers that score ranges of ``_WORK``; results come back by sample index."""

    def __init__(self, jobs: int, memory_cap: int | None = None) -> None:
        self.jobs = jobs
        self.memory_cap = memory_cap
        self.context = multiprocessing.get_context("fork")
        self.workers: list[_Worker] = []

    def start(self, work: Sequence[WorkItem], timeout: float | None) -> None:
        """Fork the workers; each one is stopped by :meth:`close`, even if a later one fails."""
        jobs = self.jobs
        self.work = work
        self.progress = self.context.RawArray("d", 2 * jobs)
        self.hard_limit = (
            timeout + max(_GRACE_SECONDS, _GRACE_FACTOR * timeout) if timeout else None
        )
        for slot in range(jobs):
            self.workers.append(
                _Worker(self.context, self.progress, slot, self.workers, self.memory_cap)
            )
        self.deaths: dict[int, int] = {}  # first index of a range -> deaths scoring it

    def close(self) -> None:
        for worker in self.workers:
            worker.stop()

    def _piece(self, task: tuple[int, int]) -> tuple | None:
        return self.work.piece(*task) if isinstance(self.work, WorkList) else None

    def _hand_out(self, tasks: deque[tuple[int, int]]) -> int:
        """Give each idle worker the next range; how many were given."""
        given = 0
        for worker in list(self.workers):
            if worker.task is None and tasks:
                task = tasks.popleft()
                piece = self._piece(task)
                try:
                    worker.give(task, piece)
                except OSError:  # it died while idle: a fresh one takes the range
                    worker.task = None
                    self._respawn(worker).give(task, piece)
                given += 1
        return given

    def run(self, ranges: _Ranges) -> Iterator[tuple[int, list[tuple]]]:
        """Yield ``(start, outcomes)`` for every range, as workers finish them; while the
        work list grows, one step of its feed between looks at the workers."""
        tasks = ranges.pending
        busy = 0
        while tasks or busy or ranges.growing:
            busy += self._hand_out(tasks)
            waiting = {w.conn: w for w in self.workers if w.task is not None}
            sentinels = {w.process.sentinel: w for w in self.workers if w.task is not None}
            timeout = (
                0
                if ranges.growing
                else _MEMORY_POLL_SECONDS
                if any(w.memory_limit for w in self.workers)
                else _POLL_SECONDS
                if self.hard_limit is not None
                else None
            )
            handles = [*waiting, *sentinels]
            for ready in wait(handles, timeout) if handles else ():
                worker = waiting.get(ready) or sentinels[ready]  # type: ignore[index]
                if worker.task is None:
                    continue  # already handled through its other handle
                task = worker.task
                outcomes = None
                if worker.conn.poll():  # a result, or the end of the pipe of a dead worker
                    with contextlib.suppress(EOFError, OSError):
                        outcomes = worker.conn.recv()
                elif worker.process.is_alive():
                    continue
                busy -= 1
                if outcomes is None:
                    tasks.appendleft(self._replace_dead(worker))
                    continue
                if isinstance(outcomes, _BadInput):
                    raise InputError(outcomes.message, hint=outcomes.hint)
                worker.task = None
                # Its next range first: it scores that while the caller takes these in.
                busy += self._hand_out(tasks)
                yield task[0], outcomes
            for start, outcomes in self._kill_overrunning(tasks):
                busy -= 1
                yield start, outcomes
            if ranges.growing:
                ranges.grow()

    def _current(self, worker: _Worker) -> tuple[int, float]:
        return int(self.progress[2 * worker.slot]), self.progress[2 * worker.slot + 1]

    def _respawn(self, worker: _Worker) -> _Worker:
        worker.stop()
        fresh = _Worker(self.context, self.progress, worker.slot, self.workers, self.memory_cap)
        self.workers[self.workers.index(worker)] = fresh
        return fresh

    def _replace_dead(self, worker: _Worker) -> tuple[int, int]:
        """The range a dead worker was on, to be scored again (once) by a fresh worker."""
        assert worker.task is not None
        task = worker.task
        worker.process.join()
        cause = _death_cause(worker.process.exitcode)
        index, since = self._current(worker)
        self.deaths[task[0]] = self.deaths.get(task[0], 0) + 1
        if self.deaths[task[0]] > 1:
            sample = self.work[index].sample if since and task[0] <= index < task[1] else None
            where = (
                f"sample {sample.id!r} (dataset {sample.dataset!r})"
                if sample is not None
                else f"samples {task[0] + 1} to {task[1]}"
            )
            raise WorkerDied(
                f"a scoring worker process died twice ({cause}) while scoring {where}; "
                "no report written (score with --jobs 1 to see the failure)"
            )
        worker.task = None
        self.progress[2 * worker.slot + 1] = 0.0
        self._respawn(worker)
        return task

    def _kill_overrunning(self, tasks: deque[tuple[int, int]]) -> Iterator[tuple[int, list]]:
        """Record a sample far past its budget as timed out, or one whose worker outgrew the
        memory cap as over it; its range's rest goes back."""
        now = time.monotonic()
        for worker in list(self.workers):
            if worker.task is None:
                continue
            index, since = self._current(worker)
            # The two marks are read one after the other: an index still of the worker's
            # previous range is looked at again next time.
            if not since or not worker.task[0] <= index < worker.task[1]:
                continue
            if self.hard_limit is not None and now - since >= self.hard_limit:
                outcome = _timed_out()
            elif worker.memory_limit is not None and (
                (resident_bytes(worker.process.pid) or 0) > worker.memory_limit
            ):
                assert self.memory_cap is not None
                outcome = _over_memory(self.memory_cap)
            else:
                continue
            start, stop = worker.task
            worker.task = None
            self.progress[2 * worker.slot + 1] = 0.0
            self._respawn(worker)
            for piece in ((index + 1, stop), (start, index)):
                if piece[0] < piece[1]:
                    tasks.appendleft(piece)
            yield index, [(_FINISH or _fields)(self.work[index], outcome)]


def score_all(
    work: Sequence[WorkItem],
    timeout: float | None,
    jobs: int = 1,
    finish: Finish | None = None,
    memory_cap: int | None = SAMPLE_MEMORY_CAP,
    feed: Feed | None = None,
) -> Iterator[Any]:
    """Yield one outcome per work item, in order. ``jobs`` <= 0 means every usable core (one,
    in this process, for fewer than :data:`SMALL_RUN` items).

    With ``finish``, yield ``finish(item, outcome)`` instead, computed where the item was
    scored (in the worker), so only what it returns travels back. ``memory_cap``: the resident
    memory one sample may add to its worker (``None``: no cap). ``feed``: items still to be
    appended to ``work`` (a :class:`WorkList`), while a pool scores those already there; run
    to its end first where the work is scored in this process. Either way, by the time an
    outcome is yielded its item is in ``work``. The scorers are warmed up before a fork from
    the feed's representatives; without a feed, from the items of ``work`` themselves.
    """
    global _WORK, _TIMEOUT, _FINISH
    if feed is not None and not isinstance(work, WorkList):
        raise TypeError("a feed appends to a WorkList (its later items reach workers as pieces)")
    forkable = "fork" in multiprocessing.get_all_start_methods()
    steps = feed.steps if feed is not None else None
    if steps is not None:
        enough = SMALL_RUN if jobs <= 0 else 2 * _MIN_CHUNK
        steps = _settled(work, steps, math.inf if jobs == 1 or not forkable else enough)
    if jobs <= 0:
        jobs = 1 if steps is None and len(work) < SMALL_RUN else usable_cpus()
    if steps is not None and jobs == 1:
        steps = _settled(work, steps, math.inf)
    expected = feed.expected if feed is not None and steps is not None else len(work)
    if memory_cap is not None and resident_bytes() is None:
        memory_cap = None  # nothing to measure with: the cap cannot be enforced
    if forkable and (jobs == 1 or len(work) < 2 * _MIN_CHUNK):
        longest = (
            work.longest_direct_output()
            if isinstance(work, WorkList)
            else max((len(item.output or "") for item in work if not item.judge_mode), default=0)
        )
        large = memory_cap is not None and longest > _LARGE_OUTPUT
        jobs = 1 if large else 0
    if jobs == 0 or not forkable:
        with alarm_handler(timeout):
            for item in work:
                outcome = score_item(item, timeout)
                yield outcome if finish is None else finish(item, outcome)
        return
    _warm_up(feed.representatives() if feed is not None else work, timeout)
    _WORK, _TIMEOUT, _FINISH = work, timeout, finish
    pool = None
    # Everything alive now (the work list, the references' spans, imported modules) lives
    # until the run ends: frozen, the cyclic collector of the workers (and of this process)
    # skips it instead of walking it again and again, copying every page it touches. A caller
    # that froze objects itself keeps its own freeze (unfreezing would thaw its objects too).
    freeze = gc.get_freeze_count() == 0
    if freeze:
        gc.freeze()
    try:
        ranges = _Ranges(work, jobs, steps, expected)
        pool = _Pool(jobs, memory_cap)
        pool.start(work, timeout)
        done: dict[int, list[tuple]] = {}
        position = 0
        for start, outcomes in pool.run(ranges):
            done[start] = outcomes
            while position in done:
                ready = done.pop(position)
                position += len(ready)
                if finish is None:
                    for fields in ready:
                        yield Outcome(*fields)
                else:
                    yield from ready
    finally:
        if freeze:
            gc.unfreeze()
        if pool is not None:
            pool.close()
        _WORK, _TIMEOUT, _FINISH = (), None, None
