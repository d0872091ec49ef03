"""DatBench as a :class:`~datbench_cli.benchmarks.base.Benchmark`: the stages behind each
command, its options and its terminal summary."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
from datbench_cli.benchmarks.datbench.capabilities import CAPABILITIES, DEFAULT_DATBENCH_SOURCE
from datbench_cli.errors import InputError, UsageError
from datbench_cli.files.provenance import score_options
from datbench_cli.files.rundir import RunDir, safe_file_stem

if TYPE_CHECKING:
    from datbench_cli.compare.spec import Side
    from datbench_cli.report_html.inputs import Images, RunFiles

_OPTIONS: dict[str, frozenset[str]] = {
    "score": frozenset({"strict", "sample_timeout", "jobs", "profile"}),
}


#: The judge-mode samples without a verdict that the summary's notes name apart.
_NO_VERDICT_APART = (
    ("judge_errored_responses", "errored (every judge line reported an error)"),
    ("judge_refused_responses", "refused by the judge (a content filter or a refusal)"),
)


class DatBench:
    """The nine DatBench capabilities (DatologyAI/DatBench and DatBench-Full)."""

    name = "datbench"
    title = "DatBench"
    default_source = DEFAULT_DATBENCH_SOURCE
    has_agent = False
    imports_official = False

    def import_official(self, path: Path, run: RunDir) -> None:
        """DatBench has no official runner files to import."""
        return None

    def array_hint(self, start: bytes, path: Path) -> None:
        """DatBench has no array format of its own (the generic jq hint is given)."""
        return None

    def line_hint(self, line: dict[str, Any]) -> None:
        """DatBench has no record format of its own to import."""
        return None

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
        plan = export.plan_export(
            list(request.selection), source, request.split, request.limit, request.revision
        )
        if plan.total == 0:  # every capability's split is empty: no run to make
            raise UsageError(
                f"{source}: the {request.split!r} split of {', '.join(request.selection)} holds "
                "no rows: nothing to export"
            )
        with events.progress("exporting", plan.total, "samples") as advance:
            manifest = export.export_datbench(
                plan,
                run,
                shard=request.shard,
                requests=request.requests,
                force=request.force,
                no_image=request.no_image,
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
        from datbench_cli.benchmarks.profiles import profile_option
        from datbench_cli.runtime.budget import DEFAULT_SAMPLE_TIMEOUT, check_sample_timeout

        options = request.options
        timeout = options.get("sample_timeout")
        timeout = check_sample_timeout(DEFAULT_SAMPLE_TIMEOUT if timeout is None else timeout)
        profile = profile_option(options)
        checks = CheckOptions(
            strict_judge=request.strict_judge,
            strict=bool(options.get("strict")),
            allow_missing=request.allow_missing,
            fail_under=request.fail_under,
        )
        # The export's sample count until the samples to score are known (a total from the
        # start, not "0/?" while the files are read); only a hint, so a hand-edited one that
        # is no count is no total.
        counts = run.read_manifest().get("counts")
        expected = counts.get("samples") if isinstance(counts, dict) else None
        if type(expected) is not int or expected < 0:
            expected = None
        with events.progress("scoring", expected, "samples") as advance:
            return stages.score_checked(
                run,
                request.responses,
                request.judge_responses,
                checks,
                sample_timeout=timeout or None,
                jobs=options.get("jobs") or 0,
                warn=events.warn,
                progress=advance,
                profile=profile,
                # The effective values, so a default and the same value given are one report.
                recorded=score_options(
                    request.strict_judge,
                    {
                        **options,
                        "profile": profile,
                        "sample_timeout": timeout,
                        "allow_missing": request.allow_missing,
                        "fail_under": request.fail_under,
                        # Recorded only when given: the image check it selects (docs/provenance.md).
                        **({"verify_images": True} if request.verify_images else {}),
                    },
                ),
            )

    def judge_line_shape(self, line: dict[str, Any]) -> bool:
        """A DatBench judge line is keyed by a sample id (a file stem: letters, digits, ``._-``);
        a batch line's ``custom_id`` may end in ``#<response digest>``."""
        ident = line.get("custom_id", line.get("id"))
        if not isinstance(ident, str):
            return False
        return safe_file_stem(ident.split("#", 1)[0]) is not None

    def check_judge(self, run: RunDir | None, path: Path, responses: Path) -> JudgeCheck:
        from datbench_cli.benchmarks.datbench import stages
        from datbench_cli.benchmarks.datbench.judge_check import PROBLEMS, check_judge_file

        warnings: list[str] = []
        if run is None:
            account = check_judge_file(path, warnings.append)
        else:
            run.read_manifest()
            account = stages.check_judge(run, path, responses, warnings.append)
        counts = {"true": account.true, "false": account.false}
        counts.update({name: len(getattr(account, name)) for name in PROBLEMS})
        return JudgeCheck(
            counts=counts,
            unparsed_ids=account.problem_ids(),
            line=account.describe(),
            problem=f"judge verdicts that do not count: {account.problems()}"
            if account.failed
            else None,
            warnings=warnings,
        )

    # ------------------------------------------------------------------ summary

    def summary_table(self, report: Report) -> SummaryTable:
        """Overall, then every capability of the export with its source datasets under it:
        coverage (answered / exported), samples, mean score with its 95% interval, direct and
        judge, MDD80 and censoring; datasets with a known reference defect are marked."""
        from datbench_cli.benchmarks.common import bar_cell, mdd_cell
        from datbench_cli.benchmarks.datbench.summary import GroupStats
        from datbench_cli.benchmarks.datbench.uncertainty import columns_of

        s = report.summary
        defects = s.get("known_reference_defects") or {}
        bars = s.get("uncertainty") or {}
        censored = s.get("censoring") or {}

        def answered(coverage: dict[str, Any] | None) -> str:
            return f"{coverage['answered']}/{coverage['expected']}" if coverage else ""

        def extra(entry: dict[str, Any] | None, done: dict[str, Any] | None) -> list[str]:
            if done is None:
                return [mdd_cell(entry), "-", "-"]
            return [
                mdd_cell(entry),
                str(done["censored"]),
                bar_cell(done["accuracy_completed"], done["completed"]),
            ]

        def row(
            name: str,
            stats: GroupStats,
            key: str,
            group: str,
            coverage: dict[str, Any] | None = None,
        ) -> list[str]:
            entry = (bars.get(key) or {}).get(group)
            return [
                name,
                answered(coverage),
                str(stats.samples),
                bar_cell(stats.accuracy, stats.samples, entry),
                bar_cell(stats.direct.accuracy, stats.direct.count),
                bar_cell(stats.judge.accuracy, stats.judge.count),
                *extra(entry, (censored.get(key) or {}).get(group)),
                str(stats.direct.count),
                str(stats.judge.count),
            ]

        overall = [
            "overall",
            answered(s.get("coverage")),
            str(s["total_samples"]),
            bar_cell(s["overall_accuracy"], s["total_samples"], bars.get("overall")),
            bar_cell(s["direct_accuracy"], s["direct_samples"]),
            bar_cell(s["judge_accuracy"], s["judge_samples"]),
            *extra(bars.get("overall"), censored.get("overall")),
            str(s["direct_samples"]),
            str(s["judge_samples"]),
        ]
        sections = [[overall]]
        table = getattr(report, "table", None)
        if table is None:
            table = columns_of(report.results)
        # Every capability of the export, also those without a scored sample.
        coverage = (s.get("coverage") or {}).get("by_capability", {})
        groups = table.group_stats()
        marked = False
        for capability in [*groups, *(n for n in coverage if n not in groups)]:
            stats, datasets = groups.get(capability, (GroupStats(), {}))
            rows = [row(capability, stats, "capabilities", capability, coverage.get(capability))]
            for dataset, dstats in sorted(datasets.items()):
                mark = " *" if dataset in defects else ""
                marked = marked or bool(mark)
                rows.append(row(f"  {dataset}{mark}", dstats, "datasets", dataset))
            sections.append(rows)
        legend = [
            (
                "score",
                "[low, high]: the 95% interval (Wilson with continuity correction, within "
                "0-100); docs/statistics.md",
            ),
            (
                "MDD80",
                "MDD80: the smallest paired difference a comparison with another run of this "
                "size detects with 80% power (points)",
            ),
            (
                "censored",
                "censored: truncated, empty, refused or errored responses, unclosed <think> or "
                "thinking only, unparsed/missing/stale verdicts",
            ),
            ("compl.", "compl.: the score without the censored (the official score keeps them)"),
        ]
        if marked:
            legend.append(
                ("*", "* known reference defect, kept for parity (docs/known-defects.md)")
            )
        return SummaryTable(
            title="DatBench results (mean score, %, [95% interval]"
            + (f"; {s['profile']} profile)" if "profile" in s else ")"),
            columns=[
                "group",
                "answered",
                "n",
                "score",
                "direct",
                "judge",
                "MDD80",
                "censored",
                "compl.",
                "n direct",
                "n judge",
            ],
            sections=sections,
            # dropped last first on a narrow terminal
            optional=[4, 5, 6, 7, 8, 9, 10],
            legend=legend,
        )

    def summary_notes(self, report: Report) -> list[str]:
        """Lines under the table: item statistics, judge problems, unanswered and as-is-scored
        responses, the profile's fixes."""
        from datbench_cli.benchmarks.common import as_is_note, bar_cell

        s = report.summary
        notes = []
        items = []
        for name, entry in (s.get("item_statistics") or {}).items():
            parts = []
            if "frontier" in entry:
                front, rest = entry["frontier"], entry["non_frontier"]
                parts.append(
                    f"frontier {bar_cell(front['accuracy'], front['n'])} (n {front['n']}) vs "
                    f"{bar_cell(rest['accuracy'], rest['n'])}"
                )
            if entry.get("discrimination_weighted_accuracy") is not None:
                parts.append(
                    "discrimination-weighted "
                    f"{bar_cell(entry['discrimination_weighted_accuracy'], 1)}"
                )
            if parts:
                items.append(f"{name}: {', '.join(parts)}")
        if items:
            notes.append("item statistics (our addition, %): " + "; ".join(items))
        # A sample whose every judge line errored, or whose judge refused it, has no
        # verdict: the report counts it in judge_missing_responses or judge_unparsed_verdicts
        # (the seed's counts), and says it apart, as check-judge counts it.
        missing, unparsed = s.get("judge_missing_responses"), s.get("judge_unparsed_verdicts")
        if missing or unparsed:
            apart = [f"{s[key]} {what}" for key, what in _NO_VERDICT_APART if s.get(key)]
            notes.append(
                f"judge verdicts: {missing} missing, {unparsed} unparsed (scored 0)"
                + (f"; of these, {' and '.join(apart)}" if apart else "")
            )
        if s.get("judge_stale_verdicts"):
            notes.append(
                f"{s['judge_stale_verdicts']} judge verdict(s) are stale (they judged another "
                "response text; scored 0): run make-judge-tasks --skip-done and the judge again "
                "(native judge lines with their judge task's response_digest)"
            )
        statuses = s.get("response_statuses") or {}
        if s.get("unanswered_samples") or s.get("missing_responses"):
            notes.append(
                f"{s.get('unanswered_samples', s['missing_responses'])} of "
                f"{s['expected_samples']} samples are unanswered ({statuses.get('missing', 0)} "
                f"without a line, {statuses.get('errored', 0)} errored): not scored"
            )
        if note := as_is_note(statuses, "responses scored as they are"):
            notes.append(note)
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

    def pairing(self) -> Side:
        from datbench_cli.benchmarks.datbench import pairing

        return pairing.SIDE

    def page_data(self, files: RunFiles, images: Images) -> dict[str, Any]:
        from datbench_cli.benchmarks.datbench import page_view

        return page_view.page_data(files, images)
