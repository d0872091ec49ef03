"""Codes, UIntArray and OptionalFloats: compact per-sample columns that lose nothing."""

from __future__ import annotations

import math
import random
import unittest

from datbench_cli.files.codes import Ascending, Codes, OptionalFloats, UIntArray


class UIntArrayTests(unittest.TestCase):
    def test_widens_only_when_a_code_does_not_fit(self) -> None:
        codes = UIntArray()
        values = [0, 7, 255]
        for value in values:
            codes.append(value)
        self.assertEqual(codes.values.itemsize, 1)
        for value in (256, 3, 70_000, 5_000_000_000, 1):
            codes.append(value)
            values.append(value)
        self.assertEqual(list(codes), values)
        self.assertEqual(codes.numpy().tolist(), values)
        self.assertEqual([codes[i] for i in range(len(codes))], values)
        self.assertEqual(UIntArray().numpy().tolist(), [])


class AscendingTests(unittest.TestCase):
    def _check(self, values: list[int]) -> Ascending:
        held = Ascending()
        for value in values:
            held.append(value)
        self.assertEqual(len(held), len(values))
        self.assertEqual(list(held), values)
        self.assertEqual([held[i] for i in range(len(values))], values)
        if values:
            self.assertEqual(held[-1], values[-1])
        with self.assertRaises(IndexError):
            held[len(values)]
        return held

    def test_runs_cost_a_few_entries(self) -> None:
        # Line numbers past two blank lines: three runs, whatever the length.
        values = [*range(1, 1001), *range(1003, 5000), *range(5001, 9000)]
        held = self._check(values)
        self.assertIsNone(held._plain)
        self.assertEqual(len(held._shifts), 3)

    def test_values_that_do_not_run_are_held_one_by_one(self) -> None:
        rng = random.Random(5)
        shuffled = list(range(2000))
        rng.shuffle(shuffled)
        held = self._check(shuffled)
        self.assertIsNotNone(held._plain)
        # A value below its place (a shift that would be negative) goes plain at once.
        self._check([5, 6, 7, 0, 1, 2])
        self._check([])
        with self.assertRaises(ValueError):
            Ascending().append(-1)


class CodesTests(unittest.TestCase):
    def test_first_appearance_order_and_unhashable_names(self) -> None:
        codes = Codes()
        self.assertEqual([codes.code(n) for n in ["b", "a", "b", ["x"], "c"]], [0, 1, 0, 2, 3])
        self.assertEqual(codes.names, ["b", "a", ["x"], "c"])
        self.assertEqual(codes.get("a"), 1)
        self.assertEqual(codes.get("absent"), -1)
        self.assertEqual(codes.get(["x"]), -1)


class OptionalFloatsTests(unittest.TestCase):
    def test_nothing_allocated_until_a_value_then_the_same_answers(self) -> None:
        floats = OptionalFloats()
        for _ in range(3):
            floats.append(None)
        self.assertIsNone(floats._values)
        self.assertTrue(math.isnan(floats[2]))
        with self.assertRaises(IndexError):
            floats[3]
        floats.append(0.25)
        floats.append(None)
        self.assertEqual(len(floats), 5)
        self.assertEqual(floats[3], 0.25)
        self.assertTrue(all(math.isnan(floats[i]) for i in (0, 1, 2, 4)))


if __name__ == "__main__":
    unittest.main()
