"""``datbench import-responses``: the official runner's single- and multi-turn result files."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_helpers import run_cli
from tests.vtb_support import TempDirCase, read_jsonl

SINGLE = [
    {
        "id": "vtb-a-medical-001",
        "task_id": "vtb-a-medical-001",
        "turncase": "single-turn",
        "model_answer": "Upper left.",
        "num_tool_calls": 2,
        "tool_use_list": [],
        "content_list": [],
    },
    {"id": "vtb-d-sports-004", "task_id": "vtb-d-sports-004", "model_answer": "API Error: boom"},
    {"id": "vtb-e-generalist-005", "task_id": "vtb-e-generalist-005", "model_answer": None},
    {"id": "not-a-task", "task_id": "not-a-task", "model_answer": "x"},
]
MULTI = [
    {
        "id": "vtb-b-maths-002",
        "task_id": "vtb-b-maths-002",
        "turns": [
            {"turn_number": 0, "prompt": "...", "model_answer": "24"},
            {"turn_number": 1, "prompt": "...", "model_answer": "48"},
        ],
        "total_turns": 2,
    },
    {
        "id": "finance/vtb-c-003",
        "task_id": "finance/vtb-c-003",
        "turns": [
            {"turn_number": 1, "model_answer": "5%"},
            {"turn_number": 7, "model_answer": "?"},
        ],
    },
]


class ImportResponsesTests(TempDirCase):
    def setUp(self) -> None:
        super().setUp()
        self.run_dir, _, _ = self.export()
        self.root = self.run_dir.root

    def official(self, records: list, name: str) -> Path:
        path = self.tmp / name
        path.write_text(json.dumps(records, indent=2), encoding="utf-8")
        return path

    def test_an_unmatched_id_with_a_newline_stays_on_its_warning_line(self) -> None:
        records = [SINGLE[0], {"id": "x\nerror: forged", "model_answer": "y"}]
        result = run_cli(
            "import-responses", str(self.official(records, "n.json")), "-d", str(self.root)
        )
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertNotIn("\nerror", result.stderr)
        self.assertIn("ignored: x\\x0aerror: forged", result.stderr)

    def test_single_and_multi_turn_files(self) -> None:
        single = run_cli(
            "import-responses", str(self.official(SINGLE, "s.json")), "-d", str(self.root)
        )
        self.assertEqual(single.exit_code, 0, single.stderr)
        self.assertEqual(
            read_jsonl(self.root / "responses.jsonl"),
            [
                {"id": "vtb-a-medical-001::0", "raw_output": "Upper left."},
                {"id": "vtb-d-sports-004::0", "raw_output": "API Error: boom"},
            ],
        )
        self.assertIn(
            "1 record(s) match no task of the run and were ignored: not-a-task", single.stderr
        )
        self.assertIn(
            "1 turn(s) have a null answer (missing): vtb-e-generalist-005::0", single.stderr
        )
        self.assertIn("official error texts", single.stderr)

        out = self.root / "multi.jsonl"
        multi = run_cli(
            "import-responses",
            str(self.official(MULTI, "m.json")),
            "-d",
            str(self.root),
            "-o",
            str(out),
        )
        self.assertEqual(multi.exit_code, 0, multi.stderr)
        self.assertEqual(
            read_jsonl(out),
            [
                {"id": "vtb-b-maths-002::0", "raw_output": "24"},
                {"id": "vtb-b-maths-002::1", "raw_output": "48"},
                {"id": "finance/vtb-c-003::1", "raw_output": "5%"},
            ],
        )
        self.assertIn("finance/vtb-c-003::7", multi.stderr)  # a turn the task does not have
        self.assertIn("finance/vtb-c-003::0", multi.stderr)  # an imported task's unanswered turn
        made = run_cli("make-judge-tasks", str(out), "-d", str(self.root))
        self.assertEqual(made.exit_code, 0, made.stderr)
        judged = {line["task_id"] for line in read_jsonl(self.root / "judge_tasks.jsonl")}
        self.assertEqual(judged, {"vtb-b-maths-002", "finance/vtb-c-003"})

    def test_existing_output_is_not_overwritten_unless_asked(self) -> None:
        (self.root / "responses.jsonl").write_text("mine\n")
        path = self.official(SINGLE, "s.json")
        refused = run_cli("import-responses", str(path), "-d", str(self.root))
        self.assertEqual(refused.exit_code, 2)
        self.assertIn("--overwrite", refused.stderr)
        self.assertEqual((self.root / "responses.jsonl").read_text(), "mine\n")
        done = run_cli("import-responses", str(path), "-d", str(self.root), "--overwrite")
        self.assertEqual(done.exit_code, 0, done.stderr)

    def test_bad_records_are_one_sentence_exit_2(self) -> None:
        for records in (
            [{"task_id": "vtb-a-medical-001"}],
            [{"task_id": "vtb-b-maths-002", "turns": [{"turn_number": "x", "model_answer": "a"}]}],
            ["text"],
        ):
            result = run_cli(
                "import-responses", str(self.official(records, "bad.json")), "-d", str(self.root)
            )
            self.assertEqual(result.exit_code, 2, records)
            self.assertTrue(result.stderr.startswith("error: "), result.stderr)
            self.assertNotIn("Traceback", result.stderr)
            self.assertFalse((self.root / "responses.jsonl").exists())

    def test_a_broken_json_array_is_named_at_its_line(self) -> None:
        # The official file is an indented JSON array: a bad byte or a cut end deep inside it is
        # named at its own line, not as "line 1: malformed JSON line" of a JSONL reading.
        text = json.dumps(SINGLE[:2], indent=2).encode()
        cases = (
            (text.replace(b"Upper left.", b"caf\xe9"), ":6: not valid UTF-8 (byte 0xe9)"),
            (text[:-20], ":14: not a valid JSON array (unexpected end of data"),
        )
        for data, expected in cases:
            path = self.tmp / "broken.json"
            path.write_bytes(data)
            result = run_cli("import-responses", str(path), "-d", str(self.root))
            self.assertEqual(result.exit_code, 2, result.stderr)
            self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
            self.assertIn(f"{path}{expected}", result.stderr)
            self.assertFalse((self.root / "responses.jsonl").exists())

    def test_a_file_of_null_answers_is_not_called_another_runs(self) -> None:
        # Every record named a task of the run, yet the error asked "results of another run?".
        records = [
            {"task_id": "vtb-a-medical-001", "model_answer": None},
            {"task_id": "vtb-b-maths-002", "turns": [{"turn_number": 2, "model_answer": "x"}]},
            SINGLE[3],
        ]
        result = run_cli(
            "import-responses", str(self.official(records, "nulls.json")), "-d", str(self.root)
        )
        self.assertEqual(result.exit_code, 2, result.stderr)
        self.assertIn(
            "its 2 record(s) for this run's tasks have 1 null answer(s) and 1 for turns the "
            "tasks do not have",
            result.stderr,
        )
        self.assertNotIn("another run", result.stderr)
        self.assertFalse((self.root / "responses.jsonl").exists())

    def test_an_empty_file_is_not_called_another_runs(self) -> None:
        for text in ("", "[]", "\n"):
            path = self.tmp / "empty.json"
            path.write_text(text)
            result = run_cli("import-responses", str(path), "-d", str(self.root))
            self.assertEqual(result.exit_code, 2, result.stderr)
            self.assertIn("it holds no record: an empty file or array", result.stderr)
            self.assertNotIn("another run", result.stderr)

    def test_tasks_no_record_names_are_counted(self) -> None:
        # The official runs write single-turn and multi-turn results to separate files: importing
        # one said nothing of the run's tasks the file does not hold.
        result = run_cli(
            "import-responses", str(self.official(MULTI, "m.json")), "-d", str(self.root)
        )
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertIn(
            "4 task(s) of the run are in no record, so their 5 turn(s) have no answer: "
            "vtb-a-medical-001, vtb-d-sports-004, vtb-e-generalist-005, vtb-f-physics-006",
            result.stderr,
        )

    def test_only_the_last_record_of_a_task_is_warned_about(self) -> None:
        records = [
            {"task_id": "vtb-a-medical-001", "model_answer": "API Error: boom"},
            {"task_id": "vtb-a-medical-001", "model_answer": "Upper left."},
            {"task_id": "vtb-d-sports-004", "model_answer": None},
            {"task_id": "vtb-d-sports-004", "model_answer": "Two."},
            {
                "task_id": "vtb-b-maths-002",
                "turns": [
                    {"turn_number": 0, "model_answer": "24"},
                    {"turn_number": 0, "model_answer": "25"},
                    {"turn_number": 1, "model_answer": "48"},
                ],
            },
        ]
        result = run_cli(
            "import-responses", str(self.official(records, "d.json")), "-d", str(self.root)
        )
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(
            read_jsonl(self.root / "responses.jsonl"),
            [
                {"id": "vtb-a-medical-001::0", "raw_output": "Upper left."},
                {"id": "vtb-b-maths-002::0", "raw_output": "25"},
                {"id": "vtb-b-maths-002::1", "raw_output": "48"},
                {"id": "vtb-d-sports-004::0", "raw_output": "Two."},
            ],
        )
        # The replaced records' error text and null answer are not what was imported.
        self.assertNotIn("official error texts", result.stderr)
        self.assertNotIn("null answer", result.stderr)
        self.assertIn("2 task(s) have several records", result.stderr)
        self.assertIn(
            "1 turn(s) appear several times in one record: the last is used: vtb-b-maths-002::0",
            result.stderr,
        )
