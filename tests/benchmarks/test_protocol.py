"""The Benchmark protocol: one table, commands that never name a benchmark, options that
either work or are usage errors, and one kind of report."""

from __future__ import annotations

import ast
import shutil
import tempfile
import unittest
from pathlib import Path

from datbench_cli import DatBenchReport, StrictJudgeError, VisToolBenchReport
from datbench_cli.benchmarks import BENCHMARKS, command_options, for_targets, named
from datbench_cli.errors import InputError
from datbench_cli.files.rundir import RunDir
from tests.cli_helpers import ROOT, SAMPLE, run_cli

CLI = ROOT / "datbench_cli" / "cli"
VTB_SAMPLE = ROOT / "sample_data" / "vistoolbench"


class TableTests(unittest.TestCase):
    def test_every_benchmark_is_one_table_line(self) -> None:
        self.assertEqual(set(BENCHMARKS), {"datbench", "vistoolbench"})
        for name, benchmark in BENCHMARKS.items():
            self.assertEqual(benchmark.name, name)
            self.assertIs(named(name, RunDir(Path("run"))), benchmark)

    def test_targets_resolve_to_one_benchmark(self) -> None:
        bench, selection = for_targets(["all"])
        self.assertEqual(bench.name, "datbench")
        self.assertEqual(len(selection), 9)
        bench, selection = for_targets(["math", "chart", "math"])
        self.assertEqual(selection, ["math", "chart"])
        bench, _ = for_targets(["VisToolBench"])
        self.assertEqual(bench.name, "vistoolbench")
        for bad in (["math", "vistoolbench"], ["vistoolbench", "math"], ["maths"], []):
            with self.subTest(bad=bad), self.assertRaises(InputError):
                for_targets(bad)

    def test_an_unknown_manifest_benchmark_is_an_input_error(self) -> None:
        for bad in ("other", 3, None, ["datbench"]):
            with self.subTest(bad=bad), self.assertRaises(InputError) as caught:
                named(bad, RunDir(Path("run")))
            self.assertEqual(caught.exception.path, str(Path("run") / "datbench.json"))

    def test_options_specific_to_one_benchmark_are_declared(self) -> None:
        self.assertEqual(
            command_options("score"), {"strict", "sample_timeout", "jobs", "turncase", "profile"}
        )
        self.assertEqual(
            command_options("export-tasks"), {"turncase", "context", "first_image_only"}
        )


class CommandsNameNoBenchmarkTests(unittest.TestCase):
    def test_no_command_module_compares_or_imports_a_benchmark(self) -> None:
        names = {name for name in BENCHMARKS} | {"VISTOOLBENCH", "DATBENCH"}
        for path in sorted(CLI.glob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Compare):
                    for part in [node.left, *node.comparators]:
                        text = ast.unparse(part)
                        with self.subTest(file=path.name, compare=text):
                            self.assertFalse(any(name in text for name in names))
                if isinstance(node, ast.ImportFrom) and node.module:
                    with self.subTest(file=path.name, module=node.module):
                        self.assertFalse(
                            node.module.startswith(
                                ("datbench_cli.benchmarks.datbench", "datbench_cli.benchmarks.vis")
                            )
                        )


class OptionTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.dat = cls.tmp / "dat"
        cls.vtb = cls.tmp / "vtb"
        assert (
            run_cli("export-tasks", "all", "--source", str(SAMPLE), "-d", str(cls.dat)).exit_code
            == 0
        )
        assert (
            run_cli(
                "export-tasks", "vistoolbench", "--source", str(VTB_SAMPLE), "-d", str(cls.vtb)
            ).exit_code
            == 0
        )
        for run, sample in ((cls.dat, SAMPLE), (cls.vtb, VTB_SAMPLE)):
            shutil.copy(sample / "responses.jsonl", run / "responses.jsonl")
            shutil.copy(sample / "judge_responses.jsonl", run / "judge_responses.jsonl")

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp)

    def test_options_of_the_other_benchmark_are_usage_errors(self) -> None:
        cases = [
            (self.vtb, ["score", "--strict"], "--strict"),
            (self.vtb, ["score", "--jobs", "2"], "--jobs"),
            (self.vtb, ["score", "--sample-timeout", "5"], "--sample-timeout"),
            (self.dat, ["score", "--turncase", "single-turn"], "--turncase"),
        ]
        for run, args, flag in cases:
            with self.subTest(args=args):
                target = self.tmp / "refused-report.json"
                result = run_cli(*args, "-d", str(run), "-o", str(target))
                self.assertEqual(result.exit_code, 2, result.output)
                self.assertIn(flag, result.stderr)
                self.assertIn("applies only to", result.stderr)
                self.assertFalse(target.exists())

    def test_export_options_of_the_other_benchmark_are_usage_errors(self) -> None:
        out = self.tmp / "refused"
        for args in (["--turncase", "single-turn"], ["--context", "model"], ["--first-image-only"]):
            with self.subTest(args=args):
                result = run_cli(
                    "export-tasks", "math", "--source", str(SAMPLE), "-d", str(out), *args
                )
                self.assertEqual(result.exit_code, 2, result.output)
                self.assertIn(args[0], result.stderr)
                self.assertFalse(out.exists())

    def test_accepted_options_work_for_each_benchmark(self) -> None:
        result = run_cli("score", "-d", str(self.vtb), "--turncase", "single-turn", "--json")
        self.assertEqual(result.exit_code, 0, result.output)
        result = run_cli(
            "score", "-d", str(self.dat), "--jobs", "1", "--sample-timeout", "5", "--json"
        )
        self.assertEqual(result.exit_code, 0, result.output)


class ReportShapeTests(unittest.TestCase):
    def test_both_benchmarks_return_a_report_object(self) -> None:
        for cls in (DatBenchReport, VisToolBenchReport):
            with self.subTest(report=cls.__name__):
                report = cls(summary={"x": 1}, results=[])
                self.assertEqual(report.summary, {"x": 1})
                self.assertEqual(report.results, [])
                with tempfile.TemporaryDirectory() as tmp:
                    report.save(Path(tmp) / "r.json")
                    self.assertIn('"summary"', (Path(tmp) / "r.json").read_text())

    def test_strict_judging_raises_a_value_error_in_both(self) -> None:
        self.assertTrue(issubclass(StrictJudgeError, ValueError))


if __name__ == "__main__":
    unittest.main()


class ApiValidationTests(unittest.TestCase):
    def test_unknown_capability_is_a_value_error_listing_the_valid_ones(self) -> None:
        from datbench_cli import DatBenchEvaluator

        with self.assertRaises(ValueError) as caught:
            DatBenchEvaluator([], "maths")
        self.assertIn("chart", str(caught.exception))
        self.assertEqual(DatBenchEvaluator([], "math").capability, "math")
