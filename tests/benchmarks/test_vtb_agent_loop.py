"""``datbench agent`` end to end against a scripted tool-calling server, then judge and score."""

from __future__ import annotations

import base64
import io
import json
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from PIL import Image

from datbench_cli.benchmarks.vistoolbench.agent import protocol
from datbench_cli.benchmarks.vistoolbench.agent.settings import NOT_ISOLATED
from tests.cli_helpers import run_cli
from tests.tool_chat_server import SAVED_IMAGES_PREFIX, ToolChatServer
from tests.vtb_support import TempDirCase, read_jsonl, write_jsonl

A = "Which region of the scan shows the lesion, and how"
B0 = "What is the area of the shaded triangle?"
B1 = "Now double the base: what is the area?"
C0 = "What was the revenue in Q3 according to the chart?"

CROP = (
    "from PIL import Image\n"
    "img = Image.open('turn_0_image_0.jpg')\n"
    "img.crop((0, 0, 7, 5)).save('./transformed_image_0.png', 'PNG')\n"
    "print('cropped', img.size)\n"
)


def _prompt_key(full: str, prefix: str) -> bool:
    return full.startswith(prefix)


def _images_in(message: dict) -> list[Image.Image]:
    content = message["content"]
    if isinstance(content, str):
        return []
    found = []
    for part in content:
        if part["type"] == "image_url":
            data = part["image_url"]["url"].split(",", 1)[1]
            found.append(Image.open(io.BytesIO(base64.b64decode(data))))
    return found


