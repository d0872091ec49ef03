"""The command line end to end on the bundled sample data, and its handling of bad input."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from tests.cli_helpers import (
    ROOT,
    SAMPLE,
    make_dataset,
    make_row,
    run_cli,
    sample_capabilities,
    tree_bytes,
)


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


class PipelineTests(unittest.TestCase):
    """export-tasks -> make-judge-tasks -> score -> check-judge on sample_data/datbench."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.run_dir = cls.tmp / "run"
        cls.capabilities = sample_capabilities()
        cls.export = run_cli(
            "export-tasks", *cls.capabilities, "--source", str(SAMPLE), "-d", str(cls.run_dir)
        )

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_export_writes_the_run_directory(self) -> None:
        self.assertEqual(self.export.exit_code, 0, self.export.stderr)
        for name in ("datbench.json", "tasks.jsonl", "references.jsonl"):
            self.assertTrue((self.run_dir / name).is_file(), name)
        tasks = lines(self.run_dir / "tasks.jsonl")
        references = lines(self.run_dir / "references.jsonl")
        self.assertEqual([t["id"] for t in tasks], [r["id"] for r in references])
        for task in tasks:
            self.assertEqual(sorted(task), ["capability", "eval_mode", "id", "image", "question"])
        manifest = json.loads((self.run_dir / "datbench.json").read_text())
        self.assertEqual(manifest["benchmark"], "datbench")
        self.assertEqual(manifest["capabilities"], self.capabilities)
        self.assertEqual(manifest["counts"]["samples"], len(tasks))

    def test_images_are_the_datasets_bytes(self) -> None:
        import pyarrow.parquet as pq  # here, not at collection (pyarrow takes a while to import)

        tasks = {t["id"]: t for t in lines(self.run_dir / "tasks.jsonl")}
        compared = 0
        for capability in self.capabilities:
            table = pq.read_table(SAMPLE / capability / "test-00000-of-00001.parquet")
            for sample_id, image in zip(
                table.column("id").to_pylist(), table.column("image").to_pylist(), strict=True
            ):
                written = (self.run_dir / tasks[sample_id]["image"]).read_bytes()
                self.assertEqual(written, image["bytes"])
                compared += 1
        self.assertEqual(compared, len(tasks))

    def test_reexport_is_byte_identical(self) -> None:
        other = self.tmp / "again"
        result = run_cli(
            "export-tasks", *self.capabilities, "--source", str(SAMPLE), "-d", str(other)
        )
        self.assertEqual(result.exit_code, 0, result.stderr)
        first = {
            k: v
            for k, v in tree_bytes(self.run_dir).items()
            if k.startswith(("images", "tasks", "references", "datbench"))
        }
        self.assertEqual(tree_bytes(other), first)

    def test_judge_tasks_then_score(self) -> None:
        work = self.tmp / "score-run"
        shutil.copytree(self.run_dir, work)
        shutil.copy(SAMPLE / "responses.jsonl", work / "responses.jsonl")
        result = run_cli("make-judge-tasks", "-d", str(work))
        self.assertEqual(result.exit_code, 0, result.stderr)
        judge_tasks = lines(work / "judge_tasks.jsonl")
        references = {r["id"]: r for r in lines(work / "references.jsonl")}
        self.assertTrue(judge_tasks)
        for task in judge_tasks:
            self.assertEqual(
                sorted(task),
                [
                    "all_answers",
                    "ground_truth",
                    "id",
                    "judge_prompt",
                    "question",
                    "response_digest",
                    "vlm_response",
                ],
            )
            self.assertEqual(references[task["id"]]["eval_mode"], "judge")
            self.assertNotIn("Respond with exactly two lines:", task["judge_prompt"])

        shutil.copy(SAMPLE / "judge_responses.jsonl", work / "judge_responses.jsonl")
        result = run_cli("score", "-d", str(work))
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertIn("overall", result.stdout)
        report = json.loads((work / "report.json").read_text())
        self.assertEqual(report["summary"]["total_samples"], len(references))
        self.assertGreater(report["summary"]["judge_samples"], 0)

        result = run_cli("score", "-d", str(work), "--json")
        self.assertEqual(result.exit_code, 0, result.stderr)
        summary = json.loads(result.stdout)
        self.assertEqual(summary, report["summary"])

        result = run_cli(
            "score", "-d", str(work), "--strict-judge", "-o", str(work / "strict.json")
        )
        self.assertEqual(
            result.exit_code, 1
        )  # the sample judge file has a missing and an unparsed verdict
        self.assertIn("db_math_judge_", result.stderr)
        # The report is written with the failed check recorded (never an older run's numbers).
        strict = json.loads((work / "strict.json").read_text())["summary"]
        self.assertFalse(strict["checks_passed"])
        self.assertEqual(
            [(c["name"], c["passed"]) for c in strict["checks"]],
            [("coverage", True), ("strict_judge", False)],
        )

        (work / "report.json").unlink()
        result = run_cli("score", "-d", str(work), "--fail-under", "0.99", "-q")
        self.assertEqual(result.exit_code, 1)
        self.assertTrue((work / "report.json").is_file())
        self.assertEqual(result.stdout, "")

        result = run_cli("check-judge", "-d", str(work))
        self.assertEqual(result.exit_code, 1)
        self.assertIn("unparsed", result.stdout)
        self.assertNotIn("more than once", result.stderr)
        # A later line of an id replaces its verdict: said, as score says it.
        judge = work / "judge_responses.jsonl"
        first = judge.read_bytes().splitlines(keepends=True)[0]
        judge.write_bytes(judge.read_bytes() + first)
        result = run_cli("check-judge", "-d", str(work))
        self.assertIn("warning: 1 judge response id(s) occur more than once", result.stderr)

    def test_score_accepts_openai_batch_output_lines(self) -> None:
        work = self.tmp / "batch-run"
        shutil.copytree(self.run_dir, work)
        batch = []
        for number, item in enumerate(lines(SAMPLE / "responses.jsonl")):
            if number == 0:
                batch.append({"custom_id": item["id"], "response": None, "error": "model crashed"})
                continue
            batch.append(
                {
                    "id": f"batch_req_{number}",
                    "custom_id": item["id"],
                    "response": {
                        "status_code": 200,
                        "body": {
                            "choices": [
                                {
                                    "message": {"content": item["raw_output"] or ""},
                                    "finish_reason": "stop",
                                }
                            ]
                        },
                    },
                    "error": None,
                }
            )
        (work / "responses.jsonl").write_text("\n".join(json.dumps(b) for b in batch) + "\n")
        result = run_cli("score", "-d", str(work), "--json")
        # The errored line leaves its sample unanswered: coverage fails unless allowed.
        self.assertEqual(result.exit_code, 1, result.stderr)
        self.assertIn("coverage check failed: 1 of 152", result.stderr)
        result = run_cli("score", "-d", str(work), "--json", "--allow-missing")
        self.assertEqual(result.exit_code, 0, result.stderr)
        summary = json.loads(result.stdout)
        self.assertEqual(summary["errored_responses"], 1)
        self.assertEqual(summary["response_statuses"]["errored"], 1)
        self.assertEqual(summary["total_samples"], len(batch) - 1)
        # Said once: in the JSON (and, without --json, the note under the table).
        self.assertNotIn("reported an error", result.stderr)
        table = run_cli("score", "-d", str(work), "--allow-missing")
        self.assertEqual(table.stderr.count("1 errored"), 1, table.stderr)
        self.assertNotIn("reported an error", table.stderr)


