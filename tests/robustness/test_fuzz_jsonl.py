"""Property tests of every reader of untrusted JSON: JSONL files, response files, request files,
manifests. Whatever the bytes, a reader yields objects or raises one ``InputError`` naming the file
(and line), never anything else, and always the same outcome for the same bytes."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import unittest
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from hypothesis import example, given, settings
from hypothesis import strategies as st

from datbench_cli.batch.responses import load_judge_responses, load_vlm_responses
from datbench_cli.batch.sender import answered_ids, iter_request_lines
from datbench_cli.errors import InputError
from datbench_cli.files import jsonio
from datbench_cli.files.append_log import repair_tail
from datbench_cli.files.rundir import MANIFEST, RunDir
from tests.cli_helpers import ROOT, SAMPLE, run_cli, sample_capabilities
from tests.hypothesis_profiles import examples

BOM = b"\xef\xbb\xbf"
VTB_SAMPLE = ROOT / "sample_data" / "vistoolbench"

# JSON values orjson can write: no surrogates, 64-bit integers, finite floats.
texts = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    texts,
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(texts, inner, max_size=4)),
    max_leaves=12,
)
json_objects = st.dictionaries(texts, json_values, max_size=5)

# Lines that are not one JSON object, each with why.
BAD_LINES = {
    "invalid UTF-8": b'{"raw_output": "caf\xe9"}',
    "lone surrogate escape": b'{"raw_output": "\\ud800"}',
    "NaN": b'{"score": NaN}',
    "Infinity": b'{"score": Infinity}',
    "-Infinity": b"-Infinity",
    "overflowing number": b'{"score": 1e999}',
    "array": b'[{"id": "a"}]',
    "string": b'"{\\"id\\": \\"a\\"}"',
    "null": b"null",
    "number": b"42",
    "boolean": b"true",
    "deep nesting": b'{"a": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    "truncated object": b'{"id": "a", "raw_output": "tru',
    "two objects": b'{"id": "a"} {"id": "b"}',
    "trailing comma": b'{"id": "a",}',
    "single quotes": b"{'id': 'a'}",
    "BOM after line 1": BOM + b'{"id": "a"}',
    "NUL byte": b'{"id": "a"}\x00',
    "control character in string": b'{"id": "a\x01"}',
}

arbitrary_lines = st.one_of(
    json_objects.map(jsonio.dumps),
    st.sampled_from(sorted(BAD_LINES.values())),
    st.binary(max_size=60).map(lambda data: data.replace(b"\n", b" ")),
    json_values.map(jsonio.dumps),
)
line_ends = st.sampled_from([b"\n", b"\r\n"])
blank_lines = st.sampled_from([b"", b" ", b"\t", b"\r", b"  \t "])


def _outcome(action: Callable[[], Any]) -> tuple[str, Any]:
    """``("ok", value)`` or ``("error", message)`` for an InputError; anything else propagates."""
    try:
        return "ok", action()
    except InputError as exc:
        return "error", str(exc)


class _TempDir(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.path = self.tmp / "input.jsonl"

    def write(self, data: bytes) -> Path:
        self.path.write_bytes(data)
        return self.path


class IterJsonlProperties(_TempDir):
    """``jsonio.iter_jsonl`` against any bytes."""

    def check_error(self, exc: InputError, line_count: int) -> None:
        self.assertEqual(exc.path, str(self.path))
        self.assertIsNotNone(exc.line)
        self.assertGreaterEqual(exc.line, 1)
        self.assertLessEqual(exc.line, max(line_count, 1))
        self.assertTrue(str(exc).startswith(f"{self.path}:{exc.line}: "), str(exc))
        self.assertNotIn("\n", str(exc))

    @given(st.binary(max_size=400))
    @example(b"\xfe\xff")  # a UTF-16 byte order mark: its error named no line
    @example(b"\x1f\x8b\x08\n")  # gzip's magic, said of line 1 too
    def test_arbitrary_bytes_yield_objects_or_a_located_error(self, data: bytes) -> None:
        path = self.write(data)
        for torn in (None, lambda number: None):
            outcomes = []
            for _ in range(2):
                try:
                    rows = list(jsonio.iter_jsonl(path, torn))
                except InputError as exc:
                    self.check_error(exc, data.count(b"\n") + 1)
                    outcomes.append(("error", str(exc)))
                    continue
                for number, obj in rows:
                    self.assertIsInstance(obj, dict)
                    self.assertGreaterEqual(number, 1)
                outcomes.append(("ok", rows))
            self.assertEqual(outcomes[0], outcomes[1])

    @given(
        st.lists(st.tuples(arbitrary_lines, line_ends), max_size=8),
        st.booleans(),
    )
    def test_mixed_lines_fail_exactly_at_the_first_bad_line(
        self, lines: list[tuple[bytes, bytes]], bom: bool
    ) -> None:
        data = (BOM if bom else b"") + b"".join(body + end for body, end in lines)
        path = self.write(data)
        expected: list[tuple[int, dict[str, Any]]] = []
        first_bad = None
        for number, (body, _) in enumerate(lines, start=1):
            if number == 1:
                body = ((BOM if bom else b"") + body).removeprefix(BOM)
            text = body.strip()
            if not text:
                continue
            value = _reference_parse(text)
            if not isinstance(value, dict):
                first_bad = number
                break
            expected.append((number, value))
        try:
            rows = list(jsonio.iter_jsonl(path))
        except InputError as exc:
            self.assertEqual(exc.line, first_bad, str(exc))
            self.check_error(exc, len(lines))
            return
        self.assertIsNone(first_bad, f"line {first_bad} was accepted")
        self.assertEqual(_canonical(rows), _canonical(expected))

    @given(
        st.lists(st.tuples(json_objects, blank_lines, line_ends), max_size=8),
        st.booleans(),
        st.booleans(),
    )
    def test_bom_crlf_and_blank_lines_are_accepted(
        self, items: list[tuple[dict[str, Any], bytes, bytes]], bom: bool, final_end: bool
    ) -> None:
        chunks, expected, number = [BOM] if bom else [], [], 0
        for obj, blank, end in items:
            chunks.append(blank + end)
            number += 1
            chunks.append(jsonio.dumps(obj) + end)
            number += 1
            expected.append((number, obj))
        data = b"".join(chunks)
        if not final_end:
            data = data.rstrip(b"\r\n")
        rows = list(jsonio.iter_jsonl(self.write(data)))
        self.assertEqual(_canonical(rows), _canonical(expected))

    @given(st.lists(json_objects, min_size=1, max_size=5), st.data())
    def test_a_torn_last_line_is_reported_to_the_callback(
        self, objects: list[dict[str, Any]], data: st.DataObject
    ) -> None:
        last = jsonio.dumps({"id": "last", "raw_output": "a complete answer"})
        cut = data.draw(st.integers(1, len(last) - 1), label="cut")
        body = b"".join(jsonio.dumps(o) + b"\n" for o in objects) + last[:cut]
        path = self.write(body)
        torn: list[int] = []
        rows = list(jsonio.iter_jsonl(path, torn.append))
        self.assertEqual(torn, [len(objects) + 1])
        self.assertEqual(_canonical(rows), _canonical(list(enumerate(objects, start=1))))
        with self.assertRaises(InputError) as caught:
            list(jsonio.iter_jsonl(path))
        self.assertEqual(caught.exception.line, len(objects) + 1)

    def test_each_bad_line_is_named_by_line_number(self) -> None:
        for label, bad in BAD_LINES.items():
            with self.subTest(label):
                path = self.write(b'{"id": "a"}\n\n' + bad + b'\n{"id": "b"}\n')
                with self.assertRaises(InputError) as caught:
                    list(jsonio.iter_jsonl(path))
                self.assertEqual(caught.exception.line, 3)
                self.check_error(caught.exception, 4)

    def test_huge_lines_are_read(self) -> None:
        big = "x" * 8_000_000
        path = self.write(jsonio.dumps({"id": "a", "raw_output": big}) + b"\n" + b'{"id": "b"}')
        rows = list(jsonio.iter_jsonl(path))
        self.assertEqual([n for n, _ in rows], [1, 2])
        self.assertEqual(len(rows[0][1]["raw_output"]), len(big))

    def test_unreadable_paths_are_input_errors(self) -> None:
        for path in (self.tmp / "absent.jsonl", self.tmp):
            with self.subTest(path=path), self.assertRaises(InputError):
                list(jsonio.iter_jsonl(path))

    @given(st.binary(max_size=300))
    def test_read_json_of_arbitrary_bytes(self, data: bytes) -> None:
        path = self.write(data)
        first = _outcome(lambda: jsonio.read_json(path))
        self.assertEqual(first, _outcome(lambda: jsonio.read_json(path)))
        if first[0] == "error":  # every defect of a document's bytes names its line
            self.assertRegex(first[1], f"^{re.escape(str(path))}:[0-9]+: ")

    def test_read_json_names_the_line_of_each_defect(self) -> None:
        cases = {
            b'{"a": 1,\n "b": NaN}': "2: not valid JSON: NaN at column 7",
            b'{"a": 1,\n "b": 1' + b"0" * 400 + b"}": "2: not valid JSON (number is infinity",
            b'{"a": 1,\n "b" 2}': "2: not valid JSON (",
            b'{"a":\n 1}\x00': "2: holds NUL bytes",
            b"": "1: is empty: no JSON document",
            b"\xef\xbb\xbf \r\n": "1: is empty: no JSON document",
            '{"a": 1}'.encode("utf-16"): "1: is UTF-16 text",
        }
        for data, message in cases.items():
            with self.subTest(data=data[:20]):
                path = self.write(data)
                with self.assertRaises(InputError) as caught:
                    jsonio.read_json(path)
                self.assertTrue(
                    str(caught.exception).startswith(f"{path}:{message}"), caught.exception
                )


def _refuse(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} overflows a double")
    return value


def _utf8_clean(value: Any) -> bool:
    """No lone surrogate anywhere in the value (iterative: deep nesting has no depth limit
    here, which differs between Python versions for recursive generators)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if any(0xD800 <= ord(c) <= 0xDFFF for c in item):
                return False
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
    return True


