"""A SIGKILLed concurrent ``datbench agent`` run, rerun, gives exactly the answers of an
uninterrupted run: no turn lost once committed, none run or written twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from datbench_cli.benchmarks.vistoolbench.agent import protocol
from tests.cli_helpers import run_cli
from tests.run_builders import default_sigint
from tests.tool_chat_server import ToolChatServer
from tests.vtb_support import TempDirCase, read_jsonl

CROP = (
    "from PIL import Image\nimg = Image.open('turn_0_image_0.jpg')\n"
    "img.crop((0, 0, 4, 4)).save('transformed_image_0.png')\n"
)


def _command(run: Path, server: ToolChatServer) -> list[str]:
    return [
        sys.executable, "-m", "datbench_cli", "agent", "-d", str(run), "--base-url",
        server.base_url, "--model", "m", "--concurrency", "3", "--max-tool-rounds", "4",
        "--tool-cpu-seconds", "10", "--tool-memory-mb", "1024", "-q",
    ]  # fmt: skip


def _answers(run: Path) -> dict[str, str]:
    lines = read_jsonl(run / "responses.jsonl")
    ids = [line["id"] for line in lines]
    assert len(ids) == len(set(ids)), f"duplicate answer lines: {ids}"
    return {line["id"]: line["raw_output"] for line in lines}


def _turn_files(folder: Path) -> bool:
    """Whether some turn folder under ``folder`` has a file (folders come and go meanwhile)."""
    try:
        return any(folder.glob("datbench-agent-*/datbench-turn-*/*"))
    except OSError:
        return False


class AgentKillTests(TempDirCase):
    def _script(self, server: ToolChatServer, run: Path) -> None:
        for task in read_jsonl(run / "tasks.jsonl"):
            for turn in task["turns"]:
                calls = [
                    {
                        "tool_calls": [
                            (protocol.CALCULATOR_TOOL, {"expression": f"{n}*{len(turn['prompt'])}"})
                        ]
                    }
                    for n in range(2)
                ]
                if turn["id"] == "vtb-a-medical-001::0":
                    calls.insert(0, {"tool_calls": [(protocol.IMAGE_TOOL, {"code": CROP})]})
                server.script[turn["prompt"]] = [*calls, {"content": f"final {turn['id']}"}]

    def test_sigkill_then_rerun_matches_an_uninterrupted_run(self) -> None:
        clean, _, _ = self.export(name="clean")
        killed, _, _ = self.export(name="killed")
        with ToolChatServer(delay=0.15) as server:
            self._script(server, clean.root)
            done = subprocess.run(_command(clean.root, server), capture_output=True, timeout=300)
            self.assertEqual(done.returncode, 0, done.stderr)
            # Its turns' folder stays after the SIGKILL: in this test's folder, not in /tmp.
            child = subprocess.Popen(
                _command(killed.root, server),
                stderr=subprocess.PIPE,
                env={**os.environ, "TMPDIR": str(self.tmp)},
            )
            trajectories = killed.root / "trajectories.jsonl"
            # Killed once three answers are committed (what is asserted below; the trajectory
            # of a turn is written before its answer, so counting trajectories raced).
            answers = killed.root / "responses.jsonl"
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                if answers.is_file() and answers.read_bytes().count(b"\n") >= 3:
                    break
                time.sleep(0.02)
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
            child.stderr.close()
            partial = _answers(killed.root)
            self.assertGreaterEqual(len(partial), 3)
            self.assertLess(len(partial), 9, "the run finished before the kill: nothing tested")
            # The killed run's folder is left behind; the rerun (a minute later, as far as the
            # folder's age tells) removes it.
            (left,) = self.tmp.glob("datbench-agent-*")
            aged = left.stat().st_mtime - 120
            os.utime(left, (aged, aged))
            again = subprocess.run(
                _command(killed.root, server),
                capture_output=True,
                timeout=300,
                env={**os.environ, "TMPDIR": str(self.tmp)},
            )
            self.assertEqual(again.returncode, 0, again.stderr)
            self.assertEqual(list(self.tmp.glob("datbench-agent-*")), [])
        expected = _answers(clean.root)
        self.assertEqual(len(expected), 9)
        self.assertEqual(_answers(killed.root), expected)
        for key, value in partial.items():
            self.assertEqual(expected[key], value)
        answered = [t["id"] for t in read_jsonl(trajectories) if t["status"] == "answered"]
        self.assertEqual(sorted(answered), sorted(expected))

    def test_ctrl_c_and_sigterm_leave_no_turn_folder(self) -> None:
        """The turns' folders (with the turn's images) go, even with turns mid-flight on
        other threads; SIGTERM stops the run like Ctrl-C, with exit status 143."""
        for how, status, said in ((signal.SIGINT, 130, "interrupted"),
                                  (signal.SIGTERM, 143, "terminated (SIGTERM)")):  # fmt: skip
            with self.subTest(how.name):
                run, _, _ = self.export(name=how.name)
                scratch = self.tmp / f"tmp-{how.name}"
                scratch.mkdir()
                with ToolChatServer(delay=0.3) as server:
                    self._script(server, run.root)
                    for prompt, calls in server.script.items():  # code tools on every turn
                        server.script[prompt] = [
                            {"tool_calls": [(protocol.IMAGE_TOOL, {"code": CROP})]},
                            *calls,
                        ]
                    child = subprocess.Popen(
                        _command(run.root, server),
                        stderr=subprocess.PIPE,
                        env={**os.environ, "TMPDIR": str(scratch)},
                        preexec_fn=default_sigint,  # Ctrl-C as a terminal's job sees it
                    )
                    deadline = time.monotonic() + 60
                    while not _turn_files(scratch):
                        self.assertLess(time.monotonic(), deadline, "no turn started")
                        self.assertIsNone(child.poll(), "the run ended before any turn")
                        time.sleep(0.02)
                    child.send_signal(how)
                    _, err = child.communicate(timeout=60)
                self.assertEqual(child.returncode, status, err)
                lines = err.decode().strip().splitlines()
                self.assertEqual(len(lines), 1, err)
                self.assertTrue(lines[0].startswith(f"error: {said}; "), err)
                self.assertEqual(list(scratch.iterdir()), [])

    def test_kill_between_the_two_writes_is_repaired_without_rerunning(self) -> None:
        run, _, _ = self.export()
        with ToolChatServer() as server:
            self._script(server, run.root)
            args = ("agent", "-d", str(run.root), "--base-url", server.base_url, "--model", "m")
            self.assertEqual(run_cli(*args, "--no-code-tools").exit_code, 0)
            expected = _answers(run.root)
            responses = run.root / "responses.jsonl"
            lines = responses.read_bytes().splitlines(keepends=True)
            responses.write_bytes(b"".join(lines[:-2]) + lines[-2][:10])  # lost + torn
            with (run.root / "trajectories.jsonl").open("ab") as handle:
                handle.write(b'{"id": "torn')
            server.requests.clear()
            again = run_cli(*args, "--no-code-tools")
            self.assertEqual(again.exit_code, 0, again.stderr)
            self.assertEqual(dict(server.requests), {})
        self.assertIn("dropped an incomplete last line", again.stderr)
        self.assertIn("2 committed answer(s) of this agent copied", again.stderr)
        self.assertEqual(_answers(run.root), expected)
        self.assertEqual(len(read_jsonl(run.root / "trajectories.jsonl")), 9)
        json.loads((run.root / "agent.json").read_text())
