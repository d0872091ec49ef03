"""A killed ``send`` can leave the start of a last line without its line end (the kernel may
stop a killed write between pages). For both benchmarks, ``score``, ``check-judge`` (in a run
directory and outside one) and ``make-judge-tasks --skip-done`` ignore that line, count what it
would have answered as missing, and say so: one warning naming the file and line; never
silence, never exit 2."""

from __future__ import annotations

import shutil
import tempfile
import unittest
from pathlib import Path

from tests.cli_helpers import SAMPLE, run_cli
from tests.vtb_support import SAMPLE_DIR as VTB_SAMPLE

TORN = b'{"custom_id": "torn-1", "response": {"status_code": 200, "bo'


def export(source: Path, target: str, run_dir: Path) -> Path:
    """A run directory of ``source`` with its sample responses and judge responses."""
    for args in (
        ("export-tasks", target, "--source", str(source), "-d", str(run_dir), "-q"),
        ("make-judge-tasks", "-d", str(run_dir), "-q"),
    ):
        if args[0] == "make-judge-tasks":
            shutil.copy(source / "responses.jsonl", run_dir / "responses.jsonl")
        result = run_cli(*args)
        assert result.exit_code == 0, result.stderr
    shutil.copy(source / "judge_responses.jsonl", run_dir / "judge_responses.jsonl")
    return run_dir


class TornTailTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.runs = {
            "datbench": export(SAMPLE, "all", cls.tmp / "datbench"),
            "vistoolbench": export(VTB_SAMPLE, "vistoolbench", cls.tmp / "vistoolbench"),
        }

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def torn_copy(self, name: str, file: str) -> tuple[Path, int]:
        """A copy of a run with ``file`` torn; the number of the torn line."""
        work = self.tmp / f"{name}-{file}-{self.id().rsplit('.', 1)[-1]}"
        shutil.copytree(self.runs[name], work)
        path = work / file
        data = path.read_bytes()
        path.write_bytes(data + TORN)
        return work, data.count(b"\n") + 1

    def assert_same_as_whole(self, name: str, file: str, *args: str) -> None:
        """``args`` on the torn copy: the whole copy's exit code and output, plus one warning."""
        whole = run_cli(*args, "-d", str(self.runs[name]))
        work, number = self.torn_copy(name, file)
        torn = run_cli(*args, "-d", str(work))
        self.assertNotIn("Traceback", torn.stderr)
        self.assertEqual(torn.exit_code, whole.exit_code, torn.stderr)
        self.assertEqual(
            torn.stdout.replace(str(work), "RUN"), whole.stdout.replace(str(self.runs[name]), "RUN")
        )
        warning = (
            f"warning: the last line of {work / file} (line {number}) is incomplete, as an "
            "interrupted writer leaves it, and was ignored (rerun `datbench send` to finish)"
        )
        said = " ".join(torn.stderr.split())
        self.assertIn(warning, said)
        self.assertNotIn("incomplete", whole.stderr)
        # Besides that warning, the torn copy says exactly what the whole one says.
        rest = said.replace(warning, "", 1).replace(str(work), "RUN")
        self.assertEqual(
            " ".join(rest.split()),
            " ".join(whole.stderr.split()).replace(str(self.runs[name]), "RUN"),
        )

    def test_check_judge_in_a_run_directory(self) -> None:
        for name in self.runs:
            for file in ("judge_responses.jsonl", "responses.jsonl"):
                with self.subTest(name, file=file):
                    self.assert_same_as_whole(name, file, "check-judge")

    def test_check_judge_warns_only_of_what_reading_set_aside(self) -> None:
        # The sample runs leave turns unanswered and verdicts missing: score's coverage
        # warnings, which check-judge (the judge half of score) leaves to score, for both.
        for name, run in self.runs.items():
            with self.subTest(name):
                result = run_cli("check-judge", "-d", str(run))
                self.assertEqual(result.exit_code, 1)  # the samples' unparseable verdicts
                self.assertNotIn("warning:", result.stderr)

    def test_score(self) -> None:
        for name in self.runs:
            for file in ("judge_responses.jsonl", "responses.jsonl"):
                with self.subTest(name, file=file):
                    self.assert_same_as_whole(name, file, "score", "--allow-missing", "--json")

    def test_make_judge_tasks_skip_done(self) -> None:
        """DatBench's --skip-done dropped a torn last line without a word (VisualToolBench
        warned): it asks that judge task again, as it should, and now says why."""
        for name in self.runs:
            with self.subTest(name):
                work, number = self.torn_copy(name, "judge_responses.jsonl")
                outputs = []
                for run in (self.runs[name], work):
                    result = run_cli(
                        "make-judge-tasks", "-d", str(run), "-o", str(work / f"retry-{run.name}.jsonl"),
                        "--skip-done", str(run / "judge_responses.jsonl"),
                    )  # fmt: skip
                    self.assertEqual(result.exit_code, 0, result.stderr)
                    outputs.append((work / f"retry-{run.name}.jsonl").read_bytes())
                self.assertEqual(outputs[0], outputs[1])
                warning = (
                    f"warning: the last line of {work / 'judge_responses.jsonl'} (line {number}) "
                    "is incomplete"
                )
                self.assertIn(warning, " ".join(result.stderr.split()))

    def test_check_judge_outside_a_run_directory(self) -> None:
        for name in self.runs:
            with self.subTest(name):
                work, number = self.torn_copy(name, "judge_responses.jsonl")
                path = work / "judge_responses.jsonl"
                outside = self.tmp / f"outside-{name}.jsonl"
                shutil.copy(path, outside)
                whole = run_cli("check-judge", str(self.runs[name] / "judge_responses.jsonl"))
                torn = run_cli("check-judge", str(outside), "-d", str(self.tmp))
                self.assertEqual(torn.exit_code, whole.exit_code, torn.stderr)
                self.assertEqual(torn.stdout, whole.stdout)
                warning = f"warning: the last line of {outside} (line {number}) is incomplete"
                self.assertIn(warning, " ".join(torn.stderr.split()))


if __name__ == "__main__":
    unittest.main()