def _reference_parse(text: bytes) -> Any:
    """RFC 8259 JSON by the standard library (strict UTF-8, no NaN/Infinity, finite numbers,
    no lone surrogates), as the oracle for orjson; ``None`` when the text is not JSON."""
    try:
        value = json.loads(text.decode("utf-8"), parse_constant=_refuse, parse_float=_finite)
    except (ValueError, RecursionError):
        return None
    # orjson refuses nesting deeper than 1024 levels (the standard library's limit depends on
    # the Python version: 3.13 parses deeper); deeper text is an input error for us.
    if _depth(value) > _ORJSON_MAX_DEPTH:
        return None
    return value if _utf8_clean(value) else None


_ORJSON_MAX_DEPTH = 1024


def _depth(value: Any) -> int:
    """How deeply arrays and objects nest in ``value`` (iteratively)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, list | dict):
            level += 1
            deepest = max(deepest, level)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level) for child in children)
    return deepest


def _canonical(rows: list[tuple[int, Any]]) -> bytes:
    return orjson.dumps([[n, o] for n, o in rows], option=orjson.OPT_SORT_KEYS)


# ----------------------------------------------------------------------------- response files

field_values = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=False), texts,
    st.lists(texts, max_size=2), st.dictionaries(texts, texts, max_size=2),
)  # fmt: skip
batch_responses = st.one_of(
    field_values,
    st.fixed_dictionaries(
        {},
        optional={
            "status_code": st.one_of(st.just(200), field_values),
            "body": st.one_of(
                field_values,
                st.fixed_dictionaries(
                    {"choices": st.one_of(field_values, st.lists(json_values, max_size=2))}
                ),
                st.builds(
                    lambda content, reason: {
                        "choices": [{"message": {"content": content}, "finish_reason": reason}]
                    },
                    field_values,
                    field_values,
                ),
            ),
        },
    ),
)
native_lines = st.fixed_dictionaries(
    {},
    optional={
        "id": st.one_of(st.sampled_from(["a", "b", ""]), field_values),
        "raw_output": field_values,
        "parsed_answer": field_values,
        "raw_judge_output": field_values,
        "verdict": field_values,
    },
)
batch_lines = st.fixed_dictionaries(
    {"custom_id": st.one_of(st.sampled_from(["a", "b", ""]), field_values)},
    optional={"response": batch_responses, "error": field_values},
)
response_lines = st.one_of(native_lines, batch_lines)


def _unreadable_message(line: dict[str, Any]) -> bool:
    """Whether a batch line reached the model with a ``choices[0].message`` of another shape
    (not an object, or content neither a string, a list of part objects nor null)."""
    response = line.get("response")
    if line.get("error") or not isinstance(response, dict):
        return False
    status = response.get("status_code", 200)
    body = response.get("body")
    if not isinstance(status, int) or isinstance(status, bool) or not 200 <= status < 300:
        return False
    if not isinstance(body, dict) or body.get("error"):
        return False
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return False
    message = choices[0].get("message")
    if message is None:
        return False
    if not isinstance(message, dict):
        return True
    content = message.get("content")
    if isinstance(content, list):
        return not all(isinstance(part, dict) for part in content)
    return not isinstance(content, str | None)


def _first_invalid(lines: list[dict[str, Any]], text_field: str, parsed_field: str) -> int | None:
    """The 1-based number of the first line a response reader must refuse, from the contract."""
    for number, line in enumerate(lines, start=1):
        if "custom_id" in line:
            ident = line["custom_id"]
            ok = (
                isinstance(ident, str)
                and ident != ""
                and ("response" in line or "error" in line)
                and not _unreadable_message(line)
            )
        else:
            ident = line.get("id")
            ok = (
                isinstance(ident, str)
                and ident != ""
                and text_field in line
                and isinstance(line[text_field], str | None)
                and isinstance(line.get(parsed_field), str | None)
            )
        if not ok:
            return number
    return None


class ResponseFileProperties(_TempDir):
    """The VLM and judge response readers check every field's type, by line."""

    def check(self, lines: list[dict[str, Any]], judge: bool) -> None:
        path = self.write(b"".join(jsonio.dumps(line) + b"\n" for line in lines))
        fields = ("raw_judge_output", "verdict") if judge else ("raw_output", "parsed_answer")
        load = load_judge_responses if judge else load_vlm_responses
        expected_error = _first_invalid(lines, *fields)
        try:
            loaded = load(path)
        except InputError as exc:
            self.assertEqual(exc.line, expected_error, str(exc))
            self.assertNotIn("\n", str(exc))
            return
        self.assertIsNone(expected_error, f"line {expected_error} was accepted")
        kept = loaded.judge if judge else loaded.vlm
        for response in kept:
            self.assertIsInstance(response.id, str)
            text = response.raw_judge_output if judge else response.raw_output
            self.assertIsInstance(text, str)
        answered = {r.id for r in kept}
        self.assertTrue(answered.isdisjoint(loaded.errored_ids))
        self.assertLessEqual(len(kept) + len(loaded.errored_ids), len(lines))

    @given(st.lists(response_lines, max_size=6))
    def test_vlm_response_lines_of_any_shape(self, lines: list[dict[str, Any]]) -> None:
        self.check(lines, judge=False)

    @given(st.lists(response_lines, max_size=6))
    def test_judge_response_lines_of_any_shape(self, lines: list[dict[str, Any]]) -> None:
        self.check(lines, judge=True)


