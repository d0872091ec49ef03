"""`score` stores its results in a private run store (StreamedReport) instead of holding them:
the report it writes is byte for byte the same on one worker and on several, with the metric
details held or read back from the store pass by pass, and the store leaves nothing behind. (Against the reports
of the code before it, the byte-identity is checked outside the suite.)"""

from __future__ import annotations

import os
import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from datbench_cli.benchmarks.datbench import stages, summary
from datbench_cli.benchmarks.datbench.streamed_report import StreamedReport
from datbench_cli.files.run_store import BlobTable
from datbench_cli.files.rundir import JUDGE_RESPONSES, RESPONSES, RunDir
from tests.cli_helpers import ROOT
from tests.run_builders import make_score_run

SAMPLE = ROOT / "sample_data" / "datbench"
# Every vector of the pool once (568) and more entries than the store writes in one batch (512),
# so the entries are flushed more than once and two workers interleave about ten chunks.
SAMPLES = 600


def _streamed(run: RunDir, jobs: int, profile: str = "reference") -> tuple[bytes, StreamedReport]:
    """(the saved report's bytes, the streamed report) of scoring ``run``."""
    judges = run.path(JUDGE_RESPONSES)
    report, _ = stages._score(
        run,
        run.path(RESPONSES),
        judges if judges.is_file() else None,
        sample_timeout=None,
        jobs=jobs,
        warn=lambda _: None,
        progress=None,
        profile=profile,
        options=None,
    )
    assert isinstance(report, StreamedReport)
    with tempfile.TemporaryDirectory() as tmp:
        report.save(Path(tmp) / "report.json")
        return (Path(tmp) / "report.json").read_bytes(), report


class StreamedReportTests(unittest.TestCase):
    _reference: bytes | None = None

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.synthetic = RunDir(make_score_run(cls.tmp / "synthetic", SAMPLES))
        cls._reference = None

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def reference(self) -> bytes:
        """The saved report of the synthetic run on one worker, scored once per class and
        worker (each test still scores the run itself and compares its bytes with these)."""
        cls = type(self)
        if cls._reference is None:
            cls._reference = _streamed(self.synthetic, 1)[0]
        return cls._reference

    def test_synthetic_run_is_byte_identical_on_one_and_two_cores(self) -> None:
        for jobs in (1, 2):
            with self.subTest(jobs=jobs):
                streamed, report = _streamed(self.synthetic, jobs)
                self.assertEqual(streamed, self.reference())
                self.assertGreater(report.entries.count, BlobTable._BATCH)
                self.assertEqual(report.results, [])  # nothing held

    def test_details_read_back_pass_by_pass_are_byte_identical(self) -> None:
        # A tiny in-memory limit: every dataset's details reach compute_metrics as a sequence
        # unpickled from the store on each pass.
        with (
            mock.patch.object(summary, "HELD", 2),
            mock.patch.object(summary, "_Details", wraps=summary._Details) as lazy,
        ):
            streamed, _ = _streamed(self.synthetic, 1)
        self.assertEqual(streamed, self.reference())
        self.assertGreater(lazy.call_count, 10)

    def test_corrected_profile_is_byte_identical(self) -> None:
        one, _ = _streamed(self.synthetic, 1, "corrected")
        self.assertEqual(one, _streamed(self.synthetic, 2, "corrected")[0])

    def test_to_dict_reads_the_results_back(self) -> None:
        _, report = _streamed(self.synthetic, 1)
        data = report.to_dict()
        self.assertEqual(len(data["results"]), report.entries.count)
        self.assertIn("response_status", data["results"][0]["metadata"])

    def test_no_scored_sample_gives_an_empty_results_list(self) -> None:
        run_dir = self.tmp / "empty"
        shutil.copytree(self.synthetic.root, run_dir)
        (run_dir / RESPONSES).write_bytes(b"")
        (run_dir / JUDGE_RESPONSES).unlink()
        streamed, report = _streamed(RunDir(run_dir), 1)
        self.assertEqual(report.entries.count, 0)
        self.assertIn(b'"results": []\n}\n', streamed)

    def test_the_store_leaves_no_file_in_the_run_directory(self) -> None:
        before = set(os.listdir(self.synthetic.root))
        _streamed(self.synthetic, 2)
        self.assertEqual(set(os.listdir(self.synthetic.root)), before)


if __name__ == "__main__":
    unittest.main()
