"""Misspelt keys are warned about once per file with the closest known key; files of the
wrong kind get a hint naming the right usage (both benchmarks)."""

from __future__ import annotations

import json
import shutil
import tempfile
import unittest
from pathlib import Path

from tests.cli_helpers import SAMPLE, VTB_SAMPLE, export_samples, run_cli


def rewrite(path: Path, change) -> None:  # type: ignore[no-untyped-def]
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    path.write_text("".join(json.dumps(change(line)) + "\n" for line in lines), encoding="utf-8")


class LineHintTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.runs = export_samples(cls.tmp)
        for run, sample in cls.runs.values():
            # VisualToolBench's check-judge reads the responses first: every test has them.
            shutil.copy(sample / "responses.jsonl", run / "responses.jsonl")

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp)

    def test_a_misspelt_key_is_warned_about_once_with_the_closest_key(self) -> None:
        for name, (run, sample) in self.runs.items():
            with self.subTest(benchmark=name):
                responses = run / "responses.jsonl"
                shutil.copy(sample / "responses.jsonl", responses)
                rewrite(responses, lambda line: {**line, "parsed_answers": "x"})
                result = run_cli(
                    "score", "-d", str(run), "--allow-missing", "-o", str(run / "r.json")
                )
                warned = [w for w in result.stderr.splitlines() if "parsed_answers" in w]
                self.assertEqual(len(warned), 1, result.stderr)
                self.assertIn("did you mean 'parsed_answer'?", warned[0])
                self.assertIn("line 1", warned[0])

    def test_a_json_array_is_named_with_a_jq_hint(self) -> None:
        # Results written as one JSON array ([{...}, {...}], on one line or pretty-printed)
        # were "expected a JSON object, got list" or "malformed JSON line (a pretty-printed
        # JSON document?)": now named, with the command that turns them into JSON Lines.
        for name, (run, sample) in self.runs.items():
            for kind in ("responses", "judge_responses"):
                lines = [
                    json.loads(line)
                    for line in (sample / f"{kind}.jsonl").read_text("utf-8").splitlines()
                ]
                for indent in (None, 2):
                    with self.subTest(benchmark=name, file=kind, indent=indent):
                        given = self.tmp / f"{name}-{kind}-{indent}.json"
                        given.write_text(json.dumps(lines, indent=indent), encoding="utf-8")
                        if kind == "responses":
                            commands = [("score", "-d", str(run), str(given))]
                        else:
                            commands = [
                                ("score", "-d", str(run), "--judge-responses", str(given)),
                                ("check-judge", "-d", str(run), str(given)),
                                ("check-judge", str(given)),
                            ]
                        for args in commands:
                            if args[0] == "score":
                                args += ("--allow-missing", "-o", str(run / "r.json"))
                            result = run_cli(*args)
                            self.assertEqual(result.exit_code, 2, result.stderr)
                            self.assertIn(
                                f"error: {given}:1: a JSON array, not JSON Lines: write one "
                                "object per line",
                                result.stderr,
                            )
                            self.assertIn(
                                f"hint: jq -c '.[]' {given} > {given.with_suffix('.jsonl')}",
                                result.stderr,
                            )

    def test_the_official_results_array_given_as_responses_is_sent_to_import(self) -> None:
        run, _ = self.runs["vtb"]
        records = [{"task_id": "t1", "prompt": "p", "model_answer": "an answer"}]
        given = self.tmp / "results.json"
        for indent in (None, 2):
            with self.subTest(indent=indent):
                given.write_text(json.dumps(records, indent=indent), encoding="utf-8")
                result = run_cli("score", "-d", str(run), str(given), "-o", str(run / "r.json"))
                self.assertEqual(result.exit_code, 2, result.stderr)
                self.assertIn("a JSON array of the official runner's results", result.stderr)
                self.assertIn(f"datbench import-responses {given} -d RUN", result.stderr)

    def test_known_keys_are_not_warned_about(self) -> None:
        run, sample = self.runs["dat"]
        shutil.copy(sample / "responses.jsonl", run / "responses.jsonl")
        result = run_cli("score", "-d", str(run), "-o", str(run / "r.json"))
        self.assertNotIn("unknown key", result.stderr)

    def test_the_documented_manifest_digest_is_not_an_unknown_key(self) -> None:
        """Response and judge lines may carry "manifest_sha256" (docs/guide.md); provenance
        reads it, so it is no unknown key (it was warned about as one)."""
        for name, (run, sample) in self.runs.items():
            with self.subTest(benchmark=name):
                for file in ("responses.jsonl", "judge_responses.jsonl"):
                    shutil.copy(sample / file, run / file)
                    rewrite(run / file, lambda line: {**line, "manifest_sha256": "ab" * 32})
                result = run_cli(
                    "score", "-d", str(run), "--allow-missing", "-o", str(run / "r.json")
                )
                (run / "judge_responses.jsonl").unlink()
                shutil.copy(sample / "responses.jsonl", run / "responses.jsonl")
                self.assertIn("made against another export", result.stderr)
                self.assertNotIn("unknown key", result.stderr)

    def test_a_dash_for_standard_input_gets_a_hint(self) -> None:
        run, _ = self.runs["dat"]
        result = run_cli("score", "-", "-d", str(run), "-q")
        self.assertEqual(result.exit_code, 2)
        self.assertEqual(
            result.stderr.splitlines(),
            ["error: -: file not found", "hint: standard input is read as /dev/stdin"],
        )

    def test_a_judge_file_given_as_responses_gets_a_hint(self) -> None:
        for name, (run, sample) in self.runs.items():
            with self.subTest(benchmark=name):
                result = run_cli("score", str(sample / "judge_responses.jsonl"), "-d", str(run))
                self.assertEqual(result.exit_code, 2, result.stderr)
                self.assertIn("hint: this looks like a judge-response file", result.stderr)
                self.assertIn("--judge-responses", result.stderr)

    def test_a_raw_output_of_another_type_names_null_as_allowed(self) -> None:
        # Both benchmarks accept a null raw_output (no answer); DatBench's message said
        # "must be a string", as if null were refused too.
        for name, (run, _) in self.runs.items():
            with self.subTest(benchmark=name):
                bad = run / "numbers.jsonl"
                shutil.copy(run / "responses.jsonl", bad)
                rewrite(bad, lambda line: {**line, "raw_output": 5})
                result = run_cli("score", str(bad), "-d", str(run))
                self.assertEqual(result.exit_code, 2, result.stderr)
                self.assertIn(
                    'numbers.jsonl:1: "raw_output" must be a string or null, got int',
                    result.stderr,
                )

    def test_tasks_jsonl_given_as_responses_gets_a_hint(self) -> None:
        for name, (run, _) in self.runs.items():
            with self.subTest(benchmark=name):
                result = run_cli("score", str(run / "tasks.jsonl"), "-d", str(run))
                self.assertEqual(result.exit_code, 2, result.stderr)
                self.assertIn("tasks.jsonl", result.stderr.splitlines()[-1])
                judged = run_cli("check-judge", str(run / "tasks.jsonl"), "-d", str(run))
                self.assertEqual(judged.exit_code, 2, judged.stderr)
                hint = judged.stderr.splitlines()[-1]
                self.assertIn("tasks.jsonl", hint)
                self.assertIn('"raw_judge_output"', hint)

    def test_references_jsonl_given_as_responses_gets_its_own_hint(self) -> None:
        for name, (run, _) in self.runs.items():
            for command, kind in (("score", "the model's responses"), ("check-judge", "judge")):
                with self.subTest(benchmark=name, command=command):
                    result = run_cli(command, str(run / "references.jsonl"), "-d", str(run))
                    self.assertEqual(result.exit_code, 2, result.stderr)
                    lines = result.stderr.strip().splitlines()
                    self.assertEqual(len(lines), 2, result.stderr)
                    self.assertIn("references.jsonl:1:", lines[0])
                    self.assertTrue(lines[1].startswith("hint: "), result.stderr)
                    self.assertIn("looks like references.jsonl", lines[1])
                    self.assertIn(kind, lines[1])
                    self.assertNotIn("tasks.jsonl", lines[1])

    def test_judge_tasks_jsonl_given_as_judge_responses_is_named(self) -> None:
        """It was called references.jsonl (DatBench) or tasks.jsonl (VisualToolBench)."""
        for name, (run, _) in self.runs.items():
            made = run_cli("make-judge-tasks", "-d", str(run), "-q")
            self.assertEqual(made.exit_code, 0, made.stderr)
            judge_tasks = str(run / "judge_tasks.jsonl")
            for args in (
                ("check-judge", judge_tasks, "-d", str(run)),
                ("score", "-d", str(run), "--judge-responses", judge_tasks),
                ("make-judge-tasks", "-d", str(run), "--skip-done", judge_tasks, "-o", "x.jsonl"),
                ("score", judge_tasks, "-d", str(run)),
            ):
                with self.subTest(benchmark=name, command=args[0]):
                    result = run_cli(*args)
                    self.assertEqual(result.exit_code, 2, result.stderr)
                    hint = result.stderr.strip().splitlines()[-1]
                    self.assertIn("hint: this looks like judge_tasks.jsonl", hint)


