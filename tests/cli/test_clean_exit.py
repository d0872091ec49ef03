"""The program exits cleanly after stopping a parquet scan early (regression).

Found while benchmarking: `export-tasks --limit 1` on a dataset whose images do not fit in one read
either hung for ever or aborted ("terminate called without an active exception") at interpreter
shutdown, because the abandoned Arrow scan keeps an I/O thread that needs the GIL. `main()` now
ends the process itself once every file is written.
"""

from __future__ import annotations

import io
import os
import random
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from tests.cli_helpers import ROOT, make_dataset, make_row


def noise_png(rng: random.Random) -> bytes:
    from PIL import Image

    side = 200
    image = Image.frombytes("RGB", (side, side), rng.randbytes(side * side * 3))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=0)
    return buffer.getvalue()


class CleanExitTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        rng = random.Random(7)
        rows = [
            make_row(f"m{i:03d}", image={"bytes": noise_png(rng), "path": None}) for i in range(150)
        ]
        cls.source = make_dataset(cls.tmp, {"math": rows})

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_export_with_a_small_limit_exits(self) -> None:
        for attempt in range(3):
            target = self.tmp / f"run{attempt}"
            result = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "datbench_cli",
                    "export-tasks",
                    "math",
                    "--limit",
                    "1",
                    "--source",
                    str(self.source),
                    "-d",
                    str(target),
                    "-q",
                ],
                capture_output=True,
                text=True,
                cwd=ROOT,
                env={**os.environ, "NO_COLOR": "1"},
                timeout=120,
                check=False,
            )
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertNotIn("terminate called", result.stderr)
            self.assertEqual(len((target / "tasks.jsonl").read_text().splitlines()), 1)


if __name__ == "__main__":
    unittest.main()