class AgentLoopTests(TempDirCase):
    def setUp(self) -> None:
        super().setUp()
        self.run_dir, _, _ = self.export()
        self.root = self.run_dir.root
        tasks = read_jsonl(self.root / "tasks.jsonl")
        self.prompts = {t["id"]: t["prompt"] for task in tasks for t in task["turns"]}

    def _full(self, prefix: str) -> str:
        return next(p for p in self.prompts.values() if p.startswith(prefix))

    def _scripted(self, server: ToolChatServer) -> None:
        server.script[self._full(A)] = [
            {"tool_calls": [(protocol.IMAGE_TOOL, {"code": CROP})]},
            {"tool_calls": [(protocol.CALCULATOR_TOOL, {"expression": "2*(3+4)"})]},
            {"content": "The lesion is upper-left."},
        ]
        server.script[self._full(B0)] = [
            {"tool_calls": [(protocol.CALCULATOR_TOOL, '{"expression": "1+')]},
            {"content": "24"},
        ]
        server.script[self._full(B1)] = [
            {"tool_calls": [(protocol.SEARCH_TOOL, {"query": "triangle area"})]},
            {"content": "48"},
        ]
        server.script[self._full(C0)] = [
            {"tool_calls": [(protocol.CALCULATOR_TOOL, {"expression": "1+1"})]}
        ]

    def _agent(self, server: ToolChatServer, *extra: str):
        return run_cli(
            "agent", "-d", str(self.root), "--base-url", server.base_url, "--model", "m",
            "--max-tool-rounds", "3", "--concurrency", "3", "--tool-cpu-seconds", "10",
            "--tool-wall-seconds", "30", "--tool-memory-mb", "1024", *extra,
        )  # fmt: skip

    def test_tool_loop_then_judge_and_score(self) -> None:
        with ToolChatServer() as server:
            self._scripted(server)
            result = self._agent(server)
            requests = dict(server.requests)
        self.assertEqual(result.exit_code, 0, result.stderr)
        answers = {
            line["id"]: line["raw_output"] for line in read_jsonl(self.root / "responses.jsonl")
        }
        self.assertEqual(len(answers), 9)
        self.assertEqual(answers["vtb-a-medical-001::0"], "The lesion is upper-left.")
        self.assertEqual(answers["vtb-b-maths-002::0"], "24")
        self.assertEqual(answers["vtb-b-maths-002::1"], "48")
        self.assertEqual(answers["finance/vtb-c-003::0"], protocol.MAX_ROUNDS_ANSWER)
        self.assertEqual(
            answers["vtb-d-sports-004::0"], "answer for: " + self.prompts["vtb-d-sports-004::0"]
        )

        # The crop saved in round 0 comes back, as an image of the crop's size, in round 1.
        a_requests = requests[self._full(A)]
        self.assertEqual(len(a_requests), 3)
        first_user = a_requests[0]["messages"][-1]
        self.assertEqual(len(_images_in(first_user)), 2)  # both images of the turn, JPEG q85
        self.assertTrue(all(image.format == "JPEG" for image in _images_in(first_user)))
        second = a_requests[1]["messages"]
        tool_message = second[-2]
        self.assertEqual(tool_message["role"], "tool")
        observation = tool_message["content"]
        self.assertIn("'output_paths': ['transformed_image_0.png']", observation)
        self.assertIn("cropped", observation)
        saved = second[-1]
        self.assertEqual(saved["role"], "user")
        self.assertTrue(saved["content"][0]["text"].startswith(SAVED_IMAGES_PREFIX))
        self.assertEqual([image.size for image in _images_in(saved)], [(7, 5)])
        # The image tool's description lists the saved image from then on.
        image_tool = next(
            t for t in a_requests[1]["tools"] if t["function"]["name"] == protocol.IMAGE_TOOL
        )
        self.assertIn("transformed_image_0.png", image_tool["function"]["description"])
        # The calculator's result, in the official shape.
        calc = a_requests[2]["messages"][-1]
        self.assertEqual(
            calc["content"],
            repr({"result": "14", "expression": "2*(3+4)", "status": "success"}),
        )
        self.assertEqual(a_requests[0]["temperature"], 0.0)
        self.assertIn("proactively", a_requests[0]["messages"][0]["content"])

        # A malformed call and a call to an unavailable tool: errors the model sees, then it answers.
        malformed = requests[self._full(B0)][1]["messages"][-1]
        self.assertEqual(malformed["role"], "tool")
        self.assertIn("not valid JSON", malformed["content"])
        unavailable = requests[self._full(B1)][1]["messages"][-1]
        self.assertIn("'google_search' is not available", unavailable["content"])
        # Turn 1 of B carries the golden history of turn 0, as plain text.
        b1_messages = requests[self._full(B1)][0]["messages"]
        self.assertEqual([m["role"] for m in b1_messages], ["system", "user", "assistant", "user"])

        # The budget: exactly 3 requests, then the official literal.
        self.assertEqual(len(requests[self._full(C0)]), 3)

        trajectories = read_jsonl(self.root / "trajectories.jsonl")
        self.assertEqual(sorted(t["id"] for t in trajectories), sorted(answers))
        by_id = {t["id"]: t for t in trajectories}
        a = by_id["vtb-a-medical-001::0"]
        self.assertEqual((a["status"], a["stop"], a["tool_rounds"]), ("answered", "answer", 2))
        self.assertEqual(
            a["usage"], {"prompt_tokens": 30, "completion_tokens": 15, "total_tokens": 45}
        )
        crop_call = a["steps"][0]["tool_results"][0]
        self.assertEqual(crop_call["images"][0]["width"], 7)
        self.assertEqual(len(crop_call["images"][0]["sha256"]), 64)
        self.assertNotIn("base64", json.dumps(a))  # images by digest, never by data
        self.assertEqual(by_id["finance/vtb-c-003::0"]["stop"], "max_tool_rounds")

        agent = json.loads((self.root / "agent.json").read_text())
        self.assertFalse(agent["protocol"]["comparable"])
        self.assertIn("3 tool rounds (official: 20)", agent["protocol"]["not_comparable_because"])

        self.assertEqual(run_cli("make-judge-tasks", "-d", str(self.root)).exit_code, 0)
        judge = read_jsonl(self.root / "judge_tasks.jsonl")
        write_jsonl(
            self.root / "judge_responses.jsonl",
            [{"id": j["id"], "raw_judge_output": '{"judge_result": "Met"}'} for j in judge],
        )
        scored = run_cli("score", "-d", str(self.root), "--json")
        self.assertEqual(scored.exit_code, 0, scored.stderr)
        summary = json.loads(scored.stdout.strip().splitlines()[-1])
        self.assertEqual(summary["num_tasks"], 6)
        self.assertEqual(summary["apr"], 1.0)
        self.assertFalse(summary["agent"]["comparable"])
        self.assertTrue(summary["agent"]["code_isolated"])
        self.assertIn(
            "not comparable with the official protocol",
            run_cli("score", "-d", str(self.root)).stderr,
        )

    def test_the_openai_key_goes_only_to_the_openai_api(self) -> None:
        with ToolChatServer() as server, mock.patch.dict(os.environ, {"OPENAI_API_KEY": "sk-x"}):
            result = self._agent(server)
            self.assertEqual(result.exit_code, 0, result.stderr)
            self.assertTrue(server.authorizations)
            self.assertEqual(set(server.authorizations), {None})
            self.assertIn("OPENAI_API_KEY is not sent", result.stderr)

    def test_a_named_key_goes_to_the_named_server(self) -> None:
        with ToolChatServer() as server, mock.patch.dict(os.environ, {"MY_KEY": "k-1"}):
            result = self._agent(server, "--api-key-env", "MY_KEY")
            self.assertEqual(result.exit_code, 0, result.stderr)
            self.assertEqual(set(server.authorizations), {"Bearer k-1"})

    def test_the_base_url_is_joined_as_the_openai_sdk_joins_it(self) -> None:
        with ToolChatServer() as server:
            base = server.base_url.removesuffix("/v1") + "/v1beta/openai/"
            result = run_cli(
                "agent", "-d", str(self.root), "--base-url", base, "--model", "m",
                "--max-tool-rounds", "3", "--tool-cpu-seconds", "10",
                "--tool-wall-seconds", "30", "--tool-memory-mb", "1024",
            )  # fmt: skip
            self.assertEqual(result.exit_code, 0, result.stderr)
            self.assertEqual(set(server.paths), {"/v1beta/openai/chat/completions"})

    def test_rerun_runs_nothing_again(self) -> None:
        with ToolChatServer() as server:
            self._scripted(server)
            self.assertEqual(self._agent(server).exit_code, 0)
            before = (self.root / "responses.jsonl").read_bytes()
            server.requests.clear()
            again = self._agent(server)
            self.assertEqual(again.exit_code, 0, again.stderr)
            self.assertEqual(dict(server.requests), {})
        self.assertEqual((self.root / "responses.jsonl").read_bytes(), before)

    def _import_official(self) -> None:
        """The official runner's answers for every turn, over the agent's responses.jsonl."""
        records = [
            {"task_id": task["id"], "turns": [
                {"turn_number": turn["index"], "model_answer": f"official {turn['id']}"}
                for turn in task["turns"]
            ]}
            for task in read_jsonl(self.root / "tasks.jsonl")
        ]  # fmt: skip
        official = self.tmp / "results.json"
        official.write_text(json.dumps(records), encoding="utf-8")
        imported = run_cli("import-responses", str(official), "-d", str(self.root), "--overwrite")
        self.assertEqual(imported.exit_code, 0, imported.stderr)

    def test_a_rerun_after_an_import_counts_the_imported_answers_as_another_runners(self) -> None:
        # After import-responses --overwrite replaced the agent's answers, a rerun said
        # "9 already answered by this agent, 0 by another runner".
        with ToolChatServer() as server:
            self.assertEqual(self._agent(server, "--no-code-tools").exit_code, 0)
            self._import_official()
            before = (self.root / "responses.jsonl").read_bytes()
            server.requests.clear()
            again = self._agent(server, "--no-code-tools")
            self.assertEqual(dict(server.requests), {})
        self.assertEqual(again.exit_code, 0, again.stderr)
        self.assertIn("0 already answered by this agent, 9 by another runner", again.stderr)
        self.assertEqual((self.root / "responses.jsonl").read_bytes(), before)

    def test_imported_answers_are_not_scored_as_the_agents(self) -> None:
        # After import-responses --overwrite, score still put the agent's model, tools and
        # "not comparable" warning on the official answers (summary.agent from agent.json).
        with ToolChatServer() as server:
            self.assertEqual(self._agent(server, "--no-code-tools").exit_code, 0)
        agent_run = run_cli("score", "-d", str(self.root), "--json", "--allow-missing")
        self.assertIn("agent", json.loads(agent_run.stdout.strip().splitlines()[-1]))
        self._import_official()
        scored = run_cli("score", "-d", str(self.root), "--json", "--allow-missing")
        self.assertEqual(scored.exit_code, 0, scored.stderr)
        self.assertNotIn("agent", json.loads(scored.stdout.strip().splitlines()[-1]))
        self.assertIn("summary.agent left out", scored.stderr)
        self.assertNotIn("agent run not comparable", scored.stderr)

    def test_answers_put_back_after_a_partial_import_are_not_blamed_on_a_stopped_run(
        self,
    ) -> None:
        # Rerunning after an import that lacks some turns puts the agent's committed answers
        # back; the note said "the last run stopped between the two writes", which it had not.
        with ToolChatServer() as server:
            self.assertEqual(self._agent(server, "--no-code-tools").exit_code, 0)
            official = self.tmp / "partial.json"
            official.write_text(json.dumps([{"task_id": "vtb-a-medical-001", "model_answer": "x"}]))
            imported = run_cli(
                "import-responses", str(official), "-d", str(self.root), "--overwrite"
            )
            self.assertEqual(imported.exit_code, 0, imported.stderr)
            again = self._agent(server, "--no-code-tools")
        self.assertEqual(again.exit_code, 0, again.stderr)
        self.assertIn("8 committed answer(s) of this agent copied to responses.jsonl", again.stderr)
        self.assertIn("or the file was replaced", again.stderr)

    def test_the_runs_responses_named_another_way_are_still_the_agents(self) -> None:
        # `score /abs/run/responses.jsonl -d run` compared the two paths as written: the
        # agent summary and its "not comparable" warning were left out without a word.
        with ToolChatServer() as server:
            self.assertEqual(self._agent(server, "--no-code-tools").exit_code, 0)
        other_name = self.root / ".." / self.root.name / "responses.jsonl"
        scored = run_cli(
            "score", str(other_name), "-d", str(self.root), "--json", "--allow-missing"
        )
        self.assertEqual(scored.exit_code, 0, scored.stderr)
        self.assertIn("agent", json.loads(scored.stdout.strip().splitlines()[-1]))
        self.assertIn("agent run not comparable", scored.stderr)

    def test_changed_settings_are_refused(self) -> None:
        with ToolChatServer() as server:
            self.assertEqual(self._agent(server, "--no-code-tools").exit_code, 0)
            changed = self._agent(server)
        self.assertEqual(changed.exit_code, 2)
        self.assertIn("tools differ", changed.stderr)

    def test_a_failing_turn_is_errored_counted_and_retried(self) -> None:
        with ToolChatServer() as server:
            server.script[self._full(B0)] = [{"status": 400}]
            failed = self._agent(server, "--no-code-tools")
            self.assertEqual(failed.exit_code, 1)
            self.assertIn("1 turn(s) errored: vtb-b-maths-002::0", failed.stderr)
            lines = read_jsonl(self.root / "responses.jsonl")
            errored = [line for line in lines if line.get("custom_id") == "vtb-b-maths-002::0"]
            self.assertEqual(len(errored), 1)
            self.assertIn("HTTP 400", errored[0]["error"]["message"])
            self.assertEqual(run_cli("make-judge-tasks", "-d", str(self.root)).exit_code, 0)
            scored = run_cli("score", "-d", str(self.root), "--json")
            summary = json.loads(scored.stdout.strip().splitlines()[-1])
            self.assertEqual(summary["responses"]["errored_turns"], 1)
            del server.script[self._full(B0)]
            retried = self._agent(server, "--no-code-tools")
        self.assertEqual(retried.exit_code, 0, retried.stderr)
        answers = {
            line["id"]: line["raw_output"]
            for line in read_jsonl(self.root / "responses.jsonl")
            if "raw_output" in line
        }
        self.assertEqual(len(answers), 9)
        statuses = [t["status"] for t in read_jsonl(self.root / "trajectories.jsonl")]
        self.assertEqual((statuses.count("answered"), statuses.count("errored")), (9, 1))

    def test_truncated_and_refused_final_answers_are_counted_by_score(self) -> None:
        # The final message's finish_reason and refusal reach responses.jsonl, so score counts
        # the turns as truncated and refused (they were counted as ok and empty).
        with ToolChatServer() as server:
            server.script[self._full(A)] = [{"content": "The lesion is", "finish_reason": "length"}]
            server.script[self._full(B0)] = [{"content": None, "refusal": "I cannot help."}]
            server.script[self._full(B1)] = [{"content": None, "finish_reason": "content_filter"}]
            result = self._agent(server, "--no-code-tools")
        self.assertEqual(result.exit_code, 0, result.stderr)
        lines = {line["id"]: line for line in read_jsonl(self.root / "responses.jsonl")}
        self.assertEqual(lines["vtb-a-medical-001::0"]["finish_reason"], "length")
        self.assertEqual(lines["vtb-b-maths-002::0"]["refusal"], "I cannot help.")
        self.assertEqual(run_cli("make-judge-tasks", "-d", str(self.root)).exit_code, 0)
        scored = run_cli("score", "-d", str(self.root), "--json")
        statuses = json.loads(scored.stdout.strip().splitlines()[-1])["responses"]["statuses"]
        self.assertEqual(
            (statuses["truncated"], statuses["refused"], statuses["ok"]), (1, 2, 6), statuses
        )
        # A rerun that recovers committed turns (responses.jsonl lost) keeps them too.
        (self.root / "responses.jsonl").unlink()
        with ToolChatServer() as server:
            self.assertEqual(self._agent(server, "--no-code-tools").exit_code, 0)
        lines = {line["id"]: line for line in read_jsonl(self.root / "responses.jsonl")}
        self.assertEqual(lines["vtb-a-medical-001::0"]["finish_reason"], "length")

    def test_an_answer_given_as_content_parts_is_kept(self) -> None:
        # Some servers answer with a list of content parts; the answer was recorded as "".
        parts = [
            {"type": "text", "text": "The lesion "},
            {"type": "text", "text": "is upper-left."},
        ]
        with ToolChatServer() as server:
            server.script[self._full(A)] = [{"content": parts}]
            result = self._agent(server, "--no-code-tools")
        self.assertEqual(result.exit_code, 0, result.stderr)
        lines = {line["id"]: line for line in read_jsonl(self.root / "responses.jsonl")}
        self.assertEqual(lines["vtb-a-medical-001::0"]["raw_output"], "The lesion is upper-left.")

    def test_an_answer_of_another_type_is_an_errored_turn_not_an_empty_answer(self) -> None:
        # content 5, a part whose text is a number, or tool calls given as one object were
        # written as "" (answered), and score counted the turn as answered and empty.
        from datbench_cli.benchmarks.vistoolbench.agent.loop import _first_message
        from datbench_cli.benchmarks.vistoolbench.agent.transport import RequestFailed

        with ToolChatServer() as server:
            server.script[self._full(A)] = [{"content": 5}]
            server.script[self._full(B0)] = [{"content": [{"type": "text", "text": 7}]}]
            result = self._agent(server, "--no-code-tools", "--max-retries", "0")
        self.assertEqual(result.exit_code, 1, result.stderr)
        lines = {line["custom_id"]: line for line in read_jsonl(self.root / "responses.jsonl")
                 if "custom_id" in line}  # fmt: skip
        for ident in ("vtb-a-medical-001::0", "vtb-b-maths-002::0"):
            self.assertIn("cannot be read", lines[ident]["error"]["message"])
        call = {"id": "a", "type": "function", "function": {"name": "calculator"}}
        answer = {"choices": [{"message": {"role": "assistant", "tool_calls": call}}]}
        with self.assertRaisesRegex(RequestFailed, 'tool_calls" must be a list, got dict'):
            _first_message(answer)

    def test_a_key_no_header_can_carry_and_a_temperature_past_the_range_are_usage_errors(
        self,
    ) -> None:
        # A key with a control character failed every turn with an error quoting the
        # header, key included, into responses.jsonl and trajectories.jsonl; --temperature nan
        # was sent as null and recorded so that the same command could not resume.
        cases = [
            ({"MYKEY": "sk-SECRET123\r"}, ("--api-key-env", "MYKEY"), "the API key holds"),
            ({"MYKEY": "sk-SECRÉT123"}, ("--api-key-env", "MYKEY"), "the API key holds"),
            ({}, ("--temperature", "nan"), "--temperature must be a number from 0 to 2"),
            ({}, ("--temperature", "inf"), "--temperature must be a number from 0 to 2"),
        ]
        for env, extra, said in cases:
            with self.subTest(extra=extra), mock.patch.dict(os.environ, env):
                result = run_cli(
                    "agent", "-d", str(self.root), "--base-url", "http://127.0.0.1:9/v1",
                    "--model", "m", "--no-code-tools", *extra,
                )  # fmt: skip
                self.assertEqual(result.exit_code, 2, result.stderr)
                self.assertTrue(result.stderr.startswith(f"error: {said}"), result.stderr)
                self.assertNotIn("SECR", result.stderr)
                self.assertFalse((self.root / "responses.jsonl").exists())

    def test_tool_calls_without_ids_are_sent_back_with_the_ids_their_results_answer(self) -> None:
        # A server that gives its calls no id: the assistant message sent back carried no id
        # while each tool message answered "call_<round>_<position>", which matched nothing.
        calls = [(protocol.CALCULATOR_TOOL, {"expression": "1+1"})] * 2
        with ToolChatServer() as server:
            server.script[self._full(A)] = [{"tool_calls": calls, "ids": False}, {"content": "2"}]
            result = self._agent(server, "--no-code-tools")
            messages = server.requests[self._full(A)][1]["messages"]
        self.assertEqual(result.exit_code, 0, result.stderr)
        sent = [call["id"] for call in messages[-3]["tool_calls"]]
        answered = [message["tool_call_id"] for message in messages[-2:]]
        self.assertEqual(sent, ["call_0_0", "call_0_1"])
        self.assertEqual(answered, sent)

    def test_answers_from_other_runners_are_read_as_score_reads_them(self) -> None:
        # Under model history a later turn saw "" as the earlier turn's answer when another
        # runner had answered it; a bare task id was run again (score then warned of two lines
        # for one turn); a batch line whose request failed (status 500) was never rerun.
        run, _, _ = self.export(name="model", context="model")
        self.root = run.root
        failed = {"status_code": 500, "body": {"error": {"message": "overloaded"}}}
        write_jsonl(
            self.root / "responses.jsonl",
            [
                {"id": "vtb-b-maths-002::0", "raw_output": "The area is 24."},
                {"id": "vtb-a-medical-001", "raw_output": "upper-left"},
                {"custom_id": "vtb-d-sports-004::0", "response": failed, "error": None},
            ],
        )
        with ToolChatServer() as server:
            result = self._agent(server, "--no-code-tools")
            b1 = server.requests[self._full(B1)][0]["messages"]
            asked = set(server.requests)
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(b1[2], {"role": "assistant", "content": "The area is 24."})
        self.assertNotIn(self._full(A), asked)
        self.assertIn(self.prompts["vtb-d-sports-004::0"], asked)
        scored = run_cli("score", "-d", str(self.root), "--allow-missing")
        self.assertNotIn("several response lines", scored.stderr)

    def test_a_trajectory_too_long_for_a_line_is_kept_without_its_steps(self) -> None:
        # The model's tool-call arguments are recorded every round: 12 rounds of 8 MB made a
        # 294 MB line, past the 256 MiB a reader takes, and every rerun then stopped at it.
        # Here the line limit is 1 MiB and three rounds of 300 KB arguments make 2.7 MB.
        code = {"expression": "1" + " " * 300_000}
        with mock.patch("datbench_cli.files.jsonio.MAX_LINE_BYTES", 1 << 20):
            with ToolChatServer() as server:
                server.script[self._full(C0)] = [{"tool_calls": [(protocol.CALCULATOR_TOOL, code)]}]
                first = self._agent(server, "--no-code-tools")
                server.script[self._full(C0)] = [{"content": "42"}]
                again = self._agent(server, "--no-code-tools")
        self.assertEqual(first.exit_code, 0, first.stderr)
        self.assertEqual(again.exit_code, 0, again.stderr)  # the rerun reads the file
        (line,) = [t for t in read_jsonl(self.root / "trajectories.jsonl") if t["steps"] == []]
        self.assertEqual(line["answer"], protocol.MAX_ROUNDS_ANSWER)
        self.assertEqual(line["steps_left_out"]["steps"], 3)
        self.assertGreater(line["steps_left_out"]["bytes"], 1 << 20)

    def test_tool_calls_past_the_limit_of_an_answer_are_answered_unrun(self) -> None:
        # Each code call may take the whole wall-clock limit: 20 calls of time.sleep in one
        # answer took 20 limits, and a 1.2 MB answer holds 10,000 calls (333 hours).
        calls = [(protocol.CALCULATOR_TOOL, {"expression": f"{i}+1"}) for i in range(70)]
        with ToolChatServer() as server:
            server.script[self._full(C0)] = [{"tool_calls": calls}, {"content": "done"}]
            result = self._agent(server, "--no-code-tools")
            second = server.requests[self._full(C0)][1]["messages"]
        self.assertEqual(result.exit_code, 0, result.stderr)
        tools = [message["content"] for message in second if message["role"] == "tool"]
        self.assertEqual(len(tools), 70)  # every call has its answer
        self.assertEqual(
            tools[63], repr({"result": "64", "expression": "63+1", "status": "success"})
        )
        refused = "not run: an answer may ask for at most 64 tool calls, and this one asked for 70"
        self.assertEqual(tools[64:], [repr({"error": refused})] * 6)
        lines = read_jsonl(self.root / "trajectories.jsonl")
        (line,) = [t for t in lines if t["id"] == "finance/vtb-c-003::0"]
        self.assertEqual(line["steps"][0]["tool_results"][69]["error"], refused)

    def test_model_history_feeds_back_the_models_own_answers(self) -> None:
        run, _, _ = self.export(name="model", context="model")
        self.root = run.root
        with ToolChatServer() as server:
            result = self._agent(server, "--no-code-tools")
            b1 = server.requests[self._full(B1)][0]["messages"]
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(b1[2], {"role": "assistant", "content": "answer for: " + self._full(B0)})
        agent = json.loads((self.root / "agent.json").read_text())
        self.assertIn(
            "context model_history (official: golden_history)",
            agent["protocol"]["not_comparable_because"],
        )

    def test_code_tools_are_refused_where_bubblewrap_cannot_start(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            fake = Path(folder) / "bwrap"  # bwrap's own message where user namespaces are off
            fake.write_text(
                "#!/bin/sh\n[ \"$1\" = --version ] && echo 'bubblewrap 0.8.0' && exit 0\n"
                "echo 'bwrap: No permissions to creating new namespace, likely because the "
                "kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n"
            )
            fake.chmod(0o755)
            where = "datbench_cli.benchmarks.vistoolbench.agent.bwrap"
            with (
                mock.patch(f"{where}.shutil.which", return_value=str(fake)),
                mock.patch(f"{where}.wheel_bwrap", return_value=str(fake)),
            ):
                result = run_cli(
                    "agent", "-d", str(self.root), "--base-url", "http://127.0.0.1:9/v1",
                    "--model", "m",
                )  # fmt: skip
        self.assertEqual(result.exit_code, 2)
        self.assertIn(
            "error: bubblewrap cannot create the sandbox's user namespace here (bwrap: No "
            "permissions to creating new namespace, likely because the kernel does not allow "
            "non-privileged user namespaces), so the Python tools cannot run isolated\n",
            result.stderr,
        )
        self.assertIn("hint: enable unprivileged user namespaces", result.stderr)
        self.assertIn("or pass --unsafe-sandbox", result.stderr)
        self.assertEqual(len(result.stderr.strip().splitlines()), 2, result.stderr)
        self.assertNotIn("Traceback", result.stderr)
        self.assertFalse((self.root / "responses.jsonl").exists())

    def test_a_tool_wall_limit_that_is_no_limit_is_a_usage_error(self) -> None:
        # nan passed the option's minimum and left every code call without a wall-clock limit.
        for value in ("nan", "inf", "1e10"):
            with self.subTest(value=value):
                result = run_cli(
                    "agent", "-d", str(self.root), "--base-url", "http://127.0.0.1:9/v1",
                    "--model", "m", "--tool-wall-seconds", value,
                )  # fmt: skip
                self.assertEqual(result.exit_code, 2, result.stderr)
                self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
                self.assertTrue(result.stderr.startswith("error: --tool-wall-seconds"))
                self.assertFalse((self.root / "responses.jsonl").exists())

    def test_unsafe_sandbox_is_recorded_and_scored_as_not_isolated(self) -> None:
        with ToolChatServer() as server:
            self._scripted(server)
            result = self._agent(server, "--unsafe-sandbox")
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertIn("WITHOUT a sandbox (--unsafe-sandbox)", result.stderr)
        agent = json.loads((self.root / "agent.json").read_text())
        self.assertFalse(agent["sandbox"]["isolation"]["isolated"])
        answers = read_jsonl(self.root / "responses.jsonl")
        self.assertIn("The lesion is upper-left.", [line["raw_output"] for line in answers])
        self.assertEqual(run_cli("make-judge-tasks", "-d", str(self.root)).exit_code, 0)
        judge = read_jsonl(self.root / "judge_tasks.jsonl")
        write_jsonl(
            self.root / "judge_responses.jsonl",
            [{"id": j["id"], "raw_judge_output": '{"judge_result": "Met"}'} for j in judge],
        )
        scored = run_cli("score", "-d", str(self.root), "--json")
        self.assertEqual(scored.exit_code, 0, scored.stderr)
        self.assertFalse(
            json.loads(scored.stdout.strip().splitlines()[-1])["agent"]["code_isolated"]
        )
        self.assertIn(NOT_ISOLATED, scored.stderr)
        page = self.root / "page.html"
        viewed = run_cli("view", str(self.root), "-o", str(page))
        self.assertEqual(viewed.exit_code, 0, viewed.stderr)
        self.assertIn("ran without a sandbox (--unsafe-sandbox)", page.read_text())

    def test_isolation_is_recorded(self) -> None:
        with ToolChatServer() as server:
            self._scripted(server)
            self.assertEqual(self._agent(server).exit_code, 0)
        isolation = json.loads((self.root / "agent.json").read_text())["sandbox"]["isolation"]
        self.assertTrue(isolation["isolated"])
        self.assertEqual(isolation["uid"], 65534)
        self.assertIn("network", isolation["namespaces"])
        self.assertRegex(isolation["bwrap_version"], r"^\d+\.\d+")
        self.assertTrue(Path(isolation["bwrap"]).is_file())
        self.assertEqual(isolation["hidden"][0], "/proc/sys")


class ConversationCapTests(unittest.TestCase):
    def test_a_conversation_past_the_cap_is_not_sent_and_the_turn_is_errored(self) -> None:
        # Every answer is kept for the rounds after it: 20 answers of 64 MB of arguments (the
        # answer size cap) held 1.28 GB, and the agent serialized 12 GB of requests at 2.5 GB
        # of memory. The request past the cap is refused unsent; the turn says why.
        from datbench_cli.benchmarks.vistoolbench.agent.loop import (
            MAX_CONVERSATION_BYTES,
            LoopSettings,
            TurnInput,
            run_turn,
        )
        from datbench_cli.benchmarks.vistoolbench.agent.tools import ToolSettings

        sent: list[int] = []
        image = io.BytesIO()  # noise: some 700 KB as sent, more than two rounds of text
        Image.frombytes("RGB", (1000, 1000), os.urandom(1000 * 1000 * 3)).save(image, "PNG")

        class Client:
            def complete(self, body: dict) -> tuple[dict, int]:
                sent.append(len(json.dumps(body)))
                arguments = json.dumps({"expression": "1+1", "pad": "x" * 300_000})
                call = {"id": f"c{len(sent)}", "type": "function",
                        "function": {"name": "calculator", "arguments": arguments}}  # fmt: skip
                message = {"role": "assistant", "content": None, "tool_calls": [call]}
                return {"choices": [{"message": message, "finish_reason": "tool_calls"}]}, 1

        self.assertEqual(MAX_CONVERSATION_BYTES, 64 * 1024 * 1024)
        trajectory = run_turn(
            TurnInput("a", "t", 0, "q", images=[("turn_0_image_0.png", image.getvalue())]),
            LoopSettings(model="m", max_conversation_bytes=1_000_000),
            ToolSettings((protocol.CALCULATOR_TOOL,)),
            Client(),  # type: ignore[arg-type]
        )
        self.assertEqual((trajectory["status"], trajectory["stop"]), ("errored", "error"))
        self.assertEqual(
            (len(sent), trajectory["tool_rounds"], len(trajectory["steps"])), (4, 4, 4)
        )
        self.assertRegex(
            trajectory["error"],
            r"^the request of round 4 was not sent: the turn's conversation holds 1,2\d\d,\d{3} "
            r"bytes of text \(the model's answers, its tool calls' arguments, the tool results\), "
            r"over the 1,000,000 bytes \(0\.953674 MB\) a request may carry$",
        )
        # The image's data is not text: every request carried it, the count did not.
        self.assertGreater(sent[0], 600_000)


if __name__ == "__main__":
    unittest.main()


class TurnThreadsTests(unittest.TestCase):
    def test_never_more_threads_than_units(self) -> None:
        # --concurrency 100000 started 100000 threads to answer 6 turns.
        import threading

        from datbench_cli.benchmarks.vistoolbench.agent import run

        done: list[list] = []
        with mock.patch.object(run.threading, "Thread", wraps=threading.Thread) as made:
            run._pool([[], [], []], 100_000, done.append, None)
        self.assertEqual(len(done), 3)
        self.assertEqual(made.call_count, 3)
