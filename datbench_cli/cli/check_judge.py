"""``datbench check-judge``: does the verdict parser understand every judge response?"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from datbench_cli import benchmarks
from datbench_cli.cli.common import DirOpt, QuietOpt, directory_given, handle_errors
from datbench_cli.cli.output import Output
from datbench_cli.errors import CheckFailed, InputError, UsageError
from datbench_cli.files.rundir import JUDGE_RESPONSES, RESPONSES, RunDir


@handle_errors
def check_judge(
    judge_responses: Annotated[
        Path | None,
        typer.Argument(
            help=f"Judge responses (default: {JUDGE_RESPONSES} in the run directory), or the "
            "run directory itself (as -d).",
            show_default=False,
        ),
    ] = None,
    responses: Annotated[
        Path | None,
        typer.Option(
            help=f"VLM responses the verdicts must match (default: {RESPONSES} in the run "
            "directory).",
            show_default=False,
        ),
    ] = None,
    benchmark: Annotated[
        str | None,
        typer.Option(
            "--benchmark",
            metavar="NAME",
            help=f"Outside a run directory: whose verdict parser to use "
            f"({', '.join(benchmarks.BENCHMARKS)}; default: told from the judge ids).",
            show_default=False,
        ),
    ] = None,
    run_dir: DirOpt = Path("."),
    quiet: QuietOpt = False,
) -> None:
    """Check that every judge verdict is understood and counts (exit 1 when one does not).

    \b
    Example:
      datbench check-judge -d run/

    In a run directory: account for the verdict of every judge task (true, false, missing,
    unparsed, stale, errored) and for judge lines that match no judge task, failing exactly
    when `score --strict-judge` would.
    Outside one: parse each verdict with the parser of the benchmark the judge ids belong to
    (or --benchmark; exit 1 on unparsed or errored).
    """
    out = Output(quiet)
    run_dir, judge_responses = directory_given(run_dir, judge_responses)
    run = RunDir(run_dir)
    path = run.resolve_input(judge_responses, JUDGE_RESPONSES)
    name = run.benchmark()
    asked = benchmarks.chosen(benchmark) if benchmark is not None else None
    if name is not None:
        bench = benchmarks.named(name, run)
        if asked is not None and asked is not bench:
            raise UsageError(
                f"--benchmark {asked.name}, but {run.root} holds a {bench.name} export",
                hint="drop --benchmark inside a run directory",
            )
        if responses is not None and not responses.exists():
            # Named but absent: never fall back to the judge tasks in its place.
            raise InputError("file not found", responses)
    else:
        bench = asked or benchmarks.for_judge_file(path)
    check = bench.check_judge(
        run if name is not None else None, path, run.resolve_input(responses, RESPONSES)
    )
    for warning in check.warnings:
        out.warn(warning)
    if not quiet:
        out.data(check.line)
    if check.problem:
        raise CheckFailed(check.problem)
