"""Shared option aliases and the error boundary every command runs inside."""

from __future__ import annotations

import functools
import os
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from datbench_cli.cli.output import error_line
from datbench_cli.errors import DatbenchError

F = TypeVar("F", bound=Callable[..., Any])

DirOpt = Annotated[
    Path,
    typer.Option("--dir", "-d", help="Run directory (created by export-tasks).", show_default=True),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing but errors.")]


def handle_errors(command: F) -> F:
    """Turn known errors into one sentence on stderr and their exit code; Ctrl-C into 130."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except DatbenchError as exc:
            error_line(str(exc))
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            error_line("interrupted; files already written are complete, nothing half-written")
            raise typer.Exit(130) from None
        except (typer.Exit, typer.Abort):
            raise
        except Exception as exc:  # noqa: BLE001 - a bug: say so in one line, details on request
            if os.environ.get("DATBENCH_DEBUG"):
                traceback.print_exc()
            error_line(
                f"internal error ({type(exc).__name__}: {exc}); "
                "rerun with DATBENCH_DEBUG=1 for the traceback and please report it"
            )
            raise typer.Exit(3) from None

    return wrapper  # type: ignore[return-value]
