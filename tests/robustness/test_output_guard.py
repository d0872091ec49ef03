"""Nothing lost, round 3 (issue 31): one output guard and one run-directory lock for every
command, inputs read as bounded streams, for both benchmarks.

- :class:`OutputGuardTests`: each output flag of each writing command pointed at each input
  and each file of the run directory (and at the directory itself, and a planted symlink) is
  refused in one sentence naming the file, and nothing changes.
- :class:`NoMatchTests`: responses of another run never empty a run's judge tasks or responses.
- :class:`LockTests`: every writer started while the agent (or a send) writes the run directory
  is refused at once, naming the holder.
- :class:`StreamTests`: pipes and ``/dev/stdin`` as inputs; endless inputs under an
  address-space limit end in one sentence, exit 2.
- :class:`AlternatingKillTests`: two exports SIGKILLed by turns into one directory leave one
  of them whole once the next command has read the directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path
from typing import Any, ClassVar
from unittest import mock

from tests.cli_helpers import ROOT, SAMPLE, run_cli
from tests.run_builders import (
    cli_command,
    cli_env,
    make_image_dataset,
    run_real_cli,
    tree_digest,
)
from tests.vtb_support import SAMPLE_DIR as VTB_SAMPLE

VTB_OFFICIAL = [{"id": "vtb-a-medical-001", "task_id": "vtb-a-medical-001", "model_answer": "x"}]
# The files each command writes in a run directory (every other run file is refused).
OWNS = {
    "score": {"report.json"},
    "make-judge-tasks": {"judge_tasks.jsonl"},
    "compare": set(),
    "view": set(),
    "import-responses": {"responses.jsonl"},
    "send": {"responses.jsonl", "judge_responses.jsonl"},
}
_TEMPLATES: dict[str, Path] = {}


def _build(kind: str, root: Path) -> Path:
    """A finished run of ``kind`` (export, responses, judge tasks, judge responses, report)."""
    run = root / kind
    source, sample = (
        ("math", SAMPLE) if kind == "datbench" else ("vistoolbench", VTB_SAMPLE)
    )  # fmt: skip
    done = run_cli("export-tasks", source, "--source", str(sample), "-d", str(run), "-q")
    assert done.exit_code == 0, done.stderr
    for name in ("responses.jsonl", "judge_responses.jsonl"):
        shutil.copy(sample / name, run / name)
    for args in (["make-judge-tasks"], ["score", "--allow-missing"]):
        done = run_cli(*args, "-d", str(run), "-q")
        assert done.exit_code in (0, 1), done.stderr
    return run


def tree(*roots: Path) -> dict[str, str]:
    """Every file under ``roots`` (links as their target) with its content's digest."""
    found = {}
    for root in roots:
        paths = [root] if root.is_file() else sorted(root.rglob("*"))
        for path in paths:
            if path.is_symlink():
                found[str(path)] = "-> " + os.readlink(path)
            elif path.is_file():
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


class _Runs(unittest.TestCase):
    templates: ClassVar[Path]

    @classmethod
    def setUpClass(cls) -> None:
        if not _TEMPLATES:
            holder = Path(tempfile.mkdtemp())
            for kind in ("datbench", "vistoolbench"):
                _TEMPLATES[kind] = _build(kind, holder)

    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def run_copy(self, kind: str, name: str = "run") -> Path:
        return Path(shutil.copytree(_TEMPLATES[kind], self.tmp / f"{kind}-{name}", symlinks=True))

    def assert_refused(self, result: Any, *names: str) -> str:
        """Exit 2 and one error line naming each of ``names``."""
        self.assertEqual(result.exit_code, 2, result.stdout + result.stderr)
        lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        self.assertEqual(len(lines), 1, result.stderr)
        for name in names:
            self.assertIn(name, lines[0])
        return lines[0]


