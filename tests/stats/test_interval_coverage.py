"""The 95% interval of a mean score (:func:`datbench_cli.stats.bounded_interval`): within
[0, 1], equal to scipy's continuity-corrected Wilson interval, and covering the true rate at least 95% of the time in
simulation (n = 5, 50, 500; rates 0, 0.02, 0.5, 1; 0/1 and partial-credit scores)."""

from __future__ import annotations

import unittest

import numpy as np

from datbench_cli import stats

DRAWS = 20_000
# Simulation error of a 95% coverage over DRAWS draws is about 0.0015; four of it.
MARGIN = 0.006
SIZES = (5, 50, 500)
RATES = (0.0, 0.02, 0.5, 1.0)


def _coverage(means: np.ndarray, n: int, truth: float) -> float:
    low, high = stats.wilson_cc(means * n, np.full(len(means), float(n)))
    assert np.all(low >= 0) and np.all(high <= 1) and np.all(low <= means + 1e-12)
    return float(np.mean((low <= truth) & (truth <= high)))


class ExactIntervalTest(unittest.TestCase):
    def test_equals_scipy_wilsoncc(self) -> None:
        from scipy.stats import binomtest  # here, not at the top: it adds seconds to collection

        for k, n in [(0, 1), (1, 1), (0, 5), (3, 4), (8, 8), (1, 50), (250, 500), (17, 205_000)]:
            with self.subTest(k=k, n=n):
                want = binomtest(k, n).proportion_ci(0.95, method="wilsoncc")
                low, high = stats.bounded_interval(k / n, n) or [None, None]
                self.assertAlmostEqual(low, want.low, places=9)
                self.assertAlmostEqual(high, want.high, places=9)

    def test_edges_are_not_certainty(self) -> None:
        low, high = stats.bounded_interval(1.0, 8) or []
        self.assertEqual(high, 1.0)
        self.assertAlmostEqual(low, 0.5977, places=4)  # 8/8 is not 100 +- 0
        low, high = stats.bounded_interval(0.0, 8) or []
        self.assertEqual(low, 0.0)
        self.assertGreater(high, 0.3)
        self.assertIsNone(stats.bounded_interval(None, 0))

    def test_issue_example_stays_in_range(self) -> None:
        # chartqa 3/4 was [0.26, 1.24] with the normal interval
        low, high = stats.bounded_interval(0.75, 4) or []
        self.assertTrue(0 <= low < 0.75 < high <= 1)

    def test_scores_outside_0_1_get_an_interval_around_their_mean(self) -> None:
        # A VisualToolBench ARS under negative rubric weights: the bounded interval clamped the
        # mean -0.5 into [0, 1] first, so score's summary said -0.5 with ci95 [0.0, 0.46].
        for scores in ([-0.5] * 4 + [-0.4] * 4, [-0.7, 1.6] * 10, [1.2, 0.9, 1.4]):
            with self.subTest(scores=scores):
                entry = stats.describe(scores, clusters=[str(i % 2) for i in range(len(scores))])
                center = entry["mean"]
                for key in ("ci95", "ci95_clustered"):
                    low, high = entry[key]
                    self.assertTrue(low < center < high, (key, entry))
                half = stats.z_value() * entry["se"]
                self.assertAlmostEqual(entry["ci95"][0], center - half, places=12)
        self.assertEqual(stats.mean_interval([0.25, 1.0], 0.625), stats.bounded_interval(0.625, 2))

    def test_design_effect_widens(self) -> None:
        plain = stats.bounded_interval(0.5, 8) or []
        wide = stats.bounded_interval(0.5, 8, deff=2) or []
        self.assertLess(wide[0], plain[0])
        self.assertGreater(wide[1], plain[1])
        from scipy.stats import binomtest

        want = binomtest(2, 4).proportion_ci(0.95, method="wilsoncc")  # 4 effective samples
        self.assertAlmostEqual(wide[0], want.low, places=9)
        self.assertAlmostEqual(wide[1], want.high, places=9)
        self.assertEqual(stats.design_effect(0.1, 0.05), 1.0)  # never narrower
        self.assertEqual(stats.design_effect(None, 0.05), 1.0)
        self.assertAlmostEqual(stats.design_effect(0.1, 0.2), 4.0)


