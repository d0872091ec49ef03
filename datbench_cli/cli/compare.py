"""``datbench compare A B``: is run B better or worse than run A, beyond noise?"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from datbench_cli import stats_defaults as stats
from datbench_cli.cli.common import QuietOpt, handle_errors
from datbench_cli.cli.compare_table import comparison_tables
from datbench_cli.cli.html_page import EmbedImagesOpt
from datbench_cli.cli.output import Output
from datbench_cli.cli.tables import notes, show
from datbench_cli.compare.inputs import compare_inputs
from datbench_cli.compare.notes import comparison_notes
from datbench_cli.errors import CheckFailed
from datbench_cli.files import jsonio
from datbench_cli.files.outputs import guard_outputs, locked_runs
from datbench_cli.report_html import check_target, compare_page, write_page


@handle_errors
def compare(
    run_a: Annotated[
        Path,
        typer.Argument(
            metavar="A",
            help="Run A (the baseline): report file or run directory.",
            show_default=False,
        ),
    ],
    run_b: Annotated[
        Path,
        typer.Argument(
            metavar="B",
            help="Run B (the candidate): report file or run directory.",
            show_default=False,
        ),
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the comparison as one JSON object on stdout.")
    ] = False,
    out_path: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Also write the comparison JSON to this file.", show_default=False
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option(min=0, help="Seed of the paired bootstrap.")
    ] = stats.DEFAULT_SEED,
    resamples: Annotated[
        int,
        typer.Option(min=1, max=stats.MAX_RESAMPLES, help="Paired-bootstrap resamples."),
    ] = stats.DEFAULT_RESAMPLES,
    allow_different_data: Annotated[
        bool,
        typer.Option(
            "--allow-different-data",
            help="Compare runs scored on different exports (manifest digest or revision).",
        ),
    ] = False,
    fail_if_worse: Annotated[
        float | None,
        typer.Option(
            "--fail-if-worse",
            metavar="MARGIN",
            help="Exit 1 when B is worse than A beyond MARGIN (a fraction: 0.02 = 2 points): "
            "an upper 95% bound of B - A below -MARGIN in a gated row (overall and, where "
            "the benchmark has them, each capability); the rule is printed.",
            show_default=False,
        ),
    ] = None,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html",
            metavar="FILE",
            help="Also write the comparison page (both runs' samples side by side) to FILE.",
            show_default=False,
        ),
    ] = None,
    embed_images: EmbedImagesOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Compare two runs sample by sample: is B better or worse than A, beyond noise?

    \b
    Example:
      datbench compare run-a/ run-b/ --fail-if-worse 0.02

    Paired differences with bootstrap intervals, McNemar's exact test and flips,
    Holm-adjusted p-values, per capability and per dataset.
    """
    # Here, not at start-up: the comparison's statistics import numpy.
    from datbench_cli.compare.comparison import compare as compare_runs
    from datbench_cli.compare.comparison import gate

    out = Output(quiet)
    inputs = compare_inputs(run_a, run_b)
    guard_outputs("compare", inputs, out=out_path, html=html)
    if html is not None:
        check_target(html, "compare", inputs)
    comparison = compare_runs(
        run_a, run_b, seed=seed, resamples=resamples, allow_different_data=allow_different_data
    )
    if fail_if_worse is not None:
        comparison["gate"] = gate(comparison, fail_if_worse)
    with locked_runs("compare", [out_path, html], shared=True):
        if out_path is not None:
            body = jsonio.dumps_pretty(comparison) + b"\n"
            jsonio.write_bytes_atomic(jsonio.user_output(out_path), body)
        if html is not None:
            page = compare_page(run_a, run_b, html, comparison, embed_images=embed_images)
            write_page(html, page)
    if as_json:
        out.json(jsonio.dumps(comparison))
    else:
        show(out, comparison_tables(comparison))
        notes(out, comparison_notes(comparison))
        if html is not None:
            out.info(f"page written to {html}")
    verdict = comparison.get("gate")
    if verdict is not None and verdict["failed"]:
        raise CheckFailed(
            f"B is worse than A beyond the margin of {verdict['margin']:g} in "
            f"{len(verdict['failing'])} row(s)"
        )
