"""``datbench export-tasks``: dataset -> tasks.jsonl + images/ + references.jsonl + datbench.json."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from datbench_cli import export
from datbench_cli.capabilities import (
    DEFAULT_DATBENCH_SOURCE,
    DEFAULT_VISTOOLBENCH_SOURCE,
    VISTOOLBENCH,
    resolve_targets,
)
from datbench_cli.cli import vistoolbench
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
            f"(env {SOURCE_ENV}; default {DEFAULT_DATBENCH_SOURCE}, for vistoolbench "
            f"{DEFAULT_VISTOOLBENCH_SOURCE}).",
            show_default=False,
        ),
    ] = None,
    split: Annotated[str, typer.Option(help="Dataset split.")] = "test",
    limit: Annotated[
        int | None,
        typer.Option(min=1, help="At most N samples per capability (vistoolbench: N tasks)."),
    ] = None,
    turncase: Annotated[
        str | None,
        typer.Option(
            help="vistoolbench only: export only 'single-turn' or 'multi-turn' tasks.",
            show_default=False,
        ),
    ] = None,
    context: Annotated[
        str | None,
        typer.Option(
            help="vistoolbench only: 'golden' (default, the official protocol: each turn's "
            "history holds the earlier prompts with their golden answers, so turns are "
            "independent) or 'model' (empty histories: the runner answers turns in order from "
            "the model's own answers; not comparable with official numbers).",
            show_default=False,
        ),
    ] = None,
    first_image_only: Annotated[
        bool,
        typer.Option(
            "--first-image-only",
            help="vistoolbench only: keep the first image of each turn, as the released "
            "official runner sends.",
        ),
    ] = False,
    run_dir: DirOpt = Path("."),
    quiet: QuietOpt = False,
) -> None:
    """Export inference tasks, images and scoring references into a run directory.

    vistoolbench: one task line per task, one inference unit per turn (answer it under the
    turn's id, `<task id>::<k>`). Official runs used a tool-calling agent (Python image
    processing whose saved images are shown back to the model, a Python interpreter, web
    search, web-page text, historical weather, a calculator), at most 20 tool-calling rounds, a
    system prompt urging crop/zoom/enhance, images as JPEG q85 and temperature 0 (1.0 for
    reasoning models); the final assistant text of each turn is what gets judged.
    """
    out = Output(quiet)
    benchmark, capabilities = resolve_targets(targets)
    run = RunDir(run_dir)
    if benchmark == VISTOOLBENCH:
        vistoolbench.export(
            out,
            run,
            source=source or os.environ.get(SOURCE_ENV) or DEFAULT_VISTOOLBENCH_SOURCE,
            split=split,
            limit=limit,
            turncase=turncase,
            context=context or "golden",
            first_image_only=first_image_only,
        )
        return
    for given, flag in ((turncase, "--turncase"), (context, "--context")):
        if given is not None:
            raise UsageError(f"{flag} applies only to vistoolbench")
    if first_image_only:
        raise UsageError("--first-image-only applies only to vistoolbench")
    chosen = source or os.environ.get(SOURCE_ENV) or DEFAULT_DATBENCH_SOURCE
    out.info(f"loading {', '.join(capabilities)} from {chosen} ...")
    plan = export.plan_export(capabilities, chosen, split, limit)
    with out.progress("exporting", plan.total) as advance:
        manifest = export.export_datbench(plan, run, warn=out.warn, advance=advance)
    counts = manifest["counts"]
    out.info(
        f"exported {counts['samples']} samples ({counts['judge_samples']} judge-mode, "
        f"{counts['images']} images) to {run.root}"
    )