class SendHintTests(unittest.TestCase):
    """``send`` given a runner's task file (both benchmarks) names the request files."""

    def test_task_files_point_to_the_request_files(self) -> None:
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp, True)
        for name, target, sample in (("dat", "math", SAMPLE), ("vtb", "vistoolbench", VTB_SAMPLE)):
            run = tmp / name
            result = run_cli("export-tasks", target, "--source", str(sample), "-d", str(run), "-q")
            self.assertEqual(result.exit_code, 0, result.stderr)
            copy = tmp / f"{name}-copy.jsonl"  # renamed: the lines alone must give the hint
            copy.write_bytes((run / "tasks.jsonl").read_bytes())
            for path, extra in ((run / "tasks.jsonl", ()), (copy, ("-o", str(tmp / "o.jsonl")))):
                with self.subTest(benchmark=name, file=path.name):
                    result = run_cli("send", str(path), "--base-url", "http://127.0.0.1:9", *extra)
                    self.assertEqual(result.exit_code, 2, result.stderr)
                    lines = result.stderr.strip().splitlines()
                    self.assertEqual(len(lines), 2, result.stderr)
                    self.assertTrue(lines[0].startswith("error: "), result.stderr)
                    self.assertTrue(lines[1].startswith("hint: "), result.stderr)
                    self.assertIn("requests/tasks.openai.", lines[1])
                    self.assertFalse((tmp / "o.jsonl").exists())

    def test_a_folder_is_named_with_the_request_files_in_it(self) -> None:
        """The requests/ folder or the run directory itself, with or without --out."""
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp, True)
        run = tmp / "run"
        result = run_cli(
            "export-tasks", "math", "--source", str(SAMPLE), "-d", str(run), "-q",
            "--format", "openai", "--model", "m",
        )  # fmt: skip
        self.assertEqual(result.exit_code, 0, result.stderr)
        for folder in (run / "requests", run):
            for extra in ((), ("-o", str(tmp / "o.jsonl"))):
                with self.subTest(folder=folder.name, out=bool(extra)):
                    result = run_cli(
                        "send", str(folder), "--base-url", "http://127.0.0.1:9", *extra
                    )
                    self.assertEqual(result.exit_code, 2, result.stderr)
                    lines = result.stderr.strip().splitlines()
                    self.assertEqual(len(lines), 2, result.stderr)
                    self.assertIn(f"{folder}: is a directory", lines[0])
                    self.assertIn(str(run / "requests" / "tasks.openai.*.jsonl"), lines[1])
                    self.assertFalse((tmp / "o.jsonl").exists())

    def test_a_missing_request_file_is_named_as_missing(self) -> None:
        """A mistyped name was told to pass --out (its name says neither tasks nor judge
        tasks); a pattern the shell matched nothing with gets the hint naming the request
        files."""
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp, True)
        for name, hinted in (
            ("requests/taks.openai.00001.jsonl", False),
            ("my-requests.jsonl", False),
            ("requests/tasks.openai.*.jsonl", True),
        ):
            with self.subTest(name=name):
                path = tmp / name
                result = run_cli("send", str(path), "--base-url", "http://127.0.0.1:9")
                self.assertEqual(result.exit_code, 2, result.stderr)
                lines = result.stderr.strip().splitlines()
                self.assertEqual(lines[0], f"error: {path}: file not found", result.stderr)
                self.assertEqual(len(lines), 2 if hinted else 1, result.stderr)
                if hinted:
                    self.assertIn("--format openai", lines[1])
                self.assertFalse((tmp / "responses.jsonl").exists())


