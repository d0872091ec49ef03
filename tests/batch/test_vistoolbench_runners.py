"""VisualToolBench with external runners: OpenAI request files for turns and rubric judges,
export shards, make-judge-tasks --skip-done, and gaps/duplicates when scoring merged shards."""

from __future__ import annotations

import base64
import json
import shutil
import tempfile
import unittest
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from datbench_cli.batch.digests import split_tagged_id
from datbench_cli.batch.requests import JSON_OUTPUT, RequestSettings, judge_request
from datbench_cli.batch.shards import shard_of
from tests.batch.test_openai_requests import assert_batch_request, request_lines
from tests.cli_helpers import run_cli
from tests.page_records import page_records
from tests.vtb_support import SAMPLE_DIR, SAMPLE_JUDGE, SAMPLE_RESPONSES, read_jsonl, write_jsonl

A, B, C, D = "vtb-a-medical-001", "vtb-b-maths-002", "finance/vtb-c-003", "vtb-d-sports-004"
E, F = "vtb-e-generalist-005", "vtb-f-physics-006"
ALL_IDS = [A, B, C, D, E, F]
K = 3  # the six sample tasks fall 2 + 2 + 2 into three shards
MIME_BY_SUFFIX = {"jpg": "image/jpeg", "png": "image/png"}


def export(target: Path, *options: str) -> Any:
    return run_cli(
        "export-tasks", "vistoolbench", "--source", str(SAMPLE_DIR), "-d", str(target), *options
    )


def manifest_of(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "datbench.json").read_text(encoding="utf-8"))


def turns_of(run_dir: Path) -> list[dict[str, Any]]:
    """Every turn of a run directory's tasks.jsonl, in task and turn order."""
    return [turn for task in read_jsonl(run_dir / "tasks.jsonl") for turn in task["turns"]]


def answers_for(run_dir: Path) -> list[dict[str, Any]]:
    """A native response line for every turn a run directory's tasks.jsonl asks for."""
    return [{"id": turn["id"], "raw_output": f"answer {turn['id']}"} for turn in turns_of(run_dir)]


def image_files(run_dir: Path) -> set[str]:
    root = run_dir / "images"
    return {p.relative_to(run_dir).as_posix() for p in root.rglob("*") if p.is_file()}


