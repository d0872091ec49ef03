"""Shared test helpers for comparisons: scored run directories of the sample data (both
benchmarks), built once per process and copied per test."""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from tests.cli_helpers import answered_sample, run_cli
from tests.vtb_support import SAMPLE_DIR, SAMPLE_JUDGE, SAMPLE_RESPONSES

_CACHE = Path(tempfile.mkdtemp(prefix="datbench-compare-"))
atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)


def _check(result: Any) -> None:
    assert result.exit_code == 0, result.stderr


@cache
def _datbench_run() -> Path:
    run = _CACHE / "datbench"
    answered_sample(run)
    _check(run_cli("score", "-d", str(run), "-q", "--allow-missing"))
    return run


@cache
def _vistoolbench_run() -> Path:
    run = _CACHE / "vistoolbench"
    _check(run_cli("export-tasks", "vistoolbench", "--source", str(SAMPLE_DIR), "-d", str(run)))
    shutil.copy(SAMPLE_RESPONSES, run / "responses.jsonl")
    shutil.copy(SAMPLE_JUDGE, run / "judge_responses.jsonl")
    _check(run_cli("score", "-d", str(run), "-q", "--allow-missing"))
    return run


def scored_run(benchmark: str, target: Path) -> Path:
    """A copy of the scored sample run of ``benchmark`` ("datbench" or "vistoolbench")."""
    source = _datbench_run() if benchmark == "datbench" else _vistoolbench_run()
    shutil.copytree(source, target)
    return target


def scored_sample_report() -> dict[str, Any]:
    """The DatBench sample run's report.json."""
    return json.loads((_datbench_run() / "report.json").read_text())


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
