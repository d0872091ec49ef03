"""The ``datbench`` application: one registration line per command."""

from __future__ import annotations

from typing import Annotated

import typer

from datbench_cli import __version__
from datbench_cli.cli.check_judge import check_judge
from datbench_cli.cli.export_tasks import export_tasks
from datbench_cli.cli.make_judge_tasks import make_judge_tasks
from datbench_cli.cli.score import score
from datbench_cli.cli.send import send

app = typer.Typer(
    name="datbench",
    help="Evaluate vision-language models on DatBench: export tasks, build judge tasks, score.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
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


app.command("export-tasks")(export_tasks)
app.command("make-judge-tasks")(make_judge_tasks)
app.command("score")(score)
app.command("check-judge")(check_judge)
app.command("send")(send)


def main() -> None:
    """Console-script entry point."""
    app(prog_name="datbench")
