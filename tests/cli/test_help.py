"""Help that teaches: `datbench --help` lists the stages in order, each summary whole; each
command's help starts with what it does and one example, and describes no other command's
options."""

from __future__ import annotations

import re

import pytest
import typer.main

from datbench_cli.cli.app import STAGES, app
from tests.cli_helpers import run_cli

NAMES = [name for name, _, _ in STAGES]


def options_of(name: str) -> set[str]:
    import typer.main

    command = typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]
    flags = [f for param in command.params for f in (*param.opts, *param.secondary_opts)]
    return {flag for flag in flags if flag.startswith("--")}


def test_the_stages_are_listed_in_order_with_whole_summaries() -> None:
    result = run_cli("--help", env={"COLUMNS": "80"})
    assert result.exit_code == 0
    listing = result.stdout.split("Commands:", 1)[1]
    positions = [listing.index(f"  {name} ") for name in NAMES]
    assert positions == sorted(positions)
    flat = " ".join(listing.split())
    for name, _, summary in STAGES:
        assert summary.endswith("."), name
        # Wrapped at words (a hyphenated word may break at its hyphen), never cut.
        assert " ".join(summary.split()) in flat.replace("- ", "-"), name
    assert "..." not in listing and "\u2026" not in listing
    assert "datbench export-tasks" in result.stdout.split("Commands:")[0]  # an example


@pytest.mark.parametrize("name", NAMES)
def test_each_command_help_starts_with_what_it_does_and_an_example(name: str) -> None:
    result = run_cli(name, "--help", env={"COLUMNS": "100"})
    assert result.exit_code == 0
    text = result.stdout.split("\n\n", 1)[1]  # after the usage line
    first, rest = text.split("\n\n", 1)
    assert first.strip().endswith((".", "?", ")")), first
    example = rest.split("\n\n", 1)[0].splitlines()
    assert example[0].strip() == "Example:", name
    assert example[1].strip().startswith(f"datbench {name} "), name


@pytest.mark.parametrize("name", NAMES)
def test_help_describes_only_its_own_options(name: str) -> None:
    text = run_cli(name, "--help", env={"COLUMNS": "100"}).stdout
    own = options_of(name)
    # A flag written right after another command's name (`score --strict-judge`) is that
    # command's; any other flag must be this command's own.
    for match in re.finditer(
        r"(?:(?:datbench\s+)?([a-z]+(?:-[a-z]+)*)\s+)?(--[a-z][a-z-]*[a-z])", text
    ):
        other, flag = match.groups()
        if other in NAMES and other != name:
            assert flag in options_of(other), (name, other, flag)
        elif not text[: match.start()].rstrip().endswith("Usage:"):
            assert flag in own | {"--help"}, (name, flag)


def test_export_tasks_help_is_about_exporting() -> None:
    text = run_cli("export-tasks", "--help").stdout
    assert "tool-calling" not in text and "temperature 0" not in text


@pytest.mark.parametrize("name", NAMES)
def test_metavars_match_their_help(name: str) -> None:
    """click adds "..." to a variadic argument's metavar: leaderboard's usage read
    `[LABEL=]PATH......`; and export-tasks' `--num-shards N` was described as "K shards"."""
    text = run_cli(name, "--help", env={"COLUMNS": "100"}).stdout
    assert "...." not in text, name
    if name == "export-tasks":
        assert "--num-shards K " in text and "--shard-index I " in text


def help_at(name: str, width: int) -> str:
    """The help of command ``name`` (``""``: the program's) as a terminal of ``width`` columns
    shows it (in-process runs, ``run_cli``, always format it at 80)."""
    group = typer.main.get_command(app)
    command = group.commands[name] if name else group  # type: ignore[attr-defined]
    context = command.context_class(command, info_name=name or "datbench", terminal_width=width)
    return str(command.get_help(context))


@pytest.mark.parametrize("width", [60, 80])
def test_help_never_breaks_a_line_inside_a_hyphenated_word(width: int) -> None:
    """The help wrapper broke lines after a word's hyphen: `--allow-different-` / `data` in
    the leaderboard's help, `export-` / `tasks` in the main one, `--strict-` / `judge` in
    score's; copied, such an option is an error."""
    for name in ["", *NAMES]:
        result = run_cli(*([name] if name else []), "--help")
        assert result.exit_code == 0, result.stderr
        text = help_at(name, width)
        assert "\u2011" not in result.stdout + text
        # click's own "[default: ...]" text is outside the command's help: not checked.
        broken = [
            line
            for line in text.splitlines()
            if re.search(r"\w-$", line) and "[default:" not in line
        ]
        assert broken == [], (name, broken)
    leaderboard = run_cli("leaderboard", "--help", env={"COLUMNS": "80"}).stdout
    assert "--allow-different-data" in leaderboard


@pytest.mark.parametrize("width", [40, 60, 80])
def test_help_never_cuts_a_word_of_an_option_description(width: int) -> None:
    """At 40 columns the description column was 16 characters wide and click cut longer words
    in two: `--image-bas` / `e-url`, `Datolog` / `yAI/DatBench`, `max_complet` / `ion_tokens`.
    Every word of every description is now whole in the help."""
    group = typer.main.get_command(app)
    for name in ["", *NAMES]:
        command = group.commands[name] if name else group  # type: ignore[attr-defined]
        shown = set(help_at(name, width).split())
        texts = [getattr(param, "help", None) for param in command.params]
        if not name:
            texts += [summary for _, _, summary in STAGES]
        words = {word.replace("\u2011", "-") for text in texts if text for word in text.split()}
        assert sorted(words - shown) == [], (name, width)