class _MathRunTests(unittest.TestCase):
    """A DatBench math export, and the one error line of a refused command."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.run_dir = cls.tmp / "run"
        result = run_cli(
            "export-tasks", "math", "--source", str(SAMPLE), "-d", str(cls.run_dir), "-q"
        )
        assert result.exit_code == 0, result.stderr

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp)

    def error(self, *args: str) -> str:
        result = run_cli(*args)
        self.assertEqual(result.exit_code, 2, result.stderr)
        errors = [x for x in result.stderr.splitlines() if x.startswith("error: ")]
        self.assertEqual(len(errors), 1, result.stderr)
        return errors[0]


class EncodingTests(_MathRunTests):
    """A file in another encoding than UTF-8 is named as such (by file and line), not as
    malformed JSON with a parser's message about surrogates or binary data."""

    def test_utf16_response_files_are_named_utf16(self) -> None:
        text = '{"id": "a", "raw_output": "yes"}\n{"id": "b", "raw_output": "no"}\n'
        responses = self.run_dir / "responses.jsonl"
        for encoding in ("utf-16", "utf-16-le", "utf-16-be"):
            with self.subTest(encoding=encoding):
                responses.write_bytes(text.encode(encoding))
                for command in ("score", "make-judge-tasks"):
                    line = self.error(command, "-d", str(self.run_dir), "-o", str(self.tmp / "o"))
                    self.assertIn(f"{responses}", line)
                    self.assertIn("UTF-16", line)

    def test_utf16_json_documents_are_named_utf16(self) -> None:
        report = self.tmp / "report.json"
        report.write_bytes('{"summary": {}, "results": []}'.encode("utf-16"))
        line = self.error("view", str(report), "-o", str(self.tmp / "page.html"))
        self.assertIn(f"{report}", line)
        self.assertIn("UTF-16", line)

    def test_a_byte_that_is_not_utf8_is_named_with_its_line(self) -> None:
        responses = self.run_dir / "responses.jsonl"
        responses.write_bytes(
            b'{"id": "a", "raw_output": "yes"}\n{"id": "b", "raw_output": "caf\xe9"}\n'
        )
        line = self.error("score", "-d", str(self.run_dir), "-o", str(self.tmp / "o"))
        self.assertIn(f"{responses}:2:", line)
        self.assertIn("not valid UTF-8 (byte 0xe9", line)
        self.assertNotIn("surrogates", line)


