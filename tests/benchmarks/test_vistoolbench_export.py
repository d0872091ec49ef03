"""``export``: tasks.jsonl, images/, references.jsonl and the manifest (spec §1)."""

from __future__ import annotations

import json
import unittest

from datbench_cli.benchmarks.vistoolbench.model import Task
from datbench_cli.benchmarks.vistoolbench.rows import ImageDirs, image_dir_name
from datbench_cli.files.rundir import MANIFEST, REFERENCES, TASKS
from tests.vtb_support import TempDirCase, read_jsonl, rubrics_of, sample_rows

A, B, C = "vtb-a-medical-001", "vtb-b-maths-002", "finance/vtb-c-003"


def files_of(root):
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


class ExportTests(TempDirCase):
    def setUp(self) -> None:
        super().setUp()
        self.run, self.manifest, self.warnings = self.export()
        self.tasks = {t["id"]: t for t in read_jsonl(self.run.path(TASKS))}
        self.references = {r["id"]: r for r in read_jsonl(self.run.path(REFERENCES))}

    def test_manifest_is_last_and_complete(self) -> None:
        manifest = json.loads(self.run.path(MANIFEST).read_text())
        self.assertEqual(manifest["benchmark"], "vistoolbench")
        self.assertEqual(
            manifest["counts"],
            {
                "tasks": 6,
                "single_turn": 3,
                "multi_turn": 3,
                "turns": 9,
                "rubrics": 14,
                "images": 8,
                "max_images_per_turn": 2,
            },
        )
        self.assertEqual(
            manifest["options"],
            {"context": "golden", "first_image_only": False, "limit": None, "turncase": None},
        )
        self.assertEqual(set(manifest["files"]), {TASKS, REFERENCES})
        self.run.read_manifest()  # checksums agree
        self.assertEqual(self.warnings, [])

    def test_dataset_order_and_turn_ids(self) -> None:
        self.assertEqual(list(self.tasks)[:3], [A, B, C])
        self.assertEqual([t["id"] for t in self.tasks[B]["turns"]], [f"{B}::0", f"{B}::1"])
        self.assertEqual([t["index"] for t in self.tasks[B]["turns"]], [0, 1])
        self.assertEqual(self.tasks[B]["context_policy"], "golden_history")

    def test_golden_history_only_in_later_turns(self) -> None:
        rows = {r["id"]: r for r in sample_rows()}
        first, second = self.tasks[B]["turns"]
        self.assertEqual(first["history"], [])
        self.assertEqual(
            second["history"],
            [
                {"role": "user", "text": rows[B]["turn_prompts"][0]},
                {"role": "assistant", "text": rows[B]["turn_golden_answers"][0]},
            ],
        )
        text = json.dumps(self.tasks[B])
        self.assertNotIn(rows[B]["turn_golden_answers"][1], text)
        self.assertNotIn(
            json.dumps(rows[A]["turn_golden_answers"][0])[1:-1], json.dumps(self.tasks[A])
        )

    def test_no_rubrics_or_trajectories_in_tasks(self) -> None:
        text = self.run.path(TASKS).read_text()
        for word in ("rubric", "weight", "python_image_processing", "golden_answer"):
            self.assertNotIn(word, text)

    def test_images_are_the_dataset_bytes(self) -> None:
        rows = {r["id"]: r for r in sample_rows()}
        for task_id, task in self.tasks.items():
            for turn in task["turns"]:
                expected = [c["bytes"] for c in rows[task_id]["images_by_turn"][turn["index"]]]
                got = [(self.run.root / p).read_bytes() for p in turn["images"]]
                with self.subTest(turn=turn["id"]):
                    self.assertEqual(got, expected)
        self.assertEqual(
            self.tasks[A]["turns"][0]["images"],
            [f"images/{A}/turn_0_image_0.jpg", f"images/{A}/turn_0_image_1.png"],
        )
        self.assertEqual(self.tasks[B]["turns"][1]["images"], [])

    def test_id_with_slash_gets_a_flat_directory(self) -> None:
        self.assertEqual(
            self.tasks[C]["turns"][1]["images"], ["images/finance_vtb-c-003/turn_1_image_0.png"]
        )
        self.assertFalse((self.run.root / "images" / "finance").exists())

    def test_references_hold_numeric_weights_and_extras(self) -> None:
        ref = self.references[A]["turns"][0]
        self.assertEqual(ref["golden_answer"], sample_rows()[0]["turn_golden_answers"][0])
        self.assertEqual([r["rubric_id"] for r in ref["rubrics"]], ["r1", "r2", "r3"])
        self.assertEqual([r["weight"] for r in ref["rubrics"]], [5, 2, 3])
        self.assertEqual(self.references[B]["turns"][1]["rubrics"][0]["weight"], 4.0)
        extra = ref["rubrics"][0]["extra"]
        self.assertEqual(extra["category"], ["truthfulness"])
        self.assertNotIn("weight", extra)
        self.assertEqual(self.references["vtb-e-generalist-005"]["turns"][0]["rubrics"], [])
        self.assertNotIn("images", json.dumps(self.references))

    def test_reexport_is_byte_identical(self) -> None:
        before = files_of(self.run.root)
        self.export()
        self.assertEqual(files_of(self.run.root), before)

    def test_first_image_only(self) -> None:
        run, manifest, _ = self.export(name="first", first_image_only=True)
        tasks = {t["id"]: t for t in read_jsonl(run.path(TASKS))}
        self.assertEqual(tasks[A]["turns"][0]["images"], [f"images/{A}/turn_0_image_0.jpg"])
        self.assertFalse((run.root / f"images/{A}/turn_0_image_1.png").exists())
        self.assertEqual(manifest["counts"]["images"], 7)
        self.assertTrue(manifest["options"]["first_image_only"])

    def test_context_model(self) -> None:
        run, manifest, warnings = self.export(name="model", context="model")
        tasks = read_jsonl(run.path(TASKS))
        self.assertTrue(all(turn["history"] == [] for t in tasks for turn in t["turns"]))
        self.assertEqual({t["context_policy"] for t in tasks}, {"model_history"})
        self.assertEqual(manifest["context_policy"], "model_history")
        self.assertTrue(any("not comparable" in w for w in warnings))

    def test_limit_and_turncase_apply_before_writing(self) -> None:
        run, manifest, _ = self.export(name="multi", turncase="multi-turn", limit=2)
        self.assertEqual([t["id"] for t in read_jsonl(run.path(TASKS))], [B, C])
        self.assertEqual([t["id"] for t in read_jsonl(run.path(REFERENCES))], [B, C])
        self.assertEqual(manifest["counts"]["multi_turn"], 2)
        self.assertFalse((run.root / "images" / A).exists())