class CoverageTest(unittest.TestCase):
    def test_exact_coverage_over_every_rate(self) -> None:
        # Not simulated: the binomial probability of the counts whose interval holds the rate,
        # on a grid of 999 rates; the minimum is at least 95% for each n.
        from scipy.stats import binom

        rates = np.linspace(0.001, 0.999, 999)
        for n in SIZES:
            counts = np.arange(n + 1)
            low, high = stats.wilson_cc(counts, np.full(n + 1, float(n)))
            holds = (low[:, None] <= rates) & (rates <= high[:, None])
            coverage = (binom.pmf(counts[:, None], n, rates) * holds).sum(axis=0)
            with self.subTest(n=n):
                self.assertGreaterEqual(float(coverage.min()), 0.95 - 1e-9)

    def test_zero_one_scores(self) -> None:
        rng = np.random.default_rng(37)
        for n in SIZES:
            for rate in RATES:
                with self.subTest(n=n, rate=rate):
                    means = rng.binomial(n, rate, size=DRAWS) / n
                    coverage = _coverage(means, n, rate)
                    self.assertGreaterEqual(coverage, 0.95 - MARGIN)
                    if rate in (0.0, 1.0):
                        self.assertEqual(coverage, 1.0)

    def test_partial_credit_scores(self) -> None:
        # Scores in [0, 1] that are not 0/1: beta-distributed around the rate, and a
        # two-point score (0.5 or 1) whose samples are often all equal at small n.
        rng = np.random.default_rng(38)
        for n in SIZES:
            for rate in RATES:
                draws = DRAWS if n < 500 else DRAWS // 4
                if rate in (0.0, 1.0):
                    samples = np.full((draws, n), rate)
                else:
                    samples = rng.beta(rate * 4, (1 - rate) * 4, size=(draws, n))
                with self.subTest(n=n, rate=rate, kind="beta"):
                    self.assertGreaterEqual(_coverage(samples.mean(axis=1), n, rate), 0.95 - MARGIN)
                two_point = np.where(rng.random((draws, n)) < 0.9, 1.0, 0.5)
                with self.subTest(n=n, kind="two-point"):
                    self.assertGreaterEqual(
                        _coverage(two_point.mean(axis=1), n, 0.95), 0.95 - MARGIN
                    )

    def test_near_perfect_partial_credit(self) -> None:
        # A score of 0.98 or 1 (a near-perfect OCR or ANLS score), each half the time: the
        # mean lies within half a count of n, where the corrected formula's upper bound falls
        # back to the estimate (4 samples averaging 0.985: [0.383, 0.985]). Exact coverage by
        # enumeration, and the mirror image near 0.
        from scipy.stats import binom

        for n in (1, 2, 4, 5, 10):
            ones = np.arange(n + 1)
            weights = binom.pmf(ones, n, 0.5)
            for top, bottom in ((1.0, 0.98), (0.02, 0.0)):
                means = (ones * top + (n - ones) * bottom) / n
                low, high = stats.wilson_cc(means * n, np.full(n + 1, float(n)))
                truth = (top + bottom) / 2
                covered = float(np.sum(weights * ((low <= truth) & (truth <= high))))
                with self.subTest(n=n, top=top):
                    self.assertGreaterEqual(covered, 0.95)

    def test_bounds_grow_with_the_count(self) -> None:
        # A higher mean never gets a lower bound: fractional counts included.
        for n in (1.0, 2.0, 2.25, 4.0, 50.0, 500.0):
            counts = np.linspace(0, n, 4001)
            low, high = stats.wilson_cc(counts, np.full(len(counts), n))
            with self.subTest(n=n):
                self.assertTrue(np.all(np.diff(low) >= -1e-12))
                self.assertTrue(np.all(np.diff(high) >= -1e-12))

    def test_clustered_interval_covers(self) -> None:
        # 10 clusters of n / 10 samples sharing a cluster rate around 0.5: the independent
        # interval under-covers, the one at the effective sample size does not.
        rng = np.random.default_rng(39)
        n, clusters, draws = 200, 10, 400
        labels = np.repeat(np.arange(clusters), n // clusters)
        covered = 0
        for _ in range(draws):
            rates = np.clip(rng.normal(0.5, 0.15, size=clusters), 0, 1)
            scores = (rng.random(n) < rates[labels]).astype(float)
            entry = stats.describe(scores, labels)
            low, high = entry["ci95_clustered"]
            covered += low <= 0.5 <= high
            self.assertTrue(0 <= low <= high <= 1)
        self.assertGreaterEqual(covered / draws, 0.90)
