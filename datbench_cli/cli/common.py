"""Shared option aliases and the error boundary every command runs inside."""

from __future__ import annotations

import functools
import math
import os
import sys
import traceback
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from datbench_cli.batch.requests import DEFAULT_MAX_FILE_MB, MB, RequestSettings
from datbench_cli.benchmarks import BENCHMARKS, command_options
from datbench_cli.benchmarks.base import Benchmark, Events
from datbench_cli.cli.output import Output, error_line
from datbench_cli.errors import DatbenchError, InputError, UsageError
from datbench_cli.files.rundir import MANIFEST, RunDir
from datbench_cli.runtime import interrupt

F = TypeVar("F", bound=Callable[..., Any])

DirOpt = Annotated[
    Path,
    typer.Option("--dir", "-d", help="Run directory (created by export-tasks).", show_default=True),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing but errors.")]


class RequestFormat(StrEnum):
    """Which request files a stage writes besides its JSONL tasks."""

    jsonl = "jsonl"
    openai = "openai"


_OPENAI = "OpenAI requests"
FormatOpt = Annotated[
    RequestFormat,
    typer.Option(
        "--format",
        help="'openai' also writes OpenAI batch request files (requests/*.openai.NNNNN.jsonl).",
        rich_help_panel=_OPENAI,
    ),
]
ModelOpt = Annotated[
    str | None,
    typer.Option(
        help="Model name put in each request (needed with --format openai).",
        rich_help_panel=_OPENAI,
        show_default=False,
    ),
]
NO_TEMPERATURE = "none"


def _temperature(value: str | None) -> str | None:
    if value is None or value.strip().lower() == NO_TEMPERATURE:
        return value if value is None else NO_TEMPERATURE
    try:
        number = float(value)
    except ValueError:
        raise typer.BadParameter(f"{value!r} is neither a number nor 'none'") from None
    if not 0 <= number <= 2:
        raise typer.BadParameter(f"{value} is not between 0 and 2")
    return value


TemperatureOpt = Annotated[
    str | None,
    typer.Option(
        callback=_temperature,
        metavar="FLOAT|none",
        help="Sampling temperature of each request (default 0); 'none' leaves it out (OpenAI's "
        "reasoning models reject it).",
        rich_help_panel=_OPENAI,
        show_default=False,
    ),
]


class MaxTokensField(StrEnum):
    """The request field carrying the token limit."""

    max_tokens = "max_tokens"
    max_completion_tokens = "max_completion_tokens"


MaxTokensFieldOpt = Annotated[
    MaxTokensField | None,
    typer.Option(
        help="Body field carrying --max-tokens (default max_tokens; OpenAI's reasoning models "
        "take max_completion_tokens).",
        rich_help_panel=_OPENAI,
        show_default=False,
    ),
]
MaxFileMbOpt = Annotated[
    float | None,
    typer.Option(
        "--max-file-mb",
        help=f"Largest request part file, in MB of 10^6 bytes (default {DEFAULT_MAX_FILE_MB}).",
        rich_help_panel=_OPENAI,
        show_default=False,
    ),
]
_SHARDS = "Shards"
NumShardsOpt = Annotated[
    int | None,
    typer.Option(
        metavar="K",
        help="Split the tasks into K shards (by a stable hash of the id).",
        rich_help_panel=_SHARDS,
        show_default=False,
    ),
]
ShardIndexOpt = Annotated[
    int | None,
    typer.Option(
        metavar="I",
        help="Which shard (0 .. K-1) this export holds.",
        rich_help_panel=_SHARDS,
        show_default=False,
    ),
]


DEFAULT_TASK_MAX_TOKENS = 2048
DEFAULT_JUDGE_MAX_TOKENS = 512
TaskMaxTokensOpt = Annotated[
    int | None,
    typer.Option(
        min=1,
        help=f"max_tokens of each request (default {DEFAULT_TASK_MAX_TOKENS}).",
        rich_help_panel=_OPENAI,
        show_default=False,
    ),
]
JudgeMaxTokensOpt = Annotated[
    int | None,
    typer.Option(
        min=1,
        help=f"max_tokens of each request (default {DEFAULT_JUDGE_MAX_TOKENS}).",
        rich_help_panel=_OPENAI,
        show_default=False,
    ),
]


def request_settings(
    fmt: RequestFormat,
    *,
    model: str | None,
    max_tokens: int | None,
    default_max_tokens: int,
    temperature: str | float | None,
    max_file_mb: float | None,
    max_tokens_field: MaxTokensField | None = None,
    **images: Any,
) -> RequestSettings | None:
    """The OpenAI request settings from the options; refuses request options without
    ``--format openai``. ``temperature`` is a number, ``"none"`` (left out) or ``None`` (0)."""
    given = {
        "--model": model,
        "--max-tokens": max_tokens,
        "--max-tokens-field": max_tokens_field,
        "--temperature": temperature,
        "--max-file-mb": max_file_mb,
    }
    given.update({"--" + k.replace("_", "-"): v for k, v in images.items()})
    if fmt is not RequestFormat.openai:
        used = [name for name, value in given.items() if value is not None]
        if used:
            raise UsageError(f"{', '.join(used)} only apply with --format openai")
        return None
    if max_file_mb is not None and not math.isfinite(max_file_mb):
        raise UsageError(f"--max-file-mb must be a number, got {max_file_mb}")
    if max_file_mb is not None and max_file_mb <= 0:
        raise UsageError("--max-file-mb must be positive")
    return RequestSettings(
        model=model or "",
        max_tokens=max_tokens if max_tokens is not None else default_max_tokens,
        temperature=_temperature_value(temperature),
        max_tokens_field=(max_tokens_field or MaxTokensField.max_tokens).value,
        max_file_bytes=int((max_file_mb if max_file_mb is not None else DEFAULT_MAX_FILE_MB) * MB),
        **{k: v for k, v in images.items() if v is not None},
    )


def _temperature_value(option: str | float | None) -> float | None:
    if option is None:
        return 0.0
    if isinstance(option, str) and option.strip().lower() == NO_TEMPERATURE:
        return None
    return float(option)


def handle_errors(command: F) -> F:
    """Turn known errors into one sentence on stderr and their exit code; Ctrl-C into 130,
    SIGTERM into 143."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with interrupt.remembering_ctrl_c():
                result = command(*args, **kwargs)
                interrupt.checkpoint()  # a Ctrl-C dropped after the last checkpoint: still 130
                sys.stdout.flush()  # a reader gone by now is met here, not at exit
            return result
        except BrokenPipeError:
            # The reader of the output went away (`datbench compare A B | head -1`): stop
            # quietly with 141, as a command that SIGPIPE ends does; files already written are
            # complete. Python's own last flush of stdout then goes nowhere, without a word.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(141) from None
        except DatbenchError as exc:
            error_line(str(exc))
            if exc.hint:
                error_line(exc.hint, label="hint")
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt as exc:
            # A command may say what it kept: raise type(exc)("kept ...; rerun ...").
            kept = str(exc) or "files already written are complete, nothing half-written"
            if isinstance(exc, interrupt.Terminated):
                error_line(f"terminated (SIGTERM); {kept}")
                raise typer.Exit(143) from None
            error_line(f"interrupted; {kept}")
            raise typer.Exit(130) from None
        except OSError as exc:
            # The file system refused (disk full, read-only, permissions) where no stage named
            # the file itself: still one sentence and exit 2, like any unusable file.
            where = f" ({exc.filename})" if exc.filename else ""
            error_line(f"file system error{where}: {exc.strerror or exc}")
            raise typer.Exit(2) from None
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


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether the option was set on the command line or from the environment (typer ships
    its own click, so the source is compared by name)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def benchmark_options(ctx: typer.Context, benchmark: Benchmark, command: str) -> dict[str, Any]:
    """The benchmark's own options of ``command``, by name; an option that only another
    benchmark accepts, given on the command line, is a usage error (never silently ignored)."""
    accepted = benchmark.options(command)
    flags = {param.name: param.opts[0] for param in ctx.command.params if param.name}
    refused = [name for name in sorted(command_options(command) - accepted) if _given(ctx, name)]
    if refused:
        name = refused[0]
        owners = ", ".join(b.name for b in BENCHMARKS.values() if name in b.options(command))
        others = f" (and {', '.join(flags.get(n, n) for n in refused[1:])})" if refused[1:] else ""
        raise UsageError(
            f"{flags.get(name, name)}{others} applies only to {owners}, not to "
            f"{benchmark.name} ({command})"
        )
    return {name: ctx.params.get(name) for name in accepted}


def events(out: Output) -> Events:
    """The library's callbacks, printing through ``out``."""
    return Events(info=out.info, warn=out.warn, progress=out.progress)


def directory_given(run_dir: Path, given: Path | None) -> tuple[Path, Path | None]:
    """``(run directory, file)`` from ``-d`` and the file argument of a command: a directory
    given where the file goes is the run directory (``datbench score run/`` is
    ``datbench score -d run/``)."""
    if given is None or not given.is_dir():
        return run_dir, given
    if run_dir != Path(".") and run_dir.resolve() != given.resolve():
        raise UsageError(
            f"two run directories: {given} and -d {run_dir}",
            hint=f"pass one: -d {given}, or {given} alone",
        )
    return given, None


RunDirArg = Annotated[
    Path | None,
    typer.Argument(
        metavar="RUN_DIR", help="The run directory (the same as -d).", show_default=False
    ),
]


def positional_directory(run_dir: Path, given: Path | None) -> Path:
    """The run directory of a command that takes it positionally or with ``-d``."""
    chosen, rest = directory_given(run_dir, given)
    if rest is not None:
        raise UsageError(
            f"{rest} is not a directory", hint="pass the run directory made by export-tasks"
        )
    return chosen


def run_directory(run_dir: Path, *given: Path | None) -> RunDir:
    """The run directory of a command; when ``--dir`` holds no manifest but a file given on
    the command line sits in a run directory, the error says to pass that one."""
    run = RunDir(run_dir)
    if run.root.is_dir() and not run.path(MANIFEST).is_file():
        for path in given:
            folder = path.parent if path is not None else None
            if folder is not None and (folder / MANIFEST).is_file() and folder != run.root:
                raise InputError(
                    f"no {MANIFEST} here: this is not a run directory",
                    run.root,
                    hint=f"{path} is in the run directory {folder}: pass -d {folder}",
                )
    return run