class BadInputTests(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.source = make_dataset(
            self.tmp, {"math": [make_row("m1"), make_row("m2", answer="no")]}
        )
        self.run_dir = self.tmp / "run"
        result = run_cli(
            "export-tasks", "math", "--source", str(self.source), "-d", str(self.run_dir)
        )
        self.assertEqual(result.exit_code, 0, result.stderr)

    def tearDown(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def assert_one_sentence(self, result, code: int, *fragments: str) -> None:
        self.assertEqual(result.exit_code, code, result.stderr)
        self.assertNotIn("Traceback", result.stderr)
        errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
        self.assertEqual(len(errors), 1, result.stderr)
        for fragment in fragments:
            self.assertIn(fragment, result.stderr)

    def test_malformed_jsonl_line_names_file_and_line(self) -> None:
        responses = self.run_dir / "responses.jsonl"
        responses.write_text('{"id": "m1", "raw_output": "yes"}\n\n{"id": "m2", "raw_output": \n')
        (self.run_dir / "report.json").write_text("previous report")
        result = run_cli("score", "-d", str(self.run_dir))
        self.assert_one_sentence(result, 2, f"{responses}:3:", "malformed JSON")
        self.assertEqual((self.run_dir / "report.json").read_text(), "previous report")

    def test_wrong_field_type_is_bad_input(self) -> None:
        (self.run_dir / "responses.jsonl").write_text('{"id": "m1", "raw_output": 5}\n')
        self.assert_one_sentence(run_cli("score", "-d", str(self.run_dir)), 2, ":1:", "raw_output")

    def test_unknown_capability_lists_valid_names(self) -> None:
        result = run_cli(
            "export-tasks", "maths", "--source", str(self.source), "-d", str(self.tmp / "x")
        )
        self.assert_one_sentence(result, 2, "unknown target 'maths'", "chart, counting, document")
        self.assertFalse((self.tmp / "x").exists())

    def test_missing_run_directory(self) -> None:
        result = run_cli("score", "-d", str(self.tmp / "nowhere"))
        self.assert_one_sentence(result, 2, "does not exist")

    def test_directory_without_manifest(self) -> None:
        (self.tmp / "empty").mkdir()
        result = run_cli("make-judge-tasks", "-d", str(self.tmp / "empty"))
        self.assert_one_sentence(result, 2, "datbench.json")

    def test_edited_references_are_detected(self) -> None:
        path = self.run_dir / "references.jsonl"
        path.write_text(path.read_text().replace('"yes"', '"YES"'))
        (self.run_dir / "responses.jsonl").write_text('{"id": "m1", "raw_output": "yes"}\n')
        self.assert_one_sentence(
            run_cli("score", "-d", str(self.run_dir)), 2, "does not match the manifest"
        )

    def test_duplicate_and_unknown_ids_are_reported(self) -> None:
        (self.run_dir / "responses.jsonl").write_text(
            '{"id": "m1", "raw_output": "no"}\n{"id": "m1", "raw_output": "yes"}\n{"id": "zz", "raw_output": "x"}\n'
        )
        result = run_cli("score", "-d", str(self.run_dir), "--json", "--allow-missing")
        self.assertEqual(result.exit_code, 0, result.stderr)
        summary = json.loads(result.stdout)
        self.assertEqual(summary["duplicate_response_ids"], 1)
        self.assertEqual(summary["unknown_response_ids"], 1)
        self.assertEqual(summary["missing_responses"], 1)
        self.assertEqual(summary["overall_accuracy"], 1.0)
        self.assertIn("more than once", result.stderr)
        self.assertIn("match no sample", result.stderr)

    def test_ids_that_would_escape_the_images_folder(self) -> None:
        for bad_id in ("../x", "/abs", "a/b", "..", ".hidden", "CON"):
            with self.subTest(bad_id=bad_id):
                root = self.tmp / f"bad{abs(hash(bad_id))}"
                source = make_dataset(root, {"math": [make_row("ok1"), make_row(bad_id)]})
                target = root / "run"
                result = run_cli("export-tasks", "math", "--source", str(source), "-d", str(target))
                self.assert_one_sentence(result, 2, repr(bad_id), "cannot be used as a file name")
                self.assertFalse(target.exists() and any(target.rglob("*")), "nothing is written")
                self.assertFalse((root / "x").exists())

    def test_failed_reexport_leaves_the_previous_export_intact(self) -> None:
        before = tree_bytes(self.run_dir)
        bad = make_dataset(self.tmp / "bad", {"math": [make_row("new1"), make_row("../escape")]})
        result = run_cli("export-tasks", "math", "--source", str(bad), "-d", str(self.run_dir))
        self.assert_one_sentence(result, 2, "'../escape'")
        self.assertEqual(tree_bytes(self.run_dir), before)
        self.assertEqual(
            sorted(p.name for p in self.run_dir.iterdir()),
            sorted(["datbench.json", "images", "references.jsonl", "tasks.jsonl"]),
        )

    def test_reexport_replaces_images(self) -> None:
        other = make_dataset(self.tmp / "other", {"math": [make_row("z1")]})
        result = run_cli("export-tasks", "math", "--source", str(other), "-d", str(self.run_dir))
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(sorted(p.name for p in (self.run_dir / "images").iterdir()), ["z1.png"])

    def test_duplicate_ids_in_the_dataset(self) -> None:
        source = make_dataset(self.tmp / "dup", {"math": [make_row("same"), make_row("same")]})
        result = run_cli(
            "export-tasks", "math", "--source", str(source), "-d", str(self.tmp / "dup-run")
        )
        self.assert_one_sentence(result, 2, "duplicate sample id 'same'")

    def test_unreachable_hub_fails_fast_with_a_hint(self) -> None:
        env = {"HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_OFFLINE": "", "DATBENCH_SOURCE": ""}
        started = time.monotonic()
        result = run_cli("export-tasks", "math", "-d", str(self.tmp / "hub"), env=env)
        self.assertLess(time.monotonic() - started, 20)
        self.assert_one_sentence(result, 2, "DatologyAI/DatBench", "--source DIR")

    def test_hub_offline_mode_uses_only_the_cache(self) -> None:
        # A subprocess: the hub client reads HF_HUB_OFFLINE when it is first imported.
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1", "DATBENCH_SOURCE": ""}
        env["HF_HOME"] = str(self.tmp / "empty-hf-home")
        started = time.monotonic()
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "datbench_cli",
                "export-tasks",
                "math",
                "-d",
                str(self.tmp / "o"),
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=120,
            check=False,
        )
        self.assertLess(time.monotonic() - started, 60)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("not in the local cache and HF_HUB_OFFLINE is set", result.stderr)
        self.assertNotIn("Traceback", result.stderr)

    def test_source_from_environment(self) -> None:
        target = self.tmp / "from-env"
        result = run_cli(
            "export-tasks", "math", "-d", str(target), env={"DATBENCH_SOURCE": str(self.source)}
        )
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(len(lines(target / "tasks.jsonl")), 2)

    def test_limit(self) -> None:
        target = self.tmp / "limited"
        result = run_cli(
            "export-tasks", "math", "--source", str(self.source), "--limit", "1", "-d", str(target)
        )
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual([t["id"] for t in lines(target / "tasks.jsonl")], ["m1"])


class EntryPointTests(unittest.TestCase):
    def test_python_dash_m_is_the_same_program(self) -> None:
        result = subprocess.run(
            [sys.executable, "-m", "datbench_cli", "--version"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "NO_COLOR": "1"},
            check=False,
        )
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertRegex(result.stdout, r"^datbench \d+\.\d+\.\d+")

    def test_a_reader_gone_ends_the_command_quietly_with_141(self) -> None:
        # `datbench leaderboard A B | head -1`: no "error: file system error: Broken pipe".
        from tests.leaderboard.support import datbench_report

        folder = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, folder, True)
        reports = [str(datbench_report(folder / f"{n}.json", [True, False] * 30)) for n in "ab"]
        process = subprocess.Popen(
            [sys.executable, "-m", "datbench_cli", "leaderboard", *reports],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ROOT,
        )
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()  # the reader is gone before anything is written
        stderr = process.stderr.read().decode()
        self.assertEqual(process.wait(timeout=60), 141, stderr)
        self.assertNotIn("error", stderr)
        self.assertNotIn("Exception ignored", stderr)

    def test_usage_error_exits_2(self) -> None:
        result = run_cli("score", "--no-such-option")
        self.assertEqual(result.exit_code, 2)


if __name__ == "__main__":
    unittest.main()
