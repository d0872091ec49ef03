"""Dataset defects at export. A missing or corrupt image, or one whose header declares a
decompression bomb, is exported (bytes unchanged, never decoded) and the rest of the export
completes, with a warning naming the sample. A bad id, a duplicate id, a missing column or an
unknown config stops the export with one sentence and exit 2 before anything is written, so an
earlier export in the directory stays intact."""

from __future__ import annotations

import io
import shutil
import struct
import tempfile
import unittest
import zlib
from pathlib import Path
from typing import Any

from tests.cli.test_cli import lines
from tests.cli_helpers import make_dataset, make_row, png_bytes, run_cli, tree_bytes

BOMB_SIDE = 30_000


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    return (
        struct.pack(">I", len(body))
        + kind
        + body
        + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    )


def bomb_png() -> bytes:
    """A 100-byte PNG whose header declares 30,000 x 30,000 RGB pixels (2.7 GB decoded)."""
    header = struct.pack(">IIBBBBB", BOMB_SIDE, BOMB_SIDE, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", zlib.compress(b"\x00" * 64))
        + _png_chunk(b"IEND", b"")
    )


def bomb_jpeg() -> bytes:
    """A JPEG start whose frame header (SOF0) declares 30,000 x 30,000 pixels."""
    frame = (
        struct.pack(">BHHB", 8, BOMB_SIDE, BOMB_SIDE, 3) + b"\x01\x22\x00\x02\x11\x01\x03\x11\x01"
    )
    return b"\xff\xd8\xff\xc0" + struct.pack(">H", len(frame) + 2) + frame + b"\xff\xd9"


def image_cell(data: bytes | None, path: str | None = None) -> dict[str, Any]:
    return {"bytes": data, "path": path}


class _ExportCase(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp, True)
        good = make_dataset(self.tmp / "good", {"math": [make_row("old1"), make_row("old2")]})
        self.run_dir = self.tmp / "run"
        result = run_cli("export-tasks", "math", "--source", str(good), "-d", str(self.run_dir))
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.before = tree_bytes(self.run_dir)

    def export(self, rows: dict[str, list[dict[str, Any]]], *extra: str) -> Any:
        source = make_dataset(self.tmp / f"src{len(list(self.tmp.iterdir()))}", rows)
        return self.export_source(source, list(rows), *extra)

    def export_source(self, source: Path, targets: list[str], *extra: str) -> Any:
        return run_cli(
            "export-tasks", *targets, "--source", str(source), "-d", str(self.run_dir), *extra
        )

    def assert_refused(self, result: Any, *fragments: str) -> None:
        """Exit 2, one error line with ``fragments``, and the earlier export untouched."""
        self.assertEqual(result.exit_code, 2, result.stderr)
        self.assertNotIn("Traceback", result.stderr)
        errors = [x for x in result.stderr.splitlines() if x.startswith("error: ")]
        self.assertEqual(len(errors), 1, result.stderr)
        for fragment in fragments:
            self.assertIn(fragment, errors[0])
        self.assertEqual(tree_bytes(self.run_dir), self.before)

    def warnings_of(self, result: Any) -> list[str]:
        self.assertEqual(result.exit_code, 0, result.stderr)
        return [x for x in result.stderr.splitlines() if x.startswith("warning: ")]


