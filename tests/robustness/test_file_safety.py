"""Hostile inputs, round 2 (issue 15): disclosure, writes outside the run directory, silent or
wrong results. Each class pins one promise; every test failed before its fix."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import unittest
from pathlib import Path
from typing import Any

from datbench_cli.files.rundir import MANIFEST, RunDir
from tests.cli_helpers import SAMPLE, make_dataset, make_row, png_bytes, run_cli
from tests.run_builders import cli_command, cli_env
from tests.vtb_support import SAMPLE_DIR as VTB_SAMPLE
from tests.vtb_support import generator, sample_rows

SECRET = b"SECRET-FILE-CONTENT-0123456789"


def set_image_cells(parquet: Path, column: str, cells: dict[int, Any]) -> None:
    """Rewrite ``parquet`` with some rows' image cells replaced (what an attacker ships: the
    datasets writer would embed the file's bytes)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(parquet)
    values = table.column(column).to_pylist()
    for row, cell in cells.items():
        values[row] = cell
    index = table.schema.get_field_index(column)
    field = table.schema.field(index)
    table = table.set_column(index, field, pa.array(values, type=field.type))
    pq.write_table(table, parquet)


class _Tmp(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.secret = self.tmp / "secret.txt"
        self.secret.write_bytes(SECRET)

    def datbench_source(self, rows: list[dict[str, Any]] | None = None) -> Path:
        return make_dataset(self.tmp / "src", {"math": rows or [make_row("a"), make_row("b")]})

    def export(self, source: Path, run: Path, *extra: str) -> Any:
        return run_cli("export-tasks", "math", "--source", str(source), "-d", str(run), *extra)

    def vtb_source(self, rows: list[dict[str, Any]] | None = None) -> Path:
        directory = self.tmp / "vtb-src"
        generator().write_dataset(directory, rows or sample_rows())
        return directory

    def vtb_export(self, source: Path, run: Path, *extra: str) -> Any:
        return run_cli(
            "export-tasks", "vistoolbench", "--source", str(source), "-d", str(run), *extra
        )

    def error_line(self, result: Any) -> str:
        self.assertEqual(result.exit_code, 2, result.stderr)
        self.assertNotIn("Traceback", result.stderr)
        errors = [x for x in result.stderr.splitlines() if x.startswith("error: ")]
        self.assertEqual(len(errors), 1, result.stderr)
        return errors[0]


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


class ImagePathTests(_Tmp):
    """An image cell with empty bytes and a path is read only inside the dataset's folder."""

    def test_datbench_paths_outside_are_a_named_defect_never_read(self) -> None:
        source = self.datbench_source([make_row("inside"), make_row("abs"), make_row("up")])
        (source / "math" / "pic.png").write_bytes(png_bytes())
        parquet = source / "math" / "test-00000-of-00001.parquet"
        up = os.path.relpath(self.secret, source)
        set_image_cells(
            parquet,
            "image",
            {
                0: {"bytes": b"", "path": "math/pic.png"},
                1: {"bytes": b"", "path": str(self.secret)},
                2: {"bytes": None, "path": up},
            },
        )
        run = self.tmp / "run"
        result = self.export(source, run, "--format", "openai", "--model", "m")
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertIn("outside the dataset's folder", result.stderr)
        self.assertIn("abs", result.stderr)
        self.assertIn("up", result.stderr)
        tasks = {
            t["id"]: t for t in map(json.loads, (run / "tasks.jsonl").read_text().splitlines())
        }
        self.assertEqual(tasks["inside"]["image"], "images/inside.png")
        self.assertIsNone(tasks["abs"]["image"])
        self.assertIsNone(tasks["up"]["image"])
        for name, data in tree(run).items():
            self.assertNotIn(SECRET, data, name)
            self.assertNotIn(__import__("base64").b64encode(SECRET)[:20], data, name)

    def test_a_shard_counts_the_images_it_wrote(self) -> None:
        """Samples of other shards whose path is outside were subtracted from this shard's
        image count ('-4 images' in the manifest and the summary line)."""
        source = self.datbench_source([make_row(f"s{i}") for i in range(12)])
        set_image_cells(
            source / "math" / "test-00000-of-00001.parquet",
            "image",
            {i: {"bytes": None, "path": str(self.secret)} for i in range(8)},
        )
        for index in range(3):
            run = self.tmp / f"run{index}"
            result = self.export(source, run, "--num-shards", "3", "--shard-index", str(index))
            self.assertEqual(result.exit_code, 0, result.stderr)
            counts = json.loads((run / MANIFEST).read_text())["counts"]
            written = len(list((run / "images").iterdir())) if (run / "images").exists() else 0
            self.assertEqual(counts["images"], written)
            self.assertIn(f"{written} images)", result.stderr)

    def test_vistoolbench_path_outside_stops_the_export(self) -> None:
        rows = sample_rows()
        source = self.vtb_source(rows)
        set_image_cells(
            source / "test.parquet",
            "images_by_turn",
            {0: [[{"bytes": None, "path": str(self.secret)}]] + rows[0]["images_by_turn"][1:]},
        )
        run = self.tmp / "run"
        line = self.error_line(self.vtb_export(source, run))
        self.assertIn("outside the dataset's folder", line)
        self.assertFalse(run.exists() and any(SECRET in d for d in tree(run).values()))


class SymlinkTests(_Tmp):
    """Symlinks planted in a run directory are never written through."""

    def setUp(self) -> None:
        super().setUp()
        self.user = self.tmp / "user-folder"
        self.user.mkdir()
        (self.user / "keep.txt").write_text("mine")
        self.run = self.tmp / "run"

    def assert_user_folder_untouched(self) -> None:
        self.assertEqual(sorted(p.name for p in self.user.iterdir()), ["keep.txt"])
        self.assertEqual((self.user / "keep.txt").read_text(), "mine")

    def test_requests_link_is_refused(self) -> None:
        self.run.mkdir()
        (self.run / "requests").symlink_to(self.user)
        result = self.export(self.datbench_source(), self.run, "--format", "openai", "--model", "m")
        # Refused (a link the tool did not make, in a folder that holds no export).
        self.assertEqual(result.exit_code, 2, result.stderr)
        self.assert_user_folder_untouched()
        self.assertFalse((self.run / MANIFEST).exists())

    def test_make_judge_tasks_refuses_a_requests_link_before_writing(self) -> None:
        # It wrote judge_tasks.jsonl and judge_digests.json, then refused the link (exit 2).
        for name, export, sample in (
            ("datbench", lambda run: run_cli("export-tasks", "all", "--source", str(SAMPLE),
                                             "-d", str(run)), SAMPLE),
            ("vistoolbench", lambda run: self.vtb_export(VTB_SAMPLE, run), VTB_SAMPLE),
        ):  # fmt: skip
            for extra in ((), ("--format", "openai", "--model", "m")):
                with self.subTest(benchmark=name, extra=extra):
                    run = self.tmp / f"{name}-{len(extra)}"
                    self.assertEqual(export(run).exit_code, 0)
                    shutil.copyfile(sample / "responses.jsonl", run / "responses.jsonl")
                    (run / "requests").symlink_to(self.user)
                    before = tree(run)
                    result = run_cli("make-judge-tasks", "-d", str(run), *extra)
                    self.assertIn("symbolic link", self.error_line(result))
                    self.assertEqual(tree(run), before)
                    self.assert_user_folder_untouched()

    def test_images_link_is_refused_for_both_benchmarks_and_leaves_nothing_behind(self) -> None:
        for name, export in (
            ("datbench", lambda: self.export(self.datbench_source(), self.run)),
            ("vistoolbench", lambda: self.vtb_export(VTB_SAMPLE, self.run)),
        ):
            with self.subTest(benchmark=name):
                shutil.rmtree(self.run, ignore_errors=True)
                self.assertEqual(export().exit_code, 0)
                before = tree(self.run)
                shutil.rmtree(self.run / "images")
                (self.run / "images").symlink_to(self.user)
                self.assertIn("symbolic link", self.error_line(export()))
                self.assert_user_folder_untouched()
                hidden = [p.name for p in self.run.iterdir() if p.name.startswith(".")]
                self.assertEqual(hidden, [])
                (self.run / "images").unlink()
                self.assertEqual(export().exit_code, 0)
                self.assertEqual(tree(self.run), before)

    def test_vistoolbench_task_image_folder_link_is_refused_and_kept(self) -> None:
        self.assertEqual(self.vtb_export(VTB_SAMPLE, self.run).exit_code, 0)
        task_dir = next(p for p in (self.run / "images").iterdir() if p.is_dir())
        shutil.rmtree(task_dir)
        task_dir.symlink_to(self.user)
        before = tree(self.run)
        line = self.error_line(self.vtb_export(VTB_SAMPLE, self.run))
        # One sentence naming the link, the earlier export intact, the link itself left alone.
        self.assertIn(task_dir.name, line)
        self.assertIn("symbolic link", line)
        self.assert_user_folder_untouched()
        self.assertTrue(task_dir.is_symlink())
        self.assertEqual(tree(self.run), before)
        self.assertTrue((self.run / MANIFEST).is_file())

    def test_planted_staging_and_old_images_links_are_never_followed(self) -> None:
        """A ``.datbench-staging`` / ``.datbench-old-images`` symlink planted in the run
        directory: not followed, not removed, and every later export still succeeds."""
        for name, export in (
            ("datbench", lambda: self.export(self.datbench_source(), self.run)),
            ("vistoolbench", lambda: self.vtb_export(VTB_SAMPLE, self.run)),
        ):
            for with_export in (True, False):
                with self.subTest(benchmark=name, earlier_export=with_export):
                    shutil.rmtree(self.run, ignore_errors=True)
                    self.run.mkdir()
                    if with_export:
                        self.assertEqual(export().exit_code, 0)
                    for planted in (".datbench-staging", ".datbench-old-images"):
                        (self.run / planted).symlink_to(self.user)
                    for _ in range(2):
                        result = export() if with_export else self._forced(name, export)
                        self.assertEqual(result.exit_code, 0, result.stderr)
                        self.assertTrue((self.run / MANIFEST).is_file())
                    self.assert_user_folder_untouched()
                    for planted in (".datbench-staging", ".datbench-old-images"):
                        self.assertTrue((self.run / planted).is_symlink(), planted)

    def _forced(self, name: str, export: Any) -> Any:
        if name == "datbench":
            return self.export(self.datbench_source(), self.run, "--force")
        return self.vtb_export(VTB_SAMPLE, self.run, "--force")


class PipeInRunDirectoryTests(_Tmp):
    """A pipe at a run directory's own file (not one the user named with --out) is refused
    before any work: opening it to append waited for a reader, so send and agent hung; view
    hung on report.html, and score and make-judge-tasks refused it only after all the work."""

    def refused(self, *args: str) -> str:
        # In a process of its own: a regression hangs, and the timeout fails the test.
        done = subprocess.run(
            cli_command(*args), env=cli_env(), capture_output=True, text=True, timeout=60
        )
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertNotIn("Traceback", done.stderr)
        return done.stderr

    def assert_pipe_refused(self, run: Path, name: str, *args: str) -> None:
        fifo = run / name
        fifo.unlink(missing_ok=True)
        os.mkfifo(fifo)
        stderr = self.refused(*args)
        self.assertIn(f"{name}, but a pipe or device, not a file", stderr)
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
        fifo.unlink()

    def test_default_outputs_of_every_command(self) -> None:
        datbench = self.tmp / "datbench"
        self.assertEqual(self.export(self.datbench_source(), datbench).exit_code, 0)
        vtb = self.tmp / "vtb"
        self.assertEqual(self.vtb_export(VTB_SAMPLE, vtb).exit_code, 0)
        official = self.tmp / "official.json"
        official.write_text("[]")
        for run in (datbench, vtb):
            with self.subTest(run=run.name):
                shutil.copy(
                    (SAMPLE if run is datbench else VTB_SAMPLE) / "responses.jsonl",
                    run / "responses.jsonl",
                )
                self.assert_pipe_refused(
                    run, "judge_tasks.jsonl", "make-judge-tasks", "-d", str(run)
                )
                self.assert_pipe_refused(
                    run, "report.json", "score", "-d", str(run), "--allow-missing"
                )
                self.assert_pipe_refused(
                    run, "report.html", "score", "-d", str(run), "--allow-missing", "--html"
                )
                run_cli("score", "-d", str(run), "--allow-missing", "-q")
                self.assertTrue((run / "report.json").is_file())
                self.assert_pipe_refused(run, "report.html", "view", str(run))
        (vtb / "responses.jsonl").unlink()
        self.assert_pipe_refused(
            vtb, "responses.jsonl", "import-responses", str(official), "-d", str(vtb)
        )

    def test_send_default_output(self) -> None:
        run = self.tmp / "run"
        self.assertEqual(self.export(self.datbench_source(), run).exit_code, 0)
        requests = run / "requests" / "tasks.openai.00001.jsonl"
        requests.parent.mkdir()
        requests.write_text('{"custom_id": "a", "body": {"model": "m", "messages": []}}\n')
        self.assert_pipe_refused(
            run, "responses.jsonl", "send", str(requests), "--base-url", "http://127.0.0.1:9"
        )

    def test_agent_journals(self) -> None:
        for name in ("trajectories.jsonl", "responses.jsonl"):
            with self.subTest(name=name):
                run = self.tmp / name
                self.assertEqual(self.vtb_export(VTB_SAMPLE, run).exit_code, 0)
                os.mkfifo(run / name)
                stderr = self.refused(
                    "agent", "-d", str(run), "--base-url", "http://127.0.0.1:9", "--model", "m",
                    "--no-code-tools",
                )  # fmt: skip
                self.assertIn(f"{name} is not a regular file", stderr)
                self.assertTrue(stat.S_ISFIFO(os.lstat(run / name).st_mode))


class FailedExportKeepsTheEarlierOneTests(_Tmp):
    """An export whose last row is bad stops before the earlier export is touched."""

    def test_vistoolbench_bad_image_cell_in_the_last_row(self) -> None:
        run = self.tmp / "run"
        self.assertEqual(self.vtb_export(VTB_SAMPLE, run).exit_code, 0)
        before = tree(run)
        rows = sample_rows()
        source = self.vtb_source(rows)
        last = len(rows) - 1
        bad = [[{"bytes": None, "path": str(self.secret)}]] + [
            [] for _ in rows[last]["images_by_turn"][1:]
        ]
        set_image_cells(source / "test.parquet", "images_by_turn", {last: bad})
        line = self.error_line(self.vtb_export(source, run))
        self.assertIn("outside the dataset's folder", line)
        self.assertEqual(tree(run), before)
        self.assertEqual(sorted(p.name for p in run.iterdir() if p.name.startswith(".")), [])

    def test_datbench_bad_row_at_the_end(self) -> None:
        run = self.tmp / "run"
        self.assertEqual(self.export(self.datbench_source(), run).exit_code, 0)
        before = tree(run)
        rows = [make_row("a"), make_row("b"), {**make_row("c"), "question": None}]
        source = make_dataset(self.tmp / "src2", {"math": rows})
        self.error_line(self.export(source, run))
        self.assertEqual(tree(run), before)
        self.assertEqual(sorted(p.name for p in run.iterdir() if p.name.startswith(".")), [])


class OutputOntoInputTests(_Tmp):
    def setUp(self) -> None:
        super().setUp()
        self.run = self.tmp / "run"
        self.assertEqual(self.export(self.datbench_source(), self.run).exit_code, 0)
        (self.run / "responses.jsonl").write_text(
            '{"id": "a", "raw_output": "yes"}\n{"id": "b", "raw_output": "no"}\n'
        )
        self.before = tree(self.run)

    def test_outputs_that_are_inputs_are_refused(self) -> None:
        cases = [
            ["score", "-o", "responses.jsonl"],
            ["score", "-o", "references.jsonl"],
            ["score", "-o", "tasks.jsonl"],
            ["make-judge-tasks", "--out", "responses.jsonl"],
        ]
        for args in cases:
            with self.subTest(args=args):
                command, flag, name = args
                result = run_cli(command, "-d", str(self.run), flag, str(self.run / name))
                self.assertRegex(
                    self.error_line(result), "is an input of this command|run directory.s"
                )
                self.assertEqual(tree(self.run), self.before)

    def test_send_onto_its_request_file_is_refused(self) -> None:
        requests = self.tmp / "requests.jsonl"
        requests.write_text('{"custom_id": "a", "body": {"model": "m", "messages": []}}\n')
        before = requests.read_bytes()
        result = run_cli(
            "send", str(requests), "--base-url", "http://127.0.0.1:9", "-o", str(requests)
        )
        self.assertIn("is an input of this command", self.error_line(result))
        self.assertEqual(requests.read_bytes(), before)

    def test_send_onto_a_hard_link_of_a_run_file_is_refused(self) -> None:
        # send appends: through a second name of tasks.jsonl it would write into the export.
        requests = self.run / "requests" / "tasks.openai.00001.jsonl"
        requests.parent.mkdir()
        requests.write_text('{"custom_id": "a", "body": {"model": "m", "messages": []}}\n')
        before = tree(self.run)
        link = self.tmp / "answers.jsonl"
        os.link(self.run / "tasks.jsonl", link)
        result = run_cli("send", str(requests), "--base-url", "http://127.0.0.1:9", "-o", str(link))
        self.assertIn("the run directory's tasks.jsonl", self.error_line(result))
        self.assertEqual(tree(self.run), before)

    def test_devices_pipes_and_descriptor_links_are_written_directly(self) -> None:
        # A private null device, so a regression replaces this node, never the system's.
        device = self.tmp / "null"
        try:
            os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        except PermissionError:
            self.skipTest("creating a device node needs root")
        link = self.tmp / "null-link"
        link.symlink_to(device)
        for target in (device, link):
            with self.subTest(target=target.name):
                result = run_cli("score", "-d", str(self.run), "-o", str(target), "-q")
                self.assertEqual(result.exit_code, 0, result.stderr)
                self.assertTrue(stat.S_ISCHR(os.lstat(device).st_mode))
        self.assertTrue(link.is_symlink())
        fifo = self.tmp / "fifo"
        os.mkfifo(fifo)
        received: list[bytes] = []
        reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
        reader.start()
        result = run_cli("score", "-d", str(self.run), "-o", str(fifo), "-q")
        reader.join(60)
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
        self.assertIn("summary", json.loads(received[0]))
        # /proc/self/fd/1 behind a symlink: the report reaches the process's stdout.
        out_link = self.tmp / "stdout-link"
        out_link.symlink_to("/proc/self/fd/1")
        done = subprocess.run(
            cli_command("score", "-d", str(self.run), "-o", str(out_link), "-q"),
            env=cli_env(),
            capture_output=True,
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("summary", json.loads(done.stdout))

    def test_dev_stdout_appended_to_a_log_keeps_the_log(self) -> None:
        # `datbench score -o /dev/stdout >> scores.log`: the report was written by opening
        # /dev/stdout anew with truncation, so the log's earlier lines were lost.
        log = self.tmp / "scores.log"
        log.write_text("earlier line\n")
        with log.open("ab") as handle:
            done = subprocess.run(
                cli_command("score", "-d", str(self.run), "--allow-missing", "-o", "/dev/stdout"),
                env=cli_env(),
                stdout=handle,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
            )
        self.assertEqual(done.returncode, 0, done.stderr)
        first, rest = log.read_text().split("\n", 1)
        self.assertEqual(first, "earlier line")
        self.assertIn("summary", json.loads(rest.split("\n}\n", 1)[0] + "\n}"))

    def test_a_users_link_under_dev_is_not_a_descriptor_link(self) -> None:
        # /dev/shm is world-writable: a link made there is the user's, not the system's
        # /dev/stdout; it was written through (the file it names truncated and replaced).
        shm = Path("/dev/shm")
        if not (shm.is_dir() and os.access(shm, os.W_OK)):
            self.skipTest("no writable /dev/shm")
        precious = self.tmp / "precious.txt"
        precious.write_text("not yours")
        link = shm / f"datbench-test-{os.getpid()}-{threading.get_ident()}"
        link.symlink_to(precious)
        self.addCleanup(link.unlink)
        scored = run_cli("score", "-d", str(self.run), "--allow-missing", "-q")
        self.assertEqual(scored.exit_code, 0, scored.stderr)
        other = Path(shutil.copytree(self.run, self.tmp / "other"))
        for args in (
            ["score", "-d", str(self.run), "-o", str(link)],
            ["score", "-d", str(self.run), "--html", str(link)],
            ["compare", str(other), str(self.run), "-o", str(link)],
            ["leaderboard", f"a={other}", f"b={self.run}", "--csv", str(link)],
        ):
            with self.subTest(args=args[:1] + args[-2:-1]):
                self.assertIn("symlink", self.error_line(run_cli(*args, "-q")))
                self.assertEqual(precious.read_text(), "not yours")
                self.assertTrue(link.is_symlink())

    def test_a_descriptor_link_onto_a_run_file_is_refused(self) -> None:
        # /proc/self/fd/N and /dev/stdout lead to the file opened there: the export's files
        # are as protected behind them as when named directly.
        for name, via_stdout in (("tasks.jsonl", False), ("references.jsonl", True)):
            with self.subTest(name):
                fd = os.open(self.run / name, os.O_WRONLY | os.O_APPEND)
                out = "/dev/stdout" if via_stdout else f"/proc/self/fd/{fd}"
                try:
                    done = subprocess.run(
                        cli_command("score", "-d", str(self.run), "-o", out, "-q"),
                        env=cli_env(),
                        stdout=fd if via_stdout else subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        pass_fds=(fd,),
                    )
                finally:
                    os.close(fd)
                self.assertEqual(done.returncode, 2, done.stderr)
                self.assertIn(f"the run directory's {name}", done.stderr.decode())
                self.assertEqual(tree(self.run), self.before)


class UmaskTests(_Tmp):
    def test_every_file_follows_the_umask(self) -> None:
        run = self.tmp / "run"
        done = subprocess.run(
            cli_command(
                "export-tasks", "math", "--source", str(SAMPLE), "-d", str(run),
                "--format", "openai", "--model", "m",
            ),
            env=cli_env(), capture_output=True, umask=0o077,
        )  # fmt: skip
        self.assertEqual(done.returncode, 0, done.stderr)
        shutil.copy(SAMPLE / "responses.jsonl", run / "responses.jsonl")
        done = subprocess.run(
            cli_command("score", "-d", str(run), "-q"), env=cli_env(), capture_output=True,
            umask=0o077,
        )  # fmt: skip
        self.assertEqual(done.returncode, 0, done.stderr)
        modes = {str(p.relative_to(run)): stat.S_IMODE(p.stat().st_mode) for p in run.rglob("*")}
        modes.pop("responses.jsonl")
        for name, mode in modes.items():
            self.assertEqual(mode & 0o077, 0, f"{name} is {oct(mode)}")


class UntrustedTextTests(_Tmp):
    def test_markup_and_escape_sequences_in_dataset_names_print_as_plain_text(self) -> None:
        hostile = "[/bold][link=x]evil\x1b]8;;http://e.example\x1b\\x\x1b]0;title\x07\x1b[31m"
        rows = [make_row("a", dataset=hostile), make_row("b\x1b", dataset="chartqa")]
        source = self.datbench_source(rows[:1])
        run = self.tmp / "run"
        self.assertEqual(self.export(source, run).exit_code, 0)
        (run / "responses.jsonl").write_text('{"id": "a", "raw_output": "yes"}\n')
        result = run_cli("score", "-d", str(run))
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertNotIn("\x1b", result.stdout + result.stderr)
        self.assertNotIn("\x07", result.stdout + result.stderr)
        self.assertIn("[/bold][link=x]evil\\x1b]8;;", result.stdout)

    def test_escape_sequences_in_ids_are_escaped_in_messages(self) -> None:
        run = self.tmp / "run"
        self.assertEqual(self.export(self.datbench_source(), run).exit_code, 0)
        judges = run / "judge_responses.jsonl"
        judges.write_text('{"id": "zz\\u001b[2J\\u001b]0;t\\u0007", "raw_judge_output": "?"}\n')
        (run / "responses.jsonl").write_text('{"id": "a", "raw_output": "yes"}\n')
        result = run_cli("check-judge", "-d", str(run))
        self.assertEqual(result.exit_code, 1, result.stderr)
        self.assertNotIn("\x1b", result.stdout + result.stderr)
        self.assertIn("zz\\x1b[2J", result.stderr)

    def test_a_very_long_id_is_cut_in_messages(self) -> None:
        run = self.tmp / "run"
        self.assertEqual(self.export(self.datbench_source(), run).exit_code, 0)
        long_id = "z" * 1_000_000
        (run / "judge_responses.jsonl").write_text(
            json.dumps({"id": long_id, "raw_judge_output": "?"}) + "\n"
        )
        (run / "responses.jsonl").write_text('{"id": "a", "raw_output": "yes"}\n')
        result = run_cli("check-judge", "-d", str(run))
        self.assertEqual(result.exit_code, 1, result.stderr)
        self.assertLess(len(result.stderr), 1000)
        self.assertIn("z" * 120 + "... (1000000 characters)", result.stderr)

    def test_very_long_model_and_dataset_names_are_cut_in_warnings_and_tables(self) -> None:
        # A 1 MB model name in each of two response lines was echoed whole, twice over, in the
        # warning that the file mixes models; a 1 MB dataset name filled a table cell.
        rows = [make_row("a", dataset="d" * 1_000_000), make_row("b")]
        run = self.tmp / "run"
        self.assertEqual(self.export(self.datbench_source(rows), run).exit_code, 0)
        lines = [
            {"id": "a", "raw_output": "yes", "model": "x" * 1_000_000},
            {"id": "b", "raw_output": "yes", "model": "y" * 1_000_000 + "-tail"},
        ]
        (run / "responses.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
        result = run_cli("score", "-d", str(run))
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertLess(len(result.stderr), 20_000)
        self.assertLess(len(result.stdout), 20_000)
        self.assertIn("characters not shown", result.stderr)
        self.assertIn("-tail (1)", result.stderr)  # the end of a long message stays
        self.assertIn("characters not shown", result.stdout)
        self.assertIn("| 100.0", result.stdout)  # the numbers of the row stay whole

    def test_a_newline_in_an_id_cannot_forge_a_line_of_its_own(self) -> None:
        run = self.tmp / "run"
        self.assertEqual(self.export(self.datbench_source(), run).exit_code, 0)
        forged = '{"id": "zz\\nerror: forged\\r", "raw_judge_output": "?"}\n'
        (run / "judge_responses.jsonl").write_text(forged + forged)
        (run / "responses.jsonl").write_text('{"id": "a", "raw_output": "yes"}\n')
        result = run_cli("check-judge", "-d", str(run))
        self.assertEqual(result.exit_code, 1, result.stderr)
        lines = result.stderr.splitlines()
        self.assertEqual(
            [line.split(":")[0] for line in lines], ["warning"] * len(lines[:-1]) + ["error"]
        )
        self.assertIn("zz\\x0aerror: forged\\x0d", lines[-1])


class NonUtf8PathTests(_Tmp):
    """A run directory whose name is not UTF-8 (a Latin-1 name) is recorded as text."""

    def test_every_output_of_a_run_directory_named_in_latin_1(self) -> None:
        # score, compare, leaderboard and view stopped with an internal error ("str is not
        # valid UTF-8: surrogates not allowed"): the outputs record the run's paths.
        name = os.fsdecode(b"caf\xe9-run")
        run = self.tmp / name
        try:
            run.mkdir()
        except (OSError, UnicodeError):
            self.skipTest("this file system refuses names that are not UTF-8")
        self.assertEqual(self.export(self.datbench_source(), run, "-q").exit_code, 0)
        (run / "responses.jsonl").write_text('{"id": "a", "raw_output": "yes"}\n')
        scored = run_cli("score", "-d", str(run), "--allow-missing", "-q")
        self.assertEqual(scored.exit_code, 0, scored.stderr)
        two = self.tmp / os.fsdecode(b"caf\xe9-two")
        shutil.copytree(run, two)
        results = {
            "compare": run_cli("compare", str(run), str(two), "-o", str(self.tmp / "c.json")),
            "compare page": run_cli(
                "compare", str(run), str(two), "--html", str(self.tmp / "c.html"), "-q"
            ),
            "leaderboard": run_cli(
                "leaderboard", str(run), str(two), "--csv", str(self.tmp / "l.csv"), "-q"
            ),
            "view": run_cli("view", str(run), "-q"),
        }
        for what, result in results.items():
            self.assertEqual(result.exit_code, 0, f"{what}: {result.stderr}")
        report = json.loads((run / "report.json").read_bytes())
        self.assertIn("caf\\udce9-run", report["provenance"]["inputs"]["responses"]["path"])
        json.loads((self.tmp / "c.json").read_bytes())
        (self.tmp / "l.csv").read_bytes().decode("utf-8")
        (run / "report.html").read_bytes().decode("utf-8")
        page = (self.tmp / "c.html").read_bytes().decode("utf-8")
        self.assertTrue("caf%E9-run/images/" in page, "an image link names the file's bytes")


class ResponseFileShapeTests(_Tmp):
    """A torn last line is forgiven only after complete lines."""

    def setUp(self) -> None:
        super().setUp()
        self.run = self.tmp / "run"
        self.assertEqual(self.export(self.datbench_source(), self.run).exit_code, 0)

    def score(self, data: bytes) -> Any:
        (self.run / "responses.jsonl").write_bytes(data)
        return run_cli("score", "-d", str(self.run), "--json")

    def test_whole_file_shapes_that_are_not_jsonl(self) -> None:
        line = b'{"id": "a", "raw_output": "yes"}'
        cases = {
            "CR-only": line + b"\r" + line.replace(b'"a"', b'"b"') + b"\r",
            "glued": line + line.replace(b'"a"', b'"b"'),
            "gzip": gzip.compress(line + b"\n"),
            "binary": bytes(range(1, 200)),
        }
        for name, data in cases.items():
            with self.subTest(name):
                self.error_line(self.score(data))

    def test_a_torn_tail_after_complete_lines_is_still_forgiven(self) -> None:
        (self.run / "responses.jsonl").write_bytes(
            b'{"id": "a", "raw_output": "yes"}\n{"id": "b", "raw'
        )
        result = run_cli("score", "-d", str(self.run), "--json", "--allow-missing")
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertIn("incomplete", result.stderr)


class DatasetTextDefectTests(_Tmp):
    def test_null_question_or_prefix_is_a_named_defect(self) -> None:
        for field, value in (
            ("question", None),
            ("prompt_format", {"prefix": None, "suffix": "x"}),
        ):
            with self.subTest(field=field):
                shutil.rmtree(self.tmp / "src", ignore_errors=True)
                rows = [make_row("ok"), make_row("bad", **{field: value})]
                result = self.export(self.datbench_source(rows), self.tmp / "run")
                line = self.error_line(result)
                self.assertIn("'bad'", line)
                self.assertIn("not text", line)

    def test_ids_differing_only_in_case_get_distinct_image_files(self) -> None:
        run = self.tmp / "run"
        rows = [make_row("Sample_A"), make_row("sample_a"), make_row("SAMPLE_A")]
        result = self.export(self.datbench_source(rows), run)
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertIn("only in case", result.stderr)
        names = [p.name.casefold() for p in (run / "images").iterdir()]
        self.assertEqual(len(set(names)), 3)
        tasks = [json.loads(x) for x in (run / "tasks.jsonl").read_text().splitlines()]
        self.assertEqual(len({t["image"].casefold() for t in tasks}), 3)


class TamperedManifestTests(_Tmp):
    def test_tampered_manifests_are_input_errors(self) -> None:
        run = self.tmp / "run"
        self.assertEqual(self.export(self.datbench_source(), run).exit_code, 0)
        (run / "responses.jsonl").write_text('{"id": "a", "raw_output": "yes"}\n')
        good = json.loads((run / MANIFEST).read_text())
        edits = {
            "unknown benchmark": {**good, "benchmark": "other"},
            "non-string benchmark": {**good, "benchmark": ["datbench"]},
            "files null": {**good, "files": None},
            "files removed": {k: v for k, v in good.items() if k != "files"},
        }
        for name, manifest in edits.items():
            with self.subTest(name):
                (run / MANIFEST).write_text(json.dumps(manifest))
                self.error_line(run_cli("score", "-d", str(run), "-o", str(self.tmp / "r.json")))
                self.error_line(run_cli("make-judge-tasks", "-d", str(run)))
        self.assertFalse((self.tmp / "r.json").exists())

    def test_manifest_fields_of_another_type_are_named_with_their_line(self) -> None:
        run = self.tmp / "run"
        self.assertEqual(self.export(self.datbench_source(), run).exit_code, 0)
        (run / "responses.jsonl").write_text('{"id": "a", "raw_output": "yes"}\n')
        good = json.loads((run / MANIFEST).read_text())
        for name, value in {"split": 5, "revision": [], "source": None, "options": "x"}.items():
            with self.subTest(name):
                text = json.dumps({**good, name: value}, indent=2)
                line = text[: text.index(f'"{name}":')].count("\n") + 1
                (run / MANIFEST).write_text(text)
                for command in (["score", "-o", str(self.tmp / "r.json")], ["make-judge-tasks"]):
                    error = self.error_line(run_cli(*command, "-d", str(run)))
                    self.assertIn(f'{MANIFEST}:{line}: "{name}" must be ', error)
        self.assertFalse((self.tmp / "r.json").exists())

    def test_a_context_policy_of_another_type_or_value_is_refused(self) -> None:
        run = self.tmp / "run"
        self.assertEqual(self.vtb_export(self.vtb_source(), run).exit_code, 0)
        good = json.loads((run / MANIFEST).read_text())
        for value in (None, 5, ["golden_history"], "golden"):
            with self.subTest(value=value):
                (run / MANIFEST).write_text(json.dumps({**good, "context_policy": value}))
                error = self.error_line(run_cli("make-judge-tasks", "-d", str(run)))
                self.assertIn('"context_policy" must be ', error)
                self.assertIn(f"{MANIFEST}:1: ", error)


class RunFileKindTests(_Tmp):
    def test_a_folder_or_device_link_as_an_optional_run_file_is_refused(self) -> None:
        # score read a folder or a link to /dev/zero named judge_responses.jsonl (or
        # judge_digests.json) as no file: every verdict "missing", exit 0.
        run = self.tmp / "run"
        self.assertEqual(self.export(self.datbench_source(), run).exit_code, 0)
        (run / "responses.jsonl").write_text('{"id": "a", "raw_output": "yes"}\n')
        commands = {
            "judge_responses.jsonl": ["score", "-o", str(self.tmp / "r.json")],
            "judge_digests.json": ["make-judge-tasks"],
        }
        for name, command in commands.items():
            for kind in ("folder", "device link"):
                with self.subTest(name=name, kind=kind):
                    path = run / name
                    if path.is_file():
                        path.unlink()
                    if kind == "folder":
                        path.mkdir()
                    else:
                        path.symlink_to("/dev/zero")
                    error = self.error_line(run_cli(*command, "-d", str(run)))
                    self.assertIn(f"{path}: is ", error)
                    path.rmdir() if kind == "folder" else path.unlink()
        self.assertFalse((self.tmp / "r.json").exists())

    def test_an_agent_json_that_is_no_object_or_no_file_is_refused(self) -> None:
        # score (its provenance) and agent (the settings check) read such an agent.json as
        # no agent run: the settings check was skipped, the protocol record dropped.
        run = self.tmp / "run"
        self.assertEqual(self.vtb_export(self.vtb_source(), run).exit_code, 0)
        shutil.copy(VTB_SAMPLE / "responses.jsonl", run / "responses.jsonl")
        out = self.tmp / "r.json"
        agent = run / "agent.json"
        agent.write_text("[1]\n")
        error = self.error_line(run_cli("score", "-d", str(run), "--allow-missing", "-o", str(out)))
        self.assertIn(f"{agent}:1: is not the JSON object `datbench agent` writes", error)
        agent.unlink()
        agent.mkdir()
        error = self.error_line(run_cli("score", "-d", str(run), "--allow-missing", "-o", str(out)))
        self.assertIn(f"{agent}: is not a regular file", error)
        self.assertFalse(out.exists())

    def test_a_report_benchmark_of_another_type_is_named_with_its_line(self) -> None:
        run = self.tmp / "run"
        self.assertEqual(self.export(self.datbench_source(), run).exit_code, 0)
        (run / "responses.jsonl").write_text('{"id": "a", "raw_output": "yes"}\n')
        good = self.tmp / "good.json"
        self.assertEqual(
            run_cli("score", "-d", str(run), "-o", str(good), "--allow-missing").exit_code, 0
        )
        bad = self.tmp / "bad.json"
        bad.write_text(json.dumps({**json.loads(good.read_text()), "benchmark": 5}, indent=2))
        line = bad.read_text().count("\n")  # the last key, on the last line but one
        for args in (
            ["view", str(bad), "-o", str(self.tmp / "p.html")],
            ["compare", str(good), str(bad)],
            ["leaderboard", str(good), str(bad)],
        ):
            with self.subTest(args[0]):
                error = self.error_line(run_cli(*args))
                self.assertIn(f'{bad}:{line}: "benchmark" must be a string, got 5', error)


_HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(60)
"""


class RunDirectoryLockTests(_Tmp):
    def test_a_held_run_directory_is_refused_naming_the_holder(self) -> None:
        run = self.tmp / "run"
        source = self.datbench_source()
        self.assertEqual(self.export(source, run).exit_code, 0)
        before = tree(run)
        holder = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, str(run)], stdout=subprocess.PIPE, text=True
        )
        self.addCleanup(holder.wait)
        self.addCleanup(holder.kill)
        assert holder.stdout is not None
        self.assertEqual(holder.stdout.readline().strip(), "locked")
        for args in (
            ["export-tasks", "math", "--source", str(source), "-d", str(run)],
            ["make-judge-tasks", "-d", str(run)],
            ["score", "-d", str(run)],
        ):
            with self.subTest(args[0]):
                line = self.error_line(run_cli(*args))
                self.assertIn("in use by", line)
                self.assertIn(str(holder.pid), line)
                self.assertEqual(tree(run), before)

    def test_a_descriptor_link_into_a_held_run_directory_is_refused(self) -> None:
        # `send -o /proc/self/fd/3 3>>run/responses.jsonl` writes the run's file in place:
        # it takes that run's lock as `-o run/responses.jsonl` does (it appended unlocked).
        run = self.tmp / "run"
        self.assertEqual(self.export(self.datbench_source(), run).exit_code, 0)
        (run / "responses.jsonl").write_text("")
        requests = self.tmp / "requests.jsonl"
        requests.write_text('{"custom_id": "a", "body": {"model": "m", "messages": []}}\n')
        holder = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, str(run)], stdout=subprocess.PIPE, text=True
        )
        self.addCleanup(holder.wait)
        self.addCleanup(holder.kill)
        assert holder.stdout is not None
        self.assertEqual(holder.stdout.readline().strip(), "locked")
        before = tree(run)
        fd = os.open(run / "responses.jsonl", os.O_WRONLY | os.O_APPEND)
        try:
            done = subprocess.run(
                cli_command(
                    "send", str(requests), "--base-url", "http://127.0.0.1:9",
                    "--max-retries", "0", "-o", f"/proc/self/fd/{fd}",
                ),
                env=cli_env(),
                capture_output=True,
                text=True,
                pass_fds=(fd,),
            )  # fmt: skip
        finally:
            os.close(fd)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn("in use by", done.stderr)
        self.assertIn(str(holder.pid), done.stderr)
        self.assertEqual(tree(run), before)

    def test_an_export_refused_the_lock_keeps_the_new_folder_the_winner_holds(self) -> None:
        """Two exports into a folder that does not exist both see it absent and make it; the
        one refused the lock must not remove it from under the one holding it."""
        import fcntl
        from unittest import mock

        from datbench_cli.files import rundir

        run = self.tmp / "new-run"
        real = rundir.hold_lock
        winner: list[int] = []

        def won_meanwhile(directory: Path, stage: str, *, shared: bool = False) -> Any:
            # The other export takes the lock between this one's mkdir and its flock.
            fd = os.open(directory, os.O_RDONLY)
            fcntl.flock(fd, fcntl.LOCK_EX)
            winner.append(fd)
            return real(directory, stage, shared=shared)

        with mock.patch.object(rundir, "hold_lock", won_meanwhile):
            with (
                self.assertRaises(Exception) as refused,
                RunDir(run).lock("export-tasks", create=True),
            ):
                pass
        self.addCleanup(os.close, winner[0])
        self.assertIn("in use by", str(refused.exception))
        self.assertTrue(run.is_dir(), "the refused export removed the winner's folder")
        self.assertEqual(os.stat(run).st_ino, os.fstat(winner[0]).st_ino)

    def test_two_concurrent_exports_never_both_succeed_with_a_broken_run(self) -> None:
        from tests.run_builders import make_image_dataset

        first = make_image_dataset(self.tmp / "ds1", 300, image_bytes=20_000)
        run = self.tmp / "run"
        for _ in range(2):
            processes = [
                subprocess.Popen(
                    cli_command("export-tasks", "chart", "document", "math", "--source", str(source), "-d", str(run)),
                    env=cli_env(), stderr=subprocess.PIPE, text=True,
                )
                for source in (first, first)
            ]  # fmt: skip
            codes = [p.wait(300) for p in processes]
            errors = [p.stderr.read() for p in processes if p.stderr]
            self.assertIn(0, codes, errors)
            for code, err in zip(codes, errors, strict=True):
                self.assertIn(code, (0, 2), err)
                if code == 2:
                    self.assertIn("in use by", err)
            manifest = RunDir(run).read_manifest()
            tasks = [json.loads(x) for x in (run / "tasks.jsonl").read_text().splitlines()]
            self.assertEqual(len(tasks), manifest["counts"]["tasks"])
            for task in tasks:
                self.assertTrue((run / task["image"]).is_file(), task["image"])


class MessageTests(_Tmp):
    def test_clear_sentences(self) -> None:
        run = self.tmp / "run"
        self.assertEqual(self.export(self.datbench_source(), run).exit_code, 0)
        afile = self.tmp / "afile"
        afile.write_text("x")
        cases = {
            "is a file, not a run directory": ["score", "-d", str(afile)],
            "--sample-timeout must be": ["score", "-d", str(run), "--sample-timeout", "-1"],
            "--limit": [
                "export-tasks", "math", "--source", str(SAMPLE), "-d", str(run), "--limit", "0"],
            "--num-shards must be at least 1": [
                "export-tasks", "math", "--source", str(SAMPLE), "-d", str(run),
                "--num-shards", "0", "--shard-index", "0"],
        }  # fmt: skip
        for fragment, args in cases.items():
            with self.subTest(fragment):
                self.assertIn(fragment, self.error_line(run_cli(*args)))

    def test_data_files_outside_the_dataset_are_refused_briefly(self) -> None:
        source = self.tmp / "ds"
        shutil.copytree(SAMPLE, source)
        outside = self.tmp / "outside.parquet"
        shutil.copy(source / "math" / "test-00000-of-00001.parquet", outside)
        card = source / "README.md"
        text = card.read_text()
        for path in (str(outside), "../outside.parquet"):
            with self.subTest(path=path):
                card.write_text(text.replace("math/test-00000-of-00001.parquet", path))
                line = self.error_line(self.export(source, self.tmp / "r"))
                self.assertIn("outside the dataset's folder", line)
                self.assertLess(len(line), 400)

    def test_corrupt_or_truncated_parquet_is_one_sentence_naming_the_problem(self) -> None:
        for name in ("truncated", "corrupt"):
            with self.subTest(name):
                source = self.tmp / name
                shutil.copytree(SAMPLE, source)
                parquet = source / "math" / "test-00000-of-00001.parquet"
                data = bytearray(parquet.read_bytes())
                if name == "truncated":
                    data = data[: len(data) // 2]
                else:
                    for i in range(100, len(data) - 2000, 7):
                        data[i] ^= 0x5A
                parquet.write_bytes(bytes(data))
                line = self.error_line(self.export(source, self.tmp / "r"))
                self.assertGreater(len(line.removeprefix("error: ").strip()), 20)
                self.assertIn(str(source), line)