class OutputGuardTests(_Runs):
    def writers(self, run: Path, other: Path, kind: str) -> list[tuple[str, list[str], str]]:
        """(command, arguments before the flag, flag) of every output option; the input
        files outside the run directory are the arguments ending in .json/.jsonl."""
        requests = self.tmp / "requests.jsonl"
        requests.write_text('{"custom_id": "a", "body": {"model": "m", "messages": []}}\n')
        d = ["-d", str(run)]
        report_b = str(other / "report.json")
        answers = shutil.copy(run / "responses.jsonl", self.tmp / f"{kind}-answers.jsonl")
        judged = shutil.copy(run / "judge_responses.jsonl", self.tmp / f"{kind}-judged.jsonl")
        scored = [*d, "--allow-missing", str(answers), "--judge-responses", str(judged)]
        cases = [
            ("score", scored, "-o"),
            ("score", scored, "--html"),
            ("make-judge-tasks", [*d, str(answers), "--skip-done", str(judged)], "-o"),
            ("compare", [str(run), report_b], "-o"),
            ("compare", [str(run), report_b], "--html"),
            ("view", [str(run)], "-o"),
            ("send", [str(requests), "--base-url", "http://127.0.0.1:9"], "-o"),
        ]
        if kind == "vistoolbench":
            official = self.tmp / "official.json"
            official.write_text(json.dumps(VTB_OFFICIAL))
            cases.append(("import-responses", [str(official), *d, "--overwrite"], "-o"))
        return cases

    def test_every_output_flag_onto_every_run_file_and_input(self) -> None:
        for kind in ("datbench", "vistoolbench"):
            run, other = self.run_copy(kind), self.run_copy(kind, "other")
            secret = self.tmp / "secret.txt"
            secret.write_text("not yours")
            (run / "planted.json").symlink_to(secret)
            images = sorted((run / "images").rglob("*.*"))
            names = [
                "datbench.json", "tasks.jsonl", "references.jsonl", "responses.jsonl",
                "judge_tasks.jsonl", "judge_responses.jsonl", "report.json",
                "judge_digests.json",  # make-judge-tasks -o wrote its tasks there: score failed
            ]  # fmt: skip
            targets = [(run / n, n) for n in names]
            targets += [(images[0], "images"), (run, "directory"), (run / "planted.json", "link")]
            writers = self.writers(run, other, kind)
            before = tree(self.tmp)
            for command, args, flag in writers:
                inputs = [Path(a) for a in args if a.endswith((".json", ".jsonl"))]
                for target, label in [*targets, *((p, "input") for p in inputs)]:
                    if label in OWNS[command]:
                        continue
                    with self.subTest(kind=kind, command=command, flag=flag, target=label):
                        result = run_cli(command, *args, flag, str(target))
                        self.assert_refused(result, str(target))
                        self.assertEqual(tree(self.tmp), before)

    def test_a_symlinked_default_output_is_named_as_the_output_not_as_an_option(self) -> None:
        run = self.run_copy("datbench")
        secret = self.tmp / "secret.txt"
        secret.write_text("not yours")
        (run / "report.json").unlink(missing_ok=True)
        (run / "report.json").symlink_to(secret)
        line = self.assert_refused(run_cli("score", "-d", str(run)), str(run / "report.json"))
        self.assertTrue(line.startswith("error: the output "), line)  # no -o was given
        line = self.assert_refused(run_cli("score", "-d", str(run), "-o", str(run / "report.json")))
        self.assertTrue(line.startswith("error: --out "), line)
        self.assertEqual(secret.read_text(), "not yours")

    def test_an_output_reached_through_a_folder_link_is_judged_where_it_lands(self) -> None:
        # `elsewhere/images-link/../tasks.jsonl` and `elsewhere/images-link/<image>` name the
        # export's files: the kernel follows the link before `..`, so must the guard.
        run, other = self.run_copy("datbench"), self.run_copy("datbench", "other")
        elsewhere = self.tmp / "elsewhere"
        elsewhere.mkdir()
        (elsewhere / "images-link").symlink_to(run / "images")
        image = sorted((run / "images").iterdir())[0].name
        targets = [
            elsewhere / "images-link" / ".." / "tasks.jsonl",
            elsewhere / "images-link" / image,
            elsewhere / "images-link" / "new.json",
        ]
        before = tree(run)
        for target in targets:
            for command, args in (
                ("score", ["score", "-d", str(run), "--allow-missing", "-o"]),
                ("compare", ["compare", str(other), str(run), "-o"]),
                ("leaderboard", ["leaderboard", f"a={other}", f"b={run}", "--csv"]),
            ):
                with self.subTest(command=command, target=str(target)):
                    self.assert_refused(run_cli(*args, str(target)), str(target))
                    self.assertEqual(tree(run), before)

    def test_two_outputs_naming_one_file(self) -> None:
        run = self.run_copy("datbench")
        page = str(self.tmp / "both.html")
        result = run_cli("score", "-d", str(run), "-o", page, "--html", page)
        self.assert_refused(result, page)
        self.assertFalse(Path(page).exists())

    def test_a_socket_is_refused_before_anything_is_read(self) -> None:
        # Neither a file to replace nor a device or pipe to write in place: it was refused
        # only when the report was saved, after the whole scoring.
        run, other = self.run_copy("datbench"), self.run_copy("datbench", "other")
        sock = socket.socket(socket.AF_UNIX)
        self.addCleanup(sock.close)
        path = self.tmp / "sock"
        sock.bind(str(path))
        from datbench_cli.benchmarks.datbench import stages

        for args in (
            ["score", "-d", str(run), "--allow-missing", "-o", str(path)],
            ["score", "-d", str(run), "--allow-missing", "--html", str(path)],
            ["compare", str(other), str(run), "-o", str(path)],
        ):
            with (
                self.subTest(args=args[:1] + args[-2:-1]),
                mock.patch.object(stages, "score_checked", side_effect=AssertionError("read")),
                mock.patch(
                    "datbench_cli.compare.comparison.compare", side_effect=AssertionError("read")
                ),
            ):
                self.assert_refused(run_cli(*args), str(path))

    def test_a_page_of_a_report_written_to_a_device_is_refused_first(self) -> None:
        # The page is built from the report file: `-o /dev/null --html` scored the run, wrote
        # the report into the device, then failed with "/dev/null: no report here (run
        # `datbench score` first)", exit 2 after writing.
        run = self.run_copy("datbench")
        page = self.tmp / "page.html"
        before = tree(run)
        result = run_cli("score", "-d", str(run), "-o", "/dev/null", "--html", str(page))
        line = self.assert_refused(result, "/dev/null", "--html")
        self.assertNotIn("no report here", line)
        self.assertFalse(page.exists())
        self.assertEqual(tree(run), before)

    def test_two_outputs_naming_one_new_file_through_a_folder_link(self) -> None:
        # Neither exists yet, so only where the paths land tells they are one file: the
        # leaderboard wrote its page over its CSV (exit 0), compare its JSON then refused.
        run, other = self.run_copy("datbench"), self.run_copy("datbench", "other")
        folder = self.tmp / "out"
        folder.mkdir()
        (self.tmp / "out-link").symlink_to(folder)
        direct, linked = str(folder / "both.out"), str(self.tmp / "out-link" / "both.out")
        for args in (
            ["leaderboard", f"a={other}", f"b={run}", "--csv", linked, "--html", direct],
            ["compare", str(other), str(run), "-o", linked, "--html", direct],
        ):
            with self.subTest(command=args[0]):
                self.assert_refused(run_cli(*args), linked)
                self.assertEqual(list(folder.iterdir()), [])

    def test_allowed_outputs_are_written_whole(self) -> None:
        for kind in ("datbench", "vistoolbench"):
            run, other = self.run_copy(kind), self.run_copy(kind, "other")
            with self.subTest(kind=kind):
                out = run / "comparison.json"
                result = run_cli("compare", str(run), str(other), "-o", str(out), "-q")
                self.assertEqual(result.exit_code, 0, result.stderr)
                self.assertEqual(json.loads(out.read_text())["benchmark"], kind)
                self.assertEqual([p.name for p in run.glob(".*tmp")], [])


