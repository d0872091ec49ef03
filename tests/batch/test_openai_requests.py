"""OpenAI batch request files: schema, images, judge prompts, part files, CLI options."""

from __future__ import annotations

import base64
import io
import json
import shutil
import tempfile
import unittest
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from datbench_cli.batch.digests import response_digest, split_tagged_id
from datbench_cli.batch.requests import (
    PartWriter,
    RequestSettings,
    existing_parts,
    judge_request,
    task_requests,
    write_parts,
)
from datbench_cli.benchmarks.datbench.judge_prompt import DEFAULT_JUDGE_INSTRUCTION, judge_text
from datbench_cli.benchmarks.vistoolbench.stages import inference_units
from datbench_cli.benchmarks.vistoolbench.stages import judge_text as vtb_judge_text
from datbench_cli.errors import UsageError
from tests.cli_helpers import (
    SAMPLE,
    make_dataset,
    make_row,
    png_bytes,
    run_cli,
    sample_capabilities,
)

CHAT_ROLES = {"system", "user", "assistant"}


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def jpeg_bytes() -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (5, 7), (200, 10, 10)).save(buffer, format="JPEG")
    return buffer.getvalue()


def assert_batch_request(case: unittest.TestCase, line: dict[str, Any]) -> None:
    """The OpenAI batch input schema for /v1/chat/completions: required fields and types."""
    case.assertEqual(set(line), {"custom_id", "method", "url", "body"})
    case.assertIsInstance(line["custom_id"], str)
    case.assertTrue(line["custom_id"])
    case.assertEqual(line["method"], "POST")
    case.assertEqual(line["url"], "/v1/chat/completions")
    body = line["body"]
    case.assertIsInstance(body, dict)
    case.assertIsInstance(body["model"], str)
    case.assertTrue(body["model"])
    case.assertIsInstance(body["max_tokens"], int)
    case.assertNotIsInstance(body["max_tokens"], bool)
    case.assertGreaterEqual(body["max_tokens"], 1)
    case.assertIsInstance(body["temperature"], int | float)
    case.assertNotIsInstance(body["temperature"], bool)
    case.assertTrue(0 <= body["temperature"] <= 2)
    case.assertIsInstance(body["messages"], list)
    case.assertTrue(body["messages"])
    for message in body["messages"]:
        case.assertEqual(set(message), {"role", "content"})
        case.assertIn(message["role"], CHAT_ROLES)
        content = message["content"]
        if isinstance(content, str):
            continue
        case.assertIsInstance(content, list)
        case.assertEqual(message["role"], "user")
        for part in content:
            case.assertIn(part["type"], ("text", "image_url"))
            if part["type"] == "text":
                case.assertEqual(set(part), {"type", "text"})
                case.assertIsInstance(part["text"], str)
            else:
                case.assertEqual(set(part), {"type", "image_url"})
                case.assertIsInstance(part["image_url"]["url"], str)
    case.assertEqual(body["messages"][-1]["role"], "user")


def image_urls(request: dict[str, Any]) -> list[str]:
    parts = request["body"]["messages"][-1]["content"]
    return [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]


def prompt_text(request: dict[str, Any]) -> str:
    content = request["body"]["messages"][-1]["content"]
    return content if isinstance(content, str) else content[-1]["text"]


def request_lines(run_dir: Path, stem: str = "tasks") -> list[dict]:
    return [row for part in existing_parts(run_dir / "requests", stem) for row in lines(part)]


