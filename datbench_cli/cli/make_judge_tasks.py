"""``datbench make-judge-tasks``: responses -> judge_tasks.jsonl (judge-mode samples only)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from datbench_cli import pipeline
from datbench_cli.capabilities import VISTOOLBENCH
from datbench_cli.cli import vistoolbench
from datbench_cli.cli.common import DirOpt, QuietOpt, handle_errors
from datbench_cli.cli.output import Output
from datbench_cli.rundir import JUDGE_TASKS, RESPONSES, RunDir


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
    run_dir: DirOpt = Path("."),
    quiet: QuietOpt = False,
) -> None:
    """Write one judge request per judge-mode sample that has a response."""
    out = Output(quiet)
    run = RunDir(run_dir)
    manifest = run.read_manifest()
    target = run.resolve_input(out_path, JUDGE_TASKS)
    if manifest["benchmark"] == VISTOOLBENCH:
        vistoolbench.make_judge_tasks(out, run, run.resolve_input(responses, RESPONSES), target)
        return
    count = pipeline.make_judge_tasks(
        run, run.resolve_input(responses, RESPONSES), target, warn=out.warn
    )
    out.info(f"wrote {count} judge task(s) to {target}")