class NoMatchTests(_Runs):
    def test_make_judge_tasks_with_another_runs_responses(self) -> None:
        for kind, stranger in (("datbench", "vistoolbench"), ("vistoolbench", "datbench")):
            run = self.run_copy(kind)
            foreign = _TEMPLATES[stranger] / "responses.jsonl"
            before = tree(run)
            with self.subTest(kind=kind):
                result = run_cli("make-judge-tasks", str(foreign), "-d", str(run))
                self.assert_refused(result, str(foreign))
                self.assertEqual(tree(run), before)
                self.assertGreater((run / "judge_tasks.jsonl").stat().st_size, 0)

    def test_import_responses_matching_no_task(self) -> None:
        run = self.run_copy("vistoolbench")
        official = self.tmp / "other.json"
        official.write_text(json.dumps([{"id": "not-here", "model_answer": "x"}]))
        before = tree(run)
        result = run_cli("import-responses", str(official), "-d", str(run), "--overwrite")
        self.assert_refused(result, str(official))
        self.assertEqual(tree(run), before)


class _Silent:
    """A 127.0.0.1 port that takes connections and never answers: a writer waiting on it
    holds the run directory's lock for as long as the test needs."""

    def __enter__(self) -> str:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def __exit__(self, *exc: Any) -> None:
        self.sock.close()


