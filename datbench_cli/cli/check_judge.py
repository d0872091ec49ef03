"""``datbench check-judge``: does the verdict parser understand every judge response?"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from datbench_cli.benchmarks.datbench import stages as pipeline
from datbench_cli.benchmarks.datbench.capabilities import VISTOOLBENCH
from datbench_cli.benchmarks.datbench.judge_check import check_judge_file
from datbench_cli.cli import vistoolbench
from datbench_cli.cli.common import DirOpt, QuietOpt, handle_errors
from datbench_cli.cli.output import Output
from datbench_cli.errors import CheckFailed
from datbench_cli.files.rundir import JUDGE_RESPONSES, RESPONSES, RunDir


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
    when any is not usable; outside one, parse each verdict (exit 1 on unparsed or errored)."""
    out = Output(quiet)
    run = RunDir(run_dir)
    path = run.resolve_input(judge_responses, JUDGE_RESPONSES)
    response_path = run.resolve_input(responses, RESPONSES)
    if run.benchmark() == VISTOOLBENCH:
        vistoolbench.check_judge(out, run, path, response_path, quiet)
        return
    if run.benchmark() is None:
        account = check_judge_file(path)
    else:
        run.read_manifest()
        account = pipeline.check_judge(run, path, response_path)
    if not quiet:
        out.data(account.describe())
    if account.failed:
        raise CheckFailed(f"judge verdicts that do not count: {account.problems()}")
