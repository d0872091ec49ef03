"""VisualToolBench scores do not depend on the order of response and judge-response lines."""

from __future__ import annotations

import random
import shutil
import tempfile
import unittest
from pathlib import Path

from tests.cli_helpers import ROOT, run_cli

VTB_SAMPLE = ROOT / "sample_data" / "vistoolbench"


def shuffled(path: Path, target: Path, seed: int) -> None:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    random.Random(seed).shuffle(lines)
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")


class LineOrderTests(unittest.TestCase):
    def test_shuffled_files_give_the_same_report(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            run = Path(tmp) / "run"
            result = run_cli(
                "export-tasks", "vistoolbench", "--source", str(VTB_SAMPLE), "-d", str(run)
            )
            self.assertEqual(result.exit_code, 0, result.stderr)
            reports = []
            for seed in (None, 1, 2, 3):
                for name in ("responses.jsonl", "judge_responses.jsonl"):
                    if seed is None:
                        shutil.copy(VTB_SAMPLE / name, run / name)
                    else:
                        shuffled(VTB_SAMPLE / name, run / name, seed)
                target = run / f"report-{seed}.json"
                # The sample leaves two turns unanswered.
                result = run_cli(
                    "score", "--allow-missing", "-d", str(run), "-o", str(target), "-q"
                )
                self.assertEqual(result.exit_code, 0, result.stderr)
                reports.append(target.read_bytes())
            self.assertGreater(len(reports[0]), 1000)
            for other in reports[1:]:
                self.assertEqual(other, reports[0])


if __name__ == "__main__":
    unittest.main()