class SendFileProperties(_TempDir):
    """``datbench send``'s request reader, answered-id reader and torn-tail repair."""

    @given(
        st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "custom_id": st.one_of(st.just("r1"), field_values),
                    "body": st.one_of(st.just({"messages": []}), field_values),
                    "url": field_values,
                },
            ),
            max_size=5,
        )
    )
    def test_request_lines_of_any_shape(self, lines: list[dict[str, Any]]) -> None:
        path = self.write(b"".join(jsonio.dumps(line) + b"\n" for line in lines))
        outcome = _outcome(lambda: list(iter_request_lines([path])))
        if outcome[0] == "ok":
            for ident, url, body in outcome[1]:
                self.assertIsInstance(ident, str)
                self.assertIsInstance(url, str)
                self.assertIsInstance(body, dict)

    @given(st.lists(response_lines, max_size=6))
    def test_answered_ids_of_any_output_file(self, lines: list[dict[str, Any]]) -> None:
        path = self.write(b"".join(jsonio.dumps(line) + b"\n" for line in lines))
        outcome = _outcome(lambda: answered_ids(path))
        if outcome[0] == "ok":
            self.assertTrue(all(isinstance(i, str) for i in outcome[1]))

    @given(st.lists(arbitrary_lines, max_size=5), st.binary(max_size=40))
    def test_repair_tail_leaves_whole_lines(self, lines: list[bytes], tail: bytes) -> None:
        head = b"".join(line.replace(b"\n", b" ") + b"\n" for line in lines)
        path = self.write(head + tail.replace(b"\n", b" "))
        repair_tail(path)
        repaired = path.read_bytes()
        self.assertTrue(repaired == b"" or repaired.endswith(b"\n"))
        self.assertTrue(repaired.startswith(head))
        self.assertIsNone(repair_tail(path))


