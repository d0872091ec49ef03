"""The per-sample time budget holds in every thread and keeps the caller's own timer (issue 15).

Before: in a worker thread (a web service) a 3 s scorer ran to completion against a 0.5 s
budget with no warning, and scoring in the main thread cancelled any alarm the host program had
set.
"""

from __future__ import annotations

import signal
import threading
import time
import types
import unittest
import warnings
from typing import Any
from unittest import mock

from datbench_cli import DatBenchEvaluator, VLMResponse
from datbench_cli.benchmarks.datbench.evaluator import compute_report
from datbench_cli.runtime import budget
from tests.cli_helpers import make_row

POSIX_TIMERS = hasattr(signal, "setitimer")


def busy(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def slow_scorer(work: Any) -> types.SimpleNamespace:
    def score_sample(sample: dict[str, Any], output: str) -> dict[str, Any]:
        work(float(output))
        return {"score": 1.0}

    return types.SimpleNamespace(score_sample=score_sample)


def score(outputs: list[str], timeout: float, work: Any = busy) -> tuple[list[Any], float]:
    """Score ``outputs`` (seconds of work each) with a slow scorer; results and wall time."""
    rows = [dict(make_row(f"s{i}", dataset="slow"), image=None) for i in range(len(outputs))]
    evaluator = DatBenchEvaluator(rows, "math")
    responses = [VLMResponse(f"s{i}", o) for i, o in enumerate(outputs)]
    start = time.monotonic()
    with (
        mock.patch(
            "datbench_cli.benchmarks.datbench.scoring.get_scorer", lambda name: slow_scorer(work)
        ),
        warnings.catch_warnings(),
    ):
        warnings.filterwarnings("ignore", "the scorer failed", UserWarning)
        report = compute_report(evaluator, responses, sample_timeout=timeout)
    return report.results, time.monotonic() - start


def error_type(result: Any) -> str | None:
    return result.metadata["score_details"].get("error", {}).get("type")


def in_thread(function: Any) -> Any:
    box: dict[str, Any] = {}

    def target() -> None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            box["value"] = function()
        box["warnings"] = [w for w in caught if issubclass(w.category, budget.BudgetWarning)]

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(60)
    if thread.is_alive():
        raise AssertionError("scoring in a thread did not finish within 60 s")
    return box["value"], box["warnings"]


class ThreadBudgetTests(unittest.TestCase):
    def setUp(self) -> None:
        budget._warned = False

    def test_a_runaway_scorer_in_a_thread_stops_at_its_budget(self) -> None:
        # Two minutes of work against 0.5 s: in_thread's 60 s bound fails a budget that does
        # not stop it (no assertion on how fast it stopped).
        (results, _), caught = in_thread(lambda: score(["120", "0"], 0.5))
        self.assertEqual(error_type(results[0]), "SampleTimeout")
        self.assertIsNone(error_type(results[1]))
        self.assertEqual(len(caught), 1)  # said once, at the start
        self.assertIn("outside the main thread", str(caught[0].message))

    def test_a_long_c_call_in_a_thread_is_still_recorded_as_over_budget(self) -> None:
        (results, _), _ = in_thread(lambda: score(["1.2", "0"], 0.3, work=time.sleep))
        self.assertEqual(error_type(results[0]), "SampleTimeout")
        self.assertIsNone(error_type(results[1]))

    def test_the_warning_is_given_once_per_process(self) -> None:
        in_thread(lambda: score(["0"], 1))
        _, caught = in_thread(lambda: score(["0"], 1))
        self.assertEqual(caught, [])

    def test_nothing_leaks_after_a_timeout_in_a_thread(self) -> None:
        def run() -> float:
            score(["2"], 0.2)
            start = time.monotonic()
            busy(0.5)  # a stray SampleTimeout would surface here
            return time.monotonic() - start

        elapsed, _ = in_thread(run)
        self.assertGreaterEqual(elapsed, 0.5)


@unittest.skipUnless(POSIX_TIMERS, "needs setitimer")
class CallerTimerTests(unittest.TestCase):
    """Scoring in the main thread keeps the host program's SIGALRM handler and timer."""

    def setUp(self) -> None:
        self.fired: list[float] = []
        previous = signal.signal(signal.SIGALRM, lambda s, f: self.fired.append(time.monotonic()))
        self.addCleanup(signal.signal, signal.SIGALRM, previous)
        self.addCleanup(signal.setitimer, signal.ITIMER_REAL, 0)

    def test_the_callers_timer_is_restored_with_the_time_spent_subtracted(self) -> None:
        signal.setitimer(signal.ITIMER_REAL, 30)
        handler = signal.getsignal(signal.SIGALRM)
        results, elapsed = score(["0.2", "0"], 5)
        self.assertIsNone(error_type(results[0]))
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        self.assertGreater(remaining, 0)
        self.assertLessEqual(remaining, 30 - elapsed + 0.05)
        self.assertIs(signal.getsignal(signal.SIGALRM), handler)
        self.assertEqual(self.fired, [])

    def test_the_callers_alarm_falling_due_while_scoring_reaches_its_handler(self) -> None:
        scoring = threading.Event()
        during: list[bool] = []
        signal.signal(signal.SIGALRM, lambda s, f: during.append(scoring.is_set()))

        def work(seconds: float) -> None:
            scoring.set()
            # Busy until the caller's alarm has fired (a hang bound of 30 s if it never does).
            end = time.monotonic() + seconds
            while not during and time.monotonic() < end:
                pass
            scoring.clear()

        signal.setitimer(signal.ITIMER_REAL, 0.3)
        results, _ = score(["30", "0"], 60, work=work)
        self.assertIsNone(error_type(results[0]))  # the caller's alarm is not a timeout
        self.assertEqual(during, [True])  # on time: while the sample was scored, not after
        self.assertEqual(signal.getitimer(signal.ITIMER_REAL), (0.0, 0.0))

    def test_a_repeating_caller_timer_keeps_repeating(self) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0.2, 0.2)
        score(["0.9"], 5)
        self.assertGreaterEqual(len(self.fired), 3)
        _, interval = signal.getitimer(signal.ITIMER_REAL)
        self.assertAlmostEqual(interval, 0.2, places=3)

    def test_the_budget_still_holds_under_a_callers_timer(self) -> None:
        signal.setitimer(signal.ITIMER_REAL, 60)
        results, _ = score(["120", "0"], 0.3)  # stopped at 0.3 s, or the timer check fails
        self.assertEqual(error_type(results[0]), "SampleTimeout")
        self.assertGreater(signal.getitimer(signal.ITIMER_REAL)[0], 0)


if __name__ == "__main__":
    unittest.main()
