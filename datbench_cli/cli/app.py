"""The ``datbench`` application: one registration line per command."""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from typing import Annotated

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
    help="Evaluate vision-language models on DatBench: export tasks, build judge tasks, score.",
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
    """Evaluate vision-language models on DatBench: export tasks, build judge tasks, score."""
    quiet_other_libraries()


app.command("export-tasks", cls=DatbenchCommand)(export_tasks)
app.command("make-judge-tasks", cls=DatbenchCommand)(make_judge_tasks)
app.command("score", cls=DatbenchCommand)(score)
app.command("check-judge", cls=DatbenchCommand)(check_judge)
app.command("send", cls=DatbenchCommand)(send)
app.command("view", cls=DatbenchCommand)(view)
app.command("compare", cls=DatbenchCommand)(compare)
app.command("leaderboard", cls=DatbenchCommand)(leaderboard)
app.command("agent", cls=DatbenchCommand)(agent)
app.command("import-responses", cls=DatbenchCommand)(import_responses)


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
