"""``datbench score``: responses (+ judge responses) -> report.json and a terminal summary."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from datbench_cli import benchmarks
from datbench_cli.benchmarks.base import ScoreRequest
from datbench_cli.benchmarks.checks import fail_under_threshold, raise_failed
from datbench_cli.cli.common import (
    DirOpt,
    QuietOpt,
    benchmark_options,
    events,
    handle_errors,
    run_directory,
)
from datbench_cli.cli.html_page import HTML_DEFAULT, EmbedImagesOpt, page_path
from datbench_cli.cli.output import Output
from datbench_cli.cli.summary_table import render
from datbench_cli.files import jsonio
from datbench_cli.files.rundir import JUDGE_RESPONSES, REPORT, RESPONSES
from datbench_cli.report_html import check_target, run_page, write_page
from datbench_cli.runtime.budget import DEFAULT_SAMPLE_TIMEOUT


@handle_errors
def score(
    ctx: typer.Context,
    responses: Annotated[
        Path | None,
        typer.Argument(
            help=f"VLM responses (default: {RESPONSES} in the run directory).", show_default=False
        ),
    ] = None,
    judge_responses: Annotated[
        Path | None,
        typer.Option(
            help=f"Judge responses (default: {JUDGE_RESPONSES} in the run directory, "
            "when it exists).",
            show_default=False,
        ),
    ] = None,
    strict_judge: Annotated[
        bool,
        typer.Option(
            "--strict-judge",
            help="A missing, unparsed, stale or errored judge verdict, or a judge response "
            "for nothing exported, fails the run (exit 1).",
        ),
    ] = False,
    allow_missing: Annotated[
        bool,
        typer.Option(
            "--allow-missing",
            help="Score a partial run: exported samples without a usable response do not fail "
            "the run (they are still counted in coverage).",
        ),
    ] = False,
    strict: Annotated[
        bool, typer.Option("--strict", help="A scorer error on any sample fails the run (exit 1).")
    ] = False,
    out_path: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help=f"Report file (default: {REPORT} in the run directory).",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the summary as one JSON object on stdout.")
    ] = False,
    fail_under: Annotated[
        float | None,
        typer.Option(
            help="Exit 1 when the headline number is below this fraction in [0, 1] (after "
            "writing the report); never passes on a run that failed coverage."
        ),
    ] = None,
    sample_timeout: Annotated[
        float,
        typer.Option(
            help="Seconds one sample may take before it is a scorer error (0: unbounded)."
        ),
    ] = DEFAULT_SAMPLE_TIMEOUT,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            "-j",
            min=0,
            help="Worker processes (0: every usable core; one for a run under 1,000 samples).",
        ),
    ] = 0,
    profile: Annotated[
        str | None,
        typer.Option(
            help="'reference' (default: the reference's scores, quirks included) or "
            "'corrected' (one named fix per known reference defect; docs/known-defects.md). "
            "VisualToolBench has no known defects: there both give the same scores.",
            show_default=False,
        ),
    ] = None,
    turncase: Annotated[
        str | None,
        typer.Option(
            help="vistoolbench only: score only 'single-turn' or 'multi-turn' tasks (the "
            "official summaries are per turncase).",
            show_default=False,
        ),
    ] = None,
    html: Annotated[
        str | None,
        typer.Option(
            "--html",
            metavar="[FILE]",
            help=f"Also write the HTML page (default FILE: {HTML_DEFAULT} in the run directory).",
            show_default=False,
        ),
    ] = None,
    embed_images: EmbedImagesOpt = False,
    run_dir: DirOpt = Path("."),
    quiet: QuietOpt = False,
) -> None:
    """Score the responses and write the report (--fail-under gates on the benchmark's
    headline number: DatBench overall_accuracy, VisualToolBench APR)."""
    out = Output(quiet)
    threshold = fail_under_threshold(fail_under)
    run = run_directory(run_dir, responses, judge_responses)
    # A shared lock: several scores of one export may run at once, an export may not.
    with run.lock("score", shared=True):
        bench = benchmarks.named(run.read_manifest()["benchmark"], run.root)
        options = benchmark_options(ctx, bench, "score")
        if html is not None:
            check_target(page_path(html, run.root))
        judge_path = judge_responses
        if judge_path is None and run.path(JUDGE_RESPONSES).is_file():
            judge_path = run.path(JUDGE_RESPONSES)
        request = ScoreRequest(
            responses=run.resolve_input(responses, RESPONSES),
            judge_responses=judge_path,
            strict_judge=strict_judge,
            options=options,
            allow_missing=allow_missing,
            fail_under=threshold,
        )
        target = run.output_path(out_path, REPORT, [request.responses, judge_path])
        report = bench.score(run, request, events(out))
        report.save(target)
        if html is not None:
            page = page_path(html, run.root)
            write_page(page, run_page(target, page, embed_images=embed_images))
    if as_json:
        out.data(jsonio.dumps(report.summary).decode())
    else:
        table = bench.summary_table(report)
        out.table(render(table, out.width, out.plain))
        for note in [*table.legend, *bench.summary_notes(report)]:
            out.info(note)
        out.info(f"report written to {target}")
        if html is not None:
            out.info(f"page written to {page_path(html, run.root)}")
    # The report records every check; a failed one fails the run after it is written.
    raise_failed(report.summary)
