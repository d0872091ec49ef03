"""Inputs where our scorers once failed and the reference scores (issue 15).

- ChartQAPro with a list or dict ``question_type`` in its metadata raised ``TypeError:
  unhashable type``: the reference tests membership in a list, so such a type is simply not an
  exact-match type and the item is compared with relaxed correctness.
- A 10 MB ChartQAPro output ``[1, 1, 1, ...]`` took 12 s and 3.3 GB (``ast.literal_eval``
  builds a syntax tree of every item); a plain flat list is now read without one, with the same
  items, and items past the gold list's length are only counted.
- A CC-OCR KIE output nested about 990 levels deep raised ``RecursionError`` where the
  reference scores 0: our call stack to the scorer (CLI, generators, worker pool) is deeper than
  the reference's, so scorers now run with the reference's recursion room. Past the reference's
  own limit the sample is recorded as a ``RecursionError`` (the reference's whole run fails).
"""

from __future__ import annotations

import json
import random
import shutil
import sys
import tempfile
import tracemalloc
import unittest
import warnings
from pathlib import Path
from typing import Any

from datbench_cli import DatBenchEvaluator, VLMResponse
from datbench_cli.benchmarks.datbench.evaluator import ScoreOptions, compute_report
from datbench_cli.files import jsonio
from datbench_cli.runtime.stack import call_with_reference_headroom
from datbench_cli.scorers import chartqapro
from tests.bounded import within
from tests.cli_helpers import make_dataset, make_row, run_cli

KIE_GT = json.dumps({"company": "ACME", "total": "3.00"})


def _row(sample_id: str, dataset: str, answer: str, metadata: dict[str, Any]) -> dict[str, Any]:
    return make_row(sample_id, dataset=dataset, answer=answer, metadata=json.dumps(metadata))


def _score(rows: list[dict[str, Any]], outputs: list[str], capability: str, jobs: int = 1):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        evaluator = DatBenchEvaluator([dict(r, image=None) for r in rows], capability)
        responses = [VLMResponse(r["id"], o) for r, o in zip(rows, outputs, strict=True)]
        return compute_report(evaluator, responses, options=ScoreOptions(jobs=jobs))


def nested_dict(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


def nested_list(depth: int) -> str:
    return '{"a": ' + "[" * depth + "1" + "]" * depth + "}"


class ChartQAProQuestionTypeTests(unittest.TestCase):
    def test_list_and_dict_question_types_are_scored_relaxed(self) -> None:
        # 5 against 5.1 is within the 5% tolerance, so relaxed matching gives 1.0 (an
        # exact-match type would give 0.0).
        types: list[Any] = [["Multi Choice"], ["Fact Checking", "x"], {"type": "Multi Choice"}]
        for question_type in types:
            for multi_turn in (False, True):
                meta = {"question_type": question_type, "year_flags": ["NO"]}
                if multi_turn:
                    meta["is_multi_turn"] = True
                row = _row("c1", "chartqapro", "5.1", meta)
                with self.subTest(question_type=question_type, multi_turn=multi_turn):
                    result = _score([row], ["5"], "chart").results[0]
                    details = result.metadata["score_details"]
                    self.assertNotIn("error", details)
                    self.assertEqual(result.score, 1.0)
                    self.assertEqual(details["question_type"], question_type)

    def test_string_exact_match_types_are_unchanged(self) -> None:
        row = _row("c1", "chartqapro", "5.1", {"question_type": "Multi Choice"})
        self.assertEqual(_score([row], ["5"], "chart").results[0].score, 0.0)


def _peak_and_score(output: str) -> tuple[int, float]:
    sample = {"answer": "[1, 2]", "all_answers": ["[1, 2]"], "question_type": "Factoid"}
    tracemalloc.start()
    try:
        score = chartqapro.score_sample(sample, output)["score"]
        return tracemalloc.get_traced_memory()[1], score
    finally:
        tracemalloc.stop()


class ChartQAProLongListTests(unittest.TestCase):
    def test_a_10mb_list_output_is_scored_in_bounded_memory(self) -> None:
        output = "[" + ", ".join(["1"] * 3_333_333) + "]"
        peak, score = within(120, _peak_and_score, output)
        # The score the literal_eval path gives: 1 of 3,333,333 items matches.
        self.assertEqual(score, 1.0 / 3_333_333)
        # Answer extraction copies the text a few times; the syntax tree took 3.3 GB.
        self.assertLess(peak, 30 * len(output))

    def test_plain_lists_read_exactly_like_literal_eval(self) -> None:
        rng = random.Random(15)
        alphabet = [*"0123456789-., '\"[]ab\t\n\\\x0c", "\u2028", "\x85", "é", "\x00", "\r", "_"]

        def item() -> str:
            kind = rng.random()
            if kind < 0.3:
                return str(rng.randint(-(10 ** rng.randint(0, 20)), 10 ** rng.randint(0, 20)))
            if kind < 0.5:
                return f"{rng.uniform(-1e6, 1e6):.{rng.randint(1, 18)}f}"
            if kind < 0.8:
                quote = rng.choice("'\"")
                body = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))
                return quote + body + quote
            return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 4)))

        plain = 0
        for _ in range(20_000):
            separator = rng.choice([", ", ",", " , "])
            items = separator.join(item() for _ in range(rng.randint(1, 5)))
            text = rng.choice(["", " "]) + "[" + items + rng.choice(["", ",", " ,", " "]) + "]"
            plain += chartqapro._PLAIN_LIST_RE.fullmatch(text) is not None
            expected = chartqapro._as_list(text)
            for keep in (1, 3):
                want = None if expected is None else (expected[:keep], len(expected))
                self.assertEqual(chartqapro._list_head(text, keep), want, text)
        self.assertGreater(plain, 5_000)  # the plain path is exercised