# ----------------------------------------------------------------------------- manifests

manifests = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"benchmark": st.one_of(st.just("datbench"), field_values)},
        optional={
            "files": st.one_of(
                field_values,
                st.dictionaries(
                    st.sampled_from(
                        ["tasks.jsonl", "references.jsonl", "images", "/dev/zero", "../x", ""]
                    ),
                    st.one_of(field_values, st.fixed_dictionaries({"sha256": field_values})),
                    max_size=3,
                ),
            )
        },
    ),
)


class ManifestProperties(_TempDir):
    """A hand-edited or corrupt ``datbench.json`` is refused in one sentence, never followed."""

    @given(manifests)
    def test_any_manifest_is_read_or_refused(self, manifest: Any) -> None:
        run = RunDir(self.tmp)
        (self.tmp / "tasks.jsonl").write_bytes(b'{"id": "a"}\n')
        (self.tmp / MANIFEST).write_bytes(jsonio.dumps(manifest))
        outcome = _outcome(run.read_manifest)
        if outcome[0] == "ok":
            self.assertIsInstance(outcome[1], dict)
            self.assertIn("benchmark", outcome[1])
        else:
            self.assertNotIn("\n", outcome[1])
        self.assertEqual(outcome, _outcome(run.read_manifest))
        benchmark = _outcome(run.benchmark)
        self.assertEqual(benchmark[0], "ok")


