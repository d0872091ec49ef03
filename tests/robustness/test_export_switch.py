"""A re-export is atomic from the user's view (issue 31): killed at any write point, an export
into a directory holding another export leaves, once the next command has read the
directory, the previous export or the new one, byte for byte, never a mix and no leftover.

The kill is :class:`tests.fault_injection.KillAt`: the N-th change to the run directory
(a file opened for writing, a write, a rename, a removal, a folder made or removed) and every
later one never happen, and no clean-up runs, for every N of a clean export, both directions
(more files, fewer files, request files added or removed), both benchmarks.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
import unittest
from pathlib import Path

from datbench_cli.files import staging
from datbench_cli.files.rundir import MANIFEST, RunDir
from tests.cli_helpers import SAMPLE, run_cli
from tests.fault_injection import KillAt, Killed
from tests.vtb_support import SAMPLE_DIR as VTB_SAMPLE

REQUESTS = ("--format", "openai", "--model", "m", "--max-file-mb", "0.01")
EXPORTS = {
    "datbench": (
        ["chart", "math", "--source", str(SAMPLE), "--limit", "1", *REQUESTS],
        ["chart", "math", "--source", str(SAMPLE), "--limit", "3"],
    ),
    "vistoolbench": (
        ["vistoolbench", "--source", str(VTB_SAMPLE), "--limit", "2", *REQUESTS],
        ["vistoolbench", "--source", str(VTB_SAMPLE), "--limit", "4"],
    ),
}


def tree(root: Path) -> dict[str, bytes | None]:
    """Every file (with its bytes) and folder (``None``) below ``root``."""
    found: dict[str, bytes | None] = {}
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        for name in dirs:
            found[str((here / name).relative_to(root))] = None
        for name in files:
            found[str((here / name).relative_to(root))] = (here / name).read_bytes()
    return found


def differences(found: dict[str, bytes | None], wanted: dict[str, bytes | None]) -> list[str]:
    """The paths where two trees differ (sorted)."""
    return sorted(k for k in found.keys() | wanted.keys() if found.get(k, 0) != wanted.get(k, 0))


def committed_leftover(root: Path) -> bool:
    return any((stage / MANIFEST).is_file() for stage in staging.leftovers(root))


class _Exports(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def export(self, args: list[str], run: Path) -> None:
        done = run_cli("export-tasks", *args, "-d", str(run), "-q")
        self.assertEqual(done.exit_code, 0, done.stderr)

    def restore(self, run: Path, clean: Path) -> None:
        shutil.rmtree(run, ignore_errors=True)
        shutil.copytree(clean, run)


class KillAtEveryWritePointTests(_Exports):
    def check_every_point(self, kind: str) -> None:
        first, second = EXPORTS[kind]
        clean = {}
        for name, args in (("a", first), ("b", second)):
            self.export(args, self.tmp / name)
            clean[name] = tree(self.tmp / name)
        run = self.tmp / "run"
        for old, new, args in (("a", "b", second), ("b", "a", first)):
            self.restore(run, self.tmp / old)
            with KillAt(run).installed() as meter:
                self.export(args, run)
            self.assertEqual(tree(run), clean[new])
            switched_at = None
            for at in range(1, meter.points + 1):
                with self.subTest(kind=kind, direction=f"{old}->{new}", kill_at=at):
                    self.restore(run, self.tmp / old)
                    with KillAt(run, at).installed(), self.assertRaises(Killed):
                        run_cli("export-tasks", *args, "-d", str(run), "-q")
                    if not committed_leftover(run):  # not mid-switch: one whole export
                        visible = {
                            k: v for k, v in tree(run).items() if not k.startswith(staging.PREFIX)
                        }
                        whole = [differences(visible, clean[old]), differences(visible, clean[new])]
                        self.assertIn([], whole)
                    RunDir(run).read_manifest()  # what every stage does first: settles
                    after = tree(run)
                    mix = [differences(after, clean[old]), differences(after, clean[new])]
                    self.assertIn([], mix, "a mix of two exports")
                    if after == clean[new]:
                        switched_at = switched_at or at
                    else:
                        self.assertIsNone(switched_at, "back to the previous export")
            # The commit is one point: the export is the new one from there on.
            self.assertIsNotNone(switched_at)

    def test_datbench(self) -> None:
        self.check_every_point("datbench")

    def test_vistoolbench(self) -> None:
        self.check_every_point("vistoolbench")


class KilledFirstExportTests(_Exports):
    def test_an_export_over_a_killed_first_one_is_not_refused(self) -> None:
        """Killed at any point of the first export into a new directory, the rerun is not
        refused (the directory holds only the killed export's private folder, or the whole
        export) and leaves exactly the clean export."""
        args = EXPORTS["datbench"][0]
        self.export(args, self.tmp / "clean")
        clean = tree(self.tmp / "clean")
        run = self.tmp / "run"
        with KillAt(self.tmp).installed() as meter:
            self.export(args, run)
        for at in range(1, meter.points + 1):
            with self.subTest(kill_at=at):
                shutil.rmtree(run)
                with KillAt(self.tmp, at).installed(), self.assertRaises(Killed):
                    run_cli("export-tasks", *args, "-d", str(run), "-q")
                self.export(args, run)
                self.assertEqual(differences(tree(run), clean), [])


class SettleTests(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def test_a_planted_link_or_file_of_the_private_name_is_never_touched(self) -> None:
        run = self.tmp / "run"
        self.assertEqual(run_cli("export-tasks", "math", "--source", str(SAMPLE), "-d",
                                 str(run), "-q").exit_code, 0)  # fmt: skip
        user = self.tmp / "user"
        user.mkdir()
        (user / MANIFEST).write_text("{}")
        link = run / ".datbench-export.0000abcd-1.0000abcd"
        link.symlink_to(user)
        (run / ".datbench-export.0000abcd-2.0000abcd").write_text("mine")
        before = tree(run)
        RunDir(run).read_manifest()
        self.assertEqual(tree(run), before)
        self.assertTrue(link.is_symlink())
        self.assertEqual(sorted(p.name for p in user.iterdir()), [MANIFEST])


class KillAtThreadTests(unittest.TestCase):
    def test_a_thread_running_before_the_install_is_neither_counted_nor_killed(self) -> None:
        """Under ``python -m unittest`` every test shares one process, and threads an earlier
        test left running may write while a command is metered: those writes must not shift
        the count (a kill at the last point then found no point to kill)."""
        root = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, root, True)
        go, stop, errors = threading.Event(), threading.Event(), []

        def earlier_test_thread() -> None:
            go.wait()
            try:
                while not stop.is_set():
                    (root / "elsewhere").write_bytes(b"x")
            except BaseException as error:  # noqa: BLE001 - a Killed here fails the test
                errors.append(error)

        thread = threading.Thread(target=earlier_test_thread)
        thread.start()
        try:
            with KillAt(root).installed() as meter:
                go.set()
                time.sleep(0.05)
                (root / "mine").write_bytes(b"y")
            self.assertEqual(meter.points, 1)
            with KillAt(root, 1).installed(), self.assertRaises(Killed):
                (root / "mine").write_bytes(b"y")
        finally:
            stop.set()
            thread.join()
        self.assertEqual(errors, [])
