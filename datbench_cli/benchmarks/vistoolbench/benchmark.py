"""VisualToolBench as a :class:`~datbench_cli.benchmarks.base.Benchmark`: the stages behind
each command, its options and its terminal summary."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from datbench_cli.batch.requests import RequestSettings
from datbench_cli.benchmarks.base import (
    Events,
    ExportRequest,
    Headline,
    JudgeCheck,
    JudgeTasksWritten,
    Report,
    ScoreRequest,
    SummaryTable,
)
from datbench_cli.benchmarks.checks import CheckOptions
from datbench_cli.benchmarks.vistoolbench.model import BENCHMARK, DEFAULT_SOURCE
from datbench_cli.files.rundir import RunDir

_OPTIONS: dict[str, frozenset[str]] = {
    "export-tasks": frozenset({"turncase", "context", "first_image_only"}),
    "score": frozenset({"turncase"}),
}
_SECTIONS = (
    ("by_turncase", "turncase"),
    ("by_domain", "domain"),
    ("by_eval_focus", "eval focus"),
)


def _pct(value: float | None, count: int) -> str:
    return f"{100 * value:.2f}" if count and value is not None else "-"


class VisToolBench:
    """ScaleAI/VisualToolBench: multi-turn tasks graded by rubrics (ARS and APR)."""

    name = BENCHMARK
    title = "VisualToolBench"
    default_source = DEFAULT_SOURCE

    def select(self, targets: Sequence[str]) -> list[str] | None:
        lowered = [t.strip().lower() for t in targets]
        return [BENCHMARK] if lowered and lowered[0] == BENCHMARK else None

    def target_help(self) -> str:
        return BENCHMARK

    def options(self, command: str) -> frozenset[str]:
        return _OPTIONS.get(command, frozenset())

    # ------------------------------------------------------------------ stages

    def export(self, run: RunDir, request: ExportRequest, events: Events) -> dict[str, Any]:
        from datbench_cli.benchmarks.vistoolbench import stages

        options = request.options
        source = request.source or self.default_source
        events.info(f"loading VisualToolBench from {source} ...")
        with events.progress("exporting", None, None) as advance:
            manifest = stages.export(
                source,
                request.split,
                run,
                limit=request.limit,
                turncase=options.get("turncase"),
                context=options.get("context") or "golden",
                first_image_only=bool(options.get("first_image_only")),
                shard=request.shard,
                requests=request.requests,
                warn=events.warn,
                advance=advance,
            )
        counts, exported = manifest["counts"], manifest["options"]
        events.info(
            f"exported {counts['tasks']} tasks ({counts['single_turn']} single-turn, "
            f"{counts['multi_turn']} multi-turn; {counts['turns']} turns, {counts['rubrics']} "
            f"rubrics, {counts['images']} images; context {manifest['context_policy']}) to "
            f"{run.root}"
        )
        if "shard" in exported:
            part = exported["shard"]
            events.info(
                f"shard {part['index']} of {part['count']}: {part['tasks']} task(s) "
                f"({part['turns']} turns, {part['images']} images) in tasks.jsonl; "
                "references.jsonl holds all tasks"
            )
        if exported.get("openai_requests", {}).get("files") and counts["max_images_per_turn"] > 1:
            events.info(
                f"turns carry up to {counts['max_images_per_turn']} images: start vLLM with "
                f"--limit-mm-per-prompt '{{\"image\": {counts['max_images_per_turn']}}}'"
            )
        return manifest

    def make_judge_tasks(
        self,
        run: RunDir,
        responses: Path,
        out: Path,
        *,
        skip_done: Path | None,
        requests: RequestSettings | None,
        events: Events,
    ) -> JudgeTasksWritten:
        from datbench_cli.benchmarks.vistoolbench import stages

        return stages.make_judge_tasks(
            run, responses, out, events.warn, skip_done=skip_done, requests=requests
        )

    def score(self, run: RunDir, request: ScoreRequest, events: Events) -> Report:
        from datbench_cli.benchmarks.vistoolbench import stages

        checks = CheckOptions(
            strict_judge=request.strict_judge,
            allow_missing=request.allow_missing,
            fail_under=request.fail_under,
        )
        return stages.score_checked(
            run,
            request.responses,
            request.judge_responses,
            checks,
            turncase=request.options.get("turncase"),
            warn=events.warn,
        )

    def check_judge(self, run: RunDir | None, path: Path, responses: Path) -> JudgeCheck:
        from datbench_cli.benchmarks.vistoolbench import stages
        from datbench_cli.errors import name_ids

        if run is not None:
            run.read_manifest()
            check, line = stages.check_judge(run, path, responses)
            problem = None if check.passed else f"judge verdicts that do not count: {check.detail}"
            return JudgeCheck(counts={}, unparsed_ids=[], line=line, problem=problem)
        counts, unusable = stages.check_judge_file(path)
        return JudgeCheck(
            counts=counts,
            unparsed_ids=unusable,
            line=f"{counts['lines']} verdicts: {counts['met']} met, {counts['not_met']} not "
            f"met, {counts['unparsed']} unparsed, {counts['errored']} errored",
            problem=f"unparsed or errored verdicts for: {name_ids(unusable)}" if unusable else None,
        )

    # ------------------------------------------------------------------ summary

    def summary_table(self, report: Report) -> SummaryTable:
        """Overall, per turncase, per domain and per eval focus: tasks, APR, ARS; overall and
        every turncase of the export (also one without a scored task) with the turns answered."""
        summary = report.summary
        responses = summary.get("responses") or {}
        by_turncase = responses.get("by_turncase") or {}

        def answered(turns: dict[str, Any] | None) -> str:
            return f"{turns['answered_turns']}/{turns['turns']}" if turns else ""

        def row(label: str, stats: dict[str, Any], turns: dict[str, Any] | None) -> list[str]:
            n = stats["n"]
            return [label, answered(turns), str(n), _pct(stats["apr"], n), _pct(stats["ars"], n)]

        overall = {"n": summary["num_tasks"], "apr": summary["apr"], "ars": summary["ars"]}
        sections = [[row("overall", overall, responses if "turns" in responses else None)]]
        empty = {"n": 0, "apr": None, "ars": None}
        for key, label in _SECTIONS:
            groups = dict(summary[key])
            if key == "by_turncase":
                groups.update({name: empty for name in by_turncase if name not in groups})
            sections.append(
                [
                    row(
                        f"{label}: {name}",
                        stats,
                        by_turncase.get(name) if key == "by_turncase" else None,
                    )
                    for name, stats in groups.items()
                ]
            )
        return SummaryTable(
            title=f"VisualToolBench results (%, {summary['context_policy']})",
            columns=["group", "answered", "tasks", "APR", "ARS"],
            sections=sections,
        )

    def summary_notes(self, report: Report) -> list[str]:
        """Lines under the table: the context policy, gaps and duplicates in the responses
        (the non-official diagnostics stay in the report)."""
        summary = report.summary
        notes = []
        if summary["context_policy"] != "golden_history":
            notes.append(
                f"context policy {summary['context_policy']}: not comparable with official numbers"
            )
        responses = summary.get("responses") or {}
        gaps = [
            f"{responses[key]} {text}"
            for key, text in (
                ("missing_turns", f"of {responses.get('turns', 0)} turn(s) have no answer"),
                ("duplicate_lines", "duplicate line(s) (the last one is used)"),
                ("unknown_lines", "line(s) with unknown ids"),
            )
            if responses.get(key)
        ]
        if gaps:
            notes.append("responses: " + "; ".join(gaps))
        return notes

    def headline(self, report: Report) -> Headline:
        return Headline("APR", report.summary.get("apr"))
