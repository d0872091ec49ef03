"""Randomized mixes of judge files, both benchmarks: every judge line counts in one place, and
`score`, `score --strict-judge`, `check-judge` and `make-judge-tasks` agree on the counts.

Each mix: some responses errored, gone or cut; judge tasks made; judge lines that are correct,
unparseable, errored, refused by the judge (a content filter's finish_reason, an Azure
prompt filter's HTTP 400), duplicated, stale (a digest of another text, or responses changed after
the judge tasks were made), cut at the token limit, of unknown ids, of direct-mode samples and
of unanswered samples (turns)."""

from __future__ import annotations

import json
import random
import re
import shutil
import tempfile
import unittest
from pathlib import Path
from typing import Any

from tests.cli_helpers import SAMPLE, VTB_SAMPLE, run_cli
from tests.runner_lines import azure_prompt_filtered, read_lines, vllm_ok, write_lines

SEEDS = range(3)
KINDS = ("yes", "no", "junk", "errored", "twice", "none", "stale", "cut", "refused", "filtered")
_DAT_LINE = re.compile(
    r"(\d+) judge verdicts expected: (\d+) true, (\d+) false, (\d+) missing, (\d+) unparsed, "
    r"(\d+) stale, (\d+) errored, (\d+) refused by the judge, (\d+) unknown, "
    r"(\d+) for direct-mode samples, (\d+) for unanswered samples"
)


