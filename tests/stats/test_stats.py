"""The statistics against independent computations: hand-worked values, naive loops, and a
coverage simulation for the paired bootstrap."""

from __future__ import annotations

import math
import random
import unittest

import numpy as np

from datbench_cli import stats


def _naive_clustered_se(scores: list[float], clusters: list[str]) -> float:
    """Miller (2024) eq. 4 written as the double sum over pairs inside each cluster."""
    n = len(scores)
    m = sum(scores) / n
    var = sum((s - m) ** 2 for s in scores) / (n - 1)
    cross = 0.0
    for i in range(n):
        for j in range(n):
            if i != j and clusters[i] == clusters[j]:
                cross += (scores[i] - m) * (scores[j] - m)
    return math.sqrt(var / n + cross / n**2)


class CltSeTest(unittest.TestCase):
    def test_hand_worked(self) -> None:
        # mean 0.75, sample variance ((3 * 0.25^2) + 0.75^2) / 3 = 0.25, se = sqrt(0.25 / 4)
        self.assertAlmostEqual(stats.clt_se([1, 0, 1, 1]), 0.25, places=15)

    def test_undefined_below_two_samples(self) -> None:
        self.assertIsNone(stats.clt_se([]))
        self.assertIsNone(stats.clt_se([1.0]))
        self.assertIsNone(stats.mean([]))


class RankedClustersTest(unittest.TestCase):
    """Integer cluster codes that sort as the names do give the very numbers the names give."""

    def test_codes_equal_names_bit_for_bit(self) -> None:
        rng = random.Random(11)
        names = ["zeta", "alpha", "Mu", "beta-2", "beta", "ünï"]
        order = sorted(names)
        for n in (0, 1, 2, 3, 50, 2000):
            picked = [rng.choice(names[: rng.randint(1, len(names))]) for _ in range(n)]
            scores = [rng.choice([0.0, 1.0, 0.5, 1 / 3]) for _ in range(n)]
            ranks = np.array([order.index(name) for name in picked], dtype=np.uint8)
            with self.subTest(n=n):
                by_name = stats.describe(scores, picked)
                by_code = stats.describe(np.array(scores), ranks)
                self.assertEqual(by_code, by_name)
                self.assertEqual(repr(by_code), repr(by_name))


class NormalQuantileTest(unittest.TestCase):
    """The quantiles kept to spare ``score`` the scipy.stats import are scipy's, to the bit."""

    def test_known_quantiles_are_scipys(self) -> None:
        from scipy.stats import norm

        for probability, value in stats._KNOWN_QUANTILES.items():
            with self.subTest(probability=probability):
                self.assertEqual(value, float(norm.ppf(probability)))
        self.assertIn(0.5 + stats.CONFIDENCE / 2, stats._KNOWN_QUANTILES)
        self.assertIn(stats.POWER, stats._KNOWN_QUANTILES)

    def test_other_probabilities_are_scipys(self) -> None:
        from scipy.stats import norm

        for probability in (0.5, 0.9, 0.995, 0.6, 1e-9, 0.0, 1.0):
            with self.subTest(probability=probability):
                self.assertEqual(stats.normal_quantile(probability), float(norm.ppf(probability)))
        self.assertEqual(stats.z_value(0.99), float(norm.ppf(0.995)))


