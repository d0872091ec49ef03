"""Aggregates add floats left to right, as the reference's Python did, on every Python."""

from __future__ import annotations

import unittest

from datbench_cli.metrics.averaging import float_sum, mean


class FloatSumTests(unittest.TestCase):
    def test_left_to_right_not_compensated(self) -> None:
        # Python 3.12+ `sum` returns 1.0 here (compensated); the reference's aggregates were
        # computed with plain left-to-right addition, which gives the value below.
        self.assertEqual(float_sum([0.1] * 10), 0.9999999999999999)
        self.assertEqual(mean([0.1] * 10), 0.09999999999999999)

    def test_integers_and_booleans_stay_exact(self) -> None:
        self.assertEqual(float_sum([True, False, True]), 2)
        self.assertEqual(float_sum(range(5)), 10)
        self.assertEqual(float_sum([]), 0)
        self.assertEqual(mean([]), 0.0)


if __name__ == "__main__":
    unittest.main()
