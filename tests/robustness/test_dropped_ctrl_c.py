"""A Ctrl-C whose KeyboardInterrupt Python drops (it lands in a ``__del__``, a weakref or GC
callback: "Exception ignored in ...") still stops the command: exit 130, one line on stderr, the
run directory as it was. Before, such a press was lost and the export ran on to exit 0,
replacing the old export (seen as a rare failure of the Ctrl-C test under load)."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

from tests.run_builders import (
    ROOT,
    cli_env,
    default_sigint,
    make_image_dataset,
    run_real_cli,
    tree_digest,
)

# Runs the real program with one change: while the export reads its 5th row, SIGINT arrives
# inside a __del__, where Python prints "Exception ignored in ..." and carries on.
_DROPPED_PRESS = textwrap.dedent(
    """
    import signal, sys
    from datbench_cli.benchmarks.datbench import export

    class PressedInDel:
        def __del__(self):
            signal.raise_signal(signal.SIGINT)

    real_add = export.ImageDigests.add
    calls = [0]

    def add(self, *args):
        calls[0] += 1
        if calls[0] == 5:
            PressedInDel()  # freed at once: the KeyboardInterrupt is raised and dropped there
        return real_add(self, *args)

    export.ImageDigests.add = add
    from datbench_cli.cli.app import console_main
    sys.argv = ["datbench", *sys.argv[1:]]
    console_main()
    """
)


def run_script(script: str, args: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``script`` (the wrapped program) with the command line ``args``, SIGINT at its default."""
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=ROOT,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=default_sigint,
    )


class DroppedCtrlCTests(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.dataset = make_image_dataset(self.tmp / "dataset", 30, image_bytes=1000)

    def test_export_stops_and_keeps_the_old_export(self) -> None:
        run_dir = self.tmp / "run"
        args = ["export-tasks", "chart", "--source", str(self.dataset), "-d", str(run_dir), "-q"]
        self.assertEqual(run_real_cli(*args, "--limit", "1").returncode, 0)
        before = tree_digest(run_dir)
        done = run_script(_DROPPED_PRESS, args)
        # The press was dropped inside __del__ (the control below finishes without it), and
        # still: exit 130 and one line, no "Exception ignored" traceback.
        self.assertEqual(done.returncode, 130, done.stderr)
        self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)
        self.assertEqual(done.stderr.strip()[:18], "error: interrupted")
        self.assertEqual(tree_digest(run_dir), before)

    def test_without_the_press_the_same_export_finishes(self) -> None:
        # The control: the wrapper alone changes nothing.
        script = _DROPPED_PRESS.replace("calls[0] == 5", "calls[0] == -1")
        run_dir = self.tmp / "run"
        args = ["export-tasks", "chart", "--source", str(self.dataset), "-d", str(run_dir), "-q"]
        done = run_script(script, args)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertTrue((run_dir / "tasks.jsonl").is_file())


if __name__ == "__main__":
    unittest.main()


