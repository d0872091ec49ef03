"""export-tasks --num-shards/--shard-index: deterministic, disjoint, complete; merging is
concatenation, and score reports duplicates and gaps."""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import unittest
from pathlib import Path

from datbench_cli.batch.shards import Shard, shard_of
from datbench_cli.errors import UsageError
from tests.cli_helpers import make_dataset, make_row, run_cli
from tests.page_records import page_records

K = 3


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def responses_for(run_dir: Path) -> str:
    """A native response line for every task of a run directory."""
    tasks = lines(run_dir / "tasks.jsonl")
    return "".join(json.dumps({"id": t["id"], "raw_output": "yes"}) + "\n" for t in tasks)


class ShardFunctionTests(unittest.TestCase):
    def test_the_hash_is_pinned(self) -> None:
        """sha256 of the UTF-8 id, first 8 bytes big-endian, modulo the shard count."""
        self.assertEqual(
            [shard_of(f"m{i}", 3) for i in range(12)], [0, 0, 0, 1, 1, 1, 1, 2, 0, 0, 2, 1]
        )
        self.assertEqual(shard_of("db_chart_judge_000", 7), 5)
        digest = hashlib.sha256("é".encode()).digest()
        self.assertEqual(shard_of("é", 5), int.from_bytes(digest[:8], "big") % 5)

    def test_options(self) -> None:
        self.assertIsNone(Shard.from_options(None, None))
        self.assertEqual(Shard.from_options(4, 3), Shard(3, 4))
        for num, index in ((4, None), (None, 0), (3, 3), (0, 0)):
            with self.subTest(num=num, index=index), self.assertRaises(UsageError):
                Shard.from_options(num, index)


class ShardExportTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        rows = {
            "math": [make_row(f"m{i}") for i in range(8)],
            "general": [make_row(f"g{i}") for i in range(6)],
        }
        cls.source = make_dataset(cls.tmp, rows)
        cls.full = cls.tmp / "full"
        assert cls.export(cls.full).exit_code == 0
        cls.shards = [cls.tmp / f"shard{i}" for i in range(K)]
        for index, target in enumerate(cls.shards):
            result = cls.export(
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

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def export(cls, target: Path, *options: str):
        return run_cli(
            "export-tasks",
            "math",
            "general",
            "--source",
            str(cls.source),
            "-d",
            str(target),
            *options,
        )

    def shard_ids(self, index: int) -> list[str]:
        return [t["id"] for t in lines(self.shards[index] / "tasks.jsonl")]

    def test_a_shard_without_tasks_says_it_wrote_no_request_file(self) -> None:
        # The documented next step sends requests/tasks.openai.*.jsonl: it failed with "file
        # not found" and nothing had said why.
        target = self.tmp / "empty-shard"
        options = ("--limit", "1", "--num-shards", "50", "--format", "openai", "--model", "m")
        for index in range(50):
            shutil.rmtree(target, ignore_errors=True)
            result = self.export(target, *options, "--shard-index", str(index))
            self.assertEqual(result.exit_code, 0, result.stderr)
            if not lines(target / "tasks.jsonl"):
                break
        self.assertEqual(lines(target / "tasks.jsonl"), [])
        self.assertIn("no request file was written: nothing to send", result.stderr)
        self.assertEqual(list((target / "requests").glob("tasks.openai.*")), [])

    def test_shards_are_disjoint_complete_and_in_dataset_order(self) -> None:
        every = [t["id"] for t in lines(self.full / "tasks.jsonl")]
        seen: list[str] = []
        for index in range(K):
            ids = self.shard_ids(index)
            self.assertTrue(ids, "each shard holds something for this dataset")
            self.assertEqual(ids, [i for i in every if shard_of(i, K) == index])
            seen += ids
        self.assertEqual(sorted(seen), sorted(every))
        self.assertEqual(len(seen), len(set(seen)))

    def test_every_shard_keeps_all_references_and_only_its_images_and_requests(self) -> None:
        full_refs = (self.full / "references.jsonl").read_bytes()
        for index, target in enumerate(self.shards):
            with self.subTest(shard=index):
                self.assertEqual((target / "references.jsonl").read_bytes(), full_refs)
                images = sorted(p.stem for p in (target / "images").iterdir())
                self.assertEqual(images, sorted(self.shard_ids(index)))
                requests = lines(target / "requests" / "tasks.openai.00001.jsonl")
                self.assertEqual([r["custom_id"] for r in requests], self.shard_ids(index))
                manifest = json.loads((target / "datbench.json").read_text())
                self.assertEqual(
                    manifest["options"]["shard"],
                    {"index": index, "count": K, "tasks": len(self.shard_ids(index))},
                )
                self.assertEqual(manifest["counts"]["samples"], 14)

    def test_a_shard_export_is_deterministic(self) -> None:
        again = self.tmp / "again"
        result = self.export(again, "--num-shards", str(K), "--shard-index", "1")
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(
            (again / "tasks.jsonl").read_bytes(), (self.shards[1] / "tasks.jsonl").read_bytes()
        )

    def test_concatenated_responses_score_in_any_shard(self) -> None:
        merged = "".join(responses_for(target) for target in self.shards)
        work = self.tmp / "merged"
        shutil.copytree(self.shards[2], work)
        (work / "responses.jsonl").write_text(merged)
        result = run_cli("score", "-d", str(work), "--json")
        self.assertEqual(result.exit_code, 0, result.stderr)
        summary = json.loads(result.stdout)
        self.assertEqual(summary["total_samples"], 14)
        self.assertEqual(summary["missing_responses"], 0)
        self.assertEqual(summary["duplicate_response_ids"], 0)

    def test_score_reports_duplicates_and_gaps(self) -> None:
        work = self.tmp / "gappy"
        shutil.copytree(self.shards[0], work)
        one = responses_for(self.shards[1])
        (work / "responses.jsonl").write_text(responses_for(self.shards[0]) + one + one)
        result = run_cli("score", "-d", str(work), "--json")
        self.assertEqual(result.exit_code, 1, "a shard without responses fails coverage")
        self.assertEqual(json.loads(result.stdout)["unanswered_samples"], len(self.shard_ids(2)))
        result = run_cli("score", "-d", str(work), "--json", "--allow-missing")
        self.assertEqual(result.exit_code, 0, result.stderr)
        summary = json.loads(result.stdout)
        self.assertEqual(summary["duplicate_response_ids"], len(self.shard_ids(1)))
        self.assertEqual(summary["missing_responses"], len(self.shard_ids(2)))
        self.assertIn("more than once", result.stderr)
        # The gap is said once: in the JSON here, under the table without --json.
        table = run_cli("score", "-d", str(work), "--allow-missing")
        gap = f"{len(self.shard_ids(2))} of "
        self.assertEqual(table.stderr.count("samples are unanswered"), 1, table.stderr)
        self.assertIn(gap, table.stderr)
        self.assertNotIn("no VLM response", table.stderr)

    def test_the_page_of_a_shard_shows_every_sample_as_the_unsharded_page_does(self) -> None:
        """A shard's tasks.jsonl holds only its samples: the page listed no other unanswered
        sample and showed other shards' prompts without their prompt format."""
        responses = responses_for(self.shards[0]) + responses_for(self.shards[1])
        pages = []
        for name, source in (("page_full", self.full), ("page_shard", self.shards[2])):
            work = self.tmp / name
            shutil.copytree(source, work)
            (work / "responses.jsonl").write_text(responses)
            result = run_cli("score", "-d", str(work), "--allow-missing", "-q")
            self.assertEqual(result.exit_code, 0, result.stderr)
            pages.append(page_records(work))
        self.assertEqual(len(pages[0]), 14)
        self.assertEqual(pages[1], pages[0])

    def test_bad_shard_options_write_nothing(self) -> None:
        target = self.tmp / "bad"
        for options in (("--num-shards", "3", "--shard-index", "3"), ("--num-shards", "2")):
            with self.subTest(options=options):
                result = self.export(target, *options)
                self.assertEqual(result.exit_code, 2)
                self.assertIn("shard", result.stderr)
                self.assertFalse(target.exists())


if __name__ == "__main__":
    unittest.main()
