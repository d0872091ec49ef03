"""DatBench as a :class:`~datbench_cli.benchmarks.base.Benchmark`: the stages behind each
command, its options and its terminal summary."""

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
from datbench_cli.benchmarks.datbench.capabilities import CAPABILITIES, DEFAULT_DATBENCH_SOURCE
from datbench_cli.errors import InputError, UsageError
from datbench_cli.files.rundir import RunDir

_OPTIONS: dict[str, frozenset[str]] = {
    "score": frozenset({"strict", "sample_timeout", "jobs", "profile"}),
}


def _pct(value: float | None, count: int) -> str:
    return f"{100 * value:.2f}" if count and value is not None else "-"


class DatBench:
    """The nine DatBench capabilities (DatologyAI/DatBench and DatBench-Full)."""

    name = "datbench"
    title = "DatBench"
    default_source = DEFAULT_DATBENCH_SOURCE

    def select(self, targets: Sequence[str]) -> list[str] | None:
        """The capabilities named (``all``: the nine), in order, without repeats; ``None`` when
        the first target is not a DatBench name; an unknown later name is an error."""
        lowered = [t.strip().lower() for t in targets]
        if not lowered or (lowered[0] != "all" and lowered[0] not in CAPABILITIES):
            return None
        chosen: list[str] = []
        for target in lowered:
            for name in CAPABILITIES if target == "all" else (target,):
                if name not in CAPABILITIES:
                    raise InputError(
                        f"unknown DatBench capability {name!r}; valid: "
                        f"{', '.join(CAPABILITIES)} or all"
                    )
                if name not in chosen:
                    chosen.append(name)
        return chosen

    def target_help(self) -> str:
        return f"{', '.join(CAPABILITIES)}, all"

    def options(self, command: str) -> frozenset[str]:
        return _OPTIONS.get(command, frozenset())

    # ------------------------------------------------------------------ stages

    def export(self, run: RunDir, request: ExportRequest, events: Events) -> dict[str, Any]:
        from datbench_cli.benchmarks.datbench import export

        source = request.source or self.default_source
        events.info(f"loading {', '.join(request.selection)} from {source} ...")
        plan = export.plan_export(list(request.selection), source, request.split, request.limit)
        with events.progress("exporting", plan.total, "samples") as advance:
            manifest = export.export_datbench(
                plan,
                run,
                shard=request.shard,
                requests=request.requests,
                warn=events.warn,
                advance=advance,
            )
        counts = manifest["counts"]
        events.info(
            f"exported {counts['samples']} samples ({counts['judge_samples']} judge-mode, "
            f"{counts['images']} images) to {run.root}"
        )
        if request.shard is not None:
            events.info(
                f"shard {request.shard.index} of {request.shard.count}: {counts['tasks']} "
                "task(s) in tasks.jsonl; references.jsonl holds all samples"
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
        from datbench_cli.benchmarks.datbench import stages

        return stages.make_judge_tasks(
            run, responses, out, skip_done=skip_done, requests=requests, warn=events.warn
        )

    def score(self, run: RunDir, request: ScoreRequest, events: Events) -> Report:
        from datbench_cli.benchmarks.datbench import stages
        from datbench_cli.benchmarks.datbench.scoring import PROFILES, REFERENCE
        from datbench_cli.runtime.budget import DEFAULT_SAMPLE_TIMEOUT

        options = request.options
        timeout = options.get("sample_timeout")
        timeout = DEFAULT_SAMPLE_TIMEOUT if timeout is None else timeout
        profile = options.get("profile") or REFERENCE
        if profile not in PROFILES:
            raise UsageError(f"--profile must be {' or '.join(PROFILES)}, not {profile!r}")
        with events.progress("scoring", None, "samples") as advance:
            return stages.score_run(
                run,
                request.responses,
                request.judge_responses,
                strict_judge=request.strict_judge,
                strict=bool(options.get("strict")),
                sample_timeout=timeout or None,
                jobs=options.get("jobs") or 0,
                warn=events.warn,
                progress=advance,
                profile=profile,
            )

    def check_judge(self, path: Path) -> JudgeCheck:
        from datbench_cli.benchmarks.datbench.judge_check import check_judge_file

        counts = check_judge_file(path)
        return JudgeCheck(
            counts={
                "verdicts": counts.total,
                "true": counts.true,
                "false": counts.false,
                "unparsed": len(counts.unparsed_ids),
            },
            unparsed_ids=counts.unparsed_ids,
            line=f"{counts.total} verdicts: {counts.true} true, {counts.false} false, "
            f"{len(counts.unparsed_ids)} unparsed",
        )

    # ------------------------------------------------------------------ summary

    def summary_table(self, report: Report) -> SummaryTable:
        """Overall, then each capability with its source datasets under it: samples and mean
        score, split into direct and judge mode; datasets with a known reference defect are
        marked."""
        from datbench_cli.benchmarks.datbench.summary import GroupStats, group_stats

        defects = report.summary.get("known_reference_defects") or {}

        def row(name: str, stats: GroupStats) -> list[str]:
            return [
                name,
                str(stats.samples),
                _pct(stats.accuracy, stats.samples),
                str(stats.direct.count),
                _pct(stats.direct.accuracy, stats.direct.count),
                str(stats.judge.count),
                _pct(stats.judge.accuracy, stats.judge.count),
            ]

        s = report.summary
        overall = [
            "overall",
            str(s["total_samples"]),
            _pct(s["overall_accuracy"], s["total_samples"]),
            str(s["direct_samples"]),
            _pct(s["direct_accuracy"], s["direct_samples"]),
            str(s["judge_samples"]),
            _pct(s["judge_accuracy"], s["judge_samples"]),
        ]
        sections = [[overall]]
        by_capability: dict[str, list[Any]] = {}
        for result in report.results:
            by_capability.setdefault(str(result.metadata.get("capability")), []).append(result)
        marked = False
        for capability, stats in group_stats(report.results, "capability").items():
            rows = [row(capability, stats)]
            for dataset, dstats in sorted(
                group_stats(by_capability[capability], "dataset").items()
            ):
                mark = " *" if dataset in defects else ""
                marked = marked or bool(mark)
                rows.append(row(f"  {dataset}{mark}", dstats))
            sections.append(rows)
        legend = (
            ["* known reference defect, kept for parity (docs/known-defects.md)"] if marked else []
        )
        return SummaryTable(
            title="DatBench results (mean score, %"
            + (f"; {report.summary['profile']} profile)" if "profile" in report.summary else ")"),
            columns=["group", "n", "score", "n direct", "direct", "n judge", "judge"],
            sections=sections,
            optional=[3, 4, 5, 6],
            legend=legend,
        )

    def summary_notes(self, report: Report) -> list[str]:
        """Lines under the table that no warning has said already: judge problems."""
        s = report.summary
        notes = []
        if s.get("judge_missing_responses") or s.get("judge_unparsed_verdicts"):
            notes.append(
                f"judge verdicts: {s['judge_missing_responses']} missing, "
                f"{s['judge_unparsed_verdicts']} unparsed (scored 0)"
            )
        if "profile" in s:
            changed = [
                f"{fix} {count} in {dataset}"
                for dataset, fixes in s.get("corrections", {}).items()
                for fix, count in fixes.items()
            ]
            notes.append(
                f"{s['profile']} profile; samples each fix changed: {', '.join(changed) or 'none'}"
                " (docs/known-defects.md)"
            )
        return notes

    def headline(self, report: Report) -> Headline:
        return Headline("overall_accuracy", report.summary.get("overall_accuracy"))
