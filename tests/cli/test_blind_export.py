"""``export-tasks --no-image`` (blind runs) for both benchmarks, and the vision delta as a
comparison of a blind run with a normal one."""

from __future__ import annotations

import json
import shutil
import tempfile
import unittest
from pathlib import Path

from tests.cli_helpers import SAMPLE, run_cli
from tests.compare_support import read_jsonl, scored_run
from tests.vtb_support import SAMPLE_DIR, SAMPLE_JUDGE, SAMPLE_RESPONSES


def _requests(run: Path) -> list[dict]:
    return [
        row
        for part in sorted((run / "requests").glob("tasks.openai.*.jsonl"))
        for row in read_jsonl(part)
    ]


class BlindExportTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())

    def tearDown(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _export(self, target: str, source: Path, run: Path) -> None:
        result = run_cli(
            "export-tasks",
            target,
            "--source",
            str(source),
            "-d",
            str(run),
            "--no-image",
            "--format",
            "openai",
            "--model",
            "m",
        )
        self.assertEqual(result.exit_code, 0, result.stderr)

    def test_datbench_blind_run(self) -> None:
        blind = self.tmp / "blind"
        self._export("all", SAMPLE, blind)
        normal = scored_run("datbench", self.tmp / "normal")
        tasks = read_jsonl(blind / "tasks.jsonl")
        self.assertEqual(len(tasks), len(read_jsonl(normal / "tasks.jsonl")))
        self.assertTrue(all(task["image"] is None for task in tasks))
        self.assertEqual([p for p in (blind / "images").rglob("*") if p.is_file()], [])
        requests = _requests(blind)
        self.assertEqual(len(requests), len(tasks))
        for request in requests:
            parts = request["body"]["messages"][-1]["content"]
            self.assertEqual([part["type"] for part in parts], ["text"])
        self.assertEqual(
            (blind / "references.jsonl").read_bytes(), (normal / "references.jsonl").read_bytes()
        )
        manifest = json.loads((blind / "datbench.json").read_text())
        self.assertIs(manifest["options"]["no_image"], True)
        self.assertEqual(manifest["counts"]["images"], 0)
        self.assertNotIn("no_image", json.loads((normal / "datbench.json").read_text())["options"])

        # The vision delta: the blind run's answers compared with the normal run's.
        responses = read_jsonl(SAMPLE / "responses.jsonl")
        for row in responses[::2]:
            row["raw_output"] = "no idea"
            row.pop("parsed_answer", None)
        (blind / "responses.jsonl").write_text("".join(json.dumps(r) + "\n" for r in responses))
        shutil.copy(SAMPLE / "judge_responses.jsonl", blind / "judge_responses.jsonl")
        self.assertEqual(run_cli("score", "-d", str(blind), "-q", "--allow-missing").exit_code, 0)
        result = run_cli("compare", str(blind), str(normal), "--json", "--resamples", "500")
        self.assertEqual(result.exit_code, 0, result.stderr)
        data = json.loads(result.stdout)
        self.assertTrue(data["data"]["verified"] and data["data"]["same"])
        overall = data["tables"][0]["rows"][0]["metrics"]["accuracy"]
        self.assertGreater(overall["difference"], 0)

    def test_vistoolbench_blind_run(self) -> None:
        blind = self.tmp / "vtb-blind"
        self._export("vistoolbench", SAMPLE_DIR, blind)
        normal = scored_run("vistoolbench", self.tmp / "vtb-normal")
        tasks = read_jsonl(blind / "tasks.jsonl")
        self.assertTrue(tasks)
        self.assertTrue(all(turn["images"] == [] for task in tasks for turn in task["turns"]))
        self.assertFalse((blind / "images").exists() and any((blind / "images").rglob("*.*")))
        for request in _requests(blind):
            parts = request["body"]["messages"][-1]["content"]
            self.assertEqual([part["type"] for part in parts], ["text"])
        self.assertEqual(
            (blind / "references.jsonl").read_bytes(), (normal / "references.jsonl").read_bytes()
        )
        manifest = json.loads((blind / "datbench.json").read_text())
        self.assertIs(manifest["options"]["no_image"], True)
        shutil.copy(SAMPLE_RESPONSES, blind / "responses.jsonl")
        shutil.copy(SAMPLE_JUDGE, blind / "judge_responses.jsonl")
        self.assertEqual(run_cli("score", "-d", str(blind), "-q", "--allow-missing").exit_code, 0)
        result = run_cli("compare", str(blind), str(normal), "--json", "--resamples", "200")
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertTrue(json.loads(result.stdout)["data"]["same"])


if __name__ == "__main__":
    unittest.main()
