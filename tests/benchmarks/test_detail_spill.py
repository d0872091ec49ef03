"""DetailSpill: every group's blobs come back whole and in order, across chunks on disk."""

from __future__ import annotations

import random
import tempfile
import unittest
from pathlib import Path

from datbench_cli.benchmarks.datbench.detail_spill import DetailSpill


class DetailSpillTests(unittest.TestCase):
    def test_groups_come_back_in_order_across_chunks(self) -> None:
        rng = random.Random(7)
        expected: dict[str, list[bytes]] = {}
        with tempfile.TemporaryDirectory() as directory:
            spill = DetailSpill(Path(directory), chunk=64)
            for number in range(2000):
                group = rng.choice(["a", "b", "c", "ünï"])
                blob = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 90)))
                blob += number.to_bytes(4, "little")
                expected.setdefault(group, []).append(blob)
                spill.add(group, blob)
            for group, blobs in expected.items():
                self.assertEqual(list(spill.blobs(group)), blobs)
                self.assertEqual(list(spill.blobs(group)), blobs)  # read twice: same
            self.assertEqual(list(spill.blobs("absent")), [])
            # The temporary file is unnamed: nothing is left in the directory.
            self.assertEqual(list(Path(directory).iterdir()), [])
            spill.close()

    def test_empty_blobs_and_one_large_blob(self) -> None:
        spill = DetailSpill(None, chunk=16)
        blobs = [b"", b"x" * 100_000, b"", b"yz"]
        for blob in blobs:
            spill.add("g", blob)
        self.assertEqual(list(spill.blobs("g")), blobs)
        spill.close()
        self.assertEqual(list(spill.blobs("g")), [])


if __name__ == "__main__":
    unittest.main()
