"""Usage errors as one sentence and one hint, plain --help, and no other library's warnings
printed as ours."""

from __future__ import annotations

import re
import shutil
import tempfile
import unittest
import warnings
from pathlib import Path

from datbench_cli.benchmarks.datbench.stages import forwarded_warnings
from datbench_cli.errors import DatbenchWarning
from tests.cli_helpers import SAMPLE, run_cli
from tests.run_builders import run_real_cli

COMMANDS = (
    "export-tasks",
    "make-judge-tasks",
    "score",
    "check-judge",
    "send",
    "view",
    "compare",
    "leaderboard",
)
BOX = re.compile("[\u2500-\u257f]")


def assert_one_error(case: unittest.TestCase, result: object, *needles: str) -> None:
    stderr = result.stderr  # type: ignore[attr-defined]
    lines = stderr.strip().splitlines()
    case.assertEqual(result.exit_code, 2, stderr)  # type: ignore[attr-defined]
    case.assertTrue(1 <= len(lines) <= 2, stderr)
    case.assertTrue(lines[0].startswith("error: "), stderr)
    if len(lines) == 2:
        case.assertTrue(lines[1].startswith("hint: "), stderr)
    case.assertIsNone(BOX.search(stderr), stderr)
    case.assertNotIn("Traceback", stderr)
    for needle in needles:
        case.assertIn(needle, stderr)


class UsageErrorTests(unittest.TestCase):
    def test_unknown_options(self) -> None:
        for command in COMMANDS:
            with self.subTest(command=command):
                result = run_cli(command, "--no-such-option")
                assert_one_error(self, result, "--no-such-option", f"datbench {command} --help")

    def test_bad_option_values(self) -> None:
        cases = [
            (["score", "--jobs", "x"], "--jobs"),
            (["score", "--jobs", "-1"], "--jobs"),
            (["score", "--sample-timeout", "soon"], "--sample-timeout"),
            (["export-tasks", "math", "--limit", "0"], "--limit"),
            (["export-tasks", "math", "--format", "xml"], "--format"),
            (["export-tasks", "math", "--num-shards", "0"], "--num-shards"),
            # Not a finite number: was an internal error (exit 3) when the part size was made.
            (["export-tasks", "math", "--format", "openai", "--max-file-mb", "nan"], "nan"),
            (["export-tasks", "math", "--format", "openai", "--max-file-mb", "inf"], "inf"),
            (["make-judge-tasks", "--format", "openai", "--max-file-mb", "nan"], "nan"),
        ]
        for args, needle in cases:
            with self.subTest(args=args):
                assert_one_error(self, run_cli(*args), needle)

    def test_missing_arguments(self) -> None:
        assert_one_error(self, run_cli("export-tasks"), "TARGETS")
        assert_one_error(self, run_cli("send"), "REQUESTS")

    def test_unknown_command(self) -> None:
        assert_one_error(self, run_cli("scor"), "scor")

    def test_real_program_prints_one_line_too(self) -> None:
        result = run_real_cli("score", "--bogus")
        self.assertEqual(result.returncode, 2)
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 2, result.stderr)
        self.assertTrue(lines[0].startswith("error: no such option: --bogus"), lines)
        self.assertEqual(lines[1], "hint: run 'datbench score --help' for the options")


class HelpTests(unittest.TestCase):
    def test_help_is_plain_with_readable_metavars_and_nothing_cut(self) -> None:
        for command in (None, *COMMANDS):
            args = [command, "--help"] if command else ["--help"]
            with self.subTest(command=command):
                result = run_cli(*args, env={"COLUMNS": "80"})
                self.assertEqual(result.exit_code, 0, result.stderr)
                text = result.stdout
                self.assertIsNone(BOX.search(text), text)
                self.assertNotIn("\u2026", text)  # an ellipsis: something was cut
                self.assertIsNone(re.search(r"<(path|int|float|str|bool|list|text)\b", text), text)
                self.assertNotIn("{", text.splitlines()[0])
                self.assertIsNone(re.search(r"\bx\s*[<>]=", text), text)  # typer's "[x>=1]"
                for line in text.splitlines():
                    self.assertLessEqual(len(line), 80, line)
                if command in ("score", "make-judge-tasks", "export-tasks", "check-judge"):
                    self.assertIn("--dir DIR", text)


class ForeignWarningTests(unittest.TestCase):
    def test_only_our_warnings_are_forwarded(self) -> None:
        said: list[str] = []
        with warnings.catch_warnings(record=True) as rest:
            warnings.simplefilter("always")
            with forwarded_warnings(said.append):
                warnings.warn("ours", DatbenchWarning, stacklevel=1)
                warnings.warn("typing.io is deprecated", DeprecationWarning, stacklevel=1)
        self.assertEqual(said, ["ours"])
        self.assertEqual([str(w.message) for w in rest], ["typing.io is deprecated"])

    def test_scoring_math_prints_no_dependency_warning(self) -> None:
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)
        run = tmp / "run"
        self.assertEqual(
            run_real_cli(
                "export-tasks", "math", "--source", str(SAMPLE), "-d", str(run)
            ).returncode,
            0,
        )
        shutil.copy(SAMPLE / "responses.jsonl", run / "responses.jsonl")
        result = run_real_cli("score", "-d", str(run))
        self.assertNotIn("typing.io", result.stderr)
        self.assertNotIn("DeprecationWarning", result.stderr)
        self.assertNotIn("SyntaxWarning", result.stderr)


if __name__ == "__main__":
    unittest.main()
