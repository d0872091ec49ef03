"""Scoring on several processes gives exactly the single-process report."""

from __future__ import annotations

import dataclasses
import gc
import unittest
import warnings

from datbench_cli import DatBenchEvaluator, JudgeResponse, VLMResponse
from datbench_cli.benchmarks.datbench.evaluator import compute_report
from datbench_cli.runtime.parallel import usable_cpus
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


class ParallelScoringTests(unittest.TestCase):
    def test_two_jobs_equal_one_job(self) -> None:
        rows, responses, judges = vector_samples(4)
        self.assertGreater(len(rows), 600)  # enough for several chunks
        evaluator = DatBenchEvaluator(rows, "math")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            one = compute_report(evaluator, responses, judges, jobs=1)
            two = compute_report(evaluator, responses, judges, jobs=2)
        self.assertEqual(one.summary, two.summary)
        self.assertEqual(
            [dataclasses.asdict(r) for r in one.results],
            [dataclasses.asdict(r) for r in two.results],
        )

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

    def test_usable_cpus_is_positive(self) -> None:
        self.assertGreaterEqual(usable_cpus(), 1)


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