class ClusteredSeTest(unittest.TestCase):
    def test_hand_worked_positive_correlation(self) -> None:
        # scores 1,1,1 | 0,0,0; mean 0.5, deviations +-0.5.
        # CLT: var = 6 * 0.25 / 5 = 0.3, var / n = 0.05.
        # Cross terms: per cluster (sum d)^2 - sum d^2 = 2.25 - 0.75 = 1.5, twice = 3.0; / 36.
        # SE^2 = 0.05 + 0.083333... = 0.133333..., SE = 0.365148...
        se = stats.clustered_se([1, 1, 1, 0, 0, 0], list("AAABBB"))
        self.assertAlmostEqual(se, math.sqrt(0.05 + 3.0 / 36), places=15)
        self.assertAlmostEqual(se, 0.3651483716701107, places=12)

    def test_hand_worked_negative_correlation(self) -> None:
        # scores 1,1,0 | 0,1,0: per cluster (0.5)^2 - 0.75 = -0.5, twice = -1.0; / 36.
        se = stats.clustered_se([1, 1, 0, 0, 1, 0], list("AAABBB"))
        self.assertAlmostEqual(se, math.sqrt(0.05 - 1.0 / 36), places=15)

    def test_singleton_clusters_are_the_clt_error(self) -> None:
        scores = [0.2, 0.9, 0.4, 1.0, 0.0]
        self.assertAlmostEqual(
            stats.clustered_se(scores, list("abcde")), stats.clt_se(scores), places=15
        )

    def test_against_the_double_sum(self) -> None:
        rng = random.Random(7)
        for _ in range(20):
            n = rng.randint(2, 40)
            scores = [rng.choice([0.0, 1.0, rng.random()]) for _ in range(n)]
            clusters = [rng.choice("xyz") for _ in range(n)]
            self.assertAlmostEqual(
                stats.clustered_se(scores, clusters),
                _naive_clustered_se(scores, clusters),
                places=12,
            )

    def test_length_mismatch_refused(self) -> None:
        with self.assertRaises(ValueError):
            stats.clustered_se([1, 0], ["a"])

    def test_chunked_sums_are_bincounts_bit_for_bit(self) -> None:
        # The per-cluster sums go a chunk of deviations at a time; across several chunks they
        # must be the bits np.bincount gives over all of them at once.
        rng = np.random.default_rng(3)
        n = 3 * stats._DEVIATION_CHUNK + 17
        scores = rng.random(n) * rng.choice([1.0, 1e-9, 1e9], n)
        clusters = rng.integers(0, 7, n).astype(np.uint8)
        deviations = scores - scores.mean()
        sums = np.bincount(clusters, weights=deviations)
        squares = np.bincount(clusters, weights=deviations * deviations)
        base = stats.clt_se(scores)
        assert base is not None
        cross = float(np.sum(sums * sums - squares))
        expected = math.sqrt(max(base * base + cross / (n * n), 0.0))
        self.assertEqual(stats.clustered_se(scores, clusters), expected)


class McNemarTest(unittest.TestCase):
    # (b, c, p): two-sided exact binomial, p = 1/2, computed by hand from binomial coefficients.
    TABLE = [
        (0, 0, 1.0),
        (1, 0, 1.0),  # 2 * P(X <= 0 | n=1) = 2 * 1/2
        (3, 3, 1.0),
        (0, 5, 2 / 32),  # 2 * 1/32
        (2, 8, 2 * (1 + 10 + 45) / 1024),  # 0.109375
        (1, 9, 2 * (1 + 10) / 1024),  # 0.021484375
        (10, 0, 2 / 1024),
        (4, 6, 2 * (1 + 10 + 45 + 120 + 210) / 1024),  # 0.75390625
        (5, 15, 2 * (1 + 20 + 190 + 1140 + 4845 + 15504) / 2**20),  # 0.041389...
    ]

    def test_hand_computed_table(self) -> None:
        for b, c, expected in self.TABLE:
            with self.subTest(b=b, c=c):
                self.assertAlmostEqual(stats.mcnemar_exact(b, c), expected, places=12)

    def test_symmetric(self) -> None:
        self.assertEqual(stats.mcnemar_exact(2, 9), stats.mcnemar_exact(9, 2))

    def test_negative_refused(self) -> None:
        with self.assertRaises(ValueError):
            stats.mcnemar_exact(-1, 3)


class HolmTest(unittest.TestCase):
    def test_hand_worked(self) -> None:
        # sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> monotone 0.06
        adjusted = stats.holm([0.01, 0.04, 0.03, 0.005])
        for got, want in zip(adjusted, [0.03, 0.06, 0.06, 0.02], strict=True):
            self.assertAlmostEqual(got, want, places=15)

    def test_caps_at_one_and_keeps_none(self) -> None:
        self.assertEqual(stats.holm([0.5, None, 0.9]), [1.0, None, 1.0])
        self.assertEqual(stats.holm([]), [])