# ----------------------------------------------------------------------------- the CLI


vtb_turns = st.lists(
    st.one_of(
        texts,
        field_values,
        st.fixed_dictionaries(
            {}, optional={"raw_output": field_values, "parsed_answer": field_values}
        ),
    ),
    max_size=3,
)
vtb_response_lines = st.one_of(
    response_lines,
    st.fixed_dictionaries(
        {"id": st.one_of(st.just(""), field_values)},
        optional={"turns": st.one_of(vtb_turns, field_values), "raw_output": field_values},
    ),
)


class CommandLineProperties(unittest.TestCase):
    """The stages on real run directories (DatBench and VisualToolBench), fed any response and
    judge-response files: exit 0 (1 for check-judge) or one sentence and exit 2, never an
    internal error."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.datbench = cls.tmp / "datbench"
        cls.vtb = cls.tmp / "vtb"
        for args in (
            [
                "export-tasks",
                *sample_capabilities(),
                "--source",
                str(SAMPLE),
                "-d",
                str(cls.datbench),
            ],
            ["export-tasks", "vistoolbench", "--source", str(VTB_SAMPLE), "-d", str(cls.vtb)],
        ):
            result = run_cli(*args)
            assert result.exit_code == 0, result.stderr
        cls.datbench_ids = [
            line["id"] for _, line in jsonio.iter_jsonl(cls.datbench / "tasks.jsonl")
        ]
        cls.vtb_ids = [
            ident
            for _, task in jsonio.iter_jsonl(cls.vtb / "tasks.jsonl")
            for ident in [task["id"], *(turn["id"] for turn in task["turns"])]
        ]
        cls.vtb_judge_ids = [
            line["id"]
            for _, line in jsonio.iter_jsonl(VTB_SAMPLE / "judge_responses.jsonl")
            if "id" in line
        ]

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def check(self, result: Any, allowed: tuple[int, ...]) -> None:
        self.assertIn(result.exit_code, allowed, result.stderr)
        if result.exit_code == 2:  # one error line, at most one hint line
            lines = result.stderr.strip().splitlines()
            self.assertIn(len(lines), (1, 2), result.stderr)
            self.assertTrue(lines[0].startswith("error: "), result.stderr)
            self.assertTrue(all(line.startswith("hint: ") for line in lines[1:]), result.stderr)
        self.assertNotIn("Traceback", result.stderr)
        self.assertNotIn("internal error", result.stderr)

    def write_lines(
        self, name: str, lines: list[tuple[bool, bytes, dict[str, Any]]], ids: list[str]
    ) -> Path:
        """Raw lines, or structured ones given a real id (so they reach the scorers)."""
        chunks = []
        for index, (structured, raw, line) in enumerate(lines):
            if structured and ids:
                line = dict(line)
                key = "custom_id" if "custom_id" in line else "id"
                line[key] = ids[index % len(ids)]
                raw = jsonio.dumps(line)
            chunks.append(raw.replace(b"\n", b" ") + b"\n")
        path = self.tmp / name
        path.write_bytes(b"".join(chunks))
        return path

    def run_stages(self, run_dir: Path, responses: Path, judges: Path) -> None:
        report = self.tmp / "report.json"
        report.unlink(missing_ok=True)
        run = str(run_dir)
        scored = run_cli(
            "score", str(responses), "--judge-responses", str(judges), "-d", run,
            "-o", str(report), "-j", "1", "-q",
        )  # fmt: skip
        # Exit 1: a check failed (coverage, on fuzzed responses); the report says so.
        self.check(scored, (0, 1, 2))
        self.assertEqual(report.is_file(), scored.exit_code in (0, 1))
        if scored.exit_code in (0, 1):
            summary = json.loads(report.read_text())["summary"]
            self.assertEqual(summary["checks_passed"], scored.exit_code == 0)
        judge_tasks = self.tmp / "judge_tasks.jsonl"
        made = run_cli("make-judge-tasks", str(responses), "-d", run, "-o", str(judge_tasks), "-q")
        self.check(made, (0, 2))
        self.check(run_cli("check-judge", str(judges), "-d", run), (0, 1, 2))

    @settings(max_examples=examples(0.3))
    @given(
        st.lists(st.tuples(st.booleans(), arbitrary_lines, response_lines), max_size=6),
        st.lists(st.tuples(st.booleans(), arbitrary_lines, response_lines), max_size=4),
    )
    def test_datbench_stages_on_fuzzed_files(
        self,
        lines: list[tuple[bool, bytes, dict[str, Any]]],
        judge_lines: list[tuple[bool, bytes, dict[str, Any]]],
    ) -> None:
        self.run_stages(
            self.datbench,
            self.write_lines("responses.jsonl", lines, self.datbench_ids),
            self.write_lines("judges.jsonl", judge_lines, self.datbench_ids),
        )

    @settings(max_examples=examples(0.3))
    @given(
        st.lists(st.tuples(st.booleans(), arbitrary_lines, vtb_response_lines), max_size=6),
        st.lists(st.tuples(st.booleans(), arbitrary_lines, response_lines), max_size=4),
    )
    def test_vistoolbench_stages_on_fuzzed_files(
        self,
        lines: list[tuple[bool, bytes, dict[str, Any]]],
        judge_lines: list[tuple[bool, bytes, dict[str, Any]]],
    ) -> None:
        self.run_stages(
            self.vtb,
            self.write_lines("responses.jsonl", lines, self.vtb_ids),
            self.write_lines("judges.jsonl", judge_lines, self.vtb_judge_ids),
        )