class DatasetEdgeTests(TempDirCase):
    def test_images_fall_back_to_turn_zero(self) -> None:
        rows = sample_rows()[:2]
        rows[1]["images_by_turn"] = [[], []]
        run, _, warnings = self.export(self.dataset_dir(rows))
        tasks = read_jsonl(run.path(TASKS))
        self.assertEqual(tasks[1]["turns"][0]["images"], [f"images/{B}/turn_0_image_0.png"])
        self.assertTrue(any("images_by_turn" in w and B in w for w in warnings))

    def test_num_turns_mismatch_and_missing_golden_warn(self) -> None:
        rows = sample_rows()[1:2]
        rows[0]["num_turns"] = 3
        rows[0]["turn_golden_answers"] = rows[0]["turn_golden_answers"][:1]
        rows[0]["rubrics_by_turn"] = rows[0]["rubrics_by_turn"][:1]
        run, manifest, warnings = self.export(self.dataset_dir(rows))
        refs = read_jsonl(run.path(REFERENCES))
        self.assertEqual(refs[0]["num_turns"], 2)
        self.assertEqual(refs[0]["turns"][1]["golden_answer"], "")
        self.assertEqual(refs[0]["turns"][1]["rubrics"], [])
        self.assertEqual(manifest["counts"]["rubrics"], 2)
        joined = "\n".join(warnings)
        for part in ("num_turns", "golden answer", "no entry"):
            self.assertIn(part, joined)

    def test_missing_group_fields_become_unknown(self) -> None:
        rows = sample_rows()[:1]
        rows[0]["prompt_category"] = ""
        rows[0]["eval_focus"] = None
        run, _, _ = self.export(self.dataset_dir(rows))
        task = read_jsonl(run.path(TASKS))[0]
        self.assertEqual((task["prompt_category"], task["eval_focus"]), ("unknown", "unknown"))

    def test_rubric_key_order_is_kept(self) -> None:
        rows = sample_rows()[:1]
        rubrics = rubrics_of(rows[0], 0)
        rows[0]["rubrics_by_turn"][0] = json.dumps({k: rubrics[k] for k in ("r3", "r1", "r2")})
        run, _, _ = self.export(self.dataset_dir(rows))
        ref = read_jsonl(run.path(REFERENCES))[0]
        self.assertEqual([r["rubric_id"] for r in ref["turns"][0]["rubrics"]], ["r3", "r1", "r2"])