class MddTest(unittest.TestCase):
    def test_single_report_hand_worked(self) -> None:
        # p = 0.5, n = 100: sqrt(2 * 0.25 / 100) * (1.959964 + 0.841621)
        want = math.sqrt(0.5 / 100) * (1.959963984540054 + 0.8416212335729143)
        self.assertAlmostEqual(stats.mdd_single(0.5, 100), want, places=12)
        self.assertIsNone(stats.mdd_single(None, 10))
        self.assertIsNone(stats.mdd_single(0.5, 0))
        self.assertIsNone(stats.mdd_single(1.0, 1))

    def test_single_report_at_the_edges(self) -> None:
        # accuracy 1.0 over 8 samples: p is taken as 1 - 1/16, never a variance of 0
        p = 1 - 1 / 16
        want = math.sqrt(2 * p * (1 - p) / 8) * (1.959963984540054 + 0.8416212335729143)
        self.assertAlmostEqual(stats.mdd_single(1.0, 8), want, places=12)
        self.assertAlmostEqual(stats.mdd_single(0.0, 8), want, places=12)

    def test_from_discordance(self) -> None:
        # 20 discordant pairs of 200: variance 0.1
        want = math.sqrt(0.1 / 200) * (1.959963984540054 + 0.8416212335729143)
        self.assertAlmostEqual(stats.mdd_discordance(8, 12, 200), want, places=12)
        # no discordant pair: half a pair, variance 1 / (2n)
        want_none = math.sqrt((1 / 100) / 50) * (1.959963984540054 + 0.8416212335729143)
        self.assertAlmostEqual(stats.mdd_discordance(0, 0, 50), want_none, places=12)
        self.assertIsNone(stats.mdd_discordance(0, 0, 0))

    def test_paired_matches_discordance_on_binary_outcomes(self) -> None:
        a = [1, 1, 0, 0, 1, 0, 1, 1, 0, 1]
        b = [1, 0, 1, 0, 1, 1, 1, 0, 0, 1]  # b = 2 (right -> wrong), c = 2
        self.assertAlmostEqual(stats.mdd_paired(a, b), stats.mdd_discordance(2, 2, 10), places=15)
        self.assertEqual(stats.mdd_paired(a, a), stats.mdd_discordance(0, 0, 10))
        self.assertIsNone(stats.mdd_paired([], []))


