"""``datbench make-judge-tasks``: responses -> judge_tasks.jsonl (judge-mode samples only)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from datbench_cli import benchmarks
from datbench_cli.cli.common import (
    DEFAULT_JUDGE_MAX_TOKENS,
    DirOpt,
    FormatOpt,
    JudgeMaxTokensOpt,
    MaxFileMbOpt,
    MaxTokensFieldOpt,
    ModelOpt,
    QuietOpt,
    RequestFormat,
    TemperatureOpt,
    directory_given,
    events,
    handle_errors,
    request_settings,
    run_directory,
)
from datbench_cli.cli.output import Output
from datbench_cli.files.outputs import output_in_run
from datbench_cli.files.rundir import JUDGE_TASKS, RESPONSES


@handle_errors
def make_judge_tasks(
    responses: Annotated[
        Path | None,
        typer.Argument(
            help=f"VLM responses (default: {RESPONSES} in the run directory), or the run "
            "directory itself (as -d).",
            show_default=False,
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
    max_tokens_field: MaxTokensFieldOpt = None,
    max_file_mb: MaxFileMbOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Write one judge request per judge-mode sample that has a response.

    \b
    Example:
      datbench make-judge-tasks -d run/

    Reads responses.jsonl, writes judge_tasks.jsonl: what your judge answers into
    judge_responses.jsonl. With --format openai, also writes
    requests/judge_tasks.openai.00001.jsonl (and further numbered parts): text-only OpenAI
    batch requests holding the filled-in judge prompt (vistoolbench: the rendered rubric
    prompt, in JSON output mode).
    """
    out = Output(quiet)
    settings = request_settings(
        fmt,
        model=model,
        max_tokens=max_tokens,
        default_max_tokens=DEFAULT_JUDGE_MAX_TOKENS,
        temperature=temperature,
        max_tokens_field=max_tokens_field,
        max_file_mb=max_file_mb,
    )
    run_dir, responses = directory_given(run_dir, responses)
    run = run_directory(run_dir, responses, skip_done)
    bench = benchmarks.of_run(run)
    responses_path = run.resolve_input(responses, RESPONSES)
    target = output_in_run(
        run, out_path, JUDGE_TASKS, "make-judge-tasks", [responses_path, skip_done]
    )
    written = bench.make_judge_tasks(
        run,
        responses_path,
        target,
        skip_done=skip_done,
        requests=settings,
        events=events(out),
    )
    if skip_done is not None:
        out.info(f"skipped {written.skipped_done} judge task(s) with a verdict in {skip_done}")
    out.info(f"wrote {written.count} judge task(s) to {target}")
    for path in written.request_files:
        out.info(f"wrote {path}")
    if settings is not None and not written.count:
        out.info("no judge task left to ask, so no request file was written: nothing to send")