class ExportRequestsTests(unittest.TestCase):
    """export-tasks --format openai on a small dataset with PNG, JPEG, no-image and judge rows."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.jpeg = jpeg_bytes()
        rows = {
            "math": [
                make_row("m1"),
                make_row("m2", image={"bytes": cls.jpeg, "path": "m2.jpg"}),
                make_row("m3", eval_mode="judge", judge_prompt="Q {question} A {model_answer}"),
            ],
            "general": [make_row("g1", image=None)],
        }
        cls.source = make_dataset(cls.tmp, rows)
        cls.run_dir = cls.tmp / "run"
        cls.result = cls.export(cls.run_dir, "--model", "test-model", "--max-tokens", "64")

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def export(cls, target: Path, *options: str, fmt: str = "openai") -> Any:
        args = ["export-tasks", "math", "general", "--source", str(cls.source), "-d", str(target)]
        if fmt:
            args += ["--format", fmt]
        return run_cli(*args, *options)

    def test_lines_validate_against_the_batch_input_schema(self) -> None:
        self.assertEqual(self.result.exit_code, 0, self.result.stderr)
        requests = request_lines(self.run_dir)
        self.assertEqual(len(requests), 4)
        for request in requests:
            with self.subTest(request["custom_id"]):
                assert_batch_request(self, request)
                self.assertEqual(request["body"]["model"], "test-model")
                self.assertEqual(request["body"]["max_tokens"], 64)
                self.assertEqual(request["body"]["temperature"], 0)

    def test_one_request_per_task_with_its_prompt(self) -> None:
        tasks = lines(self.run_dir / "tasks.jsonl")
        requests = request_lines(self.run_dir)
        self.assertEqual([r["custom_id"] for r in requests], [t["id"] for t in tasks])
        for task, request in zip(tasks, requests, strict=True):
            self.assertEqual(prompt_text(request), task["question"])
            self.assertEqual(len(image_urls(request)), 0 if task["image"] is None else 1)
            parts = request["body"]["messages"][-1]["content"]
            self.assertEqual(parts[-1]["type"], "text", "images come before the text")

    def test_data_url_decodes_to_the_exported_bytes(self) -> None:
        tasks = {t["id"]: t for t in lines(self.run_dir / "tasks.jsonl")}
        expected_mime = {"m1": "image/png", "m2": "image/jpeg", "m3": "image/png"}
        for request in request_lines(self.run_dir):
            urls = image_urls(request)
            if not urls:
                continue
            header, payload = urls[0].split(",", 1)
            ident = request["custom_id"]
            self.assertEqual(header, f"data:{expected_mime[ident]};base64")
            exported = (self.run_dir / tasks[ident]["image"]).read_bytes()
            self.assertEqual(base64.b64decode(payload, validate=True), exported)
        self.assertEqual((self.run_dir / tasks["m2"]["image"]).read_bytes(), self.jpeg)

    def test_manifest_records_the_request_files(self) -> None:
        manifest = json.loads((self.run_dir / "datbench.json").read_text())
        options = manifest["options"]["openai_requests"]
        self.assertEqual(options["files"], ["requests/tasks.openai.00001.jsonl"])
        self.assertEqual(options["model"], "test-model")
        self.assertEqual(options["image_mode"], "data-url")

    def test_file_mode_gives_absolute_file_urls(self) -> None:
        target = self.tmp / "file-mode"
        result = self.export(target, "--model", "m", "--image-mode", "file")
        self.assertEqual(result.exit_code, 0, result.stderr)
        tasks = {t["id"]: t for t in lines(target / "tasks.jsonl")}
        for request in request_lines(target):
            for url in image_urls(request):
                parsed = urlparse(url)
                self.assertEqual(parsed.scheme, "file")
                path = Path(unquote(parsed.path))
                self.assertTrue(path.is_absolute())
                expected = (target / tasks[request["custom_id"]]["image"]).resolve()
                self.assertEqual(path, expected)
                self.assertEqual(path.read_bytes(), expected.read_bytes())

    def test_url_mode_joins_the_base_url_and_the_image_path(self) -> None:
        target = self.tmp / "url-mode"
        base = "https://bucket.example/run-7/"
        result = self.export(
            target, "--model", "m", "--image-mode", "url", "--image-base-url", base
        )
        self.assertEqual(result.exit_code, 0, result.stderr)
        tasks = {t["id"]: t for t in lines(target / "tasks.jsonl")}
        urls = {r["custom_id"]: image_urls(r) for r in request_lines(target)}
        self.assertEqual(urls["m1"], [f"https://bucket.example/run-7/{tasks['m1']['image']}"])
        self.assertEqual(urls["g1"], [])

    def test_bad_option_combinations_are_usage_errors(self) -> None:
        target = self.tmp / "never"
        cases = [
            (("--model", "m", "--image-mode", "url"), "openai", "--image-base-url"),
            (("--model", "m", "--image-base-url", "http://x"), "openai", "--image-mode url"),
            ((), "openai", "--model"),
            (("--model", "m"), "", "--format openai"),
            (("--model", "m", "--image-mode", "file"), "jsonl", "--format openai"),
        ]
        for options, fmt, fragment in cases:
            with self.subTest(options=options, fmt=fmt):
                result = self.export(target, *options, fmt=fmt)
                self.assertEqual(result.exit_code, 2, result.stderr)
                self.assertIn(fragment, result.stderr)
                self.assertFalse(target.exists())

    def test_parts_split_by_size_and_stale_parts_go_away(self) -> None:
        target = self.tmp / "parts"
        single = self.tmp / "single"
        self.assertEqual(self.export(single, "--model", "m").exit_code, 0)
        result = self.export(target, "--model", "m", "--max-file-mb", "0.0013")
        self.assertEqual(result.exit_code, 0, result.stderr)
        parts = existing_parts(target / "requests", "tasks")
        self.assertGreater(len(parts), 1)
        self.assertEqual(parts[0].name, "tasks.openai.00001.jsonl")
        for part in parts:
            self.assertLessEqual(part.stat().st_size, 1300)
        self.assertEqual(request_lines(target), request_lines(single))

        result = self.export(target, fmt="")
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(existing_parts(target / "requests", "tasks"), [])

    def test_a_request_larger_than_a_part_is_refused(self) -> None:
        target = self.tmp / "too-big"
        result = self.export(target, "--model", "m", "--max-file-mb", "0.0001")
        self.assertEqual(result.exit_code, 2)
        self.assertIn("--max-file-mb", result.stderr)
        self.assertFalse((target / "datbench.json").exists())


class PartWriterTests(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())

    def tearDown(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_line_limit(self) -> None:
        rows = [{"custom_id": str(i)} for i in range(5)]
        paths = write_parts(self.tmp, "tasks", rows, max_lines=2)
        self.assertEqual([len(lines(p)) for p in paths], [2, 2, 1])
        self.assertEqual([r for p in paths for r in lines(p)], rows)
        self.assertEqual(
            [p.name for p in paths], [f"tasks.openai.0000{i}.jsonl" for i in (1, 2, 3)]
        )

    def test_byte_limit_never_exceeded(self) -> None:
        rows = [{"custom_id": str(i), "pad": "x" * (i * 7)} for i in range(20)]
        paths = write_parts(self.tmp, "t", rows, max_bytes=200)
        self.assertTrue(all(p.stat().st_size <= 200 for p in paths))
        self.assertEqual([r for p in paths for r in lines(p)], rows)

    def test_rewrite_removes_stale_parts_and_a_failure_keeps_the_old_ones(self) -> None:
        write_parts(self.tmp, "t", [{"n": i} for i in range(3)], max_lines=1)
        paths = write_parts(self.tmp, "t", [{"n": 9}], max_lines=1)
        self.assertEqual(existing_parts(self.tmp, "t"), paths)
        self.assertEqual(lines(paths[0]), [{"n": 9}])
        with self.assertRaises(RuntimeError), PartWriter(self.tmp, "t", max_lines=1) as writer:
            writer.write({"n": 1})
            writer.write({"n": 2})
            raise RuntimeError("interrupted")
        self.assertEqual(existing_parts(self.tmp, "t"), paths)
        self.assertEqual(lines(paths[0]), [{"n": 9}])
        self.assertEqual(sorted(p.name for p in self.tmp.iterdir()), ["t.openai.00001.jsonl"])

    def test_no_rows_no_parts(self) -> None:
        write_parts(self.tmp, "t", [{"n": 1}])
        self.assertEqual(write_parts(self.tmp, "t", []), [])
        self.assertEqual(existing_parts(self.tmp, "t"), [])


class JudgeTextTests(unittest.TestCase):
    def task(self, prompt: str, **extra: Any) -> dict[str, Any]:
        base = {
            "id": "j1",
            "judge_prompt": prompt,
            "question": "Evaluate $\\frac{1}{2}$ {x}",
            "ground_truth": "{0.5}",
            "all_answers": ["{0.5}"],
            "vlm_response": 'It is {"value": 0.5} -- {question}',
        }
        base.update(extra)
        return base

    def test_placeholders_are_replaced_literally(self) -> None:
        prompt = 'Q: {question}\nRef: {correct_answer}\nGot: {model_answer}\nReply {"answer": true} \\frac{a}{b}'
        text = judge_text(self.task(prompt))
        self.assertEqual(
            text,
            'Q: Evaluate $\\frac{1}{2}$ {x}\nRef: {0.5}\nGot: It is {"value": 0.5} -- {question}'
            '\nReply {"answer": true} \\frac{a}{b}',
        )

    def test_no_placeholders_appends_labelled_inputs(self) -> None:
        task = self.task("Grade the answer.", all_answers=["{0.5}", "1/2", "0.50", "1/2"])
        text = judge_text(task)
        self.assertEqual(
            text,
            "Grade the answer.\n\nQuestion:\nEvaluate $\\frac{1}{2}$ {x}\n\n"
            "Reference answer:\n{0.5}\n\nOther accepted answers:\n1/2\n0.50\n\n"
            'Model answer:\nIt is {"value": 0.5} -- {question}',
        )

    def test_missing_placeholders_are_appended_only(self) -> None:
        text = judge_text(self.task("Answer given: {model_answer}"))
        self.assertTrue(text.startswith('Answer given: It is {"value": 0.5} -- {question}\n\n'))
        self.assertIn("Question:\nEvaluate", text)
        self.assertIn("Reference answer:\n{0.5}", text)
        self.assertNotIn("Model answer:", text)

    def test_empty_prompt_gets_the_default_instruction(self) -> None:
        text = judge_text(self.task(""))
        self.assertTrue(text.startswith(DEFAULT_JUDGE_INSTRUCTION + "\n\nQuestion:\n"))

    def test_vistoolbench_prompts_are_sent_as_they_are(self) -> None:
        rendered = "Grade this {question} as is."
        task = {"id": "t::0::r1", "rubric_id": "r1", "judge_prompt": rendered, "question": "q"}
        self.assertEqual(vtb_judge_text(task), rendered)

    def test_judge_request_is_text_only(self) -> None:
        task = self.task("{question}")
        request = judge_request(task["id"], judge_text(task), RequestSettings("judge", 16))
        assert_batch_request(self, request)
        self.assertEqual(request["custom_id"], "j1")
        self.assertIsInstance(request["body"]["messages"][0]["content"], str)


class VisToolBenchTurnTests(unittest.TestCase):
    """A VisualToolBench tasks.jsonl line (its spec's shape) gives one request per turn."""

    def test_turns_carry_their_history(self) -> None:
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp, True)
        (tmp / "images" / "t1").mkdir(parents=True)
        (tmp / "images" / "t1" / "turn_1_image_0.png").write_bytes(png_bytes())
        task = {
            "id": "t1",
            "turns": [
                {"id": "t1::0", "index": 0, "prompt": "First?", "images": [], "history": []},
                {
                    "id": "t1::1",
                    "index": 1,
                    "prompt": "Second?",
                    "images": ["images/t1/turn_1_image_0.png"],
                    "history": [
                        {"role": "user", "text": "First?"},
                        {"role": "assistant", "text": "Golden one."},
                    ],
                },
            ],
        }
        requests = list(task_requests(inference_units(task), tmp, RequestSettings("m", 32)))
        self.assertEqual([r["custom_id"] for r in requests], ["t1::0", "t1::1"])
        for request in requests:
            assert_batch_request(self, request)
        messages = requests[1]["body"]["messages"]
        self.assertEqual(
            messages[:2],
            [
                {"role": "user", "content": "First?"},
                {"role": "assistant", "content": "Golden one."},
            ],
        )
        self.assertEqual(prompt_text(requests[1]), "Second?")
        url = image_urls(requests[1])[0]
        self.assertEqual(base64.b64decode(url.split(",", 1)[1]), png_bytes())
        self.assertEqual(len(requests[0]["body"]["messages"]), 1)


