"""``datbench compare`` on runs of the sample data of both benchmarks, checked against
independent computations from the two reports."""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
import unittest
from pathlib import Path
from typing import Any

import numpy as np

from tests.cli_helpers import run_cli
from tests.compare_support import read_jsonl, scored_run, write_jsonl


def _two_sided_binomial(b: int, c: int) -> float:
    """McNemar's exact p by hand: 2 * P(X <= min(b, c)), X ~ Binomial(b + c, 1/2), capped at 1."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


def _holm(pvalues: list[float]) -> list[float]:
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    out, running = [0.0] * len(pvalues), 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(pvalues) - rank) * pvalues[index]))
        out[index] = running
    return out


def _compare(*args: str) -> tuple[Any, dict[str, Any] | None]:
    result = run_cli("compare", *args, "--json")
    data = json.loads(result.stdout) if result.exit_code in (0, 1) and result.stdout else None
    return result, data


def _table(data: dict[str, Any], key: str) -> dict[str, Any]:
    return next(t for t in data["tables"] if t["key"] == key)


class DatBenchCompareTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.a = scored_run("datbench", cls.tmp / "a")
        cls.b = scored_run("datbench", cls.tmp / "b")
        responses = read_jsonl(cls.b / "responses.jsonl")
        for index, row in enumerate(responses):
            if index % 3 == 0:  # a third of the answers become wrong
                row["raw_output"] = "zzz"
                row.pop("parsed_answer", None)
        write_jsonl(cls.b / "responses.jsonl", responses)
        result = run_cli("score", "-d", str(cls.b), "-q", "--allow-missing")
        assert result.exit_code == 0, result.stderr

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_self_comparison_is_zero_and_passes_the_gate(self) -> None:
        # A copy of the run: one report on both sides is refused (see test_one_report_...).
        copy = self.tmp / "a-copy"
        shutil.copytree(self.a, copy, dirs_exist_ok=True)
        result, data = _compare(str(self.a), str(copy), "--fail-if-worse", "0")
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertFalse(data["gate"]["failed"])
        self.assertEqual(data["join"]["only_in_a"], 0)
        self.assertTrue(data["data"]["verified"] and data["data"]["same"])
        for table in data["tables"]:
            for row in table["rows"]:
                block = row["metrics"]["accuracy"]
                self.assertEqual(block["difference"], 0.0)
                self.assertEqual(block["ci95"], [0.0, 0.0])
                self.assertEqual(block["mcnemar"]["p"], 1.0)
                self.assertEqual(block["mcnemar"]["p_holm"], 1.0)
                self.assertEqual((block["mcnemar"]["b"], block["mcnemar"]["c"]), (0, 0))
                self.assertFalse(block["significant"])

    def test_one_report_on_both_sides_is_refused(self) -> None:
        # Compared with itself a run passed every --fail-if-worse gate: a CI job whose two
        # paths named one run said nothing.
        report = self.a / "report.json"
        for b in (self.a, report, self.tmp / "link"):
            if b.name == "link" and not b.exists():
                b.symlink_to(self.a)
            with self.subTest(b=b.name):
                result = run_cli("compare", str(self.a), str(b), "--fail-if-worse", "0")
                self.assertEqual(result.exit_code, 2, result.stderr)
                self.assertIn("are one report", result.stderr)
                self.assertIn("hint: name two runs", result.stderr)

    def test_numbers_match_an_independent_computation(self) -> None:
        result, data = _compare(str(self.a), str(self.b), "--resamples", "2000", "--seed", "3")
        self.assertEqual(result.exit_code, 0, result.stderr)
        report_a = json.loads((self.a / "report.json").read_text())["results"]
        report_b = {r["id"]: r for r in json.loads((self.b / "report.json").read_text())["results"]}
        by_capability: dict[str, list[tuple[dict, dict]]] = {}
        for entry in report_a:
            by_capability.setdefault(entry["metadata"]["capability"], []).append(
                (entry, report_b[entry["id"]])
            )
        table = _table(data, "capabilities")
        self.assertEqual([r["name"] for r in table["rows"]], list(by_capability))
        pvalues = []
        for row in table["rows"]:
            pairs = by_capability[row["name"]]
            block = row["metrics"]["accuracy"]
            acc_a = sum(a["score"] for a, _ in pairs) / len(pairs)
            acc_b = sum(b["score"] for _, b in pairs) / len(pairs)
            b = sum(1 for x, y in pairs if x["is_correct"] and not y["is_correct"])
            c = sum(1 for x, y in pairs if not x["is_correct"] and y["is_correct"])
            self.assertEqual(row["n"], len(pairs))
            self.assertAlmostEqual(block["a"], acc_a, places=12)
            self.assertAlmostEqual(block["b"], acc_b, places=12)
            self.assertAlmostEqual(block["difference"], acc_b - acc_a, places=12)
            self.assertEqual((block["mcnemar"]["b"], block["mcnemar"]["c"]), (b, c))
            self.assertEqual(block["flips"]["right_to_wrong"], b)
            self.assertEqual(block["flips"]["wrong_to_right"], c)
            self.assertAlmostEqual(block["mcnemar"]["p"], _two_sided_binomial(b, c), places=12)
            low, high = block["ci95"]
            self.assertLessEqual(low, block["difference"] + 1e-12)
            self.assertGreaterEqual(high, block["difference"] - 1e-12)
            pvalues.append(block["mcnemar"]["p"])
        for row, want in zip(table["rows"], _holm(pvalues), strict=True):
            self.assertAlmostEqual(row["metrics"]["accuracy"]["mcnemar"]["p_holm"], want, places=12)
        overall = _table(data, "overall")["rows"][0]["metrics"]["accuracy"]
        self.assertGreater(overall["mcnemar"]["b"], 10)
        self.assertTrue(overall["significant"])
        self.assertEqual(len(data["pairs"]), len(report_a))
        first = data["pairs"][0]
        self.assertEqual(first["id"], report_a[0]["id"])
        self.assertEqual(first["score_b"], report_b[first["id"]]["score"])

    def test_overall_interval_matches_a_naive_stratified_bootstrap(self) -> None:
        _, data = _compare(str(self.a), str(self.b), "--resamples", "20000")
        got = _table(data, "overall")["rows"][0]["metrics"]["accuracy"]["ci95"]
        pairs = data["pairs"]
        diffs = np.array([p["score_b"] - p["score_a"] for p in pairs])
        strata = np.array([p["dataset"] for p in pairs])
        groups = [np.flatnonzero(strata == s) for s in sorted(set(strata))]
        rng = np.random.default_rng(12345)
        means = np.array(
            [
                sum(diffs[rng.choice(g, size=len(g))].sum() for g in groups) / len(diffs)
                for _ in range(4000)
            ]
        )
        low, high = np.percentile(means, [2.5, 97.5])
        self.assertAlmostEqual(got[0], low, delta=0.012)
        self.assertAlmostEqual(got[1], high, delta=0.012)

    def test_reproducible_under_a_seed(self) -> None:
        first = run_cli("compare", str(self.a), str(self.b), "--json", "--resamples", "3000")
        second = run_cli("compare", str(self.a), str(self.b), "--json", "--resamples", "3000")
        self.assertEqual(first.stdout, second.stdout)
        other = run_cli(
            "compare", str(self.a), str(self.b), "--json", "--resamples", "3000", "--seed", "9"
        )
        self.assertNotEqual(first.stdout, other.stdout)

    def test_gate_fails_a_regression_and_prints_its_rule(self) -> None:
        result = run_cli("compare", str(self.a), str(self.b), "--fail-if-worse", "0.01")
        self.assertEqual(result.exit_code, 1)
        self.assertIn("gate (FAIL): fail when the upper bound", result.stderr)
        self.assertIn("per capability", result.stderr)
        self.assertIn("error: B is worse than A", result.stderr)
        better = run_cli("compare", str(self.b), str(self.a), "--fail-if-worse", "0.01")
        self.assertEqual(better.exit_code, 0, better.stderr)
        self.assertIn("gate (pass)", better.stderr)

    def test_a_margin_in_points_is_refused(self) -> None:
        """``--fail-if-worse 2`` (2 points meant) was a margin of 200 points: a gate that can
        never fail, passing a regression with exit 0. Like --fail-under, it takes a fraction."""
        for margin in ("2", "-0.01", "nan", "inf"):
            with self.subTest(margin=margin):
                result = run_cli("compare", str(self.a), str(self.b), "--fail-if-worse", margin)
                self.assertEqual(result.exit_code, 2, result.stderr)
                self.assertIn("error: --fail-if-worse takes a fraction in [0, 1]", result.stderr)
                self.assertNotIn("Traceback", result.stderr)

    def test_terminal_table_marks_significant_rows(self) -> None:
        result = run_cli("compare", str(self.a), str(self.b), "--resamples", "1000")
        self.assertEqual(result.exit_code, 0, result.stderr)
        overall = next(line for line in result.stdout.splitlines() if line.startswith("| overall"))
        self.assertIn("*", overall)
        self.assertIn("B vs A, per capability", result.stdout)
        self.assertIn("B vs A, per source dataset", result.stdout)

    def test_ids_in_one_run_only_are_counted_and_listed(self) -> None:
        c = scored_run("datbench", self.tmp / "c-missing")
        responses = read_jsonl(c / "responses.jsonl")
        dropped = [row["id"] for row in responses[:2]]
        write_jsonl(c / "responses.jsonl", responses[2:])
        self.assertEqual(run_cli("score", "-d", str(c), "-q", "--allow-missing").exit_code, 0)
        result, data = _compare(str(self.a), str(c), "--resamples", "500")
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(data["join"]["only_in_a"], 2)
        self.assertEqual(data["join"]["only_in_a_ids"], dropped)
        self.assertEqual(data["join"]["only_in_b"], 0)
        self.assertEqual(data["join"]["paired"], data["a"]["samples"] - 2)
        plain = run_cli("compare", str(self.a), str(c), "--resamples", "500")
        self.assertIn(f"2 only in A (not compared): {dropped[0]}, {dropped[1]}", plain.stderr)

    def test_different_exports_are_refused(self) -> None:
        c = scored_run("datbench", self.tmp / "c-other-export")
        manifest = json.loads((c / "datbench.json").read_text())
        manifest["files"]["references.jsonl"]["sha256"] = "0" * 64
        (c / "datbench.json").write_text(json.dumps(manifest))
        result = run_cli("compare", str(self.a), str(c))
        self.assertEqual(result.exit_code, 2)
        self.assertIn("not scored on the same export: references_sha256 differs", result.stderr)
        self.assertIn("--allow-different-data", result.stderr)
        allowed, data = _compare(
            str(self.a), str(c), "--allow-different-data", "--resamples", "200"
        )
        self.assertEqual(allowed.exit_code, 0, allowed.stderr)
        self.assertFalse(data["data"]["same"])
        self.assertTrue(data["data"]["allowed_different_data"])

    def test_a_different_revision_is_refused(self) -> None:
        c = scored_run("datbench", self.tmp / "c-other-revision")
        d = scored_run("datbench", self.tmp / "d-other-revision")
        for run, resolved in ((c, "aaaa"), (d, "bbbb")):
            manifest = json.loads((run / "datbench.json").read_text())
            manifest["revision"] = {"requested": "main", "resolved": resolved}
            (run / "datbench.json").write_text(json.dumps(manifest))
        result = run_cli("compare", str(c), str(d))
        self.assertEqual(result.exit_code, 2)
        self.assertIn("revision differs (aaaa vs bbbb)", result.stderr)

    def test_provenance_blocks_of_report_files_are_checked(self) -> None:
        loose = self.tmp / "provenance"
        loose.mkdir(exist_ok=True)
        report = json.loads((self.a / "report.json").read_text())
        for name, revision in (("a.json", "r1"), ("b.json", "r1"), ("c.json", "r2")):
            report["provenance"] = {"dataset": {"revision": "main", "resolved_revision": revision}}
            (loose / name).write_text(json.dumps(report))
        same, data = _compare(str(loose / "a.json"), str(loose / "b.json"), "--resamples", "100")
        self.assertEqual(same.exit_code, 0, same.stderr)
        self.assertTrue(data["data"]["verified"])
        other = run_cli("compare", str(loose / "a.json"), str(loose / "c.json"))
        self.assertEqual(other.exit_code, 2)
        self.assertIn("revision differs (r1 vs r2)", other.stderr)

    def test_report_files_of_different_exports_are_refused(self) -> None:
        # Copied out of their run directories (no manifest beside them): the references
        # digest score recorded in provenance.inputs still tells the exports apart, even when
        # the dataset revision (the same source folder) is the same.
        loose = self.tmp / "loose-exports"
        loose.mkdir(exist_ok=True)
        report = json.loads((self.a / "report.json").read_text(encoding="utf-8"))
        (loose / "a.json").write_text(json.dumps(report), encoding="utf-8")
        report["provenance"]["inputs"]["references"]["sha256"] = "0" * 64
        (loose / "c.json").write_text(json.dumps(report), encoding="utf-8")
        result = run_cli("compare", str(loose / "a.json"), str(loose / "c.json"))
        self.assertEqual(result.exit_code, 2, result.stderr)
        self.assertIn("references_sha256 differs", result.stderr)
        same = run_cli("compare", str(self.a), str(loose / "a.json"), "--resamples", "100")
        self.assertEqual(same.exit_code, 0, same.stderr)

    def test_a_changed_reference_is_refused_even_between_report_files(self) -> None:
        report = json.loads((self.a / "report.json").read_text())
        report["results"][5]["ground_truth"] = "something else"
        loose = self.tmp / "loose"
        loose.mkdir(exist_ok=True)
        (loose / "edited.json").write_text(json.dumps(report))
        result = run_cli("compare", str(self.a / "report.json"), str(loose / "edited.json"))
        self.assertEqual(result.exit_code, 2)
        self.assertIn(report["results"][5]["id"], result.stderr)
        self.assertIn("differ in their reference answer", result.stderr)

    def test_report_files_work_and_say_when_unverified(self) -> None:
        loose = self.tmp / "loose-copy"
        loose.mkdir(exist_ok=True)
        # A report file with no provenance (an older report, or one edited by hand).
        report = json.loads((self.b / "report.json").read_text(encoding="utf-8"))
        report.pop("provenance", None)
        (loose / "b.json").write_text(json.dumps(report), encoding="utf-8")
        result, data = _compare(str(self.a / "report.json"), str(loose / "b.json"))
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertFalse(data["data"]["verified"])
        text = run_cli("compare", str(self.a / "report.json"), str(loose / "b.json"))
        self.assertIn("could not verify that both runs used the same export", text.stderr)

    def test_a_run_without_judge_verdicts_is_named(self) -> None:
        # Run C: the same answers, no judge verdicts (a partial run): its judge-mode samples
        # score 0, and the comparison says why B lost them instead of only starring the row.
        c = scored_run("datbench", self.tmp / "c-no-judge")
        (c / "judge_responses.jsonl").unlink()
        assert run_cli("score", "-d", str(c), "-q", "--allow-missing").exit_code == 0
        missing = json.loads((c / "report.json").read_text())["summary"]["judge_samples"]
        result, data = _compare(str(self.a), str(c), "--resamples", "200")
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertTrue(any(f"{missing} judge missing" in w for w in data["b"]["warnings"]))
        text = run_cli("compare", str(self.a), str(c), "--resamples", "200")
        self.assertIn("B's report: ", text.stderr)
        self.assertIn(f"{missing} judge missing", text.stderr)

    def test_out_writes_the_json(self) -> None:
        target = self.tmp / "comparison.json"
        result = run_cli("compare", str(self.a), str(self.b), "-o", str(target), "-q")
        self.assertEqual(result.exit_code, 0, result.stderr)
        data = json.loads(target.read_text())
        self.assertEqual(data["benchmark"], "datbench")
        self.assertEqual(data["settings"]["resamples"], 10000)

    def test_bad_inputs(self) -> None:
        bad = self.tmp / "bad"
        bad.mkdir(exist_ok=True)
        (bad / "not-a-report.json").write_text('{"summary": {}}')
        (bad / "broken.json").write_text("{")
        report = json.loads((self.a / "report.json").read_text())
        report["results"].append(report["results"][0])
        (bad / "dupes.json").write_text(json.dumps(report))
        report["results"][0] = {"id": "x", "score": "high", "is_correct": True, "metadata": {}}
        (bad / "score.json").write_text(json.dumps(report))
        cases = {
            "not-a-report.json": "not a datbench report",
            "broken.json": "not valid JSON",
            "dupes.json": "more than once",
            "score.json": 'results[0] (x) has no finite number "score"',
        }
        for name, message in cases.items():
            with self.subTest(name=name):
                result = run_cli("compare", str(self.a), str(bad / name))
                self.assertEqual(result.exit_code, 2)
                self.assertIn(message, result.stderr)
                self.assertNotIn("Traceback", result.stderr)
        empty = self.tmp / "empty-dir"
        empty.mkdir(exist_ok=True)
        result = run_cli("compare", str(self.a), str(empty))
        self.assertEqual(result.exit_code, 2)
        self.assertIn("no report.json in this run directory", result.stderr)

    def test_mixed_benchmarks_refused(self) -> None:
        vtb = scored_run("vistoolbench", self.tmp / "vtb-mixed")
        result = run_cli("compare", str(self.a), str(vtb))
        self.assertEqual(result.exit_code, 2)
        self.assertIn("cannot compare a datbench run with a vistoolbench run", result.stderr)

    def test_untrusted_names_are_printed_as_text(self) -> None:
        report = json.loads((self.a / "report.json").read_text())
        for entry in report["results"][:3]:
            entry["metadata"]["dataset"] = "[bold red]evil\x1b[31m"
        loose = self.tmp / "evil"
        loose.mkdir(exist_ok=True)
        (loose / "a.json").write_text(json.dumps(report))
        (loose / "b.json").write_text(json.dumps(report))
        result = run_cli("compare", str(loose / "a.json"), str(loose / "b.json"))
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertNotIn("\x1b", result.stdout)
        self.assertIn("[bold red]evil\\x1b[31m", result.stdout)


class VisToolBenchCompareTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.a = scored_run("vistoolbench", cls.tmp / "a")
        cls.b = scored_run("vistoolbench", cls.tmp / "b")
        judges = read_jsonl(cls.b / "judge_responses.jsonl")
        for row in judges:  # every verdict of the first task becomes "Not Met"
            if row.get("id", "").startswith("vtb-a-medical-001"):
                for key in list(row):
                    if key not in ("id", "custom_id"):
                        row.pop(key)
                row["raw_judge_output"] = '{"judge_result": "Not Met"}'
        write_jsonl(cls.b / "judge_responses.jsonl", judges)
        result = run_cli("score", "-d", str(cls.b), "-q", "--allow-missing")
        assert result.exit_code == 0, result.stderr

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_self_comparison(self) -> None:
        copy = self.tmp / "a-copy"
        shutil.copytree(self.a, copy, dirs_exist_ok=True)
        result, data = _compare(str(self.a), str(copy), "--fail-if-worse", "0")
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(
            [t["key"] for t in data["tables"]],
            ["overall", "by_turncase", "by_domain", "by_eval_focus"],
        )
        for table in data["tables"]:
            for row in table["rows"]:
                self.assertEqual(row["metrics"]["ars"]["difference"], 0.0)
                self.assertEqual(row["metrics"]["apr"]["mcnemar"]["p"], 1.0)
                self.assertNotIn("mcnemar", row["metrics"]["ars"])

    def test_changed_verdicts(self) -> None:
        result, data = _compare(str(self.a), str(self.b), "--resamples", "2000")
        self.assertEqual(result.exit_code, 0, result.stderr)
        results_a = json.loads((self.a / "report.json").read_text())["results"]
        results_b = {
            r["id"]: r for r in json.loads((self.b / "report.json").read_text())["results"]
        }
        row = _table(data, "overall")["rows"][0]
        ars = row["metrics"]["ars"]
        want = sum(results_b[r["id"]]["ars"] - r["ars"] for r in results_a) / len(results_a)
        self.assertAlmostEqual(ars["difference"], want, places=12)
        self.assertLess(ars["difference"], 0)
        apr = row["metrics"]["apr"]
        b = sum(1 for r in results_a if r["apr"] == 1 and results_b[r["id"]]["apr"] == 0)
        c = sum(1 for r in results_a if r["apr"] == 0 and results_b[r["id"]]["apr"] == 1)
        self.assertEqual((apr["mcnemar"]["b"], apr["mcnemar"]["c"]), (b, c))
        self.assertEqual(b, 1)
        self.assertAlmostEqual(apr["mcnemar"]["p"], _two_sided_binomial(b, c), places=12)
        pair = next(p for p in data["pairs"] if p["id"] == "vtb-a-medical-001")
        self.assertEqual((pair["apr_a"], pair["apr_b"]), (1, 0))
        self.assertEqual(pair["ars_b"], 0.0)

    def test_a_judge_file_rewritten_after_scoring_is_named(self) -> None:
        # The report's numbers are no longer those of the run's files: compare and the
        # leaderboard say which file changed (a file touched but not changed is not named).
        stale = self.tmp / "stale"
        shutil.copytree(self.b, stale)
        scored = run_cli("score", "-d", str(stale), "-q", "--allow-missing")
        self.assertEqual(scored.exit_code, 0, scored.stderr)
        report = stale / "report.json"
        later = report.stat().st_mtime_ns + 10**9
        judges = stale / "judge_responses.jsonl"
        os.utime(stale / "responses.jsonl", ns=(later, later))  # touched, same bytes
        write_jsonl(judges, read_jsonl(self.a / "judge_responses.jsonl"))
        os.utime(judges, ns=(later, later))
        result, data = _compare(str(self.a), str(stale))
        self.assertEqual(result.exit_code, 0, result.stderr)
        named = [w for w in data["b"]["warnings"] if "changed after this report" in w]
        self.assertEqual(len(named), 1, data["b"]["warnings"])
        self.assertIn("judge_responses.jsonl", named[0])
        self.assertFalse(any("changed after" in w for w in data["a"]["warnings"]))
        board = run_cli("leaderboard", str(self.a), str(stale))
        self.assertEqual(board.exit_code, 0, board.stderr)
        self.assertIn("judge_responses.jsonl changed after this report", board.stderr)

    def test_one_changed_task_is_not_significant(self) -> None:
        # One task's ARS fell: its one-task rows have a bootstrap interval of that single
        # difference (it excludes 0), which is no evidence; the exact sign test says so.
        result, data = _compare(str(self.a), str(self.b), "--resamples", "500")
        self.assertEqual(result.exit_code, 0, result.stderr)
        for table in data["tables"]:
            for row in table["rows"]:
                ars = row["metrics"]["ars"]
                test = ars["sign_test"]
                self.assertAlmostEqual(test["p"], _two_sided_binomial(test["b"], test["c"]))
                self.assertFalse(ars["significant"], (table["key"], row["name"]))
        focus = _table(data, "by_domain")["rows"]
        row = next(r for r in focus if r["name"] == "medical")
        self.assertEqual(row["n"], 1)
        medical = row["metrics"]["ars"]
        self.assertLess(medical["ci95"][1], 0)  # the degenerate interval excludes 0
        self.assertEqual((medical["sign_test"]["b"], medical["sign_test"]["c"]), (1, 0))


if __name__ == "__main__":
    unittest.main()
