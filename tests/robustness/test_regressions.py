"""One regression test per defect the hardening tests found (property tests, fault injection,
kill loops, Ctrl-C). Each names the defect it pins down."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from datbench_cli import parse_judge_verdict
from datbench_cli.batch.requests import write_parts
from datbench_cli.batch.sender import OutputFile
from datbench_cli.errors import InputError, OutputError
from datbench_cli.files import jsonio
from datbench_cli.files.rundir import MANIFEST, RunDir, sha256_file
from tests.cli_helpers import run_cli
from tests.fault_injection import FullDisk


def dead_pid() -> int:
    """The id of a process that has exited (and been reaped)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


class _Tmp(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp, True)


class ManifestRegressions(_Tmp):
    """Found by the manifest property test: a hand-edited manifest crashed the reader, or made it
    hash any path it named (``/dev/zero`` hung it)."""

    def write_manifest(self, files: object) -> RunDir:
        (self.tmp / MANIFEST).write_bytes(jsonio.dumps({"benchmark": "datbench", "files": files}))
        return RunDir(self.tmp)

    def test_files_that_are_not_an_object(self) -> None:
        for files in ([1], "tasks.jsonl", 3):
            with self.subTest(files=files), self.assertRaises(InputError) as caught:
                self.write_manifest(files).read_manifest()
            self.assertIn('"files" is not an object', str(caught.exception))

    def test_entries_other_than_tasks_and_references_are_never_read(self) -> None:
        outside = self.tmp.parent / f"{self.tmp.name}-outside.jsonl"
        outside.write_text("{}\n")
        self.addCleanup(outside.unlink)
        digest = {"sha256": sha256_file(outside)}
        for name in (f"../{outside.name}", str(outside), "/dev/zero"):
            with self.subTest(name=name), self.assertRaises(InputError) as caught:
                self.write_manifest({name: digest}).read_manifest()
            self.assertIn("unexpected file entry", str(caught.exception))
        with self.assertRaises(InputError):
            self.write_manifest({"tasks.jsonl": "not an object"}).read_manifest()


class VerdictRegressions(unittest.TestCase):
    """Found by the verdict oracle: the case-insensitive answer-line regex took Unicode
    look-alikes for the ASCII words ("answer: yeſ" was read as false, "anſwer: true" as true)."""

    def test_look_alike_letters_are_not_verdict_words(self) -> None:
        for raw in ("answer: yeſ", "anſwer: true", "ANſWER:TRUE", "answer: falſe", "AnſWER: no"):
            with self.subTest(raw=raw):
                self.assertIsNone(parse_judge_verdict(None, raw))

    def test_ascii_answer_lines_still_read(self) -> None:
        self.assertIs(parse_judge_verdict(None, "Reason: x\n  ANSWER :\tYes."), True)
        self.assertIs(parse_judge_verdict(None, "answer: no é"), False)


class WriteFailureRegressions(_Tmp):
    """Found by the disk-full tests: a failed write was an internal error (exit 3) and the send
    output kept the part of a line that fit."""

    def test_atomic_writer_raises_output_error_and_cleans_up(self) -> None:
        target = self.tmp / "report.json"
        target.write_bytes(b"previous")
        with FullDisk(10).installed(), self.assertRaises(OutputError) as caught:
            jsonio.write_bytes_atomic(target, b"x" * 1000)
        self.assertIn(str(target), str(caught.exception))
        self.assertIn(os.strerror(28), str(caught.exception))
        self.assertEqual(target.read_bytes(), b"previous")
        self.assertEqual([p.name for p in self.tmp.iterdir()], ["report.json"])

    def test_request_part_files_raise_output_error_and_clean_up(self) -> None:
        rows = [{"custom_id": str(i), "body": {"x": "y" * 100}} for i in range(20)]
        with FullDisk(500).installed(), self.assertRaises(OutputError):
            write_parts(self.tmp / "requests", "tasks", rows)
        self.assertEqual(list((self.tmp / "requests").iterdir()), [])

    def test_an_unnamed_os_error_is_one_sentence_and_exit_2(self) -> None:
        error = OSError(28, os.strerror(28))
        with mock.patch("datbench_cli.benchmarks.datbench.stages.score_checked", side_effect=error):
            result = run_cli("score", "-d", str(self._run_dir()))
        self.assertEqual(result.exit_code, 2, result.stderr)
        self.assertEqual(
            result.stderr.strip().splitlines(), [f"error: file system error: {os.strerror(28)}"]
        )

    def _run_dir(self) -> Path:
        for name in ("tasks.jsonl", "references.jsonl"):
            (self.tmp / name).write_bytes(b"")
        RunDir(self.tmp).write_manifest({"benchmark": "datbench"})
        return self.tmp

    def test_a_send_line_that_does_not_fit_is_taken_back(self) -> None:
        path = self.tmp / "responses.jsonl"
        path.write_bytes(b'{"custom_id": "a"}\n')
        with OutputFile(path) as output, FullDisk(20).installed():
            with self.assertRaises(OutputError):
                output.append({"custom_id": "b", "response": {"body": "x" * 100}})
        self.assertEqual(path.read_bytes(), b'{"custom_id": "a"}\n')


class StaleTempRegressions(_Tmp):
    """Found by the kill loop: temporary files of a killed writer stayed in the run directory
    for good (their names were random); now the next writer of the same file removes them."""

    def test_the_next_writer_removes_a_killed_writers_temp_files_only(self) -> None:
        tag = jsonio._host_tag()
        stale = self.tmp / f".report.json.{tag}-{dead_pid()}.abc123.tmp"
        live = self.tmp / f".report.json.{tag}-{os.getpid()}.def456.tmp"
        foreign = self.tmp / f".report.json.0badf00d-{dead_pid()}.ghi789.tmp"
        other = self.tmp / f".tasks.jsonl.{tag}-{dead_pid()}.jkl012.tmp"
        for path in (stale, live, foreign, other):
            path.write_bytes(b"partial")
        jsonio.write_bytes_atomic(self.tmp / "report.json", b"{}")
        names = {p.name for p in self.tmp.iterdir()}
        self.assertNotIn(stale.name, names)
        self.assertEqual(names, {"report.json", live.name, foreign.name, other.name})

    def test_request_part_writers_remove_theirs(self) -> None:
        folder = self.tmp / "requests"
        folder.mkdir()
        stale = folder / f".tasks.openai.{jsonio._host_tag()}-{dead_pid()}.abc.tmp"
        stale.write_bytes(b"partial")
        write_parts(folder, "tasks", [{"custom_id": "a", "body": {}}])
        self.assertEqual(sorted(p.name for p in folder.iterdir()), ["tasks.openai.00001.jsonl"])
