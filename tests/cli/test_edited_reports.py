"""A DatBench report edited by hand (or by a script) with a per-sample score outside [0, 1] is
refused by compare and leaderboard, naming the report and the result, never averaged into an
accuracy of millions of percent. (A VisualToolBench ARS has no such bound: rubric weights are
not range-checked (the VisualToolBench spec, 4.2), so a negative weight can take a task's ARS outside it.)"""

from __future__ import annotations

import json
import shutil
import tempfile
import unittest
from pathlib import Path
from typing import Any

from tests.cli_helpers import SAMPLE, run_cli


def scored_run(tmp: Path, name: str, target: str, sample: Path, *score_args: str) -> Path:
    run = tmp / name
    result = run_cli("export-tasks", target, "--source", str(sample), "-d", str(run), "-q")
    assert result.exit_code == 0, result.stderr
    for file in ("responses.jsonl", "judge_responses.jsonl"):
        shutil.copy(sample / file, run / file)
    result = run_cli("score", "-d", str(run), "-q", "--allow-missing", *score_args)
    assert result.exit_code == 0, result.stderr
    return run / "report.json"


class OutOfRangeScoreTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.reports = {"dat": (scored_run(cls.tmp, "dat", "math", SAMPLE), "score")}

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp)

    def edited(self, name: str, value: Any) -> tuple[Path, Path]:
        report, key = self.reports[name]
        data = json.loads(report.read_text(encoding="utf-8"))
        data["results"][0][key] = value
        edited = self.tmp / f"{name}-edited.json"
        edited.write_text(json.dumps(data, indent=2), encoding="utf-8")
        return report, edited

    def test_compare_and_leaderboard_refuse_a_score_outside_0_1(self) -> None:
        for name in self.reports:
            for value in (7.5, -1, 2**70):
                report, edited = self.edited(name, value)
                page = self.tmp / "page.html"
                for args in (
                    ("compare", str(report), str(edited), "--resamples", "20"),
                    ("leaderboard", f"a={report}", f"b={edited}"),
                    ("view", str(edited), "-o", str(page)),  # drew 750% or "Infinity%"
                ):
                    with self.subTest(benchmark=name, value=value, command=args[0]):
                        result = run_cli(*args)
                        self.assertEqual(result.exit_code, 2, result.stderr)
                        errors = [x for x in result.stderr.splitlines() if x.startswith("error:")]
                        self.assertEqual(len(errors), 1, result.stderr)
                        self.assertIn(str(edited), errors[0])
                        self.assertIn("results[0]", errors[0])

    def test_a_report_whose_results_are_not_those_its_summary_counts_is_refused(self) -> None:
        # results [] under a summary of 152 samples: view drew the headline over no sample and
        # the leaderboard ranked it, "152 of 152 answered" over n 0.
        report, _ = self.reports["dat"]
        data = json.loads(report.read_text(encoding="utf-8"))
        for kept in ([], data["results"][1:]):
            cut = self.tmp / "cut.json"
            cut.write_text(json.dumps({**data, "results": kept}), encoding="utf-8")
            for args in (
                ("compare", str(report), str(cut), "--resamples", "20"),
                ("leaderboard", f"a={report}", f"b={cut}"),
                ("view", str(cut), "-o", str(self.tmp / "page.html")),
            ):
                with self.subTest(kept=len(kept), command=args[0]):
                    result = run_cli(*args)
                    self.assertEqual(result.exit_code, 2, result.stderr)
                    self.assertTrue(result.stderr.startswith(f"error: {cut}: the summary counts"))
                    self.assertIn("a cut or edited report", result.stderr)

    def test_a_summary_count_that_is_no_count_is_refused(self) -> None:
        # "total_samples": "152", 152.5 or 10**30 (read as the float 1e+30) skipped the check
        # that the summary counts the results the report holds: every command read it.
        report, _ = self.reports["dat"]
        data = json.loads(report.read_text(encoding="utf-8"))
        for said in ("152", 152.5, 10**30, [1]):
            edited = self.tmp / "count.json"
            summary = {**data["summary"], "total_samples": said}
            edited.write_text(json.dumps({**data, "summary": summary}, indent=2), "utf-8")
            for args in (
                ("compare", str(report), str(edited), "--resamples", "20"),
                ("leaderboard", f"a={report}", f"b={edited}"),
                ("view", str(edited), "-o", str(self.tmp / "page.html")),
            ):
                with self.subTest(said=said, command=args[0]):
                    result = run_cli(*args)
                    self.assertEqual(result.exit_code, 2, result.stderr)
                    self.assertEqual(len(result.stderr.splitlines()), 1, result.stderr)
                    self.assertTrue(
                        result.stderr.startswith(f'error: {edited}: the summary\'s "total_samples"')
                    )
                    self.assertIn("not a count of results", result.stderr)

    def test_view_refuses_a_summary_that_is_not_its_results_mean(self) -> None:
        # overall_accuracy edited to 0.99 over results averaging 0.5: the page drew 99.0%
        # where compare and leaderboard, which average the results, say 50.0%.
        report, _ = self.reports["dat"]
        data = json.loads(report.read_text(encoding="utf-8"))
        edited = self.tmp / "lies.json"
        summary = {**data["summary"], "overall_accuracy": 0.99}
        edited.write_text(json.dumps({**data, "summary": summary}, indent=2), "utf-8")
        page = self.tmp / "page.html"
        result = run_cli("view", str(edited), "-o", str(page))
        self.assertEqual(result.exit_code, 2, result.stderr)
        self.assertEqual(len(result.stderr.splitlines()), 1, result.stderr)
        self.assertTrue(
            result.stderr.startswith(
                f"error: {edited}: the summary's \"overall_accuracy\" is 0.99 but its results' "
                "mean is 0.5"
            ),
            result.stderr,
        )
        self.assertFalse(page.exists())
        self.assertEqual(run_cli("view", str(report), "-o", str(page)).exit_code, 0)

    def test_scores_at_the_bounds_are_read(self) -> None:
        for name in self.reports:
            for value in (0, 1.0):
                report, edited = self.edited(name, value)
                with self.subTest(benchmark=name, value=value):
                    result = run_cli("compare", str(report), str(edited), "--resamples", "20")
                    self.assertEqual(result.exit_code, 0, result.stderr)


if __name__ == "__main__":
    unittest.main()
