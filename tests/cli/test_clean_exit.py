"""The program exits cleanly after stopping a parquet scan early (regression).

Found while benchmarking: `export-tasks --limit 1` on a dataset whose images do not fit in one read
either hung for ever or aborted ("terminate called without an active exception") at interpreter
shutdown, because the abandoned Arrow scan keeps an I/O thread that needs the GIL. The console
entry point now ends the process itself once every file is written, after a streaming scan only;
`main()` itself exits normally, so a program that calls it keeps its `atexit` handlers and its
unflushed files (issue 15: `main()` used to `os._exit` after every command).
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


EMBEDDING_PROGRAM = """
import atexit, sys
from datbench_cli.cli.app import {entry}
log = open(sys.argv[1], "w")
log.write("buffered line\\n")  # unflushed until the interpreter shuts down
atexit.register(lambda: print("atexit handler ran"))
sys.argv = ["datbench", *sys.argv[2:]]
{entry}()
"""


class EmbeddedMainTests(unittest.TestCase):
    """A program that calls ``main()`` keeps its exit handlers and buffered files."""

    def run_program(self, entry: str, *args: str) -> tuple[subprocess.CompletedProcess, str]:
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp, True)
        log = tmp / "log.txt"
        result = subprocess.run(
            [sys.executable, "-c", EMBEDDING_PROGRAM.format(entry=entry), str(log), *args],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "NO_COLOR": "1"},
            timeout=120,
            check=False,
        )
        return result, log.read_text() if log.exists() else ""

    def test_main_after_an_export_runs_exit_handlers(self) -> None:
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp, True)
        source = make_dataset(tmp, {"math": [make_row("m1"), make_row("m2")]})
        run = tmp / "run"
        result, log = self.run_program(
            "main", "export-tasks", "math", "--source", str(source), "-d", str(run), "-q"
        )
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("atexit handler ran", result.stdout)
        self.assertEqual(log, "buffered line\n")
        self.assertEqual(len((run / "tasks.jsonl").read_text().splitlines()), 2)

    def test_console_entry_without_a_scan_exits_normally(self) -> None:
        result, log = self.run_program("console_main", "--version")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("atexit handler ran", result.stdout)
        self.assertEqual(log, "buffered line\n")


if __name__ == "__main__":
    unittest.main()
