"""JudgeStore reads a judge-response file with the rules of read_judge_responses (digests filled
from the judge tasks included) into the run store: a file rewritten after it was read gives
the version read."""

from __future__ import annotations

import json
import tempfile
import unittest
from pathlib import Path

from datbench_cli.batch.judge_store import held_judges, load_judge_store, unknown_ids
from datbench_cli.batch.responses import load_judge_responses
from datbench_cli.errors import InputError
from tests.store_lines import last_line, line_at

DIGEST_A = "0123456789abcdef"
DIGEST_TASK = "00000000000000ff"


def batch_judge(custom_id: str, text: str | None, error: object = None) -> dict:
    if error is not None:
        return {"custom_id": custom_id, "response": None, "error": error}
    message = {"role": "assistant", "content": text}
    body = {"choices": [{"message": message, "finish_reason": "stop"}]}
    return {"custom_id": custom_id, "response": {"status_code": 200, "body": body}}


LINES = [
    {"id": "a", "raw_judge_output": "true", "response_digest": DIGEST_A},
    {"id": "b", "raw_judge_output": "no idea", "verdict": "false"},  # takes its task's digest
    batch_judge(f"c#{DIGEST_A}", "answer: true"),  # the digest in the custom_id
    {"id": "x", "raw_judge_output": "true"},  # no sample has it
    {"id": "a", "raw_judge_output": "false"},  # a duplicate: the last line wins, no digest
    {"id": "d", "raw_judge_output": None, "error": "timeout"},  # errored only
    batch_judge("e", None, error={"message": "rate limited"}),
    batch_judge("e", "true"),  # errored, then answered
    {"id": "y", "raw_judge_output": None, "error": "timeout"},  # errored, no sample has it
    {"id": "ü 🙂", "raw_judge_output": "true"},
]
TASK_DIGESTS = {"b": DIGEST_TASK, "a": "ffffffffffffffff", "e": DIGEST_TASK}


def _filled(path: Path) -> list:
    """What read_judge_responses gives: a line without a digest takes its task's."""
    loaded = load_judge_responses(path)
    for judge in loaded.judge:
        if judge.response_digest is None:
            judge.response_digest = TASK_DIGESTS.get(judge.id)
    return loaded.judge


class JudgeStoreTests(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.path = Path(self.tmp.name) / "judge_responses.jsonl"
        text = "".join(json.dumps(line) + "\n" for line in LINES) + '{"id": "torn", "raw'
        self.path.write_text(text, encoding="utf-8")

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def test_the_same_judge_responses_and_set_aside_as_loading_them(self) -> None:
        loaded = load_judge_responses(self.path)
        held = held_judges(_filled(self.path))
        store, aside = load_judge_store(self.path, TASK_DIGESTS)
        with store:
            for ident in ["a", "b", "c", "d", "e", "x", "y", "ü 🙂", "absent"]:
                mine, theirs = last_line(store, ident), last_line(held, ident)
                self.assertEqual(mine, theirs, ident)
            # The last "a" has no digest of its own and takes its task's.
            self.assertEqual(last_line(store, "a").response_digest, "ffffffffffffffff")
            self.assertEqual(last_line(store, "b").response_digest, DIGEST_TASK)
            self.assertEqual(last_line(store, "c").response_digest, DIGEST_A)
            self.assertIsNone(last_line(store, "x").response_digest)
            samples = {"a", "b", "c", "d", "e", "ü 🙂"}
            self.assertEqual(
                unknown_ids(store, aside.errored_ids, samples.intersection),
                unknown_ids(held, loaded.errored_ids, samples.intersection),
            )
            self.assertEqual(
                unknown_ids(store, aside.errored_ids, samples.intersection), ["x", "y"]
            )
        self.assertEqual(aside.errored_ids, loaded.errored_ids)
        self.assertEqual(aside.errored_ids, ["d", "y"])
        self.assertEqual(aside.truncated_ids, loaded.truncated_ids)
        self.assertEqual(aside.torn_tail_line, loaded.torn_tail_line)
        self.assertEqual(aside.unknown_keys, loaded.unknown_keys)

    def test_without_task_digests_no_digest_is_made_up(self) -> None:
        store, _ = load_judge_store(self.path)
        with store:
            self.assertIsNone(last_line(store, "b").response_digest)

    def test_a_line_rewritten_after_it_was_read_keeps_the_version_read(self) -> None:
        store, _ = load_judge_store(self.path, TASK_DIGESTS)
        with store:
            position = store.last_by_id()["x"]
            text = self.path.read_text(encoding="utf-8").replace('"x", "raw', '"X", "raw')
            self.path.write_text(text, encoding="utf-8")  # same length, other bytes
            self.assertEqual(line_at(store, position).id, "x")

    def test_a_bad_line_is_the_same_input_error(self) -> None:
        self.path.write_text('{"id": "a", "raw_judge_output": "x"}\n{"id": 3}\n', encoding="utf-8")
        with self.assertRaises(InputError) as theirs:
            load_judge_responses(self.path)
        with self.assertRaises(InputError) as mine:
            load_judge_store(self.path)
        self.assertEqual(str(mine.exception), str(theirs.exception))


if __name__ == "__main__":
    unittest.main()
