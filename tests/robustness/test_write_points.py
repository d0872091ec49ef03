"""A kill at any write point leaves every file complete or absent, and the same command run
again finishes the job: proven deterministically, in-process, at every write point.

Each command runs once under :class:`tests.fault_injection.WritePoints`, which records the run
directory before and after every call that changes a file below it (and half-way through every
``os.write``): each state is what a SIGKILL at that moment leaves. Every state is checked, then
restored (its temporary names made a dead process's) and the command run again to the end, which
must leave exactly the clean run's files. The real SIGKILL loops are in test_interruption.py.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import unittest
from collections.abc import Callable
from pathlib import Path

from tests.chat_server import ChatServer
from tests.cli_helpers import run_cli
from tests.fault_injection import WritePoints, dead_pid, materialize
from tests.run_builders import is_leftover, make_image_dataset, make_score_run

Tree = dict[str, bytes | None]


def files(tree: Tree) -> dict[str, bytes]:
    """The visible files of ``tree`` (a killed writer's hidden leftovers aside)."""
    return {k: v for k, v in tree.items() if v is not None and not is_leftover(k)}


class WritePointTests(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.pid = dead_pid()

    def run_ok(self, args: list[str]) -> None:
        result = run_cli(*args)
        self.assertEqual(result.exit_code, 0, result.stderr)

    def every_point(
        self,
        args: list[str],
        run_dir: Path,
        start: Tree,
        check: Callable[[Tree, str], None],
        finished: Callable[[Tree, str], None],
    ) -> int:
        """Run ``args`` from ``start`` recording every write point; ``check`` each state, then
        rerun ``args`` from it and check the result with ``finished``. The number of states."""
        materialize(start, run_dir, self.pid)
        points = WritePoints(run_dir)
        with points.recording():
            self.run_ok(args)
        self.assertGreater(points.points, 0, "no write point was recorded")
        finished(points.snapshot(), "the recorded run")
        for label, state in points.states:
            check(state, f"killed {label}")
            materialize(state, run_dir, self.pid)
            result = run_cli(*args)
            self.assertEqual(result.exit_code, 0, f"rerun after a kill {label}: {result.stderr}")
            after = WritePoints(run_dir).snapshot()
            finished(after, f"rerun after a kill {label}")
            self.assertEqual([k for k in after if is_leftover(k)], [], label)
        return len(points.states)

    def file_stage(self, args: list[str], run_dir: Path, export: bool = False) -> int:
        """A stage whose outputs are whole files: each is the clean run's or absent."""
        start = WritePoints(run_dir).snapshot()
        self.run_ok(args)
        clean = files(WritePoints(run_dir).snapshot())

        def check(state: Tree, after: str) -> None:
            for name, data in files(state).items():
                self.assertEqual(data, clean.get(name), f"{name} is half-written ({after})")
            if export and "datbench.json" in state:  # the manifest vouches for the export
                self.assertEqual(files(state), clean, after)

        def finished(state: Tree, after: str) -> None:
            self.assertEqual(files(state), clean, after)

        return self.every_point(args, run_dir, start, check, finished)

    def export(self, over_an_export: bool) -> None:
        dataset = make_image_dataset(self.tmp / "dataset", 3, image_bytes=64)  # 3 capabilities
        run_dir = self.tmp / "run"
        args = ["export-tasks", "chart", "document", "math", "--source", str(dataset),
                "-d", str(run_dir), "--format", "openai", "--model", "m", "--image-mode",
                "file", "-q"]  # fmt: skip
        if over_an_export:
            self.run_ok(args)
        self.assertGreater(self.file_stage(args, run_dir, export=True), 10)

    def test_export_tasks_from_nothing(self) -> None:
        self.export(over_an_export=False)

    def test_export_tasks_over_a_finished_export(self) -> None:
        self.export(over_an_export=True)

    def test_make_judge_tasks(self) -> None:
        run_dir = make_score_run(self.tmp / "run", 24)
        args = ["make-judge-tasks", "-d", str(run_dir), "--format", "openai", "--model", "m"]
        self.assertGreater(self.file_stage(args, run_dir), 2)

    def test_score(self) -> None:
        run_dir = make_score_run(self.tmp / "run", 24)
        self.assertGreater(self.file_stage(["score", "-d", str(run_dir), "-q"], run_dir), 2)
        report = json.loads((run_dir / "report.json").read_text())
        self.assertEqual(report["summary"]["total_samples"], 24)

    def test_send(self) -> None:
        """The answers file is appended line by line: whole lines (the start of one last line
        at most, which the next send repairs), no id twice, and a rerun completes it."""
        source = make_score_run(self.tmp / "source", 40)
        self.run_ok(["make-judge-tasks", "-d", str(source), "--format", "openai", "--model", "m"])
        run_dir = self.tmp / "run"
        (run_dir / "requests").mkdir(parents=True)
        requests = run_dir / "requests" / "judge_tasks.openai.00001.jsonl"
        shutil.copy(source / "requests" / "judge_tasks.openai.00001.jsonl", requests)
        ids = {json.loads(line)["custom_id"] for line in requests.read_text().splitlines()}
        self.assertGreater(len(ids), 3)
        out = "judge_responses.jsonl"

        def answered(data: bytes) -> list[str]:
            whole = data.rpartition(b"\n")[0]
            return [json.loads(line)["custom_id"] for line in whole.splitlines()]

        def check(state: Tree, after: str) -> None:
            data = state.get(out)
            if data is None:
                return
            tail = data.rpartition(b"\n")[2]
            self.assertIn(tail[:1], (b"", b"{"), f"not the start of a line ({after})")
            got = answered(data)
            self.assertEqual(len(got), len(set(got)), f"an id twice ({after})")
            self.assertLessEqual(set(got), ids, after)

        def finished(state: Tree, after: str) -> None:
            data = state.get(out) or b""
            self.assertTrue(data.endswith(b"\n"), f"torn last line ({after})")
            self.assertEqual(sorted(answered(data)), sorted(ids), after)

        start = WritePoints(run_dir).snapshot()
        with ChatServer() as server:
            args = ["send", str(requests), "--base-url", server.base_url, "-q"]
            self.assertGreater(self.every_point(args, run_dir, start, check, finished), len(ids))