class LockTests(_Runs):
    def start(self, *args: str, ready: Path) -> subprocess.Popen[str]:
        """Start a writer in the background and wait until it wrote ``ready`` (under the lock)."""
        # Killed at the end: what it leaves in its TMPDIR goes with self.tmp.
        proc = subprocess.Popen(
            cli_command(*args),
            cwd=ROOT,
            env={**cli_env(), "TMPDIR": str(self.tmp)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.addCleanup(proc.wait)
        self.addCleanup(proc.kill)
        deadline = time.monotonic() + 120
        while not ready.exists():
            if proc.poll() is not None:
                self.fail(f"the writer ended first: {proc.stderr.read() if proc.stderr else ''}")
            self.assertLess(time.monotonic(), deadline, "the writer never started")
            time.sleep(0.05)
        return proc

    def racers(self, kind: str, run: Path, base_url: str) -> list[list[str]]:
        other = _TEMPLATES[kind]
        source, sample = ("math", SAMPLE) if kind == "datbench" else ("vistoolbench", VTB_SAMPLE)
        official = self.tmp / "official.json"
        official.write_text(json.dumps(VTB_OFFICIAL))
        requests = self.tmp / "tasks.openai.00001.jsonl"
        requests.write_text('{"custom_id": "a", "body": {"model": "m", "messages": []}}\n')
        d = ["-d", str(run)]
        racers = [
            ["export-tasks", source, "--source", str(sample), *d],
            ["make-judge-tasks", *d],
            ["score", "--allow-missing", *d],
            ["compare", str(other), str(self.run_copy(kind, "b")), "-o", str(run / "cmp.json")],
            ["view", str(other), "-o", str(run / "page.html")],
            ["send", str(requests), "--base-url", base_url, "-o", str(run / "responses.jsonl")],
        ]
        if kind == "vistoolbench":
            racers += [
                ["import-responses", str(official), *d, "--overwrite"],
                ["agent", "--base-url", base_url, "--model", "m", "--no-code-tools", *d],
            ]
        return racers

    def assert_all_refused(self, kind: str, run: Path, base_url: str, holder: str) -> None:
        for args in self.racers(kind, run, base_url):
            with self.subTest(kind=kind, racer=args[0]):
                before = tree(run)
                result = run_cli(*args)
                line = self.assert_refused(result, "in use by")
                self.assertIn(holder, line)
                self.assertEqual(tree(run), before)

    def test_every_writer_racing_the_agent(self) -> None:
        run = self.run_copy("vistoolbench")
        for name in ("responses.jsonl", "report.json", "judge_tasks.jsonl"):
            (run / name).unlink()
        with _Silent() as base_url:
            args = ["agent", "--base-url", base_url, "--model", "m", "--no-code-tools"]
            self.start(*args, "-d", str(run), "--timeout", "300", "-q", ready=run / "agent.json")
            self.assert_all_refused("vistoolbench", run, base_url, "datbench agent")

    def test_every_writer_racing_a_send_into_the_run(self) -> None:
        for kind in ("datbench", "vistoolbench"):
            run = self.run_copy(kind)
            requests = self.tmp / f"{kind}.tasks.openai.00001.jsonl"
            requests.write_text('{"custom_id": "zz", "body": {"model": "m", "messages": []}}\n')
            output = run / "responses.jsonl"
            output.unlink()  # the send creates it under the lock: then the lock is held
            with _Silent() as base_url:
                sender = self.start(
                    "send", str(requests), "--base-url", base_url, "-o", str(output),
                    "--timeout", "300", "-q", ready=output,
                )  # fmt: skip
                self.assert_all_refused(kind, run, base_url, "datbench send")
                sender.kill()


def _address_space_limit() -> None:
    limit = 2 << 30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


class StreamTests(_Runs):
    def real(
        self, *args: str, stdin: Any = None, data: bytes | None = None, limit_mb: int = 0
    ) -> Any:
        """``datbench ARGS`` in a subprocess under a 2 GB address-space limit (and with
        ``limit_mb``, that input limit)."""
        env = cli_env()
        if limit_mb:
            env["DATBENCH_MAX_INPUT_MB"] = str(limit_mb)
        return subprocess.run(
            cli_command(*args), cwd=ROOT, env=env, stdin=stdin, input=data,
            capture_output=True, preexec_fn=_address_space_limit,
        )  # fmt: skip

    def assert_one_sentence(self, done: Any, name: str) -> None:
        stderr = done.stderr.decode()
        self.assertEqual(done.returncode, 2, stderr)
        self.assertNotIn("internal error", stderr)
        errors = [line for line in stderr.splitlines() if line.startswith("error:")]
        self.assertEqual(len(errors), 1, stderr)
        self.assertIn(name, errors[0])

    def test_endless_inputs_under_an_address_space_limit(self) -> None:
        for kind in ("datbench", "vistoolbench"):
            run = self.run_copy(kind)
            cases = [
                ["compare", str(run), "/dev/zero"],
                ["make-judge-tasks", "/dev/zero", "-d", str(run), "-o", str(self.tmp / "j")],
            ]
            if kind == "vistoolbench":
                cases.append(["import-responses", "/dev/zero", "-d", str(run), "--overwrite"])
            before = tree(run)
            for args in cases:
                with self.subTest(kind=kind, command=args[0]):
                    self.assert_one_sentence(self.real(*args), "/dev/zero")
                    self.assertEqual(tree(run), before)

    def test_an_endless_json_stream(self) -> None:
        run = self.run_copy("datbench")
        writer = subprocess.Popen(
            [sys.executable, "-c", "import sys\nsys.stdout.buffer.write(b'[')\n"
             "while True: sys.stdout.buffer.write(b' ' * 65536)"],
            stdout=subprocess.PIPE,
        )  # fmt: skip
        self.addCleanup(writer.wait)
        self.addCleanup(writer.kill)
        done = self.real("compare", str(run), "/dev/stdin", stdin=writer.stdout)
        self.assert_one_sentence(done, "/dev/stdin")
        self.assertIn("larger than", done.stderr.decode())

    def test_endless_jsonl_of_short_valid_lines(self) -> None:
        """``yes '{"id": ...}' | datbench CMD /dev/stdin``: every valid line is short, so only
        the total ends it (here DATBENCH_MAX_INPUT_MB=8, under the 2 GB limit)."""
        line = b'{"id": "x", "raw_output": "a", "task_id": "x", "model_answer": "a"}\n'
        for kind in ("datbench", "vistoolbench"):
            run = self.run_copy(kind)
            cases = [
                ["make-judge-tasks", "/dev/stdin", "-d", str(run), "-o", str(self.tmp / "j.jsonl")],
                ["score", "/dev/stdin", "-d", str(run), "-o", str(self.tmp / "r.json")],
            ]
            if kind == "vistoolbench":
                out = str(self.tmp / "i.jsonl")
                cases.append(["import-responses", "/dev/stdin", "-d", str(run), "-o", out])
            before = tree(run)
            for args in cases:
                with self.subTest(kind=kind, command=args[0]):
                    writer = subprocess.Popen(
                        [sys.executable, "-c", "import sys\nwhile True: "
                         f"sys.stdout.buffer.write({line!r} * 4096)"],
                        stdout=subprocess.PIPE,
                    )  # fmt: skip
                    try:
                        done = self.real(*args, stdin=writer.stdout, limit_mb=8)
                    finally:
                        writer.kill()
                        writer.wait()
                    self.assert_one_sentence(done, "/dev/stdin")
                    self.assertIn("larger than 8 MiB", done.stderr.decode())
                    self.assertEqual(tree(run), before)
                    self.assertEqual(sorted(p.name for p in self.tmp.glob("*.json*")), [])

    def test_pipes_and_dev_stdin_as_inputs(self) -> None:
        for kind in ("datbench", "vistoolbench"):
            run, other = self.run_copy(kind), self.run_copy(kind, "other")
            report = (other / "report.json").read_bytes()
            responses = (run / "responses.jsonl").read_bytes()
            with self.subTest(kind=kind, command="compare"):
                done = self.real("compare", str(run), "/dev/stdin", "--json", data=report)
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertEqual(json.loads(done.stdout)["b"]["report"], "/dev/stdin")
            with self.subTest(kind=kind, command="make-judge-tasks"):
                piped = self.tmp / f"{kind}-piped.jsonl"
                args = ["make-judge-tasks", "/dev/stdin", "-d", str(run), "-o", str(piped)]
                done = self.real(*args, data=responses)
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertEqual(piped.read_bytes(), (run / "judge_tasks.jsonl").read_bytes())
            with self.subTest(kind=kind, command="score"):
                reports = []
                for source, data in (("responses.jsonl", None), ("/dev/stdin", responses)):
                    out = self.tmp / f"{kind}-scored-{len(reports)}.json"
                    path = str(run / source) if data is None else source
                    args = ["score", path, "-d", str(run), "-o", str(out), "--allow-missing"]
                    # Not under real()'s address-space limit: the pool sets its workers' own.
                    done = subprocess.run(
                        cli_command(*args), cwd=ROOT, env=cli_env(), input=data,
                        capture_output=True,
                    )  # fmt: skip
                    self.assertIn(done.returncode, (0, 1), done.stderr)
                    reports.append(json.loads(out.read_text()))
                inputs = [r["provenance"]["inputs"]["responses"] for r in reports]
                # Scanned as it is read, by both benchmarks: the pipe named, its digest too.
                self.assertEqual(inputs[1]["path"], "/dev/stdin")
                self.assertEqual(inputs[0]["sha256"], inputs[1]["sha256"])
                for r in reports:
                    del r["provenance"]["inputs"]["responses"]
                self.assertEqual(reports[0], reports[1])
        run = self.run_copy("vistoolbench", "import")
        official = json.dumps(VTB_OFFICIAL).encode()
        lines = b"\n".join(json.dumps(r).encode() for r in VTB_OFFICIAL * 2)
        for name, data in (("official.json", official), ("official.jsonl", lines)):
            with self.subTest(command="import-responses", shape=name):
                out = self.tmp / f"imported-{name}"
                args = ["import-responses", "/dev/stdin", "-d", str(run), "-o", str(out)]
                done = self.real(*args, data=data)
                self.assertEqual(done.returncode, 0, done.stderr)
                line = json.loads(out.read_text())
                self.assertEqual(line, {"id": "vtb-a-medical-001::0", "raw_output": "x"})


class AlternatingKillTests(unittest.TestCase):
    """Two different exports SIGKILLed by turns into one directory: once the next command has
    read the directory after a kill, it holds one complete export, every file byte for byte
    one clean export's and nothing else (before the first export finished: nothing at all).
    Every write point is covered by ``tests/robustness/test_export_switch.py``."""

    def test_alternating_killed_exports(self) -> None:
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp, True)
        dataset = make_image_dataset(tmp / "ds", 90, image_bytes=20_000)
        common = ["--source", str(dataset), "--format", "openai", "--model", "m", "-q"]
        exports = [["chart", "math", *common], ["document", *common, "--max-file-mb", "0.2"]]
        clean = []
        durations = []
        for index, args in enumerate(exports):
            started = time.monotonic()
            done = run_real_cli("export-tasks", *args, "-d", str(tmp / f"clean{index}"))
            self.assertEqual(done.returncode, 0, done.stderr)
            durations.append(time.monotonic() - started)
            clean.append(tree_digest(tmp / f"clean{index}"))
        run = tmp / "run"
        rng = random.Random(31)
        finished = False
        for round_number in range(6):
            which = round_number % 2
            proc = subprocess.Popen(
                cli_command("export-tasks", *exports[which], "-d", str(run)), cwd=ROOT,
                env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True,
            )  # fmt: skip
            try:
                proc.wait(timeout=rng.uniform(0.3, 1.0) * durations[which])
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            with self.subTest(round=round_number):
                # The next command (score, which finds no responses) settles the directory.
                done = run_cli("score", "-d", str(run), "-o", os.devnull)
                self.assertEqual(done.exit_code, 2, done.stderr)
                state = tree_digest(run)
                if state or finished:
                    self.assertIn(state, clean, "a mix of two exports")
                finished = finished or bool(state)
        done = run_real_cli("export-tasks", *exports[0], "-d", str(run))
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(tree_digest(run), clean[0])


class FullTmpfsTests(unittest.TestCase):
    """A real full file system (a tiny tmpfs): an export of either benchmark fails in one
    sentence and leaves nothing behind, neither a journal nor the folder it made."""

    def test_exports_into_a_full_tmpfs_leave_nothing(self) -> None:
        mount = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, mount, True)
        if sys.platform != "linux" or shutil.which("mount") is None:
            self.skipTest("needs Linux mount")
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=32k", "tmpfs", str(mount)], capture_output=True
        )
        if mounted.returncode != 0:
            self.skipTest("cannot mount a tmpfs here")
        self.addCleanup(subprocess.run, ["umount", "-l", str(mount)], capture_output=True)
        for source, sample in (("math", SAMPLE), ("vistoolbench", VTB_SAMPLE)):
            with self.subTest(benchmark=source):
                run = mount / source
                done = run_real_cli("export-tasks", source, "--source", str(sample), "-d", str(run))
                self.assertEqual(done.returncode, 2, done.stderr)
                self.assertIn(os.strerror(28), done.stderr)
                self.assertEqual(sorted(mount.rglob("*")), [])