class RememberingScopeTests(unittest.TestCase):
    """The press is remembered only inside a command: afterwards Python's own handler is back
    and the press forgotten, so a program running several commands in one process starts each
    afresh (a remembered press would otherwise stop every later write)."""

    def setUp(self) -> None:
        # Python's own handler, as in an interactive process (a job started in the background
        # inherits an ignored SIGINT, as CI's may).
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        self.addCleanup(signal.signal, signal.SIGINT, previous)

    def test_the_scope_restores_the_handler_and_forgets_the_press(self) -> None:
        from datbench_cli.runtime import interrupt

        with interrupt.remembering_ctrl_c():
            self.assertIsNot(signal.getsignal(signal.SIGINT), signal.default_int_handler)
            with self.assertRaises(KeyboardInterrupt):
                signal.raise_signal(signal.SIGINT)
            self.assertTrue(interrupt.pressed())
            with self.assertRaises(KeyboardInterrupt):
                interrupt.checkpoint()
        self.assertIs(signal.getsignal(signal.SIGINT), signal.default_int_handler)
        self.assertFalse(interrupt.pressed())
        interrupt.checkpoint()  # nothing pending: no exception

    def test_sigterm_is_remembered_as_terminated_then_back_to_its_default(self) -> None:
        from datbench_cli.runtime import interrupt

        previous = signal.signal(signal.SIGTERM, signal.SIG_DFL)
        self.addCleanup(signal.signal, signal.SIGTERM, previous)
        with interrupt.remembering_ctrl_c():
            with self.assertRaises(interrupt.Terminated):
                signal.raise_signal(signal.SIGTERM)
            with self.assertRaises(interrupt.Terminated):  # a dropped one comes back the same
                interrupt.checkpoint()
        self.assertIs(signal.getsignal(signal.SIGTERM), signal.SIG_DFL)
        self.assertFalse(interrupt.pressed())
        # A caller's own SIGTERM handler is left alone.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        with interrupt.remembering_ctrl_c():
            self.assertIs(signal.getsignal(signal.SIGTERM), signal.SIG_IGN)

    def test_sigterm_is_handled_where_sigint_is_ignored(self) -> None:
        """A job started in the background ignores SIGINT; SIGTERM still cleans up."""
        from datbench_cli.runtime import interrupt

        for number, handler in ((signal.SIGINT, signal.SIG_IGN), (signal.SIGTERM, signal.SIG_DFL)):
            self.addCleanup(signal.signal, number, signal.signal(number, handler))
        with interrupt.remembering_ctrl_c():
            self.assertIs(signal.getsignal(signal.SIGINT), signal.SIG_IGN)
            with self.assertRaises(interrupt.Terminated):
                signal.raise_signal(signal.SIGTERM)
        self.assertIs(signal.getsignal(signal.SIGTERM), signal.SIG_DFL)

    def test_a_child_forked_inside_does_what_a_worker_would(self) -> None:
        """A process forked inside a command (a worker before its own set-up) ignores Ctrl-C
        and dies of SIGTERM, instead of raising the command's exceptions."""
        script = (
            "import os, signal\n"
            "from datbench_cli.runtime import interrupt\n"
            "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "signal.signal(signal.SIGTERM, signal.SIG_DFL)\n"
            "with interrupt.remembering_ctrl_c():\n"
            "    pid = os.fork()\n"
            "    if pid == 0:\n"
            "        signal.raise_signal(signal.SIGINT)\n"
            "        signal.raise_signal(signal.SIGTERM)\n"
            "        os._exit(0)\n"
            "    print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT
        )
        self.assertEqual(done.stdout.strip(), str(-signal.SIGTERM), done.stderr)
        self.assertEqual(done.stderr, "")

    def test_a_dropped_press_is_not_printed_other_dropped_errors_are(self) -> None:
        import sys

        from datbench_cli.runtime import interrupt

        class Raises:
            def __init__(self, error: BaseException) -> None:
                self.error = error

            def __del__(self) -> None:
                raise self.error

        seen: list[BaseException] = []
        previous = sys.unraisablehook
        sys.unraisablehook = lambda unraisable: seen.append(unraisable.exc_value)
        try:
            with interrupt.remembering_ctrl_c():
                Raises(KeyboardInterrupt())  # freed at once: raised where Python drops it
                Raises(ValueError("kept"))
            self.assertEqual([type(e) for e in seen], [ValueError])
            Raises(KeyboardInterrupt())  # outside a command: the caller's hook hears it
            self.assertEqual([type(e) for e in seen], [ValueError, KeyboardInterrupt])
        finally:
            sys.unraisablehook = previous


# The program as the console script starts it, with Ctrl-C pressed while the command line's
# modules load (an import hook presses it as the first of them is looked for).
_PRESS_WHILE_LOADING = textwrap.dedent(
    """
    import signal, sys

    class Press:
        def find_spec(self, name, path=None, target=None):
            if name == "datbench_cli.cli.app":
                held = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])
                print("held while loading" if held else "felt while loading", flush=True)
                signal.raise_signal(signal.SIGINT)
            return None

    sys.meta_path.insert(0, Press())
    sys.argv = ["datbench", *sys.argv[1:]]
    from datbench_cli.__main__ import main
    main()
    """
)


class StartupCtrlCTests(unittest.TestCase):
    def test_a_press_while_the_program_loads_is_one_line_and_exit_130(self) -> None:
        # It printed a 30 to 50 line traceback (about the first second of every command).
        done = run_script(_PRESS_WHILE_LOADING, ["--version"])
        self.assertEqual(done.returncode, 130, done.stderr)
        self.assertEqual(done.stderr, "error: interrupted\n")
        # Held back until the modules have loaded: a press inside a C extension's start-up
        # (orjson's) crashed the process with SIGSEGV about once in 300.
        self.assertEqual(done.stdout, "held while loading\n")
        scripts = (ROOT / "pyproject.toml").read_text()
        self.assertIn('datbench = "datbench_cli.__main__:main"', scripts)
