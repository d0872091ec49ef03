"""``datbench export-tasks``: dataset -> tasks.jsonl + images/ + references.jsonl + datbench.json."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from datbench_cli import pipeline
from datbench_cli.capabilities import (
    DEFAULT_DATBENCH_SOURCE,
    VISTOOLBENCH,
    resolve_targets,
)
from datbench_cli.cli.common import DirOpt, QuietOpt, handle_errors
from datbench_cli.cli.output import Output
from datbench_cli.errors import UsageError
from datbench_cli.loading import SOURCE_ENV
from datbench_cli.rundir import RunDir


@handle_errors
def export_tasks(
    targets: Annotated[
        list[str],
        typer.Argument(
            help="Capabilities (chart counting document general grounding math scene spatial "
            "table), 'all', or 'vistoolbench'.",
            show_default=False,
        ),
    ],
    source: Annotated[
        str | None,
        typer.Option(
            help="Hub dataset id or local directory with the hub's layout "
            f"(env {SOURCE_ENV}; default {DEFAULT_DATBENCH_SOURCE}).",
            show_default=False,
        ),
    ] = None,
    split: Annotated[str, typer.Option(help="Dataset split.")] = "test",
    limit: Annotated[
        int | None, typer.Option(min=1, help="At most N samples per capability.")
    ] = None,
    run_dir: DirOpt = Path("."),
    quiet: QuietOpt = False,
) -> None:
    """Export inference tasks, images and scoring references into a run directory."""
    out = Output(quiet)
    benchmark, capabilities = resolve_targets(targets)
    if benchmark == VISTOOLBENCH:
        raise UsageError("vistoolbench export is not available in this build yet")
    chosen = source or os.environ.get(SOURCE_ENV) or DEFAULT_DATBENCH_SOURCE
    run = RunDir(run_dir)
    out.info(f"loading {', '.join(capabilities)} from {chosen} ...")
    plan = pipeline.plan_export(capabilities, chosen, split, limit)
    with out.progress("exporting", plan.total) as advance:
        manifest = pipeline.export_datbench(plan, run, warn=out.warn, advance=advance)
    counts = manifest["counts"]
    out.info(
        f"exported {counts['samples']} samples ({counts['judge_samples']} judge-mode, "
        f"{counts['images']} images) to {run.root}"
    )
