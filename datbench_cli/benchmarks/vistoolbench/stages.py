"""The VisualToolBench stages over a run directory; the command line calls these.

``export`` writes images, ``tasks.jsonl``, ``references.jsonl``, the OpenAI request files (with
request settings) and, last, the manifest; ``make_judge_tasks`` and ``score`` read only the run
directory (never the dataset or images).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from datbench_cli.batch.requests import JSON_OUTPUT, REQUESTS_DIR, InferenceUnit, RequestSettings
from datbench_cli.batch.run_requests import (
    check_judge_outputs,
    write_judge_requests,
    write_task_requests,
)
from datbench_cli.batch.shards import Shard
from datbench_cli.benchmarks.base import JudgeTasksWritten
from datbench_cli.benchmarks.checks import Check, CheckOptions
from datbench_cli.benchmarks.checks import record as record_checks
from datbench_cli.benchmarks.common import (
    asked_digests,
    changed_note,
    done_judge_ids,
    no_judge_lines,
    record_asked,
)
from datbench_cli.benchmarks.vistoolbench.agent.settings import (
    AGENT_FILE,
    NOT_ISOLATED,
    holds_agent_answers,
    protocol_summary,
)
from datbench_cli.benchmarks.vistoolbench.answers import read_answer_lines
from datbench_cli.benchmarks.vistoolbench.checks import judge_check, judge_counts_line, run_checks
from datbench_cli.benchmarks.vistoolbench.evaluator import (
    VisToolBenchEvaluator,
    check_turncase,
    context_policy_for,
)
from datbench_cli.benchmarks.vistoolbench.judging import (
    JudgeLine,
    cut_replies_note,
    read_judge_lines,
    replaced_note,
)
from datbench_cli.benchmarks.vistoolbench.model import (
    BENCHMARK,
    MULTI_TURN,
    SINGLE_TURN,
    Task,
    manifest_context_policy,
)
from datbench_cli.benchmarks.vistoolbench.records import (
    GOLDEN_HISTORY,
    load_references,
    reference_line,
    task_line,
)
from datbench_cli.benchmarks.vistoolbench.report import VisToolBenchReport
from datbench_cli.benchmarks.vistoolbench.rows import (
    IMAGE_COLUMNS,
    REQUIRED_COLUMNS,
    USED_COLUMNS,
    ImageDirs,
    iter_dataset_rows,
    iter_tasks,
)
from datbench_cli.benchmarks.vistoolbench.tally import Warn, ignore
from datbench_cli.benchmarks.vistoolbench.verdict import parse_vtb_verdict
from datbench_cli.errors import InputError, UsageError
from datbench_cli.files import jsonio
from datbench_cli.files.export_guard import ExportGuard
from datbench_cli.files.images import DatasetFiles
from datbench_cli.files.loading import (
    check_limit,
    dataset_folders,
    load_source_split,
    parquet_rows,
)
from datbench_cli.files.outputs import guard_output, locked_runs, same_file
from datbench_cli.files.provenance import (
    InputScan,
    image_sizes,
    pins,
    report_block,
    row_digest,
    sha256_bytes,
)
from datbench_cli.files.rundir import (
    IMAGES,
    MANIFEST,
    REFERENCES,
    RESPONSES,
    TASKS,
    RunDir,
    sha256_file,
)
from datbench_cli.files.sources import Source, pin_local, resolve_source, streamed_files
from datbench_cli.files.staging import Stage, check_replaceable

__all__ = [
    "check_judge",
    "check_judge_file",
    "score_checked",
    "export",
    "make_judge_tasks",
    "score",
]

Advance = Callable[[int], None]


MODEL_CONTEXT_REQUESTS = (
    "--format openai needs --context golden: with --context model each turn must be sent "
    "after the previous one, with the model's own earlier answers as history, which request "
    "files written in advance cannot hold"
)


def _write_images(
    stage: Stage, task: Task, directory: str, guard: ExportGuard, written: dict[str, str]
) -> list[list[str]]:
    """Stage a task's images byte-for-byte (each path checked first); return each turn's
    paths relative to the run directory."""
    paths = []
    for turn in task.turns:
        turn_paths = []
        for i, blob in enumerate(turn.images):
            name = f"{directory}/turn_{turn.index}_image_{i}.{blob.ext}"
            relative = f"{IMAGES}/{name}"
            guard.check(relative)
            stage.write(relative, blob.data)
            written[relative] = sha256_bytes(blob.data)
            turn_paths.append(relative)
        paths.append(turn_paths)
    return paths


def _without_images(dataset: Any, source: Source, split: str) -> Any:
    """The split again with only the text columns used (images are never read from disk)."""
    names = dataset.column_names
    if names is None:
        return dataset
    columns = [c for c in USED_COLUMNS if c in names and c not in IMAGE_COLUMNS]
    return load_source_split(source, None, split, columns=columns)


def _image_digests(task: Task) -> list[str]:
    return [sha256_bytes(blob.data) for turn in task.turns for blob in turn.images]


def check_export_options(
    turncase: str | None, limit: int | None, context: str, requests: RequestSettings | None
) -> str:
    """Refuse options that cannot work, before anything is touched; the context policy."""
    check_turncase(turncase)
    check_limit(limit)
    context_policy = context_policy_for(context)
    if requests is not None and context_policy != GOLDEN_HISTORY:
        raise UsageError(MODEL_CONTEXT_REQUESTS)
    return context_policy


def export(
    source: str,
    split: str,
    run: RunDir,
    *,
    limit: int | None,
    turncase: str | None,
    context: str,
    first_image_only: bool,
    revision: str | None = None,
    force: bool = False,
    shard: Shard | None = None,
    requests: RequestSettings | None = None,
    no_image: bool = False,
    warn: Warn = ignore,
    advance: Advance | None = None,
) -> dict[str, Any]:
    """Export a VisualToolBench split into ``run``; return the manifest written last.

    ``no_image``: a blind run: every turn without its images (none written; text-only
    requests), references unchanged, so ``datbench compare`` pairs it with a normal run.

    ``shard``: tasks.jsonl, images and request files hold only the shard's tasks (by task id),
    references.jsonl every task, so any shard's run directory scores the concatenated responses
    of all shards. ``requests``: also write ``requests/tasks.openai.NNNNN.jsonl``, one request
    per turn (without it, stale request files are removed). ``revision``: the hub revision to
    load (recorded resolved to its commit). Only files an earlier export wrote are replaced or
    removed; ``force`` allows a non-empty directory that holds no export.
    """
    context_policy = check_export_options(turncase, limit, context, requests)
    check_replaceable(run.path(REQUESTS_DIR))
    check_replaceable(run.path(IMAGES))
    pinned = resolve_source(source, revision)
    files = DatasetFiles.of(dataset_folders(pinned.load_path))
    dataset = load_source_split(pinned, None, split)
    if pinned.how == "local-files" and (data_files := streamed_files(dataset)) is not None:
        # A corrupt data file, or one without a required column, is named before any row is read.
        parquet_rows(data_files, REQUIRED_COLUMNS)
    # Validate every row (rubrics, weights, ids) before anything in the run directory changes;
    # this pass leaves the image columns unread.
    validated = sum(
        1
        for _ in iter_tasks(
            iter_dataset_rows(_without_images(dataset, pinned, split), with_images=False),
            turncase=turncase,
            limit=limit,
        )
    )
    if not validated:  # no run to make
        which = f" of turncase {turncase!r}" if turncase else ""
        raise UsageError(f"{source}: the {split!r} split holds no task{which}: nothing to export")
    tasks = iter_tasks(
        iter_dataset_rows(dataset),
        turncase=turncase,
        limit=limit,
        first_image_only=first_image_only,
        warn=warn,
        files=files,
    )
    pinned = pin_local(pinned, [None], split)
    return ExportGuard.around(
        run.root,
        lambda guard, staged, stage: _export(
            run,
            guard,
            staged,
            stage,
            tasks,
            pinned,
            source,
            split,
            context,
            context_policy,
            first_image_only,
            limit,
            turncase,
            shard,
            requests,
            warn,
            advance,
            no_image=no_image,
        ),
        force=force,
    )


def _export(
    run: RunDir,
    guard: ExportGuard,
    staged: RunDir,
    stage: Stage,
    tasks: Any,
    pinned: Source,
    source: str,
    split: str,
    context: str,
    context_policy: str,
    first_image_only: bool,
    limit: int | None,
    turncase: str | None,
    shard: Shard | None,
    requests: RequestSettings | None,
    warn: Warn,
    advance: Advance | None,
    *,
    no_image: bool = False,
) -> dict[str, Any]:
    dirs = ImageDirs()
    counts = dict.fromkeys(
        ("tasks", "single_turn", "multi_turn", "turns", "rubrics", "images", "max_images_per_turn"),
        0,
    )
    in_shard = dict.fromkeys(("tasks", "turns", "images"), 0)
    written: dict[str, str] = {}
    rows: dict[str, str] = {}
    # Every file goes to the private folder; only when every row was good is the earlier
    # export replaced (a bad image in the last row keeps it intact).
    with (
        jsonio.atomic_writer(staged.path(TASKS)) as tasks_out,
        jsonio.atomic_writer(staged.path(REFERENCES)) as references_out,
    ):
        for task in tasks:
            # Every task takes its image folder name, so names agree across shards.
            directory = dirs.assign(task)
            reference = reference_line(task)
            references_out.write(jsonio.dumps(reference) + b"\n")
            rows[task.id] = row_digest(reference, _image_digests(task))
            per_turn = [0 if no_image else len(turn.images) for turn in task.turns]
            counts["tasks"] += 1
            counts["single_turn"] += task.turncase == SINGLE_TURN
            counts["multi_turn"] += task.turncase == MULTI_TURN
            counts["turns"] += len(task.turns)
            counts["rubrics"] += sum(len(turn.rubrics) for turn in task.turns)
            counts["images"] += sum(per_turn)
            counts["max_images_per_turn"] = max([counts["max_images_per_turn"], *per_turn])
            if advance is not None:
                advance(1)
            if shard is not None and not shard.contains(task.id):
                continue
            images = (
                [[] for _ in task.turns]
                if no_image
                else _write_images(stage, task, directory, guard, written)
            )
            tasks_out.write(jsonio.dumps(task_line(task, images, context_policy)) + b"\n")
            in_shard["tasks"] += 1
            in_shard["turns"] += len(task.turns)
            in_shard["images"] += sum(per_turn)
    # The protocol's user(prompt_k + images_k), as the official runner and the agent send it.
    request_files = write_task_requests(staged, requests, inference_units, run, text_first=True)
    if context_policy != "golden_history":
        warn(
            "--context model: runners must answer turns in order from the model's own earlier "
            "answers; scores are not comparable with official numbers"
        )
    options: dict[str, Any] = {
        "context": context,
        "first_image_only": first_image_only,
        "limit": limit,
        "turncase": turncase,
    }
    if no_image:
        options["no_image"] = True
    if shard is not None:
        options["shard"] = {"index": shard.index, "count": shard.count, **in_shard}
    if requests is not None:
        options["openai_requests"] = {
            **requests.describe(),
            "files": [path.relative_to(staged.root).as_posix() for path in request_files],
        }
    for name in (TASKS, REFERENCES):
        written[name] = sha256_file(staged.path(name))
    for path in request_files:
        written[path.relative_to(staged.root).as_posix()] = sha256_file(path)
    manifest = {
        "benchmark": BENCHMARK,
        "source": source,
        "revision": pinned.describe(),
        "split": split,
        "context_policy": context_policy,
        "counts": counts,
        "options": options,
        **pins(),
        "rows": rows,
        "written": dict(sorted(written.items())),
        "image_sizes": image_sizes(staged.root, written),
    }
    return manifest


def inference_units(task: dict[str, Any]) -> list[InferenceUnit]:
    """One request per turn of a tasks.jsonl line, its golden history as earlier messages."""
    return [
        (turn["id"], turn["prompt"], turn.get("images") or [], turn.get("history") or [])
        for turn in task["turns"]
    ]


def judge_text(line: dict[str, Any]) -> str:
    """A rubric judge task carries its rendered prompt (spec §2.3); it is sent as is."""
    prompt = line.get("judge_prompt")
    return prompt if isinstance(prompt, str) else ""


def _evaluator(run: RunDir, warn: Warn) -> VisToolBenchEvaluator:
    manifest = run.read_manifest()
    if manifest.get("benchmark") != BENCHMARK:
        raise InputError(
            f"this run directory was exported for {manifest.get('benchmark')!r}, not {BENCHMARK!r}",
            run.root,
        )
    policy = manifest_context_policy(manifest, run.path(MANIFEST))
    tasks = load_references(run.path(REFERENCES))
    return VisToolBenchEvaluator.from_tasks(tasks, context_policy=policy, warn=warn)


def make_judge_tasks(
    run: RunDir,
    responses: Path,
    out: Path,
    warn: Warn = ignore,
    *,
    skip_done: Path | None = None,
    requests: RequestSettings | None = None,
) -> JudgeTasksWritten:
    """Write one judge task per rubric of every answered turn.

    ``skip_done``: a judge-response file; judge tasks whose line there ``parse_vtb_verdict``
    reads (met or not met, the line ``score`` would use) get no task. ``requests``: also write
    ``requests/<out stem>.openai.NNNNN.jsonl``, one text-only request per judge task carrying
    the rendered judge prompt unchanged, in JSON output mode (stale ones are removed otherwise).
    Holds the run directory's lock; ``out`` may not be one of the inputs.
    """
    guard_output(out, "make-judge-tasks", [responses, skip_done])
    check_judge_outputs(run, out)
    with run.lock("make-judge-tasks"), locked_runs("make-judge-tasks", [out], held=[run.root]):
        return _make_judge_tasks(run, responses, out, warn, skip_done, requests)


def _make_judge_tasks(
    run: RunDir,
    responses: Path,
    out: Path,
    warn: Warn,
    skip_done: Path | None,
    requests: RequestSettings | None,
) -> JudgeTasksWritten:
    evaluator = _evaluator(run, warn)
    answers = evaluator.collect_answers(read_answer_lines(responses, warn))
    if not answers.by_turn and not answers.errored_turns:
        raise InputError(
            "holds no answer for any turn of this run (responses of another run?); "
            "judge tasks not written",
            responses,
        )
    lines = evaluator.create_judge_tasks(answers)
    done = done_judge_ids(
        skip_done,
        lambda path: evaluator.judged_ids(answers, _judge_lines(run, path, warn)),
        warn,
    )
    kept = [line for line in lines if line["id"] not in done]
    if note := changed_note(record_asked(run, out, kept)):
        warn(note)
    written = JudgeTasksWritten(jsonio.write_jsonl_atomic(out, kept), len(lines) - len(kept))
    written.request_files = write_judge_requests(
        run, out, kept, requests, judge_text, response_format=JSON_OUTPUT
    )
    return written


def _judge_lines(
    run: RunDir,
    path: Path,
    warn: Warn | None = None,
    scan: Callable[[bytes], None] | None = None,
) -> list[JudgeLine]:
    """Judge lines of a file; one without a digest takes the one its judge tasks asked about
    (:func:`~datbench_cli.benchmarks.common.asked_digests`); ``scan`` is given every line
    read."""
    digests = asked_digests(run)
    lines = []
    for line in read_judge_lines(path, warn, scan):
        if line.digest is None:
            line = dataclasses.replace(line, digest=digests.get(line.display_id))
        lines.append(line)
    return lines


def score(
    run: RunDir,
    responses: Path,
    judge_responses: Path | None,
    *,
    strict_judge: bool,
    turncase: str | None,
    warn: Warn = ignore,
    read_warn: Warn | None = None,
    options: dict[str, Any] | None = None,
) -> VisToolBenchReport:
    """The report of a run directory (raises ``StrictJudgeError`` under ``strict_judge``), with
    its ``provenance`` block (``options``: the command's options, recorded there). What reading
    the response files sets aside (a torn last line, unknown keys) goes to ``read_warn``
    (default: ``warn``)."""
    check_turncase(turncase)
    manifest = run.read_manifest()
    reading = warn if read_warn is None else read_warn
    evaluator = _evaluator(run, warn)
    # The response files are read once, each scanned for the provenance as it is read: a pipe
    # (score /dev/stdin) is named and digested like a file.
    scans = {"responses": InputScan(responses, lines=True)}
    answers = evaluator.collect_answers(
        read_answer_lines(responses, reading, scans["responses"].update)
    )
    judge_lines = None
    if judge_responses is not None:
        scans["judge_responses"] = InputScan(judge_responses, lines=True)
        judge_lines = _judge_lines(
            run, judge_responses, warn=reading, scan=scans["judge_responses"].update
        )
    if judge_responses is None:
        warn("no judge responses given: every rubric of an answered turn counts as missing")
    if evaluator.context_policy != "golden_history":
        warn(f"context policy {evaluator.context_policy}: not comparable with official numbers")
    provenance = report_block(
        manifest=manifest,
        manifest_path=run.path(MANIFEST),
        inputs={
            "references": (run.path(REFERENCES), False),
            "responses": (responses, True),
            "judge_responses": (judge_responses, True),
        },
        options=options or {},
        ids=set(),
        warn=warn,
        scanned={label: scan.result() for label, scan in scans.items()},
    )
    report = evaluator.compute_metrics(answers, judge_lines, strict_judge, turncase=turncase)
    report.provenance = provenance
    # The run's own responses however named (an absolute path beside a relative -d too).
    agent = protocol_summary(run.root) if same_file(responses, run.path(RESPONSES)) else None
    if agent is not None and answers.by_turn and not holds_agent_answers(run.root, answers.by_turn):
        warn(
            f"{run.path(AGENT_FILE)} describes an agent run none of whose answers {responses} "
            "holds (replaced by import-responses or send?): summary.agent left out"
        )
        agent = None
    if agent is not None:
        report.summary["agent"] = agent
        if not agent["comparable"]:
            reasons = "; ".join(agent["not_comparable_because"])
            warn(f"agent run not comparable with the official protocol: {reasons}")
        if agent.get("code_isolated") is False:
            warn(NOT_ISOLATED)
    return report


def score_checked(
    run: RunDir,
    responses: Path,
    judge_responses: Path | None,
    options: CheckOptions,
    *,
    turncase: str | None,
    warn: Warn = ignore,
    recorded: dict[str, Any] | None = None,
) -> VisToolBenchReport:
    """``score``: the report with the outcome of every check in ``summary.checks`` (a failed
    check raises nothing; the caller writes the report, then fails) and its provenance."""
    report = score(
        run,
        responses,
        judge_responses,
        strict_judge=False,
        turncase=turncase,
        warn=warn,
        options=recorded,
    )
    record_checks(report.summary, run_checks(report, options))
    return report


def check_judge(run: RunDir, path: Path, responses: Path, warn: Warn) -> tuple[Check, str]:
    """``check-judge`` in a run directory: the judge half of ``score`` (its check and the
    counts line). ``warn`` hears what reading the files set aside (a torn last line, unknown
    keys), as DatBench's does; the coverage warnings of ``score`` are left to ``score``."""
    report = score(run, responses, path, strict_judge=False, turncase=None, read_warn=warn)
    if cut := report.summary["judge"]["truncated_responses"]:  # as DatBench's says it
        warn(cut_replies_note(cut, path))
    if replaced := report.summary["judge"]["duplicate_responses"]:
        warn(replaced_note(replaced))
    return judge_check(report), judge_counts_line(report)


def check_judge_file(path: Path, warn: Warn) -> tuple[dict[str, int], list[str]]:
    """Outside a run directory: parse each judged id's verdict with ``parse_vtb_verdict``:
    counts (``lines``: the judge ids read) and the ids that do not count (unparsed, errored or
    refused by the judge).
    Several lines for one id: the last wins, except that an errored line never replaces an
    answer (as in scoring, and as DatBench's ``check-judge`` reads them)."""
    statuses: dict[str, str] = {}
    replaced = 0  # answered lines a later answered line of their id replaced
    answered: set[str] = set()
    for line in read_judge_lines(path, warn):
        ident = line.display_id
        if line.errored:
            if ident not in answered:
                refused = line.refused or statuses.get(ident) == "refused"
                statuses[ident] = "refused" if refused else "errored"
            continue
        replaced += ident in answered
        answered.add(ident)
        unread = "refused" if line.refused else "unparsed"
        statuses[ident] = parse_vtb_verdict(line.verdict, line.raw) or unread
    if not statuses:
        raise no_judge_lines(path)
    if replaced:
        warn(replaced_note(replaced))
    counts = dict.fromkeys(("met", "not_met", "unparsed", "errored", "refused"), 0)
    for status in statuses.values():
        counts[status] += 1
    unusable = [i for i, status in statuses.items() if status not in ("met", "not_met")]
    return {"lines": len(statuses), **counts}, unusable