class SendPipeTests(unittest.TestCase):
    def test_send_refuses_a_piped_request_file(self) -> None:
        """``send`` reads its request files twice (count, then send): a pipe would send nothing
        the second time, so it is refused in one sentence before anything is written."""
        out = Path(tempfile.mkdtemp()) / "out.jsonl"
        self.addCleanup(shutil.rmtree, out.parent, True)
        done = subprocess.run(
            cli_command("send", "/dev/stdin", "--base-url", "http://127.0.0.1:9", "-o", str(out)),
            cwd=ROOT, env=cli_env(), capture_output=True, text=True,
            input='{"custom_id": "a", "body": {}}\n',
        )  # fmt: skip
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn("/dev/stdin: is a pipe or device", done.stderr)
        self.assertFalse(out.exists())


class SendSwapTests(unittest.TestCase):
    def test_a_link_swapped_in_after_the_check_is_not_written_through(self) -> None:
        """``send`` appends to its output: a symlink put in its place between the guard's
        check and the open (here: while the run lock is taken) is refused, never followed."""
        from datbench_cli.cli import send as send_command

        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp, True)
        precious, out = tmp / "precious.txt", tmp / "out.jsonl"
        precious.write_text("not yours")  # no line end: a torn tail to 'repair'
        requests = tmp / "requests.jsonl"
        requests.write_text('{"custom_id": "a", "body": {"model": "m", "messages": []}}\n')
        real = send_command.locked_runs

        def swapped(*args: Any, **kwargs: Any) -> Any:
            out.symlink_to(precious)
            return real(*args, **kwargs)

        with mock.patch.object(send_command, "locked_runs", swapped):
            result = run_cli(
                "send", str(requests), "--base-url", "http://127.0.0.1:9",
                "--max-retries", "0", "-o", str(out),
            )  # fmt: skip
        self.assertEqual(result.exit_code, 2, result.stderr)
        self.assertIn("symbolic link", result.stderr)
        self.assertEqual(precious.read_text(), "not yours")
        self.assertTrue(out.is_symlink())

    def test_a_link_swapped_in_after_the_open_is_not_repaired_through(self) -> None:
        """The torn-tail repair reopened the output by its path: a link put there after the
        open (here: while the file lock is taken) had the file it leads to truncated, and the
        answers went to the replaced file, gone from every folder."""
        from datbench_cli.files import append_log

        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp, True)
        precious, out = tmp / "precious.txt", tmp / "out.jsonl"
        precious.write_text("not yours")  # no line end: a torn tail to 'repair'
        out.write_text("")
        requests = tmp / "requests.jsonl"
        requests.write_text('{"custom_id": "a", "body": {"model": "m", "messages": []}}\n')
        real = append_log._lock

        def swapped(*args: Any, **kwargs: Any) -> Any:
            out.unlink()
            out.symlink_to(precious)
            return real(*args, **kwargs)

        with mock.patch.object(append_log, "_lock", swapped):
            result = run_cli(
                "send", str(requests), "--base-url", "http://127.0.0.1:9",
                "--max-retries", "0", "-o", str(out),
            )  # fmt: skip
        self.assertEqual(result.exit_code, 2, result.stderr)
        self.assertIn(str(out), result.stderr)
        self.assertEqual(precious.read_text(), "not yours")