class DeepNestingTests(unittest.TestCase):
    """At depth 990 the reference (called from a script) scores 0.0 for both shapes."""

    def assert_scored_zero(self, result: Any) -> None:
        details = result.metadata["score_details"]
        self.assertNotIn("error", details)
        self.assertEqual(result.score, 0.0)

    def test_990_deep_outputs_score_like_the_reference(self) -> None:
        row = _row("k1", "cc-ocr-kie", KIE_GT, {})
        for label, output in (("dict", nested_dict(990)), ("list", nested_list(990))):
            with self.subTest(shape=label):
                self.assert_scored_zero(_score([row], [output], "document").results[0])

    def test_990_deep_in_worker_processes(self) -> None:
        rows = [_row(f"k{i:02d}", "cc-ocr-kie", KIE_GT, {}) for i in range(40)]
        report = _score(rows, [nested_dict(990)] * 40, "document", jobs=2)
        for result in report.results:
            self.assert_scored_zero(result)

    def test_the_headroom_does_not_leak(self) -> None:
        limit = sys.getrecursionlimit()
        row = _row("k1", "cc-ocr-kie", KIE_GT, {})
        _score([row], [nested_dict(990)], "document")
        self.assertEqual(sys.getrecursionlimit(), limit)

    def test_past_the_reference_limit_it_is_a_recorded_recursion_error(self) -> None:
        row = _row("k1", "cc-ocr-kie", KIE_GT, {})
        result = _score([row], [nested_dict(1200)], "document").results[0]
        self.assertEqual(result.metadata["score_details"]["error"]["type"], "RecursionError")

    def test_the_room_does_not_follow_the_callers_limit_or_stack(self) -> None:
        """A worker measures its own stack: a caller that set the limit in its own process
        first (at another depth, to another value) changes nothing in the workers' results."""
        row = _row("k1", "cc-ocr-kie", KIE_GT, {})
        limit = sys.getrecursionlimit()

        def deeper(levels: int) -> None:
            if levels:
                deeper(levels - 1)
            else:
                call_with_reference_headroom(int)

        try:
            deeper(150)
            sys.setrecursionlimit(sys.getrecursionlimit() + 3000)
            self.assert_scored_zero(_score([row], [nested_dict(990)], "document").results[0])
            result = _score([row], [nested_dict(1200)], "document").results[0]
            self.assertEqual(result.metadata["score_details"]["error"]["type"], "RecursionError")
        finally:
            sys.setrecursionlimit(limit)

    def test_990_deep_through_the_command_line(self) -> None:
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp, True)
        source = make_dataset(tmp, {"document": [make_row("k1", "cc-ocr-kie", KIE_GT)]})
        run = tmp / "run"
        exported = run_cli("export-tasks", "document", "--source", str(source), "-d", str(run))
        self.assertEqual(exported.exit_code, 0, exported.stderr)
        (run / "responses.jsonl").write_bytes(
            jsonio.dumps({"id": "k1", "raw_output": nested_dict(990)}) + b"\n"
        )
        scored = run_cli("score", "-d", str(run), "-q")
        self.assertEqual(scored.exit_code, 0, scored.stderr)
        report = json.loads((run / "report.json").read_text())
        self.assertEqual(report["results"][0]["score"], 0.0)
        self.assertNotIn("error", report["results"][0]["metadata"]["score_details"])


if __name__ == "__main__":
    unittest.main()