class JudgeRequestsCliTests(unittest.TestCase):
    """make-judge-tasks --format openai and --skip-done on the bundled sample data."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.run_dir = cls.tmp / "run"
        result = run_cli(
            "export-tasks", *sample_capabilities(), "--source", str(SAMPLE), "-d", str(cls.run_dir)
        )
        assert result.exit_code == 0, result.stderr
        shutil.copy(SAMPLE / "responses.jsonl", cls.run_dir / "responses.jsonl")

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_judge_requests_hold_the_filled_prompt(self) -> None:
        result = run_cli(
            "make-judge-tasks", "-d", str(self.run_dir), "--format", "openai", "--model", "judge"
        )
        self.assertEqual(result.exit_code, 0, result.stderr)
        tasks = lines(self.run_dir / "judge_tasks.jsonl")
        requests = request_lines(self.run_dir, "judge_tasks")
        # The custom_id carries the digest of the judged response back from the judge runner.
        self.assertEqual(
            [r["custom_id"] for r in requests],
            [f"{t['id']}#{response_digest(t['vlm_response'])}" for t in tasks],
        )
        for task, request in zip(tasks, requests, strict=True):
            assert_batch_request(self, request)
            self.assertEqual(request["body"]["max_tokens"], 512)
            content = request["body"]["messages"][0]["content"]
            self.assertIsInstance(content, str)
            self.assertEqual(content, judge_text(task))
            self.assertIn(task["vlm_response"], content)
            self.assertIn(task["question"], content)
            self.assertNotIn("{model_answer}", content)

    def test_skip_done_emits_only_tasks_without_a_parsed_verdict(self) -> None:
        result = run_cli("make-judge-tasks", "-d", str(self.run_dir))
        self.assertEqual(result.exit_code, 0, result.stderr)
        ids = [t["id"] for t in lines(self.run_dir / "judge_tasks.jsonl")]
        self.assertGreaterEqual(len(ids), 4)
        done = self.tmp / "done.jsonl"
        done.write_text(
            "\n".join(
                [
                    json.dumps({"id": ids[0], "raw_judge_output": "true"}),
                    json.dumps({"id": ids[1], "raw_judge_output": "answer: false"}),
                    json.dumps({"id": ids[2], "raw_judge_output": "no idea"}),
                    json.dumps({"custom_id": ids[3], "response": None, "error": "boom"}),
                ]
            )
            + "\n"
        )
        result = run_cli(
            "make-judge-tasks",
            "-d",
            str(self.run_dir),
            "--skip-done",
            str(done),
            "--format",
            "openai",
            "--model",
            "judge",
            "-o",
            str(self.tmp / "rest.jsonl"),
        )
        self.assertEqual(result.exit_code, 0, result.stderr)
        rest = [t["id"] for t in lines(self.tmp / "rest.jsonl")]
        self.assertEqual(rest, ids[2:])
        self.assertEqual(
            [split_tagged_id(r["custom_id"])[0] for r in request_lines(self.run_dir, "rest")],
            ids[2:],
        )
        self.assertIn("skipped 2", result.stderr)

    def test_a_damaged_judge_tasks_file_is_replaced_not_read(self) -> None:
        """Without --skip-done the judge tasks file is only written: a damaged one (a line
        edited by hand) stopped make-judge-tasks with an error about its own output."""
        (self.run_dir / "judge_tasks.jsonl").write_text('{"id": "x", damaged\n')
        result = run_cli("make-judge-tasks", "-d", str(self.run_dir))
        self.assertEqual(result.exit_code, 0, result.stderr)
        tasks = lines(self.run_dir / "judge_tasks.jsonl")
        self.assertGreaterEqual(len(tasks), 4)
        self.assertNotIn("x", [t["id"] for t in tasks])

    def test_judge_tasks_named_tasks_never_touch_the_exports_requests(self) -> None:
        """``-o elsewhere/tasks.jsonl`` replaced requests/tasks.openai.00001.jsonl (the model's
        requests) with judge requests, and without --format openai deleted it."""
        run = self.tmp / "with-requests"
        exported = run_cli(
            "export-tasks", "math", "--source", str(SAMPLE), "-d", str(run),
            "--format", "openai", "--model", "m",
        )  # fmt: skip
        self.assertEqual(exported.exit_code, 0, exported.stderr)
        shutil.copy(SAMPLE / "responses.jsonl", run / "responses.jsonl")
        before = {p.name: p.read_bytes() for p in (run / "requests").iterdir()}
        elsewhere = self.tmp / "elsewhere"
        elsewhere.mkdir(exist_ok=True)
        for out, extra in (
            ("tasks.jsonl", ("--format", "openai", "--model", "judge")),
            ("tasks.jsonl", ()),
            ("tasks", ()),
        ):
            with self.subTest(out=out, extra=extra):
                result = run_cli(
                    "make-judge-tasks", "-d", str(run), "-o", str(elsewhere / out), *extra
                )
                self.assertEqual(result.exit_code, 2, result.stderr)
                self.assertIn("export-tasks", result.stderr)
                self.assertEqual(
                    {p.name: p.read_bytes() for p in (run / "requests").iterdir()}, before
                )
                self.assertFalse((elsewhere / out).exists())

    def test_judge_tasks_named_as_the_exports_request_files_are_refused(self) -> None:
        """``-o run/requests/tasks.openai.00001.jsonl`` replaced the model's request file with
        judge tasks (exit 0: make-judge-tasks may write in requests/); ``-o
        elsewhere/tasks.openai.jsonl`` wrote requests/tasks.openai.openai.00001.jsonl, which a
        re-export refuses as not its own and ``send`` answers into responses.jsonl."""
        run = self.tmp / "with-requests"
        exported = run_cli(
            "export-tasks", "math", "--source", str(SAMPLE), "-d", str(run),
            "--format", "openai", "--model", "m",
        )  # fmt: skip
        self.assertEqual(exported.exit_code, 0, exported.stderr)
        shutil.copy(SAMPLE / "responses.jsonl", run / "responses.jsonl")
        before = {p.name: p.read_bytes() for p in (run / "requests").iterdir()}
        elsewhere = self.tmp / "elsewhere"
        elsewhere.mkdir(exist_ok=True)
        for out in (
            run / "requests" / "tasks.openai.00001.jsonl",
            elsewhere / "tasks.openai.jsonl",
            elsewhere / "tasks.openai.00002.jsonl",
        ):
            for extra in (("--format", "openai", "--model", "judge"), ()):
                with self.subTest(out=str(out), extra=extra):
                    result = run_cli("make-judge-tasks", "-d", str(run), "-o", str(out), *extra)
                    self.assertEqual(result.exit_code, 2, result.stderr)
                    self.assertIn("export-tasks", result.stderr)
                    self.assertEqual(
                        {p.name: p.read_bytes() for p in (run / "requests").iterdir()}, before
                    )
                    self.assertEqual(list(elsewhere.iterdir()), [])


class SettingsTests(unittest.TestCase):
    def test_invalid_settings(self) -> None:
        for kwargs in (
            {"model": "", "max_tokens": 5},
            {"model": "m", "max_tokens": 0},
            {"model": "m", "max_tokens": 5, "image_mode": "inline"},
        ):
            with self.subTest(kwargs=kwargs), self.assertRaises(UsageError):
                RequestSettings(**kwargs)


if __name__ == "__main__":
    unittest.main()
