"""``datbench check-judge``: does the verdict parser understand every judge response?"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from datbench_cli.benchmarks.datbench.capabilities import VISTOOLBENCH
from datbench_cli.benchmarks.datbench.evaluator import name_ids
from datbench_cli.benchmarks.datbench.judge_check import check_judge_file
from datbench_cli.cli import vistoolbench
from datbench_cli.cli.common import DirOpt, QuietOpt, handle_errors
from datbench_cli.cli.output import Output
from datbench_cli.errors import CheckFailed
from datbench_cli.files.rundir import JUDGE_RESPONSES, RunDir


@handle_errors
def check_judge(
    judge_responses: Annotated[
        Path | None,
        typer.Argument(
            help=f"Judge responses (default: {JUDGE_RESPONSES} in the run directory).",
            show_default=False,
        ),
    ] = None,
    run_dir: DirOpt = Path("."),
    quiet: QuietOpt = False,
) -> None:
    """Count true, false and unparsed verdicts; exit 1 when any is unparsed."""
    out = Output(quiet)
    run = RunDir(run_dir)
    path = run.resolve_input(judge_responses, JUDGE_RESPONSES)
    if run.benchmark() == VISTOOLBENCH:
        vistoolbench.check_judge(out, path, quiet)
        return
    counts = check_judge_file(path)
    if not quiet:
        out.data(
            f"{counts.total} verdicts: {counts.true} true, {counts.false} false, "
            f"{len(counts.unparsed_ids)} unparsed"
        )
    if counts.unparsed_ids:
        raise CheckFailed(f"unparsed verdicts for: {name_ids(counts.unparsed_ids)}")