def _mix_responses(rng: random.Random, lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for line in lines:
        fate = rng.choice(("ok",) * 6 + ("errored", "gone", "cut"))
        if fate == "gone":
            continue
        if fate == "errored":
            out.append({"id": line["id"], "raw_output": None, "error": "timed out"})
        elif fate == "cut":
            out.append(vllm_ok(line["id"], line["raw_output"], finish_reason="length"))
        else:
            out.append(line)
    return out


def _mix_judges(
    rng: random.Random, ids: list[str], digests: dict[str, str], verdicts: tuple[str, str, str]
) -> list[dict[str, Any]]:
    yes, no, junk = verdicts
    lines: list[dict[str, Any]] = []
    for ident in ids:
        kind = rng.choice(KINDS)
        digest = {"response_digest": digests[ident]} if ident in digests else {}
        if kind == "none":
            continue
        if kind == "errored":
            lines.append({"id": ident, "raw_judge_output": None, "error": "boom"})
        elif kind == "twice":
            lines += [{"id": ident, "raw_judge_output": no, **digest}]
            lines += [{"id": ident, "raw_judge_output": yes, **digest}]
        elif kind == "stale":
            lines.append({"id": ident, "raw_judge_output": yes, "response_digest": "0" * 16})
        elif kind in ("cut", "refused"):
            tail = f"#{digests[ident]}" if ident in digests else ""
            cut = kind == "cut"
            lines.append(
                vllm_ok(
                    ident + tail, yes if cut else "", finish_reason="length" if cut else "SAFETY"
                )
            )
        elif kind == "filtered":
            lines.append(azure_prompt_filtered(ident))
        else:
            text = {"yes": yes, "no": no, "junk": junk}[kind]
            lines.append({"id": ident, "raw_judge_output": text, **digest})
            if rng.random() < 0.2:  # a failed retry after the answer replaces nothing
                lines.append({"id": ident, "raw_judge_output": None, "error": "late"})
    rng.shuffle(lines)
    return lines


def _changed(rng: random.Random, lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Responses run again after the judge tasks were made: some texts differ now."""
    return [
        {"id": line["id"], "raw_output": line["raw_output"] + " (again)"}
        if isinstance(line.get("raw_output"), str) and rng.random() < 0.1
        else line
        for line in lines
    ]


class _MixCase(unittest.TestCase):
    source: Path
    target: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp())
        cls.base = cls.tmp / "base"
        result = run_cli(
            "export-tasks", cls.target, "--source", str(cls.source), "-d", str(cls.base), "-q"
        )
        assert result.exit_code == 0, result.stderr

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def mix(self, seed: int, responses: list[dict[str, Any]], judge_ids: list[str]) -> Path:
        rng = random.Random(seed)
        work = self.tmp / f"mix{seed}"
        shutil.copytree(self.base, work)
        answered = _mix_responses(rng, responses)
        write_lines(work / "responses.jsonl", answered)
        assert run_cli("make-judge-tasks", "-d", str(work), "-q").exit_code == 0
        digests = {t["id"]: t["response_digest"] for t in read_lines(work / "judge_tasks.jsonl")}
        write_lines(
            work / "judge_responses.jsonl", _mix_judges(rng, judge_ids, digests, self.verdicts)
        )
        write_lines(work / "responses.jsonl", _changed(rng, answered))
        return work

    verdicts: tuple[str, str, str]

    def run_all(self, work: Path) -> tuple[dict[str, Any], Any, Any, int]:
        score = run_cli("score", "-d", str(work), "--allow-missing", "--json")
        self.assertEqual(score.exit_code, 0, score.stderr)
        strict = run_cli(
            "score", "-d", str(work), "--allow-missing", "--strict-judge", "-q",
            "-o", str(work / "strict.json"),
        )  # fmt: skip
        check = run_cli("check-judge", "-d", str(work))
        self.assertEqual(check.exit_code, strict.exit_code, check.stderr + strict.stderr)
        remade = run_cli("make-judge-tasks", "-d", str(work), "-o", str(work / "again.jsonl"))
        self.assertEqual(remade.exit_code, 0, remade.stderr)
        tasks = len(read_lines(work / "again.jsonl"))
        return json.loads(score.stdout), strict, check, tasks


class DatBenchMixTests(_MixCase):
    source, target = SAMPLE, "all"
    verdicts = ("true", "false", "maybe")

    def test_every_judge_line_counts_once_and_every_command_agrees(self) -> None:
        references = read_lines(self.base / "references.jsonl")
        judge = [r["id"] for r in references if r["eval_mode"] == "judge"]
        direct = [r["id"] for r in references if r["eval_mode"] != "judge"]
        own = {r["id"]: r for r in read_lines(SAMPLE / "responses.jsonl")}
        responses = [own[i] for i in judge] + [own[i] for i in direct]
        for seed in SEEDS:
            with self.subTest(seed=seed):
                ids = [*judge, *random.Random(seed).sample(direct, 3), "no_such_sample"]
                summary, strict, check, tasks = self.run_all(self.mix(seed, responses, ids))
                found = _DAT_LINE.match(check.stdout)
                assert found, check.stdout
                expected, true, false, missing, unparsed, stale, errored, refused, unknown, of_direct, of_unanswered = map(  # noqa: E501
                    int, found.groups()
                )  # fmt: skip
                self.assertEqual(summary["judge_samples"], expected)
                self.assertEqual(tasks, expected)  # make-judge-tasks asks about each of them
                # The seed's counts hold the errored and refused ones, said apart beside them.
                self.assertEqual(
                    summary["judge_missing_responses"] + summary["judge_unparsed_verdicts"],
                    missing + unparsed + errored + refused,
                )
                self.assertEqual(summary["judge_refused_responses"], refused)
                self.assertEqual(summary["judge_stale_verdicts"], stale)
                self.assertEqual(summary["judge_errored_responses"], errored)
                self.assertEqual(summary["unknown_judge_response_ids"], unknown)
                self.assertEqual(summary["direct_judge_response_ids"], of_direct)
                self.assertEqual(summary["unanswered_judge_response_ids"], of_unanswered)
                self.assertAlmostEqual(summary["judge_accuracy"] or 0, true / (expected or 1))
                self.assertEqual(
                    true + false + missing + unparsed + stale + errored + refused, expected
                )
                problems = missing + unparsed + stale + errored + refused + unknown
                problems += of_direct + of_unanswered
                self.assertEqual(strict.exit_code, 1 if problems else 0, strict.stderr)


class VisToolBenchMixTests(_MixCase):
    source, target = VTB_SAMPLE, "vistoolbench"
    verdicts = ('{"judge_result": "Met"}', '{"judge_result": "Not Met"}', "hmm")

    def test_every_judge_line_counts_once_and_every_command_agrees(self) -> None:
        references = read_lines(self.base / "references.jsonl")
        turns = [f"{t['id']}::{n}" for t in references for n in range(len(t["turns"]))]
        responses = [{"id": turn, "raw_output": f"answer {turn}"} for turn in turns]
        rubrics = [
            f"{turn}::{rubric}"
            for t in references
            for n, turn_row in enumerate(t["turns"])
            for turn in [f"{t['id']}::{n}"]
            for rubric in [r["rubric_id"] for r in turn_row["rubrics"]]
        ]
        for seed in SEEDS:
            with self.subTest(seed=seed):
                work = self.mix(seed, responses, [*rubrics, "nope::0::r1"])
                summary, strict, check, tasks = self.run_all(work)
                judge = summary["judge"]
                parts = ("met", "not_met", "unparsed", "missing", "stale", "errored", "refused")
                self.assertEqual(sum(judge[k] for k in parts), judge["judge_tasks"])
                self.assertEqual(tasks, judge["judge_tasks"])
                self.assertLessEqual(judge["unanswered_responses"], judge["unknown_responses"])
                problems = sum(judge[k] for k in (*parts[2:], "missing_answer"))
                problems += judge["unknown_responses"]
                self.assertEqual(strict.exit_code, 1 if problems else 0, strict.stderr)
                self.assertTrue(check.stdout.startswith(f"{judge['judge_tasks']} judge tasks:"))
