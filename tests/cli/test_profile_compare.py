"""Two reports of one run scored with the two profiles: `compare` accepts them, names both
profiles, says the responses are the same, and shows what the corrections move; the README's
table is what compare gives now; VisualToolBench accepts --profile and says nothing changes."""

from __future__ import annotations

import importlib.util
import json
import shutil
import tempfile
import unittest
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.cli_helpers import ROOT, run_cli
from tests.compare_support import read_jsonl, scored_run, write_jsonl


def _script() -> ModuleType:
    path = ROOT / "scripts" / "corrections_table.py"
    spec = importlib.util.spec_from_file_location("corrections_table", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _score(run: Path, *args: str) -> Any:
    return run_cli("score", "-d", str(run), "-q", "--allow-missing", *args)


def _row(data: dict[str, Any], table: str, name: str) -> dict[str, Any]:
    rows = next(t for t in data["tables"] if t["key"] == table)["rows"]
    block: dict[str, Any] = next(r for r in rows if r["name"] == name)["metrics"]["accuracy"]
    return block


class DatBenchProfilesCompareTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.run_dir = scored_run("datbench", cls.tmp / "run")
        for profile in ("reference", "corrected"):
            result = _score(
                cls.run_dir, "--profile", profile, "-o", str(cls.run_dir / f"{profile}.json")
            )
            assert result.exit_code == 0, result.stderr

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def compare(self, a: str, b: str, *args: str) -> tuple[Any, dict[str, Any]]:
        result = run_cli("compare", str(self.run_dir / a), str(self.run_dir / b), *args)
        self.assertEqual(result.exit_code, 0, result.stderr)
        return result, json.loads(
            run_cli("compare", str(self.run_dir / a), str(self.run_dir / b), "--json").stdout
        )

    def test_the_two_profiles_compare_and_are_named(self) -> None:
        result, data = self.compare("reference.json", "corrected.json")
        self.assertIn("(reference profile)", result.stderr)
        self.assertIn("(corrected profile)", result.stderr)
        self.assertIn("is what the corrections change", result.stderr)
        self.assertEqual(
            data["profiles"],
            {"a": "reference", "b": "corrected", "same": False, "same_inputs": True},
        )
        self.assertEqual((data["a"]["profile"], data["b"]["profile"]), ("reference", "corrected"))
        self.assertTrue(data["data"]["same"])
        # What the sample data's fixes move: ai2d's four letter answers, one InfoVQA answer.
        ai2d = _row(data, "datasets", "ai2d")
        self.assertEqual((ai2d["mcnemar"]["b"], ai2d["mcnemar"]["c"]), (0, 4))
        self.assertAlmostEqual(_row(data, "capabilities", "table")["difference"], 4 / 6)
        self.assertAlmostEqual(_row(data, "datasets", "infovqa")["difference"], 0.25)
        self.assertEqual(_row(data, "datasets", "docvqa")["difference"], 0.0)
        reference = json.loads((self.run_dir / "reference.json").read_text(encoding="utf-8"))
        corrected = json.loads((self.run_dir / "corrected.json").read_text(encoding="utf-8"))
        overall = _row(data, "overall", "overall")
        self.assertGreater(corrected["summary"]["overall_accuracy"], 0)
        self.assertAlmostEqual(overall["a"], sum(r["score"] for r in reference["results"]) / 152)
        self.assertAlmostEqual(overall["b"], sum(r["score"] for r in corrected["results"]) / 152)

    def test_one_profile_says_nothing_about_profiles(self) -> None:
        result, data = self.compare("reference.json", "report.json")
        self.assertEqual(data["profiles"]["same"], True)
        self.assertNotIn("corrections", result.stderr)
        self.assertEqual(_row(data, "overall", "overall")["difference"], 0.0)

    def test_other_responses_and_another_profile_are_flagged(self) -> None:
        other = scored_run("datbench", self.tmp / "other")
        responses = read_jsonl(other / "responses.jsonl")
        responses[0]["raw_output"] = "zzz"
        write_jsonl(other / "responses.jsonl", responses)
        self.assertEqual(_score(other, "--profile", "corrected").exit_code, 0)
        result = run_cli("compare", str(self.run_dir / "reference.json"), str(other))
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertIn("differences mix the corrections", result.stderr)


class ReadmeCorrectionsTableTest(unittest.TestCase):
    def test_the_readme_table_is_what_compare_gives_now(self) -> None:
        script = _script()
        readme = (ROOT / "docs" / "exactness.md").read_text(encoding="utf-8")
        table = script.current_table()
        self.assertEqual(script.readme_table(readme), table)
        self.assertIn(
            "| `ai2d` | 6 | 33.3 | 100.0 | +66.7 | 4 / 0 | `ai2d-letter-answer` 4 |", table
        )


class VisToolBenchProfileTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.run_dir = scored_run("vistoolbench", self.tmp / "run")
        self.default = (self.run_dir / "report.json").read_bytes()

    def test_reference_is_byte_identical_to_no_flag(self) -> None:
        self.assertEqual(_score(self.run_dir).exit_code, 0)
        default = (self.run_dir / "report.json").read_bytes()
        self.assertEqual(_score(self.run_dir, "--profile", "reference").exit_code, 0)
        self.assertEqual((self.run_dir / "report.json").read_bytes(), default)

    def test_corrected_is_accepted_changes_nothing_and_says_so(self) -> None:
        self.assertEqual(_score(self.run_dir).exit_code, 0)
        reference = json.loads((self.run_dir / "report.json").read_text(encoding="utf-8"))
        result = run_cli(
            "score", "-d", str(self.run_dir), "--allow-missing", "--profile", "corrected"
        )
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertIn("no known reference defects", result.stderr)
        corrected = json.loads((self.run_dir / "report.json").read_text(encoding="utf-8"))
        self.assertEqual(corrected["summary"]["profile"], "corrected")
        self.assertEqual(corrected["summary"]["corrections"], {})
        self.assertEqual(corrected["provenance"]["options"]["profile"], "corrected")
        self.assertEqual(corrected["results"], reference["results"])
        rest = {
            k: v for k, v in corrected["summary"].items() if k not in ("profile", "corrections")
        }
        self.assertEqual(rest, reference["summary"])

    def test_an_unknown_profile_is_a_usage_error(self) -> None:
        result = _score(self.run_dir, "--profile", "fixed")
        self.assertEqual(result.exit_code, 2)
        self.assertIn("--profile must be reference or corrected", result.stderr)


if __name__ == "__main__":
    unittest.main()