class TurnRequestTests(unittest.TestCase):
    """export-tasks vistoolbench --format openai: one request per turn, history, images."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.run_dir = cls.tmp / "run"
        result = export(cls.run_dir, "--format", "openai", "--model", "vlm", "--max-tokens", "99")
        assert result.exit_code == 0, result.stderr
        cls.stderr = result.stderr
        cls.tasks = read_jsonl(cls.run_dir / "tasks.jsonl")
        cls.references = {r["id"]: r for r in read_jsonl(cls.run_dir / "references.jsonl")}
        cls.requests = request_lines(cls.run_dir)
        cls.by_id = {r["custom_id"]: r for r in cls.requests}

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_one_request_per_turn_in_order(self) -> None:
        self.assertEqual(
            [r["custom_id"] for r in self.requests], [t["id"] for t in turns_of(self.run_dir)]
        )
        self.assertEqual(len(self.requests), 9)

    def test_request_schema(self) -> None:
        for request in self.requests:
            with self.subTest(request=request["custom_id"]):
                assert_batch_request(self, request)
                body = request["body"]
                self.assertEqual(set(body), {"model", "messages", "max_tokens", "temperature"})
                self.assertEqual((body["model"], body["max_tokens"]), ("vlm", 99))
                self.assertEqual(body["temperature"], 0)

    def test_history_messages_in_order_then_the_turn(self) -> None:
        for task in self.tasks:
            golden = [t["golden_answer"] for t in self.references[task["id"]]["turns"]]
            for turn in task["turns"]:
                with self.subTest(turn=turn["id"]):
                    messages = self.by_id[turn["id"]]["body"]["messages"]
                    k = turn["index"]
                    expected = []
                    for earlier in task["turns"][:k]:
                        expected.append({"role": "user", "content": earlier["prompt"]})
                        expected.append({"role": "assistant", "content": golden[earlier["index"]]})
                    self.assertEqual(messages[:-1], expected)
                    last = messages[-1]
                    self.assertEqual(last["role"], "user")
                    # user(prompt_k + images_k): the text first, as the official runner and
                    # the agent send it (the requests had the images first).
                    self.assertEqual(last["content"][0], {"type": "text", "text": turn["prompt"]})
                    self.assertEqual(
                        [part["type"] for part in last["content"][1:]],
                        ["image_url"] * len(turn["images"]),
                    )
        # B's second turn carries turn 0's prompt and golden answer as plain text.
        second = self.by_id[f"{B}::1"]["body"]["messages"]
        self.assertEqual([m["role"] for m in second], ["user", "assistant", "user"])
        self.assertEqual(second[1]["content"], self.references[B]["turns"][0]["golden_answer"])

    def test_no_golden_answer_of_the_turn_itself_or_later(self) -> None:
        for task in self.tasks:
            golden = [t["golden_answer"] for t in self.references[task["id"]]["turns"]]
            for turn in task["turns"]:
                text = json.dumps(self.by_id[turn["id"]])
                for later in golden[turn["index"] :]:
                    if later:
                        self.assertNotIn(json.dumps(later)[1:-1], text)

    def test_images_are_data_urls_of_the_exported_bytes(self) -> None:
        seen = 0
        for turn in turns_of(self.run_dir):
            with self.subTest(turn=turn["id"]):
                parts = self.by_id[turn["id"]]["body"]["messages"][-1]["content"]
                urls = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
                self.assertEqual(len(urls), len(turn["images"]))
                for url, rel in zip(urls, turn["images"], strict=True):
                    header, encoded = url.split(",", 1)
                    suffix = rel.rsplit(".", 1)[1]
                    self.assertEqual(header, f"data:{MIME_BY_SUFFIX[suffix]};base64")
                    self.assertEqual(
                        base64.b64decode(encoded, validate=True),
                        (self.run_dir / rel).read_bytes(),
                    )
                    seen += 1
        self.assertEqual(seen, 8)
        # A's single turn has a JPEG and a PNG, in dataset order.
        a_urls = self.by_id[f"{A}::0"]["body"]["messages"][-1]["content"]
        self.assertEqual([p["type"] for p in a_urls], ["text", "image_url", "image_url"])

    def test_manifest_records_the_request_files(self) -> None:
        recorded = manifest_of(self.run_dir)["options"]["openai_requests"]
        self.assertEqual(
            recorded,
            {
                **RequestSettings(model="vlm", max_tokens=99).describe(),
                "files": ["requests/tasks.openai.00001.jsonl"],
            },
        )
        for name in recorded["files"]:
            self.assertTrue((self.run_dir / name).is_file())
        self.assertIn("--limit-mm-per-prompt", self.stderr)
        self.assertIn('{"image": 2}', self.stderr)

    def test_file_image_mode_points_at_the_exported_files(self) -> None:
        target = self.tmp / "file-mode"
        result = export(target, "--format", "openai", "--model", "m", "--image-mode", "file")
        self.assertEqual(result.exit_code, 0, result.stderr)
        request = next(r for r in request_lines(target) if r["custom_id"] == f"{A}::0")
        parts = request["body"]["messages"][-1]["content"]
        paths = [Path(unquote(urlparse(p["image_url"]["url"]).path)) for p in parts[1:]]
        turn = read_jsonl(target / "tasks.jsonl")[0]["turns"][0]
        self.assertEqual(paths, [(target / rel).resolve() for rel in turn["images"]])


class ExportOptionTests(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def test_model_context_with_openai_format_exits_2_and_writes_nothing(self) -> None:
        target = self.tmp / "run"
        result = export(target, "--format", "openai", "--model", "m", "--context", "model")
        self.assertEqual(result.exit_code, 2)
        self.assertIn("--context model", result.stderr)
        self.assertNotIn("Traceback", result.stderr)
        self.assertFalse(target.exists())

    def test_model_context_refusal_keeps_an_earlier_export(self) -> None:
        target = self.tmp / "run"
        self.assertEqual(export(target).exit_code, 0)
        before = (target / "datbench.json").read_bytes()
        result = export(target, "--format", "openai", "--model", "m", "--context", "model")
        self.assertEqual(result.exit_code, 2)
        self.assertEqual((target / "datbench.json").read_bytes(), before)

    def test_model_context_alone_still_exports(self) -> None:
        result = export(self.tmp / "run", "--context", "model")
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(manifest_of(self.tmp / "run")["context_policy"], "model_history")

    def test_export_without_openai_removes_stale_request_files(self) -> None:
        target = self.tmp / "run"
        self.assertEqual(export(target, "--format", "openai", "--model", "m").exit_code, 0)
        self.assertTrue(request_lines(target))
        result = export(target)
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(request_lines(target), [])
        self.assertNotIn("openai_requests", manifest_of(target)["options"])

    def test_small_parts_split_the_turn_requests(self) -> None:
        target = self.tmp / "run"
        result = export(target, "--format", "openai", "--model", "m", "--max-file-mb", "0.004")
        self.assertEqual(result.exit_code, 0, result.stderr)
        files = manifest_of(target)["options"]["openai_requests"]["files"]
        self.assertGreater(len(files), 1)
        for name in files:
            self.assertLessEqual((target / name).stat().st_size, 4000)
        self.assertEqual(
            [r["custom_id"] for r in request_lines(target)], [t["id"] for t in turns_of(target)]
        )


class ShardTests(unittest.TestCase):
    """export-tasks vistoolbench --num-shards K --shard-index I."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.full = cls.tmp / "full"
        assert export(cls.full).exit_code == 0
        cls.shards = [cls.tmp / f"shard{i}" for i in range(K)]
        for index, target in enumerate(cls.shards):
            result = export(
                target,
                "--num-shards",
                str(K),
                "--shard-index",
                str(index),
                "--format",
                "openai",
                "--model",
                "m",
            )
            assert result.exit_code == 0, result.stderr
            assert f"shard {index} of {K}" in result.stderr, result.stderr

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def shard_ids(self, index: int) -> list[str]:
        return [t["id"] for t in read_jsonl(self.shards[index] / "tasks.jsonl")]

    def test_the_shards_partition_the_tasks_exactly(self) -> None:
        seen: list[str] = []
        for index in range(K):
            ids = self.shard_ids(index)
            self.assertEqual(len(ids), 2)
            self.assertEqual(ids, [i for i in ALL_IDS if shard_of(i, K) == index])
            seen += ids
        self.assertEqual(sorted(seen), sorted(ALL_IDS))
        self.assertEqual(len(seen), len(set(seen)))

    def test_shard_tasks_equal_the_full_export_lines(self) -> None:
        full = {t["id"]: t for t in read_jsonl(self.full / "tasks.jsonl")}
        for index, target in enumerate(self.shards):
            for task in read_jsonl(target / "tasks.jsonl"):
                with self.subTest(shard=index, task=task["id"]):
                    self.assertEqual(task, full[task["id"]])

    def test_a_shard_export_is_deterministic(self) -> None:
        again = self.tmp / "again"
        options = ("--num-shards", str(K), "--shard-index", "2", "--format", "openai")
        result = export(again, *options, "--model", "m")
        self.assertEqual(result.exit_code, 0, result.stderr)
        for name in ("tasks.jsonl", "references.jsonl", "requests/tasks.openai.00001.jsonl"):
            self.assertEqual((again / name).read_bytes(), (self.shards[2] / name).read_bytes())

    def test_every_shard_keeps_all_references_and_only_its_images_and_requests(self) -> None:
        full_refs = (self.full / "references.jsonl").read_bytes()
        for index, target in enumerate(self.shards):
            with self.subTest(shard=index):
                self.assertEqual((target / "references.jsonl").read_bytes(), full_refs)
                referenced = {rel for turn in turns_of(target) for rel in turn["images"]}
                self.assertEqual(image_files(target), referenced)
                for rel in referenced:
                    self.assertEqual((target / rel).read_bytes(), (self.full / rel).read_bytes())
                self.assertEqual(
                    [r["custom_id"] for r in request_lines(target)],
                    [t["id"] for t in turns_of(target)],
                )
                manifest = manifest_of(target)
                self.assertEqual(
                    manifest["options"]["shard"],
                    {
                        "index": index,
                        "count": K,
                        "tasks": 2,
                        "turns": len(turns_of(target)),
                        "images": len(referenced),
                    },
                )
                self.assertEqual(manifest["counts"]["tasks"], 6)
                self.assertEqual(
                    manifest["options"]["openai_requests"]["files"],
                    ["requests/tasks.openai.00001.jsonl"],
                )

    def test_a_shard_over_an_earlier_full_export_drops_the_other_images(self) -> None:
        target = self.tmp / "reused"
        shutil.copytree(self.full, target)
        result = export(target, "--num-shards", str(K), "--shard-index", "0")
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(
            image_files(target), {rel for turn in turns_of(target) for rel in turn["images"]}
        )
        self.assertEqual(sorted(p.name for p in (target / "images").iterdir()), [A, D])

    def test_bad_shard_options_exit_2_and_write_nothing(self) -> None:
        target = self.tmp / "bad"
        for options in (("--num-shards", "3", "--shard-index", "3"), ("--shard-index", "0")):
            with self.subTest(options=options):
                result = export(target, *options)
                self.assertEqual(result.exit_code, 2)
                self.assertIn("shard", result.stderr)
                self.assertFalse(target.exists())

    def score_json(
        self, shard: int, responses: list[dict[str, Any]], name: str, *options: str
    ) -> Any:
        work = self.tmp / name
        shutil.copytree(self.shards[shard], work)
        write_jsonl(work / "responses.jsonl", responses)
        return run_cli("score", "-d", str(work), "--json", *options)

    def test_concatenated_responses_score_in_any_shard(self) -> None:
        merged = [line for target in self.shards for line in answers_for(target)]
        for shard in range(K):
            with self.subTest(shard=shard):
                result = self.score_json(shard, merged, f"merged{shard}")
                self.assertEqual(result.exit_code, 0, result.stderr)
                summary = json.loads(result.stdout)
                self.assertEqual(summary["num_tasks"], 6)
                self.assertEqual(summary["responses"]["coverage"], 1.0)
                self.assertEqual(
                    {k: v for k, v in summary["responses"].items() if isinstance(v, int)},
                    {
                        "turns": 9,
                        "answered_turns": 9,
                        "missing_turns": 0,
                        "tasks_without_answers": 0,
                        "duplicate_lines": 0,
                        "unknown_lines": 0,
                        "errored_turns": 0,
                    },
                )
                self.assertNotIn("no model answer", result.stderr)

    def test_score_reports_duplicates_and_gaps(self) -> None:
        twice = answers_for(self.shards[1])
        responses = answers_for(self.shards[0]) + twice + twice
        result = self.score_json(0, responses, "gappy")
        self.assertEqual(result.exit_code, 1, "unanswered turns fail coverage")
        result = self.score_json(0, responses, "gappy2", "--allow-missing")
        self.assertEqual(result.exit_code, 0, result.stderr)
        summary = json.loads(result.stdout)
        missing = turns_of(self.shards[2])
        self.assertEqual(summary["responses"]["duplicate_lines"], len(twice))
        self.assertEqual(summary["responses"]["missing_turns"], len(missing))
        self.assertEqual(summary["responses"]["tasks_without_answers"], 2)
        self.assertEqual(summary["responses"]["answered_turns"], 9 - len(missing))
        self.assertEqual(summary["num_tasks"], 4)
        self.assertIn(f"{len(missing)} of 9 turn(s) have no model answer", result.stderr)
        self.assertIn(missing[0]["id"], result.stderr)
        self.assertIn("the last one is used", result.stderr)
        table = run_cli("score", "-d", str(self.tmp / "gappy"))
        self.assertEqual(table.exit_code, 1, table.stderr)
        # Each fact said once: the warnings name the turns and duplicates; no note repeats them.
        self.assertEqual(table.stderr.count(f"{len(missing)} of 9 turn(s) have no"), 1)
        self.assertIn(missing[0]["id"], table.stderr)
        self.assertIn("the last one is used", table.stderr)
        self.assertNotIn("responses: ", table.stderr)

    def test_the_page_of_a_shard_shows_every_task_as_the_unsharded_page_does(self) -> None:
        """A shard's tasks.jsonl holds only its tasks: the page listed no other unanswered
        task and showed other shards' turns without their prompts."""
        responses = answers_for(self.shards[0]) + answers_for(self.shards[1])[:1]
        pages = []
        for name, source in (("page_full", self.full), ("page_shard", self.shards[0])):
            work = self.tmp / name
            shutil.copytree(source, work)
            write_jsonl(work / "responses.jsonl", responses)
            result = run_cli("score", "-d", str(work), "--allow-missing", "-q")
            self.assertEqual(result.exit_code, 0, result.stderr)
            pages.append(page_records(work))
        self.assertEqual(len(pages[0]), 6)
        self.assertEqual(pages[1], pages[0])

    def test_a_retried_errored_line_is_neither_a_duplicate_nor_a_gap(self) -> None:
        lines = answers_for(self.full)
        first, second = lines[0]["id"], lines[1]["id"]
        failed = [
            {"custom_id": first, "response": None, "error": {"message": "overloaded"}},
            *lines,
            {"custom_id": second, "response": None, "error": "late failure"},
        ]
        result = self.score_json(0, failed, "retried")
        self.assertEqual(result.exit_code, 0, result.stderr)
        responses = json.loads(result.stdout)["responses"]
        self.assertEqual(
            (responses["duplicate_lines"], responses["missing_turns"], responses["errored_turns"]),
            (0, 0, 0),
        )

    def test_an_errored_line_alone_is_a_gap(self) -> None:
        lines = answers_for(self.full)
        lost = lines[0]["id"]
        failed = [{"custom_id": lost, "response": None, "error": "boom"}, *lines[1:]]
        result = self.score_json(0, failed, "errored")
        self.assertEqual(result.exit_code, 1, "an errored turn is unanswered: coverage fails")
        self.assertIn("coverage check failed: 1 of 9", result.stderr)
        responses = json.loads(result.stdout)["responses"]
        self.assertEqual(responses["statuses"]["errored"], 1)
        self.assertEqual((responses["missing_turns"], responses["errored_turns"]), (1, 1))
        self.assertIn(lost, result.stderr)


