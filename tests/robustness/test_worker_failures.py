"""Parallel scoring never hangs on a dead or stuck worker, and never scores an output twice
(issue 15).

Before: a worker that died (OOM kill, segfault, ``os._exit``) left ``Pool.imap`` waiting for
ever; a sample stuck in a call into C that the alarm cannot interrupt held its worker without
bound; and the warm-up pass scored the first model output of each dataset in the parent before
the workers scored it again.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import warnings
from pathlib import Path
from typing import Any
from unittest import mock

from datbench_cli import DatBenchEvaluator, VLMResponse
from datbench_cli.benchmarks.datbench.evaluator import compute_report
from datbench_cli.errors import WorkerDied
from datbench_cli.runtime import parallel
from tests.bounded import within
from tests.cli_helpers import make_row, run_cli
from tests.run_builders import make_score_run

FORK = "fork" in multiprocessing.get_all_start_methods()
REAL_SCORE_ITEM = parallel.score_item


def evaluator(count: int = 60) -> DatBenchEvaluator:
    rows = [dict(make_row(f"s{i:03d}", answer=str(i)), image=None) for i in range(count)]
    return DatBenchEvaluator(rows, "math")


def responses(count: int = 60) -> list[VLMResponse]:
    return [VLMResponse(f"s{i:03d}", f"so: {i if i % 3 else i + 1}") for i in range(count)]


def report_rows(jobs: int, timeout: float | None = 5.0, count: int = 60) -> list[dict[str, Any]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = compute_report(
            evaluator(count), responses(count), sample_timeout=timeout, jobs=jobs
        )
    return [dataclasses.asdict(r) for r in report.results]


def dies_on(sample_id: str, how: str, marker: Path | None = None):
    """A ``score_item`` whose worker dies on ``sample_id`` (only once when ``marker`` given)."""

    def score_item(item: Any, timeout: Any) -> Any:
        if item.sample.id == sample_id and os.getpid() != PARENT:
            if marker is None or not marker.exists():
                if marker is not None:
                    marker.write_text("died once")
                if how == "kill":
                    os.kill(os.getpid(), signal.SIGKILL)
                os._exit(7)
        return REAL_SCORE_ITEM(item, timeout)

    return score_item


def stuck_on(sample_id: str):
    """A ``score_item`` that blocks the alarm and sleeps on ``sample_id`` (a stuck C call)."""

    def score_item(item: Any, timeout: Any) -> Any:
        if item.sample.id == sample_id:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
            time.sleep(120)
        return REAL_SCORE_ITEM(item, timeout)

    return score_item


PARENT = os.getpid()


@unittest.skipUnless(FORK, "needs fork")
class DeadWorkerTests(unittest.TestCase):
    def setUp(self) -> None:
        global PARENT
        PARENT = os.getpid()
        self.expected = report_rows(jobs=1)

    def test_a_worker_dying_once_is_replaced_and_the_report_is_unchanged(self) -> None:
        for how in ("exit", "kill"):
            with self.subTest(how=how), tempfile.TemporaryDirectory() as tmp:
                marker = Path(tmp) / "died"

                def run(how: str, marker: Path) -> list[dict[str, Any]]:
                    with mock.patch.object(parallel, "score_item", dies_on("s030", how, marker)):
                        return report_rows(jobs=2)

                self.assertEqual(within(60, run, how, marker), self.expected)
                self.assertTrue(marker.exists())  # the worker did die

    def test_a_worker_dying_while_samples_are_still_being_matched_is_replaced(self) -> None:
        # 700 samples: the pool is forked after the first matching step (256 samples), so the
        # worker scoring s030 dies while the parent is still matching the rest.
        expected = report_rows(jobs=1, count=700)
        with tempfile.TemporaryDirectory() as tmp:
            marker = Path(tmp) / "died"

            def run() -> list[dict[str, Any]]:
                with mock.patch.object(parallel, "score_item", dies_on("s030", "kill", marker)):
                    return report_rows(jobs=2, count=700)

            self.assertEqual(within(60, run), expected)
            self.assertTrue(marker.exists())

    def test_a_worker_dying_twice_stops_the_run_naming_the_sample(self) -> None:
        def run() -> str:
            with mock.patch.object(parallel, "score_item", dies_on("s030", "kill")):
                try:
                    report_rows(jobs=2)
                except WorkerDied as exc:
                    return str(exc)
            return "no error"

        message = within(60, run)
        self.assertIn("died twice", message)
        self.assertIn("killed by SIGKILL, perhaps out of memory", message)
        self.assertIn("'s030'", message)

    def test_the_command_line_says_it_in_one_sentence(self) -> None:
        def run() -> tuple[int, str]:
            with tempfile.TemporaryDirectory() as tmp:
                run_dir = make_score_run(Path(tmp) / "run", 80)
                victim = (run_dir / "references.jsonl").read_text().splitlines()[41]
                victim_id = victim.split('"id":"', 1)[1].split('"', 1)[0]
                with mock.patch.object(parallel, "score_item", dies_on(victim_id, "exit")):
                    result = run_cli("score", "-d", str(run_dir), "-j", "2", "-q")
                return result.exit_code, result.stderr

        code, stderr = within(90, run)
        self.assertEqual(code, 3)
        self.assertEqual(len(stderr.strip().splitlines()), 1, stderr)
        self.assertTrue(stderr.startswith("error: a scoring worker process died twice"), stderr)
        self.assertIn("exit status 7", stderr)


@unittest.skipUnless(FORK and hasattr(signal, "pthread_sigmask"), "needs fork and sigmask")
class KilledParentTests(unittest.TestCase):
    def test_workers_of_a_killed_score_exit_without_a_traceback(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            run_dir = make_score_run(Path(tmp) / "run", 8000)
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "datbench_cli",
                    "score",
                    "-d",
                    str(run_dir),
                    "-j",
                    "2",
                    "-q",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
            deadline = time.monotonic() + 60
            while not children.read_text().split():
                self.assertLess(time.monotonic(), deadline, "the pool never started")
                self.assertIsNone(process.poll(), "score finished before its pool started")
                time.sleep(0.01)
            workers = children.read_text().split()
            time.sleep(0.5)  # the workers are in the middle of their first ranges
            process.kill()
            # stderr closes once the last worker has exited (they hold the pipe too).
            reader = subprocess.run(
                ["timeout", "60", "cat"], stdin=process.stderr, capture_output=True, check=False
            )
            process.wait()
            self.assertEqual(reader.returncode, 0, "a worker outlived its killed parent")
            self.assertTrue(workers)
            self.assertNotIn(b"Traceback", reader.stdout, reader.stdout.decode(errors="replace"))
            self.assertEqual(process.returncode, -signal.SIGKILL, "killed mid-run")


class StuckWorkerTests(unittest.TestCase):
    def test_a_sample_past_its_budget_is_recorded_and_its_worker_replaced(self) -> None:
        def run() -> tuple[list[dict[str, Any]], float]:
            start = time.monotonic()
            with mock.patch.object(parallel, "score_item", stuck_on("s025")):
                rows = report_rows(jobs=2, timeout=0.5)
            return rows, time.monotonic() - start

        rows, elapsed = within(60, run)
        expected = report_rows(jobs=1, timeout=0.5)
        details = rows[25]["metadata"]["score_details"]
        self.assertEqual(details["error"]["type"], "SampleTimeout")
        self.assertEqual(rows[25]["score"], 0.0)
        self.assertEqual(rows[:25] + rows[26:], expected[:25] + expected[26:])
        self.assertLess(elapsed, 20)  # budget 0.5 s + grace 2 s, not the 120 s sleep


@unittest.skipUnless(FORK, "needs fork")
class WarmUpTests(unittest.TestCase):
    def test_no_model_output_is_scored_in_the_parent(self) -> None:
        scored_here: list[str] = []
        real = parallel.score_direct
        parent = os.getpid()

        def spy(sample: Any, output: str, *args: Any) -> Any:
            if os.getpid() == parent:
                scored_here.append(output)
            return real(sample, output, *args)

        with mock.patch.object(parallel, "score_direct", spy):
            rows = report_rows(jobs=2)
        self.assertEqual(rows, report_rows(jobs=1))
        outputs = {r.model_output for r in responses()}
        self.assertTrue(scored_here)  # the warm-up ran, on reference answers only
        self.assertTrue(set(scored_here) <= {str(i) for i in range(60)})
        self.assertFalse(set(scored_here) & outputs)


if __name__ == "__main__":
    unittest.main()


@unittest.skipUnless(FORK, "needs fork")
class WorkerInputErrorTests(unittest.TestCase):
    """An input error met inside a worker (a reference line rewritten while it was scored) is
    the parent's one-sentence input error, not a dead worker and its traceback."""

    def test_the_parent_raises_the_workers_input_error(self) -> None:
        from datbench_cli.errors import InputError

        def score_item(item: Any, timeout: Any) -> Any:
            if item.sample.id == "s030" and os.getpid() != PARENT:
                raise InputError("changed while it was being scored", "references.jsonl", 31)
            return REAL_SCORE_ITEM(item, timeout)

        def run() -> str:
            with mock.patch.object(parallel, "score_item", score_item):
                try:
                    report_rows(jobs=2)
                except InputError as exc:
                    return str(exc)
            return "no error"

        global PARENT
        PARENT = os.getpid()
        self.assertEqual(within(60, run), "references.jsonl:31: changed while it was being scored")
