"""Scoring on several processes gives exactly the single-process report."""

from __future__ import annotations

import dataclasses
import gc
import multiprocessing
import time
import unittest
import warnings
from collections.abc import Iterator
from unittest import mock

from datbench_cli import DatBenchEvaluator, JudgeResponse, VLMResponse
from datbench_cli.batch.response_store import HeldResponses
from datbench_cli.benchmarks.datbench import evaluator as evaluator_module
from datbench_cli.benchmarks.datbench.evaluator import compute_report
from datbench_cli.benchmarks.datbench.schema import DatBenchSample
from datbench_cli.runtime import parallel
from datbench_cli.runtime.parallel import Feed, WorkItem, WorkList, score_all, usable_cpus
from datbench_cli.scorers import SCORERS
from tests.vectors import DATA, GLUE_STEMS, load_lines


def vector_samples(copies: int) -> tuple[list[dict], list[VLMResponse], list[JudgeResponse]]:
    rows, responses, judges = [], [], []
    pool = []
    for path in sorted(DATA.glob("*.jsonl")):
        if "." in path.stem or path.stem.endswith("_direct") or path.stem in GLUE_STEMS:
            continue
        for line in load_lines(path):
            if (line["row"].get("source_info") or {}).get("dataset") in SCORERS:
                pool.append(line)
    for copy in range(copies):
        for number, line in enumerate(pool):
            sample_id = f"{line['row']['id']}#{copy}"
            judge_mode = number % 11 == 0
            rows.append(
                dict(
                    line["row"],
                    id=sample_id,
                    image=None,
                    eval_mode="judge" if judge_mode else "direct",
                )
            )
            responses.append(VLMResponse(sample_id, line["raw_output"]))
            if judge_mode and number % 2:
                judges.append(JudgeResponse(sample_id, "answer: true"))
    return rows, responses, judges


def assert_two_jobs_equal_one(
    test: unittest.TestCase, rows: list[dict], responses: list[VLMResponse], judges: list
) -> None:
    """The report of ``rows`` scored with two jobs is the one-job report, summary and results."""
    evaluator = DatBenchEvaluator(rows, "math")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = compute_report(evaluator, responses, judges, jobs=1)
        two = compute_report(evaluator, responses, judges, jobs=2)
    test.assertEqual(one.summary, two.summary)
    test.assertEqual(
        [dataclasses.asdict(r) for r in one.results],
        [dataclasses.asdict(r) for r in two.results],
    )


class ParallelScoringTests(unittest.TestCase):
    def test_two_jobs_equal_one_job(self) -> None:
        rows, responses, judges = vector_samples(4)
        self.assertGreater(len(rows), 600)  # enough for several chunks
        assert_two_jobs_equal_one(self, rows, responses, judges)

    def test_the_collector_is_left_as_it_was(self) -> None:
        # The pool freezes what is alive at the fork for its workers' sake; afterwards the
        # caller's collector is as it found it, and a caller's own freeze stays untouched.
        rows, responses, judges = vector_samples(1)
        evaluator = DatBenchEvaluator(rows, "math")
        thresholds = gc.get_threshold()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compute_report(evaluator, responses, judges, jobs=2)
            self.assertEqual(gc.get_freeze_count(), 0)
            self.assertEqual(gc.get_threshold(), thresholds)
            gc.freeze()
            try:
                frozen = gc.get_freeze_count()
                compute_report(evaluator, responses, judges, jobs=2)
                # Neither thawed (0) nor frozen further (objects freed since may leave it).
                self.assertGreater(gc.get_freeze_count(), 0)
                self.assertLessEqual(gc.get_freeze_count(), frozen)
            finally:
                gc.unfreeze()

    def test_usable_cpus_counts_the_cores_this_process_may_run_on(self) -> None:
        # Not os.cpu_count(): a process pinned to 2 of the machine's cores (taskset, a
        # container's cpuset) has 2 usable cores.
        with mock.patch("os.sched_getaffinity", return_value={0, 5}, create=True):
            self.assertEqual(usable_cpus(), 2)
        with mock.patch("os.sched_getaffinity", side_effect=AttributeError, create=True):
            with mock.patch("os.cpu_count", return_value=None):
                self.assertEqual(usable_cpus(), 1)


def fed_work(copies: int, step: int) -> tuple[WorkList, Feed, list[DatBenchSample]]:
    """An empty work list over the vector samples (direct mode) and a feed appending them,
    ``step`` items at a time; the feed records whether workers were alive at each step."""
    rows, responses, _ = vector_samples(copies)
    samples = [DatBenchSample.from_hf_row(row, "math") for row in rows]
    work = WorkList(samples.__getitem__, "reference", HeldResponses(responses))
    alive: list[bool] = []

    def steps() -> Iterator[None]:
        for index in range(len(samples)):
            if index % step == 0:
                alive.append(bool(multiprocessing.active_children()))
                yield
            work.append(index, index, False, None, "ok")

    def representatives() -> Iterator[WorkItem]:
        yield WorkItem(samples[0], "", False, None)

    feed = Feed(steps(), representatives, len(samples))
    feed.alive = alive  # type: ignore[attr-defined]
    return work, feed, samples


