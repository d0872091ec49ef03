"""Pixmo's assignment is SciPy's ``linear_sum_assignment`` itself, loaded without the rest of
``scipy.optimize`` (its tie-breaking decides some scores)."""

from __future__ import annotations

import subprocess
import sys
import unittest
from unittest import mock

import numpy as np

from datbench_cli.scorers import pixmo_points_eval
from tests.cli_helpers import ROOT


class AssignmentTests(unittest.TestCase):
    def test_it_is_scipys_function(self) -> None:
        from scipy.optimize import linear_sum_assignment

        self.assertIs(pixmo_points_eval._linear_sum_assignment(), linear_sum_assignment)

    def test_ties_are_broken_as_scipy_breaks_them(self) -> None:
        from scipy.optimize import linear_sum_assignment

        assign = pixmo_points_eval._linear_sum_assignment()
        rng = np.random.default_rng(5)
        for _ in range(300):
            cost = rng.integers(0, 3, size=(rng.integers(1, 7), rng.integers(1, 7))).astype(float)
            for ours, theirs in zip(assign(cost), linear_sum_assignment(cost), strict=True):
                np.testing.assert_array_equal(ours, theirs)

    def test_loaded_without_the_optimize_package(self) -> None:
        probe = (
            "import sys\n"
            "from datbench_cli.scorers import pixmo_points_eval as p\n"
            "rows, cols = p._linear_sum_assignment()([[1.0, 0.0], [0.0, 1.0]])\n"
            "print(rows.tolist(), cols.tolist(), 'scipy.optimize' in sys.modules)\n"
        )
        result = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60
        )
        self.assertEqual(result.stdout.split("\n")[0], "[0, 1] [1, 0] False", result.stderr)

    def test_an_unexpected_layout_falls_back_to_the_package(self) -> None:
        from scipy.optimize import linear_sum_assignment

        pixmo_points_eval._linear_sum_assignment.cache_clear()
        self.addCleanup(pixmo_points_eval._linear_sum_assignment.cache_clear)
        with mock.patch("importlib.util.find_spec", return_value=None):
            self.assertIs(pixmo_points_eval._linear_sum_assignment(), linear_sum_assignment)


if __name__ == "__main__":
    unittest.main()
