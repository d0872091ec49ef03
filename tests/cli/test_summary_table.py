"""The summary table at 80 and 60 columns: no number cut, datasets under their capability,
defect rows marked, no box drawing when piped; both benchmarks."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import unittest
from pathlib import Path

from tests.cli_helpers import ROOT, SAMPLE, run_cli

VTB_SAMPLE = ROOT / "sample_data" / "vistoolbench"
BOX = re.compile("[\u2500-\u257f]")


def pct(value: float) -> str:
    return f"{100 * value:.1f}"


def cells(line: str) -> list[str]:
    """A table line's cells, without the [low, high] intervals."""
    return re.sub(r" \[\d+\.\d, \d+\.\d\]", "", line).split()


class SummaryTableTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.runs = {}
        for name, target, sample in (("dat", "all", SAMPLE), ("vtb", "vistoolbench", VTB_SAMPLE)):
            run = cls.tmp / name
            assert (
                run_cli("export-tasks", target, "--source", str(sample), "-d", str(run)).exit_code
                == 0
            )
            shutil.copy(sample / "responses.jsonl", run / "responses.jsonl")
            shutil.copy(sample / "judge_responses.jsonl", run / "judge_responses.jsonl")
            cls.runs[name] = run

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp)

    def table(self, name: str, columns: int) -> tuple[list[str], dict]:
        run = self.runs[name]
        result = run_cli("score", "-d", str(run), "--allow-missing", env={"COLUMNS": str(columns)})
        if "--allow-missing" in result.stderr and result.exit_code == 2:  # before coverage checks
            result = run_cli("score", "-d", str(run), env={"COLUMNS": str(columns)})
        report = json.loads((run / "report.json").read_text(encoding="utf-8"))
        return result.stdout.splitlines(), report

    def test_datbench_numbers_are_never_cut(self) -> None:
        for columns in (80, 60):
            with self.subTest(columns=columns):
                lines, report = self.table("dat", columns)
                for line in lines:
                    self.assertLessEqual(len(line), columns, line)
                    self.assertNotIn("\u2026", line)
                self.assertIsNone(BOX.search("\n".join(lines)))
                rows = {cells(line)[0]: cells(line)[1:] for line in lines[2:] if line.strip()}
                summary = report["summary"]
                self.assertEqual(
                    rows["overall"][:3],
                    [
                        f"{summary['expected_samples']}/{summary['expected_samples']}",
                        str(summary["total_samples"]),
                        pct(summary["overall_accuracy"]),
                    ],
                )
                for capability, value in summary["capability_accuracy"].items():
                    count = summary["capability_counts"][capability]
                    self.assertEqual(rows[capability][1:3], [str(count), pct(value)], capability)
                header = cells(lines[1])
                if "judge" in header:
                    at = header.index("judge") - 1
                    self.assertEqual(rows["overall"][at], pct(summary["judge_accuracy"]))

    def test_datasets_sit_under_their_capability_and_defects_are_marked(self) -> None:
        lines, report = self.table("dat", 80)
        capability_of = {
            r["metadata"]["dataset"]: r["metadata"]["capability"] for r in report["results"]
        }
        current = None
        for line in lines[2:]:
            if not line.strip() or line.startswith("overall"):
                continue
            if not line.startswith("  "):
                current = line.split()[0]
                continue
            dataset = line.split()[0]
            self.assertEqual(capability_of[dataset], current, line)
            marked = line.split()[1] == "*"
            self.assertEqual(marked, dataset in report["summary"]["known_reference_defects"], line)

    def test_vistoolbench_table_fits_too(self) -> None:
        for columns in (80, 60):
            with self.subTest(columns=columns):
                lines, report = self.table("vtb", columns)
                for line in lines:
                    self.assertLessEqual(len(line), columns, line)
                    self.assertNotIn("\u2026", line)
                overall = next(line for line in lines if line.startswith("overall"))
                summary = report["summary"]
                at = cells(next(line for line in lines if line.startswith("group"))).index("tasks")
                self.assertEqual(
                    cells(overall)[at : at + 3],
                    [str(summary["num_tasks"]), pct(summary["apr"]), pct(summary["ars"])],
                )


if __name__ == "__main__":
    unittest.main()
