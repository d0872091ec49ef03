"""``datbench make-judge-tasks``: responses -> judge_tasks.jsonl (judge-mode samples only)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from datbench_cli.benchmarks.datbench import stages as pipeline
from datbench_cli.benchmarks.datbench.capabilities import VISTOOLBENCH
from datbench_cli.cli import vistoolbench
from datbench_cli.cli.common import (
    DirOpt,
    FormatOpt,
    MaxFileMbOpt,
    ModelOpt,
    QuietOpt,
    RequestFormat,
    TemperatureOpt,
    handle_errors,
    max_tokens_opt,
    request_settings,
)
from datbench_cli.cli.output import Output
from datbench_cli.files.rundir import JUDGE_TASKS, RESPONSES, RunDir

DEFAULT_JUDGE_MAX_TOKENS = 512
JudgeMaxTokensOpt = max_tokens_opt(DEFAULT_JUDGE_MAX_TOKENS)


@handle_errors
def make_judge_tasks(
    responses: Annotated[
        Path | None,
        typer.Argument(
            help=f"VLM responses (default: {RESPONSES} in the run directory).", show_default=False
        ),
    ] = None,
    out_path: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help=f"Output file (default: {JUDGE_TASKS} in the run directory).",
            show_default=False,
        ),
    ] = None,
    skip_done: Annotated[
        Path | None,
        typer.Option(
            help="Judge responses so far: judge tasks with a parsed verdict there get no new task.",
            show_default=False,
        ),
    ] = None,
    run_dir: DirOpt = Path("."),
    fmt: FormatOpt = RequestFormat.jsonl,
    model: ModelOpt = None,
    max_tokens: JudgeMaxTokensOpt = None,
    temperature: TemperatureOpt = None,
    max_file_mb: MaxFileMbOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Write one judge request per judge-mode sample that has a response.

    With --format openai, also writes requests/judge_tasks.openai.00001.jsonl (and further
    numbered parts): text-only OpenAI batch requests holding the filled-in judge prompt
    (vistoolbench: the rendered rubric prompt, in JSON output mode).
    """
    out = Output(quiet)
    settings = request_settings(
        fmt,
        model=model,
        max_tokens=max_tokens,
        default_max_tokens=DEFAULT_JUDGE_MAX_TOKENS,
        temperature=temperature,
        max_file_mb=max_file_mb,
    )
    run = RunDir(run_dir)
    manifest = run.read_manifest()
    target = run.output_path(out_path, JUDGE_TASKS)
    if manifest["benchmark"] == VISTOOLBENCH:
        written = vistoolbench.make_judge_tasks(
            out,
            run,
            run.resolve_input(responses, RESPONSES),
            target,
            skip_done=skip_done,
            requests=settings,
        )
    else:
        written = pipeline.make_judge_tasks(
            run,
            run.resolve_input(responses, RESPONSES),
            target,
            skip_done=skip_done,
            requests=settings,
            warn=out.warn,
        )
    if skip_done is not None:
        out.info(f"skipped {written.skipped_done} judge task(s) with a verdict in {skip_done}")
    out.info(f"wrote {written.count} judge task(s) to {target}")
    for path in written.request_files:
        out.info(f"wrote {path}")
