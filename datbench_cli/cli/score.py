"""``datbench score``: responses (+ judge responses) -> report.json and a terminal summary."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from datbench_cli.benchmarks.datbench import stages as pipeline
from datbench_cli.benchmarks.datbench.capabilities import VISTOOLBENCH
from datbench_cli.benchmarks.datbench.scoring import ScorerFailed
from datbench_cli.cli import vistoolbench
from datbench_cli.cli.common import DirOpt, QuietOpt, handle_errors
from datbench_cli.cli.output import Output
from datbench_cli.cli.summary_table import summary_notes, summary_table
from datbench_cli.errors import CheckFailed, UsageError
from datbench_cli.files import jsonio
from datbench_cli.files.rundir import JUDGE_RESPONSES, REPORT, RESPONSES, RunDir
from datbench_cli.runtime.budget import DEFAULT_SAMPLE_TIMEOUT, check_sample_timeout


@handle_errors
def score(
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
            "--strict-judge", help="A missing or unparsed judge verdict fails the run (exit 1)."
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
        typer.Option(help="Exit 1 when overall_accuracy is below this (after writing the report)."),
    ] = None,
    sample_timeout: Annotated[
        float,
        typer.Option(
            help="Seconds one sample may take before it is a scorer error (0: unbounded)."
        ),
    ] = DEFAULT_SAMPLE_TIMEOUT,
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", min=0, help="Worker processes (0: every usable core).")
    ] = 0,
    turncase: Annotated[
        str | None,
        typer.Option(
            help="vistoolbench only: score only 'single-turn' or 'multi-turn' tasks (the "
            "official summaries are per turncase).",
            show_default=False,
        ),
    ] = None,
    run_dir: DirOpt = Path("."),
    quiet: QuietOpt = False,
) -> None:
    """Score the responses and write the report (vistoolbench: APR and ARS per group;
    --fail-under gates on APR)."""
    out = Output(quiet)
    run = RunDir(run_dir)
    budget = check_sample_timeout(sample_timeout)
    with run.lock("score", shared=True):
        _score(
            out,
            run,
            responses,
            judge_responses,
            out_path,
            strict_judge,
            strict,
            as_json,
            fail_under,
            budget,
            jobs,
            turncase,
        )


def _score(
    out: Output,
    run: RunDir,
    responses: Path | None,
    judge_responses: Path | None,
    out_path: Path | None,
    strict_judge: bool,
    strict: bool,
    as_json: bool,
    fail_under: float | None,
    sample_timeout: float | None,
    jobs: int,
    turncase: str | None,
) -> None:
    manifest = run.read_manifest()
    judge_path = judge_responses
    if judge_path is None and run.path(JUDGE_RESPONSES).is_file():
        judge_path = run.path(JUDGE_RESPONSES)
    responses_path = run.resolve_input(responses, RESPONSES)
    target = run.output_path(out_path, REPORT, [responses_path, judge_path])
    if manifest["benchmark"] == VISTOOLBENCH:
        vistoolbench.score(
            out,
            run,
            responses_path,
            judge_path,
            target,
            strict_judge=strict_judge,
            turncase=turncase,
            as_json=as_json,
            fail_under=fail_under,
        )
        return
    if turncase is not None:
        raise UsageError("--turncase applies only to vistoolbench run directories")
    try:
        with out.progress("scoring", None, rate_unit="samples") as advance:
            report = pipeline.score_run(
                run,
                responses_path,
                judge_path,
                strict_judge=strict_judge,
                strict=strict,
                sample_timeout=sample_timeout,
                jobs=jobs,
                warn=out.warn,
                progress=advance,
            )
    except (ValueError, ScorerFailed) as exc:
        raise CheckFailed(f"{exc}; no report written") from None
    report.save(target)
    if as_json:
        out.data(jsonio.dumps(report.summary).decode())
    else:
        out.table(summary_table(report))
        for note in summary_notes(report):
            out.info(note)
        out.info(f"report written to {target}")
    overall = report.summary["overall_accuracy"]
    if fail_under is not None and overall < fail_under:
        raise CheckFailed(f"overall_accuracy {overall:.4f} is below --fail-under {fail_under}")
