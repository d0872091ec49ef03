"""The ``datbench`` application: one registration line per command."""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from collections.abc import Callable
from typing import Annotated, Any

import typer

from datbench_cli.cli.agent import agent
from datbench_cli.cli.check_judge import check_judge
from datbench_cli.cli.command import DatbenchCommand, DatbenchGroup, quiet_other_libraries
from datbench_cli.cli.compare import compare
from datbench_cli.cli.export_tasks import export_tasks
from datbench_cli.cli.html_page import optional_value
from datbench_cli.cli.import_responses import import_responses
from datbench_cli.cli.leaderboard import leaderboard
from datbench_cli.cli.make_judge_tasks import make_judge_tasks
from datbench_cli.cli.score import score
from datbench_cli.cli.send import send
from datbench_cli.cli.view import view
from datbench_cli.files.loading import parquet_streamed
from datbench_cli.version import __version__

app = typer.Typer(
    name="datbench",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    cls=DatbenchGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"datbench {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """Evaluate vision-language models on DatBench and VisualToolBench.

    Each command is one stage of a file-based pipeline over a run directory, listed below in
    the order you run them: your model answers after export-tasks (or send does), your judge
    after make-judge-tasks (or send does).

    \b
    Example, on the bundled sample data:
      datbench export-tasks all --source sample_data/datbench -d run/
      cp sample_data/datbench/responses.jsonl run/        # your model
      datbench make-judge-tasks -d run/
      cp sample_data/datbench/judge_responses.jsonl run/  # your judge
      datbench score -d run/ --html

    `datbench COMMAND --help` shows what a command does, an example and its options.
    """
    quiet_other_libraries()


# The stages in the order they are run (`datbench --help` lists them so), each with the one
# line `datbench --help` shows for it, whole.
STAGES: list[tuple[str, Callable[..., Any], str]] = [
    ("export-tasks", export_tasks, "1. Export a benchmark's tasks, images and references."),
    ("send", send, "2. Answer the tasks (or judge tasks) with an OpenAI-compatible server."),
    ("agent", agent, "2. VisualToolBench: answer every turn with the official tool loop."),
    ("import-responses", import_responses, "2. Import the official runner's answers."),
    ("make-judge-tasks", make_judge_tasks, "3. Write the judge requests for judge-mode samples."),
    ("check-judge", check_judge, "4. Check that every judge verdict is understood."),
    ("score", score, "5. Score the run: report.json and a summary table."),
    ("view", view, "6. Write the HTML page of a report."),
    ("compare", compare, "7. Compare two runs sample by sample, beyond noise."),
    ("leaderboard", leaderboard, "8. Rank many runs with intervals and significance groups."),
]
for name, function, summary in STAGES:
    app.command(name, cls=DatbenchCommand, short_help=summary)(function)


def main() -> None:
    """Run the program; ends with ``SystemExit`` like any command-line app, so a program that
    calls it (tests, ``coverage run``, an embedding tool) keeps its ``atexit`` handlers."""
    app(args=optional_value(sys.argv[1:]), prog_name="datbench")


def console_main() -> None:
    """Console-script entry point (``datbench``, ``python -m datbench_cli``).

    After a streaming parquet scan, ends with ``os._exit`` once every output is written and the
    standard streams are flushed: an Arrow scan that was stopped early (``--limit``, a bad row)
    keeps an I/O thread that needs the GIL to read through the Python file object, and the
    interpreter's shutdown can then wait for it forever (``tests/cli/test_clean_exit.py``).
    Every file this program writes is closed (and renamed into place) before this point, so
    skipping the shutdown loses nothing. Without such a scan the process exits normally.
    """
    try:
        main()
        code: int = 0
    except SystemExit as exc:
        if not parquet_streamed():
            raise
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    except BaseException:
        if not parquet_streamed():
            raise
        traceback.print_exc()
        code = 1
    if not parquet_streamed():
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