class ImageDefectTests(_ExportCase):
    """Image problems: exported as they are, the rest completes, a warning names the sample."""

    def test_missing_images(self) -> None:
        rows = [
            make_row("fine"),
            make_row("no_cell", image=None),
            make_row("empty_bytes", image=image_cell(b"", "gone/elsewhere.png")),
        ]
        result = self.export({"math": rows})
        warnings = self.warnings_of(result)
        self.assertEqual(len(warnings), 1, warnings)
        self.assertIn("2 sample(s) have no image bytes", warnings[0])
        self.assertIn("no_cell", warnings[0])
        self.assertIn("empty_bytes", warnings[0])
        tasks = {t["id"]: t for t in lines(self.run_dir / "tasks.jsonl")}
        self.assertEqual(tasks["fine"]["image"], "images/fine.png")
        self.assertIsNone(tasks["no_cell"]["image"])
        self.assertIsNone(tasks["empty_bytes"]["image"])
        self.assertEqual(sorted(p.name for p in (self.run_dir / "images").iterdir()), ["fine.png"])
        self.assertEqual(len(lines(self.run_dir / "references.jsonl")), 3)

    def test_corrupt_image_bytes(self) -> None:
        garbage = b"<html>404 Not Found</html>"
        truncated = png_bytes()[:20]
        rows = [
            make_row("fine"),
            make_row("garbage", image=image_cell(garbage)),
            make_row("truncated", image=image_cell(truncated)),
        ]
        result = self.export({"math": rows}, "--format", "openai", "--model", "m")
        warnings = self.warnings_of(result)
        self.assertEqual(len(warnings), 1, warnings)
        self.assertIn("1 sample(s) have image bytes in no known image format", warnings[0])
        self.assertIn("garbage", warnings[0])
        images = self.run_dir / "images"
        self.assertEqual((images / "garbage.bin").read_bytes(), garbage)
        self.assertEqual((images / "truncated.png").read_bytes(), truncated)
        self.assertTrue((self.run_dir / "datbench.json").is_file())

    def test_decompression_bomb_headers_are_never_decoded(self) -> None:
        from PIL import Image

        bombs = {"bomb_png": bomb_png(), "bomb_jpg": bomb_jpeg()}
        with self.assertRaises(Image.DecompressionBombError):  # the fixture is bomb-sized
            Image.open(io.BytesIO(bombs["bomb_png"]))
        rows = [make_row(name, image=image_cell(data)) for name, data in bombs.items()]
        result = self.export({"math": rows}, "--format", "openai", "--model", "m")
        self.assertEqual(self.warnings_of(result), [])
        self.assertEqual((self.run_dir / "images" / "bomb_png.png").read_bytes(), bombs["bomb_png"])
        self.assertEqual((self.run_dir / "images" / "bomb_jpg.jpg").read_bytes(), bombs["bomb_jpg"])
        requests = list((self.run_dir / "requests").glob("tasks.openai.*.jsonl"))
        self.assertEqual(len(requests), 1)
        self.assertIn("data:image/png;base64,", requests[0].read_text())