class FedScoringTests(unittest.TestCase):
    """Workers score the items already matched while the rest are still being appended."""

    def test_workers_score_while_the_feed_still_appends(self) -> None:
        work, feed, samples = fed_work(4, 64)
        lengths = []
        outcomes = []
        for outcome in score_all(work, 30.0, 2, feed=feed):
            lengths.append(len(work))
            outcomes.append(outcome)
        self.assertEqual(len(work), len(samples))
        self.assertEqual(len(outcomes), len(samples))
        # Every outcome came once its item was there; the feed ran on after the fork.
        self.assertTrue(all(length > at for at, length in enumerate(lengths)))
        self.assertTrue(feed.alive[-1])  # type: ignore[attr-defined]
        whole, whole_feed, _ = fed_work(4, 64)
        for _ in whole_feed.steps:
            pass
        self.assertEqual(outcomes, list(score_all(whole, 30.0, 1)))

    def test_a_small_run_runs_its_feed_to_the_end_and_scores_here(self) -> None:
        work, feed, samples = fed_work(1, 16)
        self.assertLess(len(samples), parallel.SMALL_RUN)
        with mock.patch.object(parallel, "_Pool", side_effect=AssertionError("forked")):
            outcomes = list(score_all(work, 30.0, 0, feed=feed))
        self.assertEqual(len(outcomes), len(samples))
        self.assertFalse(any(feed.alive))  # type: ignore[attr-defined]

    def test_a_piece_rebuilds_the_same_items(self) -> None:
        work, feed, samples = fed_work(1, 1 << 30)
        for _ in feed.steps:
            pass
        work.append(0, 3, True, None, "empty")  # a judge-mode item, another status
        stop = len(work)
        part = work.part(work.piece(stop - 40, stop))
        self.assertEqual(len(part), 40)
        for k in range(40):
            self.assertEqual(part[k], work[stop - 40 + k])

    def test_a_dataset_name_that_cannot_be_hashed_is_scored_as_with_one_job(self) -> None:
        rows, responses, judges = vector_samples(4)
        direct = next(i for i, row in enumerate(rows) if row["eval_mode"] == "direct")
        rows[direct] = dict(rows[direct], source_info={"dataset": ["x"]})
        assert_two_jobs_equal_one(self, rows, responses, judges)

    def test_progress_gets_its_total_before_any_count(self) -> None:
        # Matching made slow (one sample a step, 0.5 ms a step): results arrive long before the
        # total is known, and no count may go out before it.
        rows, responses, judges = vector_samples(4)
        calls: list[tuple[int, int | None]] = []
        grow = parallel._Ranges.grow

        def slow(ranges: parallel._Ranges) -> None:
            time.sleep(0.0005)
            grow(ranges)

        with (
            warnings.catch_warnings(),
            mock.patch.object(evaluator_module, "_MATCH_STEP", 1),
            mock.patch.object(parallel._Ranges, "grow", slow),
        ):
            warnings.simplefilter("ignore")
            compute_report(
                DatBenchEvaluator(rows, "math"),
                responses,
                judges,
                jobs=2,
                progress=lambda n, total=None: calls.append((n, total)),
            )
        self.assertEqual(calls[0], (0, len(responses)))
        self.assertTrue(all(total is None for _, total in calls[1:]))
        self.assertEqual(sum(n for n, _ in calls), len(responses))

    def test_a_feed_needs_a_work_list(self) -> None:
        work, feed, _ = fed_work(1, 16)
        with self.assertRaises(TypeError):
            list(score_all(list(work), 30.0, 2, feed=feed))

    def test_a_worker_gets_its_next_range_before_its_results_are_taken_in(self) -> None:
        work, feed, samples = fed_work(4, 1 << 30)
        for _ in feed.steps:
            pass
        events: list[str] = []
        give = parallel._Worker.give

        def logged(worker: parallel._Worker, task: tuple[int, int], piece: tuple | None) -> None:
            events.append("give")
            give(worker, task, piece)

        with mock.patch.object(parallel._Worker, "give", logged):
            for _ in score_all(work, 30.0, 2):
                events.append("took")
        first = events.index("took")
        # Two workers started, and the one that finished first already had its next range.
        self.assertGreaterEqual(events[:first].count("give"), 3)


if __name__ == "__main__":
    unittest.main()


class SwallowedTimeoutTests(unittest.TestCase):
    """A budget whose first SampleTimeout is swallowed (raised where Python drops exceptions,
    e.g. inside ``__del__``) still ends the block: the alarm repeats."""

    def test_a_swallowed_first_alarm_does_not_unbound_the_block(self) -> None:
        import gc
        import time

        from datbench_cli.runtime.budget import SampleTimeout, time_limit

        class Swallower:
            def __del__(self) -> None:
                time.sleep(0.3)  # the first alarm fires here and is dropped by Python

        started = time.monotonic()
        with self.assertRaises(SampleTimeout):
            with time_limit(0.1):
                gc.disable()
                try:
                    Swallower()  # collected at once: __del__ runs and swallows the alarm
                finally:
                    gc.enable()
                deadline = time.monotonic() + 5
                # Not `while time.monotonic() < deadline: pass`: on CPython 3.13 an exception a
                # signal handler raises at the jump back of such a loop can skip the handlers
                # of its own frame (python/cpython#130279), here assertRaises (1 run in 5).
                while True:
                    if time.monotonic() >= deadline:
                        break
        self.assertLess(time.monotonic() - started, 3.0)
