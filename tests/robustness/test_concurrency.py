"""Concurrent writers of one file: two ``score`` runs on the same run directory at once both
finish, and ``report.json`` is then exactly one run's report (never a mix, never torn), with no
temporary file left behind."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import threading
import unittest
from pathlib import Path

from datbench_cli.files import jsonio
from tests.cli_helpers import ROOT
from tests.run_builders import (
    cli_command,
    cli_env,
    is_leftover,
    make_score_run,
    run_real_cli,
    tree_digest,
)

ROUNDS = 2


class ConcurrentScoreTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.run_dir = make_score_run(cls.tmp / "run", 600)  # long enough for the runs to overlap
        # A second judge file, so the two runs write different reports.
        cls.other_judges = cls.tmp / "all-true.jsonl"
        lines = (cls.run_dir / "judge_responses.jsonl").read_text().splitlines()
        judges = [{**json.loads(line), "raw_judge_output": "true"} for line in lines]
        cls.other_judges.write_text("".join(json.dumps(j) + "\n" for j in judges))

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def commands(self) -> list[list[str]]:
        base = ["score", "-d", str(self.run_dir), "-q", "--jobs", "1"]
        return [base, [*base, "--judge-responses", str(self.other_judges)]]

    def test_two_runs_at_once_leave_one_whole_report(self) -> None:
        expected = []
        for index, args in enumerate(self.commands()):
            out = self.tmp / f"alone-{index}.json"
            result = run_real_cli(*args, "-o", str(out))
            self.assertEqual(result.returncode, 0, result.stderr)
            expected.append(out.read_bytes())
        self.assertNotEqual(expected[0], expected[1])
        report = self.run_dir / "report.json"
        for number in range(ROUNDS):
            with self.subTest(round=number):
                report.unlink(missing_ok=True)
                processes = [
                    subprocess.Popen(
                        cli_command(*args), cwd=ROOT, env=cli_env(), stderr=subprocess.PIPE
                    )
                    for args in self.commands()
                ]
                for process in processes:
                    _, err = process.communicate(timeout=300)
                    self.assertEqual(process.returncode, 0, err.decode())
                self.assertIn(report.read_bytes(), expected)
                self.assertFalse([n for n in tree_digest(self.run_dir) if is_leftover(n)])


class AtomicWriterRaceTests(unittest.TestCase):
    """Many threads replacing one file: each temporary file is the writer's own."""

    def test_last_rename_wins_whole(self) -> None:
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp, True)
        target = tmp / "report.json"
        payloads = [bytes([65 + i]) * (200_000 + i) for i in range(8)]
        errors: list[BaseException] = []

        def writer(data: bytes) -> None:
            try:
                for _ in range(5):
                    jsonio.write_bytes_atomic(target, data)
            except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
                errors.append(exc)

        threads = [threading.Thread(target=writer, args=(p,)) for p in payloads]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual(errors, [])
        self.assertIn(target.read_bytes(), payloads)
        self.assertEqual(sorted(p.name for p in tmp.iterdir()), ["report.json"])
