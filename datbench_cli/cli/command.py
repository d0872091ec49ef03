"""How every ``datbench`` command parses and fails: plain help, readable metavars, and usage
errors as one ``error:`` line (plus one ``hint:``) on stderr, exit 2.

Typer's own rendering draws boxed panels and type names (``<int range>``); these classes keep
its parsing and replace what the user sees.
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from collections.abc import Sequence
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from datbench_cli.cli.output import error_line

# What an option's value is, by the option's name, then by its type.
_METAVAR_BY_NAME = {
    "dir": "DIR",
    "run_dir": "DIR",
    "out_path": "FILE",
    "out": "FILE",
    "source": "SOURCE",
    "split": "NAME",
    "model": "NAME",
    "turncase": "TURNCASE",
    "context": "POLICY",
    "base_url": "URL",
    "image_base_url": "URL",
    "api_key_env": "VAR",
    "fail_under": "FRACTION",
    "sample_timeout": "SECONDS",
    "timeout": "SECONDS",
    "max_file_mb": "MB",
    "temperature": "T",
    "seed": "N",
    "margin": "MARGIN",
}


def _metavar(param: Any) -> str | None:
    """``DIR``, ``FILE``, ``N``, ``a|b``: what the value is, never a Python type name."""
    if param.name in _METAVAR_BY_NAME:
        return _METAVAR_BY_NAME[param.name]
    desc = getattr(param, "type_descriptor", None)
    if desc is None:
        return _metavar_of_type(param.type)
    if desc.is_choice:
        return "|".join(str(getattr(c, "value", c)) for c in desc.choices or ())
    if desc.is_path:
        return "FILE"
    text = str(desc.annotation)
    if "bool" in text:
        return None
    if "int" in text:
        return "N"
    if "float" in text:
        return "X"
    return "TEXT"


def _metavar_of_type(kind: Any) -> str | None:
    """:func:`_metavar` from the click parameter type (typer before 0.29 has no descriptor)."""
    choices = getattr(kind, "choices", None)
    if choices is not None:
        return "|".join(str(getattr(c, "value", c)) for c in choices)
    name = str(getattr(kind, "name", "")).lower()
    if "bool" in name:
        return None
    if name in ("path", "file", "filename"):
        return "FILE"
    if "int" in name:
        return "N"
    if "float" in name:
        return "X"
    return "TEXT"


def _argument_metavar(shown: str, in_usage: str) -> Any:
    """An argument's ``make_metavar`` before typer 0.29: ``NAME...`` in the help, ``[NAME]``
    or ``NAME`` in the usage line (never typer's ``{NAME}``)."""

    def make_metavar(ctx: Any, usage: bool = False) -> str:
        return in_usage if usage else shown

    return make_metavar


def _range_text(param: Any) -> Any:
    def text() -> str | None:
        # On the option from typer 0.29, on its range type before.
        bounds = param if hasattr(param, "min") else param.type
        low, high = getattr(bounds, "min", None), getattr(bounds, "max", None)
        name = param.metavar or "N"
        if low is None and high is None:
            return None
        if high is None:
            return f"{name} >= {low}"
        if low is None:
            return f"{name} <= {high}"
        return f"{low} <= {name} <= {high}"

    return text


# While the help is wrapped, a hyphen inside a word is a non-breaking one: click's wrapper broke
# lines after it ("--allow-different-" / "data", "export-" / "tasks"), and a user copying the
# option got an error. The help, once formatted, has its hyphens back.
_HYPHEN_IN_WORD = re.compile(r"(?<=\S)-(?=\S)")
_NO_BREAK_HYPHEN = "\u2011"


def _unbreakable(text: str | None) -> str | None:
    return None if text is None else _HYPHEN_IN_WORD.sub(_NO_BREAK_HYPHEN, text)


def _help_texts_unbreakable(command: Any) -> None:
    command.help = _unbreakable(command.help)
    command.short_help = _unbreakable(command.short_help)
    command.epilog = _unbreakable(command.epilog)
    for param in command.params:
        if isinstance(getattr(param, "help", None), str):
            param.help = _unbreakable(param.help)


class _HelpFormatter(TyperCommand.context_class.formatter_class):  # type: ignore[name-defined,misc,valid-type]
    """Click's help layout, except where the description column is narrower than a word of a
    description: each option is then on its own line with its description below, so at 40
    columns no option name, value or dataset id is cut in two ("--image-bas" / "e-url")."""

    def write_dl(self, rows: Any, col_max: int = 30, col_spacing: int = 2) -> None:
        rows = list(rows)
        first_col = min(max((len(term) for term, _ in rows), default=0), col_max) + col_spacing
        longest = max((len(word) for _, text in rows for word in (text or "").split()), default=0)
        if longest <= max(self.width - first_col - 2, 10):  # click's description width
            super().write_dl(rows, col_max, col_spacing)
            return
        for term, text in rows:
            self.write(f"{'':>{self.current_indent}}{term}\n")
            if text:
                with self.indentation(), self.indentation():
                    self.write_text(text)


class _HelpContext(TyperCommand.context_class):  # type: ignore[name-defined,misc,valid-type]
    formatter_class = _HelpFormatter


class DatbenchCommand(TyperCommand):
    """A command whose options and arguments read ``--dir DIR``, ``--jobs N``, ``RESPONSES``."""

    context_class = _HelpContext

    def get_help(self, ctx: Any) -> str:
        return str(super().get_help(ctx)).replace(_NO_BREAK_HYPHEN, "-")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _help_texts_unbreakable(self)
        for param in self.params:
            if param.param_type_name == "argument":
                param.metavar = name = param.metavar or (param.name or "").upper()
                shown = name + ("..." if param.nargs != 1 else "")
                usage = shown if param.required else f"[{shown}]"
                # The name says what it is: no "<path>" beside it, no braces in the usage line.
                setattr(param, "display_type_rich", lambda ctx: None)  # noqa: B010
                setattr(param, "_rich_display_name", lambda shown=shown: shown)  # noqa: B010
                setattr(param, "_usage_display_name", lambda usage=usage: usage)  # noqa: B010
                # Before typer 0.29 the argument's metavar is both ("{NAME}" in the usage).
                setattr(param, "make_metavar", _argument_metavar(shown, usage))  # noqa: B010
            elif param.metavar is None:
                param.metavar = _metavar(param)
                if callable(getattr(param, "_get_number_range_help_str", None)):
                    # "[N >= 1]" in the help, not typer's "[x>=1]".
                    setattr(param, "_get_number_range_help_str", _range_text(param))  # noqa: B010
                elif callable(getattr(param.type, "_describe_range", None)):
                    # The same before typer 0.29, which asks the option's own range type.
                    setattr(param.type, "_describe_range", _range_text(param))  # noqa: B010


class DatbenchGroup(TyperGroup):
    """The application: usage errors become one sentence and a hint instead of a panel."""

    context_class = _HelpContext

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _help_texts_unbreakable(self)

    def get_help(self, ctx: Any) -> str:
        return str(super().get_help(ctx)).replace(_NO_BREAK_HYPHEN, "-")

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        from typer._click import exceptions

        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except exceptions.NoArgsIsHelpError as exc:
            sys.stdout.write(exc.ctx.get_help() + "\n")
            sys.exit(2)
        except exceptions.UsageError as exc:
            error_line(_sentence(exc.format_message()))
            where = exc.ctx.command_path if exc.ctx is not None else (prog_name or "datbench")
            error_line(f"run '{where} --help' for the options", label="hint")
            sys.exit(2)
        except exceptions.ClickException as exc:
            error_line(_sentence(exc.format_message()))
            sys.exit(exc.exit_code)
        except typer.Abort:
            error_line("interrupted")
            sys.exit(130)
        sys.exit(code if isinstance(code, int) else 0)


def _sentence(message: str) -> str:
    """Click's message on one line, starting lower-case like our own errors."""
    text = " ".join(message.split())
    if text[:1].isupper() and not text[1:2].isupper():
        text = text[0].lower() + text[1:]
    return text


def quiet_other_libraries() -> None:
    """Hide other libraries' Python warnings (a dependency's deprecation notice is not ours to
    print in our ``warning:`` style); ``DATBENCH_DEBUG=1`` shows them."""
    if not os.environ.get("DATBENCH_DEBUG"):
        warnings.simplefilter("ignore")
