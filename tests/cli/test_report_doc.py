"""docs/report.md names every key a report can hold (both benchmarks, both profiles)."""

from __future__ import annotations

import fnmatch
import json
import re
import shutil
import tempfile
import unittest
from pathlib import Path
from typing import Any

from tests.cli_helpers import ROOT, SAMPLE, run_cli

DOC = ROOT / "docs" / "report.md"
VTB_SAMPLE = ROOT / "sample_data" / "vistoolbench"

# Objects whose keys are data (capability, dataset, group names), not report keys.
MAPS = (
    "summary.capability_*",
    "summary.dataset_metrics",
    "summary.known_reference_defects",
    "summary.corrections",
    "summary.corrections.*",
    "summary.by_*",
    "summary.official_summary.*_results",
    "summary.dataset_metrics.*.accuracy-by-*",
    "summary.coverage.by_*",
    "summary.responses.by_*",
    "summary.uncertainty.capabilities",
    "summary.uncertainty.datasets",
    "summary.uncertainty.by_*",
    "summary.censoring.capabilities",
    "summary.censoring.datasets",
    "summary.censoring.by_*",
    "summary.item_statistics",
)
# Values documented with their parent key, not walked further.
LEAVES = (
    "results[].metadata.score_details.*",
    "summary.dataset_metrics.*.metrics_error",
    "provenance.libraries",
    "provenance.dataset.exported_with.libraries",
    "provenance.options",
    "provenance.inputs.*.models",
)


def _matches(path: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(path, pattern) for pattern in patterns)


def report_keys(report: dict[str, Any]) -> dict[str, str]:
    """Every key name of the report -> one path where it occurs."""
    found: dict[str, str] = {}

    def walk(value: Any, path: str) -> None:
        if isinstance(value, list):
            for item in value:
                walk(item, path + "[]")
            return
        if not isinstance(value, dict) or _matches(path, LEAVES):
            return
        is_map = _matches(path, MAPS)
        for key, child in value.items():
            child_path = f"{path}.{key}" if path else key
            if is_map:
                walk(child, f"{path}.*")
                continue
            found.setdefault(key, child_path)
            walk(child, child_path)

    walk(report, "")
    return found


class ReportDocTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.reports: dict[str, dict[str, Any]] = {}
        for name, target, sample, extra in (
            ("datbench", "all", SAMPLE, []),
            ("datbench-corrected", "all", SAMPLE, ["--profile", "corrected"]),
            ("vistoolbench", "vistoolbench", VTB_SAMPLE, []),
            ("vistoolbench-corrected", "vistoolbench", VTB_SAMPLE, ["--profile", "corrected"]),
        ):
            run = cls.tmp / name
            result = run_cli("export-tasks", target, "--source", str(sample), "-d", str(run), "-q")
            assert result.exit_code == 0, result.stderr
            shutil.copy(sample / "responses.jsonl", run / "responses.jsonl")
            run_cli("make-judge-tasks", "-d", str(run), "-q")
            shutil.copy(sample / "judge_responses.jsonl", run / "judge_responses.jsonl")
            run_cli("score", "-d", str(run), "-q", "--allow-missing", *extra)
            if not (run / "report.json").is_file():
                run_cli("score", "-d", str(run), "-q", *extra)
            cls.reports[name] = json.loads((run / "report.json").read_text(encoding="utf-8"))

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp)

    def test_every_report_key_is_documented(self) -> None:
        documented = set(re.findall(r"`([^`\s]+)`", DOC.read_text(encoding="utf-8")))
        for name, report in self.reports.items():
            for key, path in sorted(report_keys(report).items()):
                with self.subTest(report=name, key=key):
                    self.assertTrue(key in documented, f"{path} is not in docs/report.md")

    def test_the_walk_sees_nested_keys(self) -> None:
        keys = report_keys(self.reports["datbench"])
        for key in ("overall_accuracy", "accuracy__DocVQA-ANLS", "score_details", "judge_verdict"):
            self.assertIn(key, keys)
        self.assertNotIn("math", keys)  # a capability name is data, not a key
        vtb = report_keys(self.reports["vistoolbench"])
        for key in ("apr", "rubric_id", "apr_using_critical_flag", "overall_score"):
            self.assertIn(key, vtb)
        self.assertNotIn("STEM", vtb)


if __name__ == "__main__":
    unittest.main()