class JudgeRequestTests(unittest.TestCase):
    """make-judge-tasks --format openai in a VisualToolBench run directory."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.run_dir = cls.tmp / "run"
        assert export(cls.run_dir).exit_code == 0
        shutil.copy(SAMPLE_RESPONSES, cls.run_dir / "responses.jsonl")
        cls.result = run_cli(
            "make-judge-tasks", "-d", str(cls.run_dir), "--format", "openai", "--model", "judge"
        )
        cls.tasks = read_jsonl(cls.run_dir / "judge_tasks.jsonl")
        cls.requests = request_lines(cls.run_dir, "judge_tasks")

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_one_text_only_request_per_judge_task(self) -> None:
        self.assertEqual(self.result.exit_code, 0, self.result.stderr)
        self.assertEqual(len(self.tasks), 12)
        self.assertEqual(
            [r["custom_id"] for r in self.requests],
            [f"{t['id']}#{t['response_digest']}" for t in self.tasks],
        )
        self.assertIn("judge_tasks.openai.00001.jsonl", self.result.stderr)
        for task, request in zip(self.tasks, self.requests, strict=True):
            with self.subTest(task=task["id"]):
                assert_batch_request(self, request)
                body = request["body"]
                self.assertEqual(
                    set(body), {"model", "messages", "max_tokens", "temperature", "response_format"}
                )
                self.assertEqual((body["model"], body["max_tokens"]), ("judge", 512))
                self.assertEqual(
                    body["messages"], [{"role": "user", "content": task["judge_prompt"]}]
                )
                self.assertNotIn("image_url", json.dumps(request))

    def test_json_output_mode(self) -> None:
        for request in self.requests:
            self.assertEqual(request["body"]["response_format"], {"type": "json_object"})
            # OpenAI's JSON mode refuses a request whose messages never mention JSON.
            self.assertIn("JSON", request["body"]["messages"][0]["content"])

    def test_the_judge_sees_only_the_turn_inputs(self) -> None:
        task = next(t for t in self.tasks if t["id"] == f"{B}::1::r3")
        content = self.requests[self.tasks.index(task)]["body"]["messages"][0]["content"]
        for field in ("question", "golden_answer", "rubric", "vlm_response"):
            self.assertIn(task[field], content)
        b0 = json.loads((self.run_dir / "references.jsonl").read_text().splitlines()[1])
        self.assertNotIn(b0["turns"][0]["prompt"], content)

    def test_datbench_judge_requests_have_no_response_format(self) -> None:
        settings = RequestSettings(model="j", max_tokens=5)
        plain = judge_request("x", "p", settings)
        self.assertNotIn("response_format", plain["body"])
        shaped = judge_request("x", "p", settings, response_format=JSON_OUTPUT)
        self.assertEqual(shaped["body"]["response_format"], {"type": "json_object"})

    def test_without_openai_the_judge_request_files_are_removed(self) -> None:
        work = self.tmp / "again"
        shutil.copytree(self.run_dir, work)
        result = run_cli("make-judge-tasks", "-d", str(work))
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(request_lines(work, "judge_tasks"), [])
        self.assertEqual(len(read_jsonl(work / "judge_tasks.jsonl")), 12)


class SkipDoneTests(unittest.TestCase):
    """make-judge-tasks --skip-done FILE: exactly the judge tasks whose line (the one score
    uses) parses with parse_vtb_verdict are left out."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.run_dir = cls.tmp / "run"
        assert export(cls.run_dir).exit_code == 0
        shutil.copy(SAMPLE_RESPONSES, cls.run_dir / "responses.jsonl")
        assert run_cli("make-judge-tasks", "-d", str(cls.run_dir)).exit_code == 0
        cls.ids = [t["id"] for t in read_jsonl(cls.run_dir / "judge_tasks.jsonl")]

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def done_file(self) -> tuple[Path, set[str]]:
        ids = self.ids
        met = json.dumps({"explanation": "ok", "judge_result": "Met"})
        task, turn, rubric = ids[1].rsplit("::", 2)
        lines = [
            {"id": ids[0], "raw_judge_output": met},  # met
            {  # not met, keyed by task/turn/rubric
                "task_id": task,
                "turn_index": int(turn),
                "rubric_id": rubric,
                "raw_judge_output": '{"judge_result": "Not Met"}',
            },
            {"id": ids[2], "raw_judge_output": "The answer meets the criterion."},  # unparsed
            {"custom_id": ids[3], "response": None, "error": "rate limited"},  # errored
            {"id": ids[4], "raw_judge_output": met},  # replaced by an unparsed line below
            {"id": ids[5], "raw_judge_output": "no idea"},  # replaced by a met line below
            {"id": ids[6], "raw_judge_output": "garbage", "verdict": "Not Met"},  # verdict field
            {"id": ids[7], "raw_judge_output": met},  # a later errored line does not replace it
            {"id": "nope::0::r1", "raw_judge_output": met},  # unknown id
            {"id": ids[4], "raw_judge_output": "hmm"},
            {"id": ids[5], "raw_judge_output": "**Judge result:** Met"},
            {"custom_id": ids[7], "response": None, "error": {"message": "late"}},
        ]
        path = write_jsonl(self.tmp / "done.jsonl", lines)
        return path, {ids[0], ids[1], ids[5], ids[6], ids[7]}

    def test_skips_exactly_the_parsed_ones(self) -> None:
        done, parsed = self.done_file()
        out = self.tmp / "rest.jsonl"
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
            str(out),
        )
        self.assertEqual(result.exit_code, 0, result.stderr)
        rest = [t["id"] for t in read_jsonl(out)]
        self.assertEqual(rest, [i for i in self.ids if i not in parsed])
        self.assertEqual(
            [split_tagged_id(r["custom_id"])[0] for r in request_lines(self.run_dir, "rest")], rest
        )
        self.assertIn(f"skipped {len(parsed)} judge task(s)", result.stderr)

    def test_skipped_ones_are_exactly_those_score_reads_as_judged(self) -> None:
        done, parsed = self.done_file()
        report_path = self.tmp / "report.json"
        result = run_cli(
            "score",
            "--allow-missing",
            "-d",
            str(self.run_dir),
            "--judge-responses",
            str(done),
            "-o",
            str(report_path),
        )
        self.assertEqual(result.exit_code, 0, result.stderr)
        report = json.loads(report_path.read_text())
        judged = {
            f"{r['id']}::{turn['index']}::{rubric['rubric_id']}"
            for r in report["results"]
            for turn in r["turns"]
            for rubric in turn["rubrics"]
            if rubric["status"] in ("met", "not_met")
        }
        self.assertEqual(judged, parsed)

    def test_the_sample_judge_file_leaves_the_unparsed_and_the_missing(self) -> None:
        out = self.tmp / "sample_rest.jsonl"
        result = run_cli(
            "make-judge-tasks",
            "-d",
            str(self.run_dir),
            "--skip-done",
            str(SAMPLE_JUDGE),
            "-o",
            str(out),
        )
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual([t["id"] for t in read_jsonl(out)], [f"{C}::0::r1", f"{D}::0::r1"])

    def test_a_missing_file_skips_nothing(self) -> None:
        out = self.tmp / "all.jsonl"
        result = run_cli(
            "make-judge-tasks",
            "-d",
            str(self.run_dir),
            "--skip-done",
            str(self.tmp / "absent.jsonl"),
            "-o",
            str(out),
        )
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertIn("does not exist yet", result.stderr)
        self.assertEqual([t["id"] for t in read_jsonl(out)], self.ids)


if __name__ == "__main__":
    unittest.main()
