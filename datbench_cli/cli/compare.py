"""``datbench compare A B --html FILE``: the comparison page of two runs.

Interim: the paired statistics (``datbench compare``'s tables) come from branch stats-compare;
until it lands this command writes the page from the two reports joined by id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from datbench_cli.cli.common import QuietOpt, handle_errors
from datbench_cli.cli.html_page import EmbedImagesOpt
from datbench_cli.cli.output import Output
from datbench_cli.report_html import check_target, compare_page, write_page


@handle_errors
def compare(
    a: Annotated[
        Path,
        typer.Argument(
            help="Run A (the baseline): report file or run directory.", show_default=False
        ),
    ],
    b: Annotated[
        Path,
        typer.Argument(
            help="Run B (the candidate): report file or run directory.", show_default=False
        ),
    ],
    html: Annotated[
        Path,
        typer.Option("--html", help="Write the comparison page to FILE.", show_default=False),
    ],
    embed_images: EmbedImagesOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Compare two runs: one HTML page with both runs' numbers and their samples side by side."""
    out = Output(quiet)
    check_target(html)
    write_page(html, compare_page(a, b, html, embed_images=embed_images))
    out.info(f"page written to {html}")
