"""``datbench view``: the HTML page of an existing report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from datbench_cli.cli.common import DirOpt, QuietOpt, handle_errors, positional_directory
from datbench_cli.cli.html_page import EmbedImagesOpt, page_path
from datbench_cli.cli.output import Output
from datbench_cli.files.outputs import locked_runs
from datbench_cli.files.rundir import REPORT
from datbench_cli.report_html import check_target, run_page, write_page


@handle_errors
def view(
    report_or_run_dir: Annotated[
        Path | None,
        typer.Argument(
            help="A report file or a run directory (default: the -d directory).",
            show_default=False,
        ),
    ] = None,
    out_path: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Page file (default: report.html beside the report).",
            show_default=False,
        ),
    ] = None,
    embed_images: EmbedImagesOpt = False,
    run_dir: DirOpt = Path("."),
    quiet: QuietOpt = False,
) -> None:
    """Write one self-contained HTML page (summary and sample browser) from a report.

    \b
    Example:
      datbench view run/
    """
    out = Output(quiet)
    target = run_dir if report_or_run_dir is None else report_or_run_dir
    if report_or_run_dir is not None and run_dir != Path(".") and target.is_dir():
        positional_directory(run_dir, target)  # two different run directories: an error
    folder = target if target.is_dir() else target.parent
    path = page_path(out_path, folder)
    check_target(path, "view", [target if target.is_file() else target / REPORT])
    with locked_runs("view", [path], shared=True):
        write_page(path, run_page(target, path, embed_images=embed_images))
    out.info(f"page written to {path}")
