"""Interrupted runs. The real program is killed (SIGKILL to its process group) at random moments
of ``export-tasks``, ``make-judge-tasks``, ``score`` and ``send``: after every kill each file of
the run directory is complete and identical to a clean run's, or absent (hidden temporary files
and the export's private folder aside, which the next command switches in or removes); rerunning
the same command then leaves exactly the clean run's directory. Ctrl-C exits 130 with one line
on stderr.

A few kills per command here; ``make fuzz`` runs the long loops. The same guarantee is proven at
every write point, deterministically, by test_write_points.py and test_export_switch.py."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time
import unittest
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

from datbench_cli.runtime.interrupt import Terminated
from tests.chat_server import ChatServer
from tests.cli_helpers import ROOT, run_cli
from tests.hypothesis_profiles import long_run
from tests.run_builders import (
    cli_command,
    cli_env,
    default_sigint,
    is_leftover,
    make_image_dataset,
    make_score_run,
    run_real_cli,
    tree_digest,
)

SEED = 20_260_509
# Kills per command: a few in make test, where tests/robustness/test_write_points.py proves the
# same guarantee at every write point; the long random loops (208 kills) run under make fuzz.
if long_run():
    KILLS = {"export-tasks": 64, "make-judge-tasks": 40, "score": 56, "send": 48}
else:
    KILLS = {"export-tasks": 2, "make-judge-tasks": 2, "score": 2, "send": 2}
RERUN_EVERY = 5
# Runs long enough for a kill to land mid-way; the long loops use bigger ones.
EXPORT_SAMPLES = 160 if long_run() else 80
SCORE_SAMPLES = 4000 if long_run() else 1000
SEND_REQUESTS = 600 if long_run() else 150


def start(args: list[str], **options: Any) -> subprocess.Popen[bytes]:
    """Start the real program in its own process group (as a shell runs a job)."""
    options.setdefault("stdout", subprocess.DEVNULL)
    options.setdefault("stderr", subprocess.DEVNULL)
    return subprocess.Popen(
        cli_command(*args),
        cwd=ROOT,
        env=cli_env(),
        start_new_session=True,
        preexec_fn=default_sigint,
        **options,
    )


def kill_after(args: list[str], delay: float) -> int | None:
    """Run ``args``; SIGKILL its process group after ``delay`` s. The exit code if it ended first."""
    process = start(args)
    try:
        return process.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return None


def visible(tree: dict[str, str]) -> dict[str, str]:
    return {name: digest for name, digest in tree.items() if not is_leftover(name)}


def wait_for(condition: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the command to get going")
        time.sleep(0.005)


@unittest.skipUnless(os.name == "posix", "process groups and signals are POSIX")
class KillLoopTests(unittest.TestCase):
    """SIGKILL at random moments; every file complete or absent; a rerun finishes the job."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.rng = random.Random(SEED)
        cls.dataset = make_image_dataset(cls.tmp / "dataset", EXPORT_SAMPLES)
        cls.score_run = make_score_run(cls.tmp / "score-run", SCORE_SAMPLES)
        started = time.monotonic()
        run_real_cli("--version")
        cls.startup = time.monotonic() - started

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def clean_run(self, args: list[str]) -> float:
        """Run ``args`` to the end; return how long it took."""
        started = time.monotonic()
        result = run_real_cli(*args)
        self.assertEqual(result.returncode, 0, result.stderr)
        return time.monotonic() - started

    def assert_complete_or_absent(
        self, run_dir: Path, clean: dict[str, str], after: str, export: bool = False
    ) -> None:
        state = tree_digest(run_dir)
        for name, digest in visible(state).items():
            self.assertEqual(digest, clean.get(name), f"{name} is half-written ({after})")
        if export and "datbench.json" in state:  # the manifest vouches for the whole export
            self.assertEqual(visible(state), visible(clean), after)

    def kill_loop(
        self,
        name: str,
        args: list[str],
        run_dir: Path,
        check: Callable[[str], None],
        reset: Callable[[int], None],
        compare: Callable[[str], None] | None = None,
        window: Callable[[float], float] = lambda duration: duration,
    ) -> None:
        """Kill ``args`` mid-way KILLS[name] times, calling ``check`` after each kill; every
        RERUN_EVERY kills, rerun it to the end, ``compare`` with the clean run and ``reset``.
        Kills land at random within ``window(duration of a clean run)`` seconds."""
        duration = self.clean_run(args)
        clean = tree_digest(run_dir)
        self.assertFalse([n for n in clean if is_leftover(n)])
        if compare is None:

            def compare(after: str) -> None:
                self.assertEqual(tree_digest(run_dir), clean, after)

        reset(0)
        wanted, landed, attempts = KILLS[name], 0, 0
        # A kill lands within the first 60% of a clean run's time; a run that finishes first on
        # a quieter moment of the machine is retried (up to ten tries per kill).
        while landed < wanted and attempts < 10 * wanted:
            attempts += 1
            delay = self.rng.uniform(0.1, 0.6) * window(duration)
            code = kill_after(args, delay)
            self.assertIn(code, (None, 0), f"{name} failed on its own (attempt {attempts})")
            if code is not None:
                continue  # it finished before the kill: nothing to check
            landed += 1
            check(f"{name}, kill {landed} at {delay:.2f}s")
            if landed % RERUN_EVERY == 0 or landed == wanted:
                self.clean_run(args)
                compare(f"{name}, rerun after kill {landed}")
                if landed != wanted:
                    reset(landed // RERUN_EVERY)
        self.assertEqual(landed, wanted, f"{name}: only {landed} kills landed mid-way")

    def test_export_tasks(self) -> None:
        run_dir = self.tmp / "export-run"
        args = ["export-tasks", "chart", "document", "math", "--source", str(self.dataset),
                "-d", str(run_dir), "--format", "openai", "--model", "m", "--image-mode", "file",
                "-q"]  # fmt: skip
        clean: dict[str, str] = {}

        def check(after: str) -> None:
            self.assert_complete_or_absent(run_dir, clean, after, export=True)

        def reset(round_number: int) -> None:
            clean.update(tree_digest(run_dir))
            if round_number % 2 == 0:  # alternately from nothing and over a finished export
                shutil.rmtree(run_dir)

        self.kill_loop("export-tasks", args, run_dir, check, reset)

    def _copy_of_score_run(self, name: str) -> Path:
        run_dir = self.tmp / name
        shutil.copytree(self.score_run, run_dir)
        return run_dir

    def _file_stage(self, name: str, args: list[str], run_dir: Path, outputs: list[str]) -> None:
        clean: dict[str, str] = {}

        def check(after: str) -> None:
            self.assert_complete_or_absent(run_dir, clean, after)

        def reset(_: int) -> None:
            clean.update(tree_digest(run_dir))
            for output in outputs:  # start the next round without the finished outputs
                for path in run_dir.glob(output):
                    path.unlink()

        self.kill_loop(name, args, run_dir, check, reset)

    def test_make_judge_tasks(self) -> None:
        run_dir = self._copy_of_score_run("judge-run")
        args = ["make-judge-tasks", "-d", str(run_dir), "--format", "openai", "--model", "m"]
        self._file_stage(
            "make-judge-tasks", args, run_dir, ["judge_tasks.jsonl", "requests/*.jsonl"]
        )

    def test_score(self) -> None:
        run_dir = self._copy_of_score_run("scored-run")
        self._file_stage("score", ["score", "-d", str(run_dir), "-q"], run_dir, ["report.json"])
        report = json.loads((run_dir / "report.json").read_text())
        self.assertEqual(report["summary"]["total_samples"], SCORE_SAMPLES)

    def test_send(self) -> None:
        run_dir = self.tmp / "send-run"
        (run_dir / "requests").mkdir(parents=True)
        requests = run_dir / "requests" / "judge_tasks.openai.00001.jsonl"
        self._write_judge_requests(requests)
        ids = [json.loads(line)["custom_id"] for line in requests.read_text().splitlines()]
        out = run_dir / "judge_responses.jsonl"

        def check(after: str) -> None:
            if not out.exists():
                return
            # A kill inside the append's write() may leave the start of one last line without its
            # line end (the kernel stops a killed write between pages); nothing else may be
            # partial, and the next send repairs that tail (compare, after the rerun, checks).
            tail = out.read_bytes().rpartition(b"\n")[2]
            self.assertTrue(tail[:1] in (b"", b"{"), f"not the start of a line ({after})")
            answered = self._answered(out)
            self.assertEqual(len(answered), len(set(answered)), f"an id twice ({after})")
            self.assertLessEqual(set(answered), set(ids), after)

        def compare(after: str) -> None:
            self.assertTrue(out.read_bytes().endswith(b"\n"), f"torn last line ({after})")
            check(after)
            self.assertEqual(sorted(self._answered(out)), sorted(ids), after)
            self.assertFalse([n for n in tree_digest(run_dir) if is_leftover(n)], after)

        def window(duration: float) -> float:
            # A resumed send only sends what is left: aim within its shorter run.
            left = 1 - (len(self._answered(out)) / len(ids) if out.exists() else 0)
            return self.startup + left * (duration - self.startup)

        with ChatServer() as server:
            # The batch ids in the output differ from run to run: the answered ids are compared.
            args = ["send", str(requests), "--base-url", server.base_url, "-q"]
            self.kill_loop("send", args, run_dir, check, lambda _: out.unlink(), compare, window)

    def _answered(self, out: Path) -> list[str]:
        """The ids of the whole lines of ``out`` (not of a torn last line)."""
        whole = out.read_bytes().rpartition(b"\n")[0]
        return [json.loads(line)["custom_id"] for line in whole.splitlines()]

    def _write_judge_requests(self, target: Path) -> None:
        source = self._copy_of_score_run("requests-run")
        result = run_real_cli(
            "make-judge-tasks", "-d", str(source), "--format", "openai", "--model", "m", "-q"
        )
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = (source / "requests" / "judge_tasks.openai.00001.jsonl").read_text().splitlines()
        target.write_text("".join(line + "\n" for line in lines[:SEND_REQUESTS]))


@unittest.skipUnless(os.name == "posix", "process groups and signals are POSIX")
class CtrlCTests(unittest.TestCase):
    """SIGINT to the whole process group (what a terminal's Ctrl-C sends) while a command works:
    exit 130, one line on stderr, nothing half-written; SIGTERM (what ``timeout``, ``kill`` and
    schedulers send) the same with exit 143."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.dataset = make_image_dataset(cls.tmp / "dataset", 200)
        cls.score_run = make_score_run(cls.tmp / "score-run", 4000)

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def interrupt(
        self,
        args: list[str],
        ready: Callable[[subprocess.Popen[bytes]], bool],
        how: signal.Signals = signal.SIGINT,
    ) -> str:
        """Start ``args``, press Ctrl-C (or send ``how`` to the group) once ``ready``; return
        stderr after checking the exit status and the one line."""
        process = start(args, stderr=subprocess.PIPE)
        try:
            wait_for(lambda: ready(process) or process.poll() is not None)
            self.assertIsNone(process.poll(), "finished before it could be interrupted")
            os.killpg(process.pid, how)
            _, err = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        stderr = err.decode()
        terminated = how == signal.SIGTERM
        self.assertEqual(process.returncode, 143 if terminated else 130, stderr)
        lines = stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, stderr)
        said = "error: terminated (SIGTERM); " if terminated else "error: interrupted"
        self.assertTrue(lines[0].startswith(said), stderr)
        return stderr

    def test_export_tasks(self) -> None:
        run_dir = self.tmp / "export-run"
        args = ["export-tasks", "chart", "document", "math", "--source", str(self.dataset),
                "-d", str(run_dir), "-q"]  # fmt: skip
        self.assertEqual(run_real_cli(*args, "--limit", "1").returncode, 0)
        before = tree_digest(run_dir)

        def staged(_: object) -> bool:
            folders = [p / "images" for p in run_dir.glob(".datbench-export.*")]
            return any(p.is_dir() and len(os.listdir(p)) >= 3 for p in folders)

        # Interrupted in the middle of the rows (a few images staged in the private folder).
        for how in (signal.SIGINT, signal.SIGTERM):
            with self.subTest(how.name):
                self.interrupt(args, staged, how)
                self.assertEqual(tree_digest(run_dir), before)

    def test_score_on_several_processes(self) -> None:
        run_dir = self.tmp / "score-run"

        def workers_started(process: subprocess.Popen[bytes]) -> bool:
            children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
            if not children.exists():
                time.sleep(1.5)
                return True
            return bool(children.read_text().split())

        for how in (signal.SIGINT, signal.SIGTERM):
            with self.subTest(how.name):
                args = ["score", "-d", str(run_dir), "-q", "--jobs", "2"]
                said = self.interrupt(args, workers_started, how)
                self.assertIn("nothing was written", said)
                self.assertFalse((run_dir / "report.json").exists())
                self.assertFalse([n for n in tree_digest(run_dir) if is_leftover(n)])

    def test_send(self) -> None:
        requests = self.tmp / "requests" / "tasks.openai.00001.jsonl"
        requests.parent.mkdir(parents=True)
        rows = [
            {"custom_id": f"r{i}", "method": "POST", "url": "/v1/chat/completions",
             "body": {"model": "m", "messages": [{"role": "user", "content": f"q{i}"}]}}
            for i in range(40)
        ]  # fmt: skip
        requests.write_text("".join(json.dumps(row) + "\n" for row in rows))
        for how in (signal.SIGINT, signal.SIGTERM):
            out = self.tmp / f"responses-{how.name}.jsonl"
            with self.subTest(how.name), ChatServer() as server:
                server.hang_after = 5
                args = ["send", str(requests), "--base-url", server.base_url, "-o", str(out)]
                said = self.interrupt(
                    [*args, "-q"],
                    lambda _, out=out: out.is_file() and out.read_bytes().count(b"\n") >= 5,
                    how,
                )
                server.release()
                # The one line says what was kept and that a rerun continues.
                self.assertIn(f"kept in {out}: 5 whole line(s)", said)
                self.assertIn("run the same command again", said)
                data = out.read_bytes()
                self.assertTrue(data.endswith(b"\n"))
                self.assertEqual(len([json.loads(line) for line in data.splitlines()]), 5)

    def test_every_command_in_process(self) -> None:
        """KeyboardInterrupt anywhere inside a command: exit 130 and one line."""
        run = ["-d", str(self.score_run)]
        requests = self.tmp / "x.openai.00001.jsonl"  # send names a file that is not there
        requests.write_text("")
        send = ["send", str(requests), "--base-url", "http://127.0.0.1:9", "-o",
                str(self.tmp / "o.jsonl")]  # fmt: skip
        targets = {
            "export-tasks": ("datbench_cli.benchmarks.datbench.export.plan_export",
                             ["export-tasks", "math", "-q", *run]),
            "make-judge-tasks": ("datbench_cli.benchmarks.datbench.stages.make_judge_tasks",
                                 ["make-judge-tasks", *run]),
            "score": ("datbench_cli.benchmarks.datbench.stages.score_checked", ["score", *run]),
            "check-judge": ("datbench_cli.benchmarks.datbench.stages.check_judge",
                            ["check-judge", *run]),
            "send": ("datbench_cli.cli.send.plan_send", send),
        }  # fmt: skip
        stops = ((KeyboardInterrupt, 130, "interrupted"), (Terminated, 143, "terminated"))
        for name, (target, args) in targets.items():
            for stop, status, said in stops:
                with self.subTest(name, stop=stop.__name__), mock.patch(target, side_effect=stop):
                    result = run_cli(*args)
                    self.assertEqual(result.exit_code, status, result.stderr)
                    self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
                    self.assertIn(said, result.stderr)


class PageInterruptTests(unittest.TestCase):
    def test_a_stop_while_the_page_is_written_names_the_new_report(self) -> None:
        """`score --html` stopped after the report was renamed into place, while the page is
        written: the line says the report is new and the page is the earlier one."""
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp, True)
        run = make_score_run(tmp / "run", 20)
        report, page = run / "report.json", run / "report.html"
        page.write_bytes(b"the earlier page")
        for stop, status in ((KeyboardInterrupt, 130), (Terminated, 143)):
            with self.subTest(stop=stop.__name__):
                report.unlink(missing_ok=True)
                with mock.patch("datbench_cli.cli.score.write_page", side_effect=stop):
                    result = run_cli("score", "-d", str(run), "--html", "-q")
                self.assertEqual(result.exit_code, status, result.stderr)
                lines = result.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, result.stderr)
                self.assertIn(f"{report} was written, the page was not", lines[0])
                self.assertTrue(report.is_file())
                self.assertEqual(page.read_bytes(), b"the earlier page")

    def test_a_stop_while_judge_requests_are_written_names_the_new_judge_tasks(self) -> None:
        """`make-judge-tasks --format openai` stopped after judge_tasks.jsonl was renamed into
        place, while its request files are written: the line says so and asks for a rerun."""
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp, True)
        run = make_score_run(tmp / "run", 20)
        for stop, status in ((KeyboardInterrupt, 130), (Terminated, 143)):
            with self.subTest(stop=stop.__name__):
                with mock.patch("datbench_cli.batch.run_requests.write_parts", side_effect=stop):
                    result = run_cli(
                        "make-judge-tasks", "-d", str(run), "--format", "openai", "--model", "j"
                    )
                self.assertEqual(result.exit_code, status, result.stderr)
                lines = result.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, result.stderr)
                self.assertIn(f"{run / 'judge_tasks.jsonl'} was written, its request", lines[0])
                self.assertIn("run the same command again", lines[0])
