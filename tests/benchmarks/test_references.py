"""`score` reads references.jsonl once into its run store (ReferenceFile): each sample read
back is the one checked at the start (BOM, CRLF, blank lines), also when the file is rewritten
in place while scoring."""

from __future__ import annotations

import tempfile
import threading
import unittest
from pathlib import Path

import orjson

from datbench_cli.benchmarks.datbench.references import ReferenceFile
from datbench_cli.benchmarks.datbench.schema import DatBenchSample
from datbench_cli.errors import InputError


def _line(sample_id: str, **extra: object) -> bytes:
    record = {
        "id": sample_id,
        "capability": "math",
        "question": "q",
        "prompt_format": {"prefix": "", "suffix": ""},
        "answer": "1",
        "eval_metrics": {"is_frontier": True, "discrimination": 0.5},
        **extra,
    }
    return orjson.dumps(record)


class ReferenceFileTests(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.TemporaryDirectory()
        self.path = Path(self.dir.name) / "references.jsonl"

    def tearDown(self) -> None:
        self.dir.cleanup()

    def test_samples_read_back_equal_the_parsed_lines(self) -> None:
        lines = [
            _line("a"),
            _line("b", source_info={"dataset": "mathvista"}),
            _line("c", eval_mode="judge"),
        ]
        self.path.write_bytes(b"\xef\xbb\xbf" + lines[0] + b"\r\n\n" + lines[1] + b"\n" + lines[2])
        expected = [DatBenchSample(**orjson.loads(line), image=None) for line in lines]
        with ReferenceFile(self.path) as refs:
            self.assertEqual(len(refs), 3)
            self.assertEqual([refs.parser()(raw) for raw in refs.raws(range(3))], expected)
            self.assertEqual(refs.known(["z", "b", "a", "b"]), {"a", "b"})
            self.assertIn("c", refs)
            self.assertNotIn("z", refs)
            # The Python API's samples, held in a store of their own, read back the same.
            with ReferenceFile(None, held=expected) as held:
                self.assertEqual([held.parser()(raw) for raw in held.raws(range(3))], expected)
                self.assertEqual(list(refs.keys()), list(held.keys()))
                for i in range(3):
                    self.assertEqual(refs.item_metrics(i), held.item_metrics(i))
                    self.assertEqual(refs.key(i), held.key(i))
                self.assertEqual(held.known(["z", "b", "a", "b"]), {"a", "b"})

    def test_held_samples_go_without_images_and_odd_ids_match_nothing(self) -> None:
        # A caller's sample may carry its image (never sent to a worker) and an id that is
        # not a string: no response id (a string) matches it, not even its text.
        samples = [
            DatBenchSample(**orjson.loads(_line("a")), image=object()),
            DatBenchSample(**{**orjson.loads(_line("a")), "id": 7}, image=None),
            DatBenchSample(**{**orjson.loads(_line("a")), "id": None}, image=None),
        ]
        with ReferenceFile(None, held=samples) as held:
            parse = held.parser()
            self.assertEqual([parse(raw).image for raw in held.raws(range(3))], [None] * 3)
            self.assertEqual([parse(raw).id for raw in held.raws(range(3))], ["a", 7, None])
            self.assertEqual(held.known(["a", "7", "None", "b'7'"]), {"a"})
            self.assertEqual(held.lines.last_by_id()["a"], 0)
            self.assertIsNotNone(samples[0].image)  # the caller's own sample is untouched

    def test_held_samples_no_store_can_take_are_unmatched_or_named(self) -> None:
        # A lone surrogate (a string UTF-8 cannot hold) matches nothing, as an odd id does; a
        # sample that cannot be pickled for the workers is refused by its place.
        record = orjson.loads(_line("a"))
        surrogate = DatBenchSample(**{**record, "id": "\ud800"}, image=None)
        with ReferenceFile(None, held=[surrogate]) as held:
            self.assertEqual(held.known(["\ud800".encode("utf-8", "surrogatepass").decode(
                "utf-8", "replace")]), set())  # fmt: skip
            self.assertEqual(held.parser()(held.raws([0])[0]).id, "\ud800")
        locked = DatBenchSample(**{**record, "source_info": {"lock": threading.Lock()}}, image=None)
        with self.assertRaisesRegex(TypeError, r"hf_dataset\[1\] \(id 'a'\) cannot be sent"):
            ReferenceFile(None, held=[surrogate, locked])

    def test_a_duplicate_id_takes_the_last_lines_item_statistics(self) -> None:
        self.path.write_bytes(
            _line("a") + b"\n" + _line("a", eval_metrics={"discrimination": 2.0}) + b"\n"
        )
        with ReferenceFile(self.path) as refs:
            self.assertEqual(refs.item_metrics(0), (None, 2.0))
            self.assertEqual(refs.lines.last_by_id()["a"], 1)

    def test_an_unhashable_dataset_is_kept_as_it_is(self) -> None:
        self.path.write_bytes(_line("a", source_info={"dataset": ["x"]}) + b"\n")
        with ReferenceFile(self.path) as refs:
            self.assertEqual(refs.key(0).dataset, ["x"])

    def test_a_file_rewritten_in_place_gives_the_lines_read(self) -> None:
        self.path.write_bytes(_line("a", answer="1") + b"\n" + _line("b") + b"\n")
        with ReferenceFile(self.path) as refs:
            changed = _line("a", answer="7")  # same id, same length, another answer
            with self.path.open("r+b") as handle:  # same inode, other content
                handle.write(changed)
            first, second = (refs.parser()(raw) for raw in refs.raws([0, 1]))
            self.assertEqual(
                first, DatBenchSample(**orjson.loads(_line("a", answer="1")), image=None)
            )
            self.assertEqual(second.id, "b")
            self.assertIn("a", refs)
            self.assertNotIn("x", refs)

    def test_a_bad_line_names_its_line(self) -> None:
        self.path.write_bytes(_line("a") + b"\n" + b'{"id": 3}\n')
        with self.assertRaises(InputError) as caught:
            ReferenceFile(self.path)
        self.assertIn("2", str(caught.exception))

    def test_a_field_of_another_type_is_named_with_its_line(self) -> None:
        wrong = {
            "eval_mode": (["judge"], '"eval_mode" must be a string, got ["judge"]'),
            "answer": ({"a": 1}, '"answer" must be a string, a number or null, got {"a":1}'),
            "all_answers": ("1", '"all_answers" must be a list or null, got "1"'),
            "is_circular": ("false", '"is_circular" must be a boolean or null, got "false"'),
            "source_info": (5, '"source_info" must be an object or null, got 5'),
            "capability": (None, '"capability" must be a string, got null'),
        }
        for name, (value, message) in wrong.items():
            with self.subTest(name):
                self.path.write_bytes(_line("a") + b"\n" + _line("b", **{name: value}) + b"\n")
                with self.assertRaises(InputError) as caught:
                    ReferenceFile(self.path)
                self.assertEqual(str(caught.exception), f"{self.path}:2: {message}")

    def test_a_number_answer_and_null_fields_are_read_as_they_are(self) -> None:
        self.path.write_bytes(_line("a", answer=3, all_answers=None, source_info=None) + b"\n")
        with ReferenceFile(self.path) as refs:
            self.assertEqual(refs.parser()(refs.raws([0])[0]).answer, 3)


if __name__ == "__main__":
    unittest.main()
