"""Error bars and item statistics in the reports of both benchmarks (our additions)."""

from __future__ import annotations

import math
import random
import unittest
from unittest import mock

from datbench_cli.benchmarks.datbench import columns
from datbench_cli.benchmarks.datbench.censoring import KEYS
from datbench_cli.benchmarks.datbench.columns import ScoreColumns
from datbench_cli.benchmarks.datbench.schema import DatBenchSample, SampleScore
from datbench_cli.benchmarks.datbench.uncertainty import item_statistics, uncertainty
from datbench_cli.benchmarks.vistoolbench.uncertainty import uncertainty as vtb_uncertainty
from datbench_cli.metrics.averaging import float_sum
from datbench_cli.stats import wilson_cc
from tests.compare_support import scored_sample_report
from tests.vtb_support import SAMPLE_DIR, SAMPLE_JUDGE, SAMPLE_RESPONSES


def _result(sample_id: str, score: float, capability: str, dataset: str, mode: str = "direct"):
    metadata = {"capability": capability, "eval_mode": mode, "dataset": dataset}
    return SampleScore(sample_id, score, "", "", score == 1.0, metadata)


def _sample(sample_id: str, **eval_metrics) -> DatBenchSample:
    return DatBenchSample(
        sample_id, "c", None, "q", {}, "a", eval_metrics=dict(eval_metrics), source_info={}
    )


class DatBenchUncertaintyTest(unittest.TestCase):
    def setUp(self) -> None:
        # capability "c": dataset A = 1, 1, 1 ; dataset B = 0, 0, 0 (the hand-worked example of
        # tests/stats: se = sqrt(0.05) = 0.2236..., clustered se = sqrt(0.05 + 3/36))
        self.results = [_result(f"a{i}", 1.0, "c", "A") for i in range(3)] + [
            _result(f"b{i}", 0.0, "c", "B", "judge" if i == 0 else "direct") for i in range(3)
        ]

    def test_capability_entry_hand_worked(self) -> None:
        entry = uncertainty(self.results)["capabilities"]["c"]
        self.assertEqual(entry["n"], 6)
        self.assertEqual(entry["accuracy"], 0.5)
        self.assertAlmostEqual(entry["se"], math.sqrt(0.05), places=15)
        # the continuity-corrected Wilson interval of 3 in 6, as scipy computes it (imported here:
        # scipy.stats at the top made every worker's collection seconds longer)
        from scipy.stats import binomtest

        exact = binomtest(3, 6).proportion_ci(0.95, method="wilsoncc")
        self.assertAlmostEqual(entry["ci95"][0], exact.low, places=9)
        self.assertAlmostEqual(entry["ci95"][1], exact.high, places=9)
        self.assertNotIn("half_width", entry)
        self.assertEqual(entry["clusters"], 2)
        self.assertAlmostEqual(entry["se_clustered"], math.sqrt(0.05 + 3 / 36), places=15)
        # design effect (0.05 + 3/36) / 0.05 = 8/3: 2.25 effective samples, 1.125 right
        self.assertAlmostEqual(entry["design_effect"], 8 / 3, places=12)
        low, high = entry["ci95_clustered"]
        want = wilson_cc(1.125, 2.25)
        self.assertAlmostEqual(low, want[0], places=12)
        self.assertAlmostEqual(high, want[1], places=12)
        self.assertLess(low, entry["ci95"][0])  # wider than the independent interval

    def test_every_group_is_there(self) -> None:
        bars = uncertainty(self.results)
        self.assertEqual(bars["overall"]["n"], 6)
        self.assertEqual(bars["direct"]["n"], 5)
        self.assertEqual(bars["judge"]["n"], 1)
        self.assertIsNone(bars["judge"]["se"])  # one sample: undefined, not 0
        self.assertEqual(sorted(bars["datasets"]), ["A", "B"])
        self.assertEqual(bars["datasets"]["A"]["se"], 0.0)
        self.assertNotIn("se_clustered", bars["datasets"]["A"])

    def test_empty(self) -> None:
        bars = uncertainty([])
        self.assertIsNone(bars["overall"]["accuracy"])
        self.assertIsNone(bars["overall"]["ci95"])
        self.assertEqual(bars["capabilities"], {})

    def test_item_statistics(self) -> None:
        samples = {
            "a0": _sample("a0", is_frontier=True, discrimination=0.5),
            "a1": _sample("a1", is_frontier=False, discrimination=-0.3),  # clipped to 0
            "a2": _sample("a2", is_frontier=False, discrimination=0.25),
            "b0": _sample("b0", is_frontier=True, discrimination=0.25),
            "b1": _sample("b1", discrimination="high"),  # not a number: not counted
            "b2": _sample("b2"),
        }
        entry = item_statistics(self.results, samples)["c"]
        self.assertEqual(entry["frontier"], {"n": 2, "accuracy": 0.5})
        self.assertEqual(entry["non_frontier"], {"n": 2, "accuracy": 1.0})
        # (0.5 * 1 + 0 * 1 + 0.25 * 1 + 0.25 * 0) / (0.5 + 0 + 0.25 + 0.25)
        self.assertEqual(entry["discrimination_weighted_accuracy"], 0.75)
        self.assertEqual(entry["discrimination_samples"], 4)
        self.assertEqual(entry["discrimination_weight_total"], 1.0)

    def test_item_statistics_absent_fields(self) -> None:
        self.assertEqual(item_statistics(self.results, {}), {})
        zero = {r.id: _sample(r.id, discrimination=0.0) for r in self.results}
        entry = item_statistics(self.results, zero)["c"]
        self.assertNotIn("frontier", entry)
        self.assertIsNone(entry["discrimination_weighted_accuracy"])  # no weight: null, not 0


