"""A full disk and a read-only directory: every stage stops with one sentence and exit 2, and
leaves the run directory as it was (a failed export: the previous export byte for byte), with no
temporary file behind; given room again, the same command finishes the job."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from typing import Any

from tests.chat_server import ChatServer
from tests.cli_helpers import ROOT, SAMPLE, run_cli, sample_capabilities, tree_bytes
from tests.fault_injection import FullDisk, read_only_file_system, temp_leftovers

NO_SPACE = os.strerror(errno.ENOSPC)
VTB_SAMPLE = ROOT / "sample_data" / "vistoolbench"
READ_ONLY = os.strerror(errno.EROFS)


def export_args(run_dir: Path, *extra: str) -> list[str]:
    return [
        "export-tasks",
        *sample_capabilities(),
        "--source",
        str(SAMPLE),
        "-d",
        str(run_dir),
        *extra,
    ]


def vtb_export_args(run_dir: Path) -> list[str]:
    return ["export-tasks", "vistoolbench", "--source", str(VTB_SAMPLE), "-d", str(run_dir)]


def assert_error_line(case: unittest.TestCase, stderr: str, reason: str) -> None:
    """``stderr`` ends with exactly one ``error:`` line, which gives ``reason``; no traceback."""
    lines = stderr.strip().splitlines()
    errors = [line for line in lines if line.startswith("error:")]
    case.assertEqual(errors, lines[-1:], stderr)
    case.assertIn(reason, errors[0])
    case.assertNotIn("internal error", stderr)
    case.assertNotIn("Traceback", stderr)


def budgets(total: int) -> list[int]:
    """Byte budgets that fail a command at the start, at every tenth of the way, and at the end."""
    return sorted({0, 1, *(total * k // 10 for k in range(1, 10)), total - 1})


class _Case(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def assert_one_sentence(self, result: Any, reason: str) -> None:
        """Exit 2 and, after any progress lines, one error line giving ``reason``."""
        self.assertEqual(result.exit_code, 2, result.stderr)
        assert_error_line(self, result.stderr, reason)

    def restore(self, run_dir: Path, tree: dict[str, bytes]) -> None:
        shutil.rmtree(run_dir, ignore_errors=True)
        for name, data in tree.items():
            (run_dir / name).parent.mkdir(parents=True, exist_ok=True)
            (run_dir / name).write_bytes(data)


class DiskFullTests(_Case):
    """Writes fail with ENOSPC after N bytes, for N from 0 to just short of what is needed."""

    def test_export(self) -> None:
        requests = ("--format", "openai", "--model", "m")
        clean_dir = self.tmp / "clean"
        with FullDisk().installed() as meter:
            self.assertEqual(run_cli(*export_args(clean_dir, *requests)).exit_code, 0)
        clean = tree_bytes(clean_dir)
        run_dir = self.tmp / "run"
        self.assertEqual(run_cli(*export_args(run_dir), "--limit", "1").exit_code, 0)
        old = tree_bytes(run_dir)
        args = export_args(run_dir, *requests)
        for budget in budgets(meter.written):
            with self.subTest(budget=budget):
                self.restore(run_dir, old)
                with FullDisk(budget).installed():
                    result = run_cli(*args)
                self.assert_one_sentence(result, NO_SPACE)
                self.assertEqual(temp_leftovers(run_dir), [], result.stderr)
                # Every byte is written before the export is committed: the previous export.
                self.assertEqual(tree_bytes(run_dir), old)
        rerun = run_cli(*args)
        self.assertEqual(rerun.exit_code, 0, rerun.stderr)
        self.assertEqual(tree_bytes(run_dir), clean)

    def test_vistoolbench_export(self) -> None:
        clean_dir = self.tmp / "clean"
        with FullDisk().installed() as meter:
            self.assertEqual(run_cli(*vtb_export_args(clean_dir)).exit_code, 0)
        clean = tree_bytes(clean_dir)
        run_dir = self.tmp / "run"
        self.assertEqual(run_cli(*vtb_export_args(run_dir), "--limit", "1").exit_code, 0)
        old = tree_bytes(run_dir)
        for budget in budgets(meter.written):
            with self.subTest(budget=budget):
                self.restore(run_dir, old)
                with FullDisk(budget).installed():
                    result = run_cli(*vtb_export_args(run_dir))
                self.assert_one_sentence(result, NO_SPACE)
                self.assertEqual(temp_leftovers(run_dir), [])
                self.assertEqual(tree_bytes(run_dir), old)
        self.assertEqual(run_cli(*vtb_export_args(run_dir)).exit_code, 0)
        self.assertEqual(tree_bytes(run_dir), clean)

    def _scored_run(self) -> Path:
        run_dir = self.tmp / "run"
        self.assertEqual(run_cli(*export_args(run_dir)).exit_code, 0)
        shutil.copy(SAMPLE / "responses.jsonl", run_dir / "responses.jsonl")
        shutil.copy(SAMPLE / "judge_responses.jsonl", run_dir / "judge_responses.jsonl")
        return run_dir

    def _check_stage(
        self, run_dir: Path, args: list[str], target: str, before: str | None = None
    ) -> None:
        """Run ``args`` once to learn its output, then fail it at every budget (``before``: a
        file the stage writes first, which the error may name instead)."""
        path = run_dir / target
        with FullDisk().installed() as meter:
            self.assertEqual(run_cli(*args).exit_code, 0)
        clean = path.read_bytes()
        old = b'{"an": "earlier file"}\n'
        for budget in budgets(meter.written):
            with self.subTest(target=target, budget=budget):
                path.write_bytes(old)
                with FullDisk(budget).installed():
                    result = run_cli(*args)
                self.assert_one_sentence(result, NO_SPACE)
                named = [str(run_dir / name) for name in (target, before) if name]
                self.assertTrue(any(name in result.stderr for name in named), result.stderr)
                self.assertEqual(path.read_bytes(), old)
                self.assertEqual(temp_leftovers(run_dir), [])
        self.assertEqual(run_cli(*args).exit_code, 0)
        self.assertEqual(path.read_bytes(), clean)

    def test_score(self) -> None:
        run_dir = self._scored_run()
        self._check_stage(run_dir, ["score", "-d", str(run_dir), "-q"], "report.json")

    def test_make_judge_tasks(self) -> None:
        run_dir = self._scored_run()
        self._check_stage(
            run_dir,
            ["make-judge-tasks", "-d", str(run_dir)],
            "judge_tasks.jsonl",
            before="judge_digests.json",
        )

    def test_send(self) -> None:
        run_dir = self.tmp / "run"
        export = run_cli(*export_args(run_dir), "--format", "openai", "--model", "m")
        self.assertEqual(export.exit_code, 0, export.stderr)
        # 24 requests prove what the whole export's would (a budget at every tenth of the way).
        parts = sorted((run_dir / "requests").glob("tasks.openai.*.jsonl"))
        lines = [line for part in parts for line in part.read_text().splitlines()][:24]
        for part in parts:
            part.unlink()
        (run_dir / "requests" / "tasks.openai.00001.jsonl").write_text(
            "".join(line + "\n" for line in lines)
        )
        requests = [str(run_dir / "requests" / "tasks.openai.00001.jsonl")]
        out = run_dir / "responses.jsonl"
        with ChatServer() as server:
            args = ["send", *requests, "--base-url", server.base_url, "--concurrency", "2"]
            with FullDisk().installed() as meter:
                self.assertEqual(run_cli(*args).exit_code, 0)
            total_ids = len(out.read_text().splitlines())
            for budget in budgets(meter.written):
                with self.subTest(budget=budget):
                    out.unlink()
                    with FullDisk(budget).installed():
                        result = run_cli(*args)
                    self.assert_one_sentence(result, NO_SPACE)
                    data = out.read_bytes()
                    # Only whole lines: the line that did not fit was taken back.
                    self.assertTrue(data == b"" or data.endswith(b"\n"))
                    for line in data.splitlines():
                        self.assertIsInstance(json.loads(line), dict)
                    resumed = run_cli(*args)
                    self.assertEqual(resumed.exit_code, 0, resumed.stderr)
                    ids = [json.loads(x)["custom_id"] for x in out.read_text().splitlines()]
                    self.assertEqual(len(ids), total_ids)
                    self.assertEqual(len(set(ids)), total_ids)


class ReadOnlyTests(_Case):
    """A run directory that cannot be written: one sentence, exit 2, nothing changed."""

    def test_every_writing_stage(self) -> None:
        run_dir = self.tmp / "run"
        self.assertEqual(
            run_cli(*export_args(run_dir), "--format", "openai", "--model", "m").exit_code, 0
        )
        shutil.copy(SAMPLE / "responses.jsonl", run_dir / "responses.jsonl")
        before = tree_bytes(run_dir)
        requests = sorted(str(p) for p in (run_dir / "requests").glob("*.jsonl"))
        commands = {
            "export-tasks": export_args(run_dir),
            "make-judge-tasks": ["make-judge-tasks", "-d", str(run_dir)],
            "score": ["score", "-d", str(run_dir)],
            "send": ["send", *requests, "--base-url", "http://127.0.0.1:9", "-o",
                     str(run_dir / "sent.jsonl")],
        }  # fmt: skip
        for name, args in commands.items():
            with self.subTest(command=name):
                with read_only_file_system(run_dir):
                    result = run_cli(*args)
                self.assert_one_sentence(result, READ_ONLY)
                self.assertEqual(tree_bytes(run_dir), before)
                self.assertEqual(temp_leftovers(run_dir), [])

    def test_every_writing_stage_on_vistoolbench(self) -> None:
        run_dir = self.tmp / "vtb"
        self.assertEqual(run_cli(*vtb_export_args(run_dir)).exit_code, 0)
        shutil.copy(VTB_SAMPLE / "responses.jsonl", run_dir / "responses.jsonl")
        shutil.copy(VTB_SAMPLE / "judge_responses.jsonl", run_dir / "judge_responses.jsonl")
        before = tree_bytes(run_dir)
        for args in (
            vtb_export_args(run_dir),
            ["make-judge-tasks", "-d", str(run_dir)],
            ["score", "-d", str(run_dir)],
        ):
            with self.subTest(command=args[0]):
                with read_only_file_system(run_dir):
                    result = run_cli(*args)
                self.assert_one_sentence(result, READ_ONLY)
                self.assertEqual(tree_bytes(run_dir), before)

    @unittest.skipIf(os.name != "posix" or os.geteuid() == 0, "root ignores file permissions")
    def test_a_directory_without_write_permission(self) -> None:
        run_dir = self.tmp / "run"
        self.assertEqual(run_cli(*export_args(run_dir)).exit_code, 0)
        before = tree_bytes(run_dir)
        os.chmod(run_dir, 0o555)
        self.addCleanup(os.chmod, run_dir, 0o755)
        result = run_cli("score", "-d", str(run_dir), str(SAMPLE / "responses.jsonl"))
        self.assert_one_sentence(result, os.strerror(errno.EACCES))
        self.assertEqual(tree_bytes(run_dir), before)


class RealFileSystemTests(_Case):
    """The same on a real (tiny, then read-only) tmpfs, where the system allows mounting one;
    the in-process tests above are the proof where it does not."""

    def setUp(self) -> None:
        super().setUp()
        self.mount = self.tmp / "mnt"
        self.mount.mkdir()
        if sys.platform != "linux" or shutil.which("mount") is None:
            self.skipTest("needs Linux mount")
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=160k", "tmpfs", str(self.mount)],
            capture_output=True,
        )
        if mounted.returncode != 0:
            self.skipTest("cannot mount a tmpfs here")
        self.addCleanup(subprocess.run, ["umount", "-l", str(self.mount)], capture_output=True)

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "datbench_cli", *args],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "NO_COLOR": "1"},
        )

    def test_full_then_read_only(self) -> None:
        run_dir = self.mount / "run"
        result = self.cli(*export_args(run_dir), "--format", "openai", "--model", "m")
        self.assertEqual(result.returncode, 2, result.stderr)
        assert_error_line(self, result.stderr, NO_SPACE)
        # A failed export into a directory it made leaves nothing: no journal, no folder.
        self.assertFalse(run_dir.exists(), sorted(self.mount.rglob("*")))
        # Room for a smaller export, then the file system turns read-only.
        self.assertEqual(self.cli(*export_args(run_dir), "--limit", "1").returncode, 0)
        shutil.copy(SAMPLE / "responses.jsonl", run_dir / "responses.jsonl")
        before = tree_bytes(run_dir)
        remount = subprocess.run(["mount", "-o", "remount,ro", str(self.mount)])
        self.assertEqual(remount.returncode, 0)
        for args in (["score", "-d", str(run_dir)], ["make-judge-tasks", "-d", str(run_dir)]):
            with self.subTest(args[0]):
                result = self.cli(*args)
                self.assertEqual(result.returncode, 2, result.stderr)
                assert_error_line(self, result.stderr, READ_ONLY)
        self.assertEqual(tree_bytes(run_dir), before)
