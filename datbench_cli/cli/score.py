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
    directory_given,
    events,
    handle_errors,
    run_directory,
)
from datbench_cli.cli.html_page import HTML_DEFAULT, EmbedImagesOpt, page_path
from datbench_cli.cli.output import Output
from datbench_cli.cli.summary_table import text_table
from datbench_cli.cli.tables import notes, show
from datbench_cli.errors import UsageError
from datbench_cli.files import jsonio
from datbench_cli.files.outputs import guard_outputs, locked_runs, output_in_run
from datbench_cli.files.rundir import JUDGE_RESPONSES, REPORT, RESPONSES
from datbench_cli.report_html import check_target, run_page, write_page
from datbench_cli.runtime.budget import DEFAULT_SAMPLE_TIMEOUT


@handle_errors
def score(
    ctx: typer.Context,
    responses: Annotated[
        Path | None,
        typer.Argument(
            help=f"VLM responses (default: {RESPONSES} in the run directory), or the run "
            "directory itself (as -d).",
            show_default=False,
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
            "that matches no judge task, fails the run (exit 1).",
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
    verify_images: Annotated[
        bool,
        typer.Option(
            "--verify-images",
            help="Check every exported image's SHA-256 against the manifest (reads every "
            "image; by default sizes and modification times are compared).",
        ),
    ] = False,
    embed_images: EmbedImagesOpt = False,
    run_dir: DirOpt = Path("."),
    quiet: QuietOpt = False,
) -> None:
    """Score a run's responses and judge verdicts: write report.json, print a summary table.

    \b
    Example:
      datbench score -d run/ --strict-judge --fail-under 0.6

    Exit 1 when a check fails: coverage (unless --allow-missing), --strict-judge, --strict, or
    --fail-under, which gates on the benchmark's headline number (DatBench overall_accuracy,
    VisualToolBench APR). The report is written either way.
    """
    out = Output(quiet)
    threshold = fail_under_threshold(fail_under)
    from datbench_cli.runtime.pool import most_workers, usable_cpus  # the scoring engine's

    if jobs > most_workers():
        raise UsageError(
            f"--jobs {jobs} asks for more than {most_workers()} worker processes, four per "
            f"usable core ({usable_cpus()} here); scoring gains nothing past one per core"
        )
    run_dir, responses = directory_given(run_dir, responses)
    run = run_directory(run_dir, responses, judge_responses)
    page = page_path(html, run.root) if html is not None else None
    responses_path = run.resolve_input(responses, RESPONSES)
    judge_path = (
        judge_responses if judge_responses is not None else run.optional_file(JUDGE_RESPONSES)
    )
    target = output_in_run(run, out_path, REPORT, "score", [responses_path, judge_path])
    guard_outputs("score", [responses_path, judge_path], out=target, html=page)
    if page is not None:
        _check_page_source(target)
    # A shared lock: several scores of one export may run at once, an export may not.
    with (
        run.lock("score", shared=True),
        locked_runs("score", [target, page], shared=True, held=[run.root]),
    ):
        bench = benchmarks.of_run(run)
        options = benchmark_options(ctx, bench, "score")
        if page is not None:
            check_target(page, "score", [responses_path, judge_path])
        request = ScoreRequest(
            responses=responses_path,
            judge_responses=judge_path,
            strict_judge=strict_judge,
            options=options,
            allow_missing=allow_missing,
            fail_under=threshold,
            verify_images=verify_images,
        )
        try:
            report = bench.score(run, request, events(out))
        except KeyboardInterrupt as stop:  # Ctrl-C or SIGTERM: the same kind, what was kept said
            raise type(stop)(
                f"nothing was written ({target} is as it was); scoring starts over when the "
                "same command runs again"
            ) from None
        report.save(target)
        if page is not None:
            try:
                write_page(page, run_page(target, page, embed_images=embed_images))
            except KeyboardInterrupt as stop:  # the new report is kept: say so
                raise type(stop)(
                    f"{target} was written, the page was not ({page} is as it was); "
                    "`datbench view` writes it from the report"
                ) from None
    if as_json:
        out.json(jsonio.dumps(report.summary))
    else:
        show(out, [text_table(bench.summary_table(report))])
        notes(out, bench.summary_notes(report))
        out.info(f"report written to {target}")
        if page is not None:
            out.info(f"page written to {page}")
    # The report records every check; a failed one fails the run after it is written.
    raise_failed(report.summary)


def _check_page_source(target: Path) -> None:
    """``--html`` builds the page from the report file: refuse, before scoring, a report
    written into a device or pipe (``-o /dev/null``, a FIFO), which cannot be read back."""
    if jsonio.is_stream_output(target) and not target.is_file():
        raise UsageError(
            f"--html builds the page from the report file, and -o {target} is a device or "
            "pipe it cannot read back; write the report to a file (then `datbench view` "
            "makes the page from it)"
        )