class VisToolBenchUncertaintyTest(unittest.TestCase):
    def test_groups_and_values(self) -> None:
        results = [
            {"turncase": "single-turn", "domain": "d1", "eval_focus": "f", "ars": 0.5, "apr": 1},
            {"turncase": "single-turn", "domain": "d2", "eval_focus": "f", "ars": 1.0, "apr": 1},
            {"turncase": "multi-turn", "domain": "d1", "eval_focus": "f", "ars": 0.0, "apr": 0},
        ]
        bars = vtb_uncertainty(results)
        self.assertEqual(bars["overall"]["n"], 3)
        self.assertEqual(bars["overall"]["ars"]["mean"], 0.5)
        # ARS 0.5, 1.0, 0.0: sample variance 0.25, se = sqrt(0.25 / 3)
        self.assertAlmostEqual(bars["overall"]["ars"]["se"], math.sqrt(0.25 / 3), places=15)
        self.assertAlmostEqual(bars["overall"]["apr"]["se"], math.sqrt((1 / 3) / 3), places=15)
        self.assertEqual(sorted(bars["by_turncase"]), ["multi-turn", "single-turn"])
        self.assertEqual(sorted(bars["by_domain"]), ["d1", "d2"])
        self.assertEqual(bars["by_eval_focus"]["f"]["n"], 3)
        self.assertIsNone(bars["by_turncase"]["multi-turn"]["ars"]["se"])


class SampleReportsTest(unittest.TestCase):
    """The sample data's reports carry the intervals, centred on the reports' own numbers."""

    def test_datbench_sample(self) -> None:
        report = scored_sample_report()
        summary = report["summary"]
        bars = summary["uncertainty"]
        self.assertEqual(bars["overall"]["accuracy"], summary["overall_accuracy"])
        self.assertEqual(bars["direct"]["accuracy"], summary["direct_accuracy"])
        self.assertEqual(bars["judge"]["accuracy"], summary["judge_accuracy"])
        for name, accuracy in summary["capability_accuracy"].items():
            entry = bars["capabilities"][name]
            self.assertEqual(entry["accuracy"], accuracy)
            self.assertEqual(entry["n"], summary["capability_counts"][name])
            low, high = entry["ci95"]
            self.assertLessEqual(low, accuracy)
            self.assertGreaterEqual(high, accuracy)
        self.assertEqual(sum(e["n"] for e in bars["datasets"].values()), summary["total_samples"])
        self.assertIn("item_statistics", summary)

    def test_vistoolbench_sample(self) -> None:
        import tempfile
        from pathlib import Path

        from datbench_cli.benchmarks.vistoolbench import stages
        from datbench_cli.files.rundir import RunDir

        with tempfile.TemporaryDirectory() as tmp:
            run = RunDir(Path(tmp) / "run")
            stages.export(
                str(SAMPLE_DIR),
                "test",
                run,
                limit=None,
                turncase=None,
                context="golden",
                first_image_only=False,
            )
            report = stages.score(
                run, SAMPLE_RESPONSES, SAMPLE_JUDGE, strict_judge=False, turncase=None
            )
        summary = report["summary"]
        bars = summary["uncertainty"]
        self.assertEqual(bars["overall"]["ars"]["mean"], summary["ars"])
        self.assertEqual(bars["overall"]["apr"]["mean"], summary["apr"])
        for key in ("by_turncase", "by_domain", "by_eval_focus"):
            for name, stats in summary[key].items():
                self.assertEqual(bars[key][name]["n"], stats["n"])
                self.assertEqual(bars[key][name]["ars"]["mean"], stats["ars"])


