"""VisualToolBench as a :class:`~datbench_cli.benchmarks.base.Benchmark`: the stages behind
each command, its options and its terminal summary."""

from __future__ import annotations

import shlex
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
from datbench_cli.benchmarks.vistoolbench.model import BENCHMARK, DEFAULT_SOURCE
from datbench_cli.files.provenance import score_options
from datbench_cli.files.rundir import REFERENCES, RunDir

if TYPE_CHECKING:
    from datbench_cli.compare.spec import Side
    from datbench_cli.report_html.inputs import Images, RunFiles

_OPTIONS: dict[str, frozenset[str]] = {
    "export-tasks": frozenset({"turncase", "context", "first_image_only"}),
    "score": frozenset({"turncase", "profile"}),
}
_SECTIONS = (
    ("by_turncase", "turncase"),
    ("by_domain", "domain"),
    ("by_eval_focus", "eval focus"),
)


class VisToolBench:
    """ScaleAI/VisualToolBench: multi-turn tasks graded by rubrics (ARS and APR)."""

    name = BENCHMARK
    title = "VisualToolBench"
    default_source = DEFAULT_SOURCE
    has_agent = True  # the official tool loop: benchmarks/vistoolbench/agent
    imports_official = True

    def import_official(self, path: Path, run: RunDir) -> Any:
        """The run's responses from the official runner's result files."""
        from datbench_cli.benchmarks.vistoolbench.official_import import import_official
        from datbench_cli.benchmarks.vistoolbench.records import load_references

        return import_official(path, load_references(run.path(REFERENCES)))

    def array_hint(self, start: bytes, path: Path) -> tuple[str, str] | None:
        """The official runner's results (a JSON array of records with "model_answer"),
        which ``import-responses`` converts."""
        if b'"model_answer"' not in start:
            return None
        return (
            'a JSON array of the official runner\'s results (records with "model_answer"), '
            "not JSON Lines",
            f"convert it with `datbench import-responses {shlex.quote(str(path))} -d RUN`",
        )

    def line_hint(self, line: dict[str, Any]) -> str | None:
        """An official results record given as a line: ``import-responses`` converts it."""
        from datbench_cli.benchmarks.vistoolbench.official_import import official_line_hint

        return official_line_hint(line)

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
        stages.check_export_options(
            options.get("turncase"),
            request.limit,
            options.get("context") or "golden",
            request.requests,
        )
        events.info(f"loading VisualToolBench from {source} ...")
        with (
            run.lock("export-tasks", create=True),
            events.progress("exporting", None, None) as advance,
        ):
            manifest = stages.export(
                source,
                request.split,
                run,
                limit=request.limit,
                turncase=options.get("turncase"),
                context=options.get("context") or "golden",
                first_image_only=bool(options.get("first_image_only")),
                revision=request.revision,
                force=request.force,
                shard=request.shard,
                requests=request.requests,
                no_image=request.no_image,
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
        """Score the run. VisualToolBench has no known reference defects, so the corrected
        profile scores exactly as the reference one; its report says so (``profile``, and
        ``corrections`` with no fixes), and a reference report is unchanged."""
        from datbench_cli.benchmarks.profiles import REFERENCE, profile_option
        from datbench_cli.benchmarks.vistoolbench import stages

        profile = profile_option(request.options)
        options = {k: v for k, v in request.options.items() if k != "profile"}
        if profile != REFERENCE:
            options["profile"] = profile
        checks = CheckOptions(
            strict_judge=request.strict_judge,
            allow_missing=request.allow_missing,
            fail_under=request.fail_under,
        )
        report = stages.score_checked(
            run,
            request.responses,
            request.judge_responses,
            checks,
            turncase=options.get("turncase"),
            warn=events.warn,
            recorded=score_options(
                request.strict_judge,
                {
                    **options,
                    "allow_missing": request.allow_missing,
                    "fail_under": request.fail_under,
                    # Recorded only when given: the image check it selects (docs/provenance.md).
                    **({"verify_images": True} if request.verify_images else {}),
                },
            ),
        )
        if profile != REFERENCE:
            report.summary["profile"] = profile
            report.summary["corrections"] = {}
        return report

    def judge_line_shape(self, line: dict[str, Any]) -> bool:
        """A VisualToolBench judge line names one rubric: ``task_id``, ``turn_index`` and
        ``rubric_id``, or an id ``<task id>::<turn>::<rubric id>`` (a batch line's
        ``custom_id`` may end in ``#<response digest>``)."""
        if "custom_id" not in line and all(
            k in line for k in ("task_id", "turn_index", "rubric_id")
        ):
            return True
        ident = line.get("custom_id", line.get("id"))
        if not isinstance(ident, str):
            return False
        parts = ident.split("#", 1)[0].split("::")
        return len(parts) >= 3 and parts[-2].isdigit() and all(parts)

    def check_judge(self, run: RunDir | None, path: Path, responses: Path) -> JudgeCheck:
        from datbench_cli.benchmarks.vistoolbench import stages
        from datbench_cli.errors import name_ids

        warnings: list[str] = []
        if run is not None:
            run.read_manifest()
            check, line = stages.check_judge(run, path, responses, warnings.append)
            problem = None if check.passed else f"judge verdicts that do not count: {check.detail}"
            return JudgeCheck({}, [], line, problem, warnings)
        counts, unusable = stages.check_judge_file(path, warnings.append)
        return JudgeCheck(
            counts=counts,
            unparsed_ids=unusable,
            line=f"{counts['lines']} verdicts: {counts['met']} met, {counts['not_met']} not "
            f"met, {counts['unparsed']} unparsed, {counts['errored']} errored, "
            f"{counts['refused']} refused by the judge",
            problem=(
                f"unparsed, errored or refused verdicts for: {name_ids(unusable)}"
                if unusable
                else None
            ),
            warnings=warnings,
        )

    # ------------------------------------------------------------------ summary

    def summary_table(self, report: Report) -> SummaryTable:
        """Overall, per turncase, per domain and per eval focus: turns answered (overall and per
        turncase, every turncase of the export), tasks, APR and ARS (with the 95% interval),
        censored tasks and APR/ARS without them."""
        from datbench_cli.benchmarks.common import bar_cell

        summary = report.summary
        bars = summary.get("uncertainty") or {}
        censored = summary.get("censoring") or {}
        responses = summary.get("responses") or {}
        by_turncase = responses.get("by_turncase") or {}

        def answered(turns: dict[str, Any] | None) -> str:
            return f"{turns['answered_turns']}/{turns['turns']}" if turns else ""

        def cells(stats: dict[str, Any], key: str | None, name: str) -> list[str]:
            entry = bars.get("overall") if key is None else (bars.get(key) or {}).get(name)
            done = censored.get("overall") if key is None else (censored.get(key) or {}).get(name)
            entry = entry or {}
            extra = ["-", "-", "-"]
            if done:
                extra = [
                    str(done["censored"]),
                    bar_cell(done["apr_completed"], done["completed"]),
                    bar_cell(done["ars_completed"], done["completed"]),
                ]
            return [
                bar_cell(stats["apr"], stats["n"], entry.get("apr")),
                bar_cell(stats["ars"], stats["n"], entry.get("ars")),
                *extra,
            ]

        n = summary["num_tasks"]
        overall_turns = responses if "turns" in responses else None
        sections = [
            [["overall", answered(overall_turns), str(n), *cells(summary | {"n": n}, None, "")]]
        ]
        empty = {"n": 0, "apr": None, "ars": None}
        for key, label in _SECTIONS:
            groups = dict(summary[key])
            if key == "by_turncase":
                groups.update({name: empty for name in by_turncase if name not in groups})
            sections.append(
                [
                    [
                        f"{label}: {name}",
                        answered(by_turncase.get(name)) if key == "by_turncase" else "",
                        str(stats["n"]),
                        *cells(stats, key, str(name)),
                    ]
                    for name, stats in groups.items()
                ]
            )
        return SummaryTable(
            title=f"VisualToolBench results (%, [95% interval], {summary['context_policy']}"
            + (f"; {summary['profile']} profile)" if "profile" in summary else ")"),
            columns=[
                "group",
                "answered",
                "tasks",
                "APR",
                "ARS",
                "censored",
                "compl. APR",
                "compl. ARS",
            ],
            sections=sections,
            optional=[1, 5, 6, 7],  # dropped last first on a narrow terminal
            legend=[
                (
                    "APR",
                    "[low, high]: the 95% interval (Wilson with continuity correction, per "
                    "task, within 0-100)",
                ),
                (
                    "censored",
                    "censored: tasks with a truncated, empty, refused, errored or missing answer "
                    "or an unparsed/missing/stale verdict",
                ),
                (
                    "compl. APR",
                    "compl.: leaves the censored out (the official APR and ARS keep them)",
                ),
            ],
        )

    def summary_notes(self, report: Report) -> list[str]:
        """Lines under the table: the context policy, the answers judged as they are (empty,
        refused, truncated) and the profile. Gaps, duplicates and unknown ids in the responses
        are said once, by the warnings naming them (the counts stay in
        ``summary.responses``)."""
        from datbench_cli.benchmarks.common import as_is_note

        summary = report.summary
        notes = []
        if summary["context_policy"] != "golden_history":
            notes.append(
                f"context policy {summary['context_policy']}: not comparable with official numbers"
            )
        statuses = (summary.get("responses") or {}).get("statuses") or {}
        if note := as_is_note(statuses, "turn answers judged as they are"):
            notes.append(note)
        if "profile" in summary:
            notes.append(
                f"{summary['profile']} profile: VisualToolBench has no known reference defects, "
                "so no fix applies and every score equals the reference profile's "
                "(docs/known-defects.md)"
            )
        return notes

    def headline(self, report: Report) -> Headline:
        return Headline("APR", report.summary.get("apr"))

    def pairing(self) -> Side:
        from datbench_cli.benchmarks.vistoolbench import pairing

        return pairing.SIDE

    def page_data(self, files: RunFiles, images: Images) -> dict[str, Any]:
        from datbench_cli.benchmarks.vistoolbench import page_view

        return page_view.page_data(files, images)
