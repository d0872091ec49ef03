"""The VisualToolBench branch of each command: thin calls into ``datbench_cli.benchmarks.vistoolbench``.

The command modules dispatch here on the target (``export-tasks vistoolbench``) or on the run
directory manifest's ``benchmark``.
"""

from __future__ import annotations

from pathlib import Path

from datbench_cli.batch.requests import RequestSettings
from datbench_cli.batch.shards import Shard
from datbench_cli.benchmarks.datbench.evaluator import name_ids
from datbench_cli.benchmarks.datbench.stages import JudgeTasksWritten
from datbench_cli.benchmarks.vistoolbench import stages as pipeline
from datbench_cli.cli.output import Output
from datbench_cli.errors import CheckFailed
from datbench_cli.files import jsonio
from datbench_cli.files.rundir import RunDir


def export(
    out: Output,
    run: RunDir,
    *,
    source: str,
    split: str,
    limit: int | None,
    turncase: str | None,
    context: str,
    first_image_only: bool,
    shard: Shard | None = None,
    requests: RequestSettings | None = None,
    no_image: bool = False,
) -> None:
    """``export-tasks vistoolbench``."""
    out.info(f"loading VisualToolBench from {source} ...")
    with out.progress("exporting", None) as advance:
        manifest = pipeline.export(
            source,
            split,
            run,
            limit=limit,
            turncase=turncase,
            context=context,
            first_image_only=first_image_only,
            shard=shard,
            requests=requests,
            no_image=no_image,
            warn=out.warn,
            advance=advance,
        )
    counts, options = manifest["counts"], manifest["options"]
    out.info(
        f"exported {counts['tasks']} tasks ({counts['single_turn']} single-turn, "
        f"{counts['multi_turn']} multi-turn; {counts['turns']} turns, {counts['rubrics']} "
        f"rubrics, {counts['images']} images; context {manifest['context_policy']}) to {run.root}"
    )
    if "shard" in options:
        part = options["shard"]
        out.info(
            f"shard {part['index']} of {part['count']}: {part['tasks']} task(s) "
            f"({part['turns']} turns, {part['images']} images) in tasks.jsonl; "
            "references.jsonl holds all tasks"
        )
    files = options.get("openai_requests", {}).get("files", [])
    for name in files:
        out.info(f"wrote {run.root / name}")
    if files and counts["max_images_per_turn"] > 1:
        out.info(
            f"turns carry up to {counts['max_images_per_turn']} images: start vLLM with "
            f"--limit-mm-per-prompt '{{\"image\": {counts['max_images_per_turn']}}}'"
        )


def make_judge_tasks(
    out: Output,
    run: RunDir,
    responses: Path,
    target: Path,
    *,
    skip_done: Path | None = None,
    requests: RequestSettings | None = None,
) -> JudgeTasksWritten:
    """``make-judge-tasks`` in a VisualToolBench run directory (the caller reports counts)."""
    return pipeline.make_judge_tasks(
        run, responses, target, out.warn, skip_done=skip_done, requests=requests
    )


def score(
    out: Output,
    run: RunDir,
    responses: Path,
    judge_responses: Path | None,
    target: Path,
    *,
    strict_judge: bool,
    turncase: str | None,
    as_json: bool,
    fail_under: float | None,
) -> None:
    """``score`` in a VisualToolBench run directory; ``--fail-under`` gates on APR."""
    report = pipeline.score(
        run,
        responses,
        judge_responses,
        strict_judge=strict_judge,
        turncase=turncase,
        warn=out.warn,
    )
    jsonio.write_bytes_atomic(target, jsonio.dumps_pretty(report) + b"\n")
    if as_json:
        out.data(jsonio.dumps(report["summary"]).decode())
    else:
        out.table(pipeline.summary_table(report))
        for note in pipeline.summary_notes(report):
            out.info(note)
        out.info(f"report written to {target}")
    apr = report["summary"]["apr"]
    if fail_under is not None and apr < fail_under:
        raise CheckFailed(f"APR {apr:.4f} is below --fail-under {fail_under}")


def check_judge(out: Output, path: Path, quiet: bool) -> None:
    """``check-judge`` in a VisualToolBench run directory (met / not met / unparsed)."""
    counts, unparsed = pipeline.check_judge(path)
    if not quiet:
        out.data(
            f"{counts['lines']} verdicts: {counts['met']} met, {counts['not_met']} not met, "
            f"{counts['unparsed']} unparsed"
        )
    if unparsed:
        raise CheckFailed(f"unparsed verdicts for: {name_ids(unparsed)}")