class PairedBootstrapTest(unittest.TestCase):
    def setUp(self) -> None:
        rng = random.Random(3)
        self.a = [float(rng.random() < 0.6) for _ in range(300)]
        self.b = [float(x if rng.random() < 0.8 else 1 - x) for x in self.a]
        self.strata = [rng.choice(["ds1", "ds2", "ds3"]) for _ in range(300)]

    def test_reproducible_to_the_last_digit(self) -> None:
        first = stats.paired_bootstrap(self.a, self.b, self.strata, resamples=2000, seed=11)
        second = stats.paired_bootstrap(self.a, self.b, self.strata, resamples=2000, seed=11)
        self.assertEqual(first, second)
        other = stats.paired_bootstrap(self.a, self.b, self.strata, resamples=2000, seed=12)
        self.assertNotEqual((first.low, first.high), (other.low, other.high))

    def test_does_not_depend_on_sample_order(self) -> None:
        order = list(range(300))
        random.Random(5).shuffle(order)
        shuffled = stats.paired_bootstrap(
            [self.a[i] for i in order],
            [self.b[i] for i in order],
            [self.strata[i] for i in order],
            resamples=1000,
            seed=4,
        )
        plain = stats.paired_bootstrap(self.a, self.b, self.strata, resamples=1000, seed=4)
        self.assertEqual((shuffled.low, shuffled.high), (plain.low, plain.high))
        self.assertAlmostEqual(shuffled.difference, plain.difference, places=12)

    def test_matches_a_naive_resampling_of_ids(self) -> None:
        """Same distribution as drawing ids with replacement inside each stratum."""
        got = stats.paired_bootstrap(self.a, self.b, self.strata, resamples=20000, seed=1)
        rng = np.random.default_rng(99)
        d = np.asarray(self.b) - np.asarray(self.a)
        groups = [np.flatnonzero(np.asarray(self.strata) == s) for s in ("ds1", "ds2", "ds3")]
        means = np.empty(20000)
        for r in range(20000):
            means[r] = sum(d[rng.choice(g, size=len(g))].sum() for g in groups) / len(d)
        low, high = np.percentile(means, [2.5, 97.5])
        self.assertAlmostEqual(got.low, low, delta=0.006)
        self.assertAlmostEqual(got.high, high, delta=0.006)
        self.assertAlmostEqual(got.difference, d.mean(), places=12)

    def test_many_distinct_values_draw_ids(self) -> None:
        """Partial-credit scores (every difference distinct): ids are drawn; still independent
        of the sample order, and the same distribution as a naive resampling."""
        rng = np.random.default_rng(8)
        a = rng.random(400)
        b = np.clip(a + rng.normal(0.02, 0.2, 400), 0, 1)
        strata = ["x" if i % 3 else "y" for i in range(400)]
        got = stats.paired_bootstrap(a, b, strata, resamples=4000, seed=2)
        order = rng.permutation(400)
        shuffled = stats.paired_bootstrap(
            a[order], b[order], [strata[i] for i in order], resamples=4000, seed=2
        )
        self.assertEqual((got.low, got.high), (shuffled.low, shuffled.high))
        d = b - a
        groups = [np.flatnonzero(np.asarray(strata) == s) for s in ("x", "y")]
        naive = np.array(
            [sum(d[rng.choice(g, size=len(g))].sum() for g in groups) / len(d) for _ in range(4000)]
        )
        low, high = np.percentile(naive, [2.5, 97.5])
        self.assertAlmostEqual(got.low, low, delta=0.006)
        self.assertAlmostEqual(got.high, high, delta=0.006)

    def test_identical_runs_give_a_point_interval(self) -> None:
        got = stats.paired_bootstrap(self.a, self.a, self.strata, resamples=500)
        self.assertEqual((got.difference, got.low, got.high), (0.0, 0.0, 0.0))

    def test_strata_keep_their_sizes(self) -> None:
        # Stratum A always gains 1, stratum B never changes: every resample's mean is 0.5.
        a = [0.0] * 20
        b = [1.0] * 10 + [0.0] * 10
        strata = ["A"] * 10 + ["B"] * 10
        got = stats.paired_bootstrap(a, b, strata, resamples=500)
        self.assertEqual((got.low, got.high), (0.5, 0.5))
        pooled = stats.paired_bootstrap(a, b, None, resamples=500)
        self.assertLess(pooled.low, 0.45)
        self.assertGreater(pooled.high, 0.55)

    def test_covers_the_true_difference_at_about_the_nominal_rate(self) -> None:
        """400 simulated comparisons of correlated runs (true difference +0.05)."""
        rng = np.random.default_rng(2024)
        trials, n, covered = 400, 250, 0
        for trial in range(trials):
            # Joint outcome: (a, b) in {(1,1), (1,0), (0,1), (0,0)} with P = .5, .1, .15, .25:
            # P(a) = 0.6, P(b) = 0.65, true difference 0.05.
            joint = rng.choice(4, size=n, p=[0.5, 0.1, 0.15, 0.25])
            a = np.isin(joint, [0, 1]).astype(float)
            b = np.isin(joint, [0, 2]).astype(float)
            got = stats.paired_bootstrap(a, b, None, resamples=1000, seed=trial)
            covered += got.low <= 0.05 <= got.high
        rate = covered / trials
        # Binomial(400, 0.95) has a standard deviation of about 0.011.
        self.assertGreater(rate, 0.91)
        self.assertLess(rate, 0.985)

    def test_bad_input(self) -> None:
        self.assertIsNone(stats.paired_bootstrap([], []))
        with self.assertRaises(ValueError):
            stats.paired_bootstrap([1.0], [1.0, 0.0])
        with self.assertRaises(ValueError):
            stats.paired_bootstrap([1.0], [1.0], resamples=0)


if __name__ == "__main__":
    unittest.main()
