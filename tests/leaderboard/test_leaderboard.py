"""``datbench leaderboard`` on synthetic runs of known differences: identical runs share a
letter, a run 30 answers worse on 150 samples ranks below and shares none, incomparable runs
are refused (and accepted with the flag, then marked), ``--trend``, both benchmarks, the
outputs (JSON shape, tidy CSV, markdown off a terminal), and outputs never onto an input."""

from __future__ import annotations

import csv
import itertools
import json
import re
import shutil
import tempfile
import unittest
from pathlib import Path
from typing import Any

from datbench_cli.leaderboard.letters import compact_letters
from datbench_cli.leaderboard.runs import label_number, split_label
from datbench_cli.metrics.averaging import float_sum
from tests.cli_helpers import run_cli
from tests.leaderboard.support import datbench_report, flipped, vistoolbench_report

BASE = [i % 9 not in (0, 4, 8) for i in range(150)]  # 100 of 150 right, 2/3 per capability


def board(*args: str) -> dict[str, Any]:
    result = run_cli("leaderboard", *args, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


class LettersTest(unittest.TestCase):
    def test_piepho_examples(self) -> None:
        self.assertEqual(compact_letters(3, []), ["a", "a", "a"])
        self.assertEqual(compact_letters(3, [(0, 2)]), ["a", "ab", "b"])
        self.assertEqual(compact_letters(3, [(0, 1), (1, 2), (0, 2)]), ["a", "b", "c"])
        self.assertEqual(compact_letters(4, [(0, 3), (1, 3)]), ["a", "a", "ab", "b"])
        self.assertEqual(compact_letters(0, []), [])

    def test_letters_say_exactly_the_differences(self) -> None:
        # every pair shares a letter if and only if it is not significantly different
        import itertools
        import random

        rng = random.Random(5)
        for _ in range(200):
            count = rng.randint(2, 7)
            pairs = [p for p in itertools.combinations(range(count), 2) if rng.random() < 0.4]
            letters = compact_letters(count, pairs)
            for i, j in itertools.combinations(range(count), 2):
                share = bool(set(letters[i]) & set(letters[j]))
                self.assertEqual(share, (i, j) not in pairs, (count, pairs, letters))

    def test_past_52_letters_groups_are_numbered(self) -> None:
        # 54 runs that all differ need 54 letters: a ValueError, "internal error" (exit 3).
        letters = compact_letters(54, list(itertools.combinations(range(54), 2)))
        self.assertEqual(letters[:3], ["1", "2", "3"])
        self.assertEqual(letters[-1], "54")
        pairs = [p for p in itertools.combinations(range(55), 2) if p not in ((0, 1), (7, 9))]
        groups = [set(g.split(",")) for g in compact_letters(55, pairs)]
        for i, j in itertools.combinations(range(55), 2):
            self.assertEqual(bool(groups[i] & groups[j]), (i, j) not in pairs, (i, j))

    def test_labels(self) -> None:
        self.assertEqual(
            split_label("step1000=runs/ckpt-1000"), ("step1000", Path("runs/ckpt-1000"))
        )
        self.assertEqual(split_label("runs/a=b"), (None, Path("runs/a=b")))
        self.assertEqual(label_number("step1000"), 1000.0)
        self.assertEqual(label_number("ckpt-2.5"), 2.5)
        self.assertIsNone(label_number("final"))


class PlotTest(unittest.TestCase):
    """A capability without samples (``-`` in the table) is no point on the page's plots: it
    was drawn at 0%, like a real score of 0."""

    @staticmethod
    def _board(second: float | None) -> dict[str, Any]:
        def entry(score: float | None) -> dict[str, Any]:
            if score is None:
                return {"score": None, "low": None, "high": None, "n": 0}
            return {"score": score, "low": score - 0.1, "high": score + 0.1, "n": 10}

        runs = [
            {
                "label": f"step{step}",
                "step": float(step),
                "group": "a",
                "better_than_every_earlier": False,
                "overall": entry(0.5),
                "capabilities": {"chart": entry(0.5 if step == 1 else second)},
            }
            for step in (1, 2)
        ]
        return {
            "headline": {"label": "accuracy"},
            "groups": ["chart"],
            "runs": runs,
            "trend": {"axis": [{"label": r["label"], "step": r["step"]} for r in runs]},
        }

    def test_no_score_is_no_point(self) -> None:
        from datbench_cli.leaderboard.page import groups_plot, trend_plot

        for plot in (groups_plot, trend_plot):
            scored = plot(self._board(0.4)).count("<use")
            unscored = plot(self._board(None)).count("<use")
            self.assertLess(unscored, scored, plot.__name__)


class RenderTest(unittest.TestCase):
    """On a terminal: per-group columns go (last first) before anything would be cut, and a
    line says so; a table that cannot fit is printed whole rather than cut."""

    def test_terminal_drops_group_columns_first(self) -> None:
        from datbench_cli.cli.summary_table import text_table
        from datbench_cli.cli.tables import render
        from datbench_cli.leaderboard.outputs import table

        folder = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, folder, True)
        a = datbench_report(folder / "a.json", BASE)
        b = datbench_report(folder / "b.json", BASE)
        data = board(f"model-a={a}", f"model-b={b}")
        summary = text_table(table(data))
        wide = render(summary, 200, terminal=True).lines
        self.assertIn("chart", wide[0])
        narrow = render(summary, 60, terminal=True).lines
        self.assertTrue(all(len(line) <= 60 for line in narrow))
        self.assertIn("66.7 [58.4, 74.0]", "\n".join(narrow))
        self.assertNotIn("chart", narrow[0])
        tiny = "\n".join(render(summary, 10, terminal=True).lines)
        for number in ("66.7", "[58.4,", "74.0]"):  # nothing cut, stacked (broken at spaces)
            self.assertRegex(tiny, rf"(?m)^ *{re.escape(number)}( |$)")


class LeaderboardTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())

    def tearDown(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def report(self, name: str, correct: list[bool], **kwargs: Any) -> str:
        return str(datbench_report(self.tmp / name / "report.json", correct, **kwargs))

    def scored(self, name: str, scores: list[float]) -> str:
        """A report whose results have these partial-credit ``scores`` (correct from 0.5)."""
        path = Path(self.report(name, [v >= 0.5 for v in scores]))
        report = json.loads(path.read_text())
        for entry, value in zip(report["results"], scores, strict=True):
            entry["score"] = value
        path.write_text(json.dumps(report))
        return str(path)

    def test_identical_share_a_letter_worse_shares_none(self) -> None:
        a = self.report("a", BASE, model="model-a")
        b = self.report("b", BASE, model="model-b")
        worse = self.report("worse", flipped(BASE, 30, False))
        data = board(a, b, f"worse={worse}")
        runs = {r["label"]: r for r in data["runs"]}
        self.assertEqual(set(runs), {"model-a", "model-b", "worse"})  # labels: model, given
        self.assertTrue(data["paired"])
        self.assertIn("McNemar", data["test"])
        self.assertEqual(runs["model-a"]["group"], runs["model-b"]["group"])
        self.assertEqual(runs["model-a"]["rank"], 1)
        self.assertEqual(runs["model-b"]["rank"], 1)
        self.assertEqual(runs["worse"]["rank"], 3)
        self.assertEqual(data["runs"][-1]["label"], "worse")
        self.assertFalse(set(runs["worse"]["group"]) & set(runs["model-a"]["group"]))
        for run in data["runs"]:
            for entry in [run["overall"], *run["capabilities"].values()]:
                self.assertTrue(0 <= entry["low"] <= entry["score"] <= entry["high"] <= 1)
        self.assertAlmostEqual(runs["worse"]["overall"]["score"], 70 / 150)
        self.assertEqual(set(runs["worse"]["capabilities"]), {"chart", "math", "spatial"})

    def test_small_difference_is_not_significant(self) -> None:
        a = self.report("a", BASE)
        b = self.report("b", flipped(BASE, 2, False))
        data = board(a, b)
        self.assertEqual([r["group"] for r in data["runs"]], ["a", "a"])
        self.assertEqual([r["rank"] for r in data["runs"]], [1, 2])

    def test_equal_report_scores_share_a_rank(self) -> None:
        # Two runs whose reports hold the very same accuracy (summed left to right, as every
        # report sums): numpy's pairwise mean told them apart in the last bit and ranked them
        # 1 and 2, with scores that differed from the reports' own.
        scores = [0.24, 0.54, 0.37, 0.6, 0.63, 0.07, 0.01, 0.84, 0.26, 0.23, 1.0, 0.47]
        scores += [0.84, 0.48, 0.64, 0.15, 0.63, 0.87, 0.52, 0.74, 0.67, 0.06, 0.76, 0.59]
        swapped = list(scores)
        swapped[1], swapped[22] = swapped[22], swapped[1]
        paths = [self.scored("a", scores), self.scored("b", swapped)]
        mean = float_sum(scores) / len(scores)  # the report's own number
        self.assertEqual(float_sum(swapped) / len(swapped), mean)
        data = board(*paths)
        self.assertEqual([r["rank"] for r in data["runs"]], [1, 1])
        self.assertEqual([r["overall"]["score"] for r in data["runs"]], [mean, mean])

    def test_the_same_scores_in_another_order_share_a_rank(self) -> None:
        # The same 152 partial credits on other samples (or the results in another order):
        # summed left to right, the means differ in the last bit, and the runs, both shown as
        # 70.9, were ranked 1 and 2.
        values = [((i * 37) % 101) / 100 for i in range(152)]
        moved = values[5:] + values[:5]
        self.assertNotEqual(float_sum(values) / 152, float_sum(moved) / 152)
        paths = [self.scored("a", values), self.scored("b", moved)]
        data = board(*paths)
        self.assertEqual([r["rank"] for r in data["runs"]], [1, 1])

    def test_a_run_without_results_is_refused(self) -> None:
        # A report whose results are empty (its summary saying so) was ranked 2 in group "a",
        # as if it were a run not significantly worse than the first.
        a = self.report("a", BASE)
        empty = datbench_report(self.tmp / "empty" / "report.json", [True])
        report = json.loads(empty.read_text())
        report["results"] = []
        report["summary"].update(total_samples=0, total_correct=0, overall_accuracy=0.0)
        empty.write_text(json.dumps(report))
        vtb = vistoolbench_report(self.tmp / "vtb-empty.json", [])
        vtb_a = vistoolbench_report(self.tmp / "vtb-a.json", [True, False])
        for first, second, where in ((a, empty, empty), (str(vtb), str(vtb_a), vtb)):
            result = run_cli("leaderboard", str(first), str(second), "--allow-different-data")
            self.assertEqual(result.exit_code, 2, result.stdout)
            lines = result.stderr.splitlines()
            self.assertEqual(
                lines[0], f"error: {where}: the report holds no scored result: nothing to rank"
            )
            self.assertEqual(len(lines), 2)
            self.assertTrue(lines[1].startswith("hint: "))
            self.assertEqual(result.stdout, "")

    def test_censoring_counts_that_are_no_counts_are_said_so(self) -> None:
        # An edited summary's censoring said "-3 censored (no reason recorded)" as it stood.
        a = self.report("a", BASE)
        b = Path(self.report("b", BASE))
        report = json.loads(b.read_text())
        report["summary"]["censoring"] = {"overall": {"censored": -3, "empty": "2", "refused": 1}}
        b.write_text(json.dumps(report))
        result = run_cli("leaderboard", f"a={a}", f"b={b}")
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertIn(
            "b: censoring counts that are no counts (an edited report?): censored -3, empty '2'",
            result.stderr,
        )
        self.assertNotIn("-3 censored", result.stderr)
        report["summary"]["censoring"] = {"overall": {"censored": 1, "empty": 0, "refused": 1}}
        b.write_text(json.dumps(report))
        self.assertIn("b: 1 censored (1 refused)", run_cli("leaderboard", a, str(b)).stderr)

    def test_an_ars_outside_0_1_lies_within_its_interval(self) -> None:
        # Negative rubric weights take a task's ARS outside [0, 1]; the bounded interval
        # assumed it within: an ARS of -50.0 was shown as "-50.0 [0.0, 20.0]".
        a = vistoolbench_report(self.tmp / "a.json", [True, False] * 10)
        for name, low_ars, high_ars in (("b", -0.5, -0.5), ("c", -0.7, 1.6)):
            path = vistoolbench_report(self.tmp / f"{name}.json", [True, False] * 10)
            report = json.loads(path.read_text())
            for entry in report["results"]:
                entry["ars"] = high_ars if entry["apr"] else low_ars
            path.write_text(json.dumps(report))
            data = board(f"A={a}", f"{name}={path}")
            for run in data["runs"]:
                ars = run["beside"]["ars"]
                for entry in [ars["overall"], *ars["capabilities"].values()]:
                    self.assertLessEqual(entry["low"], entry["score"], (name, entry))
                    self.assertLessEqual(entry["score"], entry["high"], (name, entry))
        spread = next(r for r in data["runs"] if r["label"] == "c")["beside"]["ars"]["overall"]
        self.assertLess(spread["low"], 0)  # 10 tasks at -0.7, 10 at 1.6: no [0, 1] interval
        self.assertGreater(spread["high"] - spread["low"], 0.9)

    def test_unpaired_when_samples_differ(self) -> None:
        a = self.report("a", BASE)
        ids = [f"other{i}" for i in range(150)]
        b = self.report("b", flipped(BASE, 60, False), ids=ids)
        data = board(a, b)
        self.assertFalse(data["paired"])
        self.assertIn("unpaired", data["test"])
        self.assertNotEqual(data["runs"][0]["group"], data["runs"][1]["group"])

    def test_unpaired_all_right_against_all_wrong_on_two_samples_is_no_difference(self) -> None:
        # Two right answers against two wrong ones, on different samples: the z-test of the
        # means had no spread (both runs constant) and said p = 0; Fisher's exact test: 1/3.
        a = self.report("a", [True, True], ids=["x0", "x1"])
        b = self.report("b", [False, False], ids=["y0", "y1"])
        data = board(a, b)
        self.assertFalse(data["paired"])
        self.assertIn("Fisher", data["test"])
        self.assertAlmostEqual(data["pairs"][0]["p"], 1 / 3)
        self.assertEqual([r["group"] for r in data["runs"]], ["a", "a"])

    def test_one_report_given_twice_is_refused(self) -> None:
        a = self.report("a", BASE)
        # The same run twice, unlabelled, was told to "label runs explicitly" (then refused
        # as given twice): it is refused as given twice at once.
        cases = [
            (f"first={a}", f"again={a}"),
            (f"first={a}", str(Path(a).parent / "." / Path(a).name)),
            (a, a),
            (str(Path(a).parent), a),
        ]
        for first, second in cases:
            with self.subTest(second=second):
                result = run_cli("leaderboard", first, second, "--json")
                self.assertEqual(result.exit_code, 2, result.stderr)
                self.assertIn("is given twice", result.stderr)
                self.assertEqual(result.stdout, "")

    def test_incomparable_refused_then_marked(self) -> None:
        a = self.report("a", BASE)
        other = self.report("other", BASE, revision="rev-2")
        refused = run_cli("leaderboard", a, other)
        self.assertEqual(refused.exit_code, 2)
        error = [line for line in refused.stderr.splitlines() if line.startswith("error:")]
        self.assertEqual(len(error), 1)
        self.assertIn("revision differs", error[0])
        self.assertIn(f"other ({other}): ", error[0])  # the run and its file
        self.assertIn("--allow-different-data", refused.stderr)
        out = self.tmp / "out.csv"
        allowed = run_cli("leaderboard", a, other, "--allow-different-data", "--csv", str(out))
        self.assertEqual(allowed.exit_code, 0, allowed.stderr)
        self.assertIn("DIFFERENT DATA", allowed.stderr)
        rows = list(csv.DictReader(out.open()))
        self.assertTrue(rows and all(r["different_data"] == "True" for r in rows))
        data = board(a, other, "--allow-different-data")
        self.assertFalse(data["comparable"])
        self.assertTrue(data["differences"])

    def test_a_first_run_that_records_nothing_hides_no_difference(self) -> None:
        # Each run was compared with the first only: a first run without a recorded revision
        # (or judge, or with none of the others' sample ids) let the others differ unseen.
        bare = self.report("bare", BASE, revision="")
        a = self.report("a", BASE)
        other = self.report("other", BASE, revision="rev-2")
        refused = run_cli("leaderboard", bare, a, other)
        self.assertEqual(refused.exit_code, 2, refused.stdout)
        self.assertIn("revision differs (rev-1 vs rev-2)", refused.stderr)
        ids = [f"x{i:04d}" for i in range(len(BASE))]
        elsewhere = self.report("elsewhere", BASE, ids=ids)
        reference = json.loads(Path(a).read_text())
        reference["results"][0]["ground_truth"] = "another answer"
        changed = self.tmp / "changed" / "report.json"
        changed.parent.mkdir()
        changed.write_text(json.dumps(reference))
        refused = run_cli("leaderboard", elsewhere, a, str(changed))
        self.assertEqual(refused.exit_code, 2, refused.stdout)
        self.assertIn("1 of 150 shared samples differ", refused.stderr)

    def test_other_benchmark_always_refused(self) -> None:
        a = self.report("a", BASE)
        v = str(vistoolbench_report(self.tmp / "v" / "report.json", BASE))
        for extra in ([], ["--allow-different-data"]):
            result = run_cli("leaderboard", a, v, *extra)
            self.assertEqual(result.exit_code, 2)
            self.assertIn("different benchmarks", result.stderr)
            self.assertIn(f"{v} is a vistoolbench report", result.stderr)  # which run

    def test_trend(self) -> None:
        worse = self.report("c1", flipped(BASE, 30, False))
        base = self.report("c2", BASE)
        better = self.report("c3", flipped(BASE, 30, True))
        data = board(f"step3000={better}", f"step1000={worse}", f"step2000={base}", "--trend")
        trend = data["trend"]
        self.assertEqual([a["label"] for a in trend["axis"]], ["step1000", "step2000", "step3000"])
        self.assertEqual(trend["better_than_every_earlier"], ["step2000", "step3000"])
        self.assertEqual([r["label"] for r in data["runs"]], ["step3000", "step2000", "step1000"])
        text = run_cli("leaderboard", f"step3000={better}", f"step1000={worse}", "--trend")
        lines = text.stdout.splitlines()
        self.assertIn("better than all earlier", lines[0])
        self.assertEqual(
            [line.split("|")[1].strip() for line in lines[2:]], ["step1000", "step3000"]
        )
        self.assertIn("better than every earlier checkpoint: step3000", text.stderr)
        missing = run_cli("leaderboard", f"final={base}", f"step1={worse}", "--trend")
        self.assertEqual(missing.exit_code, 2)
        self.assertIn("number in every label", missing.stderr)

    def test_vistoolbench(self) -> None:
        a = str(vistoolbench_report(self.tmp / "a" / "report.json", BASE))
        b = str(vistoolbench_report(self.tmp / "b" / "report.json", flipped(BASE, 30, False)))
        data = board(f"A={a}", f"B={b}")
        self.assertEqual(data["headline"]["label"], "APR")
        self.assertEqual([m["label"] for m in data["beside"]], ["ARS"])
        self.assertEqual(data["group_by"], "turncase")
        first, second = data["runs"]
        self.assertEqual((first["label"], second["label"]), ("A", "B"))
        self.assertFalse(set(first["group"]) & set(second["group"]))
        ars = first["beside"]["ars"]["overall"]
        self.assertTrue(0 <= ars["low"] <= ars["score"] <= ars["high"] <= 1)
        text = run_cli("leaderboard", f"A={a}", f"B={b}").stdout
        self.assertIn("ARS [95%]", text)

    def test_terminal_table_off_a_terminal_is_markdown(self) -> None:
        a = self.report("a", BASE)
        b = self.report("b", flipped(BASE, 30, False))
        result = run_cli("leaderboard", f"A={a}", f"B={b}", env={"COLUMNS": "40"})
        lines = result.stdout.splitlines()
        self.assertTrue(lines and all(line.startswith("|") for line in lines))
        self.assertIn("66.7 [58.4, 74.0]", result.stdout)  # 100/150, no column left out
        self.assertIn("chart", lines[0])

    def test_a_long_coverage_detail_loses_no_count(self) -> None:
        # A partial run over DatBench's nine capabilities: the coverage cell (the check's
        # detail) passed 200 characters and the table cut it in its middle, "scen ... (10
        # characters not shown) ... tial 18/19". The cell holds the count, the notes the rest.
        detail = (
            "9 of 152 have no usable response (answered per capability: chart 22/23, "
            "counting 7/8, document 19/20, general 23/24, grounding 27/28, math 15/16, "
            "scene 7/8, spatial 18/19, table 5/6); allowed by --allow-missing"
        )
        self.assertGreater(len(detail), 200)
        a = self.report("a", BASE)
        b = Path(self.report("b", BASE))
        report = json.loads(b.read_text())
        report["summary"]["checks"][0]["detail"] = detail
        b.write_text(json.dumps(report))
        for env in ({"COLUMNS": "40"}, {}):
            result = run_cli("leaderboard", f"a={a}", f"b={b}", env=env)
            self.assertEqual(result.exit_code, 0, result.stderr)
            self.assertNotIn("not shown", result.stdout + result.stderr)
            row = next(line for line in result.stdout.splitlines() if line.startswith("| b "))
            self.assertIn("| 9 of 152 have no usable response |", row)
            self.assertIn(f"b: coverage: {detail}\n", result.stderr)
        # A failed check's detail is a warning already: said once.
        report["summary"]["checks"][0].update(passed=False, detail=detail[:-27])
        b.write_text(json.dumps(report))
        stderr = run_cli("leaderboard", f"a={a}", f"b={b}").stderr
        self.assertEqual(stderr.count("counting 7/8"), 1, stderr)
        self.assertIn(f"b: check coverage failed: {detail[:-27]}\n", stderr)

    def test_csv_is_tidy(self) -> None:
        a = self.report("a", BASE)
        b = self.report("b", BASE)
        out = self.tmp / "board.csv"
        result = run_cli("leaderboard", f"A={a}", f"B={b}", "--csv", str(out))
        self.assertEqual(result.exit_code, 0, result.stderr)
        rows = list(csv.DictReader(out.open()))
        self.assertEqual(len(rows), 2 * 4)  # 2 runs x (overall + 3 capabilities) x 1 metric
        overall = next(r for r in rows if r["run"] == "A" and r["capability"] == "overall")
        self.assertAlmostEqual(float(overall["value"]), 100 / 150)
        self.assertTrue(0 <= float(overall["low"]) <= float(overall["high"]) <= 1)
        self.assertEqual(overall["metric"], "accuracy")

    def test_csv_text_a_spreadsheet_would_run_is_shown_as_text(self) -> None:
        # A label from a model's name (a server's answer) such as =HYPERLINK(...) was a
        # formula once the CSV was opened in a spreadsheet.
        a = self.report("a", BASE)
        b = self.report("b", BASE)
        out = self.tmp / "board.csv"
        label = "+SUM(A1)"  # a model's name, as a label: "=HYPERLINK(...)" alike
        result = run_cli("leaderboard", f"{label}={a}", f"@B={b}", "--csv", str(out))
        self.assertEqual(result.exit_code, 0, result.stderr)
        rows = list(csv.DictReader(out.open()))
        self.assertEqual({r["run"] for r in rows}, {"'" + label, "'@B"})
        self.assertTrue(all(float(r["value"]) > 0 for r in rows))  # numbers as they were

    def test_never_writes_onto_an_input(self) -> None:
        a = self.report("a", BASE)
        b = self.report("b", BASE)
        before = Path(a).read_bytes()
        for option in ("--csv", "--html"):
            result = run_cli("leaderboard", a, b, option, a)
            self.assertEqual(result.exit_code, 2, option)
            self.assertEqual(Path(a).read_bytes(), before)
        notes = self.tmp / "notes.html"
        notes.write_text("my own notes")
        refused = run_cli("leaderboard", a, b, "--html", str(notes))
        self.assertEqual(refused.exit_code, 2)
        self.assertEqual(notes.read_text(), "my own notes")
        page = self.tmp / "board.html"
        for _ in range(2):  # its own page it replaces
            self.assertEqual(run_cli("leaderboard", a, b, "--html", str(page)).exit_code, 0)
        # One output guard for every command: a new file beside a run's report is written
        # (as `compare -o` does); the report itself never is.
        inside = run_cli(
            "leaderboard", str(self.tmp / "a"), b, "--csv", str(self.tmp / "a" / "x.csv")
        )
        self.assertEqual(inside.exit_code, 0, inside.stderr)
        self.assertEqual(Path(a).read_bytes(), before)
        for option in ("--csv", "--html"):
            onto = run_cli("leaderboard", str(self.tmp / "a"), b, option, a)
            self.assertEqual(onto.exit_code, 2, option)
            self.assertIn("is an input of this command", onto.stderr)
        self.assertEqual(Path(a).read_bytes(), before)

    def test_outputs_checked_before_any_report_is_read(self) -> None:
        # A refused output costs nothing: the reports (minutes of reading for 50 large
        # runs) were read before the output was checked.
        a = self.report("a", BASE)
        broken = self.tmp / "broken.json"
        broken.write_text('{"summary": {}, "results": [')
        link = self.tmp / "link.csv"
        link.symlink_to(self.tmp / "elsewhere.csv")
        result = run_cli("leaderboard", a, str(broken), "--csv", str(link))
        self.assertEqual(result.exit_code, 2)
        self.assertIn("is a symlink", result.stderr)

    def test_a_report_through_a_pipe(self) -> None:
        # A user-named input is read once, front to back (docs/guarantees.md): a report
        # through a pipe was refused as "file system error: File or stream is not seekable".
        import os
        import threading

        a = self.report("a", BASE)
        b = self.report("b", flipped(BASE, 30, False))
        fifo = self.tmp / "report.fifo"
        os.mkfifo(fifo)
        writer = threading.Thread(target=fifo.write_bytes, args=(Path(a).read_bytes(),))
        writer.start()
        try:
            data = board(f"piped={fifo}", b)
        finally:
            if writer.is_alive():  # never opened by the command: let the writer finish
                fifo.read_bytes()
            writer.join()
        self.assertEqual([r["label"] for r in data["runs"]], ["piped", "b"])
        self.assertEqual(data["runs"][0]["overall"]["score"], 100 / 150)

    def test_streamed_reading_equals_whole_reading(self) -> None:
        # Indented as `score` writes reports: read a slice of entries at a time (20,000
        # entries: several slices); compact JSON: read whole. Same leaderboard.
        from datbench_cli.leaderboard import reports

        many = [i % 7 != 0 for i in range(20_000)]
        pretty = datbench_report(self.tmp / "p" / "report.json", many, indent=2)
        compact = datbench_report(self.tmp / "c" / "report.json", flipped(many, 300, False))
        run, slices = reports.streamed(pretty)
        sizes = [len(reports.parse(s)) for s in slices if isinstance(s, bytes)]
        self.assertGreater(len(sizes), 1)
        self.assertEqual(sum(sizes), 20_000)
        self.assertEqual(run.report["summary"]["overall_accuracy"], sum(many) / 20_000)
        with self.assertRaises(reports.NotStreamable):
            reports.streamed(compact)
        streamed = board(f"P={pretty}", f"C={compact}")
        shutil.copy(pretty, compact)  # the same report, now read twice the streamed way
        again = board(f"P={pretty}", f"C={compact}")
        first = {r["label"]: r for r in streamed["runs"]}
        self.assertAlmostEqual(first["P"]["overall"]["score"], sum(many) / 20_000)
        self.assertAlmostEqual(first["C"]["overall"]["score"], (sum(many) - 300) / 20_000)
        self.assertEqual([r["group"] for r in streamed["runs"]], ["a", "b"])
        self.assertEqual([r["group"] for r in again["runs"]], ["a", "a"])

    def test_columnar_reading_equals_sample_by_sample(self) -> None:
        # DatBench's fast reader decodes only the fields it needs; what it returns equals what
        # reading each entry makes of it, quirks included (a missing capability is "None", an
        # integer score a float); an entry off the plain shape leaves it to the slow reader.
        import numpy as np

        from datbench_cli.benchmarks.datbench.pairing import SIDE
        from datbench_cli.compare.spec import Columns

        entries: list[dict[str, Any]] = [
            {
                "id": f"s{i}",
                "score": [1, 0.5, 0.0][i % 3],
                "is_correct": i % 3 == 0,
                "vlm_output": "x" * i,
                "ground_truth": [f"g{i}", ["a", 1], None, 2.5][i % 4],
                "metadata": {"capability": "chart", "dataset": f"d{i % 2}", "score_details": {}},
            }
            for i in range(12)
        ]
        del entries[5]["metadata"]["capability"]
        del entries[6]["ground_truth"]
        assert SIDE.columns is not None
        fast = SIDE.columns(json.dumps(entries).encode())
        slow = Columns.of(SIDE.read(entries, Path("r.json")), SIDE)
        assert fast is not None
        self.assertEqual(fast.ids, slow.ids)
        self.assertEqual(fast.groups, slow.groups)
        self.assertEqual(fast.checks, slow.checks)
        self.assertEqual(fast.groups["capability"][5], "None")
        for key in slow.values:
            np.testing.assert_array_equal(fast.values[key], slow.values[key])
            np.testing.assert_array_equal(fast.correct[key], slow.correct[key])
        for odd in ({"capability": None}, {"capability": 3}, {"score": True}, {"score": 1e999}):
            changed = [dict(e) for e in entries]
            if "capability" in odd:
                changed[2]["metadata"] = {**changed[2]["metadata"], **odd}
            else:
                changed[2].update(odd)
            with self.subTest(odd=odd):
                self.assertIsNone(SIDE.columns(json.dumps(changed).encode()))

    def test_malformed_entry_named_exactly(self) -> None:
        pretty = datbench_report(self.tmp / "p" / "report.json", BASE, indent=2)
        text = pretty.read_text().replace('"is_correct": true', '"is_correct": "yes"', 1)
        pretty.write_text(text)
        result = run_cli("leaderboard", str(pretty), self.report("b", BASE))
        self.assertEqual(result.exit_code, 2)
        self.assertIn("results[", result.stderr)
        self.assertIn("is_correct", result.stderr)

    def test_real_scored_runs_of_both_benchmarks(self) -> None:
        # Run directories as `score` leaves them (manifest beside, reports read streamed).
        from datbench_cli.compare.inputs import identity
        from datbench_cli.leaderboard import reports
        from tests.compare_support import scored_run

        for benchmark, headline in (("datbench", "accuracy"), ("vistoolbench", "APR")):
            with self.subTest(benchmark=benchmark):
                first = scored_run(benchmark, self.tmp / f"{benchmark}-1")
                second = scored_run(benchmark, self.tmp / f"{benchmark}-2")
                run, slices = reports.streamed(first)
                self.assertGreater(sum(len(s) for s in slices), 0)
                self.assertIn("references_sha256", identity(run))
                data = board(str(first), str(second))
                self.assertEqual(data["headline"]["label"], headline)
                self.assertTrue(data["comparable"])
                self.assertEqual([r["group"] for r in data["runs"]], ["a", "a"])
                report = json.loads((first / "report.json").read_text())
                bars = report["summary"]["uncertainty"]["overall"]
                entry = bars if benchmark == "datbench" else bars["apr"]
                self.assertAlmostEqual(data["runs"][0]["overall"]["low"], entry["ci95"][0])
                self.assertAlmostEqual(data["runs"][0]["overall"]["high"], entry["ci95"][1])

    def test_labels_must_differ(self) -> None:
        a = self.report("a", BASE)
        b = self.report("b", BASE)
        result = run_cli("leaderboard", f"x={a}", f"x={b}")
        self.assertEqual(result.exit_code, 2)
        self.assertIn("more than one run", result.stderr)

    def test_a_run_given_from_inside_is_named_by_its_folder(self) -> None:
        # `.` was labelled "." and `report.json` "report.json": the folder name was taken
        # from the path as given, which names no folder.
        import contextlib

        self.report("a", BASE)
        b = self.report("b", BASE)
        with contextlib.chdir(self.tmp / "a"):
            for given in (".", "report.json"):
                data = board(given, b)
                self.assertEqual({r["label"] for r in data["runs"]}, {"a", "b"}, given)

    def test_a_model_name_cannot_start_a_line(self) -> None:
        # The default label is the model the responses name (untrusted text): a newline in
        # it started a forged "error:" line among the notes under the table.
        a = self.report("a", BASE, model="evil\nerror: forged")
        report = json.loads(Path(a).read_text())
        report["summary"]["checks"][0]["passed"] = False  # a warning line names the run
        Path(a).write_text(json.dumps(report))
        b = self.report("b", BASE)
        result = run_cli("leaderboard", a, b)
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertNotIn("\nerror: forged", result.stderr)
        self.assertIn("evil\\x0aerror: forged", result.stderr)

    def test_the_page_cuts_a_very_long_model_or_capability_name(self) -> None:
        # A 1 MB model name (the default label) took matplotlib 204 s to lay out in the plots,
        # and the page held it whole in every plot and table; a capability name likewise.
        long_model, long_group = "m" * 30_000 + "-end", "c" * 30_000
        a = self.report("a", BASE, model=long_model)
        report = json.loads(Path(a).read_text())
        for result in report["results"][::3]:
            result["metadata"]["capability"] = long_group
        Path(a).write_text(json.dumps(report))
        b = self.report("b", BASE)
        shutil.copy(a, b)  # the same samples and groups, another model
        page = self.tmp / "board.html"
        result = run_cli("leaderboard", f"b={b}", a, "--html", str(page), "-q")
        self.assertEqual(result.exit_code, 0, result.stderr)
        text = page.read_text(encoding="utf-8")
        self.assertFalse("m" * 1000 in text or "c" * 1000 in text, "a name is shown whole")
        self.assertIn("characters not shown", text)
        self.assertIn("66.7", text)  # the numbers stay
        self.assertEqual(board(f"b={b}", a)["runs"][1]["label"], long_model)  # the data: whole

    def test_the_page_shows_a_bidirectional_override_in_a_label_escaped(self) -> None:
        # A model name ending in U+202E (right-to-left override) reversed the rest of its
        # line on the page: the note "LABEL: 1 warning(s) ..." read backwards after the label.
        a = self.report("a", BASE, model="evil\u202e\u200b")
        b = self.report("b", BASE)
        page = self.tmp / "board.html"
        result = run_cli("leaderboard", a, b, "--html", str(page), "-q")
        self.assertEqual(result.exit_code, 0, result.stderr)
        text = page.read_text(encoding="utf-8")
        self.assertFalse("\u202e" in text or "\u200b" in text, "shown raw")
        self.assertIn("evil\\u202e\\u200b", text)

    def test_json_holds_any_label(self) -> None:
        # Control characters were escaped for the terminal as `\x85`, which is not JSON:
        # `--json` was not valid JSON once a label (a model's name) held a C1 code or a
        # bidirectional override. Now they are JSON escapes: the labels read back as given.
        labels = ["a\u202eb", "c\x85d\x7f"]
        a = self.report("a", BASE)
        b = self.report("b", BASE)
        result = run_cli("leaderboard", f"{labels[0]}={a}", f"{labels[1]}={b}", "--json")
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertNotIn("\u202e", result.stdout)  # nothing raw reaches the terminal
        data = json.loads(result.stdout)
        self.assertEqual(sorted(r["label"] for r in data["runs"]), labels)

    def test_a_label_longer_than_a_file_name(self) -> None:
        # `LABEL=PATH` as a whole was looked up as a path first: past 255 bytes the system
        # refused the lookup and the run was refused as a file system error.
        a = self.report("a", BASE)
        b = self.report("b", BASE)
        label = "checkpoint-" * 30
        data = board(f"{label}={a}", b)
        self.assertIn(label, {r["label"] for r in data["runs"]})


if __name__ == "__main__":
    unittest.main()
