"""``datbench leaderboard [LABEL=]PATH ...``: many runs ranked, with intervals and
significance letters (the logic lives in :mod:`datbench_cli.leaderboard`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from datbench_cli.cli import tables
from datbench_cli.cli.common import QuietOpt, handle_errors
from datbench_cli.cli.output import Output
from datbench_cli.cli.summary_table import text_table
from datbench_cli.compare.inputs import report_paths
from datbench_cli.files import jsonio
from datbench_cli.files.outputs import guard_outputs, locked_runs
from datbench_cli.report_html import check_target


@handle_errors
def leaderboard(
    paths: Annotated[
        list[str],
        typer.Argument(
            metavar="[LABEL=]PATH",
            help="Runs: run directories or report files, each optionally labelled "
            "(step1000=runs/ckpt-1000); the label defaults to the model or folder name.",
            show_default=False,
        ),
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the leaderboard as one JSON object on stdout.")
    ] = False,
    csv_path: Annotated[
        Path | None,
        typer.Option(
            "--csv",
            metavar="FILE",
            help="Also write a tidy CSV: one row per run, capability and metric (docs/leaderboard.md).",
            show_default=False,
        ),
    ] = None,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html",
            metavar="FILE",
            help="Also write a self-contained page (tables and plots).",
            show_default=False,
        ),
    ] = None,
    trend: Annotated[
        bool,
        typer.Option(
            "--trend",
            help="Labels carry a number (step1000=...): order the runs by it, draw curves, "
            "and name the checkpoints significantly better than every earlier one.",
        ),
    ] = False,
    allow_different_data: Annotated[
        bool,
        typer.Option(
            "--allow-different-data",
            help="Rank runs over different exports, profiles or judges (marked everywhere).",
        ),
    ] = False,
    quiet: QuietOpt = False,
) -> None:
    """Rank runs of one benchmark: headline and per-capability scores with 95% intervals,
    ranks and compact-letter significance groups (paired tests, Holm).

    \b
    Example:
      datbench leaderboard model-a=runs/a model-b=runs/b --html board.html

    Runs that share a letter are not significantly different. Runs over different exports,
    profiles or judges are refused unless --allow-different-data.
    """
    # Here, not at start-up: the leaderboard's statistics import numpy.
    from datbench_cli.leaderboard import board as boards
    from datbench_cli.leaderboard import outputs, runs

    out = Output(quiet)
    # Outputs are checked before any report is read: a refused one costs nothing.
    given = [runs.split_label(argument)[1] for argument in paths]
    inputs = given + report_paths(*given)
    guard_outputs("leaderboard", inputs, csv=csv_path, html=html)
    if html is not None:
        check_target(html, "leaderboard", inputs)  # a file that is not a datbench page: refused
    read, group_by = runs.read_runs(paths)
    differences = runs.check_comparable(read, allow_different_data)
    board = boards.build(
        read,
        group_by,
        differences,
        allow_different_data=allow_different_data,
        trend=trend,
    )
    with locked_runs("leaderboard", [csv_path, html], shared=True):
        if csv_path is not None:
            outputs.write(csv_path, jsonio.utf8_text(outputs.csv_text(board)).encode())
        if html is not None:
            from datbench_cli.leaderboard.page import page

            outputs.write(html, page(board))
    if as_json:
        out.json(jsonio.dumps(board))
        return
    if not quiet:
        tables.show(out, [text_table(outputs.table(board))])
    tables.notes(out, outputs.notes(board))  # a label (a model's name) cannot start a line
    for path, what in ((csv_path, "CSV"), (html, "page")):
        if path is not None:
            out.info(f"{what} written to {path}")
