"""``check-judge`` outside a run directory (issue 18): the verdict parser is the one of the
benchmark the judge ids belong to, or the one ``--benchmark`` names; both benchmarks."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import unittest
from pathlib import Path

from tests.cli_helpers import SAMPLE, run_cli
from tests.vtb_support import SAMPLE_JUDGE

DATBENCH_JUDGE = SAMPLE / "judge_responses.jsonl"


class CheckJudgeOutsideTests(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.cwd = os.getcwd()
        os.chdir(self.tmp)  # no datbench.json here
        self.addCleanup(os.chdir, self.cwd)

    def check(self, *args: str) -> tuple[int, str, str]:
        result = run_cli("check-judge", *args)
        self.assertNotIn("Traceback", result.stderr)
        return result.exit_code, result.stdout, result.stderr

    def test_the_parser_is_told_from_the_ids(self) -> None:
        code, out, _ = self.check(str(SAMPLE_JUDGE))
        self.assertEqual(code, 1)  # the sample's one unparseable verdict
        self.assertIn("met", out)  # VisualToolBench's verdicts: Met / Not Met
        self.assertNotIn("true", out)
        code, out, _ = self.check(str(DATBENCH_JUDGE))
        self.assertEqual(code, 1)
        self.assertIn("true", out)
        self.assertNotIn("met", out)

    def test_batch_output_lines_are_told_apart_too(self) -> None:
        path = self.tmp / "batch.jsonl"
        body = {"choices": [{"message": {"content": '{"judge_result": "Met"}'}}]}
        line = {"custom_id": "task-1::0::r1", "response": {"status_code": 200, "body": body}}
        path.write_text(json.dumps(line) + "\n")
        code, out, err = self.check(str(path))
        self.assertEqual(code, 0, err)
        self.assertIn("1 met", out)

    def test_benchmark_option_picks_the_parser(self) -> None:
        # A VisualToolBench verdict in a file whose ids alone would say DatBench.
        path = self.tmp / "judge.jsonl"
        path.write_text(json.dumps({"id": "s1", "raw_judge_output": '{"judge_result": "Met"}'}))
        code, out, _ = self.check(str(path), "--benchmark", "vistoolbench")
        self.assertEqual(code, 0)
        self.assertIn("1 met", out)
        code, out, _ = self.check(str(path), "--benchmark", "datbench")
        self.assertEqual(code, 1)
        self.assertIn("1 unparsed", out)

    def test_mixed_shapes_and_bad_names_are_one_line_usage_errors(self) -> None:
        mixed = self.tmp / "mixed.jsonl"
        mixed.write_bytes(DATBENCH_JUDGE.read_bytes() + SAMPLE_JUDGE.read_bytes())
        for args, words in (
            ((str(mixed),), "several benchmarks"),
            ((str(DATBENCH_JUDGE), "--benchmark", "maths"), "unknown benchmark 'maths'"),
        ):
            with self.subTest(args=args):
                code, _, err = self.check(*args)
                self.assertEqual(code, 2, err)
                lines = err.strip().splitlines()
                self.assertTrue(lines[0].startswith("error: ") and words in lines[0], err)
                self.assertLessEqual(len(lines), 2, err)

    def test_a_file_without_a_line_is_bad_input_not_a_pass(self) -> None:
        # "0 verdicts: ..." and exit 0: a CI step passed on an empty batch download.
        for content in (b"", b"\n\n", b"  \n"):
            path = self.tmp / "judge.jsonl"
            path.write_bytes(content)
            for extra in ((), ("--benchmark", "datbench"), ("--benchmark", "vistoolbench")):
                with self.subTest(content=content, extra=extra):
                    code, out, err = self.check(str(path), *extra)
                    self.assertEqual(code, 2, err)
                    lines = err.strip().splitlines()
                    self.assertEqual(
                        lines[0], f"error: {path}: holds no judge response line: nothing to check"
                    )
                    self.assertEqual(len(lines), 2, err)
                    self.assertEqual(out, "")

    def test_replaced_lines_are_said_as_score_says_them(self) -> None:
        # Two lines of one id counted as "1 verdicts" and the earlier verdict was dropped
        # without a word.
        cases = (
            ("datbench", "db_a", "true", "1 judge response id(s) occur more than once"),
            ("vistoolbench", "t::0::r1", "Met", "1 judge line(s) were replaced by a later line"),
        )
        for benchmark, ident, verdict, said in cases:
            path = self.tmp / "judge.jsonl"
            lines = [{"id": ident, "raw_judge_output": text} for text in (verdict, verdict)]
            path.write_text("".join(json.dumps(line) + "\n" for line in lines))
            with self.subTest(benchmark=benchmark):
                code, out, err = self.check(str(path), "--benchmark", benchmark)
                self.assertEqual(code, 0, err)
                self.assertIn(f"warning: {said}", err)
                path.write_text(json.dumps(lines[0]) + "\n")
                code, out, err = self.check(str(path), "--benchmark", benchmark)
                self.assertEqual((code, err), (0, ""))


if __name__ == "__main__":
    unittest.main()
