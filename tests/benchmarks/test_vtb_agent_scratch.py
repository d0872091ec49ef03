"""The agent's scratch folder: a run locks and marks its own, and the next run removes what a
SIGKILLed run left behind (an unlocked, marked folder of ours), never a live run's, a fresh
one, an unmarked one (a user's folder of that name), another user's or what a symbolic link
points to."""

from __future__ import annotations

import errno
import fcntl
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from datbench_cli.benchmarks.vistoolbench.agent import run as agent_run

PREFIX = agent_run._prefix()


def _aged(path: Path, seconds: float = 3600) -> Path:
    when = path.stat().st_mtime - seconds
    os.utime(path, (when, when), follow_symlinks=False)
    return path


class ScratchSweepTests(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.TemporaryDirectory()
        self.base = Path(self.dir.name)

    def tearDown(self) -> None:
        self.dir.cleanup()

    def folder(self, name: str, marked: bool = True) -> Path:
        path = self.base / name
        (path / "datbench-turn-1").mkdir(parents=True)
        (path / "datbench-turn-1" / "turn_0_image_0.jpg").write_bytes(b"x")
        if marked:
            (path / agent_run._MARK).touch()
        return _aged(path)

    def test_only_unlocked_aged_folders_of_ours_go(self) -> None:
        orphan = self.folder(PREFIX + "orphan")
        live = self.folder(PREFIX + "live")
        fresh = self.base / (PREFIX + "fresh")
        fresh.mkdir()
        (fresh / agent_run._MARK).touch()  # marked, but too young: its run may lock it yet
        older_version = self.folder("datbench-agent-abc123", marked=False)  # unlocked, unmarked
        users_run = self.folder(PREFIX + "2026-12-04", marked=False)  # a run directory so named
        (users_run / "responses.jsonl").write_bytes(b"{}\n")
        other_host = self.folder("datbench-agent-otherhost-abc")
        other = self.folder("something-else")
        target = self.folder("pointed-at")
        link = self.base / (PREFIX + "link")
        link.symlink_to(target, target_is_directory=True)
        holder = os.open(live, os.O_RDONLY | os.O_DIRECTORY)  # as a live run holds it
        try:
            fcntl.flock(holder, fcntl.LOCK_EX)
            agent_run._sweep_orphans(self.base)
        finally:
            os.close(holder)
        self.assertFalse(orphan.exists())
        for kept in (live, fresh, older_version, users_run, other_host, other, target, link):
            self.assertTrue(kept.exists(), kept)
        self.assertTrue((target / "datbench-turn-1" / "turn_0_image_0.jpg").exists())

    def test_another_users_folder_is_left_alone(self) -> None:
        orphan = self.folder(PREFIX + "theirs")
        with mock.patch.object(agent_run.os, "getuid", return_value=os.getuid() + 1):
            agent_run._sweep_orphans(self.base)
        self.assertTrue(orphan.exists())

    def test_a_run_locks_its_folder_and_sweeps_the_others(self) -> None:
        orphan = self.folder(PREFIX + "killed")
        with mock.patch.object(agent_run.tempfile, "tempdir", str(self.base)):
            with agent_run._scratch() as scratch:
                self.assertFalse(orphan.exists())
                probe = os.open(scratch, os.O_RDONLY | os.O_DIRECTORY)
                try:
                    with self.assertRaises(BlockingIOError):
                        fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
                finally:
                    os.close(probe)
                _aged(scratch)
                agent_run._sweep_orphans(self.base)  # another run starting meanwhile
                self.assertTrue(scratch.is_dir())
        self.assertEqual(list(self.base.iterdir()), [])

    def test_a_file_system_without_locks_runs_unmarked(self) -> None:
        # flock may fail with ENOLCK (some network file systems): the run goes on, its folder
        # left unmarked, so no sweep ever takes it.
        def no_locks(*_: object) -> None:
            raise OSError(errno.ENOLCK, "No locks available")

        with (
            mock.patch.object(agent_run.tempfile, "tempdir", str(self.base)),
            mock.patch.object(agent_run.fcntl, "flock", no_locks),
        ):
            with agent_run._scratch() as scratch:
                self.assertEqual(list(scratch.iterdir()), [])
        self.assertEqual(list(self.base.iterdir()), [])

    def test_the_mark_goes_last(self) -> None:
        # A SIGKILL while a folder is removed must leave it marked (a later sweep takes it):
        # everything else goes before the mark.
        folder = self.folder(PREFIX + "removed")
        (folder / "a.png").write_bytes(b"x")
        order: list[str] = []
        unlink, rmtree = os.unlink, agent_run.shutil.rmtree

        def logged_unlink(path: object, *args: object, **kwargs: object) -> None:
            order.append(Path(str(path)).name)
            unlink(path, *args, **kwargs)  # type: ignore[arg-type]

        def logged_rmtree(path: object, *args: object, **kwargs: object) -> None:
            order.append(Path(str(path)).name)
            rmtree(path, *args, **kwargs)  # type: ignore[arg-type]

        with (
            mock.patch.object(agent_run.os, "unlink", logged_unlink),
            mock.patch.object(agent_run.shutil, "rmtree", logged_rmtree),
        ):
            agent_run._remove(folder)
        self.assertFalse(folder.exists())
        self.assertEqual(order[-2:], [agent_run._MARK, folder.name])
        self.assertEqual(order.count(agent_run._MARK), 1)
        self.assertLessEqual({"a.png", "datbench-turn-1"}, set(order[:-2]))

    def test_a_folder_that_cannot_be_opened_is_not_left(self) -> None:
        real_open = os.open

        def no_descriptors(path: object, *args: object, **kwargs: object) -> int:
            if str(path).startswith(str(self.base / PREFIX)):
                raise OSError(errno.EMFILE, "Too many open files")
            return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

        with (
            mock.patch.object(agent_run.tempfile, "tempdir", str(self.base)),
            mock.patch.object(agent_run.os, "open", no_descriptors),
        ):
            with self.assertRaises(OSError):
                with agent_run._scratch():
                    pass
        self.assertEqual(list(self.base.iterdir()), [])