class DescriptorFolderWithoutProcTests(unittest.TestCase):
    """Where /dev/fd is a folder of its own (macOS: no /proc, ``/dev/stdout -> fd/1``), its
    entries are this process's descriptors: ``-o /dev/stdout`` is written through, as on
    Linux. The review of the guard's rewrite found it refused there as "a symlink"."""

    def test_dev_stdout_through_a_real_dev_fd_folder(self) -> None:
        from unittest import mock

        from datbench_cli.files import jsonio

        real_realpath, real_islink, real_readlink = (
            os.path.realpath,
            os.path.islink,
            os.readlink,
        )

        def realpath(path: Any, *args: Any, **kwargs: Any) -> str:
            return "/dev/fd" if path == "/dev/fd" else real_realpath(path, *args, **kwargs)

        def islink(path: Any) -> bool:
            return True if path == "/dev/stdout" else real_islink(path)

        def readlink(path: Any, *args: Any, **kwargs: Any) -> Any:
            return "fd/1" if path == "/dev/stdout" else real_readlink(path, *args, **kwargs)

        with (
            mock.patch("os.path.realpath", realpath),
            mock.patch("os.path.islink", islink),
            mock.patch("os.readlink", readlink),
        ):
            self.assertTrue(jsonio.is_descriptor_link(Path("/dev/stdout")))
            self.assertTrue(jsonio.is_descriptor_link(Path("/dev/fd/3")))
            self.assertEqual(jsonio._own_descriptor(Path("/dev/stdout")), 1)
            self.assertFalse(jsonio.is_descriptor_link(Path("/dev/shm/x")))