class JsonDocumentTests(_MathRunTests):
    """A pretty-printed JSON document saved as a JSONL file is named as such."""

    def test_a_pretty_printed_document_is_named(self) -> None:
        responses = self.run_dir / "responses.jsonl"
        lines = [{"id": "a", "raw_output": "yes"}, {"id": "b", "raw_output": "no"}]
        for name, document in (("array", lines), ("object", lines[0])):
            with self.subTest(document=name):
                responses.write_text(json.dumps(document, indent=2), encoding="utf-8")
                line = self.error("score", "-d", str(self.run_dir), "-o", str(self.tmp / "o"))
                self.assertIn(f"{responses}:1:", line)
                self.assertIn(
                    "a JSON array, not JSON Lines" if name == "array" else "pretty-printed JSON",
                    line,
                )


if __name__ == "__main__":
    unittest.main()


class ArrayReaderTests(unittest.TestCase):
    """files/ knows no benchmark's array format: the benchmarks table names it (one reader
    each); without readers a results array gets the generic hint."""

    def test_the_benchmarks_table_names_the_official_results_array(self) -> None:
        from datbench_cli import benchmarks
        from datbench_cli.errors import InputError
        from datbench_cli.files import jsonio

        with tempfile.TemporaryDirectory() as folder:
            given = Path(folder) / "results.json"
            given.write_text(json.dumps([{"task_id": "t", "model_answer": "a"}]))
            messages = []
            # The table's readers last, as every other test finds them.
            for readers in ((), tuple(b.array_hint for b in benchmarks.BENCHMARKS.values())):
                jsonio.recognise_arrays(*readers)
                with self.assertRaises(InputError) as caught:
                    list(jsonio.iter_jsonl(given))
                messages.append((caught.exception.bare_message, caught.exception.hint))
        self.assertEqual(messages[0][0], "a JSON array, not JSON Lines: write one object per line")
        self.assertIn("official runner's results", messages[1][0])
        self.assertEqual(
            messages[1][1], f"convert it with `datbench import-responses {given} -d RUN`"
        )
        files = Path(jsonio.__file__).parent
        for source in (
            files / "jsonio.py",
            files / "fields.py",
            files.parent / "batch/line_keys.py",
        ):
            self.assertNotIn("model_answer", source.read_text())

    def test_an_official_record_line_is_named_by_its_benchmark(self) -> None:
        from datbench_cli import benchmarks
        from datbench_cli.batch import line_keys

        record = {"task_id": "t", "turns": [{"turn_number": 1, "model_answer": "a"}]}
        line_keys.recognise_lines()
        try:
            self.assertIsNone(line_keys.wrong_file_hint(record, False))
        finally:
            line_keys.recognise_lines(*(b.line_hint for b in benchmarks.BENCHMARKS.values()))
        self.assertIn("datbench import-responses", line_keys.wrong_file_hint(record, False) or "")