class RowDefectTests(_ExportCase):
    """Row and dataset problems: one sentence, exit 2, nothing written."""

    def test_duplicate_ids(self) -> None:
        self.assert_refused(
            self.export({"math": [make_row("a"), make_row("b"), make_row("a")]}),
            "math row 2", "duplicate sample id 'a'", "first in math row 0",
        )  # fmt: skip
        self.assert_refused(
            self.export({"chart": [make_row("x")], "math": [make_row("x")]}),
            "duplicate sample id 'x'", "first in chart row 0",
        )  # fmt: skip

    def test_ids_that_are_not_safe_file_names(self) -> None:
        bad_ids = ["a/b", "..", "../up", "/etc/passwd", "C:\\x", "a\\b", "CON", "nul.txt",
                   "Com1", ".hidden", "-dash", "", "x" * 201, "tab\tid", "é"]  # fmt: skip
        for bad_id in bad_ids:
            with self.subTest(bad_id=bad_id):
                result = self.export({"math": [make_row("ok"), make_row(bad_id)]})
                self.assert_refused(result, "math row 1", "cannot be used as a file name")

    def test_a_very_long_id_is_named_cut(self) -> None:
        """A 10,000-character id was repeated whole in the error line."""
        result = self.export({"math": [make_row("ok"), make_row("z" * 10_000)]})
        self.assert_refused(result, "math row 1", "(10002 characters)")
        self.assertLess(len(result.stderr), 500, result.stderr)

    def test_missing_id(self) -> None:
        self.assert_refused(
            self.export({"math": [make_row("ok"), make_row("x", id=None)]}),
            "math row 1", "sample id None",
        )  # fmt: skip

    def test_missing_columns(self) -> None:
        from datasets import Dataset

        from datbench_cli.files.hub_layout import hub_readme

        source = self.tmp / "no-answer"
        (source / "math").mkdir(parents=True)
        rows = [{k: v for k, v in make_row("a").items() if k not in ("answer", "question")}]
        Dataset.from_list(rows).to_parquet(str(source / "math" / "test-00000-of-00001.parquet"))
        (source / "README.md").write_text(hub_readme(["math"]))
        self.assert_refused(
            self.export_source(source, ["math"]), "'math'", "lacks the column(s) question, answer"
        )

    def test_a_config_that_does_not_exist(self) -> None:
        source = make_dataset(self.tmp / "chart-only", {"chart": [make_row("c1")]})
        self.assert_refused(
            self.export_source(source, ["chart", "math"]),
            "config 'math'", "not found", "'chart'",
        )  # fmt: skip

    def test_the_folder_above_the_dataset_names_the_folders_inside(self) -> None:
        """`--source sample_data` got only datasets' "BuilderConfig 'math' not found.
        Available: ['default']"; a folder whose own folders hold the datasets names them."""
        dataset = make_dataset(self.tmp / "datasets", {"math": [make_row("m1")]})
        result = self.export_source(dataset.parent, ["math"])
        self.assert_refused(result, "config 'math'")
        self.assertEqual(
            result.stderr.strip().splitlines()[-1],
            "hint: pass the dataset's own folder (the one holding its README.md or parquet "
            f"files): {dataset}",
        )
        # The dataset's own folder, without the capability asked for: no such hint.
        chart = make_dataset(self.tmp / "chart-only", {"chart": [make_row("c1")]})
        self.assertNotIn("hint:", self.export_source(chart, ["math"]).stderr)

    def test_a_split_that_does_not_exist(self) -> None:
        source = make_dataset(self.tmp / "test-only", {"math": [make_row("m1")]})
        self.assert_refused(
            self.export_source(source, ["math"], "--split", "validation"), "'validation'"
        )

    def test_a_dataset_card_that_is_not_valid_yaml(self) -> None:
        # It was "cannot load ... : while parsing a flow node": datasets' first line, no file.
        source = make_dataset(self.tmp / "bad-card", {"math": [make_row("m1")]})
        card = source / "README.md"
        card.write_text("---\nconfigs:\n- config_name: math\n  data_files: [\n---\n")
        self.assert_refused(
            self.export_source(source, ["math"]),
            f"{card}:4: the dataset card's YAML header is not valid YAML", "expected",
        )  # fmt: skip

    def test_a_capability_with_no_rows_is_named(self) -> None:
        # It was exported as zero samples without a word (the summary line gives one total).
        import pyarrow.parquet as pq

        rows = {"chart": [make_row("c1")], "math": [make_row("m1")]}
        data = make_dataset(self.tmp / "empty-math", rows) / "math" / "test-00000-of-00001.parquet"
        pq.write_table(pq.read_table(data).slice(0, 0), data)
        source = data.parent.parent
        result = self.export_source(source, ["chart", "math"])
        warnings = self.warnings_of(result)
        self.assertEqual(len(warnings), 1, warnings)
        self.assertIn("1 capability(ies) have no rows in split 'test'", warnings[0])
        self.assertTrue(warnings[0].endswith(": math"), warnings[0])
        self.assertEqual([t["id"] for t in lines(self.run_dir / "tasks.jsonl")], ["c1"])

    def test_a_truncated_second_data_file_is_named(self) -> None:
        # It was an internal error (exit 3): the footers counted for the progress total.
        source = make_dataset(self.tmp / "two-files", {"math": [make_row("m1")]})
        first = source / "math" / "test-00000-of-00001.parquet"
        second = source / "math" / "test-00001-of-00001.parquet"
        second.write_bytes(first.read_bytes()[:300])
        card = source / "README.md"
        card.write_text(card.read_text().replace(first.name, "*.parquet"))
        self.assert_refused(
            self.export_source(source, ["math"]),
            f"{second}: a data file is corrupt or truncated",
        )

    def test_a_truncated_only_data_file_is_named(self) -> None:
        # load_dataset itself fails on it: the error was datasets' "Parquet magic bytes not
        # found in footer", naming no file.
        source = make_dataset(self.tmp / "one-file", {"math": [make_row("m1")]})
        only = source / "math" / "test-00000-of-00001.parquet"
        only.write_bytes(only.read_bytes()[:300])
        self.assert_refused(
            self.export_source(source, ["math"]), f"{only}: a data file is corrupt or truncated"
        )

    def test_a_second_data_file_corrupt_inside_is_named(self) -> None:
        # Its footer reads (the progress total counts it); a page inside does not: the error
        # said "a data file is corrupt or truncated" without saying which.
        import pyarrow.parquet as pq

        rows = [make_row(f"m{i}") for i in range(40)]
        source = make_dataset(self.tmp / "two-files", {"math": rows})
        first = source / "math" / "test-00000-of-00001.parquet"
        second = source / "math" / "test-00001-of-00001.parquet"
        table = pq.read_table(first)
        pq.write_table(table.slice(0, 20), first)
        pq.write_table(table.slice(20), second, compression="snappy")
        data = bytearray(second.read_bytes())  # the first column chunk, after the magic
        data[8:208] = bytes(b ^ 0x5A for b in data[8:208])
        second.write_bytes(bytes(data))
        assert pq.read_metadata(second).num_rows == 20  # the footer is whole
        card = source / "README.md"
        card.write_text(card.read_text().replace(first.name, "*.parquet"))
        self.assert_refused(
            self.export_source(source, ["math"]),
            f"{second}: cannot read",
        )

    def _split_in_two(self, name: str, second_table: Any) -> tuple[Path, Path]:
        """A source whose math split is two files: 10 good rows, then ``second_table(rows)``."""
        import pyarrow.parquet as pq

        rows = [make_row(f"m{i}") for i in range(20)]
        source = make_dataset(self.tmp / name, {"math": rows})
        first = source / "math" / "test-00000-of-00001.parquet"
        second = source / "math" / "test-00001-of-00001.parquet"
        table = pq.read_table(first)
        pq.write_table(table.slice(0, 10), first)
        pq.write_table(second_table(table.slice(10)), second)
        card = source / "README.md"
        card.write_text(card.read_text().replace(first.name, "*.parquet"))
        return source, second

    def test_a_later_data_file_without_a_required_column_is_named(self) -> None:
        # datasets reads the missing column as nulls: it exported with exit 0 and the samples
        # had no answer to be scored against.
        source, second = self._split_in_two("no-answer-later", lambda t: t.drop(["answer"]))
        self.assert_refused(
            self.export_source(source, ["math"]),
            f"{second}: a data file lacks the column(s) answer",
        )

    def test_null_answers_are_named(self) -> None:
        import pyarrow as pa

        def null_answers(table: Any) -> Any:
            i = table.schema.get_field_index("answer")
            return table.set_column(i, "answer", pa.nulls(table.num_rows, pa.string()))

        source, _ = self._split_in_two("null-answers", null_answers)
        warnings = self.warnings_of(self.export_source(source, ["math"]))
        self.assertEqual(len(warnings), 1, warnings)
        self.assertIn("10 sample(s) have a null answer, a dataset defect", warnings[0])
        self.assertIn("m10", warnings[0])
        self.assertNotIn("m9,", warnings[0])

    def test_a_later_bad_row_writes_nothing_either(self) -> None:
        rows = [make_row(f"r{i}") for i in range(150)] + [make_row("bad/id")]
        self.assert_refused(self.export({"math": rows}), "math row 150")