class ImageCellTests(TempDirCase):
    def test_path_only_cell_and_decoded_image(self) -> None:
        import io

        from PIL import Image

        from datbench_cli.benchmarks.vistoolbench.evaluator import VisToolBenchEvaluator

        rows = sample_rows()[:1]
        jpeg, png = (cell["bytes"] for cell in rows[0]["images_by_turn"][0])
        on_disk = self.tmp / "scan.jpg"
        on_disk.write_bytes(jpeg)
        decoded = Image.open(io.BytesIO(png))
        rows[0]["images_by_turn"] = [[{"bytes": None, "path": str(on_disk)}, decoded]]
        warnings: list[str] = []
        evaluator = VisToolBenchEvaluator(rows, warn=warnings.append)
        first, second = evaluator.tasks[0].turns[0].images
        self.assertEqual((first.data, first.ext), (jpeg, "jpg"))
        self.assertEqual(second.ext, "png")
        self.assertEqual(Image.open(io.BytesIO(second.data)).size, decoded.size)
        self.assertTrue(any("re-encoded as PNG" in w for w in warnings))

    def test_bytes_name_the_file_and_unknown_bytes_are_named(self) -> None:
        """A JPEG in a cell named ``photo.png`` was written as .png (sent as image/png by URL),
        and bytes in no image format were exported as .png with no warning (DatBench warns)."""
        rows = sample_rows()[:2]
        jpeg = rows[0]["images_by_turn"][0][0]["bytes"]
        garbage = b"<html>404 Not Found</html>"
        rows[0]["images_by_turn"] = [[{"bytes": jpeg, "path": "photo.png"}]]
        rows[1]["images_by_turn"] = [[{"bytes": garbage, "path": "chart.png"}], []]
        run, _, warnings = self.export(self.dataset_dir(rows))
        tasks = read_jsonl(run.path(TASKS))
        self.assertEqual(tasks[0]["turns"][0]["images"], [f"images/{A}/turn_0_image_0.jpg"])
        self.assertEqual(tasks[1]["turns"][0]["images"], [f"images/{B}/turn_0_image_0.bin"])
        self.assertEqual((run.root / tasks[1]["turns"][0]["images"][0]).read_bytes(), garbage)
        unknown = [w for w in warnings if "no known image format" in w]
        self.assertEqual(len(unknown), 1, warnings)
        self.assertIn(B, unknown[0])
        self.assertNotIn(A, unknown[0])

    def test_cell_without_bytes_or_file_is_bad_input(self) -> None:
        from datbench_cli.benchmarks.vistoolbench.evaluator import VisToolBenchEvaluator

        rows = sample_rows()[:1]
        rows[0]["images_by_turn"] = [[{"bytes": None, "path": str(self.tmp / "gone.png")}]]
        # A ValueError to a library caller (as DatBench's rows), naming the argument.
        with self.assertRaisesRegex(
            ValueError, "^hf_dataset: task .*, turn 0, image 0: image cell has neither"
        ):
            VisToolBenchEvaluator(rows, warn=lambda _: None)

    def test_list_columns_that_are_not_lists_are_bad_input(self) -> None:
        # A string was read one character per turn (golden answers, rubrics), an int was a bare
        # TypeError ("object of type 'int' has no len()").
        from datbench_cli.benchmarks.vistoolbench.evaluator import VisToolBenchEvaluator

        for column, value, said in (
            ("turn_golden_answers", "the answer", "turn_golden_answers must be a list, got str"),
            ("rubrics_by_turn", 5, "rubrics_by_turn must be a list, got int"),
            ("images", 5, "images must be a list, got int"),
            ("images_by_turn", {"0": []}, "images_by_turn must be a list, got dict"),
            ("images_by_turn", [5], "turn 0: images_by_turn items must be lists"),
        ):
            with self.subTest(column=column, value=value):
                rows = sample_rows()[:1]
                rows[0][column] = value
                with self.assertRaisesRegex(ValueError, f"^hf_dataset: task .*{said}"):
                    VisToolBenchEvaluator(rows, warn=lambda _: None)


class ImageDirTests(unittest.TestCase):
    def test_unsafe_characters_and_dot_names(self) -> None:
        self.assertEqual(image_dir_name("a/b c:d"), "a_b_c_d")
        self.assertEqual(image_dir_name(".."), "__")
        self.assertEqual(image_dir_name("ok-1.x_y"), "ok-1.x_y")
        self.assertLessEqual(len(image_dir_name("x" * 500)), 120)

    def test_collision_gets_row_index(self) -> None:
        dirs = ImageDirs()

        def task(ident: str, row: int) -> Task:
            return Task(ident, "single-turn", 1, "c", "f", [], row_index=row)

        self.assertEqual(dirs.assign(task("a/b", 0)), "a_b")
        self.assertEqual(dirs.assign(task("a_b", 3)), "a_b_3")
        self.assertEqual(dirs.assign(task("A:B", 4)), "A_B_4")


class SampleDataTests(TempDirCase):
    def test_committed_sample_matches_its_generator(self) -> None:
        from tests.vtb_support import SAMPLE_DIR, generator

        fresh = self.tmp / "fresh"
        generator().main(fresh)
        for name in ("responses.jsonl", "judge_responses.jsonl"):
            self.assertEqual((fresh / name).read_bytes(), (SAMPLE_DIR / name).read_bytes())
        committed, _, _ = self.export(SAMPLE_DIR, "committed")
        regenerated, _, _ = self.export(fresh, "regenerated")
        got = {k: v for k, v in files_of(regenerated.root).items() if k != MANIFEST}
        want = {k: v for k, v in files_of(committed.root).items() if k != MANIFEST}
        self.assertEqual(got, want)
        size = sum(p.stat().st_size for p in SAMPLE_DIR.rglob("*") if p.is_file())
        self.assertLess(size, 500_000)


if __name__ == "__main__":
    unittest.main()