if __name__ == "__main__":
    unittest.main()


class TerminalTablesTest(unittest.TestCase):
    """``score`` shows ``61.2 [59.8, 62.6]`` cells (intervals within 0-100) for both benchmarks."""

    def test_both_benchmarks(self) -> None:
        import re
        import shutil
        import tempfile
        from pathlib import Path

        from tests.cli_helpers import run_cli
        from tests.compare_support import scored_run

        tmp = Path(tempfile.mkdtemp())
        try:
            for benchmark in ("datbench", "vistoolbench"):
                run = scored_run(benchmark, tmp / benchmark)
                result = run_cli("score", "-d", str(run), "--allow-missing")
                self.assertEqual(result.exit_code, 0, result.stderr)
                overall = next(
                    line for line in result.stdout.splitlines() if line.startswith("| overall")
                )
                found = re.search(r"(\d+\.\d) \[(\d+\.\d), (\d+\.\d)\]", overall)
                assert found is not None, overall
                value, low, high = (float(x) for x in found.groups())
                self.assertTrue(0 <= low <= value <= high <= 100, overall)
                self.assertNotIn("±", overall)
                self.assertIn("censored", result.stdout)
                self.assertIn("Wilson", result.stdout + result.stderr)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


class LargeTableTest(unittest.TestCase):
    """Censoring and item statistics of a table longer than the chunks they are summed in
    equal the plain left-to-right computation over every sample."""

    # The chunk made small (the code reads it at each call): two whole chunks and a partial one
    # take 229 rows here instead of 131,173 with the real 65,536.
    CHUNK = 64

    def setUp(self) -> None:
        patcher = mock.patch.object(columns, "_SUM_CHUNK", self.CHUNK)
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_over_several_chunks(self) -> None:
        rng = random.Random(9)
        n = 2 * columns._SUM_CHUNK + 101
        table = ScoreColumns()
        rows = []
        for _ in range(n):
            score = rng.choice([0.0, 1.0, 0.25, 1 / 3])
            capability = rng.choice(["c1", "c2"])
            reasons = [key for key in KEYS if rng.random() < 0.05]
            frontier = rng.choice([None, True, False])
            weight = rng.choice([None, 0.5, -1.0, 2.0])
            table.add(score, capability, rng.choice("AB"), "direct", reasons, frontier, weight)
            rows.append((score, capability, reasons, frontier, weight))
        entry = table.censoring()["overall"]
        completed = [score for score, _, reasons, _, _ in rows if not reasons]
        self.assertEqual(entry["samples"], n)
        self.assertEqual(entry["completed"], len(completed))
        self.assertEqual(entry["accuracy_completed"], float_sum(completed) / len(completed))
        for key in KEYS:
            self.assertEqual(entry[key], sum(key in reasons for _, _, reasons, _, _ in rows))
        items = table.item_statistics()
        for capability in ("c1", "c2"):
            mine = [row for row in rows if row[1] == capability]
            frontier = [score for score, _, _, flag, _ in mine if flag is True]
            rest = [score for score, _, _, flag, _ in mine if flag is False]
            weighted = weights = 0.0
            for score, _, _, _, weight in mine:
                if weight is not None:
                    weighted += max(weight, 0.0) * score
                    weights += max(weight, 0.0)
            self.assertEqual(items[capability]["frontier"]["n"], len(frontier))
            self.assertEqual(
                items[capability]["frontier"]["accuracy"], float_sum(frontier) / len(frontier)
            )
            self.assertEqual(items[capability]["non_frontier"]["n"], len(rest))
            self.assertEqual(
                items[capability]["non_frontier"]["accuracy"], float_sum(rest) / len(rest)
            )
            self.assertEqual(list(items[capability])[:2], ["frontier", "non_frontier"])
            self.assertEqual(
                items[capability]["discrimination_weighted_accuracy"], weighted / weights
            )
