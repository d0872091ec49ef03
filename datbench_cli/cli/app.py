"""The ``datbench`` application: one registration line per command."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Annotated

import typer

from datbench_cli.cli.check_judge import check_judge
from datbench_cli.cli.command import DatbenchCommand, DatbenchGroup, quiet_other_libraries
from datbench_cli.cli.compare import compare
from datbench_cli.cli.export_tasks import export_tasks
from datbench_cli.cli.html_page import optional_value
from datbench_cli.cli.make_judge_tasks import make_judge_tasks
from datbench_cli.cli.score import score
from datbench_cli.cli.send import send
from datbench_cli.cli.view import view
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


def main() -> None:
    """Console-script entry point.

    Ends with ``os._exit`` once every output is written and the standard streams are flushed:
    an Arrow parquet scan that was stopped early (``--limit``, a bad row) keeps an I/O thread
    that needs the GIL to read through the Python file object, and the interpreter's shutdown
    can then wait for it forever. Every file this program writes is closed (and renamed into
    place) before this point, so skipping the interpreter's shutdown loses nothing.
    """
    code: int = 0
    try:
        app(args=optional_value(sys.argv[1:]), prog_name="datbench")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
    os._exit(code)
