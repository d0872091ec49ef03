"""``datbench export-tasks``: dataset -> tasks.jsonl + images/ + references.jsonl + datbench.json."""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from datbench_cli import benchmarks
from datbench_cli.batch.requests import IMAGE_MODES
from datbench_cli.batch.shards import Shard
from datbench_cli.benchmarks.base import ExportRequest
from datbench_cli.cli.common import (
    DEFAULT_TASK_MAX_TOKENS,
    DirOpt,
    FormatOpt,
    MaxFileMbOpt,
    MaxTokensFieldOpt,
    ModelOpt,
    NumShardsOpt,
    QuietOpt,
    RequestFormat,
    ShardIndexOpt,
    TaskMaxTokensOpt,
    TemperatureOpt,
    benchmark_options,
    events,
    handle_errors,
    request_settings,
)
from datbench_cli.cli.output import Output
from datbench_cli.files.rundir import RunDir
from datbench_cli.files.sources import SOURCE_ENV

_OPENAI = "OpenAI requests"


class ImageMode(StrEnum):
    """``--image-mode``: how request files carry images (one member per request image mode)."""

    data_url = "data-url"
    file = "file"
    url = "url"


if tuple(ImageMode) != IMAGE_MODES:  # pragma: no cover - a new mode needs a member here
    raise RuntimeError("ImageMode and IMAGE_MODES disagree")


@handle_errors
def export_tasks(
    ctx: typer.Context,
    targets: Annotated[
        list[str],
        typer.Argument(
            help=f"What to export: {benchmarks.targets_help()}.",
            show_default=False,
        ),
    ],
    source: Annotated[
        str | None,
        typer.Option(
            help="Hub dataset id or local directory with the hub's layout "
            f"(env {SOURCE_ENV}; default: "
            + "; ".join(f"{b.name} {b.default_source}" for b in benchmarks.BENCHMARKS.values())
            + ").",
            show_default=False,
        ),
    ] = None,
    revision: Annotated[
        str | None,
        typer.Option(
            help="Hub sources: the branch, tag or commit to load (default: the default branch); "
            "the manifest records the commit it resolved to.",
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
            "the model's own answers; not comparable with official numbers; not with "
            "--format openai).",
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
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Export into a non-empty directory that holds no export (files already there "
            "are never deleted or overwritten).",
        ),
    ] = False,
    fmt: FormatOpt = RequestFormat.jsonl,
    model: ModelOpt = None,
    max_tokens: TaskMaxTokensOpt = None,
    temperature: TemperatureOpt = None,
    max_tokens_field: MaxTokensFieldOpt = None,
    image_mode: Annotated[
        ImageMode | None,
        typer.Option(
            help="How requests carry images: data-url (inlined base64), file (absolute file:// "
            "URLs), url (--image-base-url + the image's path in the run directory) "
            "(default data-url).",
            rich_help_panel=_OPENAI,
            show_default=False,
        ),
    ] = None,
    image_base_url: Annotated[
        str | None,
        typer.Option(
            help="URL where the run directory is served, for --image-mode url.",
            rich_help_panel=_OPENAI,
            show_default=False,
        ),
    ] = None,
    max_file_mb: MaxFileMbOpt = None,
    no_image: Annotated[
        bool,
        typer.Option(
            "--no-image",
            help="A blind run: the same tasks without their images (text-only requests); "
            "`datbench compare BLIND RUN` is then the vision delta.",
        ),
    ] = False,
    num_shards: NumShardsOpt = None,
    shard_index: ShardIndexOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Export a benchmark's tasks, images and scoring references into a run directory.

    \b
    Example:
      datbench export-tasks all --source sample_data/datbench -d run/

    Writes tasks.jsonl (what your model answers), images/, references.jsonl (what score reads)
    and datbench.json (the manifest). TARGETS are capabilities, `all`, or `vistoolbench`: one
    task line per task, answered turn by turn under `<task id>::<k>` (`datbench agent` answers
    them with the official tool loop).

    With --format openai, also writes requests/tasks.openai.00001.jsonl (and further numbered
    parts): OpenAI batch request lines for vLLM run-batch, a hosted batch API or `datbench send`
    (vistoolbench: one request per turn, the golden history as earlier messages).
    """
    out = Output(quiet)
    bench, selection = benchmarks.for_targets(targets)
    options = benchmark_options(ctx, bench, "export-tasks")
    shard = Shard.from_options(num_shards, shard_index)
    settings = request_settings(
        fmt,
        model=model,
        max_tokens=max_tokens,
        default_max_tokens=DEFAULT_TASK_MAX_TOKENS,
        temperature=temperature,
        max_tokens_field=max_tokens_field,
        max_file_mb=max_file_mb,
        image_mode=image_mode.value if image_mode is not None else None,
        image_base_url=image_base_url,
    )
    run = RunDir(run_dir)
    from datbench_cli.files.export_guard import ExportGuard
    from datbench_cli.files.locking import settle

    # Checked again when the export is written; said now, before the dataset is loaded (from
    # the hub: a download of minutes), not after it. What a killed export left is settled
    # first, as the export itself does.
    if run.root.is_dir():
        settle(run.root)
    ExportGuard.begin(run.root, force=force)
    request = ExportRequest(
        selection=selection,
        source=source or os.environ.get(SOURCE_ENV) or None,
        split=split,
        limit=limit,
        shard=shard,
        requests=settings,
        options=options,
        revision=revision,
        force=force,
        no_image=no_image,
    )
    manifest = bench.export(run, request, events(out))
    replaced = manifest.get("replaced") or {}
    if replaced.get("changed_samples"):
        out.warn(
            f"this export replaced an earlier one, and {replaced['changed_samples']} of the "
            "samples both hold changed (question, answer, image, ...): answers made for the "
            "earlier one are to other tasks; answer those again (score names the files made "
            "before this export)"
        )
    request_files = manifest["options"].get("openai_requests", {}).get("files", [])
    for name in request_files:
        out.info(f"wrote {run.root / name}")
    if settings is not None and not request_files:  # a shard, or a --limit, with no task
        out.info("no task was exported, so no request file was written: nothing to send")
