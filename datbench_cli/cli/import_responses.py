"""``datbench import-responses``: the official VisualToolBench runner's results -> responses.jsonl."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from datbench_cli.benchmarks.runners import import_official_results
from datbench_cli.cli.common import DirOpt, QuietOpt, handle_errors
from datbench_cli.cli.output import Output
from datbench_cli.errors import InputError, UsageError, name_ids
from datbench_cli.files import jsonio
from datbench_cli.files.outputs import locked_runs, output_in_run
from datbench_cli.files.rundir import RESPONSES, RunDir


@handle_errors
def import_responses(
    official: Annotated[
        Path,
        typer.Argument(
            help="A results file of the official scripts (single-turn or multi-turn).",
            show_default=False,
        ),
    ],
    out_path: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help=f"Output (default: {RESPONSES} in the run directory).",
            show_default=False,
        ),
    ] = None,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an existing output file.")
    ] = False,
    run_dir: DirOpt = Path("."),
    quiet: QuietOpt = False,
) -> None:
    """Turn the official runner's answers into responses.jsonl lines, matching tasks by id.

    \b
    Example:
      datbench import-responses results.json -d vtb/
    """
    out = Output(quiet)
    run = RunDir(run_dir)
    target = output_in_run(run, out_path, RESPONSES, "import-responses", [official])
    exists = target.exists() or target.is_symlink()
    if exists and not overwrite and not jsonio.is_stream_output(target):
        raise UsageError(f"{target} exists; pass --overwrite to replace it, or --out")
    with run.lock("import-responses"), locked_runs("import-responses", [target], held=[run.root]):
        _import(out, official, run, target)


def _import(out: Output, official: Path, run: RunDir, target: Path) -> None:
    result = import_official_results(official, run)
    if not result.lines:
        matched = result.records - len(result.unknown_ids)
        why = f"{result.records} record(s) read; results of another run?"
        if not result.records:
            why = "it holds no record: an empty file or array"
        elif matched:
            why = (
                f"its {matched} record(s) for this run's tasks have {len(result.null_answers)} "
                f"null answer(s) and {len(result.extra_turns)} for turns the tasks do not have"
            )
        raise InputError(
            f"gives no answer for any task of this run ({why}); nothing written", official
        )
    for ids, text in (
        (result.unknown_ids, "record(s) match no task of the run and were ignored"),
        (result.duplicate_records, "task(s) have several records: the last one is used"),
        (result.duplicate_turns, "turn(s) appear several times in one record: the last is used"),
        (result.null_answers, "turn(s) have a null answer (missing)"),
        (result.extra_turns, "answer(s) for turns the task does not have were ignored"),
        (result.missing_turns, "turn(s) of imported tasks have no answer"),
        (result.error_answers, "answer(s) are official error texts (judged as is, as officially)"),
    ):
        if ids:
            out.warn(f"{len(ids)} {text}: {name_ids(ids)}")
    if result.absent_tasks:
        out.warn(
            f"{len(result.absent_tasks)} task(s) of the run are in no record, so their "
            f"{result.absent_turns} turn(s) have no answer: {name_ids(result.absent_tasks)}"
        )
    jsonio.write_jsonl_atomic(target, result.lines)
    out.info(
        f"{result.records} record(s) read; {len(result.lines)} turn answer(s) written to {target}"
    )
