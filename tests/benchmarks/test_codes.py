"""Codes, CodeArray and OptionalFloats: compact per-sample columns that lose nothing."""

from __future__ import annotations

import math
import unittest

from datbench_cli.benchmarks.datbench.codes import CodeArray, Codes, OptionalFloats


class CodeArrayTests(unittest.TestCase):
    def test_widens_only_when_a_code_does_not_fit(self) -> None:
        codes = CodeArray()
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
        self.assertEqual(CodeArray().numpy().tolist(), [])


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
