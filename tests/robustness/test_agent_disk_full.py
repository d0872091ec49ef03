"""`agent` on a full disk: the OutputError of its journals is never swallowed as one turn's
error (the turn loop catches Exception), but stops the run in one sentence, exit 2, leaving only
whole lines; the same command then finishes every turn once."""

from __future__ import annotations

import json
import shutil
import tempfile
import unittest
from pathlib import Path

from tests.cli_helpers import run_cli
from tests.fault_injection import FullDisk
from tests.robustness.test_disk_faults import NO_SPACE, VTB_SAMPLE
from tests.tool_chat_server import ToolChatServer


class AgentFullDiskTests(unittest.TestCase):
    def test_a_full_disk_stops_the_agent_and_a_rerun_finishes(self) -> None:
        root = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, root, True)
        run = root / "vtb"
        export = run_cli("export-tasks", "vistoolbench", "--source", str(VTB_SAMPLE), "-d",
                         str(run), "-q")  # fmt: skip
        self.assertEqual(export.exit_code, 0, export.stderr)
        turns = sum(len(json.loads(line)["turns"]) for line in (run / "tasks.jsonl").open())
        with ToolChatServer() as server:
            args = ["agent", str(run), "--base-url", server.base_url, "--model", "m",
                    "--no-code-tools", "-q"]  # fmt: skip
            for budget in (0, 2000, 6000):  # agent.json, the first and a later trajectory
                with self.subTest(budget=budget):
                    with FullDisk(budget).installed():
                        stopped = run_cli(*args)
                    self.assertEqual(stopped.exit_code, 2, stopped.stderr)
                    errors = stopped.stderr.splitlines()
                    self.assertEqual(len(errors), 1, stopped.stderr)
                    self.assertTrue(errors[0].startswith("error: cannot write "), errors[0])
                    self.assertIn(NO_SPACE, errors[0])
                    for name in ("responses.jsonl", "trajectories.jsonl"):
                        data = (run / name).read_bytes() if (run / name).exists() else b""
                        self.assertTrue(data == b"" or data.endswith(b"\n"), name)
                    resumed = run_cli(*args)
                    self.assertEqual(resumed.exit_code, 0, resumed.stderr)
                    ids = [json.loads(line)["id"] for line in (run / "responses.jsonl").open()]
                    self.assertEqual(len(ids), turns)
                    self.assertEqual(len(set(ids)), turns)
                    (run / "responses.jsonl").unlink()
                    (run / "trajectories.jsonl").unlink()
