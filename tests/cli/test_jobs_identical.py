"""`score --jobs 2` writes a report byte-identical to `score --jobs 1` (sample_data)."""

from __future__ import annotations

import shutil
import tempfile
import unittest
from pathlib import Path

from datbench_cli.runtime.pool import usable_cpus
from tests.cli_helpers import SAMPLE, run_cli, sample_capabilities


class JobsIdenticalTests(unittest.TestCase):
    def test_reports_are_byte_identical(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            run = Path(tmp) / "run"
            result = run_cli(
                "export-tasks", *sample_capabilities(), "--source", str(SAMPLE), "-d", str(run)
            )
            self.assertEqual(result.exit_code, 0, result.stderr)
            shutil.copy(SAMPLE / "responses.jsonl", run / "responses.jsonl")
            shutil.copy(SAMPLE / "judge_responses.jsonl", run / "judge_responses.jsonl")
            reports = []
            for jobs in ("1", "2"):
                target = run / f"report-{jobs}.json"
                result = run_cli("score", "-d", str(run), "--jobs", jobs, "-o", str(target), "-q")
                self.assertEqual(result.exit_code, 0, result.stderr)
                reports.append(target.read_bytes())
            self.assertGreater(len(reports[0]), 10_000)
            self.assertEqual(reports[0], reports[1])
            # More than four workers per usable core is refused before any work: --jobs
            # 100000 forked a process per worker until the machine stalled.
            most = 4 * usable_cpus()
            result = run_cli("score", "-d", str(run), "--jobs", str(most + 1), "-q")
            self.assertEqual(result.exit_code, 2, result.stderr)
            self.assertEqual(
                result.stderr,
                f"error: --jobs {most + 1} asks for more than {most} worker processes, four "
                f"per usable core ({usable_cpus()} here); scoring gains nothing past one per "
                "core\n",
            )
            self.assertFalse((run / "report.json").exists())
            target = run / "report-most.json"
            result = run_cli("score", "-d", str(run), "--jobs", str(most), "-o", str(target), "-q")
            self.assertEqual(result.exit_code, 0, result.stderr)
            self.assertEqual(target.read_bytes(), reports[0])


if __name__ == "__main__":
    unittest.main()
