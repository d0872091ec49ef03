"""The command line on a VisualToolBench run: export -> make-judge-tasks -> score, check-judge."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import unittest
from pathlib import Path
from typing import Any

from tests.cli_helpers import run_cli
from tests.vtb_support import SAMPLE_DIR, SAMPLE_JUDGE, SAMPLE_RESPONSES, read_jsonl, sample_rows

C, D = "finance/vtb-c-003", "vtb-d-sports-004"


class VisToolBenchCliTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.run_dir = cls.tmp / "run"
        cls.export = run_cli(
            "export-tasks", "vistoolbench", "--source", str(SAMPLE_DIR), "-d", str(cls.run_dir)
        )
        shutil.copy(SAMPLE_RESPONSES, cls.run_dir / "responses.jsonl")
        shutil.copy(SAMPLE_JUDGE, cls.run_dir / "judge_responses.jsonl")
        cls.judge_tasks = run_cli("make-judge-tasks", "-d", str(cls.run_dir))

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def cli(self, *args: str):
        return run_cli(*args, "-d", str(self.run_dir))

    def test_export(self) -> None:
        self.assertEqual(self.export.exit_code, 0, self.export.stderr)
        self.assertIn("exported 6 tasks", self.export.stderr)
        manifest = json.loads((self.run_dir / "datbench.json").read_text())
        self.assertEqual(manifest["benchmark"], "vistoolbench")
        self.assertEqual(manifest["source"], str(SAMPLE_DIR))
        self.assertEqual(len(read_jsonl(self.run_dir / "tasks.jsonl")), 6)

    def test_make_judge_tasks(self) -> None:
        self.assertEqual(self.judge_tasks.exit_code, 0, self.judge_tasks.stderr)
        self.assertIn("wrote 12 judge task(s)", self.judge_tasks.stderr)
        self.assertIn("1 of 6 task(s) have no answered turn", self.judge_tasks.stderr)
        lines = read_jsonl(self.run_dir / "judge_tasks.jsonl")
        self.assertEqual(len(lines), 12)
        self.assertEqual(lines[0]["id"], "vtb-a-medical-001::0::r1")

    def test_score_writes_the_report(self) -> None:
        # The sample leaves task F unanswered: coverage fails after the report is written.
        result = self.cli("score")
        self.assertEqual(result.exit_code, 1, result.stderr)
        self.assertIn("coverage check failed: 2 of 9", result.stderr)
        self.assertIn("multi-turn 4/6", result.stderr)
        report = json.loads((self.run_dir / "report.json").read_text())
        self.assertFalse(report["summary"]["checks_passed"])
        result = self.cli("score", "--allow-missing")
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertIn("APR", result.stdout)
        self.assertIn("1 unparsed, 1 missing, 0 missing_answer", result.stderr)
        report = json.loads((self.run_dir / "report.json").read_text())
        self.assertEqual(report["benchmark"], "vistoolbench")
        self.assertEqual(report["summary"]["apr"], 0.4)
        self.assertEqual(report["summary"]["ars"], 0.4790476190476191)
        self.assertEqual([r["ars"] for r in report["results"]][:2], [0.8, 0.6666666666666666])

    def test_score_json_with_turncase(self) -> None:
        out = self.tmp / "multi.json"
        result = self.cli(
            "score", "--turncase", "multi-turn", "--allow-missing", "--json", "-q", "-o", str(out)
        )
        self.assertEqual(result.exit_code, 0, result.stderr)
        summary = json.loads(result.stdout)
        self.assertEqual((summary["num_tasks"], summary["apr"]), (2, 0.0))
        self.assertEqual(summary["ars"], 0.5476190476190476)
        self.assertEqual(json.loads(out.read_text())["summary"], summary)
        self.assertEqual(result.stderr, "")

    def test_strict_judge_exits_1_with_the_failed_check_in_the_report(self) -> None:
        out = self.tmp / "strict.json"
        result = self.cli("score", "--strict-judge", "--allow-missing", "-o", str(out))
        self.assertEqual(result.exit_code, 1)
        self.assertIn("1 unparsed, 1 missing", result.stderr)
        self.assertIn(f"{C}::0::r1", result.stderr)
        self.assertIn(f"{D}::0::r1", result.stderr)
        self.assertNotIn("Traceback", result.stderr)
        checks = json.loads(out.read_text())["summary"]["checks"]
        self.assertEqual(
            [(c["name"], c["passed"]) for c in checks],
            [("coverage", True), ("strict_judge", False)],
        )

    def test_fail_under_gates_on_apr(self) -> None:
        out = self.tmp / "gate.json"
        result = self.cli("score", "--allow-missing", "--fail-under", "0.5", "-q", "-o", str(out))
        self.assertEqual(result.exit_code, 1)
        self.assertIn("APR 0.4000 is below 0.5", result.stderr)
        self.assertTrue(out.exists())
        result = self.cli("score", "--allow-missing", "--fail-under", "0.4", "-q", "-o", str(out))
        self.assertEqual(result.exit_code, 0, result.stderr)

    def test_check_judge(self) -> None:
        result = self.cli("check-judge")
        self.assertEqual(result.exit_code, 1)
        self.assertEqual(
            result.stdout.strip(),
            "12 judge tasks: 7 met, 3 not_met, 1 unparsed, 1 missing, 0 stale, 0 errored, 0 refused; "
            "0 missing_answer (rubrics of unanswered turns, no judge task); "
            "0 judge line(s) for no judge task (0 for unanswered turns)",
        )
        self.assertIn(f"{C}::0::r1", result.stderr)
        self.assertIn(f"{D}::0::r1", result.stderr)
        judge = read_jsonl(self.run_dir / "judge_responses.jsonl")
        judge = [j for j in judge if j.get("id") != f"{C}::0::r1"]
        judge += [
            {"id": f"{C}::0::r1", "raw_judge_output": "Met"},
            {"id": f"{D}::0::r1", "raw_judge_output": "Not Met"},
            judge[0],  # the same verdict again
        ]
        clean = self.tmp / "clean.jsonl"
        clean.write_text("".join(json.dumps(j) + "\n" for j in judge))
        result = self.cli("check-judge", str(clean))
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertTrue(result.stdout.startswith("12 judge tasks: 8 met, 4 not_met, 0 unparsed"))
        # The first line is replaced by its copy: said, as score says it.
        self.assertIn(
            "warning: 1 judge line(s) were replaced by a later line for the same judge task",
            result.stderr,
        )

    def test_turncase_is_rejected_for_bad_values(self) -> None:
        result = self.cli("score", "--turncase", "three-turn")
        self.assertEqual(result.exit_code, 2)
        self.assertIn("turncase must be one of", result.stderr)


class ExportOptionTests(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def test_vistoolbench_options(self) -> None:
        run_dir = self.tmp / "run"
        result = run_cli(
            "export-tasks",
            "vistoolbench",
            "--source",
            str(SAMPLE_DIR),
            "--turncase",
            "multi-turn",
            "--context",
            "model",
            "--first-image-only",
            "--limit",
            "1",
            "-d",
            str(run_dir),
        )
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertIn("not comparable", result.stderr)
        manifest = json.loads((run_dir / "datbench.json").read_text())
        self.assertEqual(
            manifest["options"],
            {"context": "model", "first_image_only": True, "limit": 1, "turncase": "multi-turn"},
        )
        tasks = read_jsonl(run_dir / "tasks.jsonl")
        self.assertEqual([t["id"] for t in tasks], ["vtb-b-maths-002"])
        self.assertEqual(tasks[0]["context_policy"], "model_history")

    def test_a_bad_option_is_refused_before_any_loading(self) -> None:
        # The error used to follow a "loading VisualToolBench from ..." line.
        result = run_cli(
            "export-tasks", "vistoolbench", "--source", str(SAMPLE_DIR),
            "--turncase", "bogus", "-d", str(self.tmp / "run"),
        )  # fmt: skip
        self.assertEqual(result.exit_code, 2)
        self.assertEqual(
            result.stderr, "error: turncase must be one of single-turn, multi-turn, not 'bogus'\n"
        )
        self.assertFalse((self.tmp / "run").exists())

    def export_two_files(self, second_table: Any) -> tuple[Any, Path]:
        """Export the sample data split in two files (no card: load_dataset reads
        data/*.parquet), the second written from ``second_table(rows)``."""
        import pyarrow.parquet as pq

        data = self.tmp / "two-files" / "data"
        data.mkdir(parents=True)
        table = pq.read_table(SAMPLE_DIR / "test.parquet")
        pq.write_table(table.slice(0, 3), data / "test-00000-of-00002.parquet")
        second = data / "test-00001-of-00002.parquet"
        pq.write_table(second_table(table.slice(3)), second)
        return lambda: run_cli(
            "export-tasks", "vistoolbench", "--source", str(data.parent),
            "-d", str(self.tmp / "run"), "-q",
        ), second  # fmt: skip

    def test_a_second_data_file_without_a_required_column_is_named(self) -> None:
        # datasets reads a column missing from one file of several as nulls.
        export, second = self.export_two_files(lambda table: table.drop(["turn_prompts"]))
        result = export()
        self.assertEqual(result.exit_code, 2)
        # The columns it has tell another benchmark's file at a glance.
        self.assertRegex(
            result.stderr,
            rf"^error: {re.escape(str(second))}: a data file lacks the column\(s\) turn_prompts "
            r"\(its columns: eval_focus, id, images, .*\)\n$",
        )

    def test_a_truncated_second_data_file_is_named(self) -> None:
        # It was "cannot read the dataset: a data file is corrupt or truncated (...)", naming
        # no file.
        export, second = self.export_two_files(lambda table: table)
        second.write_bytes(second.read_bytes()[:300])
        result = export()
        self.assertEqual(result.exit_code, 2)
        self.assertEqual(len(result.stderr.splitlines()), 1, result.stderr)
        self.assertIn(f"error: {second}: a data file is corrupt or truncated", result.stderr)
        self.assertFalse((self.tmp / "run").exists())

    def test_vistoolbench_options_refused_for_datbench(self) -> None:
        for option in (
            ["--turncase", "single-turn"],
            ["--context", "golden"],
            ["--first-image-only"],
        ):
            with self.subTest(option=option):
                result = run_cli("export-tasks", "math", *option, "-d", str(self.tmp / "x"))
                self.assertEqual(result.exit_code, 2)
                self.assertIn("applies only to vistoolbench", result.stderr)

    def test_bad_rubric_is_exit_2_with_one_sentence(self) -> None:
        from tests.vtb_support import generator

        rows = sample_rows()
        rows[1]["rubrics_by_turn"][1] = json.dumps({"r3": {"description": "x", "weight": None}})
        generator().write_dataset(self.tmp / "ds", rows)
        result = run_cli(
            "export-tasks",
            "vistoolbench",
            "--source",
            str(self.tmp / "ds"),
            "-d",
            str(self.tmp / "r"),
        )
        self.assertEqual(result.exit_code, 2)
        self.assertIn("task 'vtb-b-maths-002', turn 1, rubric 'r3': weight", result.stderr)
        self.assertNotIn("Traceback", result.stderr)
        self.assertFalse((self.tmp / "r" / "datbench.json").exists())

    def test_help_tells_runners_the_official_setup(self) -> None:
        # export-tasks names its own options and the command that runs the official loop;
        # the loop's setup is told where it runs, in agent's help.
        result = run_cli("export-tasks", "--help")
        self.assertEqual(result.exit_code, 0)
        for text in ("--first-image-only", "--context", "datbench agent"):
            self.assertIn(text, result.stdout)
        agent = " ".join(run_cli("agent", "--help").stdout.split())
        for text in ("tool-calling", "JPEG q85", "20 tool-calling rounds"):
            self.assertIn(text, agent)


if __name__ == "__main__":
    unittest.main()
