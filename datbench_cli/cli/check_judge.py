"""``datbench check-judge``: does the verdict parser understand every judge response?"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from datbench_cli import benchmarks
from datbench_cli.cli.common import DirOpt, QuietOpt, handle_errors
from datbench_cli.cli.output import Output
from datbench_cli.errors import CheckFailed
from datbench_cli.files.rundir import JUDGE_RESPONSES, RESPONSES, RunDir

# Outside a run directory, the verdicts are read as the first benchmark of the table reads them.
DEFAULT_BENCHMARK = next(iter(benchmarks.BENCHMARKS.values()))


@handle_errors
def check_judge(
    judge_responses: Annotated[
        Path | None,
        typer.Argument(
            help=f"Judge responses (default: {JUDGE_RESPONSES} in the run directory).",
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
    run_dir: DirOpt = Path("."),
    quiet: QuietOpt = False,
) -> None:
    """The judge half of `score --strict-judge`: in a run directory, account for the verdict of
    every judge task (true, false, missing, unparsed, stale, errored; unknown ids) and exit 1
    when any does not count; outside one, parse each verdict (exit 1 on unparsed or errored)."""
    out = Output(quiet)
    run = RunDir(run_dir)
    path = run.resolve_input(judge_responses, JUDGE_RESPONSES)
    name = run.benchmark()
    bench = benchmarks.named(name, run.root) if name is not None else DEFAULT_BENCHMARK
    check = bench.check_judge(
        run if name is not None else None, path, run.resolve_input(responses, RESPONSES)
    )
    if not quiet:
        out.data(check.line)
    if check.problem:
        raise CheckFailed(check.problem)
