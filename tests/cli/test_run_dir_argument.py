"""Every command that works on one run takes its directory positionally (as view and compare
do) and with -d, the same way; two different directories are one error with a hint."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli_helpers import SAMPLE, run_cli


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("positional") / "run"
    assert (
        run_cli("export-tasks", "all", "--source", str(SAMPLE), "-d", str(folder), "-q").exit_code
        == 0
    )
    shutil.copy(SAMPLE / "responses.jsonl", folder / "responses.jsonl")
    shutil.copy(SAMPLE / "judge_responses.jsonl", folder / "judge_responses.jsonl")
    # A report for view, whichever of these tests a worker runs first.
    assert run_cli("score", "-d", str(folder)).exit_code in (0, 1)
    return folder


@pytest.mark.parametrize("command", ["score", "make-judge-tasks", "check-judge", "view"])
def test_positional_is_the_same_as_dash_d(run: Path, command: str) -> None:
    by_flag = run_cli(command, "-d", str(run))
    by_position = run_cli(command, str(run))
    assert by_position.exit_code == by_flag.exit_code
    assert by_position.exit_code in (0, 1), by_position.stderr
    assert by_position.stdout == by_flag.stdout


@pytest.mark.parametrize("command", ["score", "make-judge-tasks", "check-judge", "view"])
def test_two_run_directories_are_refused_with_a_hint(
    run: Path, command: str, tmp_path: Path
) -> None:
    result = run_cli(command, str(run), "-d", str(tmp_path))
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0].startswith("error: two run directories")
    assert lines[1] == f"hint: pass one: -d {run}, or {run} alone"


def test_agent_takes_the_run_directory_positionally(run: Path) -> None:
    result = run_cli("agent", str(run), "--base-url", "http://127.0.0.1:9/v1", "--model", "m")
    assert result.exit_code == 2
    assert "no tool-using agent" in result.stderr  # it read this run's manifest
