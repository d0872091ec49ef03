"""The export's fast paths keep their promises: switching in a folder absent from the run
directory takes one rename and a linked folder is never written through, the guard's "folder
is absent" shortcut still refuses a planted file, and the local data digest hashed in the
background notices a changed file."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import unittest
from pathlib import Path

from datbench_cli.errors import InputError
from datbench_cli.files.export_guard import ExportGuard
from datbench_cli.files.rundir import MANIFEST
from datbench_cli.files.sources import Source, pin_local, pin_local_later
from datbench_cli.files.staging import Stage, switch_in
from tests.cli_helpers import make_dataset, make_row, run_cli


class _Tmp(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="datbench-placement-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)


class SwitchTests(_Tmp):
    """:func:`staging.switch_in` with hand-made private folders (the manifest marks one
    committed)."""

    def stage(self, root: Path, files: dict[str, bytes]) -> Path:
        with Stage(root) as stage:
            for rel, data in files.items():
                stage.write(rel, data)
            written = {rel: "" for rel in files}
            body = {"tool": "datbench", "written": written}
            (stage.path / MANIFEST).write_bytes(json.dumps(body).encode())
        return stage.path

    def test_whole_folder_in_one_rename_when_images_is_absent(self) -> None:
        root = self.tmp / "run"
        root.mkdir()
        folder = self.stage(root, {"images/a.png": b"A" * 100_000, "images/sub/b.jpg": b"B"})
        inode = os.stat(folder / "images").st_ino
        switch_in(root, folder)
        self.assertEqual(os.stat(root / "images").st_ino, inode)
        self.assertEqual((root / "images" / "a.png").read_bytes(), b"A" * 100_000)
        self.assertEqual((root / "images" / "sub" / "b.jpg").read_bytes(), b"B")
        self.assertEqual(sorted(p.name for p in root.iterdir()), [MANIFEST, "images"])

    def test_file_by_file_beside_what_images_holds(self) -> None:
        root = self.tmp / "run"
        (root / "images").mkdir(parents=True)
        (root / "images" / "keep.txt").write_bytes(b"user")
        (root / "images" / "a.png").write_bytes(b"old")
        switch_in(root, self.stage(root, {"images/a.png": b"new"}))
        self.assertEqual((root / "images" / "keep.txt").read_bytes(), b"user")
        self.assertEqual((root / "images" / "a.png").read_bytes(), b"new")
        self.assertEqual(sorted(p.name for p in root.iterdir()), [MANIFEST, "images"])

    def test_a_linked_folder_is_never_written_through(self) -> None:
        root, other = self.tmp / "run", self.tmp / "elsewhere"
        root.mkdir()
        other.mkdir()
        (root / "images").symlink_to(other, target_is_directory=True)
        folder = self.stage(root, {"images/a.png": b"new"})
        with self.assertRaises(InputError):
            switch_in(root, folder)
        self.assertEqual(list(other.iterdir()), [])

    def test_a_hand_edited_manifest_never_removes_a_file_outside(self) -> None:
        root, victim = self.tmp / "run", self.tmp / "victim"
        root.mkdir()
        victim.write_bytes(b"user")
        listed = {"../victim": "", str(victim): "", "tasks.jsonl": ""}
        (root / MANIFEST).write_text(json.dumps({"tool": "datbench", "written": listed}))
        switch_in(root, self.stage(root, {"images/a.png": b"new"}))
        self.assertEqual(victim.read_bytes(), b"user")

    def test_a_linked_task_folder_of_the_previous_export_is_never_emptied(self) -> None:
        # A re-export that drops a task removes the previous export's files of it: with that
        # task's folder replaced by a link, they were removed from the folder it leads to
        # (outside the run directory). A VisualToolBench export into --turncase multi-turn
        # after a full one did it to the single-turn tasks' folders.
        root, victim = self.tmp / "run", self.tmp / "victim"
        (root / "images").mkdir(parents=True)
        victim.mkdir()
        (victim / "a.png").write_bytes(b"user")
        (root / "images" / "task-1").symlink_to(victim, target_is_directory=True)
        listed = {"images/task-1/a.png": "", "tasks.jsonl": ""}
        (root / MANIFEST).write_text(json.dumps({"tool": "datbench", "written": listed}))
        switch_in(root, self.stage(root, {"images/task-2/b.png": b"new"}))
        self.assertEqual((victim / "a.png").read_bytes(), b"user")
        self.assertEqual((root / "images" / "task-2" / "b.png").read_bytes(), b"new")

    def test_a_hand_edited_manifest_never_removes_another_stages_file(self) -> None:
        # The previous manifest's "written" map decides what a re-export removes: a name no
        # export writes (the responses, the report, the judge's files) is never one of them.
        root = self.tmp / "run"
        others = [
            "responses.jsonl", "report.json", "report.html", "judge_tasks.jsonl",
            "judge_responses.jsonl", "judge_digests.json", "trajectories.jsonl", "agent.json",
            "requests/judge_tasks.openai.00001.jsonl", "notes.txt",
        ]  # fmt: skip
        (root / "requests").mkdir(parents=True)
        for rel in others:
            (root / rel).write_bytes(b"not the export's")
        listed = {rel: "" for rel in [*others, "tasks.jsonl"]}
        (root / MANIFEST).write_text(json.dumps({"tool": "datbench", "written": listed}))
        switch_in(root, self.stage(root, {"images/a.png": b"new"}))
        for rel in others:
            self.assertEqual((root / rel).read_bytes(), b"not the export's", rel)

    def test_an_older_manifest_removes_only_the_images_its_tasks_name(self) -> None:
        # A manifest without a "written" map (an older version's) made a re-export remove
        # every file under images/, a user's own notes included.
        root = self.tmp / "run"
        for rel in ("images/old.png", "images/t/0.png", "images/notes.txt", "images/mine/k"):
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(b"old")
        tasks = [
            {"id": "a", "image": "images/old.png"},
            {"id": "t", "images": [["images/t/0.png"]]},
        ]
        (root / "tasks.jsonl").write_text("".join(json.dumps(x) + "\n" for x in tasks))
        (root / MANIFEST).write_text(json.dumps({"tool": "datbench"}))
        switch_in(root, self.stage(root, {"images/a.png": b"new"}))
        self.assertFalse((root / "images/old.png").exists())
        self.assertFalse((root / "images/t/0.png").exists())
        self.assertEqual((root / "images/notes.txt").read_bytes(), b"old")
        self.assertEqual((root / "images/mine/k").read_bytes(), b"old")
        self.assertEqual((root / "images/a.png").read_bytes(), b"new")

    def test_an_uncommitted_folder_is_removed(self) -> None:
        root = self.tmp / "run"
        root.mkdir()
        with Stage(root) as stage:
            stage.write("images/a.png", b"A")
        self.assertEqual(list(root.iterdir()), [])
        with self.assertRaises(RuntimeError), Stage(root) as stage:
            stage.write("images/a.png", b"A")
            raise RuntimeError
        self.assertEqual(list(root.iterdir()), [])


class GuardShortcutTests(_Tmp):
    def test_a_file_planted_after_the_first_check_is_refused_at_claim(self) -> None:
        root = self.tmp / "run"
        root.mkdir()
        guard = ExportGuard.begin(root, force=False)
        guard.check("images/a.png")  # images/ is absent: nothing to look at
        (root / "images").mkdir()
        (root / "images" / "a.png").write_bytes(b"user")
        with self.assertRaises(InputError):
            guard.claim(["images/a.png"])
        self.assertEqual((root / "images" / "a.png").read_bytes(), b"user")

    def test_a_planted_file_in_an_existing_folder_is_refused(self) -> None:
        root = self.tmp / "run"
        (root / "images" / "deep").mkdir(parents=True)
        (root / "images" / "deep" / "a.png").write_bytes(b"user")
        guard = ExportGuard.begin(root, force=True)
        with self.assertRaises(InputError):
            guard.check("images/deep/a.png")
        guard.check("images/other/b.png")  # absent folder inside a present one: fine


class BackgroundPinTests(_Tmp):
    def test_same_digest_as_the_foreground_pin(self) -> None:
        source_dir = make_dataset(self.tmp, {"math": [make_row("m1"), make_row("m2")]})
        source = Source(str(source_dir), str(source_dir), local=True)
        later = pin_local_later(source, ["math"], "test")
        self.assertEqual(later(), pin_local(source, ["math"], "test"))
        self.assertIs(later(), later())

    def test_a_changed_data_file_changes_the_pin(self) -> None:
        source_dir = make_dataset(self.tmp, {"math": [make_row("m1"), make_row("m2")]})
        run_dir = self.tmp / "run"
        args = ["export-tasks", "math", "--source", str(source_dir), "-d", str(run_dir), "-q"]
        self.assertEqual(run_cli(*args).exit_code, 0)
        first = json.loads((run_dir / "datbench.json").read_text())["revision"]["resolved"]
        readme = source_dir / "README.md"
        stat = readme.stat()
        # Same size and modification time, one byte different (in the card's prose).
        readme.write_bytes(readme.read_bytes().replace(b"# DatBench sample", b"# DatBench Sample"))
        os.utime(readme, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        self.assertEqual(readme.stat().st_size, stat.st_size)
        self.assertEqual(run_cli(*args).exit_code, 0)
        second = json.loads((run_dir / "datbench.json").read_text())["revision"]["resolved"]
        self.assertNotEqual(first, second)
        parquet = next(source_dir.glob("math/*.parquet")).relative_to(source_dir).as_posix()
        expected = hashlib.sha256(
            "".join(
                f"{name}\0{hashlib.sha256((source_dir / name).read_bytes()).hexdigest()}\n"
                for name in sorted(["README.md", parquet])
            ).encode()
        ).hexdigest()
        self.assertEqual(second, f"sha256:{expected}")


if __name__ == "__main__":
    unittest.main()
