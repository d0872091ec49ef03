"""IdTable: exact last-index lookups over compactly held ids, duplicates and shared hashes."""

from __future__ import annotations

import random
import unittest
from collections import Counter
from unittest import mock

from datbench_cli.files import id_table
from datbench_cli.files.id_table import IdTable


def table_of(ids: list[str]) -> IdTable:
    table = IdTable()
    for ident in ids:
        table.append(ident)
    table.freeze()
    return table


class IdTableTests(unittest.TestCase):
    def check_against_a_dict(self, ids: list[str]) -> None:
        table = table_of(ids)
        last = {ident: index for index, ident in enumerate(ids)}
        self.assertEqual(list(table), ids)
        counts = Counter(ids)
        self.assertEqual(table.duplicate_ids(), sum(1 for n in counts.values() if n > 1))
        self.assertEqual(len(table), len(ids))
        for index, ident in enumerate(ids):
            self.assertEqual(table[index], ident)
            self.assertEqual(table.last_index(ident), last[ident])
            self.assertEqual(table.last_of(index), last[ident])
        for absent in ("absent", "", "x" * 300, ids[0] + "\x00" if ids else "y"):
            if absent not in last:
                self.assertIsNone(table.last_index(absent))

    def test_unique_duplicated_and_unusual_ids(self) -> None:
        rng = random.Random(3)
        ids = [f"s-{rng.randrange(400)}" for _ in range(1000)]  # many duplicates
        ids += ["ünïcödé", "a\x00b", "\ud800", "", "emoji 🙂", "s-1\n"]
        self.check_against_a_dict(ids)
        self.check_against_a_dict([f"unique-{n}" for n in range(500)])
        self.check_against_a_dict([])

    def test_ids_that_share_a_hash_are_told_apart(self) -> None:
        # Every id hashes alike: the lookup must compare the ids themselves.
        with mock.patch.object(id_table, "hash", create=True, side_effect=lambda _: 7):
            ids = ["a", "b", "a", "c", "b", "dd"]
            self.check_against_a_dict(ids)

    def test_count_absent_from_another_table(self) -> None:
        rng = random.Random(5)
        for _ in range(20):
            mine = [f"id-{rng.randrange(60)}" for _ in range(rng.randrange(0, 80))]
            theirs = [f"id-{rng.randrange(60)}" for _ in range(rng.randrange(0, 80))]
            expected = len(set(mine) - set(theirs))
            self.assertEqual(table_of(mine).count_absent_from(table_of(theirs)), expected)
        with mock.patch.object(id_table, "hash", create=True, side_effect=lambda _: 7):
            mine, theirs = ["a", "b", "b", "zz"], ["zz", "c", "a"]
            self.assertEqual(table_of(mine).count_absent_from(table_of(theirs)), 1)
            self.assertIn("zz", table_of(theirs))
            self.assertNotIn("b", table_of(theirs))

    def test_forgotten_ids_keep_the_length_and_the_last_index_of_each(self) -> None:
        ids = ["a", "b", "a", "c"]
        table = table_of(ids)
        self.assertTrue(table.held)
        table.forget()
        self.assertFalse(table.held)
        self.assertEqual(len(table), 4)
        self.assertEqual([table.last_of(i) for i in range(4)], [2, 1, 2, 3])
        with self.assertRaises(ValueError):
            table[0]
        with self.assertRaises(ValueError):
            table.last_index("a")

    def test_not_a_string_is_not_here(self) -> None:
        self.assertIsNone(table_of(["1"]).last_index(1))  # type: ignore[arg-type]

    def test_lookup_before_freeze_is_refused(self) -> None:
        table = IdTable()
        table.append("a")
        with self.assertRaises(ValueError):
            table.last_index("a")


if __name__ == "__main__":
    unittest.main()
