"""`score` streams its results to a temporary file (StreamedReport) instead of holding them:
the report it writes must be byte for byte the one the in-memory path (DatBenchReport) writes,
on one core and on several, and the spill must leave nothing behind."""

from __future__ import annotations

import os
import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from datbench_cli.benchmarks.datbench import detail_spill, stages
from datbench_cli.benchmarks.datbench.schema import DatBenchReport
from datbench_cli.benchmarks.datbench.streamed_report import StreamedReport
from datbench_cli.files.rundir import JUDGE_RESPONSES, RESPONSES, RunDir
from tests.cli_helpers import ROOT
from tests.run_builders import make_score_run

SAMPLE = ROOT / "sample_data" / "datbench"


def _both(
    run: RunDir, jobs: int, profile: str = "reference"
) -> tuple[bytes, bytes, StreamedReport]:
    """(in-memory report bytes, streamed report bytes, the streamed report)."""
    judges = run.path(JUDGE_RESPONSES)
    kwargs = dict(
        strict_judge=False,
        strict=False,
        sample_timeout=None,
        jobs=jobs,
        warn=lambda _: None,
        progress=None,
        profile=profile,
    )
    judge_path = judges if judges.is_file() else None
    held, _ = stages._score(run, run.path(RESPONSES), judge_path, **kwargs)  # type: ignore[arg-type]
    streamed, _ = stages._score(
        run,
        run.path(RESPONSES),
        judge_path,
        spill_dir=run.root,
        **kwargs,  # type: ignore[arg-type]
    )
    assert isinstance(streamed, StreamedReport)
    assert not isinstance(held, StreamedReport) and isinstance(held, DatBenchReport)
    with tempfile.TemporaryDirectory() as tmp:
        held.save(Path(tmp) / "held.json")
        streamed.save(Path(tmp) / "streamed.json")
        return (
            (Path(tmp) / "held.json").read_bytes(),
            (Path(tmp) / "streamed.json").read_bytes(),
            streamed,
        )


class StreamedReportTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.synthetic = RunDir(make_score_run(cls.tmp / "synthetic", 1200))

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_synthetic_run_is_byte_identical_on_one_and_two_cores(self) -> None:
        for jobs in (1, 2):
            with self.subTest(jobs=jobs):
                held, streamed, report = _both(self.synthetic, jobs)
                self.assertEqual(held, streamed)
                self.assertGreater(report.spill.count, 1000)
                self.assertEqual(report.results, [])  # nothing held

    def test_details_read_back_from_disk_pass_by_pass_are_byte_identical(self) -> None:
        # Tiny chunks and a tiny in-memory limit: every dataset's details go to the file and
        # reach compute_metrics as a sequence unpickled on each pass.
        with (
            mock.patch.object(detail_spill, "CHUNK", 64),
            mock.patch.object(detail_spill, "HELD", 2),
            mock.patch.object(detail_spill, "_Unpickled", wraps=detail_spill._Unpickled) as lazy,
        ):
            held, streamed, _ = _both(self.synthetic, 1)
        self.assertEqual(held, streamed)
        self.assertGreater(lazy.call_count, 10)

    def test_corrected_profile_is_byte_identical(self) -> None:
        held, streamed, _ = _both(self.synthetic, 1, "corrected")
        self.assertEqual(held, streamed)

    def test_to_dict_reads_the_results_back(self) -> None:
        _, streamed, report = _both(self.synthetic, 1)
        data = report.to_dict()
        self.assertEqual(len(data["results"]), report.spill.count)
        self.assertIn("response_status", data["results"][0]["metadata"])

    def test_no_scored_sample_gives_an_empty_results_list(self) -> None:
        run_dir = self.tmp / "empty"
        shutil.copytree(self.synthetic.root, run_dir)
        (run_dir / RESPONSES).write_bytes(b"")
        (run_dir / JUDGE_RESPONSES).unlink()
        held, streamed, report = _both(RunDir(run_dir), 1)
        self.assertEqual(held, streamed)
        self.assertEqual(report.spill.count, 0)
        self.assertIn(b'"results": []\n}\n', streamed)

    def test_the_spill_leaves_no_file_in_the_run_directory(self) -> None:
        before = set(os.listdir(self.synthetic.root))
        _both(self.synthetic, 2)
        self.assertEqual(set(os.listdir(self.synthetic.root)), before)


if __name__ == "__main__":
    unittest.main()
