"""ResponseStore reads a response file (or pipe) once, with the rules of load_vlm_responses,
into the run store: a file rewritten after it was read gives the version read."""

from __future__ import annotations

import json
import os
import tempfile
import unittest
from pathlib import Path

from datbench_cli.batch.answers import VLMResponse
from datbench_cli.batch.response_store import held_responses, load_response_store
from datbench_cli.batch.responses import load_vlm_responses
from datbench_cli.errors import InputError
from tests.store_lines import last_line, line_at


def batch_line(ident: str, text: str | None, reason: str = "stop", error: object = None) -> dict:
    if error is not None:
        return {"custom_id": ident, "response": None, "error": error}
    message = {"role": "assistant", "content": text}
    body = {"choices": [{"message": message, "finish_reason": reason}]}
    return {"custom_id": ident, "response": {"status_code": 200, "body": body}}


LINES = [
    {"id": "a", "raw_output": "first a"},
    {"id": "b", "raw_output": "b", "parsed_answer": "B"},
    batch_line("c", "long", reason="length"),
    {"id": "a", "raw_output": "second a"},  # a duplicate: the last line wins
    {"id": "d", "raw_output": None, "error": "timeout"},  # errored only
    batch_line("e", None, error={"message": "rate limited"}),
    batch_line("e", "retried"),  # errored, then answered
    {"id": "f", "raw_output": ""},
    {"id": "ü 🙂", "raw_output": "unicode id"},
    batch_line("g", "", reason="content_filter"),
]


class ResponseStoreTests(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.path = Path(self.tmp.name) / "responses.jsonl"
        text = "".join(json.dumps(line) + "\n" for line in LINES) + '{"id": "torn", "raw'
        self.path.write_text(text, encoding="utf-8")

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def test_the_same_answers_statuses_and_set_aside_as_load_vlm_responses(self) -> None:
        loaded = load_vlm_responses(self.path)
        store, aside = load_response_store(self.path)
        with store:
            held = held_responses(loaded.vlm, loaded.statuses)
            self.assertEqual(len(store), len(loaded.vlm))
            mine_last, their_last = store.last_by_id(), held.last_by_id()
            for ident in ["a", "b", "c", "d", "e", "f", "ü 🙂", "g", "absent"]:
                mine, theirs = mine_last.get(ident), their_last.get(ident)
                self.assertEqual(mine, theirs, ident)
                if mine is None:
                    self.assertIsNone(last_line(store, ident))
                    continue
                self.assertEqual(line_at(store, mine), line_at(held, theirs))
                self.assertEqual(store.status(mine), held.status(theirs), ident)
            self.assertEqual(store.duplicate_ids(), held.duplicate_ids())
            self.assertEqual(store.duplicate_ids(), 1)
            matched = bytearray(len(store))
            matched[mine_last["a"]] = 1
            self.assertEqual(store.unmatched(matched), held.unmatched(matched))
        self.assertEqual(aside.errored_ids, loaded.errored_ids)
        self.assertEqual(aside.errored_ids, ["d"])
        self.assertEqual(aside.truncated_ids, loaded.truncated_ids)
        self.assertEqual(aside.torn_tail_line, loaded.torn_tail_line)
        self.assertEqual(aside.unknown_keys, loaded.unknown_keys)
        self.assertEqual(aside.statuses, {})  # the store has them

    def test_lines_read_at_once_are_the_lines_read_one_by_one(self) -> None:
        store, _ = load_response_store(self.path)
        with store:
            last = store.last_by_id()
            # The answered lines in file order: a, b, c, a, e, f, ü 🙂, g (d and the first e
            # errored): the last line of each id.
            expected = {"a": 3, "b": 1, "c": 2, "e": 4, "f": 5, "ü 🙂": 6, "g": 7}
            self.assertEqual(last, expected)
            # Any order, a position asked twice (two samples of one id), none at all.
            positions = [last["g"], last["a"], 0, last["a"]]
            raws = store.raws(positions)
            self.assertEqual(raws[1], raws[3])
            parse = store.parser()
            self.assertEqual(
                [parse(raw) for raw in raws],
                [line_at(store, position) for position in positions],
            )
            self.assertEqual(parse(raws[1]), VLMResponse("a", "second a", None))
            self.assertEqual(parse(raws[2]), VLMResponse("a", "first a", None))
            self.assertEqual(store.raws([]), [])

    def test_a_line_rewritten_after_it_was_read_keeps_the_version_read(self) -> None:
        store, _ = load_response_store(self.path)
        with store:
            position = store.last_by_id()["b"]
            text = self.path.read_text(encoding="utf-8").replace('"b", "parsed', '"B", "parsed')
            self.path.write_text(text, encoding="utf-8")  # same length, other bytes
            self.assertEqual(line_at(store, position), VLMResponse("b", "b", "B"))

    def test_a_pipe_is_read_once(self) -> None:
        read, write = os.pipe()
        with os.fdopen(write, "wb") as sink:
            sink.write(self.path.read_bytes())  # small enough for the pipe's buffer
        store, aside = load_response_store(Path(f"/dev/fd/{read}"))
        os.close(read)
        with store:
            position = store.last_by_id()["a"]
            self.assertEqual(line_at(store, position), VLMResponse("a", "second a", None))
        self.assertEqual(aside.errored_ids, ["d"])

    def test_a_bad_line_is_the_same_input_error(self) -> None:
        self.path.write_text('{"id": "a", "raw_output": "x"}\n{"id": 3}\n', encoding="utf-8")
        with self.assertRaises(InputError) as theirs:
            load_vlm_responses(self.path)
        with self.assertRaises(InputError) as mine:
            load_response_store(self.path)
        self.assertEqual(str(mine.exception), str(theirs.exception))


class BatchShapeTests(unittest.TestCase):
    def test_the_legacy_completions_shape_is_read_not_scored_empty(self) -> None:
        # A /v1/completions body: choices[0].text, no message.
        body = {
            "object": "text_completion",
            "choices": [{"index": 0, "text": " 42", "finish_reason": "stop"}],
        }
        line = {"custom_id": "a", "response": {"status_code": 200, "body": body}, "error": None}
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "responses.jsonl"
            path.write_text(json.dumps(line) + "\n", encoding="utf-8")
            loaded = load_vlm_responses(path)
            self.assertEqual(loaded.vlm, [VLMResponse("a", " 42", None)])
            self.assertEqual(loaded.statuses, {"a": "ok"})
            store, _ = load_response_store(path)
            with store:
                self.assertEqual(line_at(store, 0), VLMResponse("a", " 42", None))
                self.assertEqual(store.status(0), "ok")


if __name__ == "__main__":
    unittest.main()
